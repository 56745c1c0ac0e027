"""Benchmark: design solve times (median of 3), issue 3's cases.

Run: .venv/bin/python bench/design.py [--quick]
Prints a table; nothing is asserted. Times include model building and polishing.
"""

from __future__ import annotations

import argparse
import statistics
import time

from optnoise import Neighbourhood
from optnoise.design import design_finite
from optnoise.errors import DesignError


def _time(fn, repeats: int) -> tuple[float, str]:
    times, status = [], "ok"
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            fn()
        except DesignError as exc:
            status = f"limit: {str(exc)[:60]}"
        times.append(time.perf_counter() - t0)
    return statistics.median(times), status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    rep = 1 if args.quick else 3
    rows = []
    lp_sizes = (256, 1024) if args.quick else (256, 1024, 4096, 16384)
    for n in lp_sizes:
        for d in (0.0, 0.05):
            t, s = _time(lambda: design_finite(n, epsilon=1.0, delta=d, neighbourhood=Neighbourhood.bd(3),
                                               cost="mse"), rep)
            rows.append((f"DP LP, symmetric BD 3, eps 1, delta {d}, MSE", n, t, s))
    milp_sizes = (64, 256) if args.quick else (64, 128, 256, 512, 1024)
    for n in milp_sizes:
        for cost in ("er", "mse"):
            t, s = _time(lambda: design_finite(n, epsilon=1.0, delta=0.05, neighbourhood=Neighbourhood.bd(3, directed=True),
                                               notion="pdp", cost=cost, time_limit=args.time_limit), rep)
            rows.append((f"PDP MILP, directed BD 3, eps 1, delta 0.05, {cost.upper()}", n, t, s))
    for n in (64, 256):
        for directed in (True, False):
            t, s = _time(lambda: design_finite(n, epsilon=0.2, delta=0.1, neighbourhood=Neighbourhood.bd(3, directed=directed),
                                               notion="pdp", cost="mse", time_limit=args.time_limit), 1)
            rows.append((f"hard: PDP eps 0.2 delta 0.1 MSE BD 3 {'directed' if directed else 'symmetric'}", n, t, s))
    print(f"{'case':<58} {'n':>6} {'seconds':>9}  status")
    for name, n, t, s in rows:
        print(f"{name:<58} {n:>6} {t:>9.3f}  {s}")


if __name__ == "__main__":
    main()
