"""``optnoise compare``: the optimal design and the usual mechanisms, side by side."""

from contextlib import nullcontext
from typing import Annotated, Optional

import typer

from ..app import command
from ..inputs import neighbourhood
from ..options import LIMITS, NEIGHBOURHOOD, Guarantee, Json, NeighbourhoodArgs, Plot
from ..render import echo_json, err, fmt, out
from .shared import check_png, parse_list

_DEFAULT_MECHANISMS = "optimal,geometric,discrete-gaussian,exponential,rr"


@command(NEIGHBOURHOOD, LIMITS)
def compare(
    nb: NeighbourhoodArgs,
    max_memory: Optional[int],
    n: Annotated[int, typer.Option("--n", help="Domain {0..N}.")],
    epsilons: Annotated[str, typer.Option("--epsilons", help="Comma-separated epsilons, e.g. 0.5,1,2.")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    cost: Annotated[str, typer.Option(
        "--cost", help="er | mse | circular-mse | abs | circular-abs (applied to (y - q) mod (n+1)).")] = "er",
    mechanisms: Annotated[str, typer.Option(
        "--mechanisms", help="Comma-separated: optimal, geometric, discrete-gaussian, exponential, rr.")] =
        _DEFAULT_MECHANISMS,
    boundary: Annotated[str, typer.Option(
        "--boundary", help="How line noise meets {0..n}: modulo, clamp, or truncate (not post-processing).")] = "modulo",
    target_cost: Annotated[Optional[float], typer.Option(
        "--target-cost", help="Dual view: fix the expected cost, report delta at each eps.")] = None,
    guarantee_: Guarantee = "dp",
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Error vs eps (or delta vs eps at a fixed error) of the optimal design and the usual mechanisms."""
    from rich.progress import Progress
    from rich.table import Table

    from ... import compare as cmp
    eps_list = parse_list(epsilons, "--epsilons", "comma-separated numbers > 0")
    mech_list = [m.strip() for m in mechanisms.split(",") if m.strip()]
    check_png(plot)
    hood = neighbourhood(nb, largest=n if n >= 1 else None, max_memory=max_memory)
    with (Progress(console=err, transient=True) if not as_json and err.is_terminal else nullcontext()) as prog:
        task = prog.add_task("calibrating", total=len(eps_list) * len(mech_list)) if prog else None
        tick = (lambda: prog.advance(task)) if prog else None
        if target_cost is None:
            rows = cmp.compare(n, eps_list, delta=delta, cost=cost, mechanisms=mech_list, boundary=boundary,
                               neighbourhood=hood, notion=guarantee_, progress=tick, max_memory=max_memory)
        else:
            rows = cmp.compare_at_cost(n, eps_list, target_cost, cost=cost, mechanisms=mech_list, boundary=boundary,
                                       neighbourhood=hood, notion=guarantee_, progress=tick, max_memory=max_memory)
    payload = {"n": n, "cost": cost, "boundary": boundary, "guarantee": guarantee_, "neighbourhood": hood.to_json(),
               "target_cost": target_cost, "rows": [r.to_json() for r in rows]}
    if plot is not None:
        from ...plots import plot_compare
        plot_compare(rows, plot, dual=target_cost is not None,
                     title=(f"n={n}, {guarantee_.upper()}, {hood.describe()}, "
                            + (f"{cost} = {target_cost:g}" if target_cost is not None else f"delta={delta:g}, {cost}")
                            + f", {boundary}"))
        payload["plot"] = str(plot)
    if as_json:
        echo_json(payload)
        return
    table = Table(title=payload["plot"] if plot else f"compare on {{0..{n}}}, {hood.describe()}, {guarantee_.upper()}")
    for col in ("mechanism", "epsilon", "delta", f"{cost} (worst q)", f"{cost} (avg q)", "error rate", "parameter"):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for r in rows:
        table.add_row(r.mechanism, f"{r.epsilon:g}", fmt(r.delta), f"{r.expected_cost:.5g}",
                      f"{r.expected_cost_average:.5g}", f"{r.error_rate:.4f}",
                      "" if r.parameter is None else f"{r.parameter_name}={r.parameter:.6g}")
    out.print(table)
