"""Bounds chosen privately (issue 36 item 5): ``unit.max_rows = "auto"`` and ``clamp = "auto"``.

Nobody knows what ``max_rows`` to declare without looking at the data, which is not allowed.
With ``max_rows = "auto"`` the unit's bound is chosen from a **private histogram of the units'
row counts** on a public log grid ``1, 2, 4, ..., cap`` (``max_rows_cap``, default
:data:`DEFAULT_CAP`), paid for by a declared share of the budget, ``bound_epsilon``:

1. the pre-pass (:func:`row_counts_histogram`): one pass over the unit id column before the
   statistics (as keys found in the data are read first, :mod:`.found`) counts each unit's
   rows (one counter per unit: memory bounded by the units, not the rows) and puts every unit
   in the grid cell of its count: cell ``j`` holds the units with ``grid[j-1] < rows <=
   grid[j]`` (cell 0: one row; the last cell every count above the previous grid point);
2. each cell's count of units gets independent certified noise, the clamped geometric of
   :func:`.mechanisms.count_cell` (calibrated and quantized, sampled with the injected
   :class:`~optnoise.randomness.RandomSource`) at ``bound_epsilon`` per cell under
   add-remove (one unit moves one cell by 1) and ``bound_epsilon / 2`` under replace (one
   unit moves two cells by 1: out of its old cell, into its new one);
   A statistic's ``clamp = "auto"`` (a sum, mean, variance, std, quantile or median: the
   kinds with a clamp, :data:`CLAMP_KINDS`) is chosen the same way from a histogram of each
   unit's *largest value* of the column among the rows its ``where`` keeps (a quantile's,
   its *total* of them: the value a quantile ranks), on the grid ``resolution x (1, 2, 4, ...,
   clamp_cap / resolution)``; the clamp is then ``[0, chosen]`` (values below 0 are clamped to
   0), and the histogram spends ``clamp_epsilon`` (default :data:`DEFAULT_SHARE` of the
   statistic's epsilon) *out of* the statistic's epsilon: the statistic is released at the
   rest, so its declared epsilon stays what it spends in all;
3. the chosen bound (:func:`choose_bound`) is the smallest grid point whose *estimated tail*
   -- the units above it, estimated from the released counts of the cells above it, each less
   the **noise floor** (:func:`noise_floor`: the level an empty cell's release exceeds with
   probability at most :data:`FLOOR_LEVEL` / the number of cells), and at least 0 -- is at most
   ``1 - coverage`` (default 0.99) of the units: their public number under replace, the noisy
   count up to the grid point plus that tail under add-remove; the cap when none does
   (``reached_cap``): post-processing of the histogram and public numbers (the floor is a
   function of the cell's certified law, fixed by ``bound_epsilon`` and the public domain).
   Why the floor: the clamped noise of an empty cell is positive (mean about ``1 /
   epsilon_cell``), so a rule on the raw counts reads the empty cells above the data as units
   and errs upward, often to the cap, when the units beyond the coverage point are few
   against the noise (docs/statistics-accuracy.md, "Bounds chosen privately");
4. the statistics are planned and released with ``max_rows`` = the chosen bound
   (:func:`with_chosen_bounds`), and the unit's total composes the histogram's cells with the
   statistics (:func:`bound_parts`; the accountant, :mod:`optnoise.publish.accountant`).

Because the statistics' mechanisms depend on the chosen bound, the composition is adaptive:
the total composes each statistic by a stand-in valid *for every* bound the histogram could
choose (its declared target), never by the exact profile of the mechanisms of the chosen one.

Proof: docs/proofs/private-bounds.md
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import InvalidParameterError
from .auto_spec import AutoRows, TOTAL_KINDS

if TYPE_CHECKING:
    from ..randomness import RandomSource
    from .mechanisms import Cell
    from .spec import QuerySpec
    from .statistic import Statistic


@dataclass(frozen=True, eq=False)
class ChosenBound:
    """A bound chosen privately: where it goes (``key``: ``unit.max_rows`` or
    ``statistics.NAME.clamp``), what each unit is counted by (``counted``, in words), the
    request, the chosen grid point, the released (noisy) counts of the grid's cells, the
    cell's certified mechanism, how many cells one unit moves, and whether a grid point below
    the cap reached the coverage."""

    key: str
    counted: str
    request: AutoRows
    chosen: int
    noisy: tuple[int, ...]
    cell: Cell
    moved: int
    covered: bool = True
    floor: int = 0

    @property
    def reached_cap(self) -> bool:
        """No grid point below the cap reached the coverage: the cap was chosen."""
        return not self.covered

    @property
    def value(self) -> Fraction:
        """The chosen bound in the data's units (a grid point times the resolution)."""
        return self.chosen * self.request.resolution

    def to_json(self) -> dict[str, Any]:
        res = self.request.resolution
        return {"chosen": plain(self.value), "epsilon": self.request.epsilon, "delta": 0.0,
                "grid": [plain(g * res) for g in self.request.grid], "unit_value": self.counted,
                "coverage": self.request.coverage, "reached_cap": self.reached_cap,
                "noisy_counts": list(self.noisy), "cells_per_unit": self.moved, "noise_floor": self.floor,
                "mechanism": self.cell.to_json(),
                "rule": f"each unit counted in the grid cell of {self.counted} (cell j: grid[j-1] < value <= "
                        "grid[j]; cell 0 every value up to grid[0], the last every value above); each cell's count "
                        "released with the certified noise above; the chosen bound is the smallest grid point whose "
                        "estimated tail (the sum over the cells above it of max(0, noisy count - noise_floor); "
                        f"noise_floor: what an empty cell's release exceeds with probability <= {FLOOR_LEVEL:g} / the "
                        "number of cells) is at most (1 - coverage) x the number of units (public under replace; "
                        "under add-remove the noisy count up to the grid point plus the tail), the cap if none: "
                        "post-processing of the released counts. "
                        "The statistics are computed with the chosen bound and composed with the histogram in the "
                        "unit's total (docs/proofs/private-bounds.md)"}

    def words(self) -> str:
        """The choice in words, for the statement."""
        what = f"max_rows = {plain(self.value)}" if self.key == "unit.max_rows" else \
            f"{self.key} = [0, {plain(self.value)}]"
        res = self.request.resolution
        return (f"; {what} was chosen privately from a noisy histogram of the units (each by {self.counted}) on the "
                f"grid {plain(self.request.grid[0] * res)}..{plain(self.request.grid[-1] * res)} (pure eps "
                f"{self.request.epsilon:g}, included above), to cover {self.request.coverage:g} of the units"
                + (" (it reached the grid's cap)" if self.reached_cap else ""))


def plain(value: Fraction) -> int | float:
    """A grid value as JSON writes it: an integer when it is one."""
    return int(value) if Fraction(value).denominator == 1 else float(value)


def has_auto(spec: QuerySpec) -> bool:
    """Whether the spec asks for a bound chosen privately."""
    return spec.auto_rows is not None or any(s.auto_clamp for s in spec.statistics)


# ------------------------------------------------------------------ the pre-pass
def requests(spec: QuerySpec) -> list[tuple[str, str, AutoRows, Statistic | None]]:
    """The bounds to choose, in a fixed order (the draws' order): ``(key, counted, request,
    statistic)``, max_rows first, then the clamps in the spec's order."""
    out: list[tuple[str, str, AutoRows, Statistic | None]] = []
    if spec.auto_rows is not None:
        out.append(("unit.max_rows", "its number of rows", spec.auto_rows, None))
    for s in spec.statistics:
        if s.auto_clamp is not None:
            counted = "its total" if s.kind in TOTAL_KINDS else "its largest value"
            out.append((f"statistics.{s.name}.clamp", f"{counted} of {s.value_column}", s.auto_clamp, s))
    return out


def prepass_columns(spec: QuerySpec) -> list[str]:
    """The columns the pre-pass reads: the unit's id, and each auto clamp's column and its
    ``where`` columns."""
    cols = [spec.unit.id] + [c for _, _, _, s in requests(spec) if s is not None
                             for c in (s.value_column, *(w.column for w in s.where))]
    return list(dict.fromkeys(c for c in cols if c))


def unit_values(batches: Iterable[Any], spec: QuerySpec) -> tuple[list[np.ndarray], int]:
    """Each request's value per unit (:func:`requests`' order; NaN: a unit with no value) and
    the number of units, from one pass over the batches (pandas frames or Arrow batches): a
    dense index per unit id (:class:`.units.UnitIndex`, the ids the aggregation uses) and one
    number per unit and request, so memory grows with the units, never with the rows.

    A quantile's total adds each kept value rounded to whole steps of the resolution (half to
    even) and clamped below at 0, as the quantile adds them: integers, so the total does not
    depend on the order of the additions (the batches; Spark's partitions)."""
    import pandas as pd

    from .rows import arrow_to_pandas, matches, numbers, unit_ids
    from .units import UnitIndex
    asked = requests(spec)
    index = UnitIndex()
    acc = [np.zeros(0) for _ in asked]
    seen = 0
    for batch in batches:
        df = batch if isinstance(batch, pd.DataFrame) else arrow_to_pandas(batch)
        codes = index.codes(unit_ids(df, spec, rows=np.arange(seen + 1, seen + 1 + len(df))))
        seen += len(df)
        for i, (_, _, request, stat) in enumerate(asked):
            fill = 0.0 if stat is None else np.nan if stat.kind in TOTAL_KINDS else -np.inf
            acc[i] = np.concatenate([acc[i], np.full(index.size - len(acc[i]), fill)])
            if stat is None:
                acc[i] += np.bincount(codes, minlength=index.size)
                continue
            x = numbers(df[stat.value_column]) / float(request.resolution)
            keep = np.isfinite(x)
            for cond in stat.where:
                keep &= matches(df[cond.column], cond)
            if stat.kind in TOTAL_KINDS:   # a total of whole steps; a unit without a kept row has none (NaN)
                has = np.bincount(codes[keep], minlength=index.size) > 0
                add = np.bincount(codes[keep], weights=np.maximum(np.rint(x[keep]), 0.0), minlength=index.size)
                acc[i][has] = np.nan_to_num(acc[i][has]) + add[has]
            else:
                np.maximum.at(acc[i], codes[keep], x[keep])
    return [np.where(np.isneginf(a), np.nan, a) for a in acc], int(index.size)


def grid_histogram(values: np.ndarray, grid: tuple[int, ...]) -> np.ndarray:
    """How many units have their value in each grid cell (cell ``j``: ``grid[j-1] < value <=
    grid[j]``; cell 0 every value up to ``grid[0]``, the last every value above); units
    without a value (NaN) are in none."""
    v = values[~np.isnan(values)]
    cell = np.minimum(np.searchsorted(np.asarray(grid, float), v, side="left"), len(grid) - 1)
    return np.bincount(cell, minlength=len(grid)).astype(np.int64)


def row_counts_histogram(batches: Iterable[Any], spec: QuerySpec, grid: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """``(counts, units)``: the units per grid cell of their number of rows (the first of
    :func:`unit_values`), and the number of units."""
    values, units = unit_values(batches, spec)
    return grid_histogram(values[0], grid), units


# ------------------------------------------------------------------ the histogram and the choice
def histogram_cell(request: AutoRows, change: str, n: int, key: str = "max_rows") -> tuple[Cell, int]:
    """The certified noise of one cell of the histogram on ``{0..n}`` and the number of cells
    one unit moves (module docstring, item 2)."""
    from ..target import Target as Made
    from .mechanisms import count_cell
    moved = 1 if change == "add-remove" else 2
    cell = count_cell(f"{key} histogram", max(1, n), 0, 1, Made(request.epsilon / moved, 0.0), "clamped-geometric",
                      gap=False)
    return cell, moved


#: The chance, shared by the cells, that the noise of empty cells alone lifts the estimated
#: tail above 0: an empty cell's release exceeds the noise floor with probability at most
#: ``FLOOR_LEVEL / cells`` (:func:`noise_floor`).
FLOOR_LEVEL = 0.1


def noise_floor(cell: Cell, cells: int, level: float = FLOOR_LEVEL) -> int:
    """The least integer ``t >= 0`` such that an empty cell's release (the cell's certified
    noise ``Z``, clamped to ``{0..n}``) exceeds ``t`` with probability at most ``level /
    cells``: ``P[Z > t] <= level / cells``, computed from the quantized law that is sampled
    (window and geometric tails), at most ``n``. A function of public numbers only."""
    import math
    pmf = cell.noise.quantize().pmf
    eps = cell.epsilon_delta[0]
    span = max(abs(pmf.lo), abs(pmf.hi)) + int(math.ceil(60.0 / eps))   # beyond: mass below e^-60
    at = np.arange(-span, span + 1, dtype=np.int64)
    above = 1.0 - np.cumsum(pmf.mass(at))   # P[Z > t]
    ok = np.flatnonzero((at >= 0) & (above <= level / cells))
    return int(min(at[ok[0]] if len(ok) else span, cell.n))


def choose_bound(noisy: Any, grid: tuple[int, ...], coverage: float, total: int | None = None,
                 floor: int = 0) -> tuple[int, bool]:
    """``(bound, reached)``: the smallest grid point ``grid[j]`` whose estimated tail
    ``T_j = sum_{i > j} max(0, noisy[i] - floor)`` is at most ``(1 - coverage) x N`` -- ``N``
    the public number of units under replace (``total``), else the noisy count up to it plus
    ``T_j`` -- compared exactly; the cap and ``False`` when only the cap does. Reads nothing but
    its arguments (post-processing).

    ``floor`` (:func:`noise_floor`) is what the released count of an empty cell rarely
    exceeds: the empty cells above the data, whose clamped noise is positive, add nothing to
    the tail unless their noise passes it. With ``floor = 0`` under add-remove this is the
    noisy cumulative count reaching ``coverage`` of the noisy total."""
    cells = [int(c) for c in noisy]
    over = [max(0, c - int(floor)) for c in cells]
    share = 1 - Fraction(coverage)
    for j in range(len(cells) - 1):
        tail = sum(over[j + 1:])
        units = sum(cells[:j + 1]) + tail if total is None else int(total)
        if tail <= share * units:
            return int(grid[j]), True
    return int(grid[-1]), False


def choose(key: str, counted: str, request: AutoRows, counts: np.ndarray, spec: QuerySpec, units: int,
           source: RandomSource) -> ChosenBound:
    """Release one histogram (``counts``: :func:`grid_histogram`) and choose its bound (module
    docstring).

    Proof: docs/proofs/private-bounds.md
    """
    unit = spec.unit
    n = units if unit.change == "replace" else int(unit.max_units)  # type: ignore[arg-type]
    cell, moved = histogram_cell(request, unit.change, n, key)
    noisy = cell.release(np.asarray(counts, np.int64), source) + cell.offset
    floor = noise_floor(cell, len(request.grid))
    bound, reached = choose_bound(noisy, request.grid, request.coverage,
                                  units if unit.change == "replace" else None, floor)
    return ChosenBound(key, counted, request, bound, tuple(int(v) for v in noisy), cell, moved, reached, floor)


def with_chosen_bounds(spec: QuerySpec, chosen: list[ChosenBound]) -> QuerySpec:
    """The spec with each chosen bound in place (``max_rows``; a clamp ``[0, chosen]``), the
    choices kept in ``spec.bounds``."""
    unit, stats = spec.unit, list(spec.statistics)
    for b in chosen:
        if b.key == "unit.max_rows":
            unit = replace(unit, max_rows=b.chosen)
        else:
            stats = [replace(s, clamp=(Fraction(0), b.value)) if f"statistics.{s.name}.clamp" == b.key else s
                     for s in stats]
    return replace(spec, unit=unit, statistics=tuple(stats), bounds=tuple(chosen))


def chosen_in_batches(batches: Iterable[Any], spec: QuerySpec, source: RandomSource) -> QuerySpec:
    """The pre-pass, the histograms and the choices: the spec to release with (unchanged, and
    no pass, without an auto bound)."""
    if not has_auto(spec):
        return spec
    values, units = unit_values(batches, spec)
    return chosen_from_counts(spec, [grid_histogram(v, request.grid) for (_, _, request, _), v
                                     in zip(requests(spec), values)], units, source)


def chosen_from_counts(spec: QuerySpec, counts: list[np.ndarray], units: int, source: RandomSource) -> QuerySpec:
    """The histograms released and the bounds chosen from each request's exact grid counts
    (:func:`requests`' order) and the number of units, whichever engine counted them; the data
    refused under add-remove when they hold more units than the public ``max_units``."""
    if spec.unit.change == "add-remove" and units > int(spec.unit.max_units):  # type: ignore[arg-type]
        raise InvalidParameterError("unit.max_units", spec.unit.max_units, f"a public bound at least the number of "
                                    f"units in the data ({units})")
    chosen = [choose(key, counted, request, c, spec, units, source)
              for (key, counted, request, _), c in zip(requests(spec), counts)]
    return with_chosen_bounds(spec, chosen)


# ------------------------------------------------------------------ in the unit's total
def bound_parts(spec: QuerySpec) -> list[tuple[Any, int, tuple[float, float]]]:
    """The histograms' parts in the unit's total: each one's cell, moved ``moved`` times (one
    cell by 1 under add-remove; two under replace), at its certified ``(epsilon, 0)``."""
    return [(b.cell, b.moved, b.cell.epsilon_delta) for b in spec.bounds]


def bound_words(spec: QuerySpec) -> str:
    """The chosen bounds in words, for the statement."""
    return "".join(b.words() for b in spec.bounds)


__all__ = ["ChosenBound", "FLOOR_LEVEL", "bound_parts", "bound_words", "choose", "choose_bound",
           "chosen_from_counts", "chosen_in_batches", "grid_histogram", "has_auto", "histogram_cell", "noise_floor",
           "plain", "prepass_columns", "requests",
           "row_counts_histogram", "unit_values", "with_chosen_bounds"]
