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
*L1 plan* (a histogram of rows, :meth:`.kinds.histogram.Histogram.l1`): a unit's ``m`` rows move the cells by at
most ``m`` in total (``2m`` under ``replace``), far less than ``cells x m``, so each cell
gets pure noise certified at distance 1 for ``epsilon / l1``; a pure ``eps1``-DP cell at
distance 1 is ``|s| eps1``-DP at distance ``s`` (chaining ``P[y|q] <= e^eps1 P[y|q+1]``),
independent cells multiply, so the statistic is ``eps1 sum |s_i| <= eps1 l1``-DP.
"""

from __future__ import annotations

from dataclasses import dataclass

from .statistic import Statistic


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
        Where the statistic is released by the *L1 plan* (the kind's ``l1``): the largest sum
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
            f"at most {self.distance}" + (f" (x resolution {stat.resolution})" if stat.value_column else "")
        total = "" if self.l1 is None else f", by at most {self.l1} in all"
        return {"change": self.change, "cell_distance": self.distance, "cells_per_unit": self.cells,
                "contribution": [self.low, self.high], "l1": self.l1,
                "in_words": f"one unit ({self.change}) moves {self.cells} released value{'s' if self.cells > 1 else ''}"
                            f", each by {cell}{total}; derived from the query and the unit, not from the data"}


__all__ = ["Derived"]
