"""A column's domain: which raw values are accepted and how they map to a mechanism's inputs.

Three kinds:

* categories ``c_0..c_{K-1}`` (in order) -> inputs ``0..K-1``;
* bounded integers ``lower..upper`` (ordered, or ``cyclic`` such as hours and weekdays)
  -> inputs ``0..upper-lower``;
* all integers (noise on the integer line, value unit only) -> the values themselves.

Conversion is vectorised on Arrow arrays (one batch at a time). The rules for an integer
column are the same for every file format: an integer, or an integral float (``7.0`` from
Parquet, or the text ``7.0`` from a CSV) is read as that integer; the text must be ASCII
digits with an optional sign and an optional fraction of zeros (``7``, ``-3``, ``+7``,
``7.0``), so ``1_0``, ``1e3``, ``true`` and ``2.5`` are refused. Booleans (Arrow
``bool`` columns, Python ``True``/``False``) are never integers. A bad or missing value
stops the release with an error naming its data row (1-based, header excluded), column
and value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidParameterError

if TYPE_CHECKING:  # pyarrow is imported where it is used
    import pyarrow as pa

#: Text accepted as an integer: ASCII digits, an optional sign, an optional fraction of zeros.
INTEGER_TEXT = r"^\s*(?P<v>[+-]?[0-9]+)(?:\.0*)?\s*$"


def describe_value(v: Any) -> str:
    """How a bad value is shown in an error: missing values say so."""
    return "missing value" if v is None else repr(v)


@dataclass(frozen=True)
class Domain:
    """Categories (in order), integers ``lower..upper`` (``cyclic`` or ordered), or all integers.

    Parameters
    ----------
    categories:
        The categories in domain order (at least two, distinct); their order matters for
        ordered costs such as MSE.
    lower, upper:
        Both or neither: a bounded integer domain ``lower < upper``; neither (and no
        categories) is the unbounded integer domain of noise on the integer line.
    cyclic:
        A bounded domain whose ends are neighbours (hours, weekdays): cyclic noise is
        natural there, and a designed mechanism minimises the circular error.
    """

    categories: tuple[str, ...] | None = None
    lower: int | None = None
    upper: int | None = None
    cyclic: bool = False

    def __post_init__(self) -> None:
        if self.categories is not None:
            cats = tuple(self.categories)
            if self.lower is not None or self.upper is not None or self.cyclic:
                bound = "lower" if self.lower is not None else "upper" if self.upper is not None else "cyclic"
                raise InvalidParameterError(bound, getattr(self, bound), "no lower/upper/cyclic with categories "
                                                                         "(their order is the domain)")
            if len(cats) < 2 or not all(isinstance(c, str) for c in cats):
                raise InvalidParameterError("categories", ",".join(map(str, cats)), "at least two categories")
            if len(set(cats)) != len(cats):
                raise InvalidParameterError("categories", ",".join(cats), "distinct categories")
            object.__setattr__(self, "categories", cats)
            return
        for name in ("lower", "upper"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise InvalidParameterError(name, v, "an integer")
        if (self.lower is None) != (self.upper is None):
            missing = "upper" if self.upper is None else "lower"
            raise InvalidParameterError(missing, None, "both lower and upper (or neither: all integers)")
        if self.lower is not None:
            if not self.lower < self.upper:  # type: ignore[operator]
                raise InvalidParameterError("upper", self.upper, f"an integer > lower = {self.lower}")
            object.__setattr__(self, "lower", int(self.lower))
            object.__setattr__(self, "upper", int(self.upper))  # type: ignore[arg-type]
        elif self.cyclic:
            raise InvalidParameterError("cyclic", True, "a cyclic domain with lower and upper")

    # ------------------------------------------------------------------ shape
    @property
    def size(self) -> int | None:
        """Number of values (``None`` for all integers)."""
        if self.categories is not None:
            return len(self.categories)
        return None if self.lower is None else self.upper - self.lower + 1  # type: ignore[operator]

    @property
    def n(self) -> int | None:
        """Largest input index ``size - 1`` (the mechanisms' ``n``)."""
        return None if self.size is None else self.size - 1

    @property
    def kind(self) -> str:
        """``categorical``, ``numeric`` (bounded integers) or ``integer`` (all integers)."""
        return "categorical" if self.categories is not None else "integer" if self.lower is None else "numeric"

    @property
    def offset(self) -> int:
        """Value of input 0."""
        return self.lower if self.lower is not None else 0

    def to_json(self) -> dict:
        if self.categories is not None:
            return {"kind": "categorical", "categories": list(self.categories)}
        if self.lower is None:
            return {"kind": "integer", "lower": None, "upper": None}
        return {"kind": "numeric", "lower": self.lower, "upper": self.upper, "cyclic": self.cyclic}

    def describe(self) -> str:
        """The domain in words."""
        if self.categories is not None:
            return f"{len(self.categories)} categories"
        if self.lower is None:
            return "all integers"
        return f"integers {self.lower}..{self.upper}" + (" (cyclic)" if self.cyclic else "")

    def accepted(self) -> str:
        """What a value of this domain may be, in words."""
        if self.categories is not None:
            return f"one of the categories {list(self.categories)} (no missing values)"
        written = "written like 7, -3 or 7.0; no missing values"
        if self.lower is None:
            return f"an integer ({written})"
        return f"an integer in [{self.lower}, {self.upper}] ({written})"

    # ------------------------------------------------------------------ conversion
    def to_index(self, values: "pa.Array | pa.ChunkedArray", *, column: str, first_row: int = 1) -> np.ndarray:
        """Inputs (int64) of a batch of raw values; the first bad one raises.

        ``first_row`` is the data-row number (1-based) of the batch's first value, for
        the message.
        """
        import pyarrow as pa

        arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if arr.null_count:
            self._bad(arr, np.flatnonzero(_is_null(arr)), column, first_row)
        if self.categories is not None:
            return self._category_index(arr, column, first_row)
        x = self._integers(arr, column, first_row)
        if self.lower is None:
            return x
        outside = np.flatnonzero((x < self.lower) | (x > self.upper))
        if outside.size:
            self._bad(arr, outside, column, first_row)
        return x - self.lower

    def from_index(self, idx: np.ndarray) -> "pa.Array":
        """Released inputs back to values (categories as strings, integers as int64)."""
        import pyarrow as pa
        if self.categories is not None:
            return pa.array(self.categories, type=pa.string()).take(pa.array(idx, type=pa.int64()))
        return pa.array(np.asarray(idx, dtype=np.int64) + self.offset, type=pa.int64())

    def _category_index(self, arr: "pa.Array", column: str, first_row: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc
        if pa.types.is_boolean(arr.type):
            self._bad(arr, np.arange(min(1, len(arr))), column, first_row)
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
                or pa.types.is_string_view(arr.type)):
            arr = pc.cast(arr, pa.string())
        idx = pc.index_in(arr, value_set=pa.array(self.categories, type=arr.type))
        if idx.null_count:
            self._bad(arr, np.flatnonzero(_is_null(idx)), column, first_row)
        return idx.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)

    def _integers(self, arr: "pa.Array", column: str, first_row: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc
        t = arr.type
        if pa.types.is_integer(t):
            if pa.types.is_uint64(t):
                big = np.flatnonzero(arr.to_numpy() > np.iinfo(np.int64).max)
                if big.size:
                    self._bad(arr, big, column, first_row)
            return arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        if pa.types.is_floating(t):
            f = arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
            with np.errstate(invalid="ignore"):
                bad = np.flatnonzero(~np.isfinite(f) | (np.floor(f) != f) | (np.abs(f) >= 2.0 ** 63))
            if bad.size:
                self._bad(arr, bad, column, first_row)
            return f.astype(np.int64)
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            try:  # fast path: plain integers
                return pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            ok = pc.match_substring_regex(arr, INTEGER_TEXT)
            bad = np.flatnonzero(~ok.to_numpy(zero_copy_only=False))
            if bad.size:
                self._bad(arr, bad, column, first_row)
            digits = pc.replace_substring(pc.struct_field(pc.extract_regex(arr, INTEGER_TEXT), [0]), "+", "")
            try:
                return pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
            except pa.ArrowInvalid:  # beyond 64 bits: find it
                too_big = [i for i, v in enumerate(digits.to_pylist()) if not -2 ** 63 <= int(v) < 2 ** 63]
                self._bad(arr, np.array(too_big), column, first_row)
        # booleans, dates, decimals...: never integers
        self._bad(arr, np.arange(min(1, len(arr))), column, first_row)
        raise AssertionError("unreachable")  # pragma: no cover

    def _bad(self, arr: "pa.Array", where: np.ndarray, column: str, first_row: int) -> None:
        i = int(where[0])
        raise InvalidParameterError("input", f"row {first_row + i}: {describe_value(arr[i].as_py())}",
                                    f"in column '{column}', {self.accepted()}")


def _is_null(arr: "pa.Array") -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)
