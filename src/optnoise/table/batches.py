"""One batch of a table, released: the same function for the local engine, Python frames and Spark.

Privatized columns are validated and replaced by their released values (int64 for
integers, strings for categories); kept columns pass through unchanged; the columns stay
in the input's order and the rows in theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..randomness import RandomSource
from .plan import ColumnPlan

if TYPE_CHECKING:
    import pyarrow as pa


def output_schema(input_schema: "pa.Schema", plans: dict[str, ColumnPlan]) -> "pa.Schema":
    """The released table's schema: privatized columns as int64 or string, kept ones as read."""
    import pyarrow as pa
    fields = []
    for f in input_schema:
        plan = plans.get(f.name)
        if plan is None:
            fields.append(f)
        else:
            fields.append(pa.field(f.name, pa.string() if plan.domain.categories is not None else pa.int64(),
                                   nullable=False))
    return pa.schema(fields)


def privatize_batch(batch: "pa.RecordBatch", plans: dict[str, ColumnPlan], schema: "pa.Schema", *,
                    first_row: int, source: RandomSource) -> "pa.RecordBatch":
    """Release one batch; ``first_row`` (1-based) numbers its rows in error messages."""
    import pyarrow as pa
    arrays = []
    for f in schema:
        plan = plans.get(f.name)
        column = batch.column(f.name)
        arrays.append(column if plan is None else plan.privatize(column, first_row=first_row, source=source))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
