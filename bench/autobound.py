"""Bounds chosen privately (issue 36 item 5): the cost of ``max_rows = "auto"`` and
``clamp = "auto"`` against the same query with the bounds declared, side by side.

Run: .venv/bin/python bench/autobound.py [--units 200000] [--rows 10] [--reps 3] [--dir DIR]

One CSV (``units`` units, ``rows`` rows each, shuffled; a ``kwh`` column, gamma(2, 1) rounded
to 0.01); a sum of ``kwh`` at epsilon 1, resolution 0.01: declared ``max_rows = 16``, clamp
``[0, 8]``; auto ``max_rows = "auto"`` (``bound_epsilon = 0.1``) and ``clamp = "auto"``
(``clamp_cap = 64``). Each spec is run through the command line (``optnoise query --json``)
``reps`` times, alternating; prints the median wall times, their ratio, the chosen bounds and
the load average.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=200_000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="autobound-"))
    rng = np.random.default_rng(0)
    pd.DataFrame({"h": rng.permutation(np.repeat(np.arange(args.units), args.rows)),
                  "kwh": rng.gamma(2, 1.0, args.units * args.rows).round(2)}).to_csv(work / "in.csv", index=False)
    for name, text in SPECS.items():
        (work / f"{name}.toml").write_text(text)
    cli = shutil.which("optnoise") or "optnoise"
    times: dict[str, list[float]] = {name: [] for name in SPECS}
    chosen = {}
    for _ in range(args.reps):
        for name in SPECS:
            t = time.perf_counter()
            out = subprocess.run([cli, "query", "--spec", str(work / f"{name}.toml"), "--input", str(work / "in.csv"),
                                  "--json"], capture_output=True, text=True, check=True).stdout
            times[name].append(time.perf_counter() - t)
            chosen = json.loads(out).get("bounds", chosen)
    for name, ts in times.items():
        print(f"{name}: median {np.median(ts):.2f} s ({', '.join(f'{x:.2f}' for x in ts)})")
    print(f"ratio auto / declared: {np.median(times['auto']) / np.median(times['declared']):.2f}")
    print("chosen:", {k: v["chosen"] for k, v in chosen.items()})
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
