"""Exact confidence intervals for a released value, and its expected absolute error.

A mechanism releases ``Y`` for a true answer ``q`` in ``{0..N}``; what the reader wants is a
set ``I(Y)`` with ``P(q in I(Y)) >= 1 - alpha`` for *every* true ``q`` -- a confidence set in
Neyman's sense (Neyman 1937; Casella & Berger, *Statistical Inference*, Thm. 9.2.2). This is
post-processing of the release: it costs no privacy budget.

Everything is computed on the **quantized integer weights that are sampled**
(:meth:`optnoise.mechanism.Mechanism.quantize`), in exact integer arithmetic, so the coverage
statement is proven for the law that is actually drawn, not for a float approximation of it.

Two routes:

* :func:`neyman_intervals` -- any channel ``P[q, y] = W[q, y] / R_q`` (integer weights, row
  totals ``R_q``): for every ``q`` an *acceptance window* ``A_q = [a_q, b_q]`` of outputs with
  ``sum_{y in A_q} W[q, y] >= (1 - alpha) R_q`` (the shortest such window, or the
  equal-tailed one); the interval for an observed ``y`` is the convex hull of
  ``{q : y in A_q}``.
* :func:`additive_intervals` -- additive noise ``eta`` (integer line, clamped to ``0..N``,
  or cyclic mod ``N + 1``): one noise window ``[l, u]`` with ``P(eta in [l, u]) >= 1 - alpha``
  (the shortest, or equal-tailed quantiles); ``I(y) = {q : y in clip(q + [l, u])}``, an
  explicit O(1) formula per ``y`` -- no ``N x N`` matrix, so any ``N``.

**Why the coverage is exact (the argument).** For a true ``q``, the event ``Y in A_q``
implies ``q in {q' : Y in A_q'}``, which is inside its convex hull ``I(Y)``. Hence
``P(q in I(Y)) >= P(Y in A_q) >= 1 - alpha`` for every ``q``, with nothing assumed about the
channel; the last inequality is checked per row in integers (``mass * den(alpha) >=
(den(alpha) - num(alpha)) * R_q`` with ``alpha`` the exact rational of its decimal text).
For additive noise ``A_q = clip(q + [l, u])`` (resp. ``q + [l, u] mod (N + 1)``) and
``P(Y in A_q) >= P(eta in [l, u])``: clamping maps every ``q + eta`` with ``eta in [l, u]``
into ``clip(q + [l, u])``, and on the cycle the map is a bijection. The exact coverage
``min_q P(q in I(Y))`` is also computed for channels (:attr:`ChannelIntervals.coverage`)
and checked ``>= 1 - alpha`` before returning.

Expected absolute error ``E|Y - q|`` per ``q`` and its worst case: :func:`channel_abs_error`,
:func:`additive_abs_error` (floating point from the exact weights; it is a reported accuracy
figure, not a privacy claim), in :mod:`optnoise.analysis.abs_error` and importable from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from ..errors import InvalidParameterError, OptnoiseError
from .abs_error import (MAX_CHANNEL_CELLS, AbsError, Output, additive_abs_error, channel_abs_error, channel_weights,
                        row_totals_below)
from .pairs import IntegerForm

Method = Literal["shortest", "equal-tailed"]


def exact_alpha(alpha: float | Fraction | str) -> Fraction:
    """``alpha`` as an exact rational in ``(0, 1)``: a float is read as the decimal it prints
    (``0.05 -> 1/20``, what the user typed), a Fraction or decimal string as is."""
    try:
        a = alpha if isinstance(alpha, Fraction) else Fraction(repr(alpha) if isinstance(alpha, float) else alpha)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidParameterError("alpha", alpha, "a number in (0, 1)") from exc
    if not 0 < a < 1:
        raise InvalidParameterError("alpha", alpha, "a number in (0, 1)")
    return a


def _check_method(method: str) -> None:
    if method not in ("shortest", "equal-tailed"):
        raise InvalidParameterError("method", method, "'shortest' or 'equal-tailed'")


def _need(total: int, alpha: Fraction) -> int:
    """The least integer mass ``m`` with ``m >= (1 - alpha) total`` (exact)."""
    return -(-(alpha.denominator - alpha.numerator) * total // alpha.denominator)


def _tail_allowance(total: int, alpha: Fraction) -> int:
    """The largest integer mass ``m`` with ``m <= alpha / 2 * total`` (exact)."""
    return alpha.numerator * total // (2 * alpha.denominator)


def shortest_window(cum: np.ndarray, need: int, centre: float | None = None) -> tuple[int, int]:
    """The shortest run of cells ``[a, b]`` whose mass ``cum[b + 1] - cum[a] >= need``.

    ``cum`` is the cumulative integer weight (``cum[0] = 0``, uint64 or Python ints).
    Ties: the larger mass, then the centre closest to ``centre`` (default: the middle).
    """
    size = len(cum) - 1
    targets = cum[:size] + np.asarray(need, dtype=cum.dtype) if cum.dtype != object else \
        np.array([int(c) + need for c in cum[:size]], dtype=object)
    ends = np.searchsorted(cum, targets, side="left")      # first j with cum[j] >= cum[a] + need
    starts = np.arange(size)
    ok = ends <= size
    if not ok.any():
        raise OptnoiseError("shortest_window: no window holds the required mass")
    starts, ends = starts[ok], ends[ok]
    length = ends - starts
    best = starts[length == length.min()]
    ends_best = best + int(length.min())
    mass = np.array([int(cum[e]) - int(cum[s]) for s, e in zip(best, ends_best)], dtype=object)
    pick = best[mass == mass.max()]
    mid = (size - 1) / 2 if centre is None else centre
    a = int(pick[np.argmin(np.abs(pick + (int(length.min()) - 1) / 2 - mid))])
    return a, a + int(length.min()) - 1


def equal_tailed_window(cum: np.ndarray, allowance: int) -> tuple[int, int]:
    """``[a, b]`` with at most ``allowance`` weight below ``a`` and at most ``allowance`` above
    ``b``, ``a`` largest and ``b`` smallest (quantiles at ``alpha / 2`` and ``1 - alpha / 2``)."""
    total = int(cum[-1])
    below = np.array([int(c) for c in cum], dtype=object) if cum.dtype == object else cum
    a = int(np.searchsorted(below, allowance, side="right")) - 1           # cum[a] <= allowance
    b = int(np.searchsorted(below, total - allowance, side="left")) - 1    # cum[b + 1] >= total - allowance
    return a, max(a, b)


# ------------------------------------------------------------------ channels (Neyman)
@dataclass(frozen=True, eq=False)
class ChannelIntervals:
    """Neyman intervals of a channel on inputs ``0..N`` and outputs ``0..M-1``.

    ``accept[q] = (a_q, b_q)`` is the acceptance window of true value ``q``; ``low[y]``,
    ``high[y]`` the interval for output ``y`` (the convex hull of ``{q : a_q <= y <= b_q}``;
    an output no ``q`` accepts -- probability ``<= alpha`` under every ``q`` -- gets the
    single most likely ``q``, which changes no coverage). ``coverage`` is the exact
    ``min_q P(q in I(Y))``, ``>= 1 - alpha``.
    """

    low: np.ndarray
    high: np.ndarray
    accept: np.ndarray
    alpha: Fraction
    coverage: Fraction
    method: str

    def interval(self, y: int) -> tuple[int, int]:
        """The ``(1 - alpha)`` interval ``[low, high]`` of the true value for output ``y``."""
        if not 0 <= int(y) < self.low.size:
            raise InvalidParameterError("y", y, f"an output in 0..{self.low.size - 1}")
        return int(self.low[y]), int(self.high[y])

    def widths(self) -> np.ndarray:
        """``high - low`` per output."""
        return self.high - self.low


def _cumulative(row: np.ndarray) -> np.ndarray:
    if row.dtype == object:
        return np.concatenate(([0], np.cumsum(row))).astype(object)
    return np.concatenate((np.zeros(1, dtype=np.uint64), np.cumsum(row, dtype=np.uint64)))


def neyman_intervals(weights: np.ndarray | IntegerForm, alpha: float | Fraction = 0.05, *,
                     method: Method = "shortest") -> ChannelIntervals:
    """Exact ``(1 - alpha)`` Neyman confidence intervals from a channel's integer weights.

    Parameters
    ----------
    weights
        ``W[q, y]``: the quantized channel's integer weights (``QuantizedChannel.weights``,
        rows summing to ``2^bits``; or an :class:`IntegerForm` of kind ``channel``, e.g. the
        clamped channel). Row ``q`` is the law of the output for true value ``q``; each row
        is normalised by its own total.
    alpha
        Miscoverage, exact rational of its decimal text (:func:`exact_alpha`).
    method
        ``"shortest"``: each row's shortest output window with mass ``>= 1 - alpha`` (ties:
        larger mass, then centred on ``q``'s position); ``"equal-tailed"``: at most
        ``alpha / 2`` below and above.

    Returns
    -------
    ChannelIntervals
        Per output ``y`` the interval ``[low[y], high[y]]``, and the exact coverage.

    Notes
    -----
    Coverage ``>= 1 - alpha`` for every true ``q`` (module docstring: ``Y in A_q`` implies
    ``q in I(Y)``); the integer check of every window and the exact minimum coverage are
    computed, and a shortfall raises (it cannot happen). Cost: ``O(N M log M)`` in uint64
    (Python ints only when a row total reaches ``2^63``).
    """
    a = exact_alpha(alpha)
    _check_method(method)
    w = channel_weights(weights)
    rows, outs = w.shape
    accept = np.zeros((rows, 2), dtype=np.int64)
    totals = []
    for q in range(rows):
        cum = _cumulative(w[q])
        total = int(cum[-1])
        if total <= 0:
            raise InvalidParameterError("weights", f"row {q} sums to 0", "rows with positive total weight")
        totals.append(total)
        if method == "shortest":
            lo, hi = shortest_window(cum, _need(total, a), centre=q * (outs - 1) / max(rows - 1, 1))
        else:
            lo, hi = equal_tailed_window(cum, _tail_allowance(total, a))
        if (int(cum[hi + 1]) - int(cum[lo])) * a.denominator < (a.denominator - a.numerator) * total:
            raise OptnoiseError(f"neyman_intervals: row {q}'s window misses 1 - alpha")  # pragma: no cover
        accept[q] = lo, hi
    low = np.full(outs, rows, dtype=np.int64)
    high = np.full(outs, -1, dtype=np.int64)
    for q in range(rows - 1, -1, -1):
        low[accept[q, 0]:accept[q, 1] + 1] = q
    for q in range(rows):
        high[accept[q, 0]:accept[q, 1] + 1] = q
    orphan = high < 0
    if orphan.any():
        cols = np.flatnonzero(orphan)
        mle = np.array([max(range(rows), key=lambda q: Fraction(int(w[q, y]), totals[q])) for y in cols])
        low[cols] = high[cols] = mle
    coverage = min(_row_coverage(w[q], q, low, high, totals[q]) for q in range(rows))
    if coverage < 1 - a:
        raise OptnoiseError("neyman_intervals: coverage below 1 - alpha")  # pragma: no cover
    return ChannelIntervals(low, high, accept, a, coverage, method)


def _row_coverage(row: np.ndarray, q: int, low: np.ndarray, high: np.ndarray, total: int) -> Fraction:
    """Exact ``P(q in I(Y))`` for true value ``q``."""
    hit = (low <= q) & (q <= high)
    mass = int(row[hit].sum(dtype=np.uint64)) if row.dtype != object else sum(int(x) for x in row[hit])
    return Fraction(mass, total)


def channel_coverage(weights: np.ndarray | IntegerForm, low: np.ndarray, high: np.ndarray) -> list[Fraction]:
    """Exact ``P(q in [low[Y], high[Y]])`` for every true ``q`` of a channel (an independent
    check of any interval table)."""
    w = channel_weights(weights)
    return [_row_coverage(w[q], q, np.asarray(low), np.asarray(high), int(sum(int(x) for x in w[q])))
            for q in range(w.shape[0])]


# ------------------------------------------------------------------ additive noise
@dataclass(frozen=True)
class NoiseWindow:
    """A window ``[l, u]`` of noise values with exact mass ``mass >= 1 - alpha``."""

    low: int
    high: int
    mass: Fraction


@dataclass(frozen=True, eq=False)
class AdditiveIntervals:
    """Intervals for ``Y = q + eta`` released as ``output`` on the domain ``0..n``.

    ``window`` is the noise window ``[l, u]``; for an observed ``y`` the interval is
    ``{q in 0..n : y in A_q}`` with ``A_q = clip(q + [l, u], 0, n)`` (``clamped``),
    ``q + [l, u]`` (``line``), or ``q + [l, u] mod (n + 1)`` (``cyclic``: an *arc*, returned
    as ``(low, high)`` with ``low > high`` meaning it wraps through ``n -> 0``). ``coverage``
    is a proven lower bound on ``P(q in I(Y))`` for every ``q`` (equal to it on the cycle).
    """

    window: NoiseWindow
    n: int
    output: str
    alpha: Fraction
    method: str

    def interval(self, y: int) -> tuple[int, int]:
        """The ``(1 - alpha)`` interval of the true value for a released ``y``."""
        lo, hi = self.intervals(np.array([int(y)]))
        return int(lo[0]), int(hi[0])

    def intervals(self, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised :meth:`interval`: arrays ``low``, ``high`` for released values ``ys``."""
        y = np.asarray(ys, dtype=np.int64)
        l, u, n = self.window.low, self.window.high, self.n
        if self.output == "cyclic":
            if u - l >= n:
                return np.zeros_like(y), np.full_like(y, n)
            return (y - u) % (n + 1), (y - l) % (n + 1)
        if self.output == "clamped" and ((y < 0) | (y > n)).any():
            raise InvalidParameterError("y", int(y[(y < 0) | (y > n)][0]), f"a clamped output in 0..{n}")
        low = np.where((self.output == "clamped") & (y == 0), 0, y - u)     # y <= clip(q + u) iff q >= y - u or y = 0
        high = np.where((self.output == "clamped") & (y == n), n, y - l)    # clip(q + l) <= y iff q <= y - l or y = n
        low, high = np.clip(low, 0, n), np.clip(high, 0, n)
        empty = low > high          # no q accepts y (line output far outside): the nearest end
        low = np.where(empty, high, low)
        return low, high

    @property
    def coverage(self) -> Fraction:
        """A proven lower bound on ``P(q in I(Y))`` for every ``q``: the window's exact mass."""
        return self.window.mass


def noise_masses(form: IntegerForm, alpha: Fraction) -> tuple[np.ndarray, int, int]:
    """Integer masses of noise on ``Z`` over a window wide enough to hold ``1 - alpha / 2``.

    Returns ``(weights, lo, denominator)``: exact masses ``weights / denominator`` at
    ``lo .. lo + size - 1``. A geometric tail ``(r = a / b, period)`` is unrolled block by
    block (cell ``t`` blocks out weighs ``W r^t``), every weight scaled by ``b^T``; ``T`` grows
    until the mass left beyond is ``<= alpha / 4`` a side (exact).
    """
    w = [int(x) for x in form.weights]
    den = int(form.denominator)
    blocks = {}
    for side, tail in (("left", form.left), ("right", form.right)):
        if tail is None:
            blocks[side] = 0
            continue
        r, period = Fraction(tail[0]), int(tail[1])
        block = sum(w[:period]) if side == "left" else sum(w[-period:])
        t = 0
        while Fraction(block, den) * r ** (t + 1) / (1 - r) > alpha / 4:   # mass beyond t blocks
            t += 1
        blocks[side] = t
    scale_l = Fraction(form.left[0]).denominator if form.left else 1
    scale_r = Fraction(form.right[0]).denominator if form.right else 1
    s_l, s_r = scale_l ** blocks["left"], scale_r ** blocks["right"]
    out = [x * s_l * s_r for x in w]
    lo = form.lo
    if blocks["right"]:
        r, period = Fraction(form.right[0]), int(form.right[1])
        base = w[-period:]
        for t in range(1, blocks["right"] + 1):
            out += [x * r.numerator ** t * scale_r ** (blocks["right"] - t) * s_l for x in base]
    if blocks["left"]:
        r, period = Fraction(form.left[0]), int(form.left[1])
        base = w[:period]
        for t in range(1, blocks["left"] + 1):
            out = [x * r.numerator ** t * scale_l ** (blocks["left"] - t) * s_r for x in base] + out
            lo -= period
    return np.array(out, dtype=object), lo, den * s_l * s_r


def noise_window(form: IntegerForm, alpha: float | Fraction = 0.05, *, method: Method = "shortest") -> NoiseWindow:
    """The noise window ``[l, u]`` with exact mass ``>= 1 - alpha``.

    Parameters
    ----------
    form
        The quantized noise's exact masses: kind ``integer`` (window + dyadic geometric tails,
        ``sampling.integer_line_form`` of a ``QuantizedInteger``) or ``cyclic`` (weights on
        ``0..n`` over ``2^bits``; the window is then the shortest *arc*, ``l`` may be negative,
        meaning ``n + 1 + l``).
    alpha
        Miscoverage (:func:`exact_alpha`).
    method
        ``"shortest"`` or ``"equal-tailed"`` (the ``alpha / 2`` and ``1 - alpha / 2`` quantiles;
        integer line only).
    """
    a = exact_alpha(alpha)
    _check_method(method)
    if form.kind == "cyclic":
        if method != "shortest":
            raise InvalidParameterError("method", method, "'shortest' for cyclic noise (an arc)")
        w = np.asarray(form.weights).ravel().astype(object)
        size = w.size
        total = int(sum(int(x) for x in w))
        doubled = np.concatenate((w, w))            # arcs = runs of at most `size` cells
        lo, hi = shortest_window(_cumulative(doubled), _need(total, a), centre=size)
        mass = sum(int(x) for x in doubled[lo:hi + 1])
        start = lo % size
        start = start - size if start > size // 2 else start
        return NoiseWindow(start, start + hi - lo, Fraction(mass, total))
    if form.kind != "integer":
        raise InvalidParameterError("form", form.kind, "noise of kind 'integer' or 'cyclic'")
    if method == "equal-tailed":
        return equal_tailed_noise_window(form, a)
    w, lo, den = noise_masses(form, a)
    cum = _cumulative(w)
    l, u = shortest_window(cum, _need(den, a), centre=-lo)
    mass = Fraction(int(cum[u + 1]) - int(cum[l]), den)
    if mass < 1 - a:
        raise OptnoiseError("noise_window: the window misses 1 - alpha")  # pragma: no cover
    return NoiseWindow(l + lo, u + lo, mass)


def equal_tailed_noise_window(form: IntegerForm, alpha: float | Fraction = 0.05) -> NoiseWindow:
    """The equal-tailed window ``[l, u]`` of integer-line noise, exactly, without unrolling its tails.

    ``l`` is the largest value with ``P(eta < l) <= alpha / 2``, ``u`` the smallest with
    ``P(eta > u) <= alpha / 2`` (so ``P(eta in [l, u]) >= 1 - alpha``), each searched over
    the window and its own side's tail: when one side's quantile lies beyond the *other* end
    of the window (a very skewed noise, never the symmetric noise a query samples), the
    bound is held at that end -- a wider window, still covering ``>= 1 - alpha``, and its mass
    still exact. Every comparison is exact, on the integer weights and the tails' rational
    ratios. Unrolling a geometric tail
    cell by cell (:func:`noise_masses`) needs ``ln(alpha) / ln(r)`` cells of growing integers,
    thousands when ``r`` is close to 1 (a sum's geometric, ``r = e^(-eps / distance)``); here
    a tail is summed in closed form: with ``B`` the weight of the tail's last block of
    ``period`` cells in the window and ``r`` its ratio, block ``k >= 1`` beyond the window
    weighs ``B r^k``, everything beyond ``k`` blocks ``B r^(k+1) / (1 - r)``, and within block
    ``k`` cell ``j`` has ``r^k`` times the weight of the window's cell ``j`` of that block. The
    quantile's block comes from a float estimate of ``k``, then moved until the exact
    comparisons at ``k`` and ``k - 1`` hold (:func:`_tail_quantile`). The mass is exact:
    ``1 - P(eta < l) - P(eta > u)``, over the exact total of the window and both tails.
    """
    a = exact_alpha(alpha)
    if form.kind != "integer":
        raise InvalidParameterError("form", form.kind, "noise of kind 'integer'")
    w = [int(x) for x in np.asarray(form.weights).ravel()]
    total = Fraction(sum(w)) + _beyond(w, form.right) + _beyond(w[::-1], form.left)
    half = a / 2 * total
    u, above = _tail_quantile(w, form.right, half)
    if w == w[::-1] and form.left == form.right:           # symmetric noise: the mirror is itself
        v, below = u, above
    else:
        v, below = _tail_quantile(w[::-1], form.left, half)   # the mirrored noise: -eta
    hi, lo = form.lo + u, form.lo + len(w) - 1 - v
    mass = 1 - _factored_sum(above, below) / total
    if mass < 1 - a:
        raise OptnoiseError("equal_tailed_noise_window: the window misses 1 - alpha")  # pragma: no cover
    return NoiseWindow(lo, max(lo, hi), mass)


def _beyond(w: list[int], tail: tuple[Fraction, int] | None) -> Fraction:
    """Weight beyond the window's right end: ``B r / (1 - r)`` (0 without a tail)."""
    if tail is None:
        return Fraction(0)
    r, period = Fraction(tail[0]), int(tail[1])
    return sum(w[-period:]) * r / (1 - r)


#: A rational kept as ``r^k c`` (:func:`_tail_quantile`): ``(r, k, c)``.
Factored = tuple[Fraction, int, Fraction]


def _factored_sum(x: Factored, y: Factored) -> Fraction:
    """``r1^k1 c1 + r2^k2 c2``, exactly. With one ratio ``r``: ``r^m (c1 r^(k1-m) + c2 r^(k2-m))``,
    ``m = min(k1, k2)``, so that no two rationals with huge denominators are added (a gcd
    quadratic in their size, :func:`_tail_quantile`); the same value either way."""
    (r1, k1, c1), (r2, k2, c2) = x, y
    if x is y:
        return r1 ** k1 * (2 * c1)
    if r1 == r2:
        m = min(k1, k2)
        return r1 ** m * (c1 * r1 ** (k1 - m) + c2 * r1 ** (k2 - m))
    return r1 ** k1 * c1 + r2 ** k2 * c2


def tail_below(b: int, rn: int, rd: int, hn: int, hd: int, k: int) -> bool:
    """``b (rn/rd)^(k+1) / (1 - rn/rd) <= hn/hd``, exactly: ``b rn^(k+1) hd <= hn rd^k (rd - rn)``
    (``0 < rn < rd``, ``hn, hd > 0``, ``b >= 0``).

    The two sides' base-2 logarithms in floats decide when they differ by more than ``1e-12``
    times the sum of their terms' sizes: each term's float error is at most a few ulps of it
    (``math.log2`` of an integer, one product by ``k``; ``math.fsum`` rounds the sum once), so
    the margin is over a thousand times the error; otherwise the powers, integers of
    ``k log2(rd)`` bits, are formed and compared (0.02 s each for a sum's geometric: issue 37's
    start-up). The answer is the exact comparison's either way (``tests/test_intervals.py``)."""
    if b > 0 and 0 < rn < rd and hn > 0:
        terms = (math.log2(b), (k + 1) * math.log2(rn), math.log2(hd), -math.log2(hn), -k * math.log2(rd),
                 -math.log2(rd - rn))
        diff, size = math.fsum(terms), sum(abs(t) for t in terms) + 1.0
        if abs(diff) > 1e-12 * size:
            return diff < 0
    return b * rn ** (k + 1) * hd <= hn * rd ** k * (rd - rn)


def _tail_quantile(w: list[int], tail: tuple[Fraction, int] | None, half: Fraction) -> tuple[int, Factored]:
    """The smallest index ``i`` (of the window, or beyond it into the right tail) with weight
    above it ``<= half``, and that weight exactly, as ``(r, k, c)`` meaning ``r^k c``. Indices
    past the window's end ``size - 1`` are in the tail (block ``k >= 1`` covers
    ``size - 1 + (k-1) period + 1 ..``)."""
    beyond = _beyond(w, tail)
    above = beyond
    i = len(w) - 1
    if above <= half:              # inside the window: walk down while the weight above stays small
        while i > 0 and above + w[i] <= half:
            above += w[i]
            i -= 1
        return i, (Fraction(1), 0, above)
    r, period = Fraction(tail[0]), int(tail[1])  # type: ignore[index]
    block = w[-period:]
    b = sum(block)
    rn, rd, hn, hd = r.numerator, r.denominator, half.numerator, half.denominator

    def small(k: int) -> bool:
        """``past(k) = b r^(k+1) / (1 - r) <= half`` (:func:`tail_below`)."""
        return tail_below(b, rn, rd, hn, hd, k)

    # the least k >= 1 with small(k): a float estimate, then galloping and bisection, exact
    x = float(half * (1 - r) / b)
    est = math.log(x) / math.log(float(r)) - 1 if 0 < x < 1 and 0 < float(r) < 1 else 1.0
    k = max(1, math.ceil(est) if math.isfinite(est) else 1)
    step = 1
    while not small(k):
        k, step = k + step, 2 * step
    good, bad, step = k, 0, 1
    while good - step >= 1 and small(good - step):
        good, step = good - step, 2 * step
    bad = max(bad, good - step)                 # small(bad) fails (or bad = 0: past(0) > half)
    while good - bad > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if small(mid) else (good, mid)
    k = good
    # in block k: cell j is above everything of block k after it and beyond k blocks. The
    # weight above is kept factored, ``r^k c`` with ``c = b r / (1 - r) + sum of block[j'] for
    # j' > j`` (the same rational: ``b r^(k+1) / (1 - r) = r^k b r / (1 - r)`` and block k's
    # cell weighs ``r^k block[j]``): ``r^k`` has integers of ``k log2(1/r)`` bits (thousands of
    # blocks when ``r`` is close to 1), and a sum of two such rationals normalises with a gcd
    # of those integers, quadratic in their size (0.3-0.5 s for a sum's geometric); a product
    # of ``r^k`` (a power of a normalised ratio: coprime for free) and the small ``c`` needs
    # only gcds against ``c``'s small integers, and a comparison only products. Exact either way.
    scale = r ** k
    c, j = b * r / (1 - r), period - 1
    while j > 0 and scale * (c + block[j]) <= half:
        c += block[j]
        j -= 1
    return len(w) - 1 + (k - 1) * period + j + 1, (r, k, c)


def additive_intervals(form: IntegerForm, n: int, alpha: float | Fraction = 0.05, *,
                       output: Output = "clamped", method: Method = "shortest") -> AdditiveIntervals:
    """Exact ``(1 - alpha)`` intervals for additive noise from its quantiles.

    Parameters
    ----------
    form
        The quantized noise as an :class:`IntegerForm` (kind ``integer`` for noise on ``Z``,
        ``cyclic`` for noise mod ``n + 1``).
    n
        The domain ``0..n`` of the true value.
    alpha, method
        As in :func:`noise_window`.
    output
        ``"clamped"`` (released ``clip(q + eta, 0, n)``), ``"line"`` (``q + eta``), or
        ``"cyclic"`` (``(q + eta) mod (n + 1)``).

    Notes
    -----
    Coverage ``>= P(eta in [l, u]) >= 1 - alpha`` for every ``q`` (module docstring), the
    window's mass computed exactly on the quantized weights. O(1) per released value.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (the domain 0..n)")
    if output not in ("clamped", "line", "cyclic"):
        raise InvalidParameterError("output", output, "'clamped', 'line' or 'cyclic'")
    if (output == "cyclic") != (form.kind == "cyclic"):
        raise InvalidParameterError("output", output, "'cyclic' exactly for cyclic noise")
    if output == "cyclic" and np.asarray(form.weights).size != n + 1:
        raise InvalidParameterError("n", n, f"the cyclic noise's size minus one ({np.asarray(form.weights).size - 1})")
    window = noise_window(form, alpha, method=method)
    return AdditiveIntervals(window, int(n), output, exact_alpha(alpha), method)


__all__ = [
    "AbsError", "AdditiveIntervals", "ChannelIntervals", "MAX_CHANNEL_CELLS", "NoiseWindow", "additive_abs_error",
    "additive_intervals", "channel_abs_error", "channel_coverage", "equal_tailed_window", "exact_alpha",
    "equal_tailed_noise_window", "neyman_intervals", "noise_masses", "noise_window", "row_totals_below", "shortest_window",
    "tail_below",
]
