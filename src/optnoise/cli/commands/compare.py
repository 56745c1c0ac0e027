"""``optnoise compare``: the optimal design and the usual mechanisms, side by side."""

from contextlib import nullcontext
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import channel_pairs, neighbourhood, prior_weights
from ..options import (LIMITS, NEIGHBOURHOOD, WRITES, Form, Guarantee, Json, NeighbourhoodArgs, PerRecord, Plot,
                       Prior, WorstCase, Writes)
from ..render import echo_json, err, fmt, notes, out
from .shared import check_png, deliver, parse_list, plots

_DEFAULT_MECHANISMS = "optimal,geometric,discrete-gaussian,exponential,rr"
#: Column heads of noise costs that are easily taken for an error of the released value.
_NOISE_LABELS = {"mse": "mse = noise 2nd moment", "sq": "sq = noise 2nd moment",
                 "noise-second-moment": "noise 2nd moment", "abs": "abs = noise |eta|"}


@command(NEIGHBOURHOOD, LIMITS, WRITES, flags={"k": "--releases"})
def compare(
    nb: NeighbourhoodArgs,
    max_memory: Optional[int],
    writes: Writes,  # --plot checked by the output rule before anything is computed
    epsilons: Annotated[str, typer.Option("--epsilons", help="Comma-separated epsilons, e.g. 0.5,1,2.")],
    n: Annotated[Optional[int], typer.Option(
        "--n", help="Domain {0..N}. Required unless --releases with --space integer.")] = None,
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    cost: Annotated[Optional[str], typer.Option(
        "--cost", help="Noise costs, applied to (y - q) mod (n+1): er | mse (= noise-second-moment, the paper's "
                       "MSE) | circular-mse | abs | circular-abs. Released-value costs, applied to y - q: er | "
                       "abs-error | sq-error | circular-abs | circular-mse. Default er; abs-error with --form "
                       "channel (an ordered domain).")] = None,
    mechanisms: Annotated[str, typer.Option(
        "--mechanisms", help="Comma-separated: optimal, geometric, discrete-gaussian, exponential, rr; with --form "
                             "channel: optimal-channel, optimal-modulo-noise, clamped-geometric, "
                             "clamped-discrete-gaussian, randomized-response, exponential.")] =
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
    form: Form = "noise",
    prior: Prior = None,
    worst_case: WorstCase = False,
    per_record: PerRecord = False,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Error vs eps (or delta vs eps at a fixed error) of the optimal design and the usual mechanisms.

    With --form channel (an ordered domain such as ages 0..N): the optimal channel, the optimal noise mod N+1
    and the baselines as channels, ranked by the released value's error.
    """
    from rich.markup import escape
    from rich.progress import Progress
    from rich.table import Table

    from ... import compare as cmp
    eps_list = parse_list(epsilons, "--epsilons", "comma-separated numbers > 0")
    if form not in ("noise", "channel"):
        raise InvalidParameterError("--form", form, "noise (noise added mod n+1) or channel (an ordered domain)")
    if form == "channel":
        given = {"--releases": releases is not None, "--boundary": boundary != "modulo",
                 "--target-cost": target_cost is not None, "--space": space != "cyclic"}
        for flag, bad in given.items():
            if bad:
                raise InvalidParameterError(flag, "given", "not with --form channel (outputs stay in {0..n}; "
                                                           "the line noises are clamped)")
        _channels(nb, n, eps_list, delta, guarantee_, cost or "abs-error", prior, worst_case, per_record,
                  None if mechanisms == _DEFAULT_MECHANISMS else mechanisms, as_json, plot)
        return
    if prior is not None or worst_case or per_record:
        raise InvalidParameterError("--prior/--worst-case/--per-record", "given", "only with --form channel")
    cost = cost or "er"
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
    from ...costs import describe_cost
    payload = {"n": n, "cost": cost, "boundary": boundary, "guarantee": guarantee_, "neighbourhood": hood.to_json(),
               "target_cost": target_cost, "rows": [r.to_json() for r in rows], "form": "noise",
               "ranked_by": describe_cost(cost) + " (expected_cost: worst case over q)"}
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
    table = Table(title=escape(payload["plot"]) if plot else f"compare on {{0..{n}}}, {hood.describe()}, "
                                                             f"{guarantee_.upper()}")
    released = rows[0].released_error["cost"] if rows and rows[0].released_error else None
    shown = released is not None and released != cost
    head = _NOISE_LABELS.get(cost, cost)
    for col in ("mechanism", "epsilon", "delta", f"{head} (worst q)", f"{head} (avg q)", "error rate", "parameter",
                "above bound") + ((f"released {released} (worst q)", f"released {released} (avg q)") if shown else ()):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for r in rows:
        table.add_row(r.mechanism, f"{r.epsilon:g}", fmt(r.delta), f"{r.expected_cost:.5g}",
                      f"{r.expected_cost_average:.5g}", f"{r.error_rate:.4f}",
                      "" if r.parameter is None else f"{r.parameter_name}={r.parameter:.6g}", _gap(r.gap),
                      *((f"{r.released_error['worst']:.5g}",  # type: ignore[index]
                         f"{r.released_error['average']:.5g}") if shown else ()))  # type: ignore[index]
    out.print(table)
    notes([f"ranked by {payload['ranked_by']}", _BOUND_NOTE + (" (delta at the fixed cost)" if target_cost is not None
                                                               else "")]
          + ([f"the released value's error after wrap-around is {released}: the last two columns"] if shown else []))


#: What the "above bound" column means (compare and compare --form channel).
_BOUND_NOTE = ("above bound: how far each mechanism is above a proven lower bound on the best possible for this "
               "request (the optimal design's dual certificate); blank where the bound does not cover it")


def _gap(gap: Optional[float]) -> str:
    return "" if gap is None else f"{100 * gap:.3g}%"


def _releases(nb: NeighbourhoodArgs, n: Optional[int], eps_list: list, delta: float, cost: str, releases: str,
              space: str, as_json: bool, plot) -> None:
    """``compare --releases K[,K...]``: the mechanisms for K releases at one total (eps, delta)."""
    from rich.markup import escape
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
    table = Table(title=f"{'noise on Z' if space == 'integer' else f'{{0..{n}}}'}, {escape(hood.describe())}: "
                        f"(eps={eps_list[0]:g}, delta={delta:g}) after K releases")
    for col in ("K", "mechanism", f"{first.cost}", "error rate", "composed eps (bound)", "parameter"):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for row in payload["rows"]:
        comp = row["composed"]
        table.add_row(str(row["k"]), row["mechanism"], f"{row['expected_cost']:.6g}", f"{row['error_rate']:.4f}",
                      f"{comp['epsilon_dp']:.6g} ({comp['bound']['epsilon_dp']})",
                      "" if row["parameter"] is None else f"{_symbol(row['parameter_name'])}={row['parameter']:.6g}")
    out.print(table)
    notes(["parameter: eps1 = the epsilon of one release (the geometric's per unit distance), sigma = the discrete "
           "Gaussian's scale, order = the Rényi order the K-release design was constrained at"])
    if plot is not None:
        notes([f"figure written to {plot}"])


def _symbol(name: str) -> str:
    """A short label of a calibrated parameter's name (explained under the table)."""
    return "sigma" if name == "sigma" else "order" if name.startswith("Rényi") else "eps1"


def _channels(nb: NeighbourhoodArgs, n: Optional[int], eps_list: list, delta: float, guarantee_: str, cost: str,
              prior: Optional[str], worst_case: bool, per_record: bool, mechanisms: Optional[str], as_json: bool,
              plot) -> None:
    """``compare --form channel``: every mechanism as a channel on {0..n}, by the released value's error."""
    from rich.progress import Progress

    from ... import compare as cmp
    from ...costs import ReleasedCost, describe_cost
    if n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1 (domain {0..n})")
    if n < 1:
        raise InvalidParameterError("--n", n, "an integer n >= 1 (domain {0..n})")
    check_png(plot)
    objective = ReleasedCost(cost, prior_weights(prior, n), worst_case)
    pairs = channel_pairs(nb, n, per_record)
    names = cmp.CHANNEL_DEFAULT if mechanisms is None else [m.strip() for m in mechanisms.split(",") if m.strip()]
    with (Progress(console=err, transient=True) if not as_json else nullcontext()) as prog:
        task = prog.add_task("designing and calibrating channels", total=len(eps_list) * len(names)) if prog else None
        tick = (lambda: prog.advance(task)) if prog else None
        rows = cmp.compare_channels(n, eps_list, delta=delta, notion=guarantee_, cost=objective, pairs=pairs,
                                    mechanisms=names, progress=tick)
    unit = "every pair of answers (per record)" if per_record else pairs.describe()
    ranked_by = describe_cost(objective) + ("" if worst_case else " (expected_cost: averaged over the prior on q)")
    payload = {"n": n, "form": "channel", "cost": objective.name, "prior": objective.to_json()["prior"],
               "worst_case": worst_case, "guarantee": guarantee_, "unit": unit,
               "neighbourhood": {"pairs": "all", "directed": False} if per_record else pairs.to_json(),
               "ranked_by": ranked_by, "rows": [r.to_json() for r in rows]}
    title = f"{{0..{n}}}, {guarantee_.upper()}, {unit}, delta={delta:g}"
    deliver(payload, as_json=as_json, render=lambda p: _print_channels(p, rows, objective), plot=plot,
            draw=lambda path: plots().plot_compare(rows, path, title=title,
                                                   ylabel=f"{objective.label} of the released value"))


def _print_channels(p: dict, rows: list, objective) -> None:
    from rich.markup import escape
    from rich.table import Table
    table = Table(title=f"ordered domain {{0..{p['n']}}} (outputs stay in it), {escape(p['unit'])}, "
                        f"{p['guarantee'].upper()}, delta={rows[0].delta:g}")
    average = "prior average" if objective.prior is not None else "average q"
    ranked = (" (ranked)", "") if not objective.worst_case else ("", " (ranked)")
    cols = (f"{objective.name}, {average}{ranked[0]}", f"{objective.name}, worst q{ranked[1]}")
    for col in ("rank", "mechanism", "epsilon", *cols, "error rate (worst q)", "parameter", "above bound"):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for r in sorted(rows, key=lambda r: (r.epsilon, r.rank)):
        table.add_row(str(r.rank), r.mechanism, f"{r.epsilon:g}", f"{r.expected_cost_average:.5g}",
                      f"{r.expected_cost_worst:.5g}", f"{r.error_rate:.4f}",
                      "" if r.parameter is None else f"{r.parameter_name}={r.parameter:.6g}", _gap(r.gap))
    out.print(table)
    notes([f"ranked by {p['ranked_by']}", _BOUND_NOTE,
           "each mechanism is a channel calibrated to the same target on the same input pairs; the modulo noise is "
           "scored after wrap-around"] + ([f"figure written to {p['plot']}"] if p.get("plot") else []))
