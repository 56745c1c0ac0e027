"""Rényi DP, zCDP, RDP -> DP conversion and composition (optnoise.analysis.renyi, .composition).

Oracles: values worked out by hand, closed forms derived independently of the code
(geometric, discrete Gaussian via theta sums in mpmath), brute-force products of
small PMFs, and Google's dp_accounting.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from optnoise.analysis import FloatPair, LossDistribution, pairs_from_arrays, privacy_profile
from optnoise.analysis.composition import compose_best, delta_curve, dominating_pld, hockey_sticks
from optnoise.families import geometric_pmf, rr_pmf
from optnoise.neighbourhood import Neighbourhood
from optnoise.pmf import CyclicPMF
from optnoise.analysis.renyi import rdp_to_delta, rdp_to_dp, renyi_curve, renyi_divergence, zcdp_rho

INF = math.inf


def _ld(p, q) -> LossDistribution:
    return FloatPair(np.asarray(p, float), np.asarray(q, float)).loss_distribution()


def _direct_renyi(p, q, alpha) -> float:
    """Oracle: D_alpha from the definition, in mpmath at 50 digits, output by output."""
    mpmath.mp.dps = 50
    s = mpmath.fsum(mpmath.mpf(a) ** alpha * mpmath.mpf(b) ** (1 - alpha) for a, b in zip(p, q) if a > 0)
    return float(mpmath.log(s) / (alpha - 1))


# ------------------------------------------------------------------------- by hand
def test_binary_randomized_response_by_hand():
    # p = (3/4, 1/4), p' = (1/4, 3/4): eps = ln 3.
    prof = privacy_profile(rr_pmf(2, 0.25), Neighbourhood.sd(1))
    d2, d_inf, kl, d_half = renyi_curve(prof, [2.0, INF, 1.0, 0.5])
    # D_2 = log(sum p^2/q) = log(9/4 + 1/12) = log(7/3)
    assert d2 == pytest.approx(math.log(7 / 3), rel=1e-14)
    assert d_inf == pytest.approx(math.log(3), rel=1e-14)
    # KL = (3/4 - 1/4) ln 3
    assert kl == pytest.approx(math.log(3) / 2, rel=1e-14)
    # D_1/2 = -2 log(sum sqrt(p q)) = -2 log(2 sqrt(3)/4)
    assert d_half == pytest.approx(-2 * math.log(math.sqrt(3) / 2), rel=1e-13)


def test_three_point_pmf_by_hand():
    # p = (1/2, 1/4, 1/4), p' = (1/4, 1/4, 1/2)
    ld = _ld([0.5, 0.25, 0.25], [0.25, 0.25, 0.5])
    assert renyi_divergence(ld, 2) == pytest.approx(math.log(11 / 8), rel=1e-14)       # 1 + 1/4 + 1/8
    assert renyi_divergence(ld, 3) == pytest.approx(0.5 * math.log(37 / 16), rel=1e-14)  # 2 + 1/4 + 1/16
    assert renyi_divergence(ld, INF) == pytest.approx(math.log(2), rel=1e-14)
    assert renyi_divergence(ld, 1) == pytest.approx(math.log(2) / 4, rel=1e-14)        # 1/2 ln 2 - 1/4 ln 2


def test_grouped_losses_equal_the_ungrouped_sum():
    # two outputs share the loss ln 2: grouping must not change anything
    p, q = [0.2, 0.2, 0.6], [0.1, 0.1, 0.8]
    ld = _ld(p, q)
    assert ld.losses.size == 2
    for a in (0.3, 0.5, 1.5, 2.0, 7.25, 40.0):
        assert renyi_divergence(ld, a) == pytest.approx(_direct_renyi(p, q, a), rel=1e-13)


def test_infinite_mass():
    ld = _ld([0.5, 0.5], [1.0, 0.0])   # p has mass where p' = 0
    assert renyi_divergence(ld, 1.5) == INF
    assert renyi_divergence(ld, 1.0) == INF
    assert renyi_divergence(ld, INF) == INF
    # order 1/2: -2 log(sqrt(1/2 * 1)) = log 2; the infinite-loss output contributes 0
    assert renyi_divergence(ld, 0.5) == pytest.approx(math.log(2), rel=1e-14)


def test_rejects_bad_orders():
    ld = _ld([0.5, 0.5], [0.25, 0.75])
    for bad in (0, -1, float("nan"), "x"):
        with pytest.raises(ValueError):
            renyi_divergence(ld, bad)


# ------------------------------------------------------------------ closed forms
def _geometric_closed_form(a: float, delta: int, alpha: float) -> float:
    """D_alpha of p(k) = (1-a)/(1+a) a^|k| against its shift by delta (derivation in the report).

    sum_k p(k)^alpha p(k+delta)^(1-alpha) splits into k >= 0 (loss delta eps), k <= -delta
    (loss -delta eps) and 0 < -k < delta:
      [a^((1-alpha) delta) + a^(alpha delta)] / (1 + a)
      + (1-a)/(1+a) a^((1-alpha) delta) sum_{j=1}^{delta-1} a^((2 alpha - 1) j).
    """
    s = (a ** ((1 - alpha) * delta) + a ** (alpha * delta)) / (1 + a)
    s += (1 - a) / (1 + a) * a ** ((1 - alpha) * delta) * sum(a ** ((2 * alpha - 1) * j) for j in range(1, delta))
    return math.log(s) / (alpha - 1)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1, 2, 3])
def test_geometric_renyi_curve_against_closed_form(eps, delta):
    a = math.exp(-eps)
    prof = privacy_profile(geometric_pmf(a), Neighbourhood.sd(delta))
    orders = [0.5, 1.01, 1.5, 2.0, 3.7, 10.0, 50.0]
    got = renyi_curve(prof, orders)
    want = [_geometric_closed_form(a, delta, al) for al in orders]
    np.testing.assert_allclose(got, want, rtol=1e-11)
    # alpha -> inf is the pure epsilon delta * eps
    assert renyi_curve(prof, [INF])[0] == pytest.approx(delta * eps, rel=1e-12)


def test_wrong_geometric_closed_form_is_detected():
    """Power: the same check rejects the continuous Laplace formula (Mironov Prop. 6)."""
    eps, alpha = 1.0, 2.0
    laplace = eps + math.log1p((alpha - 1) * math.expm1((1 - 2 * alpha) * eps) / (2 * alpha - 1)) / (alpha - 1)
    prof = privacy_profile(geometric_pmf(math.exp(-eps)), Neighbourhood.sd(1))
    assert abs(renyi_curve(prof, [alpha])[0] - laplace) > 1e-3


def _dg_pair(sigma: float, shift: int):
    """Discrete Gaussian and its shift on a window where every mass is a normal float
    (|k| <= 30 sigma: masses >= e^-450); the omitted tail is below e^-450."""
    w = int(30 * sigma) + 1
    k = np.arange(-w, w + 1)
    z = float(np.sum(np.exp(-np.arange(-40 * w, 40 * w + 1) ** 2 / (2 * sigma ** 2))))
    return np.exp(-k ** 2 / (2 * sigma ** 2)) / z, np.exp(-(k + shift) ** 2 / (2 * sigma ** 2)) / z


def _dg_theta(sigma: float, shift: int, alpha: float) -> float:
    """Oracle: D_alpha = alpha D^2/(2 s^2) + log(Z((1-alpha) D) / Z(0)) / (alpha - 1),
    Z(c) = sum_k exp(-(k + c)^2 / (2 s^2)) (complete the square), by mpmath."""
    mpmath.mp.dps = 40
    def z(c):
        return mpmath.nsum(lambda k: mpmath.exp(-(k + c) ** 2 / (2 * sigma ** 2)), [-mpmath.inf, mpmath.inf])
    c = (1 - alpha) * shift
    return float(alpha * shift ** 2 / (2 * sigma ** 2) + mpmath.log(z(c) / z(0)) / (alpha - 1))


@pytest.mark.parametrize("sigma,shift", [(0.5, 1), (0.8, 2), (2.0, 1)])
def test_discrete_gaussian_integer_orders_exact_and_smaller_between(sigma, shift):
    p, q = _dg_pair(sigma, shift)
    prof = pairs_from_arrays([(p, q)])
    rho = shift ** 2 / (2 * sigma ** 2)
    for alpha in (2.0, 3.0, 5.0):
        assert renyi_curve(prof, [alpha])[0] == pytest.approx(alpha * rho, rel=1e-12)   # CKS 2020
    for alpha in (1.5, 2.5, 3.3):
        got = renyi_curve(prof, [alpha])[0]
        assert got == pytest.approx(_dg_theta(sigma, shift, alpha), rel=1e-10, abs=1e-14)
        assert got <= alpha * rho * (1 + 1e-13)
    if sigma < 1:   # visible deficit at small sigma where (1 - alpha) shift is a half-integer
        half = 1 + 1.5 / shift
        assert renyi_curve(prof, [half])[0] < half * rho * (1 - 1e-7)
    z = zcdp_rho(prof)
    assert z.rho == pytest.approx(rho, rel=1e-7)
    assert z.upper >= rho * (1 - 1e-12)


def test_alpha_infinity_is_pure_epsilon_and_curve_is_monotone(rng):
    for _ in range(5):
        f = rng.dirichlet(np.ones(7))
        prof = privacy_profile(CyclicPMF(f), Neighbourhood.bd(2, directed=True))
        curve = renyi_curve(prof, [1.0, 1.5, 2, 4, 16, 256, 1e5, INF])
        assert curve[-1] == pytest.approx(prof.epsilon_pure, rel=1e-13)
        assert np.all(np.diff(curve) >= -1e-13)
        assert curve[-2] == pytest.approx(curve[-1], rel=1e-3)   # alpha = 1e5 is near the limit


def test_zcdp_of_pure_mechanisms_is_their_kl():
    """Randomized response: sup_alpha D_alpha/alpha is the limit alpha -> 1 (the KL), which is
    eps tanh(eps/2) for binary RR (Steinke, 'Tight RDP & zCDP bounds from pure DP')."""
    for eps in (0.3, 1.0, 2.5):
        p = 1 / (1 + math.exp(eps))
        prof = privacy_profile(rr_pmf(2, p), Neighbourhood.sd(1))
        z = zcdp_rho(prof)
        assert z.rho == pytest.approx(eps * math.tanh(eps / 2), rel=1e-9)
        dense = np.concatenate((1 + np.geomspace(1e-6, 1e3, 4000), [1e6]))
        assert np.max(renyi_curve(prof, dense) / dense) <= z.upper * (1 + 1e-12)


def test_zcdp_attained_inside_is_found():
    """A pair whose D_alpha/alpha peaks at an interior order (checked on a dense grid): the
    slope of D_alpha/alpha at 1 is Var_P(L)/2 - KL > 0 here (a rare output with loss ln 100)."""
    p = np.array([0.01, 0.99])
    q = np.array([1e-4, 1 - 1e-4])
    prof = pairs_from_arrays([(p, q)])
    z = zcdp_rho(prof)
    assert 2.0 < z.alpha < 6.0
    dense = 1 + np.geomspace(1e-7, 1e4, 20000)
    grid_max = float(np.max(renyi_curve(prof, dense) / dense))
    assert z.upper >= grid_max * (1 - 1e-14)        # the certified bound is above every evaluation
    assert z.rho >= grid_max * (1 - 1e-7)           # and the value is within rtol of it
    assert z.rho <= grid_max * (1 + 1e-5)
    assert z.upper <= z.rho * (1 + 1e-6)


# ------------------------------------------------------------------ conversion
def test_rdp_to_dp_by_hand_and_against_dp_accounting():
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta, compute_epsilon
    orders = [1.5, 2.0, 4.0, 16.0]
    taus = [0.1, 0.2, 0.5, 1.7]
    delta = 1e-6
    eps, a = rdp_to_dp(orders, taus, delta)
    by_hand = [t + math.log((al - 1) / al) - (math.log(delta) + math.log(al)) / (al - 1) for al, t in zip(orders, taus)]
    assert eps == pytest.approx(min(by_hand), rel=1e-14)
    assert a == orders[int(np.argmin(by_hand))]
    assert eps == pytest.approx(compute_epsilon(orders, taus, delta)[0], rel=1e-12)
    d, _ = rdp_to_delta(orders, taus, eps)
    assert d == pytest.approx(delta, rel=1e-9)            # the inverse of the same bound
    assert d == pytest.approx(compute_delta(orders, taus, eps)[0], rel=1e-9)
    # order inf: pure DP, valid at delta = 0
    assert rdp_to_dp([2.0, INF], [0.5, 3.0], 0.0) == (3.0, INF)
    assert rdp_to_delta([INF], [3.0], 3.0)[0] == 0.0


def test_rdp_conversion_is_an_upper_bound_of_the_tight_epsilon(rng):
    for _ in range(5):
        f = rng.dirichlet(np.ones(6))
        prof = privacy_profile(CyclicPMF(f), Neighbourhood.sd(1))
        orders = [1.25, 1.5, 2, 3, 5, 8, 16, 64, INF]
        for delta in (1e-2, 1e-4):
            eps_rdp, _ = rdp_to_dp(orders, renyi_curve(prof, orders), delta)
            assert eps_rdp >= prof.epsilon_dp(delta) - 1e-12


@pytest.mark.dp_accounting
def test_k_ary_randomized_response_against_dp_accounting_rdp():
    """dp_accounting's RDP accountant for RandomizedResponseDpEvent (REPLACE_ONE) has the rows
    (1 - p + p/k, p/k, ...) and (p/k, 1 - p + p/k, ...): our K-ary RR with P = p/k."""
    from dp_accounting import dp_event
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
    from dp_accounting.privacy_accountant import NeighboringRelation
    orders = [1.5, 2.0, 3.0, 5.0, 10.0, 32.0]
    for kk, noise, count in ((3, 0.4, 5), (5, 0.7, 20)):
        acc = RdpAccountant(orders, neighboring_relation=NeighboringRelation.REPLACE_ONE)
        acc.compose(dp_event.RandomizedResponseDpEvent(noise, kk), count)
        prof = privacy_profile(rr_pmf(kk, noise / kk), Neighbourhood.sd(1))
        ours = count * renyi_curve(prof, orders)
        np.testing.assert_allclose(ours, acc._rdp, rtol=1e-10)   # noqa: SLF001 (cross-check only)
        assert rdp_to_dp(orders, ours, 1e-6)[0] == pytest.approx(acc.get_epsilon(1e-6), rel=1e-10)


# ------------------------------------------------------------------ composition
def test_issue_geometric_one_over_e_composed_12_times_at_delta_0_is_12():
    prof = privacy_profile(geometric_pmf(0.36787944117144233), Neighbourhood.sd(1))
    c = compose_best([(prof, 12)], delta=0.0)
    assert c.epsilon_dp == pytest.approx(12.0, rel=1e-12)
    assert c.candidate("pld").epsilon == INF          # the defect this fixes
    assert c.candidate("pure").epsilon == pytest.approx(12.0, rel=1e-12)


def test_issue_geometric_half_composed_10_times_never_above_10_ln_2():
    prof = privacy_profile(geometric_pmf(0.5), Neighbourhood.sd(1))
    c = compose_best([(prof, 10)], delta=1e-6)
    assert c.epsilon_dp <= 10 * math.log(2)
    # by hand: the loss is +-ln 2 with P(+) = 2/3; only the all-plus state (loss 10 ln 2,
    # mass (2/3)^10, p' mass (1/3)^10) exceeds eps in (8 ln 2, 10 ln 2), so
    # delta = (2/3)^10 - e^eps (1/3)^10, i.e. e^eps = 2^10 - delta 3^10.
    assert c.epsilon_dp == pytest.approx(math.log(1024 - 1e-6 * 3 ** 10), rel=1e-12)
    assert c.epsilon_bound == "exact"
    assert c.candidate("pld").epsilon > 10 * math.log(2)   # pessimistic grid: 6.93194


def _brute_delta(pairs_with_counts, eps: float) -> float:
    """Oracle: hockey-stick of the explicit product distribution over all output tuples."""
    ps, qs = [np.array([1.0])], [np.array([1.0])]
    for (p, q), k in pairs_with_counts:
        for _ in range(k):
            ps.append(np.asarray(p, float))
            qs.append(np.asarray(q, float))
    big_p = ps[0]
    big_q = qs[0]
    for p, q in zip(ps[1:], qs[1:]):
        big_p = np.outer(big_p, p).ravel()
        big_q = np.outer(big_q, q).ravel()
    return float(np.sum(np.clip(big_p - math.exp(eps) * big_q, 0, None)))


def test_exact_enumeration_matches_brute_force_product():
    f = np.array([0.5, 0.3, 0.2])
    prof = privacy_profile(CyclicPMF(f), Neighbourhood.sd(1, directed=True))
    q = np.roll(f, -1)
    for eps in (0.0, 0.7, 2.0):
        c = compose_best([(prof, 5)], epsilon=eps)
        truth = _brute_delta([((f, q), 5)], eps)
        assert c.candidate("exact").delta == pytest.approx(truth, rel=1e-12, abs=1e-15)
        assert c.candidate("pld").delta >= truth - 1e-12            # pessimistic
        assert c.candidate("pld").delta == pytest.approx(truth, abs=2e-3)
        assert c.delta_dp == pytest.approx(truth, rel=1e-12, abs=1e-15)
        for cand in c.candidates:                                    # every bound is an upper bound
            if cand.delta is not None:
                assert cand.delta >= truth - 1e-12


def test_heterogeneous_composition_covers_every_pair_combination():
    """Two directed mechanisms with two pairs each: the bound is the maximum over the four
    combinations of the brute-force product (each mechanism keeps its pair in its releases)."""
    f = np.array([0.6, 0.25, 0.15])
    g = np.array([0.45, 0.1, 0.2, 0.25])
    nb = Neighbourhood((1, 2), directed=True)
    pf, pg = privacy_profile(CyclicPMF(f), nb), privacy_profile(CyclicPMF(g), nb)
    f_pairs = [(f, np.roll(f, -1)), (f, np.roll(f, -2))]
    g_pairs = [(g, np.roll(g, -1)), (g, np.roll(g, -2))]
    for eps in (0.3, 1.2):
        truth = max(_brute_delta([(a, 2), (b, 3)], eps) for a in f_pairs for b in g_pairs)
        c = compose_best([(pf, 2), (pg, 3)], epsilon=eps)
        assert c.candidate("exact").delta == pytest.approx(truth, rel=1e-11, abs=1e-15)
        assert c.candidate("pld").delta >= truth - 1e-12
        # with enumeration disabled, dominating pairs replace the items: still an upper bound
        d = compose_best([(pf, 2), (pg, 3)], epsilon=eps, max_combinations=1, methods=("exact", "pld"))
        assert d.delta_dp >= truth - 1e-12
        assert d.delta_dp <= truth + 0.2


def test_dominating_pld_dominates_at_every_gamma(rng):
    lds = []
    for _ in range(4):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        lds.append(_ld(p, q))
    lds.append(_ld([0.5, 0.3, 0.2, 0.0], [0.0, 0.3, 0.3, 0.4]))   # infinite loss both ways
    grid = 1e-4
    dom = dominating_pld(lds, grid)
    # all the mass of p is accounted for (finite losses plus the infinite-loss mass)
    assert dom.get_delta_for_epsilon(-40.0) == pytest.approx(1.0, abs=1e-12)

    def hs(ld, lam):
        return ld.infinite_mass + float(np.sum(np.clip(ld.p_mass - math.exp(lam) * ld.q_mass, 0, None)))
    for lam in np.linspace(-4, 4, 161):
        top = max(hs(ld, lam) for ld in lds)
        assert dom.get_delta_for_epsilon(lam) >= top - 1e-12
    # equal at every breakpoint, up to rounding the breakpoint up to the loss grid
    for lam in np.concatenate([ld.losses for ld in lds]):
        up = math.ceil(lam / grid - 1e-9) * grid
        assert dom.get_delta_for_epsilon(up) == pytest.approx(max(hs(ld, up) for ld in lds), abs=1e-12)
    # one pair: its own Connect-the-Dots PLD, equal to the pair at its (rounded) losses
    single = dominating_pld(lds[:1], grid)
    for lam in lds[0].losses:
        up = math.ceil(lam / grid - 1e-9) * grid
        assert single.get_delta_for_epsilon(up) == pytest.approx(hs(lds[0], up), abs=1e-12)
        assert single.get_delta_for_epsilon(lam) >= hs(lds[0], lam) - 1e-12
    np.testing.assert_allclose(hockey_sticks(lds, np.array([0.1, 0.5])),
                               [max(hs(ld, x) for ld in lds) for x in (0.1, 0.5)], rtol=1e-13, atol=1e-15)


def test_pure_heterogeneous_sum_at_delta_0():
    a = privacy_profile(geometric_pmf(math.exp(-0.5)), Neighbourhood.sd(1))
    b = privacy_profile(rr_pmf(3, Fraction(1, 5)), Neighbourhood.sd(1))
    c = compose_best([(a, 3), (b, 4)], delta=0.0)
    assert c.epsilon_dp == pytest.approx(3 * 0.5 + 4 * math.log(3), rel=1e-12)   # RR: (3/5)/(1/5)


@pytest.mark.slow
def test_composition_never_above_the_simple_bounds(rng):
    for _ in range(2):
        f = rng.dirichlet(np.ones(6))
        prof = privacy_profile(CyclicPMF(f), Neighbourhood.sd(1))
        for k in (1, 7, 40):
            c = compose_best([(prof, k)], epsilon=1.0, delta=1e-5)
            assert c.epsilon_dp <= k * prof.epsilon_pure + 1e-12
            assert c.epsilon_dp <= c.candidate("rdp").epsilon + 1e-12
            assert c.epsilon_dp <= c.candidate("pld").epsilon + 1e-12
            assert c.delta_dp <= c.candidate("rdp").delta + 1e-15
            if k == 1:   # one release: the exact enumeration is the single-release analysis
                assert c.epsilon_dp == pytest.approx(prof.epsilon_dp(1e-5), rel=1e-12, abs=1e-12)


def test_delta_curve_is_an_upper_bound_and_decreasing():
    prof = privacy_profile(geometric_pmf(math.exp(-0.4)), Neighbourhood.sd(1))
    eps = np.linspace(0, 5, 11)
    _, deltas = delta_curve([(prof, 8)], eps)
    assert np.all(np.diff(deltas) <= 1e-15)
    for e, d in zip(eps, deltas):
        assert d >= compose_best([(prof, 8)], epsilon=float(e), methods=("exact",)).delta_dp - 1e-12


def test_compose_best_rejects_bad_items():
    prof = privacy_profile(geometric_pmf(0.5), Neighbourhood.sd(1))
    with pytest.raises(ValueError):
        compose_best([], delta=1e-6)
    with pytest.raises(ValueError):
        compose_best([(prof, 0)], delta=1e-6)
    with pytest.raises(ValueError):
        compose_best([(prof, 2)])
    with pytest.raises(ValueError):
        compose_best([("x", 2)], delta=1e-6)


# ------------------------------------------------------------------ the discrete Gaussian family
def _dg_direct(sigma: float, shift: int, alpha: float) -> float:
    """Oracle independent of the closed form: the definition summed term by term in mpmath,
    sum_k w(k)^alpha w(k + D)^(1 - alpha) / Z0 with w(k) = exp(-k^2 / 2 sigma^2), over a range
    holding the bulk of the sum (centred at (alpha - 1) D) and of Z0, +-60 sigma."""
    mpmath.mp.dps = 50
    s2 = 2 * mpmath.mpf(sigma) ** 2
    reach = int(abs(alpha - 1) * shift + 60 * sigma + 10)
    ks = range(-reach, reach + 1)
    z0 = mpmath.fsum(mpmath.exp(-mpmath.mpf(k) ** 2 / s2) for k in ks)
    s = mpmath.fsum(mpmath.exp(-(alpha * mpmath.mpf(k) ** 2 + (1 - alpha) * mpmath.mpf(k + shift) ** 2) / s2)
                    for k in ks)
    return float(mpmath.log(s / z0) / (alpha - 1))


@pytest.mark.parametrize("sigma,shift", [(0.4, 1), (0.7, 2), (1.5, 1), (3.0, 3)])
def test_discrete_gaussian_closed_form(sigma, shift):
    from optnoise.families.baselines import discrete_gaussian_divergence
    rho = shift ** 2 / (2 * sigma ** 2)
    for alpha in (2.0, 3.0, 5.0, 17.0):                        # integer orders: exactly alpha rho (CKS 2020)
        assert discrete_gaussian_divergence(sigma, shift, alpha) == pytest.approx(alpha * rho, rel=1e-13)
    for alpha in (0.5, 1.5, 2.25, 3.7, 40.5):                  # any order: the definition, summed independently
        got = discrete_gaussian_divergence(sigma, shift, alpha)
        assert got == pytest.approx(_dg_direct(sigma, shift, alpha), rel=1e-11)
        if alpha > 1:   # below alpha rho above order 1 (above it below order 1: the log term changes sign)
            assert got <= alpha * rho * (1 + 1e-14)
    assert discrete_gaussian_divergence(sigma, shift, 1.0) == pytest.approx(rho, rel=1e-15)   # KL
    assert discrete_gaussian_divergence(sigma, shift, INF) == INF
    if sigma < 1:   # power: strictly below alpha rho where (alpha - 1) shift is not an integer
        half = 1 + 0.5 / shift
        assert discrete_gaussian_divergence(sigma, shift, half) < half * rho * (1 - 1e-4)


def test_discrete_gaussian_family_renyi_report():
    """verify --renyi on the family: the closed form (the family on Z), and beside it the curve of
    the represented window, infinite at every order > 1 (the window's edge faces zeros)."""
    from optnoise.families import parse_family, renyi_analysis
    sigma = 1.3
    _, pmf = parse_family(f"discrete-gaussian:{sigma}")
    prof = privacy_profile(pmf, Neighbourhood.bd(2))
    orders = [0.5, 1.0, 1.5, 2.0, 4.0, INF]
    rep = renyi_analysis(prof, orders, family=f"discrete-gaussian:{sigma}")
    rho = 4 / (2 * sigma ** 2)                                 # the worst distance is 2
    assert rep.zcdp.rho == pytest.approx(rho, rel=1e-15) and rep.zcdp.upper == rep.zcdp.rho
    assert rep.epsilons[3] == pytest.approx(2 * rho, rel=1e-13) and rep.epsilons[4] == pytest.approx(4 * rho, rel=1e-13)
    assert rep.epsilons[2] == pytest.approx(_dg_direct(sigma, 2, 1.5), rel=1e-11)
    assert rep.epsilons[-1] == INF and rep.basis.startswith("closed form")
    assert all(v == INF for v in rep.represented[1:])          # KL included: the edge's mass faces zero
    # below order 1 the window's missing tail (below e^-800) changes nothing
    assert rep.represented[0] == pytest.approx(rep.epsilons[0], rel=1e-10)
    js = rep.to_json()
    assert js["renyi"]["2"] == rep.epsilons[3] and js["renyi_represented"]["2"] == INF and "renyi_note" in js
    # without the family name (a mechanism file of the window) the loss distributions speak
    plain = renyi_analysis(prof, orders)
    assert plain.basis == "loss distributions" and plain.epsilons[3] == INF and plain.zcdp.rho == INF
    # a non-integer centre has no shift-invariant closed form here: the window is analysed
    off = renyi_analysis(privacy_profile(parse_family(f"discrete-gaussian:{sigma},0.5")[1], Neighbourhood.sd(1)),
                         orders, family=f"discrete-gaussian:{sigma},0.5")
    assert off.basis == "loss distributions"


@pytest.mark.dp_accounting
def test_discrete_gaussian_against_dp_accounting():
    """Where they overlap: dp_accounting's RDP accountant for the Gaussian (noise multiplier sigma/D)
    has alpha D^2 / (2 sigma^2) at every order, equal to the discrete Gaussian at integer orders and
    above it elsewhere; its conversion to epsilon is the same; and its discrete-Gaussian PLD agrees
    with the composition of the family as represented."""
    from dp_accounting import dp_event
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    from optnoise.families import parse_family, renyi_analysis
    sigma, shift, k = 0.8, 1, 6
    _, pmf = parse_family(f"discrete-gaussian:{sigma}")
    prof = privacy_profile(pmf, Neighbourhood.sd(shift))
    ints = [2.0, 3.0, 4.0, 8.0, 16.0, 32.0]
    ours = np.array(renyi_analysis(prof, ints, family=f"discrete-gaussian:{sigma}").epsilons)
    acc = RdpAccountant(ints)
    acc.compose(dp_event.GaussianDpEvent(sigma / shift), k)
    assert rdp_to_dp(ints, k * ours, 1e-6)[0] == pytest.approx(acc.get_epsilon(1e-6), rel=1e-12)
    halves, sigma_h = [1.5, 2.5, 4.5], 0.5                   # a small sigma makes the deficit visible
    prof_h = privacy_profile(parse_family(f"discrete-gaussian:{sigma_h}")[1], Neighbourhood.sd(shift))
    ours_h = np.array(renyi_analysis(prof_h, halves, family=f"discrete-gaussian:{sigma_h}").epsilons)
    acc_h = RdpAccountant(halves)
    acc_h.compose(dp_event.GaussianDpEvent(sigma_h / shift), k)
    assert rdp_to_dp(halves, k * ours_h, 1e-6)[0] < acc_h.get_epsilon(1e-6) - 1e-3
    sigma_p = 3.0                                             # a wide sigma keeps the loss range (and the PLD) small
    prof_p = privacy_profile(parse_family(f"discrete-gaussian:{sigma_p}")[1], Neighbourhood.sd(shift))
    theirs = pld_lib.from_discrete_gaussian_mechanism(sigma_p, sensitivity=shift).self_compose(k)
    c = compose_best([(prof_p, k)], epsilon=1.0, delta=1e-6, methods=("pld",))
    assert c.delta_dp == pytest.approx(theirs.get_delta_for_epsilon(1.0), abs=2e-4)
    assert c.epsilon_dp == pytest.approx(theirs.get_epsilon_for_delta(1e-6), abs=2e-2)
