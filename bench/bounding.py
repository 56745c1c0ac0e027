"""Benchmark: the cost of the unit's bounding rules (issue 36, items 2 and 3).

Run: .venv/bin/python bench/bounding.py [--rows 1e6] [--repeats 2] [--engine local|spark]
[--format csv|parquet]

Input: a synthetic CSV written once in a temporary folder: ``h`` (``rows / 50`` units, rows
interleaved at random), ``c`` (8 groups), ``k`` (24 keys) and ``v`` (0..3, two decimals). The
spec: a sum of ``v`` by ``c`` and a histogram of units over ``k``, ``max_rows = 24``. Each
configuration of the unit -- ``first`` (the baseline), ``max_groups = 3``, with
``max_rows_per_group = 8``, ``bounding = "random"``, and all three -- is timed side by side
in one process, the aggregation alone (reading, bounding, the exact answers: what the rules
cost; the mechanisms, which depend on the derived neighbourhood, are not timed). Prints
seconds, the ratio to ``first`` of the same round, and the load average. ``--engine spark``
times :func:`optnoise.query.spark.aggregate_spark` instead (a Parquet file by default: the JVM
path; the session started, and one configuration run, before the timed rounds).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from optnoise.publish.files import read_batches
from optnoise.query.aggregate import aggregate, answers, bounding_key
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import random_source

STATS = {"s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 3}, "resolution": 0.01, "by": "c",
               "groups": list(range(8)), "epsilon": 1.0},
         "hu": {"kind": "histogram", "key": "k", "keys": list(range(24)), "epsilon": 1.0}}
UNITS = {"first": {"id": "h", "max_rows": 24},
         "max_groups 3": {"id": "h", "max_rows": 24, "max_groups": 3},
         "max_groups 3, per group 8": {"id": "h", "max_rows": 24, "max_groups": 3, "max_rows_per_group": 8},
         "random": {"id": "h", "max_rows": 24, "bounding": "random"},
         "random, groups 3, per group 8": {"id": "h", "max_rows": 24, "max_groups": 3, "max_rows_per_group": 8,
                                           "bounding": "random"}}


def table(path: Path, rows: int) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"h": rng.integers(0, max(1, rows // 50), rows), "c": rng.integers(0, 8, rows),
                          "k": rng.integers(0, 24, rows), "v": np.round(rng.uniform(0, 3, rows), 2)})
    frame.to_csv(path, index=False) if path.suffix == ".csv" else frame.to_parquet(path, index=False)


def timed(path: Path, unit: dict, engine: str = "local") -> float:
    spec = parse_query_spec({"unit": unit, "statistics": STATS})
    fmt = path.suffix[1:]
    start = time.perf_counter()
    key = bounding_key(spec, random_source())
    if engine == "spark":
        from optnoise.query.spark import aggregate_spark
        agg = aggregate_spark(path, fmt, spec, key=key)
    else:
        agg = aggregate(read_batches(path, fmt, list(spec.columns)), spec, key=key)
    for stat in spec.statistics:
        answers(agg, stat)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--engine", choices=("local", "spark"), default="local")
    parser.add_argument("--format", choices=("csv", "parquet"), default=None)
    args = parser.parse_args()
    fmt = args.format or ("parquet" if args.engine == "spark" else "csv")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"in.{fmt}"
        table(path, int(args.rows))
        if args.engine == "spark":   # the session and the JVM's first plans, not timed
            timed(path, UNITS["first"], "spark")
        for round_ in range(args.repeats):
            base = None
            for name, unit in UNITS.items():
                seconds = timed(path, unit, args.engine)
                base = base or seconds
                print(f"round {round_}  {name:32s} {seconds:6.2f} s  x{seconds / base:4.2f}  "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
