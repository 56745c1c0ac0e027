"""K-ary randomized response as additive noise on the cyclic domain ``{0..K-1}``.

Keeping the true category with probability ``1 - (K - 1) P`` and moving to each
other category with probability ``P`` is the same as adding cyclic noise with mass
``1 - (K - 1) P`` at 0 and ``P`` elsewhere (Kadam et al.'s "data independent
mechanism"; Holohan et al., product sanitisation with ``m = K - 1``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError
from ..pmf import CyclicPMF
from ..target import check_delta, check_epsilon


def rr_pmf(k: int, p: float | Fraction) -> CyclicPMF:
    """Noise PMF of K-ary randomized response with off-diagonal probability ``p``.

    The masses are held exactly (``exact``: ``1 - (K - 1) p`` and ``p`` as rationals, a float
    ``p`` read as its exact binary value); the floats are their correctly rounded values.

    Proof: docs/proofs/composed-bounds.md."""
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise InvalidParameterError("categories", k, "an integer number of categories >= 2")
    k = int(k)
    if not (0 <= float(p) <= 1.0 / (k - 1) and (k - 1) * Fraction(p) <= 1):
        raise InvalidParameterError("p", p, f"a probability with 0 <= P <= 1/(K-1) = {1 / (k - 1):.6g}")
    # the masses exactly: 1 - (K - 1) P is not a float in general, and fl(1 - P) below 1 - P
    # made every exact analysis of the family (its K-fold composition included) a few ulps
    # optimistic (docs/repeated-releases.md, "The last digit")
    q = p if isinstance(p, Fraction) else Fraction(float(p))
    exact = [1 - (k - 1) * q] + [q] * (k - 1)
    return CyclicPMF([float(x) for x in exact], exact=exact)


def rr_optimal_p(k: int, epsilon: float, delta: float = 0.0) -> float:
    """Holohan et al. Theorems 8 and 10: the smallest ``(eps, delta)``-DP off-diagonal
    probability ``p = (1 - delta) / (e^eps + m)`` with ``m = K - 1``, which is also the
    most accurate product sanitisation.
    """
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise InvalidParameterError("categories", k, "an integer number of categories >= 2")
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    # (1 - delta) e^-eps / (1 + m e^-eps): the same value, without overflow for large eps;
    # floored at P_FLOOR, where e^-eps underflows (more noise than the optimum: still private)
    r = math.exp(-eps)
    m = int(k) - 1
    # raised by RATIO_MARGIN: the hockey-stick of (1 - m p, p) is exactly delta in reals, and
    # float round-off must not make a pure design certify delta_DP = 1e-16 instead of 0
    return max((1.0 - d) * r / (1.0 + m * r) * (1.0 + RATIO_MARGIN), P_FLOOR)


#: Relative margin on the optimal ``P`` (far above float round-off, far below any effect).
RATIO_MARGIN = 1e-12


#: Smallest off-diagonal probability used: ``1e-300`` keeps every mass a normal float, and its
#: likelihood ratio ``(1 - m P) / P <= 1e300 = e^690.8`` meets every epsilon whose optimal
#: ``P`` is smaller (a larger ``P`` is more private: the mechanism moves towards uniform).
P_FLOOR = 1e-300


def rr_error_bounds(k: int, epsilon: float, delta: float, rows: int = 1) -> tuple[float, float]:
    """Holohan Theorem 9: ``(1 - delta) / (1 + e^eps / m) <= E / n <= m / (m + 1)``
    for the expected number of changed rows ``E`` of an ``(eps, delta)``-DP product
    sanitisation on ``rows`` rows; the lower bound is attained by :func:`rr_optimal_p`."""
    m = int(k) - 1
    r = math.exp(-epsilon)
    return rows * (1.0 - delta) * m * r / (m * r + 1.0), rows * m / (m + 1)


def hamming_exponential_k_max(m: int, epsilon: float, delta: float) -> float:
    """Holohan Theorem 4: the discrete exponential mechanism with utility ``-k x Hamming``
    on ``D^n``, ``|D| = m + 1``, is ``(eps, delta)``-DP iff ``e^k <= (e^eps + m delta)/(1 - delta)``.
    Returns the largest such ``k``."""
    return math.log((math.exp(epsilon) + m * delta) / (1.0 - delta))


def hamming_channel(m: int, rows: int, k: float) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Holohan's discrete exponential mechanism on ``D^rows`` with ``|D| = m + 1``:
    ``P(x | d) ∝ exp(-k H(x, d))`` as a matrix over all ``(m+1)^rows`` databases
    (row ``i`` is database ``i`` in lexicographic order), and the database list."""
    import itertools
    dbs = list(itertools.product(range(m + 1), repeat=rows))
    arr = np.array(dbs)
    ham = (arr[:, None, :] != arr[None, :, :]).sum(axis=2)
    w = np.exp(-k * ham)
    return w / w.sum(axis=1, keepdims=True), dbs


def hamming_neighbours(dbs: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    """Pairs of databases that differ in exactly one row."""
    index = {d: i for i, d in enumerate(dbs)}
    values = range(max(max(x) for x in dbs) + 1)
    pairs = []
    for d, i in index.items():
        for pos in range(len(d)):
            for v in values:
                if v != d[pos]:
                    pairs.append((i, index[d[:pos] + (v,) + d[pos + 1:]]))
    return pairs
