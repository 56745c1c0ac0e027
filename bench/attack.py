"""Benchmark: the best attacker's TPR at FPR 5%, exactly, against the grid baseline.

Baseline ("delta grid"): what accounting libraries do (dp_accounting 2026 derives TPR at FPR
from a grid of 3,000 delta values): the tight profile's epsilon at 3,000 deltas (log-spaced
from 1e-12 to 0.5), each giving the bound TPR <= e^eps FPR + delta (and, symmetric,
1 - e^-eps (1 - delta - FPR)); the smallest over the grid. It reads the convex hull of the
curve, through a grid. optnoise: the exact curve (rational vertices, the envelope over the
pairs), float and exact. Printed: seconds (median of 3) and the TPR each gives; the ratio of
times and the grid's excess TPR over the exact value.

Run: .venv/bin/python bench/attack.py
"""

from __future__ import annotations

import math

import numpy as np
from timing import median_time

import optnoise
from optnoise import Neighbourhood
from optnoise.analysis import privacy_profile

FPR = 0.05


def grid_tpr(mech) -> float:
    prof = privacy_profile(mech.pmf, mech.neighbourhood)
    best = 1.0
    for d in np.logspace(-12, math.log10(0.5), 3000):
        e = prof.epsilon_dp(float(d))
        if math.isfinite(e):
            best = min(best, math.exp(e) * FPR + d, 1.0 - math.exp(-e) * (1.0 - d - FPR))
    return best


def cases():
    rng = np.random.default_rng(0)
    hour = optnoise.design_finite(23, epsilon=1.0, neighbourhood=Neighbourhood.bd(23), cost="circular-mse")
    yield "hour per record (n=23, 23 shifts)", hour.mechanism
    yield "geometric e^-1, SD 1 (Z, tails)", optnoise.geometric(epsilon=1.0)
    f = rng.dirichlet(np.full(1001, 5.0))
    yield "random cyclic n=1000, BD 5", optnoise.additive(f, sensitivity=5)
    m = rng.random((31, 31)) + 0.2
    yield "random channel 31x31, all pairs", optnoise.channel(m / m.sum(1, keepdims=True), distances=range(1, 31))


def main() -> None:
    print(f"{'case':36} {'grid s':>8} {'float s':>8} {'exact s':>8} {'grid/exact':>10} "
          f"{'TPR grid':>10} {'TPR exact':>10} {'grid excess':>11}")
    for name, mech in cases():
        t_grid, tpr_grid = median_time(lambda: grid_tpr(mech))
        t_float, _ = median_time(lambda: mech.tradeoff().tpr(FPR)[0])
        t_exact, tpr_exact = median_time(lambda: mech.tradeoff(exact=True).tpr(FPR)[0])
        print(f"{name:36} {t_grid:8.3f} {t_float:8.3f} {t_exact:8.3f} {t_grid / t_exact:10.2f} "
              f"{tpr_grid:10.6f} {tpr_exact:10.6f} {tpr_grid - tpr_exact:11.2e}")


if __name__ == "__main__":
    main()
