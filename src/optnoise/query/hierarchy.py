"""Hierarchies of consistent histograms: which statistic each one adds up to, read and checked.

A consistent histogram ``by`` groups adds up, key by key, to its *parent* (:mod:`.consistent`):

* by default (one level, as before) the overall consistent histogram of the same key, keys
  and ``where`` (:func:`parent_of`);
* with ``within = { statistic = "NAME", map = { g = "G", ... } }`` the named consistent
  histogram, whose ``by`` is a coarser column: ``map`` sends each of the child's groups to one
  of the parent's groups (public, declared, never read from the data), and every parent group
  receives at least one. A parent without ``by`` takes no ``map``.

The parents form a forest (a cycle is refused), released top down: :func:`top_down` orders
the (child, parent) pairs by depth, parents first, each depth in the spec's order -- for the
one-level specs of before, the spec's order of the children, as before. Refusals (before any
noise, one line naming ``statistics.NAME.within``): ``within`` without ``consistent = true`` or
without ``by``, an unknown or inconsistent parent, a parent of another key, keys or ``where``,
a map that misses or repeats a group, names a group the parent does not declare, or leaves a
parent group empty, a cycle.

Proof: docs/proofs/consistent-tables.md ("Hierarchies of any depth")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InvalidParameterError
from .statistic import Statistic


@dataclass(frozen=True)
class Within:
    """``within``: the parent statistic's name and, when the parent has ``by``, each child
    group's parent group as labels (``Keys.labels``), in the order the spec wrote them."""

    statistic: str
    map: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        return {"statistic": self.statistic, **({"map": dict(self.map)} if self.map else {})}


def read_within(t: Mapping[str, Any]) -> dict[str, Any]:
    """``within = { statistic = "NAME", map = { CHILD = PARENT, ... } }`` as a :class:`Within`
    (``{}`` when absent); what the map's groups must be is checked against the statistics
    (:func:`check_within`)."""
    if "within" not in t:
        return {}
    value = t["within"]
    if not isinstance(value, Mapping) or "statistic" not in value or set(value) - {"statistic", "map"}:
        raise InvalidParameterError("within", value, "{ statistic = \"NAME\", map = { GROUP = PARENT_GROUP, ... } } "
                                    "(map: each of this statistic's groups to a group of statistic NAME)")
    name = value["statistic"]
    if not isinstance(name, str) or not name:
        raise InvalidParameterError("within.statistic", name, "the name of a consistent histogram of this spec")
    pairs = value.get("map", {})
    if not isinstance(pairs, Mapping) or any(isinstance(v, bool) or not isinstance(v, (int, str))
                                             for v in pairs.values()):
        raise InvalidParameterError("within.map", pairs, "{ GROUP = PARENT_GROUP, ... }: each group of this "
                                    "statistic to one declared group (an integer or a text) of the parent")
    return {"within": Within(name, tuple((str(k), str(v)) for k, v in pairs.items()))}


def parent_of(stat: Statistic, others: Sequence[Statistic]) -> Statistic | None:
    """The consistent histogram that ``stat`` (consistent, ``by`` groups) adds up to: the one
    named by ``within``, otherwise the first of ``others`` without ``by`` over the same key,
    keys and ``where`` (one level, as before ``within``)."""
    if not stat.consistent or stat.by is None:
        return None
    within = getattr(stat, "within", None)
    if within is not None:
        return next((o for o in others if o.name == within.statistic), None)
    for other in others:
        if other.consistent and other.by is None and other.key == stat.key and other.keys == stat.keys \
                and other.where == stat.where and other.of == stat.of == "units":
            return other
    return None


def homes(child: Statistic, parent: Statistic) -> np.ndarray:
    """Each of the child's groups' parent group, as an index into the parent's groups (all
    0 when the parent has no ``by``)."""
    if parent.groups is None:
        return np.zeros(child.groups.size, np.int64)  # type: ignore[union-attr]
    index = {g: i for i, g in enumerate(parent.groups.labels())}
    sent = dict(child.within.map)  # type: ignore[union-attr]
    return np.array([index[sent[g]] for g in child.groups.labels()], np.int64)  # type: ignore[union-attr]


def top_down(stats: Sequence[Statistic]) -> list[tuple[Statistic, Statistic]]:
    """The (child, parent) pairs of the consistent histograms, parents' pairs first: by depth,
    each depth in the spec's order (module docstring)."""
    parent = {s.name: p for s in stats if (p := parent_of(s, stats)) is not None}
    by_name = {s.name: s for s in stats}

    def depth(name: str) -> int:
        d = 0
        while name in parent and d <= len(stats):
            name, d = parent[name].name, d + 1
        return d

    order = sorted((s for s in stats if s.name in parent), key=lambda s: depth(s.name))   # stable
    return [(by_name[s.name], parent[s.name]) for s in order]


# ------------------------------------------------------------------ refusals
def check_within(stats: Sequence[Statistic]) -> None:
    """Refuse a bad ``within`` (module docstring), naming ``statistics.NAME.within``."""
    by_name = {s.name: s for s in stats}
    for stat in stats:
        seen, name = [stat.name], stat.name
        while (w := getattr(by_name.get(name), "within", None)) is not None and w.statistic in by_name:
            name = w.statistic
            if name in seen:
                raise InvalidParameterError(f"statistics.{stat.name}.within", " -> ".join([*seen, name]),
                                            "a parent that is not below this statistic (the levels form a tree, "
                                            "released top down: no cycle)")
            seen.append(name)
    for stat in stats:
        within = getattr(stat, "within", None)
        if within is None:
            continue
        try:
            _check_one(stat, within, by_name)
        except InvalidParameterError as exc:
            raise exc.renamed(f"statistics.{stat.name}.{exc.parameter}") from exc


def _check_one(stat: Statistic, within: Within, by_name: Mapping[str, Statistic]) -> None:
    """One statistic's ``within`` against its parent (module docstring)."""
    if not stat.consistent or stat.by is None:
        raise InvalidParameterError("within", within.to_json(), "within only on a histogram with `by` and "
                                    "consistent = true (the level below its parent)")
    parent = by_name.get(within.statistic)
    if parent is None or parent.kind != "histogram" or not parent.consistent:
        raise InvalidParameterError("within.statistic", within.statistic,
                                    "the name of another histogram of this spec with consistent = true "
                                    f"({', '.join(s.name for s in by_name.values() if s.consistent and s is not stat) or 'none here'})")
    for field, words in (("key", "key"), ("keys", "keys"), ("where", "where"), ("of", "of")):
        if getattr(parent, field) != getattr(stat, field):
            raise InvalidParameterError("within.statistic", within.statistic, f"a histogram with the same {words} as "
                                        f"this one (statistic '{parent.name}' differs in {words}: its cells cannot "
                                        "be the sums of this one's)")
    _check_map(stat, within, parent)


def _check_map(stat: Statistic, within: Within, parent: Statistic) -> None:
    """The map sends each child group to a declared parent group, every parent group receives one."""
    sent = dict(within.map)
    if parent.groups is None:
        if sent:
            raise InvalidParameterError("within.map", sent, f"no map: statistic '{parent.name}' has no `by` (every "
                                        "group adds up to its one row)")
        return
    ours, theirs = stat.groups.labels(), parent.groups.labels()  # type: ignore[union-attr]
    missing = [g for g in ours if g not in sent]
    if missing:
        raise InvalidParameterError("within.map", sent, f"every group of this statistic, each to a group of "
                                    f"'{parent.name}': group {missing[0]} is missing")
    extra = [g for g in sent if g not in ours]
    if extra:
        raise InvalidParameterError("within.map", sent, f"only this statistic's groups ({', '.join(ours)}): "
                                    f"{extra[0]} is not one")
    unknown = [v for v in sent.values() if v not in theirs]
    if unknown:
        raise InvalidParameterError("within.map", sent, f"groups of '{parent.name}' ({', '.join(theirs)}) as "
                                    f"values: {unknown[0]} is not one")
    empty = [g for g in theirs if g not in sent.values()]
    if empty:
        raise InvalidParameterError("within.map", sent, f"at least one group into each group of '{parent.name}': "
                                    f"none into {empty[0]} (its cells could not be sums)")


__all__ = ["Within", "check_within", "homes", "parent_of", "read_within", "top_down"]
