"""Optimal channels on ``{0..n}`` at scale: pure DP, neighbours one apart, a prior-averaged cost.

The channel LP (:mod:`optnoise.design.channel`) has ``(n+1)^2`` variables: minutes at
``n = 1,000``, out of reach at ``n = 10,000``. For the commonest request -- a count under
pure ``epsilon``-DP, neighbours one apart, a loss of the released value averaged over a
prior -- the structure gives the optimum in ``O(n^2)`` time and ``O(n)`` extra memory,
with a proof of how optimal the result is:

* **Primal** (Ghosh, Roughgarden & Sundararajan, STOC 2009 / SICOMP 2012, Thm. 1.2 with
  Sect. 2.2): the range-restricted geometric mechanism ``G`` followed by the consumer's best
  deterministic remap ``T`` -- output ``z`` goes to ``argmin_y C[z, y]``, ``C = G^T diag(pi)
  L`` -- is optimal for a loss non-decreasing in ``|y - q|``. ``C`` is computed without
  forming ``G``: ``G[q, z] = d_z alpha^|q-z|``, so ``G^T M`` is ``d_z`` times a forward and
  a backward exponential smoothing of ``M = diag(pi) L`` along ``q``
  (:func:`geometric_smoothing`, ``scipy.signal.lfilter``), processed in blocks of columns.
* **Dual**: with ``v_z = min_y C[z, y]`` (the cost of ``G T`` is ``sum_z v_z``), the row
  multipliers ``u = G^{-T} v`` have ``sum u = sum v`` (``G`` is row-stochastic, so
  ``G^{-1} 1 = 1``), and ``G = K_alpha diag(d)`` with ``K_alpha[q, z] = alpha^|q-z|`` (the
  Kac-Murdock-Szegő matrix, whose inverse is tridiagonal) gives ``u`` in ``O(n)``
  (:func:`geometric_dual`). ``u`` is *not trusted*: :func:`optnoise.design.bounds.chain_bound`
  checks it column by column in outward-rounded arithmetic, lowers it where a column fails,
  and returns a proven lower bound on the optimum of the true problem (at ``e^eps``, not the
  design's margin). The theorem is not used in the proof: the certificate is. For a loss
  that is not monotone the certificate says how far the result may be from the optimum.

The returned channel is ``G' T`` at ``e^eps (1 - RATIO_MARGIN)`` (room for float round-off),
mixed with the uniform channel at weight ``2^-40`` when some entries underflow (at
``n = 10,000`` and ``eps = 1`` most entries of ``G`` are below ``1e-308``; every entry of a
pure-DP channel on a connected neighbourhood must be positive). What is sampled is its
quantization, certified exactly (:meth:`~optnoise.mechanism.Mechanism.quantize`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..costs import check_prior, loss_rows
from ..errors import InvalidParameterError
from ..target import check_epsilon
from .bounds import Bound, chain_bound
from .solver import RATIO_MARGIN

#: Columns of ``C`` computed at once (memory ``(n+1) x BLOCK`` floats, a few copies).
BLOCK = 2048
#: Weight of the uniform channel mixed in when entries of ``G' T`` underflow.
MIXING = 2.0 ** -40


@dataclass(frozen=True, eq=False)
class ChainSolution:
    """The structured optimum of one request (arrays read-only).

    Attributes
    ----------
    matrix:
        The channel ``P[q, y]`` (rows sum to 1 within ``1e-15``).
    remap:
        ``remap[z]``: the released value of the geometric output ``z``.
    cost:
        The prior-averaged cost of ``matrix`` (float evaluation).
    bound:
        The proven lower bound on the optimum (:class:`~optnoise.design.bounds.Bound`).
    mixing:
        Weight of the uniform channel in ``matrix`` (0 when none was needed).
    seconds:
        Wall time of the design and of the certificate ``(design, bound)``.
    """

    matrix: np.ndarray
    remap: np.ndarray
    cost: float
    bound: Bound
    mixing: float
    seconds: tuple[float, float]

    @property
    def gap(self) -> float:
        return self.bound.gap(self.cost)


# ------------------------------------------------------------------ building blocks
def geometric_smoothing(M: np.ndarray, alpha: float) -> np.ndarray:
    """``S[z, :] = sum_q alpha^|q - z| M[q, :]`` (``0 <= alpha < 1``) in ``O(rows x cols)``.

    A forward recursion ``F_z = M_z + alpha F_{z-1}`` and a backward one ``B_z = M_z + alpha
    B_{z+1}`` give ``S = F + B - M``. Both are stable (``alpha < 1``) and sum non-negative
    terms when ``M >= 0``; one vector operation per row, over all columns at once.
    """
    M = np.asarray(M, dtype=np.float64)
    S = np.empty_like(M)
    acc = M[0].copy()
    S[0] = acc
    with np.errstate(under="ignore"):
        for z in range(1, M.shape[0]):
            acc *= alpha
            acc += M[z]
            S[z] = acc
        acc = M[-1].copy()
        for z in range(M.shape[0] - 2, -1, -1):
            acc *= alpha
            acc += M[z]
            S[z] += acc - M[z]
    return S


def geometric_weights(size: int, alpha: float) -> np.ndarray:
    """``d_z`` with ``G[q, z] = d_z alpha^|q - z|`` for the range-restricted geometric
    mechanism on ``size`` values: ``(1 - alpha) / (1 + alpha)`` inside, ``1 / (1 + alpha)`` at
    the two ends (the clamped tails), ``1`` when ``size == 1``."""
    if size == 1:
        return np.ones(1)
    d = np.full(size, (1.0 - alpha) / (1.0 + alpha))
    d[0] = d[-1] = 1.0 / (1.0 + alpha)
    return d


def geometric_dual(v: np.ndarray, alpha: float) -> np.ndarray:
    """``u`` with ``G^T u = v`` for ``G = K_alpha diag(d)`` (:func:`geometric_weights`).

    ``K_alpha`` (``alpha^|q-z|``) has the tridiagonal inverse ``(1 - alpha^2)^{-1}`` times
    ``[1, 1 + alpha^2, ..., 1 + alpha^2, 1]`` on the diagonal and ``-alpha`` beside it
    (Kac, Murdock & Szegő 1953), so ``u = K_alpha^{-1} (v / d)`` costs ``O(n)``.
    """
    v = np.asarray(v, dtype=np.float64)
    r = v / geometric_weights(v.size, alpha)
    if r.size == 1:
        return r
    a2 = alpha * alpha
    u = (1.0 + a2) * r
    u[0] = r[0]
    u[-1] = r[-1]
    u[:-1] -= alpha * r[1:]
    u[1:] -= alpha * r[:-1]
    return u / (1.0 - a2)


def _loss_columns(loss: str | np.ndarray, size: int) -> Callable[[np.ndarray], np.ndarray]:
    """``cols(ys) -> L[:, ys]`` for a named (symmetric) loss or a matrix."""
    if isinstance(loss, str):
        return lambda ys: loss_rows(loss, size - 1, ys).T
    L = np.asarray(loss, dtype=np.float64)
    return lambda ys: L[:, ys]


def _cost_rows(loss: str | np.ndarray, prior: np.ndarray) -> Callable[[int, int], np.ndarray]:
    """``rows(lo, hi) -> c[lo:hi, :]`` with ``c = diag(prior) L``."""
    size = prior.size
    if isinstance(loss, str):
        return lambda lo, hi: prior[lo:hi, None] * loss_rows(loss, size - 1, np.arange(lo, hi))
    L = np.asarray(loss, dtype=np.float64)
    return lambda lo, hi: prior[lo:hi, None] * L[lo:hi]


def best_remap(loss: str | np.ndarray, prior: np.ndarray, alpha: float,
               block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """``(remap, v)``: for every output ``z`` of the geometric mechanism at ``alpha`` the
    released value ``argmin_y C[z, y]`` (the smallest on ties) and ``v_z = min_y C[z, y]``,
    ``C = G^T diag(prior) L``; the columns of ``C`` in blocks of ``block``."""
    size = prior.size
    cols = _loss_columns(loss, size)
    d = geometric_weights(size, alpha)
    best = np.full(size, np.inf)
    arg = np.zeros(size, dtype=np.int64)
    for lo in range(0, size, block):
        ys = np.arange(lo, min(size, lo + block))
        C = d[:, None] * geometric_smoothing(prior[:, None] * cols(ys), alpha)
        j = np.argmin(C, axis=1)
        val = C[np.arange(size), j]
        better = val < best
        best[better] = val[better]
        arg[better] = ys[j[better]]
    return arg, best


def remapped_geometric(size: int, alpha: float, remap: np.ndarray, rows: int = 256) -> np.ndarray:
    """The channel ``G T``: ``P[q, y] = sum_{z : remap[z] = y} d_z alpha^|q - z|`` (sums of
    non-negative terms, so every entry has a small relative error; entries below the float
    range are 0). Built ``rows`` rows at a time from a table of ``alpha^k``; a monotone
    remap (the usual case: outputs merged into intervals) sums adjacent columns."""
    import scipy.sparse as sp  # where used: 0.17 s at start-up (issue 37)

    d = geometric_weights(size, alpha)
    with np.errstate(under="ignore"):
        powers = np.exp(np.arange(size) * math.log(alpha)) if alpha > 0 else (np.arange(size) == 0) * 1.0
    P = np.zeros((size, size))
    z = np.arange(size)
    monotone = bool(np.all(np.diff(remap) >= 0))
    if monotone:
        starts = np.flatnonzero(np.r_[True, np.diff(remap) > 0])
        targets = remap[starts]
    else:
        T = sp.csr_matrix((np.ones(size), (np.arange(size), remap)), shape=(size, size))
    for lo in range(0, size, rows):
        q = np.arange(lo, min(size, lo + rows))
        block = powers[np.abs(q[:, None] - z[None, :])] * d[None, :]
        if monotone:
            P[lo:lo + q.size, targets] = np.add.reduceat(block, starts, axis=1)
        else:
            P[lo:lo + q.size] = (T.T @ block.T).T
    return P


def _ratios_hold(P: np.ndarray, epsilon: float, rows: int = 256) -> bool:
    """Float screen: ``P[q, y] <= e^eps P[q +- 1, y]`` (a column of zeros passes, an entry
    that underflowed beside a positive one does not). In blocks of rows."""
    e = math.exp(epsilon)
    for lo in range(0, P.shape[0] - 1, rows):
        a, b = P[lo:lo + rows], P[lo + 1:lo + rows + 1]
        a = a[:b.shape[0]]
        if not (np.all(b <= e * a) and np.all(a <= e * b)):
            return False
    return True


def _uniform_cost(loss: str | np.ndarray, prior: np.ndarray, rows: int = 256) -> float:
    """``sum_q prior_q mean_y L[q, y]``: the cost of the uniform channel."""
    rows_of = _cost_rows(loss, prior)
    return float(sum(rows_of(lo, min(prior.size, lo + rows)).sum() for lo in range(0, prior.size, rows))
                 / prior.size)


# ------------------------------------------------------------------ the design
def solve_chain(n: int, epsilon: float, loss: str | np.ndarray = "abs-error",
                prior: Sequence[float] | np.ndarray | None = None) -> ChainSolution:
    """The optimal channel on ``{0..n}`` under pure ``epsilon``-DP, neighbours one apart,
    for a prior-averaged loss, with a proven lower bound on the optimum.

    Parameters
    ----------
    n:
        Largest answer.
    epsilon:
        Pure DP budget (``> 0``).
    loss:
        A released-value cost name (:data:`optnoise.costs.RELEASED_COSTS`) or an
        ``(n+1) x (n+1)`` loss matrix ``L[q, y]``.
    prior:
        Weights on the answers (uniform by default).

    Returns
    -------
    ChainSolution
        The channel, its remap, its cost, the proven bound and the gap between them.

    Notes
    -----
    ``O(n^2)`` time; memory: the ``(n+1)^2`` channel plus ``O(n * BLOCK)``. The bound holds for
    any loss; it meets the cost (gap ~1e-10, the design's ratio margin) when the loss is
    non-decreasing in ``|y - q|`` (the tests check it against the plain LP).
    """
    t0 = time.perf_counter()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (domain {0..n})")
    size = int(n) + 1
    epsilon = check_epsilon(epsilon, allow_zero=False, accepted="a finite epsilon > 0")
    pi = check_prior(prior, size)
    if not isinstance(loss, str):
        L = np.asarray(loss, dtype=np.float64)
        if L.shape != (size, size) or not np.all(np.isfinite(L)):
            raise InvalidParameterError("cost", f"shape {L.shape}", f"a finite {size} x {size} loss matrix")
        loss = L
    # the design's ratio e^eps (1 - RATIO_MARGIN): alpha' = e^-eps / (1 - RATIO_MARGIN)
    alpha = math.exp(-epsilon) / (1.0 - RATIO_MARGIN)
    remap, v = best_remap(loss, pi, alpha)
    P = remapped_geometric(size, alpha, remap)
    P /= P.sum(axis=1, keepdims=True)
    # the cost of G' T is sum v (C's rows at the remap); mixing adds the uniform channel's
    cost, mixing = float(np.sum(v)), 0.0
    if not _ratios_hold(P, epsilon):
        mixing = MIXING
        P *= 1.0 - mixing
        P += mixing / size
        cost = (1.0 - mixing) * cost + mixing * _uniform_cost(loss, pi)
    t1 = time.perf_counter()
    bound = chain_bound(_cost_rows(loss, pi), geometric_dual(v, alpha), epsilon)
    t2 = time.perf_counter()
    P.flags.writeable = False
    remap.flags.writeable = False
    return ChainSolution(P, remap, cost, bound, mixing, (t1 - t0, t2 - t1))


__all__ = [
    "BLOCK",
    "MIXING",
    "ChainSolution",
    "best_remap",
    "geometric_dual",
    "geometric_smoothing",
    "geometric_weights",
    "remapped_geometric",
    "solve_chain",
]
