"""The units of a streamed table: a dense index per unit id, each row's rank within its unit,
and the bounded state that the contribution rules need (docs/proofs/contribution-bounding.md).

**Ids.** :class:`UnitIndex` numbers every unit id the first time it appears. Two ids are one
unit when they are equal integers, or else equal as text (as ``str`` writes them): an id whose
text is an integer as ``str`` writes it (``"0"``, ``"-12"``; no sign ``+``, no leading zero)
and fits int64 is kept as that integer, which is the same relation (two such texts are equal
exactly when their integers are), so a CSV's text ids need no Python loop.

**The state: a unit's first ``m`` rows.** With ``max_rows = m`` only a unit's first ``m`` rows
in the input's order can count, so :class:`Slots` keeps one slot per (unit, rank < m): for each
layout of statistics the row's cell (``-1``: not counted there), and for each summed column the
row's clamped, rounded value. A row is written once, at its rank, whichever batch it comes in
(a unit's rows need not be contiguous); a row past the ``m``-th of its unit is never stored.
The state is therefore at most ``units x m`` slots of a few bytes (the narrowest integer type
holding the cells and the clamped values), however many rows the input has; the matrices
grow with the units seen and the largest rank seen (at most ``m``). Above :data:`SLOT_BYTES`
the aggregate keeps the per (unit, cell) totals instead (:class:`.aggregate.Totals`). The
per (unit, cell) aggregate the kinds read (:class:`SlotPart`) is each unit's slots sorted and
summed: the same numbers as totals folded row by row.

**``max_rows_per_group = r``.** Read out of the slots: in each unit, each group keeps the
first ``r`` of its counted rows in slot order (:meth:`Slots.capped`) -- the input's order, or
under ``bounding = "random"`` the rows' random priorities.

**``bounding = "random"``.** Each row gets a pseudorandom 64-bit priority (AES of its read
index under the query's key, :mod:`.priority`), kept in one more lane; a unit keeps its ``m`` rows of *smallest* priority
(a bottom-``m`` sample, :meth:`Slots.merge`): a row past a unit's ``m``-th replaces the
unit's slot of largest priority when its own is smaller. The state is the same ``units x m`` slots
(plus 8 bytes each for the priority), whatever the input's length or order.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from .arrow import arrow_numpy

if TYPE_CHECKING:
    import pandas as pd

#: Integer ids below this (or below 4 x the ids seen) are indexed by a direct lookup array.
LOOKUP_MAX = 1 << 22
#: The slots of all units at most this many bytes; beyond, per (unit, cell) totals.
SLOT_BYTES = 1 << 28
#: Units per block when the slots are turned into the per (unit, cell) aggregate.
BLOCK_UNITS = 1 << 12
#: Texts that ``str`` writes for an int64 of at most 18 digits (longer ones are checked in Python).
INTEGER_TEXT = r"^(0|-?[1-9][0-9]{0,17})$"
LONG_INTEGER_TEXT = r"^-?[1-9][0-9]{18}$"


class UnitIndex:
    """A growing map from unit id to a dense index 0, 1, ... (module docstring). Integer ids:
    while non-negative and small (below :data:`LOOKUP_MAX`, or a few times the ids seen), a
    direct lookup array ``id -> index``; otherwise sorted arrays and ``searchsorted``; new ids
    of a batch numbered in increasing order. Other ids as text (Arrow's dictionary encoding):
    integer texts go to the integer map, the others to a dictionary, numbered in order of
    appearance."""

    def __init__(self) -> None:
        self.size = 0
        self._lookup: np.ndarray | None = np.zeros(0, np.int64)   # id -> index, -1 unseen
        self._sorted = np.zeros(0, np.int64)   # integer ids, sorted (without the lookup)
        self._at = np.zeros(0, np.int64)       # their indices
        self._text: dict[str, int] = {}

    def codes(self, ids: Any) -> np.ndarray:
        """The dense index of every id of one batch (a NumPy array, or an Arrow array of text),
        adding the new ones."""
        if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" and (ids.dtype.kind == "i" or ids.dtype.itemsize < 8):
            return self._integer_codes(ids.astype(np.int64, copy=False))
        import pyarrow as pa
        import pyarrow.compute as pc
        if isinstance(ids, np.ndarray):   # any other id: its text, as ``str`` writes it
            import pandas as pd
            ids = pa.array(pd.Series(ids).astype(str).to_numpy(object), pa.string())
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        if ids.null_count == 0 and all(pc.all(pc.match_substring_regex(sample, INTEGER_TEXT)).as_py() is not False
                                       for sample in (ids.slice(0, 64), ids)):   # all integer texts (a sample first)
            return self._integer_codes(arrow_numpy(pc.cast(ids, pa.int64())))
        encoded = pc.dictionary_encode(ids)
        return self._text_codes(encoded.dictionary)[arrow_numpy(encoded.indices)]

    def _text_codes(self, texts: Any) -> np.ndarray:
        """The index of distinct texts: integer texts by their integer, the others by text."""
        import pyarrow as pa
        import pyarrow.compute as pc
        is_integer = pc.match_substring_regex(texts, INTEGER_TEXT)
        integer = arrow_numpy(is_integer)
        at = np.flatnonzero(integer)
        values = arrow_numpy(pc.cast(texts.filter(is_integer), pa.int64()))
        rest = np.flatnonzero(~integer)
        if len(rest):
            long = pc.match_substring_regex(texts.take(pa.array(rest)), LONG_INTEGER_TEXT).to_numpy(zero_copy_only=False)
            fits = [j for j in rest[long] if -2 ** 63 <= int(texts[int(j)].as_py()) < 2 ** 63]
            if fits:
                at = np.concatenate([at, np.asarray(fits, np.int64)])
                values = np.concatenate([values, np.asarray([int(texts[int(j)].as_py()) for j in fits], np.int64)])
                rest = np.setdiff1d(rest, fits)
        mapped = np.empty(len(texts), np.int64)
        mapped[at] = self._integer_codes(values)
        table = self._text
        for j in rest:
            u = texts[int(j)].as_py()
            code = table.get(u)
            if code is None:
                code = table[u] = self.size
                self.size += 1
            mapped[j] = code
        return mapped

    def _to_sorted(self) -> None:
        """Leave the lookup array for the sorted arrays (for good)."""
        if self._lookup is not None:
            ids = np.flatnonzero(self._lookup >= 0)
            self._sorted, self._at, self._lookup = ids.astype(np.int64), self._lookup[ids], None

    def _integer_codes(self, ids: np.ndarray) -> np.ndarray:
        if self._lookup is not None and len(ids):
            low, high = int(ids.min()), int(ids.max())
            if low >= 0 and high < max(LOOKUP_MAX, 4 * (self.size + len(ids))):
                return self._lookup_codes(ids, high)
            self._to_sorted()
        if self._lookup is not None:
            return np.zeros(0, np.int64)
        uniq, local = np.unique(ids, return_inverse=True)
        pos = np.searchsorted(self._sorted, uniq)
        found = pos < len(self._sorted)
        found[found] = self._sorted[pos[found]] == uniq[found]
        mapped = np.empty(len(uniq), np.int64)
        mapped[found] = self._at[pos[found]]
        new = ~found
        n_new = int(new.sum())
        mapped[new] = np.arange(self.size, self.size + n_new)
        self.size += n_new
        if n_new:
            keys = np.concatenate([self._sorted, uniq[new]])
            order = np.argsort(keys, kind="stable")
            self._sorted, self._at = keys[order], np.concatenate([self._at, mapped[new]])[order]
        return mapped[local.reshape(-1)]

    def _lookup_codes(self, ids: np.ndarray, high: int) -> np.ndarray:
        table = self._lookup
        assert table is not None
        if high >= len(table):
            table = self._lookup = np.concatenate([table, np.full(max(high + 1, 2 * len(table)) - len(table), -1,
                                                                  np.int64)])
        codes = table[ids]
        new = codes < 0
        if new.any():
            table[ids[new]] = -2                          # the new ids, marked, then read in order:
            fresh = np.flatnonzero(table[:high + 1] == -2)  # np.unique's sorted ids without its hash
            table[fresh] = np.arange(self.size, self.size + len(fresh))
            self.size += len(fresh)
            codes[new] = table[ids[new]]
        return codes


def position_in_unit(codes: np.ndarray) -> np.ndarray:
    """Each row's position among the rows of its unit in this batch (0, 1, ... in row order)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    start = np.ones(len(codes), dtype=bool)
    start[1:] = ordered[1:] != ordered[:-1]
    first = np.maximum.accumulate(np.where(start, np.arange(len(codes)), 0))
    out = np.empty(len(codes), np.int64)
    out[order] = np.arange(len(codes)) - first
    return out


def narrowest(low: int, high: int) -> np.dtype:
    """The narrowest signed integer type holding ``low..high``."""
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


class Slots:
    """Each unit's first ``m`` rows, one slot per (unit, rank) in every lane (module
    docstring): ``lanes`` names each lane's ``(dtype, fill)``: a layout's cells (fill ``-1``,
    no counted row at that rank) or a statistic's values (fill 0).

    Proof: docs/proofs/contribution-bounding.md (items 2 and 4)
    """

    def __init__(self, m: int, lanes: dict[str, tuple[np.dtype, int]], limit: int = SLOT_BYTES) -> None:
        self.m, self.limit, self.spec = m, limit, lanes
        self.units = self.width = 0
        self.lanes = {name: np.full((0, 0), fill, dtype) for name, (dtype, fill) in lanes.items()}

    def nbytes(self, units: int, width: int) -> int:
        return units * width * sum(dtype.itemsize for dtype, _ in self.spec.values())

    def reserve(self, units: int, width: int) -> bool:
        """Room for ``units`` units and ranks below ``width``; ``False`` (nothing changed) when
        that passes the byte limit."""
        if units <= self.units and width <= self.width:
            return True
        if self.nbytes(units, min(width, self.m)) > self.limit:
            return False
        new_units = max(units, min(2 * self.units, units + (units >> 1) + 1024)) if units > self.units else self.units
        new_width = min(self.m, max(width, 2 * self.width)) if width > self.width else self.width
        new_width = self.m if 2 * new_width > self.m else new_width   # past half of m: all of it, once
        if self.nbytes(new_units, new_width) > self.limit:
            new_units, new_width = max(units, self.units), max(min(width, self.m), self.width)
        for name, (dtype, fill) in self.spec.items():
            grown = np.full((new_units, new_width), fill, dtype)
            grown[:self.units, :self.width] = self.lanes[name]
            self.lanes[name] = grown
        self.units, self.width = new_units, new_width
        return True

    def put(self, lane: str, unit: np.ndarray, rank: np.ndarray, values: np.ndarray) -> None:
        """Write one batch's rows (their unit, their rank below the width) into ``lane``."""
        self.lanes[lane][unit, rank] = values

    def merge(self, unit: np.ndarray, rows: dict[str, np.ndarray]) -> None:
        """Rows past their unit's ``m``-th (``bounding = "random"``; every lane's values in
        ``rows``, the ``"priority"`` lane's among them): each unit touched keeps, among its ``m``
        full slots and these rows, the ``m`` of smallest priority (ties: the slots first). The
        rows are taken in rounds, each unit's ``j``-th smallest in round ``j`` (at most ``m``
        rounds): a row replaces its unit's slot of largest priority when it is smaller, and a
        unit's later rows, larger, cannot enter once one does not.

        Proof: docs/proofs/contribution-bounding.md (item 7)
        """
        order = np.lexsort((rows["priority"], unit))
        unit = unit[order]
        rows = {lane: values[order] for lane, values in rows.items()}
        start = np.ones(len(unit), dtype=bool)
        start[1:] = unit[1:] != unit[:-1]
        pos = np.arange(len(unit)) - np.maximum.accumulate(np.where(start, np.arange(len(unit)), 0))
        at = np.flatnonzero(start)   # round 0: each unit's smallest row
        for _ in range(self.width):
            if len(at) == 0:
                return
            u = unit[at]
            held = self.lanes["priority"][u]
            worst = held.argmax(axis=1)
            enters = rows["priority"][at] < held[np.arange(len(u)), worst]
            u, worst, at = u[enters], worst[enters], at[enters]
            for lane in self.spec:
                self.lanes[lane][u, worst] = rows[lane][at]
            at = at + 1   # the same units' next rows
            at = at[(at < len(unit)) & ~start[np.minimum(at, len(unit) - 1)]]
            at = at[pos[at] < self.width]

    def capped(self, cell: np.ndarray, value: np.ndarray | None, lo: int, hi: int,
               cap: tuple[int, int]) -> tuple[np.ndarray, np.ndarray | None]:
        """A block's cells and values with, in each unit, each group's counted rows past its
        first ``r`` in slot order (rank, or priority when there is a priority lane) not
        counted (cell ``-1``); ``cap = (r, keys)``, a cell's group being ``cell // keys``.

        Proof: docs/proofs/contribution-bounding.md (item 5)
        """
        r, keys = cap
        if "priority" in self.lanes:
            order = np.argsort(self.lanes["priority"][lo:hi], axis=1, kind="stable")
            cell = np.take_along_axis(cell, order, axis=1)
            value = None if value is None else np.take_along_axis(value, order, axis=1)
        n, w = cell.shape
        group = np.where(cell >= 0, cell.astype(np.int64) // keys, -1)
        span = int(group.max()) + 2 if group.size else 1
        flat = (np.arange(n, dtype=np.int64)[:, None] * span + group + 1).ravel()
        order = np.argsort(flat, kind="stable")
        ordered = flat[order]
        start = np.ones(len(ordered), dtype=bool)
        start[1:] = ordered[1:] != ordered[:-1]
        seen = np.empty(len(ordered), np.int64)
        seen[order] = np.arange(len(ordered)) - np.maximum.accumulate(np.where(start, np.arange(len(ordered)), 0))
        return np.where((seen.reshape(n, w) >= r) & (cell >= 0), -1, cell).astype(cell.dtype), value

    def blocks(self, cells: str, values: str | None, units: int, size: int = BLOCK_UNITS,
               cap: tuple[int, int] | None = None) -> Iterator[tuple[np.ndarray, ...]]:
        """``(unit, cell, rows, value)`` summed per (unit, cell) with a counted row, sorted by
        unit and cell, a block of ``size`` units at a time (``values`` ``None``: zeros);
        ``cap``: ``max_rows_per_group`` and the keys per group (:meth:`capped`)."""
        for lo in range(0, units, size):
            hi = min(units, lo + size)
            cell = self.lanes[cells][lo:hi]
            lane = None if values is None else self.lanes[values][lo:hi]
            if cap is not None:
                cell, lane = self.capped(cell, lane, lo, hi, cap)
            if values is None:
                cell = np.sort(cell, axis=1).astype(np.int64).ravel()
            else:
                order = np.argsort(cell, axis=1, kind="stable")
                cell = np.take_along_axis(cell, order, axis=1).astype(np.int64).ravel()
            at = np.flatnonzero(cell >= 0)
            unit = lo + at // max(1, self.width)
            cell = cell[at]
            start = np.ones(len(at), dtype=bool)
            start[1:] = (unit[1:] != unit[:-1]) | (cell[1:] != cell[:-1])
            first = np.flatnonzero(start)
            rows = np.diff(np.append(first, len(at))).astype(np.int64)
            if values is None or len(at) == 0:
                value = np.zeros(len(first), np.int64)
            else:
                value = np.take_along_axis(lane, order, axis=1).ravel()[at]
                value = np.add.reduceat(value.astype(np.int64), first)
            yield unit[first], cell[first], rows, value


class SlotColumn(np.ndarray):
    """One int64 column of a :class:`SlotPart`: a NumPy array that also answers the Series calls
    the kinds make of a frame's column (``to_numpy``, ``nunique``), so that reading a query's
    aggregate needs no pandas (its import is most of a small query's start-up, issue 37)."""

    def to_numpy(self, dtype: Any = None) -> np.ndarray:
        """The values as a plain array (of ``dtype``)."""
        return np.asarray(self.view(np.ndarray), dtype=dtype)

    def nunique(self) -> int:
        """The number of distinct values."""
        return len(np.unique(self.view(np.ndarray)))


class SlotPart:
    """A statistic's per (unit, cell) aggregate read from :class:`Slots` (``unit, group, key,
    rows, value`` as the kinds read a frame): columns built when first read; :meth:`blocks`
    walks it a block of units at a time without building it; any other attribute is the
    whole frame's."""

    def __init__(self, slots: Slots, cells: str, values: str | None, keys: int, units: int,
                 cap: int | None = None) -> None:
        self.slots, self.cells, self.values, self.keys, self.units = slots, cells, values, keys, units
        #: ``max_rows_per_group`` with the keys per group (:meth:`Slots.capped`), or ``None``.
        self.cap = None if cap is None else (cap, keys)

    def blocks(self) -> Iterator[tuple[np.ndarray, ...]]:
        """``(unit, group, key, rows)`` a block of units at a time (each unit in one block)."""
        for unit, cell, rows, _ in self.slots.blocks(self.cells, None, self.units, cap=self.cap):
            yield unit, cell // self.keys, cell % self.keys, rows

    @cached_property
    def table(self) -> tuple[np.ndarray, ...]:
        """``(unit, cell, rows, value)`` of every (unit, cell) with a counted row, sorted; unit,
        cell and rows in narrow integer types (values int64, as the kinds read them)."""
        narrow = (narrowest(0, self.units), self.slots.spec[self.cells][0], narrowest(0, self.slots.m),
                  np.dtype(np.int64))
        pieces: list[list[np.ndarray]] = [[], [], [], []]
        for block in self.slots.blocks(self.cells, self.values, self.units, cap=self.cap):
            for j in range(4):
                pieces[j].append(block[j].astype(narrow[j]))
        return tuple(np.concatenate(p) if p else np.zeros(0, t) for p, t in zip(pieces, narrow))

    def walk(self, size: int = 1 << 18) -> Iterator[tuple[Any, ...]]:
        """``(unit, group, key, rows, where)`` as int64, about ``size`` entries at a time, each
        unit in one piece (``where``: the piece's slice of the columns)."""
        unit, cell, rows, _ = self.table
        lo = 0
        while lo < len(unit):
            hi = min(len(unit), lo + size)
            if hi < len(unit):   # move the cut to the end of the unit it falls in
                hi = lo + int(np.searchsorted(unit[lo:], unit[hi - 1], side="right"))
            c = cell[lo:hi].astype(np.int64)
            yield unit[lo:hi].astype(np.int64), c // self.keys, c % self.keys, rows[lo:hi].astype(np.int64), \
                slice(lo, hi)
            lo = hi

    def column(self, name: str) -> np.ndarray:
        """One column as int64."""
        unit, cell, rows, value = self.table
        if name in ("group", "key"):
            c = cell.astype(np.int64)
            return c // self.keys if name == "group" else c % self.keys
        return {"unit": unit, "rows": rows, "value": value}[name].astype(np.int64, copy=False)

    def __getitem__(self, name: str) -> "SlotColumn":
        return self.column(name).view(SlotColumn)

    def __len__(self) -> int:
        return len(self.table[0])

    def frame(self) -> "pd.DataFrame":
        import pandas as pd
        return pd.DataFrame({c: self.column(c) for c in ("unit", "group", "key", "rows", "value")})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("slots", "cells", "values", "keys", "units", "cap"):
            raise AttributeError(name)
        return getattr(self.frame(), name)


__all__ = ["BLOCK_UNITS", "LOOKUP_MAX", "SLOT_BYTES", "SlotColumn", "SlotPart", "Slots", "UnitIndex", "narrowest",
           "position_in_unit"]
