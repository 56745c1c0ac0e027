"""Quantize-and-certify and the exact samplers (issue 6).

Statistical tests use fixed seeds and a stated false-alarm rate ALPHA = 1e-3 per
test (chi-square goodness of fit); each has a power check: the same draws must
reject a slightly wrong distribution at the same ALPHA.
"""

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from optnoise import CyclicPMF, Neighbourhood, Target, design_finite, privacy_profile
from optnoise.design.closed_forms import lemma3_sd
from optnoise.errors import InvalidParameterError, OptnoiseError
from optnoise.randomness import SeededRandomSource, SystemRandomSource, random_source
from optnoise.sampling import discrete_gaussian, discrete_laplace, quantize

ALPHA = 1e-3
NB = Neighbourhood.sd(1)


def chi2_pvalue(draws: np.ndarray, probs: np.ndarray, offset: int = 0, min_expected: float = 5.0) -> float:
    """Chi-square goodness of fit of integer draws to ``probs`` (value ``i - offset``);
    bins with small expectation are pooled into one."""
    counts = np.bincount(draws + offset, minlength=len(probs))
    if counts.size > len(probs):
        raise AssertionError("draws outside the support")
    expected = probs * draws.size
    small = expected < min_expected
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.fixture(scope="module")
def designs():
    out = {}
    for notion, delta in (("dp", 0.0), ("dp", 0.05), ("pdp", 0.05)):
        out[(notion, delta)] = design_finite(23, epsilon=1.0, delta=delta, neighbourhood=NB, notion=notion,
                                             cost="circular-mse")
    return out


@pytest.mark.parametrize("key", [("dp", 0.0), ("dp", 0.05), ("pdp", 0.05)])
def test_quantized_weights_meet_the_target_exactly(designs, key):
    notion, delta = key
    d = designs[key]
    q = quantize(d.pmf, NB, target=Target(1.0, delta, notion))
    assert sum(int(w) for w in q.weights) == 2 ** q.bits
    assert np.array_equal(q.weights > 0, d.pmf.probs > 0)  # support kept
    # independent exact check of the weights actually sampled
    prof = privacy_profile(CyclicPMF.from_weights([int(w) for w in q.weights]), NB, exact=True)
    got = prof.delta_dp(1.0) if notion == "dp" else prof.delta_pdp(1.0)
    assert got <= delta
    assert q.certificate.exact and q.target == Target(1.0, delta, notion)
    assert np.abs(q.pmf.probs - d.pmf.probs).max() < 1e-6


def test_quantize_tight_closed_form_pure_dp():
    # Lemma 3: every ratio is exactly e^eps in real arithmetic; rounding must not cross it
    f = lemma3_sd(30, 1, 0.7)
    nb = Neighbourhood.sd(1, directed=True)
    q = quantize(CyclicPMF(f / f.sum()), nb, target=Target(0.7))
    assert q.certificate.delta_dp == 0.0 and q.certificate.epsilon_pure <= 0.7 + 1e-12
    ratios = [Fraction(int(q.weights[i]), int(q.weights[(i + 1) % 31])) for i in range(31)]
    assert max(ratios) <= Fraction(math.exp(0.7)) * (1 + Fraction(1, 10 ** 12))


def test_quantize_refuses_a_pmf_that_misses_the_target():
    pmf = CyclicPMF([0.7, 0.1, 0.1, 0.1])  # ratio 7 > e^1
    with pytest.raises(OptnoiseError, match="cannot quantize"):
        quantize(pmf, NB, target=Target(1.0))
    with pytest.raises(InvalidParameterError, match="bits"):
        quantize(pmf, NB, target=Target(2.0), bits=80)


def test_sampler_matches_the_certified_pmf_and_rejects_a_perturbed_one(designs):
    q = quantize(designs[("dp", 0.0)].pmf, NB, target=Target(1.0))
    draws = q.draw(200_000, SeededRandomSource(11))
    exact = q.pmf.probs
    assert chi2_pvalue(draws, exact) > ALPHA
    wrong = exact.copy()
    wrong[0] -= 0.01
    wrong[1] += 0.01
    assert chi2_pvalue(draws, wrong) < ALPHA


def test_default_randomness_is_the_os_csprng(monkeypatch, designs):
    q = quantize(designs[("dp", 0.0)].pmf, NB, target=Target(1.0))
    src = random_source()
    assert isinstance(src, SystemRandomSource) and src.private
    calls = []
    real = os.urandom
    monkeypatch.setattr(os, "urandom", lambda n: calls.append(n) or real(n))
    a = q.draw(64, src)
    b = q.draw(64, src)
    assert calls == [8 * 64, 8 * 64]
    assert not np.array_equal(a, b)
    seeded = random_source(5)
    assert not seeded.private and "NOT private" in seeded.description
    assert np.array_equal(q.draw(64, random_source(5)), q.draw(64, random_source(5)))


def _two_sided(weight, lo, hi):
    k = np.arange(lo, hi + 1)
    w = weight(k)
    return w / w.sum()


def test_discrete_laplace_sampler_is_the_geometric_mechanism():
    draws = discrete_laplace(Fraction(1), 20_000, SeededRandomSource(7))  # alpha = e^-1
    lo = 40
    assert chi2_pvalue(draws, _two_sided(lambda k: np.exp(-np.abs(k)), -lo, lo), offset=lo) > ALPHA
    assert chi2_pvalue(draws, _two_sided(lambda k: np.exp(-np.abs(k) / 1.15), -lo, lo), offset=lo) < ALPHA


def test_discrete_gaussian_sampler():
    draws = discrete_gaussian(Fraction(4), 20_000, SeededRandomSource(8))  # sigma = 2
    lo = 40
    assert chi2_pvalue(draws, _two_sided(lambda k: np.exp(-k ** 2 / 8.0), -lo, lo), offset=lo) > ALPHA
    assert chi2_pvalue(draws, _two_sided(lambda k: np.exp(-k ** 2 / (2 * 2.2 ** 2)), -lo, lo), offset=lo) < ALPHA


def test_sampler_rejects_bad_count(designs):
    q = quantize(designs[("dp", 0.0)].pmf, NB, target=Target(1.0))
    with pytest.raises(InvalidParameterError, match="count"):
        q.draw(-1, SystemRandomSource())
    with pytest.raises(InvalidParameterError, match="seed"):
        SeededRandomSource(-3)
