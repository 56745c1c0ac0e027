"""A proven lower bound on the per-record pure-DP optimum, column by column, without the
``(n+1) x (n+1)`` cost matrix.

The certificate is that of :func:`optnoise.design.bounds.complete_bound` (row multipliers
``u``; every column ``c[:, y] - u`` must be non-negative on the box ``[1, E]^{n+1}``; failing
columns lower ``u`` by their shortfall): this module evaluates it on blocks of ``BLOCK``
columns made on demand, and bounds the float error of each column's value by one error
term instead of rounding every operation down, which makes it a few times faster at
``n = 10,000`` (1e8 entries). The error analysis is docs/proofs/record-blocks.md, claim 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .bounds import UNIT, Bound, down, exp_up, repair, sum_down

#: Columns evaluated at once (``(n+1) x BLOCK`` floats, a few copies).
BLOCK = 256

#: Relative room on the error term for its own float evaluation (each of its sums of ``m``
#: non-negative terms is within ``m 2^-53`` of exact, far below this for any ``m < 2^30``).
ROOM = 1e-6


def column_values(columns: Callable[[np.ndarray], np.ndarray], size: int, u: np.ndarray,
                  e_up: float) -> np.ndarray:
    """For every output ``y``: a float ``<=`` the exact ``sum_q min(w_q, E w_q)``, ``w = c[:, y] -
    u``, for every ``E <= e_up`` (the minimum of ``<w, x>`` over ``x`` in ``[1, E]^{n+1}``).

    ``columns(ys)`` returns the floats ``c[:, ys]``, each within a relative ``2^-53`` of the exact
    cost (one rounded product of exact factors). Proof: docs/proofs/record-blocks.md, claim 2.
    """
    u = np.asarray(u, dtype=np.float64)
    m = u.size
    gamma = (m + 2) * UNIT / (1.0 - (m + 2) * UNIT)
    out = np.empty(size)
    for lo in range(0, size, BLOCK):
        ys = np.arange(lo, min(size, lo + BLOCK))
        c = columns(ys)
        a = c - u[:, None]
        t = np.minimum(a, e_up * a)
        s = t.sum(axis=0)
        abs_a = np.abs(a).sum(axis=0)
        err = ((gamma * e_up + 4.0 * UNIT * e_up) * abs_a + 2.0 * UNIT * e_up * c.sum(axis=0)) * (1.0 + ROOM) \
            + m * 2.0 ** -1070
        out[lo:lo + ys.size] = down(s - err)
    return np.where(np.isnan(out), -np.inf, out)


def columns_bound(columns: Callable[[np.ndarray], np.ndarray], size: int, u: np.ndarray,
                  epsilon: float) -> tuple[Bound, np.ndarray]:
    """Proven lower bound on the optimal prior-averaged cost of a channel on ``{0..size-1}``
    under pure ``epsilon``-DP with every pair of answers neighbours (``c = diag(prior) L`` given
    by ``columns``), from candidate row multipliers ``u``; also each column's value (``< 0``:
    the column failed, and prices as an output worth adding).

    Proof: docs/proofs/record-blocks.md (claims 1 and 2).
    """
    e_up = exp_up(epsilon)
    values = column_values(columns, size, u, e_up)
    if not np.all(np.isfinite(values)):
        return Bound(-math.inf, "complete-dual", math.inf), values
    fixed, lowered = repair(np.asarray(u, dtype=np.float64), values)
    return Bound(sum_down(fixed), "complete-dual", lowered), values


__all__ = ["BLOCK", "column_values", "columns_bound"]
