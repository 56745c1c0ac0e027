"""``mean``: the mean over the table's units of each unit's *total* of a clamped ``column``
over its counted rows (a unit with no counted row counts as 0). One unit's total lies in
``[L, U] = [min(0, m a), max(0, m b)]`` (``m = max_rows``, ``[a, b]`` the clamp, resolution
units).

* ``change = "replace"``: the number of units ``N`` is public (the papers' model), so the mean
  is post-processing of the released sum: ``S / N``, its interval the sum's divided by ``N``
  (the same coverage, exactly: ``q in [a, b]`` iff ``q / N in [a / N, b / N]``), its
  expected absolute error the sum's over ``N``; it costs what the sum costs. The count is not
  noised.
* ``change = "add-remove"``: ``N`` is private, so the mean is released from two certified
  parts, each composed by the accountant: the *centred* sum ``S_c = sum (v_u - c)`` (``c``,
  public, the middle of ``[L, U]``: one unit moves it by ``max(c - L, U - c)``, about half of
  ``max(-L, U)`` for a column that is never negative) and the count ``C = N`` (moved by 1).
  The budget is split to minimise the first-order bound of the mean's expected error
  (:func:`moment_shares`); the interval holds the true mean with probability ``>= 1 - alpha``
  (:func:`~..intervals.ratio_interval`, docs/proofs/mean-interval.md). **Rule for a noisy
  count <= 0**: the released mean is ``c + clip(S_c / max(C, 1), L - c, U - c)`` -- the
  count is taken as at least 1 and the mean kept inside ``[L, U]``: never NaN or infinity.

Without units (an empty table) under ``replace`` the query is refused (nothing is public to
divide by).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ...target import Target
from ..draw import plain
from ..intervals import alpha_split, interval, outward, ratio_interval
from ..mechanisms import Cell
from ..neighbourhood import Derived
from ..statistic import Statistic
from .base import Planned, UnitRules, clamped_contribution, read_found, read_values
from .sum import Sum

#: A part's share of the statistic's epsilon is rounded down by this much, so that the parts'
#: epsilons never add up above the statistic's.
SHARE_MARGIN = 1e-9


# ------------------------------------------------------------------ shared by mean, variance, std
def centre(low: int, high: int) -> int:
    """The public centre ``c = floor((L + U) / 2)`` of a unit's value range (an integer, so that
    ``v - c`` stays an integer of the resolution)."""
    return (low + high) // 2


def moment_shares(weights: list[float]) -> list[float]:
    """The split of a statistic's budget among its parts: ``epsilon_i = epsilon sqrt(w_i) /
    sum_j sqrt(w_j)``, where ``w_i = coefficient_i * distance_i`` -- the part's weight in the
    first-order bound of the statistic's worst-case expected absolute error, ``sum_i
    coefficient_i E|eta_i|`` with ``E|eta_i| ~ distance_i / epsilon_i`` (the geometric's scale
    at small epsilon). Minimising ``sum_i w_i / epsilon_i`` under ``sum_i epsilon_i = epsilon``
    (Lagrange: ``w_i / epsilon_i^2`` equal) gives this split; the same weights split ``alpha``
    (:func:`~..intervals.alpha_split`: ``alpha_i`` proportional to ``w_i / epsilon_i``, which is
    proportional to ``sqrt(w_i)``)."""
    roots = [math.sqrt(w) for w in weights]
    return [r / sum(roots) for r in roots]


def split_target(target: Target, shares: list[float]) -> list[Target]:
    """Each part's target: ``share`` of the epsilon and of the delta, rounded down
    (:data:`SHARE_MARGIN`); basic composition of the parts meets ``target``."""
    return [Target(target.epsilon * s * (1 - SHARE_MARGIN), target.delta * s * (1 - SHARE_MARGIN), target.notion)
            for s in shares]


@dataclass(frozen=True)
class PartSpec:
    """One part of a statistic of several: its name, what one unit contributes to it
    (``low..high``, answer units), its domain ``offset + {0..n}`` and its weight in the error
    bound (:func:`moment_shares`)."""

    name: str
    low: int
    high: int
    offset: int
    n: int
    coefficient: float


def part_cells(stat: Statistic, unit: UnitRules, parts: list[PartSpec], first: dict) -> list[Cell]:
    """The certified cells of ``parts`` (through :func:`~optnoise.query.kinds.cell_for`, each at
    its share of the target, under the distance the unit's rule gives its contribution,
    :meth:`PrivacyUnit.distance`); ``first``: entries added to the first cell's ``design``.

    Proof: docs/proofs/mean-interval.md
    """
    from . import cell_for
    distances = [unit.distance(p.low, p.high) for p in parts]
    shares = moment_shares([p.coefficient * d for p, d in zip(parts, distances)])
    cells: list[Cell] = []
    for p, d, t in zip(parts, distances, split_target(stat.target, shares)):  # type: ignore[arg-type]
        derived = Derived(d, 1, p.low, p.high, unit.change)
        cell = cell_for(replace(stat, target=t), derived, max(1, p.n), p.offset)
        cells.append(replace(cell, name=f"{stat.name}.{p.name}", bounded=None,
                             design={**cell.design, "part": p.name, "distance": d, "share": shares[len(cells)]}))
    cells[0] = replace(cells[0], design={**cells[0].design, **first})
    return cells


def mean_value(total: int, count: int, bounds: tuple[int, int]) -> Fraction:
    """The released mean from a released sum and count: ``clip(total / max(count, 1), *bounds)``
    -- a count ``<= 0`` is taken as 1, so never NaN or infinity (module docstring).

    Proof: docs/proofs/mean-interval.md
    """
    return min(max(Fraction(total, max(count, 1)), Fraction(bounds[0])), Fraction(bounds[1]))


@dataclass(frozen=True)
class Drawn:
    """A part's released value and its ``1 - alpha_i`` interval (answer units)."""

    value: int
    low: int
    high: int
    how: str


def draw_part(cell: Cell, truth: int, alpha: float, source: RandomSource) -> Drawn:
    """One part released by its cell, with its interval (exact, every true value)."""
    released = cell.release(np.array([truth - cell.offset], np.int64), source)
    low, high, how = interval(cell, released, alpha)
    return Drawn(int(released[0]) + cell.offset, int(low[0]) + cell.offset,  # type: ignore[index]
                 int(high[0]) + cell.offset, how)  # type: ignore[index]


def part_json(cell: Cell, drawn: Drawn, alpha: float, scale: Fraction, shift: int = 0) -> dict:
    """A part as the document writes it: its released value and interval in the column's
    units (``shift``: the centre's contribution added back), its mechanism and ``alpha_i``."""
    def col(v: int) -> Any:
        return plain(float((v + shift) * scale)) if scale.denominator != 1 else int((v + shift) * scale)
    return {"value": col(drawn.value), "interval": [col(drawn.low), col(drawn.high)], "alpha": alpha,
            "interval_method": drawn.how, "mechanism": cell.to_json()}


def unit_bounds(cell: Cell, derived: Any) -> tuple[int, int, int]:
    """``(L, U, c)`` of a statistic whose first cell records its centre (answer units)."""
    c = int(cell.design["centre"])
    return derived.low + c, derived.high + c, c


# ------------------------------------------------------------------ the kind
class Mean(Sum):
    name = "mean"
    order = 5
    keys = ("column", "clamp", "resolution", "key", "keys", "selection_share", "by", "groups")
    unbiased = False

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {**read_values(t, "column"), **read_found(t, grouped=False)}

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a mean"

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        """A mean by a key found in the data divides a key's sum by its selection's count of
        units: both must keep a unit in the same keys, which ``bounding = "first"`` does (one
        rule on the same rows) and ``"random"`` does not (each draws its own priorities)."""
        if stat.keys_from_data and getattr(unit, "bounding", "first") != "first":
            raise InvalidParameterError("unit.bounding", getattr(unit, "bounding"), "'first' for a mean by a key "
                                        "found in the data (its sums and its counts of units must keep a unit in the "
                                        "same keys)")

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        low, high = clamped_contribution(stat, unit)
        if unit.change == "replace" or stat.by is not None:   # by a found key: uncentred (module docstring)
            return low, high
        c = centre(low, high)
        return low - c, high - c

    def parts_for(self, stat: Statistic, unit: UnitRules, units: int) -> list[Cell] | None:
        """Under add-remove: the centred sum and the count (module docstring).

        Proof: docs/proofs/mean-interval.md
        """
        if unit.change == "replace" or stat.by is not None:
            return None
        low, high = clamped_contribution(stat, unit)
        c, most = centre(low, high), int(unit.max_units)  # type: ignore[attr-defined]
        half = max(c - low, high - c)
        return part_cells(stat, unit, [PartSpec("sum", low - c, high - c, most * (low - c), most * (high - low), 1.0),
                                       PartSpec("count", 0, 1, 0, most, float(half))], {"centre": c})

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        if item.stat.selected_by is not None:
            return drawn_sums(item, alpha, source)
        if item.extra:
            return self._from_parts(item, alpha, source)
        doc = super().body(item, alpha, source)
        units = item.units or 0
        if units < 1:   # refused before (an empty table under replace): never NaN or infinity
            return {**doc, "value": None, "interval": None, "expected_abs_error": None,
                    "mean_method": "no units: the mean is undefined (nothing divided by zero)"}
        low_high = doc["interval"]
        return {**doc, "value": doc["value"] / units,
                "interval": None if low_high is None else [low_high[0] / units, low_high[1] / units],
                "expected_abs_error": None if doc["expected_abs_error"] is None else doc["expected_abs_error"] / units,
                "units": units,
                "mean_method": f"the released sum over the {units} units (public under replace): post-processing; "
                               "the interval is the sum's divided by the number of units, with the same coverage"}

    def _from_parts(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        """Under add-remove: the centred sum and the count drawn, the mean and its interval
        (module docstring).

        Proof: docs/proofs/mean-interval.md
        """
        sums, count = item.cell, item.extra[0]
        low, high, c = unit_bounds(sums, item.derived)  # type: ignore[arg-type]
        res = item.stat.resolution
        total = int(item.answers.cells[0, 0])
        a_sum, a_count = alpha_split(alpha, [float(sums.design["share"]), float(count.design["share"])])
        s = draw_part(sums, total - c * item.all_units, a_sum, source)  # type: ignore[arg-type]
        n = draw_part(count, item.all_units, a_count, source)
        centred = mean_value(s.value, n.value, (low - c, high - c))
        lo, hi = ratio_interval((s.low, s.high), (n.low, n.high), (low - c, high - c))
        return {"value": plain(float((centred + c) * res)), "interval": outward(lo + c, hi + c, res),
                "interval_method": f"the mean's values over the box of the centred sum's and the count's intervals "
                                   f"(alpha {a_sum:.6g} and {a_count:.6g}: independent parts, (1 - a)(1 - b) >= "
                                   f"1 - {alpha:g}), within [{float(low * res):g}, {float(high * res):g}], "
                                   "rounded outward (docs/proofs/mean-interval.md)",
                "expected_abs_error": None,
                "expected_abs_error_method": "none: a ratio of two noisy values (the interval states its accuracy)",
                "parts": {"sum": part_json(sums, s, a_sum, res, 0),   # type: ignore[arg-type]
                          "count": part_json(count, n, a_count, Fraction(1))},
                "mean_method": f"c + clip(S_c / max(C, 1), L - c, U - c): the released centred sum S_c (centre c = "
                               f"{float(c * res):g}) over the released count C taken as at least 1 (a count <= 0 "
                               "never gives NaN or infinity), kept within the unit's range [L, U]; post-processing"}

    def notes(self, stat: Statistic) -> dict:
        return {}

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """A mean by a key found in the data: each released key's mean from its released sum and
        its selection's released count (:func:`means_by_key`), then kept for those keys only."""
        from ..found import selected
        for item in items:
            if item.stat.selected_by is not None and item.stat.selected_by in docs:
                docs[item.stat.name] = means_by_key(item, docs[item.stat.name], docs[item.stat.selected_by])
        return selected(items, docs)

    def about(self, stat: Statistic) -> str:
        return f"mean of {stat.column} per unit"


def drawn_sums(item: Planned, alpha: float, source: RandomSource) -> dict:
    """A mean by a key found in the data, first step: every candidate key's sum drawn by the
    statistic's cell, with its interval at ``alpha / 2`` (answer units), kept under ``drawn``
    until :func:`means_by_key` (the selection's counts are drawn by its own statistic)."""
    cell, stat = item.cell, item.stat
    truth = item.answers.cells.ravel() - cell.offset  # type: ignore[union-attr]
    released = cell.release(truth, source)  # type: ignore[union-attr]
    low, high, how = interval(cell, released, alpha / 2)  # type: ignore[arg-type]
    groups = stat.groups.labels()  # type: ignore[union-attr]
    # by the key alone its candidates are the groups; beside declared groups, (group, key) cells
    labels = groups if stat.key is None else [(g, k) for g in groups for k in stat.keys.labels()]  # type: ignore
    off = cell.offset  # type: ignore[union-attr]
    drawn = {k: (int(released[i]) + off, None if low is None else int(low[i]) + off,  # type: ignore[index]
                 None if high is None else int(high[i]) + off) for i, k in enumerate(labels)}  # type: ignore[index]
    return {"drawn": drawn, "alpha": alpha, "sum_interval_method": how}


def means_by_key(item: Planned, doc: dict, chosen: dict) -> dict:
    """Each released key's mean: ``clip(S / max(C, 1), L, U)`` from its released sum ``S`` and
    its selection's released count of units ``C`` (post-processing), its interval the range of
    ``s / c`` over the box of the sum's and the count's intervals, each at ``alpha / 2``
    (independent draws: coverage ``>= (1 - alpha / 2)^2 >= 1 - alpha``), within ``[L, U]``
    (every unit counted in the key's count holds ``[L, U]``; a unit kept in the key's sum is
    counted there: one rule on the same rows, ``bounding = "first"``).

    Proof: docs/proofs/key-selection.md, docs/proofs/mean-interval.md
    """
    drawn, alpha = doc.pop("drawn"), doc.pop("alpha")
    counts = item.companion.cell
    low, high = item.derived.low, item.derived.high   # [L, U]: uncentred by a found key
    res = item.stat.resolution

    def one(at: Any, n: int) -> tuple[Any, Any]:
        s, s_lo, s_hi = drawn[at]
        c_low, c_high, _ = interval(counts, np.array([n - counts.offset], np.int64), alpha / 2)
        mean = plain(float(mean_value(s, n, (low, high)) * res))
        if s_lo is None or c_low is None:
            return mean, [plain(float(low * res)), plain(float(high * res))]
        lo, hi = ratio_interval((s_lo, s_hi), (int(c_low[0]) + counts.offset, int(c_high[0]) + counts.offset),
                                (low, high))
        return mean, outward(lo, hi, res)

    values: dict = {}
    intervals: dict = {}
    for key, n in chosen["values"].items():
        if isinstance(n, dict):   # beside declared groups: group -> key -> count
            pairs = {k: one((key, k), c) for k, c in n.items()}
            values[key], intervals[key] = {k: v for k, (v, _) in pairs.items()}, {k: i for k, (_, i) in pairs.items()}
        else:
            values[key], intervals[key] = one(key, n)
    return {**doc, "values": values, "intervals": intervals,
            "interval_method": f"the mean's values over the box of the key's sum interval and its count interval (each "
                               f"at alpha {alpha / 2:g}: independent draws, coverage >= 1 - {alpha:g}), within "
                               f"[{float(low * res):g}, {float(high * res):g}], rounded outward",
            "expected_abs_error": None,
            "expected_abs_error_method": "none: a ratio of two noisy values (the interval states its accuracy)",
            "mean_method": "clip(S / max(C, 1), L, U) per released key: the key's released sum S over its released "
                           "count of units C (the selection's, taken as at least 1), kept within the unit's range "
                           "[L, U]; post-processing"}


KIND = Mean()
