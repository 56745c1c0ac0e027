"""A proven lower bound on the best eps-DP noise on *all of* ``Z``, from a window relaxation.

The integer-line design (:mod:`optnoise.design.integer`) solves over a window ``-L..L`` with
geometric-staircase tails forced beyond it: a *restriction* of the problem on ``Z``, so its
cost bounds the optimum from above only. This module bounds it from below by a *relaxation*
(docs/ordered-domains.md, "How far from the optimum on Z"):

    ``min sum_{|i| <= L} c(i) p_i + c(-L-1) T_- + c(L+1) T_+``
    over ``p, T_-, T_+ in [0, 1]`` with ``p_i <= e^eps p_j`` for ``0 < |i - j| <= Delta``
    (both in the window) and ``sum p + T_- + T_+ = 1``.

Every eps-DP PMF ``f`` on ``Z`` gives a feasible point (``p = f`` on the window, ``T_+-`` its
mass beyond ``+-L``: the window's ratio rows are some of ``f``'s) whose objective is at most
``f``'s cost when ``c`` is non-decreasing in ``|x|`` on each side (the moment costs ``|x|^k``
and ``er``): the mass beyond ``L`` costs at least ``c(+-(L+1))``. So the relaxation's
optimum -- and any dual bound of it -- is at most the optimum on ``Z``. The dual bound is
proven by :func:`optnoise.design.bounds.lp_bound` (outward rounded, ratio coefficient a float
``>= e^eps``, which only loosens the relaxation), with the cost coefficients lowered by 4
ulps (``|x|^k`` in floats is within 2 ulps of the real value). For other costs nothing is
known of the cost beyond the window and no bound is given.
"""

from __future__ import annotations

import math

import numpy as np

from ..costs import Cost
from ..errors import DesignError
from .bounds import UNIT, Bound, down, exp_up, lp_bound
from .solver import solve_lp


def monotone_in_magnitude(cost: Cost) -> bool:
    """Whether the cost is known to be non-decreasing in ``|x|`` on each side of 0 (``|x|^k``, ``er``)."""
    return not cost.circular and (cost.power is not None or cost.name == "er")


def window_relaxation(half: int, period: int, e: float, cost: Cost) -> tuple:
    """``(c, a_ub, a_eq)`` of the relaxation over ``-half..half`` plus ``T_-``, ``T_+`` (last two
    columns), ratio coefficient ``e``; ``c`` lowered by 4 ulps (non-negative costs)."""
    import scipy.sparse as sp  # where used: 0.17 s at start-up (issue 37)

    values = np.arange(-half, half + 1, dtype=np.float64)
    n = values.size
    c = np.concatenate([cost(values), cost(np.array([-half - 1.0, half + 1.0]))])
    c = down(c * (1.0 - 4 * UNIT))
    ii, jj = [], []
    for d in range(1, period + 1):
        a = np.arange(n - d)
        ii += [a, a + d]
        jj += [a + d, a]
    i, j = np.concatenate(ii), np.concatenate(jj)
    k = np.arange(i.size)
    a_ub = sp.csr_matrix((np.concatenate([np.ones(i.size), np.full(i.size, -e)]),
                          (np.concatenate([k, k]), np.concatenate([i, j]))), shape=(i.size, n + 2))
    a_eq = sp.csr_matrix(np.ones((1, n + 2)))
    return np.asarray(c, dtype=np.float64), a_ub, a_eq


def line_lower_bound(half: int, period: int, epsilon: float, cost: Cost,
                     time_limit: float | None = None) -> Bound | None:
    """Proven lower bound on ``inf`` of ``E c(X)`` over eps-DP noise ``X`` on ``Z`` (sensitivity
    ``period``), or ``None`` for a cost not known to be monotone in ``|x|`` (module docstring)."""
    if not monotone_in_magnitude(cost) or float(np.min(cost(np.arange(-half - 1, half + 2)))) < 0:
        return None
    e_up = exp_up(epsilon)
    c, a_ub, a_eq = window_relaxation(half, period, e_up, cost)
    b_ub = np.zeros(a_ub.shape[0])
    try:
        res = solve_lp(c, a_ub, b_ub, a_eq, [1.0], [(0.0, 1.0)] * c.size, time_limit)
    except DesignError:     # no multipliers (e.g. e^eps beyond the solver's range): no bound, not a failure
        return Bound(-math.inf, "line-window-relaxation-dual", math.inf)
    n = c.size
    return lp_bound(c, a_ub, b_ub, a_eq, np.ones(1), np.zeros(n), np.ones(n), res.ineqlin.marginals,
                    res.eqlin.marginals, method="line-window-relaxation-dual")


__all__ = ["line_lower_bound", "monotone_in_magnitude", "window_relaxation"]
