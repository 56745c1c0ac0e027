"""Exact mode: rational arithmetic, outward rounding, equality with float mode."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise import Channel, CyclicPMF, IntegerPMF, Neighbourhood, privacy_profile
from optnoise.analysis.exact import exp_lower, float_up, log_up


def test_log_up_and_exp_lower_bracket_the_truth():
    for r in (Fraction(3, 2), Fraction(10**9 + 7, 10**9), Fraction(97, 3)):
        x = log_up(r)
        assert Fraction(x) >= Fraction(math.log(r.numerator / r.denominator)) - Fraction(1, 10**15)
        assert math.exp(x) >= float(r) * (1 - 1e-15)
        assert x - math.log(float(r)) < 1e-15
    for e in (0.1, 1.5, 3.0):
        lo = exp_lower(e)
        assert lo <= Fraction(math.exp(e)) * (1 + Fraction(1, 10**15))
        assert float(lo) == pytest.approx(math.exp(e), rel=1e-15)
    assert exp_lower(0.0) == 1
    assert float_up(Fraction(1, 3)) >= Fraction(1, 3)


def test_exp_lower_and_log_up_are_tight_to_256_bits():
    """exp_lower is within 2^-250 of e^eps and log_up is the *smallest* float >= ln r, both
    checked against mpmath's ordinary context at 600 bits. (A 53-bit interval -- what
    mpmath.workprec gave, since it does not set the interval context -- is 1e-17 off.)"""
    import mpmath
    with mpmath.workprec(600):
        for eps in (1e-9, 0.3, 1.0, 2.75, 40.0):
            lo = exp_lower(eps)
            true = mpmath.exp(mpmath.mpf(eps))
            gap = (true - mpmath.mpf(lo.numerator) / lo.denominator) / true
            assert 0 <= gap < mpmath.mpf(2) ** -250
        for r in (Fraction(3, 2), Fraction(10**9 + 7, 10**9), Fraction(97, 3), Fraction(1, 7), Fraction(2**62 + 1, 2**62)):
            x = log_up(r)
            ln = mpmath.log(mpmath.mpf(r.numerator) / r.denominator)
            assert mpmath.mpf(x) >= ln
            assert mpmath.mpf(math.nextafter(x, -math.inf)) < ln


def test_exact_three_point_values_are_rounded_up():
    pmf = CyclicPMF.from_weights([2, 1, 1])
    prof = privacy_profile(pmf, Neighbourhood.sd(1), exact=True)
    assert prof.exact
    assert prof.epsilon_pure >= math.log(2) and prof.epsilon_pure - math.log(2) < 1e-15
    assert Fraction(prof.delta_dp(0.0)) >= Fraction(1, 4)
    assert prof.delta_dp(0.0) == 0.25
    assert prof.delta_pdp(0.1) == 0.5


weights = st.lists(st.integers(min_value=0, max_value=50), min_size=2, max_size=9).filter(lambda w: sum(w) > 0)


@settings(max_examples=60, deadline=None)
@given(w=weights, eps=st.floats(min_value=0.0, max_value=3.0), d=st.floats(min_value=0.0, max_value=0.9))
def test_float_and_exact_modes_agree(w, eps, d):
    pmf = CyclicPMF.from_weights(w)
    nb = Neighbourhood.sd(1)
    fl = privacy_profile(pmf, nb)
    ex = privacy_profile(pmf, nb, exact=True)
    assert ex.epsilon_pure == pytest.approx(fl.epsilon_pure, rel=1e-12, abs=1e-12) or (
        math.isinf(ex.epsilon_pure) and math.isinf(fl.epsilon_pure))
    # exact values are upper bounds and equal to the float ones up to rounding
    assert ex.delta_dp(eps) == pytest.approx(fl.delta_dp(eps), abs=1e-12)
    assert ex.delta_dp(eps) >= fl.delta_dp(eps) - 1e-15
    e_ex, e_fl = ex.epsilon_dp(d), fl.epsilon_dp(d)
    assert (math.isinf(e_ex) and math.isinf(e_fl)) or e_ex == pytest.approx(e_fl, abs=1e-9)
    p_ex, p_fl = ex.epsilon_pdp(d), fl.epsilon_pdp(d)
    assert (math.isinf(p_ex) and math.isinf(p_fl)) or p_ex == pytest.approx(p_fl, abs=1e-12)
    # PDP deltas agree unless eps sits on a ratio within float tolerance
    ratios = [a / b for a, b in zip(w, np.roll(w, -1)) if b > 0 and a > 0]
    if all(abs(math.log(r) - eps) > 1e-6 for r in ratios):
        assert ex.delta_pdp(eps) == pytest.approx(fl.delta_pdp(eps), abs=1e-12)


def test_exact_channel_and_integer_pmf():
    ch = Channel([[3, 1], [1, 3]], normalize=True, exact=[[3, 1], [1, 3]])
    prof = privacy_profile(ch, Neighbourhood.sd(1), exact=True)
    assert prof.epsilon_pure == pytest.approx(math.log(3))
    assert prof.delta_dp(0.0) == 0.5
    ip = IntegerPMF([0.25, 0.5, 0.25], 1, exact=[Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)])
    p = privacy_profile(ip, Neighbourhood.sd(1), exact=True)
    assert p.epsilon_pure == math.inf
    assert p.delta_dp(1.0) >= 0.25


def test_decimal_table_is_certified_exactly():
    # the CLI keeps decimals exactly; a column of Kadam's Table 1 as exact decimals
    col = [Fraction(x) for x in "0.5548 0.1238 0.1238 0.1238 0.0276 0.0276 0.0062 0.0062 0.0062".split()]
    pmf = CyclicPMF([float(c) for c in col], exact=col)
    ex = privacy_profile(pmf, Neighbourhood.bd(3, directed=True), exact=True)
    assert ex.delta_pdp(1.505) == pytest.approx(0.1238, abs=1e-15)
