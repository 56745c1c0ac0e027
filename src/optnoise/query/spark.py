"""The Spark engine of the statistics (``optnoise query --engine spark``; extra ``spark``).

The contribution bounding and the group-by run on Spark; only small aggregates reach the
driver, where :func:`optnoise.query.release.build_document` plans, certifies, composes and
draws exactly as for the local engine (same document, ``engine: "spark"``). Every row gets
its index in the input when the file is read (``monotonically_increasing_id`` on the read:
increasing along a file's rows, since Spark's file partitions follow the file's order): the
order of the first-``max_rows``-rows rule. Two paths, the same answers and counts:

**The JVM path** (a Parquet file whose columns have the types of
:func:`.spark_rules.eligible`: the bench's and the usual case). The per-row rules are Spark
column expressions (:mod:`.spark_rules`, bit for bit the local engine's), and the rest are
Spark aggregations, so no row goes through Python:

1. *Per (unit, layout)* (a hash aggregation, combined before the shuffle, as a plain
   group-by): rows, counted rows, the least and greatest cell, the rows failing ``where``
   (when there is one), the clamped, rounded values and the clamped rows summed, the first
   bad value, and (with ``max_rows``) the unit's last row by the read index (``max_by``)
   (a layout is :func:`.aggregate.layouts`'s: statistics sharing ``where``, ``by`` and
   ``key``; the rows not counted that pass ``where`` are derived, as the rows kept less the
   counted and the failing).
2. *Per unit* (on those aggregates; a window over the unit's layouts when there are
   several): a unit with at most one counted cell per layout and at most ``max_rows`` rows
   -- most units -- needs no rule (its home cell and group are that cell's, nothing is
   dropped), so it is summed into its cell's totals with the number of such units. A unit of
   exactly ``max_rows + 1`` rows (a day of 25 hourly readings) in one cell is one too: its
   last row is taken out of its sums, which leaves its first ``max_rows`` rows. The others
   (rows in several cells, or more rows) stay per unit and cell. One collect (through
   Arrow) brings that table. Rows without an id aggregate as one null unit, never simple,
   which the driver refuses (a second job finds the first such row).
3. Only when some units are not simple, a second job ranks *their* rows alone: on the
   driver by the local engine when they are few (an ``IN`` filter on the scan), else on
   Spark (a broadcast join on those units, ``row_number`` by the read index), and
   aggregates their first ``max_rows`` rows as in 1; they replace those units' rows.
4. The driver applies :func:`.aggregate.answers` (the local engine's unit rules and
   counts) to the units kept per unit, and adds the simple units' cell totals.

A Parquet file is read with the schema of its footer (:func:`parquet_schema`): Spark's own
inference would read the footer again in a job of its own.

**The Python path** (a CSV, read as text and parsed as pandas does; other column types):
one shuffle by unit (hash-partitioned by the id as text, sorted by (unit, index), so every
unit's rows lie in one partition in input order; no shuffle without ``id``), then per
partition on the executors (``mapInArrow``: Arrow batches, each column's type kept) the local engine itself,
:func:`.aggregate.aggregate` and :func:`.aggregate.answers`; every rule depends on one
unit's rows alone and a unit is in one partition, so the partitions' cell totals and counts
add up to the local engine's exactly. The driver sums them (one collect) and derives each
statistic's answers (:func:`.aggregate.from_cells`).

A bad value (a missing id, a non-number in a summed column) stops the query with its data
row in the file, counted by a second job from the failing row's index. The session is
:func:`optnoise.publish.spark.spark_session`'s (quiet JVM).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

import numpy as np

from ..errors import InvalidParameterError, OptnoiseError
from .aggregate import Aggregated, aggregate, answers, arrow_to_pandas, carriers, layouts
from .cells import Answers, bump
from .kinds import from_cells, kind_of
from .spark_rules import eligible
from .spec import QuerySpec, Statistic

ROW, UNIT = "__optnoise_row", "__optnoise_unit"
BAD_VALUE = "OPTNOISE_BAD_VALUE"
#: Where the local engine's errors name a row (:func:`.aggregate.unit_ids`, ``_values``):
#: on Spark that number is the row's read index, turned into its data row here.
DATA_ROW = re.compile(r"at data row (\d+)")
SCHEMA = "stat int, group long, key long, n long, counter string"
def arrow_schema() -> Any:
    """:data:`SCHEMA` as an Arrow schema (the executors' batches)."""
    import pyarrow as pa
    return pa.schema([("stat", pa.int32()), ("group", pa.int64()), ("key", pa.int64()), ("n", pa.int64()),
                      ("counter", pa.string())])


#: The ``stat`` of the partition's own counts (rows read, rows kept, units).
TOTALS = -1


def aggregate_spark(input_path: str | os.PathLike, fmt: str, spec: QuerySpec, *,
                    master: str | None = None) -> Aggregated:
    """Bound and aggregate on Spark in one job; an :class:`.Aggregated` whose ``answered``
    holds every statistic's exact answers (module docstring).

    Proof: docs/proofs/spark-bounding.md
    """
    from pyspark.sql import functions as F

    from ..publish.spark import spark_session
    spark = spark_session(master)
    raw = read_input(spark, input_path, fmt, list(spec.columns)).withColumn(ROW, F.monotonically_increasing_id())
    if fmt != "csv" and eligible({f.name: f.dataType.simpleString() for f in raw.schema.fields}, spec) \
            and not any(kind_of(s).per_unit for s in spec.statistics):
        return aggregate_jvm(spark, raw, spec)
    uid = spec.unit.id
    if uid is not None:
        keyed = raw.withColumn(UNIT, F.col(f"`{uid}`").cast("string"))
        raw_rows = keyed.repartition(UNIT).sortWithinPartitions(UNIT, ROW).drop(UNIT)
    else:
        raw_rows = raw
    from ..publish.spark import quiet_failures
    try:
        with quiet_failures():
            rows = raw_rows.mapInArrow(_per_partition(spec), SCHEMA).collect()
    except Exception as exc:   # a failed job: a bad value, or something else
        raise _job_error(exc, raw) from None
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    grids = {s.name: np.zeros(kind_of(s).grid_shape(s), np.int64) for s in spec.statistics}
    for r in rows:
        if r["stat"] == TOTALS:
            setattr(out, r["counter"], getattr(out, r["counter"]) + int(r["n"]))
        elif r["counter"] is not None:
            counts = out.counts[spec.statistics[r["stat"]].name]
            counts[r["counter"]] = counts.get(r["counter"], 0) + int(r["n"])
        else:
            grids[spec.statistics[r["stat"]].name][int(r["group"]), int(r["key"])] += int(r["n"])
    for stat in spec.statistics:
        out.answered[stat.name] = from_cells(stat, grids[stat.name])
    return out


#: Rows per batch handed to the local engine on an executor (Arrow sends batches of 10,000).
BATCH_ROWS = 1 << 17


def rebatch(batches: Iterator[Any], rows: int = BATCH_ROWS) -> Iterator[Any]:
    """The Arrow record batches joined into tables of at least ``rows`` rows (the last one
    shorter), in order: fewer, larger batches for :func:`.aggregate.aggregate` (memory: one
    batch). Arrow, not pandas: each column keeps its type, so an integer column with a missing
    value is read by :func:`.aggregate.arrow_to_pandas` as nullable integers, as locally --
    never as floats that would round keys beyond 2^53 (docs/proofs/spark-bounding.md)."""
    import pyarrow as pa
    held: list = []
    size = 0
    for batch in batches:
        held.append(batch)
        size += batch.num_rows
        if size >= rows:
            yield pa.Table.from_batches(held)
            held, size = [], 0
    if held:
        yield pa.Table.from_batches(held)


def _per_partition(spec: QuerySpec) -> Any:
    """The executors' function: the local engine over one partition's batches (every unit's
    rows in this partition, in input order), yielding its totals and counts as rows."""
    stats = spec.statistics
    kinds = [kind_of(stat) for stat in stats]   # shipped with the function: the executor needs no registry

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        import pyarrow as pa
        try:
            agg = aggregate(rebatch(batches), spec, row_column=ROW)
            found = [answers(agg, stat, kind) for stat, kind in zip(stats, kinds)]
        except InvalidParameterError as exc:
            raise RuntimeError(BAD_VALUE + json.dumps({"parameter": exc.parameter, "value": str(exc.value),
                                                       "accepted": exc.accepted})) from None
        if not agg.rows:
            return
        out: list[tuple] = [(TOTALS, 0, 0, n, name) for name, n in
                            (("rows", agg.rows), ("kept", agg.kept), ("units", agg.units))]
        for i, (stat, kind, ans) in enumerate(zip(stats, kinds, found)):
            grid = kind.grid(ans)   # before from_cells
            g, k = np.nonzero(grid)
            out += [(i, int(a), int(b), int(grid[a, b]), None) for a, b in zip(g, k)]
            out += [(i, 0, 0, int(n), name) for name, n in agg.counts[stat.name].items()]
        frame = pd.DataFrame(out, columns=["stat", "group", "key", "n", "counter"]).astype(
            {"stat": "int32", "group": "int64", "key": "int64", "n": "int64", "counter": "object"})
        yield pa.RecordBatch.from_pandas(frame, schema=arrow_schema(), preserve_index=False)
    return run


def read_input(spark: Any, path: str | os.PathLike, fmt: str, columns: list[str]) -> Any:
    """The spec's columns; a CSV's as text, as the local engine reads them; a Parquet file's
    with the schema its footer gives (:func:`parquet_schema`) when every column maps. The
    file is the driver's (:func:`optnoise.publish.spark.local_file`)."""
    from ..publish.spark import local_file
    if fmt == "csv":
        from pyspark.sql.types import StringType, StructField, StructType

        from ..publish.files import column_names
        text = StructType([StructField(c, StringType()) for c in column_names(path, fmt)])
        df = spark.read.option("header", True).schema(text).csv(local_file(path))
    else:
        schema = parquet_schema(path, columns)
        reader = spark.read if schema is None else spark.read.schema(schema)
        df = reader.parquet(local_file(path))
    return df.select(*[f"`{c}`" for c in columns])


def parquet_schema(path: str | os.PathLike, columns: list[str]) -> Any:
    """The Spark schema of ``columns`` of a Parquet file, read from its footer by pyarrow on
    the driver, or ``None`` when a column's type is not one mapped here (Spark then infers
    the schema itself).

    Why: Spark's own inference opens the file in a job of its own (1-1.5 s of a query on a
    fresh session, docs/benchmarks.md). Only the types whose Spark reading is the one Spark
    infers are mapped -- signed integers, floats, booleans and UTF-8 text, dictionary-encoded
    or not -- so the columns read, and the path :func:`.spark_rules.eligible` takes, are
    those of inference."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import types as T
    simple = {pa.int8(): T.ByteType(), pa.int16(): T.ShortType(), pa.int32(): T.IntegerType(),
              pa.int64(): T.LongType(), pa.float32(): T.FloatType(), pa.float64(): T.DoubleType(),
              pa.bool_(): T.BooleanType(), pa.string(): T.StringType(), pa.large_string(): T.StringType()}
    try:
        arrow = pq.read_schema(path)
        kinds = [arrow.field(name).type for name in columns]
    except Exception:   # noqa: BLE001 -- Spark's own reading reports it
        return None
    fields = []
    for name, kind in zip(columns, kinds):
        kind = kind.value_type if pa.types.is_dictionary(kind) else kind
        if kind not in simple:
            return None
        fields.append(T.StructField(name, simple[kind]))
    return T.StructType(fields)


def _job_error(exc: Exception, raw: Any) -> Exception:
    """A bad value's error with its data row in the file, or a one-line job failure
    (:func:`optnoise.publish.spark.bad_value`)."""
    from pyspark.sql import functions as F

    from ..publish.spark import bad_value

    def row(m: re.Match) -> str:
        return f"at data row {raw.filter(F.col(ROW) <= int(m.group(1))).count()}"
    return bad_value(exc, BAD_VALUE, lambda info: DATA_ROW.sub(row, info["value"]))


__all__ = ["aggregate_spark", "parquet_schema", "read_input"]


# ------------------------------------------------------------------ the JVM path (typed columns)
def _layout_fields(spec: QuerySpec, types: dict[str, str]) -> tuple[list[list[Statistic]], int, bool, list[list[Any]]]:
    """The layouts (:func:`.aggregate.layouts`), the number of value slots (the most summed
    statistics of one layout), whether any layout has a ``where``, and per layout the per-row
    columns: the row's cell (null when not counted), ``nw`` (fails ``where``; only when some
    layout has one) and per slot the clamped, rounded value, the clamped flag and the row's
    index when its value is bad (missing or not finite). A row that is neither counted nor
    failing ``where`` has an undeclared key or group: ``ud`` is derived from the counts."""
    from pyspark.sql import functions as F

    from .spark_rules import INTEGER, declared_index, matches, scaled_value
    shared = layouts(spec.statistics)
    width = max(len([s for s in carriers(group) if s.value_column]) for group in shared)
    filtered = any(group[0].where for group in shared)
    out = []
    for group in shared:
        first = group[0]
        where = F.lit(True)
        for cond in first.where:
            where = where & matches(cond)
        g, k = (declared_index(col, keys, types[col] in INTEGER) if col and keys else F.lit(0).cast("long")
                for col, keys in ((first.by, first.groups), (first.key, first.keys)))
        counted = where & g.isNotNull() & k.isNotNull()
        fields = [F.when(counted, g * (first.keys.size if first.keys else 1) + k).alias("cell")]
        if filtered:
            fields.append((~where).cast("long").alias("nw"))
        valued = [s for s in carriers(group) if s.value_column]
        for j in range(width):
            if j < len(valued):
                value, clamped, bad = scaled_value(valued[j])
                good = counted & ~bad
                fields += [F.when(good, value).otherwise(F.lit(0).cast("long")).alias(f"v{j}"),
                           (good & clamped).cast("long").alias(f"cl{j}"), F.when(counted & bad, F.col(ROW)).alias(f"b{j}")]
            else:
                fields += [F.lit(0).cast("long").alias(f"v{j}"), F.lit(0).cast("long").alias(f"cl{j}"),
                           F.lit(None).cast("long").alias(f"b{j}")]
        out.append(fields)
    return shared, width, filtered, out


def _sums(width: int, filtered: bool) -> list[Any]:
    """The aggregates of the flags, values and bad rows (``nw`` when some layout has a
    ``where``, ``v*``, ``cl*``, ``b*``)."""
    from pyspark.sql import functions as F
    return ([F.sum("nw").alias("nw")] if filtered else []) + [
        agg for j in range(width) for agg in (F.sum(f"v{j}").alias(f"v{j}"), F.sum(f"cl{j}").alias(f"cl{j}"),
                                              F.min(f"b{j}").alias(f"b{j}"))]


def _per_row(rows: Any, spec: QuerySpec) -> tuple[Any, list[list[Statistic]], int, bool]:
    """One row per (input row, layout): the unit, the row's index, the layout (with several),
    the layout's cell, flags and values (:func:`_layout_fields`)."""
    from pyspark.sql import functions as F
    shared, width, filtered, fields = _layout_fields(spec, {f.name: f.dataType.simpleString()
                                                            for f in rows.schema.fields})
    base = [F.col(UNIT), F.col(ROW)] if spec.unit.id is not None else [F.col(ROW)]
    if len(fields) == 1:
        return rows.select(*base, *fields[0]), shared, width, filtered
    tagged = [F.struct(F.lit(i).alias("layout"), *f) for i, f in enumerate(fields)]
    return rows.select(*base, F.inline(F.array(*tagged))), shared, width, filtered


def _layout_key(several: bool) -> Any:
    """The layout as a grouping key: the per-row column, or 0 with one layout (a constant
    key, which Spark drops from the hash)."""
    from pyspark.sql import functions as F
    return F.col("layout") if several else F.lit(0).alias("layout")


def _by_cell(per_row: Any, width: int, filtered: bool, by_unit: bool, several: bool) -> Any:
    """Per (unit, layout, cell) (without an id: per (layout, cell), ``unit`` null): ``n``,
    ``total`` and ``kept`` rows, ``nw`` and ``ud`` (the rows not counted that pass ``where``)
    and :func:`_sums`; ``units`` (without an id: every row is one)."""
    from pyspark.sql import functions as F
    keys = [F.col(UNIT).alias("unit")] if by_unit else [F.lit(None).cast("long").alias("unit")]
    out = per_row.groupBy(*keys, _layout_key(several), "cell").agg(F.count(F.lit(1)).alias("n"),
                                                                   *_sums(width, filtered))
    nw = F.col("nw") if filtered else F.lit(0).cast("long")
    return out.withColumns({"units": F.lit(0).cast("long") if by_unit else F.col("n"), "total": F.col("n"),
                            "kept": F.col("n"), "nw": nw,
                            "ud": F.when(F.col("cell").isNull(), F.col("n") - nw).otherwise(F.lit(0).cast("long")),
                            "noid": F.lit(0).cast("long")})


def _by_unit(per_row: Any, width: int, filtered: bool, max_rows: int | None, several: bool) -> Any:
    """Job 1: per (unit, layout) -- a hash aggregation combined before the shuffle, as a
    plain group-by -- then the *simple* units summed per (layout, cell) with ``unit`` null.

    A unit is simple when its counted rows lie in at most one cell in every layout and it has
    at most ``max_rows`` rows, or ``max_rows + 1`` (a day of 25 hourly readings): then its
    last row (in input order: ``max_by`` on the read index, one more aggregate) is taken out
    of its sums, which leaves exactly its first ``max_rows`` rows. With several layouts a
    window over the unit's layouts decides. The sums: ``units`` their number, ``n`` their
    counted rows, ``total`` all their rows, ``kept`` the rows kept, ``nw`` and ``ud`` the
    rows not counted. Every other unit is one row per layout (``unit``, ``total`` its rows,
    ``kept`` at most ``max_rows``; ``cell`` null), for job 2. ``noid`` is 1 where a row had no
    id (the rows without an id aggregate as one null unit, never simple)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    slots = ["nw"] * filtered + [f"{c}{j}" for j in range(width) for c in ("v", "cl")]
    last = []
    if max_rows is not None:   # one max_by per field: fixed-width buffers keep the hash aggregation
        last = [F.max(ROW).alias("last_r")] + [F.max_by(c, ROW).alias(f"last_{c}") for c in ["cell"] + slots]
    unit = per_row.groupBy(UNIT, _layout_key(several)).agg(
        F.count(F.lit(1)).alias("n"), F.count("cell").alias("cnt"), F.min("cell").alias("cmin"),
        F.max("cell").alias("cmax"), *_sums(width, filtered), *last)
    one_cell = (F.col("cnt") == 0) | (F.col("cmin") == F.col("cmax"))
    simple = one_cell & F.col(UNIT).isNotNull()
    drop = F.lit(False)
    if max_rows is not None:
        drop = F.col("n") == max_rows + 1
        simple = simple & ((F.col("n") <= max_rows) | drop)
    if several:
        simple = F.min(simple.cast("int")).over(Window.partitionBy(UNIT)) == 1

    def less(name: str, field: str) -> Any:   # a sum without the unit's last row when it is dropped
        if max_rows is None:
            return F.col(name)
        return F.col(name) - F.when(drop, F.col(f"last_{field}")).otherwise(F.lit(0).cast("long"))
    cnt = F.col("cnt") if max_rows is None else \
        F.col("cnt") - F.when(drop & F.col("last_cell").isNotNull(), 1).otherwise(0).cast("long")
    kept = F.col("n") - drop.cast("long")
    nw = less("nw", "nw") if filtered else F.lit(0).cast("long")
    kept_others = F.least(F.col("n"), F.lit(max_rows)) if max_rows is not None else F.col("n")
    tagged = unit.select(
        F.when(simple, F.lit(None)).otherwise(F.col(UNIT)).alias("unit"), "layout",
        F.when(simple & (cnt > 0), F.col("cmin")).alias("cell"), F.col("n").alias("total"),
        F.when(simple, kept).otherwise(kept_others).alias("kept"), cnt.alias("cnt"), nw.alias("nw"),
        (kept - cnt - nw).alias("ud"), F.col(UNIT).isNull().cast("long").alias("noid"),
        *[x for j in range(width) for x in (
            less(f"v{j}", f"v{j}").alias(f"v{j}"), less(f"cl{j}", f"cl{j}").alias(f"cl{j}"),
            (F.when(drop & (F.col(f"b{j}") == F.col("last_r")), F.lit(None)).otherwise(F.col(f"b{j}"))
             if max_rows is not None else F.col(f"b{j}")).alias(f"b{j}"))])
    return tagged.groupBy("unit", "layout", "cell").agg(
        F.sum("cnt").alias("n"), F.sum("total").alias("total"), F.sum("kept").alias("kept"),
        F.count(F.lit(1)).alias("units"), F.sum("nw").alias("nw"), F.sum("ud").alias("ud"),
        F.max("noid").alias("noid"), *[agg for j in range(width) for agg in (
            F.sum(f"v{j}").alias(f"v{j}"), F.sum(f"cl{j}").alias(f"cl{j}"), F.min(f"b{j}").alias(f"b{j}"))])


#: Up to this many rows of the units that are not simple, job 2 brings them to the driver and
#: runs the local engine on them (a scan and a filter: no shuffle, no window to start).
DRIVER_ROWS = 1_000_000


def _on_driver(keyed: Any, units: list, spec: QuerySpec, shared: list[list[Statistic]],
               width: int) -> tuple[Any, tuple[int, int, str] | None]:
    """Job 2 on the driver: ``units``' rows (an ``IN`` filter, in input order) through
    :func:`.aggregate.aggregate` itself, as rows of the collected table (per unit and cell,
    and one row of each layout's counts); or, when the local engine refuses a bad value,
    ``None`` and that row as ``(read index, 1, column)`` for :func:`_refuse_bad`, which
    weighs it against the simple units' bad rows (an earlier one may lie there)."""
    import pandas as pd
    from pyspark.sql import functions as F
    chosen = keyed.filter(F.col(UNIT).isin(units)).select(*[f"`{c}`" for c in spec.columns], ROW)
    frame = arrow_to_pandas(_arrow(chosen)).sort_values(ROW, kind="stable")   # as the local engine reads Arrow
    try:
        local = aggregate([frame], spec, row_column=ROW)
    except InvalidParameterError as exc:   # the index of the read in the message
        at = DATA_ROW.search(str(exc.value))
        column = re.fullmatch(r"column '(.*)'", exc.parameter)
        if at is None or column is None:
            raise
        return None, (int(at.group(1)), 1, column.group(1))
    parts = []
    for i, group in enumerate(shared):
        valued = [s for s in carriers(group) if s.value_column]
        lead = local.parts[group[0].name]
        keys = group[0].keys.size if group[0].keys else 1
        counts = local.counts[group[0].name]
        part = {"unit": lead["unit"], "layout": i, "cell": lead["group"] * keys + lead["key"], "n": lead["rows"],
                "nw": 0, "ud": 0, "units": 0, "total": 0}
        tally = {"unit": [pd.NA], "layout": [i], "cell": [pd.NA], "n": [0], "units": [0], "total": [0],
                 "nw": [counts.get("rows_not_matching_where", 0)], "ud": [counts.get("rows_undeclared_key_or_group", 0)]}
        for j in range(width):
            part[f"v{j}"] = local.parts[valued[j].name]["value"] if j < len(valued) else 0
            part[f"cl{j}"], tally[f"v{j}"] = 0, [0]
            tally[f"cl{j}"] = [local.counts[valued[j].name].get("values_clamped", 0) if j < len(valued) else 0]
        parts += [pd.DataFrame(part), pd.DataFrame(tally)]
    return (pd.concat(parts, ignore_index=True).astype({"unit": "Int64", "cell": "Int64"}), None)


#: Up to this many units, job 2 selects their rows with an ``IN`` filter on the scan (a join
#: with a table made on the driver is not broadcast: seconds more); beyond, a join.
IN_FILTER_UNITS = 10_000


def _rows_of(keyed: Any, spark: Any, units: list, max_rows: int | None) -> Any:
    """Job 2's rows: those of ``units``, ranked by the read index within each unit and cut
    at ``max_rows`` when given."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    if len(units) <= IN_FILTER_UNITS:
        rows = keyed.filter(F.col(UNIT).isin(units))
    else:
        field = keyed.schema[UNIT]
        rows = keyed.join(spark.createDataFrame([(u,) for u in units], f"`{UNIT}` {field.dataType.simpleString()}"),
                          UNIT)
    if max_rows is None:
        return rows
    rank = F.row_number().over(Window.partitionBy(UNIT).orderBy(ROW))
    return rows.withColumn("__rank", rank).filter(F.col("__rank") <= max_rows)


def aggregate_jvm(spark: Any, raw: Any, spec: QuerySpec) -> Aggregated:
    """The JVM path (module docstring): job 1 with one collect; job 2 only for the units that
    are not simple (rows in several cells, or more than ``max_rows + 1`` rows)."""
    import pandas as pd
    from pyspark.sql import functions as F
    uid, m = spec.unit.id, spec.unit.rows_bound
    keyed = raw.withColumn(UNIT, F.col(f"`{uid}`")) if uid is not None else raw
    per_row, shared, width, filtered = _per_row(keyed, spec)
    several = len(shared) > 1
    got = _to_frame(_by_unit(per_row, width, filtered, m, several) if uid is not None
                    else _by_cell(per_row, width, filtered, False, several))
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    first = got[got["layout"] == 0]
    others = first[first["unit"].notna()]   # the units that are not simple
    out.rows, out.kept = int(first["total"].sum()), int(first["kept"].sum())
    out.units = int(first.loc[first["unit"].isna(), "units"].sum()) + len(others)
    body = got[got["unit"].isna()]
    bad: tuple[int, int, str] | None = None
    noid = _first_without_id(keyed) if bool((got["noid"] > 0).any()) else None
    if len(others):   # job 2: their kept rows, per cell
        units = others["unit"].tolist()
        if len(units) <= IN_FILTER_UNITS and int(others["total"].sum()) <= DRIVER_ROWS:
            detail, bad = _on_driver(keyed, units, spec, shared, width)
        else:
            over = m is not None and bool((others["total"] > m).any())
            rows, _, _, _ = _per_row(_rows_of(keyed, spark, units, m if over else None), spec)
            detail = _to_frame(_by_cell(rows, width, filtered, True, several))
        if detail is not None:
            body = pd.concat([body, detail], ignore_index=True)
    _refuse_bad(noid, body, shared, keyed, spec, bad)
    return _assemble(out, body, spec, shared)


def _first_without_id(keyed: Any) -> int:
    """The read index of the first row without an id (a job run only when there is one)."""
    from pyspark.sql import functions as F
    return int(_to_frame(keyed.filter(F.col(UNIT).isNull()).agg(F.min(ROW).alias("r")))["r"].iloc[0])


def _to_frame(df: Any) -> Any:
    """A small Spark result as pandas through Arrow; integer columns as pandas ``Int64``
    (nullable, exact: no float round trip); a failed job is one line (:func:`_arrow`)."""
    import pandas as pd
    import pyarrow as pa

    return _arrow(df).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)


def _arrow(df: Any) -> Any:
    """``df.toArrow()``; a failed job (a sum beyond the long range under ANSI mode, a lost
    executor) is one line (:func:`optnoise.publish.spark.marked_failure`)."""
    from ..publish.spark import marked_failure, quiet_failures
    try:
        with quiet_failures():
            return df.toArrow()
    except Exception as exc:   # noqa: BLE001 -- every job failure becomes one line
        info = marked_failure(exc, BAD_VALUE)
        raise (info if isinstance(info, Exception) else OptnoiseError(f"the Spark job failed: {info}")) from None


def _assemble(out: Aggregated, body: Any, spec: QuerySpec, shared: list[list[Statistic]]) -> Aggregated:
    """The driver's part: the counts and every statistic's exact answers from ``body`` (the
    simple units per cell, ``unit`` null; the others per unit and cell, their kept rows):
    :func:`.aggregate.answers` over the units kept per unit, plus the simple units' cells."""
    for i, group in enumerate(shared):
        rows = body[body["layout"] == i]
        counted = rows[rows["cell"].notna()]
        valued = [s for s in carriers(group) if s.value_column]
        for stat in group:
            counts = out.counts[stat.name]
            bump(counts, "rows_not_matching_where", int(rows["nw"].sum()))
            bump(counts, "rows_undeclared_key_or_group", int(rows["ud"].sum()))
            if stat in valued:
                bump(counts, "values_clamped", int(rows[f"cl{valued.index(stat)}"].sum()))
            bump(counts, "rows_counted_before_unit_rules", int(counted["n"].sum()))
        for stat in group:
            slot = f"v{valued.index(stat)}" if stat in valued else None
            out.answered[stat.name] = _answers(stat, counted, slot, out.counts[stat.name], spec)
    return out


def _answers(stat: Statistic, counted: Any, slot: str | None, counts: dict[str, int], spec: QuerySpec) -> Answers:
    """One statistic's exact answers: the units kept per unit through
    :func:`.aggregate.answers` (its rules and counts), plus the simple units' totals at their
    one cell (their home cell and group)."""
    import pandas as pd
    keys = stat.keys.size if stat.keys else 1
    detail = counted[counted["unit"].notna()]
    simple = counted[counted["unit"].isna()]
    cell = detail["cell"].to_numpy(np.int64)
    part = pd.DataFrame({"unit": pd.factorize(detail["unit"])[0].astype(np.int64), "group": cell // keys,
                         "key": cell % keys, "rows": detail["n"].to_numpy(np.int64),
                         "value": detail[slot].to_numpy(np.int64) if slot else np.zeros(len(detail), np.int64)})
    found = answers(Aggregated(spec, parts={stat.name: part}, counts={stat.name: counts}), stat)
    kind = kind_of(stat)
    what = (simple["units"] if kind.counts_units(stat) else simple["n"] if slot is None else simple[slot]).to_numpy(
        np.int64)
    grid = kind.grid(found).copy()
    np.add.at(grid.reshape(-1), simple["cell"].to_numpy(np.int64), what)
    return kind.from_grid(stat, grid)


def _refuse_bad(noid: int | None, body: Any, shared: list[list[Statistic]], keyed: Any, spec: QuerySpec,
                bad: tuple[int, int, str] | None = None) -> None:
    """Raise the local engine's error for the first row (in input order) without an id
    (``noid``: its read index) or with a bad value in a kept, counted row of a summed column
    (in ``body``, or ``bad`` from job 2 on the driver); nothing when none."""
    from pyspark.sql import functions as F
    found: list[tuple[int, int, str]] = [bad] if bad is not None else []   # (row index, 0 id / 1 value, column)
    if noid is not None:
        found.append((noid, 0, spec.unit.id or ""))
    for i, group in enumerate(shared):
        valued = [s for s in carriers(group) if s.value_column]
        rows = body[body["layout"] == i]
        for j, stat in enumerate(valued):
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
