"""What to release about a table: the privacy unit, its contribution bounds, the statistics.

One structure, two front doors: a TOML file (``optnoise query --spec FILE.toml``,
:func:`load_query_spec`) and the same structure as a Python dict (:func:`optnoise.query`,
:func:`parse_query_spec`). Keys (docs/statistics.md; the names are part of the contract)::

    unit = { id = "household", max_rows = 24 }   # change = "replace" (default) or "add-remove"
    budget = { epsilon = 3.0, delta = 1e-6 }     # refuse a spec whose total exceeds it
    alpha = 0.05                                 # intervals at 95 %
    [statistics.NAME]
    kind = "count" | "histogram" | "sum" | "peak" | "mode"
    ...

Statistic keys: ``kind``; the target ``epsilon`` [``delta``, ``notion``] or ``share`` (a
fraction of ``budget``); ``where`` (``{ col = v }``, ``{ col = [v, w] }``,
``{ col = { lower = a, upper = b } }``); ``of`` (a count: ``"units"``, default, or
``"rows"``; a peak: the summed column); ``key`` + ``keys`` (``{ lower, upper }`` or a list);
``by`` + ``groups``; ``column`` (a sum); ``clamp`` ``{ lower, upper }`` and ``resolution``
(a sum or a peak); ``method`` (a peak or a mode: ``"answer-noise"``, default, or
``"report-noisy-max"``); ``mechanism`` (``"optimal"``, default, ``"clamped-geometric"``,
``"clamped-discrete-gaussian"``); ``unbiased`` (a count, a histogram or a sum: ``true`` asks
for an unbiased release, on the integers, with its price; default ``false``).

Errors name the key path (``statistics.kwh.clamp``) under the parameter ``spec``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..target import Target, check_epsilon, check_notion
from .kinds import KINDS, Kind
from .statistic import COMMON_KEYS, MECHANISMS, METHODS, Condition, Keys, Statistic, choice, number, where

CHANGES: tuple[str, ...] = ("replace", "add-remove")
#: The epsilons a statistic may take (:func:`_statistic`): what every query mechanism and the
#: randomized-response stand-in of the unit's total certify exactly.
EPSILON_RANGE: tuple[float, float] = (1e-3, 20.0)
TOP_KEYS: tuple[str, ...] = ("unit", "budget", "alpha", "statistics")
UNIT_KEYS: tuple[str, ...] = ("id", "max_rows", "change", "max_units")


@dataclass(frozen=True)
class Unit:
    """The privacy unit: all rows sharing ``id`` (each row without one), at most
    ``max_rows`` of them counted (the unit's first rows in the input's order), and how a
    neighbouring table differs (``replace``: one unit's rows replaced by any other's, the
    number of units public; ``add-remove``: one unit added or removed, at most ``max_units``)."""

    id: str | None = None
    max_rows: int | None = None
    change: str = "replace"
    max_units: int | None = None

    @property
    def rows_bound(self) -> int | None:
        """Rows a unit contributes at most: ``max_rows``, or 1 when each row is a unit."""
        return 1 if self.id is None else self.max_rows


@dataclass(frozen=True)
class QuerySpec:
    """The unit, the optional budget, ``alpha`` and the statistics."""

    unit: Unit
    statistics: tuple[Statistic, ...]
    budget: Target | None = None
    alpha: float = 0.05

    @property
    def columns(self) -> tuple[str, ...]:
        cols = ([self.unit.id] if self.unit.id else []) + [c for s in self.statistics for c in s.columns]
        return tuple(dict.fromkeys(cols))


# ------------------------------------------------------------------ parsing
def load_query_spec(path: str | os.PathLike) -> QuerySpec:
    """Read a TOML spec file (:func:`optnoise.table.spec.read_toml`)."""
    from ..table.spec import read_toml
    return parse_query_spec(read_toml(path))


def parse_query_spec(data: Any) -> QuerySpec:
    """A :class:`QuerySpec` from the TOML structure (a dict); errors name the key path."""
    from ..table.spec import parse_budget, section
    if isinstance(data, QuerySpec):
        return data
    stats = section(data, TOP_KEYS, "statistics", "statistic")
    unit = _unit(data.get("unit", {}))
    budget = None
    if "budget" in data:
        budget = parse_budget(data["budget"])
    alpha = data.get("alpha", 0.05)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError("alpha", alpha, "a number 0 < alpha < 1 (intervals at 1 - alpha)")
    out = []
    for name, table in stats.items():
        try:
            out.append(_statistic(str(name), table, budget, unit))
        except InvalidParameterError as exc:
            raise exc.renamed(f"statistics.{name}.{exc.parameter}") from exc
    return QuerySpec(unit, tuple(out), budget, float(alpha))


def _unit(data: Any) -> Unit:
    if not isinstance(data, Mapping):
        raise InvalidParameterError("unit", data, "{ id = COLUMN, max_rows = M, change = \"replace\" }")
    unknown = sorted(set(data) - set(UNIT_KEYS))
    if unknown:
        raise InvalidParameterError(f"unit.{unknown[0]}", data[unknown[0]], f"unit keys {', '.join(UNIT_KEYS)}")
    uid = data.get("id")
    if uid is not None and (not isinstance(uid, str) or not uid):
        raise InvalidParameterError("unit.id", uid, "a column name")
    max_rows = _positive(data.get("max_rows"), "unit.max_rows", "an integer max_rows >= 1 (rows a unit counts)")
    if max_rows is not None and uid is None and max_rows != 1:
        raise InvalidParameterError("unit.max_rows", max_rows, "max_rows only with an id (without one each row is a "
                                                               "unit)")
    change = data.get("change", "replace")
    if change not in CHANGES:
        raise InvalidParameterError("unit.change", change, "'replace' (default) or 'add-remove'")
    max_units = _positive(data.get("max_units"), "unit.max_units", "a public upper bound on the number of units")
    if change == "add-remove" and max_units is None:
        raise InvalidParameterError("unit.max_units", None, "a public upper bound on the number of units with "
                                                            "change = 'add-remove' (the count's domain)")
    if change == "replace" and max_units is not None:
        raise InvalidParameterError("unit.max_units", max_units, "max_units only with change = 'add-remove' (under "
                                                                 "replace the number of units is public)")
    return Unit(uid, max_rows, change, max_units)


def _positive(value: Any, parameter: str, accepted: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParameterError(parameter, value, accepted)
    return int(value)


def _statistic(name: str, t: Any, budget: Target | None, unit: Unit) -> Statistic:
    """One statistic: its kind (:mod:`.kinds`) reads its own keys; the target, ``where``,
    ``mechanism`` and ``unbiased`` are read here for every kind."""
    if not isinstance(t, Mapping):
        raise InvalidParameterError("spec", f"statistics.{name}", "a table of statistic keys")
    kind = KINDS.get(t.get("kind"))
    allowed = set(COMMON_KEYS) | set(kind.keys)
    unknown = sorted(set(t) - allowed)
    if unknown:
        raise InvalidParameterError(unknown[0], t[unknown[0]], f"keys of a {kind.name}: {', '.join(sorted(allowed))}")
    target, share = _target(t, budget)
    if target.epsilon is not None:
        check_epsilon(target.epsilon, parameter="epsilon", within=EPSILON_RANGE,
                      accepted=f"an epsilon from {EPSILON_RANGE[0]:g} to {EPSILON_RANGE[1]:g} for a statistic (the "
                               "range every mechanism of a query certifies exactly: below, the noise's integer weights "
                               "cannot hold its ratios; above, no randomized response stands in for it in the total)")
    fields: dict[str, Any] = {"where": where(t.get("where", {})), **kind.read(t)}
    fields["mechanism"] = choice(t.get("mechanism", "optimal"), "mechanism", MECHANISMS)
    fields["unbiased"] = _unbiased(t.get("unbiased", False), kind, fields["mechanism"])
    stat = Statistic(name, kind.name, target, share, **fields)
    what = kind.rows_needed(stat)
    if what is not None and unit.rows_bound is None:
        raise InvalidParameterError("unit.max_rows", None, f"max_rows in the unit for {what} (without it one unit "
                                    "can move it without bound)")
    kind.check(stat, unit)
    if stat.method == "report-noisy-max" and target is not None and not target.pure:
        raise InvalidParameterError("delta", target.delta, "no delta with report-noisy-max (pure DP by theorem)")
    return stat


def _unbiased(value: Any, kind: Kind, mechanism: str) -> bool:
    """``unbiased``: a bool, ``true`` only for a kind on a number line, and without a clamped
    family (an unbiased release is not clamped)."""
    if not isinstance(value, bool):
        raise InvalidParameterError("unbiased", value, "true or false (written without quotes)")
    if value and not kind.unbiased:
        offered = [f"a {k}" for k in KINDS.names() if KINDS.get(k).unbiased]
        listed = ", ".join(offered[:-1]) + f" or {offered[-1]}" if len(offered) > 1 else offered[0]
        raise InvalidParameterError("unbiased", value, f"false for a {kind.name} (its answer is a key, which has no "
                                    f"mean: unbiased = true is for {listed})")
    if value and mechanism != "optimal":
        raise InvalidParameterError("unbiased", value, f"false with mechanism = '{mechanism}' (an unbiased release "
                                    "is on the integers, not clamped: leave mechanism out)")
    return value


def _target(t: Mapping[str, Any], budget: Target | None) -> tuple[Target, float | None]:
    share = t.get("share")
    if share is not None:
        if "epsilon" in t or "delta" in t:
            raise InvalidParameterError("share", share, "either share or epsilon (and delta), not both")
        if budget is None or budget.notion == "attack":
            raise InvalidParameterError("share", share, "a share of a budget in epsilon and delta: give budget = "
                                        "{ epsilon, delta } (an attack budget has no epsilon to share: give each "
                                        "statistic its epsilon)")
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise InvalidParameterError("share", share, "a fraction 0 < share <= 1 of the budget")
        return Target(budget.epsilon * share, budget.delta * share, check_notion(t.get("notion", "dp"))), float(share)
    if "epsilon" not in t:
        raise InvalidParameterError("epsilon", None, "a target epsilon (and optional delta, notion) or a share of "
                                                     "the budget")
    return Target(number(t["epsilon"], "epsilon"), number(t.get("delta", 0.0), "delta"),
                  check_notion(t.get("notion", "dp"))), None


__all__ = ["CHANGES", "METHODS", "MECHANISMS", "Condition", "Keys", "QuerySpec", "Statistic", "Unit",
           "load_query_spec", "parse_query_spec"]
