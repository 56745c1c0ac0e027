"""``variance``: the population variance over the table's units of each unit's total ``v_u`` of
a clamped ``column`` over its counted rows (a unit with no counted row counts as 0; the same
per-unit value as a ``mean``). One unit's total lies in ``[L, U] = [min(0, m a), max(0, m
b)]`` (``m = max_rows``, ``[a, b]`` the clamp, resolution units): with ``max_rows = 1`` and a
clamp holding 0, the clamp itself.

Released from certified parts, each composed by the accountant (:mod:`.mean`'s machinery),
on the values centred at the public ``c = floor((L + U) / 2)`` (the variance does not move;
one unit moves the parts by less): the sum of squares ``Q = sum (v_u - c)^2`` (one unit
contributes ``0..H^2``, ``H = max(c - L, U - c)``), the sum ``S = sum (v_u - c)`` and, under
``add-remove``, the count ``C = N`` (under ``replace`` ``N`` is public and not noised). The
budget is split to minimise the first-order bound of the variance's worst-case expected
error, ``(|e_Q| + 2H |e_S| + H^2 |e_C|) / N`` (:func:`.mean.moment_shares`).

The released variance is ``clip(Q / C' - (S / C')^2, 0, (U - L)^2 / 4)`` with ``C' = max(C,
1)`` (``N`` under replace): never negative, never above the largest variance of values in
``[L, U]`` (Popoviciu), never NaN or infinity. Its interval (coverage ``>= 1 - alpha``,
docs/proofs/mean-interval.md) is the range of the variance over the box of the parts'
intervals. ``std`` (:mod:`.std`) is its square root, interval included.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ..cells import ONE, Answers, GroupRules
from ..draw import plain
from ..intervals import alpha_split, outward, variance_interval
from ..mechanisms import Cell
from ..statistic import Statistic
from .base import Kind, Planned, UnitRules, clamped_contribution, read_values
from .mean import PartSpec, centre, draw_part, part_cells, part_json, unit_bounds

#: The largest ``|L|, |U|`` (resolution units) under ``replace``, and the largest ``max_units *
#: max(L^2, U^2)`` under ``add-remove``: the sum of squares stays an exact 64-bit integer.
MAX_REPLACE_VALUE = 46_340
MAX_SQUARES = 2 ** 62


def variance_value(squares: int, total: int, count: int, top: Fraction) -> Fraction:
    """The released variance from a released sum of squares, sum and count (centred values):
    ``clip(Q / C' - (S / C')^2, 0, top)``, ``C' = max(C, 1)`` -- never negative, never above
    ``top``, never NaN or infinity (module docstring).

    Proof: docs/proofs/mean-interval.md
    """
    den = max(count, 1)
    return min(max(Fraction(squares, den) - Fraction(total, den) ** 2, Fraction(0)), top)


class Variance(Kind):
    name = "variance"
    order = 6
    keys = ("column", "clamp", "resolution")
    per_unit = True   # a sum of squares needs every unit's own total: Spark's Python path
    #: ``std``: the square root of the variance and of its interval's ends.
    root = False

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return read_values(t, "column")

    def rows_needed(self, stat: Statistic) -> str | None:
        return f"a {self.name}"

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        low, high = clamped_contribution(stat, unit)
        big = max(-low, high)
        most = getattr(unit, "max_units", None)
        if (unit.change == "replace" and big > MAX_REPLACE_VALUE) or \
                (unit.change != "replace" and int(most) * big * big >= MAX_SQUARES):  # type: ignore[arg-type]
            raise InvalidParameterError("clamp", [str(x) for x in stat.clamp],  # type: ignore[union-attr]
                                        f"a clamp, resolution and max_rows whose unit totals stay within "
                                        f"{MAX_REPLACE_VALUE} resolution steps of 0 under replace (max_units x their "
                                        f"square below 2^62 under add-remove): here {big}")

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        low, high = clamped_contribution(stat, unit)
        c = centre(low, high)
        return low - c, high - c

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        return 1

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        """``[[sum v_u^2, sum v_u]]`` over the units with a counted row (exact integers)."""
        unit = part["unit"].to_numpy(np.int64)
        value = part["value"].to_numpy(np.int64)
        _, at = np.unique(unit, return_inverse=True)
        per_unit = np.zeros(int(at.max()) + 1 if len(at) else 0, np.int64)
        np.add.at(per_unit, at.reshape(-1), value)
        squares = int((per_unit * per_unit).sum())   # within 64 bits: the guard of :meth:`check`
        return Answers(np.array([[squares, int(per_unit.sum())]], np.int64))

    def grid_shape(self, stat: Statistic) -> tuple[int, int]:
        return 1, 2

    def parts_for(self, stat: Statistic, unit: UnitRules, units: int) -> list[Cell] | None:
        """The centred sum, the sum of squares and (add-remove) the count, each with the range
        one unit contributes (module docstring).

        Proof: docs/proofs/mean-interval.md
        """
        low, high = clamped_contribution(stat, unit)
        c = centre(low, high)
        half = max(c - low, high - c)
        n = units if unit.change == "replace" else int(unit.max_units)  # type: ignore[attr-defined]
        parts = [PartSpec("sum", low - c, high - c, n * (low - c), n * (high - low), 2.0 * half),
                 PartSpec("sum_of_squares", 0, half * half, 0, n * half * half, 1.0)]
        if unit.change != "replace":
            parts.append(PartSpec("count", 0, 1, 0, n, float(half * half)))
        return part_cells(stat, unit, parts, {"centre": c})

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        cells = [item.cell, *item.extra]
        low, high, c = unit_bounds(item.cell, item.derived)  # type: ignore[arg-type]
        squares, total = (int(x) for x in item.answers.cells[0])
        n = item.all_units
        truths = [total - c * n, squares - 2 * c * total + c * c * n, n]
        alphas = alpha_split(alpha, [float(cell.design["share"]) for cell in cells])  # type: ignore[union-attr]
        drawn = [draw_part(cell, t, a, source) for cell, t, a in zip(cells, truths, alphas)]  # type: ignore[arg-type]
        s, q = drawn[0], drawn[1]
        count = (drawn[2].value, drawn[2].low, drawn[2].high) if len(drawn) > 2 else (n, n, n)
        top = Fraction((high - low) ** 2, 4)
        var = variance_value(q.value, s.value, count[0], top)
        lo, hi = variance_interval((q.low, q.high), (s.low, s.high), (count[1], count[2]), top)
        res2 = item.stat.resolution ** 2
        value = float(var * res2) ** (0.5 if self.root else 1)
        names = ["sum", "sum_of_squares", "count"]
        scales = [item.stat.resolution, res2, Fraction(1)]
        return {"value": plain(value), "interval": outward(lo, hi, res2, root=self.root),
                "interval_method": f"the {self.name}'s values over the box of its parts' intervals (alphas "
                                   f"{', '.join(f'{a:.6g}' for a in alphas)}: independent parts, the product of their "
                                   f"coverages >= 1 - {alpha:g}), within [0, (U - L)^2 / 4]"
                                   f"{' (square roots)' if self.root else ''}, rounded outward "
                                   "(docs/proofs/mean-interval.md)",
                "expected_abs_error": None,
                "expected_abs_error_method": "none: a function of several noisy values (the interval states its "
                                             "accuracy)",
                "bound": plain(float(top * res2) ** (0.5 if self.root else 1)),
                "parts": {name: part_json(cell, d, a, scale)  # type: ignore[arg-type]
                          for name, cell, d, a, scale in zip(names, cells, drawn, alphas, scales)},
                "variance_method": f"clip(Q / C' - (S / C')^2, 0, (U - L)^2 / 4) with C' = max(C, 1) "
                                   f"({'the public number of units' if len(drawn) == 2 else 'the released count'}): "
                                   f"Q, S the released sum of squares and sum of the unit totals centred at "
                                   f"{float(c * item.stat.resolution):g}; never negative, never NaN"
                                   + ("; std: its square root" if self.root else "")}

    def about(self, stat: Statistic) -> str:
        return f"{self.name} of {stat.column} per unit"


KIND = Variance()
