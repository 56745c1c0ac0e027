"""Issue 25, item 1: every composition candidate is a proven upper bound.

The oracle is Kairouz, Oh & Viswanath's exact optimal composition (ICML 2015, Theorem 3.3),
attained by binary randomized response and (its privacy loss being the same two-point law)
by the geometric mechanism at sensitivity 1, computed here in 60-digit mpmath:

    delta(eps) = sum_l C(K, l) max(0, e^((K - l) e0) - e^(eps + l e0)) / (1 + e^e0)^K

with ``e0`` the single-release loss; written with the mechanism's own two masses ``m0 > m1``
(``e^e0 = m0 / m1``) so that it holds exactly for the float masses analysed.
"""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from optnoise import IntegerPMF, Mechanism, Neighbourhood
from optnoise.analysis import privacy_profile
from optnoise.analysis.composition import compose_best, dominating_pld
from optnoise.families.rr import rr_pmf
from optnoise.pmf import GeometricTail

DPS = 60


def kairouz_delta(m0, m1, k: int, eps) -> mp.mpf:
    """Theorem 3.3 of Kairouz et al. for a two-point loss with masses ``m0 > m1`` (p-mass of
    the positive and negative loss), at any ``eps``, in 60-digit arithmetic."""
    with mp.workdps(DPS):
        m0, m1 = mp.mpf(m0), mp.mpf(m1)
        e0 = mp.log(m0 / m1)
        total = mp.mpf(0)
        for l in range(k + 1):
            term = mp.e ** ((k - l) * e0) - mp.e ** (mp.mpf(eps) + l * e0)
            if term <= 0:
                break
            total += mp.binomial(k, l) * term
        return total * m1 ** k


def kairouz_epsilon(m0, m1, k: int, delta) -> mp.mpf:
    """The smallest eps with ``kairouz_delta <= delta``: on the segment where the first ``i``
    terms are positive, ``delta = m1^K (A_i - e^eps B_i)`` is solved for eps."""
    with mp.workdps(DPS):
        m0, m1, d = mp.mpf(m0), mp.mpf(m1), mp.mpf(delta)
        e0 = mp.log(m0 / m1)
        a = b = mp.mpf(0)
        for i in range(1, k + 2):
            l = i - 1
            a += mp.binomial(k, l) * mp.e ** ((k - l) * e0)
            b += mp.binomial(k, l) * mp.e ** (l * e0)
            lo = (k - 2 * i) * e0          # the segment [(K - 2i) e0, (K - 2i + 2) e0)
            num = a - d / m1 ** k
            if num <= 0:
                continue
            eps = mp.log(num / b)
            if eps >= lo and eps <= (k - 2 * i + 2) * e0:
                return max(eps, mp.mpf(0))
        return mp.mpf(0)


def exact_geometric(alpha: Fraction, half_width: int = 2) -> IntegerPMF:
    """The two-sided geometric with exact rational masses and exact (dyadic) tails."""
    ks = range(-half_width, half_width + 1)
    exact = np.array([(1 - alpha) / (1 + alpha) * alpha ** abs(x) for x in ks], dtype=object)
    tail = GeometricTail(float(alpha), 1)
    return IntegerPMF([float(v) for v in exact], half_width, left_tail=tail, right_tail=tail, exact=exact)


def _masses(p) -> tuple:
    f = rr_pmf(2, p)
    ex = f.exact if f.exact is not None else [Fraction(float(v)) for v in f.probs]
    return max(ex), min(ex)


# ------------------------------------------------------------------ the issue's two reproductions
def test_issue_reproduction_rr_300_at_1e9_is_exact_and_not_below_the_truth():
    p = 0.47502081252106
    mech = Mechanism(rr_pmf(2, p), Neighbourhood.sd(1))
    c = mech.compose(300, delta=1e-9)
    truth = kairouz_epsilon(*_masses(p), 300, 1e-9)
    assert abs(float(truth) - 11.304030160351596) < 1e-12          # the issue's truth
    assert c.epsilon_dp >= truth                                    # never below (was 11.304029257962474)
    assert c.epsilon_dp <= truth * (1 + 1e-9)
    assert c.epsilon_bound == "exact" and c.exact == {"epsilon_dp": True}
    assert c.to_json()["value_is"] == {"epsilon_dp": "exact"}


def test_issue_reproduction_rr_300_where_enumeration_gave_up():
    p = 0.04742587317756678
    c = Mechanism(rr_pmf(2, p), Neighbourhood.sd(1)).compose(300, delta=0.01)
    truth = kairouz_epsilon(*_masses(p), 300, 0.01)
    assert abs(float(truth) - 861.99) < 0.01                       # the issue's truth (864.0 was printed)
    assert truth <= c.epsilon_dp <= truth * (1 + 1e-9)
    assert c.epsilon_bound == "exact"


# ------------------------------------------------------------------ K up to 1000 against Theorem 3.3
@pytest.mark.parametrize("p", [Fraction(1, 4), Fraction(3, 7), 0.47502081252106, 0.1])
@pytest.mark.parametrize("k", [1, 10, 137, 1000])
def test_randomized_response_against_kairouz(p, k):
    m0, m1 = _masses(p)
    prof = privacy_profile(rr_pmf(2, p), Neighbourhood.sd(1), exact=True)
    e0 = math.log(m0 / m1)
    for eps in (0.0, 0.37 * k * e0, 0.9 * k * e0):
        c = compose_best([(prof, k)], epsilon=eps, methods=("exact",))
        truth = min(kairouz_delta(m0, m1, k, eps), 1)   # float masses may sum to 1 + 2^-55
        assert c.delta_dp >= truth and c.delta_dp <= truth * (1 + 1e-9) + 1e-300
        assert c.exact["delta_dp"]
    for delta in (1e-12, 1e-6, 0.05):
        c = compose_best([(prof, k)], delta=delta, methods=("exact",))
        truth = kairouz_epsilon(m0, m1, k, delta)
        assert c.epsilon_dp >= truth and c.epsilon_dp <= truth * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("alpha", [Fraction(1, 2), Fraction(13, 16)])
@pytest.mark.parametrize("k", [3, 250, 1000])
def test_geometric_at_sensitivity_one_against_kairouz(alpha, k):
    """The geometric's loss is +-ln(1/alpha) with P(+) = 1/(1 + alpha): Theorem 3.3 again."""
    prof = privacy_profile(exact_geometric(alpha), Neighbourhood.sd(1), exact=True)
    m0, m1 = 1 / (1 + alpha), alpha / (1 + alpha)
    e0 = -math.log(alpha)
    for eps in (0.5 * k * e0 ** 1.5, 0.8 * k * e0):
        c = compose_best([(prof, k)], epsilon=eps, methods=("exact",))
        truth = kairouz_delta(m0, m1, k, eps)
        assert truth <= c.delta_dp <= truth * (1 + 1e-9) + 1e-300
    c = compose_best([(prof, k)], delta=1e-7, methods=("exact",))
    truth = kairouz_epsilon(m0, m1, k, 1e-7)
    assert truth <= c.epsilon_dp <= truth * (1 + 1e-9)
    assert c.exact["epsilon_dp"]


@pytest.mark.parametrize("k", [5, 60])
def test_every_candidate_is_above_the_truth(k):
    """All five candidates, for the geometric and for RR, at several (eps, delta)."""
    for prof, (m0, m1) in ((privacy_profile(exact_geometric(Fraction(3, 4)), Neighbourhood.sd(1), exact=True),
                            (Fraction(4, 7), Fraction(3, 7))),
                           (privacy_profile(rr_pmf(2, 0.3), Neighbourhood.sd(1), exact=True), _masses(0.3))):
        for eps, delta in ((0.5, 1e-6), (3.0, 1e-3)):
            c = compose_best([(prof, k)], epsilon=eps, delta=delta)
            d_truth, e_truth = kairouz_delta(m0, m1, k, eps), kairouz_epsilon(m0, m1, k, delta)
            for cand in c.candidates:
                if cand.delta is not None:
                    assert cand.delta >= d_truth, cand
                if cand.epsilon is not None:
                    assert cand.epsilon >= e_truth, cand
            assert c.delta_dp >= d_truth and c.epsilon_dp >= e_truth


# ------------------------------------------------------------------ the PLD with injected round-off
def test_pld_with_injected_round_off_never_wins_below_the_truth(monkeypatch):
    """dp_accounting's PLD values are shifted down by the size of the errors the issue found
    (delta 1e-15 low, epsilon 3.2e-6 low): the allowance and the certification absorb them, and
    beside an exact candidate a value below it is rejected."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    real_delta = pld_lib.PrivacyLossDistribution.get_delta_for_epsilon
    real_eps = pld_lib.PrivacyLossDistribution.get_epsilon_for_delta

    def low_delta(self, epsilon):
        return np.maximum(0.0, np.asarray(real_delta(self, epsilon)) - 1e-15)

    def low_eps(self, delta):
        return real_eps(self, delta) - 3.2e-6

    monkeypatch.setattr(pld_lib.PrivacyLossDistribution, "get_delta_for_epsilon", low_delta)
    monkeypatch.setattr(pld_lib.PrivacyLossDistribution, "get_epsilon_for_delta", low_eps)
    p = 0.47502081252106
    prof = privacy_profile(rr_pmf(2, p), Neighbourhood.sd(1), exact=True)
    m0, m1 = _masses(p)
    for k, eps, delta in ((300, 9.0, 1e-5), (40, 1.0, 1e-4)):
        d_truth, e_truth = kairouz_delta(m0, m1, k, eps), kairouz_epsilon(m0, m1, k, delta)
        raw = dominating_pld(prof).self_compose(k)     # the PLD as read before issue 25: below the truth
        assert raw.get_epsilon_for_delta(delta) < e_truth
        # dense_cells=0: the PLDs composed by dp_accounting (numpy's FFT composes them otherwise)
        only = compose_best([(prof, k)], epsilon=eps, delta=delta, methods=("pld",), dense_cells=0)
        assert only.delta_dp >= d_truth and only.epsilon_dp >= e_truth
        assert only.candidate("pld").allowance > 1e-15
        best = compose_best([(prof, k)], epsilon=eps, delta=delta, dense_cells=0)
        assert best.delta_dp >= d_truth and best.epsilon_dp >= e_truth


def test_a_candidate_below_the_exact_value_is_rejected(monkeypatch):
    """A PLD broken beyond any allowance (it claims delta 0 everywhere) falls below the exact
    value: it is rejected, and the exact value is reported."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    monkeypatch.setattr(pld_lib.PrivacyLossDistribution, "get_delta_for_epsilon",
                        lambda self, epsilon: np.zeros(np.shape(epsilon)) if np.ndim(epsilon) else 0.0)
    monkeypatch.setattr(pld_lib.PrivacyLossDistribution, "get_epsilon_for_delta", lambda self, delta: 0.0)
    prof = privacy_profile(rr_pmf(2, Fraction(1, 4)), Neighbourhood.sd(1), exact=True)
    c = compose_best([(prof, 20)], epsilon=2.0, delta=1e-6, dense_cells=0)   # dp_accounting's PLDs
    assert c.candidate("pld").epsilon == 0.0 and c.candidate("pld").delta < c.candidate("exact").delta
    assert c.rejected == ("pld",)
    assert (c.epsilon_bound, c.delta_bound) == ("exact", "exact")
    assert c.epsilon_dp == c.candidate("exact").epsilon and c.delta_dp == c.candidate("exact").delta


def test_a_broken_numpy_pld_below_the_exact_value_is_rejected(monkeypatch):
    """The same with the PLDs composed by numpy's FFT (the default while they fit): a read
    that claims delta 0 everywhere is rejected and the exact value reported."""
    from optnoise.analysis import dominating
    monkeypatch.setattr(dominating, "dense_delta_upper", lambda pld, eps: np.zeros(np.shape(eps)))
    monkeypatch.setattr(dominating, "dense_epsilon_upper", lambda pld, delta: 0.0)
    prof = privacy_profile(rr_pmf(2, Fraction(1, 4)), Neighbourhood.sd(1), exact=True)
    c = compose_best([(prof, 20)], epsilon=2.0, delta=1e-6)
    assert "numpy" in c.candidate("pld").detail
    assert c.candidate("pld").epsilon == 0.0 and c.candidate("pld").delta < c.candidate("exact").delta
    assert c.rejected == ("pld",)
    assert (c.epsilon_bound, c.delta_bound) == ("exact", "exact")


@pytest.mark.parametrize("k", [10, 300])
def test_numpy_and_dp_accounting_plds_agree_and_bound_the_truth(k):
    """The ``pld`` candidate composed by numpy's FFT (no truncation) is never below the truth
    and agrees with dp_accounting's composition of the same units: two float computations of
    one exact PLD, each within its allowance (~6e-8 here), differ by 1e-13 in delta, which
    moves an epsilon where delta is flat by up to ~3e-10 relative, either way."""
    p = 0.47502081252106
    prof = privacy_profile(rr_pmf(2, p), Neighbourhood.sd(1), exact=True)
    m0, m1 = _masses(p)
    for eps, delta in ((1.0, 1e-4), (0.3 * k ** 0.5, 1e-8)):
        d_truth, e_truth = kairouz_delta(m0, m1, k, eps), kairouz_epsilon(m0, m1, k, delta)
        dense = compose_best([(prof, k)], epsilon=eps, delta=delta, methods=("pld",))
        acc = compose_best([(prof, k)], epsilon=eps, delta=delta, methods=("pld",), dense_cells=0)
        assert "numpy" in dense.candidate("pld").detail and "dp_accounting" in acc.candidate("pld").detail
        assert d_truth <= dense.delta_dp <= acc.delta_dp + 1e-12
        assert e_truth <= dense.epsilon_dp <= acc.epsilon_dp * (1 + 1e-9)


def test_an_infinite_composed_epsilon_names_no_bound():
    """Noise on three points, neighbours one apart: the output 2 below the shift has mass 1/3
    under one input and 0 under the other, so no epsilon holds at delta 1e-9 for one release
    or two; the composition says no bound gave a finite value rather than naming one."""
    pmf = IntegerPMF(np.array([1.0, 1.0, 1.0]) / 3, offset=-1)
    prof = privacy_profile(pmf, Neighbourhood.sd(1))
    composed = compose_best([(prof, 2)], delta=1e-9)
    assert composed.epsilon_dp == math.inf
    assert composed.bound["epsilon_dp"].startswith("none")
    finite = compose_best([(prof, 2)], delta=0.9)      # above the impossible outputs' mass: a bound gives it
    assert math.isfinite(finite.epsilon_dp) and not finite.bound["epsilon_dp"].startswith("none")
