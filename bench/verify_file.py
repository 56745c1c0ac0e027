"""Benchmark: ``optnoise verify`` of a float PMF file at n = 1e6 against a numpy loop (issues 23, 37).

Run: PYTHONPATH=src .venv/bin/python bench/verify_file.py [--runs N] [--n 1000000] [--before SRC]

Both sides are whole processes (start-up, imports and reading the ``.npy`` included), run
interleaved N times (default 9) so that a load spike hits both; prints the medians, the
ratio of the medians and its spread over the rounds, with the load average. The baseline is
the obvious numpy script: load the file, delta_DP at one epsilon with one rolled copy per
ordered pair. ``optnoise verify`` does more (the tight pure epsilon, delta_PDP, the worst
pairs, the exact-sum check of the table). The goal of issue 37: within 3x. ``--before SRC``
also runs the command on another checkout's ``src`` (the revision before a change) in the
same rounds. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LOOP = """\
import math, sys
import numpy as np
f = np.load(sys.argv[1])
e = math.exp(float(sys.argv[2]))
print(max(float(np.maximum(f - e * np.roll(f, -mu), 0).sum()) for mu in (1, 2, -1, -2)))
"""


def bumpy(n: int, seed: int = 0) -> np.ndarray:
    """A peaked cyclic PMF with random bumps (as bench/exact_scale.py), its floats as they come."""
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    f = np.exp(-np.minimum(k, n - k) / (n / 50)) * rng.uniform(0.5, 1.5, n)
    return f / f.sum()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--before", help="another checkout's src folder, run as a third command")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.npy"
        np.save(path, bumpy(args.n))
        loop = Path(tmp) / "loop.py"
        loop.write_text(LOOP)
        verify = [str(Path(sys.executable).parent / "optnoise"), "verify", "--pmf-file", str(path), "--distances",
                  "1,2", "--epsilon", "1e-4", "--json"]
        cmds = {"optnoise verify": verify, "numpy loop": [sys.executable, str(loop), str(path), "1e-4"]}
        envs = {name: None for name in cmds}
        if args.before:
            cmds["before"], envs["before"] = verify, {**os.environ, "PYTHONPATH": args.before}
        times: dict[str, list[float]] = {k: [] for k in cmds}
        load = [os.getloadavg()[0]]
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=envs[name])
                times[name].append(time.perf_counter() - t0)
        load.append(os.getloadavg()[0])
    ours, base = statistics.median(times["optnoise verify"]), statistics.median(times["numpy loop"])
    ratios = [a / b for a, b in zip(times["optnoise verify"], times["numpy loop"])]
    print(f"# bench/verify_file.py, n = {args.n:.0e}, {args.runs} interleaved runs, load average "
          f"{load[0]:.1f} -> {load[1]:.1f} on {os.cpu_count()} cores")
    print(f"optnoise verify --pmf-file big.npy --distances 1,2 --epsilon 1e-4: {ours:.3f} s; numpy loop {base:.3f} s; "
          f"ratio {ours / base:.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]")
    if args.before:
        before = statistics.median(times["before"])
        print(f"the same command on {args.before}: {before:.3f} s, {before / base:.2f}x the numpy loop")


if __name__ == "__main__":
    main()
