"""Uniform integers from random words: the integer building blocks of every exact draw.

Each function takes an injected source (:mod:`optnoise.randomness`: ``source.words(n)``
gives ``n`` independent uniform 64-bit words) and turns its bits into integers with a
known exact distribution -- no float and no modulo bias on any decision path.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import RandomSource

#: Draws are made in chunks of this many words (bounded scratch memory).
CHUNK = 1 << 20


def check_count(count: int) -> int:
    """A number of draws: a non-negative integer."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InvalidParameterError("count", count, "a non-negative integer")
    return int(count)


def check_rational(value: object, name: str) -> Fraction:
    """A parameter of an exact sampler: a rational ``> 0`` (a float is its exact binary value)."""
    try:
        v = Fraction(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParameterError(name, value, "a rational > 0") from exc
    if v <= 0:
        raise InvalidParameterError(name, value, "a rational > 0")
    return v


def uniform_bits(source: RandomSource, count: int, m: int) -> np.ndarray:
    """``count`` independent uniform ``m``-bit integers (``0 <= m <= 63``), int64.

    Taken as the top ``m`` bits of 8-, 16-, 32- or 64-bit slices of the words (every slice
    of a uniform word is uniform, and disjoint slices are independent).
    """
    if m == 0 or count == 0:
        return np.zeros(count, dtype=np.int64)
    for width, dtype in ((8, np.uint8), (16, np.uint16), (32, np.uint32)):
        if m <= width:
            per = 64 // width
            raw = np.ascontiguousarray(source.words(-(-count // per))).view(dtype)[:count]
            return (raw >> dtype(width - m)).astype(np.int64)
    return (source.words(count) >> np.uint64(64 - m)).astype(np.int64)


def uniform_below(bound: int, count: int, source: RandomSource) -> np.ndarray:
    """``count`` uniform integers in ``[0, bound)`` for ``1 <= bound < 2^63``, exactly.

    Rejection from ``L``-bit integers with ``2^(L-1) < bound <= 2^L``: every accepted value
    is equally likely, and at least half of the candidates are accepted.
    """
    if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)) or not 1 <= bound < 1 << 63:
        raise InvalidParameterError("bound", bound, "an integer in [1, 2^63)")
    bound = int(bound)
    out = np.zeros(check_count(count), dtype=np.int64)
    if bound == 1:
        return out
    bits = (bound - 1).bit_length()
    pending = np.arange(out.size)
    while pending.size:
        u = uniform_bits(source, pending.size, bits)
        ok = u < bound
        out[pending[ok]] = u[ok]
        pending = pending[~ok]
    return out


def geometric_failures(a: int, m: int, count: int, source: RandomSource) -> np.ndarray:
    """Successes before the first failure of Bernoulli(``a / 2^m``) trials, exactly.

    ``P(G = g) = (1 - r) r^g`` for ``g >= 0`` with the dyadic ratio ``r = a / 2^m``: a
    trial is an ``m``-bit uniform integer ``u``, a success iff ``u < a`` (exactly ``a`` of
    its ``2^m`` values). Every pending draw takes a batch of ``K ~ 1 / (1 - r)`` trials per
    round and stops at its first failure; trials after it are drawn but unused, which
    changes nothing: they are independent of the ones before.
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= 62:
        raise InvalidParameterError("m", m, "an integer in [1, 62]")
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= a < 1 << m:
        raise InvalidParameterError("a", a, f"an integer in [0, 2^{m})")
    g = np.zeros(check_count(count), dtype=np.int64)
    batch = int(min(16, max(1, math.ceil(1.0 / (1.0 - a / 2.0 ** m)))))
    pending = np.arange(g.size)
    while pending.size:
        ok = (uniform_bits(source, pending.size * batch, m) < a).reshape(pending.size, batch)
        first = np.argmin(ok, axis=1)                # index of the first failure (0 if none)
        done = ~ok[np.arange(pending.size), first]   # a failure in this batch
        g[pending[done]] += first[done]
        pending = pending[~done]
        g[pending] += batch
    return g


def draw_indices(cumulative: np.ndarray, bits: int, count: int, source: RandomSource) -> np.ndarray:
    """Inverse-CDF draws on integer cumulative weights ending at ``2^bits`` (exact).

    The top ``bits`` bits of a word are a uniform integer ``u`` in ``[0, 2^bits)``; the
    draw is the number of cumulative weights ``<= u``, so index ``i`` has probability
    ``w_i / 2^bits``. Used for small supports (:mod:`~optnoise.sampling.alias` for large).
    """
    count = check_count(count)
    out = np.empty(count, dtype=np.int64)
    shift = np.uint64(64 - bits)
    for start in range(0, count, CHUNK):
        stop = min(count, start + CHUNK)
        u = source.words(stop - start) >> shift
        out[start:stop] = np.searchsorted(cumulative, u, side="right")
    return out
