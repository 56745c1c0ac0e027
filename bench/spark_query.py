"""Benchmark (issue 38): the demo's statistics spec on a Spark standalone cluster, against a
plain PySpark job applying the same unit rules, and the local engine.

Run: .venv/bin/python bench/spark_query.py [--rows 5e6,5e7] [--repeats 1]
         [--sides optnoise,plain,local] [--workers 2] [--cores 1] [--memory 2g]

Input: the demo's meter readings (:func:`optnoise.datasets.meter_readings`: a household's 24
hourly rows, its circuit and its peak hour) for ``rows / 24`` households, written once as
Parquet in chunks of 2^16 households, each chunk in time order (every household's hour 0,
then hour 1, ...: a household's rows are never contiguous). The spec: the demo's
(``optnoise.demo.STATISTICS_TOML``: households per peak hour in each circuit, each circuit's
peak hour by two methods, kWh per circuit; ``max_rows = 24``).

The cluster: ``bench/spark_cluster.py`` (a master and ``--workers`` workers of ``--cores``
cores and ``--memory`` each, on loopback), started once; executors of ``--memory``
(``spark.executor.memory``), the driver at Spark's default memory. Each Spark run is a fresh
process that starts its session on the cluster and a first job (timed apart, excluded), then
runs the job: ``optnoise query --engine spark`` (the command line in that process: it finds
the active session) or the plain job (``bench/spark_plain.py``). The local engine:
``optnoise query`` in a fresh process, whole.

Reported per side: the job's wall time, the driver's peak RSS (the process and its JVM,
sampled from /proc) and the executors' (the workers' child processes: executor JVMs and
Python workers, summed, sampled); ratios to the plain job measured in the same run;
medians over ``--repeats`` interleaved runs; the load average. Asserts nothing.
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
import threading
import time
from pathlib import Path

from spark_cluster import start
from timing import process_run, tree_rss_mb

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'bench'}"}
OPTNOISE = [sys.executable, "-c", "from optnoise.cli import main; main()"]


def make_input(path: Path, rows: int) -> None:
    """The demo's readings (module docstring), written chunk by chunk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from optnoise.datasets import meter_readings
    households = max(1, rows // 24)
    writer = None
    for i, start_at in enumerate(range(0, households, 1 << 16)):
        n = min(1 << 16, households - start_at)
        df = meter_readings(n, seed=2024 + i)
        df["household"] += start_at
        order = np.lexsort((df["household"].to_numpy(), df["hour"].to_numpy()))   # time order
        table = pa.Table.from_pandas(df.iloc[order], preserve_index=False)
        writer = writer or pq.ParquetWriter(str(path), table.schema)
        writer.write_table(table, row_group_size=1 << 20)
    if writer is not None:
        writer.close()


def worker(side: str, inp: str, spec: str, out: str, master: str, memory: str) -> None:
    """One Spark run in this process (module docstring): session and first job, then the job."""
    from pyspark.sql import SparkSession
    t0 = time.perf_counter()
    spark = (SparkSession.builder.master(master).appName(f"bench-{side}")
             .config("spark.executor.memory", memory).getOrCreate())
    spark.range(1).count()
    startup, t0 = time.perf_counter() - t0, time.perf_counter()
    if side == "optnoise":
        from optnoise.cli import app   # the command line in this process: it finds the active session
        code = app(["query", "--input", inp, "--spec", spec, "--output", out, "--engine", "spark", "--force"],
                   standalone_mode=False)
        assert not code, f"optnoise query exited {code}"
    else:
        import spark_plain
        spark_plain.release(spark_plain.aggregates(spark, inp), out)
    print(json.dumps({"startup": startup, "job": time.perf_counter() - t0}))


class Sampler(threading.Thread):
    """The largest sum of the resident sets of the workers' children (the executors), MB."""

    def __init__(self, workers: list[int]) -> None:
        super().__init__(daemon=True)
        self.workers, self.peak, self.done = workers, 0.0, False

    def run(self) -> None:
        while not self.done:
            self.peak = max(self.peak, sum(tree_rss_mb(w) - tree_rss_mb_self(w) for w in self.workers))
            time.sleep(0.2)


def tree_rss_mb_self(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0) / 1024
    except OSError:
        return 0.0


def one_run(side: str, inp: Path, spec: Path, out: Path, cluster, memory: str) -> dict:
    if side == "local":
        wall, rss, _ = process_run(OPTNOISE + ["query", "--input", str(inp), "--spec", str(spec), "--output", str(out),
                                               "--force"], ENV)
        return {"s": wall, "driver_mb": rss}
    sampler = Sampler(cluster.pids[1:])
    sampler.start()
    try:
        wall, rss, text = process_run([sys.executable, __file__, "--worker", side, str(inp), str(spec), str(out),
                                       cluster.url, memory], ENV, tree=True)
    finally:
        sampler.done = True
        sampler.join()
    times = json.loads(text.strip().splitlines()[-1])
    return {"s": times["job"], "startup_s": times["startup"], "driver_mb": rss, "executors_mb": sampler.peak}


def measure(rows: int, args, scratch: Path, cluster) -> dict:
    from optnoise.demo import STATISTICS_TOML
    spec = scratch / "statistics.toml"
    spec.write_text(STATISTICS_TOML)
    inp = scratch / f"readings_{rows}.parquet"
    t0 = time.perf_counter()
    make_input(inp, rows)
    print(f"{rows:,d} rows written in {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    sides = args.sides.split(",")
    runs: dict[str, list[dict]] = {s: [] for s in sides}
    failed: dict[str, str] = {}
    for _ in range(args.repeats):
        for side in sides:
            if side in failed:
                continue
            try:
                runs[side].append(one_run(side, inp, spec, scratch / f"out-{side}.json", cluster, args.memory))
            except RuntimeError as exc:
                failed[side] = str(exc).strip().splitlines()[-1][:300]
            r = runs[side][-1] if runs[side] else {}
            print(f"  {side:8s} {r.get('s', float('nan')):7.1f} s  driver {r.get('driver_mb', 0):6.0f} MB  "
                  f"executors {r.get('executors_mb', 0):6.0f} MB  load {os.getloadavg()[0]:.1f}"
                  + (f"  FAILED {failed[side]}" if side in failed else ""), flush=True)
    med = {s: {k: statistics.median(r[k] for r in v) for k in v[0]} for s, v in runs.items() if v}
    row = {"rows": rows, "median": med, "failed": failed, "load": os.getloadavg()}
    for side in ("optnoise", "local"):
        if side in med and "plain" in med:
            row[f"{side}_over_plain"] = med[side]["s"] / med["plain"]["s"]
    inp.unlink()
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:8])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="5e6")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--sides", default="optnoise,plain,local")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--memory", default="2g")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "optnoise")], check=True,
                   stdout=subprocess.DEVNULL)
    scratch = Path(tempfile.mkdtemp(prefix="optnoise-bench-spark-", dir=args.dir))
    cluster = start(args.workers, args.cores, args.memory, log_dir=str(scratch / "logs"))
    print(f"cluster {cluster.url}: {args.workers} workers x {args.cores} core x {args.memory}; "
          f"load {os.getloadavg()}", flush=True)
    try:
        results = [measure(int(float(r)), args, scratch, cluster) for r in args.rows.split(",")]
        print(json.dumps(results))
    finally:
        cluster.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
