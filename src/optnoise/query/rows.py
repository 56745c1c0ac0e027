"""The per-row rules of a query, on one batch of rows: the unit of each row, the rows a
statistic counts (``where``, declared keys and groups), each row's cell, and its clamped,
rounded value (docs/proofs/contribution-bounding.md; the Spark engine's twins are in
:mod:`.spark_rules`).

Numbers in text columns (a CSV's) are read as :func:`pandas.to_numeric` reads them; where
every text of a column is a plain decimal (:data:`DECIMAL`: sign, digits, a point, an
exponent), Arrow's parser reads them instead -- both round to the nearest double, so the
numbers are the same -- at a tenth of the time.

A column comes as a pandas Series (a DataFrame's), or from an Arrow batch
(:class:`ArrowRows`) as Arrow text, a NumPy array of numbers, or else the Series pandas would
give: the rules read Arrow text and NumPy numbers without pandas (whose import is most of a
small query's start-up, issue 37) and turn them into that Series (:func:`series`) where only
pandas reads them (a text that is not a plain decimal, a text key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidParameterError
from .arrow import arrow_numpy
from .cells import bump
from .spec import QuerySpec
from .statistic import Condition, Keys, Statistic

if TYPE_CHECKING:
    import pandas as pd

#: Texts that both parsers read as the same number (checked in the tests on edge cases).
DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


class ArrowRows:
    """One Arrow batch read column by column as the rules read a DataFrame's (module docstring):
    ``rows[name]`` is the column's Arrow text, its numbers as a NumPy array (integers without a
    missing value -- not uint64 --, or floats, NaN where missing: as pandas has them), or else
    the Series :func:`arrow_to_pandas` gives."""

    def __init__(self, batch: Any) -> None:
        self.batch = batch

    def __len__(self) -> int:
        return self.batch.num_rows

    def __getitem__(self, name: str) -> Any:
        import pyarrow as pa
        at = self.batch.schema.get_field_index(name)
        if at < 0:
            raise KeyError(name)
        col = self.batch.column(at)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        kind = col.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return col
        if pa.types.is_floating(kind) or (pa.types.is_integer(kind) and not col.null_count and not (
                pa.types.is_uint64(kind))):
            return arrow_numpy(col, np.nan)
        return col.to_pandas(types_mapper=_nullable_integers if pa.types.is_integer(kind) else None)


def is_text(col: Any) -> bool:
    """Whether ``col`` is Arrow text (:class:`ArrowRows`)."""
    import pyarrow as pa
    return isinstance(col, (pa.Array, pa.ChunkedArray))


def series(col: Any) -> "pd.Series":
    """The column as the Series pandas gives for it (a column of :class:`ArrowRows`, or a Series)."""
    if isinstance(col, np.ndarray):
        import pandas as pd
        return pd.Series(col)
    return col.to_pandas() if is_text(col) else col


def unit_ids(df: "pd.DataFrame", spec: QuerySpec, *, rows: np.ndarray) -> np.ndarray:
    """The unit of every row: its id (integers kept as integers), or its row number (``rows``:
    each row's number in the input) when each row is a unit."""
    uid = spec.unit.id
    if uid is None:
        return np.asarray(rows, dtype=np.int64)
    col = df[uid]
    if isinstance(col, np.ndarray):
        missing = np.isnan(col) if col.dtype.kind == "f" else np.zeros(len(col), dtype=bool)
    else:
        missing = arrow_numpy(col.is_null()) if is_text(col) else col.isna().to_numpy()
    if missing.any():
        row = int(rows[int(np.flatnonzero(missing)[0])])
        raise InvalidParameterError("unit.id", f"column '{uid}': missing value at data row {row}",
                                    "an id in every row (a row without one belongs to no unit)")
    if isinstance(col, np.ndarray):
        return col if col.dtype.kind in "iu" else col.astype(object)
    if not is_text(col) and col.dtype.kind in "iu":
        return col.to_numpy()
    text = arrow_text(col)
    return text if text is not None else col.to_numpy(dtype=object)


def arrow_text(col: Any) -> Any:
    """The column's values as one Arrow array when they are text held by Arrow (a CSV's
    columns, from :class:`ArrowRows` or as :func:`arrow_to_pandas` gives them: no copy), else
    ``None``."""
    if isinstance(col, np.ndarray):
        return None
    import pyarrow as pa
    if is_text(col):
        return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    import pandas as pd
    dtype = col.dtype
    arrow = (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow") or (
        isinstance(dtype, pd.ArrowDtype) and (pa.types.is_string(dtype.pyarrow_dtype)
                                              or pa.types.is_large_string(dtype.pyarrow_dtype)))
    if not arrow:
        return None
    values = pa.array(col.array)
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def cell_rows(df: "pd.DataFrame", stat: Statistic,
              kept: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """One batch's rows counted by ``stat`` (``where``, declared keys and groups) with each
    row's group and key index, and the counts of the rows left out, as ``(name, n)``; only
    the ``kept`` rows (default: all) can count and are counted."""
    mask = np.ones(len(df), dtype=bool) if kept is None else kept.copy()
    for cond in stat.where:
        mask &= matches(df[cond.column], cond)
    tallies = [("rows_not_matching_where", int(len(df) - mask.sum() if kept is None else (kept & ~mask).sum()))]
    group = declared_index(df[stat.by], stat.groups) if stat.by else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    key = declared_index(df[stat.key], stat.keys) if stat.key else np.zeros(len(df), np.int64)  # type: ignore[arg-type]
    undeclared = mask & ((group < 0) | (key < 0))
    tallies.append(("rows_undeclared_key_or_group", int(undeclared.sum())))
    return mask & ~undeclared, group, key, tallies


def counted_rows(df: "pd.DataFrame", rows: np.ndarray, stat: Statistic,
                 counts: dict[str, int]) -> tuple[np.ndarray, ...]:
    """One batch's per-row rules for one statistic: the rows counted (``where``, declared
    keys and groups), each row's group and key index and its clamped, rounded value."""
    mask, group, key, tallies = cell_rows(df, stat)
    for name, n in tallies:
        bump(counts, name, n)
    value = np.zeros(len(df), np.int64)
    if stat.value_column:
        value = row_values(df[stat.value_column], mask, rows, stat, counts)
    bump(counts, "rows_counted_before_unit_rules", mask.sum())
    return mask, group, key, value


def arrow_to_pandas(batch: Any) -> "pd.DataFrame":
    """An Arrow batch or table as a DataFrame (no block copy), its *integer columns with
    missing values* as pandas' nullable integers.

    Why: Arrow's default turns such a column into float64, which rounds integers beyond
    2^53; a row's declared key would then depend on whether another row of its batch has a
    missing value -- one unit could move other units' cells (:func:`declared_index`). Every
    row's key is decided by its own value alone this way, and as the Spark engine decides it."""
    import pyarrow as pa
    df = batch.to_pandas(split_blocks=True)
    for i, field in enumerate(batch.schema):
        if pa.types.is_integer(field.type) and batch.column(i).null_count:
            df[field.name] = batch.column(i).to_pandas(types_mapper=_nullable_integers)
    return df


def _nullable_integers(arrow_type: Any) -> Any:
    import pandas as pd
    import pyarrow as pa
    return pd.Int64Dtype() if pa.types.is_signed_integer(arrow_type) else (
        pd.UInt64Dtype() if pa.types.is_unsigned_integer(arrow_type) else None)


def numbers(col: Any) -> np.ndarray:
    """The column's values as doubles, NaN where missing or not a number (module docstring)."""
    if isinstance(col, np.ndarray):   # integers or floats (:class:`ArrowRows`): as pandas reads them
        return col.astype(np.float64)
    if not is_text(col) and col.dtype == bool:
        return np.full(len(col), np.nan)
    text = arrow_text(col)
    if text is not None:
        parsed = plain_decimals(text)
        if parsed is not None:
            return parsed
    import pandas as pd
    return pd.to_numeric(series(col), errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def plain_decimals(text: Any, sample: int = 4096) -> np.ndarray | None:
    """Arrow text as doubles (NaN where missing) when every text is a plain decimal
    (:data:`DECIMAL`), else ``None``. A column of few distinct texts (judged on its first
    ``sample``) is checked and parsed once per distinct text."""
    import pyarrow as pa
    import pyarrow.compute as pc
    values, index = text, None
    if len(pc.unique(text.slice(0, sample))) * 4 <= min(len(text), sample):
        encoded = pc.dictionary_encode(text)
        values = encoded.dictionary
        index = arrow_numpy(encoded.indices, len(values))
    plain = pc.match_substring_regex(values, DECIMAL)
    if (pc.sum(plain).as_py() or 0) != len(values) - values.null_count:
        return None
    parsed = arrow_numpy(pc.cast(values, pa.float64()), np.nan)
    return parsed if index is None else np.append(parsed, np.nan)[index]


def matches(col: Any, cond: Condition) -> np.ndarray:
    """Rows whose value meets the condition (a missing value meets none)."""
    if cond.values is not None:
        nums = [v for v in cond.values if not isinstance(v, str)]
        texts = [v for v in cond.values if isinstance(v, str)]
        hit = np.zeros(len(col), dtype=bool)
        if nums:
            hit |= np.isin(numbers(col), np.asarray(nums, dtype=float))
        if texts:
            hit |= series(col).astype("string").isin(texts).fillna(False).to_numpy(dtype=bool)
        return hit
    x = numbers(col)
    hit = ~np.isnan(x)
    if cond.lower is not None:
        hit &= x >= cond.lower
    if cond.upper is not None:
        hit &= x <= cond.upper
    return hit


def declared_index(col: Any, keys: Keys) -> np.ndarray:
    """The position of every value among the declared keys; -1 when undeclared or missing.
    Integer keys accept integral numbers (``7``, ``7.0``, the text ``"7"``); text keys compare
    as text."""
    lookup = {v: i for i, v in enumerate(keys.values)}
    if keys.integer:
        out = np.full(len(col), -1, np.int64)
        dtype = None if is_text(col) else col.dtype   # (Arrow text: numbers)
        if isinstance(dtype, np.dtype) and (dtype.kind == "i" or dtype.kind == "u" and dtype.itemsize < 8):
            # a NumPy integer column (it has no missing values): its values, no float round trip
            ok, ints = slice(None), np.asarray(col, dtype=np.int64)
        elif dtype is not None and not isinstance(col, np.ndarray) and dtype.kind in "iu":
            # pandas' nullable integers (:func:`arrow_to_pandas`) or uint64: the present values,
            # exactly (beyond int64: no declared key, keys being int64)
            ok = ~col.isna().to_numpy(dtype=bool)
            if col.dtype.kind == "u":
                u = col.to_numpy(dtype=np.uint64, na_value=0)
                ok &= u < np.uint64(2 ** 63)
                ints = u[ok].astype(np.int64)
            else:
                ints = col.to_numpy(dtype=np.int64, na_value=0)[ok]
        else:
            x = numbers(col)
            ok = np.isfinite(x) & (x == np.round(x))
            ints = x[ok].astype(np.int64)
        lo = min(keys.values)
        if keys.values == tuple(range(lo, lo + keys.size)):   # a range: arithmetic, not a dict
            idx = ints - lo
            idx[(idx < 0) | (idx >= keys.size)] = -1
            out[ok] = idx
        else:
            out[ok] = np.array([lookup.get(int(v), -1) for v in ints], np.int64)
        return out
    text = series(col).astype("string")
    return text.map(lookup).fillna(-1).to_numpy(dtype=np.int64)


def row_values(col: Any, mask: np.ndarray, rows: np.ndarray, stat: Statistic,
            counts: dict[str, int]) -> np.ndarray:
    """The counted rows' values clamped and rounded, in units of the resolution."""
    x = numbers(col)
    bad = mask & ~np.isfinite(x)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raw = col[at].as_py() if is_text(col) else col[at] if isinstance(col, np.ndarray) else col.iloc[at]
        raise InvalidParameterError(f"column '{stat.value_column}'", f"{'missing value' if raw is None or raw != raw else repr(raw)}"
                                    f" at data row {int(rows[at])}", "numbers in a summed column (a missing or "
                                    "non-numeric value is not imputed)")
    lo, hi = stat.clamp  # type: ignore[misc]
    bump(counts, "values_clamped", (mask & ((x < float(lo)) | (x > float(hi)))).sum())
    slo, shi = stat.scaled_clamp
    scaled = np.rint(np.where(mask, x, 0.0) / float(stat.resolution))
    return np.clip(scaled, slo, shi).astype(np.int64)


# ------------------------------------------------------------------ exact answers


__all__ = ["DECIMAL", "ArrowRows", "arrow_text", "arrow_to_pandas", "cell_rows", "counted_rows", "declared_index", "matches",
           "is_text", "numbers", "plain_decimals", "row_values", "series", "unit_ids"]
