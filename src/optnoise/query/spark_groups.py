"""The Spark engine's rules of a person in several groups and of random bounding
(``unit.max_groups``, ``unit.max_rows_per_group``, ``unit.bounding = "random"``; issue 36).

**The read index.** Random bounding's priorities are a pseudorandom function of each row's
read index (:mod:`.priority`): its number in the input, 1, 2, ..., as the local engine counts
it. Spark's ``monotonically_increasing_id`` (:data:`.spark_units.ROW`) is the partition's
index in its high 31 bits and the row's position in the partition in its low 33; the file's
partitions follow its order (docs/proofs/spark-bounding.md), so the read index is the rows of
the partitions before plus the position plus one (:func:`with_index`: one small job counts each
partition's rows, the largest position it holds plus one).
"""

from __future__ import annotations

from typing import Any

from .spark_units import ROW, to_frame

#: Each row's read index (1, 2, ...: the local engine's row number), under random bounding.
INDEX = "__optnoise_index"
#: The bits of ``monotonically_increasing_id`` that hold the position in the partition.
POSITION_BITS = 33


def index_column(raw: Any) -> Any:
    """The read index as a Spark column of ``raw``'s :data:`.spark_units.ROW` (module
    docstring): one job, one row per partition to the driver."""
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


def with_index(raw: Any) -> Any:
    """``raw`` with :data:`INDEX`, each row's read index (:func:`index_column`)."""
    return raw.withColumn(INDEX, index_column(raw))


__all__ = ["INDEX", "POSITION_BITS", "index_column", "with_index"]
