"""The Spark engine of :func:`optnoise.table.release` (optional extra ``spark``).

The same release as the local engine, on a Spark DataFrame: validation and
noise run in ``pandas_udf`` batches on the executors. Each batch reads its own
bits from the executor's operating-system CSPRNG (no shared generator state);
in seeded (not private) mode each partition and batch gets a derived seed.
The output is a Spark dataset directory (part files), written to a temporary
directory beside ``--output`` and renamed onto it only after the manifest is
written; a failure leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, OptnoiseError
from ..io import dumps, write_text_atomic
from ..mechanism import Mechanism
from ..randomness import RandomSource, child_source
from .domain import Domain, describe_value
from .files import move_dir_atomic, temp_dir_beside


def spark_session():
    """The active SparkSession, or a local one using this interpreter for workers."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OptnoiseError("--engine spark needs pyspark: pip install 'optnoise[spark]'") from exc
    spark = (SparkSession.builder.master("local[2]").appName("optnoise-release")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def release_spark(input_path, in_fmt: str, column: str, mechanism: Mechanism, domain: Domain, output_path: Path,
                  out_fmt: str, src: RandomSource, manifest_fn: Callable[[list, int], dict],
                  manifest_path: Path) -> dict:
    """Run the release on Spark; returns the manifest written beside the output."""
    from pyspark import TaskContext
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    spark = spark_session()
    reader = spark.read.option("header", True).option("inferSchema", False)
    df = reader.csv(str(input_path)) if in_fmt == "csv" else spark.read.parquet(str(input_path))
    if column not in df.columns:
        raise InvalidParameterError("column", column, f"a column of {Path(input_path).name}: {df.columns}")
    lookup = domain.lookup()
    mechanism.quantize()  # computed once on the driver, shipped to the executors with the mechanism

    @pandas_udf("long")
    def to_index(s: pd.Series) -> pd.Series:  # null marks a value outside the domain
        return pd.Series([domain.index_of(v, lookup) for v in s], dtype="Int64")

    out_type = "string" if domain.categories is not None else "long"

    @pandas_udf(out_type)
    def privatize(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        part = TaskContext.get().partitionId()
        for b, s in enumerate(batches):
            rng = child_source(src, part, b)
            yield pd.Series(domain.from_index(np.asarray(mechanism.apply(s.to_numpy(dtype=np.int64), source=rng))))

    indexed = df.select(to_index(F.col(column)).alias("_idx"))
    if indexed.filter(F.col("_idx").isNull()).limit(1).count():
        row, value = (df.select(column).rdd.zipWithIndex()
                      .filter(lambda t: domain.index_of(t[0][0], lookup) is None).map(lambda t: (t[1], t[0][0])).first())
        raise InvalidParameterError("input", f"row {row + 1}: {describe_value(value)}", domain.accepted())
    n_rows = df.count()
    released = indexed.select(privatize(F.col("_idx")).alias(column))
    tmp = temp_dir_beside(output_path)
    shutil.rmtree(tmp)  # Spark creates the directory itself
    try:
        writer = released.write.mode("error")
        if out_fmt == "csv":
            writer.option("header", True).csv(str(tmp))
        else:
            writer.parquet(str(tmp))
        parts = sorted(p for p in tmp.iterdir() if p.name.startswith("part-"))
        manifest = manifest_fn(parts, n_rows)
        write_text_atomic(manifest_path, dumps(manifest))
        try:
            move_dir_atomic(tmp, output_path)
        except BaseException:
            manifest_path.unlink(missing_ok=True)  # no manifest without its output
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
