"""``optnoise rr``: the optimal (eps, delta) randomized response (Holohan et al.)."""

from typing import Annotated

import typer

from ..app import app
from ..errors import cli_errors
from ..options import Json, Output
from ..render import echo_json, fmt, out
from .shared import save_mechanism


@app.command()
@cli_errors()
def rr(
    categories: Annotated[int, typer.Option("--categories", help="Number of categories K (>= 2).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    output: Output = None,
    as_json: Json = False,
) -> None:
    """Optimal (eps, delta) K-ary randomized response (Holohan et al. Theorems 8-10), verified exactly."""
    from ...design.rr import design_rr
    result = design_rr(categories, epsilon=epsilon, delta=delta)
    payload = result.to_json()
    if output is not None:
        payload["output"] = save_mechanism(result.mechanism, output, report=payload)
    if as_json:
        echo_json(payload)
        return
    g = result.analysis
    out.print(f"{categories}-ary randomized response at ({epsilon:g}, {delta:g})-DP: keep with "
              f"p_keep = {payload['p_keep']:.6g}, move to each other category with p_other = {result.p_other:.6g}; "
              f"error rate {payload['error_rate']:.6g} (Theorem 9 lower bound {payload['error_bounds']['lower']:.6g})")
    out.print(f"verified: delta_DP at eps {epsilon:g} = {fmt(g.delta_dp)}, pure eps {fmt(g.epsilon_pure)}")
