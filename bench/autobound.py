"""Bounds chosen privately (issue 36 item 5): the cost of ``max_rows = "auto"`` and
``clamp = "auto"`` against the same query with the bounds declared, side by side.

Run: .venv/bin/python bench/autobound.py [--units 200000] [--rows 10] [--reps 3] [--dir DIR]
     [--engine spark] [--format parquet]

One CSV (``units`` units, ``rows`` rows each, shuffled; a ``kwh`` column, gamma(2, 1) rounded
to 0.01); a sum of ``kwh`` at epsilon 1, resolution 0.01: declared ``max_rows = 16``, clamp
``[0, 8]``; auto ``max_rows = "auto"`` (``bound_epsilon = 0.1``) and ``clamp = "auto"``
(``clamp_cap = 64``). Each spec is run through the command line (``optnoise query --json``)
``reps`` times, alternating; prints the median wall times, their ratio, the chosen bounds and
the load average. With ``--engine spark`` both specs run in this process through
:func:`optnoise.query.files.query_file` on one local Spark session (started, and each spec run
once, before the timed runs: the JVM's start is not the query's cost); ``--format parquet``
writes the input as Parquet (Spark's JVM path for both passes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

STAT = '[statistics.s]\nkind = "sum"\ncolumn = "kwh"\nepsilon = 1.0\nresolution = 0.01\n'
SPECS = {"declared": 'unit = { id = "h", max_rows = 16 }\n' + STAT + 'clamp = { lower = 0, upper = 8 }\n',
         "auto": 'unit = { id = "h", max_rows = "auto", bound_epsilon = 0.1 }\n' + STAT +
                 'clamp = "auto"\nclamp_cap = 64\n'}


def run_once(name: str, work: Path, data: Path, engine: str) -> tuple[float, dict]:
    """One run of the spec ``name``: its wall time and its chosen bounds (``{}``: none)."""
    t = time.perf_counter()
    if engine == "local":
        cli = shutil.which("optnoise") or "optnoise"
        out = json.loads(subprocess.run([cli, "query", "--spec", str(work / f"{name}.toml"), "--input", str(data),
                                         "--json"], capture_output=True, text=True, check=True).stdout)
    else:
        import warnings

        from optnoise.query.files import query_file
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = query_file(data, str(work / f"{name}.toml"), engine=engine)
    return time.perf_counter() - t, out.get("bounds", {})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=200_000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--engine", choices=("local", "spark"), default="local")
    ap.add_argument("--format", choices=("csv", "parquet"), default="csv")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="autobound-"))
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"h": rng.permutation(np.repeat(np.arange(args.units), args.rows)),
                          "kwh": rng.gamma(2, 1.0, args.units * args.rows).round(2)})
    data = work / f"in.{args.format}"
    frame.to_csv(data, index=False) if args.format == "csv" else frame.to_parquet(data, index=False)
    for name, text in SPECS.items():
        (work / f"{name}.toml").write_text(text)
    if args.engine == "spark":   # the session started, each spec run once: not timed
        for name in SPECS:
            run_once(name, work, data, args.engine)
    times: dict[str, list[float]] = {name: [] for name in SPECS}
    chosen: dict = {}
    for _ in range(args.reps):
        for name in SPECS:
            wall, bounds = run_once(name, work, data, args.engine)
            times[name].append(wall)
            chosen = bounds or chosen
    print(f"{args.engine}, {args.format}, {args.units * args.rows:,} rows")
    for name, ts in times.items():
        print(f"{name}: median {np.median(ts):.2f} s ({', '.join(f'{x:.2f}' for x in ts)})")
    print(f"ratio auto / declared: {np.median(times['auto']) / np.median(times['declared']):.2f}")
    print("chosen:", {k: v["chosen"] for k, v in chosen.items()})
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
