"""(eps, delta)-DP channels on ``{0..n}`` at scale: the LP on a band, the bound on everything.

Under approximate DP a channel may hold zeros, and for a loss that grows with ``|y - q|`` the
optimum keeps its mass near the diagonal: the optimal channel for neighbours one apart at
``eps = 1``, ``delta = 1e-3`` has no mass beyond ``|y - q| = 9``. So the channel LP
(:mod:`optnoise.design.channel`: variables ``P[q, y]``, epigraph variables ``t[k, y] >=
P[a_k, y] - e^eps P[b_k, y]`` per ordered pair ``k`` and output, ``sum_y t[k, y] <=
delta``) is solved with ``P[q, y] = 0`` outside the band ``|y - q| <= B`` -- ``O(n B)``
variables instead of ``O(n^2 |pairs| / n)`` -- which is a *restriction*: its channel is
feasible for the full problem.

How far from optimal it is, is proven, not assumed: the band LP's multipliers, extended by 0
to the rows it left out, are a candidate dual of the *full* relaxed LP (ratio coefficients a
float ``>= e^eps``, delta unshrunk), and :func:`optnoise.design.bounds.lp_bound` turns them
into a lower bound in outward-rounded arithmetic (every variable boxed: ``P <= 1``, ``t <=
1``, ``z <= max L``, bounds that keep the optimum). If the gap is above the tolerance the
band doubles and the LP is solved again, until the gap no longer halves (what is left is then
the design's margins on ``e^eps`` and delta, not the band); at ``B = n`` it is the full LP.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..target import check_delta
from .bounds import GAP_TOLERANCE, Bound, exp_up, lp_bound
from .solver import RATIO_MARGIN, Infeasible, solve_lp

#: Absolute margin on delta when solving (as the channel LP: at most 1e-3 delta).
DELTA_MARGIN = 1e-9


@dataclass(frozen=True, eq=False)
class BandSolution:
    """The band LP's channel (zeros outside the band), its objective and the proven bound."""

    matrix: np.ndarray
    objective: float
    bound: Bound
    band: int
    n_variables: int
    n_rows: int
    seconds: float

    @property
    def gap(self) -> float:
        return self.bound.gap(self.objective)


@dataclass(frozen=True)
class _Index:
    """Variables of the model over the cells ``cells`` (flat ``q * size + y``): ``P`` on the
    cells, ``t`` on the (pair, output) with ``P[a, y]`` a cell, then ``z`` if worst case."""

    size: int
    cells: np.ndarray       # flat P indices kept, sorted
    t_pair: np.ndarray      # pair of each t variable
    t_out: np.ndarray       # output y of each t variable
    worst: bool

    @property
    def n_p(self) -> int:
        return int(self.cells.size)

    @property
    def n_vars(self) -> int:
        return self.n_p + int(self.t_pair.size) + (1 if self.worst else 0)


def _index(size: int, pa: np.ndarray, band: int, worst: bool) -> _Index:
    q, y = np.divmod(np.arange(size * size), size)
    cells = np.flatnonzero(np.abs(q - y) <= band)
    keep = np.zeros(size * size, dtype=bool)
    keep[cells] = True
    kk = np.repeat(np.arange(pa.size), size)
    yy = np.tile(np.arange(size), pa.size)
    has = keep[pa[kk] * size + yy]
    return _Index(size, cells, kk[has], yy[has], worst)


def _model(ix: _Index, pa: np.ndarray, pb: np.ndarray, c: np.ndarray, L: np.ndarray, e: float, delta: float):
    """``(cost, A_ub, b_ub, A_eq, b_eq, ub, row_ids)`` of the model on ``ix``; ``row_ids`` give each
    ``A_ub`` row's number in the full model (ratio rows ``k * size + y``, then the budgets, then
    the worst-case rows), so that multipliers carry over."""
    size, K = ix.size, pa.size
    pos = np.full(size * size, -1, dtype=np.int64)
    pos[ix.cells] = np.arange(ix.n_p)
    nt = ix.t_pair.size
    t_col = ix.n_p + np.arange(nt)
    a_cell = pos[pa[ix.t_pair] * size + ix.t_out]
    b_cell = pos[pb[ix.t_pair] * size + ix.t_out]
    r = np.arange(nt)
    hasb = b_cell >= 0
    rows = [r, r[hasb], r]
    cols = [a_cell, b_cell[hasb], t_col]
    data = [np.ones(nt), np.full(int(hasb.sum()), -e), -np.ones(nt)]
    ids = [ix.t_pair * size + ix.t_out]
    # budgets: sum_y t[k, y] <= delta
    rows.append(nt + ix.t_pair)
    cols.append(t_col)
    data.append(np.ones(nt))
    ids.append(K * size + np.arange(K))
    n_ub = nt + K
    b_ub = [np.zeros(nt), np.full(K, delta)]
    cq, cy = np.divmod(ix.cells, size)
    if ix.worst:   # sum_y L[q, y] P[q, y] - z <= 0
        rows += [n_ub + cq, n_ub + np.arange(size)]
        cols += [np.arange(ix.n_p), np.full(size, ix.n_vars - 1)]
        data += [L[cq, cy], -np.ones(size)]
        ids.append(K * size + K + np.arange(size))
        b_ub.append(np.zeros(size))
        n_ub += size
    A_ub = sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n_ub, ix.n_vars))
    A_eq = sp.csr_matrix((np.ones(ix.n_p), (cq, np.arange(ix.n_p))), shape=(size, ix.n_vars))
    cost = np.zeros(ix.n_vars)
    if ix.worst:
        cost[-1] = 1.0
    else:
        cost[: ix.n_p] = c[cq, cy]
    ub = np.ones(ix.n_vars)
    if ix.worst:
        ub[-1] = max(1.0, float(np.max(np.abs(L))))
    return cost, A_ub, np.concatenate(b_ub), A_eq, np.ones(size), ub, np.concatenate(ids)


def solve_band(n: int, epsilon: float, delta: float, pairs: Sequence[tuple[int, int]], L: np.ndarray,
               prior: np.ndarray, worst_case: bool = False, band: int | None = None,
               tolerance: float = GAP_TOLERANCE / 10, time_limit: float | None = None) -> BandSolution:
    """The approximate-DP channel LP on a band around the diagonal, widened until its proven
    gap is below ``tolerance`` (module docstring).

    Parameters
    ----------
    n, epsilon, delta:
        Domain ``{0..n}`` and the (eps, delta)-DP target (``delta > 0``, approximate DP).
    pairs:
        Ordered neighbouring pairs (each direction listed).
    L, prior, worst_case:
        The loss matrix ``L[q, y]``, the prior (normalised), and whether the worst case over
        ``q`` is minimised instead of the prior average.
    band:
        The first half-width ``B`` (default ``ceil(log(2 / delta) / eps)`` plus the largest pair
        distance).
    """
    t0 = time.perf_counter()
    size = int(n) + 1
    delta = check_delta(delta, positive=True, accepted="delta > 0 (the band LP is for approximate DP)")
    pa = np.array([p[0] for p in pairs], dtype=np.int64)
    pb = np.array([p[1] for p in pairs], dtype=np.int64)
    reach = int(np.max(np.abs(pa - pb)))
    B = int(band) if band is not None else min(size - 1, math.ceil(math.log(2.0 / delta) / epsilon) + reach)
    c = prior[:, None] * L
    e_in = math.exp(epsilon) * (1.0 - RATIO_MARGIN)
    d_in = delta - min(DELTA_MARGIN, 1e-3 * delta)
    full = _index(size, pa, size - 1, worst_case)
    relaxed = _model(full, pa, pb, c, L, exp_up(epsilon), delta)
    last = math.inf
    while True:
        ix = _index(size, pa, B, worst_case)
        cost, A_ub, b_ub, A_eq, b_eq, ub, ids = _model(ix, pa, pb, c, L, e_in, d_in)
        left = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))
        try:
            res = solve_lp(cost, A_ub, b_ub, A_eq, b_eq, list(zip(np.zeros(ix.n_vars), ub)), left,
                           {"simplex_dual_edge_weight_strategy": "devex"})
        except Infeasible:
            if B >= size - 1:
                raise
            B = min(size - 1, 2 * B)   # too narrow a band for the target: widen it
            continue
        y_ub = np.zeros(relaxed[1].shape[0])
        y_ub[ids] = res.ineqlin.marginals
        fc, fA, fb, fAe, fbe, fub, _ = relaxed
        bound = lp_bound(fc, fA, fb, fAe, fbe, np.zeros(full.n_vars), fub, y_ub, res.eqlin.marginals,
                         "band-lp-dual")
        gap = bound.gap(float(res.fun))
        if gap <= tolerance or B >= size - 1 or gap > 0.5 * last:
            break   # proven, or the full LP, or a wider band no longer closes the gap (the margins do)
        last = gap
        B = min(size - 1, 2 * B)
    P = np.zeros(size * size)
    P[ix.cells] = res.x[: ix.n_p]
    return BandSolution(P.reshape(size, size), float(res.fun), bound, B, ix.n_vars, int(A_ub.shape[0] + size),
                        time.perf_counter() - t0)


__all__ = ["BandSolution", "solve_band"]
