"""Cross-checks against Google's dp_accounting."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from optnoise import CyclicPMF, Neighbourhood, compose, geometric, privacy_profile

pytestmark = pytest.mark.dp_accounting


@pytest.mark.parametrize("probs", [
    [0.5, 0.25, 0.25],
    [0.4, 0.3, 0.2, 0.1],
    [0.6, 0.1, 0.05, 0.05, 0.2],
])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_hockey_stick_equals_dp_accounting_two_pmfs(probs, eps):
    f = np.array(probs)
    ours = privacy_profile(CyclicPMF(f), Neighbourhood.sd(1, directed=True))
    upper = {i: math.log(v) for i, v in enumerate(f)}
    lower = {i: math.log(v) for i, v in enumerate(np.roll(f, -1))}
    theirs = pld.from_two_probability_mass_functions(lower, upper, value_discretization_interval=1e-6)
    # dp_accounting rounds pessimistically on a 1e-6 loss grid
    assert theirs.get_delta_for_epsilon(eps) >= ours.delta_dp(eps) - 1e-12
    assert theirs.get_delta_for_epsilon(eps) == pytest.approx(ours.delta_dp(eps), abs=1e-5)


def test_single_release_compose_equals_tight_values():
    prof = privacy_profile(CyclicPMF([0.5, 0.2, 0.1, 0.2]), Neighbourhood.bd(2))
    c = compose(prof, 1, epsilon=0.4, delta=0.05)
    assert c.delta_dp == pytest.approx(prof.delta_dp(0.4), abs=1e-3)
    assert c.delta_dp >= prof.delta_dp(0.4) - 1e-12
    assert c.epsilon_dp == pytest.approx(prof.epsilon_dp(0.05), abs=1e-3)


def _exact_composed_geometric_delta(a: float, k: int, eps: float) -> float:
    """k-fold geometric (alpha = e^-a), shift 1: the loss is +a w.p. 1/(1+e^-a), else -a."""
    from math import comb, exp
    pp = 1 / (1 + exp(-a))
    total = 0.0
    for j in range(k + 1):  # j losses of +a
        loss = (2 * j - k) * a
        if loss > eps:
            total += comb(k, j) * pp ** j * (1 - pp) ** (k - j) * (1 - exp(eps - loss))
    return total


@pytest.mark.parametrize("k", [2, 5])
def test_composed_geometric_matches_closed_form_and_dp_accounting(k):
    g = geometric(epsilon=0.7)
    ours = g.compose(k, epsilon=1.5, delta=1e-4)
    truth = _exact_composed_geometric_delta(0.7, k, 1.5)
    ref = pld.from_discrete_laplace_mechanism(0.7, sensitivity=1).self_compose(k)
    # both PLDs are pessimistic discretisations of the same exact value
    assert ours.delta_dp >= truth - 1e-12
    assert ours.delta_dp == pytest.approx(truth, abs=1e-3)
    assert ours.delta_dp == pytest.approx(ref.get_delta_for_epsilon(1.5), abs=1e-3)
    assert ours.epsilon_dp == pytest.approx(ref.get_epsilon_for_delta(1e-4), abs=1e-2)


def test_compose_rejects_bad_k():
    from optnoise import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="invalid k"):
        compose(privacy_profile(CyclicPMF([0.5, 0.5])), 0, epsilon=1.0)


# ------------------------------------------------------------------ sequences and the pure bound
def test_composition_is_never_looser_than_the_pure_bound():
    # issue 17's defects: an exactly 1-DP mechanism composed 12 times is 12-DP (PLD alone gave inf
    # at delta = 0), and 10 releases of ln 2-DP noise never exceed 10 ln 2 (PLD alone: 6.93194)
    g = geometric(alpha=math.exp(-1.0))
    c = g.compose(12, delta=0.0)
    assert c.epsilon_dp == pytest.approx(12.0, abs=1e-12) and c.bound["epsilon_dp"] == "pure"
    half = geometric(alpha=0.5)
    # The float 10 * math.log(2) lies below 10 ln 2, where the true delta is (2/3)^10 (1 - e^(eps - 10 ln 2))
    # ~ 1.7e-19 > 0 (issue 25: bounds are proven, so no longer 0.0 there); the next float lies above it.
    ten_ln2_up = math.nextafter(10 * math.log(2), math.inf)
    c10 = half.compose(10, delta=1e-6, epsilon=ten_ln2_up)
    assert c10.epsilon_dp <= 10 * math.log(2) and c10.delta_dp == 0.0
    below = half.compose(10, epsilon=10 * math.log(2))
    assert 0.0 < below.delta_dp <= (2 / 3) ** 10 * 1e-15 and below.exact["delta_dp"]   # 10 ln 2 - eps < 1 ulp


def test_sequence_of_one_mechanism_agrees_with_self_composition():
    from optnoise.analysis.composition import compose_sequence
    g = geometric(alpha=0.6)
    for k in (2, 5):
        a = g.compose(k, epsilon=1.0, delta=1e-3)
        b = compose_sequence([(g.privacy, k)], epsilon=1.0, delta=1e-3)
        assert b.k == k and b.delta_dp == pytest.approx(a.delta_dp, abs=1e-4)
        assert b.epsilon_dp == pytest.approx(a.epsilon_dp, abs=1e-3)


def test_dominating_pld_dominates_every_pair():
    from optnoise.analysis.composition import dominating_pld
    # an asymmetric cyclic PMF: its ordered pairs have different loss distributions
    prof = privacy_profile(CyclicPMF([0.5, 0.3, 0.15, 0.05]), Neighbourhood.bd(2))
    pld_ = dominating_pld(prof)
    for eps in (0.0, 0.3, 0.9, 1.5, 2.5):
        assert pld_.get_delta_for_epsilon(eps) >= prof.delta_dp(eps) - 1e-12
        assert pld_.get_delta_for_epsilon(eps) <= prof.delta_dp(max(eps - 1e-3, 0.0)) + 1e-9  # and not loose


def test_different_mechanisms_compose_below_the_sum():
    from optnoise.analysis.composition import compose_sequence
    a = geometric(alpha=0.5).privacy                           # ln 2-DP
    b = privacy_profile(CyclicPMF([0.6, 0.2, 0.2]), Neighbourhood.sd(1))  # ln 3-DP
    total = compose_sequence([(a, 2), (b, 1)], delta=1e-6, epsilon=1.0)
    pure = 2 * math.log(2) + math.log(3)
    assert total.epsilon_dp <= pure + 1e-12 and total.counts == (2, 1) and total.k == 3
    # and the tight delta at eps = 1 is larger than each part's (composition costs privacy)
    assert total.delta_dp > a.delta_dp(1.0) and total.delta_dp > b.delta_dp(1.0)
