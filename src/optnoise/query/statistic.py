"""One statistic of a query: its data type and the readers of its spec fields.

A :class:`Statistic` holds the fields every kind may use (``kind``, the target, ``where``,
the key and group columns with their declared values, a value column with its clamp and
resolution, the method and mechanism choices); which fields a kind takes, and how it reads
them, is the kind's own business (:mod:`.kinds`). The readers here apply the one set of
rules for what a spec may write (:mod:`optnoise.publish.spec`: numbers written as numbers;
here names as text, declared values as a range or a list); errors name the key under the
parameter ``spec`` path the caller prefixes (``statistics.NAME.KEY``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..publish.spec import choice, number
from ..target import Target

#: Mechanism choices of a number (count, histogram, sum) and methods of a key (peak, mode).
MECHANISMS: tuple[str, ...] = ("optimal", "clamped-geometric", "clamped-discrete-gaussian")
METHODS: tuple[str, ...] = ("answer-noise", "report-noisy-max")
#: ``keys = "from-data"``: a histogram's keys found in the data (:mod:`.found`).
FROM_DATA = "from-data"
#: Keys every kind takes besides its own.
COMMON_KEYS: tuple[str, ...] = ("kind", "epsilon", "delta", "notion", "share", "where", "mechanism", "unbiased")


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
    """One statistic of the spec (:mod:`.spec` for the keys; its kind in :mod:`.kinds`).

    ``value_column`` is the numeric column the statistic adds up (a sum's ``column``, a
    peak's ``of``), set by its kind when the spec is read."""

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
    value_column: str | None = None
    #: A quantile's levels, increasing in ``(0, 1)`` (exact fractions of the decimals written).
    quantiles: tuple[Fraction, ...] = ()
    #: A histogram of units whose cells add up to the public number of units (:mod:`.consistent`).
    consistent: bool = False
    #: ``within``: the consistent histogram a consistent histogram ``by`` groups adds up to, and
    #: the map of its groups to that one's (:class:`.hierarchy.Within`).
    within: Any = None
    #: ``keys = "from-data"``: the keys are the values found in the data (:mod:`.found`), each
    #: released only when its noisy count passes a threshold (:mod:`.threshold`).
    keys_from_data: bool = False
    #: ``mechanism = { file = "PATH" }``: the file whose mechanism releases the cells (:mod:`.filecell`).
    mechanism_file: str | None = None
    #: ``clamp = "auto"``: the clamp's upper bound to choose privately (:mod:`.autobound`).
    auto_clamp: Any = None
    #: A count, sum or mean by a key found in the data: the share of its epsilon spent on the
    #: noisy counts of units that select its keys (:mod:`.found`).
    selection_share: float | None = None
    #: The statistic (a histogram of units with keys found in the data) whose released keys are
    #: the only ones this statistic's values are released for (:func:`.found.with_selections`).
    selected_by: str | None = None
    #: A sum or mean by declared groups and a key found in the data: a unit's rows kept in its
    #: ``max_groups`` (group, key) cells of most counted rows -- the cells its selection counts it
    #: in -- not in its groups (:func:`.cells.summed_cells`; a layout of its own,
    #: :func:`.aggregate.layouts`).
    keep_cells: bool = False

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

    @property
    def shape(self) -> tuple[int, int]:
        """Groups x keys: the statistic's cells before its kind reads them (a quantile's keys
        are the points of its grid, clamp lower to upper by the resolution: units per point)."""
        if self.quantiles:
            lo, hi = self.scaled_clamp
            return (self.groups.size if self.groups else 1), hi - lo + 1
        return (self.groups.size if self.groups else 1), (self.keys.size if self.keys else 1)


# ------------------------------------------------------------------ field readers
def column(value: Any, key: str) -> str:
    """A column name."""
    if not isinstance(value, str) or not value:
        raise InvalidParameterError(key, value, "a column name")
    return value


def declared(value: Any, key: str) -> Keys:
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


def where(value: Any) -> tuple[Condition, ...]:
    """The ``where`` conditions."""
    if not isinstance(value, Mapping):
        raise InvalidParameterError("where", value, "{ column = value, column = [values], column = { lower, upper } }")
    out = []
    for col, cond in value.items():
        if isinstance(cond, Mapping):
            if not set(cond) or set(cond) - {"lower", "upper"}:
                raise InvalidParameterError(f"where.{col}", dict(cond), "{ lower = A, upper = B } (either may be "
                                                                        "left out)")
            lo = None if "lower" not in cond else number(cond["lower"], f"where.{col}.lower")
            hi = None if "upper" not in cond else number(cond["upper"], f"where.{col}.upper")
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


def clamp(value: Any, resolution: Any) -> tuple[tuple[Fraction, Fraction], Fraction]:
    """The clamp and the resolution as exact fractions (the decimal written: 0.1 is 1/10); the
    bounds must be multiples of the resolution so that clamped, rounded values are integers
    in its units."""
    if not isinstance(value, Mapping) or set(value) != {"lower", "upper"}:
        raise InvalidParameterError("clamp", value, "{ lower = L, upper = U }: every value is clamped to it")
    lo, hi = (Fraction(str(number(value[k], f"clamp.{k}"))) for k in ("lower", "upper"))
    if hi <= lo:
        raise InvalidParameterError("clamp", dict(value), "lower < upper")
    res = Fraction(str(number(resolution, "resolution")))
    if res <= 0:
        raise InvalidParameterError("resolution", resolution, "a step > 0 that values are rounded to")
    if (lo / res).denominator != 1 or (hi / res).denominator != 1:
        raise InvalidParameterError("resolution", resolution, f"a step that divides the clamp bounds {lo}, {hi}")
    if (hi - lo) / res > 10**9:
        raise InvalidParameterError("resolution", resolution, "a step giving at most 1e9 values between the bounds")
    return (lo, hi), res


__all__ = ["COMMON_KEYS", "FROM_DATA", "Condition", "Keys", "MECHANISMS", "METHODS", "Statistic", "choice", "clamp", "column",
           "declared", "number", "where"]
