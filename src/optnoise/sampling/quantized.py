"""The quantized forms: integer weights that are sampled, each with the exact certificate of
those weights, and their exact draws (docs/architecture.md, "Exactness").

:func:`optnoise.sampling.quantize.quantize` makes them; here they are what they are:

* :class:`QuantizedCyclic` -- cyclic noise on ``{0..n}`` (or a product): weights summing to
  ``2^bits``, drawn through a :class:`WeightTable` (an exact integer alias table from
  :data:`~optnoise.sampling.alias.ALIAS_MIN_SUPPORT` outcomes on, else the inverse CDF);
* :class:`QuantizedChannel` -- each row of a channel summing to ``2^bits``;
* :class:`QuantizedInteger` -- noise on ``Z``: integer window weights and geometric tails
  with dyadic ratios ``a / 2^m``, whose exact masses are :func:`integer_line_form`.

Randomness is always injected (:mod:`optnoise.randomness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..analysis import Guarantee, IntegerForm
from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from ..randomness import RandomSource
from ..target import Target
from . import alias
from .fixed_work import ChannelTable, FixedTails, channel_table, draw_channel_rows, draw_window_tails_fixed, fixed_tails
from .integer_line import Tail, WindowTailsTable, draw_window_tails, window_tails_table
from .words import check_count, draw_indices


@dataclass(frozen=True, eq=False)
class WeightTable:
    """Integer weights summing to ``2^bits`` and their exact draw: an integer alias table from
    :data:`~optnoise.sampling.alias.ALIAS_MIN_SUPPORT` outcomes on, else the inverse CDF on the
    cumulative weights (both exact: docs/alias.md). The one table of cyclic noise and of each
    row of a channel."""

    weights: np.ndarray  # uint64, flat, sums to 2^bits
    bits: int

    @property
    def sampler(self) -> str:
        """``"alias"`` or ``"cdf"`` (by support size)."""
        return alias.choose(self.weights.size)

    @cached_property
    def _table(self) -> alias.AliasTable | np.ndarray:
        if self.sampler == "alias":
            return alias.build(self.weights, self.bits)
        return np.cumsum(self.weights, dtype=np.uint64)

    def draw(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` indices, each ``i`` with probability exactly ``w_i / 2^bits``."""
        table = self._table
        if isinstance(table, alias.AliasTable):
            return alias.draw(table, count, source)
        return draw_indices(table, self.bits, count, source)


def _weights_json(weights: np.ndarray) -> list:
    return np.vectorize(lambda w: str(int(w)), otypes=[object])(weights).tolist() if weights.size else []


@dataclass(frozen=True, eq=False)
class QuantizedCyclic:
    """Integer weights summing to ``2^bits`` and the exact certificate of those weights.

    ``mixing`` is the weight ``lambda`` of the uniform PMF mixed in before rounding
    (``(1 - lambda) f + lambda / N``) when plain rounding could not keep the target.
    """

    weights: np.ndarray  # uint64, shape of the PMF, sums to 2^bits
    bits: int
    mixing: Fraction
    neighbourhood: Neighbourhood
    certificate: Guarantee
    target: Target | None

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    kind = "cyclic"

    @property
    def pmf(self) -> CyclicPMF:
        """The exact PMF that is sampled (masses ``w / 2^bits``)."""
        return CyclicPMF.from_weights(np.array([int(w) for w in self.weights.ravel()], dtype=object)
                                      .reshape(self.weights.shape))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.weights.shape)

    @property
    def sampler(self) -> str:
        """``"alias"`` or ``"cdf"``: how :meth:`draw` samples (by support size)."""
        return self._table.sampler

    @cached_property
    def _table(self) -> WeightTable:
        return WeightTable(self.weights.ravel(), self.bits)

    def draw(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` noise draws as flat indices (``np.unravel_index`` for vectors), each
        exactly ``w_i / 2^bits`` (:class:`WeightTable`)."""
        return self._table.draw(count, source)

    def to_json(self, *, weights: bool = True) -> dict:
        """The quantized form; ``weights=False`` leaves out the per-cell weights."""
        out = {"kind": self.kind, "bits": self.bits, "total_weight": f"2^{self.bits}", "mixing": str(self.mixing),
               "shape": list(self.shape), "sampler": self.sampler, "certificate": self.certificate.to_json(),
               "target": None if self.target is None else self.target.to_json()}
        if weights:
            out["weights"] = _weights_json(self.weights.ravel())
        return out


@dataclass(frozen=True, eq=False)
class QuantizedChannel:
    """A channel whose every row is integer weights summing to ``2^bits``, certified exactly."""

    weights: np.ndarray  # uint64 (inputs, outputs), each row sums to 2^bits
    bits: int
    mixing: Fraction
    neighbourhood: InputPairs
    certificate: Guarantee
    target: Target | None

    kind = "channel"

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    @property
    def channel(self) -> Channel:
        """The exact channel that is sampled (``P[x, y] = w[x, y] / 2^bits``)."""
        total = 1 << self.bits
        ex = np.array([[Fraction(int(w), total) for w in row] for row in self.weights], dtype=object)
        return Channel(np.array([[float(v) for v in row] for row in ex]), exact=ex)

    @cached_property
    def _rows(self) -> dict[int, WeightTable]:
        return {}

    @cached_property
    def _stacked(self) -> ChannelTable | None:
        return channel_table(self.weights, self.bits)

    def _row_table(self, x: int) -> WeightTable:
        if x not in self._rows:
            self._rows[x] = WeightTable(self.weights[x], self.bits)
        return self._rows[x]

    def draw_outputs(self, inputs: np.ndarray, source: RandomSource) -> np.ndarray:
        """One output index per input index, drawn exactly from the input's row: one word per
        draw from the stacked row tables, the same work whatever the inputs and outputs
        (:func:`~optnoise.sampling.fixed_work.draw_channel_rows`); a table too large to stack
        is drawn row by row."""
        inputs = np.asarray(inputs, dtype=np.int64)
        if inputs.size and (inputs.min() < 0 or inputs.max() >= self.weights.shape[0]):
            raise InvalidParameterError("inputs", int(inputs.min() if inputs.min() < 0 else inputs.max()),
                                        f"input indices in 0..{self.weights.shape[0] - 1}")
        if self._stacked is not None:
            return draw_channel_rows(self._stacked, inputs, source)
        out = np.empty(inputs.shape, dtype=np.int64)
        for x in np.unique(inputs):
            where = inputs == x
            out[where] = self._row_table(int(x)).draw(int(where.sum()), source)
        return out

    def to_json(self, *, weights: bool = True) -> dict:
        """The quantized form; ``weights=False`` leaves out the per-cell weights."""
        out = {"kind": self.kind, "bits": self.bits, "total_weight": f"2^{self.bits} per row",
               "mixing": str(self.mixing), "certificate": self.certificate.to_json(),
               "target": None if self.target is None else self.target.to_json()}
        if weights:
            out["weights"] = _weights_json(self.weights)
        return out


@dataclass(frozen=True, eq=False)
class QuantizedInteger:
    """Noise on ``Z``: integer window weights plus geometric tails with dyadic ratios.

    The PMF is ``p(k) = W[k] / Z`` on the window ``lo..hi`` and, beyond it,
    ``p(hi + (t-1)*period + s) = W[hi - period + s] r^t / Z`` (``t >= 1``, ``s = 1..period``;
    on the left ``p(lo - t*period + s) = W[lo + s] r^t / Z``, ``s = 0..period-1``), ``r = a / 2^m``. With ``B`` the weight of an end
    block, ``Z = S_W + (B_left + B_right) r / (1 - r)``.
    """

    weights: np.ndarray  # int64 window weights at lo..hi
    lo: int
    left: tuple[int, int, int] | None   # (a, m, period): ratio a / 2^m
    right: tuple[int, int, int] | None
    neighbourhood: Neighbourhood
    certificate: Guarantee
    target: Target | None

    kind = "integer"

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    @property
    def hi(self) -> int:
        return self.lo + self.weights.size - 1

    @property
    def pmf(self) -> IntegerPMF:
        """The exact PMF that is sampled (window masses ``W / Z``, dyadic tail ratios)."""
        return exact_integer_pmf(self.weights, self.lo, self.left, self.right)

    @cached_property
    def _table(self) -> WindowTailsTable:
        tail = (lambda t: None if t is None else Tail(*t))
        return window_tails_table(self.weights, self.lo, left=tail(self.left), right=tail(self.right))

    @cached_property
    def _fixed(self) -> FixedTails | None:
        return fixed_tails(self._table)

    def draw(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` exact draws of the noise value (integers), exactly from the certified PMF.

        Why exact (:func:`~optnoise.sampling.integer_line.window_tails_table`): the window
        cells and the tail classes get integer weights proportional to their exact masses
        (``W`` and ``B r / (1 - r)`` per class, scaled by the common denominator of the
        ``1 - r``); a cell is drawn with exactly that probability from an integer alias
        table; a tail class adds ``t >= 1`` blocks with ``P(t) = (1 - r) r^(t-1)`` (a
        geometric with the dyadic ratio ``r = a / 2^m``). The product is ``W[s] r^t / Z``.
        The blocks are read from one word per draw whatever the cell
        (:func:`~optnoise.sampling.fixed_work.draw_window_tails_fixed`: the same work for
        every value); tails too close to 1 for its table count Bernoulli trials instead.
        """
        if self._fixed is not None:
            return draw_window_tails_fixed(self._fixed, check_count(count), source)
        return draw_window_tails(self._table, check_count(count), source)

    def to_json(self, *, weights: bool = True) -> dict:
        """The quantized form; ``weights=False`` leaves out the per-cell weights."""
        tail = (lambda t: None if t is None else {"ratio": f"{t[0]}/2^{t[1]}", "period": t[2]})
        out = {"kind": self.kind, "window": [self.lo, self.hi], "left_tail": tail(self.left),
               "right_tail": tail(self.right), "certificate": self.certificate.to_json(),
               "target": None if self.target is None else self.target.to_json()}
        if weights:
            out["weights"] = _weights_json(self.weights)
        return out


Quantized = QuantizedCyclic | QuantizedChannel | QuantizedInteger


# ------------------------------------------------------------------ exact masses on Z
def integer_line_form(weights: np.ndarray, lo: int, left: tuple[int, int, int] | None,
                      right: tuple[int, int, int] | None) -> IntegerForm:
    """The exact masses of window weights with dyadic tails as an :class:`IntegerForm`.

    ``Z = S_W + sum_tails B a / (2^m - a)``; with ``L`` the lcm of the ``2^m - a``, every
    window mass is ``W / Z = W L / (Z L)`` and ``Z L`` is an integer.
    """
    w = [int(x) for x in weights]
    tails = [(t, w[:t[2]] if side == "left" else w[-t[2]:]) for side, t in (("left", left), ("right", right))
             if t is not None]
    common = math.lcm(*[(1 << t[1]) - t[0] for t, _ in tails]) if tails else 1
    z_scaled = sum(w) * common + sum(sum(block) * t[0] * (common // ((1 << t[1]) - t[0])) for t, block in tails)
    scaled = np.asarray(weights).astype(object) * common
    out = scaled.astype(np.uint64) if max(w, default=0) * common < 1 << 64 else scaled
    ratio = (lambda t: None if t is None else (Fraction(t[0], 1 << t[1]), t[2]))
    return IntegerForm("integer", out, z_scaled, lo=lo, left=ratio(left), right=ratio(right))


def exact_integer_pmf(weights: np.ndarray, lo: int, left: tuple[int, int, int] | None,
                      right: tuple[int, int, int] | None) -> IntegerPMF:
    """The exact IntegerPMF of window weights and dyadic tails (masses ``W / Z``)."""
    form = integer_line_form(weights, lo, left, right)
    exact = np.array([Fraction(int(x), form.denominator) for x in form.weights], dtype=object)
    as_tail = (lambda t: None if t is None else GeometricTail(t[0] / (1 << t[1]), t[2]))
    return IntegerPMF(np.array([float(x) for x in exact]), -lo, left_tail=as_tail(left), right_tail=as_tail(right),
                      exact=exact)


__all__ = ["Quantized", "QuantizedChannel", "QuantizedCyclic", "QuantizedInteger", "WeightTable", "exact_integer_pmf",
           "integer_line_form"]
