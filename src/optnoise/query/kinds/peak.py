"""``peak``: the declared key (an hour) with the largest total of a clamped column ``of``, per
declared group (``by``) -- the papers' statistic. Its scores are the keys' totals; one unit
moves each key's total within ``[min(0, m a), max(0, m b)]`` and, by answer-noise, can move
the argmax to any key (every shift)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ..cells import ONE, Answers, GroupRules, summed_cells
from ..statistic import Statistic
from .base import KeyKind, UnitRules, clamped_contribution, read_groups, read_keys, read_values


class Peak(KeyKind):
    name = "peak"
    order = 3
    keys = ("key", "keys", "of", "clamp", "resolution", "by", "groups", "method")

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_keys(t), **read_groups(t), **read_values(t, "of"), **self.read_method(t)}

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a peak"

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return clamped_contribution(stat, unit)

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        return self.from_grid(stat, summed_cells(stat, part, counts, part["value"].to_numpy(np.int64), rules))

    def from_grid(self, stat: Statistic, grid: np.ndarray) -> Answers:
        return Answers(grid.sum(axis=1, keepdims=True), grid, np.argmax(grid, axis=1))

    def about(self, stat: Statistic) -> str:
        return f"peak of {stat.of} over {stat.key}"

    def synthetic_scores(self, stat: Statistic, unit: UnitRules, units: int, shares: np.ndarray) -> np.ndarray:
        """The group's ``units * max_rows`` rows spread over the keys by share, each carrying
        :func:`row_value` (resolution units); where that value is negative the shares are
        mirrored (``max + min - share``) so that the profile's peak stays the largest total."""
        value = row_value(stat)
        w = shares if value >= 0 else (shares.max() + shares.min() - shares) / (shares.max() + shares.min() - shares).sum()
        rows = units * int(unit.rows_bound)  # type: ignore[arg-type]
        return np.rint(rows * float(value) * w).astype(np.int64)

    def scores_words(self, stat: Statistic) -> str:
        return (f"the keys' totals of {stat.of} in units of the resolution {stat.resolution}, rows at "
                f"{float(row_value(stat) * stat.resolution):g} each")


def row_value(stat: Statistic) -> Fraction:
    """A peak's synthetic rows all carry this value (in resolution units): the middle of the
    clamp's non-negative part, or the clamp's middle when it is all at or below zero."""
    lo, hi = stat.scaled_clamp
    return Fraction(max(lo, 0) + hi, 2) if hi > 0 else Fraction(lo + hi, 2)


KIND = Peak()
