"""Noise designed for K releases (optnoise.design.releases).

Oracles: brute-force one-dimensional search and scipy's SLSQP for the convex Rényi
programs; dp_accounting's PLD (through optnoise.analysis.composition, restricted to the
PLD bound on a finer grid) recomputing each certificate from the returned PMF;
design_finite where the K-release problem reduces to a single-release one; the pair
builder of optnoise.analysis for the integer-line program's cells.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from optnoise.analysis import privacy_profile
from optnoise.analysis.composition import compose_best
from optnoise.analysis.renyi import renyi_curve
from optnoise.costs import cost_vector
from optnoise.design.finite import design_finite
from optnoise.design.releases import (
    compare_releases, composed_profiles, constraint_terms, cost_against_k, cyclic_program, design_releases,
    log_renyi_sums, solve_renyi_program,
)
from optnoise.neighbourhood import Neighbourhood


def _g(f, shift, alpha):
    return float(np.sum(f ** alpha * np.roll(f, -shift) ** (1 - alpha)))


# ------------------------------------------------------------------ convexity and derivatives
@pytest.mark.parametrize("alpha", [1.5, 3.0, 12.0])
def test_renyi_constraint_function_is_convex_and_homogeneous(rng, alpha):
    for _ in range(200):
        f1, f2 = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        lam = rng.uniform()
        mid = lam * f1 + (1 - lam) * f2
        assert _g(mid, 1, alpha) <= lam * _g(f1, 1, alpha) + (1 - lam) * _g(f2, 1, alpha) + 1e-12
        assert _g(3.0 * f1, 2, alpha) == pytest.approx(3.0 * _g(f1, 2, alpha), rel=1e-12)


def test_convexity_check_has_power():
    """The same midpoint test rejects g at an order in (0, 1), where x^a y^(1-a) is concave."""
    rng = np.random.default_rng(7)
    violations = 0
    for _ in range(200):
        f1, f2 = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        mid = 0.5 * (f1 + f2)
        violations += _g(mid, 1, 0.5) > 0.5 * (_g(f1, 1, 0.5) + _g(f2, 1, 0.5)) + 1e-12
    assert violations > 100


def test_constraint_gradient_and_hessian_match_finite_differences(rng):
    f = rng.dirichlet(np.ones(5)) + 0.05
    f = f / f.sum()
    part = (np.arange(5) + 2) % 5
    alpha, log_c = 2.7, 5.0
    log_h, t_x, t_y, t_xx, t_yy, t_xy = constraint_terms(f, f[part], alpha, log_c)
    assert log_h == pytest.approx(math.log(_g(f, 2, alpha)) - log_c, rel=1e-12)
    grad = t_x.copy()
    np.add.at(grad, part, t_y)
    hess = np.zeros((5, 5))
    idx = np.arange(5)
    np.add.at(hess, (idx, idx), t_xx)
    np.add.at(hess, (part, part), t_yy)
    np.add.at(hess, (idx, part), t_xy)
    np.add.at(hess, (part, idx), t_xy)
    h = 1e-6
    c = math.exp(log_c)
    for j in range(5):
        e = np.zeros(5)
        e[j] = h
        fd = (_g(f + e, 2, alpha) - _g(f - e, 2, alpha)) / (2 * h) / c
        assert grad[j] == pytest.approx(fd, rel=1e-6)
        gp = np.array([(_g(f + e + h * np.eye(5)[i], 2, alpha) - _g(f + e - h * np.eye(5)[i], 2, alpha)) / (2 * h)
                       for i in range(5)])
        gm = np.array([(_g(f - e + h * np.eye(5)[i], 2, alpha) - _g(f - e - h * np.eye(5)[i], 2, alpha)) / (2 * h)
                       for i in range(5)])
        np.testing.assert_allclose(hess[:, j], (gp - gm) / (2 * h) / c, rtol=1e-3, atol=1e-5)


# ------------------------------------------------------------------ the convex program
@pytest.mark.parametrize("alpha,budget", [(2.0, 0.05), (4.0, 0.3), (20.0, 1.0)])
def test_barrier_solver_against_one_dimensional_brute_force(alpha, budget):
    """n = 2, SD 1, circular cost (0, 1, 1): symmetric f = (1 - 2b, b, b); cost 2b;
    g(b) = a^alpha b^(1-alpha) + b + b^alpha a^(1-alpha) decreases on (0, 1/3]: bisection on b."""
    prob = cyclic_program(3, Neighbourhood.sd(1), cost_vector("circular-mse", (3,)))
    log_c = (alpha - 1) * budget
    sol = solve_renyi_program(prob, alpha, log_c)

    def g(b):
        a = 1 - 2 * b
        return a ** alpha * b ** (1 - alpha) + b + b ** alpha * a ** (1 - alpha)
    lo, hi = 1e-12, 1 / 3
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) <= math.exp(log_c):
            hi = mid
        else:
            lo = mid
    assert sol.upper == pytest.approx(2 * hi, rel=1e-7)
    assert sol.lower <= 2 * hi * (1 + 1e-12)
    assert np.max(log_renyi_sums(prob, sol.x, alpha)) <= log_c


def test_barrier_solver_against_slsqp_on_a_directed_problem():
    """No symmetry (directed BD 2, the paper's MSE cost): full variables; compared with SLSQP."""
    size, alpha, budget = 6, 3.0, 0.4
    nb = Neighbourhood.bd(2, directed=True)
    rho = cost_vector("mse", (size,))
    prob = cyclic_program(size, nb, rho)
    assert prob.n_vars == size
    sol = solve_renyi_program(prob, alpha, (alpha - 1) * budget)
    cons = [{"type": "ineq", "fun": lambda f, s=s: budget - math.log(_g(np.maximum(f, 1e-300), s, alpha)) / (alpha - 1)}
            for s in (1, 2)]
    cons.append({"type": "eq", "fun": lambda f: f.sum() - 1})
    best = math.inf
    for start in (np.full(size, 1 / size), np.array([0.4, 0.2, 0.12, 0.1, 0.08, 0.1])):
        res = minimize(lambda f: rho @ f, start, constraints=cons, bounds=[(1e-9, 1)] * size, method="SLSQP",
                       options={"ftol": 1e-13, "maxiter": 1000})
        feasible = all(c["fun"](res.x) >= -1e-9 for c in cons[:2]) and abs(res.x.sum() - 1) <= 1e-9
        if feasible:   # SLSQP's own flag is unreliable here (status 8 at a correct optimum)
            best = min(best, float(res.fun))
    assert sol.upper == pytest.approx(best, rel=1e-5)
    assert sol.lower <= best * (1 + 1e-6)
    for s in (1, 2):   # the returned PMF meets the Rényi constraint for each shift
        assert math.log(_g(sol.masses(prob), s, alpha)) / (alpha - 1) <= budget


def test_symmetric_reduction_loses_nothing():
    size, alpha, log_c = 8, 2.5, 0.2
    rho = cost_vector("circular-mse", (size,))
    nb = Neighbourhood.bd(2)
    reduced = cyclic_program(size, nb, rho)
    assert reduced.n_vars == size // 2 + 1
    full = cyclic_program(size, nb, rho, reduce=False)
    assert full.n_vars == size and full.n_shifts == 4
    a = solve_renyi_program(reduced, alpha, log_c)
    b = solve_renyi_program(full, alpha, log_c)
    assert a.upper == pytest.approx(b.upper, rel=1e-7)


# ------------------------------------------------------------------ the K-release design
TARGET = dict(epsilon=2.0, delta=1e-5)


@pytest.fixture(scope="module")
def comparison_k10():
    return compare_releases(7, 10, cost="circular-mse", **TARGET)


@pytest.mark.slow
def test_k_release_design_meets_its_target_under_exact_composition(comparison_k10):
    nb = Neighbourhood.sd(1)
    for row in comparison_k10.rows:
        assert row.composed.epsilon_dp <= TARGET["epsilon"]
        assert row.composed.k == 10
        # recomputed from the returned PMF by dp_accounting's PLD alone (pessimistic, finer grid)
        again = compose_best([(privacy_profile(row.pmf, nb), 10)], delta=TARGET["delta"], discretization=1e-5,
                             methods=("pld",))
        assert again.epsilon_dp <= TARGET["epsilon"] + 2e-3


def test_k_release_design_costs_no_more_than_each_calibrated_baseline(comparison_k10):
    cost = comparison_k10.row("k-release").expected_cost
    for name in ("single-release", "geometric", "discrete-gaussian"):
        assert cost <= comparison_k10.row(name).expected_cost
    assert comparison_k10.best == "k-release"
    # the costs are recomputed from the PMFs
    rho = cost_vector("circular-mse", (8,))
    for row in comparison_k10.rows:
        assert row.expected_cost == pytest.approx(float(rho @ row.pmf.probs), rel=1e-12)


@pytest.mark.slow
def test_k_release_design_beats_baselines_at_more_releases():
    comp = compare_releases(5, 20, epsilon=3.0, delta=1e-5)
    cost = comp.row("k-release").expected_cost
    for name in ("single-release", "geometric", "discrete-gaussian"):
        assert cost <= comp.row(name).expected_cost
        assert comp.row(name).composed.epsilon_dp <= 3.0


@pytest.mark.slow
def test_design_reports_both_certificates():
    d = design_releases(5, 12, epsilon=2.0, delta=1e-5, strategies=("renyi",))
    assert d.epsilon_certified <= 2.0
    assert d.epsilon_rdp is not None and d.epsilon_rdp >= d.epsilon_certified - 1e-12
    # the RDP value is the CKS conversion of the K-fold Rényi curve of the returned PMF
    from optnoise.analysis.renyi import DEFAULT_ORDERS, rdp_to_dp
    prof = privacy_profile(d.pmf, Neighbourhood.sd(1))
    assert d.epsilon_rdp == pytest.approx(rdp_to_dp(DEFAULT_ORDERS, 12 * renyi_curve(prof, DEFAULT_ORDERS), 1e-5)[0],
                                          rel=1e-12)
    assert d.method in ("rdp", "calibrated")
    if d.method == "calibrated":
        assert d.budget == pytest.approx(float(renyi_curve(prof, [d.order])[0]), rel=1e-6)


# ------------------------------------------------------------------ K = 1 and delta = 0
@pytest.mark.parametrize("k", [1, 3])
def test_at_delta_zero_the_problem_is_the_single_release_one(k):
    """k-fold pure DP of one mechanism is exactly k eps_pure, so the K-release problem at
    delta = 0 is design_finite at eps / k: the two must coincide."""
    d = design_releases(6, k, epsilon=1.5, delta=0.0, cost="circular-mse")
    ref = design_finite(6, epsilon=1.5 / k, delta=0.0, cost="circular-mse")
    np.testing.assert_allclose(d.pmf.probs, ref.pmf.probs, rtol=0, atol=1e-15)
    assert d.method == "pure-split"
    assert d.epsilon_certified == pytest.approx(1.5, rel=1e-9)


def test_k_equal_1_with_delta():
    """At K = 1 with delta > 0 the (eps, delta) LP is the exact problem; the Rényi surrogate
    is more conservative, so its design costs at least the LP optimum; with the
    single-release strategy (default) the design is the LP optimum itself."""
    eps, delta = 1.0, 1e-3
    lp = design_finite(7, epsilon=eps, delta=delta, cost="circular-mse")
    renyi_only = design_releases(7, 1, epsilon=eps, delta=delta, strategies=("renyi",))
    assert renyi_only.expected_cost >= lp.expected_cost * (1 - 1e-9)
    assert renyi_only.epsilon_certified <= eps
    full = design_releases(7, 1, epsilon=eps, delta=delta)
    assert full.method == "single-release"
    assert full.expected_cost == pytest.approx(lp.expected_cost, rel=1e-9)
    assert full.composed.epsilon_bound == "exact"   # one release: enumeration is the exact analysis


def test_bad_parameters():
    with pytest.raises(ValueError):
        design_releases(7, 0, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError):
        design_releases(7, 3, epsilon=-1.0, delta=1e-5)
    with pytest.raises(ValueError):
        design_releases(7, 3, epsilon=1.0, delta=1e-5, strategies=("magic",))
    with pytest.raises(ValueError):
        design_releases(7, 3, epsilon=1.0, delta=1e-5, orders=(0.5,))


# ------------------------------------------------------------------ plot data
@pytest.mark.slow
def test_plot_data_functions(comparison_k10):
    eps = np.linspace(0.0, 4.0, 9)
    curves = composed_profiles({r.mechanism: r.pmf for r in comparison_k10.rows}, 10, eps)
    for name, deltas in curves.items():
        assert deltas.shape == eps.shape
        assert np.all(np.diff(deltas) <= 1e-15)
        prof = privacy_profile(comparison_k10.row(name).pmf, Neighbourhood.sd(1))
        exact = compose_best([(prof, 10)], epsilon=2.0, methods=("exact",)).delta_dp
        pld = compose_best([(prof, 10)], epsilon=2.0, methods=("pld",)).delta_dp
        assert exact - 1e-15 <= deltas[4] <= pld + 1e-15          # eps = 2.0 is eps[4]
    table = cost_against_k(3, [1, 4], epsilon=2.0, delta=1e-5)
    assert list(table["k"]) == [1, 4]
    for name in ("k-release", "single-release", "geometric", "discrete-gaussian"):
        assert table[name].shape == (2,)
        assert np.all(table[name] >= 0)


# ------------------------------------------------------------------ the integer line
def test_integer_program_cells_are_the_pair_builders_masses(rng):
    """The line program's cells (window, geometric tails, residue-class cells) are exactly the
    ordered pairs of optnoise.analysis.pairs for the PMF of the same variables."""
    from optnoise.analysis import neighbouring_pairs
    from optnoise.costs import parse_cost
    from optnoise.design.integer import TailedWindow
    from optnoise.design.releases import integer_program
    window = TailedWindow(6, 1, 0.7)
    for nb, reduced in ((Neighbourhood.bd(2), True), (Neighbourhood.bd(2, directed=True), False)):
        prog = integer_program(window, nb, parse_cost("sq"))
        assert (prog.n_vars == 7) == reduced
        x = rng.uniform(0.5, 1.5, prog.n_vars)
        x = x / float(prog.mass @ x)
        pmf = prog.pmf(x)
        assert float(np.sum(pmf.probs)) + pmf.tail_mass == pytest.approx(1.0, rel=1e-13)
        pairs = {pm.label: pm for pm in neighbouring_pairs(pmf, nb)[0]}
        for s, mu in enumerate([1, 2]):                        # the kept shifts, in order
            p, q = prog.cells(x, s)
            np.testing.assert_allclose(p, pairs[f"mu={mu}"].p, rtol=1e-13)
            np.testing.assert_allclose(q, pairs[f"mu={mu}"].q, rtol=1e-13)
        # the program's constraint function is the analysis's Rényi divergence
        alpha = 2.5
        want = renyi_curve(privacy_profile(pmf, nb), [alpha])[0]
        assert np.max(log_renyi_sums(prog, x, alpha)) / (alpha - 1) == pytest.approx(want, rel=1e-12)


def test_line_barrier_solver_against_slsqp():
    from optnoise.costs import parse_cost
    from optnoise.design.integer import TailedWindow
    from optnoise.design.releases import geometric_ratio_for, integer_program
    nb, alpha, budget = Neighbourhood.sd(1), 3.0, 0.05
    prog = integer_program(TailedWindow(5, 1, geometric_ratio_for(budget / 2, alpha, nb)), nb, parse_cost("sq"))
    sol = solve_renyi_program(prog, alpha, (alpha - 1) * budget)
    log_c = (alpha - 1) * budget
    cons = [{"type": "ineq", "fun": lambda x: log_c - float(np.max(log_renyi_sums(prog, np.maximum(x, 1e-300), alpha)))},
            {"type": "eq", "fun": lambda x: float(prog.mass @ x) - 1.0}]
    res = minimize(lambda x: prog.cost @ x, prog.start, constraints=cons, bounds=[(1e-12, 1)] * prog.n_vars,
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 2000})
    assert cons[0]["fun"](res.x) >= -1e-9 and abs(cons[1]["fun"](res.x)) <= 1e-9
    assert sol.upper == pytest.approx(float(res.fun), rel=1e-5)
    assert sol.lower <= float(res.fun) * (1 + 1e-6)
    # the returned PMF meets the budget by the analysis of optnoise.analysis (tails included)
    assert renyi_curve(privacy_profile(prog.pmf(sol.x), nb), [alpha])[0] <= budget * (1 + 1e-12)


@pytest.mark.slow
def test_line_design_meets_its_target_and_beats_the_geometric():
    from optnoise.design.releases import calibrated_geometric_line, calibrated_single_release_line, design_releases_line
    k, eps, dlt = 5, 2.0, 1e-5
    nb = Neighbourhood.sd(1)
    d = design_releases_line(k, epsilon=eps, delta=dlt, orders=(4.0, 16.0, 64.0, 96.0), calibration_steps=6)
    assert d.space == "integer" and d.pmf.right_tail is not None and d.pmf.tail_mass < 1e-5
    assert d.epsilon_certified <= eps and d.composed.k == k
    again = compose_best([(privacy_profile(d.pmf, nb), k)], delta=dlt, discretization=1e-5, methods=("pld",))
    assert again.epsilon_dp <= eps + 2e-3
    for row in (calibrated_geometric_line(k, epsilon=eps, delta=dlt),
                calibrated_single_release_line(k, epsilon=eps, delta=dlt)):
        assert row.composed.epsilon_dp <= eps
        assert d.expected_cost <= row.expected_cost
    mech = d.mechanism
    assert mech.kind == "integer" and mech.target is None
    assert d.to_json()["kind"] == "integer" and d.to_json()["k"] == k


def test_line_design_at_delta_zero_is_the_single_release_optimum():
    from optnoise.design.integer import design_integer
    from optnoise.design.releases import design_releases_line
    d = design_releases_line(3, epsilon=1.5, delta=0.0)
    ref = design_integer(0.5, 1, "sq")
    np.testing.assert_allclose(d.pmf.probs, ref.pmf.probs, rtol=0, atol=1e-15)
    assert d.method == "pure-split" and d.epsilon_certified == pytest.approx(1.5, rel=1e-9)
