"""Noise on the integer line released on ``{0..n}``: clamp ``q + eta`` to the domain, then remap.

Ghosh, Roughgarden & Sundararajan's optimal channel for a count under pure DP with neighbours
one apart is the range-restricted geometric mechanism followed by a deterministic remap
(:mod:`optnoise.design.geometric_remap`). It is stored as what it is: the noise ``eta`` (an
:class:`~optnoise.pmf.IntegerPMF`, exact geometric tails), certified and sampled as noise at
distance 1, and a :class:`ClampRemap` saying how the released value is made from ``q + eta``:
``z = clip(q + eta, 0, n)``, then ``remap(z)`` -- ``z`` itself, except the few outputs the remap
moves (near the ends of the domain for a uniform prior). Why the noise's certificate is the
released value's (pure and approximate DP; not PDP): docs/proofs/geometric-remap.md, claim 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from .block_map import as_int


@dataclass(frozen=True, eq=False)
class ClampRemap:
    """How a value on ``{0..n}`` is released from ``q + eta``: clamp to ``[0, n]``, then
    ``outputs[i]`` is released as ``values[i]``, every other output as itself.

    Proof: docs/proofs/geometric-remap.md (claim 3: post-processing of the noise).

    Attributes
    ----------
    n:
        The largest answer (answers and released values in ``0..n``).
    outputs:
        The clamped outputs the remap moves, increasing, in ``0..n``.
    values:
        The value each of ``outputs`` is released as, in ``0..n``.
    """

    n: int
    outputs: tuple[int, ...] = ()
    values: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        try:
            n = as_int(self.n)
            outputs = tuple(as_int(v) for v in self.outputs)
            values = tuple(as_int(v) for v in self.values)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("release", "n/outputs/values", "integers") from exc
        if n < 1:
            raise InvalidParameterError("release", f"n {n}", "a domain 0..n with n >= 1")
        if len(outputs) != len(values):
            raise InvalidParameterError("release", f"{len(outputs)} outputs and {len(values)} values",
                                        "one released value per remapped output")
        if any(b <= a for a, b in zip(outputs, outputs[1:])) or (outputs and (outputs[0] < 0 or outputs[-1] > n)):
            raise InvalidParameterError("release", f"outputs {list(outputs[:6])}{' ...' if len(outputs) > 6 else ''}",
                                        f"increasing outputs in 0..{n}")
        if values and (min(values) < 0 or max(values) > n):
            raise InvalidParameterError("release", f"values {list(values[:6])}{' ...' if len(values) > 6 else ''}",
                                        f"released values in 0..{n}")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "values", values)

    @classmethod
    def of(cls, remap: np.ndarray) -> "ClampRemap":
        """From a whole remap ``remap[z]`` (``z = 0..n``): the outputs it moves."""
        remap = np.asarray(remap, dtype=np.int64)
        moved = np.flatnonzero(remap != np.arange(remap.size))
        return cls(remap.size - 1, tuple(moved.tolist()), tuple(remap[moved].tolist()))

    @property
    def answers(self) -> int:
        """``n + 1``: the number of answers."""
        return self.n + 1

    def remap(self, z: np.ndarray) -> np.ndarray:
        """The released value of each clamped output ``z`` (in ``0..n``)."""
        z = np.array(z, dtype=np.int64)
        if self.outputs:
            outs = np.asarray(self.outputs, dtype=np.int64)
            at = np.minimum(np.searchsorted(outs, z), outs.size - 1)
            hit = outs[at] == z
            z[hit] = np.asarray(self.values, dtype=np.int64)[at[hit]]
        return z

    def released(self, shifted: np.ndarray) -> np.ndarray:
        """The released value of each ``q + eta``: clamped to ``[0, n]``, then remapped."""
        return self.remap(np.clip(np.asarray(shifted, dtype=np.int64), 0, self.n))

    def table(self) -> np.ndarray:
        """``remap[z]`` for ``z = 0..n`` (``n + 1`` integers)."""
        return self.remap(np.arange(self.n + 1))

    def describe(self) -> str:
        moved = f", then {len(self.outputs)} outputs remapped" if self.outputs else " (no output remapped)"
        return f"q + eta clamped to 0..{self.n}{moved}"

    def to_json(self) -> dict:
        """``{"clamp": [0, n], "remap": {"outputs": [...], "values": [...]}}`` (docs/cli.md,
        "Mechanism files")."""
        return {"clamp": [0, self.n], "remap": {"outputs": list(self.outputs), "values": list(self.values)},
                "in_words": "the released value is remap(clip(q + eta, 0, n)): an output listed in remap.outputs "
                            "is released as the value beside it, every other output as itself"}

    @classmethod
    def from_json(cls, data: object) -> "ClampRemap":
        ok = isinstance(data, dict) and isinstance(data.get("clamp"), list) and len(data["clamp"]) == 2 \
            and isinstance(data.get("remap"), dict)
        if not ok or data["clamp"][0] != 0:  # type: ignore[index]
            raise InvalidParameterError("release", data if not isinstance(data, dict) else sorted(data),
                                        "an object {\"clamp\": [0, n], \"remap\": {\"outputs\": [...], "
                                        "\"values\": [...]}}")
        remap = data["remap"]  # type: ignore[index]
        return cls(data["clamp"][1], tuple(remap.get("outputs", [])), tuple(remap.get("values", [])))  # type: ignore[index]


__all__ = ["ClampRemap"]
