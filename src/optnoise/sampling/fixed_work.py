"""Samplers whose work does not depend on the value drawn (docs/sampling-and-time.md).

The time a draw takes can leak the value drawn (Jin et al., IEEE S&P 2022, for discrete
Laplace samplers; the framework: Ratliff & Vadhan, CCS 2024). Counting the random words
a draw consumes and the rounds it loops (an instrumented source,
:class:`optnoise.sampling.work.CountingSource`), the default release path is made to do
the same work whatever the value:

* **window + tails** (noise on Z, :func:`draw_window_tails_fixed`): every draw takes one
  word for its cell (exact integer alias table) and one word for a tail block, used or not,
  so a draw in a tail does the same work as one in the window. The block count is read off
  a table of ``64``-bit thresholds: with ``G`` the number of successes of
  ``Bernoulli(r)``, ``r = a / 2^m``, before a failure, ``P(G >= g) = r^g``, so for a uniform
  ``U`` in ``[0, 1)`` the variable ``#{g >= 1 : U < r^g}`` has exactly that law. With the
  word ``u`` (``U`` in ``[u, u + 1) 2^-64``) and ``S_g = floor(2^64 r^g)``, ``u < S_g``
  proves ``U < r^g`` and ``u >= 2^64 r^g`` proves the opposite; only ``u = S_g`` for a
  non-integer ``2^64 r^g`` (or ``u = 0`` beyond the table) is undecided, and then ``U`` is
  extended by further words and compared exactly (:func:`geometric_from_words`). Every
  outcome is therefore exactly ``G(U)`` for a uniform ``U``; the extra words are taken with
  probability at most ``(g_max + 1) 2^-64``, the one place left where the work depends on
  the value. The alias draw is redrawn when it lands on the padding cell that makes its
  total a power of two -- with a probability independent of the value.
* **channel rows** (:func:`draw_channel_rows`): one alias table per input, stacked, and one
  word per draw looked up in the row of its input: no loop over the values present, no
  table built on first use (which made the work depend on the *data*).

Cyclic noise (an alias table or the inverse CDF, one word each) already did fixed work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..randomness import RandomSource
from .alias import AliasTable, build as build_alias, lookup as alias_lookup
from .integer_line import Tail, WindowTailsTable
from .words import CHUNK, check_count

#: Largest threshold table of a tail (ratios up to ``2^(-64 ln 2 / 4096)``, about 0.989).
MAX_THRESHOLDS = 4096
#: Largest stacked channel table (bytes) drawn with fixed work.
MAX_CHANNEL_TABLE = 1 << 27
_U64 = np.uint64


# ------------------------------------------------------------------ a tail's block count from one word
@dataclass(frozen=True, eq=False)
class GeometricTable:
    """``S_g = floor(2^64 r^g)`` for ``g = 1..g_max`` (``S_g >= 1``) at index ``g`` of
    ``thresholds`` (index 0 unused, index ``g_max + 1`` holds 0), and whether ``2^64 r^g`` is
    an integer (then ``u = S_g`` is decided)."""

    a: int
    m: int
    thresholds: np.ndarray
    integral: np.ndarray

    @property
    def size(self) -> int:
        return int(self.thresholds.size) - 2

    @property
    def log_ratio(self) -> float:
        return float(np.log(self.a) - self.m * np.log(2.0))


def geometric_table(a: int, m: int) -> GeometricTable | None:
    """The thresholds of ``r = a / 2^m``, or ``None`` when more than :data:`MAX_THRESHOLDS`
    are needed (a ratio very close to 1).

    Exact integers throughout. ``2^64 r^g`` does not increase with ``g`` (``a <= 2^m``; else
    every ``S_g >= 1`` and the table is refused), so the table has more than
    :data:`MAX_THRESHOLDS` entries iff ``S_{MAX+1} >= 1``: one power decides that first.
    ``a^g 2^64`` is then built by one multiplication per ``g``, and ``2^64 r^g`` is an
    integer iff ``a^g 2^64`` has at least ``m g`` trailing zero bits, which are
    ``64 + g tz(a)``.
    """
    last = MAX_THRESHOLDS + 1
    if a >= 1 << m or ((a ** last) << 64) >> (m * last) >= 1:
        return None
    s, integral = [], []
    tz = (a & -a).bit_length() - 1
    top = 1 << 64                                  # a^g 2^64
    for g in range(1, last):
        top *= a
        v = top >> (m * g)
        if v < 1:
            break
        s.append(v)
        integral.append(64 + g * tz >= m * g)
    return GeometricTable(a, m, np.array([(1 << 64) - 1] + s + [0], dtype=_U64),
                          np.array([True] + integral + [False], dtype=bool))


def _geometric_exact(table: GeometricTable, u: int, source: RandomSource) -> int:
    """``#{g >= 1 : U < r^g}`` for ``U`` starting with the word ``u``, extending ``U`` by
    further words until every comparison is decided (exact integers)."""
    num, bits = int(u), 64
    g = 0
    while True:
        step = g + 1
        lhs = num << (table.m * step)             # U_bits * 2^(m g) vs a^g 2^bits
        rhs = (table.a ** step) << bits
        if lhs + (1 << (table.m * step)) <= rhs:  # U < (num + 1) 2^-bits <= r^g: a success
            g = step
            continue
        if lhs >= rhs:                            # U >= num 2^-bits >= r^g: the first failure
            return g
        num = (num << 64) | int(source.words(1)[0])
        bits += 64


def geometric_from_words(table: GeometricTable, u: np.ndarray, source: RandomSource) -> np.ndarray:
    """``G`` with ``P(G >= g) = r^g`` from one uniform 64-bit word per value (module
    docstring; undecided words, probability at most ``(g_max + 1) 2^-64`` each, continue
    exactly with further words).

    ``G`` is the number of thresholds ``S_g`` above ``u``; the float estimate
    ``ceil((ln u - 64 ln 2) / ln r) - 1`` is off by at most one near a threshold, and two exact
    integer comparisons with the thresholds beside it correct it (branch-free, vectorised).
    """
    u = np.ascontiguousarray(u, dtype=_U64)
    n = table.size
    s = table.thresholds
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (np.log(u.astype(np.float64)) - 64 * np.log(2.0)) / table.log_ratio
    g = np.clip(np.nan_to_num(np.ceil(x) - 1, posinf=n, neginf=0), 0, n).astype(np.int64)
    for _ in range(2):   # exact: G >= g iff S_g > u (g >= 1); G >= g + 1 iff S_{g+1} > u
        g -= (g >= 1) & (s[g] <= u)
        g += s[g + 1] > u
    # undecided: u equal to S_{g+1} when 2^64 r^(g+1) is not an integer, or u = 0 beyond the
    # table (both have probability about 2^-58 at most); decided by further words
    undecided = (s[g + 1] == u) & ~table.integral[g + 1]
    undecided |= u == 0
    for i in np.flatnonzero(undecided):
        g[i] = _geometric_exact(table, int(u[i]), source)
    return g


# ------------------------------------------------------------------ window + tails
@dataclass(frozen=True, eq=False)
class FixedTails:
    """A window-plus-tails sampler with its tails' threshold tables."""

    window: WindowTailsTable
    left: GeometricTable | None
    right: GeometricTable | None


def fixed_tails(wt: WindowTailsTable) -> FixedTails | None:
    """The fixed-work form of a window-plus-tails table, or ``None`` (no alias table -- cells
    beyond 62 bits -- or a tail ratio too close to 1 for a threshold table)."""
    if wt.table is None:
        return None
    tables = []
    for tail in (wt.left, wt.right):
        t = None if tail is None else geometric_table(tail.a, tail.m)
        if tail is not None and t is None:
            return None
        tables.append(t)
    return FixedTails(wt, tables[0], tables[1])


def draw_window_tails_fixed(ft: FixedTails, count: int, source: RandomSource) -> np.ndarray:
    """``count`` exact draws of :func:`~optnoise.sampling.integer_line.draw_window_tails`'s
    law with the same work for every value: two words per draw (the cell, the tail block),
    plus redraws of the padding cell, which do not depend on the value."""
    wt, tab = ft.window, ft.window.table
    n = check_count(count)
    out = np.empty(n, dtype=np.int64)
    assert tab is not None
    shift = _U64(64 - tab.resolution)
    right0 = wt.width
    left0 = wt.width + (wt.right.period if wt.right else 0)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        words = source.words(2 * (stop - start)).reshape(stop - start, 2)
        cell = alias_lookup(tab, words[:, 0] >> shift)
        if wt.reject is not None:
            again = np.flatnonzero(cell == wt.reject)
            while again.size:
                cell[again] = alias_lookup(tab, source.words(again.size) >> shift)
                again = again[cell[again] == wt.reject]
        value = cell + wt.lo
        tail_word = words[:, 1]
        blocks_r = None if ft.right is None else 1 + geometric_from_words(ft.right, tail_word, source)
        blocks_l = None if ft.left is None else (
            blocks_r if ft.right is not None and (ft.left.a, ft.left.m) == (ft.right.a, ft.right.m)
            else 1 + geometric_from_words(ft.left, tail_word, source))   # one table for symmetric tails
        if blocks_r is not None:
            rr = (cell >= right0) & (cell < left0)
            value = np.where(rr, wt.hi + (blocks_r - 1) * wt.right.period + (cell - right0) + 1, value)  # type: ignore[union-attr]
        if blocks_l is not None:
            value = np.where(cell >= left0, wt.lo + (cell - left0) - blocks_l * wt.left.period, value)  # type: ignore[union-attr]
        out[start:stop] = value
    return out


# ------------------------------------------------------------------ channel rows
@dataclass(frozen=True, eq=False)
class ChannelTable:
    """One exact alias table per input row, stacked: ``packed[x, c]`` (same ``k`` and
    resolution for every row, since the rows have as many outputs and one total ``2^bits``)."""

    packed: np.ndarray
    k: int
    resolution: int


def channel_table(weights: np.ndarray, bits: int) -> ChannelTable | None:
    """The stacked alias tables of integer rows summing to ``2^bits``, or ``None`` when the
    stack would exceed :data:`MAX_CHANNEL_TABLE` bytes."""
    rows, outputs = weights.shape
    k = max(0, (outputs - 1).bit_length())
    if rows * (1 << k) * 8 > MAX_CHANNEL_TABLE:
        return None
    tables: list[AliasTable] = [build_alias(weights[x], bits) for x in range(rows)]
    return ChannelTable(np.stack([t.packed for t in tables]), tables[0].k, tables[0].resolution)


def draw_channel_rows(table: ChannelTable, inputs: np.ndarray, source: RandomSource) -> np.ndarray:
    """One output per input, exactly from the input's row: one word per draw, looked up in
    the row of the input (the alias draw of :mod:`~optnoise.sampling.alias`, row-wise)."""
    x_in = np.asarray(inputs, dtype=np.int64).ravel()
    out = np.empty(x_in.size, dtype=np.int64)
    low = _U64((1 << table.k) - 1)
    shift = _U64(64 - table.resolution)
    for start in range(0, x_in.size, CHUNK):
        stop = min(x_in.size, start + CHUNK)
        x = source.words(stop - start) >> shift if table.resolution else np.zeros(stop - start, dtype=_U64)
        c = x & low
        e = table.packed[x_in[start:stop], c.astype(np.int64)]
        own = e > (x | low)
        out[start:stop] = np.where(own, c, e & low).astype(np.int64)
    return out.reshape(np.shape(inputs))


__all__ = ["ChannelTable", "FixedTails", "GeometricTable", "MAX_CHANNEL_TABLE", "MAX_THRESHOLDS", "channel_table",
           "draw_channel_rows", "draw_window_tails_fixed", "fixed_tails", "geometric_from_words", "geometric_table"]
