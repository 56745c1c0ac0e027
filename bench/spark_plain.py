"""The baseline of ``bench/spark_query.py``: a plain PySpark job applying the demo's unit
rules to the demo's statistics spec (``optnoise.demo.STATISTICS_TOML``), written as a Spark
user would write it for this spec, and noise drawn with numpy on the driver (issue 38).

The rules, as optnoise's: a household keeps its first 24 rows by the read index
(``row_number`` over the household ordered by ``monotonically_increasing_id``); kWh clamped
to 0..10 at resolution 1 (``rint``, half to even); households per peak hour: each household
once, at its (circuit, peak hour) of most rows (ties to the first declared); the hour of peak
use and kWh per circuit: a household's rows in its circuit of most rows (ties to the first)
summed per (circuit, hour) and per circuit. One query (the three aggregates in one union, the
ranked rows shared), one collect of at most 12 x 24 x 2 + 12 rows. It assumes what the demo's
data satisfy (every circuit, hour and peak hour declared, no missing value) and counts nothing
that was left out: optnoise checks and counts those.
"""

from __future__ import annotations

import json
import sys

import numpy as np

MAX_ROWS, CIRCUITS, HOURS = 24, 12, 24


def aggregates(spark, path: str) -> dict[str, np.ndarray]:
    """The exact answers: ``households`` (circuits x peak hours), ``peak`` (circuits x
    hours, kWh), ``kwh`` (per circuit)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    df = spark.read.parquet(path).select("household", "circuit", "hour", "peak_hour", "kwh")
    ranked = df.withColumn("row", F.monotonically_increasing_id()).withColumn(
        "r", F.row_number().over(Window.partitionBy("household").orderBy("row")))
    kept = ranked.filter(F.col("r") <= MAX_ROWS)
    unit = Window.partitionBy("household")
    kw = F.least(F.greatest(F.rint(F.col("kwh")), F.lit(0.0)), F.lit(10.0)).cast("long")

    def best(score: str, code) -> object:   # the code of most score, ties to the least
        return -F.max(F.struct(F.col(score), -code)).over(unit)["col2"]
    cells = kept.groupBy("household", "circuit", "peak_hour").agg(F.count("*").alias("n"))
    code = (F.col("circuit") - 1) * HOURS + F.col("peak_hour")
    households = cells.withColumn("home", best("n", code)).filter(code == F.col("home")) \
        .groupBy("circuit", "peak_hour").count().select(F.lit(0).alias("t"), "circuit", F.col("peak_hour").alias("k"),
                                                         F.col("count").alias("x"))
    hours = kept.groupBy("household", "circuit", "hour").agg(F.count("*").alias("n"), F.sum(kw).alias("v"))
    hours = hours.withColumn("g", F.sum("n").over(Window.partitionBy("household", "circuit")))
    homed = hours.withColumn("home", best("g", F.col("circuit"))).filter(F.col("circuit") == F.col("home"))
    peak = homed.groupBy("circuit", "hour").agg(F.sum("v").alias("x")).select(
        F.lit(1).alias("t"), "circuit", F.col("hour").alias("k"), "x")
    kwh = homed.groupBy("circuit").agg(F.sum("v").alias("x")).select(F.lit(2).alias("t"), "circuit",
                                                                      F.lit(0).alias("k"), "x")
    out = {"households": np.zeros((CIRCUITS, HOURS), np.int64), "peak": np.zeros((CIRCUITS, HOURS), np.int64),
           "kwh": np.zeros((CIRCUITS, 1), np.int64)}
    names = ["households", "peak", "kwh"]
    for r in households.unionByName(peak).unionByName(kwh).collect():
        out[names[r["t"]]][r["circuit"] - 1, r["k"]] += r["x"]
    return out


def release(answers: dict[str, np.ndarray], out: str, seed: int | None = None) -> None:
    """Two-sided geometric noise (numpy) at the demo's epsilons: the histogram (a household
    moves two cells, eps 1), the peak hour (argmax of the noisy totals, eps 0.5, twice) and
    the kWh (24 rows x 10 kWh, eps 1); JSON."""
    rng = np.random.default_rng(seed)

    def geometric(shape, scale: float) -> np.ndarray:
        p = 1 - np.exp(-1 / scale)
        return rng.geometric(p, shape) - rng.geometric(p, shape)
    doc = {"households_per_peak_hour": (answers["households"] + geometric(answers["households"].shape, 2.0)).tolist(),
           "circuit_peak": [int(np.argmax(row)) for row in answers["peak"] + geometric(answers["peak"].shape, 480.0)],
           "circuit_peak_noisy_max": [int(np.argmax(row)) for row in
                                      answers["peak"] + geometric(answers["peak"].shape, 480.0)],
           "kwh": (answers["kwh"] + geometric(answers["kwh"].shape, 480.0)).ravel().tolist()}
    with open(out, "w") as fh:
        json.dump(doc, fh)


if __name__ == "__main__":   # spark_plain.py INPUT OUTPUT (the active or a local session)
    from pyspark.sql import SparkSession
    release(aggregates(SparkSession.builder.getOrCreate(), sys.argv[1]), sys.argv[2])
