"""The expected absolute error ``E|Y - q|`` of a released value, per true value ``q`` and in the
worst case, from the quantized integer weights that are sampled (floating point: a reported
accuracy figure, not a privacy claim), and the checked integer weights of a channel that it
shares with the exact Neyman intervals (:mod:`optnoise.analysis.intervals`).

* :func:`channel_abs_error` -- any channel ``P[q, y] = W[q, y] / R_q``;
* :func:`additive_abs_error` -- additive noise on ``Z`` (window and geometric tails), clamped
  to ``0..n``, on the line, or mod ``n + 1``, without unrolling the tails further than floats
  can see.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..errors import InvalidParameterError
from .pairs import IntegerForm

Output = Literal["clamped", "line", "cyclic"]
#: Largest channel (rows x outputs) the Neyman route builds (a dense integer matrix).
MAX_CHANNEL_CELLS = 200_000_000


# ------------------------------------------------------------------ integer weights of a channel
def channel_weights(weights: np.ndarray | IntegerForm) -> np.ndarray:
    """The integer weights ``W[q, y]`` of a quantized channel, checked (a matrix of non-negative
    integers, at most :data:`MAX_CHANNEL_CELLS` cells): ``uint64`` when every row sums below
    ``2^63`` (:func:`row_totals_below`), else Python integers."""
    w = weights.weights if isinstance(weights, IntegerForm) else weights
    w = np.asarray(w)
    if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
        raise InvalidParameterError("weights", f"shape {w.shape}", "a matrix of integer weights P[q, y]")
    if w.dtype != object and w.dtype.kind not in "iu":
        raise InvalidParameterError("weights", str(w.dtype), "integer weights (the quantized channel)")
    if w.size > MAX_CHANNEL_CELLS:
        raise InvalidParameterError("weights", f"shape {w.shape}", f"at most {MAX_CHANNEL_CELLS:.3g} cells; "
                                    "use additive_intervals for additive noise")
    if w.dtype.kind == "i" and w.size and w.min() < 0 or w.dtype == object and any(int(x) < 0 for x in w.ravel()):
        raise InvalidParameterError("weights", "negative", "non-negative integer weights")
    if w.dtype != object and row_totals_below(w.astype(np.uint64, copy=False), 1 << 63):
        return w.astype(np.uint64, copy=False)
    return w.astype(object)


def row_totals_below(w: np.ndarray, bound: int, rows: int = 1024) -> bool:
    """Whether every row of non-negative ``uint64`` weights sums to less than ``bound``.

    Exact: the high and low 32-bit halves are summed apart in ``uint64`` (each sum is below
    ``2^32`` times the row length, so below ``2^64`` for rows shorter than ``2^32``), and the
    total is joined in Python integers. Below ``2^63`` every cumulative sum of a row, and a
    cumulative sum plus a mass needed from the row, stays below ``2^64``: the intervals' integer
    arithmetic is exact in ``uint64`` (a quantized channel's rows sum to ``2^62``, so a channel
    of any width stays in ``uint64``, not Python integers). ``rows`` rows at a time.
    """
    low_mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    for start in range(0, w.shape[0], rows):
        block = w[start:start + rows]
        high = (block >> shift).sum(axis=1, dtype=np.uint64)
        low = (block & low_mask).sum(axis=1, dtype=np.uint64)
        if any((int(h) << 32) + int(l) >= bound for h, l in zip(high, low)):
            return False
    return True


# ------------------------------------------------------------------ expected absolute error
@dataclass(frozen=True)
class AbsError:
    """``E|Y - q|`` per true value ``q`` (``per_value[q]``) and its worst case over ``q``."""

    per_value: np.ndarray
    worst: float
    worst_at: int

    @classmethod
    def of(cls, per_value: np.ndarray) -> AbsError:
        i = int(np.argmax(per_value))
        return cls(per_value, float(per_value[i]), i)


def channel_abs_error(weights: np.ndarray | IntegerForm, *, circular: bool = False) -> AbsError:
    """Expected absolute error ``sum_y P[q, y] |y - q|`` of a channel, per ``q`` (floating
    point from the integer weights; ``circular``: distance around the cycle ``0..M-1``)."""
    w = channel_weights(weights)
    rows, outs = w.shape
    out = np.empty(rows)
    y = np.arange(outs)[None, :]
    for start in range(0, rows, 256):       # row blocks: O(256 M) scratch, not O(N M)
        block = w[start:start + 256]
        f = np.array([[float(x) for x in row] for row in block]) if block.dtype == object else block.astype(float)
        d = np.abs(y - np.arange(start, start + block.shape[0])[:, None])
        if circular:
            d = np.minimum(d, outs - d)
        out[start:start + block.shape[0]] = (f * d).sum(axis=1) / f.sum(axis=1)
    return AbsError.of(out)


def additive_abs_error(form: IntegerForm, n: int, *, output: Output = "clamped") -> AbsError:
    """Expected absolute error of additive noise per true value ``q`` in ``0..n``.

    ``clamped``: ``E|clip(q + eta) - q| = sum_{j=1}^{n-q} P(eta >= j) + sum_{j=1}^{q} P(eta <= -j)``
    (O(n) with cumulative sums); ``line``: ``E|eta|`` (the same for every ``q``: one value,
    without unrolling the tails when the window holds 0); ``cyclic``: the linear
    distance ``|((q + eta) mod (n + 1)) - q|`` (what a reader of an ordered domain sees).
    """
    if output == "cyclic":
        w = np.asarray(form.weights).ravel()
        p = np.array([float(x) for x in w]) / float(sum(int(x) for x in w))
        size = n + 1
        y = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size
        return AbsError.of((p[None, :] * np.abs(y - np.arange(size)[:, None])).sum(axis=1))
    line = output == "line"
    holds_zero = form.lo <= 0 <= form.lo + len(form.weights) - 1
    # E|eta| needs the window and the tails' closed form only: no unrolling to -n..n when the
    # window holds 0 (n can be 1e8 for a sum in resolution units).
    if line:
        p, lo = _float_masses(form, 0 if holds_zero else n)
        k = np.arange(lo, lo + p.size)
        return AbsError.of(np.full(1, float((p * np.abs(k)).sum()) + _tail_abs(form, p, lo)))
    # P(eta >= j) for j = 1..m and P(eta <= -j) for j = 1..m (tails beyond the window included),
    # m = n, or less where every float mass beyond m is 0.0 (:func:`_float_reach`): there
    # P(eta >= j) and P(eta <= -j) are exactly 0.0, so the running sums cu, cd stop changing and
    # cu[x] = cu[m] for x >= m, the same floats as unrolling to n (O(m) work instead of O(n)).
    m = min(n, _float_reach(form))
    p, lo = _float_masses(form, m)
    right_tail, left_tail = _tail_totals(form, p, lo)
    suffix = np.cumsum(p[::-1])[::-1] + right_tail            # suffix[i] = P(eta >= lo + i)
    prefix = np.cumsum(p) + left_tail                         # prefix[i] = P(eta <= lo + i)
    up = suffix[np.arange(1, m + 1) - lo]
    down = prefix[-np.arange(1, m + 1) - lo]
    cu, cd = np.concatenate(([0.0], np.cumsum(up))), np.concatenate(([0.0], np.cumsum(down)))
    q = np.arange(n + 1)
    return AbsError.of(cu[np.minimum(n - q, m)] + cd[np.minimum(q, m)])


def remapped_abs_error(form: IntegerForm, n: int, outputs: tuple[int, ...] | np.ndarray,
                       values: tuple[int, ...] | np.ndarray) -> AbsError:
    """Expected absolute error per true value ``q`` of additive noise clamped to ``0..n`` and then
    remapped: the clamped output ``outputs[j]`` released as ``values[j]``, every other as itself
    (:class:`~optnoise.sampling.clamp_remap.ClampRemap`).

    The clamped error (:func:`additive_abs_error`) plus, for each moved output ``z`` with value
    ``v``, ``P(clip(q + eta) = z) (|v - q| - |z - q|)``: ``O(n k)`` for ``k`` moved outputs, the
    masses from the same float unrolling (``P(z = 0) = P(eta <= -q)``, ``P(z = n) = P(eta >= n - q)``).
    """
    base = additive_abs_error(form, n, output="clamped")
    z = np.asarray(outputs, dtype=np.int64)
    v = np.asarray(values, dtype=np.int64)
    if z.size == 0:
        return base
    m = min(n, _float_reach(form))
    p, lo = _float_masses(form, m)
    right_tail, left_tail = _tail_totals(form, p, lo)
    k = np.arange(lo, lo + p.size)
    inside = (k >= -n) & (k <= n)
    full = np.zeros(2 * n + 1)                                         # P(eta = k) at k + n, k = -n..n
    full[k[inside] + n] = p[inside]
    left_tail += float(p[k < -n].sum())
    right_tail += float(p[k > n].sum())
    below = np.cumsum(full) + left_tail                                # below[k + n] = P(eta <= k)
    above = np.concatenate((np.cumsum(full[::-1])[::-1] + right_tail, [0.0]))   # above[k + n] = P(eta >= k)
    q = np.arange(n + 1)
    correction = np.zeros(n + 1)
    for start in range(0, z.size, 64):                                 # 64 moved outputs at a time: O(64 n) scratch
        zs, vs = z[start:start + 64], v[start:start + 64]
        mass = full[zs[None, :] - q[:, None] + n]                      # P(eta = z - q), for 0 < z < n
        mass[:, zs == 0] = below[n - q][:, None]                       # P(eta <= -q)
        mass[:, zs == n] = above[2 * n - q][:, None]                   # P(eta >= n - q)
        correction += (mass * (np.abs(vs[None, :] - q[:, None]) - np.abs(zs[None, :] - q[:, None]))).sum(axis=1)
    return AbsError.of(base.per_value + correction)


#: ``r^t`` below ``2^-UNDERFLOW_BITS`` rounds to 0.0 (the least subnormal is ``2^-1074``).
UNDERFLOW_BITS = 1100


def _float_reach(form: IntegerForm) -> int:
    """A distance from 0 beyond which every float mass :func:`_float_masses` unrolls is
    exactly 0.0, and so are the tails' float totals over the last block (:func:`_tail_totals`).

    The window's reach plus, per tail of ratio ``r`` and period ``p``, ``(t + 1) p`` with
    ``r^t < 2^-1100`` (far below the least subnormal, so ``r^t`` and every product with it
    round to 0.0); a position beyond it is in block ``t + 2`` or later. A ratio that rounds
    to 1.0 (no underflow in reach) gives no limit (a huge reach).
    """
    size = len(form.weights)
    reach, extra = max(abs(form.lo), abs(form.lo + size - 1)), 0
    for tail in (form.left, form.right):
        if tail is not None:
            r, period = float(tail[0]), int(tail[1])
            if not 0.0 < r < 1.0:
                return 1 << 62
            t = math.ceil(UNDERFLOW_BITS * math.log(2) / -math.log(r)) + 1
            extra = max(extra, (t + 1) * period)
    return reach + extra


def _float_masses(form: IntegerForm, n: int) -> tuple[np.ndarray, int]:
    """Float masses on a window covering ``-n..n`` (tails unrolled in floats, one array
    operation per tail)."""
    w = np.array([float(x) for x in form.weights]) / float(form.denominator)
    lo, hi = form.lo, form.lo + w.size - 1
    if form.right is not None and hi < n:
        r, period = float(form.right[0]), int(form.right[1])
        block, t = w[-period:], math.ceil((n - hi) / period)
        w = np.concatenate([w, (np.power(r, np.arange(1, t + 1, dtype=float))[:, None] * block[None, :]).ravel()])
    if form.left is not None and lo > -n:
        r, period = float(form.left[0]), int(form.left[1])
        block, t = w[:period].copy(), math.ceil((lo + n) / period)
        w = np.concatenate([(np.power(r, np.arange(t, 0, -1, dtype=float))[:, None] * block[None, :]).ravel(), w])
        lo -= t * period
    pad_lo, pad_hi = max(0, lo - (-n)), max(0, n - (lo + w.size - 1))
    return np.concatenate((np.zeros(pad_lo), w, np.zeros(pad_hi))), lo - pad_lo


def _tail_totals(form: IntegerForm, p: np.ndarray, lo: int) -> tuple[float, float]:
    """Float mass of the geometric tails beyond the float window ``p`` (right, left)."""
    right = left = 0.0
    if form.right is not None:
        r, period = float(form.right[0]), int(form.right[1])
        right = float(p[-period:].sum()) * r / (1 - r)
    if form.left is not None:
        r, period = float(form.left[0]), int(form.left[1])
        left = float(p[:period].sum()) * r / (1 - r)
    return right, left


def _tail_abs(form: IntegerForm, p: np.ndarray, lo: int) -> float:
    """Float ``sum |k| p(k)`` over the geometric tails beyond the window (closed form)."""
    out = 0.0
    hi = lo + p.size - 1
    if form.right is not None:
        r, period = float(form.right[0]), int(form.right[1])
        pos = np.arange(hi - period + 1, hi + 1)
        blk = p[-period:]
        out += float((blk * np.abs(pos)).sum()) * r / (1 - r) + period * float(blk.sum()) * r / (1 - r) ** 2
    if form.left is not None:
        r, period = float(form.left[0]), int(form.left[1])
        pos = np.arange(lo, lo + period)
        blk = p[:period]
        out += float((blk * np.abs(pos)).sum()) * r / (1 - r) + period * float(blk.sum()) * r / (1 - r) ** 2
    return out


__all__ = ["AbsError", "MAX_CHANNEL_CELLS", "Output", "additive_abs_error", "channel_abs_error", "channel_weights",
           "remapped_abs_error", "row_totals_below"]
