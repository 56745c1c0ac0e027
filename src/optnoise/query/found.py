"""Keys found in the data (issue 36): the candidate keys of a statistic with ``keys = "from-data"``.

A histogram of units may leave its keys undeclared: ``keys = "from-data"``. Its candidate keys
are then the distinct values of its ``key`` column in the input, read before the statistics
(:func:`found_in_frame`, :func:`found_in_batches`), and the spec continues with those values as
its keys (:func:`with_found_keys`) -- so the unit rules, the aggregation and the engines are
those of declared keys. Which candidates are released is decided after the unit rules, by the
threshold of :mod:`.threshold`: a candidate that no unit's counted rows hold (a count of 0: its
rows were dropped by ``max_rows`` or ``where``) is never released, and no document lists a
candidate that did not pass (docs/proofs/key-selection.md). The candidate keys are private:
they stay out of every published part (the document, its CSV, the terminal's view); the
private audit record may name how many there were.

Found values keep their type: an integer column gives integer keys, a text column text keys
(as a declared list would be written); other columns (floats, dates) are refused, naming the
key. At most :data:`MAX_FOUND` distinct values per column (the cells' memory: each candidate is
a cell per group).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..errors import InvalidParameterError
from .statistic import FROM_DATA, Keys

if TYPE_CHECKING:
    from .spec import QuerySpec
#: Most distinct values of a key column taken as candidates.
MAX_FOUND = 100_000


def wanted(spec: QuerySpec) -> tuple[str, ...]:
    """The key columns whose values are to be found (statistics with ``keys = "from-data"``)."""
    return tuple(dict.fromkeys(s.key for s in spec.statistics if s.keys_from_data and s.key))


def _values(column: str, arr: Any) -> set:
    """The distinct non-missing values of one batch's column (an Arrow array), as keys (module
    docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    arr = pc.unique(pc.drop_null(arr))
    kind = arr.type
    if pa.types.is_integer(kind):
        return {int(v) for v in arr.to_pylist()}
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return {str(v) for v in arr.to_pylist()}
    if pa.types.is_floating(kind):   # CSV integers with a missing value read as floats
        vals = arr.to_numpy(zero_copy_only=False)
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)) and np.all(np.abs(vals) < 2 ** 53):
            return {int(v) for v in vals}
    raise InvalidParameterError(f"column {column!r}", str(kind), "integers or text for keys found in the data "
                                "(keys = \"from-data\"); declare the keys of another column")


def _arrow(batch: Any, columns: tuple[str, ...]) -> Any:
    import pyarrow as pa
    if isinstance(batch, (pa.RecordBatch, pa.Table)):
        return batch
    return pa.Table.from_pandas(batch[list(columns)], preserve_index=False)


def found_in_batches(batches: Iterable[Any], spec: QuerySpec) -> dict[str, Keys]:
    """The candidate keys of every key column :func:`wanted` names, from record batches
    (Arrow batches or tables, or pandas frames) read in order; refused above :data:`MAX_FOUND`."""
    columns = wanted(spec)
    seen: dict[str, set] = {c: set() for c in columns}
    for batch in batches:
        table = _arrow(batch, columns)
        for col in columns:
            seen[col] |= _values(col, table.column(col))
            if len(seen[col]) > MAX_FOUND:
                raise InvalidParameterError(f"keys of {col!r}", f"more than {MAX_FOUND:,} distinct values",
                                            f"at most {MAX_FOUND:,} keys found in the data (declare the keys, or "
                                            "coarsen the column)")
    out = {}
    for col, vals in seen.items():
        if any(isinstance(v, int) for v in vals) and any(isinstance(v, str) for v in vals):
            raise InvalidParameterError(f"column {col!r}", "integers and text", "one type of key")
        out[col] = Keys(tuple(sorted(vals)))
    return out


def found_in_frame(frame: Any, spec: QuerySpec) -> dict[str, Keys]:
    """:func:`found_in_batches` of one pandas DataFrame."""
    return found_in_batches([frame], spec) if wanted(spec) else {}


def with_found_keys(spec: QuerySpec, found: dict[str, Keys]) -> QuerySpec:
    """The spec whose ``keys = "from-data"`` statistics hold the found values as their keys
    (still marked ``keys_from_data``: their release is thresholded). A column without any
    value gives no candidate: the statistic then releases nothing."""
    if not wanted(spec):
        return spec
    stats = []
    for s in spec.statistics:
        if s.keys_from_data:
            keys = found.get(s.key)  # type: ignore[arg-type]
            if keys is None:
                raise InvalidParameterError("keys", FROM_DATA, f"the values of column {s.key!r} read first")
            s = replace(s, keys=keys)
        stats.append(s)
    return replace(spec, statistics=tuple(stats))


__all__ = ["FROM_DATA", "MAX_FOUND", "found_in_batches", "found_in_frame", "wanted", "with_found_keys"]
