"""``optnoise rr``: the optimal (eps, delta) randomized response (Holohan et al.)."""

from typing import Annotated, Optional

import typer

from ..app import command
from ..inputs import rr_request
from ..options import LIMITS, WRITES, Json, Output, Writes
from ..render import fmt, out
from .shared import deliver


@command(LIMITS, WRITES)
def rr(
    max_memory: Optional[int],
    writes: Writes,
    categories: Annotated[int, typer.Option("--categories", help="Number of categories K (>= 2).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    output: Output = None,
    as_json: Json = False,
) -> None:
    """Optimal (eps, delta) K-ary randomized response (Holohan et al. Theorems 8-10), verified exactly."""
    from ... import design
    result = design(rr_request(categories, epsilon=epsilon, delta=delta, max_memory=max_memory))
    deliver(result.to_json(), as_json=as_json, render=_print, mechanism=result.mechanism, output=output,
            writes=writes)


def _print(p: dict) -> None:
    c = p["certificate"]
    out.print(f"{p['categories']}-ary randomized response at ({p['epsilon']:g}, {p['delta']:g})-DP: keep with "
              f"p_keep = {p['p_keep']:.6g}, move to each other category with p_other = {p['p_other']:.6g}; "
              f"error rate {p['error_rate']:.6g} (Theorem 9 lower bound {p['error_bounds']['lower']:.6g})")
    out.print(f"verified: delta_DP at eps {p['epsilon']:g} = {fmt(c['delta_dp'])}, pure eps {fmt(c['epsilon_pure'])}")
