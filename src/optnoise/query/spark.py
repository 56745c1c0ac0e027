"""The Spark engine of the statistics (``optnoise query --engine spark``; extra ``spark``).

The contribution bounding and the group-by run on Spark; only the small per-cell totals
(groups x keys per statistic), the counts of what was dropped or clamped and the numbers of
rows and units reach the driver, where :func:`optnoise.query.release.build_document` plans,
certifies, composes and draws exactly as for the local engine (same document, ``engine:
"spark"``). **One job, one collect**:

* **Input order.** Every row gets an index when the file is read
  (``monotonically_increasing_id`` on the read: increasing along a file's rows, since
  Spark's file partitions follow the file's order).
* **One shuffle by unit.** The rows are hash-partitioned by the unit's id (as text) and
  sorted by (unit, index) within each partition, so every unit's rows lie in one partition,
  in input order (each row is a unit without ``id``: no shuffle).
* **Per partition**, on the executors (``mapInPandas``), the local engine itself:
  :func:`.aggregate.aggregate` over the partition's batches (the unit's first ``max_rows``
  rows, ``where``, declared keys and groups, clamp and resolution, the counts), then
  :func:`.aggregate.answers` (one group per unit by majority, a histogram or mode once at
  its majority cell, ties to the first declared). Every rule depends on one unit's rows
  alone and a unit is in one partition, so the partitions' cell totals and counts add up to
  the local engine's exactly. Each partition yields its (statistic, group, key) totals and
  its counts: a few rows.
* **The driver** sums them (one collect) and derives each statistic's answers from the
  totals (:func:`.aggregate.from_cells`; a peak's argmax from the summed scores).

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
from .aggregate import Aggregated, Answers, aggregate, answers, from_cells
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
