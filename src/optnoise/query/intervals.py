"""Intervals and expected errors of released values: post-processing of the certified mechanism.

A thin adapter to :mod:`optnoise.analysis.intervals`, on the quantized weights that are
sampled: a channel gets the exact Neyman interval (:func:`~optnoise.analysis.intervals.neyman_intervals`,
coverage ``>= 1 - alpha`` for every true value, checked exactly); clamped integer-line noise
and cyclic noise the interval from the noise window
(:func:`~optnoise.analysis.intervals.additive_intervals`, ``output="clamped"`` or
``"cyclic"``: an arc, ``low > high`` when it wraps); an unbiased cell's noise on the
integers the same window with ``output="line"`` (the interval kept inside the domain).
Intervals and errors cost no budget: they are functions of the released value and of the
public mechanism.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..analysis import IntegerForm
from ..analysis.intervals import (
    additive_abs_error,
    additive_intervals,
    channel_abs_error,
    neyman_intervals,
)
from ..sampling.quantize import integer_line_form
from .mechanisms import Cell, clamped_errors


def _form(cell: Cell) -> IntegerForm:
    q = cell.noise.quantize()
    if cell.space in ("clamped-line", "line"):
        return integer_line_form(q.weights, q.lo, q.left, q.right)
    return IntegerForm(cell.noise.kind, q.weights, 1 << q.bits)


def interval(cell: Cell, released: np.ndarray, alpha: float) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """``(low, high, method)``: a ``1 - alpha`` interval of the true index for each released
    index (``None`` for categories: a set of keys, not an interval)."""
    y = np.asarray(released, dtype=np.int64)
    if cell.space == "channel" and cell.noise.blocks is not None:
        return _block_interval(cell, y, alpha)
    if cell.space == "channel":
        ivs = neyman_intervals(cell.noise.quantize().weights, alpha)
        return ivs.low[y], ivs.high[y], f"exact Neyman interval of the quantized channel (coverage >= " \
                                        f"{float(ivs.coverage):.6g} for every true value)"
    if cell.chained > 1:
        return _chained_interval(cell, y, alpha)
    if cell.space in ("clamped-line", "line", "cyclic"):
        output = {"clamped-line": "clamped", "line": "line", "cyclic": "cyclic"}[cell.space]
        ivs = additive_intervals(_form(cell), cell.n, alpha, output=output)
        how = "noise window of the quantized noise" + {"clamped": " (clamped to the domain)", "line": " (released on "
                                                       "the integers; the interval kept inside the domain)",
                                                       "cyclic": " (an arc: low > high wraps round)"}[output]
        low, high = ivs.intervals(y) if cell.noise.release is None else _remapped(cell.noise.release, ivs, y)
        return low, high, f"{how}; coverage >= {float(ivs.coverage):.6g} for every true value"
    return None, None, "none: randomized response on text keys (a set of keys, not an interval)"


def _remapped(release: Any, ivs: Any, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of values released as ``R(z)`` for clamped outputs ``z``
    (docs/proofs/geometric-remap.md): the smallest interval holding the interval of every ``z``
    with ``R(z) = y``. The true ``q`` is in the interval of the ``z`` drawn with probability
    ``>= 1 - alpha``, so in that of ``y = R(z)`` too: the coverage is kept."""
    z = np.arange(release.n + 1)
    low_z, high_z = ivs.intervals(z)
    table = release.table()
    low, high = np.full(z.size, release.n), np.zeros(z.size, dtype=np.int64)
    np.minimum.at(low, table, low_z)
    np.maximum.at(high, table, high_z)
    never = low[y] > high[y]                 # a value the remap never releases: its own interval
    own_low, own_high = ivs.intervals(y)
    return np.where(never, own_low, low[y]), np.where(never, own_high, high[y])


def _chained_interval(cell: Cell, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, str]:
    """The chained geometric of a sum: its ratio is close to 1 (``e^(-eps / distance)``), so
    its tails are summed in closed form rather than unrolled: the exact equal-tailed window of
    the quantized noise (:func:`~optnoise.analysis.intervals.equal_tailed_noise_window`, exact
    rational comparisons on the quantized weights and the tails' ratios, of any period,
    against the exact ``alpha``), then the clamped rule of
    :class:`~optnoise.analysis.intervals.AdditiveIntervals` (an unbiased cell's, released on
    the integers, the line rule kept inside the domain)."""
    output = "line" if cell.space == "line" else "clamped"
    ivs = additive_intervals(_form(cell), cell.n, alpha, output=output, method="equal-tailed")
    low, high = ivs.intervals(y)
    w = ivs.window
    return low, high, (f"exact equal-tailed noise window of the quantized geometric (tails in closed form): "
                       f"[{w.low}, {w.high}]; coverage >= {float(ivs.coverage):.6g} for every true value")


#: Above this domain size a clamped cell's error is E|noise| (an upper bound, tight in the
#: middle of the domain) instead of one float per true value.
CLAMPED_ERROR_MAX_N = 1_000_000


def expected_abs_error(cell: Cell) -> tuple[float | None, str]:
    """The expected absolute error of a released value (answer index units), worst case over
    the true value; for keys on a cycle, the circular distance."""
    if cell.space == "channel" and cell.noise.blocks is not None:
        return _block_abs_error(cell), "worst case over the true value of E|released - true|"
    if cell.space == "channel":
        return channel_abs_error(cell.noise.quantize().weights).worst, "worst case over the true value of " \
                                                                        "E|released - true|"
    if cell.space == "line":    # unbiased: y - q = eta whatever q
        return additive_abs_error(_form(cell), cell.n, output="line").worst, \
            "E|noise| (the same for every true value: the released value is not clamped)"
    if cell.space == "clamped-line":
        r = cell.noise.release
        if r is not None and r.outputs and cell.n <= CLAMPED_ERROR_MAX_N:
            return clamped_errors(cell.noise, cell.n).worst, "worst case over the true value of E|released - true| " \
                                                              "(clamped, then remapped)"
        if r is not None and r.outputs:   # |R(z) - q| <= |z - q| + |R(z) - z| <= |eta| + the largest move
            moved = int(np.max(np.abs(np.asarray(r.values) - np.asarray(r.outputs))))
            return additive_abs_error(_form(cell), cell.n, output="line").worst + moved, \
                f"at most E|noise| plus the remap's largest move ({moved})"
        if cell.n > CLAMPED_ERROR_MAX_N:
            # |clip(q + eta) - q| <= |eta| for every q in 0..n (clipping to an interval that
            # holds q never moves a value away from q), with equality in the domain's middle
            # up to the tails' mass beyond n / 2: E|eta| bounds the worst case from above
            # without one float per true value (n can be 1e8 for a sum).
            return additive_abs_error(_form(cell), cell.n, output="line").worst, \
                "at most E|noise| (the worst case over the true value of E|released - true|, " \
                "reached in the middle of the domain)"
        return additive_abs_error(_form(cell), cell.n, output="clamped").worst, \
            "worst case over the true value of E|released - true|"
    if cell.space == "cyclic":
        q = cell.noise.quantize()
        p = np.asarray(q.weights, dtype=float) / float(1 << q.bits)
        k = np.arange(p.size)
        return float(np.sum(p * np.minimum(k, p.size - k))), "E of the circular distance (the same for every truth)"
    return None, "none for categories"


def _block_interval(cell: Cell, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, str]:
    """A block-map channel (answers in intervals, one core row each; docs/proofs/record-blocks.md):
    the exact Neyman intervals of the quantized core, over its rows, widened to the answers of
    the rows they hold. The true answer ``a`` is in the interval iff its row is, so the
    coverage is the core's for every true value."""
    b = cell.noise.blocks
    column = {v: i for i, v in enumerate(b.values)}
    ivs = neyman_intervals(cell.noise.quantize().weights, alpha)
    cols = np.array([column[int(v)] for v in y], dtype=np.int64)
    starts = np.asarray(b.starts, dtype=np.int64)
    return starts[ivs.low[cols]], starts[ivs.high[cols] + 1] - 1, \
        f"exact Neyman interval of the quantized core over its blocks of answers (coverage >= " \
        f"{float(ivs.coverage):.6g} for every true value)"


def _block_abs_error(cell: Cell) -> float:
    """The worst ``E|released - true|`` of a block-map channel: per block, ``sum_c P[r, c] |v_c -
    a|`` is convex in ``a``, so its largest is at an end of the block."""
    b = cell.noise.blocks
    q = cell.noise.quantize()
    w = np.asarray(q.weights, dtype=np.float64)
    p = w / w.sum(axis=1, keepdims=True)
    values = np.asarray(b.values, dtype=np.float64)
    worst = 0.0
    for r in range(p.shape[0]):
        for a in (b.starts[r], b.starts[r + 1] - 1):
            worst = max(worst, float(np.sum(p[r] * np.abs(values - a))))
    return worst


def unbiased_price(cell: Cell, scale: float = 1.0) -> dict:
    """What ``unbiased = true`` costs, in the column's units (``scale``: a sum's resolution).

    The unbiased cell's expected absolute error ``E|eta|`` (the same for every true value)
    against the default, bounded mechanism built at the same target under the same
    neighbourhood (``cell.bounded``): its worst case over the true value (``ratio``) and its
    average over a uniform true value (``average_ratio``). The bounded mechanism's worst case
    is in the middle of the domain, where its clamp or remap rarely acts, so ``ratio`` is
    close to 1; its gain is near the domain's ends, which the average shows. Domains above
    :data:`CLAMPED_ERROR_MAX_N` have no per-value errors: the average is then left out.
    """
    err = expected_abs_error(cell)[0] * scale  # type: ignore[operator]
    out: dict = {"unbiased": True, "expected_abs_error": err,
                 "values": "released on the integers: a value may be negative or above the domain's upper end (it is "
                           "not clamped: clamping would bring the bias back)"}
    b = cell.bounded
    if b is None:
        out.update(bounded_expected_abs_error=None, ratio=None,
                   bounded_mechanism="none certified at this target (the default mechanism is refused there, e.g. a "
                                     "PDP target beyond the optimal channel's size): no price to show")
        return out
    per_value = None      # E|released - true| of the bounded mechanism per true value, computed once
    if b.space == "channel":
        per_value = channel_abs_error(b.noise.quantize().weights).per_value
    elif b.space == "clamped-line" and b.n <= CLAMPED_ERROR_MAX_N:
        per_value = clamped_errors(b.noise, b.n).per_value
    worst = (float(per_value.max()) if per_value is not None else expected_abs_error(b)[0]) * scale  # type: ignore
    average = None if per_value is None else float(per_value.mean()) * scale
    out.update(bounded_expected_abs_error=worst, ratio=err / worst if worst else None,
               bounded_average_abs_error=average, average_ratio=err / average if average else None,
               bounded_mechanism=b.built)
    if worst and average:
        out["price"] = (f"E|released - true| is {err / worst:.4g} times the default mechanism's worst case over the "
                        f"true value (in the middle of the domain) and {err / average:.4g} times its average over a "
                        "uniform true value; the default stays inside the domain and is biased near its ends")
    return out


# ------------------------------------------------------------------ statistics of several parts
def alpha_split(alpha: float, weights: list[float]) -> list[float]:
    """Each part's ``alpha_i`` for a statistic released from independent parts, so that all
    the parts' intervals hold together with probability ``>= 1 - alpha``: proportional to
    ``weights`` (a part's share of the statistic's error: :mod:`.kinds.mean`), scaled up as far
    as the independence of the parts allows, ``prod (1 - alpha_i) >= 1 - alpha`` -- checked in
    exact rational arithmetic (the union bound, ``sum alpha_i <= alpha``, is the start).

    Proof: docs/proofs/mean-interval.md
    """
    from fractions import Fraction
    total = sum(weights)
    base = [alpha * w / total * (1 - 1e-12) for w in weights]

    def holds(t: float) -> bool:
        prod = Fraction(1)
        for b in base:
            a = Fraction(min(t * b, 1.0))
            prod *= 1 - a
        return prod >= 1 - Fraction(alpha)

    lo, hi = 1.0, alpha / max(base)   # at hi one part alone takes alpha: too far
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    out = [lo * b for b in base]
    assert holds(lo)
    return out


def ratio_interval(s: tuple[int, int], c: tuple[int, int], bounds: tuple[int, int]) -> tuple[Fraction, Fraction]:
    """The range of ``s / c`` over the box ``s in [s_lo, s_hi]``, ``c in [max(1, c_lo), c_hi]``,
    within ``bounds`` (where every true mean lies), exactly: the mean's interval when the
    box holds the true sum and count. An empty box (it holds no possible truth) gives
    ``bounds``.

    Proof: docs/proofs/mean-interval.md
    """
    (s_lo, s_hi), (c_lo, c_hi), (lo, hi) = s, (max(1, c[0]), c[1]), bounds
    if c_lo > c_hi:
        return Fraction(lo), Fraction(hi)
    low = Fraction(s_lo, c_hi if s_lo >= 0 else c_lo)
    high = Fraction(s_hi, c_lo if s_hi >= 0 else c_hi)
    low, high = max(low, Fraction(lo)), min(high, Fraction(hi))
    return (low, high) if low <= high else (Fraction(lo), Fraction(hi))


def variance_interval(q: tuple[int, int], s: tuple[int, int], c: tuple[int, int],
                      top: Fraction) -> tuple[Fraction, Fraction]:
    """The range of ``q / c - (s / c)^2`` (the variance from a sum of squares ``q``, a sum ``s``
    and a count ``c``) over the box, ``c >= 1``, within ``[0, top]`` (``top``: the largest
    variance of values in the clamp, Popoviciu), exactly: for each ``c`` the largest value
    takes ``q_hi`` and the ``s`` nearest 0, the least ``q_lo`` and the ``s`` farthest; over
    ``c`` the largest is at the critical point ``2 s^2 / q`` clipped into the box, the least at
    an end of it.

    Proof: docs/proofs/mean-interval.md
    """
    (q_lo, q_hi), (s_lo, s_hi), (c_lo, c_hi) = q, s, (max(1, c[0]), c[1])
    if c_lo > c_hi or q_hi < 0:
        return Fraction(0), top
    near = 0 if s_lo <= 0 <= s_hi else min(abs(s_lo), abs(s_hi))
    far = max(abs(s_lo), abs(s_hi))

    def value(qq: int, ss: int, cc: Fraction) -> Fraction:
        return Fraction(qq) / cc - Fraction(ss * ss) / (cc * cc)

    crit = Fraction(2 * near * near, q_hi) if q_hi > 0 else Fraction(c_lo)
    at = min(max(crit, Fraction(c_lo)), Fraction(c_hi))
    high = value(q_hi, near, at)
    low = min(value(max(q_lo, 0), far, Fraction(c_lo)), value(max(q_lo, 0), far, Fraction(c_hi)))
    low, high = max(low, Fraction(0)), min(high, top)
    return (low, high) if low <= high else (Fraction(0), top)


def outward(low: Fraction, high: Fraction, scale: Fraction = Fraction(1), root: bool = False) -> list[float]:
    """``[low, high]`` times ``scale`` (its square root with ``root``) as floats rounded
    outward: the float interval holds the exact one."""
    import math
    lo, hi = low * scale, high * scale
    a, b = float(lo), float(hi)
    if root:
        a, b = math.sqrt(max(a, 0.0)), math.sqrt(max(b, 0.0))
        while a > 0 and Fraction(a) ** 2 > lo:
            a = math.nextafter(a, -math.inf)
        while Fraction(b) ** 2 < hi:
            b = math.nextafter(b, math.inf)
        return [a, b]
    if Fraction(a) > lo:
        a = math.nextafter(a, -math.inf)
    if Fraction(b) < hi:
        b = math.nextafter(b, math.inf)
    return [a, b]


__all__ = ["alpha_split", "expected_abs_error", "interval", "outward", "ratio_interval", "unbiased_price",
           "variance_interval"]
