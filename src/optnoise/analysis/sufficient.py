"""Holohan et al.'s sufficient sets: how many subset checks verifying DP takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class SubsetChecks:
    """How many subset checks verifying DP takes, with and without sufficient sets."""

    pairs: int
    with_sufficient_sets: int
    without: int
    set_sizes: tuple[int, ...]


def sufficient_set(matrix: np.ndarray, x: int, x_prime: int, rtol: float = 1e-12) -> np.ndarray:
    """Holohan et al. (8): ``S = {y : P(y | x) > P(y | x')}``; by their Theorem 2, checking
    ``P(A | x) <= e^eps P(A | x') + delta`` on the subsets of ``S`` suffices for the pair.
    (The largest violation is at ``A = S`` itself: the hockey-stick divergence.)
    Outputs equal up to ``rtol`` (ties computed through different float sums) are not in ``S``."""
    m = np.asarray(matrix, dtype=float)
    return np.flatnonzero(m[x] > m[x_prime] * (1.0 + rtol))


def subset_check_counts(matrix: np.ndarray, pairs: Sequence[tuple[int, int]]) -> SubsetChecks:
    """Subset checks for all ordered ``pairs``: ``2^|S| - 1`` each with sufficient sets,
    ``2^|Y| - 2`` each without (all subsets but the empty set and ``Y``), Holohan Example 2."""
    m = np.asarray(matrix, dtype=float)
    sizes = tuple(int(sufficient_set(m, a, b).size) for a, b in pairs)
    return SubsetChecks(len(pairs), sum(2 ** s - 1 for s in sizes), len(pairs) * (2 ** m.shape[1] - 2), sizes)
