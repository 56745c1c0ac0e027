"""Arrow arrays of numbers or booleans as NumPy arrays, read from their buffers.

Why not ``pyarrow.Array.to_numpy``: pyarrow converts through its pandas bridge, whose first
use imports pandas when it is installed -- 0.2 s, most of a small query's start-up (issue 37,
docs/benchmarks.md) -- even for a zero-copy view of integers. The engine's per-row rules read
a CSV's text columns with Arrow's kernels (:mod:`.rows`, :mod:`.units`) and need only the
results as NumPy arrays: their values buffer (a bitmap for booleans) and their validity
bitmap, as the Arrow columnar format lays them out.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def bits(buffer: Any, offset: int, length: int) -> np.ndarray:
    """``length`` bits of an Arrow bitmap from bit ``offset`` (least significant bit first)."""
    packed = np.frombuffer(buffer, np.uint8, count=(offset + length + 7) // 8)
    return np.unpackbits(packed, bitorder="little")[offset:offset + length].astype(bool)


def arrow_numpy(values: Any, missing: Any = 0) -> np.ndarray:
    """A new NumPy array of an Arrow array (or chunked array) of integers, floats or booleans,
    ``missing`` where a value is null (a float ``missing`` makes integers and booleans float64,
    as ``to_numpy`` gives integers with nulls); equal to ``values.to_numpy(zero_copy_only=False)``
    wherever that has no null.

    Raises
    ------
    TypeError
        Another Arrow type (text, dates, ...).
    """
    import pyarrow as pa
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind, length, offset = values.type, len(values), values.offset
    if pa.types.is_boolean(kind):
        dtype = np.dtype(bool)
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
        letter = "f" if pa.types.is_floating(kind) else "i" if pa.types.is_signed_integer(kind) else "u"
        dtype = np.dtype(f"{letter}{kind.bit_width // 8}")
    else:
        raise TypeError(f"arrow_numpy: Arrow type {kind} is not a number or a boolean")
    if length == 0:
        return np.zeros(0, dtype)
    validity, data = values.buffers()[:2]
    if dtype == bool:
        out = bits(data, offset, length)
    else:
        out = np.frombuffer(data, dtype, count=offset + length)[offset:].copy()
    if values.null_count:
        if isinstance(missing, float) and out.dtype.kind in "iub":
            out = out.astype(np.float64)
        out[~bits(validity, offset, length)] = missing
    return out


__all__ = ["arrow_numpy", "bits"]
