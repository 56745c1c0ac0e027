"""Where random bits come from: always an injected source.

The default is :class:`SystemRandomSource` (``os.urandom``, the operating system's
CSPRNG). :class:`SeededRandomSource` exists for reproducible tests and examples;
it is marked ``private = False`` and every output made with it says so.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .errors import InvalidParameterError


class RandomSource(Protocol):
    """A source of uniform random bits. ``private`` says whether they are unpredictable."""

    private: bool

    @property
    def description(self) -> str: ...

    def words(self, count: int) -> np.ndarray:
        """``count`` independent uniform 64-bit words (``uint64``)."""

    def randbelow(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` (exact, any size)."""


@dataclass(frozen=True)
class SystemRandomSource:
    """The operating system's CSPRNG (``os.urandom`` / ``secrets``): the default."""

    private: bool = True
    description: str = "os.urandom (operating-system CSPRNG)"

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * int(count)), dtype="<u8").astype(np.uint64, copy=False)

    def randbelow(self, bound: int) -> int:
        return secrets.randbelow(bound)


@dataclass(frozen=True)
class SeededRandomSource:
    """A seeded PCG64 stream: reproducible, **not private** (an attacker who knows or
    guesses the seed can subtract the noise)."""

    seed: int
    private: bool = False
    _gen: np.random.Generator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise InvalidParameterError("seed", self.seed, "a non-negative integer")
        object.__setattr__(self, "_gen", np.random.Generator(np.random.PCG64(int(self.seed))))

    @property
    def description(self) -> str:
        return f"numpy PCG64 seeded with {self.seed} (NOT private)"

    def words(self, count: int) -> np.ndarray:
        return self._gen.bit_generator.random_raw(int(count)).astype(np.uint64, copy=False)

    def randbelow(self, bound: int) -> int:
        if bound <= 0:
            raise InvalidParameterError("bound", bound, "a positive integer")
        bits = bound.bit_length()
        while True:  # rejection: exact, no modulo bias
            words = -(-bits // 64)
            value = 0
            for w in self.words(words):
                value = (value << 64) | int(w)
            value >>= 64 * words - bits
            if value < bound:
                return value


def random_source(seed: int | None = None) -> RandomSource:
    """The CSPRNG, or a seeded (not private) stream when ``seed`` is given."""
    return SystemRandomSource() if seed is None else SeededRandomSource(seed)


def derive_seed(seed: int, *parts: int) -> int:
    """A child seed for a partition or batch (seeded, not private, mode only)."""
    state = np.random.SeedSequence([int(seed), *map(int, parts)]).generate_state(2, dtype=np.uint32)
    return int(state[0]) << 32 | int(state[1])


def child_source(source: RandomSource, *parts: int) -> RandomSource:
    """The stream for one partition or batch: fresh CSPRNG reads, or a derived seeded stream."""
    if isinstance(source, SeededRandomSource):
        return SeededRandomSource(derive_seed(source.seed, *parts))
    return source
