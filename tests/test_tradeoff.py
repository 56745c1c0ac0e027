"""The exact trade-off curve (optnoise.analysis.tradeoff) against closed forms, the duality
with the hockey-stick profile, Kairouz et al.'s optimal composition and Gaussian DP."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optnoise
from optnoise import Channel, CyclicPMF, GeometricTail, IntegerPMF, Neighbourhood, Target
from optnoise.analysis import neighbouring_pairs, pairs_from_arrays, privacy_profile
from optnoise.analysis.exact import ExactPair
from optnoise.analysis.tradeoff_composition import compose_tradeoff
from optnoise.analysis.tradeoff import (curve_from_weights, dp_tradeoff, gdp_delta, gdp_tradeoff,
                                        pure_epsilon_for_mu, tradeoff, tradeoff_of)
from optnoise.errors import InvalidParameterError


def pure_curve(r: Fraction, alpha: Fraction) -> Fraction:
    """``f_{eps,0}`` with ``e^eps = r``: ``max(0, 1 - r alpha, (1 - alpha) / r)`` (DRS eq. (5))."""
    return max(Fraction(0), 1 - r * alpha, (1 - alpha) / r)


GEO_HALF = IntegerPMF([1 / 6, 1 / 3, 1 / 6], 1, left_tail=GeometricTail(0.5, 1), right_tail=GeometricTail(0.5, 1),
                      exact=[Fraction(1, 6), Fraction(1, 3), Fraction(1, 6)])
ALPHAS = [Fraction(k, 64) for k in range(65)] + [Fraction(1, 1000), Fraction(1, 3), Fraction(7, 9)]


# ------------------------------------------------------------------ closed forms
def test_binary_randomized_response_is_the_pure_curve_exactly():
    # keep with probability 3/4: likelihood ratio 3 = e^eps, T(alpha) = f_{ln 3, 0}(alpha)
    ch = Channel([[0.75, 0.25], [0.25, 0.75]])
    t = tradeoff(ch, Neighbourhood.sd(1), exact=True)
    for alpha in ALPHAS:
        for c in t.curves:
            assert 1 - c.tpr_at(alpha) == pure_curve(Fraction(3), alpha)
    r = t.readout()
    assert r.tpr_at_fpr[0.01] == pytest.approx(0.03, abs=1e-17) and r.tpr_at_fpr[0.01] >= 0.03
    assert r.advantage == 0.5                                 # TV = 3/4 - 1/4
    assert r.posterior == 0.75                                # 3 / (1 + 3) at odds 1:1
    assert t.posterior(1 / 3)[0] == pytest.approx(0.5)        # prior odds 1:3 -> 1 / (1 + 1)
    # mu: the one inner vertex (1/4, 3/4): 2 Phi^-1(3/4), rounded up
    from scipy.special import ndtri
    assert r.mu_gdp >= 2 * ndtri(0.75) and r.mu_gdp == pytest.approx(2 * ndtri(0.75), rel=1e-15)


def test_geometric_on_z_is_the_pure_curve_exactly():
    # alpha = 1/2: masses (1/3) 2^-|k|, exact rationals in the window, exact tails (ratio 1/2)
    pmf = GEO_HALF
    t = tradeoff(pmf, Neighbourhood.sd(1), exact=True)
    assert len(t.curves) == 2
    for alpha in ALPHAS:
        for c in t.curves:
            assert 1 - c.tpr_at(alpha) == pure_curve(Fraction(2), alpha)
    # any alpha in floats: the closed form of e^-1, to rounding
    g = optnoise.geometric(epsilon=1.0)
    a = np.linspace(0, 1, 101)
    assert np.allclose(tradeoff(g.pmf, g.neighbourhood).tradeoff(a), dp_tradeoff(1.0, 0.0, a), atol=1e-15)
    assert np.allclose(tradeoff(g.pmf, g.neighbourhood, exact=True).tradeoff(a), dp_tradeoff(1.0, 0.0, a), atol=1e-15)


def test_sensitivity_two_geometric_curve_has_the_closed_form_vertices():
    # pair (p, p(. + 2)) of geometric(1/2): ratios 4 (k >= 0), 1 (k = -1), 1/4 (k <= -2);
    # vertices (P'[k>=0], P[k>=0]) = (1/6, 2/3) and (P'[k>=-1], P[k>=-1]) = (1/3, 5/6)
    t = tradeoff(GEO_HALF, Neighbourhood.sd(2), exact=True)
    c = next(c for c in t.curves if c.label == "mu=2")
    verts = {(Fraction(int(f), c.denominator), Fraction(int(s), c.denominator)) for f, s in zip(c.fpr, c.tpr)}
    assert {(Fraction(1, 6), Fraction(2, 3)), (Fraction(1, 3), Fraction(5, 6))} <= verts
    assert c.tpr_at(Fraction(1, 24)) == Fraction(1, 6)          # slope 4 from the origin
    assert c.tpr_at(Fraction(1, 4)) == Fraction(2, 3) + Fraction(1, 12)   # slope 1 after (1/6, 2/3)


# ------------------------------------------------------------------ duality (DRS Prop. 2.12)
weights = st.lists(st.integers(0, 50), min_size=2, max_size=7).filter(lambda w: sum(w) > 0)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(w=weights, distances=st.sets(st.integers(1, 6), min_size=1, max_size=3), directed=st.booleans())
def test_each_pairs_curve_is_dual_to_its_hockey_stick_both_ways(w, distances, directed):
    n = len(w) - 1
    m = tuple(d for d in distances if d <= n) or (1,)
    pmf = CyclicPMF(np.array(w, float) / sum(w), exact=[Fraction(x, sum(w)) for x in w])
    nb = Neighbourhood(m, directed)
    t = tradeoff(pmf, nb, exact=True)
    fraction_pairs, _ = neighbouring_pairs(pmf, nb, exact=True)
    assert len(fraction_pairs) == len(t.curves)
    for c, pm in zip(t.curves, fraction_pairs):
        oracle = ExactPair(pm.p, pm.q)   # the hockey-stick of the same pair, Fraction code
        ratios = sorted({pi / qi for pi, qi in zip(pm.p, pm.q) if pi and qi})
        # curve -> profile: delta(eps) = sup_alpha 1 - e^eps alpha - T(alpha)
        for e in ratios + [Fraction(1), Fraction(5, 2), Fraction(1, 3), Fraction(100)]:
            assert c.delta(e) == oracle.delta_dp_exact(e)
        # profile -> curve: T(alpha) = max(0, max over the ratios r of 1 - delta(r) - r alpha)
        inf_mass = sum((pi for pi, qi in zip(pm.p, pm.q) if pi and not qi), Fraction(0))
        for alpha in ALPHAS:
            dual = max([Fraction(0)] + [1 - oracle.delta_dp_exact(r) - r * alpha for r in ratios])
            if alpha == 0:
                dual = 1 - inf_mass
            assert 1 - c.tpr_at(alpha) == dual


@settings(max_examples=30, deadline=None)
@given(w=st.lists(st.integers(1, 1000), min_size=3, max_size=9), mu=st.integers(1, 3))
def test_float_mode_agrees_with_exact_mode(w, mu):
    pmf = CyclicPMF(np.array(w, float) / sum(w))
    nb = Neighbourhood.sd(min(mu, len(w) - 1))
    fl, ex = tradeoff(pmf, nb).readout(), tradeoff(pmf, nb, exact=True).readout()
    for a in fl.tpr_at_fpr:
        assert ex.tpr_at_fpr[a] >= fl.tpr_at_fpr[a] - 1e-15 and ex.tpr_at_fpr[a] == pytest.approx(fl.tpr_at_fpr[a], abs=1e-12)
    assert ex.mu_gdp == pytest.approx(fl.mu_gdp, rel=1e-9) and ex.advantage == pytest.approx(fl.advantage, abs=1e-12)
    # the advantage is delta_DP(0), the total variation distance
    assert ex.advantage == privacy_profile(pmf, nb, exact=True).delta_dp(0.0)


def test_near_tie_ratios_are_ordered_exactly():
    # two outputs whose ratios differ by 2^-60 (equal as float keys): the exact order puts the
    # larger ratio first, so the vertex between them is the true one
    big = 1 << 62
    p = np.array([big + 2, big + 1, 0], dtype=object)
    q = np.array([big + 1, big, 1], dtype=object)   # ratios 1 + 1/(2^62+1) < 1 + 1/2^62
    d = 2 * big + 3 + 1
    p[2], q[2] = d - p[0] - p[1], d - q[0] - q[1]
    c = curve_from_weights(p, q, d)
    assert (int(c.fpr[1]), int(c.tpr[1])) == (big, big + 1)


def test_envelope_is_above_its_hull_where_pairs_differ():
    # two pairs with different curves: the (eps, delta) profile (the conjugate of the envelope)
    # only sees the convex hull, which lets the attacker do better than either pair can
    # pair A: steep then flat, vertex (0.05, 0.5); pair B: vertex (0.5, 0.95). The hull of their
    # ROC curves takes the chord between the two vertices (slope 1): TPR 0.75 at FPR 0.3, while
    # the best test of either pair reaches 0.5 + 0.25 * 0.5 / 0.95 = 0.6316.
    pairs = [(np.array([0.5, 0.5]), np.array([0.05, 0.95])), (np.array([0.95, 0.05]), np.array([0.5, 0.5]))]
    t = tradeoff_of(pairs_from_arrays(pairs))

    def delta(e: float) -> float:   # max over the pairs of the hockey-stick, by hand
        return max(float(np.sum(np.maximum(p - e * q, 0.0))) for p, q in pairs)

    alpha = 0.3
    hull = max(1 - delta(e) - e * alpha for e in np.linspace(0.0, 20.0, 4001))
    assert t.tpr(alpha)[0] == pytest.approx(0.5 + 0.25 * 0.5 / 0.95)
    assert 1 - hull == pytest.approx(0.75, abs=1e-9)


# ------------------------------------------------------------------ composition
@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_composed_randomized_response_is_kairouz_optimal_composition(k):
    # Kairouz, Oh & Viswanath 2015, Thm. 3.3: k-fold eps-DP is exactly
    # (eps_i, delta_i) for eps_i = (k - 2i) eps, i = 0..k/2, with
    # delta_i = sum_{l < i} C(k, l) (e^{(k-l) eps} - e^{(k-2i+l) eps}) / (1 + e^eps)^k.
    # With e^eps = 3 (binary randomized response keeping 3/4) every number is rational.
    ch = Channel([[0.75, 0.25], [0.25, 0.75]])
    comp = compose_tradeoff([(privacy_profile(ch, Neighbourhood.sd(1), exact=True), k)])
    assert comp.method == "exact composition"
    for i in range(k // 2 + 1):
        delta_i = sum((math.comb(k, l) * (Fraction(3) ** (k - l) - Fraction(3) ** (k - 2 * i + l))
                       for l in range(i)), Fraction(0)) / 4 ** k
        e_i = Fraction(3) ** (k - 2 * i)
        assert max(c.delta(e_i) for c in comp.curves) == delta_i
    # and the curve is the k-fold composition's pure curve where the formula says so
    assert comp.readout().posterior == pytest.approx(3 ** k / (1 + 3 ** k))


@pytest.mark.slow
def test_dominating_composition_is_below_the_exact_one():
    # a pair with three likelihood ratios composed 6 times: exactly, and from the dominating
    # PLD (forced by a tiny state cap); the dominating attacker is never weaker
    pmf = CyclicPMF([0.5, 0.3, 0.2])
    prof = privacy_profile(pmf, Neighbourhood.sd(1), exact=True)
    exact = compose_tradeoff([(prof, 6)])
    dom = compose_tradeoff([(prof, 6)], max_states=3)
    assert exact.method == "exact composition" and dom.method == "dominating"
    a = np.linspace(0.0, 1.0, 201)
    assert np.all(dom.tradeoff(a) <= exact.tradeoff(a) + 1e-12)
    assert np.max(exact.tradeoff(a) - dom.tradeoff(a)) < 0.02
    assert dom.mu_gdp()[0] >= exact.mu_gdp()[0]


def test_heterogeneous_composition_covers_every_combination_of_pairs():
    rr = Channel([[0.75, 0.25], [0.25, 0.75]])
    items = [(privacy_profile(rr, Neighbourhood.sd(1), exact=True), 1),
             (privacy_profile(GEO_HALF, Neighbourhood.sd(1), exact=True), 2)]
    comp = compose_tradeoff(items)
    # randomized response's two ordered pairs have equal loss distributions, and so do the
    # geometric's: one combination
    assert comp.method == "exact composition" and len(comp.curves) == 1
    # each factor is pure: e^eps of the product is 3 * 2 * 2
    assert comp.readout().posterior == pytest.approx(12 / 13)


# ------------------------------------------------------------------ Gaussian DP
def test_gdp_curve_and_its_profile_are_dual():
    a = np.linspace(0.0, 1.0, 401)
    g = gdp_tradeoff(1.0, a)
    for eps in (0.0, 0.5, 1.0, 2.0):
        assert np.max(1 - math.exp(eps) * a - g) == pytest.approx(gdp_delta(1.0, eps), abs=2e-3)


@pytest.mark.parametrize("sigma", [1.0, 2.0, 3.0])
def test_mu_of_the_discrete_gaussian_against_the_continuous_bound(sigma):
    # N_Z(0, sigma^2) against N_Z(1, sigma^2). The continuous Gaussian is exactly 1/sigma-GDP
    # (every vertex gives 1/sigma); the discrete one is *not*: its central vertex
    # (F(-1), F(0)) gives more, and its total variation p(0) exceeds 2 Phi(1/(2 sigma)) - 1
    # (docs/paper-notes.md). Checked against a 60-digit mpmath computation of that vertex.
    from mpmath import mp, mpf, erfinv, exp, ncdf, sqrt
    k = np.arange(-int(12 * sigma) - 3, int(12 * sigma) + 4)
    w0, w1 = np.exp(-k ** 2 / (2 * sigma ** 2)), np.exp(-(k - 1) ** 2 / (2 * sigma ** 2))
    p, q = w0 / w0.sum(), w1 / w1.sum()
    t = tradeoff_of(pairs_from_arrays([(p, q), (q, p)]))
    mu = t.mu_gdp()[0]
    mp.dps = 60
    z = {j: exp(-mpf(j) ** 2 / (2 * mpf(sigma) ** 2)) for j in range(-80, 81)}
    total = sum(z.values())
    f0, fm1 = sum(z[j] for j in range(-80, 1)) / total, sum(z[j] for j in range(-80, 0)) / total
    central = float(sqrt(2) * (erfinv(2 * f0 - 1) - erfinv(2 * fm1 - 1)))
    mp.dps = 15
    assert mu == pytest.approx(central, rel=1e-9)
    assert mu > 1 / sigma                                    # worse than the continuous bound ...
    assert mu * sigma - 1 < {1.0: 0.05, 2.0: 0.011, 3.0: 0.005}[sigma]   # ... and converging to it
    adv = t.advantage()[0]
    assert adv == pytest.approx(float(z[0] / total), rel=1e-9) and adv > float(2 * ncdf(0.5 / sigma) - 1)


def test_pure_epsilon_for_mu_is_the_vertex_rule_inverted():
    from mpmath import mp, mpf, erfinv, exp, sqrt
    mp.dps = 50
    for mu in (0.5, 1.0, 3.0):
        eps = pure_epsilon_for_mu(mu)
        r = exp(mpf(eps))
        vertex = 2 * sqrt(2) * erfinv(2 * r / (1 + r) - 1)   # 2 Phi^-1(e^eps / (1 + e^eps))
        assert vertex <= mu and float(vertex) == pytest.approx(mu, rel=1e-14)
    mp.dps = 15


# ------------------------------------------------------------------ attack targets
def test_attack_target_meets_on_the_exact_curve():
    geo = optnoise.geometric(epsilon=1.0)
    ok = Target.attack(max_tpr=0.028, at_fpr=0.01)      # TPR = e * 0.01 = 0.02718...
    tight = Target.attack(max_tpr=0.027, at_fpr=0.01)
    assert geo.meets(ok, exact=True) and not geo.meets(tight, exact=True)
    assert geo.meets(Target.attack(max_mu=1.24), exact=True) and not geo.meets(Target.attack(max_mu=1.2))
    assert Target.from_json(ok.to_json()) == ok
    with pytest.raises(InvalidParameterError, match="max_tpr"):
        Target.attack(max_tpr=0.01, at_fpr=0.05)
    with pytest.raises(InvalidParameterError):
        Target.attack(at_fpr=0.05)
    with pytest.raises(InvalidParameterError):
        ok.admits(0.0, 0.0, exact=True)
