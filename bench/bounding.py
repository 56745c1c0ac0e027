"""Benchmark: the cost of the unit's bounding rules (issue 36, items 2 and 3).

Run: .venv/bin/python bench/bounding.py [--rows 1e6] [--repeats 2]

Input: a synthetic CSV written once in a temporary folder: ``h`` (``rows / 50`` units, rows
interleaved at random), ``c`` (8 groups), ``k`` (24 keys) and ``v`` (0..3, two decimals). The
spec: a sum of ``v`` by ``c`` and a histogram of units over ``k``, ``max_rows = 24``. Each
configuration of the unit -- ``first`` (the baseline), ``max_groups = 3``, with
``max_rows_per_group = 8``, ``bounding = "random"``, and all three -- is timed side by side
in one process, the aggregation alone (reading, bounding, the exact answers: what the rules
cost; the mechanisms, which depend on the derived neighbourhood, are not timed). Prints
seconds, the ratio to ``first`` of the same round, and the load average.
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
from optnoise.query.aggregate import aggregate, answers, bounding_source
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
    pd.DataFrame({"h": rng.integers(0, max(1, rows // 50), rows), "c": rng.integers(0, 8, rows),
                  "k": rng.integers(0, 24, rows), "v": np.round(rng.uniform(0, 3, rows), 2)}).to_csv(path, index=False)


def timed(path: Path, unit: dict) -> float:
    spec = parse_query_spec({"unit": unit, "statistics": STATS})
    start = time.perf_counter()
    agg = aggregate(read_batches(path, "csv", list(spec.columns)), spec, source=bounding_source(spec, random_source()))
    for stat in spec.statistics:
        answers(agg, stat)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.csv"
        table(path, int(args.rows))
        for round_ in range(args.repeats):
            base = None
            for name, unit in UNITS.items():
                seconds = timed(path, unit)
                base = base or seconds
                print(f"round {round_}  {name:32s} {seconds:6.2f} s  x{seconds / base:4.2f}  "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
