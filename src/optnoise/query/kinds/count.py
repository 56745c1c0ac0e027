"""``count``: the number of units (``of = "units"``, default) or of rows (``of = "rows"``) that
pass ``where``. One unit contributes 0 or 1 (units), or ``0..max_rows`` (rows), to one cell.

By a key found in the data (``key`` with ``keys = "from-data"``): a count of units is the
histogram of units over the key, a count of rows the histogram of rows over the key after its
selection (:func:`..found.with_selections`) -- every method below hands such a statistic to the
histogram's kind (its cells, L1 plan, answers, mechanism, selection and document); the
document keeps ``kind = "count"``."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...randomness import RandomSource
from ...target import Target
from ..cells import ONE, Answers, GroupRules
from ..mechanisms import Cell
from ..statistic import Statistic
from .base import Kind, Planned, UnitRules, group_rows, read_found, read_of


def _units_by_key() -> Kind:
    """The histogram's kind, which releases a count by a key found in the data."""
    from .histogram import KIND as HISTOGRAM
    return HISTOGRAM


def by_found_key(stat: Statistic) -> bool:
    """Whether ``stat`` counts by a key found in the data (units: the found keys; rows: selected)."""
    return stat.keys_from_data or stat.selected_by is not None


class Count(Kind):
    name = "count"
    order = 0
    keys = ("of", "key", "keys", "selection_share", "by", "groups")
    unbiased = True

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_of(t), **read_found(t, grouped=False)}

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a count of rows" if stat.of == "rows" else None

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return (0, 1) if stat.of == "units" else (0, int(group_rows(unit)))  # type: ignore[arg-type]

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        return _units_by_key().cells(stat, unit) if by_found_key(stat) else 1

    def l1(self, stat: Statistic, unit: UnitRules) -> int | None:
        return _units_by_key().l1(stat, unit) if by_found_key(stat) else None

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        if by_found_key(stat):
            return _units_by_key().answers(stat, part, counts, rules)
        value = part["unit"].nunique() if stat.of == "units" else int(part["rows"].sum())
        return Answers(np.array([[value]], np.int64))

    def counts_units(self, stat: Statistic) -> bool:
        return stat.of == "units"

    def mechanism(self, stat: Statistic, target: Target, distance: int | None, n: int, offset: int,
                  keys_per_unit: int = 1) -> Cell:
        if stat.keys_from_data:
            return _units_by_key().mechanism(stat, target, distance, n, offset, keys_per_unit)
        return super().mechanism(stat, target, distance, n, offset)

    def design_key(self, stat: Statistic) -> tuple:
        return (*super().design_key(stat), stat.keys_from_data)

    def selection(self, item: Planned) -> Any:
        return _units_by_key().selection(item) if item.stat.keys_from_data else None

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        if by_found_key(item.stat):
            return _units_by_key().body(item, alpha, source)
        return super().body(item, alpha, source)

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """A count of rows by a found key: kept for its selection's released keys
        (:func:`..found.selected`)."""
        from ..found import selected
        return selected(items, docs)

    def csv_rows(self, entry: Mapping[str, Any]) -> list[tuple]:
        return _units_by_key().csv_rows(entry) if isinstance(entry.get("keys"), Mapping) else super().csv_rows(entry)

    def about(self, stat: Statistic) -> str:
        return f"count of {stat.of} by {stat.key}" if by_found_key(stat) else "count"


KIND = Count()
