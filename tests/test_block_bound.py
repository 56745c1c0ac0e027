"""The block relaxation's lower bound (optnoise.design.block_bound) against independent optima.

Each optimum below is a plain ``scipy.optimize.linprog`` of the channel problem written here
(not the package's model builder): the bound must never exceed it, on fixed cases, on a
hypothesis fuzz over n, eps, priors and block sizes, and against the chain design's own
proven bound at n = 2,000. The clamped noise's O(n) cost is checked against the dense clamped
channel and against the closed form of the clamped geometric's absolute error.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optnoise.design.block_bound import (
    BLOCK, block_lower_bound, clamped_costs, clamped_row_costs, window_chain_bound, window_values, worst_case_bound,
)
from optnoise.errors import InvalidParameterError
from optnoise.families.baselines import clamp_channel
from optnoise.families.geometric import geometric_pmf


def loss(cost: str, n: int) -> np.ndarray:
    d = np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1))).astype(float)
    return {"abs-error": d, "sq-error": d ** 2, "er": (d > 0).astype(float)}[cost]


def plain_lp(n: int, eps: float, cost: str, prior: np.ndarray | None, worst: bool = False) -> float:
    """min sum_q prior_q sum_y P[q, y] L[q, y] (or max over q) over channels on {0..n} with
    P[q, y] <= e^eps P[q +- 1, y]: the LP written from scratch."""
    s = n + 1
    L = loss(cost, n)
    nv = s * s + (1 if worst else 0)
    idx = lambda q, y: q * s + y  # noqa: E731
    rows, cols, vals = [], [], []
    r = 0
    for q in range(n):
        for a, b in ((q, q + 1), (q + 1, q)):
            for y in range(s):
                rows += [r, r]
                cols += [idx(a, y), idx(b, y)]
                vals += [1.0, -math.exp(eps)]
                r += 1
    b_ub = [0.0] * r
    if worst:
        for q in range(s):
            for y in range(s):
                rows.append(r)
                cols.append(idx(q, y))
                vals.append(L[q, y])
            rows.append(r)
            cols.append(s * s)
            vals.append(-1.0)
            b_ub.append(0.0)
            r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    a_eq = sp.csr_matrix((np.ones(s * s), (np.repeat(np.arange(s), s), np.arange(s * s))), shape=(s, nv))
    if worst:
        c = np.zeros(nv)
        c[-1] = 1.0
    else:
        w = np.full(s, 1.0 / s) if prior is None else np.asarray(prior) / np.sum(prior)
        c = (w[:, None] * L).ravel()
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(s), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


#: The LP's own tolerance (HiGHS: primal/dual feasibility 1e-7): its optimum may sit that far
#: below the true one, so the bound is compared with that much room.
LP_TOL = 1e-7


@pytest.mark.parametrize("cost", ["abs-error", "sq-error", "er"])
@pytest.mark.parametrize("block", [1, 2, 3, 5, 9])
def test_bound_below_the_plain_lp(cost, block):
    n, eps = 8, 0.7
    opt = plain_lp(n, eps, cost, None)
    b = block_lower_bound(n, eps, cost, block=block)
    assert b.value <= opt + LP_TOL
    if block >= n + 1:   # one block: the chain certificate itself, tight
        assert b.value == pytest.approx(opt, rel=1e-6)
    if block == 1:       # every block one answer: nothing is left
        assert b.value == 0.0
    assert b.blocks == math.ceil((n + 1) / min(block, n + 1))


def test_bound_tightens_with_the_block_and_the_worst_case_bound_holds():
    n, eps = 11, 1.0
    values = [block_lower_bound(n, eps, block=m).value for m in (2, 4, 12)]
    assert values[0] < values[1] < values[2]
    worst = plain_lp(n, eps, "abs-error", None, worst=True)
    for m in (3, 6, 12):
        assert worst_case_bound(block_lower_bound(n, eps, block=m)) <= worst + LP_TOL


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 7), eps=st.floats(0.05, 3.0), block=st.integers(1, 8),
       cost=st.sampled_from(["abs-error", "sq-error", "er"]),
       weights=st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8), worst=st.booleans())
def test_bound_valid_under_random_requests(n, eps, block, cost, weights, worst):
    w = np.array(weights[: n + 1]) + 1e-3
    prior = None if worst else w
    b = block_lower_bound(n, eps, cost, prior=prior, block=block)
    opt = plain_lp(n, eps, cost, prior, worst=worst)
    value = worst_case_bound(b) if worst else b.value
    assert 0.0 <= value <= opt + LP_TOL


def test_bound_below_the_chain_designs_own_bound_and_close_to_it():
    from optnoise.design.chain import solve_chain

    n, m = 2_000, 500
    chain = solve_chain(n, 1.0).bound.value
    b = block_lower_bound(n, 1.0, block=m)
    assert b.value <= chain
    # the relaxation loses the cost the blocks' own ends save: about 1.6 / B relative here
    assert b.value >= chain * (1 - 3.0 / m)
    assert b.solved == 2 and b.blocks == 5


def test_identical_blocks_are_certified_once():
    n = 10 * 64 - 1
    b = block_lower_bound(n, 0.5, block=64)
    assert (b.blocks, b.solved) == (10, 1)
    step = np.repeat([1.0, 2.0], 320)   # two constant halves: two distinct blocks
    assert block_lower_bound(n, 0.5, prior=step, block=64).solved == 2


def test_a_loss_that_is_not_monotone_in_the_distance_is_refused():
    with pytest.raises(InvalidParameterError, match="non-decreasing"):
        block_lower_bound(10, 1.0, "circular-abs")
    with pytest.raises(InvalidParameterError):
        block_lower_bound(10, 1.0, block=0)


@pytest.mark.parametrize("cost", ["abs-error", "sq-error", "er"])
@pytest.mark.parametrize("n", [1, 2, 9])
def test_clamped_row_costs_equal_the_dense_clamped_channel(cost, n):
    pmf = geometric_pmf(math.exp(-0.8))
    dense = (np.array(clamp_channel(pmf, n).matrix) * loss(cost, n)).sum(axis=1)
    np.testing.assert_allclose(clamped_row_costs(pmf, n, cost), dense, rtol=1e-12, atol=0)


def test_clamped_geometric_abs_error_equals_its_closed_form_and_is_rounded_up():
    # side of a true value a answers from the end: sum_{k=1}^{a} P(Z <= -k) = alpha (1 - alpha^a) / (1 - alpha^2)
    a, n = math.exp(-1.0), 100_000
    q = np.arange(n + 1)
    closed = a * (2 - a ** q - a ** (n - q)) / (1 - a * a)
    pmf = geometric_pmf(a)
    np.testing.assert_allclose(clamped_row_costs(pmf, n), closed, rtol=1e-13)
    c = clamped_costs(pmf, n)
    assert c.average >= float(np.mean(closed)) and c.average <= float(np.mean(closed)) * (1 + 1e-9)
    assert c.worst >= float(closed.max())


def test_large_n_gap_of_the_clamped_geometric_is_of_order_one_over_b():
    n, eps = 200_000, 1.0
    b = block_lower_bound(n, eps, block=BLOCK // 4)
    c = clamped_costs(geometric_pmf(math.exp(-eps)), n)
    gap = (c.average - b.value) / c.average
    assert 0 < gap < 3.0 / (BLOCK // 4)


# ------------------------------------------------------------------ the design beyond LARGE_FROM
def large(**kw):
    from optnoise import Neighbourhood, Target
    from optnoise.design import Request, design
    from optnoise.design.large_channel import LARGE_FROM

    args = dict(space="channel", n=LARGE_FROM + 5_000, target=Target(1.0), neighbourhood=Neighbourhood.sd(1),
                cost="abs-error")
    return design(Request(**{**args, **kw}))


def test_a_large_count_gets_the_clamped_geometric_with_its_proven_gap():
    d = large()
    r = d.report
    assert r.method == "clamped-geometric" and d.mechanism.kind == "integer"
    assert r.certificate.exact and r.certificate.epsilon_pure <= 1.0
    n = d.details.n
    a = d.mechanism.pmf.right_tail.ratio
    q = np.arange(n + 1)
    closed = float(np.mean(a * (2 - a ** q - a ** (n - q)) / (1 - a * a)))
    assert closed <= r.expected_cost <= closed * (1 + 1e-9)
    # the whole chain's windowed certificate proves the clamped geometric optimal (Ghosh et al.)
    assert 0 < r.lower_bound < r.expected_cost and r.gap < 1e-8 and r.optimal is True
    assert "window of 25" in d.details.bound_method and "block relaxation (B = 2048)" in d.details.bound_method
    assert d.details.block.value < r.lower_bound and (r.expected_cost - d.details.block.value) < 3.0 / BLOCK
    worst = large(worst_case=True)
    assert worst.report.expected_cost >= r.expected_cost and worst.report.lower_bound <= worst.report.expected_cost
    # bounded by the uniform average: the ends' saving, about 1.6 / n, is left in the gap
    assert 0 < worst.report.gap < 3.0 / d.details.n
    prior = np.tile([1.0, 3.0], (d.details.n + 2) // 2)[: d.details.n + 1]
    skewed = large(prior=prior)   # a prior: the block relaxation alone (blocks of 256, one problem)
    assert skewed.details.window is None and "block relaxation (B = 256" in skewed.details.bound_method
    assert 0 < skewed.report.gap < 0.05


def test_a_large_request_the_clamped_noise_does_not_answer_is_refused_by_its_memory_estimate():
    with pytest.raises(InvalidParameterError, match="entries; beyond n = "):
        large(cost="circular-abs", max_memory=2 ** 30)


def test_cli_design_channel_at_large_n_reports_the_bound():
    import json

    from typer.testing import CliRunner

    from optnoise.cli import app
    from optnoise.design.large_channel import LARGE_FROM

    r = CliRunner().invoke(app, ["design", "--form", "channel", "--n", str(LARGE_FROM + 1), "--sd", "1",
                                 "--epsilon", "1", "--cost", "abs-error", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == "clamped-geometric" and out["boundary"] == "clamp" and out["kind"] == "integer"
    assert out["lower_bound"] <= out["expected_cost"] and out["gap"] == pytest.approx(
        (out["expected_cost"] - out["lower_bound"]) / out["expected_cost"])
    assert "block relaxation" in out["bound_method"] and out["block"] == BLOCK and out["window"] == 25
    assert out["block_bound"] < out["lower_bound"] and out["optimal"] is True


def test_a_query_count_beyond_the_channel_says_its_proven_gap():
    from optnoise import Target
    from optnoise.query.mechanisms import CHANNEL_MAX_N, count_cell

    n = CHANNEL_MAX_N + 1_000
    cell = count_cell("households", n, 0, 1, Target(1.0))
    assert cell.space == "clamped-line"
    got = cell.to_json()
    a = cell.noise.pmf.right_tail.ratio
    q = np.arange(n + 1)
    closed = float(np.mean(a * (2 - a ** q - a ** (n - q)) / (1 - a * a)))
    assert closed <= got["expected_cost"] <= closed * (1 + 1e-9)
    assert 0 < got["lower_bound"] < got["expected_cost"] and 0 < got["gap"] < 1e-8
    assert "window of 25" in got["bound_method"]


# ------------------------------------------------------------------ the windowed chain certificate
def test_window_values_bound_the_full_chain_values_from_below():
    from optnoise.design.bounds import chain_values, exp_up
    from optnoise.design.chain import best_remap, geometric_dual

    n, eps = 150, 1.0
    p = 1.0 / (n + 1)
    alpha = math.exp(-eps)
    u = geometric_dual(best_remap("abs-error", np.full(n + 1, p), alpha)[1], alpha)
    rng = np.random.default_rng(7)
    u = u * (1 + 0.05 * rng.standard_normal(n + 1))   # a candidate that fails somewhere
    f = np.arange(n + 1, dtype=float)
    full = chain_values(lambda lo, hi: p * np.abs(np.subtract.outer(np.arange(lo, hi), np.arange(n + 1))), u,
                        exp_up(eps))
    assert np.any(full < 0)
    for window in (3, 10, 40):   # valid: p (window + 1) >= max u
        assert p * (window + 1) >= u.max()
        got = window_values(u, p, f, exp_up(eps), window)
        assert np.all(got <= full + 1e-15)
    np.testing.assert_allclose(window_values(u, p, f, exp_up(eps), 40), full, rtol=0, atol=1e-12 * p)


@pytest.mark.parametrize("cost", ["abs-error", "sq-error", "er"])
@pytest.mark.parametrize("eps", [0.4, 1.0, 2.5])
def test_window_chain_bound_below_the_plain_lp(cost, eps):
    n = 24
    got = window_chain_bound(n, eps, cost, edge=4)
    assert got is not None
    opt = plain_lp(n, eps, cost, None)
    assert got[0] <= opt + LP_TOL
    assert worst_case_bound(got[0], n) <= plain_lp(n, eps, cost, None, worst=True) + LP_TOL


@settings(max_examples=15, deadline=None)
@given(n=st.integers(8, 20), eps=st.floats(0.2, 3.0), edge=st.integers(1, 3),
       cost=st.sampled_from(["abs-error", "sq-error", "er"]))
def test_window_chain_bound_valid_under_random_requests(n, eps, edge, cost):
    got = window_chain_bound(n, eps, cost, edge=edge)
    if got is not None:
        assert 0.0 <= got[0] <= plain_lp(n, eps, cost, None) + LP_TOL


def test_window_chain_bound_proves_the_clamped_geometric_optimal_at_a_million():
    n = 1_000_000
    bound, window = window_chain_bound(n, 2.0)
    c = clamped_costs(geometric_pmf(math.exp(-2.0)), n)
    assert window == 13 and 0 < (c.average - bound) / c.average < 1e-8


def test_compare_channel_at_large_n_scores_in_o_n_with_each_distance_from_the_bound():
    from optnoise.compare import compare_channels
    from optnoise.design.large_channel import LARGE_FROM

    n = LARGE_FROM + 1
    rows = compare_channels(n, [2.0])
    assert [r.mechanism for r in rows] == ["optimal-channel", "clamped-geometric"]
    a = math.exp(-2.0)
    q = np.arange(n + 1)
    closed = float(np.mean(a * (2 - a ** q - a ** (n - q)) / (1 - a * a)))
    for r in rows:
        assert closed <= r.expected_cost <= closed * (1 + 1e-9) and r.boundary == "clamp"
        assert r.lower_bound <= r.expected_cost and r.gap < 1e-8 and r.rank == 1
    assert rows[1].parameter == pytest.approx(a)
    with pytest.raises(InvalidParameterError, match="optimal-channel, clamped-geometric"):
        compare_channels(n, [1.0], mechanisms=("randomized-response",))
