"""A channel whose rows repeat over intervals of answers: which row each answer draws from,
and which value each column releases.

Block randomized response (:mod:`optnoise.design.record_blocks`) on ``{0..n}`` has ``k``
distinct rows, each shared by an interval of answers, and ``k`` positive columns. It is
stored, certified and quantized as its ``k x k`` *core* (a :class:`~optnoise.pmf.Channel`)
with a :class:`BlockMap`: answer ``q`` draws from row ``j`` with ``starts[j] <= q <
starts[j + 1]``, and column ``i`` releases ``values[i]``. Why the core's certificate is the
whole channel's (per record: every pair of answers): docs/proofs/record-blocks.md, claim 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError


@dataclass(frozen=True, eq=False)
class BlockMap:
    """Answers ``0..n`` in consecutive intervals (one per row of the core) and the value each
    column of the core releases.

    Proof: docs/proofs/record-blocks.md (claim 3: the core's certificate is the whole channel's).

    Attributes
    ----------
    starts:
        ``k + 1`` integers, ``0 = starts[0] < starts[1] < ... < starts[k] = n + 1``.
    values:
        One released value per column of the core, distinct, in ``0..n``.
    """

    starts: tuple[int, ...]
    values: tuple[int, ...]

    def __post_init__(self) -> None:
        try:
            starts = tuple(as_int(v) for v in self.starts)
            values = tuple(as_int(v) for v in self.values)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("blocks", "starts/values", "lists of integers") from exc
        if len(starts) < 2 or starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:])):
            raise InvalidParameterError("blocks", f"starts {list(starts[:6])}{' ...' if len(starts) > 6 else ''}",
                                        "increasing interval starts 0 = s_0 < s_1 < ... < s_k = n + 1")
        answers = starts[-1]
        if not values or len(set(values)) != len(values) or min(values) < 0 or max(values) >= answers:
            raise InvalidParameterError("blocks", f"values {list(values[:6])}{' ...' if len(values) > 6 else ''}",
                                        f"distinct released values in 0..{answers - 1}, one per column")
        object.__setattr__(self, "starts", starts)
        object.__setattr__(self, "values", values)

    @property
    def answers(self) -> int:
        """``n + 1``: the number of answers."""
        return self.starts[-1]

    @property
    def rows(self) -> int:
        """``k``: the rows of the core (intervals)."""
        return len(self.starts) - 1

    def check(self, shape: tuple[int, int]) -> None:
        """The core's shape matches: one row per interval, one column per value."""
        if tuple(shape) != (self.rows, len(self.values)):
            raise InvalidParameterError("blocks", f"{self.rows} intervals and {len(self.values)} values",
                                        f"one interval per row and one value per column of the {shape[0]} x "
                                        f"{shape[1]} channel")

    def rows_of(self, answers: np.ndarray) -> np.ndarray:
        """The core's row of each answer (answers checked by the caller to lie in ``0..n``)."""
        return np.searchsorted(np.asarray(self.starts[1:-1], dtype=np.int64), answers, side="right")

    def released(self, columns: np.ndarray) -> np.ndarray:
        """The released value of each drawn column."""
        return np.asarray(self.values, dtype=np.int64)[np.asarray(columns, dtype=np.int64)]

    def describe(self) -> str:
        return f"{self.rows} intervals of the answers 0..{self.answers - 1}, {len(self.values)} released values"

    def to_json(self) -> dict:
        """``{"starts": [...], "values": [...]}`` (docs/cli.md, "Mechanism files")."""
        return {"starts": list(self.starts), "values": list(self.values)}

    @classmethod
    def from_json(cls, data: object) -> "BlockMap":
        if not isinstance(data, dict) or not isinstance(data.get("starts"), list) \
                or not isinstance(data.get("values"), list):
            raise InvalidParameterError("blocks", data if not isinstance(data, dict) else sorted(data),
                                        "an object {\"starts\": [...], \"values\": [...]}")
        return cls(tuple(data["starts"]), tuple(data["values"]))


def as_int(v: object) -> int:
    """``v`` as a Python int: an integer (numpy's too), never a bool; ``TypeError`` otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"not an integer: {v!r}")
    return int(v)


__all__ = ["BlockMap", "as_int"]
