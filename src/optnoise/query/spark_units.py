"""The Spark engine's JVM path: the unit rules of every statistic on the executors.

Used by :func:`.spark.aggregate_spark` for a Parquet file whose columns have the types of
:func:`.spark_rules.eligible`. No unit's rows reach the driver, whatever the units: the
driver receives one row per (layout, cell) -- at most ``groups x keys + 1`` rows per layout
-- so its memory does not depend on the number of rows or units (issue 38). One Spark job,
one shuffle of the rows (by unit), in four steps:

1. *Rank* (with an id and ``max_rows``): ``row_number() over (partition by unit order by
   read index)``; a row is kept when its rank is at most ``max_rows`` (the local engine's
   first-``max_rows``-rows rule). The rows are then partitioned by unit, which every later
   step reuses (no second shuffle of the rows).
2. *Per row and layout* (:func:`layout_fields`; a layout is :func:`.aggregate.layouts`'s:
   statistics sharing ``where``, ``by`` and ``key``): the kept, counted row's cell and group,
   its clamped, rounded values (the column rules of :mod:`.spark_rules`), the flags of what
   is not counted and of clamped values, its read index when its value is bad.
3. *Per (unit, layout, cell)*: a hash aggregation -- the per-(unit, cell) aggregate of the
   local engine (counted rows, values) with the counts of what was left out.
4. *Per unit* (windows over the unit's cells in one layout): its home cell (most counted
   rows, ties to the least cell: :func:`.cells.units_at_home`), its home group (most counted
   rows, ties to the least group: :func:`.cells.summed_cells` under ``by``), whether its rows
   lie in several cells; then per (layout, cell) the units at home, the rows and values of the
   units whose home group it is, and the counts. Each unit counts once, in its own partition.

The driver (:func:`assemble`) makes each statistic's grid from its column: the units at home
for a kind that counts units (``Kind.counts_units``), else the rows or the values summed in
the home group, and ``from_cells`` (the kind's ``from_grid``) -- the kinds' rules, as
:func:`.aggregate.answers` applies them to the same per-(unit, cell) aggregate.

Without an id each row is a unit (one row, one cell): step 3 groups by (layout, cell) alone.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from .aggregate import Aggregated, carriers, layouts
from .cells import bump
from .kinds import from_cells, kind_of
from .spec import QuerySpec, Statistic

ROW, UNIT, KEPT = "__optnoise_row", "__optnoise_unit", "__optnoise_kept"
BAD_VALUE = "OPTNOISE_BAD_VALUE"
#: Where the local engine's errors name a row (:func:`.aggregate.unit_ids`, ``_values``):
#: on Spark that number is the row's read index, turned into its data row here.
DATA_ROW = re.compile(r"at data row (\d+)")


def value_slots(group: list[Statistic]) -> tuple[list[Statistic], dict[str, int]]:
    """A layout's summed columns, one per distinct (column, clamp, resolution) -- two peaks of
    the same column by two methods share one -- and each summing statistic's slot."""
    first: dict[tuple, int] = {}
    chosen: list[Statistic] = []
    slot: dict[str, int] = {}
    for stat in carriers(group):
        if stat.value_column:
            key = (stat.value_column, stat.clamp, stat.resolution)
            if key not in first:
                first[key] = len(chosen)
                chosen.append(stat)
            slot[stat.name] = first[key]
    return chosen, slot


def layout_fields(spec: QuerySpec, types: dict[str, str]) -> tuple[list[list[Statistic]], int, list[list[Any]]]:
    """The layouts, the number of value slots (the most of one layout: :func:`value_slots`)
    and per layout the per-row columns: ``cell`` and ``grp`` (null unless the row is kept and
    counted), ``ok`` (kept), ``nw`` (kept, fails ``where``), ``ud`` (kept, passes ``where``,
    an undeclared or missing key or group), and per slot ``v`` (the clamped, rounded value),
    ``cl`` (clamped) and ``b`` (the read index when the value is bad: missing or not finite)."""
    from pyspark.sql import functions as F

    from .spark_rules import INTEGER, declared_index, matches, scaled_value
    shared = layouts(spec.statistics)
    width = max(len(value_slots(group)[0]) for group in shared)
    kept = F.col(KEPT)
    zero = F.lit(0).cast("long")
    out = []
    for group in shared:
        first = group[0]
        where = F.lit(True)
        for cond in first.where:
            where = where & matches(cond)
        g, k = (declared_index(col, keys, types[col] in INTEGER) if col and keys else zero
                for col, keys in ((first.by, first.groups), (first.key, first.keys)))
        counted = kept & where & g.isNotNull() & k.isNotNull()
        fields = [F.when(counted, g * (first.keys.size if first.keys else 1) + k).alias("cell"),
                  F.when(counted, g).alias("grp"), kept.cast("long").alias("ok"),
                  (kept & ~where).cast("long").alias("nw"), (kept & where & ~counted).cast("long").alias("ud")]
        for j, stat in enumerate(value_slots(group)[0]):
            value, clamped, bad = scaled_value(stat)
            good = counted & ~bad
            fields += [F.when(good, value).otherwise(zero).alias(f"v{j}"), (good & clamped).cast("long").alias(f"cl{j}"),
                       F.when(counted & bad, F.col(ROW)).alias(f"b{j}")]
        out.append(fields)
    return shared, width, out


def per_row(rows: Any, spec: QuerySpec) -> tuple[list[Any], list[list[Statistic]], int]:
    """Per layout, one row per input row: the unit (with an id), the layout and
    :func:`layout_fields`'s columns. (One frame per layout, not one row per (input row,
    layout) through ``inline``: Spark's generator runs several times slower than the
    projections it replaces.)"""
    from pyspark.sql import functions as F
    shared, width, fields = layout_fields(spec, {f.name: f.dataType.simpleString() for f in rows.schema.fields})
    base = [F.col(UNIT)] if spec.unit.id is not None else []
    return [rows.select(*base, F.lit(i).alias("layout"), *f) for i, f in enumerate(fields)], shared, width


def ranked(keyed: Any, spec: QuerySpec) -> Any:
    """``keyed`` with :data:`KEPT`: among its unit's first ``max_rows`` rows by the read index
    (a window partitioned by unit), or every row when there is no id or no ``max_rows``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    m = spec.unit.rows_bound
    if spec.unit.id is None or m is None:
        return keyed.withColumn(KEPT, F.lit(True))
    return keyed.withColumn(KEPT, F.row_number().over(Window.partitionBy(UNIT).orderBy(ROW)) <= m)


def _slots(width: int, values: bool = True) -> list[Any]:
    """The sums of ``nw``, ``ud``, ``cl*`` (and ``v*``) and the least ``b*``."""
    from pyspark.sql import functions as F
    return [F.sum("nw").alias("nw"), F.sum("ud").alias("ud")] + [
        agg for j in range(width) for agg in ([F.sum(f"v{j}").alias(f"v{j}")] * values +
                                              [F.sum(f"cl{j}").alias(f"cl{j}"), F.min(f"b{j}").alias(f"b{j}")])]


def unit_cells(rows: Any, width: int, group: list[Statistic]) -> Any:
    """Steps 3 and 4 (module docstring) for one layout: per cell, the units at home
    (``units``), the rows and values of the units whose home group holds it (``rows``,
    ``v*``), the counted rows (``n``), the rows outside their unit's group (``outside``), the
    units at home there with rows in several cells (``several``), the counts (``nw``, ``ud``,
    ``cl*``, the least bad row ``b*``, ``total``, ``kept``), the units (``nunits``: one row of
    each) and whether a row had no id (``noid``). Only the windows the layout's kinds read
    are computed (a home cell for a kind that counts units, a home group under ``by`` for
    one that sums)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    homes = any(kind_of(s).counts_units(s) for s in group)
    grouped = group[0].by is not None and not all(kind_of(s).counts_units(s) for s in group)
    cells = rows.groupBy(UNIT, "layout", "cell").agg(F.count(F.lit(1)).alias("total"), F.sum("ok").alias("kept"),
                                                     F.min("grp").alias("grp"), *_slots(width))
    c, kept = F.col("cell"), F.col("kept")
    counted = F.when(c.isNotNull(), kept)
    unit = Window.partitionBy(UNIT)

    def best(score: Any, index: Any) -> Any:   # the index of most score, ties to the least
        return -F.max(F.when(c.isNotNull(), F.struct(score.alias("a"), (-index).alias("b")))).over(unit)["b"]
    t = cells.withColumn("grows", F.sum(counted).over(Window.partitionBy(UNIT, "grp"))) if grouped else cells
    t = t.withColumns({"first": F.min(F.coalesce(c, F.lit(-1))).over(unit),
                       **({"home": best(kept, c), "ncells": F.count(c).over(unit)} if homes else {}),
                       **({"hgrp": best(F.col("grows"), F.col("grp"))} if grouped else {})})
    at_home = (c.isNotNull() & (c == F.col("home"))) if homes else F.lit(False)
    in_group = (c.isNotNull() & (F.col("grp") == F.col("hgrp"))) if grouped else c.isNotNull()
    several = (at_home & (F.col("ncells") > 1)) if homes else F.lit(False)
    one = F.coalesce(c, F.lit(-1)) == F.col("first")
    return t.groupBy("layout", "cell").agg(
        F.sum(at_home.cast("long")).alias("units"), F.sum(F.when(in_group, kept)).alias("rows"),
        *[F.sum(F.when(in_group, F.col(f"v{j}"))).alias(f"v{j}") for j in range(width)],
        F.sum(counted).alias("n"), F.sum(F.when(c.isNotNull() & ~in_group, kept)).alias("outside"),
        F.sum(several.cast("long")).alias("several"), *_slots(width, values=False),
        F.sum("total").alias("total"), F.sum("kept").alias("kept"), F.sum(one.cast("long")).alias("nunits"),
        F.max((one & F.col(UNIT).isNull()).cast("long")).alias("noid"))


def row_cells(rows: Any, width: int) -> Any:
    """:func:`unit_cells` without an id: each row is a unit, at its cell."""
    from pyspark.sql import functions as F
    zero = F.lit(0).cast("long")
    counted = F.when(F.col("cell").isNotNull(), F.col("ok"))
    return rows.groupBy("layout", "cell").agg(
        F.sum(counted).alias("units"), F.sum(counted).alias("rows"), *[F.sum(f"v{j}").alias(f"v{j}") for j in range(width)],
        F.sum(counted).alias("n"), zero.alias("outside"), zero.alias("several"), *_slots(width, values=False),
        F.count(F.lit(1)).alias("total"), F.sum("ok").alias("kept"), F.count(F.lit(1)).alias("nunits"),
        zero.alias("noid"))


def aggregate_jvm(raw: Any, spec: QuerySpec) -> Aggregated:
    """The JVM path (module docstring): one job, one collect of the per-cell table.

    Proof: docs/proofs/spark-bounding.md
    """
    from pyspark.sql import functions as F
    uid = spec.unit.id
    keyed = ranked(raw.withColumn(UNIT, F.col(f"`{uid}`")) if uid is not None else raw, spec)
    frames, shared, width = per_row(keyed, spec)
    union = None
    for rows, group in zip(frames, shared):
        used = len(value_slots(group)[0])
        table = unit_cells(rows, used, group) if uid is not None else row_cells(rows, used)
        table = table.withColumns({name: F.lit(None if name[0] == "b" else 0).cast("long") for j in range(used, width)
                                   for name in (f"v{j}", f"cl{j}", f"b{j}")})
        union = table if union is None else union.unionByName(table)   # the rows' shuffle by unit: one, reused
    got = to_frame(union)
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    first = got[got["layout"] == 0]
    out.rows, out.kept, out.units = (int(first[c].sum()) for c in ("total", "kept", "nunits"))
    noid = first_without_id(keyed) if bool((got["noid"] > 0).any()) else None
    refuse_bad(noid, got, shared, keyed, spec)
    return assemble(out, got, shared)


def assemble(out: Aggregated, got: Any, shared: list[list[Statistic]]) -> Aggregated:
    """The driver's part: each statistic's counts and exact answers from the per-cell table
    (module docstring)."""
    for i, group in enumerate(shared):
        rows = got[got["layout"] == i]
        counted = rows[rows["cell"].notna()]
        cell = counted["cell"].to_numpy(np.int64)
        slot = value_slots(group)[1]
        for stat in group:
            counts = out.counts[stat.name]
            bump(counts, "rows_not_matching_where", int(rows["nw"].sum()))
            bump(counts, "rows_undeclared_key_or_group", int(rows["ud"].sum()))
            if stat.name in slot:
                bump(counts, "values_clamped", int(rows[f"cl{slot[stat.name]}"].sum()))
            bump(counts, "rows_counted_before_unit_rules", int(counted["n"].sum()))
        for stat in group:
            counts, kind = out.counts[stat.name], kind_of(stat)
            if kind.counts_units(stat):
                what = counted["units"]
                bump(counts, "units_with_rows_in_several_cells", int(counted["several"].sum()))
            else:
                what = counted[f"v{slot[stat.name]}" if stat.name in slot else "rows"]
                if stat.by is not None:
                    bump(counts, "rows_outside_the_units_group", int(counted["outside"].sum()))
            grid = np.zeros(stat.shape, np.int64)
            np.add.at(grid.reshape(-1), cell, what.fillna(0).to_numpy(np.int64))
            out.answered[stat.name] = from_cells(stat, grid)
    return out


def first_without_id(keyed: Any) -> int:
    """The read index of the first row without an id (a job run only when there is one)."""
    from pyspark.sql import functions as F
    return int(to_frame(keyed.filter(F.col(UNIT).isNull()).agg(F.min(ROW).alias("r")))["r"].iloc[0])


def to_frame(df: Any) -> Any:
    """A small Spark result as pandas through Arrow; integer columns as pandas ``Int64``
    (nullable, exact: no float round trip); a failed job is one line (:func:`arrow`)."""
    import pandas as pd
    import pyarrow as pa

    return arrow(df).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)


def arrow(df: Any) -> Any:
    """``df.toArrow()``; a failed job (a sum beyond the long range under ANSI mode, a lost
    executor) is one line (:func:`optnoise.publish.spark.marked_failure`)."""
    from ..publish.spark import job_failure, marked_failure, quiet_failures
    try:
        with quiet_failures():
            return df.toArrow()
    except Exception as exc:   # noqa: BLE001 -- every job failure becomes one line
        info = marked_failure(exc, BAD_VALUE)
        raise (info if isinstance(info, Exception) else job_failure(exc)) from None


def refuse_bad(noid: int | None, got: Any, shared: list[list[Statistic]], keyed: Any, spec: QuerySpec) -> None:
    """Raise the local engine's error for the first row (in input order) without an id
    (``noid``: its read index) or with a bad value in a kept, counted row of a summed column
    (``b*`` of the per-cell table); nothing when none."""
    from pyspark.sql import functions as F
    found: list[tuple[int, int, str]] = []   # (row index, 0 id / 1 value, column)
    if noid is not None:
        found.append((noid, 0, spec.unit.id or ""))
    for i, group in enumerate(shared):
        rows = got[got["layout"] == i]
        for j, stat in enumerate(value_slots(group)[0]):
            bad = rows[f"b{j}"].dropna()
            if len(bad):
                found.append((int(bad.min()), 1, stat.value_column))   # type: ignore[arg-type]
    if not found:
        return
    at, kind, col = min(found)
    row = keyed.filter(F.col(ROW) <= at).count()
    if kind == 0:
        raise InvalidParameterError("unit.id", f"column '{col}': missing value at data row {row}",
                                    "an id in every row (a row without one belongs to no unit)")
    raw = keyed.filter(F.col(ROW) == at).select(f"`{col}`").toPandas()[col].iloc[0]
    raise InvalidParameterError(f"column '{col}'", f"{'missing value' if raw is None or raw != raw else repr(raw)}"
                                f" at data row {row}", "numbers in a summed column (a missing or non-numeric value "
                                                       "is not imputed)")


__all__ = ["value_slots", "BAD_VALUE", "DATA_ROW", "KEPT", "ROW", "UNIT", "aggregate_jvm", "arrow", "assemble", "first_without_id",
           "layout_fields", "per_row", "ranked", "refuse_bad", "row_cells", "to_frame", "unit_cells"]
