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
from .spec import Condition, Keys, QuerySpec, Statistic

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


def aggregate(batches: Iterable[Any], spec: QuerySpec) -> Aggregated:
    """Bound every unit's contribution and aggregate, batch by batch (module docstring).

    ``batches``: pandas DataFrames or Arrow record batches with the spec's columns.

    Every unit gets a dense index the first time it appears (:class:`UnitIndex`: integer ids
    stay integers; other ids compare as text, as ``str`` writes them); a unit's rows seen so
    far are one counter per index, so a row's rank within its unit is that counter plus its
    position among the unit's rows in the batch (a stable sort). The aggregates per (unit,
    cell) are sorted integer arrays, summed per batch and folded every :data:`FOLD_EVERY`
    batches.
    """
    import pandas as pd
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    index = UnitIndex()
    seen = np.zeros(0, np.int64)
    cells = {s.name: (s.groups.size if s.groups else 1) * (s.keys.size if s.keys else 1) for s in spec.statistics}
    pending: dict[str, list] = {s.name: [] for s in spec.statistics}
    for i, batch in enumerate(batches):
        df = batch if isinstance(batch, pd.DataFrame) else batch.to_pandas()
        codes = index.codes(unit_ids(df, spec, first_row=out.rows + 1))
        if len(seen) < index.size:
            seen = np.concatenate([seen, np.zeros(index.size - len(seen), np.int64)])
        rank = seen[codes] + position_in_unit(codes)
        seen += np.bincount(codes, minlength=index.size)
        m = spec.unit.rows_bound
        kept = np.ones(len(df), dtype=bool) if m is None else rank < m
        rows = np.arange(out.rows + 1, out.rows + 1 + len(df))
        out.rows += len(df)
        out.kept += int(kept.sum())
        sub, sub_codes, sub_rows = df[kept], codes[kept], rows[kept]
        for stat in spec.statistics:
            pending[stat.name].append(_partial(sub, sub_codes, sub_rows, stat, out.counts[stat.name], cells[stat.name]))
            if (i + 1) % FOLD_EVERY == 0:
                pending[stat.name] = [_fold(pending[stat.name], cells[stat.name])]
    out.units = index.size
    out.parts = {s.name: _frame(_fold(pending[s.name], cells[s.name]), s) for s in spec.statistics}
    return out


class UnitIndex:
    """A growing map from unit id to a dense index 0, 1, ... (in order of first appearance
    within a batch's distinct ids). Integer ids are kept as integers (sorted arrays and
    ``searchsorted``); any other id is compared as text, and integer ids seen before a text
    batch are then compared as their text too (as ``str`` writes them)."""

    def __init__(self) -> None:
        self.size = 0
        self._sorted = np.zeros(0, np.int64)   # integer ids, sorted
        self._at = np.zeros(0, np.int64)       # their indices
        self._text: dict[str, int] | None = None

    def codes(self, ids: np.ndarray) -> np.ndarray:
        """The dense index of every id of one batch, adding the new ones."""
        if self._text is None and ids.dtype.kind in "iu" and (ids.dtype.kind == "i" or ids.dtype.itemsize < 8):
            return self._integer_codes(ids.astype(np.int64, copy=False))
        if self._text is None:
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

    def _integer_codes(self, ids: np.ndarray) -> np.ndarray:
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


def unit_ids(df: "pd.DataFrame", spec: QuerySpec, *, first_row: int) -> np.ndarray:
    """The unit of every row: its id (integers kept as integers), or its row number when each
    row is a unit."""
    uid = spec.unit.id
    if uid is None:
        return np.arange(first_row, first_row + len(df), dtype=np.int64)
    col = df[uid]
    missing = col.isna().to_numpy()
    if missing.any():
        row = first_row + int(np.flatnonzero(missing)[0])
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


def bump(counts: dict[str, int], key: str, n: int) -> None:
    """Add ``n`` to the counter ``key`` (left absent while zero)."""
    if n:
        counts[key] = counts.get(key, 0) + int(n)


def counted_rows(df: "pd.DataFrame", rows: np.ndarray, stat: Statistic,
                 counts: dict[str, int]) -> tuple[np.ndarray, ...]:
    """One batch's per-row rules for one statistic: the rows counted (``where``, declared
    keys and groups), each row's group and key index and its clamped, rounded value."""
    mask = np.ones(len(df), dtype=bool)
    for cond in stat.where:
        mask &= matches(df[cond.column], cond)
    bump(counts, "rows_not_matching_where", (~mask).sum())
    group = declared_index(df[stat.by], stat.groups) if stat.by else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    key = declared_index(df[stat.key], stat.keys) if stat.key else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    undeclared = mask & ((group < 0) | (key < 0))
    bump(counts, "rows_undeclared_key_or_group", undeclared.sum())
    mask &= ~undeclared
    value = np.zeros(len(df), np.int64)
    if stat.value_column:
        value = _values(df[stat.value_column], mask, rows, stat, counts)
    bump(counts, "rows_counted_before_unit_rules", mask.sum())
    return mask, group, key, value


def partial(df: "pd.DataFrame", ids: np.ndarray, rows: np.ndarray, stat: Statistic,
            counts: dict[str, int]) -> "pd.DataFrame":
    """One batch's aggregate per (unit, group, key) for one statistic, as a frame (the Spark
    engine's per-batch function; any id type)."""
    import pandas as pd
    mask, group, key, value = counted_rows(df, rows, stat, counts)
    part = pd.DataFrame({"unit": ids[mask], "group": group[mask], "key": key[mask],
                         "rows": np.ones(int(mask.sum()), np.int64), "value": value[mask]})
    return part.groupby(["unit", "group", "key"], sort=False, as_index=False)[["rows", "value"]].sum()


def _partial(df: "pd.DataFrame", codes: np.ndarray, rows: np.ndarray, stat: Statistic,
             counts: dict[str, int], cells: int) -> tuple[np.ndarray, ...]:
    """One batch's aggregate per (unit, cell) for one statistic, units as dense indices and
    the cell ``group * keys + key`` (:func:`_group_sum`)."""
    mask, group, key, value = counted_rows(df, rows, stat, counts)
    keys = stat.keys.size if stat.keys else 1
    return _group_sum(codes[mask], group[mask] * keys + key[mask], np.ones(int(mask.sum()), np.int64),
                      value[mask], cells)


def _numbers(col: "pd.Series") -> np.ndarray:
    import pandas as pd
    if col.dtype == bool:
        return np.full(len(col), np.nan)
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)


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
        x = _numbers(col)
        ok = np.isfinite(x) & (x == np.round(x))
        out = np.full(len(col), -1, np.int64)
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
@dataclass(frozen=True)
class Answers:
    """A statistic's exact answers: ``cells`` (groups x keys, answer units) and, for a peak or
    a mode, ``scores`` (the keys' totals) and ``argmax`` per group."""

    cells: np.ndarray
    scores: np.ndarray | None = None
    argmax: np.ndarray | None = None


def _one_per_unit(parts: "pd.DataFrame", by: list[str]) -> "pd.DataFrame":
    """Each unit's cell (``by`` columns) with most rows, ties to the first declared."""
    cells = parts.groupby(["unit"] + by, as_index=False)["rows"].sum()
    cells = cells.sort_values(["unit", "rows"] + by, ascending=[True, False] + [True] * len(by), kind="stable")
    return cells.drop_duplicates("unit")


def answers(agg: Aggregated, stat: Statistic) -> Answers:
    """The exact answer of ``stat`` from the aggregate (module docstring for the rules)."""
    if stat.name in agg.answered:
        return agg.answered[stat.name]
    parts, counts = agg.parts[stat.name], agg.counts[stat.name]
    groups = stat.groups.size if stat.groups else 1
    keys = stat.keys.size if stat.keys else 1
    if stat.kind == "count":
        value = parts["unit"].nunique() if stat.of == "units" else int(parts["rows"].sum())
        return Answers(np.array([[value]], np.int64))
    if stat.kind in ("histogram", "mode") and stat.of != "rows":
        chosen = _one_per_unit(parts, ["group", "key"])
        bump(counts, "units_with_rows_in_several_cells", int((parts.groupby("unit").size() > 1).sum()))
        cells = np.zeros((groups, keys), np.int64)
        np.add.at(cells, (chosen["group"].to_numpy(np.int64), chosen["key"].to_numpy(np.int64)), 1)
        return from_cells(stat, cells)
    if stat.by is not None:   # sum, peak, histogram of rows: one group per unit
        home = _one_per_unit(parts, ["group"])[["unit", "group"]]
        joined = parts.merge(home, on=["unit", "group"], how="inner")
        bump(counts, "rows_outside_the_units_group", int(parts["rows"].sum() - joined["rows"].sum()))
        parts = joined
    cells = np.zeros((groups, keys), np.int64)
    what = "rows" if stat.kind == "histogram" else "value"    # a histogram of rows counts them
    np.add.at(cells, (parts["group"].to_numpy(np.int64), parts["key"].to_numpy(np.int64)), parts[what].to_numpy())
    return from_cells(stat, cells)


def from_cells(stat: Statistic, cells: np.ndarray) -> Answers:
    """The answers of a histogram, mode, sum or peak from its (groups x keys) totals: units
    per cell (histogram, mode) or summed values (sum, peak)."""
    if stat.kind in ("histogram", "sum"):
        return Answers(cells)
    if stat.kind == "mode":
        return Answers(cells, cells, np.argmax(cells, axis=1))
    return Answers(cells.sum(axis=1, keepdims=True), cells, np.argmax(cells, axis=1))


__all__ = ["Aggregated", "Answers", "UnitIndex", "aggregate", "answers", "bump", "counted_rows", "declared_index",
           "from_cells", "matches", "partial", "position_in_unit", "unit_ids"]
