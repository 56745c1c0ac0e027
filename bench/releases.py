"""Benchmark and worked example: noise for repeated releases (docs/repeated-releases.md).

The hour of the day (answers 0..23, noise added mod 24), a total budget of (eps 10, delta 1e-6)
for K daily releases, circular squared error. For each K: the K-release design, the
single-release optimum composed K times, and the geometric and discrete Gaussian calibrated for
K releases, each certified by the best of exact enumeration, PLD, RDP and the pure bound.

Run: .venv/bin/python bench/releases.py [--quick] [--per-record] [--line] [--figures DIR] [--json PATH]

* default: neighbours one hour apart (SD 1), K = 1, 10, 100, 365 (about 1 min);
* ``--per-record``: also the record-level neighbourhood (any hour may become any other) at
  K = 365 (about 3 min);
* ``--line``: also noise on the integer line (SD 1, squared error) at K = 365 (about 30 s);
* ``--figures DIR``: the privacy profile after 365 releases and the cost against K.
Prints a table; nothing is asserted. Times are single runs on a shared machine.
"""

from __future__ import annotations

import argparse
import time

from optnoise import Neighbourhood
from optnoise.design.releases import compare_releases
from optnoise.io import dumps

N, EPSILON, DELTA, COST = 23, 10.0, 1e-6, "circular-mse"


def _run(label: str, n: int | None, k: int, nb: Neighbourhood, cost: str, space: str = "cyclic"):
    t0 = time.perf_counter()
    comp = compare_releases(n, k, epsilon=EPSILON, delta=DELTA, neighbourhood=nb, cost=cost, space=space)
    seconds = time.perf_counter() - t0
    ref = comp.row("k-release").expected_cost
    for r in comp.rows:
        bound = r.composed.bound["epsilon_dp"]
        print(f"{label:<22} {k:>4}  {r.mechanism:<18} {r.expected_cost:>11.6g} {r.expected_cost / ref:>7.4f} "
              f"{r.composed.epsilon_dp:>9.6f} {bound:<6} {r.note[:48]}")
    print(f"{'':<22} {'':>4}  best: {comp.best} ({seconds:.1f} s)")
    return comp, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="K = 1 and 10 only")
    ap.add_argument("--per-record", action="store_true", help="also every distance at K = 365 (~3 min)")
    ap.add_argument("--line", action="store_true", help="also noise on the integer line at K = 365 (~30 s)")
    ap.add_argument("--figures", default=None, help="directory for the figures")
    ap.add_argument("--json", default=None, help="write every comparison as JSON")
    args = ap.parse_args()
    ks = (1, 10) if args.quick else (1, 10, 100, 365)
    print(f"{'case':<22} {'K':>4}  {'mechanism':<18} {'cost':>11} {'ratio':>7} {'eps(K)':>9} {'bound':<6} note")
    results = []
    hour = Neighbourhood.sd(1)
    comps = []
    for k in ks:
        comp, s = _run("hour, SD 1", N, k, hour, COST)
        comps.append(comp)
        results.append({"case": "hour, SD 1", "seconds": s, **comp.to_json()})
    if args.per_record:
        comp, s = _run("hour, every distance", N, 365, Neighbourhood(tuple(range(1, N + 1))), COST)
        results.append({"case": "hour, every distance", "seconds": s, **comp.to_json()})
    if args.line:
        comp, s = _run("integer line, SD 1, sq", None, 365, hour, "sq", space="integer")
        results.append({"case": "integer line, SD 1, sq", "seconds": s, **comp.to_json()})
    if args.figures:
        from pathlib import Path

        from optnoise.plots import plot_releases
        out = Path(args.figures)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "repeated-releases-hour.png"
        plot_releases(comps, path, title=f"hour of the day (n = {N}), neighbours one hour apart, total "
                                         f"(eps {EPSILON:g}, delta {DELTA:g}), {COST}")
        print(f"figure: {path}")
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(dumps({"results": results}))
        print(f"json: {args.json}")


if __name__ == "__main__":
    main()
