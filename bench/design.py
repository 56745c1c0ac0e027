"""Benchmark: finite-domain designs at scale, side by side with a baseline revision (issue 14).

Run: .venv/bin/python bench/design.py [--quick] [--baseline-rev REV] [--repeats R] [--big]

Every case runs in a fresh process, once with this tree's ``src`` and once with the
``src`` of ``--baseline-rev`` (``git archive``; default: the commit before the issue-14
design work), interleaved, ``--repeats`` times. Printed per case: median seconds and the
spread (min-max) of each side, the median peak RSS (``ru_maxrss`` of the process, so the
interpreter and numpy are included, about 0.07 GB; a warm-up design on n = 8 runs first and is
not timed), the objective of each side and the
ratio baseline / new. Nothing is asserted. ``--big`` adds n = 1e6 (the baseline then needs
about 14 GB and 2-4 minutes; it runs once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_REV = "47a1e41"

CHILD = r"""
import json, resource, sys, time
from optnoise import Neighbourhood
from optnoise.design import design_finite
case = json.loads(sys.argv[1])
kw = dict(case["kw"])
nb = Neighbourhood.bd(case["bd"], directed=case["directed"])
design_finite(8, neighbourhood=nb, **kw)   # imports and solver start-up are not timed
t0 = time.perf_counter()
try:
    r = design_finite(case["n"], neighbourhood=nb, **kw)
    out = dict(seconds=time.perf_counter() - t0, cost=r.expected_cost, status="ok")
except Exception as exc:  # a time limit is a result here
    out = dict(seconds=time.perf_counter() - t0, cost=float("nan"), status=str(exc)[:70])
out["rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
print(json.dumps(out))
"""


def baseline_src(rev: str, into: Path) -> Path:
    """The ``src`` directory of revision ``rev``, extracted under ``into``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run(src: Path, case: dict, new_only: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    spec = dict(case, kw={**case["kw"], **new_only})
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        return dict(seconds=float("nan"), cost=float("nan"), rss_gb=float("nan"), status=proc.stderr.strip()[-70:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cases(quick: bool, big: bool, only: str | None) -> list[tuple[str, dict, int]]:
    """(label, case, repeats of the baseline: -1 = as many as the new side, 0 = none) per case."""
    out = []
    lp_sizes = (10_000, 100_000)
    for n in lp_sizes + ((1_000_000,) if big else ()):
        for delta, cost in ((0.05, "mse"), (0.0, "circular-mse")):
            out.append((f"DP LP sym BD3 eps1 delta {delta} {cost}",
                        dict(n=n, bd=3, directed=False, kw=dict(epsilon=1.0, delta=delta, cost=cost)),
                        1 if n >= 1_000_000 else -1))
    milp_sizes = (256, 1024) if quick else (256, 1024, 4096)
    for n in milp_sizes:
        for directed in (True, False):
            for cost in ("er", "mse"):
                out.append((f"PDP MILP {'dir' if directed else 'sym'} BD3 eps1 delta 0.05 {cost}",
                            dict(n=n, bd=3, directed=directed,
                                 kw=dict(epsilon=1.0, delta=0.05, notion="pdp", cost=cost, time_limit=300.0)),
                            (0 if directed else 1) if n >= 4096 else 1 if n >= 1024 and not directed else -1))
    return [c for c in out if only is None or c[0].startswith({"lp": "DP LP", "milp": "PDP MILP"}[only])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    ap.add_argument("--big", action="store_true", help="add n = 1e6 for the LP (baseline: ~14 GB)")
    ap.add_argument("--baseline-rev", default=BASELINE_REV)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full-lp", action="store_true",
                    help="new side: all rows at once (row_generation=False), to measure the LP builder alone")
    ap.add_argument("--only", choices=("lp", "milp"))
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    new_only = {"row_generation": False} if args.full_lp else {}
    print(f"{'case':<44} {'n':>8} | {'base s (min-max)':>22} {'GB':>6} | {'new s (min-max)':>20} {'GB':>6} "
          f"| {'x faster':>8} {'x less mem':>10} | objective base / new")
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_src(args.baseline_rev, Path(tmp))
        for label, case, base_repeats in cases(args.quick, args.big, args.only):
            nb_rep = repeats if base_repeats < 0 else min(base_repeats, repeats)
            rb, rn = [], []
            for i in range(repeats):
                if i < nb_rep:
                    rb.append(run(base, case, {}))
                rn.append(run(ROOT / "src", case, new_only if "notion" not in case["kw"] else {}))
            print(_row(label, case["n"], rb, rn), flush=True)


def _summary(results: list[dict]) -> tuple[float, str, float, str, float]:
    secs = [r["seconds"] for r in results]
    med = statistics.median(secs)
    spread = f"{med:8.2f} ({min(secs):.2f}-{max(secs):.2f})"
    status = next((r["status"] for r in results if r["status"] != "ok"), "ok")
    return med, spread, statistics.median(r["rss_gb"] for r in results), status, results[0]["cost"]


def _row(label: str, n: int, rb: list[dict], rn: list[dict]) -> str:
    mn, sn, gn, stn, cn = _summary(rn)
    if rb:
        mb, sb, gb, stb, cb = _summary(rb)
        ratio, mem = f"{mb / mn:8.1f}", f"{gb / gn:10.1f}"
    else:
        sb, gb, stb, cb, ratio, mem = "(not run)", float("nan"), "ok", float("nan"), "", ""
    tail = f"{cb:.10g} / {cn:.10g}" + ("" if stb == "ok" else f"  base: {stb}") + ("" if stn == "ok" else f"  new: {stn}")
    return f"{label:<44} {n:>8} | {sb:>22} {gb:6.2f} | {sn:>20} {gn:6.2f} | {ratio:>8} {mem:>10} | {tail}"


if __name__ == "__main__":
    main()
