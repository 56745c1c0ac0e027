"""Integer weights and exact comparisons of their ratios, vectorised: the arithmetic under the
exact certificates of :mod:`optnoise.analysis.exact_fast` (whose docstring gives the argument).

* :class:`Weights` / :func:`as_weights` -- non-negative integer weights with their correctly
  rounded floats, ``uint64`` words where they fit;
* exact sums (:func:`exact_sum`, :func:`sum_words`), exact products and comparisons in 32-bit
  limbs (:func:`limbs`, :func:`mul_const`, :func:`compare_limbs`);
* :func:`compare_ratio` -- the exact sign of ``P * den - num * Q`` per cell: a float
  pre-filter outside a band of half-width :data:`TAU`, exact limb products inside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InvalidParameterError

#: Relative half-width of the float pre-filter band; near ties inside it are decided exactly.
TAU = 2.0 ** -48
_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_TWO64 = 1 << 64
#: Object-array weights beyond this many bits are rejected (their floats would overflow).
MAX_WEIGHT_BITS = 1000
_TO_INT = np.frompyfunc(int, 1, 1)


# ------------------------------------------------------------------ weights
@dataclass(frozen=True, eq=False)
class Weights:
    """Non-negative integer weights with their correctly rounded floats.

    ``words`` is ``uint64`` when every weight is below ``2^64``, else an object
    array of Python ints. ``fits`` says that the total (hence every partial sum)
    is below ``2^64``, so ``uint64`` sums are exact.
    """

    words: np.ndarray
    floats: np.ndarray
    fits: bool

    @property
    def big(self) -> bool:
        return self.words.dtype == object

    @property
    def size(self) -> int:
        return int(self.words.size)

    def roll(self, shift: int | tuple[int, ...], shape: tuple[int, ...] | None = None) -> "Weights":
        """The weights of ``np.roll(w, -shift)`` (as the pair ``(f, f(. + mu))`` needs)."""
        if shape is None or len(shape) == 1:
            s = -int(shift if not isinstance(shift, tuple) else shift[0])
            return Weights(np.roll(self.words, s), np.roll(self.floats, s), self.fits)
        axes = tuple(range(len(shape)))
        neg = tuple(-int(v) for v in shift)
        return Weights(np.roll(self.words.reshape(shape), neg, axis=axes).ravel(),
                       np.roll(self.floats.reshape(shape), neg, axis=axes).ravel(), self.fits)

    def take(self, index: np.ndarray) -> "Weights":
        """The selected cells (``index``: a boolean mask or integer indices)."""
        return Weights(self.words[index], self.floats[index], self.fits)


def as_weights(values: Sequence[int] | np.ndarray, parameter: str = "weights") -> Weights:
    """Validate integer weights (``>= 0``) and prepare words and floats."""
    arr = np.asarray(values)
    if arr.dtype == object or arr.dtype.kind in "iu":
        pass
    else:
        raise InvalidParameterError(parameter, str(arr.dtype), "integer weights (int64, uint64 or Python ints)")
    flat = arr.ravel()
    if flat.dtype == object:
        ints = _TO_INT(flat) if flat.size else flat  # Python ints (elementwise, in C)
        if flat.size and (ints < 0).any():
            raise InvalidParameterError(parameter, ints.min(), "integer weights >= 0")
        top = int(ints.max()) if flat.size else 0
        if top < _TWO64:
            words = ints.astype(np.uint64) if flat.size else np.zeros(0, np.uint64)
        else:
            if top.bit_length() > MAX_WEIGHT_BITS:
                raise InvalidParameterError(parameter, f"a weight of {top.bit_length()} bits",
                                            f"weights below 2^{MAX_WEIGHT_BITS}")
            return Weights(ints.astype(object), ints.astype(np.float64), False)
    elif flat.dtype.kind == "i":
        if flat.size and int(flat.min()) < 0:
            raise InvalidParameterError(parameter, int(flat.min()), "integer weights >= 0")
        words = flat.astype(np.uint64)
    else:
        words = flat.astype(np.uint64, copy=False)
    floats = words.astype(np.float64)
    # the float sum is within n 2^-53 (relative) of the exact one: below 2^63 it proves the
    # exact total below 2^64, so uint64 sums cannot overflow
    return Weights(words, floats, bool(floats.sum() < 2.0 ** 63))


def _sum_split(words: np.ndarray) -> int:
    """Exact sum of ``uint64`` words (32-bit halves; exact for fewer than 2^32 words)."""
    if words.size == 0:
        return 0
    lo = int(np.bitwise_and(words, _MASK32).sum(dtype=np.uint64))
    hi = int(np.right_shift(words, _S32).sum(dtype=np.uint64))
    return lo + (hi << 32)


def exact_sum(w: Weights, mask: np.ndarray | None = None) -> int:
    """Exact integer sum of the selected weights."""
    return sum_words(w.words, w.fits, mask)


# ------------------------------------------------------------------ exact limb arithmetic
def limbs(words: np.ndarray) -> np.ndarray:
    """32-bit limbs (least significant first) of non-negative integers, shape ``(L, m)``."""
    if words.dtype != object:
        out = np.empty((2, words.size), dtype=np.uint64)
        np.bitwise_and(words, _MASK32, out=out[0])
        np.right_shift(words, _S32, out=out[1])
        return out
    ints = [int(v) for v in words]
    length = max(1, -(-max((v.bit_length() for v in ints), default=1) // 32))
    out = np.empty((length, len(ints)), dtype=np.uint64)
    for k in range(length):
        out[k] = [(v >> (32 * k)) & 0xFFFFFFFF for v in ints]
    return out


def mul_const(x: np.ndarray, c: int) -> np.ndarray:
    """Exact limbs of ``x * c`` for limb arrays ``x`` and a Python int ``c >= 0``.

    Each partial product of two 32-bit limbs is below 2^64; its halves are added
    into two result limbs, each of which receives fewer than 2^31 such halves, so
    no ``uint64`` addition overflows before the final carry propagation.
    """
    c_limbs = []
    while c:
        c_limbs.append(c & 0xFFFFFFFF)
        c >>= 32
    rows = x.shape[0] + len(c_limbs) + 1
    out = np.zeros((rows, x.shape[1]), dtype=np.uint64)
    for j, cj in enumerate(c_limbs):
        if cj == 0:
            continue
        cu = np.uint64(cj)
        for i in range(x.shape[0]):
            prod = x[i] * cu
            out[i + j] += prod & _MASK32
            out[i + j + 1] += prod >> _S32
    for k in range(rows - 1):
        out[k + 1] += out[k] >> _S32
        out[k] &= _MASK32
    return out


def compare_limbs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise sign of ``x - y`` for normalised limb arrays (int8)."""
    rows = max(x.shape[0], y.shape[0])
    m = x.shape[1]
    res = np.zeros(m, dtype=np.int8)
    undecided = np.ones(m, dtype=bool)
    zero = np.zeros(m, dtype=np.uint64)
    for k in range(rows - 1, -1, -1):
        xk = x[k] if k < x.shape[0] else zero
        yk = y[k] if k < y.shape[0] else zero
        gt = xk > yk
        lt = xk < yk
        res[undecided & gt] = 1
        res[undecided & lt] = -1
        undecided &= ~(gt | lt)
        if not undecided.any():
            break
    return res


def _to_float(num: int, den: int) -> float:
    try:
        return num / den  # int true division is correctly rounded
    except OverflowError:
        return math.inf


def ratio_keys(p: Weights, q: Weights) -> np.ndarray:
    """Float ratios ``P_f / Q_f`` (``inf`` where ``Q = 0 < P``, ``nan`` for ``0/0``): the keys
    of the pre-filter, within ``3 * 2^-53`` relative of the exact ratios."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return p.floats / q.floats


def compare_ratio(p: Weights, q: Weights, num: int, den: int, key: np.ndarray | None = None) -> np.ndarray:
    """Exact ``sign(P * den - num * Q)`` per cell (int8), for ``num >= 0``, ``den > 0``.

    Float pre-filter: the key ``P_f / Q_f`` (three correctly rounded operations) against
    ``E_f (1 +- TAU)`` (two more): five roundings, ``(1 + 2^-53)^5 - 1 < 2^-50.6 < TAU``, so
    a key outside the band decides the sign exactly. Cells inside the band (near ties)
    get exact limb products; cells with ``P = 0`` (key ``0`` or ``nan``) are already right
    (``-1`` below a positive ratio, ``0`` for ``0/0`` or a zero ratio).
    """
    return compare_words(p.words, q.words, ratio_keys(p, q) if key is None else key, num, den)


def compare_words(pw: np.ndarray, qw: np.ndarray, key: np.ndarray, num: int, den: int) -> np.ndarray:
    """:func:`compare_ratio` on raw words ``pw``, ``qw`` with their float ratio ``key``."""
    e = _to_float(num, den)
    out = np.zeros(pw.size, dtype=np.int8)
    if pw.size == 0:
        return out
    if 0.0 < e < 2.0 ** -900:  # the band would be below the float range: decide everything exactly
        undecided = np.ones(pw.size, dtype=bool)
    else:
        with np.errstate(over="ignore"):
            hi, lo = e * (1.0 + TAU), e * (1.0 - TAU)
        above = key > hi
        below = key < lo
        out[:] = above
        out -= below.view(np.int8)
        undecided = ~(above | below)
    undecided &= key > 0  # P > 0 exactly where the key is positive (inf included, nan not)
    near = np.flatnonzero(undecided)
    if near.size:
        out[near] = compare_limbs(mul_const(limbs(pw[near]), den), mul_const(limbs(qw[near]), num))
    return out


def sum_words(words: np.ndarray, fits: bool, mask: np.ndarray | None = None) -> int:
    """Exact integer sum of (selected) words; ``fits``: the total is below 2^64."""
    sel = words if mask is None else words[mask]
    if sel.size == 0:
        return 0
    if sel.dtype == object:
        return int(sel.sum())  # Python ints: exact
    if fits:
        return int(sel.sum(dtype=np.uint64))
    return _sum_split(sel)


__all__ = ["MAX_WEIGHT_BITS", "TAU", "Weights", "as_weights", "compare_limbs", "compare_ratio", "compare_words",
           "exact_sum", "limbs", "mul_const", "ratio_keys", "sum_words"]
