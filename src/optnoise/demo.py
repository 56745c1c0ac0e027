"""``optnoise demo``: the main job on built-in example data.

The example: the hour of peak electricity use (0..23) of 10,000 smart-meter
households, a query whose answer lives on a cyclic domain (Kadam et al. 2024,
introduction, example (c)). The demo designs the optimal noise for it, compares it
with the usual mechanisms calibrated to the same guarantee, and writes:

* ``design.json`` — the optimal design with its certificate (a PMF file for ``verify``);
* ``comparison.csv`` — error and exact privacy of every mechanism;
* ``pmfs.png`` — the noise PMFs side by side;
* ``summary.json`` — everything above in one object.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from .analysis import guarantee, privacy_profile
from .costs import cost_vector, describe_cost, wrapped_squared_error
from .datasets import HOURS, meter_peak_hours
from .design import design_finite
from .families import calibrate
from .families.baselines import discrete_gaussian_pmf, wrap
from .families.geometric import geometric_pmf
from .families.rr import rr_optimal_p, rr_pmf
from .io import atomic_path, dumps, write_text_atomic
from .neighbourhood import Neighbourhood
from .pmf import CyclicPMF
from .target import Target


def run_demo(out_dir: Path, console: Console | None = None, epsilon: float = 1.0) -> dict[str, Any]:
    """Design, compare, and write the demo's files into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    hours = meter_peak_hours()
    nb = Neighbourhood.sd(1)  # one household changes the peak hour by one (either direction)
    design = design_finite(HOURS - 1, epsilon=epsilon, neighbourhood=nb, cost="circular-mse")
    write_text_atomic(out_dir / "design.json", dumps(design.to_json()))
    # the smallest-noise wrapped discrete Gaussian with the same pure epsilon
    sigma = calibrate("discrete-gaussian", HOURS - 1, Target(epsilon), nb)
    mechanisms = {
        "optimal (circular MSE)": design.pmf,
        f"geometric, alpha=e^-{epsilon:g}": wrap(geometric_pmf(math.exp(-epsilon)), HOURS),
        f"discrete Gaussian, sigma={sigma:.3f}": wrap(discrete_gaussian_pmf(sigma), HOURS),
        "randomized response": rr_pmf(HOURS, rr_optimal_p(HOURS, epsilon)),
    }
    circ = cost_vector("circular-mse", (HOURS,))
    rows = []
    for name, pmf in mechanisms.items():
        g = guarantee(privacy_profile(pmf, nb), epsilon)
        worst, avg = wrapped_squared_error(pmf.probs)
        rows.append({"mechanism": name, "epsilon_pure": g.epsilon_pure, "delta_dp": g.delta_dp,
                     "error_rate": 1.0 - float(pmf.probs[0]), "circular_mse": float(np.dot(circ, pmf.probs)),
                     "squared_error_average": avg, "squared_error_worst": worst})
    header = list(rows[0])
    csv = "\n".join([",".join(header)] + [",".join(str(r[h]) for h in header) for r in rows]) + "\n"
    write_text_atomic(out_dir / "comparison.csv", csv)
    _plot(mechanisms, out_dir / "pmfs.png", epsilon)
    summary = {"households": int(hours.size), "domain": f"0..{HOURS - 1} (cyclic)", "epsilon": epsilon,
               "neighbourhood": nb.to_json(), "true_histogram": np.bincount(hours, minlength=HOURS).tolist(),
               "design": {k: v for k, v in design.to_json().items() if k != "pmf"}, "comparison": rows,
               "files": ["design.json", "comparison.csv", "pmfs.png", "summary.json"]}
    summary["release"] = _release(hours, out_dir)
    summary["files"] += ["meter_peak_hours.csv", "released.csv", "released.csv.manifest.json"]
    write_text_atomic(out_dir / "summary.json", dumps(summary))
    if console is not None:
        table = Table(title=f"Peak hour of {hours.size} households, eps = {epsilon:g}, neighbours one hour apart")
        for col in ("mechanism", "pure eps", "error rate", "circular MSE", "sq. error (avg q)"):
            table.add_column(col, justify="right" if col != "mechanism" else "left")
        for r in rows:
            table.add_row(r["mechanism"], f"{r['epsilon_pure']:.4f}", f"{r['error_rate']:.4f}",
                          f"{r['circular_mse']:.4f}", f"{r['squared_error_average']:.3f}")
        console.print(table)
        console.print(f"ranked by {describe_cost('circular-mse')} (the design minimises it)")
        console.print(f"optimal design: {design.method}, optimal={design.optimal}, pure eps "
                      f"{design.analysis.epsilon_pure:.6f} <= {epsilon:g}")
        rel = summary["release"]
        console.print(f"released {rel['rows']} peak hours with the optimal noise ({rel['randomness']['source']}): "
                      f"{rel['changed_fraction']:.1%} changed, mean circular squared error "
                      f"{rel['mean_circular_squared_error']:.3f}; manifest in released.csv.manifest.json")
        console.print(f"wrote {', '.join(str(out_dir / f) for f in summary['files'])}")
    return summary


def _release(hours: np.ndarray, out_dir: Path) -> dict[str, Any]:
    """Release the households' peak hours with the design (OS CSPRNG, exact sampler)."""
    from .mechanism import load_mechanism
    from .table import release
    data = out_dir / "meter_peak_hours.csv"
    with atomic_path(data) as tmp:
        pd.DataFrame({"household": np.arange(hours.size), "peak_hour": hours}).to_csv(tmp, index=False)
    design_file = out_dir / "design.json"
    manifest = release(data, "peak_hour", load_mechanism(design_file), out_dir / "released.csv",
                       mechanism_file=design_file)
    released = pd.read_csv(out_dir / "released.csv")["peak_hour"].to_numpy()
    wrapped = np.minimum((released - hours) % HOURS, (hours - released) % HOURS)
    return {"rows": manifest["input"]["rows"], "certificate": manifest["certificate"],
            "randomness": manifest["randomness"], "changed_fraction": float(np.mean(released != hours)),
            "mean_circular_squared_error": float(np.mean(wrapped ** 2)),
            "true_histogram_l1_error": int(np.abs(np.bincount(released, minlength=HOURS)
                                                  - np.bincount(hours, minlength=HOURS)).sum())}


def _plot(mechanisms: dict[str, CyclicPMF], path: Path, epsilon: float) -> None:
    from .plots import plt, save_figure
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(HOURS)
    # show noise as signed offsets -11..12 around 0 for readability
    order = np.roll(x, HOURS // 2 - 1)
    offsets = np.where(order > HOURS // 2, order - HOURS, order)
    width = 0.8 / len(mechanisms)
    for i, (name, pmf) in enumerate(mechanisms.items()):
        ax.bar(offsets + (i - len(mechanisms) / 2) * width + width / 2, pmf.probs[order], width=width, label=name)
    ax.set_xlabel("noise (hours, mod 24)")
    ax.set_ylabel("probability")
    ax.set_title(f"Noise for the peak hour, eps = {epsilon:g}, pure DP, neighbours one hour apart")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    save_figure(fig, path)
