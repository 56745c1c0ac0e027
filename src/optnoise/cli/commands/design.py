"""``optnoise design``: optimal noise for answers in {0..n}, added mod n+1 (Kadam et al. 2024)."""

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import neighbourhood
from ..options import LIMITS, NEIGHBOURHOOD, Guarantee, Json, NeighbourhoodArgs, Output, Plot, TimeLimit
from ..render import err, fmt, notes, out
from .shared import check_png, deliver, parse_list, plots


@command(NEIGHBOURHOOD, LIMITS, flags={"path": "--cost-file"})
def design(
    nb: NeighbourhoodArgs,
    max_memory: Optional[int],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    n: Annotated[Optional[str], typer.Option(
        "--n", help="Domain {0..N} (noise added mod N+1); N1,N2 for a vector query. Required unless "
                    "--releases with --space integer.")] = None,
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    guarantee_: Guarantee = "dp",
    cost: Annotated[Optional[str], typer.Option(
        "--cost", help="er (default) | mse (noise second moment, the paper's MSE) | circular-mse | abs | "
                       "circular-abs | pow:K.")] = None,
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
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Optimal noise PMF for answers in {0..n}, added mod n+1 (Kadam et al. 2024), with its analysis.

    Example: optnoise design --n 8 --epsilon 1.5 --delta 0.1238 --bd 3 --directed --guarantee pdp --formulation paper

    Example (365 releases): optnoise design --n 23 --sd 1 --epsilon 10 --delta 1e-6 --cost circular-mse --releases 365
    """
    from ...design import design_finite
    from ...io import read_pmf_file
    if releases is not None:
        given = {"--guarantee": guarantee_ != "dp", "--minimize": minimize != "cost", "--max-cost": max_cost is not None,
                 "--formulation": formulation != "standard", "--time-limit": time_limit is not None}
        for flag, bad in given.items():
            if bad:
                raise InvalidParameterError(flag, "given", "not with --releases (approximate DP, minimum cost)")
        _releases(nb, n, epsilon, delta, cost, cost_file, releases, space, output, as_json, plot)
        return
    if space != "cyclic":
        raise InvalidParameterError("--space", space, "cyclic (integer only with --releases)")
    if n is None:
        raise InvalidParameterError("--n", None, "an integer n >= 1, or n1,n2 for a vector query")
    dims = parse_list(n, "--n", "an integer n >= 1, or n1,n2 for a vector query", int)
    if any(v < 1 for v in dims):
        raise InvalidParameterError("--n", n, "an integer n >= 1, or n1,n2 for a vector query")
    cost_value: Any = "er" if cost is None else cost
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
    deliver(result.to_json(), as_json=as_json, render=_print, mechanism=result.mechanism, output=output, plot=plot,
            draw=lambda path: plots().plot_pmf(result.pmf.probs, path, title=title))


def _pmf_table(pmf: np.ndarray, form: str) -> None:
    from rich.table import Table
    table = Table()
    table.add_column("eta", justify="right")
    table.add_column("f(eta)", justify="right")
    for i, v in enumerate(pmf):
        table.add_row(str(i), form.format(v))
    out.print(table)


def _releases(nb: NeighbourhoodArgs, n: Optional[str], epsilon: float, delta: float, cost: str,
              cost_file: Optional[Path], k: int, space: str, output: Optional[Path], as_json: bool,
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
            plot=plot, draw=lambda path: plots().plot_releases_design(result, path, title=title))


def _print_releases(p: dict[str, Any]) -> None:
    from rich.table import Table
    c = p["composed"]
    out.print(f"[bold]noise for {p['k']} releases[/] ({p['space']}): total eps={fmt(p['epsilon'])} "
              f"delta={fmt(p['delta'])}, cost={p['cost']}")
    pmf = np.asarray(p["pmf"])
    if p["space"] == "cyclic" and pmf.size <= 64:
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
    out.print(f"[bold]optimal noise on {{0..{p['n']}}}[/]: {g['notion'].upper()} eps={fmt(g['epsilon'])} "
              f"delta={fmt(g['delta'])}, cost={p['cost']}")
    if pmf.ndim == 1:
        _pmf_table(pmf, "{:.6f}")
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
            ("analysis: epsilon_pure", c["epsilon_pure"]),
            ("analysis: delta_dp", c["delta_dp"]), ("analysis: delta_pdp", c["delta_pdp"])]
    if p["minimize"] == "delta":
        rows.insert(0, ("minimum delta", p["delta"]))
    for k, v in rows:
        summary.add_row(k, fmt(v))
    out.print(summary)
    out.print(f"[dim]method {p['method']}, optimal={p['optimal']}, {p['solve_seconds']:.3f} s, "
              f"neighbourhood {g['neighbourhood']}[/]")
    notes(list(p["notes"]) + ["the analysis is the float analysis of this PMF; 'optnoise sample' and 'release' "
                              "quantize it and certify the sampled weights exactly"])
