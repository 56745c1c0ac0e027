"""Intervals and expected errors of released values: post-processing of the certified mechanism.

A thin adapter to :mod:`optnoise.analysis.intervals`, on the quantized weights that are
sampled: a channel gets the exact Neyman interval (:func:`~optnoise.analysis.intervals.neyman_intervals`,
coverage ``>= 1 - alpha`` for every true value, checked exactly); clamped integer-line noise
and cyclic noise the interval from the noise window
(:func:`~optnoise.analysis.intervals.additive_intervals`, ``output="clamped"`` or
``"cyclic"``: an arc, ``low > high`` when it wraps). Intervals and errors cost no budget: they
are functions of the released value and of the public mechanism.
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
    if cell.space == "clamped-line":
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
    if cell.space in ("clamped-line", "cyclic"):
        output = "clamped" if cell.space == "clamped-line" else "cyclic"
        ivs = additive_intervals(_form(cell), cell.n, alpha, output=output)
        how = "noise window of the quantized noise" + (" (clamped to the domain)" if output == "clamped" else
                                                       " (an arc: low > high wraps round)")
        low, high = ivs.intervals(y)
        return low, high, f"{how}; coverage >= {float(ivs.coverage):.6g} for every true value"
    return None, None, "none: randomized response on text keys (a set of keys, not an interval)"


def _chained_interval(cell: Cell, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, str]:
    """The chained geometric of a sum: its ratio is close to 1 (``e^(-eps / distance)``), so
    its tails are summed in closed form rather than unrolled: the exact equal-tailed window of
    the quantized noise (:func:`~optnoise.analysis.intervals.equal_tailed_noise_window`, exact
    rational comparisons on the quantized weights and the tails' ratios against the exact
    ``alpha``), then the clamped rule of :class:`~optnoise.analysis.intervals.AdditiveIntervals`."""
    ivs = additive_intervals(_form(cell), cell.n, alpha, output="clamped", method="equal-tailed")
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
    if cell.space == "channel":
        return channel_abs_error(cell.noise.quantize().weights).worst, "worst case over the true value of " \
                                                                        "E|released - true|"
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


__all__ = ["expected_abs_error", "interval"]
