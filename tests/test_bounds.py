"""Proven lower bounds (design/bounds.py) and the structured channel solver (design/chain.py).

Every optimum here comes from an independent plain LP written in this file (one variable per
entry of P, one row per ratio or hockey-stick term), never from the code under test.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optnoise.costs import loss_matrix, loss_rows
from optnoise.design.bounds import (
    GAP_TOLERANCE, chain_bound, chain_values, complete_values, exp_up, lp_bound, relative_gap,
)
from optnoise.design.band import solve_band
from optnoise.design.chain import best_remap, geometric_dual, geometric_smoothing, solve_chain
from optnoise.design.solver import RATIO_MARGIN
from optnoise.design.channel import all_pairs, design_channel, pairs_from_distances, truncated_geometric_channel


# ----------------------------------------------------------------------- an independent plain LP
def plain_lp(n, eps, delta, pairs, L, prior=None, worst=False):
    """min sum_q pi_q sum_y L P (or max_q) over channels meeting (eps, delta)-DP on the ordered pairs."""
    size = n + 1
    pi = np.full(size, 1 / size) if prior is None else np.asarray(prior) / np.sum(prior)
    pairs = list(pairs)
    nP = size * size
    nt = len(pairs) * size if delta > 0 else 0
    nv = nP + nt + (1 if worst else 0)
    e = math.exp(eps)
    rows, cols, vals, b = [], [], [], []
    r = 0
    for k, (a, c) in enumerate(pairs):
        for y in range(size):
            rows += [r, r]
            cols += [a * size + y, c * size + y]
            vals += [1.0, -e]
            if delta > 0:
                rows.append(r)
                cols.append(nP + k * size + y)
                vals.append(-1.0)
            b.append(0.0)
            r += 1
        if delta > 0:
            for y in range(size):
                rows.append(r)
                cols.append(nP + k * size + y)
                vals.append(1.0)
            b.append(delta)
            r += 1
    if worst:
        for q in range(size):
            for y in range(size):
                rows.append(r)
                cols.append(q * size + y)
                vals.append(L[q, y])
            rows.append(r)
            cols.append(nv - 1)
            vals.append(-1.0)
            b.append(0.0)
            r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    A_eq = sp.csr_matrix((np.ones(nP), (np.repeat(np.arange(size), size), np.arange(nP))), shape=(size, nv))
    c = np.zeros(nv)
    if worst:
        c[-1] = 1.0
    else:
        c[:nP] = (pi[:, None] * L).ravel()
    res = linprog(c, A_ub=A_ub, b_ub=b, A_eq=A_eq, b_eq=np.ones(size), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return res.fun


#: The plain LP's own accuracy (HiGHS at feasibility tolerance 1e-10, absolute): a bound may exceed
#: its float optimum by this much relative without exceeding the true optimum.
PLAIN = 1e-8


# ----------------------------------------------------------------------- the cone tests against LPs
def cone_min(w, y, pairs, e, norm):
    """min <w, x> over x >= 0 with x_a <= e x_b on the pairs and the normalisation ``norm``."""
    size = w.size
    A = np.zeros((len(pairs), size))
    for k, (a, c) in enumerate(pairs):
        A[k, a], A[k, c] = 1.0, -e
    if norm == "at-y":
        A_eq, b_eq, bounds = np.eye(size)[[y]], [1.0], (0, None)
    else:   # the box [1, e]^n: every x of the cone with min x = 1 lies in it, and it lies in the cone
        A_eq, b_eq, bounds = None, None, (1, e)
    res = linprog(w, A_ub=A, b_ub=np.zeros(len(pairs)), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    return res.fun if res.status == 0 else -math.inf


@pytest.mark.parametrize("seed", range(6))
def test_chain_values_equal_the_cone_minimum(seed):
    rng = np.random.default_rng(seed)
    n, eps = int(rng.integers(1, 7)), float(rng.uniform(0.2, 2.0))
    size = n + 1
    c = rng.uniform(0, 2, (size, size))
    u = rng.uniform(0, 1, size)
    got = chain_values(lambda lo, hi: c[lo:hi], u, exp_up(eps))
    pairs = pairs_from_distances(n, [1])
    for y in range(size):
        want = cone_min(c[:, y] - u, y, pairs, math.exp(eps), "at-y")
        assert got[y] <= want + 1e-12                      # a lower bound ...
        if math.isfinite(want):
            assert got[y] == pytest.approx(want, rel=1e-9, abs=1e-12)   # ... and the minimum itself


@pytest.mark.parametrize("seed", range(4))
def test_complete_values_equal_the_cone_minimum(seed):
    rng = np.random.default_rng(10 + seed)
    n, eps = int(rng.integers(1, 6)), float(rng.uniform(0.2, 2.0))
    size = n + 1
    c = rng.uniform(0, 2, (size, size))
    u = rng.uniform(0, 1.5, size)
    got = complete_values(c, u, exp_up(eps))
    for y in range(size):
        want = cone_min(c[:, y] - u, y, all_pairs(n), math.exp(eps), "min-1")
        assert got[y] <= want + 1e-12
        assert got[y] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_exp_up_encloses():
    for eps in (1e-9, 0.3, 1.0, 7.5):
        assert exp_up(eps) >= math.exp(eps) and exp_up(eps) <= math.exp(eps) * (1 + 4e-16)


def test_lp_bound_holds_for_any_multipliers():
    # min c.x, A x <= b, sum x = 1, 0 <= x <= 1: random multipliers never beat the optimum
    rng = np.random.default_rng(3)
    for _ in range(20):
        m, k = 6, 4
        c = rng.uniform(-1, 1, m)
        A = rng.uniform(-1, 1, (k, m))
        b = np.abs(rng.uniform(0, 1, k))
        res = linprog(c, A_ub=A, b_ub=b, A_eq=np.ones((1, m)), b_eq=[1], bounds=(0, 1), method="highs")
        if res.status != 0:
            continue
        bound = (lambda y_ub, y_eq: lp_bound(c, A, b, np.ones((1, m)), np.ones(1), np.zeros(m), np.ones(m),
                                             y_ub, y_eq).value)
        for _ in range(5):
            assert bound(-np.abs(rng.normal(size=k)), rng.normal(size=1)) <= res.fun + 1e-12
        own = bound(res.ineqlin.marginals, res.eqlin.marginals)   # the LP's own duals: the optimum
        assert own <= res.fun + 1e-12 and own == pytest.approx(res.fun, abs=1e-9)


# ----------------------------------------------------------------------- designs against the plain LP
CASES = [
    dict(n=6, epsilon=1.0),
    dict(n=6, epsilon=0.7, worst_case=True),
    dict(n=6, epsilon=1.0, delta=0.05),
    dict(n=5, epsilon=0.8, pairs="all"),
    dict(n=5, epsilon=0.8, delta=0.02, pairs="all"),
    dict(n=6, epsilon=0.9, delta=0.05, distances=[1, 2], worst_case=True),
    dict(n=6, epsilon=0.5, cost="sq-error", prior=[5, 1, 1, 1, 1, 1, 3]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_design_bound_against_plain_lp(case):
    case = dict(case)
    n = case["n"]
    dist = case.pop("distances", [1])
    if "pairs" not in case:
        case["pairs"] = pairs_from_distances(n, dist)
    pairs = all_pairs(n) if case["pairs"] == "all" else case["pairs"]
    cost = case.setdefault("cost", "abs-error")
    d = design_channel(**case)
    want = plain_lp(n, case["epsilon"], case.get("delta", 0.0), pairs, loss_matrix(cost, n), case.get("prior"),
                    case.get("worst_case", False))
    assert d.lower_bound <= want * (1 + PLAIN) + 1e-12
    assert d.optimal and d.gap <= GAP_TOLERANCE
    assert d.expected_cost == pytest.approx(want, rel=2 * GAP_TOLERANCE)
    assert d.to_json()["lower_bound"] == d.lower_bound and d.to_json()["optimal"] is True


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), eps=st.floats(0.1, 3.0), delta=st.sampled_from([0.0, 0.01, 0.2]),
       cost=st.sampled_from(["er", "abs-error", "sq-error", "circular-abs"]),
       worst=st.booleans(), weights=st.lists(st.integers(1, 9), min_size=6, max_size=6), wide=st.booleans())
def test_bound_never_exceeds_the_optimum_fuzz(n, eps, delta, cost, worst, weights, wide):
    pairs = pairs_from_distances(n, [1, 2] if wide and n >= 2 else [1])
    prior = None if worst else weights[: n + 1]
    d = design_channel(n, epsilon=eps, delta=delta, pairs=pairs, cost=cost, prior=prior, worst_case=worst)
    want = plain_lp(n, eps, delta, pairs, loss_matrix(cost, n), prior, worst)
    assert d.lower_bound <= want * (1 + PLAIN) + 1e-12
    if d.optimal:
        assert d.expected_cost == pytest.approx(want, rel=2 * GAP_TOLERANCE, abs=1e-12)


# ----------------------------------------------------------------------- the structured channel
def test_geometric_pieces():
    alpha = 0.4
    M = np.random.default_rng(0).uniform(0, 1, (9, 3))
    K = alpha ** np.abs(np.subtract.outer(np.arange(9), np.arange(9)))
    np.testing.assert_allclose(geometric_smoothing(M, alpha), K @ M, rtol=1e-13)
    G = truncated_geometric_channel(8, -math.log(alpha))
    v = np.random.default_rng(1).uniform(0, 1, 9)
    np.testing.assert_allclose(G.T @ geometric_dual(v, alpha), v, rtol=1e-12)


@pytest.mark.parametrize("cost", ["abs-error", "sq-error", "er"])
@pytest.mark.parametrize("n,eps", [(1, 0.5), (7, 0.3), (30, 1.0), (60, 3.0)])
def test_structured_channel_equals_plain_lp(cost, n, eps):
    prior = np.random.default_rng(n).dirichlet(np.ones(n + 1))
    for pi in (None, prior):
        s = solve_chain(n, eps, cost, pi)
        want = plain_lp(n, eps, 0.0, pairs_from_distances(n, [1]), loss_matrix(cost, n), pi)
        assert s.bound.value <= want * (1 + PLAIN)
        assert s.gap <= GAP_TOLERANCE and s.cost == pytest.approx(want, rel=2 * GAP_TOLERANCE)


def test_structured_channel_at_n_100_through_design_channel():
    d = design_channel(101, epsilon=1.0, cost="abs-error")
    assert d.method == "geometric-remap" and d.optimal
    want = plain_lp(101, 1.0, 0.0, pairs_from_distances(101, [1]), loss_matrix("abs-error", 101))
    assert d.lower_bound <= want * (1 + PLAIN) and d.expected_cost == pytest.approx(want, rel=2 * GAP_TOLERANCE)
    assert d.mechanism.privacy.meets(d.target)


def test_non_monotone_loss_is_not_called_optimal():
    # circular-abs is not monotone in |y - q| on the line: Ghosh et al.'s theorem does not apply, and
    # the certificate shows it (prior favouring the ends, n = 7, eps = 0.3: 11% above the LP)
    n, eps = 7, 0.3
    prior = np.random.default_rng(n).dirichlet(np.ones(n + 1))
    s = solve_chain(n, eps, "circular-abs", prior)
    want = plain_lp(n, eps, 0.0, pairs_from_distances(n, [1]), loss_matrix("circular-abs", n), prior)
    assert s.bound.value <= want * (1 + PLAIN) and want <= s.cost
    assert s.cost > want * 1.01 and s.gap > GAP_TOLERANCE


def test_ghosh_geometric_remap_is_optimal_at_scale():
    # Ghosh, Roughgarden & Sundararajan: pure DP, neighbours one apart, a monotone loss: the range-
    # restricted geometric mechanism plus the best remap is optimal -- proven here by the dual
    # certificate, matrix-free (the remap's cost is sum v; the certificate builds cost rows in
    # blocks). n = 2,000 keeps the default suite fast; n = 10,000 is `bench/channel.py
    # --households` (gap 3.9e-9, docs/ordered-domains.md), whose design takes 14-50 s.
    n, eps = 2_000, 1.0
    pi = np.full(n + 1, 1 / (n + 1))
    alpha = math.exp(-eps) / (1 - RATIO_MARGIN)
    remap, v = best_remap("abs-error", pi, alpha)
    bound = chain_bound(lambda lo, hi: pi[lo:hi, None] * loss_rows("abs-error", n, np.arange(lo, hi)),
                        geometric_dual(v, alpha), eps)
    assert np.array_equal(remap, np.arange(n + 1))     # a uniform prior and |y - q|: no remap at all
    assert bound.value <= v.sum() and relative_gap(float(v.sum()), bound.value) <= 1e-6


# ----------------------------------------------------------------------- the band LP (approximate DP)
@pytest.mark.parametrize("band", [None, 1])
def test_band_lp_equals_plain_lp(band):
    n, eps, delta = 30, 1.0, 1e-3
    pairs = pairs_from_distances(n, [1])
    L = loss_matrix("abs-error", n)
    s = solve_band(n, eps, delta, pairs, L, np.full(n + 1, 1 / (n + 1)), band=band)
    want = plain_lp(n, eps, delta, pairs, L)
    assert s.bound.value <= want * (1 + PLAIN)
    assert s.gap <= GAP_TOLERANCE and s.objective == pytest.approx(want, rel=2 * GAP_TOLERANCE)
    assert np.all(s.matrix[np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1))) > s.band] == 0)


def test_band_design_through_design_channel():
    d = design_channel(120, epsilon=1.0, delta=1e-3, cost="abs-error")
    assert d.method == "lp-band" and d.optimal and d.lower_bound <= d.expected_cost
    assert d.mechanism.privacy.meets(d.target)
    # the band is a restriction: nothing beyond it, and the bound covers the full LP
    far = np.abs(np.subtract.outer(np.arange(121), np.arange(121))) > 40
    assert np.all(d.matrix[far] < 1e-9)


# ----------------------------------------------------------------------- bounds in designs and compare
def test_finite_design_bound_against_plain_noise_lp():
    # the noise LP written independently: min rho.f, sum f = 1, f(eta) <= e^eps f(eta +- 1 mod 9)
    n, eps = 8, 1.0
    size = n + 1
    rho = np.arange(size, dtype=float) ** 2
    A = []
    for eta in range(size):
        for mu in (1, -1):
            row = np.zeros(size)
            row[eta] += 1.0
            row[(eta + mu) % size] -= math.exp(eps)
            A.append(row)
    res = linprog(rho, A_ub=np.array(A), b_ub=np.zeros(len(A)), A_eq=np.ones((1, size)), b_eq=[1], bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    from optnoise.design import design_finite
    d = design_finite(n, epsilon=eps, cost="mse")
    assert d.lower_bound <= res.fun * (1 + PLAIN) and d.optimal and d.gap <= GAP_TOLERANCE
    assert d.to_json()["lower_bound"] == d.lower_bound


def test_compare_rows_carry_their_distance_from_the_bound():
    from optnoise.compare import compare, compare_channels
    for rows in (compare(8, [1.0], cost="mse"), compare_channels(10, [1.0])):
        bound = rows[0].lower_bound
        assert bound is not None
        for r in rows:
            assert r.lower_bound == bound and r.expected_cost >= bound and r.gap >= 0
            assert r.gap == pytest.approx((r.expected_cost - bound) / r.expected_cost, abs=1e-15)
        assert rows[0].gap <= GAP_TOLERANCE             # the optimal design itself
        assert max(r.gap for r in rows) > 0.1           # and a baseline far from it
    # a clamped baseline is not a modulo noise: the noise LP's bound does not cover it
    clamp = {r.mechanism: r for r in compare(8, [1.0], cost="er", boundary="clamp")}
    assert clamp["geometric"].lower_bound is None and clamp["rr"].lower_bound is not None


def test_released_row_costs_of_modulo_noise_in_linear_time_equal_the_channel():
    from optnoise.costs import released_row_costs, row_costs
    from optnoise.pmf import CyclicPMF, channel_matrix
    f = CyclicPMF(np.random.default_rng(5).dirichlet(np.ones(40)))
    for cost in ("er", "abs-error", "sq-error", "circular-abs", "circular-mse"):
        fast = released_row_costs(f, cost)
        np.testing.assert_allclose(fast, row_costs(channel_matrix(f), loss_matrix(cost, 39)), rtol=1e-12, atol=1e-12)
        if cost.startswith("circular"):   # a circulant channel: every row exactly the same (stable calibration)
            assert np.ptp(fast) == 0.0


# ------------------------------------------------------------------ noise on all of Z (window relaxation)
def test_line_bound_below_the_geometric_and_tight_with_a_wide_window():
    # Geng & Viswanath: for sensitivity 1 and E|X| the geometric at alpha = e^-eps is optimal on Z,
    # cost 2 alpha / (1 - alpha^2) (closed form): the bound is below it, and within 1e-6 at L = 30
    from optnoise.design.integer import design_integer
    eps = 1.0
    alpha = math.exp(-eps)
    geometric = 2 * alpha / (1 - alpha ** 2)
    narrow = design_integer(eps, 1, "abs")
    wide = design_integer(eps, 1, "abs", half_width=30)
    assert narrow.lower_bound <= wide.lower_bound <= geometric
    assert narrow.gap > 1e-4                      # the default window is not enough to prove optimality
    assert (geometric - wide.lower_bound) / geometric <= 1e-6
    assert wide.optimal and wide.to_json()["optimal"]


def test_line_bound_none_for_a_cost_of_unknown_shape():
    from optnoise.design.integer import design_integer
    d = design_integer(1.0, 1, lambda x: np.abs(x) * (1 + np.cos(x)))
    assert d.lower_bound is None and d.gap is None and not d.optimal


@settings(max_examples=12, deadline=None)
@given(eps=st.floats(0.3, 2.0), period=st.integers(1, 3), cost=st.sampled_from(["abs", "sq", "er", "pow:1.5"]),
       extra=st.integers(0, 6))
def test_line_bound_fuzz_below_designs_on_larger_windows(eps, period, cost, extra):
    # the bound from window L covers every eps-DP noise on Z: below the design at L and at a
    # wider window (independent upper bounds on the optimum over Z)
    from optnoise.design.integer import design_integer
    half = max(period, 4) + extra
    d = design_integer(eps, period, cost, half_width=half)
    wider = design_integer(eps, period, cost, half_width=2 * half + 10)
    assert d.lower_bound is not None
    assert d.lower_bound <= d.expected_cost
    assert d.lower_bound <= wider.expected_cost
    fn = {"abs": np.abs, "sq": np.square, "er": lambda x: np.asarray(x != 0, dtype=float),
          "pow:1.5": lambda x: np.abs(x) ** 1.5}[cost]
    assert d.lower_bound <= _plain_tailed_lp(eps, period, fn, 3 * half)


def _plain_tailed_lp(eps, period, cost, m, terms=4000):
    """Independent: eps-DP noise on Z supported by -m..m plus staircase tails
    p(+-(m + t)) = alpha^ceil(t/D) p(+-(m + t - D ceil(t/D))), written as a dense linprog (a
    restriction of the problem on Z, so its optimum bounds the optimum from above)."""
    alpha, n = math.exp(-eps), 2 * m + 1
    ext = np.zeros((n + 2 * period, n))   # the masses at -m-D..m+D in window variables
    ext[period:period + n] = np.eye(n)
    c = cost(np.arange(-m, m + 1).astype(float))
    mass = np.ones(n)
    for t in range(1, terms + 1):
        j = -(-t // period)
        src = n - 1 - (j * period - t)            # right tail's source index in the window
        w = alpha ** j
        c[src] += w * cost(float(m + t))
        c[n - 1 - src] += w * cost(float(-m - t))
        mass[src] += w
        mass[n - 1 - src] += w
        if t <= period:
            ext[period + n - 1 + t, src] = w
            ext[period - t, n - 1 - src] = w
    rows = []
    for d in range(1, period + 1):
        for i in range(ext.shape[0] - d):
            rows += [ext[i] - math.exp(eps) * ext[i + d], ext[i + d] - math.exp(eps) * ext[i]]
    res = linprog(c, A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=mass[None, :], b_eq=[1.0],
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def test_plain_tailed_lp_reproduces_the_geometric():
    # the oracle itself: sensitivity 1, |x|: the geometric's closed form 2 alpha / (1 - alpha^2)
    alpha = math.exp(-1.0)
    assert _plain_tailed_lp(1.0, 1, np.abs, 12) == pytest.approx(2 * alpha / (1 - alpha ** 2), rel=1e-7)
