"""Randomized response (Holohan et al.), the baselines, boundaries and `optnoise compare` (issue 5)."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from typer.testing import CliRunner

from optnoise import Channel, InputPairs, Neighbourhood, Target, privacy_profile
from optnoise.cli import app
from optnoise.compare import build, compare, compare_at_cost, costs
from optnoise.families import calibrate
from optnoise.families.baselines import (
    clamp_channel,
    data_independent_pmf,
    discrete_gaussian_pmf,
    exponential_channel,
    on_domain,
    truncate_channel,
    wrap,
)
from optnoise.families.geometric import geometric_pmf
from optnoise.families.rr import (
    hamming_channel,
    hamming_exponential_k_max,
    hamming_neighbours,
    rr_error_bounds,
    rr_optimal_p,
    rr_pmf,
)

runner = CliRunner()
SD1 = Neighbourhood.sd(1)


# ------------------------------------------------------------------ Holohan et al.
@pytest.mark.parametrize("m, rows", [(1, 2), (2, 1), (2, 2)])
@pytest.mark.parametrize("eps, delta", [(0.5, 0.0), (1.0, 0.1), (0.3, 0.25)])
def test_theorem4_condition_equals_brute_force_hockey_stick(m, rows, eps, delta):
    k_max = hamming_exponential_k_max(m, eps, delta)
    for k, should_pass in ((k_max * (1 - 1e-9), True), (k_max * (1 + 1e-3), False)):
        matrix, dbs = hamming_channel(m, rows, k)
        prof = privacy_profile(Channel(matrix), InputPairs(tuple(hamming_neighbours(dbs)), directed=True))
        assert (prof.delta_dp(eps) <= delta + 1e-12) == should_pass


@pytest.mark.parametrize("m, rows", [(1, 2), (2, 2)])
def test_product_sanitisation_has_the_privacy_of_its_parent(m, rows):
    # Theorem 7 + Corollary 3: exponential mechanism with e^k = (1 - mp)/p is the product of RR rows
    eps, delta = 0.8, 0.05
    p = rr_optimal_p(m + 1, eps, delta)
    k = math.log((1 - m * p) / p)
    matrix, dbs = hamming_channel(m, rows, k)
    parent = np.full((m + 1, m + 1), p) + np.eye(m + 1) * (1 - (m + 1) * p)
    product = parent
    for _ in range(rows - 1):
        product = np.kron(product, parent)
    np.testing.assert_allclose(matrix, product, atol=1e-14)
    big = privacy_profile(Channel(matrix), InputPairs(tuple(hamming_neighbours(dbs)), directed=True))
    small = privacy_profile(rr_pmf(m + 1, p), SD1)
    assert big.delta_dp(eps) == pytest.approx(small.delta_dp(eps), abs=1e-12)
    assert big.delta_dp(eps) == pytest.approx(delta, abs=1e-12)


def _lp_best_channel_error(k: int, eps: float, delta: float) -> float:
    """min over all k x k stochastic P, (eps, delta)-DP for every ordered pair, of max_d P(X != d)."""
    nv = k * k
    n_pairs = k * (k - 1)
    n_cols = nv + n_pairs * k + 1  # P, slack s[pair, x] >= P[d,x] - e P[d',x], t
    rows, cols, vals, b_ub = [], [], [], []
    r = 0
    e = math.exp(eps)
    pairs = [(d, d2) for d in range(k) for d2 in range(k) if d != d2]
    for pi, (d, d2) in enumerate(pairs):
        for x in range(k):  # P[d,x] - e P[d2,x] - s <= 0
            rows += [r, r, r]
            cols += [d * k + x, d2 * k + x, nv + pi * k + x]
            vals += [1.0, -e, -1.0]
            b_ub.append(0.0)
            r += 1
        rows += [r] * k  # sum_x s <= delta
        cols += [nv + pi * k + x for x in range(k)]
        vals += [1.0] * k
        b_ub.append(delta)
        r += 1
    for d in range(k):  # 1 - P[d,d] <= t
        rows += [r, r]
        cols += [d * k + d, n_cols - 1]
        vals += [-1.0, -1.0]
        b_ub.append(-1.0)
        r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, n_cols))
    a_eq = sp.csr_matrix((np.ones(nv), (np.repeat(np.arange(k), k), np.arange(nv))), shape=(k, n_cols))
    c = np.zeros(n_cols)
    c[-1] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(k), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("k, eps, delta", [(2, 1.0, 0.0), (3, 0.5, 0.1), (4, 1.5, 0.05), (5, 2.0, 0.2)])
def test_theorem10_p_is_the_lp_optimum_over_all_channels(k, eps, delta):
    p = rr_optimal_p(k, eps, delta)
    assert _lp_best_channel_error(k, eps, delta) == pytest.approx((k - 1) * p, abs=1e-8)
    lower, upper = rr_error_bounds(k, eps, delta)  # Theorem 9, attained
    assert lower == pytest.approx((k - 1) * p, rel=1e-12) and upper == (k - 1) / k


def test_rr_cli():
    res = runner.invoke(app, ["rr", "--categories", "4", "--epsilon", "1", "--delta", "0.1", "--json"])
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    p = 0.9 / (math.e + 3)
    assert out["p_other"] == pytest.approx(p) and out["p_keep"] == pytest.approx(1 - 3 * p)
    assert out["error_rate"] == pytest.approx(3 * p)
    assert out["certificate"]["delta_dp"] == pytest.approx(0.1, abs=1e-12)
    bad = runner.invoke(app, ["rr", "--categories", "1", "--epsilon", "1"])
    assert bad.exit_code == 2 and "--categories" in bad.output


# ------------------------------------------------------------------ baselines
@pytest.mark.dp_accounting
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_discrete_gaussian_delta_matches_dp_accounting(eps):
    from dp_accounting.pld import privacy_loss_mechanism as plm
    ours = privacy_profile(discrete_gaussian_pmf(2.0), SD1).delta_dp(eps)
    theirs = plm.DiscreteGaussianPrivacyLoss(2.0).get_delta_for_epsilon(eps)
    assert ours == pytest.approx(theirs, abs=1e-12)


def _direct_line(weight, lo=-3000, hi=3000):
    k = np.arange(lo, hi + 1)
    w = weight(k)
    return k, w / w.sum()


def test_wrap_clamp_truncate_against_direct_sums():
    n, a = 8, 0.7
    k, w = _direct_line(lambda k: a ** np.abs(k))
    g = geometric_pmf(a)
    wrapped = np.bincount(k % (n + 1), weights=w, minlength=n + 1)
    np.testing.assert_allclose(wrap(g, n + 1).probs, wrapped, atol=1e-14)
    for q in range(n + 1):
        row = np.bincount(np.clip(q + k, 0, n), weights=w, minlength=n + 1)
        np.testing.assert_allclose(clamp_channel(g, n).matrix[q], row, atol=1e-14)
        inner = w[(k >= -q) & (k <= n - q)]
        np.testing.assert_allclose(truncate_channel(g, n).matrix[q], inner / inner.sum(), atol=1e-14)


def test_boundaries_kadam_fig6_setting():
    """n = 8, alpha = 0.7, sigma^2 = 3.38: what each boundary does to the line mechanism's epsilon."""
    n = 8
    for line in (geometric_pmf(0.7), discrete_gaussian_pmf(math.sqrt(3.38))):
        base = privacy_profile(line, SD1)
        mod = privacy_profile(on_domain(line, n, "modulo"), SD1)
        clamp = privacy_profile(on_domain(line, n, "clamp"), SD1)
        trunc = privacy_profile(on_domain(line, n, "truncate"), SD1)
        for eps in (0.2, 0.5, 1.0):
            # modulo and clamp are post-processing of the line mechanism: never worse
            assert mod.delta_dp(eps) <= base.delta_dp(eps) + 1e-12
            assert clamp.delta_dp(eps) <= base.delta_dp(eps) + 1e-12
        assert math.isfinite(trunc.epsilon_pure)
    # truncation renormalises per input, so it is not post-processing and can go either way:
    geo_line = privacy_profile(geometric_pmf(0.7), SD1)
    geo_trunc = privacy_profile(on_domain(geometric_pmf(0.7), n, "truncate"), SD1)
    assert geo_trunc.epsilon_pure > geo_line.epsilon_pure + 0.15  # worse: 0.540 vs 0.357
    dg_line = privacy_profile(discrete_gaussian_pmf(math.sqrt(3.38)), SD1)
    dg_trunc = privacy_profile(on_domain(discrete_gaussian_pmf(math.sqrt(3.38)), n, "truncate"), SD1)
    assert dg_line.epsilon_pure == math.inf and dg_trunc.delta_dp(1.0) < dg_line.delta_dp(1.0)  # better here
    geo = geometric_pmf(0.7)
    assert privacy_profile(on_domain(geo, n, "clamp"), SD1).epsilon_pure == pytest.approx(-math.log(0.7), rel=1e-9)


def test_data_independent_is_rr_and_exponential_rows():
    np.testing.assert_allclose(data_independent_pmf(5, 0.3).probs, rr_pmf(6, 0.06).probs)
    ch = exponential_channel(4, 0.5)
    np.testing.assert_allclose(ch.matrix[2], np.exp(-0.5 * np.abs(np.arange(5) - 2)) /
                               np.exp(-0.5 * np.abs(np.arange(5) - 2)).sum())


# ------------------------------------------------------------------ compare
@pytest.mark.parametrize("delta, cost, notion", [(0.0, "er", "dp"), (0.3, "mse", "dp"), (0.3, "mse", "pdp")])
def test_compare_optimal_is_never_worse_and_calibration_is_tight(delta, cost, notion):
    n = 8
    rows = compare(n, [0.5, 1.0, 2.0], delta=delta, cost=cost, neighbourhood=SD1, notion=notion)
    for eps in (0.5, 1.0, 2.0):
        at = {r.mechanism: r for r in rows if r.epsilon == eps}
        assert set(at) == {"optimal", "geometric", "discrete-gaussian", "exponential", "rr"}
        for r in at.values():
            assert at["optimal"].expected_cost <= r.expected_cost + 1e-7
    for r in rows:
        if r.parameter is None:
            continue
        prof = privacy_profile(build(r.mechanism, r.parameter, n), SD1)
        got = prof.epsilon_pure <= r.epsilon * (1 + 1e-9) if delta == 0 else \
            (prof.delta_dp(r.epsilon) if notion == "dp" else prof.delta_pdp(r.epsilon)) <= delta * (1 + 1e-9)
        assert got, r


def test_rr_calibration_equals_holohan_closed_form():
    for eps, delta in ((0.5, 0.0), (1.0, 0.2)):
        rho = calibrate("rr", 7, Target(eps, delta), SD1)
        assert rho == pytest.approx(7 * rr_optimal_p(8, eps, delta), rel=1e-9)


def test_compare_dual_view_fixed_error_rate():
    rows = compare_at_cost(7, [1.0, 2.0], 0.3, cost="er", neighbourhood=SD1)
    for eps in (1.0, 2.0):
        at = {r.mechanism: r for r in rows if r.epsilon == eps}
        for r in at.values():
            assert r.expected_cost <= 0.3 + 1e-9
            assert at["optimal"].delta <= r.delta + 1e-7
    assert costs(build("geometric", 0.5, 7), "er", 7)[0] == pytest.approx(1 - (1 - 0.5) / (1 + 0.5) * (1 + 0.5 ** 8) / (1 - 0.5 ** 8))


def test_compare_cli_json_and_errors(tmp_path):
    res = runner.invoke(app, ["compare", "--n", "8", "--epsilons", "1,2", "--delta", "0.3", "--cost", "mse",
                              "--mechanisms", "optimal,geometric", "--boundary", "clamp", "--json",
                              "--plot", str(tmp_path / "c.png")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["rows"]) == 4 and (tmp_path / "c.png").stat().st_size > 0
    for key in ("mechanism", "epsilon", "delta", "expected_cost", "error_rate", "parameter"):
        assert key in out["rows"][0]
    for args, name in ((["--mechanisms", "laplace"], "--mechanisms"), (["--boundary", "wrap"], "--boundary"),
                       (["--epsilons", "0,1"], "--epsilons")):
        bad = runner.invoke(app, ["compare", "--n", "8", "--epsilons", "1"] + args)
        assert bad.exit_code == 2 and name in bad.output


def test_holohan_example2_sufficient_set_counts():
    """D = {0,1,2}, n = 2, u = -l1: the paper says 21 pairs need 7 checks and 15 need 63 (1,092 in all).
    Counting per ordered neighbour pair gives 24 and 12, i.e. 924 (docs/paper-notes.md)."""
    import itertools

    from optnoise.analysis import subset_check_counts, sufficient_set
    dbs = list(itertools.product(range(3), repeat=2))
    a = np.array(dbs)
    w = np.exp(-np.abs(a[:, None, :] - a[None, :, :]).sum(axis=2))
    matrix = w / w.sum(axis=1, keepdims=True)
    pairs = hamming_neighbours(dbs)
    counts = subset_check_counts(matrix, pairs)
    assert counts.pairs == 36 and counts.without == 18_360
    assert sorted(dbs[i] for i in sufficient_set(matrix, dbs.index((1, 1)), dbs.index((2, 1)))) == \
        [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]  # as printed
    assert sorted(dbs[i] for i in sufficient_set(matrix, dbs.index((0, 1)), dbs.index((2, 1)))) == \
        [(0, 0), (0, 1), (0, 2)]  # as printed
    assert counts.set_sizes.count(3) == 24 and counts.set_sizes.count(6) == 12
    assert counts.with_sufficient_sets == 924
    # the sets are sufficient: the worst subset is S itself, brute force over all 2^9 subsets
    eps = 0.4
    for x, y in pairs[:6]:
        worst = max(matrix[x, list(s)].sum() - math.exp(eps) * matrix[y, list(s)].sum()
                    for r in range(10) for s in itertools.combinations(range(9), r))
        s = sufficient_set(matrix, x, y)
        assert worst == pytest.approx(max(0.0, matrix[x, s].sum() - math.exp(eps) * matrix[y, s].sum()), abs=1e-12)
