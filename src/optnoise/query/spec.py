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

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..publish.spec import choice as _choice
from ..publish.spec import number as _number
from ..publish.spec import parse_budget, read_toml, section
from ..publish.unit import CHANGES, UNIT_KEYS, PrivacyUnit, parse_unit
from ..target import Target, check_notion

KINDS: tuple[str, ...] = ("count", "histogram", "sum", "peak", "mode")
METHODS: tuple[str, ...] = ("answer-noise", "report-noisy-max")
MECHANISMS: tuple[str, ...] = ("optimal", "clamped-geometric", "clamped-discrete-gaussian")
TOP_KEYS: tuple[str, ...] = ("unit", "budget", "alpha", "statistics")
STAT_KEYS: tuple[str, ...] = ("kind", "epsilon", "delta", "notion", "share", "where", "of", "key", "keys", "by",
                              "groups", "column", "clamp", "resolution", "method", "mechanism", "unbiased")
#: Which keys each kind takes beyond the target, ``where`` and ``mechanism``.
KIND_KEYS: dict[str, tuple[str, ...]] = {
    "count": ("of",), "histogram": ("key", "keys", "by", "groups", "of"),
    "sum": ("column", "clamp", "resolution", "by", "groups"),
    "peak": ("key", "keys", "of", "clamp", "resolution", "by", "groups", "method"),
    "mode": ("key", "keys", "by", "groups", "method"),
}
COMMON_KEYS: tuple[str, ...] = ("kind", "epsilon", "delta", "notion", "share", "where", "mechanism", "unbiased")
#: The kinds ``unbiased = true`` is offered for (answers on a number line).
UNBIASED_KINDS: tuple[str, ...] = ("count", "histogram", "sum")


#: The privacy unit (:class:`optnoise.publish.unit.PrivacyUnit`), by its former name.
Unit = PrivacyUnit


@dataclass(frozen=True)
class Keys:
    """Declared (public) values of a key or group column, in order: integers or text."""

    values: tuple[Any, ...]

    @property
    def integer(self) -> bool:
        return all(isinstance(v, int) for v in self.values)

    @property
    def size(self) -> int:
        return len(self.values)

    def labels(self) -> list[str]:
        return [str(v) for v in self.values]


@dataclass(frozen=True)
class Condition:
    """One ``where`` condition: ``column`` equal to one of ``values``, or within ``lower..upper``."""

    column: str
    values: tuple[Any, ...] | None = None
    lower: float | None = None
    upper: float | None = None


@dataclass(frozen=True)
class Statistic:
    """One statistic of the spec (module docstring for the keys)."""

    name: str
    kind: str
    target: Target | None = None
    share: float | None = None
    where: tuple[Condition, ...] = ()
    of: str = "units"
    column: str | None = None
    key: str | None = None
    keys: Keys | None = None
    by: str | None = None
    groups: Keys | None = None
    clamp: tuple[Fraction, Fraction] | None = None
    resolution: Fraction = Fraction(1)
    method: str = "answer-noise"
    mechanism: str = "optimal"
    unbiased: bool = False

    @property
    def value_column(self) -> str | None:
        """The numeric column a sum or a peak adds up."""
        return self.column if self.kind == "sum" else self.of if self.kind == "peak" else None

    @property
    def columns(self) -> tuple[str, ...]:
        """Every data column the statistic reads."""
        cols = [c.column for c in self.where] + [x for x in (self.value_column, self.key, self.by) if x]
        return tuple(dict.fromkeys(cols))

    @property
    def scaled_clamp(self) -> tuple[int, int]:
        """The clamp in units of the resolution (integers)."""
        lo, hi = self.clamp  # type: ignore[misc]
        return int(lo / self.resolution), int(hi / self.resolution)


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
    """Read a TOML spec file (:func:`optnoise.publish.spec.read_toml`)."""
    return parse_query_spec(read_toml(path))


def parse_query_spec(data: Any) -> QuerySpec:
    """A :class:`QuerySpec` from the TOML structure (a dict); errors name the key path."""
    if isinstance(data, QuerySpec):
        return data
    stats = section(data, TOP_KEYS, "statistics", "statistic")
    unit = parse_unit(data.get("unit", {}))
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


def _statistic(name: str, t: Any, budget: Target | None, unit: Unit) -> Statistic:
    if not isinstance(t, Mapping):
        raise InvalidParameterError("spec", f"statistics.{name}", "a table of statistic keys")
    kind = t.get("kind")
    if kind not in KINDS:
        raise InvalidParameterError("kind", kind, ", ".join(KINDS))
    allowed = set(COMMON_KEYS) | set(KIND_KEYS[kind])
    unknown = sorted(set(t) - allowed)
    if unknown:
        raise InvalidParameterError(unknown[0], t[unknown[0]], f"keys of a {kind}: {', '.join(sorted(allowed))}")
    target, share = _target(t, budget)
    fields: dict[str, Any] = {"where": _where(t.get("where", {}))}
    if kind in ("count", "histogram"):
        fields["of"] = _choice(t.get("of", "units"), "of", ("units", "rows"))
    if kind in ("histogram", "peak", "mode"):
        fields["key"] = _column(t.get("key"), "key")
        fields["keys"] = _keys(t.get("keys"), "keys")
    if "by" in t or "groups" in t:
        fields["by"] = _column(t.get("by"), "by")
        fields["groups"] = _keys(t.get("groups"), "groups")
    if kind in ("sum", "peak"):
        fields["column" if kind == "sum" else "of"] = _column(t.get("column" if kind == "sum" else "of"),
                                                              "column" if kind == "sum" else "of")
        fields["clamp"], fields["resolution"] = _clamp(t.get("clamp"), t.get("resolution", 1))
    if kind in ("peak", "mode"):
        fields["method"] = _choice(t.get("method", "answer-noise"), "method", METHODS)
    fields["mechanism"] = _choice(t.get("mechanism", "optimal"), "mechanism", MECHANISMS)
    fields["unbiased"] = _unbiased(t.get("unbiased", False), kind, fields["mechanism"])
    stat = Statistic(name, kind, target, share, **fields)
    needs_rows = kind in ("sum", "peak") or (kind in ("count", "histogram") and stat.of == "rows")
    if needs_rows and unit.rows_bound is None:
        raise InvalidParameterError("unit.max_rows", None, f"max_rows in the unit for a {kind}"
                                    f"{' of rows' if kind in ('count', 'histogram') else ''} (without it one unit can move it "
                                    "without bound)")
    if stat.method == "report-noisy-max" and target is not None and not target.pure:
        raise InvalidParameterError("delta", target.delta, "no delta with report-noisy-max (pure DP by theorem)")
    return stat


def _unbiased(value: Any, kind: str, mechanism: str) -> bool:
    """``unbiased``: a bool, ``true`` only for a count, a histogram or a sum, and without a
    clamped family (an unbiased release is not clamped)."""
    if not isinstance(value, bool):
        raise InvalidParameterError("unbiased", value, "true or false (written without quotes)")
    if value and kind not in UNBIASED_KINDS:
        raise InvalidParameterError("unbiased", value, f"false for a {kind} (its answer is a key, which has no mean: "
                                    "unbiased = true is for a count, a histogram or a sum)")
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
    return Target(_number(t["epsilon"], "epsilon"), _number(t.get("delta", 0.0), "delta"),
                  check_notion(t.get("notion", "dp"))), None


def _column(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidParameterError(key, value, "a column name")
    return value


def _keys(value: Any, key: str) -> Keys:
    """Declared values: ``{ lower = a, upper = b }`` (integers a..b) or a list (integers or text)."""
    if isinstance(value, Mapping):
        if set(value) != {"lower", "upper"}:
            raise InvalidParameterError(key, dict(value), "{ lower = A, upper = B } (integers) or a list of values")
        lo, hi = value["lower"], value["upper"]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (lo, hi)) or hi <= lo:
            raise InvalidParameterError(key, dict(value), "integers lower < upper")
        if hi - lo >= 1_000_000:
            raise InvalidParameterError(key, dict(value), "at most 1,000,000 declared values")
        return Keys(tuple(range(lo, hi + 1)))
    if isinstance(value, (list, tuple)) and value:
        vals = tuple(value)
        if not (all(isinstance(v, int) and not isinstance(v, bool) for v in vals) or
                all(isinstance(v, str) for v in vals)):
            raise InvalidParameterError(key, list(vals), "a list of integers or a list of texts (one type)")
        if len(set(vals)) != len(vals):
            raise InvalidParameterError(key, list(vals), "distinct values")
        return Keys(vals)
    raise InvalidParameterError(key, value, "the declared values: { lower = A, upper = B } or a non-empty list "
                                            "(public; never taken from the data)")


def _where(value: Any) -> tuple[Condition, ...]:
    if not isinstance(value, Mapping):
        raise InvalidParameterError("where", value, "{ column = value, column = [values], column = { lower, upper } }")
    out = []
    for col, cond in value.items():
        if isinstance(cond, Mapping):
            if not set(cond) or set(cond) - {"lower", "upper"}:
                raise InvalidParameterError(f"where.{col}", dict(cond), "{ lower = A, upper = B } (either may be "
                                                                        "left out)")
            lo = None if "lower" not in cond else _number(cond["lower"], f"where.{col}.lower")
            hi = None if "upper" not in cond else _number(cond["upper"], f"where.{col}.upper")
            out.append(Condition(str(col), lower=lo, upper=hi))
        elif isinstance(cond, (list, tuple)):
            if not cond or not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in cond):
                raise InvalidParameterError(f"where.{col}", list(cond), "a non-empty list of numbers or texts")
            out.append(Condition(str(col), values=tuple(cond)))
        elif isinstance(cond, (int, float, str)) and not isinstance(cond, bool):
            out.append(Condition(str(col), values=(cond,)))
        else:
            raise InvalidParameterError(f"where.{col}", cond, "a value, a list of values or { lower, upper }")
    return tuple(out)


def _clamp(value: Any, resolution: Any) -> tuple[tuple[Fraction, Fraction], Fraction]:
    """The clamp and the resolution as exact fractions (the decimal written: 0.1 is 1/10); the
    bounds must be multiples of the resolution so that clamped, rounded values are integers
    in its units."""
    if not isinstance(value, Mapping) or set(value) != {"lower", "upper"}:
        raise InvalidParameterError("clamp", value, "{ lower = L, upper = U }: every value is clamped to it")
    lo, hi = (Fraction(str(_number(value[k], f"clamp.{k}"))) for k in ("lower", "upper"))
    if hi <= lo:
        raise InvalidParameterError("clamp", dict(value), "lower < upper")
    res = Fraction(str(_number(resolution, "resolution")))
    if res <= 0:
        raise InvalidParameterError("resolution", resolution, "a step > 0 that values are rounded to")
    if (lo / res).denominator != 1 or (hi / res).denominator != 1:
        raise InvalidParameterError("resolution", resolution, f"a step that divides the clamp bounds {lo}, {hi}")
    if (hi - lo) / res > 10**9:
        raise InvalidParameterError("resolution", resolution, "a step giving at most 1e9 values between the bounds")
    return (lo, hi), res


__all__ = ["CHANGES", "KINDS", "METHODS", "MECHANISMS", "UNBIASED_KINDS", "Condition", "Keys", "QuerySpec",
           "Statistic", "UNIT_KEYS", "Unit", "load_query_spec", "parse_query_spec"]
