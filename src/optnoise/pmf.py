"""Mechanism representations: cyclic PMFs, PMFs on the integer line, channels.

docs/architecture.md ("Additive mechanisms") fixes the three output spaces. An additive mechanism releases
``q + eta`` with noise ``eta`` independent of the query answer ``q``:

* :class:`CyclicPMF` -- noise on ``{0..n}`` (or a product ``{0..n1} x {0..n2} x ...``
  for vector queries), added modulo ``n + 1`` (Kadam et al. 2024, eq. (4) and the
  modulo convention of Section "Optimal additive noise");
* :class:`IntegerPMF` -- noise on ``Z``: a finite window of masses plus, optionally,
  exact geometric tails on either side (Geng & Viswanath 2016, eqs. (82)-(83): the
  discrete staircase continues with ratio ``e^-eps`` every ``Delta`` steps);
* :class:`Channel` -- any row-stochastic matrix ``P[input, output]`` (clamping,
  randomized response, the exponential mechanism, a user's own table).

All three are immutable; their arrays are read-only copies. Masses may carry an
exact rational twin (``exact``), used by the exact analysis in
:mod:`optnoise.analysis.exact`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import InvalidParameterError

#: Absolute tolerance on the total mass of a PMF or a channel row. Exact masses within it
#: are rescaled exactly to sum to 1 (``normalized`` is then true).
SUM_TOLERANCE = 1e-9
_SUM_ACCEPTED = (f"masses summing to 1 within {SUM_TOLERANCE:g} (normalize=True rescales a rounded table; "
                 "exact masses within the tolerance are rescaled exactly)")


def _frozen(array: np.ndarray) -> np.ndarray:
    out = np.array(array, copy=True)
    out.flags.writeable = False
    return out


def _as_float_array(values: Iterable[float] | np.ndarray, parameter: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, values, "a sequence of real numbers") from exc
    if arr.size == 0:
        raise InvalidParameterError(parameter, [], "a non-empty sequence of masses")
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)].ravel()[0]
        raise InvalidParameterError(parameter, float(bad), "finite masses (no nan or inf)")
    if np.any(arr < 0):
        idx = np.unravel_index(int(np.argmin(arr)), arr.shape)
        raise InvalidParameterError(
            parameter, float(arr[idx]), f"masses >= 0 (negative mass at index {tuple(int(i) for i in idx) if arr.ndim > 1 else int(idx[0])})"
        )
    return arr


def _as_fraction_array(values: Sequence | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    flat = [Fraction(v) for v in np.asarray(values, dtype=object).ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


def rounded_table(floats: np.ndarray) -> bool:
    """Whether float masses read as exact values (a ``.npy`` file: each float is an exact binary
    rational) are a table that the rule for exact masses rescales: their exact sum differs
    from 1, by at most :data:`SUM_TOLERANCE`. Vectorised, no Fractions (the rescaling is then
    done in floating point, and ``normalized`` says so)."""
    excess = _excess(floats)
    return excess != 0.0 and abs(excess) <= SUM_TOLERANCE


def _excess(floats: np.ndarray) -> float:
    """The exact sum of the floats minus 1, rounded once (0 exactly when the sum is 1).

    Vectorised (a 1e6-mass table in milliseconds, issue 37), in blocks of ``2^24`` floats:
    each float is ``q * 2^(e - 53)`` with an integer ``|q| < 2^53`` (``frexp``), cut exactly
    into ``q = hi * 2^28 + lo`` (``|hi| <= 2^25``, ``0 <= lo < 2^28``); the pieces of one
    exponent are added by ``bincount`` in floating point, which is exact (every partial sum is
    an integer below ``2^53``). The per-exponent sums are combined in Python integers and the
    difference from 1 is rounded once, as ``math.fsum`` of the floats and -1 rounds it (where
    ``fsum`` overflows on the way to a representable sum, this returns that sum). NaN and
    infinities go to ``fsum`` itself.
    """
    arr = np.asarray(floats, dtype=np.float64).ravel()
    if arr.size == 0 or not np.isfinite(arr).all():
        import math
        return math.fsum(arr.tolist() + [-1.0])
    total, lowest = 0, -1080                  # below every exponent of a float (-1073)
    for start in range(0, arr.size, 2**24):
        q, expo = np.frexp(arr[start:start + 2**24])
        q *= 2.0**53                          # an integer: |mant| < 1 has at most 53 significant bits
        hi = np.floor(q * 2.0**-28)
        q -= hi * 2.0**28                     # lo, exact
        bucket = expo - lowest
        for piece, shift in ((q, 0), (hi, 28)):
            sums = np.bincount(bucket, weights=piece)
            for b in np.flatnonzero(sums):
                total += int(sums[b]) << (int(b) + shift)
    exact = Fraction(total, 1 << (53 - lowest))
    return float(exact - 1)


def _check_total(total: float, parameter: str, normalize: bool) -> None:
    if total <= 0:
        raise InvalidParameterError(parameter, total, "masses with a positive sum")
    if not normalize and abs(total - 1.0) > SUM_TOLERANCE:
        raise InvalidParameterError(parameter, f"sum = {float(total)!r}", _SUM_ACCEPTED)


def _assign_masses(obj: object, arr: np.ndarray, total: float, normalize: bool, exact,
                   exact_extra: Callable[[np.ndarray], Fraction] = lambda ex: Fraction(0)) -> None:
    """Set ``probs``, ``exact`` and ``normalized`` on a frozen PMF (shared by both PMF types).

    With exact masses the floats are derived from them (normalised exactly when
    asked); otherwise the floats are rescaled by ``total`` when normalising.
    ``exact_extra`` gives the exact mass outside the window (geometric tails).
    """
    scaled = bool(normalize and total != 1.0)
    if exact is not None:
        ex = _as_fraction_array(exact, arr.shape)
        ex_total = sum(ex.ravel(), Fraction(0)) + exact_extra(ex)
        if ex_total != 1:
            # within SUM_TOLERANCE (checked on the floats) or asked to: rescaled exactly, and said so
            if not normalize and abs(ex_total - 1) > Fraction(SUM_TOLERANCE):
                raise InvalidParameterError("pmf", f"sum = {float(ex_total)!r}", _SUM_ACCEPTED)
            ex = _as_fraction_array([v / ex_total for v in ex.ravel()], arr.shape)
            scaled = True
        arr = np.array([float(v) for v in ex.ravel()], dtype=np.float64).reshape(arr.shape)
        object.__setattr__(obj, "exact", ex)
    else:
        if scaled:
            arr = arr / total
        # a float sum of 1 can hide an exact sum that is not: say that the table was rescaled
        scaled = bool(normalize and (scaled or _excess(arr) != 0.0))
        object.__setattr__(obj, "exact", None)
    object.__setattr__(obj, "probs", _frozen(arr))
    object.__setattr__(obj, "normalized", scaled)


@dataclass(frozen=True)
class CyclicPMF:
    """Noise PMF on the cyclic group ``{0..n}`` (or a product of such groups).

    ``probs[eta]`` is ``f(eta)``; a query answer ``q`` is released as
    ``(q + eta) mod (n + 1)`` (Kadam et al. 2024, eq. (4) with modulo addition).
    For a vector query the array has one axis per coordinate and the addition is
    modulo each axis length.

    Parameters
    ----------
    probs:
        Masses, any shape; validated (finite, >= 0, sum 1 within 1e-9).
    normalize:
        Rescale the masses to sum to 1 instead of rejecting a rounded table.
    exact:
        Optional exact rational masses (same shape, summing to exactly 1).
    """

    probs: np.ndarray
    exact: np.ndarray | None = field(default=None, compare=False)
    normalized: bool = field(default=False, compare=False)

    def __init__(self, probs: Iterable[float] | np.ndarray, *, normalize: bool = False,
                 exact: np.ndarray | Sequence | None = None) -> None:
        arr = _as_float_array(probs, "pmf")
        total = float(arr.sum())
        _check_total(total, "pmf", normalize)
        _assign_masses(self, arr, total, normalize, exact)

    @classmethod
    def from_weights(cls, weights: Sequence[int] | np.ndarray) -> "CyclicPMF":
        """PMF with integer weights, masses ``w / sum(w)`` held exactly."""
        w = np.asarray(weights)
        if w.size == 0 or not np.issubdtype(w.dtype, np.integer) and w.dtype != object:
            raise InvalidParameterError("weights", weights, "a non-empty sequence of integers >= 0")
        ints = [int(v) for v in w.ravel()]
        if any(v < 0 for v in ints):
            raise InvalidParameterError("weights", min(ints), "integer weights >= 0")
        total = sum(ints)
        if total <= 0:
            raise InvalidParameterError("weights", weights, "weights with a positive sum")
        fr = [Fraction(v, total) for v in ints]
        return cls(np.array([float(v) for v in fr]).reshape(w.shape), exact=np.array(fr, dtype=object).reshape(w.shape))

    @property
    def shape(self) -> tuple[int, ...]:
        """Domain shape ``(n1 + 1, n2 + 1, ...)``."""
        return tuple(self.probs.shape)

    @property
    def n(self) -> int | tuple[int, ...]:
        """Largest value of the domain: ``n`` for ``{0..n}``, a tuple for vectors."""
        if self.probs.ndim == 1:
            return self.probs.shape[0] - 1
        return tuple(s - 1 for s in self.probs.shape)

    @property
    def size(self) -> int:
        """Number of points of the domain, ``n + 1`` for a scalar query."""
        return int(self.probs.size)


@dataclass(frozen=True)
class GeometricTail:
    """Exact geometric continuation of an integer-line PMF beyond its window.

    Beyond the window the PMF satisfies ``p(k +- period) = ratio * p(k)``: the last
    ``period`` masses of the window repeat, scaled by ``ratio`` per block. With
    ``period = 1`` this is a geometric tail (two-sided geometric mechanism); with
    ``period = Delta`` and ``ratio = e^-eps`` it is the tail of Geng & Viswanath's
    discrete staircase (82).
    """

    ratio: float
    period: int = 1

    def __post_init__(self) -> None:
        if not (0.0 < float(self.ratio) < 1.0):
            raise InvalidParameterError("tail ratio", self.ratio, "a number in (0, 1)")
        if int(self.period) != self.period or self.period < 1:
            raise InvalidParameterError("tail period", self.period, "an integer >= 1")

    @property
    def mass_factor(self) -> float:
        """``sum_{k>=1} ratio^k``: tail mass per unit of mass in the last block."""
        return self.ratio / (1.0 - self.ratio)


@dataclass(frozen=True)
class IntegerPMF:
    """Noise PMF on the integer line: a finite window plus optional geometric tails.

    ``probs[i]`` is the mass at ``i - offset``; masses beyond the window are zero,
    unless a :class:`GeometricTail` continues them exactly.

    Parameters
    ----------
    probs:
        Window masses.
    offset:
        ``probs[i]`` is the mass at the integer ``i - offset``.
    left_tail, right_tail:
        Optional exact tails; the window must hold at least one block of ``period``.
    normalize:
        Rescale all masses (window and tails) to sum to 1.
    """

    probs: np.ndarray
    offset: int = 0
    left_tail: GeometricTail | None = None
    right_tail: GeometricTail | None = None
    exact: np.ndarray | None = field(default=None, compare=False)
    normalized: bool = field(default=False, compare=False)

    def __init__(self, probs: Iterable[float] | np.ndarray, offset: int = 0, *,
                 left_tail: GeometricTail | None = None, right_tail: GeometricTail | None = None,
                 normalize: bool = False, exact: Sequence | np.ndarray | None = None) -> None:
        arr = _as_float_array(probs, "pmf")
        if arr.ndim != 1:
            raise InvalidParameterError("pmf", f"shape {arr.shape}", "a one-dimensional window of masses")
        if int(offset) != offset:
            raise InvalidParameterError("offset", offset, "an integer")
        for name, tail in (("left_tail", left_tail), ("right_tail", right_tail)):
            if tail is not None and tail.period > arr.size:
                raise InvalidParameterError(name, tail, f"a period <= window length {arr.size}")
        object.__setattr__(self, "offset", int(offset))
        object.__setattr__(self, "left_tail", left_tail)
        object.__setattr__(self, "right_tail", right_tail)
        total = float(arr.sum()) + self._tail_mass_of(arr)
        _check_total(total, "pmf", normalize)
        _assign_masses(self, arr, total, normalize, exact, self._exact_tail_mass_of)

    def _exact_tail_mass_of(self, ex: np.ndarray) -> Fraction:
        """Exact tail mass: the end block times ``r / (1 - r)`` with the exact binary ratio."""
        mass = Fraction(0)
        for tail, block in ((self.left_tail, ex[: self.left_tail.period] if self.left_tail else ()),
                            (self.right_tail, ex[-self.right_tail.period:] if self.right_tail else ())):
            if tail is not None:
                r = Fraction(tail.ratio)
                mass += sum(block, Fraction(0)) * r / (1 - r)
        return mass

    def _tail_mass_of(self, arr: np.ndarray) -> float:
        mass = 0.0
        if self.left_tail is not None:
            mass += float(arr[: self.left_tail.period].sum()) * self.left_tail.mass_factor
        if self.right_tail is not None:
            mass += float(arr[-self.right_tail.period:].sum()) * self.right_tail.mass_factor
        return mass

    @property
    def lo(self) -> int:
        """Smallest integer of the window."""
        return -self.offset

    @property
    def hi(self) -> int:
        """Largest integer of the window."""
        return self.probs.size - 1 - self.offset

    @property
    def tail_mass(self) -> float:
        """Mass outside the window (zero without tails)."""
        return self._tail_mass_of(self.probs)

    @property
    def finite_support(self) -> bool:
        """True when the PMF has no tails (zero outside the window)."""
        return self.left_tail is None and self.right_tail is None

    def mass(self, k: int | np.ndarray) -> np.ndarray:
        """Masses at integers ``k`` (vectorised), tails included."""
        k = np.asarray(k, dtype=np.int64)
        out = np.zeros(k.shape, dtype=np.float64)
        inside = (k >= self.lo) & (k <= self.hi)
        out[inside] = self.probs[k[inside] + self.offset]
        if self.right_tail is not None:
            t = self.right_tail
            right = k > self.hi
            j = k[right] - self.hi - 1
            blocks = j // t.period + 1
            pos = self.probs.size - t.period + j % t.period
            out[right] = self.probs[pos] * np.power(t.ratio, blocks.astype(np.float64))
        if self.left_tail is not None:
            t = self.left_tail
            left = k < self.lo
            j = self.lo - 1 - k[left]
            blocks = j // t.period + 1
            pos = t.period - 1 - j % t.period
            out[left] = self.probs[pos] * np.power(t.ratio, blocks.astype(np.float64))
        return out

    def window(self, lo: int, hi: int) -> np.ndarray:
        """Masses at ``lo, lo + 1, ..., hi``."""
        return self.mass(np.arange(lo, hi + 1, dtype=np.int64))


@dataclass(frozen=True)
class Channel:
    """A mechanism as a row-stochastic matrix ``P[input, output]``.

    The universal representation (docs/architecture.md): clamping, randomized
    response, the exponential mechanism, any user table.
    """

    matrix: np.ndarray
    exact: np.ndarray | None = field(default=None, compare=False)
    normalized: bool = field(default=False, compare=False)

    def __init__(self, matrix: Iterable[Iterable[float]] | np.ndarray, *, normalize: bool = False,
                 exact: np.ndarray | Sequence | None = None) -> None:
        arr = _as_float_array(matrix, "channel")
        if arr.ndim != 2:
            raise InvalidParameterError("channel", f"shape {arr.shape}", "a 2-D matrix P[input, output]")
        sums = arr.sum(axis=1)
        if np.any(sums <= 0):
            raise InvalidParameterError("channel", f"row {int(np.argmin(sums))} sums to 0", "rows with a positive sum")
        bad = np.abs(sums - 1.0) > SUM_TOLERANCE
        if np.any(bad) and not normalize:
            row = int(np.argmax(bad))
            raise InvalidParameterError(
                "channel", f"row {row} sums to {float(sums[row])!r}",
                f"rows summing to 1 within {SUM_TOLERANCE:g} (normalize=True rescales them)")
        scaled = bool(normalize and np.any(sums != 1.0))
        if exact is not None:
            ex = _as_fraction_array(exact, arr.shape)
            rows = []
            for i in range(arr.shape[0]):
                s = sum(ex[i], Fraction(0))
                if s != 1 and not normalize and abs(s - 1) > Fraction(SUM_TOLERANCE):
                    raise InvalidParameterError("channel", f"row {i} sums to {float(s)!r}", "rows summing to exactly 1")
                scaled = scaled or s != 1
                rows.append([v / s for v in ex[i]])
            ex = _as_fraction_array(rows, arr.shape)
            arr = np.array([[float(v) for v in r] for r in ex], dtype=np.float64)
            object.__setattr__(self, "exact", ex)
        else:
            if normalize:
                arr = arr / sums[:, None]
            object.__setattr__(self, "exact", None)
        object.__setattr__(self, "matrix", _frozen(arr))
        object.__setattr__(self, "normalized", scaled)

    @property
    def n_inputs(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self.matrix.shape[1])


def _circulant_index(pmf: CyclicPMF) -> np.ndarray:
    """``idx[q, y] = (y - q) mod (n+1)``: where row ``q`` of the channel of noise mod ``n+1``
    reads the PMF (scalar PMFs only)."""
    if pmf.probs.ndim != 1:
        raise InvalidParameterError("pmf", f"shape {pmf.shape}", "a scalar (1-D) cyclic PMF")
    size = pmf.size
    return (np.arange(size)[None, :] - np.arange(size)[:, None]) % size


def cyclic_to_channel(pmf: CyclicPMF) -> Channel:
    """The channel ``P[q, (q + eta) mod (n+1)] = f(eta)`` of a scalar cyclic PMF."""
    idx = _circulant_index(pmf)
    exact = None if pmf.exact is None else pmf.exact[idx]
    return Channel(pmf.probs[idx], exact=exact)


def channel_matrix(mech: CyclicPMF | Channel) -> np.ndarray:
    """The matrix ``P[q, y]`` of a channel, or of noise mod ``n+1`` (``P[q, y] = f((y - q)
    mod (n+1))``, the float masses as they are; :func:`cyclic_to_channel` builds the
    :class:`Channel`)."""
    if isinstance(mech, Channel):
        return mech.matrix
    return mech.probs[_circulant_index(mech)]
