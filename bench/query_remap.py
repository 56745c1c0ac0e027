"""The query's default count cell above n = 2,000 (issue 37, item 3): the geometric noise with a
remap against the calibrated clamped geometric it replaces, and the query's time.

Run: .venv/bin/python bench/query_remap.py [--sizes 2500,5000,10000,20000] [--epsilons 0.1,0.5,1]
     [--previous /path/to/other/src] [--repeats 3]

Table 1, per (N, eps), a count of units (neighbours one apart, pure eps): which mechanism the
default cell chooses (:func:`optnoise.query.mechanisms.count_cell`), the number of outputs its
remap moves, ``E|y - q|`` averaged over a uniform ``q`` and in the worst case over ``q`` for the
default and for ``mechanism = "clamped-geometric"`` (from the quantized weights,
:func:`optnoise.query.intervals.expected_abs_error` and the cell's design figures), the 95 %
interval's largest width, and the seconds to build the default cell.

Table 2: ``optnoise.query`` of a histogram of 3 keys over 10,000 units (add-remove,
``max_units`` 10,000) at each eps, seconds of the ``optnoise.query`` call in a fresh process (imports inside the call included;
byte code cached for both after a warm-up run), this
``src`` and ``--previous`` (another checkout's ``src``) alternately, best of ``--repeats``.
Asserts nothing; the figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERY = """
import json, sys, time, warnings
import numpy as np, pandas as pd
import optnoise
eps = float(sys.argv[1])
rng = np.random.default_rng(0)
frame = pd.DataFrame({"u": np.arange(9_000), "k": rng.integers(0, 3, 9_000)})
spec = {"unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 10_000},
        "statistics": {"h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": eps}}}
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    doc = optnoise.query(frame, spec, seed=1)
print(json.dumps({"seconds": time.perf_counter() - t, "mechanism": str(doc["statistics"]["h"]["mechanism"])[:60]}))
"""


def cell_row(n: int, eps: float) -> str:
    from optnoise.query.intervals import expected_abs_error, interval
    from optnoise.query.mechanisms import clamped_errors, count_cell
    from optnoise.target import Target
    t0 = time.perf_counter()
    cell = count_cell("c", n, 0, 1, Target(eps))
    seconds = time.perf_counter() - t0
    plain = count_cell("c", n, 0, 1, Target(eps), "clamped-geometric")
    y = np.arange(n + 1)
    widths = []
    for c in (cell, plain):
        lo, hi, _ = interval(c, y, 0.05)
        widths.append(int((hi - lo).max()))
    avg = float(clamped_errors(cell.noise, n).per_value.mean())
    avg0 = float(clamped_errors(plain.noise, n).per_value.mean())
    moved = len(cell.noise.release.outputs) if cell.noise.release is not None else 0
    chosen = "remap" if cell.noise.release is not None else "clamped geometric"
    return (f"| {n:,} | {eps:g} | {chosen} | {moved} | {avg0:.6f} | {avg:.6f} | {(avg0 - avg) / avg0:.2e} | "
            f"{expected_abs_error(plain)[0]:.6f} | {expected_abs_error(cell)[0]:.6f} | {widths[1]} / {widths[0]} | "
            f"{seconds:.2f} |")


#: Byte code of both checkouts, cached apart from theirs: the same start for both.
PYCACHE = tempfile.mkdtemp(prefix="query_remap_pyc_")


def query_seconds(src: str, eps: float) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=PYCACHE)   # both compiled once, by the warm-up run
    out = subprocess.run([sys.executable, "-c", QUERY, str(eps)], env=env, capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return found["seconds"], found["mechanism"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2500,5000,10000,20000")
    parser.add_argument("--epsilons", default="0.1,0.5,1")
    parser.add_argument("--previous", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| N | eps | default | outputs moved | clamped geometric: average E\\|y-q\\| | default: average | gain | "
          "clamped geometric: worst | default: worst | 95 % largest width: clamped geometric / default | "
          "seconds to build |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        for eps in (float(s) for s in args.epsilons.split(",")):
            print(cell_row(n, eps), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    here = str(Path(__file__).resolve().parents[1] / "src")
    srcs = [("this", here)] + ([("previous", args.previous)] if args.previous else [])
    for _, src in srcs:
        query_seconds(src, 1.0)   # warm-up: byte code compiled and cached
    for eps in (float(s) for s in args.epsilons.split(",")):
        best: dict[str, float] = {}
        what: dict[str, str] = {}
        for _ in range(args.repeats):
            for name, src in srcs:
                s, m = query_seconds(src, eps)
                best[name], what[name] = min(best.get(name, s), s), m
        print(f"query N = 10,000, eps {eps:g}: " + "; ".join(f"{k} {best[k]:.2f} s ({what[k]!r})" for k in best)
              + (f"; ratio {best['this'] / best['previous']:.2f}" if "previous" in best else ""), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
