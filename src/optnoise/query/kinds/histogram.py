"""``histogram``: units (``of = "units"``, default) or rows (``of = "rows"``) per declared key,
optionally per declared group (``by``).

A histogram of units counts a unit once, at the (group, key) of most of its counted rows,
so one unit moves two cells by one under ``replace`` (one under ``add-remove``). A histogram
of rows holds a unit's ``m = max_rows`` rows over at most ``min(m, K)`` keys of its one group:
``add-remove`` moves those cells, ``replace`` the old group's and the new group's
(``2 min(m, K)``; one group: ``min(2m, K)``), each by at most ``m`` -- and by at most ``m``
(``2m``) in all, the *L1 plan* (docs/proofs/l1-chaining.md).

``consistent = true`` (a histogram of units under ``replace``, not unbiased): the cells and an
*outside* cell (units with no counted row) are released by the same certified cells and
projected onto the public number of units, so that they add up; a histogram ``by`` groups
adds up, key by key, to the overall consistent histogram of the same key
(:mod:`..consistent`, docs/proofs/consistent-tables.md)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ..cells import Answers, summed_cells, units_at_home
from ..statistic import Statistic
from .base import Kind, Planned, UnitRules, read_groups, read_keys, read_of, rows_of


class Histogram(Kind):
    name = "histogram"
    order = 1
    keys = ("key", "keys", "by", "groups", "of", "consistent")
    unbiased = True
    by_key = True

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        consistent = t.get("consistent", False)
        if not isinstance(consistent, bool):
            raise InvalidParameterError("consistent", consistent, "true or false (written without quotes)")
        return {**read_of(t), **read_keys(t), **read_groups(t), "consistent": consistent}

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        """``consistent = true`` needs a public total: a histogram of units under ``replace``,
        not unbiased (the projection would bring the bias back)."""
        if not stat.consistent:
            return
        if unit.change != "replace":
            raise InvalidParameterError("consistent", True, f"false under change = '{unit.change}' (the number of "
                                        "units is not public there, so the cells have no public total to add up to; "
                                        "consistent = true needs change = 'replace')")
        if stat.of != "units":
            raise InvalidParameterError("consistent", True, "false for a histogram of rows (its total, the number of "
                                        "rows kept, is not public; consistent = true needs of = 'units')")
        if stat.unbiased:
            raise InvalidParameterError("consistent", True, "false with unbiased = true (adding up to the total is "
                                        "a projection that brings the bias back: choose one)")

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a histogram of rows" if stat.of == "rows" else None

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return (0, rows_of(unit)) if stat.of == "rows" else (0, 1)

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        if stat.of != "rows":
            return 2 if unit.change == "replace" else 1
        return rows_histogram_cells(stat, unit)

    def l1(self, stat: Statistic, unit: UnitRules) -> int | None:
        """A unit's at most ``m`` rows move the cells by ``m`` in all (``2m`` under ``replace``);
        not for ``clamped-discrete-gaussian`` (the plan needs pure noise).

        Proof: docs/proofs/l1-chaining.md
        """
        if stat.of != "rows" or stat.mechanism == "clamped-discrete-gaussian":
            return None
        m = rows_of(unit)
        return 2 * m if unit.change == "replace" else m

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int]) -> Answers:
        if stat.of == "rows":
            return Answers(summed_cells(stat, part, counts, part["rows"].to_numpy(np.int64)))
        return Answers(units_at_home(stat, part, counts))

    def counts_units(self, stat: Statistic) -> bool:
        return stat.of == "units"

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        """The released cells; ``consistent``: projected onto the public number of units, with
        the outside cell and the simultaneous intervals (:func:`..consistent.body`).

        Proof: docs/proofs/consistent-tables.md
        """
        if not item.stat.consistent:
            return super().body(item, alpha, source)
        from ..consistent import body
        return body(item.stat, item.cell, item.answers.cells, int(item.units), alpha, source)  # type: ignore[arg-type]

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """Consistent histograms ``by`` groups made to add up to their overall histogram
        (:func:`..consistent.add_up`)."""
        if not any(item.stat.consistent for item in items):
            return docs
        from ..consistent import add_up
        return add_up([item.stat for item in items], docs, source)

    def about(self, stat: Statistic) -> str:
        return f"histogram of {stat.of} over {stat.key}" + (" (consistent)" if stat.consistent else "")


def rows_histogram_cells(stat: Statistic, unit: UnitRules) -> int:
    """Cells one unit moves in a histogram of rows (module docstring)."""
    m, keys = rows_of(unit), stat.keys.size  # type: ignore[union-attr]
    groups = stat.groups.size if stat.groups else 1
    if unit.change != "replace":
        return min(m, keys)
    return min(2 * m, keys) if groups == 1 else 2 * min(m, keys)


KIND = Histogram()
