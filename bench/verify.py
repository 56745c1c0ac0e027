"""Benchmark: exact analysis of a cyclic PMF (verify) at n = 1e4, 1e5, 1e6, |M| = 2.

Run: .venv/bin/python bench/verify.py   (or `make bench`)
Times are the median of 5 runs on this machine; nothing here is asserted.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from optnoise import CyclicPMF, Neighbourhood, privacy_profile


def _median_time(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    nb = Neighbourhood.sd(1)  # symmetric: shifts +1 and -1, |M| = 2
    print(f"{'n':>9} {'delta@eps (s)':>14} {'full verify (s)':>16} {'exact n=1e4 (s)':>16}")
    for n in (10_000, 100_000, 1_000_000):
        f = rng.dirichlet(np.ones(n + 1))
        pmf = CyclicPMF(f)

        def single():
            prof = privacy_profile(pmf, nb)
            prof.epsilon_pure
            prof.delta_dp(0.5)
            prof.delta_pdp(0.5)

        def full():
            prof = privacy_profile(pmf, nb)
            prof.epsilon_pure
            prof.delta_dp(0.5)
            prof.delta_pdp(0.5)
            prof.epsilon_dp(1e-3)
            prof.epsilon_pdp(1e-3)

        exact = ""
        if n == 10_000:
            w = rng.integers(1, 2**20, n + 1)
            epmf = CyclicPMF.from_weights(w)

            def ex():
                prof = privacy_profile(epmf, nb, exact=True)
                prof.epsilon_pure
                prof.delta_dp(0.5)
                prof.epsilon_dp(1e-3)

            exact = f"{_median_time(ex, 3):.3f}"
        print(f"{n:>9} {_median_time(single):>14.4f} {_median_time(full):>16.4f} {exact:>16}")


if __name__ == "__main__":
    main()
