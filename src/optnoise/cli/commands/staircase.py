"""``optnoise staircase``: Geng & Viswanath's staircase (computed by :mod:`optnoise.design.staircase`)."""

from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import app
from ..errors import cli_errors
from ..options import Json, Output, Plot
from ..render import echo_json, key_value_table, notes
from .shared import check_png, save_mechanism

_KEYS = ("epsilon", "sensitivity", "cost", "r", "r_star", "gamma", "gamma_star", "gamma_source", "expected_cost",
         "closed_form_cost", "laplace_cost", "geometric_cost", "gain", "gamma_heuristic", "heuristic_cost",
         "lp_expected_cost", "lp_relative_gap")


@app.command()
@cli_errors()
def staircase(
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
    result = design_staircase(epsilon, sensitivity, cost, discrete=discrete, gamma=gamma, r=r, lp=lp)
    payload = result.to_json()
    if plot is not None:
        from ...plots import plot_staircase
        plot_staircase(result, plot)
        payload["plot"] = str(plot)
    if output is not None:
        payload["output"] = save_mechanism(result.mechanism, output, report=payload)
    if as_json:
        echo_json(payload)
        return
    key_value_table("optnoise staircase (Geng & Viswanath)", [(k, payload[k]) for k in _KEYS if k in payload])
    notes([f"{k} written to {payload[k]}" for k in ("plot", "output") if k in payload])
