"""Exact, vectorised samplers for noise on the integer line.

Every sampler here draws from the distribution it names *exactly*: no float
touches a decision, every comparison is between integers, and the only
randomness is uniform bits from the injected source (``source.words(n)``).
Each function is written as rounds over *all pending draws at once*: a round
consumes fresh random bits for every draw still pending, settles some of them,
and keeps the rest (each settles with probability bounded away from 0, so the
number of rounds is logarithmic in the number of draws).

Building blocks
---------------
:func:`bernoulli_rational` -- ``Bernoulli(num/den)`` for integers ``0 <= num <= den``.
    Compares a uniform ``U`` in [0, 1) with ``p = num/den`` digit by digit in base
    ``2^c``: the digits of ``p`` are ``floor(num 2^c / den)`` with ``num`` replaced by
    the remainder, those of ``U`` are fresh ``c``-bit chunks. The first differing
    digit decides ``U < p``; ``U = p`` has probability 0. So ``P(True) = P(U < p) = p``
    exactly, using on average ``c / (1 - 2^-c)`` bits (``c = 8`` here when possible).
:func:`bernoulli_exp` -- ``Bernoulli(exp(-gamma))`` for rational ``gamma = num/den >= 0``,
    Canonne, Kamath & Steinke (2020), Algorithm 1: for ``gamma <= 1``, draw
    ``Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first failure ``K``; then
    ``P(K odd) = sum_k (-1)^(k-1) ... = exp(-gamma)``. For ``gamma > 1`` it is the
    conjunction of ``floor(gamma)`` independent ``Bernoulli(exp(-1))`` and one
    ``Bernoulli(exp(-(gamma - floor(gamma))))``, since ``exp`` turns sums into products.

Samplers (exact distributions)
------------------------------
* :func:`~optnoise.sampling.words.geometric_failures` -- ``P(G = g) = (1 - r) r^g``,
  ``g >= 0``, ``r = a / 2^m`` (dyadic): the number of successes of ``Bernoulli(a/2^m)``
  trials (an ``m``-bit chunk ``u`` succeeds iff ``u < a``, exactly ``a`` of its ``2^m``
  values) before the first failure.
* :func:`two_sided_geometric` -- ``P(X = x) = (1 - r)/(1 + r) r^|x|`` on Z with dyadic
  ``r``: ``X = G1 - G2`` for independent geometrics, since
  ``sum_g (1-r)^2 r^g r^(g+|x|) = (1-r)/(1+r) r^|x|``.
* :func:`discrete_laplace` -- ``P(X = x) = (e^(1/t) - 1)/(e^(1/t) + 1) e^(-|x|/t)`` for rational
  ``t > 0``;
* :func:`discrete_gaussian` -- ``P(X = x) = e^(-x^2 / (2 sigma^2)) / sum_y e^(-y^2/(2 sigma^2))``
  for rational ``sigma^2 > 0``;
* :func:`discrete_staircase` -- Geng & Viswanath (2016) eqs. (82)-(83) with
  ``b = e^-eps`` for rational ``eps``: mass ``a(r)`` on ``0..r-1``, ``b a(r)`` on
  ``r..Delta-1``, times ``b^j`` on the ``j``-th block of ``Delta``, symmetric.

  These three draw by *exact inversion* (:class:`~optnoise.sampling.inversion.InversionTable`):
  a table of 64-bit
  integer enclosures of the CDF, computed once with outward-rounded interval arithmetic,
  decides ``F^-1(U)`` from one 64-bit word for all but ~2^-60 of the draws; the rest
  extend ``U`` and the precision until the enclosures decide (see the class). For
  parameters whose table would be too large they fall back to the vectorised rejection
  samplers :func:`discrete_laplace_cks` and :func:`discrete_gaussian_cks` (CKS20
  Algorithms 2-3) and :func:`discrete_staircase_rejection`, exact as well.
* :func:`draw_window_tails` -- a finite window of integer weights continued by geometric
  tails with *dyadic* ratios (:func:`window_tails_table`): the quantized integer-line PMF
  that :func:`optnoise.sampling.quantize` certifies, which is what mechanisms on Z sample.

References: C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020 (CKS20); Q. Geng, P. Viswanath, "The Optimal Noise-Adding Mechanism
in Differential Privacy", IEEE Trans. IT 2016 (GV16).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError, OptnoiseError
from ..pmf import GeometricTail, IntegerPMF
from ..randomness import RandomSource
from .alias import AliasTable, build as build_alias, lookup as alias_lookup
from .words import CHUNK, check_count, check_rational, geometric_failures, uniform_below, uniform_bits

#: Denominators of rational probabilities must stay below this (int64 digit arithmetic).
MAX_DEN = 1 << 62
#: Resolution of the alias table of a window with tails (one word per cell drawn).
MAX_TABLE_BITS = 62
_U64 = np.uint64


# ------------------------------------------------------------------ Bernoulli trials
def bernoulli_rational(num, den, source) -> np.ndarray:
    """Exact ``Bernoulli(num / den)`` per element (``0 <= num <= den < 2^62``), bool array.

    Lazy comparison of a uniform ``U`` with ``num/den`` in base ``2^c`` (module docstring).
    """
    num_arr, den_arr = np.broadcast_arrays(np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64))
    num_arr = num_arr.ravel().copy()
    den_arr = den_arr.ravel().copy()
    n = num_arr.size
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    top = int(den_arr.max())
    if top >= MAX_DEN or int(den_arr.min()) <= 0 or int(num_arr.min()) < 0 or np.any(num_arr > den_arr):
        raise InvalidParameterError("den", top, "0 <= num <= den < 2^62")
    c = max(1, min(8, 62 - top.bit_length()))
    shift = np.int64(c)
    pending = np.arange(n)
    while pending.size:
        v = num_arr << shift
        digit = v // den_arr
        num_arr = v - digit * den_arr
        u = uniform_bits(source, pending.size, c)
        yes = u < digit
        decided = yes | (u > digit)
        out[pending[yes]] = True
        keep = ~decided
        pending, num_arr, den_arr = pending[keep], num_arr[keep], den_arr[keep]
    return out


def _bernoulli_exp_unit(num: np.ndarray, den: np.ndarray, source, start: int = 1) -> np.ndarray:
    """``Bernoulli(exp(-num/den))`` for ``0 <= num/den <= 1`` (CKS20 Alg. 1, vectorised).

    ``K`` is the index of the first failing ``Bernoulli(gamma / k)``, ``k = 1, 2, ...``;
    the answer is ``K odd``. ``start = 2`` skips the ``k = 1`` trial when ``gamma = 1``
    (it always succeeds).
    """
    n = num.size
    out = np.empty(n, dtype=bool)
    pending = np.arange(n)
    k = start
    while pending.size:
        dk = den[pending] * k
        if int(dk.max()) >= MAX_DEN:
            raise OptnoiseError("bernoulli_exp: denominator overflow (gamma's denominator too large)")
        ok = bernoulli_rational(num[pending], dk, source)
        out[pending[~ok]] = (k % 2 == 1)
        pending = pending[ok]
        k += 1
    return out


def bernoulli_exp(num, den, source) -> np.ndarray:
    """Exact ``Bernoulli(exp(-num/den))`` per element for integers ``num >= 0``, ``den > 0``."""
    num_arr, den_arr = np.broadcast_arrays(np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64))
    num_arr, den_arr = num_arr.ravel(), den_arr.ravel()
    n = num_arr.size
    if n and (int(num_arr.min()) < 0 or int(den_arr.min()) <= 0):
        raise InvalidParameterError("gamma", "negative or undefined", "a rational >= 0")
    whole = num_arr // den_arr
    frac = num_arr - whole * den_arr
    out = np.ones(n, dtype=bool)
    alive = np.arange(n)
    j = 1
    ones = np.ones(1, dtype=np.int64)
    while True:
        sel = alive[whole[alive] >= j]
        if sel.size == 0:
            break
        ok = _bernoulli_exp_unit(np.broadcast_to(ones, sel.shape), np.broadcast_to(ones, sel.shape), source, start=2)
        out[sel[~ok]] = False
        alive = alive[out[alive]]
        j += 1
    if alive.size:
        ok = _bernoulli_exp_unit(frac[alive], den_arr[alive], source)
        out[alive[~ok]] = False
    return out


def _geometric_exp(num: int, den: int, count: int, source) -> np.ndarray:
    """Successes of ``Bernoulli(exp(-num/den))`` before the first failure:
    ``P(V = v) = e^(-gamma v) (1 - e^(-gamma))``."""
    v = np.zeros(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        ok = bernoulli_exp(np.full(pending.size, num), np.full(pending.size, den), source)
        pending = pending[ok]
        v[pending] += 1
    return v


# ------------------------------------------------------------------ dyadic geometric
def _check_dyadic(a: int, m: int, name: str = "ratio") -> None:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not (1 <= m <= 62):
        raise InvalidParameterError(f"{name} bits", m, "an integer in [1, 62]")
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not (0 < a < (1 << m)):
        raise InvalidParameterError(f"{name} numerator", a, f"an integer in (0, 2^{m})")


def two_sided_geometric(a: int, m: int, count: int, source) -> np.ndarray:
    """``P(X = x) = (1 - r)/(1 + r) r^|x|`` on Z with dyadic ``r = a / 2^m`` (``X = G1 - G2``).

    The geometric mechanism with ``eps = ln(1/r)`` per unit of sensitivity; a
    dyadic ``r >= e^-eps`` (rounded toward 1) keeps eps-DP.
    """
    n = check_count(count)
    _check_dyadic(a, m)
    return geometric_failures(a, m, n, source) - geometric_failures(a, m, n, source)


# ------------------------------------------------------------------ CKS20 samplers
def _by_rounds(count: int, one_round, spare: int) -> np.ndarray:
    """``count`` draws from a rejection sampler: ``one_round(m)`` makes ``m`` proposals and
    returns the accepted draws; rounds of ``need + need // spare + 16`` proposals repeat
    until ``count`` are accepted (accepting fewer, or discarding the surplus, is sampling
    conditionally on acceptance, which leaves each draw's law unchanged)."""
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        need = count - filled
        x = one_round(need + need // spare + 16)[:need]
        out[filled:filled + x.size] = x
        filled += x.size
    return out


def discrete_laplace_cks(t, count: int, source) -> np.ndarray:
    """``P(X = x) ∝ exp(-|x| / t)`` on Z for rational ``t > 0`` (CKS20 Algorithm 2).

    One round, for all pending draws: ``U`` uniform in ``[0, s)`` (``t = s / tt``), keep it
    with probability ``exp(-U/s)``; ``V`` geometric with ``P(V = v) = e^-v (1 - e^-1)``;
    ``Y = (U + s V) // tt``; a fair sign ``B``; reject ``B = 1, Y = 0``. CKS20 prove the
    accepted ``(1 - 2B) Y`` has exactly the discrete Laplace law; rounds repeat only for
    the rejected draws, which is sampling conditionally on acceptance.
    """
    tq = check_rational(t, "t")
    s, tt = tq.numerator, tq.denominator
    if s >= MAX_DEN >> 8:
        raise InvalidParameterError("t", t, "a numerator below 2^54")
    def one_round(m: int) -> np.ndarray:
        u = uniform_below(s, m, source)
        if s > 1:
            keep = bernoulli_exp(u, np.full(m, s), source)
            u = u[keep]
        v = _geometric_exp(1, 1, u.size, source)
        y = (u + s * v) // tt
        neg = uniform_bits(source, u.size, 1).astype(bool)
        ok = ~(neg & (y == 0))
        return np.where(neg, -y, y)[ok]

    return _by_rounds(check_count(count), one_round, 2)


def discrete_gaussian_cks(sigma2, count: int, source) -> np.ndarray:
    """``P(X = x) ∝ exp(-x^2 / (2 sigma^2))`` on Z for rational ``sigma^2 > 0`` (CKS20 Alg. 3).

    Proposal ``Y`` discrete Laplace with ``t = floor(sigma) + 1``, accepted with probability
    ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``, a rational exponent
    ``(|Y| t d - n)^2 / (2 t^2 d n)`` for ``sigma^2 = n / d``; exact rejection sampling.
    """
    s2 = check_rational(sigma2, "sigma2")
    sn, sd = s2.numerator, s2.denominator
    t = math.isqrt(sn // sd) + 1
    den = 2 * t * t * sd * sn
    if den >= MAX_DEN >> 16:
        raise InvalidParameterError("sigma2", sigma2, "a rational whose numerator and denominator are small "
                                    "enough that 2 t^2 n d < 2^46")
    limit = math.isqrt((MAX_DEN >> 1)) // (t * sd) - 1  # |Y| up to here keeps num < 2^61

    def one_round(m: int) -> np.ndarray:
        y = discrete_laplace_cks(t, m, source)
        a = np.abs(y)
        small = a <= limit
        acc = np.zeros(m, dtype=bool)
        root = a[small] * (t * sd) - sn
        acc[small] = bernoulli_exp(root * root, np.full(root.size, den), source)
        for i in np.flatnonzero(~small):  # astronomically rare: exact with Python ints
            acc[i] = _bernoulli_exp_scalar(Fraction((int(a[i]) * t * sd - sn) ** 2, den), source)
        return y[acc]

    return _by_rounds(check_count(count), one_round, 2)


def _bernoulli_exp_scalar(gamma: Fraction, source) -> bool:
    """``Bernoulli(exp(-gamma))`` with Python ints (CKS20 Alg. 1; for huge exponents)."""
    while gamma > 1:
        if not bool(_bernoulli_exp_unit(np.ones(1, np.int64), np.ones(1, np.int64), source, start=2)[0]):
            return False
        gamma -= 1
    k = 1
    while True:
        num, den = gamma.numerator, gamma.denominator * k
        # U < num/den digit by digit with Python ints
        while True:
            num <<= 8
            digit, num = divmod(num, den)
            u = int(uniform_bits(source, 1, 8)[0])
            if u != digit:
                success = u < digit
                break
        if not success:
            return k % 2 == 1
        k += 1


def discrete_staircase_rejection(epsilon, sensitivity: int, r: int, count: int, source) -> np.ndarray:
    """Discrete staircase noise of Geng & Viswanath (2016), eqs. (82)-(83), exactly.

    ``P(i) = a(r)`` for ``0 <= i < r``, ``b a(r)`` for ``r <= i < Delta``, ``P(i + k Delta) =
    b^k P(i)``, ``P(-i) = P(i)``, with ``b = e^-eps`` for a rational ``eps > 0`` and
    ``a(r) = (1 - b) / (2r + 2b(Delta - r) - (1 - b))``.

    Per pending draw: the block ``j`` is geometric with ratio ``b`` (successes of
    ``Bernoulli(e^-eps)``); the position ``i`` in the block is uniform on ``0..Delta-1``
    and, when ``i >= r``, kept with probability ``b`` (else ``i`` is redrawn): the
    accepted ``i`` has ``P(i) ∝ 1`` or ``b``, independent of ``j``, so ``|X| = j Delta + i``
    has ``P ∝ b^j (1 or b)``, the one-sided staircase; a fair sign with ``-0`` rejected
    gives the symmetric PMF with ``0`` counted once.
    """
    e = check_rational(epsilon, "epsilon")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer >= 1")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not (1 <= r <= sensitivity):
        raise InvalidParameterError("r", r, f"an integer in [1, {sensitivity}]")
    en, ed = e.numerator, e.denominator
    if ed >= MAX_DEN >> 16 or en >= MAX_DEN >> 16:
        raise InvalidParameterError("epsilon", epsilon, "a rational with numerator and denominator below 2^46")
    delta = int(sensitivity)

    def one_round(m: int) -> np.ndarray:
        j = _geometric_exp(en, ed, m, source)
        i = np.empty(m, dtype=np.int64)
        pending = np.arange(m)
        while pending.size:
            cand = uniform_below(delta, pending.size, source)
            high = np.flatnonzero(cand >= r)
            ok = np.ones(pending.size, dtype=bool)
            if high.size:
                ok[high] = bernoulli_exp(np.full(high.size, en), np.full(high.size, ed), source)
            i[pending[ok]] = cand[ok]
            pending = pending[~ok]
        mag = j * delta + i
        neg = uniform_bits(source, m, 1).astype(bool)
        keep = ~(neg & (mag == 0))
        return np.where(neg, -mag, mag)[keep]

    return _by_rounds(check_count(count), one_round, 4)


# ------------------------------------------------------------------ window + dyadic geometric tails
@dataclass(frozen=True)
class Tail:
    """A geometric tail of dyadic ratio ``a / 2^m`` repeating the last ``period`` window masses."""

    a: int
    m: int
    period: int = 1

    def __post_init__(self) -> None:
        _check_dyadic(self.a, self.m, "tail ratio")
        if isinstance(self.period, bool) or not isinstance(self.period, (int, np.integer)) or self.period < 1:
            raise InvalidParameterError("tail period", self.period, "an integer >= 1")


@dataclass(frozen=True, eq=False)
class WindowTailsTable:
    """Exact sampler of a window with dyadic geometric tails (:func:`window_tails_table`).

    ``cells`` are the integer weights of the window cells, then of the right tail's
    classes, then of the left tail's (all scaled by one common factor); ``table`` is an
    alias table over them plus, if needed, a rejection cell ``reject`` padding the total to
    a power of two. When the total needs more than 62 bits there is no table and draws pick
    a region first (:func:`draw_window_tails`).
    """

    lo: int
    width: int
    left: Tail | None
    right: Tail | None
    cells: tuple[int, ...]
    table: AliasTable | None
    reject: int | None

    @property
    def hi(self) -> int:
        return self.lo + self.width - 1


def window_tails_table(weights, lo: int, *, left: Tail | None = None, right: Tail | None = None) -> WindowTailsTable:
    """Prepare exact sampling of the PMF on Z proportional to

    * ``w[k]`` at ``lo + k`` for ``k = 0..W-1`` (the window, ``hi = lo + W - 1``),
    * ``w[W - P + t] r_R^b`` at ``hi + (b - 1) P + t + 1`` for ``b >= 1``, ``t = 0..P-1``
      (right tail, ``P = right.period``, ``r_R = right.a / 2^right.m``),
    * ``w[t] r_L^b`` at ``lo + t - b P`` for ``b >= 1`` (left tail),

    i.e. :class:`optnoise.pmf.IntegerPMF` semantics with dyadic tail ratios (the quantized
    integer-line PMF of :func:`optnoise.sampling.quantize`).

    Exactness: with ``c = 2^m - a`` per tail and ``L = lcm(c_R, c_L)``, window cell ``k``
    gets the integer weight ``w[k] L``, right class ``t`` gets ``w[W-P+t] a_R L / c_R`` -- its
    total tail mass ``w r_R / (1 - r_R) = w a_R / c_R`` times ``L`` -- and left classes
    likewise. A cell is drawn with probability exactly weight ``/ T`` (``T`` the total); a
    tail class then draws its block ``b = 1 + G``, ``G`` geometric with the tail's ratio
    (:func:`~optnoise.sampling.words.geometric_failures`), and ``P(class) P(b) =
    w a_R L / (c_R T) (1 - r_R) r_R^(b-1) = w L r_R^b / T`` since ``a (1 - r) = c r``: every
    point has its target mass times the same ``L / T``.

    Proof: docs/proofs/window-tails-sampler.md.
    """
    w = np.asarray(weights)
    if w.ndim != 1 or w.size == 0 or not (w.dtype.kind in "iu" or w.dtype == object):
        raise InvalidParameterError("weights", weights, "a non-empty 1-D array of integers >= 0")
    ints = [int(v) for v in w]
    if min(ints) < 0 or sum(ints) <= 0:
        raise InvalidParameterError("weights", weights, "integers >= 0 with a positive sum")
    width = len(ints)
    for name, tail in (("left", left), ("right", right)):
        if tail is not None and tail.period > width:
            raise InvalidParameterError(name, tail, f"a period <= window width {width}")
    c_l = (1 << left.m) - left.a if left else 1
    c_r = (1 << right.m) - right.a if right else 1
    common = math.lcm(c_l, c_r)
    cells = [v * common for v in ints]
    if right:
        cells += [v * right.a * (common // c_r) for v in ints[width - right.period:]]
    if left:
        cells += [v * left.a * (common // c_l) for v in ints[:left.period]]
    total = sum(cells)
    if total > 1 << MAX_TABLE_BITS:
        return WindowTailsTable(int(lo), width, left, right, tuple(cells), None, None)
    # all cells times one integer s = floor(2^62 / T) (proportions unchanged), padded to 2^62 by
    # a rejection cell of weight 2^62 - s T < T: rejected with probability below T / 2^62
    scale = (1 << MAX_TABLE_BITS) // total
    padded = [c * scale for c in cells]
    reject = None
    if total * scale != 1 << MAX_TABLE_BITS:
        reject = len(padded)
        padded.append((1 << MAX_TABLE_BITS) - total * scale)
    table = build_alias(np.array(padded, dtype=np.int64), MAX_TABLE_BITS)
    return WindowTailsTable(int(lo), width, left, right, tuple(cells), table, reject)


def _tail_values(wt: WindowTailsTable, where: np.ndarray, cell: np.ndarray, out: np.ndarray,
                 source: RandomSource) -> None:
    """Values of the tail-class cells ``cell`` drawn at positions ``where`` of ``out``: a
    block ``b = 1 + G`` per draw, ``G`` geometric with the tail's ratio."""
    right0 = wt.width
    left0 = wt.width + (wt.right.period if wt.right else 0)
    if wt.right:
        rr = (cell >= right0) & (cell < left0)
        if rr.any():
            b = 1 + geometric_failures(wt.right.a, wt.right.m, int(rr.sum()), source)
            out[where[rr]] = wt.hi + (b - 1) * wt.right.period + (cell[rr] - right0) + 1
    if wt.left:
        ll = cell >= left0
        if ll.any():
            b = 1 + geometric_failures(wt.left.a, wt.left.m, int(ll.sum()), source)
            out[where[ll]] = wt.lo + (cell[ll] - left0) - b * wt.left.period


def draw_window_tails(wt: WindowTailsTable, count: int, source: RandomSource) -> np.ndarray:
    """``count`` exact draws from the window-plus-tails PMF of :func:`window_tails_table`.

    With a table: one word per cell; a draw that lands on the rejection cell is drawn
    again (so each draw is a cell with probability weight ``/ T``, independently). Without
    (a total beyond 62 bits): the cell is a uniform integer below ``T`` located among the
    cumulative cell weights, exact for ``T < 2^63``. Window cells are values directly; the
    few tail-class cells get their blocks afterwards.

    Proof: docs/proofs/window-tails-sampler.md.
    """
    n = check_count(count)
    out = np.empty(n, dtype=np.int64)
    tab = wt.table
    if tab is None:
        total = sum(wt.cells)
        if total >= 1 << 63:
            raise OptnoiseError("window and tail weights too fine for 64-bit sampling")
        cum = np.cumsum(np.array(wt.cells, dtype=np.int64))
        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            out[start:stop] = np.searchsorted(cum, uniform_below(total, stop - start, source), side="right")
    else:
        shift = _U64(64 - tab.resolution)
        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            chunk = out[start:stop]
            alias_lookup(tab, source.words(stop - start) >> shift, chunk)
            if wt.reject is not None:
                again = np.flatnonzero(chunk == wt.reject)
                while again.size:
                    chunk[again] = alias_lookup(tab, source.words(again.size) >> shift)
                    again = again[chunk[again] == wt.reject]
    where = np.flatnonzero(out >= wt.width)
    cell = out[where]
    out += wt.lo
    if where.size:
        _tail_values(wt, where, cell, out, source)
    return out


# ------------------------------------------------------------------ the named laws: inversion, else rejection
def discrete_laplace(t, count: int, source: RandomSource) -> np.ndarray:
    """Exact discrete Laplace ``P(X = x) = (e^(1/t) - 1)/(e^(1/t) + 1) e^(-|x|/t)``, rational ``t > 0``:
    by inversion (:func:`~optnoise.sampling.inversion.laplace_table`) when the table is small,
    else CKS20 Algorithm 2. The geometric mechanism with ``alpha = e^(-1/t)``."""
    from .inversion import draw_inversion, laplace_table
    tab = laplace_table(t)
    return discrete_laplace_cks(t, count, source) if tab is None else draw_inversion(tab, count, source)


def discrete_gaussian(sigma2, count: int, source: RandomSource) -> np.ndarray:
    """Exact discrete Gaussian ``P(X = x) ∝ e^(-x^2/(2 sigma^2))``, rational ``sigma^2 > 0``:
    by inversion (:func:`~optnoise.sampling.inversion.gaussian_table`) when the table is small,
    else CKS20 Algorithm 3."""
    from .inversion import draw_inversion, gaussian_table
    tab = gaussian_table(sigma2)
    return discrete_gaussian_cks(sigma2, count, source) if tab is None else draw_inversion(tab, count, source)


def discrete_staircase(epsilon, sensitivity: int, r: int, count: int, source: RandomSource) -> np.ndarray:
    """Exact GV16 discrete staircase noise ``P_r`` (82)-(83) with ``b = e^-eps`` for the exact
    binary (or rational) value of ``epsilon``: by inversion when the table is small, else by
    :func:`discrete_staircase_rejection`."""
    from .inversion import draw_inversion, staircase_table
    tab = staircase_table(epsilon, sensitivity, r)
    if tab is None:
        return discrete_staircase_rejection(epsilon, sensitivity, r, count, source)
    return draw_inversion(tab, count, source)


#: Tail blocks of integer-line noise are grouped until their ratio is at most this, so that
#: the exact tail sampler needs few Bernoulli trials per draw (same distribution).
TAIL_RATIO_MAX = 0.9
#: Largest tail block (bounds the window, hence the exact certificate's cost).
TAIL_PERIOD_MAX = 4096


def coarse_tails(pmf: IntegerPMF) -> tuple[IntegerPMF, str | None]:
    """The same distribution with geometric tails grouped into blocks of ``P`` values.

    The exact tail sampler draws the number of blocks with Bernoulli trials of the block
    ratio ``r``: ``1 / (1 - r)`` trials per tail draw, 200 for the per-record geometric of
    an age column (``r = e^(-0.005)``). With blocks of ``P`` values the ratio is ``r^P``:
    ``p(k + P) = r^P p(k)`` beyond the widened window ``[lo - (P - 1), hi + (P - 1)]``,
    whose masses are those of the same PMF. ``P`` is the smallest block with ``r^P <= 0.9``
    (at most 10 trials per tail draw): a larger block widens the window, and the exact
    certificate's time grows with it (for that age column, ``P = 22``: 3 s to certify and
    1 M draws/s, against 4.5 s and 0.08 M draws/s with ``P = 1``). Only tails of period 1
    are regrouped.
    """
    tails = [t for t in (pmf.left_tail, pmf.right_tail) if t is not None]
    if not tails or any(t.period != 1 for t in tails) or max(t.ratio for t in tails) <= TAIL_RATIO_MAX:
        return pmf, None
    r = max(t.ratio for t in tails)
    period = min(TAIL_PERIOD_MAX, math.ceil(math.log(TAIL_RATIO_MAX) / math.log(r)))
    lo = pmf.lo - (period - 1 if pmf.left_tail is not None else 0)
    hi = pmf.hi + (period - 1 if pmf.right_tail is not None else 0)
    grouped = (lambda t: None if t is None else GeometricTail(t.ratio ** period, period))
    out = IntegerPMF(pmf.window(lo, hi), -lo, left_tail=grouped(pmf.left_tail), right_tail=grouped(pmf.right_tail),
                     normalize=True)
    return out, f"geometric tails grouped in blocks of {period} values for the sampler (the same distribution)"
