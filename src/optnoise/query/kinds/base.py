"""What a kind of statistic is: the one interface every kind module implements.

A kind says, for a statistic of its kind: which spec keys it takes and how it reads them;
what one unit can move (its contribution to one cell, how many cells it moves, and the L1
plan where one applies: docs/proofs/derived-neighbourhoods.md); how its exact answers come
from the bounded per-(unit, cell) aggregate (:mod:`..cells`) -- locally and on Spark, where
the executors add up the same grids; which certified mechanism releases one of its cells
(:mod:`..mechanisms`, every design through ``Request``/``design``); and how its released
values are written (:mod:`..draw`). The defaults are those of a *number* released in each
cell (a count, a sum); :class:`KeyKind` is the base of a kind that releases a *key* (a
peak, a mode).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar, Mapping, Protocol

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ...target import Target
from ..cells import ONE, Answers, GroupRules
from ..draw import draw_keys, draw_numbers
from ..mechanisms import Cell, cell_target, count_cell, key_cell, unbiased_cell
from ..statistic import FROM_DATA, METHODS, Statistic, choice, clamp, column, declared


class UnitRules(Protocol):
    """What a kind reads of the privacy unit."""

    change: str

    @property
    def rows_bound(self) -> int | None: ...

    @property
    def groups_bound(self) -> int: ...

    @property
    def group_rows_bound(self) -> int | None: ...

    def distance(self, low: int, high: int) -> int: ...


class Planned(Protocol):
    """What a kind reads of a planned statistic (:class:`optnoise.query.release.Planned`)."""

    stat: Statistic
    cell: Cell | None
    answers: Answers
    sensitivity: int | None
    units: int | None
    #: The statistic's other certified parts (a mean's count, a variance's sum of squares).
    extra: tuple[Cell, ...]
    #: The number of units of the table (private under ``add-remove``: drawn through a noisy count).
    all_units: int
    #: The groups (or keys) one unit is kept in at most (``unit.max_groups``).
    groups_per_unit: int

    @property
    def derived(self) -> Any: ...


class Kind:
    """A kind of statistic (module docstring). Subclasses set ``name`` and ``keys`` and
    override what differs; an instance is registered by the module's ``KIND``."""

    #: The spec's ``kind = "..."``.
    name: ClassVar[str] = ""
    #: Where it is listed among the kinds (messages, docs).
    order: ClassVar[int] = 100
    #: The spec keys it takes besides :data:`~..statistic.COMMON_KEYS`.
    keys: ClassVar[tuple[str, ...]] = ()
    #: Whether ``unbiased = true`` is offered (an answer on a number line).
    unbiased: ClassVar[bool] = False
    #: Whether each released value is a key of the declared keys (a peak, a mode).
    releases_key: ClassVar[bool] = False
    #: Whether the released cells are written ``key -> value`` (a histogram).
    by_key: ClassVar[bool] = False
    #: Whether its answers need each unit's own value (a quantile), not the cells' totals: the
    #: Spark engine then takes its Python path (its JVM path adds up the units of a cell).
    per_unit: ClassVar[bool] = False

    # ------------------------------------------------------------------ the spec
    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        """The kind's own fields of :class:`~..statistic.Statistic` from its spec table."""
        return {}

    def rows_needed(self, stat: Statistic) -> str | None:
        """What the statistic is, in words, when it needs ``unit.max_rows`` (one unit could
        move it without bound otherwise); ``None`` when it does not."""
        return None

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        """Refuse (``InvalidParameterError`` naming the key) what the kind cannot release
        under ``unit``; nothing by default."""

    # ------------------------------------------------------------------ what one unit can move
    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        """The range of one unit's contribution to one cell (answer units)."""
        raise NotImplementedError

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        """How many released values one unit can change at once: a group's value under
        ``by`` moves with the unit's ``g = max_groups`` old and ``g`` new groups under
        ``replace`` (``g`` under ``add-remove``).

        Proof: docs/proofs/derived-neighbourhoods.md
        """
        if stat.by is None:
            return 1
        return 2 * groups_of(unit) if unit.change == "replace" else groups_of(unit)

    def l1(self, stat: Statistic, unit: UnitRules) -> int | None:
        """The L1 plan's bound (docs/proofs/l1-chaining.md), where it applies; ``None``."""
        return None

    # ------------------------------------------------------------------ exact answers
    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        """The exact answers from the statistic's aggregate (``unit, group, key, rows,
        value`` per (unit, cell); ``counts`` collects what the unit rules drop)."""
        raise NotImplementedError

    def counts_units(self, stat: Statistic) -> bool:
        """Whether a unit counts once, at its home cell (the Spark engine adds the units
        whose rows lie in one cell as that many)."""
        return False

    def grid(self, answers: Answers) -> np.ndarray:
        """The grid partitions of the data add up (groups x keys) to give the answers."""
        return answers.cells

    def grid_shape(self, stat: Statistic) -> tuple[int, int]:
        """The shape of :meth:`grid` (groups x keys, unless the kind adds several totals per cell)."""
        return stat.shape

    def from_grid(self, stat: Statistic, grid: np.ndarray) -> Answers:
        """The answers from the summed grid."""
        return Answers(grid)

    # ------------------------------------------------------------------ the mechanism
    def mechanism(self, stat: Statistic, target: Target, distance: int | None, n: int, offset: int,
                  keys_per_unit: int = 1) -> Cell:
        """The certified mechanism of one cell on ``offset + {0..n}`` at ``target``, whose
        value one unit moves by at most ``distance`` (:mod:`..mechanisms`); ``keys_per_unit``:
        the keys one unit can create (``unit.max_groups``), which a selection of keys found in
        the data reads."""
        if stat.unbiased:
            return unbiased_cell(stat.name, n, offset, int(distance), target)  # type: ignore[arg-type]
        if stat.mechanism_file is not None:
            from ..filecell import file_cell
            return file_cell(stat.name, stat.mechanism_file, n, offset, int(distance), target)  # type: ignore[arg-type]
        return count_cell(stat.name, n, offset, int(distance), target, stat.mechanism)  # type: ignore[arg-type]

    def parts_for(self, stat: Statistic, unit: UnitRules, units: int) -> list[Cell] | None:
        """A statistic released from several certified parts (a mean's sum and count): their
        cells, the first written as the statistic's ``mechanism``, each composed by the
        accountant (:mod:`optnoise.publish.accountant`) like a histogram's cells; ``None`` (the
        default): one cell, from :func:`~optnoise.query.kinds.cell_for`. ``units``: the
        number of units (public under ``replace``)."""
        return None

    def design_key(self, stat: Statistic) -> tuple:
        """Every field of ``stat`` that :meth:`mechanism` reads (besides the domain and the
        derived distances): statistics with equal keys share one designed mechanism."""
        return self.name, stat.target, stat.mechanism, stat.mechanism_file, stat.unbiased

    def selection(self, item: Planned) -> Any:
        """The threshold of a statistic whose keys are found in the data
        (:class:`~..threshold.Threshold`: what its selection adds to the unit's total);
        ``None`` for declared keys."""
        return None

    # ------------------------------------------------------------------ the document
    def resolution(self, stat: Statistic) -> Fraction | None:
        """The step of the released values in the column's units (``None``: integers)."""
        return None

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        """The released values, intervals and expected errors (:mod:`..draw`)."""
        return draw_numbers(item.stat, item.cell, item.answers, alpha, source,  # type: ignore[arg-type]
                            by_key=self.by_key, resolution=self.resolution(item.stat))

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """The documents of every statistic, after this kind's statistics ``items`` are drawn:
        post-processing across them (e.g. tables that add up); unchanged by default."""
        return docs

    def notes(self, stat: Statistic) -> dict:
        """Extra entries of the statistic's document."""
        return {}

    def document(self, item: Planned, doc: dict) -> dict:
        """The statistic's document entry, last: ``doc`` as written (a kind whose mechanism is
        not a cell's writes its own ``mechanism`` and ``certificate`` here)."""
        return doc

    def about(self, stat: Statistic) -> str:
        """The statistic in a few words."""
        return self.name

    def csv_rows(self, entry: Mapping[str, Any]) -> list[tuple]:
        """``(group, key, value, interval)`` rows of the statistic's document entry."""
        values = entry.get("values", entry.get("value"))
        ivs = entry.get("intervals", entry.get("interval"))
        if "value" in entry:
            return [("", "", values, ivs)]
        out: list[tuple] = []
        grouped = any(isinstance(v, dict) for v in values.values())
        for g, v in values.items():
            iv = ivs.get(g) if isinstance(ivs, dict) else None
            if isinstance(v, dict):
                out += [(g if self.by_key and grouped else "", k if grouped else g, x,
                         iv.get(k) if isinstance(iv, dict) else None) for k, x in v.items()] if grouped else []
            else:
                out.append(("", g, v, iv) if self.by_key else (g, "", v, iv))
        return out


class KeyKind(Kind):
    """A kind whose released value is a key (a peak, a mode): by ``answer-noise`` (cyclic
    noise on integer keys or randomized response on text keys under every shift) or by
    ``report-noisy-max`` (permute-and-flip over the keys' scores, pure DP by theorem)."""

    releases_key = True

    def read_method(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {"method": choice(t.get("method", "answer-noise"), "method", METHODS)}

    def grid(self, answers: Answers) -> np.ndarray:
        return answers.scores  # type: ignore[return-value]

    def mechanism(self, stat: Statistic, target: Target, distance: int | None, n: int, offset: int,
                  keys_per_unit: int = 1) -> Cell:
        return key_cell(stat.name, stat, target)

    def design_key(self, stat: Statistic) -> tuple:
        return self.name, stat.target, stat.keys, stat.method

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        eps = cell_target(item.stat.target, item.derived.cells).epsilon  # type: ignore[arg-type]
        return draw_keys(item.stat, item.cell, item.answers, alpha, source, epsilon=eps,
                         sensitivity=item.sensitivity)

    def synthetic_scores(self, stat: Statistic, unit: UnitRules, units: int, shares: np.ndarray) -> np.ndarray:
        """The keys' integer scores in one group of ``units`` units with these shares
        (``optnoise query --compare``: synthetic data of the spec's shape)."""
        raise NotImplementedError

    def scores_words(self, stat: Statistic) -> str:
        """What the scores are, in words."""
        raise NotImplementedError


# ------------------------------------------------------------------ shared readers
def read_keys(t: Mapping[str, Any]) -> dict[str, Any]:
    """``key`` and its declared ``keys``."""
    return {"key": column(t.get("key"), "key"), "keys": declared(t.get("keys"), "keys")}


#: The default share of a count's, sum's or mean's epsilon spent on selecting its keys found in
#: the data (the noisy counts of units per key: :func:`..found.with_selections`).
SELECTION_SHARE = 0.5


def read_found(t: Mapping[str, Any], grouped: bool = True) -> dict[str, Any]:
    """``key`` with ``keys = "from-data"`` (a count, sum or mean by a key found in the data),
    ``selection_share`` and, beside them, declared ``by`` + ``groups`` (the released cells are
    then the (group, key) pairs); none of them: ``{}``. Declared keys are not taken here (a
    sum's and a quantile's declared groups are ``by`` + ``groups``). ``grouped``: whether the
    kind takes ``by`` without a found key (a sum does; a count or a mean does not: refused)."""
    if not any(k in t for k in ("key", "keys", "selection_share")):
        if not grouped and ("by" in t or "groups" in t):
            raise InvalidParameterError("by", t.get("by"), "by + groups only beside key with keys = \"from-data\" "
                                        "(declared groups alone: a sum or a histogram)")
        return {}
    if t.get("keys") != FROM_DATA:
        raise InvalidParameterError("keys", t.get("keys"), f"\"{FROM_DATA}\" with key = COLUMN (a count, sum or "
                                    "mean by a key found in the data; declared groups are by + groups)")
    key = column(t.get("key"), "key")
    if ("by" in t or "groups" in t) and t.get("by") == key:
        raise InvalidParameterError("by", t.get("by"), f"a column other than the key {key!r} (the groups are "
                                    "declared, the keys found in the data)")
    share = t.get("selection_share", SELECTION_SHARE)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise InvalidParameterError("selection_share", share, "a fraction 0 < share < 1 of the statistic's epsilon "
                                    "spent on the noisy counts of units that select its keys (default 0.5)")
    return {"key": key, "keys": None, "keys_from_data": True, "selection_share": float(share), **read_groups(t)}


def read_groups(t: Mapping[str, Any]) -> dict[str, Any]:
    """``by`` and its declared ``groups``, when either is given."""
    if "by" in t or "groups" in t:
        return {"by": column(t.get("by"), "by"), "groups": declared(t.get("groups"), "groups")}
    return {}


def read_values(t: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The summed column under ``key`` (``column``, or a peak's ``of``), its clamp and resolution."""
    name = column(t.get(key), key)
    bounds, res = clamp(t.get("clamp"), t.get("resolution", 1))
    return {key: name, "value_column": name, "clamp": bounds, "resolution": res}


def read_of(t: Mapping[str, Any]) -> dict[str, Any]:
    """``of``: ``"units"`` (default) or ``"rows"``."""
    return {"of": choice(t.get("of", "units"), "of", ("units", "rows"))}


def groups_of(unit: UnitRules) -> int:
    """``g``: the groups (or cells) a unit is kept in at most (``max_groups``, default 1)."""
    return int(getattr(unit, "groups_bound", 1))


def group_rows(unit: UnitRules) -> int | None:
    """The rows a unit keeps in one group at most: ``min(max_rows, max_rows_per_group)``."""
    return getattr(unit, "group_rows_bound", unit.rows_bound)


def clamped_contribution(stat: Statistic, unit: UnitRules) -> tuple[int, int]:
    """A unit's ``m`` rows in one group (``m``: :func:`group_rows`) each clamped to ``[a, b]``
    (resolution units): ``[min(0, m a), max(0, m b)]``."""
    m = group_rows(unit)
    lo, hi = stat.scaled_clamp
    return min(0, m * lo), max(0, m * hi)  # type: ignore[operator]


def rows_of(unit: UnitRules) -> int:
    """``max_rows`` (a kind that needs it has been refused without it)."""
    if unit.rows_bound is None:
        raise InvalidParameterError("unit.max_rows", None, "max_rows in the unit")
    return int(unit.rows_bound)


__all__ = ["Kind", "KeyKind", "Planned", "UnitRules", "clamped_contribution", "group_rows", "groups_of", "read_groups",
           "read_found", "read_keys", "read_of", "read_values", "rows_of"]
