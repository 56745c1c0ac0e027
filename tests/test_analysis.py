"""Analysis against values worked out by hand and closed forms."""

import math

import numpy as np
import pytest
from conftest import KADAM_TABLE1

from optnoise import (
    Channel,
    CyclicPMF,
    GeometricTail,
    InputPairs,
    IntegerPMF,
    InvalidParameterError,
    Neighbourhood,
    geometric,
    privacy_profile,
)
from optnoise.analysis import pairs_from_arrays
from optnoise.families import geometric_pmf, rr_pmf


# ------------------------------------------------------------- 3-point PMF
def test_three_point_pmf_by_hand():
    # f = (1/2, 1/4, 1/4) on {0,1,2}, SD 1 symmetric: both shifts give ratios (2, 1, 1/2)
    prof = privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1))
    assert prof.epsilon_pure == pytest.approx(math.log(2), abs=1e-15)
    for eps in (0.0, 0.2, 0.5):
        # only the cell with ratio 2 exceeds e^eps: 1/2 - e^eps / 4
        assert prof.delta_dp(eps) == pytest.approx(0.5 - math.exp(eps) / 4, abs=1e-15)
        assert prof.delta_pdp(eps) == pytest.approx(0.5, abs=1e-15)
    assert prof.delta_dp(0.0) == pytest.approx(0.25)  # total variation distance
    assert prof.delta_dp(math.log(2)) == pytest.approx(0.0, abs=1e-15)
    assert prof.delta_pdp(0.7) == 0.0
    # inverse: 1/2 - e^eps / 4 = 0.1  =>  eps = ln 1.6
    assert prof.epsilon_dp(0.1) == pytest.approx(math.log(1.6), abs=1e-14)
    assert prof.epsilon_pdp(0.4) == pytest.approx(math.log(2), abs=1e-15)
    assert prof.epsilon_pdp(0.5) == 0.0


def test_zero_facing_positive_mass_is_infinite_epsilon():
    prof = privacy_profile(CyclicPMF([0.7, 0.3, 0.0]), Neighbourhood.sd(1))
    assert prof.epsilon_pure == math.inf
    # shift -1 puts f(0) = 0.7 against f(-1) = f(2) = 0: that mass counts at every epsilon
    assert prof.delta_dp(50.0) == pytest.approx(0.7)
    assert prof.delta_pdp(50.0) == pytest.approx(0.7)
    assert prof.epsilon_dp(0.69) == math.inf
    assert math.isfinite(prof.epsilon_dp(0.71))
    directed = privacy_profile(CyclicPMF([0.7, 0.3, 0.0]), Neighbourhood.sd(1, directed=True))
    assert directed.delta_dp(50.0) == pytest.approx(0.3)  # shift +1: f(1) = 0.3 faces f(2) = 0


# --------------------------------------------------------- randomized response
@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("a", [0.3, 1.0, 2.5])
def test_randomized_response_closed_forms(k, a):
    # keep with p0 = e^a/(e^a+k-1), move to each other value with P = 1/(e^a+k-1)
    P = 1.0 / (math.exp(a) + k - 1)
    p0 = 1 - (k - 1) * P
    prof = privacy_profile(rr_pmf(k, P), Neighbourhood(tuple(range(1, k))))
    assert prof.epsilon_pure == pytest.approx(a, rel=1e-12)
    for eps in (0.0, a / 3, 0.9 * a):
        # rows differ only at q (ratio e^a) and q' (ratio e^-a)
        assert prof.delta_dp(eps) == pytest.approx(p0 - math.exp(eps) * P, rel=1e-12)
        assert prof.delta_pdp(eps) == pytest.approx(p0, rel=1e-12)
    assert prof.delta_dp(a * 1.0001) == 0.0 and prof.delta_pdp(a * 1.0001) == 0.0


# ---------------------------------------------------------- two-sided geometric
@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.9])
def test_geometric_epsilon_is_minus_log_alpha(alpha):
    prof = privacy_profile(geometric_pmf(alpha), Neighbourhood.sd(1))
    assert prof.epsilon_pure == pytest.approx(-math.log(alpha), rel=1e-12)
    # sensitivity 2: twice the loss
    prof2 = privacy_profile(geometric_pmf(alpha), Neighbourhood.bd(2))
    assert prof2.epsilon_pure == pytest.approx(-2 * math.log(alpha), rel=1e-12)


@pytest.mark.parametrize("alpha", [0.3, 0.7])
def test_geometric_delta_closed_form(alpha):
    # for k >= 0 the ratio p(k)/p(k+1) is 1/alpha: delta(eps) = (1 - alpha e^eps)/(1 + alpha)
    prof = privacy_profile(geometric_pmf(alpha), Neighbourhood.sd(1))
    for eps in np.linspace(0, -math.log(alpha) * 0.99, 7):
        assert prof.delta_dp(eps) == pytest.approx((1 - alpha * math.exp(eps)) / (1 + alpha), rel=1e-12)
        assert prof.delta_pdp(eps) == pytest.approx(1 / (1 + alpha), rel=1e-12)


def test_geometric_tails_equal_a_long_truncation():
    # exact tails versus an (independently built) window of +-400, where the cut mass is < 1e-60
    alpha = 0.7
    k = np.arange(-400, 401)
    long = IntegerPMF((1 - alpha) / (1 + alpha) * alpha ** np.abs(k), offset=400)
    short = geometric_pmf(alpha, half_width=2)
    nb = Neighbourhood.bd(3)
    a, b = privacy_profile(long, nb), privacy_profile(short, nb)
    for eps in (0.0, 0.3, 0.8):
        assert a.delta_dp(eps) == pytest.approx(b.delta_dp(eps), abs=1e-13)
        assert a.delta_pdp(eps) == pytest.approx(b.delta_pdp(eps), abs=1e-13)
    assert a.epsilon_dp(0.05) == pytest.approx(b.epsilon_dp(0.05), abs=1e-12)


def test_periodic_tails_equal_a_long_truncation():
    # a staircase-like PMF with period-3 tails (ratio r per block of 3)
    r, period = 0.4, 3
    base = np.array([0.5, 1.0, 0.8, 0.3, 1.0, 0.7, 0.3])
    def mass_at(x):
        # window 0..6; beyond: repeat the last block of 3 scaled by r per block
        if 0 <= x <= 6:
            return base[x]
        if x > 6:
            j = x - 7
            return base[4 + j % 3] * r ** (j // 3 + 1)
        j = -1 - x
        return base[2 - j % 3] * r ** (j // 3 + 1)
    xs = np.arange(-300, 307)
    long_w = np.array([mass_at(int(x)) for x in xs])
    total = long_w.sum()
    long = IntegerPMF(long_w / total, offset=300)
    tails = IntegerPMF(base / total, 0, left_tail=GeometricTail(r, period), right_tail=GeometricTail(r, period))
    assert tails.probs.sum() + tails.tail_mass == pytest.approx(1.0, abs=1e-12)
    nb = Neighbourhood((1, 2, 4))
    a, b = privacy_profile(long, nb), privacy_profile(tails, nb)
    # (pure epsilons differ: the truncation's edge faces zeros, the exact tails do not)
    assert math.isinf(a.epsilon_pure) and math.isfinite(b.epsilon_pure)
    for eps in (0.0, 0.5, 1.0):
        assert a.delta_dp(eps) == pytest.approx(b.delta_dp(eps), abs=1e-13)
        assert a.delta_pdp(eps) == pytest.approx(b.delta_pdp(eps), abs=1e-13)


# ------------------------------------------------------------- Kadam Table 1
@pytest.mark.parametrize("column, expected", [(0.0, 0.0), (0.1212, 0.0), (0.1238, 0.1238), (0.1522, 0.1522)])
def test_kadam_table1_columns_pdp_delta(column, expected):
    """Table 1 as mechanisms: directed {1,2,3} on {0..8}.

    The printed 4-decimal values perturb the likelihood ratios by up to 0.4%
    (e.g. f(4)/f(7) = 0.0270/0.0060 = 4.5 > e^1.5 = 4.4817), so the check is made
    at eps = 1.505, which absorbs the rounding (see docs/paper-notes.md).
    """
    pmf = CyclicPMF(KADAM_TABLE1[column], normalize=True)
    prof = privacy_profile(pmf, Neighbourhood.bd(3, directed=True))
    assert prof.delta_pdp(1.505) == pytest.approx(expected, abs=2e-4)
    # standard DP is never worse than PDP
    assert prof.delta_dp(1.505) <= prof.delta_pdp(1.505) + 1e-15


def test_kadam_table1_rounding_breaks_the_zero_at_exactly_1_5():
    pmf = CyclicPMF(KADAM_TABLE1[0.0], normalize=True)
    prof = privacy_profile(pmf, Neighbourhood.bd(3, directed=True))
    assert prof.epsilon_pure == pytest.approx(math.log(4.5), rel=1e-12)  # f(4)/f(7)
    assert prof.delta_pdp(1.5) > 0.5


# ------------------------------------------------------------ inverse maps
def test_inverse_maps_round_trip(rng):
    for _ in range(20):
        f = rng.dirichlet(np.ones(12))
        prof = privacy_profile(CyclicPMF(f), Neighbourhood.bd(2))
        for d in (0.0, 0.01, 0.1, 0.3):
            e = prof.epsilon_dp(d)
            assert prof.delta_dp(e) <= d + 1e-12
            if e > 1e-9:
                assert prof.delta_dp(e * (1 - 1e-6)) > d
            e2 = prof.epsilon_pdp(d)
            assert prof.delta_pdp(e2 * (1 + 1e-12) + 1e-15) <= d + 1e-15
            if e2 > 0:
                assert prof.delta_pdp(e2 * (1 - 1e-6)) > d  # beyond the 1e-9 ratio tolerance


def test_channel_of_cyclic_pmf_matches_cyclic_analysis():
    f = CyclicPMF([0.4, 0.3, 0.2, 0.1])
    ch = Channel(np.array([np.roll(f.probs, q) for q in range(4)]))
    pairs = InputPairs(tuple((q, (q - 1) % 4) for q in range(4)))
    a = privacy_profile(f, Neighbourhood.sd(1))
    b = privacy_profile(ch, pairs)
    for eps in (0.0, 0.3, 1.0):
        assert a.delta_dp(eps) == pytest.approx(b.delta_dp(eps), abs=1e-15)
        assert a.delta_pdp(eps) == pytest.approx(b.delta_pdp(eps), abs=1e-15)
    assert a.epsilon_pure == pytest.approx(b.epsilon_pure)


def test_vector_pmf_analysis_matches_product_of_independent_noises():
    # independent noise on each coordinate and a neighbourhood that changes one coordinate:
    # the joint ratio is the marginal ratio
    f1 = np.array([0.6, 0.25, 0.15])
    f2 = np.array([0.5, 0.3, 0.2])
    joint = CyclicPMF(np.outer(f1, f2))
    prof = privacy_profile(joint, Neighbourhood(((1, 0),), directed=True))
    m = privacy_profile(CyclicPMF(f1), Neighbourhood.sd(1, directed=True))
    for eps in (0.0, 0.5):
        assert prof.delta_dp(eps) == pytest.approx(m.delta_dp(eps), abs=1e-15)


def test_bad_epsilon_and_delta_are_rejected():
    prof = privacy_profile(CyclicPMF([0.5, 0.5]))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        prof.delta_dp(-0.1)
    with pytest.raises(InvalidParameterError, match="delta"):
        prof.epsilon_dp(1.0)
    with pytest.raises(InvalidParameterError, match="notion"):
        prof.delta(0.1, "renyi")


def test_geometric_mechanism_api():
    g = geometric(epsilon=1.0)
    rep = g.verify(epsilon=0.5, delta=0.1)
    assert rep.epsilon_pure == pytest.approx(1.0, rel=1e-12)
    assert rep.delta_dp == pytest.approx((1 - math.exp(-0.5)) / (1 + math.exp(-1)), rel=1e-12)
    # (1 - alpha e^eps)/(1 + alpha) = 0.1
    assert rep.epsilon_dp == pytest.approx(math.log((1 - 0.1 * (1 + math.exp(-1))) / math.exp(-1)), rel=1e-12)


def test_pairs_from_arrays_total_variation():
    prof = pairs_from_arrays([(np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.3, 0.5]))])
    assert prof.delta_dp(0.0) == pytest.approx(0.5)
