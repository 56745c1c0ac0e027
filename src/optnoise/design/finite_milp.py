"""The PDP MILP of the finite design (Kadam Def. 2 per distance, or Kadam (13) as printed), by row
generation when large, and the polishing LP with its indicators fixed.

The model is built by :mod:`optnoise.design.model`; :mod:`optnoise.design.finite` plans the
problem, calls these solvers, repairs and reports.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import DesignError
from .finite_lp import MemoryLimit, active_classes, include_around
from .model import Shifts, column, cost_row, eye_block, mass_row, pdp_milp, ratio_block, sum_rows
from .solver import MIP_REL_GAP, RATIO_MARGIN, solve_lp, solve_milp


def _objective(rho: np.ndarray, n_cols: int, minimize: str, max_cost: float | None,
               blocks: list, b: list) -> np.ndarray:
    """Objective vector: the cost of ``f`` (first ``rho.size`` columns), or, for
    ``minimize="delta"``, the last column ``d`` with the row ``cost . f <= max_cost``
    appended to ``blocks``/``b`` (Kadam (15b))."""
    c = np.zeros(n_cols)
    if minimize == "delta":
        blocks.append(cost_row(rho, n_cols))
        b.append(np.array([max_cost]))
        c[n_cols - 1] = 1.0
    else:
        c[:rho.size] = rho
    return c


@dataclass(frozen=True)
class MILPSolution:
    """One PDP MILP's indicators, masses, objective, relative MIP gap and dual bound."""

    u: np.ndarray          # indicator per (shift, value) pair (standard) or per value (paper)
    f: np.ndarray
    objective: float
    gap: float
    bound: float


def solve_pdp_milp(sh: Shifts, rho, e, delta, minimize, max_cost, time_limit, formulation,
                   rows: np.ndarray | None = None, active: np.ndarray | None = None) -> MILPSolution:
    """PDP as a MILP over all pairs, or (standard formulation) over the pairs ``rows`` with
    masses on ``active`` only (a relaxation, :func:`pdp_row_generation`)."""
    from scipy.optimize import Bounds, LinearConstraint

    n, k = sh.n, sh.k
    if formulation == "paper":
        constraints, c, integrality, lb, ub, u0, n_ind = paper_milp(sh, rho, e, delta, minimize, max_cost)
    else:
        rows = np.arange(k * n) if rows is None else rows
        active = np.arange(n) if active is None else active
        model = pdp_milp(sh, rho, e, rows=rows, active=active, delta=delta,
                         max_cost=max_cost if minimize == "delta" else None)
        constraints = [LinearConstraint(model.a, model.lo, model.hi)]
        c, integrality = model.c, model.integrality
        lb, ub = np.zeros(c.size), np.ones(c.size)
    res = solve_milp(c, constraints, integrality, Bounds(lb, ub), time_limit, what="noise PMF")
    gap = float(getattr(res, "mip_gap", 0.0) or 0.0)
    bound = getattr(res, "mip_dual_bound", None)
    bound = float(res.fun if bound is None else bound)   # None: no binaries left, an LP
    if formulation == "paper":
        u = np.rint(res.x[u0:u0 + n_ind]).astype(bool)
        return MILPSolution(u, res.x[:n], float(res.fun), gap, bound)
    return MILPSolution(model.indicators(res.x), model.pmf(res.x, n), float(res.fun), gap, bound)


def paper_milp(sh: Shifts, rho, e, delta, minimize, max_cost):
    """Kadam (13a)-(13h) as printed: one indicator per noise value shared by all distances."""
    from scipy.optimize import LinearConstraint

    n, k = sh.n, sh.k
    n_ind = n
    # variables: f (n), y (n), u (n), [d]
    y0, u0 = n, n + n_ind
    n_cols = n + 2 * n_ind + (1 if minimize == "delta" else 0)
    d_col = n_cols - 1
    cons = []
    # (13c) sum y <= delta ; y - u <= 0
    s = sum_rows(1, n, y0, n_cols)
    cons.append((s - (column(n_cols, d_col, 1, 1.0) if minimize == "delta" else 0),
                 -np.inf, 0.0 if minimize == "delta" else delta))
    cons.append((eye_block(n, y0, n_cols) - eye_block(n, u0, n_cols), -np.inf, 0.0))
    # (13d) u + f - y <= 1 ; (13e) u - f + y <= 1
    f_id = eye_block(n, 0, n_cols)
    cons.append((eye_block(n, u0, n_cols) + f_id - eye_block(n, y0, n_cols), -np.inf, 1.0))
    cons.append((eye_block(n, u0, n_cols) - f_id + eye_block(n, y0, n_cols), -np.inf, 1.0))
    ratio = ratio_block(sh, e, 0, n_cols)
    u_rep = sp.csr_matrix((np.ones(k * n), (np.arange(k * n), np.tile(np.arange(n), k) + u0)), shape=(k * n, n_cols))
    # (13f) f - e f' - u <= 0 ; (13g) e f' - f + e u <= e
    cons.append((ratio - u_rep, -np.inf, 0.0))
    cons.append((-ratio + e * u_rep, -np.inf, e))
    cons.append((mass_row(n, n_cols), 1.0, 1.0))
    c = np.zeros(n_cols)
    if minimize == "delta":
        cons.append((cost_row(rho, n_cols), -np.inf, max_cost))
        c[d_col] = 1.0
    else:
        c[:n] = rho
    integrality = np.zeros(n_cols)
    integrality[u0:u0 + n_ind] = 1
    lb = np.zeros(n_cols)
    ub = np.ones(n_cols)
    constraints = [LinearConstraint(sp.csr_matrix(a) if not sp.issparse(a) else a.tocsr(), lo, hi) for a, lo, hi in cons]
    return constraints, c, integrality, lb, ub, u0, n_ind


#: Above this many (shift, value) pairs the per-distance PDP MILP is solved by row generation.
PDP_ROW_GENERATION_MIN_PAIRS = 500


@dataclass(frozen=True)
class PDPSolution:
    """The polished design of PDP row generation, with the last MILP's objective and gap, and how
    many MILPs and (distance, value) pairs it took."""

    f: np.ndarray
    objective: float      # of the polished f
    milp_objective: float
    gap: float
    milps: int
    pairs: int


def pdp_row_generation(sh: Shifts, rho, e, delta, minimize, max_cost, time_limit,
                       memory: MemoryLimit) -> PDPSolution:
    """The per-distance PDP MILP over a growing set of (shift, value) pairs.

    Exactness (no convexity needed): leaving pairs out relaxes the MILP -- a left-out pair
    may violate ``f(eta) <= e^eps f(eta + mu)`` without its mass counting towards delta --
    so the relaxed MILP's dual bound ``L`` is a lower bound of the full optimum. The relaxed
    solution's indicator pattern, extended by the violations it has on the left-out pairs,
    is then polished on the *full* problem (:func:`polish_pdp`: an LP over every pair with
    the indicators fixed), which gives a feasible design of cost ``U``. If
    ``U - L <= MIP_REL_GAP |U|`` that design is optimal to the same relative gap the full
    MILP is solved to; otherwise pairs are added around the violations (radius doubling)
    and the MILP is solved again. Values met by no kept pair have no constraint in the
    relaxation, so their mass is given to the cheapest of them (one column), as in
    :func:`~optnoise.design.finite_lp.solve_by_row_generation`.

    Proof: docs/proofs/row-generation.md.
    """
    n, k = sh.n, sh.k
    included = np.zeros((k, n), dtype=bool)
    values = np.arange(n)
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    radius = 1
    milps = 0
    while True:
        rows = np.flatnonzero(included.ravel())
        j, eta = np.divmod(rows, n)
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            raise DesignError(f"solver time limit reached ({time_limit} s) before optimality was proved "
                              f"(row generation, {milps} MILPs); no design is called optimal (raise --time-limit)")
        active = active_classes(values, sh.partner[j, eta], eta, rho)
        memory.check_round(active.size, rows.size, "pdp")
        sol = solve_pdp_milp(sh, rho, e, delta, minimize, max_cost, left, "standard", rows=rows, active=active)
        milps += 1
        violated = sol.f[None, :] > e * sol.f[sh.partner]
        pattern = violated.copy()
        pattern.ravel()[rows] = sol.u
        try:
            f, pobj = polish_pdp(sh, rho, e, delta, minimize, max_cost, pattern.ravel(), "standard", left)
        except DesignError:
            f, pobj = None, math.inf
        if f is not None and pobj - sol.bound <= MIP_REL_GAP * abs(pobj) + 1e-12:
            gap = max(0.0, pobj - sol.bound) / max(abs(pobj), 1e-300)
            return PDPSolution(f, pobj, sol.objective, gap, milps, int(rows.size))
        grow = (violated & ~included).any(axis=0)
        if not grow.any():
            included[:] = True          # nothing left to add around: the next MILP is the full one
            continue
        include_around(included, grow, radius, sh)
        radius *= 2


def polish_pdp(sh: Shifts, rho, e, delta, minimize, max_cost, u, formulation, time_limit):
    """LP with the indicators fixed: exact PDP feasibility at tight tolerances."""
    n, k = sh.n, sh.k
    n_cols = n + (1 if minimize == "delta" else 0)
    d_col = n_cols - 1
    e_in = e * (1.0 - RATIO_MARGIN)
    blocks, b = [], []
    ratio_in = ratio_block(sh, e_in, 0, n_cols)
    if formulation == "paper":
        keep = np.tile(~u, k)                      # u = 0: f <= e f' for every mu
        blocks.append(ratio_in[keep])
        b.append(np.zeros(int(keep.sum())))
        viol = np.tile(u, k)                       # u = 1: f >= e f' for every mu (13g)
        if viol.any():
            blocks.append(-ratio_block(sh, e, 0, n_cols)[viol])
            b.append(np.zeros(int(viol.sum())))
        sets = [u]
    else:
        keep = ~u
        blocks.append(ratio_in[keep])
        b.append(np.zeros(int(keep.sum())))
        sets = [u[j * n:(j + 1) * n] for j in range(k)]
    for s in sets:
        if s.any():
            row = sp.csr_matrix((np.ones(int(s.sum())), (np.zeros(int(s.sum()), int), np.nonzero(s)[0])), shape=(1, n_cols))
            if minimize == "delta":
                row = row - column(n_cols, d_col, 1, 1.0)
                b.append(np.zeros(1))
            else:
                b.append(np.array([delta]))
            blocks.append(row)
    c = _objective(rho, n_cols, minimize, max_cost, blocks, b)
    bounds = [(0.0, 1.0)] * n + ([(0.0, 1.0)] if minimize == "delta" else [])
    res = solve_lp(c, sp.vstack(blocks, format="csr"), np.concatenate(b), mass_row(n, n_cols), [1.0], bounds, time_limit)
    return res.x[:n], float(res.fun)


__all__ = ["MILPSolution", "PDPSolution", "PDP_ROW_GENERATION_MIN_PAIRS", "paper_milp", "pdp_row_generation",
           "polish_pdp", "solve_pdp_milp"]
