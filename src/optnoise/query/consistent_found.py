"""Tables of keys found in the data that add up: ``consistent = true`` with ``keys = "from-data"``.

Under ``replace`` the number of units ``N`` is public and every unit lies in one cell: a
candidate (group, key) cell -- released or not by the threshold of :mod:`.threshold` -- or the
*outside* cell (units with no counted row). The release:

1. the found-key histogram as without ``consistent`` (:func:`.kinds.histogram.found_body`):
   every candidate drawn by the certified cell, only the cells whose noisy count passes the
   threshold kept -- ``R``, with their independent values ``y_R``;
2. the outside cell drawn by the same certified cell, ``y_out`` (always released);
3. the **boxes**: each of ``R`` and the outside at ``alpha / m`` with ``m = min(N, K G) + 1``
   (:func:`union_size`; ``K`` = :data:`.found.MAX_FOUND`, ``G`` the declared groups): at most
   ``min(N, K G)`` cells hold a unit, so the union bound runs over *every* cell that could be
   released, whichever were -- all true values inside their boxes at once with probability
   ``>= 1 - alpha``, not conditioned on the selection;
4. ``z``: the integer point nearest to ``(y_R, y_out)`` (squared distance) with ``z`` in the
   boxes and ``sum z <= N`` (:func:`fit_below`), and the **other keys** cell ``N - sum z``
   (the units of the candidate keys that were not released), with the interval
   ``[N - sum high, N - sum low]`` clipped at 0 (:func:`other_interval`).

Steps 3 and 4 read ``R``, ``y_R``, ``y_out`` and public numbers only (``N``, ``alpha``, the
declared groups, the mechanism): post-processing of what steps 1-2 release, and steps 1-2 are
the found-key histogram plus one more cell of the partition that one unit moves with the others
(two cells by one in all): the unit's total is the found-key histogram's. Nothing reads the
suppressed keys' noisy counts, their labels or their number; the entry has the same fields
whether or not a key was suppressed.

Proof: docs/proofs/consistent-tables.md ("Keys found in the data").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..analysis.intervals import exact_alpha
from ..errors import InvalidParameterError
from ..randomness import RandomSource
from .consistent import project
from .draw import plain
from .found import MAX_FOUND
from .intervals import interval
from .mechanisms import Cell
from .statistic import Statistic


def union_size(units: int, groups: int) -> int:
    """``m``: the cells a union bound over every releasable cell runs over -- at most
    ``min(N, MAX_FOUND x groups)`` candidate cells hold a unit (each holds one at least, every
    unit is in one cell, at most :data:`.found.MAX_FOUND` keys per group), plus the outside
    cell. Public: ``N`` under replace, the declared groups.

    Proof: docs/proofs/consistent-tables.md
    """
    return min(int(units), MAX_FOUND * int(groups)) + 1


def fit_below(values: np.ndarray, low: np.ndarray, high: np.ndarray, total: int,
              source: RandomSource) -> tuple[np.ndarray, bool]:
    """The integer ``z`` nearest to ``values`` (squared distance) with ``low <= z <= high`` and
    ``sum z <= total`` where ``sum low <= total``, else with ``0 <= z <= total``; ``(z, z inside
    [low, high])``. ``clip(values)`` when its sum is at most ``total``; otherwise the sum is
    ``total`` at the optimum and :func:`.consistent.project` finds it (ties at random).

    Proof: docs/proofs/consistent-tables.md
    """
    y, lo, hi = (np.asarray(v, dtype=np.int64) for v in (values, low, high))
    total = int(total)
    if y.shape != lo.shape or y.shape != hi.shape or y.size == 0 or (lo > hi).any():
        raise InvalidParameterError("low", "bounds", "low <= high, of the values' shape, at least one cell")
    a, b = (lo, hi) if int(lo.sum()) <= total else (np.zeros_like(lo), np.full_like(hi, total))
    z = np.clip(y, a, b)
    if int(z.sum()) > total:
        z = project(y, a, b, total, source)
    return z, bool(((lo <= z) & (z <= hi)).all())


def other_interval(box_low: np.ndarray, box_high: np.ndarray, total: int) -> tuple[int, int]:
    """``[max(0, N - sum high), max(0, N - sum low)]``: the other-keys cell's true value when
    every released cell and the outside cell lie in their boxes (it is ``N`` less theirs)."""
    return max(0, int(total) - int(np.sum(box_high))), max(0, int(total) - int(np.sum(box_low)))


@dataclass(frozen=True, eq=False)
class FoundConsistent:
    """One consistent release of keys found in the data: the released cells ``R``, then the
    outside cell (last in every vector).

    Attributes
    ----------
    independent:
        ``(y_R, y_out)``: the certified releases.
    values:
        ``z``: non-negative integers, ``sum z <= N``.
    other, other_low, other_high:
        The other-keys cell ``N - sum z`` and its interval.
    outside_low, outside_high:
        The outside cell's own ``1 - alpha`` interval (from ``y_out``; no selection).
    box_low, box_high:
        Each cell's ``1 - alpha / m`` interval.
    inside:
        Whether ``z`` lies in the boxes (always, when every true value does).
    cells:
        ``m`` (:func:`union_size`).
    how, box_how:
        The intervals' methods and coverages, in words.
    """

    independent: np.ndarray
    values: np.ndarray
    other: int
    other_low: int
    other_high: int
    outside_low: int
    outside_high: int
    box_low: np.ndarray
    box_high: np.ndarray
    inside: bool
    cells: int
    how: str
    box_how: str


def release(cell: Cell, released: Sequence[int], outside: int, total: int, groups: int, alpha: float,
            source: RandomSource) -> FoundConsistent:
    """Steps 2-4 of the module docstring: ``released`` the kept cells' certified values
    ``y_R`` (in document order), ``outside`` the outside cell's true count.

    Proof: docs/proofs/consistent-tables.md
    """
    if not 0 <= int(outside) <= int(total):
        raise InvalidParameterError("outside", "the outside cell's count", f"a count of units from 0 to {total}")
    y_out = int(cell.release(np.array([int(outside) - cell.offset]), source)[0]) + cell.offset
    y = np.append(np.asarray(released, dtype=np.int64), y_out)
    m = union_size(total, groups)
    low, high, how = interval(cell, np.array([y_out - cell.offset]), alpha)
    box_low, box_high, box_how = interval(cell, y - cell.offset, exact_alpha(alpha) / m)
    if low is None or box_low is None:
        raise InvalidParameterError("mechanism", cell.built, "a mechanism with intervals (a number on a line)")
    box_low, box_high = (np.asarray(v, np.int64) + cell.offset for v in (box_low, box_high))
    z, inside = fit_below(y, box_low, box_high, int(total), source)
    o_low, o_high = other_interval(box_low, box_high, int(total))
    return FoundConsistent(y, z, int(total) - int(z.sum()), o_low, o_high, int(low[0]) + cell.offset,
                           int(high[0]) + cell.offset, box_low, box_high, inside, m, how, box_how)


# ------------------------------------------------------------------ the document
def _released(stat: Statistic, values: dict) -> list[tuple[str | None, str]]:
    """The released cells ``(group, key)`` in the document's order (groups, then keys)."""
    if stat.groups is None:
        return [(None, k) for k in values]
    return [(g, k) for g in values for k in values[g]]


def _shaped(stat: Statistic, where: list[tuple[str | None, str]], cells: list) -> dict:
    """Released cells back in the document's shape (``key -> x`` or ``group -> key -> x``)."""
    if stat.groups is None:
        return {k: c for (_, k), c in zip(where, cells)}
    out: dict[str, dict] = {g: {} for g in stat.groups.labels()}
    for (g, k), c in zip(where, cells):
        out[g][k] = c   # type: ignore[index]
    return out


def body(stat: Statistic, cell: Cell, doc: dict, cells: np.ndarray, units: int, alpha: float,
         source: RandomSource) -> dict:
    """The document entry of a consistent histogram of keys found in the data: ``doc`` is the
    found-key entry (released keys only, :func:`.kinds.histogram.found_body`), ``cells`` every
    candidate's true count (for the outside cell's truth only: ``N`` less their sum).

    Proof: docs/proofs/consistent-tables.md
    """
    where = _released(stat, doc["values"])
    ys = [int(doc["values"][k] if g is None else doc["values"][g][k]) for g, k in where]
    outside = int(units) - int(np.asarray(cells, np.int64).sum())
    groups = stat.groups.size if stat.groups else 1
    f = release(cell, ys, outside, int(units), groups, alpha, source)
    boxes = [[plain(a), plain(b)] for a, b in zip(f.box_low[:-1], f.box_high[:-1])]
    return {
        **doc, "values": _shaped(stat, where, [plain(v) for v in f.values[:-1]]),
        "interval_method": f"each released key's own interval from its independent release (before the selection: "
                           f"keys.interval_coverage): {doc['interval_method']}",
        "expected_abs_error_method": f"of each cell's independent release, {doc['expected_abs_error_method']} (the "
                                     "projected values' error is measured, not proven: docs/statistics-accuracy.md)",
        "outside": {"value": plain(f.values[-1]), "interval": [f.outside_low, f.outside_high],
                    "about": "units with no counted row (every row filtered out by where, of no key, or of an "
                             "undeclared group): with the released cells and the other keys they add up to the "
                             "public number of units"},
        "other_keys": {"value": f.other, "interval": [f.other_low, f.other_high],
                       "interval_coverage": f">= 1 - alpha = {1 - alpha:g}, not conditioned on which keys were "
                                            "released: it holds whenever every simultaneous interval does",
                       "about": "units in keys found in the data that were not released: the public number of "
                                "units less the released cells and the outside cell (post-processing of the released "
                                "values; neither those keys nor their number is published)"},
        "consistent": {
            "total": int(units), "adds_up_to": None,
            "independent_values": _shaped(stat, where, [plain(v) for v in f.independent[:-1]]),
            "independent_outside": plain(f.independent[-1]),
            "simultaneous_intervals": _shaped(stat, where, boxes),
            "simultaneous_outside": [plain(f.box_low[-1]), plain(f.box_high[-1])],
            "simultaneous_coverage": f">= 1 - alpha = {1 - alpha:g} for every released cell and the outside cell at "
                                     "once, over the release as a whole (averaged over which keys pass; not given "
                                     "the released set): union bound over every cell that could hold a unit (at "
                                     f"most min(units, {MAX_FOUND:,} x groups), plus the outside cell: {f.cells:,}), "
                                     f"each at alpha / {f.cells:,}: {f.box_how}",
            "values_inside_simultaneous_intervals": f.inside,
            "projection": "the integer point nearest (squared distance) to the independent releases with the released "
                          "cells and the outside cell summing to at most the total, inside the simultaneous intervals "
                          "where they admit it (ties at random); the other keys take the rest. Post-processing of "
                          "the released cells: no budget (docs/proofs/consistent-tables.md)"}}


def check_hierarchies(stats: Sequence[Statistic]) -> None:
    """Refuse a consistent histogram of keys found in the data that shares its key or ``by``
    column with another consistent histogram, one of the two ``by`` groups (a hierarchy, of one
    level or more), naming ``statistics.NAME.consistent``: each table suppresses its own
    (group, key) cells, so a group's released cell may have no released overall cell to add up
    to, and the suppressed cells' units no declared place in the other table."""
    tables = [s for s in stats if s.kind == "histogram" and s.consistent]
    for s in tables:
        if not s.keys_from_data:
            continue
        mine = {s.key, s.by} - {None}
        for t in tables:
            tied = t is not s and (s.by is not None or t.by is not None)
            shared = sorted(mine & ({t.key, t.by} - {None})) if tied else []
            if shared:
                raise InvalidParameterError(
                    f"statistics.{s.name}.consistent", True,
                    f"false, or declared keys, beside consistent statistic '{t.name}' (column '{shared[0]}' in both: "
                    "a hierarchy of keys found in the data is not supported, each table suppresses its own cells, so "
                    "a group's released cell may have no released overall cell to add up to)")


__all__ = ["FoundConsistent", "body", "check_hierarchies", "fit_below", "other_interval", "release", "union_size"]
