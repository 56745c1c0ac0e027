"""``optnoise design``: optimal noise for answers in {0..n}, added mod n+1 (Kadam et al. 2024)."""

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import channel_pairs, neighbourhood, prior_weights
from ..options import (
    LIMITS, NEIGHBOURHOOD, WRITES, Form, Guarantee, Json, NeighbourhoodArgs, Output, PerRecord, Plot, Prior,
    TimeLimit, WorstCase, Writes,
)
from ..render import err, fmt, notes, out, say
from .shared import check_png, deliver, parse_list, plots


@command(NEIGHBOURHOOD, LIMITS, WRITES, flags={"path": "--cost-file", "k": "--releases"})
def design(
    nb: NeighbourhoodArgs,
    max_memory: Optional[int],
    writes: Writes,
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    n: Annotated[Optional[str], typer.Option(
        "--n", help="Domain {0..N} (noise added mod N+1); N1,N2 for a vector query. Required unless "
                    "--releases with --space integer.")] = None,
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    guarantee_: Guarantee = "dp",
    cost: Annotated[Optional[str], typer.Option(
        "--cost", help="Noise costs: er | mse (= noise-second-moment, the paper's MSE) | circular-mse | abs | "
                       "circular-abs | pow:K. Released-value costs: er | abs-error | sq-error (after wrap-around "
                       "for noise mod N+1) | circular-abs | circular-mse. Default er; abs-error with --form "
                       "channel.")] = None,
    cost_file: Annotated[Optional[Path], typer.Option(
        "--cost-file", help="User cost, one value per noise value (same forms as --pmf-file).")] = None,
    minimize: Annotated[str, typer.Option("--minimize", help="cost, or delta (Kadam (15); needs --max-cost).")] = "cost",
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", help="Cost bound for --minimize delta.")] = None,
    formulation: Annotated[str, typer.Option(
        "--formulation", help="standard, or paper: Kadam (13) as printed (with --guarantee pdp).")] = "standard",
    time_limit: TimeLimit = None,
    releases: Annotated[Optional[int], typer.Option(
        "--releases", help="Design for K releases: the K-fold composition meets (--epsilon, --delta) "
                           "(approximate DP; Rényi-constrained convex program certified by exact composition).")] = None,
    space: Annotated[str, typer.Option(
        "--space", help="With --releases: cyclic (noise mod N+1, default) or integer (noise on Z with exact "
                        "tails; cost sq, abs, pow:K or er).")] = "cyclic",
    form: Form = "noise",
    constraints: Annotated[Optional[str], typer.Option(
        "--constraints", help="With --form channel, comma-separated: row-monotone, column-monotone, fair, "
                              "weak-honest, unbiased, circulant (Cormode et al.).")] = None,
    prior: Prior = None,
    worst_case: WorstCase = False,
    per_record: PerRecord = False,
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Optimal noise PMF for answers in {0..n}, added mod n+1 (Kadam et al. 2024), or the optimal channel
    (--form channel), with its analysis.

    Example: optnoise design --n 8 --epsilon 1.5 --delta 0.1238 --bd 3 --directed --guarantee pdp --formulation paper

    Example (365 releases): optnoise design --n 23 --sd 1 --epsilon 10 --delta 1e-6 --cost circular-mse --releases 365

    Example (ages, every record): optnoise design --form channel --n 100 --epsilon 1 --per-record --cost abs-error
    """
    from ...design import design_finite
    from ...io import read_pmf_file
    if form not in ("noise", "channel"):
        raise InvalidParameterError("--form", form, "noise (noise added mod n+1) or channel (any P[q, y] on {0..n})")
    released = {"--prior": prior is not None, "--worst-case": worst_case}
    if form == "channel" or constraints is not None:
        given = {"--releases": releases is not None, "--minimize": minimize != "cost",
                 "--max-cost": max_cost is not None,
                 "--formulation": formulation != "standard", "--cost-file": cost_file is not None,
                 "--space": space != "cyclic", "--form channel": form != "channel"}
        for flag, bad in given.items():
            if bad:
                raise InvalidParameterError(flag if flag != "--form channel" else "--constraints", "given",
                                            "--constraints only with --form channel; --form channel not with "
                                            "--releases, --minimize, --max-cost, --formulation, --cost-file, "
                                            "--space")
        _channel(nb, n, epsilon, delta, guarantee_, cost or "abs-error", prior, worst_case, per_record, constraints,
                 time_limit, output, writes, as_json, plot, max_memory)
        return
    noise_cost = cost or "er"  # ``cost`` itself stays None when not given (it conflicts with --cost-file)
    if any(released.values()) or per_record:
        for flag, bad in {"--releases": releases is not None, "--minimize": minimize != "cost",
                          "--formulation": formulation != "standard", "--cost-file": cost_file is not None}.items():
            if bad:
                raise InvalidParameterError(flag, "given", "not with --prior, --worst-case or --per-record")
        _released_noise(nb, n, epsilon, delta, guarantee_, noise_cost, prior, worst_case, per_record, time_limit,
                        output, writes, as_json, plot)
        return
    if releases is not None:
        given = {"--guarantee": guarantee_ != "dp", "--minimize": minimize != "cost", "--max-cost": max_cost is not None,
                 "--formulation": formulation != "standard", "--time-limit": time_limit is not None}
        for flag, bad in given.items():
            if bad:
                raise InvalidParameterError(flag, "given", "not with --releases (approximate DP, minimum cost)")
        _releases(nb, n, epsilon, delta, noise_cost, cost_file, releases, space, output, writes, as_json, plot)
        return
    if space != "cyclic":
        raise InvalidParameterError("--space", space, "cyclic (integer only with --releases)")
    if n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1, or n1,n2 for a vector query")
    dims = parse_list(n, "--n", "an integer n >= 1, or n1,n2 for a vector query", int)
    if any(v < 1 for v in dims):
        raise InvalidParameterError("--n", n, "an integer n >= 1, or n1,n2 for a vector query")
    cost_value: Any = noise_cost
    if cost_file is not None:
        if cost is not None:
            raise InvalidParameterError("--cost", cost, "either --cost or --cost-file, not both")
        cost_value = read_pmf_file(cost_file, parameter="--cost-file", max_memory=max_memory)["pmf"]
        if np.any(~np.isfinite(cost_value)):
            raise InvalidParameterError("--cost-file", str(cost_file), "finite costs")
    check_png(plot)
    if max_cost is not None and minimize != "delta":
        raise InvalidParameterError("--max-cost", max_cost, "only with --minimize delta")
    if minimize == "delta" and delta != 0.0:
        raise InvalidParameterError("--delta", delta, "no --delta with --minimize delta (delta is the objective)")
    if len(dims) > 1 and nb.distances is None:
        raise InvalidParameterError("--distances", None, "vector distances like '1,0;0,1' for a vector query")
    with err.status("solving the design problem...", spinner="dots") if not as_json else nullcontext():
        result = design_finite(dims[0] if len(dims) == 1 else dims, epsilon=epsilon, delta=delta,
                               notion=guarantee_, cost=cost_value, minimize=minimize, max_cost=max_cost,
                               neighbourhood=neighbourhood(nb, largest=dims[0] if len(dims) == 1 else None,
                                                           max_memory=max_memory),
                               formulation=formulation, time_limit=time_limit, max_memory=max_memory)
    title = (f"Optimal noise, n={n}, eps={epsilon:g}, delta={result.delta:g}, {guarantee_.upper()}, "
             f"{result.neighbourhood.describe()}")
    payload = {**result.to_json(), **_noise_extras(result, cost_value if cost_file is None else "user", None, False)}
    deliver(payload, as_json=as_json, render=_print_with_cost, mechanism=result.mechanism, output=output,
            writes=writes, plot=plot, draw=lambda path: plots().plot_pmf(result.pmf.probs, path, title=title))


#: Designs with more masses than this print a summary and the first and last few masses.
PRINT_ALL_MASSES_UP_TO = 64
#: Masses shown at each end of a large design.
PRINT_END_MASSES = 5


def _pmf_table(pmf: np.ndarray, form: str) -> None:
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


def _releases(nb: NeighbourhoodArgs, n: Optional[str], epsilon: float, delta: float, cost: str,
              cost_file: Optional[Path], k: int, space: str, output: Optional[Path], writes: Writes, as_json: bool,
              plot: Optional[Path]) -> None:
    """``design --releases K``: noise whose K-fold composition meets the target."""
    from ...design.releases import design_releases, design_releases_line
    from ...io import read_pmf_file
    if k < 1:
        raise InvalidParameterError("--releases", k, "an integer K >= 1")
    check_png(plot)
    with err.status(f"designing noise for {k} releases...", spinner="dots") if not as_json else nullcontext():
        if space == "integer":
            if n is not None or cost_file is not None:
                raise InvalidParameterError("--n" if n is not None else "--cost-file", "given",
                                            "no --n/--cost-file with --space integer (noise on Z)")
            result = design_releases_line(k, epsilon=epsilon, delta=delta, neighbourhood=neighbourhood(nb), cost=cost)
        elif space == "cyclic":
            if n is None:
                raise InvalidParameterError("--n", None, "an integer n >= 1 (domain {0..n}) with --space cyclic")
            cost_value: Any = cost if cost_file is None else read_pmf_file(cost_file, parameter="--cost-file")["pmf"]
            size = parse_list(n, "--n", "one integer n >= 1 with --releases", int)
            if len(size) != 1:
                raise InvalidParameterError("--n", n, "one integer n >= 1 with --releases")
            result = design_releases(size[0], k, epsilon=epsilon, delta=delta, neighbourhood=neighbourhood(nb),
                                     cost=cost_value)
        else:
            raise InvalidParameterError("--space", space, "cyclic or integer")
    title = (f"{k} releases, total eps={epsilon:g}, delta={delta:g}, {result.neighbourhood.describe()}, "
             f"cost {result.cost}")
    deliver(result.to_json(), as_json=as_json, render=_print_releases, mechanism=result.mechanism, output=output,
            writes=writes, plot=plot, draw=lambda path: plots().plot_releases_design(result, path, title=title))


def _print_releases(p: dict[str, Any]) -> None:
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
    notes([f"{p['solve_seconds']:.2f} s; the certificate is the best of exact enumeration, PLD, RDP and the pure "
           "bound on the returned PMF (use --json for every candidate and the PMF)",
           "'optnoise sample' and 'release' quantize the PMF; re-verify a K-fold guarantee with "
           f"'optnoise verify --mechanism FILE --compose {p['k']} --delta {p['delta']:g}'"])


def _print(p: dict[str, Any]) -> None:
    from rich.table import Table
    pmf = np.asarray(p["pmf"])
    g = p["guarantee"]
    say((f"optimal noise on {{0..{p['n']}}}", "bold"),
        f": {g['notion'].upper()} eps={fmt(g['epsilon'])} delta={fmt(g['delta'])}, cost={p['cost']}")
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
    c = p["certificate"]
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    rows = [("expected cost", p["expected_cost"]), ("error rate", p["error_rate"]),
            ("noise second moment (paper's MSE)", p["noise_second_moment"]),
            ("squared error after wrap-around, worst q", p["squared_error"]["worst"]),
            ("squared error after wrap-around, average q", p["squared_error"]["average"]),
            ("analysis: epsilon_pure", c["epsilon_pure"]),
            ("analysis: delta_dp", c["delta_dp"]), ("analysis: delta_pdp", c["delta_pdp"])]
    if p["minimize"] == "delta":
        rows.insert(0, ("minimum delta", p["delta"]))
    for k, v in rows:
        summary.add_row(k, fmt(v))
    out.print(summary)
    say((f"method {p['method']}, optimal={p['optimal']}, {p['solve_seconds']:.3f} s, "
         f"neighbourhood {g['neighbourhood']}", "dim"))
    _print_bound(p)
    notes(list(p["notes"]) + ["the analysis is the float analysis of this PMF; 'optnoise sample' and 'release' "
                              "quantize it and certify the sampled weights exactly"])


def _noise_extras(result: Any, cost: Any, prior: Optional[list], worst_case: bool) -> dict[str, Any]:
    """Keys that say what a noise design's cost measured and what the released value's error is."""
    from ...costs import check_prior, describe_cost, released_errors
    extras: dict[str, Any] = {"form": "noise", "cost_meaning": describe_cost(cost if isinstance(cost, str) else "user")}
    if result.pmf.probs.ndim == 1:
        extras["released_error"] = released_errors(result.pmf, prior)
        extras["prior"] = "uniform" if prior is None else check_prior(prior, result.pmf.size).tolist()
        extras["worst_case"] = worst_case
    return extras


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


def _released_noise(nb: NeighbourhoodArgs, n: Optional[str], epsilon: float, delta: float, guarantee_: str,
                    cost: str, prior: Optional[str], worst_case: bool, per_record: bool, time_limit: Optional[float],
                    output: Optional[Path], writes: Writes, as_json: bool, plot: Optional[Path]) -> None:
    """``design --form noise`` with ``--prior``, ``--worst-case`` or ``--per-record``: the best noise mod
    n+1 for a cost of the released value (worst case: the channel LP restricted to circulant channels)."""
    from ...costs import RELEASED_COSTS
    from ...design import design_finite
    from ...design.channel import optimal_modulo_noise
    from ...neighbourhood import Neighbourhood
    size = _scalar_n(n, "--prior/--worst-case/--per-record")
    if (prior is not None or worst_case) and cost not in RELEASED_COSTS:
        raise InvalidParameterError("--cost", cost, "a released-value cost with --prior/--worst-case: "
                                    + ", ".join(RELEASED_COSTS))
    if per_record and nb.given:
        raise InvalidParameterError("--per-record", "with distance flags", "either --per-record or "
                                    "--distances/--sd/--bd/--directed")
    check_png(plot)
    weights = prior_weights(prior, size)
    hood = Neighbourhood(tuple(range(1, size + 1))) if per_record else neighbourhood(nb)
    with err.status("solving the design problem...", spinner="dots") if not as_json else nullcontext():
        if cost in RELEASED_COSTS:
            result = optimal_modulo_noise(size, epsilon=epsilon, delta=delta, notion=guarantee_, neighbourhood=hood,
                                          cost=cost, prior=weights, worst_case=worst_case, time_limit=time_limit)
        else:
            result = design_finite(size, epsilon=epsilon, delta=delta, notion=guarantee_, neighbourhood=hood, cost=cost,
                                   time_limit=time_limit)
    title = (f"Optimal noise, n={size}, eps={epsilon:g}, delta={delta:g}, {guarantee_.upper()}, "
             f"{result.neighbourhood.describe()}, {cost}" + (" (worst q)" if worst_case else ""))
    payload = {**result.to_json(), **_noise_extras(result, cost, weights, worst_case)}
    deliver(payload, as_json=as_json, render=_print_with_cost, mechanism=result.mechanism, output=output,
            writes=writes, plot=plot, draw=lambda path: plots().plot_pmf(result.pmf.probs, path, title=title))


def _scalar_n(n: Optional[str], what: str) -> int:
    if n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1 (domain {0..n})")
    dims = parse_list(n, "--n", f"one integer n >= 1 with {what}", int)
    if len(dims) != 1 or dims[0] < 1:
        raise InvalidParameterError("--n", n, f"one integer n >= 1 with {what}")
    return dims[0]


def _channel(nb: NeighbourhoodArgs, n: Optional[str], epsilon: float, delta: float, guarantee_: str, cost: str,
             prior: Optional[str], worst_case: bool, per_record: bool, constraints: Optional[str],
             time_limit: Optional[float], output: Optional[Path], writes: Writes, as_json: bool,
             plot: Optional[Path], max_memory: Optional[int] = None) -> None:
    """``design --form channel``: the optimal row-stochastic P[q, y] on {0..n}."""
    from ...design.channel import design_channel
    from ...resources import channel_bytes, check
    size = _scalar_n(n, "--form channel")
    # the report lists every entry twice (the design's keys and the mechanism schema's), as Python
    # floats in lists and as JSON text: refuse before solving what could not be written
    check(channel_bytes(size + 1, size + 1, copies=16), parameter="--n", value=size, max_memory=max_memory,
          what=f"the report of a channel on {{0..{size}}} (its {(size + 1) ** 2:.3g} entries listed in JSON; the "
               "library's design_channel returns it as an array)")
    check_png(plot)
    cons = [c.strip() for c in (constraints or "").split(",") if c.strip()]
    pairs = channel_pairs(nb, size, per_record)
    weights = prior_weights(prior, size)
    with err.status("solving the channel design problem...", spinner="dots") if not as_json else nullcontext():
        result = design_channel(size, epsilon=epsilon, delta=delta, notion=guarantee_, pairs=pairs, cost=cost,
                                prior=weights, worst_case=worst_case, constraints=cons, time_limit=time_limit)
    unit = "every pair of answers (per record)" if per_record else pairs.describe()
    title = (f"Optimal channel on {{0..{size}}}, eps={epsilon:g}, delta={delta:g}, {result.notion.upper()}, {unit}, "
             f"{cost}" + (" (worst q)" if worst_case else ""))
    payload = result.to_json()
    payload["unit"] = unit
    deliver(payload, as_json=as_json, render=_print_channel, mechanism=result.mechanism, output=output,
            writes=writes, plot=plot, draw=lambda path: plots().plot_channel(result.matrix, path, title=title))


#: Channels with more answers than this print a summary instead of the whole matrix.
PRINT_CHANNEL_UP_TO = 12


def _print_channel(p: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table
    P = np.asarray(p["channel"])
    g = p["guarantee"]
    say((f"optimal channel on {{0..{p['n']}}}", "bold"),
        f": {g['notion'].upper()} eps={fmt(g['epsilon'])} delta={fmt(g['delta'])}, neighbours: {p['unit']}")
    if P.shape[0] <= PRINT_CHANNEL_UP_TO + 1:
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
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    c = p["certificate"]
    for key, v in [("expected cost (what was minimised)", p["expected_cost"]),
                   ("analysis: epsilon_pure", c["epsilon_pure"]), ("analysis: delta_dp", c["delta_dp"]),
                   ("analysis: delta_pdp", c["delta_pdp"])]:
        summary.add_row(key, fmt(v))
    out.print(summary)
    _print_released(p)
    cons = ", ".join(f"{k} (max violation {v:.2g})" for k, v in p["constraint_violations"].items()) or "none"
    say((f"method {p['method']}, {p['variables']} variables, {p['rows']} rows, {p['solve_seconds']:.3f} s; "
         f"constraints: {cons}", "dim"))
    _print_bound(p)
    notes(list(p["notes"]) + ["the analysis is the float analysis of this matrix; 'optnoise sample --answer Q' and "
                              "'release' quantize it and certify the sampled weights exactly"])


def _print_bound(p: dict[str, Any]) -> None:
    """The proven lower bound on the optimum and the design's distance above it (issue 23)."""
    if p.get("lower_bound") is None:
        return
    out.print(f"proven lower bound on the optimal cost {fmt(p['lower_bound'])} "
              f"({p.get('bound_method') or 'lp-dual'}): this design is {100 * p['gap']:.2g}% above it; "
              f"optimal (within {p['gap_tolerance']:g}): {p['optimal']}")

