"""Intervals and expected errors of released values: post-processing of the certified mechanism.

A thin adapter: the exact Neyman intervals of a channel and the noise-quantile intervals of
additive noise belong to :mod:`optnoise.analysis.intervals`; until that module is present,
additive noise gets the quantile interval computed here from the quantized noise (what is
sampled), and a channel gets none (``method`` says so). Intervals cost no budget: they are
functions of the released value and of the public mechanism.

Quantile interval of clamped additive noise: with ``P(a <= eta <= b) >= 1 - alpha``
(``a <= 0 <= b``) the release ``y = clip(q + eta, 0, n)`` has ``q`` in
``[y - b, y - a]`` clipped to ``[0, n]`` whenever ``a <= eta <= b``: when the output is
clipped at ``n``, ``q + eta >= n = y`` gives ``q >= y - eta >= y - b``, and ``q <= n <= y - a``
(the other end alike), so the coverage is at least ``1 - alpha`` for every true ``q``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .mechanisms import Cell


def _stats_module() -> Any:
    try:
        from ..analysis import intervals  # type: ignore[attr-defined]
    except ImportError:
        return None
    return intervals


def noise_quantiles(pmf: Any, alpha: float) -> tuple[int, int]:
    """``(a, b)`` with ``P(eta < a) <= alpha / 2`` and ``P(eta > b) <= alpha / 2`` for noise on
    the integer line (window and tails), widened until the window holds ``1 - alpha / 4``."""
    half = max(64, len(pmf.probs))
    while True:
        lo, hi = pmf.lo - half, pmf.hi + half
        masses = np.asarray(pmf.window(lo, hi), dtype=float)
        if masses.sum() >= 1 - alpha / 4 or half > 10**8:
            break
        half *= 4
    cdf = np.cumsum(masses)
    a = lo + int(np.searchsorted(cdf, alpha / 2, side="right"))
    tail = np.cumsum(masses[::-1])
    b = hi - int(np.searchsorted(tail, alpha / 2, side="right"))
    return min(a, 0), max(b, 0)


def interval(cell: Cell, released: np.ndarray, alpha: float) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """``(low, high, method)``: a ``1 - alpha`` interval of the true index for each released
    index (``None`` where no interval is computed)."""
    mod = _stats_module()
    if mod is not None and hasattr(mod, "release_intervals"):
        low, high, method = mod.release_intervals(cell.noise, released, alpha, clamp=cell.space == "clamped-line")
        return np.asarray(low), np.asarray(high), method
    if cell.space == "clamped-line":
        a, b = noise_quantiles(cell.noise.quantize().pmf, alpha)
        return (np.clip(released - b, 0, cell.n), np.clip(released - a, 0, cell.n),
                "noise quantiles of the quantized noise (clamped additive noise; module docstring)")
    if cell.space == "cyclic":
        return _cyclic(cell, released, alpha)
    return None, None, "none yet: the exact Neyman interval of a channel comes with optnoise.analysis.intervals"


def _cyclic(cell: Cell, released: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, str]:
    """The shortest arc of noise values holding ``1 - alpha``: the truth lies on the arc
    ``released - arc`` (``low > high`` when it wraps; the whole cycle when nothing shorter does)."""
    q = cell.noise.quantize()
    p = np.asarray(q.weights, dtype=float) / float(1 << q.bits)
    size = p.size
    best = (size, 0)
    ext = np.concatenate([p, p])
    csum = np.concatenate([[0.0], np.cumsum(ext)])
    for length in range(1, size + 1):
        starts = np.arange(size)
        mass = csum[starts + length] - csum[starts]
        ok = np.flatnonzero(mass >= 1 - alpha)
        if ok.size:
            best = (length, int(ok[0]))
            break
    length, start = best
    # noise in start..start+length-1 (mod size): truth in released - (start+length-1) .. released - start
    return ((released - start - length + 1) % size, (released - start) % size,
            f"shortest arc of the cyclic noise holding {1 - alpha:g} (an arc: low > high wraps round)")


def expected_abs_error(cell: Cell) -> tuple[float | None, str]:
    """The expected absolute error of a released value (answer index units), worst case over
    the true value where it depends on it."""
    mod = _stats_module()
    if mod is not None and hasattr(mod, "expected_abs_error"):
        return float(mod.expected_abs_error(cell.noise, clamp=cell.space == "clamped-line")), "exact"
    q = cell.noise.quantize()
    if cell.space == "clamped-line":
        from .mechanisms import noise_abs
        return noise_abs(cell.noise), "E|noise| (an upper bound: clamping to the domain only shortens the error)"
    if cell.space == "channel":
        m = np.asarray(q.weights, dtype=float) / float(1 << q.bits)
        idx = np.arange(m.shape[0])
        rows = (m * np.abs(idx[None, :] - idx[:, None])).sum(axis=1)
        return float(rows.max()), "worst case over the true value of E|released - true|"
    if cell.space == "cyclic":
        p = np.asarray(q.weights, dtype=float) / float(1 << q.bits)
        k = np.arange(p.size)
        return float(np.sum(p * np.minimum(k, p.size - k))), "E of the circular distance (the same for every truth)"
    return None, "none for categories"


__all__ = ["expected_abs_error", "interval", "noise_quantiles"]
