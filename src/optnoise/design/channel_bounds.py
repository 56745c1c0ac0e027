"""Proven lower bounds on the optimum of a channel problem, from the solved LP's multipliers.

Two certificates (:mod:`optnoise.design.bounds` checks both in outward-rounded arithmetic at
``e^eps`` itself, not at the design's margin):

* :func:`lp_lower_bound` -- the LP's own multipliers on a *relaxed* model with the same rows;
* :func:`column_bound` -- for pure DP with neighbours one apart or every pair, the best ratio
  multipliers column by column for the LP's row-sum multipliers (at least as tight: HiGHS's
  dual tolerance is absolute).

Proof: docs/proofs/channel-lower-bounds.md
"""

from __future__ import annotations

import math

import numpy as np

from .bounds import Bound, chain_bound, complete_bound, exp_up, lp_bound
from .channel_model import ChannelProblem, build_model, complete_on, mirror_symmetric, pairs_from_distances, split_blocks


def lp_lower_bound(pb: ChannelProblem, y_ub: np.ndarray | None, y_eq: np.ndarray | None) -> float | None:
    """A proven lower bound on the true optimum of ``pb`` from the solved LP's multipliers.

    The relaxed model (:func:`~optnoise.design.channel_model.build_model` with ``relaxed``)
    has the same rows as the solved one and a feasible set containing the true problem's
    (reduced as the solved model was; the reductions are lossless for the true problem too).
    Variables without an upper bound get one that keeps the optimum: the epigraph
    ``t <= P[a, y] <= 1`` can be lowered to ``max(0, P[a, y] - E P[b, y]) <= 1``, the
    worst-case ``z`` to the largest row cost ``<= max |L|``. Then
    :func:`~optnoise.design.bounds.lp_bound`. ``None`` when ``e^eps`` overflows.
    """
    if not math.isfinite(exp_up(pb.epsilon)):
        return None
    model = build_model(pb, relaxed=True)
    a_ub, b_ub, a_eq, b_eq = split_blocks(model.blocks)
    cap = max(1.0, float(np.max(np.abs(pb.L))))
    ub = np.where(np.isinf(model.ub), cap, model.ub)
    value = lp_bound(model.c, a_ub, b_ub, a_eq, b_eq, model.lb, ub, y_ub, y_eq).value
    return value if math.isfinite(value) else None


def column_bound(pb: ChannelProblem, y_eq: np.ndarray | None) -> Bound | None:
    """The column-by-column certificate from the LP's row-sum multipliers, where the request
    has one: pure DP, no structural constraint, prior-averaged, neighbours one apart
    (:func:`~optnoise.design.bounds.chain_bound`) or every pair
    (:func:`~optnoise.design.bounds.complete_bound`). The mirror model holds each row sum
    twice; the symmetrised split is used."""
    if pb.delta != 0 or pb.constraints or pb.worst or y_eq is None:
        return None
    n = pb.size - 1
    u = np.asarray(y_eq, dtype=np.float64)[-pb.size:]
    if mirror_symmetric(pb):
        u = (u + u[::-1]) / 2
    c = pb.prior[:, None] * pb.L
    pairs = set(pb.pairs)
    if len(pairs) == 2 * n and pairs == set(pairs_from_distances(n, [1])):
        return chain_bound(lambda lo, hi: c[lo:hi], u, pb.epsilon)
    if complete_on(pb.pairs) == tuple(range(pb.size)):
        return complete_bound(c, u, pb.epsilon)
    return None


def best_lp_bound(pb: ChannelProblem, duals: tuple[np.ndarray | None, np.ndarray | None]) -> tuple[float | None, str]:
    """The larger of :func:`lp_lower_bound` and :func:`column_bound`, and what gave it."""
    bound, method = lp_lower_bound(pb, *duals), "lp-dual (outward rounded, at e^eps)"
    column = column_bound(pb, duals[1])
    if column is not None and math.isfinite(column.value) and (bound is None or column.value > bound):
        bound, method = column.value, f"{column.method} from the LP's row multipliers (outward rounded, at e^eps)"
    return bound, method


__all__ = ["best_lp_bound", "column_bound", "lp_lower_bound"]
