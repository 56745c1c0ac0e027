"""Bounds chosen privately on the Spark engine (issue 36 items 5 and 6): the pre-pass of
:mod:`.autobound` as a Spark aggregation.

``max_rows = "auto"`` and ``clamp = "auto"`` need one number per unit (its rows; its largest
kept value, or a quantile's total of them) and, per request, the units in each cell of the
public grid. On Spark both are computed on the executors and only the grid's counts reach the
driver (one row per request and non-empty cell, and the number of units); there the
histograms are released and the bounds chosen by :func:`.autobound.chosen_from_counts`, the
local engine's code, with the same draws in the same order: for the same seed the chosen
bounds, and then the document, are the local engine's. Two paths, the same counts:

**The JVM path** (:func:`jvm_rows`; a Parquet file whose columns have the types of
:func:`.spark_rules.eligible`, or a CSV when only ``max_rows`` is chosen: the id column read
as text, as locally): one hash aggregation by unit id -- its rows, and per clamp its largest
value in steps of the resolution over the rows its ``where`` keeps (:func:`.spark_rules.matches`,
the same doubles as :func:`.rows.numbers` divided by the resolution) or a quantile's total of
those values rounded half to even (``rint``) and clamped below at 0, integers added exactly
in any order -- then each unit's grid cell, the number of grid points below its value (``v >
g``, as ``np.searchsorted(grid, v, "left")``), the last cell holding everything above, and a
count per (request, cell).

**The Python path** (:func:`python_rows`; a CSV with a clamp, parsed as pandas does, or
other column types): the rows shuffled by unit (hash of the id as text), then per partition on
the executors the local engine's own :func:`.autobound.unit_values` and
:func:`.autobound.grid_histogram`; every unit lies in one partition, so the partitions' cell
counts add up to the local engine's.

A row without an id is refused as locally, naming its data row (the least read index of such
rows, counted in the file by a second job).

Proof: docs/proofs/private-bounds.md (the choice reads the grid's counts only; which engine
counted them does not enter).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from .autobound import chosen_from_counts, grid_histogram, has_auto, prepass_columns, requests, unit_values
from .auto_spec import TOTAL_KINDS

if TYPE_CHECKING:
    from ..randomness import RandomSource
    from .spec import QuerySpec

#: The rows the driver receives: ``(request, cell, n)``; ``request`` :data:`UNITS` carries
#: the number of units, :data:`NO_ID` the least read index of a row without an id.
SCHEMA = "request int, cell long, n long"
UNITS, NO_ID = -1, -2


def chosen_on_spark(input_path: str | os.PathLike, fmt: str, spec: QuerySpec, source: RandomSource, *,
                    master: str | None = None) -> QuerySpec:
    """The spec with its bounds chosen privately, the grid counts made on Spark (module
    docstring); the spec unchanged, and no job, without an auto bound.

    Proof: docs/proofs/private-bounds.md
    """
    if not has_auto(spec):
        return spec
    from ..publish.spark import interruptible, spark_session
    spark = spark_session(master)
    with interruptible(spark):
        counts, units = grid_counts(spark, input_path, fmt, spec)
    return chosen_from_counts(spec, counts, units, source)


def grid_counts(spark: Any, input_path: str | os.PathLike, fmt: str, spec: QuerySpec) -> tuple[list[np.ndarray], int]:
    """Each request's units per grid cell (:func:`.autobound.requests`' order) and the number of
    units, counted on Spark: the JVM path where it applies, else the Python path."""
    from pyspark.sql import functions as F

    from ..publish.spark import job_failure, quiet_failures
    from .spark import read_input
    from .spark_units import ROW
    raw = read_input(spark, input_path, fmt, prepass_columns(spec)).withColumn(ROW, F.monotonically_increasing_id())
    try:
        with quiet_failures():
            rows = (jvm_rows(raw, spec) if jvm_fits(fmt, raw, spec) else python_rows(raw, spec)).collect()
    except Exception as exc:   # noqa: BLE001 -- a failed job, said in one line
        raise job_failure(exc) from None
    counts = [np.zeros(len(request.grid), np.int64) for _, _, request, _ in requests(spec)]
    units, missing = 0, []
    for r in rows:
        if r["request"] == UNITS:
            units += int(r["n"])
        elif r["request"] == NO_ID:
            missing.append(int(r["cell"]))
        else:
            counts[r["request"]][int(r["cell"])] += int(r["n"])
    if missing:
        refuse_missing_id(raw, spec, min(missing))
    return counts, units


def jvm_fits(fmt: str, raw: Any, spec: QuerySpec) -> bool:
    """Whether the JVM path counts as the local engine does: a CSV when only ``max_rows`` is
    chosen (its ids are text), or a Parquet file whose id, ``where`` and value columns have the
    types of :func:`.spark_rules.eligible` (each clamp checked as a sum of its column): an
    integer or text id, never a float one (a NaN id is missing locally)."""
    from .spark_rules import eligible
    from .statistic import Statistic
    clamps = [stat for _, _, _, stat in requests(spec) if stat is not None]
    if fmt == "csv":
        return not clamps
    types = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
    sums = tuple(Statistic(s.name, "sum", where=s.where, value_column=s.value_column) for s in clamps)
    return eligible(types, replace(spec, statistics=sums))


def unit_value(stat: Any, resolution: Any) -> Any:
    """A clamp's number per unit as a Spark aggregate (null for a unit with no kept row): the
    largest kept value in steps of the resolution, or a quantile's total of them rounded."""
    from pyspark.sql import functions as F

    from .spark_rules import matches, number, present
    x = number(stat.value_column) / F.lit(float(resolution))
    keep = present(x) & (F.abs(x) != F.lit(float("inf")))
    for cond in stat.where:
        keep &= matches(cond)
    if stat.kind in TOTAL_KINDS:
        return F.sum(F.when(keep, F.greatest(F.rint(x), F.lit(0.0))))
    return F.max(F.when(keep, x))


def cell_of(value: Any, grid: tuple[int, ...]) -> Any:
    """The grid cell of a per-unit value (null stays null): the number of grid points below
    it, at most the last cell (:func:`.autobound.grid_histogram`)."""
    from pyspark.sql import functions as F
    below = sum((value > F.lit(float(g))).cast("long") for g in grid)
    return F.when(value.isNotNull(), F.least(below, F.lit(len(grid) - 1)))   # least() skips a null


def jvm_rows(raw: Any, spec: QuerySpec) -> Any:
    """The JVM path's rows (:data:`SCHEMA`): one aggregation by unit, each unit's cells, a
    count per (request, cell)."""
    from pyspark.sql import functions as F

    from .spark_units import ROW
    uid = F.col(f"`{spec.unit.id}`")
    asked = requests(spec)
    aggs = [F.count(F.lit(1)).alias("v0") if stat is None else unit_value(stat, request.resolution).alias(f"v{i}")
            for i, (_, _, request, stat) in enumerate(asked)]
    per_unit = raw.groupBy(uid.alias("id")).agg(F.min(ROW).alias("first"), *aggs)
    item = [F.struct(F.lit(i).alias("request"), cell_of(F.col(f"v{i}").cast("double"), request.grid).alias("cell"))
            for i, (_, _, request, _) in enumerate(asked)]
    unit = F.struct(F.lit(UNITS).alias("request"), F.lit(0).cast("long").alias("cell"))
    missing = F.array(F.struct(F.lit(NO_ID).alias("request"), F.col("first").alias("cell")))
    cells = per_unit.select(F.explode(F.when(F.col("id").isNull(), missing).otherwise(F.array(unit, *item)))
                            .alias("c")).select("c.request", "c.cell").where(F.col("cell").isNotNull())
    return cells.groupBy("request", "cell").agg(F.count(F.lit(1)).alias("n")) \
        .select(F.col("request").cast("int"), F.col("cell").cast("long"), F.col("n").cast("long"))


def python_rows(raw: Any, spec: QuerySpec) -> Any:
    """The Python path's rows (:data:`SCHEMA`): the rows shuffled by unit, each partition's
    units counted by the local engine's code (module docstring)."""
    from pyspark.sql import functions as F

    from .spark_units import UNIT
    keyed = raw.withColumn(UNIT, F.col(f"`{spec.unit.id}`").cast("string"))
    return keyed.repartition(UNIT).drop(UNIT).mapInArrow(per_partition(spec), SCHEMA)


def per_partition(spec: QuerySpec) -> Any:
    """The executors' function of the Python path: a partition's rows without an id set
    apart (the least read index sent), the others' grid counts by :func:`.autobound.unit_values`."""
    asked = requests(spec)
    uid = spec.unit.id

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        from .spark import rebatch
        from .spark_units import ROW
        first: list[int] = []

        def with_ids() -> Iterator[Any]:
            for table in rebatch(batches):
                gone = pc.is_null(table.column(uid), nan_is_null=True)
                if pc.any(gone).as_py():
                    first.append(pc.min(pc.filter(table.column(ROW), gone)).as_py())
                    table = table.filter(pc.invert(gone))
                yield table
        values, units = unit_values(with_ids(), spec)
        out = [(UNITS, 0, units)] + ([(NO_ID, min(first), 1)] if first else [])
        for i, ((_, _, request, _), v) in enumerate(zip(asked, values)):
            out += [(i, cell, int(n)) for cell, n in enumerate(grid_histogram(v, request.grid)) if n]
        yield pa.RecordBatch.from_arrays([pa.array([r[k] for r in out], t) for k, t in
                                          enumerate((pa.int32(), pa.int64(), pa.int64()))],
                                         names=["request", "cell", "n"])
    return run


def refuse_missing_id(raw: Any, spec: QuerySpec, first: int) -> None:
    """Refuse a row without an id as the local engine does (:func:`.rows.unit_ids`' error),
    its data row counted in the file: the rows read at or before its read index ``first``."""
    import pandas as pd
    from pyspark.sql import functions as F

    from .rows import unit_ids
    from .spark_units import ROW
    row = raw.filter(F.col(ROW) <= first).count()
    unit_ids(pd.DataFrame({spec.unit.id: [None]}), spec, rows=np.array([row]))


__all__ = ["NO_ID", "SCHEMA", "UNITS", "cell_of", "chosen_on_spark", "grid_counts", "jvm_fits", "jvm_rows",
           "per_partition", "python_rows", "refuse_missing_id", "unit_value"]
