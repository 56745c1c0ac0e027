"""Exact certificates of integer weights, vectorised.

:mod:`optnoise.analysis.exact` certifies a pair ``(p, p')`` with :class:`fractions.Fraction`
masses, one Python object per cell. This module computes the *same* certificates
(bit-for-bit equal floats) for masses given as integer weights over a common
denominator, ``p = P / D`` and ``p' = Q / D`` (for a quantized PMF ``D = 2^bits``),
with numpy arrays and a handful of Python integers per pair.

Why the results are identical to :class:`optnoise.analysis.exact.ExactPair`
-----------------------------------------------------------------
Every reported number is ``float_up`` or ``log_up`` of one rational, and equal
rationals give equal floats. So it suffices to compute the *same rationals*:

* ``delta_DP(eps) = sum_{P > E Q} (P - E Q) / D`` with ``E = exp_lower(eps) = a / b``.
  The set ``{P b > a Q}`` is decided exactly (below), the two sums ``S_P``, ``S_Q``
  over it are exact integers, and the result is ``(S_P b - a S_Q) / (b D)``.
  Cells with ``Q = 0 < P`` satisfy ``P b > 0`` and are counted with their whole
  mass, as ``ExactPair`` counts its infinite-loss mass.
* ``delta_PDP(eps) = S_P / D`` on the same set.
* ``eps_pure = log_up(max P/Q)``: the maximum ratio is found exactly.
* ``eps_DP(delta)``: ``ExactPair`` walks the groups of equal ratio in decreasing
  order and stops at the first ratio ``r_j`` where ``g(r_j) > delta``, with
  ``g(E) = delta_DP`` at ``e^eps = E``; it returns ``log_up((A - delta)/B)`` with
  ``A, B`` the masses of ``p, p'`` on ratios above ``r_j``. Since ``g`` is
  continuous and non-increasing, that rational is the unique ``E*`` with
  ``g(E*) = delta`` (``g`` is strictly decreasing where ``B > 0``), and the set of
  ratios above ``r_j`` is exactly ``{r >= E*}``. We find that set with an exact
  selection on ratios (pivot, exact three-way partition, recurse on one side;
  the predicate ``g(v) > delta`` is monotone in ``v``), never sorting, and
  return ``log_up`` of the same rational ``(A - delta D)/B``.
* ``eps_PDP(delta)``: ``ExactPair`` returns ``log_up`` of the smallest ratio value
  ``r`` with ``mass{ratio > r} <= delta``; again found by exact selection.

Exact comparisons without big numbers per cell
---------------------------------------------
Deciding ``P b > a Q`` for a rational ``a / b`` (``e^eps``'s lower bound has a
256-bit numerator) is done in two stages. A float pre-filter compares the key
``P_f / Q_f`` with ``E_f (1 +- tau)``, ``tau = 2^-48``: ``P_f``, ``Q_f``, ``E_f`` are
correctly rounded (numpy's ``uint64 -> float64`` and Python's ``int / int`` are; relative
error ``<= 2^-53`` each) and the division and the factor ``(1 +- tau)`` add two more
roundings, so the float comparison can disagree with the exact one only if ``P / (E Q)``
lies within ``(1 + 2^-53)^5 - 1 < 2^-50.6 < tau`` of 1. Outside that band the float
answer is the exact answer. Inside it ("near ties") both products are formed exactly in
32-bit limbs held in ``uint64`` arrays (schoolbook multiplication by the constant,
carries propagated) and compared limb by limb from the top: exact integer arithmetic,
vectorised. Sums are exact integer sums (``uint64`` when the total provably fits,
otherwise 32-bit halves). That arithmetic is :mod:`optnoise.analysis.exact_words`.

Memory is O(n) per pair; :func:`certify_pairs` streams one pair at a time.
:func:`optnoise.analysis.privacy_profile` with ``exact=True`` uses this module whenever the
mechanism's exact masses have a common denominator (:func:`optnoise.analysis.pairs.integer_form`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..target import check_delta, check_epsilon
from .exact import exp_lower, float_up, log_up
from .exact_words import (MAX_WEIGHT_BITS, TAU, Weights, as_weights, compare_limbs, compare_ratio, compare_words,
                          exact_sum, limbs, mul_const, ratio_keys, sum_words)
from .floating import LossDistribution, PairMaxima

# ------------------------------------------------------------------ one pair
def _check_denominator(denominator: int) -> int:
    if isinstance(denominator, bool) or not isinstance(denominator, (int, np.integer)) or int(denominator) <= 0:
        raise InvalidParameterError("denominator", denominator, "a positive integer (the common denominator D)")
    return int(denominator)


def _check_eps(epsilon: float) -> float:
    return check_epsilon(epsilon, allow_inf=True)


def _check_delta(delta: float | Fraction) -> Fraction:
    return delta if isinstance(delta, Fraction) and 0 <= delta < 1 else Fraction(check_delta(delta))


@dataclass(frozen=True, eq=False)
class IntegerPair:
    """One ordered pair ``(p, p') = (P / D, Q / D)`` with integer weights.

    Implements the pair protocol of :class:`optnoise.analysis.PrivacyProfile`
    (``epsilon_pure``, ``delta_dp``, ``delta_pdp``, ``epsilon_dp``,
    ``epsilon_pdp``, ``loss_distribution``) with results equal to
    :class:`optnoise.analysis.exact.ExactPair`'s on
    ``P / D, Q / D``.
    """

    p: Weights
    q: Weights
    denominator: int
    label: str = ""

    @classmethod
    def from_weights(cls, p: Sequence[int] | np.ndarray | Weights, q: Sequence[int] | np.ndarray | Weights,
                     denominator: int, label: str = "") -> "IntegerPair":
        pw = p if isinstance(p, Weights) else as_weights(p, "p")
        qw = q if isinstance(q, Weights) else as_weights(q, "q")
        if pw.size != qw.size:
            raise InvalidParameterError("q", f"{qw.size} cells", f"as many cells as p ({pw.size})")
        return cls(pw, qw, _check_denominator(denominator), label)

    # -- sets and sums ---------------------------------------------------------
    @cached_property
    def key(self) -> np.ndarray:
        """Float ratio keys of the cells (see :func:`compare_ratio`)."""
        return ratio_keys(self.p, self.q)

    def above(self, ratio: Fraction) -> np.ndarray:
        """Mask of the cells with ``P / Q > ratio`` (``Q = 0 < P`` included), exactly."""
        return compare_ratio(self.p, self.q, ratio.numerator, ratio.denominator, self.key) > 0

    def _infinite(self) -> np.ndarray:
        """Cells with ``Q = 0 < P``: exactly those with an infinite key."""
        return np.isposinf(self.key)

    def _candidates(self) -> np.ndarray:
        """Mask of the finite cells with ratio ``> 1`` (``Q > 0`` and ``P > Q``)."""
        if self.p.big or self.q.big:
            mask = (self.q.words > 0).astype(bool) & (self.p.words > self.q.words).astype(bool)
        else:
            mask = (self.q.words > 0) & (self.p.words > self.q.words)
        return mask

    def delta_dp_exact(self, e: Fraction) -> Fraction:
        """``sum max(0, p - E q)`` for a rational ``E >= 0`` (as ExactPair.delta_dp_exact)."""
        e = Fraction(e)
        mask = self.above(e)
        sp, sq = exact_sum(self.p, mask), exact_sum(self.q, mask)
        return Fraction(sp * e.denominator - e.numerator * sq, e.denominator * self.denominator)

    def delta_pdp_exact(self, e: Fraction) -> Fraction:
        """``sum_{p > E q} p`` for a rational ``E >= 0``."""
        e = Fraction(e)
        return Fraction(exact_sum(self.p, self.above(e)), self.denominator)

    def infinite_mass(self) -> Fraction:
        """Mass of ``p`` where ``p' = 0``: both deltas at ``epsilon = inf``."""
        return Fraction(exact_sum(self.p, self._infinite()), self.denominator)

    def delta_dp(self, epsilon: float) -> float:
        eps = _check_eps(epsilon)
        if math.isinf(eps):
            return float_up(self.infinite_mass())
        return float_up(self.delta_dp_exact(exp_lower(eps)))

    def delta_pdp(self, epsilon: float) -> float:
        eps = _check_eps(epsilon)
        if math.isinf(eps):
            return float_up(self.infinite_mass())
        return float_up(self.delta_pdp_exact(exp_lower(eps)))

    # -- maximum ratio ---------------------------------------------------------
    def max_ratio(self) -> Fraction | None:
        """The exact largest ``P / Q`` over cells with ``P > 0`` (``None`` if there are
        none; ``Fraction`` cannot hold infinity, so callers check :meth:`has_infinite`).

        Only cells whose key is within ``4 TAU`` of the largest key can hold the exact
        maximum (keys are within ``3 * 2^-53`` of the ratios); among those, pivot on the
        largest key, keep the cells exactly above it, repeat."""
        key = self.key
        finite = (key > 0) & (key < np.inf)  # P > 0 and Q > 0 (weights below 2^1000: no under/overflow)
        if not finite.any():
            return None
        top = float(np.max(key, where=finite, initial=0.0))
        band = np.flatnonzero(finite & (key >= top * (1.0 - 4 * TAU)))
        p, q, key = self.p.take(band), self.q.take(band), key[band]
        while True:
            k = int(np.argmax(key))
            pk, qk = int(p.words[k]), int(q.words[k])
            up = compare_ratio(p, q, pk, qk, key) > 0
            if not up.any():
                return Fraction(pk, qk)
            p, q, key = p.take(up), q.take(up), key[up]

    def has_infinite(self) -> bool:
        return bool(self._infinite().any())

    @property
    def epsilon_pure(self) -> float:
        return math.inf if self.has_infinite() else _epsilon_of(self.max_ratio() or Fraction(1))

    # -- inverse maps ----------------------------------------------------------
    def _select(self, cand: np.ndarray, predicate, a0: int) -> tuple[int, int, int | None, int | None]:
        """Exact selection over the candidate cells' ratios.

        ``predicate(A_v, B_v, P_v, Q_v)`` is evaluated at pivot ratios ``v = P_v/Q_v``
        with ``A_v, B_v`` the exact sums of ``P, Q`` over the cells above ``v`` plus the
        running sums (which start at ``a0, 0``); it must be monotone (true for large
        ``v``). When it holds at a pivot, the cells at or above the pivot join the kept
        side (their sums added) and the search goes on below; otherwise the cells at
        or below the pivot are dropped and the search goes on above. Each round removes
        the pivot, so it ends; pivots are drawn at random (a fixed seed: the result is
        exact whatever the pivots, only the time varies). Returns the final ``(A, B)``
        of the kept side and the smallest pivot at which the predicate held.
        """
        rng = np.random.default_rng(0x5EED)
        a, b = a0, 0
        best_p = best_q = None
        pw, qw, rk = self.p.words[cand], self.q.words[cand], self.key[cand]
        pf, qf = self.p.fits, self.q.fits
        while pw.size:
            trio = rng.integers(0, pw.size, 3)  # median of three by float ratio
            k = int(trio[np.argsort(rk[trio])[1]])
            pk, qk = int(pw[k]), int(qw[k])
            s = compare_words(pw, qw, rk, pk, qk)
            up = s > 0
            av, bv = a + sum_words(pw, pf, up), b + sum_words(qw, qf, up)
            if predicate(av, bv, pk, qk):
                eq = s == 0
                a, b = av + sum_words(pw, pf, eq), bv + sum_words(qw, qf, eq)
                best_p, best_q = pk, qk
                keep = s < 0
            else:
                keep = up
            pw, qw, rk = pw[keep], qw[keep], rk[keep]
        return a, b, best_p, best_q

    def _inverse_start(self, delta: float | Fraction) -> tuple[Fraction, int, np.ndarray] | None:
        """``(delta, infinite mass weight, candidate mask)``, or ``None`` when the infinite
        mass alone exceeds ``delta`` (the inverse maps are then infinite)."""
        d = _check_delta(delta)
        s_inf = exact_sum(self.p, self._infinite())
        if s_inf * d.denominator > d.numerator * self.denominator:
            return None
        return d, s_inf, self._candidates()

    def epsilon_dp_ratio(self, delta: float | Fraction) -> Fraction | None:
        """The exact ``E* >= 1`` with ``delta_DP = delta`` at ``e^eps = E*`` (1 when
        ``delta_DP(0) <= delta``); ``None`` stands for infinity."""
        start = self._inverse_start(delta)
        if start is None:
            return None
        d, s_inf, cand = start
        dn, dd, big_d = d.numerator, d.denominator, self.denominator
        if (s_inf + exact_sum(self.p, cand) - exact_sum(self.q, cand)) * dd <= dn * big_d:
            return Fraction(1)

        def too_big(av: int, bv: int, pv: int, qv: int) -> bool:  # g(v) <= delta (E* <= v)
            return not ((av * qv - pv * bv) * dd > dn * big_d * qv)

        a, b, _, _ = self._select(cand, too_big, s_inf)
        return Fraction(a * dd - dn * big_d, b * dd)

    def epsilon_pdp_ratio(self, delta: float | Fraction) -> Fraction | None:
        """The smallest ratio ``r`` with ``mass{P/Q > r} <= delta`` (1 if the mass above 1
        is already ``<= delta``); ``None`` stands for infinity."""
        start = self._inverse_start(delta)
        if start is None:
            return None
        d, s_inf, cand = start
        dn, dd, big_d = d.numerator, d.denominator, self.denominator
        if (s_inf + exact_sum(self.p, cand)) * dd <= dn * big_d:
            return Fraction(1)

        def small_mass(av: int, bv: int, pv: int, qv: int) -> bool:
            return av * dd <= dn * big_d

        _, _, bp, bq = self._select(cand, small_mass, s_inf)
        return Fraction(bp, bq)

    def epsilon_dp(self, delta: float) -> float:
        return _epsilon_of(self.epsilon_dp_ratio(delta))

    def epsilon_pdp(self, delta: float) -> float:
        return _epsilon_of(self.epsilon_pdp_ratio(delta))

    def loss_distribution(self) -> LossDistribution:
        """The pair's privacy loss distribution in floating point (for composition).

        Losses are ``ln`` of the float ratio keys, grouped when their floats coincide;
        masses are the floats of the exact masses. As for
        :meth:`~optnoise.analysis.exact.ExactPair.loss_distribution`, this is a float
        object: composition is a float computation.
        """
        pos = (self.p.words > 0).astype(bool)
        finite = pos & (self.q.words > 0).astype(bool)
        scale = 1.0 / float(self.denominator) if self.denominator < 1 << 1000 else 0.0
        p = self.p.floats * scale
        q = self.q.floats * scale
        inf_mass = float(Fraction(exact_sum(self.p, pos & ~finite), self.denominator))
        loss = np.log(self.key[finite])
        uniq, inv = np.unique(-loss, return_inverse=True)
        return LossDistribution(-uniq, np.bincount(inv, weights=p[finite], minlength=uniq.size),
                                np.bincount(inv, weights=q[finite], minlength=uniq.size), inf_mass)


def _epsilon_of(ratio: Fraction | None) -> float:
    """``ln`` of a likelihood ratio rounded up, ``0`` at or below 1, ``inf`` for ``None``."""
    if ratio is None:
        return math.inf
    return 0.0 if ratio <= 1 else log_up(ratio)


# ------------------------------------------------------------------ many pairs, streamed
@dataclass
class _Maximum:
    """A running maximum of rationals over pairs (``infinite``: some pair's is infinite)
    and the label of a pair attaining it."""

    value: Fraction | None = None
    infinite: bool = False
    label: str | None = None

    def offer(self, value: Fraction | None, label: str) -> None:
        """``value`` of one pair (``None`` stands for infinity)."""
        if value is None:
            self.infinite, self.label = True, label
        elif not self.infinite and (self.value is None or value > self.value):
            self.value, self.label = value, label

    def could_rise(self, mass_beyond: Callable[[Fraction], Fraction], delta: Fraction) -> bool:
        """Whether a pair can raise an inverse map's maximum: its delta at the current
        maximum exceeds ``delta`` (the delta curves are non-increasing)."""
        return not self.infinite and (self.value is None or mass_beyond(self.value) > delta)

    def epsilon(self) -> float:
        """The maximum as an epsilon, rounded up (``log_up`` is monotone)."""
        return math.inf if self.infinite else _epsilon_of(self.value or Fraction(1))

    def rounded(self) -> float | None:
        return None if self.value is None else float_up(self.value)


#: Cells per batch of :func:`_batched` (a few arrays of this many words at once).
BATCH_CELLS = 1 << 20


def _concatenated(block: list[IntegerPair]) -> IntegerPair:
    """The pairs of ``block`` as one pair: their cells side by side (same denominator)."""
    cat = (lambda ws: Weights(np.concatenate([w.words for w in ws]), np.concatenate([w.floats for w in ws]),
                              all(w.fits for w in ws)))
    return IntegerPair(cat([b.p for b in block]), cat([b.q for b in block]), block[0].denominator, "")


def _batched(pairs: Iterable[IntegerPair], pure: _Maximum, dp: _Maximum, pdp: _Maximum,
             e_low: Fraction | None, batch: bool, settled: list[int]) -> Iterator[IntegerPair]:
    """The pairs, except those settled a batch at a time (many pairs of one channel in one
    vectorised pass instead of one pass each); yields the pairs it cannot settle.

    A batch of pairs with ``uint64`` weights over one denominator is settled when it has no
    infinite cell and no cell above ``e_low`` (``delta = 0`` or none asked): then each
    pair's ``delta_DP`` and ``delta_PDP`` at ``e_low`` are exactly 0 (no cell exceeds
    ``E q``), and the largest ratio of the batch -- the maximum of the pairs' exact
    largest ratios, as the cells are the union of theirs -- is offered with the label of a
    pair holding it (found by an exact comparison). Values equal the pair-by-pair ones.
    The number of pairs settled is appended to ``settled``.
    """

    def settle(block: list[IntegerPair]) -> list[IntegerPair]:
        if len(block) < 2 or any(b.p.big or b.q.big or b.denominator != block[0].denominator for b in block):
            return block
        cat = _concatenated(block)
        if cat.has_infinite() or (e_low is not None and cat.above(e_low).any()):
            return block
        top = cat.max_ratio()
        if top is not None and (pure.value is None or top > pure.value):
            at = int(np.flatnonzero(compare_ratio(cat.p, cat.q, top.numerator, top.denominator, cat.key) >= 0)[0])
            ends = np.cumsum([b.p.size for b in block])
            pure.offer(top, block[int(np.searchsorted(ends, at, side="right"))].label)
        elif top is None:
            pure.offer(Fraction(0), block[0].label)
        if e_low is not None:
            dp.offer(Fraction(0), block[0].label)
            pdp.offer(Fraction(0), block[0].label)
        settled.append(len(block))
        return []

    block: list[IntegerPair] = []
    cells = 0
    for pair in pairs:
        if not batch or pure.infinite:
            yield pair
            continue
        block.append(pair)
        cells += pair.p.size
        if cells >= BATCH_CELLS:
            yield from settle(block)
            block, cells = [], 0
    yield from settle(block)


def certify_pairs(pairs: Iterable[IntegerPair], *, epsilon: float | None = None,
                  delta: float | None = None) -> PairMaxima:
    """Exact maxima over pairs, consuming them one at a time (O(n) memory).

    The inverse maps are computed for a pair only when it can raise the running
    maximum: a pair's ``E*_DP`` exceeds the current ``E`` iff its ``delta_DP`` at
    ``E`` exceeds ``delta`` (one exact pass), and its PDP answer exceeds ``r`` iff its
    mass above ``r`` exceeds ``delta``. The maxima are kept as rationals and
    rounded once (``log_up`` is monotone, so the max of the rounded values is the
    rounded max). Each value equals the maximum of :class:`~optnoise.analysis.exact.ExactPair`'s.

    At ``delta = 0`` both inverse maps of a pair equal its pure epsilon, as the same
    rational: ``ExactPair.epsilon_dp`` stops at the second-largest ratio group with
    ``(A - 0) / B = P_1 / Q_1 = r_1`` (or, with one group above 1, ends with the same value),
    ``epsilon_pdp`` keeps ``r_1`` as the last ratio with no mass above it, and an infinite
    mass makes all three infinite; so they are the pure maximum, with no further pass.
    """
    eps = None if epsilon is None else _check_eps(epsilon)
    d = None if delta is None else _check_delta(delta)
    e_low = None if eps is None or math.isinf(eps) else exp_lower(eps)
    count = 0
    pure, dp, pdp, edp, epdp = _Maximum(), _Maximum(), _Maximum(), _Maximum(), _Maximum()
    settled: list[int] = []
    for pair in _batched(pairs, pure, dp, pdp, e_low, not d, settled):
        count += 1
        # pure epsilon: only look for the max ratio if some ratio exceeds the current one
        if not pure.infinite:
            if pair.has_infinite():
                pure.offer(None, pair.label)
            elif pure.value is None or pair.above(pure.value).any():
                pure.offer(pair.max_ratio() or Fraction(0), pair.label)
        if eps is not None:
            dp.offer(pair.infinite_mass() if e_low is None else pair.delta_dp_exact(e_low), pair.label)
            pdp.offer(pair.infinite_mass() if e_low is None else pair.delta_pdp_exact(e_low), pair.label)
        if d:  # delta > 0
            if edp.could_rise(pair.delta_dp_exact, d):
                edp.offer(pair.epsilon_dp_ratio(d), pair.label)
            if epdp.could_rise(pair.delta_pdp_exact, d):
                epdp.offer(pair.epsilon_pdp_ratio(d), pair.label)
    count += sum(settled)
    if count == 0:
        raise InvalidParameterError("pairs", "none", "at least one neighbouring pair")
    if d == 0:
        edp = epdp = pure
    found = {"epsilon_pure": pure, "delta_dp": dp, "delta_pdp": pdp, "epsilon_dp": edp, "epsilon_pdp": epdp}
    return PairMaxima(
        epsilon_pure=pure.epsilon(), delta_dp=dp.rounded(), delta_pdp=pdp.rounded(),
        epsilon_dp=None if d is None else edp.epsilon(), epsilon_pdp=None if d is None else epdp.epsilon(),
        pairs=count, worst={k: m.label for k, m in found.items() if m.label is not None})


__all__ = ["BATCH_CELLS", "IntegerPair", "MAX_WEIGHT_BITS", "TAU", "Weights", "as_weights", "certify_pairs",
           "compare_limbs", "compare_ratio", "limbs", "mul_const", "ratio_keys"]
