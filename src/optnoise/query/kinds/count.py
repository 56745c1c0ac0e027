"""``count``: the number of units (``of = "units"``, default) or of rows (``of = "rows"``) that
pass ``where``. One unit contributes 0 or 1 (units), or ``0..max_rows`` (rows), to one cell."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..cells import ONE, Answers, GroupRules
from ..statistic import Statistic
from .base import Kind, UnitRules, group_rows, read_found, read_of


class Count(Kind):
    name = "count"
    order = 0
    keys = ("of", "key", "keys", "selection_share")
    unbiased = True

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_of(t), **read_found(t)}

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a count of rows" if stat.of == "rows" else None

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return (0, 1) if stat.of == "units" else (0, int(group_rows(unit)))  # type: ignore[arg-type]

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        return 1

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        value = part["unit"].nunique() if stat.of == "units" else int(part["rows"].sum())
        return Answers(np.array([[value]], np.int64))

    def counts_units(self, stat: Statistic) -> bool:
        return stat.of == "units"


KIND = Count()
