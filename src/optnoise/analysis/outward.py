"""Rounding in the safe direction for the composition bounds: sums, Rényi values, the RDP
conversion and the numerical error of dp_accounting's privacy loss distributions.

Every function returns a float that is *not below* the quantity it names. Two kinds of
argument are used (docs/paper-notes.md, "Composition"):

* **exact or interval arithmetic** where the inputs are few: sums of floats are summed as
  :class:`fractions.Fraction` and rounded up (:func:`sum_up`); the RDP-to-DP conversion
  (Canonne, Kamath & Steinke 2020, Prop. 12) is evaluated in interval arithmetic
  (``mpmath.libmp.mpi_*`` at an explicit precision) and its upper end rounded up
  (:func:`rdp_epsilon_up`, :func:`rdp_delta_up`);
* **a-priori error bounds** for float computations over many values, under the standard
  model of floating-point arithmetic (IEEE-754 double, unit round-off ``u = 2^-53``, the
  basic operations correctly rounded, ``exp``/``log``/``expm1``/``log1p`` within 4 ulps)
  and, for the fast Fourier transforms inside dp_accounting, the normwise error bound of a
  radix FFT (Higham 2002, *Accuracy and Stability of Numerical Algorithms*, Thm. 24.2:
  ``||fl(Fx) - Fx||_2 <= s eta / (1 - s eta) ||Fx||_2`` for ``s`` stages, with a per-stage
  constant ``eta`` taken as ``16 u``, generous for the mixed radices of pocketfft). These
  are the allowances added by :func:`renyi_allowance` and :func:`pld_allowance`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterable, Sequence

from .exact import float_up

#: Unit round-off of IEEE-754 double precision.
U = 2.0 ** -53
#: Per-stage error constant of an FFT (Higham 2002, Thm. 24.2), generous.
FFT_ETA = 16 * U
#: Bits of the interval arithmetic of the conversions.
PREC = 96


def sum_up(values: Iterable[float | int | Fraction]) -> float:
    """The smallest float ``>=`` the exact sum of the values (``inf`` if one is infinite)."""
    total = Fraction(0)
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            if math.isnan(v):
                raise ArithmeticError("sum_up: nan")
            return math.inf if v > 0 else -math.inf
        total += Fraction(v)
    return float_up(total)


def nudge_up(x: float, relative: float, absolute: float = 0.0) -> float:
    """``x + |x| relative + absolute``, rounded up (an allowance added on the safe side)."""
    if not math.isfinite(x):
        return x
    return float_up(Fraction(x) + abs(Fraction(x)) * Fraction(relative) + Fraction(absolute))


def smallest_passing(passes: Callable[[float], bool], lo: float, hi: float) -> float:
    """The smallest float in ``(lo, hi]`` that ``passes`` (``lo`` fails, ``hi`` passes, the
    test monotone): bisection on the floats themselves, so an epsilon certified by a rigorous
    delta is the float just above the one it certifies (to the last digit), not a float a few
    ulps (or a relative step) higher."""
    while True:
        if math.nextafter(lo, math.inf) >= hi:
            return hi
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            mid = math.nextafter(lo, math.inf)
        if passes(mid):
            hi = mid
        else:
            lo = mid


def certified_from(passes: Callable[[float], bool], guess: float, top: float = math.inf, steps: int = 40) -> float:
    """The smallest float ``eps >= 0`` that ``passes`` (a monotone test: a rigorous delta at
    ``eps`` at most the delta asked for), searched from a float estimate ``guess``: a failing
    and a passing float are bracketed by relative steps ``2^-44 4^s`` up or down from it, then
    :func:`smallest_passing` bisects to the last digit. ``inf`` when no float up to ``top``
    passes within ``steps`` steps.

    Proof: docs/proofs/composed-bounds.md."""
    step = lambda x, s: max(x, 1e-12) * 2.0 ** (-44 + 2 * s)  # noqa: E731
    hi = max(0.0, guess)
    if passes(hi):
        for s in range(steps):
            if hi == 0.0:
                return 0.0
            below = max(0.0, hi - step(hi, s))
            if not passes(below):
                return smallest_passing(passes, below, hi)
            hi = below
        return hi
    lo = hi
    for s in range(steps):
        hi = min(top, lo + step(lo, s))
        if passes(hi):
            return smallest_passing(passes, lo, hi)
        if hi >= top:
            break
        lo = hi
    return math.inf


# ------------------------------------------------------------------ RDP
def renyi_allowance(value: float, alpha: float, atoms: int, max_abs_loss: float) -> float:
    """A bound on the float error of a Rényi divergence ``D_alpha`` computed by
    :func:`optnoise.analysis.renyi.renyi_curve` from a loss distribution of ``atoms``
    atoms with losses at most ``max_abs_loss`` in absolute value.

    ``D = (log P_fin + K(t)) / t`` with ``t = alpha - 1`` and ``K(t) = log sum_a w_a e^(t L_a)``:
    the sum has relative error at most ``rho = u (8 (atoms + 8) + 8 t (max|L| + 1) + 3000)``
    (each term's ``exp`` within 4 ulps of an argument itself off by ``(|log w| + t |L|) 2u``
    and ``t`` times the float error ``(|L| + 1) 4u`` of a loss, ``|log w| <= 745``; the sum
    ``gamma_n``), so ``log`` of it is off by ``1.01 rho`` plus its own rounding; dividing by
    ``t`` amplifies it. At ``alpha = inf``, ``D`` is a max loss: ``(|L| + 1) 4u``.
    """
    if not math.isfinite(value):
        return 0.0
    if alpha == math.inf:
        return (abs(value) + 1.0) * 8 * U
    t = alpha - 1.0
    rho = U * (8 * (atoms + 8) + 8 * abs(t) * (max_abs_loss + 1.0) + 3000)
    return 2.0 * ((1.01 * rho + 4 * U * abs(t * value) + 4 * U) / abs(t) + 4 * U * abs(value))


def _iv(x: float):
    from mpmath import libmp
    v = libmp.from_float(float(x))
    return (v, v)


def _upper(iv) -> float:
    from mpmath import libmp
    return libmp.to_float(iv[1], rnd=libmp.round_ceiling)


def rdp_epsilon_up(alphas: Sequence[float], taus: Sequence[float], delta: float) -> tuple[float, float]:
    """The Canonne-Kamath-Steinke conversion (Prop. 12) of an RDP curve to epsilon at
    ``delta``, each order's value rounded up, minimised over the orders:
    ``eps = tau + log((alpha - 1)/alpha) - (log delta + log alpha) / (alpha - 1)``;
    ``alpha = inf`` gives ``tau``. Returns ``(epsilon, alpha)`` (``inf`` if none)."""
    from mpmath import libmp
    best, arg = math.inf, math.nan
    for alpha, tau in zip(alphas, taus):
        a, tau = float(alpha), float(tau)
        if not math.isfinite(tau):
            continue
        if a == math.inf:
            eps = tau
        elif delta <= 0:
            continue
        else:
            ai, am1 = _iv(a), libmp.mpi_sub(_iv(a), _iv(1.0), PREC)
            term = libmp.mpi_log(libmp.mpi_div(am1, ai, PREC), PREC)
            inner = libmp.mpi_div(libmp.mpi_add(libmp.mpi_log(_iv(delta), PREC), libmp.mpi_log(ai, PREC), PREC),
                                  am1, PREC)
            eps = _upper(libmp.mpi_sub(libmp.mpi_add(_iv(tau), term, PREC), inner, PREC))
        eps = max(0.0, eps)
        if eps < best:
            best, arg = eps, a
    return best, arg


def rdp_delta_up(alphas: Sequence[float], taus: Sequence[float], epsilon: float) -> tuple[float, float]:
    """The same conversion solved for delta at ``epsilon``, rounded up:
    ``delta = exp((alpha - 1)(tau - eps) - log(alpha - 1) + alpha log((alpha - 1)/alpha))``,
    capped at 1; ``alpha = inf`` gives 0 when ``tau <= eps``. Returns ``(delta, alpha)``."""
    from mpmath import libmp
    best, arg = 1.0, math.nan
    for alpha, tau in zip(alphas, taus):
        a, tau = float(alpha), float(tau)
        if not math.isfinite(tau):
            continue
        if a == math.inf:
            d = 0.0 if tau <= epsilon else 1.0
        else:
            ai, am1 = _iv(a), libmp.mpi_sub(_iv(a), _iv(1.0), PREC)
            log_d = libmp.mpi_add(
                libmp.mpi_sub(libmp.mpi_mul(am1, libmp.mpi_sub(_iv(tau), _iv(epsilon), PREC), PREC),
                              libmp.mpi_log(am1, PREC), PREC),
                libmp.mpi_mul(ai, libmp.mpi_log(libmp.mpi_div(am1, ai, PREC), PREC), PREC), PREC)
            hi = _upper(log_d)
            d = 1.0 if hi >= 0 else _upper(libmp.mpi_exp(log_d, PREC))
        if d < best:
            best, arg = min(1.0, d), a
    return best, arg


# ------------------------------------------------------------------ PLD
def fft_power_error(length: int, k: int) -> float:
    """Bound on the l1 error of dp_accounting's self-composition of a PLD of ``length``
    grid cells ``k`` times (``ifft(fft(x)^k)`` on a probability vector ``x``).

    With ``N`` the FFT length (at most twice the ``n = k (length - 1) + 1`` output cells),
    ``s = ceil(log2 N) + 1`` stages: the forward transform is off by ``s eta sqrt(N)``
    (normwise, ``||x||_2 <= 1``), the ``k``-th power multiplies that by at most
    ``k (1 + s eta sqrt N)^(k - 1)`` and adds ``4 (k + 10) u`` relative, the inverse
    transform (which divides the norm by ``sqrt N``) adds ``s eta``. The l2 error of the
    ``n`` output cells is then at most ``k g s eta + 4 (k + 10) u + s eta`` and their l1
    error ``sqrt(n)`` times that. The small-support path (repeated sparse convolution of
    non-negative numbers) is within ``k (length + 2) 4u``; the larger of the two is used.
    """
    n = max(1, int(k) * (max(1, int(length)) - 1) + 1)
    big_n = 2 * n
    s = math.ceil(math.log2(big_n)) + 1
    growth = math.exp(k * s * FFT_ETA * math.sqrt(big_n))
    l2 = k * growth * s * FFT_ETA + 4 * (k + 10) * U + s * FFT_ETA
    return max(math.sqrt(n) * l2, k * (length + 2) * 4 * U)


def fft_convolve_error(length: int) -> float:
    """Bound on the l1 error of one convolution of two PLDs with ``length`` output cells
    (``fftconvolve``, or a sparse convolution): ``sqrt(n) (3 s eta + 4u)`` (Higham 2002,
    Thm. 24.2, for the three transforms) or ``length 4u``."""
    n = max(1, int(length))
    s = math.ceil(math.log2(2 * n)) + 1
    return max(math.sqrt(2 * n) * (3 * s * FFT_ETA + 4 * U), n * 4 * U)


def evaluation_error(length: int) -> float:
    """Bound on the error of ``get_delta_for_epsilon`` over ``length`` cells of total mass at
    most ``1 + 1e-6``: a dot product of non-negative weights ``1 - e^(eps - L) <= 1``
    (each within ``4u``) with the masses, summed: ``(length + 8) 4u``."""
    return (int(length) + 8) * 4 * U


def pld_allowance(spans: Sequence[int], counts: Sequence[int], truncations: int,
                  errors: Sequence[float] | None = None) -> float:
    """The numerical allowance of one composed PLD: the self-composition of each unit
    (``spans[i]`` grid cells, ``counts[i]`` times; ``errors[i]`` bounds the l1 distance of
    its masses from the exact ones, which ``k`` compositions turn into at most
    ``k e (1 + e)^(k - 1)``: convolution is 1-Lipschitz in l1 per probability factor), the
    convolutions between units, the evaluation, and ``1e-15`` per tail truncation
    (dp_accounting moves a tail of at most ``1e-15``, bounded by a Chernoff bound computed in
    floats, to infinity; the cushion covers the bound's own round-off)."""
    err = 0.0
    width = 1
    for i, (span, k) in enumerate(zip(spans, counts)):
        e = 0.0 if errors is None else float(errors[i])
        err += fft_power_error(span, k) + (k * e * math.exp((k - 1) * e) if e > 0 else 0.0)
        cells = int(k) * (max(1, int(span)) - 1) + 1
        if width > 1:
            err += fft_convolve_error(width + cells)
        width += cells - 1
    return err + evaluation_error(width) + 1e-15 * truncations


__all__ = ["FFT_ETA", "U", "evaluation_error", "fft_convolve_error", "fft_power_error", "nudge_up", "pld_allowance",
           "rdp_delta_up", "rdp_epsilon_up", "renyi_allowance", "smallest_passing", "sum_up",
           "certified_from"]
