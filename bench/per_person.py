"""Benchmark: per-person statistics with ``optnoise query`` (local engine) against a plain pandas
script applying the same unit rules (issue 37, item 1).

Run: .venv/bin/python bench/per_person.py [--rows 5e6] [--households 200000] [--repeats 1]
     [--sides optnoise,pandas] [--base-src ../main/src] [--check] [--dir DIR]

Input: a CSV written once (removed at the end): ``household`` (``--households`` integer ids),
``circuit`` (1..12), ``hour`` (0..23), ``kwh`` (gamma(2, 0.6), three decimals, a few above
10). Rows come in reading order, not by household: each row's household is drawn at random
with a weight per household (gamma(2) weights, so some households have far more than
``max_rows`` rows and most are spread over the whole file); a household's rows are in its main
circuit (``household % 12 + 1``) three times out of four, else in a random circuit; the hour is
random. The households stay fixed as ``--rows`` grows, so the rows per household grow.

The spec (``SPEC``): the unit is a household with at most 50 rows; a **histogram of households
by hour within circuit** (``key = "hour"``, ``by = "circuit"``: each household counted once,
at the (circuit, hour) of most of its first 50 rows, ties to the first declared) and a
**clamped kWh sum by circuit** (0..10 kWh at resolution 0.1, each household's rows in its
majority circuit only), eps = 1 each.

The baseline (``BASELINE``): pandas + numpy reading the four columns with ``read_csv``, the
first 50 rows of each household in file order (``cumcount``), its majority (circuit, hour)
cell and its majority circuit (counts per household and cell, most rows first, then the least
cell), units counted per cell, the clamped and rounded kWh summed per circuit over each
household's rows in its majority circuit, two-sided geometric noise drawn with numpy, JSON.
``--check`` first compares the baseline's exact answers with optnoise's (the library's
aggregate and answers, in this process) on the same file: the two apply the same rules.

``--base-src`` adds a side ``base``: ``optnoise query`` from another checkout's ``src`` (e.g.
main before a change), in the same interleaved runs.

Each run is a fresh process (bytecode compiled first, as an installed package has it): wall
time and peak RSS (GNU time's ``%M``), medians over ``--repeats`` interleaved runs, ratios to
the baseline of the same run, and the load average; also the CPU seconds of each process (user
and system, from ``getrusage`` of the children: less moved by other jobs than wall time).
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import process_run

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
OPTNOISE = [sys.executable, "-c", "from optnoise.cli import main; main()"]
MAX_ROWS = 50

SPEC = f"""\
unit = {{ id = "household", max_rows = {MAX_ROWS} }}
alpha = 0.05

[statistics.by_hour]                # households by hour within circuit
kind = "histogram"
key = "hour"
keys = {list(range(24))}
by = "circuit"
groups = {list(range(1, 13))}
epsilon = 1.0

[statistics.kwh]                    # clamped kWh sum by circuit
kind = "sum"
column = "kwh"
clamp = {{ lower = 0, upper = 10 }}
resolution = 0.1
by = "circuit"
groups = {list(range(1, 13))}
epsilon = 1.0
"""

BASELINE = r'''
import json, sys
import numpy as np, pandas as pd
EPS, MAX_ROWS, UPPER, RES, CIRCUITS, HOURS = 1.0, 50, 10.0, 0.1, 12, 24

def exact(path):
    df = pd.read_csv(path, usecols=["household", "circuit", "hour", "kwh"])
    df = df[df.groupby("household", sort=False).cumcount() < MAX_ROWS]          # first 50 rows in file order
    unit = df["household"].to_numpy()
    circuit = df["circuit"].to_numpy(np.int64) - 1
    cell = circuit * HOURS + df["hour"].to_numpy(np.int64)
    kwh = np.clip(np.rint(df["kwh"].to_numpy(float) / RES), 0, round(UPPER / RES)).astype(np.int64)

    def home(keys):      # each household's key of most rows, ties to the least key
        c = pd.DataFrame({"u": unit, "k": keys}).groupby(["u", "k"]).size().reset_index(name="n")
        c = c.sort_values(["u", "n", "k"], ascending=[True, False, True], kind="stable")
        return c.drop_duplicates("u").set_index("u")["k"]

    hist = np.bincount(home(cell).to_numpy(), minlength=CIRCUITS * HOURS).reshape(CIRCUITS, HOURS)
    in_home = home(circuit).reindex(unit).to_numpy() == circuit
    sums = np.bincount(circuit[in_home], weights=kwh[in_home], minlength=CIRCUITS).astype(np.int64)
    return hist, sums, len(np.unique(unit))

def geometric(rng, alpha, size):
    return rng.geometric(1 - alpha, size) - rng.geometric(1 - alpha, size)

if __name__ == "__main__":
    hist, sums, units = exact(sys.argv[1])
    rng = np.random.default_rng()
    hist = np.clip(hist + geometric(rng, np.exp(-EPS / 2), hist.shape), 0, units)
    top = units * MAX_ROWS * round(UPPER / RES)
    sums = np.clip(sums + geometric(rng, np.exp(-EPS / (2 * MAX_ROWS * round(UPPER / RES))), sums.shape), 0, top)
    with open(sys.argv[2], "w") as fh:
        json.dump({"by_hour": hist.tolist(), "kwh": (sums * RES).tolist()}, fh)
'''


def make_input(path: Path, rows: int, households: int, seed: int = 37) -> None:
    """The meter table (module docstring), written in chunks with pyarrow's CSV writer."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    rng = np.random.default_rng(seed)
    weight = rng.gamma(2.0, 1.0, households)
    cdf = np.cumsum(weight / weight.sum())
    chunk = 1 << 20
    options = pcsv.WriteOptions(quoting_style="none")
    with pcsv.CSVWriter(str(path), pa.schema([("household", pa.int64()), ("circuit", pa.int64()),
                                              ("hour", pa.int64()), ("kwh", pa.string())]), write_options=options) as writer:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            house = np.minimum(np.searchsorted(cdf, rng.random(n)), households - 1)
            main = rng.random(n) < 0.75
            circuit = np.where(main, house % 12 + 1, rng.integers(1, 13, n))
            kwh = np.char.mod("%.3f", rng.gamma(2.0, 0.6, n))
            writer.write_table(pa.table({"household": house, "circuit": circuit, "hour": rng.integers(0, 24, n),
                                         "kwh": kwh}))


def check(scratch: Path, inp: Path) -> dict:
    """The baseline's exact answers against optnoise's (library) on the same file."""
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(scratch))
    import numpy as np
    import baseline_per_person as base
    from optnoise.publish.files import read_batches
    from optnoise.query.aggregate import aggregate, answers
    from optnoise.query.spec import parse_query_spec
    import tomllib
    spec = parse_query_spec(tomllib.loads(SPEC))
    agg = aggregate(read_batches(inp, "csv", list(spec.columns)), spec)
    got = {s.name: answers(agg, s).cells for s in spec.statistics}
    hist, sums, units = base.exact(inp)
    return {"histogram_equal": bool(np.array_equal(got["by_hour"], hist)),
            "sum_equal": bool(np.array_equal(got["kwh"].reshape(-1), sums)), "units": units,
            "units_equal": agg.units == units}


def command(kind: str, scratch: Path, inp: Path, out: Path) -> list[str]:
    if kind in ("optnoise", "base"):
        return OPTNOISE + ["query", "--input", str(inp), "--spec", str(scratch / "spec.toml"), "--output", str(out),
                           "--force"]
    return [sys.executable, str(scratch / "baseline_per_person.py"), str(inp), str(out)]


def measure(repeats: int, scratch: Path, inp: Path, sides: list[str], base_src: str | None = None) -> dict:
    """Interleaved runs of every side; medians and ratios to the baseline."""
    envs = {k: ENV for k in sides}
    if base_src:
        envs["base"] = {**os.environ, "PYTHONPATH": str(Path(base_src).resolve())}
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    loads = []
    for _ in range(repeats):
        for kind in sides:
            loads.append(os.getloadavg()[0])
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, rss, _ = process_run(command(kind, scratch, inp, scratch / "out.json"), envs[kind])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            runs[kind].append((wall, rss, cpu))
    row: dict = {"runs": runs, "load": [min(loads), max(loads)]}
    for k, v in runs.items():
        row[f"{k}_s"], row[f"{k}_rss_mb"] = statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)
        row[f"{k}_cpu_s"] = statistics.median(r[2] for r in v)
    if "optnoise" in runs and "pandas" in runs:
        row["time_ratio"] = row["optnoise_s"] / row["pandas_s"]
        row["cpu_ratio"] = row["optnoise_cpu_s"] / row["pandas_cpu_s"]
        row["rss_ratio"] = row["optnoise_rss_mb"] / row["pandas_rss_mb"]
    if "base" in runs and "pandas" in runs:
        row["base_time_ratio"] = row["base_s"] / row["pandas_s"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="5e6", help="rows of the table; several, comma-separated, run one after another")
    ap.add_argument("--households", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--sides", default="optnoise,pandas")
    ap.add_argument("--check", action="store_true", help="compare the exact answers first")
    ap.add_argument("--base-src", help="another checkout's src: adds the side 'base' (optnoise from there)")
    ap.add_argument("--dir", default=None, help="scratch directory (default: a new one in the system's temp dir)")
    args = ap.parse_args()
    sides = args.sides.split(",") + (["base"] if args.base_src else [])
    for src in [ROOT / "src"] + ([Path(args.base_src)] if args.base_src else []):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "optnoise")], check=True,
                       stdout=subprocess.DEVNULL)
    scratch = Path(tempfile.mkdtemp(prefix="optnoise-bench-per-person-", dir=args.dir))
    results = []
    try:
        (scratch / "spec.toml").write_text(SPEC)
        (scratch / "baseline_per_person.py").write_text(BASELINE)
        for rows in (int(float(r)) for r in args.rows.split(",")):
            inp = scratch / f"meters_{rows}.csv"
            make_input(inp, rows, args.households)
            row = {"rows": rows, "households": args.households, "csv_mb": inp.stat().st_size / 1e6}
            if args.check:
                row["check"] = check(scratch, inp)
                print(f"check {rows:,d} rows: {row['check']}", flush=True)
            row.update(measure(args.repeats, scratch, inp, sides, args.base_src))
            shown = " | ".join(f"{k} {row[k + '_s']:6.2f} s ({row[k + '_cpu_s']:.1f} s CPU) {row[k + '_rss_mb']:6.0f} MB"
                               for k in sides)
            ratio = (f" | time x{row['time_ratio']:.2f} (CPU x{row['cpu_ratio']:.2f}) | peak RSS x{row['rss_ratio']:.2f}"
                     if "time_ratio" in row else "")
            ratio += f" | base time x{row['base_time_ratio']:.2f}" if "base_time_ratio" in row else ""
            print(f"{rows:>11,d} rows: {shown}{ratio} | load {row['load'][0]:.1f}-{row['load'][1]:.1f}", flush=True)
            results.append(row)
            inp.unlink()
        print(json.dumps(results))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
