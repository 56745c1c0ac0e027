"""Proven lower bounds of issue 23 item 1 (leftovers): K-release designs, randomized response
under (eps, delta), the discrete staircase and calibrated families on Z.

Every optimum here comes from a plain LP written in this file (one variable per mass or per
channel entry, one row per ratio or hockey-stick term, levels computed here with math.exp and
float powers), or from a mechanism that meets the target (an upper bound of the optimum),
never from the code under test. The K-release relaxation's premise (one release of a noise
whose K-fold composition is (eps, delta)-DP is (eps/j, delta^(1/j))-DP) is checked by brute
force over the product outputs.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optnoise import Neighbourhood, Target
from optnoise.costs import parse_cost
from optnoise.design.bounds import GAP_TOLERANCE
from optnoise.design.dispatch import design
from optnoise.design.releases_bound import (
    binary_levels, certified_above, cyclic_releases_bound, levels, line_releases_bound, root_up,
)
from optnoise.design.request import Request, SolverOptions
from optnoise.design.rr import design_rr
from optnoise.design.staircase import design_staircase

#: HiGHS's own accuracy in the plain LPs (feasibility tolerance 1e-10, absolute).
LP_SLACK = 1e-8


# ----------------------------------------------------------------------- independent plain LPs
def plain_noise_lp(cost, pairs, levels_):
    """min cost . f over PMFs f (masses not in ``pairs`` are free: the window's tails) with, for every
    (e, b) in ``levels_`` and every shift's index pairs (a, c): sum max(0, f_a - e f_c) <= b."""
    n_f = len(cost)
    rows, cols, vals, rhs = [], [], [], []
    n_s = 0
    r = 0
    for e, b in levels_:
        for a_idx, c_idx in pairs:
            first = n_f + n_s
            for i, (a, c) in enumerate(zip(a_idx, c_idx)):
                rows += [r, r, r]
                cols += [a, c, first + i]
                vals += [1.0, -e, -1.0]
                rhs.append(0.0)
                r += 1
            rows += [r] * len(a_idx)
            cols += list(range(first, first + len(a_idx)))
            vals += [1.0] * len(a_idx)
            rhs.append(b)
            r += 1
            n_s += len(a_idx)
    nv = n_f + n_s
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    a_eq = sp.csr_matrix(np.concatenate([np.ones(n_f), np.zeros(n_s)])[None, :])
    c = np.concatenate([np.asarray(cost, dtype=float), np.zeros(n_s)])
    res = linprog(c, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=[1.0], bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return res.fun


def cyclic_pairs(size, shifts):
    eta = list(range(size))
    return [(eta, [(x + s) % size for x in eta]) for s in shifts]


def window_pairs(half, shifts):
    n = 2 * half + 1
    return [([a for a in range(n) if 0 <= a + s < n], [a + s for a in range(n) if 0 <= a + s < n]) for s in shifts]


def my_levels(eps, delta, js):
    return [(math.exp(eps / j), delta ** (1.0 / j)) for j in js]


def plain_rr_lp(k, eps, delta):
    """The least uniform-prior error rate of a (eps, delta)-DP channel on k categories, every pair:
    the plain channel LP (below) with a 0/1 loss."""
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    return plain_channel_lp(k - 1, eps, delta, pairs, 1.0 - np.eye(k))


# ----------------------------------------------------------------------- the premise, brute force
def hockey(p, q, e):
    return float(np.maximum(p - e * q, 0.0).sum())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 4), k=st.integers(2, 3), eps=st.floats(0.1, 2.0))
def test_one_release_of_a_k_fold_dp_noise_is_eps_over_j_delta_root_j(seed, size, k, eps):
    # for any PMF f: the K-fold delta at eps, delta_K, bounds one release's at eps/j by delta_K^(1/j)
    rng = np.random.default_rng(seed)
    f = rng.dirichlet(np.ones(size) * 0.7)
    for mu in (1, -1):
        g = np.roll(f, -mu)                     # the pair (f, f(. + mu))
        pk = np.array([np.prod(t) for t in itertools.product(f, repeat=k)])
        qk = np.array([np.prod(t) for t in itertools.product(g, repeat=k)])
        delta_k = hockey(pk, qk, math.exp(eps))
        for j in range(1, k + 1):
            assert hockey(f, g, math.exp(eps / j)) <= delta_k ** (1.0 / j) + 1e-12


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 3), eps=st.floats(0.3, 1.5))
def test_binary_levels_hold_for_every_noise_whose_k_fold_meets_the_target(seed, k, eps):
    # brute force: a random PMF's K-fold delta at eps, delta_K; binary_levels(eps, delta_K, K) must
    # hold for one release: sum max(0, f - a f(. + mu)) <= b at every slope a
    rng = np.random.default_rng(seed)
    f = rng.dirichlet(np.ones(3))
    g = np.roll(f, -1)
    pk = np.array([np.prod(t) for t in itertools.product(f, repeat=k)])
    qk = np.array([np.prod(t) for t in itertools.product(g, repeat=k)])
    delta_k = hockey(pk, qk, math.exp(eps))
    if not 1e-9 < delta_k < 0.5:
        return
    assert binary_levels(eps, delta_k * (1 + 1e-9), k)
    for level in binary_levels(eps, delta_k * (1 + 1e-9), k):
        assert hockey(f, g, level.e) <= level.b + 1e-12


def test_certified_above_decides_exactly():
    # Bin(3, 1/2) = (8, 24, 24, 8) / 64 against Bin(3, 1/4) = (27, 27, 9, 1) / 64 at e = 1: the
    # positive terms N = 2, 3 sum to (15 + 7) / 64 = 22 / 64 exactly
    assert certified_above(0.5, 0.25, 3, 22 / 64 - 2 ** -40, 1.0)
    assert not certified_above(0.5, 0.25, 3, 22 / 64, 1.0)
    # p = 1: only N = 3 is positive, 1 - 1/64 = 63/64
    assert certified_above(1.0, 0.25, 3, 63 / 64 - 2 ** -40, 1.0)
    assert not certified_above(1.0, 0.25, 3, 63 / 64, 1.0)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 7, 40, 365]), st.floats(1e-12, 1.0), st.floats(0.0, 3.0),
       st.sampled_from([1.0, 1.5, 2.718281828459045]))
def test_certified_above_is_the_exact_sum_over_the_positive_terms(k, q, spread, e):
    # independent: the same decision from Fractions term by term (no Horner, no common
    # denominator), at delta just below and just above the exact sum of the positive terms
    from fractions import Fraction
    p = min(1.0, q * (1.0 + spread))
    fp, fq, fe = Fraction(p), Fraction(q), Fraction(e)
    terms = [math.comb(k, n) * (fp ** n * (1 - fp) ** (k - n) - fe * fq ** n * (1 - fq) ** (k - n))
             for n in range(k + 1)]
    exact = sum(t for t in terms if t > 0)
    if exact <= Fraction(1, 10 ** 6):   # below, float signs of near-cancelling terms may pick the range
        return
    below, above = float(exact * (1 - Fraction(1, 10 ** 6))), float(exact * (1 + Fraction(1, 10 ** 6)))
    assert certified_above(p, q, k, below, e)
    assert not certified_above(p, q, k, above, e)


def test_root_up_is_a_rational_upper_root():
    from fractions import Fraction
    for d in (1e-6, 1e-300, 0.3, 5e-324):
        for j in (1, 2, 3, 7, 50):
            b = root_up(d, j)
            assert Fraction(b) ** j >= Fraction(d)
            assert b <= d ** (1.0 / j) * (1 + 1e-12)


# ----------------------------------------------------------------------- K releases
def test_cyclic_pure_k_release_bound_equals_the_single_release_lp_at_eps_over_k():
    size, k, eps = 8, 3, 1.5
    rho = np.minimum(np.arange(size), size - np.arange(size)).astype(float) ** 2
    b = cyclic_releases_bound(rho, [1, -1], eps, 0.0, k)
    opt = plain_noise_lp(rho, cyclic_pairs(size, [1, -1]), my_levels(eps, 0.0, [k]))
    assert b.value <= opt + LP_SLACK
    assert b.value >= opt * (1 - 1e-7)


@pytest.mark.parametrize("space", ["cyclic", "integer"])
def test_k_release_design_reports_a_proven_bound_below_its_cost(space):
    kw = dict(n=7) if space == "cyclic" else dict(cost="abs")
    fast = SolverOptions(strategies=("renyi",), calibrate=False, orders=(8.0, 16.0, 32.0))   # the rdp design
    req = Request(space=space, target=Target(1.0, 1e-4), releases=3, neighbourhood=Neighbourhood.sd(1),
                  solver=fast, **kw)
    d = design(req)
    r = d.details
    assert r.lower_bound is not None and d.report.lower_bound == r.lower_bound
    assert r.lower_bound <= r.expected_cost
    assert r.gap == pytest.approx((r.expected_cost - r.lower_bound) / r.expected_cost)
    assert "k-fold-implies-single" in r.bound_method
    assert r.method == "rdp" and r.surrogate_lower_bound is not None
    j = r.report_json()
    assert {"lower_bound", "bound_method", "gap", "optimal", "surrogate_lower_bound"} <= set(j)
    # the single release at (eps, delta) alone (the plain LP) is below the bound: the levels j > 1 add
    if space == "cyclic":
        rho = np.asarray(req.loss[1], dtype=float)
        one = plain_noise_lp(rho, cyclic_pairs(8, [1, -1]), my_levels(1.0, 1e-4, [1]))
        assert one <= r.lower_bound + LP_SLACK


def test_pure_k_release_designs_are_proven_optimal():
    for kw in (dict(space="cyclic", n=9), dict(space="integer", cost="sq")):
        d = design(Request(target=Target(0.8), releases=4, neighbourhood=Neighbourhood.sd(1), **kw))
        assert d.details.method == "pure-split"
        assert d.report.optimal and d.report.gap <= GAP_TOLERANCE


@pytest.mark.slow
@settings(max_examples=4, deadline=None)
@given(size=st.integers(3, 7), k=st.integers(2, 4), eps=st.floats(0.3, 2.0), delta=st.sampled_from([1e-6, 1e-3, 0.05]),
       shifts=st.sampled_from([(1, -1), (1,), (2, -2), (1, 2, -1, -2)]), seed=st.integers(0, 999))
def test_k_release_bound_fuzz_below_relaxation_and_feasible_noises(size, k, eps, delta, shifts, seed):
    rng = np.random.default_rng(seed)
    rho = rng.uniform(0, 1, size)
    rho[0] = 0.0
    shifts = [s for s in shifts if s % size]
    if not shifts:
        return
    b = cyclic_releases_bound(rho, shifts, eps, delta, k)
    lv = levels(eps, delta, k) + binary_levels(eps, delta, k)
    relax = plain_noise_lp(rho, cyclic_pairs(size, shifts), [(x.e, x.b) for x in lv])
    assert b.value <= relax + LP_SLACK
    assert b.value >= relax - 1e-6 * max(1.0, abs(relax))          # the dual is nearly optimal
    js = [x.j for x in levels(eps, delta, k)]
    assert plain_noise_lp(rho, cyclic_pairs(size, shifts), my_levels(eps, delta, js)) <= b.value + LP_SLACK
    # any noise whose K-fold composition meets the target costs at least the bound: the plain
    # single-release LP at (eps/k, delta/k) (basic composition) is such a noise
    basic = plain_noise_lp(rho, cyclic_pairs(size, shifts), [(math.exp(eps / k), delta / k)])
    assert b.value <= basic + LP_SLACK


def test_line_k_release_bound_below_relaxation_lp_and_geometric():
    c = parse_cost("abs")
    half, eps, delta, k = 20, 1.0, 1e-4, 3
    b = line_releases_bound(half, [1, -1], eps, delta, k, c)
    lv = levels(eps, delta, k) + binary_levels(eps, delta, k)
    x = np.arange(-half, half + 1)
    cost = np.concatenate([np.abs(x), [half + 1, half + 1]]).astype(float)
    pairs = window_pairs(half, [1, -1])
    relax = plain_noise_lp(cost, pairs, [(x.e, x.b) for x in lv])
    assert b.value <= relax + LP_SLACK and b.value >= relax * (1 - 1e-6)
    # the geometric at eps/k is pure (eps/k)-DP, so its K-fold composition is eps-DP: E|X| above
    a = math.exp(-eps / k)
    assert b.value <= 2 * a / (1 - a * a)


def test_line_bound_none_for_a_cost_of_unknown_shape():
    from optnoise.costs import Cost
    odd = parse_cost(lambda v: np.abs(v) * (1 + np.cos(v)))
    assert isinstance(odd, Cost)
    assert line_releases_bound(10, [1, -1], 1.0, 1e-3, 2, odd) is None


# ----------------------------------------------------------------------- randomized response
@pytest.mark.parametrize("k,eps,delta", [(2, 1.0, 0.0), (3, 0.5, 0.01), (4, 1.0, 1e-3), (5, 2.0, 0.2)])
def test_rr_bound_equals_the_plain_lp(k, eps, delta):
    r = design_rr(k, epsilon=eps, delta=delta)
    opt = plain_rr_lp(k, eps, delta)
    assert r.lower_bound <= opt + LP_SLACK
    assert r.optimal and r.lower_bound == pytest.approx(opt, rel=1e-7)
    assert r.expected_cost == pytest.approx(opt, rel=1e-7)


@settings(max_examples=20, deadline=None)
@given(k=st.integers(2, 400), eps=st.floats(0.01, 30.0), delta=st.floats(0.0, 0.9))
def test_rr_bound_fuzz_below_closed_form(k, eps, delta):
    from optnoise.design.rr import rr_dual_bound
    b = rr_dual_bound(k, eps, delta)
    exact = (k - 1) * (1 - delta) / (math.exp(eps) + k - 1)
    assert b <= exact * (1 + 1e-15) and b >= exact * (1 - 1e-9)


# ----------------------------------------------------------------------- staircase and families on Z
@pytest.mark.parametrize("eps,d,cost", [(1.0, 1, "abs"), (0.7, 2, "sq"), (2.0, 3, "abs")])
def test_discrete_staircase_bound(eps, d, cost):
    rep = design_staircase(eps, d, cost, discrete=True).to_json()
    assert rep["lower_bound"] <= rep["expected_cost"]
    assert rep["gap"] <= GAP_TOLERANCE          # Geng & Viswanath: the staircase is optimal on Z
    half = 12 * d
    x = np.arange(-half, half + 1)
    c = parse_cost(cost)
    vec = np.concatenate([c(x.astype(float)), c(np.array([half + 1.0, half + 1.0]))])
    relax = plain_noise_lp(vec, window_pairs(half, [s for s in range(-d, d + 1) if s]),
                           [(math.exp(eps), 0.0)])
    assert relax <= rep["expected_cost"] + LP_SLACK   # a window relaxation is below the optimum on Z too


def test_calibrated_families_on_z_carry_cost_bounds():
    geo = design(Request(space="integer", target=Target(1.0), family="geometric")).details
    for name, s in geo.report_json()["cost_bounds"].items():
        assert s["lower_bound"] <= s["expected_cost"] and s["optimal"], name   # Ghosh et al.: geometric optimal
    dg = design(Request(space="integer", target=Target(1.0, 1e-6), family="discrete-gaussian")).details
    s = dg.report_json()["cost_bounds"]["abs"]
    half = 24
    x = np.arange(-half, half + 1).astype(float)
    relax = plain_noise_lp(np.concatenate([np.abs(x), [half + 1, half + 1]]), window_pairs(half, [1, -1]),
                           my_levels(1.0, 1e-6, [1]))
    assert s["lower_bound"] <= relax + LP_SLACK and s["lower_bound"] >= relax * (1 - 1e-6)
    assert s["lower_bound"] <= s["expected_cost"] and not s["optimal"]
    cyc = design(Request(space="cyclic", n=10, target=Target(1.0), family="geometric")).details
    assert "cost_bounds" not in cyc.report_json()


# ----------------------------------------------------------------------- PDP channels
def plain_channel_lp(n, eps, delta, pairs, L):
    """The (eps, delta)-DP channel LP on the ordered pairs, uniform prior (hockey-stick rows)."""
    size = n + 1
    nP = size * size
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    e = math.exp(eps)
    for k, (a, b) in enumerate(pairs):
        for y in range(size):
            rows += [r, r, r]
            cols += [a * size + y, b * size + y, nP + k * size + y]
            vals += [1.0, -e, -1.0]
            rhs.append(0.0)
            r += 1
        rows += [r] * size
        cols += [nP + k * size + y for y in range(size)]
        vals += [1.0] * size
        rhs.append(delta)
        r += 1
    nv = nP + len(pairs) * size
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    a_eq = sp.csr_matrix((np.ones(nP), (np.repeat(np.arange(size), size), np.arange(nP))), shape=(size, nv))
    c = np.zeros(nv)
    c[:nP] = (np.asarray(L) / size).ravel()
    res = linprog(c, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=np.ones(size), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return res.fun


def pdp_by_enumeration(n, eps, pairs, delta, L):
    """The PDP optimum on tiny cases: over every set of 'bad' (pair, output) cells, the LP with
    the ratio row dropped on the bad cells and their mass of P[a, .] at most delta."""
    size = n + 1
    nP = size * size
    e = math.exp(eps)
    cells = [(k, y) for k in range(len(pairs)) for y in range(size)]
    best = math.inf
    for pattern in itertools.product([False, True], repeat=len(cells)):
        rows, rhs = [], []
        bad = {k: [] for k in range(len(pairs))}
        for (k, y), is_bad in zip(cells, pattern):
            a, b = pairs[k]
            if is_bad:
                bad[k].append(y)
            else:
                row = np.zeros(nP)
                row[a * size + y] += 1.0
                row[b * size + y] -= e
                rows.append(row)
                rhs.append(0.0)
        for k, ys in bad.items():
            if ys:
                row = np.zeros(nP)
                row[[pairs[k][0] * size + y for y in ys]] = 1.0
                rows.append(row)
                rhs.append(delta)
        a_eq = np.kron(np.eye(size), np.ones(size))
        res = linprog((np.asarray(L) / size).ravel(), A_ub=np.array(rows) if rows else None,
                      b_ub=rhs if rows else None, A_eq=a_eq, b_eq=np.ones(size), bounds=(0, None), method="highs")
        if res.status == 0:
            best = min(best, res.fun)
    return best


@pytest.mark.parametrize("eps,delta", [(0.7, 0.05), (1.0, 0.2)])
def test_pdp_channel_bound_is_proven_and_below_the_enumerated_optimum(eps, delta):
    from optnoise.costs import loss_matrix
    from optnoise.design.channel import design_channel
    n, pairs = 2, [(0, 1), (1, 0)]           # 6 cells: 64 patterns enumerated
    L = loss_matrix("abs-error", n)
    d = design_channel(n, epsilon=eps, delta=delta, pairs=pairs, cost=L, notion="pdp")
    dp_lp = plain_channel_lp(n, eps, delta, pairs, L)
    assert d.lower_bound <= dp_lp + LP_SLACK and d.lower_bound >= dp_lp * (1 - 1e-6)
    assert d.lower_bound <= pdp_by_enumeration(n, eps, pairs, delta, L) + LP_SLACK
    assert d.lower_bound <= d.expected_cost
    assert "not re-checked and not used" in d.bound_method
