"""The standard-DP LP of the finite design (Kadam et al. (14) with hockey-stick rows): all its
ratio rows at once or by row generation, and the proven lower bound from its multipliers.

The model is built by :mod:`optnoise.design.model`; :mod:`optnoise.design.finite` plans the
problem, calls these solvers, repairs and reports.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DesignError
from ..resources import check, design_lp_bytes
from .bounds import exp_up, lp_bound
from .model import Orbits, Shifts, dp_lp, rho_of
from .solver import solve_lp


@dataclass(frozen=True)
class MemoryLimit:
    """The memory limit of one design, and the value of ``n`` that a refusal names."""
    n: object
    max_memory: int | None

    def check(self, estimate: float, what: str) -> None:
        check(estimate, parameter="n", value=self.n, what=what, max_memory=self.max_memory)

    def check_round(self, active: int, held: int, kind: str) -> None:
        """One model of row generation: ``active`` mass columns, ``held`` (distance, value) pairs."""
        self.check(design_lp_bytes(active, 1, kind=kind, held=held),
                   f"row generation's {'MILP' if kind == 'pdp' else 'LP'} over {held} (distance, value) pairs")


#: Above this many ratio rows (after any mirror reduction) the DP LP is solved by row generation.
ROW_GENERATION_MIN_ROWS = 50_000
#: A ratio row left out of the LP counts as met when it is violated by at most this much
#: probability (HiGHS's primal feasibility tolerance on the rows it holds, :data:`LP_OPTIONS`).
ROW_TOLERANCE = 1e-10


@dataclass(frozen=True)
class LPSolution:
    """The DP LP's masses and optimum, how many LPs and rows it took, and the last LP's
    multipliers (``duals``: its rows, inequality and equality marginals) for the bound."""

    f: np.ndarray
    objective: float
    lps: int
    rows: int
    all_rows: int
    duals: tuple = ()


def solve_dp_lp(sh: Shifts, orbits: Orbits, rho, e, delta, minimize, max_cost, time_limit,
                row_generation: bool, memory: MemoryLimit) -> LPSolution:
    """Standard (eps, delta)-DP as an LP, all rows at once or by row generation."""
    n = sh.n
    kept = orbits.shifts
    hockey = delta > 0 or minimize == "delta"
    mc = max_cost if minimize == "delta" else None
    all_rows = int(kept.size) * n

    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)

    def solve(rows: np.ndarray, active: np.ndarray, scale: float | None = None) -> tuple[np.ndarray, float]:
        nonlocal last
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            raise DesignError(f"solver time limit reached ({time_limit} s) before the LP was solved "
                              "(row generation); no design returned")
        if row_generation:
            memory.check_round(active.size, rows.size, "dp" if hockey else "pure")
        model = dp_lp(sh, orbits, rho, e, rows=rows, active=active, hockey=hockey, delta=delta, max_cost=mc)
        bounds = np.column_stack((np.zeros(model.upper.size), model.upper))
        res = solve_lp(model.c, model.a_ub, model.b_ub, model.a_eq, [1.0], bounds, left, scale=scale)
        last = (rows, res.ineqlin.marginals, res.eqlin.marginals)
        return model.pmf(res.x, orbits), float(res.fun)

    last: tuple = ()
    if not row_generation:
        rows = (kept[:, None] * n + np.arange(n)[None, :]).ravel()
        f, obj = solve(rows, np.arange(orbits.size))
        return LPSolution(f, obj, 1, all_rows, all_rows, last)
    return replace(solve_by_row_generation(sh, orbits, rho, e, solve, all_rows, hockey), duals=last)


def lp_lower_bound(sh: Shifts, orbits: Orbits, rho: np.ndarray, epsilon: float, delta: float,
                   max_cost: float | None, hockey: bool, duals: tuple) -> float | None:
    """A proven lower bound on the true optimum from the last LP's multipliers.

    The full LP (every ratio row, every class) written with a float ``>= e^eps`` and delta
    unshrunk contains the true problem's feasible set (mirror classes lose nothing for it
    either); the last LP's rows are a subset of its rows, in the same order, so its
    multipliers extended by 0 are a candidate dual, turned into a bound in outward-rounded
    arithmetic by :func:`~optnoise.design.bounds.lp_bound`. Unbounded variables get bounds
    that keep the optimum: ``t <= f`` and the min-delta ``d <= 1``.
    """
    rows, y_ub, y_eq = duals
    if not math.isfinite(exp_up(epsilon)):
        return None
    n = sh.n
    full_rows = (orbits.shifts[:, None] * n + np.arange(n)[None, :]).ravel()
    model = dp_lp(sh, orbits, rho, exp_up(epsilon), rows=full_rows, active=np.arange(orbits.size), hockey=hockey,
                  delta=delta, max_cost=max_cost)
    y = np.zeros(model.a_ub.shape[0])
    m = full_rows.size
    y[np.searchsorted(full_rows, rows)] = y_ub[:rows.size]
    y[m:] = y_ub[rows.size:]          # the hockey rows (one per kept shift) and the cost row
    cap = float(np.max(model.upper[np.isfinite(model.upper)], initial=1.0))
    ub = np.where(np.isfinite(model.upper), model.upper, cap)
    value = lp_bound(model.c, model.a_ub, model.b_ub, model.a_eq, np.ones(1), np.zeros(ub.size), ub, y, y_eq).value
    return value if math.isfinite(value) else None


def solve_by_row_generation(sh: Shifts, orbits: Orbits, rho, e, solve, all_rows: int, hockey: bool) -> LPSolution:
    """Solve the DP LP over a growing subset of its ratio rows until the rest hold.

    Exactness: leaving rows out relaxes the LP (pure DP: fewer constraints; hockey-stick:
    a left-out pair has no ``t``, i.e. its term is dropped from ``sum_eta t <= delta``),
    so the relaxed optimum costs at most the full optimum. When the relaxed optimum ``f``
    also meets every left-out row (with ``t = 0``) within :data:`ROW_TOLERANCE`, the
    tolerance HiGHS grants the rows it holds, then ``f`` is a point of the full LP as
    feasible as HiGHS's own answer would be, and costs no more than the optimum: it is an
    optimum. Masses are only given to the classes met by kept rows plus the cheapest other
    class -- any optimum of the relaxation can move the mass of the unconstrained classes to
    the cheapest of them -- so each LP has ``O(rows)`` columns, not ``n``. Rows are added
    around every violation, in a radius that doubles each round (``O(log n)`` rounds). Each
    LP's objective is scaled by the previous optimum (a lower bound of its own), so that
    HiGHS's absolute dual tolerance resolves costs near the optimum even when far values
    cost ``10^12`` times more.

    Proof: docs/proofs/row-generation.md.
    """
    n = sh.n
    kept = orbits.shifts
    included = np.zeros((kept.size, n), dtype=bool)
    class_cost = rho_of(orbits, rho)
    radius = 1
    lps = 0
    scale = None
    while True:
        rows = np.flatnonzero(included.ravel())
        j, eta = np.divmod(rows, n)
        lps += 1
        f, obj = solve(kept[j] * n + eta, active_classes(orbits.orbit, sh.partner[kept[j], eta], eta, class_cost),
                       scale)
        scale = abs(obj) or None   # relaxations only grow: the next optimum is at least this one
        grow = np.zeros(n, dtype=bool)
        for i, jj in enumerate(kept):
            excess = f - e * f[sh.partner[jj]]
            bad = (excess > ROW_TOLERANCE) & ~included[i]
            if hockey and not bad.any() and excess[~included[i]].clip(0.0).sum() > ROW_TOLERANCE:
                bad = (excess > 0) & ~included[i]   # small left-out terms that add up in sum_eta t
            grow |= bad
        if not grow.any():
            return LPSolution(f, obj, lps, int(rows.size), all_rows)
        include_around(included, grow, radius, sh)
        radius *= 2


def active_classes(orbit: np.ndarray, partners: np.ndarray, eta: np.ndarray, class_cost: np.ndarray) -> np.ndarray:
    """The classes met by the kept pairs ``(eta, partners)``, plus the cheapest other class (if any)."""
    touched = np.zeros(class_cost.size, dtype=bool)
    touched[orbit[eta]] = True
    touched[orbit[partners]] = True
    free = np.flatnonzero(~touched)
    if free.size:
        touched[free[np.argmin(class_cost[free])]] = True
    return np.flatnonzero(touched)


def include_around(included: np.ndarray, grow: np.ndarray, radius: int, sh: Shifts) -> None:
    """Keep every pair of every value within ``radius`` shifts (either direction) of ``grow``."""
    for _ in range(radius):
        out = grow.copy()
        for partner in sh.partner:
            out |= grow[partner]
            out[partner[grow]] = True
        grow = out
    included[:, grow] = True


__all__ = ["LPSolution", "MemoryLimit", "ROW_GENERATION_MIN_ROWS", "ROW_TOLERANCE", "active_classes",
           "include_around", "lp_lower_bound", "solve_by_row_generation", "solve_dp_lp"]
