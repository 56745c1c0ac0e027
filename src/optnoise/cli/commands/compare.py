"""``optnoise compare``: the optimal design and the usual mechanisms, side by side."""

from contextlib import nullcontext
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
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
    epsilons: Annotated[str, typer.Option("--epsilons", help="Comma-separated epsilons, e.g. 0.5,1,2.")],
    n: Annotated[Optional[int], typer.Option(
        "--n", help="Domain {0..N}. Required unless --releases with --space integer.")] = None,
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
    releases: Annotated[Optional[str], typer.Option(
        "--releases", help="Repeated releases: K (or a list 1,10,100,365); compares the K-release design, the "
                           "single-release optimum composed K times and the geometric and discrete Gaussian "
                           "calibrated for K releases, all meeting (eps, delta) after K releases.")] = None,
    space: Annotated[str, typer.Option(
        "--space", help="With --releases: cyclic (noise mod N+1, default) or integer (noise on Z).")] = "cyclic",
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Error vs eps (or delta vs eps at a fixed error) of the optimal design and the usual mechanisms."""
    from rich.progress import Progress
    from rich.table import Table

    from ... import compare as cmp
    eps_list = parse_list(epsilons, "--epsilons", "comma-separated numbers > 0")
    if releases is not None:
        given = {"--mechanisms": mechanisms != _DEFAULT_MECHANISMS, "--boundary": boundary != "modulo",
                 "--target-cost": target_cost is not None, "--guarantee": guarantee_ != "dp"}
        for flag, bad in given.items():
            if bad:
                raise InvalidParameterError(flag, "given", "not with --releases (its mechanisms are fixed; "
                                                           "approximate DP at a fixed target)")
        _releases(nb, n, eps_list, delta, cost, releases, space, as_json, plot)
        return
    if space != "cyclic":
        raise InvalidParameterError("--space", space, "cyclic (integer only with --releases)")
    if n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1 (domain {0..n})")
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


def _releases(nb: NeighbourhoodArgs, n: Optional[int], eps_list: list, delta: float, cost: str, releases: str,
              space: str, as_json: bool, plot) -> None:
    """``compare --releases K[,K...]``: the mechanisms for K releases at one total (eps, delta)."""
    from rich.progress import Progress
    from rich.table import Table

    from ...design.releases import compare_releases
    ks = parse_list(releases, "--releases", "an integer K >= 1 or a list like 1,10,100,365", int)
    if any(k < 1 for k in ks):
        raise InvalidParameterError("--releases", releases, "integers K >= 1")
    if len(eps_list) != 1:
        raise InvalidParameterError("--epsilons", ",".join(f"{e:g}" for e in eps_list),
                                    "one epsilon with --releases (the target after K releases)")
    if space == "integer" and n is not None:
        raise InvalidParameterError("--n", n, "no --n with --space integer (noise on Z)")
    if space == "cyclic" and n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1 (domain {0..n}) with --space cyclic")
    check_png(plot)
    hood = neighbourhood(nb)
    comparisons = []
    with (Progress(console=err, transient=True) if not as_json else nullcontext()) as prog:
        task = prog.add_task("designing and calibrating for K releases", total=len(ks)) if prog else None
        for k in ks:
            comparisons.append(compare_releases(n, k, epsilon=eps_list[0], delta=delta, neighbourhood=hood, cost=cost,
                                                space=space))
            if prog:
                prog.advance(task)
    first = comparisons[0]
    payload = {"n": n, "cost": first.cost, "space": space, "neighbourhood": hood.to_json(), "epsilon": eps_list[0],
               "delta": delta, "releases": ks, "best": {str(c.k): c.best for c in comparisons},
               "rows": [{"k": c.k, "epsilon": c.epsilon, "delta": c.delta, **r.to_json()}
                        for c in comparisons for r in c.rows]}
    if plot is not None:
        from ...plots import plot_releases
        plot_releases(comparisons, plot, title=(f"{space}, {hood.describe()}, total eps={eps_list[0]:g}, "
                                                f"delta={delta:g}, cost {first.cost}"))
        payload["plot"] = str(plot)
    if as_json:
        echo_json(payload)
        return
    table = Table(title=f"{'noise on Z' if space == 'integer' else f'{{0..{n}}}'}, {hood.describe()}: "
                        f"(eps={eps_list[0]:g}, delta={delta:g}) after K releases")
    for col in ("K", "mechanism", f"{first.cost}", "error rate", "composed eps (bound)", "parameter"):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for row in payload["rows"]:
        comp = row["composed"]
        table.add_row(str(row["k"]), row["mechanism"], f"{row['expected_cost']:.6g}", f"{row['error_rate']:.4f}",
                      f"{comp['epsilon_dp']:.6g} ({comp['bound']['epsilon_dp']})",
                      "" if row["parameter"] is None else f"{row['parameter']:.6g}")
    out.print(table)
    if plot is not None:
        out.print(f"[dim]- figure written to {plot}[/]")
