"""Benchmark for issue 14: exact at every scale, each figure next to a baseline from the same run.

Run (OpenDP optional; install it in a throwaway venv, never in the project's):

    PYTHONPATH=src .venv/bin/python bench/exact_scale.py [--quick] [section ...]
    PYTHONPATH=src /tmp/venv-opendp/bin/python bench/exact_scale.py      # with OpenDP

Sections: certify, verify, alias, zsampling, streaming (default: all). Times are the best
of a few repeats (2 shared cores: expect +-30 % noise); memory is tracemalloc's peak of
numpy/Python allocations inside the measured call. Nothing is asserted.
"""

from __future__ import annotations

import gc
import math
import sys
import time
import tracemalloc
from fractions import Fraction

import numpy as np

from optnoise import CyclicPMF, Neighbourhood, privacy_profile
from optnoise import alias, exact_fast, streaming, zsampling
from optnoise.sampling import SystemRandomSource, draw_indices

QUICK = "--quick" in sys.argv


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def peak_mb(fn) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def line(label: str, value: str, baseline: str = "", ratio: str = "") -> None:
    print(f"  {label:<46} {value:>14} {baseline:>16} {ratio:>10}")


def geometric_cyclic(n: int, eps: float) -> np.ndarray:
    """A cyclic two-sided geometric PMF (many likelihood ratios equal to e^eps)."""
    k = np.arange(n)
    f = np.exp(-eps * np.minimum(k, n - k))
    return f / f.sum()


# ------------------------------------------------------------------ 1. certification
def bench_certify() -> None:
    print("1. quantize + exact certificate (cyclic, SD 1 symmetric, eps-DP target)")
    n = 100_000 if QUICK else 1_000_000
    eps = 40.0 / n
    f = geometric_cyclic(n, eps)  # ratios within rounding of e^eps: the adversarial near-tie case
    shifts = [1, -1]

    def table():  # the uncertified 62-bit table: scale, floor, integer
        return np.floor(f * 2.0**62).astype(np.uint64)

    def ours():
        w = exact_fast.round_weights(f, 62)
        return exact_fast.certify_cyclic(w, shifts, epsilon=eps, delta=1e-9, denominator=1 << 62)

    t_base, t_round, t_ours = best(table), best(lambda: exact_fast.round_weights(f, 62)), best(ours)
    s = ours()
    line(f"n = {n:.0e}: round + certify (5 values)", f"{t_ours:.3f} s", f"floor table {t_base:.3f} s",
         f"{t_ours / t_base:.1f}x")
    line("   vs a samplable table (sum exactly 2^62)", f"{t_ours:.3f} s", f"rounding {t_round:.3f} s",
         f"{t_ours / t_round:.1f}x")
    line("   peak memory", f"{peak_mb(ours):.0f} MB")
    print(f"     certificate: eps_pure={s.epsilon_pure:.6g} delta_dp={s.delta_dp:.3g} delta_pdp={s.delta_pdp:.3g}")


# ------------------------------------------------------------------ 2. verify --exact vs float mode
def bench_verify() -> None:
    print("2. exact verification vs float mode (cyclic, SD 1 symmetric; all five values)")
    n = 100_000
    rng = np.random.default_rng(0)
    w = rng.integers(1, 2**40, n)
    bits_total = int(w.sum())
    pmf = CyclicPMF(w / w.sum())
    nb = Neighbourhood.sd(1)
    shifts = [s[0] for s in nb.cyclic_shifts((n,))]
    eps, delta = 0.5, 1e-3

    def float_mode():
        prof = privacy_profile(pmf, nb)
        return (prof.epsilon_pure, prof.delta_dp(eps), prof.delta_pdp(eps), prof.epsilon_dp(delta),
                prof.epsilon_pdp(delta))

    def exact_mode():
        return exact_fast.certify_cyclic(w, shifts, epsilon=eps, delta=delta, denominator=bits_total)

    t_f, t_e = best(float_mode), best(exact_mode)
    line(f"n = {n:.0e}: exact (integer weights)", f"{t_e:.3f} s", f"float {t_f:.3f} s", f"{t_e / t_f:.1f}x")
    # the same for the geometric near-tie case, weights at 2^62
    f = geometric_cyclic(n, 1e-3)
    wq = exact_fast.round_weights(f, 62)
    pmf2 = CyclicPMF(f)

    def float2():
        prof = privacy_profile(pmf2, nb)
        return (prof.epsilon_pure, prof.delta_dp(1e-3), prof.delta_pdp(1e-3), prof.epsilon_dp(delta),
                prof.epsilon_pdp(delta))

    t_f2 = best(float2)
    t_e2 = best(lambda: exact_fast.certify_cyclic(wq, shifts, epsilon=1e-3, delta=delta, denominator=1 << 62))
    line("   geometric PMF at 2^62 (near ties)", f"{t_e2:.3f} s", f"float {t_f2:.3f} s", f"{t_e2 / t_f2:.1f}x")


# ------------------------------------------------------------------ 3. alias vs inverse CDF
def bench_alias() -> None:
    print("3. exact sampling from certified weights: alias table vs searchsorted (os.urandom)")
    src = SystemRandomSource()
    count = 4_000_000 if not QUICK else 1_000_000
    t_words = best(lambda: [src.words(min(1 << 20, count - s)) for s in range(0, count, 1 << 20)])
    line("raw os.urandom words", f"{count / t_words / 1e6:.1f} M/s")
    for n in (24, 1_000, 100_000, 1_000_000):
        w = exact_fast.round_weights(np.random.default_rng(1).dirichlet(np.ones(n)), 62)
        t_build = best(lambda: alias.build(w, 62), 1)
        tab = alias.build(w, 62)
        cum = np.cumsum(w.astype(np.uint64))
        t_a = best(lambda: alias.draw(tab, count, src))
        t_c = best(lambda: draw_indices(cum, 62, count, src))
        line(f"n = {n}: alias (build {t_build * 1e3:.0f} ms)", f"{count / t_a / 1e6:.1f} M/s",
             f"cdf {count / t_c / 1e6:.1f} M/s", f"{t_c / t_a:.1f}x")


# ------------------------------------------------------------------ 4. integer-line samplers
def bench_zsampling() -> None:
    print("4. exact integer-line noise, vectorised (os.urandom) vs OpenDP's vector samplers")
    src = SystemRandomSource()
    count = 2_000_000 if not QUICK else 500_000
    try:
        import opendp.prelude as dp
        dp.enable_features("contrib")
        odp_n = 50_000
        lap = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=1.0)
        gau = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=2.0)
        zeros = [0] * odp_n
        odp_lap = odp_n / best(lambda: lap(zeros))
        odp_gau = odp_n / best(lambda: gau(zeros))
    except ImportError:
        odp_lap = odp_gau = None
    lap_tab = zsampling.laplace_table(1)
    gau_tab = zsampling.gaussian_table(4)
    st_tab = zsampling.staircase_table(1, 4, 2)
    rows = [
        ("discrete Laplace t=1 (inversion)", lambda: zsampling.draw_inversion(lap_tab, count, src), count, odp_lap),
        ("  incl. table build", lambda: zsampling.discrete_laplace(1, count, src), count, odp_lap),
        ("discrete Laplace t=1 (vectorised CKS)", lambda: zsampling.discrete_laplace_cks(1, count // 4, src),
         count // 4, odp_lap),
        ("discrete Gaussian sigma=2 (inversion)", lambda: zsampling.draw_inversion(gau_tab, count, src), count,
         odp_gau),
        ("  incl. table build", lambda: zsampling.discrete_gaussian(4, count, src), count, odp_gau),
        ("discrete Gaussian sigma=2 (vectorised CKS)", lambda: zsampling.discrete_gaussian_cks(4, count // 8, src),
         count // 8, odp_gau),
        ("discrete staircase eps=1 D=4 r=2 (inversion)", lambda: zsampling.draw_inversion(st_tab, count, src),
         count, None),
        ("two-sided geometric r=23/64 (dyadic)", lambda: zsampling.two_sided_geometric(23, 6, count, src), count,
         None),
    ]
    small = 5_000
    from optnoise.sampling import discrete_gaussian, discrete_laplace
    today_lap = small / best(lambda: discrete_laplace(Fraction(1), small, src), 1)
    today_gau = small / best(lambda: discrete_gaussian(Fraction(4), small, src), 1)
    line("today: sampling.discrete_laplace t=1 (scalar)", f"{today_lap / 1e3:.1f} k/s")
    line("today: sampling.discrete_gaussian sigma=2", f"{today_gau / 1e3:.1f} k/s")
    if odp_lap is not None:
        line("OpenDP vector discrete Laplace scale=1", f"{odp_lap / 1e3:.1f} k/s")
        line("OpenDP vector discrete Gaussian scale=2", f"{odp_gau / 1e3:.1f} k/s")
    else:
        print("  (OpenDP not importable: run under /tmp/venv-opendp for the side-by-side figures)")
    for label, fn, n, base in rows:
        rate = n / best(fn)
        line(label, f"{rate / 1e6:.2f} M/s", "" if base is None else f"OpenDP {base / 1e3:.0f} k/s",
             "" if base is None else f"{rate / base:.0f}x")


# ------------------------------------------------------------------ 5. streaming float analysis
def numpy_delta_loop(f: np.ndarray, shifts, eps: float) -> float:
    e = math.exp(eps)
    worst = 0.0
    for mu in shifts:
        q = np.roll(f, -mu)
        worst = max(worst, float(np.maximum(f - e * q, 0).sum()))
    return worst


def numpy_full_loop(f: np.ndarray, shifts, eps: float, delta: float) -> tuple:
    """The obvious numpy code for all five values (sort for the inverse maps)."""
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


def bench_streaming() -> None:
    print("5. float analysis streamed over pairs vs numpy loops (cyclic PMF, eps=0.5, delta=1e-6)")
    eps, delta = 0.5, 1e-6
    for n, mu_bar, label in ((10**6 if QUICK else 10**7, 2, "M = {1,2} symmetric"),
                             (10**5 if QUICK else 10**7, 100, "BD 100 symmetric")):
        rng = np.random.default_rng(2)
        k = np.arange(n)
        f = np.exp(-np.minimum(k, n - k) / (n / 50)) * rng.uniform(0.5, 1.5, n)  # bumpy, no exact ties
        f /= f.sum()
        shifts = list(range(1, mu_bar + 1)) + [-m for m in range(1, mu_bar + 1)]
        reps = 1 if mu_bar > 10 and not QUICK else 3
        t_np = best(lambda: numpy_delta_loop(f, shifts, eps), reps)
        t_s = best(lambda: streaming.cyclic_summary(f, shifts, epsilon=eps, delta=delta), reps)
        m_np = peak_mb(lambda: numpy_delta_loop(f, shifts, eps))
        m_s = peak_mb(lambda: streaming.cyclic_summary(f, shifts, epsilon=eps, delta=delta))
        line(f"n = {n:.0e}, {label}: streaming (5 values)", f"{t_s:.2f} s", f"numpy delta {t_np:.2f} s",
             f"{t_s / t_np:.2f}x")
        line("   peak memory (beyond f)", f"{m_s:.0f} MB", f"numpy {m_np:.0f} MB")
        if mu_bar <= 10:
            t_full = best(lambda: numpy_full_loop(f, shifts, eps, delta), reps)
            line("   vs numpy computing all five (sort)", f"{t_s:.2f} s", f"numpy {t_full:.2f} s",
                 f"{t_s / t_full:.2f}x")


SECTIONS = {"certify": bench_certify, "verify": bench_verify, "alias": bench_alias,
            "zsampling": bench_zsampling, "streaming": bench_streaming}


def main() -> None:
    chosen = [a for a in sys.argv[1:] if not a.startswith("--")] or list(SECTIONS)
    for name in chosen:
        SECTIONS[name]()
        print()


if __name__ == "__main__":
    main()
