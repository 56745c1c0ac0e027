"""The released column's domain: how raw values map to a mechanism's inputs and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InvalidParameterError


def is_missing(v: Any) -> bool:
    """``None``, NaN, ``pd.NA`` and ``pd.NaT`` are missing values."""
    if v is None:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    return type(v).__name__ in ("NAType", "NaTType")


def describe_value(v: Any) -> str:
    """How a bad value is shown in an error: missing values say so."""
    return "missing value" if is_missing(v) else repr(v)


@dataclass(frozen=True)
class Domain:
    """Categories (in order), integers ``lower..lower+size-1``, or all integers (``size`` None).

    A finite domain maps its values to the mechanism's inputs ``0..size-1``; the
    unbounded integer domain (noise on the integer line) keeps the values themselves.
    """

    size: int | None
    categories: tuple[str, ...] | None = None
    lower: int = 0

    def __post_init__(self) -> None:
        if self.categories is not None:
            if len(self.categories) != self.size:
                raise InvalidParameterError("categories", ",".join(self.categories),
                                            f"exactly {self.size} categories (the mechanism's domain size n + 1)")
            if len(set(self.categories)) != len(self.categories):
                raise InvalidParameterError("categories", ",".join(self.categories), "distinct categories")

    def to_json(self) -> dict:
        if self.categories is not None:
            return {"kind": "categorical", "categories": list(self.categories)}
        if self.size is None:
            return {"kind": "integer", "lower": None, "upper": None}
        return {"kind": "numeric", "lower": self.lower, "upper": self.lower + self.size - 1}

    def accepted(self) -> str:
        """What a value of this domain may be, in words."""
        if self.categories is not None:
            return f"one of the categories {list(self.categories)} (no missing values)"
        if self.size is None:
            return "an integer (no missing values)"
        return f"an integer in [{self.lower}, {self.lower + self.size - 1}] (no missing values)"

    def index_of(self, v: Any, lookup: dict[str, int] | None = None) -> int | None:
        """The input index of one raw value, or ``None`` when it is not in the domain."""
        if is_missing(v):
            return None
        if self.categories is not None:
            table = lookup if lookup is not None else self.lookup()
            return table.get(str(v))
        try:
            if isinstance(v, str):
                x = int(v.strip())
            elif float(v) == int(float(v)):
                x = int(float(v))
            else:
                return None
        except (TypeError, ValueError, OverflowError):
            return None
        if self.size is None:
            return x
        return x - self.lower if 0 <= x - self.lower < self.size else None

    def lookup(self) -> dict[str, int]:
        """Category -> index (empty for numeric domains)."""
        return {c: i for i, c in enumerate(self.categories or ())}

    def to_index(self, values: Sequence[Any]) -> np.ndarray:
        """Map raw values to inputs; the first bad one raises, naming its data row (1-based)."""
        out = np.empty(len(values), dtype=np.int64)
        lookup = self.lookup()
        for row, v in enumerate(values):
            idx = self.index_of(v, lookup)
            if idx is None:
                raise InvalidParameterError("input", f"row {row + 1}: {describe_value(v)}", self.accepted())
            out[row] = idx
        return out

    def from_index(self, idx: np.ndarray) -> np.ndarray:
        """Map released inputs back to values."""
        if self.categories is not None:
            return np.array(self.categories, dtype=object)[idx]
        return np.asarray(idx) + (self.lower if self.size is not None else 0)
