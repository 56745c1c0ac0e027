"""``optnoise compare``: the optimal design and the usual mechanisms, side by side."""

import math
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import compare_request
from ..options import (ATTACK, LIMITS, NEIGHBOURHOOD, WRITES, AttackArgs, AttackFlag, Form, Json, NeighbourhoodArgs,
                       OptionalDelta, OptionalNotion, PerRecord, Plot, Prior, WorstCase, Writes)
from ..render import column, err, escape, fmt, heartbeat, legend, narrow_table, notes, out, short_name
from .shared import check_png, deliver, parse_list, plots

_DEFAULT_MECHANISMS = "optimal,geometric,discrete-gaussian,exponential,rr"
#: Column heads of noise costs that are easily taken for an error of the released value.
#: Axis labels of costs whose short name says little on a figure.
_PLOT_LABELS = {"er": "error rate P(y != q)"}
_NOISE_LABELS = {"mse": "mse = noise 2nd moment", "sq": "sq = noise 2nd moment",
                 "noise-second-moment": "noise 2nd moment", "abs": "abs = noise |eta|"}


# what is compared
Epsilons = Annotated[Optional[str], typer.Option(
    "--epsilons", help="Comma-separated epsilons, e.g. 0.5,1,2 (or an attack target: --max-tpr with --at-fpr, "
                       "and/or --max-mu).")]
DomainN = Annotated[Optional[int], typer.Option(
    "--n", help="Domain {0..N}. Required unless --releases with --space integer.")]
Cost = Annotated[Optional[str], typer.Option(
    "--cost", help="Noise costs, applied to (y - q) mod (n+1): er | mse (= noise-second-moment, the paper's "
                   "MSE) | circular-mse | abs | circular-abs. Released-value costs, applied to y - q: er | "
                   "abs-error | sq-error | circular-abs | circular-mse. Default er; abs-error with --form "
                   "channel (an ordered domain).")]
Mechanisms = Annotated[str, typer.Option(
    "--mechanisms", help="Comma-separated: optimal, geometric, discrete-gaussian, exponential, rr; with --form "
                         "channel: optimal-channel, optimal-modulo-noise, clamped-geometric, "
                         "clamped-discrete-gaussian, randomized-response, exponential.")]
# repeated releases
Releases = Annotated[Optional[str], typer.Option(
    "--releases", help="Repeated releases: K (or a list 1,10,100,365); compares the K-release design, the "
                       "single-release optimum composed K times and the geometric and discrete Gaussian "
                       "calibrated for K releases, all meeting (eps, delta) after K releases.")]
Space = Annotated[str, typer.Option(
    "--space", help="With --releases: cyclic (noise mod N+1, default) or integer (noise on Z).")]
# how it is compared and shown
Boundary = Annotated[str, typer.Option(
    "--boundary", help="How line noise meets {0..n}: modulo, clamp, or truncate (not post-processing).")]
TargetCost = Annotated[Optional[float], typer.Option(
    "--target-cost", help="Dual view: fix the expected cost, report delta at each eps.")]
Fpr = Annotated[Optional[float], typer.Option(
    "--fpr", help="With --attack: the false-positive rate (default 0.05, or --at-fpr).")]


@command(NEIGHBOURHOOD, ATTACK, LIMITS, WRITES, flags={"epsilon": "--epsilons", "unit": "--per-record",
                                                       "k": "--releases", "attack_fpr": "--attack"})
def compare(
    nb: NeighbourhoodArgs, attack_target: AttackArgs, max_memory: Optional[int],
    writes: Writes,  # --plot checked by the output rule before anything is computed
    epsilons: Epsilons = None, n: DomainN = None, delta: OptionalDelta = None, cost: Cost = None,
    mechanisms: Mechanisms = _DEFAULT_MECHANISMS, boundary: Boundary = "modulo", target_cost: TargetCost = None,
    notion: OptionalNotion = None, releases: Releases = None, space: Space = "cyclic", form: Form = "noise",
    prior: Prior = None, worst_case: WorstCase = False, per_record: PerRecord = False, attack: AttackFlag = False,
    fpr: Fpr = None, as_json: Json = False, plot: Plot = None,
) -> None:
    """Error vs eps (or delta vs eps at a fixed error) of the optimal design and the usual mechanisms.

    With --form channel (an ordered domain such as ages 0..N): the optimal channel, the optimal noise mod N+1
    and the baselines as channels, ranked by the released value's error.

    Example (an attack target): optnoise compare --n 23 --sd 1 --cost circular-mse --max-tpr 0.3 --at-fpr 0.05
    """
    from ... import compare as cmp
    eps_list, ks = _lists(epsilons, releases, fpr, attack)
    request = compare_request(nb, n=n, epsilon=None if eps_list is None else eps_list[0], delta=delta, notion=notion,
                              cost=cost, space=space, form=form, prior=prior, worst_case=worst_case,
                              per_record=per_record, releases=ks is not None, max_memory=max_memory,
                              attack=attack_target)
    names = None if mechanisms == _DEFAULT_MECHANISMS else [m.strip() for m in mechanisms.split(",") if m.strip()]
    check_png(plot)
    with _progress(as_json, "designing and calibrating") as tick:
        result = cmp.comparison(request, eps_list, mechanisms=names, boundary=boundary, target_cost=target_cost,
                                releases=ks, progress=tick, attack_fpr=_fpr(attack, fpr, request))
    render, draw = VIEWS[result.form]
    deliver(result.to_json(), as_json=as_json, render=lambda p: render(p, result), writes=writes, plot=plot,
            draw=lambda path: draw(result, path))


def _lists(epsilons: Optional[str], releases: Optional[str], fpr: Optional[float],
           attack: bool) -> tuple[Optional[list], Optional[list]]:
    """``--epsilons`` and ``--releases`` as lists (``None`` where not given), after ``--fpr`` is
    checked to come with ``--attack``."""
    if fpr is not None and not attack:
        raise InvalidParameterError("--fpr", fpr, "together with --attack")
    eps_list = None if epsilons is None else parse_list(epsilons, "--epsilons", "comma-separated numbers > 0")
    ks = None if releases is None else parse_list(releases, "--releases", "an integer K >= 1 or a list like "
                                                  "1,10,100,365", int)
    return eps_list, ks


def _fpr(attack: bool, fpr: Optional[float], request: Any) -> Optional[float]:
    """The FPR of the attacker column: --fpr, else an attack target's own (the library's default),
    else 0.05 with --attack; none without --attack or an attack target."""
    if fpr is not None:
        return fpr
    return 0.05 if attack and request.target.notion != "attack" else None


@contextmanager
def _progress(as_json: bool, what: str) -> Iterator[Optional[Callable[[], None]]]:
    """A transient progress line on a terminal (none with --json): yields the tick to call."""
    if as_json or not err.is_terminal:
        with heartbeat(f"compare: {what}"):
            yield None
        return
    from rich.progress import Progress
    with Progress(console=err, transient=True) as prog:
        task = prog.add_task(what, total=None)
        yield lambda: prog.advance(task)


def _title(c: Any) -> str:
    """A figure's title: what it compares, then the request."""
    r, t = c.request, c.request.target
    if c.form == "channel":
        return (f"{r.cost.name} of the released value against epsilon: the optimal channel and the usual mechanisms\n"
                f"ordered domain {{0..{r.n}}}, {t.notion.upper()}, {c.unit}, delta={t.delta:g}")
    if c.form == "releases":
        return (f"Repeated releases: each mechanism meets total (eps={t.epsilon:g}, delta={t.delta:g}) after K releases\n"
                f"{r.space}, {r.neighbours.describe()}, cost {c.rows[0].cost}")
    cost = _NOISE_LABELS.get(r.cost_name, r.cost_name)
    what = f"delta at {cost} = {c.target_cost:g}" if c.target_cost is not None else cost
    return (f"{what} against epsilon: the optimal noise and the usual mechanisms\n"
            f"n={r.n}, {t.notion.upper()}, {r.neighbours.describe()}"
            + ("" if c.target_cost is not None else f", delta={t.delta:g}") + f", {c.boundary} boundary")


def _attack_label(row: Any, c: Any) -> str:
    """A curve's label for a reader who is not a DP expert: the mechanism, its epsilon, its error."""
    held = "" if c.request.target.notion == "attack" else f" at epsilon {row.epsilon:g}"
    return f"{row.mechanism}{held} (its error: {c.request.cost_name} {row.expected_cost:.3g})"


def _draw_attack(c: Any, path: Path) -> None:
    """The mechanisms' attackers on one figure (docs/attacks.md)."""
    curves = {_attack_label(row, c): curve for row, curve in c.curves}
    t = c.request.target
    what = f"every mechanism meets: {t.describe()}" if t.notion == "attack" else f"delta={t.delta:g}"
    point = (t.at_fpr, t.max_tpr) if t.notion == "attack" and t.max_tpr is not None and t.at_fpr == c.attack_fpr \
        else None
    plots().plot_tradeoff(curves, path, fpr=c.attack_fpr, target=point, force=True,
                          title="What an attacker who knows everything else can learn about one record's value\n"
                                f"(answers 0..{c.request.n}; values told apart: {c.unit}; {what}). Lower curve = "
                                "safer.")


def _draw(c: Any, path: Path) -> None:
    if c.attack_fpr is not None:
        _draw_attack(c, path)
    elif c.form == "releases":
        plots().plot_releases(list(c.rows), path, title=_title(c), force=True)
    elif c.form == "channel":
        plots().plot_compare(list(c.rows), path, title=_title(c),
                             ylabel=f"{c.request.cost.label} of the released value", force=True)
    else:
        cost = c.request.cost_name
        first = c.rows[0].released_error if c.rows else None
        released = first["cost"] if first and first["cost"] != cost else None
        plots().plot_compare(list(c.rows), path, dual=c.target_cost is not None, title=_title(c),
                             ylabel=f"{_PLOT_LABELS.get(cost, _NOISE_LABELS.get(cost, cost))} (worst case over q)",
                             released=released,
                             force=True)


def _print_noise(p: dict, c: Any) -> None:
    rows, cost = c.rows, p["cost"]
    dual = c.target_cost is not None
    head = _NOISE_LABELS.get(cost, cost)
    what = f"delta at {head} = {c.target_cost:g}" if dual else head
    one_delta = not dual and len({r.delta for r in rows}) == 1
    table = narrow_table(f"{what} of the optimal noise and the usual mechanisms against epsilon, on "
                         f"{{0..{p['n']}}}, {c.request.neighbours.describe()}, {p['notion'].upper()}"
                         + (f", delta={rows[0].delta:g}" if one_delta else ""))
    released = rows[0].released_error["cost"] if rows and rows[0].released_error else None
    shown = released is not None and released != cost
    same = all(math.isclose(r.expected_cost, r.expected_cost_average, rel_tol=1e-12) for r in rows)
    rate = cost != "er"   # the error rate is the er column itself
    heads = ["mechanism", "eps"] + ([] if one_delta else ["delta"]) + \
        ([head] if same else [f"{head} (worst q)", f"{head} (avg q)"]) + (["error rate"] if rate else []) + \
        ["parameter", "above bound"] + ([f"released {released} (worst q)", f"released {released} (avg q)"]
                                        if shown else []) + list(_attack_heads(c))
    body = []
    for r in rows:
        cells = [short_name(r.mechanism), f"{r.epsilon:g}"] + ([] if one_delta else [fmt(r.delta)])
        cells += [f"{r.expected_cost:.5g}"] + ([] if same else [f"{r.expected_cost_average:.5g}"])
        cells += ([f"{r.error_rate:.4f}"] if rate else []) + [_parameter(r.parameter_name, r.parameter), _gap(r.gap)]
        if shown:
            cells += [f"{r.released_error['worst']:.5g}", f"{r.released_error['average']:.5g}"]
        body.append(tuple(cells) + _attack_cells(r))
    _fill(table, heads, body)
    notes([f"ranked by {p['ranked_by']}", _BOUND_NOTE + (" (delta at the fixed cost)" if dual else "")]
          + ([f"the released value's error after wrap-around is {released}: the last two columns"] if shown else [])
          + [x for x in (legend(r.mechanism for r in rows),) if x] + _attack_notes(c))


def _parameter(name: Optional[str], value: Optional[float]) -> str:
    """A calibrated parameter, short: ``alpha=0.6065``."""
    return "" if value is None else f"{name}={value:.4g}"


def _attack_heads(c: Any) -> tuple[str, ...]:
    return () if c.attack_fpr is None else (f"attacker TPR @ FPR {c.attack_fpr:g}", "mu (GDP)")


def _attack_cells(r: Any) -> tuple[str, ...]:
    mu = r.attack["mu_gdp"] if r.attack is not None else None
    return () if r.attack is None else (f"{r.attack['tpr']:.4g}", fmt(mu) if mu is None or math.isinf(mu) else
                                        f"{mu:.4g}")


def _attack_notes(c: Any) -> list[str]:
    """What the attacker columns say (and the target the rows were held to)."""
    if c.attack_fpr is None:
        return []
    a = c.attack_fpr
    lines = [f"attacker TPR @ FPR {a:g}: an attacker who knows everything else and may wrongly accuse a record "
             f"{100 * a:g}% of the time is right at most this often (exact curve of each mechanism, rounded up); "
             "mu (GDP): at most as revealing as Gaussian DP with this mu"]
    t = c.request.target
    if t.notion == "attack":
        lines.append(f"every mechanism is held to the attack target {t.describe()}: epsilon and delta are the member "
                     "the optimal design was made for, and each family's exact pure epsilon")
    return lines


#: What the "above bound" column means (compare and compare --form channel).
_BOUND_NOTE = ("above bound: how far each mechanism is above a proven lower bound on the best possible for this "
               "request (the optimal design's dual certificate); blank where the bound does not cover it")


def _gap(gap: Optional[float]) -> str:
    return "" if gap is None else f"{100 * gap:.3g}%"


def _print_releases(p: dict, c: Any) -> None:
    first = c.rows[0]
    where = "noise on Z" if p["space"] == "integer" else f"{{0..{p['n']}}}"
    table = narrow_table(f"{first.cost} of each mechanism meeting (eps={p['epsilon']:g}, delta={p['delta']:g}) after "
                         f"K releases, {where}, {c.request.neighbours.describe()}")
    body = [(str(row["k"]), short_name(row["mechanism"]), f"{row['expected_cost']:.6g}", f"{row['error_rate']:.4f}",
             f"{row['composed']['epsilon_dp']:.6g} ({row['composed']['bound']['epsilon_dp']})",
             "" if row["parameter"] is None else f"{_symbol(row['parameter_name'])}={row['parameter']:.6g}")
            for row in p["rows"]]
    _fill(table, ("K", "mechanism", f"{first.cost}", "error rate", "composed eps (bound)", "parameter"), body)
    notes(["parameter: eps1 = the epsilon of one release (the geometric's per unit distance), sigma = the discrete "
           "Gaussian's scale, order = the Rényi order the K-release design was constrained at"]
          + [x for x in (legend(row["mechanism"] for row in p["rows"]),) if x])


def _symbol(name: str) -> str:
    """A short label of a calibrated parameter's name (explained under the table)."""
    return "sigma" if name == "sigma" else "order" if name.startswith("Rényi") else "eps1"


def _print_channels(p: dict, c: Any) -> None:
    rows, objective = c.rows, c.request.cost
    average = "prior average" if objective.prior is not None else "average over q"
    table = narrow_table(f"{objective.name} of the released value ({average} and worst q) of the optimal channel and "
                         f"the usual mechanisms, on the ordered domain {{0..{p['n']}}} (outputs stay in it), "
                         f"{p['unit']}, {p['notion'].upper()}, delta={rows[0].delta:g}")
    ranked = (" (ranked)", "") if not objective.worst_case else ("", " (ranked)")
    heads = ("#", "mechanism", "eps", ("prior avg" if objective.prior is not None else "avg q") + ranked[0],
             "worst q" + ranked[1], "error rate (worst q)", "parameter", "above bound", *_attack_heads(c))
    body = [(str(r.rank), short_name(r.mechanism), f"{r.epsilon:g}", f"{r.expected_cost_average:.5g}",
             f"{r.expected_cost_worst:.5g}", f"{r.error_rate:.4f}", _parameter(r.parameter_name, r.parameter),
             _gap(r.gap), *_attack_cells(r)) for r in sorted(rows, key=lambda r: (r.epsilon, r.rank))]
    _fill(table, heads, body)
    notes([f"ranked by {p['ranked_by']}", _BOUND_NOTE,
           "each mechanism is a channel calibrated to the same target on the same input pairs; the modulo noise is "
           "scored after wrap-around"] + [x for x in (legend(r.mechanism for r in rows),) if x] + _attack_notes(c))


def _fill(table: Any, heads: tuple[str, ...] | list[str], body: list[tuple[str, ...]]) -> None:
    """Columns (each as wide as its longest value: headers fold, values stay whole), rows, print."""
    for i, head in enumerate(heads):
        column(table, head, left=head == "mechanism", cells=[row[i] for row in body])
    for row in body:
        table.add_row(*(escape(x) for x in row))
    out.print(table)


#: How each form of comparison is shown: (human view of the payload, figure).
VIEWS: dict[str, tuple[Callable[[dict, Any], None], Callable[[Any, Path], None]]] = {
    "noise": (_print_noise, _draw), "channel": (_print_channels, _draw), "releases": (_print_releases, _draw),
}
