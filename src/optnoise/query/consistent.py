"""Histograms that add up (``consistent = true``): the certified cells, projected onto the
public total.

Under ``replace`` the number of units ``N`` is public, and a histogram of units puts every
unit in exactly one cell -- a declared (group, key) cell, or the *outside* cell of the units
with no counted row (every row filtered out by ``where`` or undeclared). The cells and the
outside cell add up to ``N``; one unit moves at most two of them by one, so the statistic's
derived neighbourhood and its certificate are those of the independent histogram
(docs/proofs/derived-neighbourhoods.md). The release:

1. each of the ``m`` cells (outside included) released independently by the statistic's
   certified cell ``y_i = M(q_i)`` (the mechanism the unit's total composes);
2. each cell's own interval at ``1 - alpha`` (:func:`..intervals.interval`, exact on the
   quantized weights) -- the *marginal* intervals -- and at ``1 - alpha / m`` -- the *boxes*,
   which hold every true value at once with probability ``>= 1 - alpha`` (union bound);
3. ``z``, the integer point of ``{z : box_low <= z <= box_high, sum z = N}`` nearest to
   ``y`` in squared distance (:func:`project`; ties among the cells at the threshold broken
   uniformly at random by the injected source); where the boxes admit no such point (some
   box misses its true value), the nearest point of ``{z >= 0, sum z = N}``.

Everything after step 1 reads ``y`` and public numbers only: post-processing, so the privacy
is the certified cells' (the accountant composes them as for the independent histogram),
the intervals keep their exact coverage (they are functions of ``y`` alone), and whenever
every box holds its true value the released ``z_i`` lies in the same box as ``q_i``.

A *hierarchy*: a histogram ``by`` groups and the overall histogram of the same key (same
keys, same ``where``), both consistent, are released top down (the TopDown order): the
overall one first, then each key's column of groups projected onto the overall released
value of that key (:func:`add_up`). With ``within`` (:mod:`.hierarchy`) a histogram ``by``
finer groups names its parent, a consistent histogram ``by`` coarser ones, and a public map of
its groups into the parent's: each key's groups mapped to one parent group are projected onto
the parent's released value there (:func:`add_up_within`), at any depth, parents first;
before that, bottom up along the ``within`` ties, each parent's simultaneous intervals are
narrowed to what its children's can sum to (:func:`narrow`, :func:`narrowed`) and the parent
projected into them (:func:`refit_top` at the top), so that when every truth lies in its
interval and the true tables add up, every released value at every level does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..analysis.intervals import exact_alpha
from ..errors import InvalidParameterError
from ..randomness import RandomSource
from .draw import plain, shaped
from .hierarchy import homes, top_down
from .intervals import expected_abs_error, interval
from .mechanisms import Cell
from .statistic import Statistic


@dataclass(frozen=True, eq=False)
class Consistent:
    """One consistent release of ``m`` cells (the outside cell last).

    Attributes
    ----------
    independent:
        ``y``: each cell's own certified release.
    values:
        ``z``: non-negative integers summing to the public total.
    low, high:
        Each cell's marginal ``1 - alpha`` interval of its true value (from ``y_i``).
    box_low, box_high:
        Each cell's ``1 - alpha / m`` interval: all true values inside at once w.p. ``>= 1 - alpha``.
    inside:
        Whether ``z`` lies in the boxes (always, when the boxes admit the total).
    how, box_how:
        The intervals' methods and proven coverages, in words.
    """

    independent: np.ndarray
    values: np.ndarray
    low: np.ndarray
    high: np.ndarray
    box_low: np.ndarray
    box_high: np.ndarray
    inside: bool
    how: str
    box_how: str


def project(values: np.ndarray, low: np.ndarray, high: np.ndarray, total: int,
            source: RandomSource) -> np.ndarray:
    """The integer point of ``{z : low <= z <= high, sum z = total}`` nearest to ``values``.

    Parameters
    ----------
    values, low, high:
        Integer vectors of one length, ``low <= high``.
    total:
        The public total, ``sum(low) <= total <= sum(high)``.
    source:
        Randomness for the ties (post-processing: it reads no data).

    Returns
    -------
    numpy.ndarray
        ``z = clip(values - s, low, high)`` plus one at ``total - sum`` of the cells where
        ``clip(values - s + 1)`` is larger, chosen uniformly at random; ``s`` the least integer
        with ``sum clip(values - s, low, high) <= total``. A minimiser of ``sum (z - values)^2``
        over the integer points (separable convex costs under one sum: every unit step added
        costs ``1 - 2 s`` at the threshold, less than any step left out).

    Proof: docs/proofs/consistent-tables.md
    """
    y, lo, hi = (np.asarray(v, dtype=np.int64) for v in (values, low, high))
    total = int(total)
    if y.shape != lo.shape or y.shape != hi.shape or (lo > hi).any():
        raise InvalidParameterError("low", "bounds", "low <= high, of the values' shape")
    if not int(lo.sum()) <= total <= int(hi.sum()):
        raise InvalidParameterError("total", total, f"a total from {int(lo.sum())} to {int(hi.sum())} (the bounds' sums)")

    def f(t: int) -> int:
        return int(np.clip(y - t, lo, hi).sum())

    below, above = int((y - hi).min()) - 1, int((y - lo).max())   # f(below) = sum(high), f(above) = sum(low)
    if f(below) <= total:
        return hi.copy()
    while above - below > 1:                  # f(below) > total >= f(above)
        mid = (below + above) // 2
        if f(mid) <= total:
            above = mid
        else:
            below = mid
    z = np.clip(y - above, lo, hi)
    short = total - int(z.sum())
    up = np.flatnonzero(np.clip(y - below, lo, hi) > z)       # more than ``short`` cells
    for j in range(short):                    # the first ``short`` of a uniform random order
        k = j + source.randbelow(len(up) - j)
        up[j], up[k] = up[k], up[j]
    z[up[:short]] += 1
    return z


def fitted(values: np.ndarray, low: np.ndarray, high: np.ndarray, total: int,
           source: RandomSource) -> tuple[np.ndarray, bool]:
    """:func:`project` into the boxes ``[low, high]`` where they admit ``total``, otherwise
    into ``[0, total]`` (some box then misses its true value); ``(z, z inside the boxes)``."""
    lo, hi = np.asarray(low, np.int64), np.asarray(high, np.int64)
    if int(lo.sum()) <= total <= int(hi.sum()):
        return project(values, lo, hi, total, source), True
    z = project(values, np.zeros_like(lo), np.full_like(hi, total), total, source)
    return z, bool(((lo <= z) & (z <= hi)).all())


def release(cell: Cell, truth: np.ndarray, total: int, alpha: float, source: RandomSource) -> Consistent:
    """The consistent release of ``truth`` (every cell, the outside cell included, summing to
    ``total``) by the certified ``cell`` (module docstring).

    Proof: docs/proofs/consistent-tables.md
    """
    q = np.asarray(truth, dtype=np.int64).ravel()
    if int(q.sum()) != int(total) or (q < 0).any():
        raise InvalidParameterError("truth", "cells", f"non-negative cells summing to the total {total}")
    y = cell.release(q - cell.offset, source) + cell.offset
    low, high, how = interval(cell, y - cell.offset, alpha)
    beta = exact_alpha(alpha) / q.size
    box_low, box_high, box_how = interval(cell, y - cell.offset, beta)
    if low is None or box_low is None:
        raise InvalidParameterError("mechanism", cell.built, "a mechanism with intervals (a number on a line)")
    low, high, box_low, box_high = (np.asarray(v, np.int64) + cell.offset for v in (low, high, box_low, box_high))
    z, inside = fitted(y, box_low, box_high, int(total), source)
    return Consistent(y, z, low, high, box_low, box_high, inside, how, box_how)


def add_up_columns(independent: np.ndarray, box_low: np.ndarray, box_high: np.ndarray, totals: np.ndarray,
                   source: RandomSource) -> tuple[np.ndarray, bool]:
    """Each column ``k`` of a groups x keys grid projected onto ``totals[k]`` (the overall
    histogram's released value of key ``k``), inside the boxes where they admit it
    (:func:`fitted`); ``(grid, every value inside its box)``: :func:`add_up_within` with one
    parent group.

    Proof: docs/proofs/consistent-tables.md
    """
    groups = np.asarray(independent).shape[0]
    return add_up_within(independent, box_low, box_high, np.asarray(totals, np.int64)[None, :],
                         np.zeros(groups, np.int64), source)


def add_up_within(independent: np.ndarray, box_low: np.ndarray, box_high: np.ndarray, totals: np.ndarray,
                  homes: np.ndarray, source: RandomSource) -> tuple[np.ndarray, bool]:
    """A groups x keys grid made to add up to a parent's released parent-groups x keys grid
    ``totals``: for each key ``k``, then each parent group ``G`` (in order), the rows ``i`` with
    ``homes[i] = G`` of column ``k`` projected onto ``totals[G, k]``, inside the boxes where they
    admit it (:func:`fitted`); ``(grid, every value inside its box)``. Every parent group must
    have a row (:func:`.hierarchy.check_within`).

    Proof: docs/proofs/consistent-tables.md
    """
    y = np.asarray(independent, np.int64)
    lo, hi = np.asarray(box_low, np.int64), np.asarray(box_high, np.int64)
    sums, home = np.asarray(totals, np.int64), np.asarray(homes, np.int64)
    rows = [np.flatnonzero(home == g) for g in range(sums.shape[0])]
    out = np.zeros_like(y)
    inside = True
    for k in range(y.shape[1]):
        for g, r in enumerate(rows):
            out[r, k], ok = fitted(y[r, k], lo[r, k], hi[r, k], int(sums[g, k]), source)
            inside = inside and ok
    return out, inside


# ------------------------------------------------------------------ the document
def body(stat: Statistic, cell: Cell, cells: np.ndarray, units: int, alpha: float, source: RandomSource) -> dict:
    """The document entry of a consistent histogram of ``units`` units whose counted cells are
    ``cells`` (groups x keys): values, marginal intervals, the outside cell, the boxes."""
    grid = np.asarray(cells, np.int64)
    outside = int(units) - int(grid.sum())
    found = release(cell, np.append(grid.ravel(), outside), units, alpha, source)
    g = grid.shape
    err, err_how = expected_abs_error(cell)

    def table(values: np.ndarray) -> Any:
        return shaped(stat, values[:-1].reshape(g), True)

    def pairs(low: np.ndarray, high: np.ndarray) -> Any:
        out = np.empty(g, dtype=object)
        for i, (a, b) in enumerate(zip(low[:-1], high[:-1])):
            out[np.unravel_index(i, g)] = [plain(a), plain(b)]
        return shaped(stat, out, True)

    return {
        "values": table(found.values), "intervals": pairs(found.low, found.high),
        "interval_method": f"each cell's own interval from its independent release: {found.how}",
        "expected_abs_error": err, "expected_abs_error_method": f"of each cell's independent release, {err_how} "
                                                                "(the projected values' error is measured, not proven: "
                                                                "docs/statistics-accuracy.md)",
        "outside": {"value": plain(found.values[-1]), "interval": [plain(found.low[-1]), plain(found.high[-1])],
                    "about": "units with no counted row (every row filtered out by where, or of an undeclared key "
                             "or group): with the cells they add up to the public number of units"},
        "consistent": {
            "total": int(units), "adds_up_to": None,
            "independent_values": table(found.independent), "independent_outside": plain(found.independent[-1]),
            "simultaneous_intervals": pairs(found.box_low, found.box_high),
            "simultaneous_outside": [plain(found.box_low[-1]), plain(found.box_high[-1])],
            "simultaneous_coverage": f">= 1 - alpha = {1 - alpha:g} for all {found.values.size} cells at once "
                                     f"(outside included): union bound over the cells, each at alpha / "
                                     f"{found.values.size}: {found.box_how}",
            "values_inside_simultaneous_intervals": found.inside,
            "projection": "the integer point nearest (squared distance) to the independent releases with the cells "
                          "and the outside cell summing to the total, inside the simultaneous intervals where they "
                          "admit it (ties at random); post-processing of the certified cells: no budget "
                          "(docs/proofs/consistent-tables.md)"}}


def _grid(stat: Statistic, entry: Any) -> np.ndarray:
    """A groups x keys grid back from the document's shape (:func:`~.draw.shaped`, ``by_key``)."""
    keys = stat.keys.labels()  # type: ignore[union-attr]
    rows = [entry[g] for g in stat.groups.labels()] if stat.groups else [entry]
    return np.array([[row[k] for k in keys] for row in rows], dtype=np.int64)


def _boxes(stat: Statistic, entry: dict) -> tuple[np.ndarray, np.ndarray]:
    """A statistic's simultaneous intervals, cells then the outside cell, as two flat vectors."""
    c = entry["consistent"]
    grid = _grid(stat, c["simultaneous_intervals"])
    lo, hi = c["simultaneous_outside"]
    return np.append(grid[..., 0].ravel(), lo), np.append(grid[..., 1].ravel(), hi)


def narrow(low: np.ndarray, high: np.ndarray, child_low: np.ndarray, child_high: np.ndarray,
           homes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A parent's intervals narrowed to the sums of a child's: flat vectors, the parent's
    groups x keys cells then the outside cell, the child's likewise; ``homes[i]`` the parent
    group of the child's group ``i``. Cell ``(G, k)`` becomes ``[max(low, sum of the lows of
    the child's cells (i, k) with homes[i] = G), min(high, sum of their highs)]``, the outside
    cell ``[max, min]`` of the two outside cells; ``None`` where a cell would be empty.

    Proof: docs/proofs/consistent-tables.md
    """
    home = np.asarray(homes, np.int64)
    keys = (len(child_low) - 1) // len(home)
    groups = (len(low) - 1) // keys
    sums = [np.zeros((groups, keys), np.int64) for _ in range(2)]
    for total, v in zip(sums, (child_low, child_high)):
        np.add.at(total, home, np.asarray(v[:-1], np.int64).reshape(-1, keys))
    new_low = np.maximum(low, np.append(sums[0].ravel(), child_low[-1]))
    new_high = np.minimum(high, np.append(sums[1].ravel(), child_high[-1]))
    return (new_low, new_high) if (new_low <= new_high).all() else None


def narrowed(pairs: Sequence[tuple[Statistic, Statistic]], docs: Mapping[str, dict]) -> dict[str, tuple]:
    """The simultaneous intervals of every statistic tied by ``within``, narrowed bottom up to
    the sums of its children's (each parent cell to ``[sum of its children's lows, sum of their
    highs]`` through the map, the outside cell to the child's): ``{name: (low, high)}``, flat,
    the outside cell last. A narrowing that would leave a cell empty (then some truth lies
    outside its interval, or the true tables do not add up) is skipped. Where some tie is a
    ``within`` tie every tie narrows (a one-level tie below or above a ``within`` level too, so
    that Claim H holds for the whole tree); specs without ``within`` narrow nothing (released
    as before, bit for bit).

    Proof: docs/proofs/consistent-tables.md
    """
    boxes: dict[str, tuple] = {}
    if not any(stat.within is not None for stat, _ in pairs):
        return boxes
    for stat, parent in reversed(list(pairs)):            # the deepest ties first
        for s in (stat, parent):
            boxes.setdefault(s.name, _boxes(s, docs[s.name]))
        tightened = narrow(*boxes[parent.name], *boxes[stat.name], homes(stat, parent))
        if tightened is not None:
            boxes[parent.name] = tightened
    return boxes


def refit_top(stat: Statistic, entry: dict, low: np.ndarray, high: np.ndarray, source: RandomSource) -> dict:
    """A top statistic's entry projected into its narrowed intervals (:func:`narrowed`) where
    its values lie outside them and they admit its total (:func:`project` from the independent
    releases); otherwise unchanged (already the nearest point in the narrowed intervals)."""
    c = entry["consistent"]
    z = np.append(_grid(stat, entry["values"]).ravel(), entry["outside"]["value"])
    if ((low <= z) & (z <= high)).all() or not int(low.sum()) <= int(c["total"]) <= int(high.sum()):
        return entry
    y = np.append(_grid(stat, c["independent_values"]).ravel(), c["independent_outside"])
    z = project(y, low, high, int(c["total"]), source)
    return {**entry, "values": shaped(stat, z[:-1].reshape(stat.shape), True),
            "outside": {**entry["outside"], "value": plain(z[-1])},
            "consistent": {**c, "values_inside_simultaneous_intervals": True}}


def add_up(stats: Sequence[Statistic], docs: Mapping[str, dict], source: RandomSource) -> dict[str, dict]:
    """The documents with every consistent histogram ``by`` groups made to add up, key by key,
    to its parent (:func:`.hierarchy.parent_of`: the overall histogram, or the one ``within``
    names, group by group through its map), top down (:func:`.hierarchy.top_down`), so every
    level adds up to the level above and the top one to the number of units. A statistic with
    children tied by ``within`` is projected into its intervals narrowed to its children's sums
    (:func:`narrowed`, :func:`refit_top`), so that whenever every truth lies in its simultaneous
    interval and the true tables add up, every released value at every level does too.

    Proof: docs/proofs/consistent-tables.md
    """
    out = dict(docs)
    pairs = top_down(stats)
    tight = narrowed(pairs, out)
    children = {stat.name for stat, _ in pairs}
    for stat in stats:
        if stat.name in tight and stat.name not in children:
            out[stat.name] = refit_top(stat, out[stat.name], *tight[stat.name], source)
    for stat, parent in pairs:
        entry, top = out[stat.name], out[parent.name]
        c = entry["consistent"]
        y = _grid(stat, c["independent_values"])
        boxes = _grid(stat, c["simultaneous_intervals"])   # groups x keys x (low, high)
        lo, hi = (v[:-1].reshape(y.shape) for v in tight[stat.name]) if stat.name in tight else \
            (boxes[..., 0], boxes[..., 1])
        grid, _ = add_up_within(y, lo, hi, _grid(parent, top["values"]), homes(stat, parent), source)
        s_lo, s_hi = c["simultaneous_outside"]
        out_value = top["outside"]["value"]
        inside = bool(((boxes[..., 0] <= grid) & (grid <= boxes[..., 1])).all() and s_lo <= out_value <= s_hi)
        tied = {"adds_up_to": parent.name, "values_inside_simultaneous_intervals": inside,
                "hierarchy": f"each key's groups add up to statistic '{parent.name}' (released first), the outside "
                             "cell equals its outside cell"}
        if stat.within is not None and parent.groups is not None:
            tied["hierarchy"] = (f"for each key, the groups mapped to a group of statistic '{parent.name}' (within.map) "
                                 "add up to its released value there (released first), the outside cell equals its "
                                 "outside cell")
            tied["map"] = dict(stat.within.map)
        out[stat.name] = {**entry, "values": shaped(stat, grid, True),
                          "outside": {**entry["outside"], "value": out_value},
                          "consistent": {**c, **tied}}
    return out


__all__ = ["Consistent", "add_up", "add_up_columns", "add_up_within", "body", "fitted", "narrow", "narrowed", "project",
           "refit_top", "release"]
