"""Streaming float analysis agrees with float mode (FloatPair per pair), and large cyclic
profiles use it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise import CyclicPMF, Neighbourhood, Target, privacy_profile
from optnoise.analysis import FloatPair, PrivacyProfile, guarantee, neighbouring_pairs
from optnoise.analysis.streaming import cyclic_summary
from optnoise.errors import InvalidParameterError

REL = 1e-12


def close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= REL * abs(b) + 1e-300


def check(f: np.ndarray, nb: Neighbourhood, eps: float, delta: float, block: int) -> None:
    prof = privacy_profile(CyclicPMF(f), nb)
    shifts = [s[0] for s in nb.cyclic_shifts((f.size,))]
    s = cyclic_summary(f, shifts, epsilon=eps, delta=delta, block=block)
    assert close(s.epsilon_pure, prof.epsilon_pure)
    assert close(s.delta_dp, prof.delta_dp(eps))
    assert close(s.delta_pdp, prof.delta_pdp(eps))
    assert close(s.epsilon_dp, prof.epsilon_dp(delta))
    assert close(s.epsilon_pdp, prof.epsilon_pdp(delta))
    assert s.pairs == len(shifts)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(3, 40), block=st.sampled_from([1, 3, 7, 1 << 15]),
       eps=st.sampled_from([0.0, 0.2, 1.0, 3.0, 800.0]), delta=st.sampled_from([0.0, 1e-9, 1e-3, 0.2]))
def test_random_pmfs_match_float_mode(data, n, block, eps, delta):
    seed = data.draw(st.integers(0, 2**32))
    rng = np.random.default_rng(seed)
    f = rng.dirichlet(np.ones(n) * data.draw(st.sampled_from([0.1, 1.0, 10.0])))
    zeros = data.draw(st.integers(0, 2))
    if zeros:
        f[rng.integers(0, n, zeros)] = 0.0
        f /= f.sum()
    if data.draw(st.booleans()):  # mirror-symmetric PMF: pairs mu and -mu tie exactly
        f = (f + np.roll(f[::-1], 1)) / 2
    mu_bar = data.draw(st.integers(1, max(1, (n - 1) // 2)))
    directed = data.draw(st.booleans())
    check(f, Neighbourhood.bd(mu_bar, directed=directed), eps, delta, block)


def test_geometric_pmf_with_ties_and_tiny_masses():
    n = 200
    k = np.arange(n)
    f = np.exp(-0.7 * np.minimum(k, n - k))
    f /= f.sum()  # masses down to 1e-31; many ratios exactly e^0.7 up to rounding
    for eps in (0.7, 0.69, 1.4):
        for delta in (0.0, 1e-20, 1e-6):
            check(f, Neighbourhood.bd(3), eps, delta, 16)


def test_overflowing_ratios_use_the_log_difference():
    f = np.array([0.5, 1e-310, 0.5 - 1e-310, 0.0])
    f = f / f.sum()
    check(f, Neighbourhood.sd(1, directed=True), 1.0, 0.01, 2)


def test_large_profiles_stream_and_agree_with_float_pairs():
    """privacy_profile streams a large cyclic PMF (lazy pairs, one walk per evaluation);
    every value equals the FloatPair profile of the same pairs to 1e-12."""
    n = 40_000
    rng = np.random.default_rng(9)
    k = np.arange(n)
    f = np.exp(-np.minimum(k, n - k) / 300.0) * rng.uniform(0.8, 1.2, n)
    pmf = CyclicPMF(f / f.sum())
    nb = Neighbourhood.bd(4)
    prof = privacy_profile(pmf, nb)
    assert prof.summarize is not None and type(prof.pairs[0]).__name__ == "LazyPair"
    pairs, _ = neighbouring_pairs(pmf, nb)
    plain = PrivacyProfile(tuple(FloatPair(pm.p, pm.q, pm.label) for pm in pairs), nb)
    g, h = guarantee(prof, 0.02, 1e-6), guarantee(plain, 0.02, 1e-6)
    for key in ("epsilon_pure", "delta_dp", "delta_pdp", "epsilon_dp", "epsilon_pdp"):
        assert close(getattr(g, key), getattr(h, key)), key
    assert prof.meets(Target(h.epsilon_dp * (1 + 1e-9), 1e-6)) and not prof.meets(Target(h.epsilon_dp * 0.99, 1e-6))
    ld = prof.pairs[0].loss_distribution()
    assert ld.losses.size > 0 and abs(float(ld.p_mass.sum()) - 1.0) < 1e-9


def test_bad_input():
    with pytest.raises(InvalidParameterError):
        cyclic_summary(np.ones((2, 2)) / 4, [1])
    with pytest.raises(InvalidParameterError):
        cyclic_summary(np.ones(4) / 4, [])
    with pytest.raises(InvalidParameterError):
        cyclic_summary(np.ones(4) / 4, [1], delta=1.0)
