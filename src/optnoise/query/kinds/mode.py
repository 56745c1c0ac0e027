"""``mode``: the declared key held by the most units, per declared group (``by``). A unit
counts once, at the (group, key) of most of its counted rows, so it moves each key's score by
at most one and, by answer-noise, can move the argmax to any key (every shift)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..cells import ONE, Answers, GroupRules, units_at_home
from ..statistic import Statistic
from .base import KeyKind, UnitRules, read_groups, read_keys


class Mode(KeyKind):
    name = "mode"
    order = 4
    keys = ("key", "keys", "by", "groups", "method")

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_keys(t), **read_groups(t), **self.read_method(t)}

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return 0, 1

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        return self.from_grid(stat, units_at_home(stat, part, counts, rules))

    def counts_units(self, stat: Statistic) -> bool:
        return True

    def from_grid(self, stat: Statistic, grid: np.ndarray) -> Answers:
        return Answers(grid, grid, np.argmax(grid, axis=1))

    def about(self, stat: Statistic) -> str:
        return f"mode of {stat.key}"

    def synthetic_scores(self, stat: Statistic, unit: UnitRules, units: int, shares: np.ndarray) -> np.ndarray:
        """Units per key, ``round(units * share)``."""
        return np.rint(units * shares).astype(np.int64)

    def scores_words(self, stat: Statistic) -> str:
        return "units per key"


KIND = Mode()
