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

1. *Per (unit, layout, cell)* (a hash aggregation, combined before the shuffle): rows,
   the rows failing ``where`` or undeclared, the clamped, rounded values and the clamped
   rows summed, the first bad value and the first row without an id (a layout is
   :func:`.aggregate.layouts`'s: statistics sharing ``where``, ``by`` and ``key``).
2. *Per unit* (a window over those aggregates): a unit with at most one counted cell per
   layout and at most ``max_rows`` rows -- most units -- needs no rule (its home cell and
   group are that cell's, nothing is dropped), so it is summed into its cell's totals with
   the number of such units; the others (rows in several cells, or more than ``max_rows``
   rows) stay per unit and cell. One collect (through Arrow) brings that table.
3. Only when some units have more than ``max_rows`` rows, a second job ranks *their* rows
   alone (a broadcast join on those units, ``row_number`` by the read index) and aggregates
   their first ``max_rows`` rows as in 1; they replace those units' rows.
4. The driver applies :func:`.aggregate.answers` (the local engine's unit rules and
   counts) to the units kept per unit, and adds the simple units' cell totals.

**The Python path** (a CSV, read as text and parsed as pandas does; other column types):
one shuffle by unit (hash-partitioned by the id as text, sorted by (unit, index), so every
unit's rows lie in one partition in input order; no shuffle without ``id``), then per
partition on the executors (``mapInPandas``) the local engine itself,
:func:`.aggregate.aggregate` and :func:`.aggregate.answers`; every rule depends on one
unit's rows alone and a unit is in one partition, so the partitions' cell totals and counts
add up to the local engine's exactly. The driver sums them (one collect) and derives each
statistic's answers (:func:`.aggregate.from_cells`).

A bad value (a missing id, a non-number in a summed column) stops the query with its data
row in the file, counted by a second job from the failing row's index. The session is
:func:`optnoise.table.spark.spark_session`'s (quiet JVM).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

import numpy as np

from ..errors import InvalidParameterError
from .aggregate import Aggregated, Answers, aggregate, answers, bump, carriers, from_cells, layouts
from .spark_rules import eligible
from .spec import QuerySpec, Statistic

ROW, UNIT = "__optnoise_row", "__optnoise_unit"
BAD_VALUE = "OPTNOISE_BAD_VALUE"
SCHEMA = "stat int, group long, key long, n long, counter string"
#: The ``stat`` of the partition's own counts (rows read, rows kept, units).
TOTALS = -1


def aggregate_spark(input_path: str | os.PathLike, fmt: str, spec: QuerySpec, *,
                    master: str | None = None) -> Aggregated:
    """Bound and aggregate on Spark in one job; an :class:`.Aggregated` whose ``answered``
    holds every statistic's exact answers (module docstring)."""
    from pyspark.sql import functions as F

    from ..table.spark import spark_session
    spark = spark_session(master)
    raw = _read(spark, input_path, fmt, list(spec.columns)).withColumn(ROW, F.monotonically_increasing_id())
    if fmt != "csv" and eligible({f.name: f.dataType.simpleString() for f in raw.schema.fields}, spec):
        return aggregate_jvm(spark, raw, spec)
    uid = spec.unit.id
    if uid is not None:
        keyed = raw.withColumn(UNIT, F.col(f"`{uid}`").cast("string"))
        raw_rows = keyed.repartition(UNIT).sortWithinPartitions(UNIT, ROW).drop(UNIT)
    else:
        raw_rows = raw
    try:
        rows = raw_rows.mapInPandas(_per_partition(spec), SCHEMA).collect()
    except Exception as exc:   # a failed job: a bad value, or something else
        raise _job_error(exc, raw) from None
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    grids = {s.name: np.zeros(_grid_shape(s), np.int64) for s in spec.statistics}
    for r in rows:
        if r["stat"] == TOTALS:
            setattr(out, r["counter"], getattr(out, r["counter"]) + int(r["n"]))
        elif r["counter"] is not None:
            counts = out.counts[spec.statistics[r["stat"]].name]
            counts[r["counter"]] = counts.get(r["counter"], 0) + int(r["n"])
        else:
            grids[spec.statistics[r["stat"]].name][int(r["group"]), int(r["key"])] += int(r["n"])
    for stat in spec.statistics:
        grid = grids[stat.name]
        out.answered[stat.name] = Answers(grid) if stat.kind == "count" else from_cells(stat, grid)
    return out


def _grid_shape(stat: Statistic) -> tuple[int, int]:
    """A statistic's cells before :func:`.aggregate.from_cells` (a count: one)."""
    if stat.kind == "count":
        return 1, 1
    return stat.groups.size if stat.groups else 1, stat.keys.size if stat.keys else 1


#: Rows per batch handed to the local engine on an executor (Arrow sends batches of 10,000).
BATCH_ROWS = 1 << 17


def rebatch(frames: Iterator[Any], rows: int = BATCH_ROWS) -> Iterator[Any]:
    """The frames joined into batches of at least ``rows`` rows (the last one shorter), in
    order: fewer, larger batches for :func:`.aggregate.aggregate` (memory: one batch)."""
    import pandas as pd
    held: list = []
    size = 0
    for frame in frames:
        held.append(frame)
        size += len(frame)
        if size >= rows:
            yield held[0] if len(held) == 1 else pd.concat(held, ignore_index=True)
            held, size = [], 0
    if held:
        yield held[0] if len(held) == 1 else pd.concat(held, ignore_index=True)


def _per_partition(spec: QuerySpec) -> Any:
    """The executors' function: the local engine over one partition's batches (every unit's
    rows in this partition, in input order), yielding its totals and counts as rows."""
    stats = spec.statistics

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        try:
            agg = aggregate(rebatch(frames), spec, row_column=ROW)
            found = [answers(agg, stat) for stat in stats]
        except InvalidParameterError as exc:
            raise RuntimeError(BAD_VALUE + json.dumps({"parameter": exc.parameter, "value": str(exc.value),
                                                       "accepted": exc.accepted})) from None
        if not agg.rows:
            return
        out: list[tuple] = [(TOTALS, 0, 0, n, name) for name, n in
                            (("rows", agg.rows), ("kept", agg.kept), ("units", agg.units))]
        for i, (stat, ans) in enumerate(zip(stats, found)):
            grid = ans.scores if stat.kind in ("peak", "mode") else ans.cells   # before from_cells
            g, k = np.nonzero(grid)
            out += [(i, int(a), int(b), int(grid[a, b]), None) for a, b in zip(g, k)]
            out += [(i, 0, 0, int(n), name) for name, n in agg.counts[stat.name].items()]
        yield pd.DataFrame(out, columns=["stat", "group", "key", "n", "counter"]).astype(
            {"stat": "int32", "group": "int64", "key": "int64", "n": "int64", "counter": "object"})
    return run


def _read(spark: Any, path: str | os.PathLike, fmt: str, columns: list[str]) -> Any:
    """The spec's columns; a CSV's as text, as the local engine reads them."""
    if fmt == "csv":
        from pyspark.sql.types import StringType, StructField, StructType

        from ..table.files import column_names
        text = StructType([StructField(c, StringType()) for c in column_names(path, fmt)])
        df = spark.read.option("header", True).schema(text).csv(str(path))
    else:
        df = spark.read.parquet(str(path))
    return df.select(*[f"`{c}`" for c in columns])


def _job_error(exc: Exception, raw: Any) -> Exception:
    """A bad value's error with its data row in the file, or a one-line job failure."""
    from pyspark.sql import functions as F

    from ..table.spark import marked_failure
    info = marked_failure(exc, BAD_VALUE)
    if isinstance(info, Exception):
        return info

    def row(m: re.Match) -> str:
        return f"at data row {raw.filter(F.col(ROW) <= int(m.group(1))).count()}"
    return InvalidParameterError(info["parameter"], re.sub(r"at data row (\d+)", row, info["value"]),
                                 info["accepted"])


__all__ = ["aggregate_spark"]


# ------------------------------------------------------------------ the JVM path (typed columns)
#: Columns of the JVM path's collected table (module docstring), before the per-statistic ones.
FIXED = ("unit", "layout", "cell", "n", "nw", "ud", "units", "total", "noid")


def _layout_fields(spec: QuerySpec) -> tuple[list[list[Statistic]], int, list[list[Any]]]:
    """The layouts (:func:`.aggregate.layouts`), the number of value slots (the most summed
    statistics of one layout) and, per layout, the per-row columns: its index, the row's cell
    (null when not counted), the flags ``nw`` (fails ``where``) and ``ud`` (undeclared key or
    group), and per slot the clamped, rounded value, the clamped flag and the row's index when
    its value is bad (missing or not finite)."""
    from pyspark.sql import functions as F

    from .spark_rules import declared_index, matches, scaled_value
    shared = layouts(spec.statistics)
    width = max(len([s for s in carriers(group) if s.value_column]) for group in shared)
    out = []
    for i, group in enumerate(shared):
        first = group[0]
        where = F.lit(True)
        for cond in first.where:
            where = where & matches(cond)
        g = declared_index(first.by, first.groups) if first.by else F.lit(0).cast("long")   # type: ignore[arg-type]
        k = declared_index(first.key, first.keys) if first.key else F.lit(0).cast("long")   # type: ignore[arg-type]
        counted = where & g.isNotNull() & k.isNotNull()
        fields = [F.lit(i).alias("layout"), F.when(counted, g * (first.keys.size if first.keys else 1) + k).alias("cell"),
                  (~where).cast("long").alias("nw"), (where & ~counted).cast("long").alias("ud")]
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
    return shared, width, out


def _cells_per_unit(rows: Any, spec: QuerySpec) -> tuple[Any, list[list[Statistic]], int]:
    """Stage 1: the rows' (unit, layout, cell) aggregates (``n`` rows, the flags, values and
    clamped counts summed, the first bad row and the first row without an id); without an
    id, per (layout, cell) (``unit`` null)."""
    from pyspark.sql import functions as F
    shared, width, fields = _layout_fields(spec)
    base = [F.col(UNIT), F.col(ROW)]
    if spec.unit.id is None:
        base = [F.col(ROW)]
    if len(fields) == 1:
        per_row = rows.select(*base, *fields[0])
    else:
        per_row = rows.select(*base, F.inline(F.array(*[F.struct(*f) for f in fields])))
    slots = [agg for j in range(width) for agg in (F.sum(f"v{j}").alias(f"v{j}"), F.sum(f"cl{j}").alias(f"cl{j}"),
                                                   F.min(f"b{j}").alias(f"b{j}"))]
    by_unit = spec.unit.id is not None
    noid = (F.min(F.when(F.col(UNIT).isNull(), F.col(ROW))) if by_unit else F.lit(None).cast("long")).alias("noid")
    return (per_row.groupBy(*([UNIT] if by_unit else []), "layout", "cell").agg(F.count(F.lit(1)).alias("n"), F.sum("nw").alias("nw"),
                                                       F.sum("ud").alias("ud"), noid, *slots), shared, width)


def _reduce_single_cell(cells: Any, width: int, max_rows: int | None) -> Any:
    """Stage 2: the units with at most one counted cell per layout and at most ``max_rows``
    rows, summed per (layout, cell) with ``unit`` null and ``units`` their number (their rules
    are trivial: the home cell and group is that cell's); the others (several cells, over
    ``max_rows``) kept per unit, with ``total`` their rows."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy(UNIT, "layout")
    ncells, total, top = F.count("cell").over(w), F.sum("n").over(w), F.max("cell").over(w)
    head = F.when(ncells == 0, F.lit(1)).otherwise(F.coalesce((F.col("cell") == top).cast("int"), F.lit(0)))
    simple = ncells <= 1
    if max_rows is not None:
        simple = simple & (total <= max_rows)
    tagged = cells.select("*", F.when(simple, F.lit(None)).otherwise(F.col(UNIT)).alias("unit"),
                          head.cast("long").alias("units"), total.alias("total"))
    slots = [agg for j in range(width) for agg in (F.sum(f"v{j}").alias(f"v{j}"), F.sum(f"cl{j}").alias(f"cl{j}"),
                                                   F.min(f"b{j}").alias(f"b{j}"))]
    return tagged.groupBy("unit", "layout", "cell").agg(
        F.sum("n").alias("n"), F.sum("nw").alias("nw"), F.sum("ud").alias("ud"), F.sum("units").alias("units"),
        F.max("total").alias("total"), F.min("noid").alias("noid"), *slots)


def _first_rows_of(raw: Any, spark: Any, units: list, max_rows: int) -> Any:
    """The rows of ``units`` (over ``max_rows``) that the rule keeps: each one's first
    ``max_rows`` rows in input order (row_number by the read index)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    field = raw.schema[UNIT]
    over = spark.createDataFrame([(u,) for u in units], f"`{UNIT}` {field.dataType.simpleString()}")
    rank = F.row_number().over(Window.partitionBy(UNIT).orderBy(ROW))
    return raw.join(F.broadcast(over), UNIT).withColumn("__rank", rank).filter(F.col("__rank") <= max_rows)


def aggregate_jvm(spark: Any, raw: Any, spec: QuerySpec) -> Aggregated:
    """The JVM path (module docstring): stage 1 and 2 in one job, one collect; a second job
    only when some unit has more than ``max_rows`` rows (its first rows, ranked)."""
    from pyspark.sql import functions as F
    uid, m = spec.unit.id, spec.unit.rows_bound
    keyed = raw.withColumn(UNIT, F.col(f"`{uid}`")) if uid is not None else raw
    cells, shared, width = _cells_per_unit(keyed, spec)
    if uid is None:   # each row a unit of one row: every unit is simple
        table = cells.select(F.lit(None).cast("long").alias("unit"), "*", F.col("n").alias("units"),
                             F.lit(1).cast("long").alias("total"))
    else:
        table = _reduce_single_cell(cells, width, m)
    got = _to_frame(table)
    over = got[got["unit"].notna() & (got["total"] > (m if m is not None else np.inf))]
    extra = None
    if len(over):
        units = sorted(set(over["unit"].tolist()))
        ranked = _first_rows_of(keyed, spark, units, int(m))   # type: ignore[arg-type]
        extra = _to_frame(_cells_per_unit(ranked, spec)[0].withColumnRenamed(UNIT, "unit"))
        extra["units"], extra["total"] = 0, 0
    return _assemble(got, extra, spec, shared, width, keyed)


def _to_frame(df: Any) -> Any:
    """A small Spark result as pandas through Arrow; integer columns as pandas ``Int64``
    (nullable, exact: no float round trip)."""
    import pandas as pd
    import pyarrow as pa
    return df.toArrow().to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)


def _assemble(got: Any, extra: Any, spec: QuerySpec, shared: list[list[Statistic]], width: int,
              keyed: Any) -> Aggregated:
    """The driver's part: the units over ``max_rows`` replaced by their first rows
    (``extra``), the counts, the first bad value or missing id refused, and every
    statistic's exact answers: :func:`.aggregate.answers` over the units kept per unit, plus
    the simple units' cell totals."""
    import pandas as pd
    m = spec.unit.rows_bound
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    is_over = got["unit"].notna() & (got["total"] > m) if m is not None else pd.Series(False, index=got.index)
    first = got[got["layout"] == 0]
    out.rows, out.units = int(first["n"].sum()), int(first["units"].sum())
    over_first = first[is_over[first.index]]
    out.kept = out.rows - int((over_first.groupby("unit")["total"].max() - (m or 0)).sum())
    body = got[~is_over] if extra is None else pd.concat([got[~is_over], extra], ignore_index=True)
    _refuse_bad(got, body, shared, width, keyed, spec)
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
    units = stat.kind in ("histogram", "mode", "count") and stat.of == "units"
    what = (simple["units"] if units else simple["n"] if slot is None else simple[slot]).to_numpy(np.int64)
    if stat.kind == "count":
        return Answers(found.cells + int(what.sum()))
    grid = (found.scores if stat.kind in ("peak", "mode") else found.cells).copy()
    np.add.at(grid.reshape(-1), simple["cell"].to_numpy(np.int64), what)
    return from_cells(stat, grid)


def _refuse_bad(got: Any, body: Any, shared: list[list[Statistic]], width: int, keyed: Any,
                spec: QuerySpec) -> None:
    """Raise the local engine's error for the first row (in input order) without an id or
    with a bad value in a kept, counted row of a summed column; nothing when none."""
    from pyspark.sql import functions as F
    found: list[tuple[int, int, str]] = []   # (row index, 0 id / 1 value, column)
    noid = got["noid"].dropna()
    if len(noid):
        found.append((int(noid.min()), 0, spec.unit.id or ""))
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
