"""What to release about a table: the privacy unit, its contribution bounds, the statistics.

One structure, two front doors: a TOML file (``optnoise query --spec FILE.toml``,
:func:`load_query_spec`) and the same structure as a Python dict (:func:`optnoise.query`,
:func:`parse_query_spec`). Keys (docs/statistics.md; the names are part of the contract)::

    unit = { id = "household", max_rows = 24 }   # change = "replace" (default) or "add-remove"
                                                 # max_groups, max_rows_per_group, bounding = "first" | "random"
    budget = { epsilon = 3.0, delta = 1e-6 }     # refuse a spec whose total exceeds it
    alpha = 0.05                                 # intervals at 95 %
    [statistics.NAME]
    kind = "count" | "histogram" | "sum" | "peak" | "mode" | "mean" | "quantile" | "median"
    ...

Statistic keys: ``kind``; the target ``epsilon`` [``delta``, ``notion``] or ``share`` (a
fraction of ``budget``); ``where`` (``{ col = v }``, ``{ col = [v, w] }``,
``{ col = { lower = a, upper = b } }``); ``of`` (a count: ``"units"``, default, or
``"rows"``; a peak: the summed column); ``key`` + ``keys`` (``{ lower, upper }`` or a list; ``"from-data"``: a histogram's, or a count's,
sum's or mean's by key, with ``selection_share`` and optionally declared ``by`` groups, :mod:`.found`);
``by`` + ``groups``; ``column`` (a sum); ``clamp`` ``{ lower, upper }`` and ``resolution``
(a sum, a peak, a mean, a quantile: its public grid); ``quantiles`` (a quantile's levels, e.g.
``[0.25, 0.5, 0.75]``; a median has 0.5); ``method`` (a peak or a mode: ``"answer-noise"``, default, or
``"report-noisy-max"``); ``mechanism`` (``"optimal"``, default, ``"clamped-geometric"``,
``"clamped-discrete-gaussian"``); ``unbiased`` (a count, a histogram or a sum: ``true`` asks
for an unbiased release, on the integers, with its price; default ``false``); ``consistent``
(a histogram of units under ``replace``: ``true`` makes its cells add up to the public number
of units, :mod:`.consistent`; default ``false``); ``within`` (a consistent histogram ``by``
groups: ``{ statistic = "NAME", map = { GROUP = PARENT_GROUP } }``, the level above it,
:mod:`.hierarchy`).

Bounds chosen privately (:mod:`.auto_spec`, :mod:`.autobound`): ``unit.max_rows = "auto"``
(with ``bound_epsilon``, ``coverage``, ``max_rows_cap``) and a statistic's ``clamp = "auto"``
(with ``clamp_cap``, ``clamp_epsilon``, ``clamp_coverage``).

Errors name the key path (``statistics.kwh.clamp``) under the parameter ``spec``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..publish.spec import parse_budget, read_toml, section
from ..publish.unit import CHANGES, UNIT_KEYS, PrivacyUnit, parse_unit
from ..target import Target, check_epsilon, check_notion
from .auto_spec import AutoRows, check_auto, clamp_target, parse_auto, split_auto, split_clamp
from .consistent_found import check_hierarchies
from .found import with_selections
from .hierarchy import check_within
from .kinds import KINDS, Kind
from .statistic import COMMON_KEYS, MECHANISMS, METHODS, Condition, Keys, Statistic, choice, number, where

#: The epsilons a statistic may take (:func:`_statistic`): what every query mechanism and the
#: randomized-response stand-in of the unit's total certify exactly.
EPSILON_RANGE: tuple[float, float] = (1e-3, 20.0)
TOP_KEYS: tuple[str, ...] = ("unit", "budget", "alpha", "statistics", "ledger")


#: The privacy unit (:class:`optnoise.publish.unit.PrivacyUnit`), by its former name.
Unit = PrivacyUnit


@dataclass(frozen=True)
class QuerySpec:
    """The unit, the optional budget, ``alpha`` and the statistics."""

    unit: Unit
    statistics: tuple[Statistic, ...]
    budget: Target | None = None
    alpha: float = 0.05
    #: The dataset's privacy ledger to charge (``ledger = "PATH"``; ``--ledger`` overrides it).
    ledger: str | None = None
    #: ``unit.max_rows = "auto"``: the bound to choose privately (:mod:`.autobound`).
    auto_rows: AutoRows | None = None
    #: The bounds chosen privately (:class:`.autobound.ChosenBound`), once chosen.
    bounds: tuple[Any, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        cols = ([self.unit.id] if self.unit.id else []) + [c for s in self.statistics for c in s.columns]
        return tuple(dict.fromkeys(cols))


# ------------------------------------------------------------------ parsing
def load_query_spec(path: str | os.PathLike) -> QuerySpec:
    """Read a TOML spec file (:func:`optnoise.publish.spec.read_toml`)."""
    return parse_query_spec(read_toml(path))


def parse_query_spec(data: Any) -> QuerySpec:
    """A :class:`QuerySpec` from the TOML structure (a dict); errors name the key path."""
    if isinstance(data, QuerySpec):
        return data
    stats = section(data, TOP_KEYS, "statistics", "statistic")
    unit_table, auto = split_auto(data.get("unit", {}))
    unit = parse_unit(unit_table)
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
    out = with_selections(out, smallest_epsilon=EPSILON_RANGE[0])   # counts, sums and means by a found key
    check_hierarchies(out)   # consistent tables of keys found in the data stand alone
    check_within(out)        # hierarchies of consistent histograms (within)
    ledger = data.get("ledger")
    if ledger is not None and (not isinstance(ledger, str) or not ledger):
        raise InvalidParameterError("ledger", ledger, "the path of the dataset's ledger (optnoise ledger init), as text")
    auto_rows = parse_auto(auto, budget, [float(s.target.epsilon) for s in out if s.target.epsilon is not None])
    check_auto(auto_rows, out)
    return QuerySpec(unit, tuple(out), budget, float(alpha), ledger, auto_rows)


def _statistic(name: str, t: Any, budget: Target | None, unit: Unit) -> Statistic:
    """One statistic: its kind (:mod:`.kinds`) reads its own keys; the target, ``where``,
    ``mechanism`` and ``unbiased`` are read here for every kind."""
    if not isinstance(t, Mapping):
        raise InvalidParameterError("spec", f"statistics.{name}", "a table of statistic keys")
    kind = KINDS.get(t.get("kind"))
    t, auto_clamp = split_clamp(t, kind.name)
    allowed = set(COMMON_KEYS) | set(kind.keys)
    unknown = sorted(set(t) - allowed)
    if unknown:
        raise InvalidParameterError(unknown[0], t[unknown[0]], f"keys of a {kind.name}: {', '.join(sorted(allowed))}")
    target, share = _target(t, budget)
    target, clamp_request = clamp_target(auto_clamp, target)
    if target.epsilon is not None:
        check_epsilon(target.epsilon, parameter="epsilon", within=EPSILON_RANGE,
                      accepted=f"an epsilon from {EPSILON_RANGE[0]:g} to {EPSILON_RANGE[1]:g} for a statistic (the "
                               "range every mechanism of a query certifies exactly: below, the noise's integer weights "
                               "cannot hold its ratios; above, no randomized response stands in for it in the total)")
    fields: dict[str, Any] = {"where": where(t.get("where", {})), **kind.read(t)}
    fields.update(_mechanism(t.get("mechanism", "optimal"), kind))
    fields["unbiased"] = _unbiased(t.get("unbiased", False), kind, fields["mechanism"])
    stat = Statistic(name, kind.name, target, share, **fields, auto_clamp=clamp_request)
    what = kind.rows_needed(stat)
    if what is not None and unit.rows_bound is None:
        raise InvalidParameterError("unit.max_rows", None, f"max_rows in the unit for {what} (without it one unit "
                                    "can move it without bound)")
    kind.check(stat, unit)
    if stat.method == "report-noisy-max" and target is not None and not target.pure:
        raise InvalidParameterError("delta", target.delta, "no delta with report-noisy-max (pure DP by theorem)")
    return stat


#: The kinds whose cells a mechanism file may release (:mod:`.filecell`).
FILE_KINDS = ("count", "histogram", "sum")


def _mechanism(value: Any, kind: Kind) -> dict[str, Any]:
    """``mechanism``: one of :data:`MECHANISMS`, or ``{ file = "PATH" }`` (a count, histogram or
    sum whose cells the file's mechanism releases, re-certified: :mod:`.filecell`)."""
    if isinstance(value, Mapping):
        path = value.get("file")
        if set(value) != {"file"} or not isinstance(path, str) or not path:
            raise InvalidParameterError("mechanism", dict(value), "{ file = \"PATH\" } (a mechanism file written by "
                                        "optnoise design or save) or one of " + ", ".join(MECHANISMS))
        if kind.name not in FILE_KINDS:
            raise InvalidParameterError("mechanism", dict(value), f"one of {', '.join(MECHANISMS)} for a {kind.name} "
                                        f"(a mechanism file releases the cells of a {', '.join(FILE_KINDS)})")
        return {"mechanism": "file", "mechanism_file": path}
    return {"mechanism": choice(value, "mechanism", MECHANISMS)}


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


__all__ = ["CHANGES", "EPSILON_RANGE", "METHODS", "MECHANISMS", "Condition", "Keys", "QuerySpec", "Statistic",
           "UNIT_KEYS", "Unit", "load_query_spec", "parse_query_spec"]
