"""The Spark engine of :func:`optnoise.table.release_file` (optional extra ``spark``).

The same release as the local engine, in one pass over the data: the selected columns
go through ``DataFrame.mapInArrow`` -- Spark's vectorised Python map on Arrow record
batches, the batch form of a ``pandas_udf`` without the conversion to pandas -- with the
very function the local engine uses (:func:`optnoise.table.batches.privatize_batch`):
validation, noise and the kept columns of a batch at once, no per-value Python. Each
batch reads its own bits from the executor's operating-system CSPRNG (no shared
generator state); in seeded (not private) mode each partition and batch gets a derived
seed. The row count comes from an accumulator filled by the same pass.

A bad value fails the job; only then a second job counts the rows of the earlier
partitions, so that the message names the value's data row in the file. The output is a
Spark dataset directory (part files), written to a temporary directory beside the
output and renamed onto it only after the manifest is written; a failure leaves nothing
behind. Input, output and manifest are local paths (the manifest hashes them). CSV values
must not contain quoted line breaks (Spark splits the file by lines).

The session, the driver's file, quiet failures and the bad value's error are the
publishing core's (:mod:`optnoise.publish.spark`; the names are re-exported here).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Callable, Iterator

from ..errors import InvalidParameterError
from ..io import dumps, write_text_atomic
from ..publish.spark import (
    QUERY_CONTEXT_LOGGERS,
    bad_value,
    interruptible,
    configured_master,
    jvm_last_line,
    jvm_stderr_captured,
    local_file,
    marked_failure,
    quiet_failures,
    spark_session,
)
from ..randomness import RandomSource, child_source
from .batches import output_schema, privatize_batch
from .files import move_dir_atomic, temp_dir_beside
from .plan import ColumnPlan

#: Marks a bad value in the error text of a failed Spark task.
BAD_CELL = "OPTNOISE_BAD_CELL"
def release_spark(input_path, in_fmt: str, columns: list[str], plans: dict[str, ColumnPlan], schema, output: Path,
                  out_fmt: str, src: RandomSource, finish: Callable[[list, int], dict], manifest_path: Path, *,
                  master: str | None = None) -> dict:
    """Run the release on Spark; returns the manifest written beside the output, which
    records where Spark wrote it (``output.uri``: ``file://`` and the absolute path)."""
    spark = spark_session(master)
    with interruptible(spark):   # Ctrl-C: the application stopped, exit 130
        return _release(spark, input_path, in_fmt, columns, plans, schema, output, out_fmt, src, finish,
                        manifest_path)


def _release(spark, input_path, in_fmt: str, columns: list[str], plans: dict[str, ColumnPlan], schema,
             output: Path, out_fmt: str, src: RandomSource, finish: Callable[..., dict], manifest_path: Path) -> dict:
    """:func:`release_spark`'s body."""
    from pyspark import TaskContext
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StringType, StructField, StructType

    if in_fmt == "csv":  # every column as text, named from the header already read: no schema job
        from .files import column_names
        text = StructType([StructField(c, StringType()) for c in column_names(input_path, in_fmt)])
        df = spark.read.option("header", True).schema(text).csv(local_file(input_path))
    else:
        df = spark.read.parquet(local_file(input_path))
    df = df.select(*[f"`{c}`" for c in columns])
    kept_types = {f.name: f for f in df.schema.fields}
    out_struct = StructType([kept_types[f.name] if f.name not in plans else f
                             for f in from_arrow_schema(schema).fields])
    rows = spark.sparkContext.accumulator(0)

    def privatize(batches: Iterator) -> Iterator:
        part = TaskContext.get().partitionId()
        local = 0
        for b, batch in enumerate(batches):
            try:
                yield privatize_batch(batch, plans, output_schema(batch.schema, plans), first_row=local + 1,
                                      source=child_source(src, part, b))
            except InvalidParameterError as exc:
                raise RuntimeError(BAD_CELL + json.dumps({"partition": part, "value": str(exc.value),
                                                          "accepted": exc.accepted})) from None
            local += batch.num_rows
            rows.add(batch.num_rows)

    released = df.mapInArrow(privatize, out_struct)
    tmp = temp_dir_beside(output)
    shutil.rmtree(tmp)  # Spark creates the directory itself
    try:
        writer = released.write.mode("error")
        try:
            with quiet_failures():
                if out_fmt == "csv":
                    writer.option("header", True).csv(local_file(tmp))
                else:
                    writer.parquet(local_file(tmp))
        except Exception as exc:  # a failed Spark job: a bad value, or something else
            raise _job_error(exc, df) from None
        parts = sorted(p for p in tmp.iterdir() if p.name.startswith("part-"))
        manifest = finish(parts, rows.value, local_file(output))
        write_text_atomic(manifest_path, dumps(manifest))
        try:
            move_dir_atomic(tmp, output)
        except BaseException:
            manifest_path.unlink(missing_ok=True)  # no manifest without its output
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _job_error(exc: Exception, df) -> Exception:
    """The bad value's error with its data row in the file (the rows of the earlier partitions
    counted by a second job), or a one-line job failure (:func:`~optnoise.publish.spark.bad_value`)."""
    def locate(info: dict) -> str:
        from pyspark.sql import functions as F
        counts = {r["p"]: r["count"]
                  for r in df.select(F.spark_partition_id().alias("p")).groupBy("p").count().collect()}
        before = sum(c for p, c in counts.items() if p < info["partition"])
        return re.sub(r"^row (\d+)", lambda m: f"row {before + int(m.group(1))}", info["value"])
    return bad_value(exc, BAD_CELL, locate)


__all__ = ["BAD_CELL", "QUERY_CONTEXT_LOGGERS", "configured_master", "jvm_last_line", "jvm_stderr_captured",
           "local_file", "marked_failure", "quiet_failures", "release_spark", "spark_session"]
