"""Contribution bounding and the exact answers, streamed batch by batch.

**Bounding (a rule that depends on one unit's rows alone).** Rows sharing the unit's ``id``
are one unit (without ``id`` each row is one). A unit keeps its first ``max_rows`` rows in
the input's order; later rows are dropped. Then, per statistic:

* rows failing ``where``, or whose key or group is not declared (or missing), are not
  counted -- *undeclared keys are dropped and counted*, never refused: declared keys are the
  public domain, and what lies outside it is what a ``where`` would leave out;
* a value column is clamped to ``clamp`` and rounded to ``resolution`` (counted when a value
  was clamped); a value that is not a number stops the query, naming its row;
* under ``by``, a unit belongs to one group: the group of most of its counted rows (ties: the
  first declared); its rows in other groups are dropped (counted);
* a histogram or a mode counts a unit once, at the (group, key) of most of its counted rows
  (ties: the first declared); a histogram ``of = "rows"`` counts each of its counted rows
  (at most ``max_rows``, spread over the keys of its one group);
* with ``unit.max_groups = g``, "one group" (cell) becomes "at most ``g``": the ``g`` of most
  counted rows (ties: the first declared); with ``max_rows_per_group = r`` a unit keeps the
  first ``r`` of its counted rows in each group (:mod:`.units`, :mod:`.cells`);
* ``bounding = "random"``: "first" becomes "of smallest random priority" -- a uniformly
  random ``max_rows`` of the unit's rows, ``r`` of each group's, and ``g`` of its groups,
  whatever the input's order: the priorities are a pseudorandom function of the rows' read
  index under one key drawn from the injected source (:mod:`.priority`), so that the Spark
  engine keeps the same rows for the same seed.

These make a unit's contribution lie in the fixed sets of :mod:`.neighbourhood` whatever the
table. The manifest reports the counts of what was dropped and clamped (never values); those
counts are not protected.

**Memory.** One counter per unit (rows seen) and, with ``max_rows = m``, each unit's first
``m`` rows as slots of a few bytes (its cell per layout, its clamped value per summed
column: :mod:`.units`), written in place batch by batch: at most ``units x m`` slots however
many rows the input has, and however its units' rows are spread over it. Without
``max_rows`` (or past :data:`.units.SLOT_BYTES`), one aggregate per unit and cell, folded
batch by batch (:func:`aggregate`). The rows themselves are not kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import ResourceLimitError
from ..randomness import RandomSource
from .cells import Answers, GroupRules, bump, home_cells
from .kinds import Kind, kind_of
from .priority import draw_key, row_priorities
from .rows import (ArrowRows, arrow_to_pandas, cell_rows, counted_rows, declared_index, matches, numbers, row_values,
                   unit_ids)
from .spec import QuerySpec
from .statistic import Statistic
from .units import SLOT_BYTES, SlotPart, Slots, UnitIndex, narrowest, position_in_unit

if TYPE_CHECKING:
    import pandas as pd

#: Batches folded before the partial aggregates are combined.
FOLD_EVERY = 8
#: The child stream of a seeded source that random bounding draws from (the noise's stream
#: stays the same whatever the bounding; :func:`optnoise.randomness.child_source`).
BOUNDING_STREAM = 0x626F756E64


def bounding_source(spec: QuerySpec, source: RandomSource) -> RandomSource | None:
    """The source of ``bounding = "random"`` (``None`` under ``first``): the CSPRNG itself, or
    a seeded source's child stream :data:`BOUNDING_STREAM` (reproducible, not private)."""
    if spec.unit.bounding != "random":
        return None
    from ..randomness import child_source
    return child_source(source, BOUNDING_STREAM)


def bounding_key(spec: QuerySpec, source: RandomSource) -> bytes | None:
    """The key of ``bounding = "random"`` (:mod:`.priority`; ``None`` under ``first``): the one
    :func:`aggregate` draws from :func:`bounding_source` -- the same for the same seed, on
    either engine."""
    child = bounding_source(spec, source)
    return None if child is None else draw_key(child)


@dataclass
class Aggregated:
    """Per statistic, one aggregate per unit and cell (``unit, group, key, rows, value``), and
    the counts of what the bounding dropped or clamped."""

    spec: QuerySpec
    rows: int = 0
    kept: int = 0
    units: int = 0
    parts: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Exact answers computed elsewhere (the Spark engine: only these reach the driver).
    answered: dict[str, "Answers"] = field(default_factory=dict)
    #: The key of ``bounding = "random"`` (:mod:`.priority`; ``None`` under ``first``).
    key: bytes | None = None
    #: Under random bounding, the read index of each unit's first row (by its dense index).
    first: np.ndarray | None = None

    def rules(self) -> GroupRules:
        """The unit's group rules: ``max_groups`` and, under random bounding, the key."""
        return GroupRules(self.spec.unit.groups_bound, self.key, self.first)

    def bounding(self) -> dict:
        """The manifest's ``bounding``: counts only."""
        return {"rows": self.rows, "units": self.units, "rows_kept": self.kept,
                "rows_dropped_over_max_rows": self.rows - self.kept,
                "note": "counts of rows dropped and values clamped by the contribution bounds: diagnostics of the "
                        "input, not protected by any certificate"}


def aggregate(batches: Iterable[Any], spec: QuerySpec, *, dense_cells: int | None = None,
              row_column: str | None = None, slot_bytes: int | None = None,
              source: RandomSource | None = None, key: bytes | None = None,
              index_column: str | None = None) -> Aggregated:
    """Bound every unit's contribution and aggregate, batch by batch (module docstring).

    ``batches``: pandas DataFrames or Arrow record batches with the spec's columns (and
    ``row_column``, when given: each row's number in the input, for error messages; else the
    rows are numbered in the order they come).

    Every unit gets a dense index the first time it appears (:class:`.units.UnitIndex`); a
    unit's rows seen so far are one counter per index, so a row's rank within its unit is
    that counter plus its position among the unit's rows in the batch (a stable sort). With
    ``max_rows`` the state is each unit's first ``max_rows`` rows, one slot per rank
    (:class:`.units.Slots`: a cell per layout and a value per summed column, written in place
    whatever batch a row comes in) while it fits in ``slot_bytes`` (default
    :data:`.units.SLOT_BYTES`); otherwise, and without ``max_rows``, one row counter and one
    value total per unit and cell (:class:`Totals`: dense arrays while units x cells stays
    under ``dense_cells``, default :data:`DENSE_CELLS`; beyond that sorted sparse arrays
    summed per batch and folded every :data:`FOLD_EVERY` batches). Both give the same
    per (unit, cell) aggregate. ``bounding = "random"`` uses ``key`` (:mod:`.priority`), else
    one drawn from ``source`` (the CSPRNG by default); a row's read index is its number in the
    input, or the column ``index_column`` when given (the Spark engine's executors).

    An Arrow batch is read column by column (:class:`.rows.ArrowRows`: Arrow text and NumPy
    numbers, pandas only where a rule needs it).

    Proof: docs/proofs/contribution-bounding.md
    """
    import pyarrow as pa
    if spec.unit.bounding == "random" and key is None:
        if source is None:
            from ..randomness import random_source
            source = random_source()
        key = draw_key(source)
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics},
                     key=key if spec.unit.bounding == "random" else None)
    state = Folding(spec, DENSE_CELLS if dense_cells is None else dense_cells,
                    SLOT_BYTES if slot_bytes is None else slot_bytes, out.key)
    for batch in batches:
        df = ArrowRows(batch) if isinstance(batch, (pa.RecordBatch, pa.Table)) else batch   # else a DataFrame
        rows = (np.asarray(df[row_column], dtype=np.int64) if row_column is not None
                else np.arange(out.rows + 1, out.rows + 1 + len(df)))
        state.fold(df, rows, out, rows if index_column is None else np.asarray(df[index_column], dtype=np.int64))
    out.units = state.index.size
    out.parts = state.parts()
    if out.key is not None:
        out.first = state.first[:out.units]
    return out


class Folding:
    """The state of :func:`aggregate` between batches: the unit index, the rows seen per
    unit, and the slots (:class:`.units.Slots`) or the totals (:class:`Totals`)."""

    def __init__(self, spec: QuerySpec, dense_cells: int, slot_bytes: int, key: bytes | None = None) -> None:
        self.spec, self.dense_cells, self.key = spec, dense_cells, key
        self.index = UnitIndex()
        self.seen = np.zeros(0, np.int64)
        #: Under random bounding: each unit's first read index (:class:`.cells.GroupRules`).
        self.first = np.zeros(0, np.int64)
        self.shared = layouts(spec.statistics)
        self.m = spec.unit.rows_bound
        self.totals: dict[str, Totals] | None = None
        self.slots: Slots | None = None
        if self.m is None:
            self.to_totals()
        else:
            lanes: dict[str, tuple[np.dtype, int]] = {}
            for i, group in enumerate(self.shared):
                lanes[f"cells {i}"] = (narrowest(-1, cells_of(group[0])), -1)
                for stat in carriers(group):
                    if stat.value_column:
                        lo, hi = stat.scaled_clamp
                        lanes[f"values {stat.name}"] = (narrowest(min(lo, 0), max(hi, 0)), 0)
            if key is not None:   # random bounding: each row's priority
                lanes["priority"] = (np.dtype(np.uint64), 2 ** 64 - 1)
            self.slots = Slots(self.m, lanes, slot_bytes)

    @property
    def needs_slots(self) -> str | None:
        """The unit key whose rule needs each unit's rows in order (slots), or ``None``."""
        unit = self.spec.unit
        if self.key is not None:
            return "unit.bounding"
        return "unit.max_rows_per_group" if unit.max_rows_per_group is not None else None

    def to_totals(self) -> None:
        """Per (unit, cell) totals from now on, holding what the slots held (if any); refused
        (naming the key) when a rule needs the rows in order (:attr:`needs_slots`)."""
        if self.slots is not None and self.needs_slots is not None:
            size = self.slots.nbytes(self.index.size, self.m or 0)
            raise ResourceLimitError(self.needs_slots, f"{self.index.size:,} units x max_rows {self.m}",
                                     f"a smaller max_rows or fewer units: {self.needs_slots} keeps each unit's rows "
                                     f"in {self.slots.limit:,} bytes at most (here {size:,})", size, self.slots.limit)
        self.totals = {s.name: Totals(cells_of(s), self.dense_cells) for group in self.shared for s in carriers(group)}
        if self.slots is not None:
            for i, group in enumerate(self.shared):
                for stat in carriers(group):
                    lane = f"values {stat.name}" if stat.value_column else None
                    for unit, cell, rows, value in self.slots.blocks(f"cells {i}", lane, self.slots.units):
                        self.totals[stat.name].add(unit, cell, value, self.index.size, rows)
            self.slots = None

    def ranks(self, codes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Each row's rank within its unit and which rows are among their unit's first ``m``
        (``None``: all), counting the batch's rows as seen."""
        seen = self.seen
        if len(seen) < self.index.size:
            seen = self.seen = np.concatenate([seen, np.zeros(max(self.index.size, 2 * len(seen)) - len(seen),
                                                              np.int64)])
        # the batch's units span lo..hi-1: its counters are a view of that range (work in the
        # batch's span, not in every unit seen so far)
        lo, hi = (int(codes.min()), int(codes.max()) + 1) if len(codes) else (0, 0)
        span, local = seen[lo:hi], codes - lo
        in_batch = np.bincount(local, minlength=hi - lo)
        if self.m is None:
            span += in_batch
            return None, None
        if self.slots is None:
            kept = first_rows(local, span, in_batch, self.m)
            span += in_batch
            return None, kept
        rank = span[local]
        again = np.flatnonzero(in_batch[local] > 1)   # rows of units with several rows in the batch
        if len(again):
            rank[again] += position_in_unit(local[again])
        span += in_batch
        kept = rank < self.m
        return rank, None if kept.all() else kept

    def fold(self, df: "pd.DataFrame", rows: np.ndarray, out: Aggregated, index: np.ndarray) -> None:
        """Add one batch (``rows``: each row's number in the input; ``index``: its read index,
        the same numbers locally): a row is kept iff its rank in its unit is below
        ``max_rows``, and only kept rows are written.

        Proof: docs/proofs/contribution-bounding.md (items 2-4)
        """
        codes = self.index.codes(unit_ids(df, self.spec, rows=rows))
        if self.key is not None:
            self.first_rows(codes, index)
            if self.m is not None:
                self.fold_random(df, rows, codes, out, index)
                return
        rank, kept = self.ranks(codes)
        if rank is not None:
            ranked = rank if kept is None else rank[kept]
            top = int(ranked.max()) + 1 if len(ranked) else 0
            if self.slots is not None and not self.slots.reserve(self.index.size, min(top, self.m or 0)):
                self.to_totals()
        out.rows += len(df)
        out.kept += len(df) if kept is None else int(kept.sum())
        for i, stats in enumerate(self.shared):
            first = stats[0]
            mask, group, key, tallies = cell_rows(df, first, kept)
            cell = group * (first.keys.size if first.keys else 1) + key
            unit = codes[mask]
            for stat in stats:
                counts = out.counts[stat.name]
                for name, n in tallies:
                    bump(counts, name, n)
                if stat in carriers(stats):
                    value = row_values(df[stat.value_column], mask, rows, stat, counts) if stat.value_column \
                        else None
                    if self.slots is not None:
                        assert rank is not None
                        if stat is carriers(stats)[0]:
                            self.slots.put(f"cells {i}", unit, rank[mask], cell[mask])
                        if value is not None:
                            self.slots.put(f"values {stat.name}", unit, rank[mask], value[mask])
                    else:
                        assert self.totals is not None
                        self.totals[stat.name].add(unit, cell[mask], np.zeros(len(unit), np.int64) if value is None
                                                   else value[mask], self.index.size)
                bump(counts, "rows_counted_before_unit_rules", int(mask.sum()))

    def first_rows(self, codes: np.ndarray, index: np.ndarray) -> None:
        """Each unit's least read index so far (random bounding: it names the unit in its
        groups' priorities, :func:`.priority.group_priorities`)."""
        if len(self.first) < self.index.size:
            grow = max(self.index.size, 2 * len(self.first)) - len(self.first)
            self.first = np.concatenate([self.first, np.full(grow, np.iinfo(np.int64).max, np.int64)])
        np.minimum.at(self.first, codes, index)

    def fold_random(self, df: "pd.DataFrame", rows: np.ndarray, codes: np.ndarray, out: Aggregated,
                    index: np.ndarray) -> None:
        """Add one batch under ``bounding = "random"``: every row gets a priority
        (:func:`.priority.row_priorities` of its read index); a row within its unit's first
        ``m`` is written at its rank, the others compete with the unit's ``m`` slots
        (:meth:`.units.Slots.merge`): each unit keeps its ``m`` rows of smallest priority,
        whatever the input's order.

        Proof: docs/proofs/contribution-bounding.md (item 7)
        """
        rank, _ = self.ranks(codes)
        assert rank is not None and self.slots is not None and self.key is not None and self.m is not None
        direct = rank < self.m
        if not self.slots.reserve(self.index.size, min(int(rank.max()) + 1 if len(rank) else 0, self.m)):
            self.to_totals()   # refused: random bounding needs the slots
        out.rows += len(df)
        out.kept += int(direct.sum())
        lanes: dict[str, np.ndarray] = {"priority": row_priorities(self.key, index)}
        for i, stats in enumerate(self.shared):
            first = stats[0]
            mask, group, key, tallies = cell_rows(df, first)
            lanes[f"cells {i}"] = np.where(mask, group * (first.keys.size if first.keys else 1) + key, -1)
            for stat in stats:
                counts = out.counts[stat.name]
                for name, n in tallies:
                    bump(counts, name, n)
                if stat in carriers(stats) and stat.value_column:
                    value = row_values(df[stat.value_column], mask, rows, stat, counts)
                    lanes[f"values {stat.name}"] = np.where(mask, value, 0)
                bump(counts, "rows_counted_before_unit_rules", int(mask.sum()))
        for lane, values in lanes.items():
            self.slots.put(lane, codes[direct], rank[direct], values[direct])
        if not direct.all():
            self.slots.merge(codes[~direct], {lane: values[~direct] for lane, values in lanes.items()})

    def parts(self) -> dict[str, Any]:
        """Each statistic's per (unit, cell) aggregate (``unit, group, key, rows, value``)."""
        if self.slots is not None:
            slots = self.slots
            return {s.name: SlotPart(slots, f"cells {i}", f"values {s.name}" if s.value_column else None,
                                     s.keys.size if s.keys else 1, self.index.size, self.spec.unit.max_rows_per_group)
                    for i, group in enumerate(self.shared) for s in group}
        assert self.totals is not None
        results = {s.name: self.totals[s.name].result() for group in self.shared for s in carriers(group)}
        return {s.name: _frame(results[s.name] if s.name in results else _no_values(results[carriers(group)[0].name]),
                               s) for group in self.shared for s in group}


def cells_of(stat: Statistic) -> int:
    """Cells per unit of a statistic's layout: groups x keys."""
    return (stat.groups.size if stat.groups else 1) * (stat.keys.size if stat.keys else 1)


def layouts(stats: Iterable[Statistic]) -> list[list[Statistic]]:
    """The statistics grouped by what decides their counted rows and cells (``where``, and
    the ``by`` and ``key`` columns with their declared values, in that order; a statistic whose
    unit keeps cells, not groups, apart: ``Statistic.keep_cells``): a group's
    rows, cells and counts are computed once per batch, and its row counters per (unit,
    cell) kept once (:func:`carriers`)."""
    out: dict[tuple, list[Statistic]] = {}
    for stat in stats:
        dims = tuple((col, keys) for col, keys in ((stat.by, stat.groups), (stat.key, stat.keys)) if col is not None)
        out.setdefault((stat.where, dims, stat.keep_cells), []).append(stat)
    return list(out.values())


def carriers(group: list[Statistic]) -> list[Statistic]:
    """The statistics of a layout that keep totals: every one that sums a column, or else the
    first (the others read its row counters: same rows, same cells)."""
    return [s for s in group if s.value_column] or group[:1]


def _no_values(part: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    unit, cell, rows, _ = part
    return unit, cell, rows, np.zeros(len(unit), np.int64)


#: Dense per (unit, cell) totals up to this many units x cells (two int64 arrays: 256 MB).
DENSE_CELLS = 1 << 24


def first_rows(codes: np.ndarray, seen: np.ndarray, in_batch: np.ndarray, m: int) -> np.ndarray | None:
    """Which rows of a batch are among their unit's first ``m`` rows (``seen``: the unit's
    rows in earlier batches; ``in_batch``: in this one), or ``None`` when all are: a row's
    rank is computed only for the units that pass ``m`` in this batch."""
    over = seen + in_batch > m
    if not over.any():
        return None
    at = np.flatnonzero(over[codes])
    kept = np.ones(len(codes), dtype=bool)
    kept[at] = seen[codes[at]] + position_in_unit(codes[at]) < m
    return kept


class Totals:
    """One statistic's rows and value totals per (unit, cell), ``cells`` cells per unit.

    Dense (``unit * cells + cell`` into two growing integer arrays, summed with ``np.add.at``:
    exact, and work linear in the batch's rows) while the units x cells stay within
    ``limit``; then sparse for good (sorted arrays, folded every :data:`FOLD_EVERY`
    batches)."""

    def __init__(self, cells: int, limit: int) -> None:
        self.cells, self.limit = cells, limit
        self.rows: np.ndarray | None = np.zeros(0, np.int64)
        self.value = np.zeros(0, np.int64)
        self.pending: list = []

    def add(self, unit: np.ndarray, cell: np.ndarray, value: np.ndarray, units: int,
            rows: np.ndarray | None = None) -> None:
        """Add one batch's counted rows (``units``: the units indexed so far; ``rows``: how
        many rows each entry stands for, default one)."""
        if self.rows is not None and units * self.cells > self.limit:
            self.pending, self.rows = [self._sparse()], None
        if self.rows is None:
            self.pending.append(_group_sum(unit, cell, np.ones(len(unit), np.int64) if rows is None else rows, value,
                                           self.cells))
            if len(self.pending) >= FOLD_EVERY:
                self.pending = [_fold(self.pending, self.cells)]
            return
        size = units * self.cells
        if len(self.rows) < size:
            grow = min(self.limit, max(size, 2 * len(self.rows))) - len(self.rows)
            self.rows = np.concatenate([self.rows, np.zeros(grow, np.int64)])
            self.value = np.concatenate([self.value, np.zeros(grow, np.int64)])
        code = unit * self.cells + cell
        np.add.at(self.rows, code, 1 if rows is None else rows)
        if value.any():
            np.add.at(self.value, code, value)

    def _sparse(self) -> tuple[np.ndarray, ...]:
        rows = self.rows if self.rows is not None else np.zeros(0, np.int64)
        at = np.flatnonzero(rows)
        return at // self.cells, at % self.cells, rows[at], self.value[at]

    def result(self) -> tuple[np.ndarray, ...]:
        """``(unit, cell, rows, value)`` for every (unit, cell) with a counted row, sorted."""
        if self.rows is not None:
            return self._sparse()
        return _fold(self.pending, self.cells) if self.pending else _group_sum(*(np.zeros(0, np.int64),) * 4,
                                                                               self.cells)


def _group_sum(unit: np.ndarray, cell: np.ndarray, rows: np.ndarray, value: np.ndarray,
               cells: int) -> tuple[np.ndarray, ...]:
    """Rows and values summed per (unit, cell): sorted by unit, then cell."""
    if len(unit) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    if (int(unit.max()) + 1) * cells < 2 ** 62:
        code = unit * cells + cell
        uniq, inv = np.unique(code, return_inverse=True)
        inv = inv.reshape(-1)
        return (uniq // cells, uniq % cells, np.bincount(inv, weights=None if rows is None else rows,
                                                        minlength=len(uniq)).astype(np.int64),
                _int_bincount(inv, value, len(uniq)))
    order = np.lexsort((cell, unit))
    u, c = unit[order], cell[order]
    start = np.ones(len(u), dtype=bool)
    start[1:] = (u[1:] != u[:-1]) | (c[1:] != c[:-1])
    at = np.flatnonzero(start)
    return u[at], c[at], np.add.reduceat(rows[order], at), np.add.reduceat(value[order], at)


def _int_bincount(inv: np.ndarray, value: np.ndarray, n: int) -> np.ndarray:
    """Exact integer sums per bin (``np.add.at``: no floating point)."""
    out = np.zeros(n, np.int64)
    if value.any():
        np.add.at(out, inv, value)
    return out


def _fold(parts: list, cells: int) -> tuple[np.ndarray, ...]:
    if len(parts) == 1:
        return parts[0]
    cat = [np.concatenate([p[j] for p in parts]) if parts else np.zeros(0, np.int64) for j in range(4)]
    return _group_sum(cat[0], cat[1], cat[2], cat[3], cells)


def _frame(part: tuple[np.ndarray, ...], stat: Statistic) -> "pd.DataFrame":
    """The folded aggregate as the frame :func:`answers` reads (``unit, group, key, rows, value``)."""
    import pandas as pd
    unit, cell, rows, value = part
    keys = stat.keys.size if stat.keys else 1
    return pd.DataFrame({"unit": unit.astype(np.int64), "group": cell // keys, "key": cell % keys,
                         "rows": rows.astype(np.int64), "value": value.astype(np.int64)})


def answers(agg: Aggregated, stat: Statistic, kind: Kind | None = None) -> Answers:
    """The exact answer of ``stat`` from the aggregate: its kind's rules (:mod:`.kinds`;
    ``kind`` given where the registry is not at hand, e.g. on a Spark executor).

    Proof: docs/proofs/contribution-bounding.md
    """
    if stat.name in agg.answered:
        return agg.answered[stat.name]
    rules = agg.rules()   # passed only when not the default (a kind written before it takes none)
    more = () if rules == GroupRules() else (rules,)
    return (kind or kind_of(stat)).answers(stat, agg.parts[stat.name], agg.counts[stat.name], *more)


__all__ = ["BOUNDING_STREAM", "DENSE_CELLS", "bounding_key", "bounding_source", "Aggregated", "Answers", "Folding", "Totals", "UnitIndex", "aggregate", "answers",
           "arrow_to_pandas", "bump", "carriers", "cell_rows", "cells_of", "counted_rows", "declared_index",
           "first_rows", "home_cells", "layouts", "matches", "numbers", "position_in_unit", "row_values", "unit_ids"]
