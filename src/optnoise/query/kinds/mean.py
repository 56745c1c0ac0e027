"""``mean``: the mean over the table's units of each unit's total of a clamped ``column`` over
its counted rows (a unit with no counted row counts as 0) -- the released sum divided by the
number of units.

Under ``change = "replace"`` the number of units ``N`` is public (the papers' model), so the
mean is post-processing of the released sum: its value is ``S / N``, its interval the sum's
interval divided by ``N`` (the same coverage, exactly: ``q in [a, b]`` iff ``q / N in
[a / N, b / N]``), its expected absolute error the sum's over ``N``; it costs what the sum
costs. Under ``add-remove`` ``N`` is not public and the mean would need a released count
(refused here: a ratio of two noisy values, with its own interval, is issue 35's). Without
units (an empty table) the mean is undefined: no value, and the document says so -- never
NaN or infinity.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ..statistic import Statistic
from .base import Planned, UnitRules, read_values
from .sum import Sum


class Mean(Sum):
    name = "mean"
    order = 5
    keys = ("column", "clamp", "resolution")
    unbiased = False

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return read_values(t, "column")

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a mean"

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        if unit.change != "replace":
            raise InvalidParameterError("kind", "mean", "a mean with change = 'replace' (the number of units is then "
                                        "public and the mean is the released sum over it), or a sum and a count")

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        doc = super().body(item, alpha, source)
        units = item.units or 0
        if units < 1:
            return {**doc, "value": None, "interval": None, "expected_abs_error": None,
                    "mean_method": "no units: the mean is undefined (nothing divided by zero)"}
        low_high = doc["interval"]
        return {**doc, "value": doc["value"] / units,
                "interval": None if low_high is None else [low_high[0] / units, low_high[1] / units],
                "expected_abs_error": None if doc["expected_abs_error"] is None else doc["expected_abs_error"] / units,
                "units": units,
                "mean_method": f"the released sum over the {units} units (public under replace): post-processing; "
                               "the interval is the sum's divided by the number of units, with the same coverage"}

    def notes(self, stat: Statistic) -> dict:
        return {}

    def about(self, stat: Statistic) -> str:
        return f"mean of {stat.column} per unit"


KIND = Mean()
