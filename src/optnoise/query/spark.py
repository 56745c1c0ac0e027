"""The Spark engine of the statistics (``optnoise query --engine spark``; extra ``spark``).

The contribution bounding and the group-by run on Spark; only the small per-cell totals
(groups x keys per statistic), the counts of what was dropped or clamped and the numbers of
rows and units reach the driver, where :func:`optnoise.query.release.build_document` plans,
certifies, composes and draws exactly as for the local engine (same document, ``engine:
"spark"``). The bounding rules are :mod:`.aggregate`'s, and so is the per-row code:

* **Input order.** Every row gets an index when the file is read
  (``monotonically_increasing_id`` on the read: increasing along a file's rows, since
  Spark's file partitions follow the file's order); a unit keeps the ``max_rows`` rows of
  smallest index (a window per unit), which is the local engine's "first rows in the input's
  order".
* **Per row** (``where``, declared keys and groups, clamp and resolution, the counts): the
  very function the local engine folds, :func:`.aggregate.partial`, on each Arrow batch via
  ``mapInPandas``.
* **Per unit** (one group by majority, a histogram or mode once at its majority (group, key),
  ties to the first declared): Spark windows ordered exactly as
  :func:`.aggregate.answers` sorts (most rows, then the smallest declared index).

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
from .aggregate import Aggregated, Answers, bump, from_cells, partial
from .spec import QuerySpec, Statistic

ROW, UNIT = "__optnoise_row", "__optnoise_unit"
BAD_VALUE = "OPTNOISE_BAD_VALUE"
SCHEMA = "stat int, unit string, group long, key long, rows long, value long, counter string"


def aggregate_spark(input_path: str | os.PathLike, fmt: str, spec: QuerySpec, *,
                    master: str | None = None) -> Aggregated:
    """Bound and aggregate on Spark; an :class:`.Aggregated` whose ``answered`` holds every
    statistic's exact answers (module docstring)."""
    from pyspark.sql import functions as F

    from ..table.spark import spark_session
    spark = spark_session(master)
    raw = _read(spark, input_path, fmt, list(spec.columns)).withColumn(ROW, F.monotonically_increasing_id())
    uid = spec.unit.id
    df = raw.withColumn(UNIT, (F.col(f"`{uid}`") if uid else F.col(ROW)).cast("string"))
    head = df.agg(F.count(F.lit(1)).alias("rows"), F.countDistinct(UNIT).alias("units"),
                  F.min(F.when(F.col(UNIT).isNull(), F.col(ROW))).alias("missing")).collect()[0]
    if head["missing"] is not None:
        row = raw.filter(F.col(ROW) <= head["missing"]).count()
        raise InvalidParameterError("unit.id", f"column '{uid}': missing value at data row {row}",
                                    "an id in every row (a row without one belongs to no unit)")
    out = Aggregated(spec, rows=int(head["rows"]), units=int(head["units"]),
                     counts={s.name: {} for s in spec.statistics})
    bounded = _first_rows(df, spec.unit.rows_bound if uid else None).mapInPandas(_per_batch(spec), SCHEMA)
    bounded = bounded.persist()
    try:
        try:
            counters = bounded.filter(F.col("counter").isNotNull()).groupBy("stat", "counter") \
                .agg(F.sum("rows").alias("n")).collect()
        except Exception as exc:   # a failed job: a bad value, or something else
            raise _job_error(exc, raw) from None
        for r in counters:
            if r["stat"] < 0:
                out.kept = int(r["n"])
            elif r["n"]:
                out.counts[spec.statistics[r["stat"]].name][r["counter"]] = int(r["n"])
        parts = bounded.filter(F.col("counter").isNull()).groupBy("stat", "unit", "group", "key") \
            .agg(F.sum("rows").alias("rows"), F.sum("value").alias("value")).persist()
        for i, stat in enumerate(spec.statistics):
            out.answered[stat.name] = _answers(parts.filter(F.col("stat") == i), stat, out.counts[stat.name])
        parts.unpersist()
    finally:
        bounded.unpersist()
    return out


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


def _first_rows(df: Any, max_rows: int | None) -> Any:
    """Each unit's first ``max_rows`` rows by read index (all rows when unbounded or each row
    is a unit)."""
    if max_rows is None:
        return df
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    rank = F.row_number().over(Window.partitionBy(UNIT).orderBy(ROW))
    return df.withColumn("__rank", rank).filter(F.col("__rank") <= max_rows).drop("__rank")


def _per_batch(spec: QuerySpec) -> Any:
    """The executor's function: :func:`.aggregate.partial` per statistic and batch, with the
    counts as rows (``counter`` set; statistic -1 counts the kept rows)."""
    stats = spec.statistics

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        for pdf in frames:
            ids, rows = pdf[UNIT].to_numpy(), pdf[ROW].to_numpy()
            out = [_counter_rows(-1, {"kept": len(pdf)})]
            for i, stat in enumerate(stats):
                counts: dict[str, int] = {}
                try:
                    part = partial(pdf, ids, rows, stat, counts)
                except InvalidParameterError as exc:
                    raise RuntimeError(BAD_VALUE + json.dumps({"parameter": exc.parameter, "value": str(exc.value),
                                                               "accepted": exc.accepted})) from None
                out += [part.assign(stat=i, counter=None), _counter_rows(i, counts)]
            frame = pd.concat(out, ignore_index=True)
            frame["unit"] = frame["unit"].astype("string")
            yield frame[["stat", "unit", "group", "key", "rows", "value", "counter"]]
    return run


def _counter_rows(stat: int, counts: dict[str, int]) -> Any:
    import pandas as pd
    return pd.DataFrame({"stat": stat, "unit": None, "group": 0, "key": 0, "rows": list(counts.values()),
                         "value": 0, "counter": list(counts)})


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


def _majority(df: Any, by: list[str], weight: str) -> Any:
    """Each unit's row of most ``weight``, ties to the smallest ``by`` (first declared)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    order = Window.partitionBy("unit").orderBy(F.col(weight).desc(), *[F.col(c).asc() for c in by])
    return df.withColumn("__pick", F.row_number().over(order)).filter(F.col("__pick") == 1).drop("__pick")


def _grid(rows: list, stat: Statistic) -> np.ndarray:
    cells = np.zeros((stat.groups.size if stat.groups else 1, stat.keys.size if stat.keys else 1), np.int64)
    for r in rows:
        cells[int(r["group"]), int(r["key"])] += int(r["n"])
    return cells


def _answers(parts: Any, stat: Statistic, counts: dict[str, int]) -> Answers:
    """:func:`.aggregate.answers` on Spark: only the per-cell totals are collected."""
    from pyspark.sql import functions as F
    if stat.kind == "count":
        agg = F.countDistinct("unit") if stat.of == "units" else F.sum("rows")
        value = parts.agg(agg.alias("n")).collect()[0]["n"]
        return Answers(np.array([[int(value or 0)]], np.int64))
    if stat.kind in ("histogram", "mode") and stat.of != "rows":
        bump(counts, "units_with_rows_in_several_cells",
              parts.groupBy("unit").count().filter(F.col("count") > 1).count())
        chosen = _majority(parts, ["group", "key"], "rows")
        return from_cells(stat, _grid(chosen.groupBy("group", "key").agg(F.count(F.lit(1)).alias("n")).collect(),
                                      stat))
    if stat.by is not None:   # sum, peak, histogram of rows: one group per unit
        home = _majority(parts.groupBy("unit", "group").agg(F.sum("rows").alias("r")), ["group"], "r")
        joined = parts.join(home.select("unit", "group"), ["unit", "group"], "inner")
        total = parts.agg(F.sum("rows").alias("n")).collect()[0]["n"] or 0
        inside = joined.agg(F.sum("rows").alias("n")).collect()[0]["n"] or 0
        bump(counts, "rows_outside_the_units_group", int(total) - int(inside))
        parts = joined
    what = "rows" if stat.kind == "histogram" else "value"    # a histogram of rows counts them
    return from_cells(stat, _grid(parts.groupBy("group", "key").agg(F.sum(what).alias("n")).collect(), stat))


__all__ = ["aggregate_spark"]
