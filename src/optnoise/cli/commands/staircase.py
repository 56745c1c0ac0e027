"""``optnoise staircase``: Geng & Viswanath's staircase (computed by :mod:`optnoise.design.staircase`)."""

from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..options import LIMITS, WRITES, Json, Output, Plot, Writes
from ..render import key_value_table
from .shared import check_png, deliver, plots

_KEYS = ("epsilon", "sensitivity", "cost", "r", "r_star", "gamma", "gamma_star", "gamma_source", "expected_cost",
         "closed_form_cost", "laplace_cost", "geometric_cost", "gain", "gamma_heuristic", "heuristic_cost",
         "lp_expected_cost", "lp_relative_gap", "lower_bound", "gap")


@command(LIMITS, WRITES)
def staircase(
    max_memory: Optional[int],
    writes: Writes,
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0): pure eps-DP.")],
    sensitivity: Annotated[float, typer.Option(
        "--sensitivity", help="Sensitivity Delta (> 0; an integer with --discrete).")] = 1.0,
    cost: Annotated[str, typer.Option("--cost", help="abs (|x|), sq (x^2) or pow:K (|x|^K).")] = "abs",
    discrete: Annotated[bool, typer.Option(
        "--discrete", help="Integer-valued query: the staircase PMF P_r (82).")] = False,
    gamma: Annotated[Optional[float], typer.Option(
        "--gamma", help="Evaluate this gamma in [0, 1] instead of the optimum.")] = None,
    r: Annotated[Optional[int], typer.Option(
        "--r", help="With --discrete: evaluate P_r for this 1 <= R <= Delta.")] = None,
    lp: Annotated[bool, typer.Option(
        "--lp", help="With --discrete: also solve the integer-line LP (Theorem 13 check).")] = False,
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Geng & Viswanath's staircase mechanism: optimal gamma* (or r*), its cost and the gain over Laplace.

    Example: optnoise staircase --epsilon 10 --cost sq
    """
    from ...design.staircase import design_staircase
    check_png(plot)
    if output is not None and not discrete:
        raise InvalidParameterError("--output", str(output), "only with --discrete (the continuous staircase has "
                                    "real outputs)")
    result = design_staircase(epsilon, sensitivity, cost, discrete=discrete, gamma=gamma, r=r, lp=lp,
                              max_memory=max_memory)
    deliver(result.to_json(), as_json=as_json, render=_print, mechanism=result.mechanism if output else None,
            output=output, writes=writes, plot=plot, draw=lambda path: plots().plot_staircase(result, path, force=True))


def _print(payload: dict) -> None:
    key_value_table("optnoise staircase (Geng & Viswanath)", [(k, payload[k]) for k in _KEYS if k in payload])
