"""Benchmark: start-up of the command line against ``python -c "import numpy"`` (issue 12).

Run: .venv/bin/python bench/startup.py [--runs N]
Each command is run N times (default 15) in fresh processes, interleaved so that machine
noise hits all of them alike; prints the median wall time and its ratio to the numpy
baseline measured in the same run. The goal: ``optnoise --version``, a small ``verify`` and
``verify --family geometric:0.5 --epsilon 1 --delta 1e-6 --compose 10`` within 3x of
importing numpy (issues 12 and 37). Asserts nothing. ``--src DIR`` times another checkout's
``src`` (e.g. main's, for a before/after in one run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = {
    "python -c 'import numpy' (baseline)": [sys.executable, "-c", "import numpy"],
    "optnoise --version": [str(BIN / "optnoise"), "--version"],
    "optnoise verify (3-point PMF, --json)": [str(BIN / "optnoise"), "verify", "--pmf", "0.5,0.25,0.25",
                                              "--epsilon", "0.1", "--json"],
    "optnoise verify --exact": [str(BIN / "optnoise"), "verify", "--pmf", "0.5,0.25,0.25", "--epsilon", "0.1",
                                "--exact", "--json"],
    # issue 37's command: the PLD candidate composed by numpy's FFT, no dp_accounting import
    "optnoise verify --compose 10 --delta 1e-6": [str(BIN / "optnoise"), "verify", "--family", "geometric:0.5",
                                                   "--epsilon", "1", "--delta", "1e-6", "--compose", "10",
                                                   "--json"],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--src", action="append", default=[], help="also time the commands with this src on PYTHONPATH")
    args = ap.parse_args()
    env = dict(os.environ)
    runs = {name: (cmd, env) for name, cmd in COMMANDS.items()}
    for src in args.src:
        other = dict(env, PYTHONPATH=str(Path(src).resolve()))
        runs.update({f"{name} [{src}]": (cmd, other) for name, cmd in list(COMMANDS.items())[1:]})
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.runs):
        for name, (cmd, run_env) in runs.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=run_env)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(next(iter(times.values())))
    width = max(len(name) for name in times) + 1
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'command':<{width}} {'median s':>9} {'x numpy':>8}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<{width}} {med:9.3f} {med / base:8.2f}")


if __name__ == "__main__":
    main()
