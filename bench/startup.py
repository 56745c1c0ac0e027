"""Benchmark: start-up of the command line against ``python -c "import numpy"`` (issues 12, 37).

Run: PYTHONPATH=src .venv/bin/python bench/startup.py [--runs N] [--imports] [--before SRC]

Each command is run N times (default 15) in fresh processes, interleaved so that machine
noise hits all of them alike; prints the median wall time, its ratio to the numpy baseline
measured in the same run and, for the 48-row query, its ratio to a script that imports pandas
and reads the same CSV file. The goals: ``optnoise --version``, ``query --help`` and a small
``verify`` within 3x of importing numpy; a 48-row query within 1.5x of the pandas script
(issue 37, item 2). ``--imports`` also prints where the 48-row query's time goes (the largest
packages in ``python -X importtime``, by self time, and the time outside them); ``--before SRC``
also runs ``query --help``, ``verify --compose 10`` and the two 48-row queries on another
checkout's ``src`` (the revision before a change) in the same rounds. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
OPTNOISE = [sys.executable, "-c", "from optnoise.cli import main; main()"]

#: The 48-row query: two households of 24 hourly rows, a histogram and a clamped sum (as bench/query.py).
SPEC = """\
unit = { id = "household", max_rows = 24 }
alpha = 0.05

[statistics.households]
kind = "histogram"
key = "circuit"
keys = [1, 2, 3]
epsilon = 1.0

[statistics.kwh]
kind = "sum"
column = "kwh"
clamp = { lower = 0, upper = 10 }
resolution = 0.1
by = "circuit"
groups = [1, 2, 3]
epsilon = 1.0
"""

PANDAS_READ = "import sys, pandas as pd; print(len(pd.read_csv(sys.argv[1])))"


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The 48-row CSV file and the query spec."""
    data, spec = folder / "meter.csv", folder / "query.toml"
    rows = [f"{h},{1 + h % 3},{t},{(h * 7 + t * 3) % 50 / 10:.1f}" for h in (1, 2) for t in range(24)]
    data.write_text("household,circuit,hour,kwh\n" + "\n".join(rows) + "\n")
    spec.write_text(SPEC)
    # the same statistics with calibrated cells: no optimal channel, so no LP (scipy.optimize)
    (folder / "query_calibrated.toml").write_text(SPEC.replace('epsilon = 1.0\n', 'epsilon = 1.0\n'
                                                             'mechanism = "clamped-geometric"\n'))
    return data, spec


def commands(folder: Path) -> dict[str, list[str]]:
    data, spec = write_inputs(folder)
    optnoise = [str(BIN / "optnoise")]
    return {
        "python -c 'import numpy' (baseline)": [sys.executable, "-c", "import numpy"],
        "optnoise --version": optnoise + ["--version"],
        "optnoise query --help": optnoise + ["query", "--help"],
        "optnoise verify (3-point PMF, --json)": optnoise + ["verify", "--pmf", "0.5,0.25,0.25", "--epsilon", "0.1",
                                                            "--json"],
        "optnoise verify --exact": optnoise + ["verify", "--pmf", "0.5,0.25,0.25", "--epsilon", "0.1", "--exact",
                                               "--json"],
        "optnoise verify --compose 10": optnoise + ["verify", "--family", "geometric:0.5", "--epsilon", "1",
                                                    "--delta", "1e-6", "--compose", "10", "--json"],
        "pandas: import, read the 48-row CSV (query baseline)": [sys.executable, "-c", PANDAS_READ, str(data)],
        "optnoise query, 48 rows (--json)": optnoise + ["query", "--spec", str(spec), "--input", str(data),
                                                        "--json"],
        "  the same, calibrated cells (no LP)": optnoise + ["query", "--spec", str(folder / "query_calibrated.toml"),
                                                            "--input", str(data), "--json"],
    }


def import_profile(folder: Path) -> None:
    """Where the 48-row query's time goes: ``-X importtime``'s self times summed by package
    (optnoise by subpackage), so that nothing is counted twice."""
    data, spec = write_inputs(folder)
    cmd = OPTNOISE + ["query", "--spec", str(spec), "--input", str(data), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-X", "importtime"] + cmd[1:], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    total: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if m:
            parts = m.group(2).split(".")
            key = ".".join(parts[:2]) if parts[0] == "optnoise" else parts[0]
            total[key] = total.get(key, 0) + int(m.group(1))
    imports = sum(total.values()) / 1e6
    print(f"\n48-row query under -X importtime (slower than a plain run): {wall:.3f} s wall, imports "
          f"{imports:.3f} s; the rest, {wall - imports:.3f} s, is the interpreter and the command's work")
    for name, us in sorted(total.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {name:<40} {us / 1e6:7.3f} s  {us / 1e6 / wall:5.1%}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--imports", action="store_true")
    ap.add_argument("--before", help="another checkout's src folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp))
        # As installed: bytecode cached (pip compiles on install; a sandbox's
        # PYTHONDONTWRITEBYTECODE=1 would recompile optnoise's sources on every run).
        plain = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        envs: dict[str, dict] = {name: plain for name in cmds}
        if args.before:
            for name in ("optnoise query --help", "optnoise verify --compose 10", "optnoise query, 48 rows (--json)",
                         "  the same, calibrated cells (no LP)"):
                label = f"before: {name.strip().removeprefix('optnoise ')}"
                cmds[label] = cmds[name]
                envs[label] = {**plain, "PYTHONPATH": args.before}
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for name, cmd in cmds.items():  # one warm-up run each: writes the bytecode caches
            subprocess.run(cmd, check=True, capture_output=True, env=envs[name])
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=envs[name])
                times[name].append(time.perf_counter() - t0)
        base = statistics.median(next(iter(times.values())))
        pandas = statistics.median(times["pandas: import, read the 48-row CSV (query baseline)"])
        print(f"# bench/startup.py, {args.runs} interleaved runs, load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
        print(f"{'command':<54} {'median s':>9} {'x numpy':>8} {'x pandas':>9}")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:<54} {med:9.3f} {med / base:8.2f} {med / pandas:9.2f}")
        if args.imports:
            import_profile(Path(tmp))


if __name__ == "__main__":
    main()
