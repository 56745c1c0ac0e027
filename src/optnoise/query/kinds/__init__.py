"""The kinds of statistic: one module each, found by the registry, and the rules they share.

Every module of this package but :mod:`.base` defines ``KIND``, an instance of
:class:`~.base.Kind` (``count``, ``histogram``, ``sum``, ``peak``, ``mode``, ``mean``, ``variance``,
``std``): what a statistic
of that kind reads from the spec, what one unit can move, how its answers come from the
bounded aggregate, which mechanism releases it and how it is written. The registry finds
them by listing the package (adding a kind is adding a module); :func:`registered` adds one
for the duration of a ``with`` block (a test's toy kind, a plug-in).

The rules shared by all kinds are here, written once over the kind's answers:

* :func:`derive` -- the statistic's neighbourhood from the query and the unit, never from
  the data (docs/proofs/derived-neighbourhoods.md): a unit's contribution ``low..high`` to a
  cell moves it by ``high - low`` under ``replace`` and by ``max(-low, high)`` under
  ``add-remove``, in ``cells`` cells; a key released by answer-noise moves by every shift;
* :func:`cell_domain` -- every possible value of one cell, from the public number of units
  (``replace``) or ``max_units`` (``add-remove``);
* :func:`cell_for` -- the cell's target (the statistic's split over the cells one unit moves,
  or the L1 plan's) and the kind's certified mechanism for it.
"""

from __future__ import annotations

import importlib
import pkgutil
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from ...errors import InvalidParameterError, OptnoiseError
from ...randomness import RandomSource
from ..cells import Answers
from ..mechanisms import Cell, cell_target, l1_target
from ..neighbourhood import Derived
from ..statistic import Statistic
from .base import Kind, UnitRules


class Registry:
    """The kinds by name: the modules of this package, found on first use, and any added by
    :meth:`add` (removed by :meth:`remove`)."""

    def __init__(self) -> None:
        self._kinds: dict[str, Kind] | None = None

    def _found(self) -> dict[str, Kind]:
        if self._kinds is None:
            found: dict[str, Kind] = {}
            for info in pkgutil.iter_modules(__path__):
                if info.name != "base":
                    kind = importlib.import_module(f"{__name__}.{info.name}").KIND
                    found[kind.name] = kind
            self._kinds = found
        return self._kinds

    def get(self, name: object) -> Kind:
        """The kind called ``name``; an unknown one is refused with the names accepted."""
        kinds = self._found()
        if not isinstance(name, str) or name not in kinds:
            raise InvalidParameterError("kind", name, ", ".join(self.names()))
        return kinds[name]  # type: ignore[index]

    def names(self) -> list[str]:
        """The kinds' names, in their order."""
        return [k.name for k in sorted(self._found().values(), key=lambda k: (k.order, k.name))]

    def add(self, kind: Kind) -> None:
        if kind.name in self._found():
            raise InvalidParameterError("kind", kind.name, "a name no other kind has")
        self._found()[kind.name] = kind

    def remove(self, name: str) -> None:
        self._found().pop(name, None)


#: The registry of kinds.
KINDS = Registry()


def kind_of(stat: Statistic) -> Kind:
    """The kind of ``stat``."""
    return KINDS.get(stat.kind)


@contextmanager
def registered(kind: Kind) -> Iterator[Kind]:
    """``kind`` registered inside the ``with`` block, removed after."""
    KINDS.add(kind)
    try:
        yield kind
    finally:
        KINDS.remove(kind.name)


# ------------------------------------------------------------------ what one unit can move
def contribution(stat: Statistic, unit: UnitRules) -> tuple[int, int]:
    """The range of one unit's contribution to one cell (answer units)."""
    return kind_of(stat).contribution(stat, unit)


def derive(stat: Statistic, unit: UnitRules) -> Derived:
    """The neighbourhood of ``stat`` under ``unit`` (module docstring).

    Proof: docs/proofs/derived-neighbourhoods.md
    """
    kind = kind_of(stat)
    low, high = kind.contribution(stat, unit)
    distance: int | None = unit.distance(low, high)   # the unit's one rule
    cells = kind.cells(stat, unit)
    if kind.releases_key and stat.method == "answer-noise":
        distance = None
    l1 = kind.l1(stat, unit)
    if l1 is not None and distance is not None and l1 >= cells * distance:
        l1 = None   # no better than cell by cell
    return Derived(distance, cells, low, high, unit.change, l1)


def score_sensitivity(stat: Statistic, unit: UnitRules) -> int:
    """Report-noisy-max: the largest change of one key's score when one unit changes.

    Proof: docs/proofs/derived-neighbourhoods.md
    """
    low, high = contribution(stat, unit)
    return unit.distance(low, high)


def cell_domain(stat: Statistic, unit: UnitRules, units: int) -> tuple[int, int]:
    """``(offset, n)``: every possible value of one cell is ``offset + 0..n`` (answer units),
    for ``units`` units (public under replace; ``max_units`` under add-remove).

    Proof: docs/proofs/derived-neighbourhoods.md
    """
    count = units if unit.change == "replace" else int(unit.max_units)  # type: ignore[attr-defined]
    low, high = contribution(stat, unit)
    return count * low, max(1, count * (high - low))


# ------------------------------------------------------------------ mechanisms and answers
def cell_for(stat: Statistic, derived: Derived, n: int, offset: int, keys_per_unit: int = 1) -> Cell:
    """The mechanism of one cell of ``stat`` (``n``, ``offset``: the cell's domain): at the
    statistic's target split over the cells one unit moves, or under the L1 plan
    (``derived.l1``) pure noise certified at distance 1 for :func:`~..mechanisms.l1_target`.
    ``keys_per_unit``: the keys one unit can create (``unit.max_groups``; a selection of keys
    found in the data is composed over them)."""
    target = cell_target(stat.target, derived.cells)  # type: ignore[arg-type]
    distance = derived.distance
    if derived.l1 is not None:
        target, distance = l1_target(stat.target, derived.l1), 1  # type: ignore[arg-type]
    try:
        return kind_of(stat).mechanism(stat, target, distance, n, offset, keys_per_unit)
    except InvalidParameterError as exc:
        if exc.parameter == "bd":   # the distances one unit moves a cell by: from max_rows and the clamp
            raise InvalidParameterError("unit.max_rows", f"statistic '{stat.name}' moved by up to {distance}",
                                        f"a smaller max_rows, a coarser resolution or a smaller clamp: "
                                        f"{exc.accepted}") from exc
        if exc.parameter != "target":
            raise
        raise _uncertified(stat, derived, str(exc.accepted)) from exc
    except OptnoiseError as exc:   # the noise's integer weights cannot hold this epsilon's ratios
        raise _uncertified(stat, derived, str(exc)) from exc


def _uncertified(stat: Statistic, derived: Derived, why: str) -> InvalidParameterError:
    """A cell whose mechanism no integer weights certify at the statistic's epsilon: bad input,
    naming the epsilon and the ways out."""
    moved = "every key" if derived.distance is None else f"by up to {derived.distance}"
    return InvalidParameterError("epsilon", stat.target.epsilon,  # type: ignore[union-attr]
                                 f"a larger epsilon for this statistic: one unit moves {derived.cells} cell(s) "
                                 f"{moved}, and its cell's noise is not certified exactly at this epsilon ({why}); or a "
                                 "coarser resolution, a smaller clamp or a smaller max_rows")


def together(planned: list, docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
    """The statistics' documents after post-processing across statistics, kind by kind
    (:meth:`~.base.Kind.together`: a consistent histogram adding up to another)."""
    for kind in dict.fromkeys(kind_of(item.stat) for item in planned):
        docs = kind.together([item for item in planned if kind_of(item.stat) is kind], docs, source)
    return docs


def from_cells(stat: Statistic, grid: np.ndarray) -> Answers:
    """The answers of ``stat`` from its summed grid (groups x keys)."""
    return kind_of(stat).from_grid(stat, grid)


__all__ = ["KINDS", "Kind", "Registry", "cell_domain", "cell_for", "contribution", "derive", "from_cells", "kind_of",
           "registered", "score_sensitivity", "together"]
