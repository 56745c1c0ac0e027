"""Invariants that must hold for every PMF (hypothesis)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise import Channel, CyclicPMF, InputPairs, Neighbourhood, privacy_profile
from optnoise.analysis import pairs_from_arrays

masses = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=2, max_size=10).filter(
    lambda xs: sum(xs) > 1e-3)
epsilons = st.floats(min_value=0.0, max_value=4.0, allow_nan=False)


def _pmf(xs, positive=False):
    arr = np.asarray(xs) + (1e-3 if positive else 0.0)
    return CyclicPMF(arr / arr.sum())


@settings(max_examples=80, deadline=None)
@given(xs=masses, e1=epsilons, e2=epsilons)
def test_dp_below_pdp_and_both_non_increasing(xs, e1, e2):
    prof = privacy_profile(_pmf(xs), Neighbourhood.bd(2 if len(xs) > 2 else 1))
    lo, hi = min(e1, e2), max(e1, e2)
    for e in (lo, hi):
        assert prof.delta_dp(e) <= prof.delta_pdp(e) + 1e-12
    assert prof.delta_dp(hi) <= prof.delta_dp(lo) + 1e-12
    assert prof.delta_pdp(hi) <= prof.delta_pdp(lo) + 1e-12


@settings(max_examples=80, deadline=None)
@given(xs=masses)
def test_delta_vanishes_exactly_from_epsilon_pure_on(xs):
    prof = privacy_profile(_pmf(xs, positive=True), Neighbourhood.sd(1))
    e0 = prof.epsilon_pure
    assert math.isfinite(e0)
    above = e0 * (1 + 1e-8) + 1e-12
    assert prof.delta_dp(above) == 0.0 and prof.delta_pdp(above) == 0.0
    if e0 > 1e-6:
        below = e0 * (1 - 1e-6)
        assert prof.delta_dp(below) > 0.0 and prof.delta_pdp(below) > 0.0


@settings(max_examples=60, deadline=None)
@given(xs=masses, eps=epsilons, data=st.data())
def test_symmetric_equals_max_of_the_two_directed(xs, eps, data):
    pmf = _pmf(xs)
    n = pmf.size - 1
    mu = data.draw(st.integers(min_value=1, max_value=n))
    sym = privacy_profile(pmf, Neighbourhood.sd(mu))
    fwd = privacy_profile(pmf, Neighbourhood.sd(mu, directed=True))
    bwd = privacy_profile(pmf, Neighbourhood.sd(-mu, directed=True))
    assert sym.delta_dp(eps) == max(fwd.delta_dp(eps), bwd.delta_dp(eps))
    assert sym.delta_pdp(eps) == max(fwd.delta_pdp(eps), bwd.delta_pdp(eps))
    assert sym.epsilon_pure == max(fwd.epsilon_pure, bwd.epsilon_pure)


@settings(max_examples=60, deadline=None)
@given(xs=masses, eps=epsilons, data=st.data())
def test_relabelling_outputs_by_a_bijection_changes_nothing(xs, eps, data):
    """Kadam et al. Proposition 1: an invertible map of the output keeps (eps, delta)."""
    pmf = _pmf(xs)
    size = pmf.size
    ch = Channel(np.array([np.roll(pmf.probs, q) for q in range(size)]))
    perm = np.array(data.draw(st.permutations(range(size))))
    relabelled = Channel(ch.matrix[:, perm])
    pairs = InputPairs(tuple((q, (q - 1) % size) for q in range(size)))
    a, b = privacy_profile(ch, pairs), privacy_profile(relabelled, pairs)
    assert a.delta_dp(eps) == pytest.approx(b.delta_dp(eps), abs=1e-15)
    assert a.delta_pdp(eps) == pytest.approx(b.delta_pdp(eps), abs=1e-15)


def test_clamping_is_not_a_relabelling_pdp_can_grow():
    """Merging outputs (as clamping does) may *increase* delta_PDP, never delta_DP."""
    p = np.array([0.1, 0.5, 0.4])
    q = np.array([0.01, 0.26, 0.73])
    eps = math.log(2)
    before = pairs_from_arrays([(p, q)])
    merged = pairs_from_arrays([(np.array([0.6, 0.4]), np.array([0.27, 0.73]))])
    assert before.delta_pdp(eps) == pytest.approx(0.1)
    assert merged.delta_pdp(eps) == pytest.approx(0.6)          # PDP got worse
    assert merged.delta_dp(eps) <= before.delta_dp(eps) + 1e-15  # DP is post-processing safe


def test_clamped_geometric_differs_from_wrapped():
    # geometric noise on {0..4}: clamping and wrapping give different guarantees
    alpha, n = 0.5, 4
    k = np.arange(-60, 61)
    g = (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)
    rows = []
    for qv in range(n + 1):
        y = np.clip(qv + k, 0, n)
        rows.append(np.bincount(y, weights=g, minlength=n + 1))
    clamped = Channel(np.array(rows), normalize=True)
    prof = privacy_profile(clamped, Neighbourhood.sd(1))
    wrapped = np.bincount((k % (n + 1)), weights=g, minlength=n + 1)
    prof_w = privacy_profile(CyclicPMF(wrapped, normalize=True), Neighbourhood.sd(1))
    assert prof.delta_pdp(0.5) != pytest.approx(prof_w.delta_pdp(0.5), abs=1e-3)
    # clamping is post-processing of the eps = ln 2 geometric on Z: DP survives
    assert prof.epsilon_pure <= math.log(2) + 1e-12
