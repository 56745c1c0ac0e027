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
  (at most ``max_rows``, spread over the keys of its one group).

These make a unit's contribution lie in the fixed sets of :mod:`.neighbourhood` whatever the
table. The manifest reports the counts of what was dropped and clamped (never values); those
counts are not protected.

**Memory.** One counter per unit (rows seen) and one aggregate per unit and cell, folded
batch by batch (:func:`aggregate`): the rows themselves are not kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import InvalidParameterError
from .cells import Answers, bump, home_cells
from .kinds import Kind, kind_of
from .spec import QuerySpec
from .statistic import Condition, Keys, Statistic

if TYPE_CHECKING:
    import pandas as pd

#: Batches folded before the partial aggregates are combined.
FOLD_EVERY = 8


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

    def bounding(self) -> dict:
        """The manifest's ``bounding``: counts only."""
        return {"rows": self.rows, "units": self.units, "rows_kept": self.kept,
                "rows_dropped_over_max_rows": self.rows - self.kept,
                "note": "counts of rows dropped and values clamped by the contribution bounds: diagnostics of the "
                        "input, not protected by any certificate"}


def aggregate(batches: Iterable[Any], spec: QuerySpec, *, dense_cells: int | None = None,
              row_column: str | None = None) -> Aggregated:
    """Bound every unit's contribution and aggregate, batch by batch (module docstring).

    ``batches``: pandas DataFrames or Arrow record batches with the spec's columns (and
    ``row_column``, when given: each row's number in the input, for error messages; else the
    rows are numbered in the order they come).

    Every unit gets a dense index the first time it appears (:class:`UnitIndex`: integer ids
    stay integers; other ids compare as text, as ``str`` writes them); a unit's rows seen so
    far are one counter per index, so a row's rank within its unit is that counter plus its
    position among the unit's rows in the batch (a stable sort, only for the units that pass
    ``max_rows`` in this batch). The aggregates per (unit, cell) are one row counter and one
    value total per unit and cell (:class:`Totals`: dense arrays while units x cells stays
    under ``dense_cells``, default :data:`DENSE_CELLS`; beyond that sorted sparse arrays
    summed per batch and folded every :data:`FOLD_EVERY` batches).

    Proof: docs/proofs/contribution-bounding.md
    """
    import pandas as pd
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    index = UnitIndex()
    seen = np.zeros(0, np.int64)
    limit = DENSE_CELLS if dense_cells is None else dense_cells
    shared = layouts(spec.statistics)
    totals = {s.name: Totals((s.groups.size if s.groups else 1) * (s.keys.size if s.keys else 1), limit)
              for group in shared for s in carriers(group)}
    m = spec.unit.rows_bound
    for batch in batches:
        df = batch if isinstance(batch, pd.DataFrame) else arrow_to_pandas(batch)
        rows = (df[row_column].to_numpy(np.int64) if row_column is not None
                else np.arange(out.rows + 1, out.rows + 1 + len(df)))
        codes = index.codes(unit_ids(df, spec, rows=rows))
        if len(seen) < index.size:
            seen = np.concatenate([seen, np.zeros(max(index.size, 2 * len(seen)) - len(seen), np.int64)])
        # the batch's units span lo..hi-1: its counters are a view of that range (work in the
        # batch's span, not in every unit seen so far)
        lo, hi = (int(codes.min()), int(codes.max()) + 1) if len(codes) else (0, 0)
        span, local = seen[lo:hi], codes - lo
        in_batch = np.bincount(local, minlength=hi - lo)
        kept = None if m is None else first_rows(local, span, in_batch, m)
        span += in_batch
        out.rows += len(df)
        if kept is None:
            out.kept += len(df)
            sub, sub_codes, sub_rows = df, codes, rows
        else:
            out.kept += int(kept.sum())
            sub, sub_codes, sub_rows = df[kept], codes[kept], rows[kept]
        for stats in shared:
            first = stats[0]
            mask, group, key, tallies = cell_rows(sub, first)
            keys = first.keys.size if first.keys else 1
            unit, cell = sub_codes[mask], group[mask] * keys + key[mask]
            counted = int(mask.sum())
            for stat in stats:
                counts = out.counts[stat.name]
                for name, n in tallies:
                    bump(counts, name, n)
                if stat in carriers(stats):
                    value = _values(sub[stat.value_column], mask, sub_rows, stat, counts) if stat.value_column \
                        else np.zeros(len(sub), np.int64)
                    totals[stat.name].add(unit, cell, value[mask], index.size)
                bump(counts, "rows_counted_before_unit_rules", counted)
    out.units = index.size
    results = {s.name: totals[s.name].result() for group in shared for s in carriers(group)}
    out.parts = {s.name: _frame(results[s.name] if s.name in results else _no_values(results[carriers(group)[0].name]),
                                s) for group in shared for s in group}
    return out


def layouts(stats: Iterable[Statistic]) -> list[list[Statistic]]:
    """The statistics grouped by what decides their counted rows and cells (``where``, and
    the ``by`` and ``key`` columns with their declared values, in that order): a group's
    rows, cells and counts are computed once per batch, and its row counters per (unit,
    cell) kept once (:func:`carriers`)."""
    out: dict[tuple, list[Statistic]] = {}
    for stat in stats:
        dims = tuple((col, keys) for col, keys in ((stat.by, stat.groups), (stat.key, stat.keys)) if col is not None)
        out.setdefault((stat.where, dims), []).append(stat)
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

    def add(self, unit: np.ndarray, cell: np.ndarray, value: np.ndarray, units: int) -> None:
        """Add one batch's counted rows (``units``: the units indexed so far)."""
        if self.rows is not None and units * self.cells > self.limit:
            self.pending, self.rows = [self._sparse()], None
        if self.rows is None:
            self.pending.append(_group_sum(unit, cell, np.ones(len(unit), np.int64), value, self.cells))
            if len(self.pending) >= FOLD_EVERY:
                self.pending = [_fold(self.pending, self.cells)]
            return
        size = units * self.cells
        if len(self.rows) < size:
            grow = min(self.limit, max(size, 2 * len(self.rows))) - len(self.rows)
            self.rows = np.concatenate([self.rows, np.zeros(grow, np.int64)])
            self.value = np.concatenate([self.value, np.zeros(grow, np.int64)])
        code = unit * self.cells + cell
        np.add.at(self.rows, code, 1)
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


class UnitIndex:
    """A growing map from unit id to a dense index 0, 1, ... (new ids of a batch numbered in
    increasing order). Integer ids are kept as integers: while they are non-negative and
    small (below :data:`LOOKUP_MAX`, or a few times the ids seen), a direct lookup array
    ``id -> index``; otherwise sorted arrays and ``searchsorted``. Any other id is compared
    as text, and integer ids seen before a text batch are then compared as their text too
    (as ``str`` writes them)."""

    def __init__(self) -> None:
        self.size = 0
        self._lookup: np.ndarray | None = np.zeros(0, np.int64)   # id -> index, -1 unseen
        self._sorted = np.zeros(0, np.int64)   # integer ids, sorted (without the lookup)
        self._at = np.zeros(0, np.int64)       # their indices
        self._text: dict[str, int] | None = None

    def codes(self, ids: np.ndarray) -> np.ndarray:
        """The dense index of every id of one batch, adding the new ones."""
        if self._text is None and ids.dtype.kind in "iu" and (ids.dtype.kind == "i" or ids.dtype.itemsize < 8):
            return self._integer_codes(ids.astype(np.int64, copy=False))
        if self._text is None:
            self._to_sorted()
            self._text = {str(int(v)): int(i) for v, i in zip(self._sorted, self._at)}
        import pandas as pd
        local, uniques = pd.factorize(pd.Series(ids).astype(str), sort=False)
        table = self._text
        mapped = np.empty(len(uniques), np.int64)
        for j, u in enumerate(uniques):
            at = table.get(u)
            if at is None:
                at = table[u] = self.size
                self.size += 1
            mapped[j] = at
        return mapped[local]

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


#: Integer ids below this (or below 4 x the ids seen) are indexed by a direct lookup array.
LOOKUP_MAX = 1 << 22


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


def unit_ids(df: "pd.DataFrame", spec: QuerySpec, *, rows: np.ndarray) -> np.ndarray:
    """The unit of every row: its id (integers kept as integers), or its row number (``rows``:
    each row's number in the input) when each row is a unit."""
    uid = spec.unit.id
    if uid is None:
        return np.asarray(rows, dtype=np.int64)
    col = df[uid]
    missing = col.isna().to_numpy()
    if missing.any():
        row = int(rows[int(np.flatnonzero(missing)[0])])
        raise InvalidParameterError("unit.id", f"column '{uid}': missing value at data row {row}",
                                    "an id in every row (a row without one belongs to no unit)")
    if col.dtype.kind in "iu":
        return col.to_numpy()
    return col.to_numpy(dtype=object)


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


def cell_rows(df: "pd.DataFrame", stat: Statistic) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """One batch's rows counted by ``stat`` (``where``, declared keys and groups) with each
    row's group and key index, and the counts of the rows left out, as ``(name, n)``."""
    mask = np.ones(len(df), dtype=bool)
    for cond in stat.where:
        mask &= matches(df[cond.column], cond)
    tallies = [("rows_not_matching_where", int((~mask).sum()))]
    group = declared_index(df[stat.by], stat.groups) if stat.by else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    key = declared_index(df[stat.key], stat.keys) if stat.key else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    undeclared = mask & ((group < 0) | (key < 0))
    tallies.append(("rows_undeclared_key_or_group", int(undeclared.sum())))
    return mask & ~undeclared, group, key, tallies


def counted_rows(df: "pd.DataFrame", rows: np.ndarray, stat: Statistic,
                 counts: dict[str, int]) -> tuple[np.ndarray, ...]:
    """One batch's per-row rules for one statistic: the rows counted (``where``, declared
    keys and groups), each row's group and key index and its clamped, rounded value."""
    mask, group, key, tallies = cell_rows(df, stat)
    for name, n in tallies:
        bump(counts, name, n)
    value = np.zeros(len(df), np.int64)
    if stat.value_column:
        value = _values(df[stat.value_column], mask, rows, stat, counts)
    bump(counts, "rows_counted_before_unit_rules", mask.sum())
    return mask, group, key, value


def arrow_to_pandas(batch: Any) -> "pd.DataFrame":
    """An Arrow batch or table as a DataFrame (no block copy), its *integer columns with
    missing values* as pandas' nullable integers.

    Why: Arrow's default turns such a column into float64, which rounds integers beyond
    2^53; a row's declared key would then depend on whether another row of its batch has a
    missing value -- one unit could move other units' cells (:func:`declared_index`). Every
    row's key is decided by its own value alone this way, and as the Spark engine decides it."""
    import pyarrow as pa
    df = batch.to_pandas(split_blocks=True)
    for i, field in enumerate(batch.schema):
        if pa.types.is_integer(field.type) and batch.column(i).null_count:
            df[field.name] = batch.column(i).to_pandas(types_mapper=_nullable_integers)
    return df


def _nullable_integers(arrow_type: Any) -> Any:
    import pandas as pd
    import pyarrow as pa
    return pd.Int64Dtype() if pa.types.is_signed_integer(arrow_type) else (
        pd.UInt64Dtype() if pa.types.is_unsigned_integer(arrow_type) else None)


def _numbers(col: "pd.Series") -> np.ndarray:
    import pandas as pd
    if col.dtype == bool:
        return np.full(len(col), np.nan)
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def matches(col: "pd.Series", cond: Condition) -> np.ndarray:
    """Rows whose value meets the condition (a missing value meets none)."""
    if cond.values is not None:
        nums = [v for v in cond.values if not isinstance(v, str)]
        texts = [v for v in cond.values if isinstance(v, str)]
        hit = np.zeros(len(col), dtype=bool)
        if nums:
            hit |= np.isin(_numbers(col), np.asarray(nums, dtype=float))
        if texts:
            hit |= col.astype("string").isin(texts).fillna(False).to_numpy(dtype=bool)
        return hit
    x = _numbers(col)
    hit = ~np.isnan(x)
    if cond.lower is not None:
        hit &= x >= cond.lower
    if cond.upper is not None:
        hit &= x <= cond.upper
    return hit


def declared_index(col: "pd.Series", keys: Keys) -> np.ndarray:
    """The position of every value among the declared keys; -1 when undeclared or missing.
    Integer keys accept integral numbers (``7``, ``7.0``, the text ``"7"``); text keys compare
    as text."""
    lookup = {v: i for i, v in enumerate(keys.values)}
    if keys.integer:
        out = np.full(len(col), -1, np.int64)
        if isinstance(col.dtype, np.dtype) and (col.dtype.kind == "i" or col.dtype.kind == "u" and col.dtype.itemsize < 8):
            # a NumPy integer column (it has no missing values): its values, no float round trip
            ok, ints = slice(None), col.to_numpy(np.int64)
        elif col.dtype.kind in "iu":
            # pandas' nullable integers (:func:`arrow_to_pandas`) or uint64: the present values,
            # exactly (beyond int64: no declared key, keys being int64)
            ok = ~col.isna().to_numpy(dtype=bool)
            if col.dtype.kind == "u":
                u = col.to_numpy(dtype=np.uint64, na_value=0)
                ok &= u < np.uint64(2 ** 63)
                ints = u[ok].astype(np.int64)
            else:
                ints = col.to_numpy(dtype=np.int64, na_value=0)[ok]
        else:
            x = _numbers(col)
            ok = np.isfinite(x) & (x == np.round(x))
            ints = x[ok].astype(np.int64)
        lo = min(keys.values)
        if keys.values == tuple(range(lo, lo + keys.size)):   # a range: arithmetic, not a dict
            idx = ints - lo
            idx[(idx < 0) | (idx >= keys.size)] = -1
            out[ok] = idx
        else:
            out[ok] = np.array([lookup.get(int(v), -1) for v in ints], np.int64)
        return out
    text = col.astype("string")
    return text.map(lookup).fillna(-1).to_numpy(dtype=np.int64)


def _values(col: "pd.Series", mask: np.ndarray, rows: np.ndarray, stat: Statistic,
            counts: dict[str, int]) -> np.ndarray:
    """The counted rows' values clamped and rounded, in units of the resolution."""
    x = _numbers(col)
    bad = mask & ~np.isfinite(x)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raw = col.iloc[at]
        raise InvalidParameterError(f"column '{col.name}'", f"{'missing value' if raw is None or raw != raw else repr(raw)}"
                                    f" at data row {int(rows[at])}", "numbers in a summed column (a missing or "
                                    "non-numeric value is not imputed)")
    lo, hi = stat.clamp  # type: ignore[misc]
    bump(counts, "values_clamped", (mask & ((x < float(lo)) | (x > float(hi)))).sum())
    slo, shi = stat.scaled_clamp
    scaled = np.rint(np.where(mask, x, 0.0) / float(stat.resolution))
    return np.clip(scaled, slo, shi).astype(np.int64)


# ------------------------------------------------------------------ exact answers
def answers(agg: Aggregated, stat: Statistic, kind: Kind | None = None) -> Answers:
    """The exact answer of ``stat`` from the aggregate: its kind's rules (:mod:`.kinds`;
    ``kind`` given where the registry is not at hand, e.g. on a Spark executor).

    Proof: docs/proofs/contribution-bounding.md
    """
    if stat.name in agg.answered:
        return agg.answered[stat.name]
    return (kind or kind_of(stat)).answers(stat, agg.parts[stat.name], agg.counts[stat.name])


__all__ = ["DENSE_CELLS", "Aggregated", "Answers", "Totals", "UnitIndex", "carriers", "cell_rows", "home_cells", "layouts", "aggregate", "answers", "arrow_to_pandas", "bump", "counted_rows", "declared_index",
           "first_rows", "matches", "position_in_unit", "unit_ids"]
