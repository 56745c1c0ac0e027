"""Exact integer alias tables (Walker 1977, Vose 1991) for certified weights.

A certified PMF has integer weights ``w_i`` summing to ``2^bits``. The alias
method draws an index in O(1) per draw; built in integers, as here, it draws
*exactly* ``w_i / 2^bits`` -- the distribution that was certified.

Construction (all integers, no floats)
--------------------------------------
Let ``N`` be the number of outcomes, ``M = 2^k >= N`` (padding outcomes have
weight 0), ``B = max(bits, k)`` and ``w'_i = w_i 2^(B - bits)`` (so ``sum w' = 2^B``).
Every one of the ``M`` columns has capacity ``C = 2^(B - k)`` units, and
``M C = 2^B`` is the total weight. Column ``c`` holds ``T_c`` units of its own
outcome ``c`` and ``C - T_c`` units of an alias outcome ``A_c``.

Light outcomes (``w'_i < C``) keep ``T_i = w'_i`` and lack ``d_i = C - w'_i``; heavy
ones (``w'_j >= C``) have a surplus ``e_j = w'_j - C``. Lay the deficits end to end
on ``[0, Z)`` (cumulative ends ``X_1 < X_2 < ...``) and the surpluses likewise
(ends ``Y_1 <= Y_2 <= ...``); both total ``Z`` because ``sum w' = M C``. Then:

* a light outcome ``i`` takes all of ``d_i`` from the heavy outcome whose surplus
  interval ``[Y_{j-1}, Y_j)`` contains the start ``X_{i-1}`` of its deficit;
* a heavy outcome ``j`` whose end ``Y_j`` falls strictly inside a light interval
  ``(X_{i-1}, X_i)`` has given ``X_i - Y_j`` more than its surplus, so its own
  column lacks ``X_i - Y_j`` units (``T_j = C - (X_i - Y_j) > 0`` because
  ``X_i - Y_j < d_i <= C``); it takes them from the heavy outcome containing
  the point ``Y_j``, the next one with a non-empty interval;
* every other column is full (``T = C``; its alias is never drawn).

This is Vose's sweep with the work queue written as prefix sums, so it runs
as ``cumsum`` and ``searchsorted`` (vectorised). Each heavy ``j`` keeps
``T_j`` and gives away exactly the part of the axis ``[Y_{j-1}, Y_j)`` plus
``C - T_j``, i.e. ``T_j + sum_given = w'_j``; each light keeps ``w'_i``. So the
units of outcome ``i`` across all columns are exactly ``w'_i``.

Why a draw is exact
-------------------
A draw takes the top ``B <= 62`` bits of one 64-bit uniform word, ``x``, the
column ``c = x mod M`` (its low ``k`` bits) and ``u = x >> k``, uniform on
``[0, C)`` and independent of ``c``; it returns ``c`` if ``u < T_c``, else
``A_c``. Each of the ``2^B`` values of ``x`` is equally likely, and exactly
``T_c`` of the ``C`` values of ``u`` select the column's own outcome, so
``P(i) = sum_c (units of i in column c) / (M C) = w'_i / 2^B = w_i / 2^bits``.
The test suite checks this by enumerating all ``2^B`` values of ``x`` for small
tables. One word per draw suffices because ``B = max(bits, k) <= 62``.

The threshold and alias of a column are packed in one ``uint64`` (``T_c << k |
A_c``, at most ``B + 1 <= 63`` bits), so a draw makes one random memory access.
The test ``u < T_c`` is ``e_c > (x | (M - 1))`` on the packed entry ``e_c``:
``e_c >= (u + 1) 2^k`` iff ``T_c >= u + 1`` since ``A_c < 2^k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import RandomSource
from .words import CHUNK, check_count

#: Largest weight resolution (``sum w = 2^bits``): one 64-bit word per draw needs ``B <= 62``.
MAX_BITS = 62
#: From this support size on :func:`choose` picks the alias table over the inverse CDF
#: (bench/exact_scale.py: the alias draw was not slower at any size tried -- 1.0-1.6x at
#: n = 24, 10x at n = 1e6; below 16 outcomes both are bound by the random words).
ALIAS_MIN_SUPPORT = 16


@dataclass(frozen=True, eq=False)
class AliasTable:
    """An exact integer alias table.

    ``packed[c] = threshold[c] << k | alias[c]`` for the ``M = 2^k`` columns;
    ``resolution`` is ``B``: a draw uses the top ``B`` bits of a word.
    """

    packed: np.ndarray
    k: int
    resolution: int
    bits: int
    size: int

    def __post_init__(self) -> None:
        self.packed.setflags(write=False)

    @property
    def columns(self) -> int:
        return 1 << self.k

    @property
    def threshold(self) -> np.ndarray:
        """``T_c``: units of the column's own outcome (column capacity ``2^(resolution - k)``)."""
        return (self.packed >> np.uint64(self.k)).astype(np.int64)

    @property
    def alias(self) -> np.ndarray:
        return (self.packed & np.uint64(self.columns - 1)).astype(np.int64)


def build(weights: np.ndarray, bits: int) -> AliasTable:
    """Alias table drawing index ``i`` with probability exactly ``weights[i] / 2^bits``.

    Parameters
    ----------
    weights:
        Non-negative integers (any integer dtype, or Python ints) summing to exactly ``2^bits``.
    bits:
        The resolution, ``0 <= bits <= 62``.

    Proof: docs/alias.md.
    """
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not (0 <= int(bits) <= MAX_BITS):
        raise InvalidParameterError("bits", bits, f"an integer in [0, {MAX_BITS}]")
    bits = int(bits)
    w = np.asarray(weights)
    if w.size == 0 or not (w.dtype.kind in "iu" or w.dtype == object):
        raise InvalidParameterError("weights", weights, "a non-empty array of integers >= 0")
    flat = w.ravel()
    if flat.dtype == object:
        ints = [int(v) for v in flat]
        if min(ints) < 0 or max(ints) > 1 << bits:
            raise InvalidParameterError("weights", "a weight outside [0, 2^bits]", f"weights summing to 2^{bits}")
        flat = np.array(ints, dtype=np.int64)
    elif flat.dtype.kind == "i" and int(flat.min()) < 0:
        raise InvalidParameterError("weights", int(flat.min()), "integer weights >= 0")
    elif flat.dtype.kind == "u" and int(flat.max()) > 1 << bits:
        raise InvalidParameterError("weights", int(flat.max()), f"weights summing to 2^{bits}")
    flat = flat.astype(np.int64)
    total = int((flat & 0xFFFFFFFF).sum()) + (int((flat >> 32).sum()) << 32)
    if total != 1 << bits:
        raise InvalidParameterError("weights", f"sum = {total}", f"weights summing to exactly 2^{bits}")
    n = flat.size
    k = max(0, (n - 1).bit_length())
    if k > MAX_BITS:
        raise InvalidParameterError("weights", f"{n} outcomes", f"at most 2^{MAX_BITS} outcomes")
    res = max(bits, k)
    m = 1 << k
    cap = 1 << (res - k)
    s = np.zeros(m, dtype=np.int64)
    s[:n] = flat.astype(np.int64) << np.int64(res - bits)
    threshold = np.full(m, cap, dtype=np.int64)
    alias = np.arange(m, dtype=np.int64)
    light = np.flatnonzero(s < cap)
    heavy = np.flatnonzero(s >= cap)
    if light.size:
        x_end = np.cumsum(cap - s[light])         # deficit ends X_1..X_a
        y_end = np.cumsum(s[heavy] - cap)         # surplus ends Y_1..Y_h
        x_start = x_end - (cap - s[light])
        threshold[light] = s[light]
        alias[light] = heavy[np.searchsorted(y_end, x_start, side="right")]
        nonempty = s[heavy] > cap
        hj = np.flatnonzero(nonempty)
        yj = y_end[hj]
        i = np.searchsorted(x_end, yj, side="right")     # first light interval ending after Y_j
        inside = i < light.size
        inside[inside] &= x_start[i[inside]] < yj[inside]  # Y_j strictly inside (X_{i-1}, X_i)
        hj, yj, i = hj[inside], yj[inside], i[inside]
        threshold[heavy[hj]] = cap - (x_end[i] - yj)
        alias[heavy[hj]] = heavy[np.searchsorted(y_end, yj, side="right")]
    packed = (threshold.astype(np.uint64) << np.uint64(k)) | alias.astype(np.uint64)
    return AliasTable(packed, k, res, bits, n)


def lookup(table: AliasTable, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Outcomes for ``resolution``-bit uniform integers ``x`` (the deterministic core of a draw).

    ``out`` (``int64``, the size of ``x``) receives the outcomes when given. A ``uint64``
    ``x`` is used as scratch space and overwritten.
    """
    x = np.asarray(x, dtype=np.uint64)
    if out is None:
        out = np.empty(x.size, dtype=np.int64)
    low = np.uint64(table.columns - 1)
    c = np.bitwise_and(x, low)
    e = out.view(np.uint64)  # indices < 2^62: the same bits as int64
    # int64 indices and mode="clip" (no bounds pass; every c < columns = packed.size)
    np.take(table.packed, c.view(np.int64), out=e, mode="clip")
    np.bitwise_or(x, low, out=x)
    own = np.greater(e, x)
    np.bitwise_and(e, low, out=e)
    np.copyto(e, c, where=own)
    return out


def draw(table: AliasTable, count: int, source: RandomSource) -> np.ndarray:
    """``count`` indices drawn exactly with probabilities ``weights / 2^bits``.

    ``source.words(n)`` supplies uniform ``uint64`` words, one per draw; each chunk of
    words is shifted once (the one copy) and used in place from there.

    Proof: docs/alias.md.
    """
    count = check_count(count)
    out = np.empty(count, dtype=np.int64)
    shift = np.uint64(64 - table.resolution)
    for start in range(0, count, CHUNK):
        stop = min(count, start + CHUNK)
        words = source.words(stop - start)
        x = np.zeros(stop - start, dtype=np.uint64) if table.resolution == 0 else np.right_shift(words, shift)
        lookup(table, x, out[start:stop])
    return out


def choose(support: int) -> str:
    """``"alias"`` or ``"cdf"``: the sampler to use for a PMF with this many outcomes."""
    return "alias" if support >= ALIAS_MIN_SUPPORT else "cdf"
