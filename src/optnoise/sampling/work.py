"""Counting the work of a draw: random words consumed and rounds looped, per value drawn.

A draw whose work depends on its value leaks the value through time (Jin et al., IEEE S&P
2022). Time is noisy and machine-dependent; the *work* is not: :class:`CountingSource`
wraps any random source and counts the 64-bit words taken and the calls made (each round of
a vectorised sampler is one call), and :func:`work_by_value` draws one value at a time and
tabulates both per value. docs/sampling-and-time.md reports them for every sampler
(``bench/sampler_work.py``); tests/test_sampler_work.py asserts that the default samplers of
the release path do the same work for every value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..randomness import RandomSource


class CountingSource:
    """A random source that counts what it gives: ``words_drawn`` (64-bit words, including
    those behind ``randbelow``) and ``calls`` (requests). Not frozen: it is a counter."""

    def __init__(self, inner: RandomSource) -> None:
        self.inner = inner
        self.words_drawn = 0
        self.calls = 0

    @property
    def private(self) -> bool:
        return bool(self.inner.private)

    @property
    def description(self) -> str:
        return f"{self.inner.description}, counted"

    def words(self, count: int) -> np.ndarray:
        self.words_drawn += int(count)
        self.calls += 1
        return self.inner.words(count)

    def randbelow(self, bound: int) -> int:
        self.words_drawn += -(-int(bound).bit_length() // 64)
        self.calls += 1
        return self.inner.randbelow(bound)


@dataclass(frozen=True)
class Work:
    """Work per value: ``value -> (draws, min words, max words, mean words, max calls)``."""

    by_value: dict

    @property
    def words(self) -> tuple[int, int]:
        """The fewest and the most words any draw took."""
        return (min(v[1] for v in self.by_value.values()), max(v[2] for v in self.by_value.values()))

    @property
    def calls(self) -> int:
        """The most calls (rounds) any draw made."""
        return max(v[4] for v in self.by_value.values())

    @property
    def fixed(self) -> bool:
        """Every draw took the same number of words, whatever its value."""
        low, high = self.words
        return low == high


def work_by_value(draw_one: Callable[[RandomSource], int], draws: int, source: RandomSource) -> Work:
    """Draw ``draws`` single values with ``draw_one(counting_source)`` and tabulate the
    words and calls each took, per value."""
    counter = CountingSource(source)
    seen: dict[int, list] = {}
    for _ in range(int(draws)):
        w0, c0 = counter.words_drawn, counter.calls
        value = int(draw_one(counter))
        w, c = counter.words_drawn - w0, counter.calls - c0
        row = seen.setdefault(value, [0, w, w, 0, c])
        row[0] += 1
        row[1], row[2], row[3], row[4] = min(row[1], w), max(row[2], w), row[3] + w, max(row[4], c)
    return Work({v: (r[0], r[1], r[2], r[3] / r[0], r[4]) for v, r in sorted(seen.items())})


__all__ = ["CountingSource", "Work", "work_by_value"]
