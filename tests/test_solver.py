"""The design LPs' solver (``design/solver.py``, HiGHS through highspy) against
``scipy.optimize.linprog(method="highs")`` on random LPs: the same optimum, and multipliers
in linprog's signs that certify it (stationarity and strong duality, independently checked)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optnoise.design.solver import Infeasible, solve_lp


@pytest.mark.parametrize("seed", range(25))
def test_solve_lp_equals_linprog_and_its_multipliers_certify_the_optimum(seed):
    rng = np.random.default_rng(seed)
    n, m_ub, m_eq = int(rng.integers(2, 12)), int(rng.integers(0, 10)), int(rng.integers(0, 3))
    x0 = rng.random(n)   # a feasible point: rows through it, bounds around it
    a_ub = rng.normal(size=(m_ub, n)) * (rng.random((m_ub, n)) < 0.6)
    b_ub = a_ub @ x0 + rng.random(m_ub)
    a_eq = rng.normal(size=(m_eq, n))
    b_eq = a_eq @ x0
    bounds = [(0.0, float(1 + rng.random())) if rng.random() < 0.7 else (-1.0, 2.0) for _ in range(n)]
    c = rng.normal(size=n)
    sparse = seed % 2 == 0
    args = (sp.csr_matrix(a_ub) if sparse else a_ub, b_ub, sp.csr_matrix(a_eq) if sparse else a_eq, b_eq)
    if m_ub == 0:
        args = (None, None) + args[2:]
    if m_eq == 0:
        args = args[:2] + (None, None)
    got = solve_lp(c, *args, bounds, None)
    ref = linprog(c, A_ub=args[0], b_ub=args[1], A_eq=args[2], b_eq=args[3], bounds=bounds, method="highs")
    assert ref.status == 0 and got.fun == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
    lo, hi = np.array(bounds).T
    y_ub = got.ineqlin.marginals if m_ub else np.zeros(0)
    y_eq = got.eqlin.marginals if m_eq else np.zeros(0)
    assert np.all(y_ub <= 1e-9) and np.all(got.lower.marginals >= -1e-9) and np.all(got.upper.marginals <= 1e-9)
    reduced = c - a_ub.T @ y_ub - a_eq.T @ y_eq - got.lower.marginals - got.upper.marginals
    assert np.allclose(reduced, 0, atol=1e-8)   # stationarity
    dual = b_ub @ y_ub + b_eq @ y_eq + lo @ got.lower.marginals + hi @ got.upper.marginals
    assert dual == pytest.approx(got.fun, rel=1e-8, abs=1e-8)   # strong duality
    assert np.all(a_ub @ got.x <= b_ub + 1e-8) and np.allclose(a_eq @ got.x, b_eq, atol=1e-8)


def test_an_infeasible_lp_is_refused_as_infeasible():
    with pytest.raises(Infeasible):
        solve_lp(np.ones(2), np.array([[1.0, 1.0]]), [-1.0], None, None, [(0, None)] * 2, None)
