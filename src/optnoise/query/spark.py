"""The Spark engine of the statistics (``optnoise query --engine spark``; extra ``spark``).

The contribution bounding and the group-by run on Spark; only small aggregates reach the
driver, where :func:`optnoise.query.release.build_document` plans, certifies, composes and
draws exactly as for the local engine (same document, ``engine: "spark"``). Every row gets
its index in the input when the file is read (``monotonically_increasing_id`` on the read:
increasing along a file's rows, since Spark's file partitions follow the file's order): the
order of the first-``max_rows``-rows rule. Two paths, the same answers and counts:

**The JVM path** (a Parquet file whose columns have the types of
:func:`.spark_rules.eligible`: the bench's and the usual case): :mod:`.spark_units`. The
per-row rules are Spark column expressions (:mod:`.spark_rules`, bit for bit the local
engine's) and the unit rules (the first ``max_rows`` rows, the home cell and group) windows
and group-bys on the executors, for every unit; one row per (layout, cell) reaches the
driver. A Parquet file is read with the schema of its footer (:func:`parquet_schema`):
Spark's own inference would read the footer again in a job of its own.

**The Python path** (a CSV, read as text and parsed as pandas does; other column types):
one shuffle by unit (hash-partitioned by the id as text, sorted by (unit, index), so every
unit's rows lie in one partition in input order; no shuffle without ``id``), then per
partition on the executors (``mapInArrow``: Arrow batches, each column's type kept) the local engine itself,
:func:`.aggregate.aggregate` and :func:`.aggregate.answers`; every rule depends on one
unit's rows alone and a unit is in one partition, so the partitions' cell totals and counts
add up to the local engine's exactly. The driver sums them (one collect) and derives each
statistic's answers (:func:`.aggregate.from_cells`).

Under ``bounding = "random"`` both paths read each row's priority from its read index (its
number in the input, :func:`index_column`) and the driver's key (:mod:`.priority`): the local
engine's priorities, so the same rows and groups are kept.

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

from ..errors import InvalidParameterError
from .aggregate import Aggregated, aggregate, answers
from .kinds import from_cells, kind_of
from .spark_rules import eligible
from .spark_groups import INDEX
from .spark_units import BAD_VALUE, DATA_ROW, ROW, UNIT, aggregate_jvm, to_frame
from .spec import QuerySpec

SCHEMA = "stat int, group long, key long, n long, counter string"
def arrow_schema() -> Any:
    """:data:`SCHEMA` as an Arrow schema (the executors' batches)."""
    import pyarrow as pa
    return pa.schema([("stat", pa.int32()), ("group", pa.int64()), ("key", pa.int64()), ("n", pa.int64()),
                      ("counter", pa.string())])


#: The ``stat`` of the partition's own counts (rows read, rows kept, units).
TOTALS = -1


def aggregate_spark(input_path: str | os.PathLike, fmt: str, spec: QuerySpec, *,
                    master: str | None = None, key: bytes | None = None) -> Aggregated:
    """Bound and aggregate on Spark in one job; an :class:`.Aggregated` whose ``answered``
    holds every statistic's exact answers (module docstring). ``key``: the key of ``bounding =
    "random"`` (:func:`.aggregate.bounding_key`; drawn from the CSPRNG when not given).

    Proof: docs/proofs/spark-bounding.md
    """
    from ..publish.spark import interruptible, spark_session
    if spec.unit.bounding == "random" and key is None:
        from ..randomness import random_source
        from .priority import draw_key
        key = draw_key(random_source())
    spark = spark_session(master)
    with interruptible(spark):   # Ctrl-C: the application stopped, exit 130
        return _aggregate(spark, input_path, fmt, spec, key if spec.unit.bounding == "random" else None)


def _aggregate(spark: Any, input_path: str | os.PathLike, fmt: str, spec: QuerySpec, key: bytes | None) -> Aggregated:
    """:func:`aggregate_spark`'s body: the JVM path, else the Python path."""
    from pyspark.sql import functions as F
    raw = read_input(spark, input_path, fmt, list(spec.columns)).withColumn(ROW, F.monotonically_increasing_id())
    if key is not None:   # random bounding: each row's read index, the input of its priority
        raw = raw.withColumn(INDEX, index_column(raw))
    if fmt != "csv" and eligible({f.name: f.dataType.simpleString() for f in raw.schema.fields}, spec):
        return aggregate_jvm(raw, spec, key)
    uid = spec.unit.id
    if uid is not None:
        keyed = raw.withColumn(UNIT, F.col(f"`{uid}`").cast("string"))
        raw_rows = keyed.repartition(UNIT).sortWithinPartitions(UNIT, ROW).drop(UNIT)
    else:
        raw_rows = raw
    from ..publish.spark import quiet_failures
    try:
        with quiet_failures():
            rows = raw_rows.mapInArrow(_per_partition(spec, key), SCHEMA).collect()
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


def _per_partition(spec: QuerySpec, key: bytes | None = None) -> Any:
    """The executors' function: the local engine over one partition's batches (every unit's
    rows in this partition, in input order), yielding its totals and counts as rows; under
    random bounding with the driver's ``key`` and each row's read index (:data:`INDEX`)."""
    stats = spec.statistics
    kinds = [kind_of(stat) for stat in stats]   # shipped with the function: the executor needs no registry

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        import pyarrow as pa
        try:
            agg = aggregate(rebatch(batches), spec, row_column=ROW, key=key,
                            index_column=None if key is None else INDEX)
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


#: The bits of ``monotonically_increasing_id`` that hold the position in the partition.
POSITION_BITS = 33


def index_column(raw: Any) -> Any:
    """Each row's read index (its number in the input, 1, 2, ..., as the local engine counts
    it: the input of random bounding's priorities, :mod:`.priority`) as a Spark column of
    ``raw``'s :data:`.spark_units.ROW`: ``monotonically_increasing_id`` is the partition's index
    in its high bits and the row's position in the partition in the low 33, and the file's
    partitions follow its order (docs/proofs/spark-bounding.md), so the read index is the rows
    of the partitions before, plus the position, plus one. One small job counts each
    partition's rows (the largest position it holds, plus one); one row per partition reaches
    the driver."""
    from pyspark.sql import functions as F
    part = F.shiftright(F.col(ROW), POSITION_BITS)
    position = F.col(ROW).bitwiseAND(F.lit((1 << POSITION_BITS) - 1))
    sizes = to_frame(raw.groupBy(part.alias("p")).agg((F.max(position) + 1).alias("n")))
    count = dict(zip((int(p) for p in sizes["p"]), (int(n) for n in sizes["n"])))
    offsets, before = [], 0
    for p in range(max(count, default=-1) + 1):
        offsets.append(before)
        before += count.get(p, 0)
    if not offsets:
        return F.lit(None).cast("long")
    start = F.element_at(F.array(*[F.lit(o).cast("long") for o in offsets]), (part + 1).cast("int"))
    return start + position + 1


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
