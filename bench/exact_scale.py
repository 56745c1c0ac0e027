"""Benchmark for issue 14: exact at every scale, each figure next to its baseline from the same run.

Run (OpenDP is optional: install it in a throwaway venv, never in the project's)::

    PYTHONPATH=src .venv/bin/python bench/exact_scale.py [--quick] [--repeats R] [section ...]
    PYTHONPATH=src /tmp/venv-opendp/bin/python bench/exact_scale.py integer-line   # with OpenDP

Sections: certify, verify-exact, verify, sampling, sample-cli, integer-line (default: all).

Every comparison runs ours and its baselines *interleaved* (A, B, A, B, ...) ``R`` times, so
that a load spike from other jobs on the machine hits both; it prints the median time of
each, the ratio of the medians and the spread (smallest and largest ratio within one
round). Memory is tracemalloc's peak of the numpy/Python allocations inside one call (run
separately: tracing slows the call). Nothing is asserted.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import numpy as np

from optnoise import CyclicPMF, Mechanism, Neighbourhood, Target, privacy_profile
from optnoise.analysis import guarantee
from optnoise.randomness import SystemRandomSource
from optnoise.sampling import (QuantizedCyclic, discrete_gaussian, discrete_laplace, draw_indices, round_weights)

QUICK = "--quick" in sys.argv
REPEATS = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else (3 if QUICK else 5)
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ measuring
def interleaved(fns: dict[str, Callable[[], object]], repeats: int = REPEATS) -> dict[str, list[float]]:
    """Seconds per call of each function, the functions taking turns ``repeats`` times."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def compare(label: str, times: dict[str, list[float]], ours: str, baseline: str, unit: str = "s",
            per: float | None = None) -> None:
    """One line: ours, the baseline, the ratio of medians and its spread over the rounds."""
    a, b = times[ours], times[baseline]
    ratios = [x / y for x, y in zip(a, b)]
    if per is None:
        va, vb = f"{statistics.median(a):.3f} s", f"{statistics.median(b):.3f} s"
    else:  # a rate
        va, vb = f"{per / statistics.median(a) / 1e6:.2f} M/s", f"{per / statistics.median(b) / 1e6:.2f} M/s"
    print(f"  {label:<44} {ours}: {va:>11}   {baseline}: {vb:>11}   "
          f"time ratio {statistics.median(a) / statistics.median(b):6.2f}x  [{min(ratios):.2f}-{max(ratios):.2f}]")


def peak_mb(fn: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def bumpy(n: int, seed: int = 0) -> np.ndarray:
    """A peaked cyclic PMF with random bumps (no exact ties), masses down to ~1e-17."""
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    f = np.exp(-np.minimum(k, n - k) / (n / 50)) * rng.uniform(0.5, 1.5, n)
    return f / f.sum()


def cyclic_geometric(n: int, eps: float) -> np.ndarray:
    """A cyclic two-sided geometric PMF: every ratio of neighbours is e^eps in real arithmetic."""
    k = np.arange(n)
    f = np.exp(-eps * np.minimum(k, n - k))
    return f / f.sum()


# ------------------------------------------------------------------ 1. quantize + certify
def obvious_table(f: np.ndarray) -> np.ndarray:
    """The obvious samplable 62-bit table: floors, the shortfall added to the largest cell."""
    w = np.floor(f / f.sum() * 2.0**62).astype(np.uint64)
    w[np.argmax(w)] += np.uint64((1 << 62) - int(w.sum(dtype=np.uint64)))
    return w


def bench_certify() -> None:
    print("1. quantize + exact certificate (cyclic, SD 1 symmetric) vs building the table without one")
    nb = Neighbourhood.sd(1)
    for n in ((10**4, 10**5) if QUICK else (10**4, 10**5, 10**6)):
        f = bumpy(n)
        pmf = CyclicPMF(f)
        target = Target(privacy_profile(pmf, nb).epsilon_pure * 1.001)
        times = interleaved({
            "ours": lambda: Mechanism(pmf, nb, target).quantize(),
            "table": lambda: round_weights(f, 62),    # our rounding at 62 bits, no certificate
            "obvious": lambda: obvious_table(f),      # floor, the shortfall to the largest cell
        })
        q = Mechanism(pmf, nb, target).quantize()
        compare(f"n = {n:.0e} pure target ({q.bits} bits)", times, "ours", "table")
        compare("", times, "ours", "obvious")
        if n == 10**6:
            print(f"  {'':<44} peak memory of ours {peak_mb(lambda: Mechanism(pmf, nb, target).quantize()):.0f} MB "
                  f"(the PMF: {f.nbytes / 2**20:.0f} MB)")
    n = 10**5 if QUICK else 10**6
    eps = 40.0 / n
    f = cyclic_geometric(n, eps)
    pmf = CyclicPMF(f)
    times = interleaved({"ours": lambda: Mechanism(pmf, nb, Target(eps)).quantize(),
                         "table": lambda: round_weights(f, 62), "obvious": lambda: obvious_table(f)},
                        max(2, REPEATS // 2))
    q = Mechanism(pmf, nb, Target(eps)).quantize()
    compare(f"n = {n:.0e} geometric at the DP limit (mixing {q.mixing})", times, "ours", "table")
    compare("", times, "ours", "obvious")


# ------------------------------------------------------------------ 2. verify --exact vs float
def bench_verify_exact() -> None:
    print("2. exact verification (all five values) vs float mode, n = 1e5, SD 1 symmetric")
    n = 10**5
    nb = Neighbourhood.sd(1)
    eps, delta = 0.5, 1e-6
    f = bumpy(n, 1)
    pmf = CyclicPMF(f)                                         # float masses: exact binary values
    w = round_weights(f, 62)
    qpmf = CyclicPMF(w / 2.0**62, normalize=True)              # floats of a quantized PMF
    times = interleaved({
        "exact": lambda: guarantee(privacy_profile(pmf, nb, exact=True), eps, delta),
        "float": lambda: guarantee(privacy_profile(pmf, nb), eps, delta),
        "exact-q": lambda: guarantee(privacy_profile(qpmf, nb, exact=True), eps, delta),
    })
    compare("float masses of a design", times, "exact", "float")
    compare("masses of a 62-bit quantized PMF", times, "exact-q", "float")


# ------------------------------------------------------------------ 3. full float verify, streamed
def numpy_delta_loop(f: np.ndarray, shifts: list[int], eps: float) -> float:
    """The obvious numpy loop: delta_DP at one epsilon, one rolled copy per pair."""
    e = math.exp(eps)
    return max(float(np.maximum(f - e * np.roll(f, -mu), 0).sum()) for mu in shifts)


def numpy_full_loop(f: np.ndarray, shifts: list[int], eps: float, delta: float) -> tuple:
    """The obvious numpy code for all five values (a sort per pair for the inverse maps)."""
    e = math.exp(eps)
    out = [0.0] * 5
    for mu in shifts:
        q = np.roll(f, -mu)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = f / q
        out[0] = max(out[0], float(np.log(np.nanmax(r))))
        out[1] = max(out[1], float(np.maximum(f - e * q, 0).sum()))
        out[2] = max(out[2], float(f[f > e * q * (1 + 1e-9)].sum()))
        keep = f > q
        order = np.argsort(-r[keep], kind="stable")
        rs, ps, qs = r[keep][order], f[keep][order], q[keep][order]
        a = np.concatenate(([0.0], np.cumsum(ps)))
        b = np.concatenate(([0.0], np.cumsum(qs)))
        g = a[:-1] - rs * b[:-1]
        j = int(np.argmax(g > delta)) if np.any(g > delta) else rs.size
        out[3] = max(out[3], math.log(max((a[j] - delta) / b[j], 1.0)) if b[j] > 0 else 0.0)
        ok = np.flatnonzero(a[:-1] <= delta)
        out[4] = max(out[4], math.log(rs[ok[-1]]) if ok.size else math.inf)
    return tuple(out)


def bench_verify() -> None:
    print("3. full float verify (eps_pure, delta_DP, delta_PDP at eps, eps_DP, eps_PDP at delta) vs numpy loops")
    eps, delta = 0.5, 1e-6
    cases = ((10**6 if QUICK else 10**7, (1, 2), "M = {1,2} symmetric"),
             (10**5 if QUICK else 10**7, tuple(range(1, 101)), "BD 100 symmetric"))
    for n, distances, label in cases:
        f = bumpy(n, 2)
        pmf = CyclicPMF(f)
        nb = Neighbourhood(distances)
        shifts = [s[0] for s in nb.cyclic_shifts((n,))]
        fns = {"ours": lambda: guarantee(privacy_profile(pmf, nb), eps, delta),
               "numpy-delta": lambda: numpy_delta_loop(f, shifts, eps)}
        if len(shifts) <= 4:
            fns["numpy-5"] = lambda: numpy_full_loop(f, shifts, eps, delta)
        times = interleaved(fns, REPEATS if len(shifts) <= 4 else max(2, REPEATS // 2))
        compare(f"n = {n:.0e}, {label}", times, "ours", "numpy-delta")
        if "numpy-5" in fns:
            compare("", times, "ours", "numpy-5")
        print(f"  {'':<44} peak memory: ours {peak_mb(fns['ours']):.0f} MB, numpy delta loop "
              f"{peak_mb(fns['numpy-delta']):.0f} MB (the PMF itself: {f.nbytes / 2**20:.0f} MB)")


# ------------------------------------------------------------------ 4. sampling: alias vs inverse CDF
def bench_sampling() -> None:
    print("4. exact draws from certified weights (os.urandom): ours (alias from 16 outcomes) vs searchsorted")
    src = SystemRandomSource()
    count = 1_000_000 if QUICK else 4_000_000
    nb = Neighbourhood.sd(1)
    words = interleaved({"words": lambda: [src.words(min(1 << 20, count - s)) for s in range(0, count, 1 << 20)]})
    print(f"  raw os.urandom words: {count / statistics.median(words['words']) / 1e6:.1f} M/s")
    for n in (3, 15, 16, 24, 1000, 100_000, 1_000_000):
        w = round_weights(np.random.default_rng(1).dirichlet(np.ones(n)), 62)
        q = QuantizedCyclic(w, 62, 0, nb, None, None)  # type: ignore[arg-type]
        q.draw(1, src)  # builds the table once
        cum = np.cumsum(w, dtype=np.uint64)
        times = interleaved({"ours": lambda: q.draw(count, src),
                             "searchsorted": lambda: draw_indices(cum, 62, count, src)})
        compare(f"n = {n} ({q.sampler})", times, "ours", "searchsorted", per=count)


# ------------------------------------------------------------------ 5. optnoise sample end to end
BASELINE_SAMPLER = r"""
import json, os, sys, numpy as np
data = json.load(open(sys.argv[1]))
f = np.asarray(data["pmf"], dtype=np.float64)
w = np.floor(f / f.sum() * 2.0**62).astype(np.uint64)          # a 62-bit table, no certificate
w[np.argmax(w)] += np.uint64((1 << 62) - int(w.sum(dtype=np.uint64)))
cum = np.cumsum(w, dtype=np.uint64)
count, out = int(sys.argv[2]), np.empty(int(sys.argv[2]), dtype=np.int64)
for s in range(0, count, 1 << 20):
    u = np.frombuffer(os.urandom(8 * min(1 << 20, count - s)), dtype="<u8") >> np.uint64(2)
    out[s:s + u.size] = np.searchsorted(cum, u, side="right")
np.save(sys.argv[3], out)
"""


def bench_sample_cli() -> None:
    n, count = (10**5, 2 * 10**6) if QUICK else (10**6, 2 * 10**7)
    print(f"5. optnoise sample, n = {n:.0e}, {count:.0e} draws to .npy (a process each) vs numpy + os.urandom, "
          "uncertified")
    nb = Neighbourhood.sd(1)
    f = bumpy(n, 3)
    pmf = CyclicPMF(f)
    target = Target(round(privacy_profile(pmf, nb).epsilon_pure * 1.001, 6))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mechanism.json"
        Mechanism(pmf, nb, target, "bench").save(path)
        script = Path(tmp) / "baseline.py"
        script.write_text(BASELINE_SAMPLER)

        def ours() -> None:
            out = Path(tmp) / "ours.npy"
            out.unlink(missing_ok=True)
            subprocess.run([sys.executable, "-c", "from optnoise.cli import main; main()", "sample", "--mechanism",
                            str(path), "--count", str(count), "--output", str(out), "--json"],
                           env=env, check=True, stdout=subprocess.DEVNULL)

        def baseline() -> None:
            subprocess.run([sys.executable, str(script), str(path), str(count), str(Path(tmp) / "base.npy")],
                           check=True)

        times = interleaved({"ours": ours, "numpy": baseline}, max(2, REPEATS // 2))
        compare("end to end (load, quantize + certify, draw, write)", times, "ours", "numpy")


# ------------------------------------------------------------------ 6. integer-line noise
def opendp_rates(count: int) -> dict[str, Callable[[], object]]:
    try:
        import opendp.prelude as dp
    except ImportError:
        return {}
    dp.enable_features("contrib")
    lap = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=1.0)
    gau = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=2.0)
    zeros = [0] * count
    return {"opendp-laplace": lambda: lap(zeros), "opendp-gaussian": lambda: gau(zeros)}


def bench_integer_line() -> None:
    print("6. integer-line noise, exact and vectorised (os.urandom) vs OpenDP's vector samplers")
    from optnoise.mechanism import from_family as family_mechanism  # the mechanisms `optnoise sample --family` uses
    count = 500_000 if QUICK else 2_000_000
    odp_count = 50_000
    src = SystemRandomSource()
    mechs = {"geometric:0.36787944117144233": "discrete Laplace t=1 (geometric family, alpha = e^-1)",
             "discrete-gaussian:2": "discrete Gaussian sigma=2 (family)",
             "staircase:1,4,2": "discrete staircase eps=1 D=4 r=2 (family)"}
    fns: dict[str, Callable[[], object]] = {}
    for spec in mechs:
        m = family_mechanism(spec)
        m.sample(1)  # quantize + certify once (cached on the mechanism)
        fns[spec] = (lambda m=m: m.sample(count, source=src))
    fns["named-laplace"] = lambda: discrete_laplace(1, count, src)
    fns["named-gaussian"] = lambda: discrete_gaussian(4, count, src)
    odp = opendp_rates(odp_count)
    times = interleaved({**fns, **odp})
    rate = {k: (odp_count if k.startswith("opendp") else count) / statistics.median(v) for k, v in times.items()}
    if not odp:
        print("  (OpenDP not importable: run under /tmp/venv-opendp for the side-by-side figures)")
    for key, label, base in [(s, mechs[s], "opendp-laplace" if "geometric" in s else
                              "opendp-gaussian" if "gaussian" in s else None) for s in mechs] + [
            ("named-laplace", "exact discrete Laplace t=1 (inversion; no certificate)", "opendp-laplace"),
            ("named-gaussian", "exact discrete Gaussian sigma^2=4 (inversion; no certificate)", "opendp-gaussian")]:
        extra = f"   OpenDP {rate[base] / 1e3:7.1f} k/s   {rate[key] / rate[base]:6.0f}x" if base in rate else ""
        print(f"  {label:<62} {rate[key] / 1e6:6.2f} M/s{extra}")


SECTIONS = {"certify": bench_certify, "verify-exact": bench_verify_exact, "verify": bench_verify,
            "sampling": bench_sampling, "sample-cli": bench_sample_cli, "integer-line": bench_integer_line}


def main() -> None:
    args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and sys.argv[i - 1] != "--repeats"]
    print(f"# bench/exact_scale.py, {REPEATS} interleaved rounds, load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    for name in args or list(SECTIONS):
        SECTIONS[name]()
        print()


if __name__ == "__main__":
    main()
