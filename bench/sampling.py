"""Benchmark: draws per second of the exact samplers (median of 3).

Run: .venv/bin/python bench/sampling.py
Compares the quantized CSPRNG sampler with numpy's float ``Generator.choice``
(same PMF, not exact, not private) in the same run; prints ratios, asserts nothing.
"""

from __future__ import annotations

import statistics
import time
from fractions import Fraction

import numpy as np

from optnoise import Neighbourhood, design_finite
from optnoise.randomness import SystemRandomSource
from optnoise.sampling import discrete_gaussian, discrete_laplace


def _rate(fn, count: int) -> float:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return count / statistics.median(times)


def main() -> None:
    nb = Neighbourhood.sd(1)
    d = design_finite(23, epsilon=1.0, neighbourhood=nb, cost="circular-mse")
    t0 = time.perf_counter()
    q = d.mechanism.quantize()
    print(f"quantize + exact certificate (n = 23): {time.perf_counter() - t0:.3f} s, {q.bits} bits")
    count = 2_000_000
    ours = _rate(lambda: q.draw(count, SystemRandomSource()), count)
    gen = np.random.default_rng(0)
    probs = d.pmf.probs
    numpy_choice = _rate(lambda: gen.choice(probs.size, size=count, p=probs), count)
    print(f"quantized sampler, os.urandom   : {ours / 1e6:8.2f} M draws/s")
    print(f"numpy Generator.choice (float)  : {numpy_choice / 1e6:8.2f} M draws/s  (ours / numpy = {ours / numpy_choice:.2f})")
    small = 5_000
    print(f"exact discrete Laplace t=1      : {_rate(lambda: discrete_laplace(Fraction(1), small, SystemRandomSource()), small) / 1e3:8.1f} k draws/s")
    print(f"exact discrete Gaussian sigma=2 : {_rate(lambda: discrete_gaussian(Fraction(4), small, SystemRandomSource()), small) / 1e3:8.1f} k draws/s")


if __name__ == "__main__":
    main()
