"""``optnoise design``: optimal noise for answers in {0..n}, added mod n+1 (Kadam et al. 2024)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, ContextManager, Optional

import typer

from ..app import command
from ..inputs import design_request
from ..options import (
    ATTACK, LIMITS, NEIGHBOURHOOD, SECONDS, WRITES, AttackArgs, Form, Json, NeighbourhoodArgs, OptionalDelta,
    OptionalNotion, Output, PerRecord, Plot, Prior, TimeLimit, WorstCase, Writes,
)
from ..render import err, fmt, heartbeat, notes, out, say
from .shared import check_png, deliver, plots

if TYPE_CHECKING:  # numpy loads when a design is printed, not when the command is registered
    import numpy as np


Epsilon = Annotated[Optional[float], typer.Option(
    "--epsilon", help="Target epsilon (> 0); or an attack target: --max-tpr with --at-fpr, and/or --max-mu.")]
DomainN = Annotated[Optional[str], typer.Option(
    "--n", help="Domain {0..N} (noise added mod N+1); N1,N2 for a vector query. Required unless "
                "--releases with --space integer.")]
Cost = Annotated[Optional[str], typer.Option(
    "--cost", help="Noise costs: er | mse (= noise-second-moment, the paper's MSE) | circular-mse | abs | "
                   "circular-abs | pow:K. Released-value costs: er | abs-error | sq-error (after wrap-around "
                   "for noise mod N+1) | circular-abs | circular-mse. Default er; abs-error with --form "
                   "channel.")]
CostFile = Annotated[Optional[Path], typer.Option(
    "--cost-file", help="User cost, one value per noise value (same forms as --pmf-file).")]
Minimize = Annotated[str, typer.Option("--minimize", help="cost, or delta (Kadam (15); needs --max-cost).")]
MaxCost = Annotated[Optional[float], typer.Option("--max-cost", help="Cost bound for --minimize delta.")]
Formulation = Annotated[str, typer.Option(
    "--formulation", help="standard, or paper: Kadam (13) as printed (with --guarantee pdp).")]
Releases = Annotated[Optional[int], typer.Option(
    "--releases", help="Design for K releases: the K-fold composition meets (--epsilon, --delta) "
                       "(approximate DP; Rényi-constrained convex program certified by exact composition).")]
Space = Annotated[str, typer.Option(
    "--space", help="With --releases: cyclic (noise mod N+1, default) or integer (noise on Z with exact "
                    "tails; cost sq, abs, pow:K or er).")]
Constraints = Annotated[Optional[str], typer.Option(
    "--constraints", help="With --form channel, comma-separated: row-monotone, column-monotone, fair, "
                          "weak-honest, unbiased, circulant (Cormode et al.).")]


@command(NEIGHBOURHOOD, ATTACK, LIMITS, SECONDS, WRITES, flags={"path": "--cost-file", "unit": "--per-record", "n": "--n",
                                               "k": "--releases"})
def design(
    nb: NeighbourhoodArgs, attack_target: AttackArgs, max_memory: Optional[int], max_seconds: Optional[float],
    writes: Writes, epsilon: Epsilon = None, n: DomainN = None, delta: OptionalDelta = None,
    notion: OptionalNotion = None, cost: Cost = None, cost_file: CostFile = None, minimize: Minimize = "cost",
    max_cost: MaxCost = None, formulation: Formulation = "standard", time_limit: TimeLimit = None,
    releases: Releases = None, space: Space = "cyclic", form: Form = "noise", constraints: Constraints = None,
    prior: Prior = None, worst_case: WorstCase = False, per_record: PerRecord = False, output: Output = None,
    as_json: Json = False, plot: Plot = None,
) -> None:
    """Optimal noise PMF for answers in {0..n}, added mod n+1 (Kadam et al. 2024), or the optimal channel
    (--form channel), with its analysis and the exact certificate of the weights that are sampled.

    Example: optnoise design --n 8 --epsilon 1.5 --delta 0.1238 --bd 3 --directed --guarantee pdp --formulation paper

    Example (365 releases): optnoise design --n 23 --sd 1 --epsilon 10 --delta 1e-6 --cost circular-mse --releases 365

    Example (ages, every record): optnoise design --form channel --n 100 --epsilon 1 --per-record --cost abs-error

    Example (an attack target): optnoise design --n 23 --sd 1 --cost circular-mse --max-tpr 0.3 --at-fpr 0.05
    """
    from ... import design as answer
    request = design_request(nb, epsilon=epsilon, delta=delta, notion=notion, n=n, cost=cost, cost_file=cost_file,
                             minimize=minimize, max_cost=max_cost, formulation=formulation, time_limit=time_limit,
                             releases=releases, space=space, form=form, constraints=constraints, prior=prior,
                             worst_case=worst_case, per_record=per_record, max_memory=max_memory,
                             attack=attack_target, max_seconds=max_seconds)
    check_png(plot)
    with _solving(as_json, request.problem):
        result = answer(request)
    render, draw = VIEWS[request.problem]
    deliver(result.to_json(), as_json=as_json, render=render, mechanism=result.mechanism, output=output,
            writes=writes, plot=plot, draw=lambda path: draw(result, path))


def _solving(as_json: bool, problem: str) -> ContextManager[Any]:
    """A spinner on stderr while the solver runs (none with --json)."""
    if as_json or not err.is_terminal:   # without a terminal a line every few seconds, never silent
        return heartbeat(f"design: solving the design problem ({problem})")
    return err.status(f"solving the design problem ({problem})...", spinner="dots")


#: Designs with more masses than this print a summary and the first and last few masses.
PRINT_ALL_MASSES_UP_TO = 64
#: Masses shown at each end of a large design.
PRINT_END_MASSES = 5


def _pmf_table(pmf: "np.ndarray", form: str) -> None:
    """Every mass up to :data:`PRINT_ALL_MASSES_UP_TO`; beyond, the first and last few."""
    from rich.table import Table
    table = Table()
    table.add_column("eta", justify="right")
    table.add_column("f(eta)", justify="right")
    shown = (list(range(PRINT_END_MASSES)) + [-1] + list(range(pmf.size - PRINT_END_MASSES, pmf.size))
             if pmf.size > PRINT_ALL_MASSES_UP_TO else range(pmf.size))
    for i in shown:
        table.add_row(*(("...", "...") if i < 0 else (str(i), form.format(pmf[i]))))
    out.print(table)


def _print_releases(p: dict[str, Any]) -> None:
    import numpy as np
    from rich.table import Table
    c = p["composed"]
    say((f"noise for {p['k']} releases", "bold"),
        f" ({p['space']}): total eps={fmt(p['epsilon'])} delta={fmt(p['delta'])}, cost={p['cost']}")
    pmf = np.asarray(p["pmf"])
    if p["space"] == "cyclic":
        _pmf_table(pmf, "{:.6g}")
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    rows = [("expected cost", p["expected_cost"]), ("method", p["method"]), ("Rényi order", p["order"]),
            ("per-release Rényi budget", p["budget"]),
            (f"composed epsilon at delta (bound: {c['bound']['epsilon_dp']})", c["epsilon_dp"]),
            ("composed epsilon, PLD", p["epsilon_pld"]), ("composed epsilon, RDP", p["epsilon_rdp"])]
    for key, v in rows:
        summary.add_row(key, fmt(v))
    out.print(summary)
    _print_bound(p)
    notes([f"{p['solve_seconds']:.2f} s; the certificate is the best of exact enumeration, PLD, RDP and the pure "
           "bound on the returned PMF (use --json for every candidate and the PMF)",
           "'optnoise sample' and 'release' quantize the PMF; re-verify a K-fold guarantee with "
           f"'optnoise verify --mechanism FILE --compose {p['k']} --delta {p['delta']:g}'"])


def _print(p: dict[str, Any]) -> None:
    import numpy as np
    from rich.table import Table
    pmf = np.asarray(p["pmf"])
    r, t = p["report"], p["target"]
    delta = r["delta"] if p["minimize"] == "delta" else t["delta"]
    say((f"optimal noise on {{0..{p['n']}}}", "bold"),
        f": {t['notion'].upper()} eps={fmt(t['epsilon'])} delta={fmt(delta)}, cost={p['cost']}")
    where = (f"all masses in {p['output']}" if p.get("output")
             else "all masses: --output FILE (a mechanism file) or --json")
    if pmf.ndim == 1:
        _pmf_table(pmf, "{:.6f}")
        if pmf.size > PRINT_ALL_MASSES_UP_TO:
            top = int(np.argmax(pmf))
            say(f"{pmf.size} masses; largest f({top}) = {fmt(float(pmf[top]))}, smallest "
                f"{fmt(float(pmf.min()))}, {int(np.count_nonzero(pmf > 1e-12))} above 1e-12; {where}")
    else:
        say(f"joint PMF of shape {pmf.shape} ({where})")
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    rows = [("expected cost", p["expected_cost"]), ("error rate", p["error_rate"]),
            ("noise second moment (paper's MSE)", p["noise_second_moment"]),
            ("squared error after wrap-around, worst q", p["squared_error"]["worst"]),
            ("squared error after wrap-around, average q", p["squared_error"]["average"]), *_privacy_rows(r)]
    if p["minimize"] == "delta":
        rows.insert(0, ("minimum delta", r["delta"]))
    for k, v in rows:
        summary.add_row(k, fmt(v))
    out.print(summary)
    say((f"method {p['method']}, optimal={p['optimal']}, {p['solve_seconds']:.3f} s, "
         f"neighbourhood {p['neighbourhood']}", "dim"))
    _print_bound(p)
    notes(list(p["notes"]) + [CERTIFIED])


#: What the two privacy figures of a design are (its human view says it under the table).
CERTIFIED = ("analysis: the float analysis of the designed masses; certificate: the exact certificate of the "
             "quantized weights that 'optnoise sample' and 'release' draw from")


def _privacy_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    """The float analysis and the exact certificate, side by side."""
    a, c = report["analysis"], report["certificate"]
    return [("analysis: epsilon_pure", a["epsilon_pure"]), ("analysis: delta_dp", a["delta_dp"]),
            ("analysis: delta_pdp", a["delta_pdp"]), ("certificate (exact): epsilon_pure", c["epsilon_pure"]),
            ("certificate (exact): delta_dp", c["delta_dp"]), ("certificate (exact): delta_pdp", c["delta_pdp"])]


def _print_with_cost(p: dict[str, Any]) -> None:
    _print(p)
    _print_released(p)


def _print_released(p: dict[str, Any]) -> None:
    """The cost a design ranked by, in words, and the released value's error beside it."""
    from rich.table import Table
    role = "cost bounded (delta minimised)" if p.get("minimize") == "delta" else "cost minimised"
    from ...costs import RELEASED_COSTS
    how = "; worst case over q" if p.get("worst_case") else "" if p.get("cost") not in RELEASED_COSTS else (
        "; averaged over " + ("a uniform q" if p.get("prior", "uniform") == "uniform" else "the prior on q"))
    say((role, "bold"), f": {p['cost_meaning']}{how}")
    rel = p.get("released_error")
    if not rel:
        return
    prior = "uniform q" if p.get("prior", "uniform") == "uniform" else "the prior on q"
    table = Table(title="error of the released value y against the true answer q"
                        + (" (after wrap-around)" if p.get("form") == "noise" else ""))
    for col in ("cost", f"average over {prior}", "worst q"):
        table.add_column(col, justify="left" if col == "cost" else "right")
    for name, v in rel.items():
        table.add_row(name, fmt(v["average"]), fmt(v["worst"]))
    out.print(table)


#: Channels with more answers than this print a summary instead of the whole matrix.
PRINT_CHANNEL_UP_TO = 12


def _print_channel(p: dict[str, Any]) -> None:
    import numpy as np
    from rich.markup import escape
    from rich.table import Table
    if "channel" not in p:   # a large domain: the clamped noise, no matrix
        _print_clamped(p)
        return
    P = np.asarray(p["channel"])
    t = p["target"]
    say((f"optimal channel on {{0..{p['n']}}}", "bold"),
        f": {t['notion'].upper()} eps={fmt(t['epsilon'])} delta={fmt(t['delta'])}, neighbours: {p['unit']}")
    if "structure" in p:   # block randomized response: its structure, not its core's matrix
        say(p["structure"]["in_words"])
    elif P.shape[0] <= PRINT_CHANNEL_UP_TO + 1:
        table = Table(title=escape("P[q, y]: row q is the distribution of the released value y for the true answer q"))
        table.add_column("q \\ y", justify="right")
        for y in range(P.shape[1]):
            table.add_column(str(y), justify="right")
        for q, row in enumerate(P):
            table.add_row(str(q), *(f"{v:.4f}" for v in row))
        out.print(table)
    else:
        where = f"in {p['output']}" if p.get("output") else "with --output FILE or --json"
        say(f"{P.shape[0]} x {P.shape[1]} matrix (row q: the released value's distribution for answer q); "
            f"P[q, q] from {P.diagonal().min():.4g} to {P.diagonal().max():.4g}; the whole matrix {where}")
    _cost_summary(p, "expected cost (what was minimised)")
    cons = ", ".join(f"{k} (max violation {v:.2g})" for k, v in p["constraint_violations"].items()) or "none"
    say((f"method {p['method']}, {p['variables']} variables, {p['rows']} rows, {p['solve_seconds']:.3f} s; "
         f"constraints: {cons}", "dim"))
    _print_bound(p)
    notes(list(p["notes"]) + [CERTIFIED])


def _cost_summary(p: dict[str, Any], label: str) -> None:
    """A channel's cost and privacy figures, then the released value's error."""
    from rich.table import Table
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    for key, v in [(label, p["expected_cost"]), *_privacy_rows(p["report"])]:
        summary.add_row(key, fmt(v))
    out.print(summary)
    _print_released(p)


def _print_clamped(p: dict[str, Any]) -> None:
    """A channel stored as noise on the line (no matrix): the clamped noise, or the geometric noise
    with a remap, its cost and the proven bound on every channel's cost (issue 23, issue 37)."""
    t = p["target"]
    say((f"channel on {{0..{p['n']}}}: {p['method']}", "bold"),
        f": {t['notion'].upper()} eps={fmt(t['epsilon'])} delta={fmt(t['delta'])}, neighbours one apart; "
        f"released: {p['released']}")
    if "structure" in p:   # the geometric noise with a remap: its structure
        say(p["structure"]["in_words"])
    _cost_summary(p, "expected cost (rounded up)")
    part = (f"the block relaxation {p['block_seconds']:.3f} s" if "block_seconds" in p
            else f"the bound {p.get('bound_seconds', 0.0):.3f} s")
    say((f"{p['solve_seconds']:.3f} s, of which {part}", "dim"))
    _print_bound(p)
    notes(list(p["notes"]) + [CERTIFIED])


def _print_attack(p: dict[str, Any]) -> None:
    """An attack target: the member designed for, the search's proven bound over every member,
    and the target checked on the exact curve of the sampled weights (docs/attacks.md)."""
    a = p.get("attack") or p["report"].get("attack")
    if not a:
        return
    t, m = a["target"], a["member"]
    wanted = " and ".join(([f"attacker TPR at most {t['max_tpr']:g} at FPR {t['at_fpr']:g}"]
                           if t.get("max_tpr") is not None else [])
                          + ([f"at most as revealing as Gaussian DP with mu {t['max_mu']:g}"]
                             if t.get("max_mu") is not None else []))
    say(("attack target", "bold"), f": {wanted}. Designed for its cheapest (epsilon, delta) member, eps "
        f"{fmt(m['epsilon'])}, delta {fmt(m['delta'])} ({a['designs_solved']} designs solved; proven lower bound "
        f"over every member {fmt(a['lower_bound'])}, gap {fmt(a['gap'])})")
    c = a.get("exact_curve")
    if c:
        got = ([f"TPR {fmt(c['tpr_at_fpr'])} at FPR {c['at_fpr']:g}"] if c.get("tpr_at_fpr") is not None else []) \
            + ([f"mu {fmt(c['mu_gdp'])}"] if c.get("mu_gdp") is not None else [])
        say(f"checked on the exact trade-off curve of {c['on']} (rounded up): {', '.join(got)}; meets the target: "
            f"{c['meets']}")


def _print_bound(p: dict[str, Any]) -> None:
    """The proven lower bound on the optimum and the design's distance above it (issue 23)."""
    _print_attack(p)
    if p.get("lower_bound") is None:
        return
    out.print(f"proven lower bound on the optimal cost {fmt(p['lower_bound'])} "
              f"({p.get('bound_method') or 'lp-dual'}): this design is {100 * p['gap']:.2g}% above it; "
              f"optimal (within {p['gap_tolerance']:g}): {p['optimal']}")


# ------------------------------------------------------------------ figures
def _title(d: Any) -> str:
    """A figure's title from the design's request."""
    r, t = d.report.request, d.mechanism.target
    worst = " (worst q)" if r.loss_worst else ""
    if r.problem == "channel":
        unit = "every pair of answers (per record)" if r.unit == "record" else r.neighbours.describe()
        return (f"Optimal channel on {{0..{r.n}}}, eps={t.epsilon:g}, delta={t.delta:g}, {t.notion.upper()}, {unit}, "
                f"{r.cost_name}{worst}")
    if r.problem == "releases":
        return (f"{r.releases} releases, total eps={r.target.epsilon:g}, delta={r.target.delta:g}, "
                f"{r.neighbours.describe()}, cost {d.details.cost}")
    n = ",".join(str(v) for v in r.n) if isinstance(r.n, tuple) else r.n
    tail = f", {r.cost_name}{worst}" if r.problem == "modulo" else ""
    return (f"Optimal noise, n={n}, eps={t.epsilon:g}, delta={d.details.delta:g}, {t.notion.upper()}, "
            f"{d.mechanism.neighbourhood.describe()}{tail}")


def _draw_pmf(d: Any, path: Path) -> None:
    plots().plot_pmf(d.mechanism.pmf.probs, path, title=_title(d), force=True)


def _draw_channel(d: Any, path: Path) -> None:
    plots().plot_channel(d.details.matrix, path, title=_title(d), force=True)


def _draw_releases(d: Any, path: Path) -> None:
    plots().plot_releases_design(d.details, path, title=_title(d), force=True)


#: How each problem's design is shown: (human view of the payload, figure).
VIEWS: dict[str, tuple[Callable[[dict[str, Any]], None], Callable[[Any, Path], None]]] = {
    "finite": (_print_with_cost, _draw_pmf), "modulo": (_print_with_cost, _draw_pmf),
    "channel": (_print_channel, _draw_channel), "releases": (_print_releases, _draw_releases),
}
