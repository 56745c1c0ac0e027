"""The per-row rules of :mod:`.aggregate` as Spark column expressions (the Spark engine's JVM path).

Each function mirrors one NumPy rule of :mod:`.aggregate` on a typed (Parquet) column, so
that the rows counted, their cells and their values in units of the resolution are the
local engine's, bit for bit:

* :func:`matches` is :func:`.aggregate.matches`: a missing value (null, NaN) meets no
  condition (Spark orders NaN above every number: it is excluded first); numbers compare as
  doubles, as ``np.isin`` and ``>=`` on float64 do.
* :func:`declared_index` is :func:`.aggregate.declared_index`: integer keys accept an
  integral finite number (``x % 1 == 0``), text keys compare as text; else null (-1 there).
* :func:`scaled_value` is :func:`.aggregate._values`: ``np.rint(x / resolution)`` (the
  float64 quotient, rounded half to even) is Spark's ``rint`` (Java's ``Math.rint``: the same
  IEEE operation) of the same double quotient, then clipped to the integer clamp; a value is
  clamped when ``x < lower`` or ``x > upper`` as doubles. (Not ``bround``/``round``: they
  round the double's decimal text through ``BigDecimal``, slower per row.)

:func:`eligible` says when these apply: every column the rules read as a number is an
integer or floating-point column, every column compared as text is a string column, and the
unit's id is an integer or string column, and every kind is one of :data:`UNIT_RULE_KINDS`.
Anything else (a CSV, read as text and parsed by
pandas; booleans; decimals) keeps the engine's other path, the local engine on the
executors.
"""

from __future__ import annotations

from typing import Any

from .spec import Condition, Keys, QuerySpec, Statistic

#: The kinds whose answers are one of the two unit rules of :mod:`.cells` on the counted rows
#: or values (units at home, or summed in the home group): the rules :mod:`.spark_units`
#: runs in Spark. Another kind keeps the engine's other path (the local engine on the
#: executors), which applies its own rules.
UNIT_RULE_KINDS = ("count", "histogram", "sum", "peak", "mode", "mean")
NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double")
INTEGER = ("tinyint", "smallint", "int", "bigint")


def eligible(types: dict[str, str], spec: QuerySpec) -> bool:
    """Whether the column rules below reproduce the local engine on columns of ``types``
    (name -> Spark simple type string)."""
    from .kinds import kind_of
    uid = spec.unit.id
    if uid is not None and types.get(uid) not in INTEGER + ("string",):
        return False
    for stat in spec.statistics:
        if stat.kind not in UNIT_RULE_KINDS or kind_of(stat).per_unit:   # each unit's own value: the Python path
            return False
        for cond in stat.where:
            values = cond.values or ()
            text = [v for v in values if isinstance(v, str)]
            if text and (len(text) < len(values) or types.get(cond.column) != "string"):
                return False
            if not text and types.get(cond.column) not in NUMERIC:
                return False
        for col, keys in ((stat.key, stat.keys), (stat.by, stat.groups)):
            if col is not None and keys is not None:
                if types.get(col) not in (NUMERIC if keys.integer else ("string",)):
                    return False
        if stat.value_column and types.get(stat.value_column) not in NUMERIC:
            return False
    return True


def number(name: str) -> Any:
    """The column as a double, NaN and null alike missing (:func:`.aggregate._numbers`)."""
    from pyspark.sql import functions as F
    return F.col(f"`{name}`").cast("double")


def present(x: Any) -> Any:
    """Not null and not NaN."""
    from pyspark.sql import functions as F
    return x.isNotNull() & ~F.isnan(x)


def matches(cond: Condition) -> Any:
    """Rows meeting the condition, never null (:func:`.aggregate.matches`)."""
    from pyspark.sql import functions as F
    if cond.values is not None and any(isinstance(v, str) for v in cond.values):
        hit = F.col(f"`{cond.column}`").isin(list(cond.values))
    else:
        x = number(cond.column)
        hit = present(x)
        if cond.values is not None:
            hit &= x.isin([float(v) for v in cond.values])
        if cond.lower is not None:
            hit &= x >= F.lit(float(cond.lower))
        if cond.upper is not None:
            hit &= x <= F.lit(float(cond.upper))
    return F.coalesce(hit, F.lit(False))


def declared_index(name: str, keys: Keys, integral: bool) -> Any:
    """The value's position among the declared keys as a long, null when undeclared or
    missing (:func:`.aggregate.declared_index`); an ``integral`` column's values compare as
    integers (no double on the way, as there)."""
    from pyspark.sql import functions as F
    if not keys.integer:
        lookup = F.create_map(*[F.lit(x) for i, v in enumerate(keys.values) for x in (v, i)])
        return lookup[F.col(f"`{name}`")].cast("long")
    lo, hi = min(keys.values), max(keys.values)
    if integral:
        x = F.col(f"`{name}`").cast("long")
        whole = F.when((x >= F.lit(lo)) & (x <= F.lit(hi)), x)
    else:
        x = number(name)
        inside = present(x) & (x % 1.0 == 0.0) & (x >= F.lit(float(lo))) & (x <= F.lit(float(hi)))
        whole = F.when(inside, x).cast("long")   # |x| <= max |key| here: exact, no overflow
    if keys.values == tuple(range(lo, lo + keys.size)):   # within the range as integers (past 2^53 the
        idx = whole - F.lit(lo)                              # doubles' range test above may round outwards)
        return F.when((idx >= 0) & (idx < keys.size), idx)
    lookup = F.create_map(*[F.lit(x) for i, v in enumerate(keys.values) for x in (v, i)])
    return lookup[whole].cast("long")


def branch_keys(shared: list[list[Statistic]], ids: list[int], types: dict[str, str], kept: Any) -> tuple[Any, Any, dict[int, Any]]:
    """A branch's per-row dimensions (the layouts ``ids`` of ``shared``, which share ``where``
    and ``by``): its ``where`` (never null), ``G`` (the group's index when the row is ``kept``,
    passes ``where`` and its group is declared; 0 for every such row without ``by``; else
    null) and per keyed layout ``i`` its ``K_i`` (the key's index where ``G`` is set, else
    null). Columns of ``types`` (name -> Spark simple type string)."""
    from pyspark.sql import functions as F
    first = shared[ids[0]][0]
    where = F.lit(True)
    for cond in first.where:
        where = where & matches(cond)
    g = declared_index(first.by, first.groups, types[first.by] in INTEGER) if first.by else F.lit(0).cast("long")
    G = F.when(kept & where, g)
    keys = {i: F.when(G.isNotNull(), declared_index(shared[i][0].key, shared[i][0].keys,
                                                    types[shared[i][0].key] in INTEGER))
            for i in ids if shared[i][0].key is not None}
    return where, G, keys


def scaled_value(stat: Statistic) -> tuple[Any, Any, Any]:
    """``(value, clamped, bad)`` of a counted row: the value clamped and rounded in units of
    the resolution (a long), whether it was clamped, whether it is missing or not finite
    (:func:`.aggregate._values`; module docstring for the rounding)."""
    from pyspark.sql import functions as F
    x = number(stat.value_column)   # type: ignore[arg-type]
    lo, hi = stat.clamp   # type: ignore[misc]
    slo, shi = stat.scaled_clamp
    bad = ~present(x) | (F.abs(x) == F.lit(float("inf")))
    scaled = F.rint(x / F.lit(float(stat.resolution)))
    value = F.least(F.greatest(scaled, F.lit(float(slo))), F.lit(float(shi))).cast("long")
    clamped = (x < F.lit(float(lo))) | (x > F.lit(float(hi)))
    return value, clamped, bad


__all__ = ["UNIT_RULE_KINDS", "branch_keys", "eligible", "matches", "declared_index", "scaled_value", "number", "present"]
