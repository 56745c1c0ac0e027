"""Benchmark: the integer-line LP (Geng & Viswanath) and the Wasserstein LP (Qin et al.).

Run: .venv/bin/python bench/staircase.py [--quick]
Prints median-of-3 wall times (model building, solve, ratio lift and certificate
included); nothing is asserted. Targets from issue 4: integer LP for Delta = 10,
eps = 1, window +-2000 under 1 s.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import median_time

from optnoise.design.integer import design_integer
from optnoise.design.wasserstein import design_wasserstein, input_distribution
from optnoise.families.staircase import r_star


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one repeat")
    args = ap.parse_args()
    rep = 1 if args.quick else 3
    print("integer-line LP, eps = 1, Delta = 10 (closed-form check: min_r cost(P_r))")
    print(f"{'window':>8} {'cost':>5} {'path':>10} {'seconds':>9} {'rel. gap':>9}")
    for half in (200, 2000):
        for cost, path in (("abs", "symmetric"), ("sq", "symmetric"),
                           (lambda x: np.abs(x) * (1.0 + 1e-12 * (x > 0)), "general")):
            name = cost if isinstance(cost, str) else "abs"
            t, des = median_time(lambda: design_integer(1.0, 10, cost, half_width=half), rep)
            ref = r_star(1.0, 10, name).expected_cost
            print(f"{half:>8} {name:>5} {path:>10} {t:9.3f} {abs(des.expected_cost - ref) / ref:9.1e}")
    print()
    print("Wasserstein LP, m = 15 (Qin et al.'s simulation setting)")
    print(f"{'input':>16} {'eps':>5} {'objective':>13} {'seconds':>9} {'W1':>10}")
    for spec in ("gaussian:0,10", "poisson:5"):
        x = input_distribution(spec)[0]
        for eps in (0.5, 2.0, 4.0):
            for obj in ("w1", "expected-abs"):
                t, des = median_time(lambda: design_wasserstein(x, eps, 15, objective=obj), rep)
                print(f"{spec:>16} {eps:5.1f} {obj:>13} {t:9.3f} {des.w1:10.5f}")


if __name__ == "__main__":
    main()
