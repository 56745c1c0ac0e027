"""Exact inverse-CDF sampling on Z from rigorous enclosures of the CDF.

For the discrete Laplace, the discrete Gaussian and Geng & Viswanath's discrete staircase
with rational parameters, a table of 64-bit integer enclosures of the CDF, computed once
with outward-rounded interval arithmetic (``mpmath.libmp.mpi_*`` at an explicit precision,
no global state), decides ``F^-1(U)`` from one 64-bit word for all but about ``2^-60`` of the
draws; the rest extend ``U`` and the precision until the enclosures decide
(:class:`InversionTable`). Used by :func:`optnoise.sampling.integer_line.discrete_laplace`,
``discrete_gaussian`` and ``discrete_staircase``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from mpmath import libmp

from ..errors import InvalidParameterError, OptnoiseError
from ..randomness import RandomSource
from .words import CHUNK, check_count, check_rational

_U64 = np.uint64


# ------------------------------------------------------------------ exact inversion from CDF enclosures
# Intervals are pairs of raw mpmath floats with outward rounding at an explicit
# precision (mpmath.libmp.mpi_*): no global precision state is touched.
_Iv = tuple


def _iv_int(v: int) -> _Iv:
    x = libmp.from_int(int(v))
    return (x, x)


def _iv_frac(num: int, den: int, prec: int) -> _Iv:
    return libmp.mpi_div(_iv_int(num), _iv_int(den), prec)


def _fraction(x) -> Fraction:
    sign, man, exp, _ = x
    if man == 0:
        if x != libmp.fzero:
            raise OptnoiseError("interval bound is not finite")
        return Fraction(0)
    v = Fraction(man << exp) if exp >= 0 else Fraction(man, 1 << -exp)
    return -v if sign else v


def _bounds(iv: _Iv) -> tuple[Fraction, Fraction]:
    return _fraction(iv[0]), _fraction(iv[1])


_ONE = _iv_int(1)


def _laplace_cdf(t: Fraction):
    """Enclosure of ``C(x) = P(X <= x)`` for ``P(x) ∝ b^|x|``, ``b = e^(-1/t)``:
    ``1 - b^(x+1)/(1+b)`` for ``x >= 0`` and ``b^(-x)/(1+b)`` for ``x < 0``."""
    s, tt = t.numerator, t.denominator

    def cdf(x: int, prec: int) -> tuple[Fraction, Fraction]:
        b = libmp.mpi_exp(_iv_frac(-tt, s, prec), prec)
        k = x + 1 if x >= 0 else -x
        bk = libmp.mpi_exp(_iv_frac(-k * tt, s, prec), prec)
        v = libmp.mpi_div(bk, libmp.mpi_add(_ONE, b, prec), prec)
        return _bounds(libmp.mpi_sub(_ONE, v, prec) if x >= 0 else v)

    return cdf


def _gaussian_terms_tail(k: int, sn: int, sd: int, prec: int) -> _Iv:
    """Enclosure of ``R(k) = sum_{y > k} exp(-y^2 sd / (2 sn))`` (``k >= 0``): terms summed
    until the geometric bound on the rest (consecutive ratios ``exp(-(2y+1) sd/(2 sn))``
    decrease) is below ``2^-(prec+16)``."""
    total = (libmp.fzero, libmp.fzero)
    y = k + 1
    eps = libmp.from_man_exp(1, -(prec + 16))
    while True:
        g = libmp.mpi_exp(_iv_frac(-y * y * sd, 2 * sn, prec), prec)
        total = libmp.mpi_add(total, g, prec)
        ratio = libmp.mpi_exp(_iv_frac(-(2 * y + 3) * sd, 2 * sn, prec), prec)
        nxt = libmp.mpi_exp(_iv_frac(-(y + 1) * (y + 1) * sd, 2 * sn, prec), prec)
        bound = libmp.mpi_div(nxt, libmp.mpi_sub(_ONE, ratio, prec), prec)
        if libmp.mpf_lt(bound[1], eps):
            return libmp.mpi_add(total, (libmp.fzero, bound[1]), prec)
        y += 1


def _gaussian_cdf(sigma2: Fraction):
    """Enclosure of the discrete Gaussian CDF: ``Z = 1 + 2 R(0)``, ``C(x) = 1 - R(x)/Z``
    for ``x >= 0`` and ``R(-x-1)/Z`` for ``x < 0`` (symmetry)."""
    sn, sd = sigma2.numerator, sigma2.denominator

    def cdf(x: int, prec: int) -> tuple[Fraction, Fraction]:
        z = libmp.mpi_add(_ONE, libmp.mpi_mul(_iv_int(2), _gaussian_terms_tail(0, sn, sd, prec), prec), prec)
        r = libmp.mpi_div(_gaussian_terms_tail(x if x >= 0 else -x - 1, sn, sd, prec), z, prec)
        return _bounds(libmp.mpi_sub(_ONE, r, prec) if x >= 0 else r)

    return cdf


def _staircase_cdf(eps: Fraction, delta: int, r: int):
    """Enclosure of the GV16 discrete staircase CDF (eqs. (82)-(83)). With ``k = j Delta + rho``,
    the mass above ``k`` is ``a b^j [max(0, r - rho - 1) + b (Delta - max(rho + 1, r))] +
    a (r + (Delta - r) b) b^(j+1) / (1 - b)``; ``C(x) = 1 - R(x)`` for ``x >= 0``, ``R(-x-1)`` below."""
    en, ed = eps.numerator, eps.denominator

    def cdf(x: int, prec: int) -> tuple[Fraction, Fraction]:
        b = libmp.mpi_exp(_iv_frac(-en, ed, prec), prec)
        one_b = libmp.mpi_sub(_ONE, b, prec)
        den = libmp.mpi_sub(libmp.mpi_add(_iv_int(2 * r), libmp.mpi_mul(_iv_int(2 * (delta - r)), b, prec), prec),
                            one_b, prec)
        a = libmp.mpi_div(one_b, den, prec)
        k = x if x >= 0 else -x - 1
        j, rho = divmod(k, delta)
        bj = libmp.mpi_exp(_iv_frac(-en * j, ed, prec), prec)
        inside = libmp.mpi_add(_iv_int(max(0, r - rho - 1)),
                               libmp.mpi_mul(b, _iv_int(delta - max(rho + 1, r)), prec), prec)
        block = libmp.mpi_add(_iv_int(r), libmp.mpi_mul(_iv_int(delta - r), b, prec), prec)
        later = libmp.mpi_div(libmp.mpi_mul(block, libmp.mpi_mul(bj, b, prec), prec), one_b, prec)
        rest = libmp.mpi_mul(a, libmp.mpi_add(libmp.mpi_mul(bj, inside, prec), later, prec), prec)
        return _bounds(libmp.mpi_sub(_ONE, rest, prec) if x >= 0 else rest)

    return cdf


#: Precision (bits) of the table's enclosures; the slow path doubles it as needed.
TABLE_PREC = 128
#: Largest window for an inversion table (larger parameters use the rejection samplers).
MAX_TABLE = 1 << 14
_TWO64 = 1 << 64


@dataclass(frozen=True, eq=False)
class InversionTable:
    """Exact inverse-CDF sampling on Z from rigorous enclosures of the CDF ``C``.

    ``c_lo[j] <= 2^64 C(lo - 1 + j) <= c_hi[j]`` (integers). A uniform ``U`` in [0, 1) is
    drawn lazily, 64 bits at a time; the outcome is ``F^-1(U) = min{x : U < C(x)}``.
    With the first word ``u`` (``U`` in ``[u, u + 1) / 2^64``): if ``c_lo[j] >= u + 1``
    then ``U < C(x_j)`` surely, and if ``c_hi[j-1] <= u`` then ``C(x_{j-1}) <= U`` surely;
    taking the first ``j`` with ``c_lo[j] > u`` (``searchsorted``) and checking the second
    condition decides the outcome exactly, with no float. Draws not decided that way
    (``U`` within the enclosure width of some ``C(x)``, or beyond the window: probability
    about ``2^-60``) go to an exact slow path that extends ``U`` by further words and the
    enclosures' precision until the same two conditions hold (``U = C(x)`` has probability
    0, so it ends almost surely). Either way the outcome is ``F^-1(U)`` for a uniform ``U``:
    exactly distributed as ``C``.
    """

    lo: int
    c_lo: np.ndarray
    c_hi: np.ndarray
    cdf: object  # (x, prec) -> (Fraction, Fraction) enclosure of C(x)
    name: str = ""

    def __post_init__(self) -> None:
        self.c_lo.setflags(write=False)
        self.c_hi.setflags(write=False)

    @property
    def window(self) -> tuple[int, int]:
        return self.lo, self.lo + self.c_lo.size - 2


def inversion_table(cdf, lo: int, hi: int, name: str = "") -> InversionTable:
    """Table of 64-bit enclosures of ``C(x)`` for ``x = lo - 1 .. hi`` (trimmed where the upper
    bound reaches ``2^64``)."""
    c_lo, c_hi = [], []
    for x in range(lo - 1, hi + 1):
        a, b = cdf(x, TABLE_PREC)
        lo_i = (a * _TWO64).__floor__()
        hi_i = -((-b * _TWO64).__floor__())
        if hi_i >= _TWO64:
            break
        c_lo.append(max(lo_i, 0))
        c_hi.append(hi_i)
    return _table(int(lo), c_lo, c_hi, cdf, name)


def _table(lo: int, c_lo: list[int], c_hi: list[int], cdf, name: str) -> InversionTable:
    """Make the bounds monotone (``searchsorted`` needs sorted ``c_lo``) without losing
    validity: lowering a lower bound or raising an upper bound keeps it a bound."""
    lo_arr = np.minimum.accumulate(np.array(c_lo, dtype=np.uint64)[::-1])[::-1].copy()
    hi_arr = np.maximum.accumulate(np.array(c_hi, dtype=np.uint64))
    return InversionTable(lo, lo_arr, hi_arr, cdf, name)


def _inverse_slow(tab: InversionTable, u: int, source) -> int:
    """``F^-1(U)`` exactly for ``U`` starting with the 64 bits ``u`` (more drawn as needed)."""
    num, bits, prec = u, 64, TABLE_PREC
    guess = tab.lo
    while True:
        u_lo = Fraction(num, 1 << bits)
        u_hi = Fraction(num + 1, 1 << bits)

        def state(x: int) -> int:  # -1: C(x) <= U surely, +1: C(x) > U surely, 0: unknown
            a, b = tab.cdf(x, prec)
            if b <= u_lo:
                return -1
            if a >= u_hi:
                return 1
            return 0

        found = _bracket(state, guess)
        if found is not None:
            return found
        num = (num << 64) | int(source.words(1)[0])
        bits += 64
        prec *= 2


def _bracket(state, guess: int) -> int | None:
    """Smallest ``y`` with ``state(y) = +1`` and ``state(y - 1) = -1`` (monotone), or None
    if some probe is undecided."""
    x, step = guess, 1
    while True:  # go down until C(x - 1) <= U
        s = state(x - 1)
        if s == 0:
            return None
        if s < 0:
            break
        x -= step
        step *= 2
    below, y, step = x - 1, x, 1
    while True:  # go up until C(y) > U
        s = state(y)
        if s == 0:
            return None
        if s > 0:
            break
        below, y, step = y, y + step, step * 2
    above = y
    while above - below > 1:
        mid = (above + below) // 2
        s = state(mid)
        if s == 0:
            return None
        if s > 0:
            above = mid
        else:
            below = mid
    return above


def draw_inversion(tab: InversionTable, count: int, source: RandomSource) -> np.ndarray:
    """``count`` exact draws by inversion (one 64-bit word each, almost always).

    With ``j`` the first index where ``c_lo[j] > u``, the draw is decided when
    ``check[j] = c_hi[j - 1] <= u`` and ``u < c_lo[-1]`` (so ``j`` is inside the table);
    ``check[0]`` is ``2^64 - 1``, which no ``u`` with ``j = 0`` can reach (``j = 0`` needs
    ``u < c_lo[0] <= 2^64 - 1``).
    """
    n = check_count(count)
    out = np.empty(n, dtype=np.int64)
    check = np.empty(tab.c_hi.size + 1, dtype=np.uint64)
    check[0] = np.uint64(_TWO64 - 1)
    check[1:] = tab.c_hi
    last = tab.c_lo[-1]
    base = np.int64(tab.lo - 1)
    size = min(n, CHUNK)
    jbuf = np.empty(size, dtype=np.int64)
    cbuf = np.empty(size, dtype=np.uint64)
    ok = np.empty(size, dtype=bool)
    ok2 = np.empty(size, dtype=bool)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        m = stop - start
        u = source.words(m)
        j, c, good, inside = jbuf[:m], cbuf[:m], ok[:m], ok2[:m]
        j[:] = np.searchsorted(tab.c_lo, u, side="right")
        np.take(check, j, out=c)
        np.less_equal(c, u, out=good)
        np.less(u, last, out=inside)
        good &= inside
        res = out[start:stop]
        np.add(j, base, out=res)
        if not good.all():
            for i in np.flatnonzero(~good):
                res[i] = _inverse_slow(tab, int(u[i]), source)
    return out


def laplace_table(t) -> InversionTable | None:
    """Inversion table of the discrete Laplace ``P(x) ∝ e^(-|x|/t)`` (rational ``t > 0``; cached);
    ``None`` when it would exceed :data:`MAX_TABLE` entries."""
    return _laplace_table(check_rational(t, "t"))


@lru_cache(maxsize=64)
def _laplace_table(tq: Fraction) -> InversionTable | None:
    k = int(math.ceil(64 * math.log(2) * float(tq))) + 2
    if 2 * k + 2 > MAX_TABLE:
        return None
    return inversion_table(_laplace_cdf(tq), -k, k, f"discrete Laplace t={tq}")


def gaussian_table(sigma2) -> InversionTable | None:
    """Inversion table of the discrete Gaussian ``P(x) ∝ e^(-x^2/(2 sigma^2))`` (rational ``sigma^2``;
    cached)."""
    return _gaussian_table(check_rational(sigma2, "sigma2"))


@lru_cache(maxsize=64)
def _gaussian_table(s2: Fraction) -> InversionTable | None:
    k = int(math.ceil(math.sqrt(2 * float(s2) * 64 * math.log(2)))) + 2
    if 2 * k + 2 > MAX_TABLE:
        return None
    sn, sd = s2.numerator, s2.denominator
    cdf = _gaussian_cdf(s2)
    # the table: one pass of suffix sums (same enclosures as `cdf`, computed once)
    prec = TABLE_PREC
    terms = [libmp.mpi_exp(_iv_frac(-y * y * sd, 2 * sn, prec), prec) for y in range(k + 2)]
    tail = _gaussian_terms_tail(k + 1, sn, sd, prec)
    suffix = [None] * (k + 2)   # suffix[i] = R(i) = sum_{y > i}
    acc = tail
    for i in range(k + 1, -1, -1):
        suffix[i] = acc
        acc = libmp.mpi_add(acc, terms[i], prec)
    z = libmp.mpi_add(_ONE, libmp.mpi_mul(_iv_int(2), suffix[0], prec), prec)
    c_lo, c_hi = [], []
    for x in range(-k - 1, k + 1):
        r = libmp.mpi_div(suffix[x if x >= 0 else -x - 1], z, prec)
        a, b = _bounds(libmp.mpi_sub(_ONE, r, prec) if x >= 0 else r)
        hi_i = -((-b * _TWO64).__floor__())
        if hi_i >= _TWO64:
            break
        c_lo.append(max((a * _TWO64).__floor__(), 0))
        c_hi.append(hi_i)
    return _table(-k, c_lo, c_hi, cdf, f"discrete Gaussian sigma2={s2}")


def staircase_table(epsilon, sensitivity: int, r: int) -> InversionTable | None:
    """Inversion table of the GV16 discrete staircase (eqs. (82)-(83)), ``b = e^-eps`` (cached)."""
    e = check_rational(epsilon, "epsilon")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer >= 1")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not (1 <= r <= sensitivity):
        raise InvalidParameterError("r", r, f"an integer in [1, {sensitivity}]")
    return _staircase_table(e, int(sensitivity), int(r))


@lru_cache(maxsize=64)
def _staircase_table(e: Fraction, sensitivity: int, r: int) -> InversionTable | None:
    k = int(sensitivity) * (int(math.ceil(64 * math.log(2) / float(e))) + 2)
    if 2 * k + 2 > MAX_TABLE:
        return None
    return inversion_table(_staircase_cdf(e, int(sensitivity), int(r)), -k, k,
                           f"discrete staircase eps={e} Delta={sensitivity} r={r}")


