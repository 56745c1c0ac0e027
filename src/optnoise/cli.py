"""The ``optnoise`` command line (contract: shared/CLI.md).

Exit codes: 0 success, 2 bad input (the message names the parameter, the value
and what is accepted), 1 other failures. ``--json`` prints exactly one JSON
object on stdout; messages go to stderr.
"""

from __future__ import annotations

import functools
import math
from contextlib import nullcontext
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from . import __version__
from .analysis import check_delta, check_epsilon, guarantee, privacy_profile
from .errors import DesignError, InvalidParameterError, OptnoiseError
from .io import dumps, parse_pmf_text, read_pmf_file, write_text_atomic
from .neighbourhood import Neighbourhood, neighbourhood_from_options
from .pmf import CyclicPMF, IntegerPMF

app = typer.Typer(
    name="optnoise",
    help=("Optimal noise for differential privacy on discrete query answers (counts, hours, "
          "categories): design it, verify exactly what a mechanism guarantees, compare, release."),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

out = Console()
err = Console(stderr=True)


def _fail(code: int, message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def cli_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Map optnoise exceptions to the contract's exit codes and one-line messages."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidParameterError as exc:
            _fail(2, str(exc))
        except DesignError as exc:
            _fail(1, str(exc))
        except OptnoiseError as exc:
            _fail(1, str(exc))
        except OSError as exc:
            _fail(1, f"I/O error: {exc}")

    return wrapper


def _version(value: bool) -> None:
    if value:
        typer.echo(f"optnoise {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """optnoise: optimal noise mechanisms for differential privacy."""


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.6g}"


def _check_png(plot: Path | None) -> None:
    """``--plot`` must name a PNG file."""
    if plot is not None and plot.suffix.lower() != ".png":
        raise InvalidParameterError("--plot", str(plot), "a path ending in .png")


# ---------------------------------------------------------------- verify ---
def load_pmf(pmf: str | None, pmf_file: Path | None, family: str | None, space: str, offset: int | None,
             normalize: bool):
    """Build the mechanism's PMF from ``--pmf``, ``--pmf-file`` or ``--family``."""
    given = [x is not None for x in (pmf, pmf_file, family)]
    if sum(given) != 1:
        raise InvalidParameterError("--pmf/--pmf-file/--family", "none" if not any(given) else "several",
                                    "exactly one PMF source")
    if space not in ("cyclic", "integer"):
        raise InvalidParameterError("--space", space, "'cyclic' or 'integer'")
    if family is not None:
        from .families import parse_family
        _, obj = parse_family(family)
        return obj
    if pmf is not None:
        floats, exact = parse_pmf_text(pmf)
        file_offset = None
    else:
        data = read_pmf_file(pmf_file)  # type: ignore[arg-type]
        floats, exact, file_offset = data["pmf"], data["exact"], data["offset"]
    if space == "integer":
        off = offset if offset is not None else (file_offset if file_offset is not None else 0)
        return IntegerPMF(floats, off, normalize=normalize, exact=exact)
    if offset is not None:
        raise InvalidParameterError("--offset", offset, "only with --space integer")
    return CyclicPMF(floats, normalize=normalize, exact=exact)


@app.command()
@cli_errors
def verify(
    pmf: Optional[str] = typer.Option(None, "--pmf", help="Noise masses, e.g. 0.5,0.25,0.25 (decimals are kept exactly)."),
    pmf_file: Optional[Path] = typer.Option(None, "--pmf-file", help="PMF file: JSON list, JSON with key 'pmf' (e.g. a design), CSV/text one value per line, or .npy."),
    family: Optional[str] = typer.Option(None, "--family", help="A built-in family NAME:PARAMS (see 'optnoise families')."),
    space: str = typer.Option("cyclic", "--space", help="cyclic: noise added mod len(pmf); integer: noise on Z (use --offset)."),
    offset: Optional[int] = typer.Option(None, "--offset", help="With --space integer: pmf[i] is the mass at i - OFFSET."),
    distances: Optional[str] = typer.Option(None, "--distances", help="Query distances mu = Q(X) - Q(X'), e.g. 1,2,3 or 1..3; vectors '1,0;0,1'."),
    sd: Optional[int] = typer.Option(None, "--sd", help="Single distance: same as --distances MU."),
    bd: Optional[int] = typer.Option(None, "--bd", help="Bounded difference: same as --distances 1..MUBAR."),
    directed: bool = typer.Option(False, "--directed", help="Use exactly the listed distances (Kadam et al.'s tables); default is symmetric."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Report delta_DP and delta_PDP at this epsilon (>= 0)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="Report the smallest epsilon_DP and epsilon_PDP at this delta (0 <= delta < 1)."),
    compose_k: Optional[int] = typer.Option(None, "--compose", help="Also report the guarantee after K releases (dp_accounting PLDs)."),
    normalize: bool = typer.Option(False, "--normalize", help="Rescale masses that do not sum to 1 (a rounded table)."),
    exact: bool = typer.Option(False, "--exact", help="Rational arithmetic with outward rounding: a certificate that is never optimistic."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the privacy profile (delta vs epsilon) as a PNG."),
) -> None:
    """Exact privacy of a noise PMF: tight pure epsilon, delta_DP/delta_PDP at --epsilon, epsilon at --delta.

    Example: optnoise verify --pmf 0.5432,0.1212,0.1212,0.1212,0.027,0.027,0.027,0.006,0.006
    --bd 3 --directed --epsilon 1.505 --normalize
    """
    eps = None if epsilon is None else check_epsilon(epsilon, parameter="--epsilon")
    dlt = None if delta is None else check_delta(delta, parameter="--delta")
    if compose_k is not None and compose_k < 1:
        raise InvalidParameterError("--compose", compose_k, "an integer K >= 1")
    if compose_k is not None and eps is None and dlt is None:
        raise InvalidParameterError("--compose", compose_k, "together with --epsilon and/or --delta")
    _check_png(plot)
    obj = load_pmf(pmf, pmf_file, family, space, offset, normalize)
    from .families import ChannelFamily
    if isinstance(obj, ChannelFamily):
        if any(x is not None for x in (distances, sd, bd)) or directed:
            raise InvalidParameterError("--distances/--sd/--bd/--directed", "given",
                                        "no neighbourhood flags with a channel family (its neighbours differ in one row)")
        profile = privacy_profile(obj.channel, obj.pairs, exact=exact)
        nb_text = f"{len(obj.pairs.pairs)} ordered pairs of databases differing in one row"
    else:
        if isinstance(obj, CyclicPMF) and len(obj.shape) > 1 and distances is None:
            raise InvalidParameterError("--distances", None, "vector distances like '1,0;0,1' for a joint PMF")
        nb = neighbourhood_from_options(distances, sd, bd, directed)
        profile = privacy_profile(obj, nb, exact=exact)
        nb_text = nb.describe()
    g = guarantee(profile, eps, dlt)
    result: dict[str, Any] = g.to_json()
    result["space"] = profile.space
    result["normalized"] = bool(getattr(obj, "normalized", False))
    result["notions"] = {"delta_dp": "approximate DP (hockey-stick)", "delta_pdp": "probabilistic DP (Kadam Def. 2)"}
    if eps is not None:
        result["worst_pair_dp"] = profile.worst_pair(eps, "dp")
        result["worst_pair_pdp"] = profile.worst_pair(eps, "pdp")
    if compose_k is not None:
        from .accounting import compose
        result["composed"] = compose(privacy_profile(obj.channel, obj.pairs) if isinstance(obj, ChannelFamily)
                                     else privacy_profile(obj, nb), compose_k, epsilon=eps, delta=dlt).to_json()
    if plot is not None:
        from .plots import plot_profile
        plot_profile(profile, plot, title=f"Privacy profile, neighbourhood {nb_text}")
        result["plot"] = str(plot)
    if as_json:
        typer.echo(dumps(result))
        return
    _print_verify(result, nb_text)


def _print_verify(r: dict[str, Any], nb_text: str) -> None:
    table = Table(title="optnoise verify", show_header=True, header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    table.add_row("space", r["space"], "cyclic: added mod n+1; integer: noise on Z")
    table.add_row("neighbourhood", nb_text, "query distances mu = Q(X) - Q(X'), or input pairs")
    table.add_row("epsilon_pure", _fmt(r["epsilon_pure"]), "tight pure epsilon (delta = 0)")
    if r["epsilon"] is not None:
        table.add_row(f"delta_dp @ eps={_fmt(r['epsilon'])}", _fmt(r["delta_dp"]), "approximate DP (hockey-stick), tight")
        table.add_row(f"delta_pdp @ eps={_fmt(r['epsilon'])}", _fmt(r["delta_pdp"]), "probabilistic DP (Kadam Def. 2)")
    if r["delta"] is not None:
        table.add_row(f"epsilon_dp @ delta={_fmt(r['delta'])}", _fmt(r["epsilon_dp"]), "smallest epsilon, approximate DP")
        table.add_row(f"epsilon_pdp @ delta={_fmt(r['delta'])}", _fmt(r["epsilon_pdp"]), "smallest epsilon, PDP")
    if "composed" in r:
        c = r["composed"]
        if c["delta_dp"] is not None:
            table.add_row(f"composed k={c['k']}: delta_dp", _fmt(c["delta_dp"]), "dp_accounting PLD, pessimistic")
        if c["epsilon_dp"] is not None:
            table.add_row(f"composed k={c['k']}: epsilon_dp", _fmt(c["epsilon_dp"]), "dp_accounting PLD, pessimistic")
    out.print(table)
    notes = []
    if r["normalized"]:
        notes.append("masses were rescaled to sum to 1 (--normalize)")
    notes.append("values are exact (rational, rounded outward)" if r["exact"] else
                 "float mode; use --exact for a certificate rounded outward")
    if "plot" in r:
        notes.append(f"profile plot written to {r['plot']}")
    for n in notes:
        out.print(f"[dim]- {n}[/]")


# ---------------------------------------------------------------- design ---
def _parse_n(text: str) -> int | list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise InvalidParameterError("--n", text, "an integer n >= 1, or n1,n2 for a vector query") from exc
    if not vals or any(v < 1 for v in vals):
        raise InvalidParameterError("--n", text, "an integer n >= 1, or n1,n2 for a vector query")
    return vals[0] if len(vals) == 1 else vals


@app.command()
@cli_errors
def design(
    n: str = typer.Option(..., "--n", help="Domain {0..N} (noise added mod N+1); N1,N2 for a vector query."),
    epsilon: float = typer.Option(..., "--epsilon", help="Target epsilon (> 0)."),
    delta: float = typer.Option(0.0, "--delta", help="Target delta (0 <= delta < 1)."),
    distances: Optional[str] = typer.Option(None, "--distances", help="Query distances, e.g. 1,2,3; vectors '1,0;0,1'."),
    sd: Optional[int] = typer.Option(None, "--sd", help="Single distance MU."),
    bd: Optional[int] = typer.Option(None, "--bd", help="Bounded difference 1..MUBAR."),
    directed: bool = typer.Option(False, "--directed", help="Exactly the listed distances (Kadam et al.'s tables)."),
    guarantee_: str = typer.Option("dp", "--guarantee", help="dp: approximate DP (an LP); pdp: probabilistic DP (a MILP)."),
    cost: str = typer.Option("er", "--cost", help="er | mse (noise second moment, the paper's MSE) | circular-mse | abs | circular-abs."),
    cost_file: Optional[Path] = typer.Option(None, "--cost-file", help="User cost, one value per noise value (same forms as --pmf-file)."),
    minimize: str = typer.Option("cost", "--minimize", help="cost, or delta (Kadam (15); needs --max-cost)."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", help="Cost bound for --minimize delta."),
    formulation: str = typer.Option("standard", "--formulation", help="standard, or paper: Kadam (13) as printed (with --guarantee pdp)."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Solver time limit in seconds; reaching it is an error (exit 1)."),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the design JSON to this file (atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Bar chart of the PMF as a PNG."),
) -> None:
    """Optimal noise PMF for answers in {0..n}, added mod n+1 (Kadam et al. 2024), with its certificate.

    Example: optnoise design --n 8 --epsilon 1.5 --delta 0.1238 --bd 3 --directed --guarantee pdp --formulation paper
    """
    from .design import design_finite
    dims = _parse_n(n)
    if cost_file is not None:
        cost_value: Any = read_pmf_file(cost_file)["pmf"]
        if np.any(~np.isfinite(cost_value)):
            raise InvalidParameterError("--cost-file", str(cost_file), "finite costs")
    else:
        cost_value = cost
    _check_png(plot)
    if max_cost is not None and minimize != "delta":
        raise InvalidParameterError("--max-cost", max_cost, "only with --minimize delta")
    if minimize == "delta" and delta != 0.0:
        raise InvalidParameterError("--delta", delta, "no --delta with --minimize delta (delta is the objective)")
    if not isinstance(dims, int) and distances is None:
        raise InvalidParameterError("--distances", None, "vector distances like '1,0;0,1' for a vector query")
    nb = neighbourhood_from_options(distances, sd, bd, directed)
    with err.status("solving the design problem...", spinner="dots") if not as_json else nullcontext():
        result = design_finite(dims, epsilon=epsilon, delta=delta, neighbourhood=nb, guarantee_notion=guarantee_,
                               cost=cost_value, minimize=minimize, max_cost=max_cost, formulation=formulation,
                               time_limit=time_limit)
    payload = result.to_json()
    if output is not None:
        write_text_atomic(output, dumps(payload))
    if plot is not None:
        from .plots import plot_pmf
        plot_pmf(result.pmf.probs, plot, title=(f"Optimal noise, n={n}, eps={epsilon:g}, delta={payload['guarantee']['delta']:g}, "
                                               f"{guarantee_.upper()}, {nb.describe()}"))
        payload["plot"] = str(plot)
    if as_json:
        typer.echo(dumps(payload))
        return
    _print_design(payload)


def _print_design(p: dict[str, Any]) -> None:
    pmf = np.asarray(p["pmf"])
    g = p["guarantee"]
    out.print(f"[bold]optimal noise on {{0..{p['n']}}}[/]: {g['notion'].upper()} eps={_fmt(g['epsilon'])} "
              f"delta={_fmt(g['delta'])}, cost={p['cost']}")
    table = Table()
    if pmf.ndim == 1:
        table.add_column("eta", justify="right")
        table.add_column("f(eta)", justify="right")
        for i, v in enumerate(pmf):
            table.add_row(str(i), f"{v:.6f}")
        out.print(table)
    else:
        out.print(f"joint PMF of shape {pmf.shape} (use --json for the values)")
    c = p["certificate"]
    summary = Table(show_header=False)
    summary.add_column("k")
    summary.add_column("v", justify="right")
    rows = [("expected cost", p["expected_cost"]), ("error rate", p["error_rate"]),
            ("noise second moment (paper's MSE)", p["noise_second_moment"]),
            ("squared error after wrap-around, worst q", p["squared_error"]["worst"]),
            ("squared error after wrap-around, average q", p["squared_error"]["average"]),
            ("certificate: epsilon_pure", c["epsilon_pure"]),
            ("certificate: delta_dp", c["delta_dp"]), ("certificate: delta_pdp", c["delta_pdp"])]
    if p["minimize"] == "delta":
        rows.insert(0, ("minimum delta", p["delta"]))
    for k, v in rows:
        summary.add_row(k, _fmt(v))
    out.print(summary)
    out.print(f"[dim]method {p['method']}, optimal={p['optimal']}, {p['solve_seconds']:.3f} s, "
              f"neighbourhood {g['neighbourhood']}[/]")
    for note in p["notes"]:
        out.print(f"[dim]- {note}[/]")


# -------------------------------------------------------------- families ---
@app.command()
@cli_errors
def families(as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout.")) -> None:
    """List the built-in noise families usable as --family NAME:PARAMS."""
    from .families import FAMILIES
    if as_json:
        typer.echo(dumps({"families": [f.to_json() for f in FAMILIES.values()]}))
        return
    table = Table(title="optnoise families")
    for col in ("name:params", "space", "description"):
        table.add_column(col)
    for f in FAMILIES.values():
        table.add_row(f"{f.name}:{f.params}", f.space, f.description)
    out.print(table)


# -------------------------------------------------------- staircase / wasserstein ---
@app.command()
@cli_errors
def staircase(
    epsilon: float = typer.Option(..., "--epsilon", help="Target epsilon (> 0): pure eps-DP."),
    sensitivity: float = typer.Option(1.0, "--sensitivity", help="Sensitivity Delta (> 0; an integer with --discrete)."),
    cost: str = typer.Option("abs", "--cost", help="abs (|x|), sq (x^2) or pow:K (|x|^K)."),
    discrete: bool = typer.Option(False, "--discrete", help="Integer-valued query: the staircase PMF P_r (82)."),
    gamma: Optional[float] = typer.Option(None, "--gamma", help="Evaluate this gamma in [0, 1] instead of the optimum."),
    r: Optional[int] = typer.Option(None, "--r", help="With --discrete: evaluate P_r for this 1 <= R <= Delta."),
    lp: bool = typer.Option(False, "--lp", help="With --discrete: also solve the integer-line LP (Theorem 13 check)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the PDF (or PMF) against Laplace (or geometric) as a PNG."),
) -> None:
    """Geng & Viswanath's staircase mechanism: optimal gamma* (or r*), its cost and the gain over Laplace.

    Example: optnoise staircase --epsilon 10 --cost sq
    """
    from .families import staircase as st
    _check_png(plot)
    eps = check_epsilon(epsilon, allow_zero=False, parameter="--epsilon")
    c = st.parse_cost(cost)
    result: dict[str, Any] = {"epsilon": eps, "sensitivity": sensitivity, "cost": c.name, "discrete": discrete}
    if discrete:
        if gamma is not None:
            raise InvalidParameterError("--gamma", gamma, "--r R with --discrete (gamma is for the continuous staircase)")
        d = st.check_sensitivity(sensitivity, integer=True)
        choice = st.r_star(eps, d, c)
        chosen = choice.r if r is None else st.check_r(r, d)
        value = choice.costs[chosen - 1]
        base = st.geometric_cost(eps, d, c)
        result.update({"sensitivity": d, "r": chosen, "r_star": choice.r, "optimal": chosen == choice.r,
                       "expected_cost": value, "geometric_cost": base, "gain": base / value,
                       "costs_by_r": list(choice.costs)})
        if lp:
            from .design.integer import design_integer
            des = design_integer(eps, d, c)
            result["lp_expected_cost"] = des.expected_cost
            result["lp_relative_gap"] = abs(des.expected_cost - choice.expected_cost) / choice.expected_cost
        if plot is not None:
            from .families.geometric import alpha_for_epsilon, geometric_pmf
            from .plots import plot_density
            k = np.arange(-4 * d, 4 * d + 1)
            geo = geometric_pmf(alpha_for_epsilon(eps, d))
            plot_density(k, {f"staircase P_{chosen}": st.discrete_staircase_pmf(eps, d, chosen).mass(k),
                             "geometric": geo.mass(k)}, plot, xlabel="noise i", ylabel="mass",
                         title=f"Discrete staircase P_{chosen}, eps={eps:g}, Delta={d}, cost {c.name}")
    else:
        if r is not None or lp:
            raise InvalidParameterError("--r/--lp", r if r is not None else "--lp", "only with --discrete")
        d = st.check_sensitivity(sensitivity)
        g_star = st.gamma_star(eps, c, d)
        g = g_star if gamma is None else gamma
        mech = st.Staircase(eps, d, g)
        value = mech.expected_cost(c)
        base = st.laplace_cost(eps, c, d)
        heur = st.gamma_heuristic(eps)
        result.update({"sensitivity": d, "gamma": g, "gamma_star": g_star, "optimal": gamma is None,
                       "expected_cost": value, "laplace_cost": base, "gain": base / value,
                       "gamma_heuristic": heur, "heuristic_cost": st.Staircase(eps, d, heur).expected_cost(c),
                       "gamma_source": {"abs": "closed form (43)", "sq": "closed form (50)"}.get(
                           c.name, "numeric minimisation over gamma (Theorem 4)")})
        if c.name == "abs":
            result["closed_form_cost"] = st.cost_star_abs(eps, d)
        elif c.name == "sq":
            result["closed_form_cost"] = st.cost_star_sq(eps, d)
        if plot is not None:
            from .plots import plot_density
            x = np.linspace(-4 * d, 4 * d, 2001)
            lam = d / eps
            plot_density(x, {f"staircase gamma={g:.4g}": mech.pdf(x),
                             "Laplace": np.exp(-np.abs(x) / lam) / (2 * lam)}, plot,
                         title=f"Staircase pdf, eps={eps:g}, Delta={d:g}, cost {c.name}")
    if plot is not None:
        result["plot"] = str(plot)
    if as_json:
        typer.echo(dumps(result))
        return
    table = Table(title="optnoise staircase (Geng & Viswanath)")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    keys = ["epsilon", "sensitivity", "cost", "r", "r_star", "gamma", "gamma_star", "gamma_source", "expected_cost",
            "closed_form_cost", "laplace_cost", "geometric_cost", "gain", "gamma_heuristic", "heuristic_cost",
            "lp_expected_cost", "lp_relative_gap"]
    for k in keys:
        if k in result:
            table.add_row(k, _fmt(result[k]) if not isinstance(result[k], str) else result[k])
    out.print(table)
    if "plot" in result:
        out.print(f"[dim]plot written to {result['plot']}[/]")


@app.command()
@cli_errors
def wasserstein(
    input_spec: str = typer.Option(..., "--input", help="gaussian:MU,SIGMA | poisson:LAMBDA | pmf-file:PATH (the input X on Z)."),
    sensitivity: int = typer.Option(..., "--sensitivity", help="Adjacency m (integer >= 1): neighbours differ by at most m."),
    epsilon: float = typer.Option(..., "--epsilon", help="Target epsilon (> 0): pure eps-DP."),
    objective: str = typer.Option("w1", "--objective", help="w1 (exact W1(X, X+noise)) or expected-abs (the paper's P2 = E|noise|)."),
    window: Optional[int] = typer.Option(None, "--window", help="Noise window half-width L (default max(span of X, 4m))."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Solver time limit in seconds."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the noise PMF as a PNG."),
) -> None:
    """Qin et al.: eps-DP noise on Z minimising the Wasserstein distance W1(X, X + noise), solved exactly by LP.

    Example: optnoise wasserstein --input gaussian:0,10 --sensitivity 15 --epsilon 2
    """
    from .design.wasserstein import design_wasserstein, input_distribution
    _check_png(plot)
    eps = check_epsilon(epsilon, allow_zero=False, parameter="--epsilon")
    if sensitivity < 1:
        raise InvalidParameterError("--sensitivity", sensitivity, "an integer >= 1")
    x, dropped, desc = input_distribution(input_spec)
    with err.status("solving the Wasserstein LP", spinner="dots"):
        des = design_wasserstein(x, eps, sensitivity, objective=objective, half_width=window,
                                 input_description=desc, input_dropped_mass=dropped, time_limit=time_limit)
    result = des.to_json()
    if plot is not None:
        from .plots import plot_pmf
        plot_pmf(des.pmf.probs, plot, offset=des.pmf.offset,
                 title=f"{objective}-optimal noise, input {desc}, m={sensitivity}, eps={eps:g}")
        result["plot"] = str(plot)
    if as_json:
        typer.echo(dumps(result))
        return
    table = Table(title="optnoise wasserstein (Qin et al.)")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for k in ("input", "objective", "epsilon", "sensitivity", "w1", "expected_abs_noise", "epsilon_pure",
              "tail_mass", "solve_seconds"):
        table.add_row(k, _fmt(result[k]) if not isinstance(result[k], str) else result[k])
    table.add_row("window", f"{des.pmf.lo}..{des.pmf.hi} + geometric tails (period {sensitivity})")
    out.print(table)


# ------------------------------------------------------------------ reproduce ---
@app.command()
@cli_errors
def reproduce(
    item_id: Optional[str] = typer.Argument(None, metavar="ID", help="Item to regenerate (see --list)."),
    list_items: bool = typer.Option(False, "--list", help="List the reproducible tables and figures."),
    run_all: bool = typer.Option(False, "--all", help="Regenerate every item."),
    out_dir: Path = typer.Option(Path("reproduction"), "--out", help="Directory for the CSV and PNG files."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Regenerate a paper's table or figure (CSV + PNG); verdicts are in docs/reproduction.md.

    Example: optnoise reproduce kadam-table1 --out reproduction
    """
    from rich.progress import Progress

    from . import reproduce as rep
    chosen = sum([list_items, run_all, item_id is not None])
    if chosen != 1:
        raise InvalidParameterError("ID/--list/--all", "none" if chosen == 0 else "several", "exactly one of them")
    if list_items:
        items = [it.to_json() for it in rep.items()]
        if as_json:
            typer.echo(dumps({"items": items}))
            return
        table = Table(title="optnoise reproduce --list")
        for col in ("id", "paper", "what"):
            table.add_column(col)
        for it in items:
            table.add_row(it["id"], it["paper"], it["what"])
        out.print(table)
        return
    ids = [it.id for it in rep.items()] if run_all else [item_id]
    if item_id is not None and item_id not in rep.REGISTRY:
        raise InvalidParameterError("ID", item_id, "one of " + ", ".join(rep.REGISTRY))
    results = []
    with Progress(console=err, transient=True) as progress:
        task = progress.add_task("reproducing", total=len(ids))
        for i in ids:
            progress.update(task, description=f"reproducing {i}")
            results.append(rep.run(i, out_dir))
            progress.advance(task)
    if as_json:
        typer.echo(dumps({"out": str(out_dir), "results": results}))
        return
    for r in results:
        files = ", ".join(str(out_dir / f) for f in r.get("files", []))
        out.print(f"[bold]{r['id']}[/] ({r['paper']}): {r['what']}\n  wrote {files}")


# ------------------------------------------------------------------ rr / compare ---
@app.command()
@cli_errors
def rr(
    categories: int = typer.Option(..., "--categories", help="Number of categories K (>= 2)."),
    epsilon: float = typer.Option(..., "--epsilon", help="Target epsilon (>= 0)."),
    delta: float = typer.Option(0.0, "--delta", help="Target delta (0 <= delta < 1)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Optimal (eps, delta) K-ary randomized response (Holohan et al. Theorems 8-10), verified exactly."""
    from .families.rr import rr_error_bounds, rr_optimal_p, rr_pmf
    check_epsilon(epsilon, parameter="--epsilon")
    check_delta(delta, "--delta")
    p = rr_optimal_p(categories, epsilon, delta)
    pmf = rr_pmf(categories, p)
    g = guarantee(privacy_profile(pmf, Neighbourhood((1,))), epsilon=epsilon)
    lower, upper = rr_error_bounds(categories, epsilon, delta)
    payload = {"categories": categories, "epsilon": epsilon, "delta": delta, "p_keep": 1.0 - (categories - 1) * p,
               "p_other": p, "error_rate": (categories - 1) * p,
               "error_bounds": {"lower": lower, "upper": upper},
               "certificate": g.to_json()}
    if as_json:
        typer.echo(dumps(payload))
        return
    out.print(f"{categories}-ary randomized response at ({epsilon:g}, {delta:g})-DP: keep with "
              f"p_keep = {payload['p_keep']:.6g}, move to each other category with p_other = {p:.6g}; "
              f"error rate {payload['error_rate']:.6g} (Theorem 9 lower bound {lower:.6g})")
    out.print(f"verified: delta_DP at eps {epsilon:g} = {_fmt(g.delta_dp)}, pure eps {_fmt(g.epsilon_pure)}")


@app.command()
@cli_errors
def compare(
    n: int = typer.Option(..., "--n", help="Domain {0..N}."),
    epsilons: str = typer.Option(..., "--epsilons", help="Comma-separated epsilons, e.g. 0.5,1,2."),
    delta: float = typer.Option(0.0, "--delta", help="Target delta (0 <= delta < 1)."),
    cost: str = typer.Option("er", "--cost", help="er | mse | circular-mse | abs | circular-abs (applied to (y - q) mod (n+1))."),
    mechanisms: str = typer.Option(",".join(("optimal", "geometric", "discrete-gaussian", "exponential", "rr")),
                                   "--mechanisms", help="Comma-separated: optimal, geometric, discrete-gaussian, exponential, rr."),
    boundary: str = typer.Option("modulo", "--boundary", help="How line noise meets {0..n}: modulo, clamp, or truncate (not post-processing)."),
    target_cost: Optional[float] = typer.Option(None, "--target-cost", help="Dual view: fix the expected cost, report delta at each eps."),
    distances: Optional[str] = typer.Option(None, "--distances", help="Query distances (default SD 1)."),
    sd: Optional[int] = typer.Option(None, "--sd", help="Single distance MU."),
    bd: Optional[int] = typer.Option(None, "--bd", help="Bounded difference 1..MUBAR."),
    directed: bool = typer.Option(False, "--directed", help="Exactly the listed distances."),
    guarantee_: str = typer.Option("dp", "--guarantee", help="dp or pdp."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Cost (or delta) vs eps as a PNG."),
) -> None:
    """Error vs eps (or delta vs eps at a fixed error) of the optimal design and the usual mechanisms."""
    from . import compare as cmp
    try:
        eps_list = [float(e) for e in epsilons.split(",") if e.strip()]
    except ValueError as exc:
        raise InvalidParameterError("--epsilons", epsilons, "comma-separated numbers > 0") from exc
    mech_list = [m.strip() for m in mechanisms.split(",") if m.strip()]
    _check_png(plot)
    nb = neighbourhood_from_options(distances, sd, bd, directed)
    total = len(eps_list) * len(mech_list)
    from rich.progress import Progress
    with (Progress(console=err, transient=True) if not as_json else nullcontext()) as prog:
        task = prog.add_task("calibrating", total=total) if prog else None
        tick = (lambda: prog.advance(task)) if prog else None
        if target_cost is None:
            rows = cmp.compare(n, eps_list, delta=delta, cost=cost, mechanisms=mech_list, boundary=boundary,
                               neighbourhood=nb, notion=guarantee_, progress=tick)
        else:
            rows = cmp.compare_at_cost(n, eps_list, target_cost, cost=cost, mechanisms=mech_list, boundary=boundary,
                                       neighbourhood=nb, notion=guarantee_, progress=tick)
    payload = {"n": n, "cost": cost, "boundary": boundary, "guarantee": guarantee_, "neighbourhood": nb.to_json(),
               "target_cost": target_cost, "rows": [r.to_json() for r in rows]}
    if plot is not None:
        from .plots import plot_compare
        plot_compare(rows, plot, dual=target_cost is not None,
                     title=(f"n={n}, {guarantee_.upper()}, {nb.describe()}, "
                            + (f"{cost} = {target_cost:g}" if target_cost is not None else f"delta={delta:g}, {cost}")
                            + f", {boundary}"))
        payload["plot"] = str(plot)
    if as_json:
        typer.echo(dumps(payload))
        return
    table = Table(title=payload["plot"] if plot else f"compare on {{0..{n}}}, {nb.describe()}, {guarantee_.upper()}")
    for col in ("mechanism", "epsilon", "delta", f"{cost} (worst q)", f"{cost} (avg q)", "error rate", "parameter"):
        table.add_column(col, justify="left" if col == "mechanism" else "right")
    for r in rows:
        table.add_row(r.mechanism, f"{r.epsilon:g}", _fmt(r.delta), f"{r.expected_cost:.5g}",
                      f"{r.expected_cost_average:.5g}", f"{r.error_rate:.4f}",
                      "" if r.parameter is None else f"{r.parameter_name}={r.parameter:.6g}")
    out.print(table)


# ------------------------------------------------------------------ sample / release ---
def _load_for_release(mechanism: Path, distances, sd, bd, directed, epsilon, delta, guarantee_):
    from .release import load_mechanism
    nb = None if (distances is None and sd is None and bd is None and not directed) else \
        neighbourhood_from_options(distances, sd, bd, directed)
    if epsilon is not None:
        check_epsilon(epsilon, allow_zero=False, parameter="--epsilon")
    if delta is not None:
        check_delta(delta, "--delta")
    if guarantee_ is not None and guarantee_ not in ("dp", "pdp"):
        raise InvalidParameterError("--guarantee", guarantee_, "dp or pdp")
    return load_mechanism(mechanism, neighbourhood=nb, epsilon=epsilon, delta=delta, notion=guarantee_)


def _seed_warning(seed: Optional[int], as_json: bool) -> None:
    if seed is not None and not as_json:
        err.print("[bold yellow]warning:[/] --seed given: the noise is reproducible and NOT private "
                  "(output marked \"private\": false)")


@app.command()
@cli_errors
def sample(
    mechanism: Path = typer.Option(..., "--mechanism", help="A design JSON (its guarantee is the target) or a PMF file."),
    count: int = typer.Option(..., "--count", help="Number of draws (>= 0)."),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the draws to PATH.npy or PATH.csv (atomically)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded generator: reproducible and NOT private."),
    distances: Optional[str] = typer.Option(None, "--distances", help="Neighbourhood for a plain PMF file (default: the design's, else SD 1)."),
    sd: Optional[int] = typer.Option(None, "--sd", help="Single distance MU."),
    bd: Optional[int] = typer.Option(None, "--bd", help="Bounded difference 1..MUBAR."),
    directed: bool = typer.Option(False, "--directed", help="Exactly the listed distances."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Target epsilon for a plain PMF file (a design JSON carries its own)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="Target delta for a plain PMF file."),
    guarantee_: Optional[str] = typer.Option(None, "--guarantee", help="dp or pdp: the notion of the target."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Draw noise from a mechanism, exactly as certified (quantized PMF, OS CSPRNG by default)."""
    from .sampling import random_source, sample_quantized
    from .release import certify_mechanism
    if isinstance(count, bool) or count < 0:
        raise InvalidParameterError("--count", count, "an integer >= 0")
    if output is not None and output.suffix.lower() not in (".npy", ".csv"):
        raise InvalidParameterError("--output", str(output), "a path ending in .npy or .csv")
    mech = _load_for_release(mechanism, distances, sd, bd, directed, epsilon, delta, guarantee_)
    q = certify_mechanism(mech)
    src = random_source(seed)
    _seed_warning(seed, as_json)
    draws = sample_quantized(q, count, src)
    values = np.stack(np.unravel_index(draws, q.shape), axis=-1) if len(q.shape) > 1 else draws
    if output is not None:
        from .io import atomic_path
        with atomic_path(output) as tmp:
            if output.suffix.lower() == ".npy":
                with open(tmp, "wb") as fh:
                    np.save(fh, values)
            else:
                np.savetxt(tmp, values.reshape(len(draws), -1), fmt="%d", delimiter=",",
                           header="noise" if values.ndim == 1 else ",".join(f"noise_{i}" for i in range(len(q.shape))),
                           comments="")
    payload = {"count": int(count), "certificate": q.certificate.to_json(), "private": bool(src.private),
               "randomness": src.description, "bits": q.bits, "mixing": str(q.mixing), "target": q.target,
               "output": str(output) if output is not None else None}
    if output is None:
        payload["samples"] = values.tolist()
    if as_json:
        typer.echo(dumps(payload))
        return
    c = q.certificate
    out.print(f"{count} draws from {mechanism} (quantized to 2^{q.bits}, mixing {q.mixing}); "
              f"certified pure eps {_fmt(c.epsilon_pure)}"
              + (f", delta_DP {_fmt(c.delta_dp)}, delta_PDP {_fmt(c.delta_pdp)} at eps {c.epsilon:g}" if c.epsilon else ""))
    out.print(f"randomness: {src.description}; private: {src.private}")
    if output is not None:
        out.print(f"wrote {output}")
    else:
        out.print(" ".join(str(v) for v in values.tolist()[:200]) + (" ..." if count > 200 else ""))


@app.command()
@cli_errors
def release(
    input_path: Path = typer.Option(..., "--input", help="CSV or Parquet file."),
    column: str = typer.Option(..., "--column", help="The column to privatize."),
    mechanism: Path = typer.Option(..., "--mechanism", help="A design JSON (its guarantee is the target) or a PMF file."),
    output: Path = typer.Option(..., "--output", help="Output .csv or .parquet (only the privatized column); PATH.manifest.json beside it."),
    categories: Optional[str] = typer.Option(None, "--categories", help="Categorical column: the n+1 categories in domain order, comma-separated."),
    lower: int = typer.Option(0, "--lower", help="Numeric column: values lower..lower+n map to 0..n (default 0)."),
    engine: str = typer.Option("local", "--engine", help="local, or spark (pyspark; the output is a dataset directory)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded generator: reproducible and NOT private."),
    distances: Optional[str] = typer.Option(None, "--distances", help="Neighbourhood for a plain PMF file."),
    sd: Optional[int] = typer.Option(None, "--sd", help="Single distance MU."),
    bd: Optional[int] = typer.Option(None, "--bd", help="Bounded difference 1..MUBAR."),
    directed: bool = typer.Option(False, "--directed", help="Exactly the listed distances."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Target epsilon for a plain PMF file."),
    delta: Optional[float] = typer.Option(None, "--delta", help="Target delta for a plain PMF file."),
    guarantee_: Optional[str] = typer.Option(None, "--guarantee", help="dp or pdp: the notion of the target."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as one JSON object on stdout."),
) -> None:
    """Privatize a column of a CSV/Parquet file: noise mod n+1 from the certified mechanism, atomic output + manifest."""
    from .release import release as do_release
    mech = _load_for_release(mechanism, distances, sd, bd, directed, epsilon, delta, guarantee_)
    cats = [c.strip() for c in categories.split(",")] if categories is not None else None
    _seed_warning(seed, as_json)
    with err.status("releasing...", spinner="dots") if not as_json else nullcontext():
        manifest = do_release(input_path, column, mech, output, categories=cats, lower=lower, engine=engine, seed=seed)
    if as_json:
        typer.echo(dumps(manifest))
        return
    c = manifest["certificate"]
    out.print(f"released {manifest['input']['rows']} values of '{column}' into {output} "
              f"(+ {output}.manifest.json); certified pure eps {_fmt(c['epsilon_pure'])}"
              + (f", delta_DP {_fmt(c['delta_dp'])} at eps {c['epsilon']:g}" if c.get("epsilon") else "")
              + f"; randomness: {manifest['randomness']['source']}")


# ------------------------------------------------------------------ demo ---
@app.command()
@cli_errors
def demo(out_dir: Path = typer.Option(Path("demo-output"), "--out", help="Directory for the demo's files."),
         as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object.")) -> None:
    """Run the main job end to end on built-in example data and write the results to --out."""
    from .demo import run_demo
    summary = run_demo(out_dir, console=None if as_json else out)
    if as_json:
        typer.echo(dumps(summary))


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
