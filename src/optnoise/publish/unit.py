"""The privacy unit: whose data a publication protects, and how a neighbouring table differs.

One :class:`PrivacyUnit` for every publication (after Tumult's ``ProtectedChange`` and
OpenDP's ``unit_of``): all rows sharing ``id`` (each row its own unit without one), at most
``max_rows`` of them counted, and the change a neighbouring table makes -- ``replace`` (the
unit's rows replaced by any others, the number of units public) or ``add-remove`` (the unit
added or removed, at most ``max_units`` of them). A query's spec writes it as
``unit = { id, max_rows, change, max_units }`` (:func:`parse_unit`).

A release of a table (:mod:`optnoise.table`) protects rows: its unit is :data:`RECORD`,
each row a unit, replaced. Beside it, the release says which changes *of a row's values*
its certificates cover (:class:`ReleaseUnit`): ``"record"`` -- every privatized value may
change to any other value of its column's domain (the standard unit); ``"value"`` -- only
changes within each mechanism's own distances (the papers' model, opt-in). The release
still names them by these two words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InvalidParameterError
from .spec import positive_integer

#: How a neighbouring table differs from the data.
CHANGES: tuple[str, ...] = ("replace", "add-remove")
#: The keys of ``unit = { ... }`` in a spec.
UNIT_KEYS: tuple[str, ...] = ("id", "max_rows", "change", "max_units")
#: The keys of a person in several groups and of the bounding rule (docs/statistics.md).
GROUP_KEYS: tuple[str, ...] = ("max_groups", "max_rows_per_group", "bounding")
#: How a unit's rows (and groups) are chosen when it has more than the bounds keep.
BOUNDINGS: tuple[str, ...] = ("first", "random")

#: What a unit of rows protects under each change, in words (document ``unit.protects``).
UNIT_PROTECTS = {
    "replace": "one unit (all rows sharing its id; without an id column, each row): all its rows replaced by any other rows, "
               "the number of units public",
    "add-remove": "one unit (all rows sharing its id; without an id column, each row) added or removed",
}


@dataclass(frozen=True)
class PrivacyUnit:
    """The privacy unit: all rows sharing ``id`` (each row its own unit without an id column; a
    row with a missing id is refused), at most
    ``max_rows`` of them counted (the unit's first rows in the input's order), and how a
    neighbouring table differs (``replace``: one unit's rows replaced by any other's, the
    number of units public; ``add-remove``: one unit added or removed, at most ``max_units``);
    ``max_groups``, ``max_rows_per_group`` and ``bounding`` (a person in several groups, and
    which rows are kept: docs/statistics.md, "The unit and its contribution bounds")."""

    id: str | None = None
    max_rows: int | None = None
    change: str = "replace"
    max_units: int | None = None
    #: At most this many groups (or keys) kept per unit (``None``: one, its majority).
    max_groups: int | None = None
    #: At most this many of its rows kept in each group (``None``: ``max_rows``).
    max_rows_per_group: int | None = None
    #: ``"first"`` (the input's order) or ``"random"`` (a uniformly random subset).
    bounding: str = "first"

    @property
    def groups_bound(self) -> int:
        """Groups (or cells) a unit is kept in at most: ``max_groups``, else 1."""
        return self.max_groups or 1

    @property
    def group_rows_bound(self) -> int | None:
        """Rows a unit contributes to one group at most: ``max_rows``, or fewer by
        ``max_rows_per_group``."""
        m, r = self.rows_bound, self.max_rows_per_group
        return m if r is None or m is None else min(m, r)

    @property
    def rows_bound(self) -> int | None:
        """Rows a unit contributes at most: ``max_rows``, or 1 when each row is a unit."""
        return 1 if self.id is None else self.max_rows

    @property
    def protects(self) -> str:
        """What the unit protects, in words."""
        return UNIT_PROTECTS[self.change]

    def distance(self, low: int, high: int) -> int:
        """The one rule from the unit to a part's neighbourhood: a released value to which one
        unit contributes anything in ``low..high`` (whatever the other units hold) moves by at
        most ``high - low`` under ``replace`` (the unit's contribution changes from any value
        to any other) and by ``max(-low, high)`` under ``add-remove`` (from nothing to any).
        A statistic's contribution comes from its kind (:mod:`optnoise.query.kinds`); a record's
        privatized value contributes anything of its domain ``0..n``, hence every distance up
        to ``n`` (:func:`optnoise.table.plan.record_neighbourhood`).

        Proof: docs/proofs/derived-neighbourhoods.md
        """
        return (high - low) if self.change == "replace" else max(-low, high)

    def subject(self) -> dict[str, str]:
        """Who an attack on the unit's total is about, in words
        (:func:`~optnoise.analysis.tradeoff.attack_words`'s keywords)."""
        who = f"a {self.id}'s rows" if self.id else "a row"
        if self.change == "add-remove":
            return {"subject": who, "verb": "were", "qualifier": " (A: in the table, B: left out)"}
        return {"subject": who, "verb": "were", "qualifier": ", for any two sets of rows A and B"}

    def to_json(self, units: int | None = None) -> dict[str, Any]:
        """The unit as a document writes it; ``units``: the number of units, public under
        ``replace`` (``None`` under ``add-remove``)."""
        out = {"id": self.id, "max_rows": self.rows_bound, "change": self.change, "max_units": self.max_units,
               "units": units if self.change == "replace" else None, "protects": self.protects}
        return {**out, **self.group_json()}

    def group_json(self) -> dict[str, Any]:
        """The keys of :data:`GROUP_KEYS` that differ from their defaults (absent: none)."""
        out = {k: getattr(self, k) for k in GROUP_KEYS[:2] if getattr(self, k) is not None}
        return {**out, "bounding": self.bounding} if self.bounding != "first" else out


#: Each row its own unit, replaced by any other row: the unit of a release of a table.
RECORD = PrivacyUnit()


def parse_unit(data: Any) -> PrivacyUnit:
    """The unit of a spec, ``{ id, max_rows, change, max_units }``; errors name ``unit.KEY``."""
    if not isinstance(data, Mapping):
        raise InvalidParameterError("unit", data, "{ id = COLUMN, max_rows = M, change = \"replace\" }")
    unknown = sorted(set(data) - set(UNIT_KEYS) - set(GROUP_KEYS))
    if unknown:
        raise InvalidParameterError(f"unit.{unknown[0]}", data[unknown[0]],
                                    f"unit keys {', '.join(UNIT_KEYS + GROUP_KEYS)}")
    uid = data.get("id")
    if uid is not None and (not isinstance(uid, str) or not uid):
        raise InvalidParameterError("unit.id", uid, "a column name")
    max_rows = _optional(data.get("max_rows"), "unit.max_rows", "an integer max_rows >= 1 (rows a unit counts)")
    if max_rows is not None and uid is None and max_rows != 1:
        raise InvalidParameterError("unit.max_rows", max_rows, "max_rows only with an id (without one each row is a "
                                                               "unit)")
    change = data.get("change", "replace")
    if change not in CHANGES:
        raise InvalidParameterError("unit.change", change, "'replace' (default) or 'add-remove'")
    max_units = _optional(data.get("max_units"), "unit.max_units", "a public upper bound on the number of units")
    if change == "add-remove" and max_units is None:
        raise InvalidParameterError("unit.max_units", None, "a public upper bound on the number of units with "
                                                            "change = 'add-remove' (the count's domain)")
    if change == "replace" and max_units is not None:
        raise InvalidParameterError("unit.max_units", max_units, "max_units only with change = 'add-remove' (under "
                                                                 "replace the number of units is public)")
    return PrivacyUnit(uid, max_rows, change, max_units, *parse_groups(data, uid, max_rows))


def parse_groups(data: Mapping[str, Any], uid: str | None, max_rows: int | None) -> tuple[int | None, int | None, str]:
    """``max_groups``, ``max_rows_per_group`` and ``bounding`` of a unit (docs/statistics.md)."""
    groups = _optional(data.get("max_groups"), "unit.max_groups", "an integer max_groups >= 1 (groups a unit is "
                                                                   "kept in)")
    per_group = _optional(data.get("max_rows_per_group"), "unit.max_rows_per_group",
                          "an integer max_rows_per_group >= 1 (rows a unit keeps in each group)")
    bounding = data.get("bounding", "first")
    if bounding not in BOUNDINGS:
        raise InvalidParameterError("unit.bounding", bounding, "'first' (default: the input's order) or 'random' (a "
                                                               "uniformly random subset of a unit's rows and groups)")
    for key, value in (("max_groups", groups), ("max_rows_per_group", per_group)):
        if value is not None and uid is None:
            raise InvalidParameterError(f"unit.{key}", value, f"{key} only with an id (without one each row is a "
                                                              "unit, in one group)")
    if per_group is not None and max_rows is None:
        raise InvalidParameterError("unit.max_rows_per_group", per_group, "max_rows_per_group with max_rows (the "
                                                                          "rows a unit keeps in all)")
    return groups, per_group, bounding


def _optional(value: Any, key: str, accepted: str) -> int | None:
    return None if value is None else positive_integer(value, key, accepted)


# ------------------------------------------------------------------ the units of a release
@dataclass(frozen=True)
class ReleaseUnit:
    """A release's unit: its unit of rows (:data:`RECORD`) and whether a row's privatized
    values are protected against a change to *any* value of their domains (``any_value``) or
    only within each mechanism's own distances; what it protects and leaves out, in words
    (manifest ``unit``)."""

    name: str
    rows: PrivacyUnit
    any_value: bool
    protects: str
    not_protected: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.name, "protects": self.protects, "not_protected": self.not_protected}


#: The units of a release of a table, by the name its spec and manifest use.
RELEASE_UNITS: dict[str, ReleaseUnit] = {
    "record": ReleaseUnit(
        "record", RECORD, True,
        "one record (row): every privatized value of the record may change to any other value of its column's "
        "domain; 'total' is the guarantee for the whole record, 'columns.NAME.certificate' for one column alone",
        "kept columns (copied unchanged); the number of rows and their order"),
    "value": ReleaseUnit(
        "value", RECORD, False,
        "changes of a value by the distances of its column's neighbourhood only (the papers' model, e.g. a peak hour "
        "moving by one hour); 'total' is the guarantee when each privatized value of one record changes within its "
        "neighbourhood",
        "a record whose value changes by more than its column's distances (for example to any other value of the "
        "domain); kept columns; the number of rows and their order"),
}

#: What each release unit protects, in words (manifest ``unit``), by name.
UNIT_WORDS = {name: {"protects": u.protects, "not_protected": u.not_protected} for name, u in RELEASE_UNITS.items()}


__all__ = ["BOUNDINGS", "CHANGES", "GROUP_KEYS", "PrivacyUnit", "RECORD", "RELEASE_UNITS", "ReleaseUnit", "UNIT_KEYS", "UNIT_PROTECTS",
           "UNIT_WORDS", "parse_unit"]
