"""The neighbourhood of each statistic, derived from the query and the unit, never from the data.

What one unit can change, over *all* tables (docs/statistics.md, "What one unit can move"):
the unit's rows are bounded first (:mod:`.aggregate`: at most ``m = max_rows`` rows; under a
``by``, all its rows in one group; a histogram or a mode counts the unit once, at one cell),
so a unit's *contribution* to each answer lies in a fixed set, and a neighbouring table
changes the contribution of one unit: under ``replace`` from any value of that set to any
other, under ``add-remove`` from nothing to any value of it.

=================== ========================================= ===================== =========
statistic           a unit's contribution (per cell)           cell moves by at most cells
=================== ========================================= ===================== =========
count of units      0 or 1                                     1                     1
count of rows       0..m                                       m                     1
histogram (units)   1 at one cell (group, key), 0 elsewhere    1                     2 / 1
histogram (rows)    0..m at each key of its one group, at      m                     see below
                    most m in all
sum (clamp a..b)    [min(0, m a), max(0, m b)] at its group    width (replace),      2 / 1
                                                               largest |value| (a-r) (by)
peak, mode          any key (answer-noise)                     every shift           2 / 1
                                                                                     (by)
=================== ========================================= ===================== =========

"cells" is how many released values one unit can change at once: a histogram under
``replace`` moves one cell down and another up (one cell under ``add-remove``); a histogram
of rows (``of = "rows"``, ``K`` keys) holds a unit's ``m`` rows spread over at most
``min(m, K)`` keys of its one group, each cell by ``0..m``: ``add-remove`` moves those
``min(m, K)`` cells, ``replace`` the old group's and the new group's, ``2 min(m, K)`` (one
group: ``min(2m, K)``), each by at most ``m``; a statistic
``by`` group changes the unit's old group and its new one under ``replace`` (one group under
``add-remove``): groups compose in parallel because the bounding rule fixes one group per
unit. Each cell's mechanism is certified under the cell's distances, and the statistic's
guarantee is the composition of that many cells (:mod:`.mechanisms`) -- except under the
*L1 plan* (a histogram of rows, :func:`l1_bound`): a unit's ``m`` rows move the cells by at
most ``m`` in total (``2m`` under ``replace``), far less than ``cells x m``, so each cell
gets pure noise certified at distance 1 for ``epsilon / l1``; a pure ``eps1``-DP cell at
distance 1 is ``|s| eps1``-DP at distance ``s`` (chaining ``P[y|q] <= e^eps1 P[y|q+1]``),
independent cells multiply, so the statistic is ``eps1 sum |s_i| <= eps1 l1``-DP.
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Statistic, Unit


@dataclass(frozen=True)
class Derived:
    """What one unit can change in a statistic.

    Attributes
    ----------
    distance:
        The largest change of one released value (a cell), in the answer's integer units
        (a sum: units of the resolution); ``None`` for every shift of a key (peak, mode).
    cells:
        How many released values one unit can change at once.
    low, high:
        A unit's contribution to one cell lies in ``low..high`` (answer units).
    change:
        ``"replace"`` or ``"add-remove"``.
    l1:
        Where the statistic is released by the *L1 plan* (:func:`l1_bound`): the largest sum
        over the cells of their changes, below ``cells * distance``; each cell then gets
        pure noise certified at distance 1 for ``epsilon / l1`` and the statistic's guarantee
        is ``l1`` times that certificate (chained). ``None``: cell by cell.
    """

    distance: int | None
    cells: int
    low: int
    high: int
    change: str
    l1: int | None = None

    def to_json(self, stat: Statistic) -> dict:
        cell = "every shift of the key (any key may become any other)" if self.distance is None else \
            f"at most {self.distance}" + (f" (x resolution {stat.resolution})" if stat.kind in ("sum", "peak") else "")
        total = "" if self.l1 is None else f", by at most {self.l1} in all"
        return {"change": self.change, "cell_distance": self.distance, "cells_per_unit": self.cells,
                "contribution": [self.low, self.high], "l1": self.l1,
                "in_words": f"one unit ({self.change}) moves {self.cells} released value{'s' if self.cells > 1 else ''}"
                            f", each by {cell}{total}; derived from the query and the unit, not from the data"}


def contribution(stat: Statistic, unit: Unit) -> tuple[int, int]:
    """The range of one unit's contribution to one cell (answer units)."""
    m = unit.rows_bound
    if stat.kind == "count":
        return (0, 1) if stat.of == "units" else (0, int(m))  # type: ignore[arg-type]
    if stat.kind in ("histogram", "mode"):
        return (0, int(m)) if stat.kind == "histogram" and stat.of == "rows" else (0, 1)  # type: ignore[arg-type]
    lo, hi = stat.scaled_clamp
    return min(0, m * lo), max(0, m * hi)  # type: ignore[operator]


def derive(stat: Statistic, unit: Unit) -> Derived:
    """The neighbourhood of ``stat`` under ``unit`` (module docstring's table)."""
    low, high = contribution(stat, unit)
    replace = unit.change == "replace"
    distance: int | None = (high - low) if replace else max(-low, high)
    grouped = stat.by is not None
    if stat.kind == "histogram" and stat.of == "rows":
        cells = rows_histogram_cells(stat, unit)
    elif stat.kind == "histogram":
        cells = 2 if replace else 1
    elif stat.kind == "count":
        cells = 1
    else:
        cells = 2 if grouped and replace else 1
    if stat.kind in ("peak", "mode") and stat.method == "answer-noise":
        distance = None
    l1 = l1_bound(stat, unit)
    if l1 is not None and distance is not None and l1 >= cells * distance:
        l1 = None   # no better than cell by cell
    return Derived(distance, cells, low, high, unit.change, l1)


def l1_bound(stat: Statistic, unit: Unit) -> int | None:
    """The largest total change ``sum_cells |change|`` one unit can cause, where the L1 plan
    applies (:class:`Derived`): a histogram of rows, whose unit holds at most ``m`` rows in all
    (the bounding rule), so removing or adding them moves the cells by ``m`` in total and
    replacing them by ``2m`` (the old rows out, the new in). Not for
    ``clamped-discrete-gaussian`` (the plan needs pure noise). ``None`` elsewhere."""
    if stat.kind != "histogram" or stat.of != "rows" or stat.mechanism == "clamped-discrete-gaussian":
        return None
    m = int(unit.rows_bound)  # type: ignore[arg-type]
    return 2 * m if unit.change == "replace" else m


def rows_histogram_cells(stat: Statistic, unit: Unit) -> int:
    """Cells one unit moves in a histogram of rows (module docstring): its at most ``m`` rows
    lie in one group (the bounding rule) over at most ``min(m, K)`` of its ``K`` keys; a
    neighbour adds or removes them, or (``replace``) swaps them for rows of another group,
    or of the same group, where old and new together reach at most ``min(2m, K)`` keys."""
    m, keys = int(unit.rows_bound), stat.keys.size  # type: ignore[arg-type, union-attr]
    groups = stat.groups.size if stat.groups else 1
    if unit.change != "replace":
        return min(m, keys)
    return min(2 * m, keys) if groups == 1 else 2 * min(m, keys)


def score_sensitivity(stat: Statistic, unit: Unit) -> int:
    """Report-noisy-max: the largest change of one key's score (a peak: the key's total; a
    mode: the key's count of units) when one unit changes."""
    low, high = contribution(stat, unit)
    return (high - low) if unit.change == "replace" else max(-low, high)


def cell_domain(stat: Statistic, unit: Unit, units: int) -> tuple[int, int]:
    """``(offset, n)``: every possible value of one cell is ``offset + 0..n`` (answer units),
    for ``units`` units (public under replace; ``max_units`` under add-remove)."""
    count = units if unit.change == "replace" else int(unit.max_units)  # type: ignore[arg-type]
    low, high = contribution(stat, unit)
    return count * low, max(1, count * (high - low))


__all__ = ["Derived", "cell_domain", "contribution", "derive", "l1_bound", "rows_histogram_cells", "score_sensitivity"]
