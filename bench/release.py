"""Benchmark: ``optnoise release`` (local and Spark) against plain baselines, side by side (issue 13).

Run: .venv/bin/python bench/release.py [--sizes 1e6,1e7,3e7] [--repeats 3] [--engines local,spark]
                                         [--formats csv,parquet] [--dir DIR]

Input: a table of ``id`` and ``hour`` (0..23) per row, written once per size into a
temporary directory (CSV, and Parquet with row groups of 2^20 rows), removed at the end.

* local: ``optnoise release --column hour --mechanism hour.json`` (the per-record design,
  certified at start; streamed) against a plain pandas + numpy script that reads the
  column, adds noise drawn from a precomputed integer table with ``os.urandom`` words and
  writes it. Both are whole processes (start-up and imports included).
* spark: the same release with ``--engine spark`` against a plain PySpark job reading the
  same file and adding the same table noise to the same column in a ``pandas_udf``. Each
  run is a fresh process; the SparkSession start-up is timed apart and excluded from the
  job's wall time (reported separately).

Wall time and peak RSS per run (GNU time's ``%M`` for the local runs; for Spark the
largest sum over the process tree -- JVM and Python workers -- sampled from /proc);
medians over ``--repeats`` interleaved runs and the ratios to the baseline measured in
the same run. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from timing import process_run

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
OPTNOISE = [sys.executable, "-c", "from optnoise.cli import main; main()"]

BASELINE_LOCAL = r'''
import os, sys, numpy as np, pandas as pd
inp, out, table = sys.argv[1], sys.argv[2], sys.argv[3]
cum = np.cumsum(np.array(open(table).read().split(), dtype=np.uint64))  # integer weights summing to 2^bits
bits = int(cum[-1]).bit_length() - 1
read = pd.read_csv if inp.endswith(".csv") else pd.read_parquet
x = read(inp, columns=["hour"]) if inp.endswith(".parquet") else read(inp, usecols=["hour"])
x = x["hour"].to_numpy()
u = np.frombuffer(os.urandom(8 * x.size), dtype="<u8") >> np.uint64(64 - bits)
y = (x + np.searchsorted(cum, u, side="right")) % 24
frame = pd.DataFrame({"hour": y})
frame.to_csv(out, index=False) if out.endswith(".csv") else frame.to_parquet(out, index=False)
'''

SPARK_WORKER = r'''
import json, os, sys, time
root, kind, inp, out, table, mech = sys.argv[1:7]
sys.path.insert(0, os.path.join(root, "src"))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
t0 = time.perf_counter()
from optnoise.table.spark import spark_session
spark = spark_session()
spark.range(1).count()  # the JVM and a first job: start-up
startup = time.perf_counter() - t0
t0 = time.perf_counter()
if kind == "optnoise":
    from optnoise.mechanism import load_mechanism
    from optnoise.table import release_column
    release_column(inp, "hour", load_mechanism(mech), out, engine="spark")
else:
    import numpy as np, pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf
    cum = np.cumsum(np.array(open(table).read().split(), dtype=np.uint64))
    bits = int(cum[-1]).bit_length() - 1

    @pandas_udf("long")
    def noisy(s: pd.Series) -> pd.Series:
        u = np.frombuffer(os.urandom(8 * len(s)), dtype="<u8") >> np.uint64(64 - bits)
        return pd.Series((s.to_numpy() + np.searchsorted(cum, u, side="right")) % 24)

    if inp.endswith(".csv"):
        df = spark.read.option("header", True).schema("id long, hour long").csv(inp)
    else:
        df = spark.read.parquet(inp)
    res = df.select(noisy(F.col("hour")).alias("hour")).write
    res.option("header", True).csv(out) if out.endswith(".csv") else res.parquet(out)
print(json.dumps({"startup": startup, "job": time.perf_counter() - t0}))
'''


def make_inputs(d: Path, rows: int, formats: list[str]) -> dict[str, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq
    rng = np.random.default_rng(1)
    paths = {fmt: d / f"in_{rows}.{fmt}" for fmt in formats}
    writers = {}
    chunk = 1 << 20
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        batch = pa.record_batch([pa.array(np.arange(start, start + n)), pa.array(rng.integers(0, 24, n))],
                                names=["id", "hour"])
        for fmt, path in paths.items():
            if fmt not in writers:
                writers[fmt] = (pcsv.CSVWriter(str(path), batch.schema) if fmt == "csv"
                                else pq.ParquetWriter(str(path), batch.schema))
            writers[fmt].write_batch(batch) if fmt == "csv" else writers[fmt].write_table(pa.Table.from_batches([batch]))
    for w in writers.values():
        w.close()
    return paths


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    Path(str(path) + ".manifest.json").unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e6,1e7,3e7")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--formats", default="csv,parquet")
    ap.add_argument("--dir", default=None, help="Scratch directory (default: a new one in the system's temp dir).")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    engines = args.engines.split(",")
    scratch = Path(tempfile.mkdtemp(prefix="optnoise-bench-release-", dir=args.dir))
    print(f"scratch: {scratch} (free: {shutil.disk_usage(scratch).free / 1e9:.0f} GB)")
    try:
        sys.path.insert(0, str(ROOT / "src"))
        from optnoise import Neighbourhood, design_finite
        mech = scratch / "hour.json"
        design = design_finite(23, epsilon=1.0, neighbourhood=Neighbourhood.bd(23), cost="circular-mse")
        design.mechanism.save(mech)
        table = scratch / "table.txt"  # the baselines' precomputed table: the same quantized weights
        table.write_text(" ".join(str(int(w)) for w in design.mechanism.quantize().weights))
        (scratch / "baseline.py").write_text(BASELINE_LOCAL)
        (scratch / "spark_worker.py").write_text(SPARK_WORKER)
        rows_out = []
        for rows in sizes:
            inputs = make_inputs(scratch, rows, formats)
            for fmt in formats:
                inp = inputs[fmt]
                out = scratch / f"out.{fmt}"
                for engine in engines:
                    runs: dict[str, list[tuple[float, float, float]]] = {"optnoise": [], "baseline": []}
                    for _ in range(args.repeats):
                        for kind in ("optnoise", "baseline"):
                            remove(out)
                            if engine == "local":
                                cmd = (OPTNOISE + ["release", "--input", str(inp), "--column", "hour", "--mechanism",
                                                   str(mech), "--output", str(out), "--json"] if kind == "optnoise"
                                       else [sys.executable, str(scratch / "baseline.py"), str(inp), str(out),
                                             str(table)])
                                wall, rss, _ = process_run(cmd, ENV)
                                runs[kind].append((wall, rss, 0.0))
                            else:
                                wall, rss, text = process_run([sys.executable, str(scratch / "spark_worker.py"), str(ROOT),
                                                               kind, str(inp), str(out), str(table), str(mech)],
                                                              ENV, tree=True)
                                times = json.loads(text.strip().splitlines()[-1])
                                runs[kind].append((times["job"], rss, times["startup"]))
                    remove(out)
                    med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in runs.items()}
                    spread = {k: (max(r[0] for r in v) - min(r[0] for r in v)) / statistics.median(r[0] for r in v)
                              for k, v in runs.items()}
                    row = {"rows": rows, "format": fmt, "engine": engine,
                           "optnoise_s": med["optnoise"][0], "baseline_s": med["baseline"][0],
                           "time_ratio": med["optnoise"][0] / med["baseline"][0],
                           "optnoise_rss_mb": med["optnoise"][1], "baseline_rss_mb": med["baseline"][1],
                           "spread": max(spread.values()), "spark_startup_s": med["optnoise"][2] or None}
                    rows_out.append(row)
                    print(f"{engine:5s} {fmt:7s} {rows:>9,d} rows: optnoise {row['optnoise_s']:7.2f} s "
                          f"{row['optnoise_rss_mb']:6.0f} MB | baseline {row['baseline_s']:7.2f} s "
                          f"{row['baseline_rss_mb']:6.0f} MB | time x{row['time_ratio']:.2f} "
                          f"(spread {row['spread']:.0%})"
                          + (f" | session start-up {row['spark_startup_s']:.1f} s (excluded)" if engine == "spark" else ""),
                          flush=True)
            for path in inputs.values():
                path.unlink()
        for engine in engines:
            for fmt in formats:
                mine = [r for r in rows_out if r["engine"] == engine and r["format"] == fmt]
                if len(mine) > 1:
                    print(f"{engine} {fmt}: peak RSS at {mine[-1]['rows']:,} rows / at {mine[0]['rows']:,} rows = "
                          f"{mine[-1]['optnoise_rss_mb'] / mine[0]['optnoise_rss_mb']:.2f} "
                          f"(baseline {mine[-1]['baseline_rss_mb'] / mine[0]['baseline_rss_mb']:.2f})")
        print(json.dumps(rows_out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
