"""``sum``: a numeric ``column`` clamped to ``clamp`` and rounded to ``resolution``, summed
over the counted rows, optionally per declared group (``by``). One unit's ``m = max_rows``
rows contribute ``[min(0, m a), max(0, m b)]`` (resolution units) to its one group."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...randomness import RandomSource
from ..cells import ONE, Answers, GroupRules, summed_cells
from ..draw import draw_numbers
from ..statistic import Statistic
from .base import Kind, Planned, UnitRules, clamped_contribution, read_found, read_groups, read_values

#: How to read a mean from a released sum (the document's ``note``).
MEAN_NOTE = ("a mean is post-processing of a released sum and a released count (divide them): it costs no budget "
             "and carries both intervals")
UNBIASED_MEAN = "; it is not unbiased even when both are: E[S / C] is not E[S] / E[C], and C may be 0 or negative"


class Sum(Kind):
    name = "sum"
    order = 2
    keys = ("column", "clamp", "resolution", "by", "groups", "key", "keys", "selection_share")
    unbiased = True

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_groups(t), **read_values(t, "column"), **read_found(t)}

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a sum"

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return clamped_contribution(stat, unit)

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        """By declared groups and a key found in the data (``stat.keep_cells``,
        :func:`..found.with_selections`): a unit's rows in its ``g`` (group, key) cells of most
        counted rows -- the cells its selection, a histogram of units over the same layout,
        counts it in; so one unit moves ``g`` cells (``2g`` under replace), each by its rows in
        one group at most.

        Proof: docs/proofs/key-selection.md ("Beside declared groups")
        """
        return Answers(summed_cells(stat, part, counts, part["value"].to_numpy(np.int64), rules,
                                    by_cells=stat.keep_cells))

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        """As every number; by declared groups and a found key, ``group -> key -> value``."""
        return draw_numbers(item.stat, item.cell, item.answers, alpha, source,  # type: ignore[arg-type]
                            by_key=item.stat.key is not None, resolution=self.resolution(item.stat))

    def resolution(self, stat: Statistic) -> Fraction | None:
        return stat.resolution

    def notes(self, stat: Statistic) -> dict:
        return {"note": MEAN_NOTE + (UNBIASED_MEAN if stat.unbiased else "")}

    def csv_rows(self, entry: Mapping[str, Any]) -> list[tuple]:
        """By a key found in the data: one row per released key, in the key column (beside
        declared groups, its group in the group column)."""
        if not isinstance(entry.get("keys"), Mapping):
            return super().csv_rows(entry)
        ivs = entry.get("intervals") or {}
        if any(isinstance(v, Mapping) for v in entry["values"].values()):   # beside declared groups
            return [(g, k, v, (ivs.get(g) or {}).get(k)) for g, row in entry["values"].items() for k, v in row.items()]
        return [("", k, v, ivs.get(k)) for k, v in entry["values"].items()]

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """A sum by a key found in the data: its values kept for its selection's released keys
        (:func:`..found.selected`)."""
        from ..found import selected
        return selected(items, docs)

    def about(self, stat: Statistic) -> str:
        return f"sum of {stat.column}"


KIND = Sum()
