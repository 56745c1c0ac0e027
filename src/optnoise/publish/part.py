"""What the core reads of a part of a publication: a column of a release, or a statistic's cell.

A release of a table (:mod:`optnoise.table`) and a query's statistics (:mod:`optnoise.query`)
both publish *parts* about one unit: a column privatized per record (``ColumnPlan``), a
statistic's cell (``Cell``), or a stand-in for a part known only by a pure-DP theorem
(``TheoremPart``). The accountant (:mod:`.accountant`) and the document (:mod:`.document`)
read every part the same way, through this protocol -- its name, the certified mechanism that
is sampled (its ``quantize()`` is what is drawn and certified exactly), the ``(epsilon,
delta)`` it adds to the basic composition, and the exact profile it adds to the tight one --
so a new kind of part (a quantile, a ledger's stored spend) needs nothing new in the core.
What one unit can move in a part comes from the unit's one rule
(:meth:`~.unit.PrivacyUnit.distance`) applied to the part's contribution.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Part(Protocol):
    """A released part, as the accountant and the document read it (module docstring)."""

    name: str

    @property
    def mechanism(self) -> Any:
        """The certified :class:`~optnoise.mechanism.Mechanism` the composition reads."""

    @property
    def epsilon_delta(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` the part adds to the basic composition."""

    def composition_profile(self) -> Any:
        """The exact privacy profile the part adds to the tight composition."""


__all__ = ["Part"]
