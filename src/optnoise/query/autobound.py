"""Bounds chosen privately (issue 36 item 5): ``unit.max_rows = "auto"``.

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
3. the chosen bound (:func:`choose_bound`) is the smallest grid point whose noisy cumulative
   count reaches ``coverage`` (default 0.99) of the noisy total; the cap when none does
   (``reached_cap``): post-processing of the histogram;
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
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

from ..errors import InvalidParameterError
from ..publish.spec import number, positive_integer

if TYPE_CHECKING:
    from ..randomness import RandomSource
    from ..target import Target
    from .mechanisms import Cell
    from .spec import QuerySpec

#: ``max_rows = "auto"``.
AUTO = "auto"
#: The keys of ``unit = { ... }`` that an auto bound adds.
AUTO_KEYS: tuple[str, ...] = ("bound_epsilon", "coverage", "max_rows_cap")
#: The largest grid point by default (the grid 1, 2, 4, ..., 1024: 11 cells).
DEFAULT_CAP = 1024
#: The largest cap accepted (the grid 1 .. 2^20: 21 cells).
MAX_CAP = 1 << 20
#: The share of the units the chosen bound covers by default.
DEFAULT_COVERAGE = 0.99
#: ``bound_epsilon``'s default: this share of the budget's epsilon (of the statistics'
#: epsilons added up without a budget).
DEFAULT_SHARE = 0.1
#: The smallest epsilon of one cell of the histogram (the query cells' range).
MIN_CELL_EPSILON = 1e-3


@dataclass(frozen=True)
class AutoRows:
    """What ``max_rows = "auto"`` asks: the histogram's epsilon (``None``: the default share,
    set once the statistics are read), the coverage and the grid's cap."""

    epsilon: float | None
    coverage: float = DEFAULT_COVERAGE
    cap: int = DEFAULT_CAP

    @property
    def grid(self) -> tuple[int, ...]:
        """The public grid ``1, 2, 4, ...`` below the cap, then the cap."""
        out = [1]
        while out[-1] * 2 < self.cap:
            out.append(out[-1] * 2)
        return tuple(out + [self.cap]) if out[-1] != self.cap else tuple(out)


@dataclass(frozen=True, eq=False)
class ChosenBound:
    """A bound chosen privately: the request, the chosen value, the released (noisy) counts of
    the grid's cells, the cell's certified mechanism and how many cells one unit moves."""

    key: str
    request: AutoRows
    chosen: int
    noisy: tuple[int, ...]
    cell: Cell
    moved: int
    #: Whether a grid point below the cap reached the coverage.
    covered: bool = True

    @property
    def reached_cap(self) -> bool:
        """No grid point below the cap reached the coverage: the cap was chosen."""
        return not self.covered

    def to_json(self) -> dict[str, Any]:
        eps = self.request.epsilon
        return {"chosen": self.chosen, "epsilon": eps, "delta": 0.0, "grid": list(self.request.grid),
                "coverage": self.request.coverage, "reached_cap": self.reached_cap,
                "noisy_counts": list(self.noisy), "cells_per_unit": self.moved,
                "mechanism": self.cell.to_json(),
                "rule": "each unit counted in the grid cell of its number of rows (cell j: grid[j-1] < rows <= "
                        "grid[j]; the last cell every count above); each cell's count released with the certified "
                        "noise above; the chosen bound is the smallest grid point whose noisy cumulative count "
                        "reaches coverage x the noisy total (the cap if none): post-processing of the released "
                        "counts. The statistics are computed with the chosen bound and composed with the "
                        "histogram in the unit's total (docs/proofs/private-bounds.md)"}


# ------------------------------------------------------------------ reading the spec
def split_auto(unit: Any) -> tuple[Any, dict]:
    """The unit's table without the auto keys (``max_rows = "auto"`` replaced by the cap, a
    public bound, so that the statistics are read as under a declared bound) and the auto
    keys read (``{}`` without ``"auto"``). Errors name ``unit.KEY``."""
    if not isinstance(unit, Mapping) or unit.get("max_rows") != AUTO:
        extra = [k for k in AUTO_KEYS if isinstance(unit, Mapping) and k in unit]
        if extra:
            raise InvalidParameterError(f"unit.{extra[0]}", unit[extra[0]], "only with max_rows = \"auto\"")
        return unit, {}
    if unit.get("id") is None:
        raise InvalidParameterError("unit.max_rows", AUTO, "an integer max_rows, or \"auto\" with an id column "
                                    "(without one each row is a unit)")
    auto = {k: unit[k] for k in AUTO_KEYS if k in unit}
    cap = positive_integer(auto.get("max_rows_cap", DEFAULT_CAP), "unit.max_rows_cap",
                           f"an integer cap from 1 to {MAX_CAP:,} (the grid's largest point)")
    if cap > MAX_CAP:
        raise InvalidParameterError("unit.max_rows_cap", cap, f"an integer cap from 1 to {MAX_CAP:,}")
    rest = {k: v for k, v in unit.items() if k not in AUTO_KEYS}
    return {**rest, "max_rows": cap}, {**auto, "max_rows_cap": cap}


def parse_auto(auto: dict, budget: Target | None, epsilons: list[float]) -> AutoRows | None:
    """The :class:`AutoRows` of the keys :func:`split_auto` read, checked against the budget
    before any noise: ``bound_epsilon`` (default :data:`DEFAULT_SHARE` of the budget's
    epsilon, or of the statistics' epsilons added up) from ``2 x`` :data:`MIN_CELL_EPSILON`
    to 20, below the budget's epsilon with the statistics' epsilons fitting beside it (basic
    composition); ``coverage`` in ``(0, 1)``."""
    if not auto:
        return None
    coverage = number(auto.get("coverage", DEFAULT_COVERAGE), "unit.coverage")
    if not 0 < coverage < 1:
        raise InvalidParameterError("unit.coverage", coverage, "a share 0 < coverage < 1 of the units")
    by_budget = budget is not None and budget.epsilon is not None
    if "bound_epsilon" in auto:
        eps = number(auto["bound_epsilon"], "unit.bound_epsilon")
    elif by_budget or epsilons:
        eps = DEFAULT_SHARE * (budget.epsilon if by_budget else sum(epsilons))  # type: ignore[union-attr]
    else:
        raise InvalidParameterError("unit.bound_epsilon", None, "an epsilon for the histogram that chooses max_rows")
    if not 2 * MIN_CELL_EPSILON <= eps <= 20:
        raise InvalidParameterError("unit.bound_epsilon", eps, f"an epsilon from {2 * MIN_CELL_EPSILON:g} to 20 for "
                                    "the histogram that chooses max_rows")
    if by_budget:
        room = budget.epsilon - sum(epsilons)  # type: ignore[union-attr,operator]
        if eps >= budget.epsilon or eps > room * (1 + 1e-12):  # type: ignore[union-attr,operator]
            raise InvalidParameterError("unit.bound_epsilon", eps, f"a share of the budget left beside the statistics' "
                                        f"epsilons (budget {budget.epsilon:g}, statistics {sum(epsilons):g}: at most "
                                        f"{max(room, 0):g}); lower the statistics' epsilons or bound_epsilon")
    return AutoRows(float(eps), float(coverage), int(auto["max_rows_cap"]))


# ------------------------------------------------------------------ the pre-pass
def row_counts_histogram(batches: Iterable[Any], spec: QuerySpec, grid: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """``(counts, units)``: how many units have their number of rows in each grid cell (module
    docstring), and the number of units. One pass over the id column, batch by batch (pandas
    frames or Arrow batches): a dense index per unit id (:class:`.units.UnitIndex`, the ids
    the aggregation uses) and one row counter per unit, so memory grows with the units, never
    with the rows."""
    import pandas as pd

    from .rows import arrow_to_pandas, unit_ids
    from .units import UnitIndex
    index = UnitIndex()
    rows_of = np.zeros(0, np.int64)
    seen = 0
    for batch in batches:
        df = batch if isinstance(batch, pd.DataFrame) else arrow_to_pandas(batch)
        codes = index.codes(unit_ids(df, spec, rows=np.arange(seen + 1, seen + 1 + len(df))))
        seen += len(df)
        if index.size > len(rows_of):
            rows_of = np.concatenate([rows_of, np.zeros(index.size - len(rows_of), np.int64)])
        rows_of += np.bincount(codes, minlength=index.size)
    cell = np.minimum(np.searchsorted(np.asarray(grid), rows_of, side="left"), len(grid) - 1)
    return np.bincount(cell, minlength=len(grid)).astype(np.int64), int(index.size)


# ------------------------------------------------------------------ the histogram and the choice
def histogram_cell(request: AutoRows, change: str, n: int) -> tuple[Cell, int]:
    """The certified noise of one cell of the histogram on ``{0..n}`` and the number of cells
    one unit moves (module docstring, item 2)."""
    from ..target import Target
    from .mechanisms import count_cell
    moved = 1 if change == "add-remove" else 2
    eps = request.epsilon / moved  # type: ignore[operator]
    return count_cell("max_rows histogram", max(1, n), 0, 1, Target(eps, 0.0), "clamped-geometric"), moved


def choose_bound(noisy_cumulative: Any, grid: tuple[int, ...], coverage: float) -> tuple[int, bool]:
    """``(bound, reached)``: the smallest grid point whose noisy cumulative count is at least
    ``coverage`` times the noisy total (the last cumulative count), compared exactly; the cap
    and ``False`` when only the cap does. Reads nothing but its arguments (post-processing)."""
    cum = [int(c) for c in noisy_cumulative]
    need = Fraction(coverage) * cum[-1]
    for j, c in enumerate(cum[:-1]):
        if c >= need:
            return int(grid[j]), True
    return int(grid[-1]), False


def choose_max_rows(spec: QuerySpec, counts: np.ndarray, units: int, source: RandomSource) -> ChosenBound:
    """Release the histogram of row counts (``counts``, from :func:`row_counts_histogram`) and
    choose ``max_rows`` (module docstring).

    Proof: docs/proofs/private-bounds.md
    """
    request = spec.auto_rows
    unit = spec.unit
    n = units if unit.change == "replace" else int(unit.max_units)  # type: ignore[arg-type]
    cell, moved = histogram_cell(request, unit.change, n)
    noisy = cell.release(np.asarray(counts, np.int64), source) + cell.offset
    bound, reached = choose_bound(np.cumsum(noisy), request.grid, request.coverage)
    return ChosenBound("unit.max_rows", request, bound, tuple(int(v) for v in noisy), cell, moved, reached)


def with_chosen_bounds(spec: QuerySpec, chosen: ChosenBound | None) -> QuerySpec:
    """The spec with ``max_rows`` the chosen bound, the choice kept in ``spec.bounds``."""
    if chosen is None:
        return spec
    return replace(spec, unit=replace(spec.unit, max_rows=chosen.chosen), bounds=(chosen,))


def chosen_in_batches(batches: Iterable[Any], spec: QuerySpec, source: RandomSource) -> QuerySpec:
    """The pre-pass, the histogram and the choice: the spec to release with (unchanged without
    an auto bound)."""
    if spec.auto_rows is None:
        return spec
    counts, units = row_counts_histogram(batches, spec, spec.auto_rows.grid)
    if spec.unit.change == "add-remove" and units > int(spec.unit.max_units):  # type: ignore[arg-type]
        raise InvalidParameterError("unit.max_units", spec.unit.max_units, f"a public bound at least the number of "
                                    f"units in the data ({units})")
    return with_chosen_bounds(spec, choose_max_rows(spec, counts, units, source))


# ------------------------------------------------------------------ in the unit's total
def bound_parts(spec: QuerySpec) -> list[tuple[Any, int, tuple[float, float]]]:
    """The histogram's parts in the unit's total: its cell, moved ``moved`` times (one cell by
    1 under add-remove; two under replace), each at its certified ``(epsilon, 0)``."""
    return [(b.cell, b.moved, b.cell.epsilon_delta) for b in spec.bounds]


def bound_words(spec: QuerySpec) -> str:
    """The chosen bounds in words, for the statement."""
    return "".join(f"; max_rows = {b.chosen} was chosen privately from a noisy histogram of the units' row counts "
                   f"on the grid {b.request.grid[0]}..{b.request.grid[-1]} (pure eps {b.request.epsilon:g}, "
                   f"included above), to cover {b.request.coverage:g} of the units"
                   + (" (it reached the grid's cap)" if b.reached_cap else "") for b in spec.bounds)


__all__ = ["AUTO", "AUTO_KEYS", "AutoRows", "ChosenBound", "DEFAULT_CAP", "DEFAULT_COVERAGE", "DEFAULT_SHARE",
           "bound_parts", "bound_words", "choose_bound", "choose_max_rows", "chosen_in_batches", "histogram_cell",
           "parse_auto", "row_counts_histogram", "split_auto", "with_chosen_bounds"]
