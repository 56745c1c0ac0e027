"""``optnoise demo``: the main job on built-in example data.

The example: 10,000 smart-meter households (synthetic), each one record with its hour of
peak electricity use (0..23, a cyclic domain: Kadam et al. 2024, introduction, example
(c)), its tariff (four categories) and its number of occupants (1..6). The demo

1. designs the optimal noise for the peak hour under the papers' model (neighbours one
   hour apart) and compares it with the usual mechanisms calibrated to the same
   guarantee;
2. shows what that design gives per record -- a household's peak hour may change to any
   other hour: pure epsilon 12, not 1 -- and designs the optimal noise for the record;
3. releases the table per record under one budget: peak hour (cyclic noise designed for
   the record), tariff (optimal randomized response), occupants (geometric noise,
   clamped), household id copied unchanged (not protected); and says what each household
   is guaranteed.

Files written into the output directory:

* ``design.json`` -- the design for neighbours one hour apart (a mechanism file);
* ``comparison.csv``, ``pmfs.png`` -- error and exact privacy of every mechanism; their PMFs;
* ``households.csv`` -- the example table; ``hour_per_record.json`` -- the per-record
  design; ``release.toml`` -- the release spec (``optnoise release --spec``);
* ``released.csv`` + ``released.csv.manifest.json`` -- the released table and its manifest;
* ``summary.json`` -- everything above in one object.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .analysis import guarantee, privacy_profile
from .costs import cost_vector, describe_cost, wrapped_squared_error
from .datasets import HOURS, meter_peak_hours
from .design import Design, Request, calibrate, design
from .families.baselines import discrete_gaussian_pmf, wrap
from .families.geometric import geometric_pmf
from .families.rr import rr_optimal_p, rr_pmf
from .errors import InvalidParameterError
from .io import atomic_path, check_outputs_in, dumps, write_text_atomic
from .neighbourhood import Neighbourhood
from .pmf import CyclicPMF
from .target import Target

#: The demo table's tariffs (categories) and occupants (integers).
TARIFFS = ("standard", "economy-7", "time-of-use", "ev")
OCCUPANTS = (1, 6)
#: The release: the epsilon per record of the tariff and occupants columns (the peak hour's
#: is the demo's epsilon), and the slack of the record's budget above their sum.
RELEASE_EPSILON = {"tariff": 0.5, "occupants": 0.5}


#: The files the demo writes into its directory.
FILES = ("design.json", "comparison.csv", "pmfs.png", "summary.json", "households.csv", "hour_per_record.json",
         "release.toml", "released.csv", "released.csv.manifest.json", "readings.csv", "statistics.toml",
         "statistics.json")

#: The statistics of the meter readings (step 4; docs/statistics.md): under one budget.
STATISTICS_TOML = """\
unit = { id = "household", max_rows = 24 }  # a household: its 24 hourly readings
budget = { epsilon = 3.0, delta = 1e-6 }
alpha = 0.05

[statistics.households_per_peak_hour]       # households per peak hour in each circuit
kind = "histogram"
key = "peak_hour"
keys = { lower = 0, upper = 23 }
by = "circuit"
groups = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
epsilon = 1.0

{peaks}
[statistics.kwh]                            # total kWh per circuit
kind = "sum"
column = "kwh"
clamp = { lower = 0, upper = 10 }
resolution = 1
by = "circuit"
groups = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
epsilon = 1.0
"""
#: Each circuit's hour of peak total use, by both methods (the papers' answer-noise, and
#: report-noisy-max): the same statistic twice.
PEAK_TOML = """\
[statistics.{name}]
kind = "peak"
key = "hour"
keys = {{ lower = 0, upper = 23 }}
of = "kwh"
clamp = {{ lower = 0, upper = 10 }}
by = "circuit"
groups = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
method = "{method}"
epsilon = 0.5
"""
STATISTICS_TOML = STATISTICS_TOML.replace("{peaks}", "\n".join(
    PEAK_TOML.format(name=n, method=m) for n, m in (("circuit_peak", "answer-noise"),
                                                   ("circuit_peak_noisy_max", "report-noisy-max"))))


def run_demo(out_dir: Path, console: Console | None = None, epsilon: float = 1.0, *,
             force: bool = False) -> dict[str, Any]:
    """Design, compare, and write the demo's files (:data:`FILES`) into ``out_dir``.

    The output rule (:func:`optnoise.io.check_outputs_in`), checked before anything is
    computed: ``out_dir`` is a directory (made if missing) and none of the demo's files in
    it is replaced unless ``force``; other files in it are left alone.
    """
    out_dir = check_outputs_in(out_dir, FILES, force=force)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError("out", str(out_dir), f"a directory this user can create ({exc.strerror})") from None
    hours = meter_peak_hours()
    nb = Neighbourhood.sd(1)  # one household changes the peak hour by one (either direction)
    hour = Request(space="cyclic", n=HOURS - 1, target=Target(epsilon), neighbourhood=nb, cost="circular-mse")
    optimum = design(hour)
    write_text_atomic(out_dir / "design.json", dumps(optimum.to_json()))
    # the smallest-noise wrapped discrete Gaussian with the same pure epsilon
    sigma = calibrate("discrete-gaussian", hour.replace(cost=None, family="discrete-gaussian")).parameter
    mechanisms = {
        "optimal (circular MSE)": optimum.mechanism.pmf,
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
               "design": {k: v for k, v in optimum.to_json().items() if k != "pmf"}, "comparison": rows,
               "files": list(FILES)}
    # a household's peak hour may become any other hour: every distance (the privacy unit is the record)
    per_record = design(hour.replace(neighbourhood=None, unit="record"))
    summary["per_record"] = _per_record(optimum, per_record)
    summary["release"] = _release(hours, out_dir, per_record)
    summary["statistics"] = _statistics(out_dir)
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
        console.print(f"optimal design: {optimum.report.method}, optimal={optimum.report.optimal}, pure eps "
                      f"{optimum.report.analysis.epsilon_pure:.6f} <= {epsilon:g} for neighbours one hour apart")
        pr = summary["per_record"]
        console.print(f"but a household's peak hour may change to any other hour: per record this design gives pure "
                      f"eps {pr['epsilon_pure']:.3g}, so the release uses the design for the record (every distance): "
                      f"circular MSE {pr['record_design_circular_mse']:.2f} instead of {pr['circular_mse']:.2f}")
        rel = summary["release"]
        console.print(f"released {rel['rows']} households (peak hour, tariff, occupants; household id kept, not "
                      f"protected) into released.csv ({rel['randomness']['source']}); peak hour changed in "
                      f"{rel['changed_fraction']:.1%} of records")
        console.print(Text.assemble(("guarantee:", "bold"), f" {rel['in_words']}"), markup=False)
        _print_statistics(console, summary["statistics"])
        console.print(f"wrote {', '.join(str(out_dir / f) for f in summary['files'])}", markup=False)
    return summary


def _statistics(out_dir: Path) -> dict[str, Any]:
    """Step 4: statistics of synthetic hourly meter readings (1,416 households in 12 circuits,
    like Kadam et al.'s Fig. 14 data) under one budget (:func:`optnoise.query.files.query_file`)."""
    from .datasets import meter_readings
    from .query.files import query_file
    frame = meter_readings()
    write_text_atomic(out_dir / "readings.csv", frame.to_csv(index=False))
    write_text_atomic(out_dir / "statistics.toml", STATISTICS_TOML)
    doc = query_file(out_dir / "readings.csv", out_dir / "statistics.toml", out_dir / "statistics.json", force=True)
    truth = frame.groupby(["circuit", "hour"])["kwh"].sum().unstack().idxmax(axis=1)
    return {"households": int(frame["household"].nunique()), "rows": int(len(frame)),
            "true_circuit_peak": {str(c): str(h) for c, h in truth.items()}, "document": doc}


def _print_statistics(console: Console, stats: dict[str, Any]) -> None:
    doc = stats["document"]
    s = doc["statistics"]
    table = Table(title=f"Statistics of {stats['rows']} hourly readings of {stats['households']} households "
                        f"in 12 circuits (statistics.json)")
    for col in ("circuit", "peak hour: true", "answer-noise", "report-noisy-max", "kWh released",
                f"{1 - doc['alpha']:g} interval", "households at peak 18-20"):
        table.add_column(col)
    for g in s["kwh"]["values"]:
        hist = s["households_per_peak_hour"]["values"][g]
        table.add_row(g, stats["true_circuit_peak"][g], s["circuit_peak"]["values"][g],
                      s["circuit_peak_noisy_max"]["values"][g], str(s["kwh"]["values"][g]),
                      str(s["kwh"]["intervals"][g]), str(sum(hist[h] for h in ("18", "19", "20"))))
    console.print(table)
    console.print(f"the peak hour under answer-noise is nearly uniform (one household can move it to any hour: "
                  f"E|circular error| {s['circuit_peak']['expected_abs_error']:.2f} h); report-noisy-max scores the "
                  "hours' totals instead", markup=False)
    console.print(Text.assemble(("a household is guaranteed:", "bold"), f" {doc['statement']}"), markup=False)


def households(hours: np.ndarray, seed: int = 2024) -> pd.DataFrame:
    """The demo table: one record per household (synthetic; the seed makes it reproducible)."""
    rng = np.random.default_rng(seed + 1)
    n = hours.size
    tariff = np.array(TARIFFS)[rng.choice(len(TARIFFS), n, p=[0.55, 0.2, 0.15, 0.1])]
    occupants = np.clip(rng.poisson(1.6, n) + 1, *OCCUPANTS)
    return pd.DataFrame({"household": np.arange(1, n + 1), "peak_hour": hours, "tariff": tariff,
                         "occupants": occupants})


def _per_record(optimum: Design, per_record: Design) -> dict[str, Any]:
    """What the one-hour design gives per record, beside the design made for the record."""
    record = per_record.mechanism.neighbourhood
    return {"epsilon_pure": privacy_profile(optimum.mechanism.pmf, record).epsilon_pure,
            "neighbourhood": record.to_json(), "circular_mse": optimum.report.expected_cost,
            "record_design_circular_mse": per_record.report.expected_cost,
            "record_design_epsilon_pure": per_record.report.analysis.epsilon_pure}


def release_spec(budget: float, hour_file: str = "hour_per_record.json") -> str:
    """The demo's release spec (TOML): per record, one budget."""
    e = RELEASE_EPSILON
    cats = ", ".join(f'"{t}"' for t in TARIFFS)
    return (f'# optnoise release --input households.csv --spec release.toml --output released.csv\n'
            f'unit = "record"\nkeep = ["household"]\nbudget = {{ epsilon = {budget:g} }}\n\n'
            f'[columns.peak_hour]\ndomain = {{ lower = 0, upper = {HOURS - 1}, cyclic = true }}\n'
            f'mechanism = "{hour_file}"\n\n'
            f'[columns.tariff]\ndomain = {{ categories = [{cats}] }}\nepsilon = {e["tariff"]}\n\n'
            f'[columns.occupants]\ndomain = {{ lower = {OCCUPANTS[0]}, upper = {OCCUPANTS[1]} }}\n'
            f'family = "geometric"\nepsilon = {e["occupants"]}\nclamp = true\n')


def _release(hours: np.ndarray, out_dir: Path, per_record: Design) -> dict[str, Any]:
    """Release the households' table per record with the spec (OS CSPRNG, exact samplers)."""
    from .table import load_spec, release_file, words
    table = households(hours)
    with atomic_path(out_dir / "households.csv") as tmp:
        table.to_csv(tmp, index=False)
    per_record.mechanism.save(out_dir / "hour_per_record.json", report={"expected_cost": per_record.report.expected_cost},
                              force=True)  # run_demo checked its files
    budget = per_record.mechanism.target.epsilon + sum(RELEASE_EPSILON.values())  # type: ignore[union-attr]
    write_text_atomic(out_dir / "release.toml", release_spec(budget))
    manifest = release_file(out_dir / "households.csv", out_dir / "released.csv", load_spec(out_dir / "release.toml"),
                            force=True, spec_file=out_dir / "release.toml")
    released = pd.read_csv(out_dir / "released.csv")
    hour = released["peak_hour"].to_numpy()
    wrapped = np.minimum((hour - hours) % HOURS, (hours - hour) % HOURS)
    return {"rows": manifest["input"]["rows"], "unit": manifest["unit"], "total": manifest["total"],
            "in_words": words(manifest), "randomness": manifest["randomness"],
            "certificates": {k: v["certificate"] for k, v in manifest["columns"].items()},
            "changed_fraction": float(np.mean(hour != hours)),
            "mean_circular_squared_error": float(np.mean(wrapped ** 2)),
            "tariff_changed_fraction": float(np.mean(released["tariff"].to_numpy() != table["tariff"].to_numpy())),
            "occupants_mean_abs_error": float(np.mean(np.abs(released["occupants"] - table["occupants"])))}


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
