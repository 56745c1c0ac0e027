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
from .mechanisms import Cell


def _form(cell: Cell) -> IntegerForm:
    q = cell.noise.quantize()
    if cell.space in ("clamped-line", "line"):
        return integer_line_form(q.weights, q.lo, q.left, q.right)
    return IntegerForm(cell.noise.kind, q.weights, 1 << q.bits)


def interval(cell: Cell, released: np.ndarray, alpha: float) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """``(low, high, method)``: a ``1 - alpha`` interval of the true index for each released
    index (``None`` for categories: a set of keys, not an interval)."""
    y = np.asarray(released, dtype=np.int64)
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
        low, high = ivs.intervals(y)
        return low, high, f"{how}; coverage >= {float(ivs.coverage):.6g} for every true value"
    return None, None, "none: randomized response on text keys (a set of keys, not an interval)"


def _chained_interval(cell: Cell, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, str]:
    """The chained geometric of a sum has tails far wider than the exact window routine's
    integers can hold in time: its noise window ``[l, u]`` is found in floating point from the
    quantized window weights and the geometric tails' closed form (:func:`_right_quantile`;
    tails of any period), widened by one value on each side for round-off; the interval is
    then the clamped rule of :class:`~optnoise.analysis.intervals.AdditiveIntervals` (an
    unbiased cell's, released on the integers, the line rule kept inside the domain)."""
    q = cell.noise.quantize()
    w = np.asarray(q.weights, dtype=float)
    (a, m, pl), (a2, m2, pr) = q.left, q.right
    left, right = a / 2.0**m, a2 / 2.0**m2
    z = w.sum() + w[:pl].sum() * left / (1 - left) + w[-pr:].sum() * right / (1 - right)
    p = w / z
    half = alpha / 2
    hi_val = _right_quantile(p, q.lo, (right, pr), half)
    lo_val = -_right_quantile(p[::-1], -(q.lo + w.size - 1), (left, pl), half)   # the mirror image
    u, l_ = max(0, hi_val + 1), min(0, lo_val - 1)
    n = cell.n
    if cell.space == "line":    # y = q + eta: q in [y - u, y - l], kept inside the domain (the nearest end if empty)
        low, high = np.clip(y - u, 0, n), np.clip(y - l_, 0, n)
        low = np.minimum(low, high)
    else:
        low = np.where(y == 0, 0, np.clip(y - u, 0, n))
        high = np.where(y == n, n, np.clip(y - l_, 0, n))
    return low, high, ("noise window of the quantized geometric in floating point (closed-form tails), widened by one "
                       f"value each side: [{l_}, {u}]")


def _right_quantile(p: np.ndarray, lo: int, tail: tuple[float, int], half: float) -> int:
    """Smallest ``u`` with ``P(eta > u) <= half`` (floating point): ``p`` the masses on the
    window ``lo..hi``; beyond it the cell ``hi + (t - 1) P + s`` (``s = 1..P``, ``t >= 1``)
    weighs ``p[hi - P + s] r^t``, so ``P(eta > hi + t P) = B r^(t + 1) / (1 - r)`` with ``B``
    the end block's mass: the block holding ``u`` in closed form, then ``u`` within it."""
    import math
    r, period = tail
    block = p[-period:]
    hi = lo + p.size - 1
    b = float(block.sum())
    beyond = b * r / (1 - r)                                                    # P(eta > hi)
    if beyond <= half:
        above = beyond + np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])   # P(eta > lo + i)
        return lo + int(np.flatnonzero(above <= half)[0])
    t = max(1, math.ceil(math.log(half * (1 - r) / b) / math.log(r) - 1))
    while b * r ** (t + 1) / (1 - r) > half:                                    # round-off in the logarithms
        t += 1
    cells = block * r ** t
    above = b * r ** (t + 1) / (1 - r) + np.concatenate([np.cumsum(cells[::-1])[::-1][1:], [0.0]])
    return hi + (t - 1) * period + 1 + int(np.flatnonzero(above <= half)[0])


#: Above this domain size a clamped cell's error is E|noise| (an upper bound, tight in the
#: middle of the domain) instead of one float per true value.
CLAMPED_ERROR_MAX_N = 1_000_000


def expected_abs_error(cell: Cell) -> tuple[float | None, str]:
    """The expected absolute error of a released value (answer index units), worst case over
    the true value; for keys on a cycle, the circular distance."""
    if cell.space == "channel":
        return channel_abs_error(cell.noise.quantize().weights).worst, "worst case over the true value of " \
                                                                        "E|released - true|"
    if cell.space == "line":    # unbiased: y - q = eta whatever q
        return additive_abs_error(_form(cell), cell.n, output="line").worst, \
            "E|noise| (the same for every true value: the released value is not clamped)"
    if cell.space == "clamped-line":
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
        per_value = additive_abs_error(_form(b), b.n, output="clamped").per_value
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


__all__ = ["expected_abs_error", "interval", "unbiased_price"]
