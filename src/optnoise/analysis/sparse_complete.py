"""Exact certificate of a channel with few outputs per row, every pair of inputs neighbours.

The per-record unit makes every ordered pair ``(a, b)`` of a channel's inputs a pair of
neighbours: ``n (n + 1)`` pairs of ``n + 1`` cells, ``O(n^3)`` cells visited pair by pair
(:func:`~optnoise.analysis.exact_fast.certify_pairs`: minutes at ``n = 300``). A channel whose
rows each have at most :data:`MOST` positive weights (the per-record ``(eps, delta)`` design
``(1 - delta) B + delta D`` has three) needs far less, because *a cell where row ``a`` has
weight 0 changes none of the pair's values*: its ratio is ``0 / q`` (or ``0 / 0``, no cell),
it adds ``max(0, 0 - E q) = 0`` to ``delta_DP``, nothing to ``delta_PDP``'s mass, and it is
neither infinite nor a candidate (``p > q``) of the inverse maps
(:meth:`~optnoise.analysis.exact_fast.IntegerPair.epsilon_dp_ratio`). So pair ``(a, b)`` is
its restriction to the support of row ``a``: ``k <= MOST`` cells, and all pairs together are
``n (n + 1) k`` cells, compared exactly and vectorised (:func:`compare_ratio`, the same
exact comparison the pair-by-pair engine uses) and summed in ``uint64`` (the selected weights
of one row sum to at most the row's total, the denominator, below ``2^64``).

The five values of :class:`~optnoise.analysis.floating.PairMaxima` are the same rationals as
the pair-by-pair engine's, rounded the same way:

* ``epsilon_pure``: the column pair (each column's largest against its least: ``max_{a,b,y}
  P[a, y] / P[b, y] = max_y max_a P[a, y] / min_b P[b, y]``);
* ``delta_DP`` at ``E = exp_lower(eps)``: ``max_{a,b} (A_ab den - num B_ab) / (den D)`` with
  ``A_ab, B_ab`` the sums of ``P[a, .]`` and ``P[b, .]`` over the cells where ``P[a, y] den >
  num P[b, y]`` (exact integers; the maximum taken over Python ints);
* ``delta_PDP``: ``max_{a,b} A_ab / D``;
* ``epsilon_DP(delta)``, ``epsilon_PDP(delta)``: as ``certify_pairs`` does, a pair's inverse
  is computed (exactly, by :class:`~optnoise.analysis.exact_fast.IntegerPair` on its ``k``
  cells) only if it can raise the running maximum ``r``, i.e. iff its ``delta`` at ``r``
  exceeds ``delta`` (the delta curves are non-increasing) -- decided for every pair at once,
  exactly; the loop ends when no pair can, so the maximum is the exact one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterator

import numpy as np

from .exact import exp_lower, float_up, log_up
from .exact_fast import IntegerPair, as_weights, compare_ratio
from ..target import check_delta
from .floating import RATIO_TOLERANCE, FloatPair, PairMaxima

#: Rows with at most this many positive weights take the sparse certificate.
MOST = 8

#: Cells compared at once (rows of ``a`` per block times ``n + 1`` times ``k``).
BLOCK_CELLS = 1 << 21

#: Pairs whose inverse is computed exactly per round of the inverse maps' loop.
PER_ROUND = 64


def support(weights: np.ndarray, most: int = MOST) -> tuple[np.ndarray, np.ndarray] | None:
    """``(cols, used)``: each row's positive cells (padded, ``used`` marks the real ones), or
    ``None`` when some row has more than ``most`` or the weights are not ``uint64``."""
    if weights.dtype != np.uint64 or weights.ndim != 2:
        return None
    nnz = (weights > 0).sum(axis=1)
    k = int(nnz.max(initial=0))
    if k == 0 or k > most:
        return None
    order = np.argsort(weights == 0, axis=1, kind="stable")[:, :k]   # positive cells first
    used = np.arange(k)[None, :] < nnz[:, None]
    return order, used


def _label(a: int, b: int) -> str:
    return f"x={a},x'={b}"


def _epsilon(ratio: Fraction | None) -> float:
    """``ln`` of a ratio rounded up; ``0`` at or below 1; ``inf`` for ``None``."""
    return math.inf if ratio is None else 0.0 if ratio <= 1 else log_up(ratio)


class SparseComplete:
    """Every ordered pair of a sparse-row channel's inputs, restricted to each row's support."""

    def __init__(self, weights: np.ndarray, denominator: int, cols: np.ndarray, used: np.ndarray) -> None:
        self.w, self.d = weights, int(denominator)
        self.cols, self.used = cols, used
        self.size, self.k = weights.shape[0], cols.shape[1]
        self.rows_per_block = max(1, BLOCK_CELLS // max(1, self.size * self.k))

    def blocks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """``(first row, P, Q)`` per block of rows ``a``: ``P[i, b, j]`` the weight of row ``a``
        on its ``j``-th support cell (0 where padded), ``Q[i, b, j]`` row ``b``'s on that cell."""
        for lo in range(0, self.size, self.rows_per_block):
            hi = min(self.size, lo + self.rows_per_block)
            cols = self.cols[lo:hi]
            p = np.where(self.used[lo:hi], np.take_along_axis(self.w[lo:hi], cols, axis=1), self.w.dtype.type(0))
            P = np.broadcast_to(p[:, None, :], (hi - lo, self.size, self.k))
            Q = self.w[:, cols].transpose(1, 0, 2)            # Q[i, b, j] = w[b, cols[i, j]]
            yield lo, np.ascontiguousarray(P), np.ascontiguousarray(Q)

    def sums_above(self, ratio: Fraction, lo: int, P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``A[i, b], B[i, b]``: the sums of ``P`` and ``Q`` over the cells with ``P / Q > ratio``
        (exact comparison; ``Q = 0 < P`` counts), 0 on the diagonal ``b = a``."""
        shape = P.shape
        above = compare_ratio(as_weights(P.ravel()), as_weights(Q.ravel()), ratio.numerator,
                              ratio.denominator).reshape(shape) > 0
        A = np.where(above, P, np.uint64(0)).sum(axis=2, dtype=np.uint64)
        B = np.where(above, Q, np.uint64(0)).sum(axis=2, dtype=np.uint64)
        rows = np.arange(shape[0])
        A[rows, lo + rows] = 0
        B[rows, lo + rows] = 0
        return A, B

    def pair(self, a: int, b: int) -> IntegerPair:
        """Pair ``(a, b)`` on the support of row ``a`` (the same values as on every cell)."""
        cols = self.cols[a][self.used[a]]
        return IntegerPair.from_weights(self.w[a, cols], self.w[b, cols], self.d, _label(a, b))

    # -- deltas at one ratio -------------------------------------------------------
    def deltas(self, e: Fraction) -> tuple[tuple[Fraction, str], tuple[Fraction, str]]:
        """``(max delta_DP, label), (max delta_PDP, label)`` at ``E = e``, exactly."""
        num, den = e.numerator, e.denominator
        best_dp: tuple[int, int, int] = (0, 0, 1)
        best_pdp: tuple[int, int, int] = (0, 0, 1)
        for lo, P, Q in self.blocks():
            A, B = self.sums_above(e, lo, P, Q)
            i, b = np.unravel_index(int(np.argmax(A)), A.shape)
            if int(A[i, b]) > best_pdp[0]:
                best_pdp = (int(A[i, b]), lo + int(i), int(b))
            live = np.flatnonzero(A.ravel() > 0)
            if live.size:
                value = A.ravel()[live].astype(object) * den - B.ravel()[live].astype(object) * num
                j = int(np.argmax(value))
                if value[j] > best_dp[0]:
                    i, b = np.unravel_index(int(live[j]), A.shape)
                    best_dp = (int(value[j]), lo + int(i), int(b))
        return ((Fraction(best_dp[0], den * self.d), _label(best_dp[1], best_dp[2])),
                (Fraction(best_pdp[0], self.d), _label(best_pdp[1], best_pdp[2])))

    # -- inverse maps ----------------------------------------------------------------
    def risers(self, r: Fraction | None, delta: Fraction, pdp: bool) -> list[tuple[int, int]]:
        """Pairs whose ``delta`` (DP, or PDP with ``pdp``) at ratio ``r`` exceeds ``delta`` (every
        pair can when ``r`` is ``None``: then the :data:`PER_ROUND` with the largest float
        ``delta`` at ratio 1), at most :data:`PER_ROUND`, largest float ``delta`` first."""
        e = Fraction(1) if r is None else r
        dn, dd = delta.numerator, delta.denominator
        found: list[tuple[float, int, int]] = []
        for lo, P, Q in self.blocks():
            A, B = self.sums_above(e, lo, P, Q)
            live = np.flatnonzero(A.ravel() > 0)
            if not live.size:
                continue
            a_obj, b_obj = A.ravel()[live].astype(object), B.ravel()[live].astype(object)
            value = a_obj * e.denominator - (0 if pdp else b_obj * e.numerator)
            rises = value * dd > dn * e.denominator * self.d if r is not None else np.ones(live.size, bool)
            rises = np.asarray(rises, dtype=bool)
            if not rises.any():
                continue
            approx = value[rises].astype(np.float64)
            for j in np.argsort(-approx)[:PER_ROUND]:
                i, b = np.unravel_index(int(live[rises][j]), A.shape)
                found.append((float(approx[j]), lo + int(i), int(b)))
        found.sort(reverse=True)
        return [(a, b) for _, a, b in found[:PER_ROUND]]

    def inverse(self, delta: Fraction, pdp: bool) -> tuple[Fraction | None, str]:
        """The exact maximum over pairs of ``epsilon_DP(delta)`` (or PDP) as a ratio (``None``:
        infinite), and a pair attaining it."""
        best: Fraction | None = None
        label = ""
        while True:
            risers = self.risers(best, delta, pdp)
            if not risers:   # no pair can rise (none has any mass above ratio 1 at the start)
                return (Fraction(1), _label(0, 1)) if best is None else (best, label)
            for a, b in risers:
                pair = self.pair(a, b)
                got = pair.epsilon_pdp_ratio(delta) if pdp else pair.epsilon_dp_ratio(delta)
                if got is None:
                    return None, pair.label
                if best is None or got > best:
                    best, label = got, pair.label


class FloatSparse(SparseComplete):
    """The same pairs in floating point (the float analysis: :class:`FloatPair` drops the cells
    where ``p = 0`` itself, so each pair on its row's support is the pair)."""

    def pair(self, a: int, b: int) -> FloatPair:  # type: ignore[override]
        cols = self.cols[a][self.used[a]]
        return FloatPair(self.w[a, cols], self.w[b, cols], _label(a, b))

    def curves(self, epsilon: float, lo: int, P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``delta_DP`` and ``delta_PDP`` of every pair of the block at ``epsilon`` (as
        :class:`FloatPair` computes them; 0 on the diagonal)."""
        e = math.exp(epsilon) if epsilon < 700 else math.inf
        with np.errstate(over="ignore", invalid="ignore"):
            excess = np.where(Q == 0, P, P - e * Q)
            violated = (P > e * Q * (1.0 + RATIO_TOLERANCE)) | (Q == 0)
        dp = np.where(excess > 0, excess, 0.0).sum(axis=2)
        pdp = np.where(violated & (P > 0), P, 0.0).sum(axis=2)
        rows = np.arange(P.shape[0])
        dp[rows, lo + rows] = 0.0
        pdp[rows, lo + rows] = 0.0
        return dp, pdp

    def worst(self, epsilon: float) -> tuple[tuple[float, str], tuple[float, str]]:
        """``(max delta_DP, label), (max delta_PDP, label)`` at ``epsilon``."""
        best = [(0.0, _label(0, 1)), (0.0, _label(0, 1))]
        for lo, P, Q in self.blocks():
            for k, curve in enumerate(self.curves(epsilon, lo, P, Q)):
                i, b = np.unravel_index(int(np.argmax(curve)), curve.shape)
                if curve[i, b] > best[k][0]:
                    best[k] = (float(curve[i, b]), _label(lo + int(i), int(b)))
        return best[0], best[1]

    def float_inverse(self, delta: float, pdp: bool) -> tuple[float, str]:
        """The largest ``epsilon_DP(delta)`` (or PDP) over the pairs: a pair is evaluated only
        if its ``delta`` at the running maximum exceeds ``delta`` (the curves are
        non-increasing), the most exceeding first."""
        best, label = -1.0, _label(0, 1)
        seen: set[tuple[int, int]] = set()   # float round-off must not bring a pair back
        while True:
            found: list[tuple[float, int, int]] = []
            for lo, P, Q in self.blocks():
                curve = self.curves(max(best, 0.0), lo, P, Q)[1 if pdp else 0]
                rises = np.flatnonzero(curve.ravel() > delta) if best >= 0 else np.argsort(-curve.ravel())[:PER_ROUND]
                for j in rises[np.argsort(-curve.ravel()[rises])]:
                    i, b = np.unravel_index(int(j), curve.shape)
                    if (lo + int(i), int(b)) not in seen:
                        found.append((float(curve[i, b]), lo + int(i), int(b)))
                    if len(found) >= PER_ROUND:
                        break
            if not found:
                return max(best, 0.0), label
            for _, a, b in sorted(found, reverse=True)[:PER_ROUND]:
                seen.add((a, b))
                pair = self.pair(a, b)
                got = pair.epsilon_pdp(delta) if pdp else pair.epsilon_dp(delta)
                if got > best:
                    best, label = got, pair.label
            if math.isinf(best):
                return best, label


def float_sparse_summary(matrix: np.ndarray, pure: Callable[[], tuple[float, str]]
                         ) -> Callable[[float | None, float | None], PairMaxima] | None:
    """The float twin of :func:`sparse_summary` (the float analysis of the same channel)."""
    m = np.asarray(matrix, dtype=np.float64)
    got = support((m > 0).astype(np.uint64))
    if got is None:
        return None
    fs = FloatSparse(m, 1, *got)

    def summarize(epsilon: float | None, delta: float | None) -> PairMaxima:
        eps_pure, pure_label = pure()
        worst, out = {"epsilon_pure": pure_label}, {"epsilon_pure": eps_pure}
        if epsilon is not None:
            (dp, ldp), (pdp, lpdp) = fs.worst(epsilon)
            out.update(delta_dp=dp, delta_pdp=pdp)
            worst.update(delta_dp=ldp, delta_pdp=lpdp)
        if delta is not None:
            (edp, l1), (epdp, l2) = fs.float_inverse(delta, False), fs.float_inverse(delta, True)
            out.update(epsilon_dp=edp, epsilon_pdp=epdp)
            worst.update(epsilon_dp=l1, epsilon_pdp=l2)
        return PairMaxima(pairs=fs.size * (fs.size - 1), worst=worst, **out)
    return summarize


def sparse_summary(weights: np.ndarray, denominator: int, pure: Callable[[], tuple[float, str]]
                   ) -> Callable[[float | None, float | None], PairMaxima] | None:
    """The maxima over every ordered pair of the channel's inputs, or ``None`` when its rows are
    not sparse (:func:`support`). ``pure()`` gives ``(epsilon_pure, label)`` (the column pair).

    Proof: docs/proofs/per-record-delta-bound.md (Claim 4)."""
    got = support(weights)
    if got is None:
        return None
    sc = SparseComplete(weights, denominator, *got)

    def summarize(epsilon: float | None, delta: float | None) -> PairMaxima:
        eps_pure, pure_label = pure()
        worst = {"epsilon_pure": pure_label}
        out: dict = {"epsilon_pure": eps_pure}
        if epsilon is not None:
            if math.isinf(epsilon):
                (dp, ldp) = (pdp, lpdp) = _infinite_mass(sc)
            else:
                (dp, ldp), (pdp, lpdp) = sc.deltas(exp_lower(epsilon))
            out.update(delta_dp=float_up(dp), delta_pdp=float_up(pdp))
            worst.update(delta_dp=ldp, delta_pdp=lpdp)
        if delta is not None:
            d = delta if isinstance(delta, Fraction) else Fraction(check_delta(delta))
            if d == 0:
                out.update(epsilon_dp=eps_pure, epsilon_pdp=eps_pure)
                worst.update(epsilon_dp=pure_label, epsilon_pdp=pure_label)
            else:
                (rdp, l1), (rpdp, l2) = sc.inverse(d, False), sc.inverse(d, True)
                out.update(epsilon_dp=_epsilon(rdp), epsilon_pdp=_epsilon(rpdp))
                worst.update(epsilon_dp=l1, epsilon_pdp=l2)
        return PairMaxima(pairs=sc.size * (sc.size - 1), worst=worst, **out)
    return summarize


def _infinite_mass(sc: SparseComplete) -> tuple[Fraction, str]:
    """Both deltas at ``epsilon = inf``: the largest mass of ``P[a]`` where ``P[b] = 0``."""
    best, at = 0, (0, 0)
    for lo, P, Q in sc.blocks():
        A = np.where((Q == 0) & (P > 0), P, np.uint64(0)).sum(axis=2, dtype=np.uint64)
        rows = np.arange(A.shape[0])
        A[rows, lo + rows] = 0
        i, b = np.unravel_index(int(np.argmax(A)), A.shape)
        if int(A[i, b]) > best:
            best, at = int(A[i, b]), (lo + int(i), int(b))
    return Fraction(best, sc.d), _label(*at)


__all__ = ["BLOCK_CELLS", "MOST", "PER_ROUND", "FloatSparse", "SparseComplete", "float_sparse_summary", "sparse_summary",
           "support"]
