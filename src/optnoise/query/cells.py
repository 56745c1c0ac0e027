"""A statistic's exact answers from the bounded per-(unit, cell) aggregate: the unit rules
that every kind shares (docs/proofs/contribution-bounding.md).

The streamed aggregate (:mod:`.aggregate`, or the Spark engine) gives, per statistic, one row
per (unit, cell) with the unit's counted rows and its clamped, rounded values summed there.
A kind (:mod:`.kinds`) turns that into its cells with one of two rules, both of which depend
on one unit's rows alone:

* :func:`units_at_home` -- a unit counts once, at the cell of most of its counted rows (ties
  to the first declared): a histogram or a mode of units;
* :func:`summed_cells` -- the unit's rows (or values) summed in its cells, all in one group
  under ``by`` (the group of most of its counted rows, ties to the first declared; its rows in
  other groups dropped and counted): a sum, a peak, a histogram of rows.

With ``unit.max_groups = g`` (:class:`GroupRules`) "one" becomes "at most ``g``": a unit
counts once in each of its ``g`` cells (groups) of most counted rows (ties to the first
declared), or -- ``bounding = "random"`` -- in ``g`` of its cells (groups) drawn uniformly at
random (each (unit, cell) given a pseudorandom 64-bit priority,
:func:`.priority.group_priorities` of the query's key, the unit's first read index and the cell,
the ``g`` smallest kept): either way a function of one unit's rows (and the key) alone
(:func:`top_cells`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .priority import group_priorities
from .statistic import Statistic
from .units import SlotPart

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Answers:
    """A statistic's exact answers: ``cells`` (groups x keys, answer units) and, for a kind
    that releases a key, ``scores`` (the keys' totals) and ``argmax`` per group."""

    cells: np.ndarray
    scores: np.ndarray | None = None
    argmax: np.ndarray | None = None


@dataclass(frozen=True)
class GroupRules:
    """How many groups (or cells) a unit is kept in (``groups``: ``unit.max_groups``, default
    1) and, for ``bounding = "random"``, the key of their random choice (``None``: the
    groups of most counted rows) with ``first``, the read index of each unit's first row by
    its dense index (:func:`.priority.group_priorities`)."""

    groups: int = 1
    key: bytes | None = None
    first: np.ndarray | None = field(default=None, compare=False, repr=False)

    def priorities(self, unit: np.ndarray, code: np.ndarray) -> np.ndarray:
        """The priority of each (unit, code) entry under random bounding."""
        assert self.key is not None and self.first is not None
        return group_priorities(self.key, self.first[unit], code)


#: Today's rule: one group, the unit's majority.
ONE = GroupRules()


def bump(counts: dict[str, int], key: str, n: int) -> None:
    """Add ``n`` to the counter ``key`` (left absent while zero)."""
    if n:
        counts[key] = counts.get(key, 0) + int(n)


def pair_sums(u: np.ndarray, c: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``r`` summed over equal ``(u, c)`` of entries sorted by unit, then code."""
    start = np.ones(len(u), dtype=bool)
    start[1:] = (u[1:] != u[:-1]) | (c[1:] != c[:-1])
    at = np.flatnonzero(start)
    return u[at], c[at], np.add.reduceat(r, at)


def home_cells(unit: np.ndarray, code: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's cell ``code`` with the most rows (summed over equal ``(unit, code)``), ties
    to the least code (the first declared): ``(units, codes)``, sorted by unit. Integer sorts
    and sums only (``np.lexsort`` when not sorted already, ``np.add.reduceat``,
    ``np.maximum.reduceat``): exact."""
    if len(unit) == 0:
        return unit[:0], code[:0]
    u, c, r = unit, code, rows
    ordered = (u[1:] > u[:-1]) | ((u[1:] == u[:-1]) & (c[1:] >= c[:-1]))
    if not ordered.all():                        # the aggregate comes sorted: usually skipped
        order = np.lexsort((code, unit))
        u, c, r = unit[order], code[order], rows[order]
    u, c, r = pair_sums(u, c, r)
    if (u[1:] > u[:-1]).all():                  # one cell per unit (a group fixed per unit)
        return u, c
    first = np.ones(len(u), dtype=bool)
    first[1:] = u[1:] != u[:-1]
    of = np.cumsum(first) - 1                   # each entry's unit, numbered 0, 1, ...
    top = np.maximum.reduceat(r, np.flatnonzero(first))
    at = np.flatnonzero(r == top[of])           # the entries with their unit's most rows, by code:
    lead = np.ones(len(at), dtype=bool)         # the first of each unit has the least code
    lead[1:] = of[at[1:]] != of[at[:-1]]
    return u[at[lead]], c[at[lead]]


def top_cells(unit: np.ndarray, code: np.ndarray, rows: np.ndarray,
              rules: GroupRules = ONE) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's kept cells ``code``: its ``rules.groups`` codes with the most rows (summed
    over equal ``(unit, code)``; ties to the least code) or, with ``rules.key``, of the
    smallest pseudorandom 64-bit priorities (:meth:`GroupRules.priorities`) (a uniformly random choice, ties to the least
    code): ``(units, codes)`` sorted by unit, then code. One group of most rows:
    :func:`home_cells` (the same answer).

    Proof: docs/proofs/contribution-bounding.md (item 5)
    """
    if rules.groups == 1 and rules.key is None:
        return home_cells(unit, code, rows)
    if len(unit) == 0:
        return unit[:0], code[:0]
    order = np.lexsort((code, unit))
    u, c, r = pair_sums(unit[order], code[order], rows[order])
    rank_by = -r if rules.key is None else rules.priorities(u, c)
    order = np.lexsort((c, rank_by, u))          # by unit, then most rows (or priority), then code
    u, c = u[order], c[order]
    first = np.ones(len(u), dtype=bool)
    first[1:] = u[1:] != u[:-1]
    begin = np.maximum.accumulate(np.where(first, np.arange(len(u)), 0))
    keep = np.arange(len(u)) - begin < rules.groups
    u, c = u[keep], c[keep]
    order = np.lexsort((c, u))
    return u[order], c[order]


def columns(part: "pd.DataFrame") -> tuple[np.ndarray, ...]:
    """``(unit, group, key, rows)`` of a statistic's aggregate as integer arrays."""
    return tuple(part[c].to_numpy(np.int64) for c in ("unit", "group", "key", "rows"))


def units_at_home(stat: Statistic, part: "pd.DataFrame", counts: dict[str, int], rules: GroupRules = ONE) -> np.ndarray:
    """Units per cell (groups x keys), each unit once at its home cell (module docstring);
    the rule reads one unit's cells at a time, so a part that comes in blocks of whole units
    gives the same cells block by block."""
    groups, keys = stat.shape
    out = np.zeros(groups * keys, np.int64)
    several = 0
    # a part read from slots (:class:`.units.SlotPart`) is walked a block of units at a time
    for unit, group, key, rows in (part.blocks() if isinstance(part, SlotPart) else [columns(part)]):
        _, chosen = top_cells(unit, group * keys + key, rows, rules)
        several += int((np.unique(unit, return_counts=True)[1] > 1).sum())  # (unit, cell) unique in the aggregate
        out += np.bincount(chosen, minlength=groups * keys).astype(np.int64)
    bump(counts, "units_with_rows_in_several_cells", several)
    return out.reshape(groups, keys)


def summed_cells(stat: Statistic, part: "pd.DataFrame", counts: dict[str, int], what: np.ndarray,
                 rules: GroupRules = ONE, by_cells: bool = False) -> np.ndarray:
    """``what`` (each (unit, cell)'s rows or values) summed per cell (groups x keys), a unit's
    rows all in its kept groups under ``by`` (module docstring) -- or, ``by_cells``, in its kept
    cells (group, key), the cells :func:`units_at_home` counts it in; a part read from slots is
    walked a piece of whole units at a time (the rule reads one unit at a time)."""
    groups, keys = stat.shape
    cells = np.zeros((groups, keys), np.int64)
    dropped = 0
    pieces = part.walk() if isinstance(part, SlotPart) else [(*columns(part), slice(None))]
    for unit, group, key, rows, where in pieces:
        value = what[where]
        if stat.by is not None and len(unit):
            keep = in_kept(unit, group * stat.shape[1] + key if by_cells else group, rows, rules)
            dropped += int(rows.sum() - rows[keep].sum())
            group, key, value = group[keep], key[keep], value[keep]
        np.add.at(cells, (group, key), value)
    bump(counts, "rows_outside_the_units_group", dropped)
    return cells


def in_kept(unit: np.ndarray, group: np.ndarray, rows: np.ndarray, rules: GroupRules = ONE) -> np.ndarray:
    """Which (unit, group) entries lie in one of their unit's kept groups (:func:`top_cells`)."""
    homes, home = top_cells(unit, group, rows, rules)
    if rules.groups == 1 and rules.key is None:
        low = int(unit.min())
        of_unit = np.full(int(unit.max()) - low + 1, -1, np.int64)
        of_unit[homes - low] = home
        return of_unit[unit - low] == group
    span = int(group.max()) + 1 if len(group) else 1
    kept = np.sort(homes * span + home)
    code = unit * span + group
    at = np.minimum(np.searchsorted(kept, code), max(len(kept) - 1, 0))
    return (kept[at] == code) if len(kept) else np.zeros(len(code), dtype=bool)


__all__ = ["Answers", "GroupRules", "ONE", "bump", "columns", "home_cells", "in_kept", "pair_sums", "summed_cells", "top_cells",
           "units_at_home"]
