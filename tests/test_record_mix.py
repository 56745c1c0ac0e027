"""Per-record (eps, delta)-DP channels at scale (design/record_mix.py) and the sparse all-pairs
certificate they are released with (analysis/sparse_complete.py).

Every optimum here comes from a plain LP written in this file (the hockey-stick epigraph: one
slack per ordered pair and output, scipy's linprog), never from the code under test; the
sparse certificate is compared with the pair-by-pair exact engine on the same weights.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optnoise import design
from optnoise.analysis.exact_fast import IntegerPair, certify_pairs
from optnoise.analysis.pairs import IntegerForm
from optnoise.analysis.profile import exact_profile
from optnoise.analysis.sparse_complete import sparse_summary
from optnoise.design.bounds import GAP_TOLERANCE
from optnoise.design.record_mix import column_plan, flow_plan, solve_record_mix
from optnoise.design.request import Request
from optnoise.neighbourhood import InputPairs
from optnoise.target import Target

#: The plain LP runs at HiGHS's default tolerances: its optimum may sit this far (relative)
#: from the true one.
PLAIN = 1e-7


def plain_lp(eps: float, delta: float, c: np.ndarray) -> float:
    """min sum c * P over channels with sum_y s[a, b, y] <= delta, s >= P[a] - e^eps P[b], s >= 0,
    for every ordered pair (a, b)."""
    size = c.shape[0]
    e = math.exp(eps)
    pairs = [(a, b) for a in range(size) for b in range(size) if a != b]
    n_p, k = size * size, len(pairs)
    pa = np.repeat([a for a, _ in pairs], size)
    pb = np.repeat([b for _, b in pairs], size)
    y = np.tile(np.arange(size), k)
    r = np.arange(k * size)
    rows = np.concatenate([r, r, r, k * size + np.repeat(np.arange(k), size)])
    cols = np.concatenate([pa * size + y, pb * size + y, n_p + r, n_p + r])
    vals = np.concatenate([np.ones(k * size), np.full(k * size, -e), -np.ones(k * size), np.ones(k * size)])
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(k * size + k, n_p + k * size))
    b_ub = np.concatenate([np.zeros(k * size), np.full(k, delta)])
    a_eq = sp.csr_matrix((np.ones(n_p), (np.repeat(np.arange(size), size), np.arange(n_p))),
                         shape=(size, n_p + k * size))
    res = linprog(np.concatenate([c.ravel(), np.zeros(k * size)]), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq,
                  b_eq=np.ones(size), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _cost(n: int, kind: str, prior: np.ndarray) -> np.ndarray:
    d = np.abs(np.arange(n + 1)[:, None] - np.arange(n + 1)[None, :]).astype(float)
    L = {"abs": d, "sq": d ** 2, "er": (d > 0).astype(float)}[kind]
    return prior[:, None] * L


def _hockey(P: np.ndarray, eps: float) -> float:
    """Largest sum_y max(0, P[a, y] - e^eps P[b, y]) over ordered pairs (floats)."""
    e = math.exp(eps)
    return max(float(np.maximum(P[a] - e * P[b], 0).sum()) for a in range(P.shape[0]) for b in range(P.shape[0])
               if a != b)


@pytest.mark.parametrize("n,eps,delta,kind,seed", [
    (6, 1.0, 1e-3, "abs", None), (8, 0.5, 1e-2, "abs", 1), (7, 2.0, 1e-3, "sq", 2), (6, 1.0, 0.05, "er", None),
    (8, 0.3, 1e-4, "abs", 3), (5, 1.0, 0.3, "abs", 4),
])
def test_bound_never_exceeds_the_plain_optimum(n, eps, delta, kind, seed):
    prior = np.full(n + 1, 1.0 / (n + 1)) if seed is None else np.random.default_rng(seed).dirichlet(np.ones(n + 1))
    c = _cost(n, kind, prior)
    opt = plain_lp(eps, delta, c)
    sol = solve_record_mix(c, eps, delta)
    assert sol.bound.value <= opt * (1 + PLAIN) + 1e-12
    assert sol.cost >= opt * (1 - PLAIN) - 1e-12        # a feasible channel: never below the optimum
    assert _hockey(sol.matrix, eps) <= delta              # it meets the target (floats; the certificate decides)
    np.testing.assert_allclose(sol.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if sol.gap <= GAP_TOLERANCE:                          # where it says optimal, it is
        assert abs(sol.cost - opt) <= GAP_TOLERANCE * opt


@pytest.mark.parametrize("n,eps,delta", [(10, 1.0, 1e-3), (9, 1.0, 1e-3), (10, 1.0, 1e-4), (9, 0.3, 1e-3), (11, 0.5, 1e-2)])
def test_optimal_where_it_says_so(n, eps, delta):
    """abs-error, uniform: the max-flow plans close the gap (the design says optimal) and the
    cost is the plain LP's optimum within the tolerance."""
    c = _cost(n, "abs", np.full(n + 1, 1.0 / (n + 1)))
    sol = solve_record_mix(c, eps, delta)
    assert sol.gap <= GAP_TOLERANCE
    opt = plain_lp(eps, delta, c)
    assert abs(sol.cost - opt) <= GAP_TOLERANCE * opt
    assert sol.bound.value <= opt * (1 + PLAIN)


def test_mixture_is_the_plain_optimum_on_the_small_cases():
    """The measured finding the design rests on (abs-error, uniform): (1 - delta) B + delta I costs
    the plain LP's optimum (so only the bound's gap is open)."""
    for n, eps, delta in ((6, 1.0, 1e-3), (9, 0.5, 1e-2), (7, 2.0, 1e-3)):
        c = _cost(n, "abs", np.full(n + 1, 1.0 / (n + 1)))
        sol = solve_record_mix(c, eps, delta)
        assert sol.cost == pytest.approx(plain_lp(eps, delta, c), rel=1e-6)


@pytest.mark.parametrize("plan", [column_plan, flow_plan])
def test_plans_serve_every_sender_within_capacity(plan):
    rng = np.random.default_rng(5)
    supply, cap = rng.random(7), rng.random(9) * 2
    lam = plan(supply, cap, rng.random((7, 9)) * 0.1)
    np.testing.assert_allclose(lam.sum(axis=1), supply, rtol=1e-12)
    assert np.all(lam.sum(axis=0) <= cap * (1 + 1e-12))
    assert np.all(lam >= 0)


def test_flow_plan_stays_under_caps_that_admit_a_plan():
    """K is a feasible plan itself (a random one, rows = supply, columns = cap, all tight): the
    max-flow fits under it up to the flooring (each capacity loses under one unit of 2^-30 of the
    supply, so the flow loses at most one unit per edge)."""
    rng = np.random.default_rng(7)
    plan0 = rng.random((30, 40)) * (rng.random((30, 40)) < 0.3)
    supply, cap = plan0.sum(axis=1), plan0.sum(axis=0)
    lam = flow_plan(supply, cap, plan0)
    units = plan0.size + sum(plan0.shape)
    assert np.maximum(lam - plan0, 0).sum() <= units * 2.0 ** -30 * supply.sum()
    np.testing.assert_allclose(lam.sum(axis=1), supply, rtol=1e-12)


def _sparse_weights(rng, n: int, k: int, bits: int) -> np.ndarray:
    W = np.zeros((n, n), dtype=np.uint64)
    total = 1 << bits
    for a in range(n):
        cols = rng.choice(n, k, replace=False)
        parts = [int(v) for v in np.floor(rng.dirichlet(np.ones(k)) * (total // 2))]
        parts[0] += total - sum(parts)
        W[a, cols] = np.array(parts, dtype=np.uint64)
    return W


@pytest.mark.parametrize("seed", range(6))
def test_sparse_certificate_equals_the_pair_by_pair_engine(seed):
    rng = np.random.default_rng(seed)
    n, k, bits = int(rng.integers(4, 12)), int(rng.integers(1, 4)), int(rng.choice([24, 62]))
    W = _sparse_weights(rng, n, k, bits)
    if seed % 2:
        W[1] = W[0]   # ties between pairs
    D = 1 << bits
    pairs = [IntegerPair.from_weights(W[a], W[b], D, f"x={a},x'={b}") for a in range(n) for b in range(n) if a != b]
    column = IntegerPair.from_weights(W.max(axis=0), W.min(axis=0), D, "column")
    fast = sparse_summary(W, D, lambda: (certify_pairs([column]).epsilon_pure, "column"))
    for eps, delta in ((0.0, 0.0), (1.0, 1e-3), (0.5, 0.2), (math.inf, 0.5), (3.0, 0.0)):
        ref, got = certify_pairs(pairs, epsilon=eps, delta=delta), fast(eps, delta)
        for key in ("epsilon_pure", "delta_dp", "delta_pdp", "epsilon_dp", "epsilon_pdp"):
            assert getattr(got, key) == getattr(ref, key), (key, eps, delta)


def test_per_record_delta_design_is_routed_and_certified():
    n, eps, delta = 40, 1.0, 1e-3
    d = design(Request(space="channel", n=n, target=Target(eps, delta), unit="record", cost="abs-error"))
    r = d.report
    assert r.method == "pure-mix"
    assert r.lower_bound <= r.expected_cost
    assert 0 <= r.gap < 1e-4
    cert = r.certificate
    assert cert.exact and cert.delta_dp <= delta
    assert d.mechanism.quantize().channel.matrix.shape == (n + 1, n + 1)


def test_certificate_catches_a_perturbed_channel():
    """The same sparse weights with one answer's own output raised past delta: the exact
    certificate of those weights reports delta_DP above the target (a test that can fail)."""
    n, eps, delta = 30, 1.0, 1e-3
    d = design(Request(space="channel", n=n, target=Target(eps, delta), unit="record", cost="abs-error"))
    q = d.mechanism.quantize()
    W = np.array(q.weights, dtype=np.uint64)
    pairs = InputPairs.complete(n + 1, directed=True)
    ok = exact_profile(IntegerForm("channel", W, 1 << q.bits), pairs).values(eps, delta)
    assert ok.delta_dp <= delta
    a = next(i for i in range(n + 1) if np.count_nonzero(W[:, i]) == 1)   # an output only its own answer uses
    bump = np.uint64(int(delta * 2 ** q.bits) // 100 + 1)                # 1% of delta more on it
    W[a, a] += bump
    W[a, np.argmax(W[a])] -= bump
    bad = exact_profile(IntegerForm("channel", W, 1 << q.bits), pairs).values(eps, delta)
    assert bad.delta_dp > delta
