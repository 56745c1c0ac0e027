"""Benchmark: start-up of the command line against ``python -c "import numpy"`` (issue 12).

Run: .venv/bin/python bench/startup.py [--runs N]
Each command is run N times (default 15) in fresh processes, interleaved so that machine
noise hits all of them alike; prints the median wall time and its ratio to the numpy
baseline measured in the same run. The goal: ``optnoise --version`` and a small ``verify``
within 3x of importing numpy. Asserts nothing.
"""

from __future__ import annotations

import argparse
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
    "optnoise verify --compose 10 (dp_accounting)": [str(BIN / "optnoise"), "verify", "--family", "geometric:0.5",
                                                     "--epsilon", "1", "--compose", "10", "--json"],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, cmd in COMMANDS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(next(iter(times.values())))
    print(f"{'command':<48} {'median s':>9} {'x numpy':>8}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<48} {med:9.3f} {med / base:8.2f}")


if __name__ == "__main__":
    main()
