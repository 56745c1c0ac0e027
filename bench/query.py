"""Benchmark: ``optnoise query`` (local and Spark) against plain group-by scripts (issue 22).

Run: .venv/bin/python bench/query.py [--rows 1e7] [--repeats 1] [--engines local,spark] [--dir DIR]

Input: a synthetic meter table written once as Parquet (row groups of 2^20 rows), removed at
the end: ``household`` (``rows / 24`` households), ``circuit`` (1..12, fixed per household),
``hour`` (0..23) and ``kwh`` (gamma(2, 0.6), three decimals, a few above 10), in time order
(every household's hour 0, then hour 1, ...), as meter exports come.

The query, one spec (``query.toml`` below, the issue's contract): the unit is a household
with at most 24 rows; a **group-by count** (households per circuit: ``histogram`` over
``circuit``) and a **group-by sum** (kWh per circuit clamped to 0..10 at resolution 0.1),
each at eps = 1, mechanisms by default.

* local: ``optnoise query --input in.parquet --spec query.toml --output out.json`` (streamed
  with pyarrow) against a plain pandas + numpy script: read the three columns, clamp and round
  kWh, group by household (its circuit, its kWh total capped at 24 x 10 kWh: the contribution
  bound, with no row order needed), then by circuit (households, kWh), add two-sided geometric
  noise drawn with numpy, clip to the domain, write JSON. (optnoise's bound -- a household's
  first 24 rows -- drops the rows past a household's 24th: 16 at 1e7 rows.) ``--sides`` may add
  ``baseline-first-rows``: the same script keeping each household's first 24 rows as optnoise
  does (a ``cumcount``), ratios still to ``baseline``.
* keys found in the data (``--sides optnoise,optnoise-found``, issue 36): the same spec with
  the histogram's ``keys = "from-data"`` and ``delta = 1e-6`` (``SPEC_FOUND``: one more pass
  over the ``circuit`` column, the threshold designed from the noise's exact tail, the keys
  that pass released), timed against the declared keys (``found_time_ratio``), same data;
  ``optnoise-delta`` adds the declared keys with the same ``delta = 1e-6`` (``SPEC_DELTA``):
  a publication with a delta composes its total by privacy-loss distributions, whose import
  (dp_accounting, scipy) is a fixed cost of either (``found_delta_time_ratio``).
* spark: ``optnoise query --engine spark`` against a plain PySpark job doing the same two
  group-bys (hash aggregations, the 12 rows collected, numpy noise on the driver), in the same
  local SparkSession configuration (:func:`optnoise.publish.spark.spark_session`).

Each run is a whole, fresh process (imports included; optnoise's bytecode compiled first, as
an installed package's is). On Spark, as in ``bench/release.py``,
each process first starts the session (the JVM and a first job, timed apart and **excluded**:
20-100 s on the shared machine, more than the job), then runs the job: optnoise's command line
called in that process (it finds the active session), or the plain job.
Wall time and peak RSS (GNU time's ``%M``; for Spark the largest sum over the process tree,
JVM and Python workers, sampled from /proc); medians over ``--repeats`` interleaved runs, and
the ratios to the baseline measured in the same run. Asserts nothing. ``--sides baseline``
runs the baselines alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import process_run

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
OPTNOISE = [sys.executable, "-c", "from optnoise.cli import main; main()"]
EPSILON = 1.0
CIRCUITS = list(range(1, 13))

SPEC = f"""\
unit = {{ id = "household", max_rows = 24 }}
alpha = 0.05

[statistics.households]             # group-by count: households per circuit
kind = "histogram"
key = "circuit"
keys = {CIRCUITS}
epsilon = {EPSILON}

[statistics.kwh]                    # group-by sum: clamped kWh per circuit
kind = "sum"
column = "kwh"
clamp = {{ lower = 0, upper = 10 }}
resolution = 0.1
by = "circuit"
groups = {CIRCUITS}
epsilon = {EPSILON}
"""

#: The same spec with the histogram's keys found in the data (issue 36): the circuits not
#: declared, each released iff its noisy count of households passes the exact threshold
#: (``delta`` is the selection's); the sum by circuit keeps its declared groups.
SPEC_FOUND = SPEC.replace(f"keys = {CIRCUITS}\n", 'keys = "from-data"\ndelta = 1e-6\n', 1)
#: The declared keys with the same delta (side ``optnoise-delta``): a publication with a delta
#: composes its total by privacy-loss distributions (dp_accounting imported, a fixed cost).
SPEC_DELTA = SPEC.replace(f"keys = {CIRCUITS}\n", f"keys = {CIRCUITS}\ndelta = 1e-6\n", 1)
assert SPEC_FOUND != SPEC and SPEC_DELTA != SPEC
SPECS = {"optnoise": "query.toml", "optnoise-found": "query_found.toml", "optnoise-delta": "query_delta.toml"}

#: The noise both baselines add: a histogram cell moves by 1 and a unit moves two cells
#: (replace), a group's sum by 24 rows x 10 kWh / 0.1 = 2,400 units of resolution, two groups.
NOISE = r'''
import json, numpy as np
EPS, MAX_ROWS, UPPER, RES = 1.0, 24, 10.0, 0.1

def two_sided_geometric(rng, alpha, size):
    return rng.geometric(1 - alpha, size) - rng.geometric(1 - alpha, size)

def release(circuits, households, kwh_units, units, out):
    rng = np.random.default_rng()
    n_sum = units * MAX_ROWS * round(UPPER / RES)
    count = np.clip(households + two_sided_geometric(rng, np.exp(-EPS / 2), len(circuits)), 0, units)
    total = np.clip(kwh_units + two_sided_geometric(rng, np.exp(-EPS / (2 * MAX_ROWS * UPPER / RES)),
                                                     len(circuits)), 0, n_sum)
    doc = {"households": {str(c): int(v) for c, v in zip(circuits, count)},
           "kwh": {str(c): float(v) * RES for c, v in zip(circuits, total)}}
    with open(out, "w") as fh:
        json.dump(doc, fh)
'''

BASELINE_LOCAL = NOISE + r'''
import sys, pandas as pd
inp, out = sys.argv[1], sys.argv[2]
first_rows = len(sys.argv) > 3            # the same rule as optnoise: a household's first 24 rows
df = pd.read_parquet(inp, columns=["household", "circuit", "kwh"])
if first_rows:
    df = df[df.groupby("household").cumcount() < MAX_ROWS]
df["kwh"] = (df["kwh"].clip(0, UPPER) / RES).round().astype("int64")
per_unit = df.groupby("household").agg(circuit=("circuit", "first"), kwh=("kwh", "sum"))
per_unit["kwh"] = per_unit["kwh"].clip(upper=MAX_ROWS * round(UPPER / RES))   # a unit's contribution bound
agg = per_unit.groupby("circuit").agg(households=("kwh", "size"), kwh=("kwh", "sum")).reindex(range(1, 13),
                                                                                              fill_value=0)
release(list(agg.index), agg["households"].to_numpy(), agg["kwh"].to_numpy(), len(per_unit), out)
'''

SPARK_WORKER = NOISE + r'''
import os, sys, time
root, kind, inp, out, spec = sys.argv[1:6]
sys.path.insert(0, os.path.join(root, "src"))
t0 = time.perf_counter()
from optnoise.publish.spark import spark_session
spark = spark_session()
spark.range(1).count()  # the JVM and a first job: start-up
startup = time.perf_counter() - t0
t0 = time.perf_counter()
if kind == "optnoise":   # the command line in this process: it finds the active session
    from optnoise.cli import main
    sys.argv = ["optnoise", "query", "--input", inp, "--spec", spec, "--output", out, "--engine", "spark"]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
else:
    from pyspark.sql import functions as F
    df = spark.read.parquet(inp)
    clamped = F.round(F.least(F.greatest(F.col("kwh"), F.lit(0.0)), F.lit(UPPER)) / RES).cast("long")
    per_unit = df.groupBy("household").agg(F.first("circuit").alias("circuit"), F.sum(clamped).alias("kwh"))
    per_unit = per_unit.withColumn("kwh", F.least(F.col("kwh"), F.lit(MAX_ROWS * round(UPPER / RES))))
    rows = per_unit.groupBy("circuit").agg(F.count("*").alias("households"), F.sum("kwh").alias("kwh")).collect()
    agg = {r["circuit"]: r for r in rows}
    circuits = list(range(1, 13))
    release(circuits, np.array([agg[c]["households"] if c in agg else 0 for c in circuits]),
            np.array([agg[c]["kwh"] if c in agg else 0 for c in circuits]), sum(r["households"] for r in rows), out)
print(json.dumps({"startup": startup, "job": time.perf_counter() - t0}))
'''


def make_input(path: Path, rows: int) -> None:
    """The meter table (module docstring), written in row groups of 2^20 rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(22)
    households = max(1, rows // 24)
    chunk = 1 << 20
    writer = None
    for start in range(0, rows, chunk):
        i = np.arange(start, min(start + chunk, rows))
        house = i % households
        kwh = np.round(rng.gamma(2.0, 0.6, i.size), 3)
        batch = pa.table({"household": house, "circuit": house % 12 + 1, "hour": (i // households) % 24,
                          "kwh": kwh})
        writer = writer or pq.ParquetWriter(str(path), batch.schema)
        writer.write_table(batch)
    if writer is not None:
        writer.close()


def commands(kind: str, engine: str, scratch: Path, inp: Path, out: Path) -> list[str]:
    spec = scratch / SPECS.get(kind, "query.toml")
    if engine == "spark":
        worker = "optnoise" if kind in SPECS else kind
        return [sys.executable, str(scratch / "spark_worker.py"), str(ROOT), worker, str(inp), str(out), str(spec)]
    if kind in SPECS:
        return OPTNOISE + ["query", "--input", str(inp), "--spec", str(spec), "--output", str(out)]
    rule = ["first-rows"] if kind == "baseline-first-rows" else []
    return [sys.executable, str(scratch / "baseline_local.py"), str(inp), str(out)] + rule


def remove(path: Path) -> None:
    for p in (path, Path(str(path) + ".manifest.json")):
        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


def measure(engine: str, repeats: int, scratch: Path, inp: Path, sides: list[str]) -> dict:
    """Interleaved runs of both sides; medians and ratios."""
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    startups: dict[str, list[float]] = {}
    out = scratch / "out.json"
    failed: dict[str, str] = {}
    for _ in range(repeats):
        for kind in sides:
            if kind in failed:
                continue
            remove(out)
            try:
                wall, rss, text = process_run(commands(kind, engine, scratch, inp, out), ENV, tree=engine == "spark")
            except RuntimeError as exc:   # reported, and the other sides still measured
                failed[kind] = next((line for line in str(exc).splitlines() if "error" in line.lower()),
                                    str(exc).splitlines()[-1])[:200]
                continue
            if engine == "spark":   # the job alone: the session's start-up is timed apart
                times = json.loads(text.strip().splitlines()[-1])
                wall, startups[kind] = times["job"], startups.get(kind, []) + [times["startup"]]
            runs[kind].append((wall, rss))
    remove(out)
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items() if v}
    out_row: dict = {"engine": engine, "runs": runs, "startup_s": startups, "failed": failed}
    for k, (wall, rss) in med.items():
        out_row.update({f"{k}_s": wall, f"{k}_rss_mb": rss})
    if "optnoise" in med and "baseline" in med:
        out_row.update(time_ratio=med["optnoise"][0] / med["baseline"][0],
                       rss_ratio=med["optnoise"][1] / med["baseline"][1])
    if "optnoise" in med and "optnoise-found" in med:   # keys found in the data against declared keys
        out_row.update(found_time_ratio=med["optnoise-found"][0] / med["optnoise"][0],
                       found_rss_ratio=med["optnoise-found"][1] / med["optnoise"][1])
    if "optnoise-delta" in med and "optnoise-found" in med:   # against declared keys with the same delta
        out_row.update(found_delta_time_ratio=med["optnoise-found"][0] / med["optnoise-delta"][0])
    return out_row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e7")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--dir", default=None, help="Scratch directory (default: a new one in the system's temp dir).")
    ap.add_argument("--sides", default="optnoise,baseline")
    ap.add_argument("--keep-output", help="copy the last optnoise output here (to read its manifest)")
    args = ap.parse_args()
    rows = int(float(args.rows))
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set (as on the
    # development machine) every optnoise process would otherwise compile its ~90 modules
    # (0.8-1.8 s), which the baseline, importing only installed packages, never pays.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "optnoise")], check=True,
                   stdout=subprocess.DEVNULL)
    scratch = Path(tempfile.mkdtemp(prefix="optnoise-bench-query-", dir=args.dir))
    print(f"scratch: {scratch} (free: {shutil.disk_usage(scratch).free / 1e9:.0f} GB); load {os.getloadavg()}")
    try:
        (scratch / "query.toml").write_text(SPEC)
        (scratch / "query_found.toml").write_text(SPEC_FOUND)
        (scratch / "query_delta.toml").write_text(SPEC_DELTA)
        (scratch / "baseline_local.py").write_text(BASELINE_LOCAL)
        (scratch / "spark_worker.py").write_text(SPARK_WORKER)
        inp = scratch / f"meters_{rows}.parquet"
        make_input(inp, rows)
        results = []
        for engine in args.engines.split(","):
            r = measure(engine, args.repeats, scratch, inp, args.sides.split(","))
            results.append(r)
            shown = " | ".join(f"{k} {r[k + '_s']:7.2f} s {r[k + '_rss_mb']:6.0f} MB" if k + "_s" in r
                               else f"{k} failed: {r['failed'].get(k)}" for k in args.sides.split(","))
            ratio = f" | time x{r['time_ratio']:.2f} | peak RSS x{r['rss_ratio']:.2f}" if "time_ratio" in r else ""
            ratio += (f" | keys found / declared: time x{r['found_time_ratio']:.2f}, peak RSS "
                      f"x{r['found_rss_ratio']:.2f}" if "found_time_ratio" in r else "")
            ratio += (f" | keys found / declared with the delta: time x{r['found_delta_time_ratio']:.2f}"
                      if "found_delta_time_ratio" in r else "")
            for side, label in (("baseline-first-rows", "first-rows baseline"), ("optnoise-found", "keys from the data"),
                                ("optnoise-delta", "declared keys with the delta")):
                shown = shown.replace(side, label)
            print(f"{engine:5s} {rows:>11,d} rows: {shown}{ratio} | load {os.getloadavg()[0]:.1f}", flush=True)
        if args.keep_output:
            out = scratch / "out.json"
            process_run(commands("optnoise", "local", scratch, inp, out), ENV)
            shutil.copy(out, args.keep_output)
        print(json.dumps({"rows": rows, "results": results}))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
