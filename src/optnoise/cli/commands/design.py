"""``optnoise design``: optimal noise for answers in {0..n}, added mod n+1 (Kadam et al. 2024)."""

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

from ...errors import InvalidParameterError
from ..app import command
from ..inputs import neighbourhood
from ..options import NEIGHBOURHOOD, Guarantee, Json, NeighbourhoodArgs, Output, Plot, TimeLimit
from ..render import err, fmt, notes, out
from .shared import check_png, deliver, parse_list, plots


@command(NEIGHBOURHOOD, flags={"path": "--cost-file"})
def design(
    nb: NeighbourhoodArgs,
    n: Annotated[str, typer.Option("--n", help="Domain {0..N} (noise added mod N+1); N1,N2 for a vector query.")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta (0 <= delta < 1).")] = 0.0,
    guarantee_: Guarantee = "dp",
    cost: Annotated[str, typer.Option(
        "--cost", help="er | mse (noise second moment, the paper's MSE) | circular-mse | abs | circular-abs | "
                       "pow:K.")] = "er",
    cost_file: Annotated[Optional[Path], typer.Option(
        "--cost-file", help="User cost, one value per noise value (same forms as --pmf-file).")] = None,
    minimize: Annotated[str, typer.Option("--minimize", help="cost, or delta (Kadam (15); needs --max-cost).")] = "cost",
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", help="Cost bound for --minimize delta.")] = None,
    formulation: Annotated[str, typer.Option(
        "--formulation", help="standard, or paper: Kadam (13) as printed (with --guarantee pdp).")] = "standard",
    time_limit: TimeLimit = None,
    output: Output = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Optimal noise PMF for answers in {0..n}, added mod n+1 (Kadam et al. 2024), with its analysis.

    Example: optnoise design --n 8 --epsilon 1.5 --delta 0.1238 --bd 3 --directed --guarantee pdp --formulation paper
    """
    from ...design import design_finite
    from ...io import read_pmf_file
    dims = parse_list(n, "--n", "an integer n >= 1, or n1,n2 for a vector query", int)
    if any(v < 1 for v in dims):
        raise InvalidParameterError("--n", n, "an integer n >= 1, or n1,n2 for a vector query")
    cost_value: Any = cost
    if cost_file is not None:
        cost_value = read_pmf_file(cost_file, parameter="--cost-file")["pmf"]
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
                               notion=guarantee_, neighbourhood=neighbourhood(nb), cost=cost_value,
                               minimize=minimize, max_cost=max_cost, formulation=formulation, time_limit=time_limit)
    title = (f"Optimal noise, n={n}, eps={epsilon:g}, delta={result.delta:g}, {guarantee_.upper()}, "
             f"{result.neighbourhood.describe()}")
    deliver(result.to_json(), as_json=as_json, render=_print, mechanism=result.mechanism, output=output, plot=plot,
            draw=lambda path: plots().plot_pmf(result.pmf.probs, path, title=title))


#: Designs with more masses than this print a summary and the first and last few masses.
PRINT_ALL_MASSES_UP_TO = 64
#: Masses shown at each end of a large design.
PRINT_END_MASSES = 5


def _print(p: dict[str, Any]) -> None:
    from rich.table import Table
    pmf = np.asarray(p["pmf"])
    g = p["guarantee"]
    out.print(f"[bold]optimal noise on {{0..{p['n']}}}[/]: {g['notion'].upper()} eps={fmt(g['epsilon'])} "
              f"delta={fmt(g['delta'])}, cost={p['cost']}")
    where = (f"all masses in {p['output']}" if p.get("output")
             else "all masses: --output FILE (a mechanism file) or --json")
    if pmf.ndim == 1:
        table = Table()
        table.add_column("eta", justify="right")
        table.add_column("f(eta)", justify="right")
        large = pmf.size > PRINT_ALL_MASSES_UP_TO
        shown = (list(range(PRINT_END_MASSES)) + [-1] + list(range(pmf.size - PRINT_END_MASSES, pmf.size))
                 if large else range(pmf.size))
        for i in shown:
            table.add_row(*(("...", "...") if i < 0 else (str(i), f"{pmf[i]:.6f}")))
        out.print(table)
        if large:
            top = int(np.argmax(pmf))
            out.print(f"{pmf.size} masses; largest f({top}) = {fmt(float(pmf[top]))}, smallest "
                      f"{fmt(float(pmf.min()))}, {int(np.count_nonzero(pmf > 1e-12))} above 1e-12; {where}")
    else:
        out.print(f"joint PMF of shape {pmf.shape} ({where})")
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
