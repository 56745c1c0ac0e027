"""Vectorised exact certificates equal the Fraction oracle (optnoise.analysis.exact.ExactPair).

Pair by pair (random integer weights, adversarial near ties, kinks of the inverse maps) and
mechanism by mechanism: ``privacy_profile(..., exact=True)``, which takes the integer path
whenever the exact masses have a common denominator, against profiles of ExactPair built
from the same pair builder with Fraction masses.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optnoise import Channel, CyclicPMF, GeometricTail, IntegerPMF, Neighbourhood, privacy_profile
from optnoise.analysis import IntegerForm, PrivacyProfile, exact_profile, integer_form, neighbouring_pairs
from optnoise.analysis import exact_fast as ef
from optnoise.analysis.exact import ExactPair, exp_lower
from optnoise.errors import InvalidParameterError
from optnoise.sampling import round_weights

FIVE = ("epsilon_pure", "delta_dp", "delta_pdp", "epsilon_dp", "epsilon_pdp")


def oracle(p, q, d) -> ExactPair:
    return ExactPair(tuple(Fraction(int(x), d) for x in p), tuple(Fraction(int(x), d) for x in q))


def as_array(values, kind: str) -> np.ndarray:
    if kind == "object":
        out = np.empty(len(values), dtype=object)
        out[:] = [int(v) for v in values]
        return out
    return np.array(values, dtype=np.uint64 if kind == "uint64" else np.int64)


def assert_same(p, q, d, eps, delta, kind="object"):
    ex = oracle(p, q, d)
    fp = ef.IntegerPair.from_weights(as_array(p, kind), as_array(q, kind), d)
    assert fp.epsilon_pure == ex.epsilon_pure
    assert fp.delta_dp(eps) == ex.delta_dp(eps)
    assert fp.delta_pdp(eps) == ex.delta_pdp(eps)
    assert fp.epsilon_dp(delta) == ex.epsilon_dp(delta)
    assert fp.epsilon_pdp(delta) == ex.epsilon_pdp(delta)


# ------------------------------------------------------------------ limb arithmetic
def test_limb_products_and_comparisons_match_python_ints():
    rnd = random.Random(7)
    xs = [rnd.choice([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1, rnd.getrandbits(64)]) for _ in range(400)]
    ys = [rnd.getrandbits(64) for _ in range(400)]
    for c in (0, 1, 3, 2**32 - 1, 2**32, 2**255 + 12345, rnd.getrandbits(300)):
        for d in (1, 2**200, rnd.getrandbits(100) | 1):
            lx = ef.mul_const(ef.limbs(np.array(xs, dtype=np.uint64)), c)
            ly = ef.mul_const(ef.limbs(np.array(ys, dtype=np.uint64)), d)
            want = np.array([(x * c > y * d) - (x * c < y * d) for x, y in zip(xs, ys)], dtype=np.int8)
            assert np.array_equal(ef.compare_limbs(lx, ly), want)
            back = [sum(int(lx[k, i]) << (32 * k) for k in range(lx.shape[0])) for i in range(len(xs))]
            assert back == [x * c for x in xs]


def test_compare_ratio_decides_exact_ties_and_one_unit_off():
    # P/Q exactly equal to num/den, and one unit above / below, at 62-bit sizes
    rnd = random.Random(3)
    for _ in range(50):
        den = rnd.randrange(2**60, 2**62)
        num = rnd.randrange(den, 3 * den)
        k = rnd.randrange(1, 4)
        p = [num * k // k, num + 1, num - 1, 0, 5, 0]
        q = [den, den, den, 7, 0, 0]
        w_p, w_q = ef.as_weights(np.array(p, dtype=np.uint64)), ef.as_weights(np.array(q, dtype=np.uint64))
        assert ef.compare_ratio(w_p, w_q, num, den).tolist() == [0, 1, -1, -1, 1, 0]


# ------------------------------------------------------------------ the five certificates, random PMFs
weight = st.one_of(st.integers(0, 30), st.integers(0, 2**62), st.sampled_from([0, 1, 2**62, 2**62 - 1, 2**61 + 1]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(1, 10), eps=st.sampled_from([0.0, 1e-9, 0.05, 0.5, 1.0, 2.75, 40.0]),
       delta=st.one_of(st.sampled_from([0.0, 1e-12, 0.5]), st.floats(0.0, 0.99)),
       kind=st.sampled_from(["object", "uint64", "int64"]))
def test_certificates_equal_the_fraction_oracle(data, n, eps, delta, kind):
    p = data.draw(st.lists(weight, min_size=n, max_size=n))
    q = data.draw(st.lists(weight, min_size=n, max_size=n))
    d = max(sum(p), sum(q), 1)
    assert_same(p, q, d, eps, delta, kind)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(2, 12))
def test_rows_summing_to_a_power_of_two(data, n):
    """Quantized PMFs: both rows sum to D = 2^bits."""
    bits = data.draw(st.sampled_from([8, 32, 62]))
    d = 1 << bits
    rows = []
    for _ in range(2):
        cuts = sorted(data.draw(st.lists(st.integers(0, d), min_size=n - 1, max_size=n - 1)))
        rows.append([b - a for a, b in zip([0] + cuts, cuts + [d])])
    eps = data.draw(st.floats(0.0, 3.0))
    delta = data.draw(st.floats(0.0, 0.5))
    assert_same(rows[0], rows[1], d, eps, delta, "uint64")


def test_single_point_supports_and_all_zero_rows():
    for p, q in [([5], [5]), ([1], [0]), ([0], [3]), ([0, 0], [0, 0]), ([0, 4], [4, 0]), ([2**62], [2**62])]:
        d = max(sum(p), sum(q), 1)
        for eps in (0.0, 0.7):
            for delta in (0.0, 0.3):
                assert_same(p, q, d, eps, delta)


def test_weights_beyond_64_bits():
    rnd = random.Random(11)
    for _ in range(20):
        p = [rnd.choice([0, rnd.getrandbits(90), 2**100 + 1]) for _ in range(6)]
        q = [rnd.choice([0, rnd.getrandbits(90), 2**100 - 1]) for _ in range(6)]
        d = max(sum(p), sum(q), 1)
        assert_same(p, q, d, 0.3, 0.01)


# ------------------------------------------------------------------ adversarial near ties
def test_ratios_on_the_boundary_of_exp_lower():
    """Cells with P/Q just above and below exp_lower(eps), Q near 2^62: the float
    pre-filter cannot decide them, the limb products must."""
    rnd = random.Random(5)
    for eps in (1e-6, 0.1, 1.0, 3.0):
        e = exp_lower(eps)
        p, q = [], []
        for _ in range(12):
            qq = rnd.randrange(2**58, 2**59)
            below = (e * qq).__floor__()
            for pp in (below, below + 1, below - 1):
                p.append(pp)
                q.append(qq)
        d = max(sum(p), sum(q))
        ex = oracle(p, q, d)
        fp = ef.IntegerPair.from_weights(np.array(p, dtype=np.uint64), np.array(q, dtype=np.uint64), d)
        assert fp.delta_dp(eps) == ex.delta_dp(eps)
        assert fp.delta_pdp(eps) == ex.delta_pdp(eps)
        assert fp.delta_dp_exact(e) == ex.delta_dp_exact(e)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_ratios_exactly_equal_to_a_rational_threshold(data):
    """E = P0/Q0 exactly: cells on E (count 0 in delta), one unit above and below."""
    q0 = data.draw(st.integers(1, 2**61))
    p0 = data.draw(st.integers(q0, 2 * q0))
    e = Fraction(p0, q0)
    mults = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    p, q = [], []
    for m in mults:
        p += [p0 * m, p0 * m + 1, max(p0 * m - 1, 0)]
        q += [q0 * m] * 3
    d = max(sum(p), sum(q))
    ex = oracle(p, q, d)
    fp = ef.IntegerPair.from_weights(np.array(p, dtype=object), np.array(q, dtype=object), d)
    assert fp.delta_dp_exact(e) == ex.delta_dp_exact(e)
    assert fp.delta_pdp_exact(e) == sum((Fraction(a, d) for a, b in zip(p, q) if a * e.denominator > e.numerator * b),
                                        Fraction(0))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_inverse_maps_when_delta_sits_on_a_kink(data):
    """delta equal to g(r_j) exactly at a ratio r_j (dyadic, so the float is the rational),
    and to the PDP mass above a ratio: the segment walk's boundary cases."""
    n = data.draw(st.integers(2, 8))
    d = 1 << 10
    p = data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    q = data.draw(st.lists(st.sampled_from([0, 1, 2, 4, 8, 16]), min_size=n, max_size=n))
    ex = oracle(p, q, d)
    inf_mass = sum((Fraction(a, d) for a, b in zip(p, q) if a > 0 and b == 0), Fraction(0))
    ratios = {Fraction(a, b) for a, b in zip(p, q) if a > 0 and b > 0}
    kinks = {Fraction(0)}
    for r in ratios:  # g(r) and the PDP mass strictly above r, by hand
        kinks.add(ex.delta_dp_exact(r))
        kinks.add(inf_mass + sum((Fraction(a, d) for a, b in zip(p, q) if b > 0 and Fraction(a, b) > r), Fraction(0)))
    fp = ef.IntegerPair.from_weights(np.array(p, dtype=np.uint64), np.array(q, dtype=np.uint64), d)
    for k in kinks:
        delta = float(k)
        if Fraction(delta) != k or not (0 <= delta < 1):
            continue
        assert fp.epsilon_dp(delta) == ex.epsilon_dp(delta)
        assert fp.epsilon_pdp(delta) == ex.epsilon_pdp(delta)


def test_many_equal_ratios_select_exactly():
    """A plateau of identical ratios (a quantized geometric PMF meets e^eps with equality)."""
    p = [3 * 2**40 * k for k in range(1, 200)] + [7, 1]
    q = [2**41 * k for k in range(1, 200)] + [5, 1]
    d = max(sum(p), sum(q))
    for delta in (0.0, 1e-3, 0.05, 0.2):
        for eps in (math.log(1.5), 0.3):
            assert_same(p, q, d, eps, delta, "uint64")


# ------------------------------------------------------------------ whole mechanisms: integer path vs Fractions
def fraction_profile(mechanism, nb) -> PrivacyProfile:
    """The oracle: ExactPair on the Fraction pairs of the one pair builder."""
    pairs, used = neighbouring_pairs(mechanism, nb, exact=True)
    return PrivacyProfile(tuple(ExactPair(pm.p, pm.q, pm.label) for pm in pairs), used, exact=True)


def assert_profiles_equal(got: PrivacyProfile, want: PrivacyProfile, eps: float, delta: float) -> None:
    assert got.epsilon_pure == want.epsilon_pure
    assert got.delta_dp(eps) == want.delta_dp(eps)
    assert got.delta_pdp(eps) == want.delta_pdp(eps)
    assert got.epsilon_dp(delta) == want.epsilon_dp(delta)
    assert got.epsilon_pdp(delta) == want.epsilon_pdp(delta)


@settings(max_examples=40, deadline=None)
@given(w=st.lists(st.integers(0, 2**40), min_size=4, max_size=9).filter(lambda w: sum(w) > 0),
       mu_bar=st.integers(1, 3), directed=st.booleans(), eps=st.floats(0.0, 2.0), delta=st.floats(0.0, 0.5))
def test_cyclic_integer_weights_equal_the_oracle(w, mu_bar, directed, eps, delta):
    pmf = CyclicPMF.from_weights(w)
    nb = Neighbourhood.bd(mu_bar, directed=directed)
    prof = privacy_profile(pmf, nb, exact=True)
    assert prof.exact and prof.summarize is not None  # the integer path was taken
    assert_profiles_equal(prof, fraction_profile(pmf, nb), eps, delta)
    assert prof.values(eps, delta).pairs == len(nb.cyclic_shifts((len(w),)))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(3, 9), eps=st.sampled_from([0.0, 0.1, 0.7, 2.0]),
       delta=st.sampled_from([0.0, 1e-6, 0.05, 0.3]))
def test_float_and_decimal_masses_equal_the_oracle(data, n, eps, delta):
    """Float masses (exact binary values, exponents spread over ~60 bits, so weights beyond
    64 bits too) and decimal masses (a common denominator 10^k)."""
    seed = data.draw(st.integers(0, 2**32))
    rng = np.random.default_rng(seed)
    spread = data.draw(st.sampled_from([1.0, 10.0, 40.0]))
    f = np.exp(-spread * rng.random(n))
    f[rng.integers(0, n)] *= data.draw(st.sampled_from([1.0, 0.0]))
    pmf = CyclicPMF(f / f.sum())
    nb = Neighbourhood.bd(data.draw(st.integers(1, (n - 1) // 2)))
    assert integer_form(pmf) is not None
    assert_profiles_equal(privacy_profile(pmf, nb, exact=True), fraction_profile(pmf, nb), eps, delta)
    cents = rng.integers(1, 50, n)
    dec = CyclicPMF(cents / cents.sum(), exact=[Fraction(int(c), int(cents.sum())) for c in cents])
    assert_profiles_equal(privacy_profile(dec, nb, exact=True), fraction_profile(dec, nb), eps, delta)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), eps=st.sampled_from([0.0, 0.3, 1.0]), delta=st.sampled_from([0.0, 1e-4, 0.1]))
def test_integer_line_with_tails_equals_the_oracle(data, eps, delta):
    """Noise on Z with geometric tails (dyadic and float ratios, periods 1..3, one or two
    sides): the integer weights per pair (powers of the tail ratio, residue classes)
    against the Fraction pairs."""
    n = data.draw(st.integers(3, 8))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    period = data.draw(st.integers(1, min(3, n)))

    def tail():
        kind = data.draw(st.sampled_from(["none", "dyadic", "float"]))
        if kind == "none":
            return None
        ratio = data.draw(st.integers(1, 15)) / 16 if kind == "dyadic" else float(rng.uniform(0.05, 0.95))
        return GeometricTail(ratio, period)

    left, right = tail(), tail()
    w = rng.uniform(0.1, 1.0, n)
    pmf = IntegerPMF(w, offset=int(rng.integers(0, n)), left_tail=left, right_tail=right, normalize=True)
    nb = Neighbourhood.bd(data.draw(st.integers(1, 3)), directed=data.draw(st.booleans()))
    prof = privacy_profile(pmf, nb, exact=True)
    assert prof.summarize is not None
    assert_profiles_equal(prof, fraction_profile(pmf, nb), eps, delta)


def test_vector_cyclic_and_channel_equal_the_oracle():
    rnd = random.Random(2)
    w = np.array([[rnd.randrange(1, 1000) for _ in range(4)] for _ in range(3)], dtype=np.int64)
    pmf = CyclicPMF.from_weights(w)
    nb = Neighbourhood(((1, 0), (0, 1), (1, 2)))
    assert_profiles_equal(privacy_profile(pmf, nb, exact=True), fraction_profile(pmf, nb), 0.4, 0.01)
    d = 2**20
    rows = []
    for _ in range(4):
        cuts = sorted(rnd.randrange(d + 1) for _ in range(4))
        rows.append([b - a for a, b in zip([0] + cuts, cuts + [d])])
    ch = Channel(np.array(rows) / d, exact=[[Fraction(int(x), d) for x in r] for r in rows])
    assert_profiles_equal(privacy_profile(ch, Neighbourhood.sd(1), exact=True),
                          fraction_profile(ch, Neighbourhood.sd(1)), 0.5, 0.05)
    form = IntegerForm("channel", np.array(rows, dtype=np.uint64), d)
    assert_profiles_equal(exact_profile(form, Neighbourhood.sd(1)), fraction_profile(ch, Neighbourhood.sd(1)),
                          0.5, 0.05)


def test_masses_beyond_the_weight_limit_fall_back_to_fractions():
    """Masses spanning the float range need weights beyond 2^1000: no integer form; the
    profile is the Fraction one (and still exact)."""
    pmf = CyclicPMF([0.5, 0.5 - 1e-300, 1e-300], normalize=True)
    assert integer_form(pmf) is None
    prof = privacy_profile(pmf, Neighbourhood.sd(1), exact=True)
    assert prof.exact and prof.summarize is None
    assert prof.epsilon_pure == fraction_profile(pmf, Neighbourhood.sd(1)).epsilon_pure


def test_large_mechanism_profile_streams_pairs_and_names_the_worst():
    """Above the size threshold the exact pairs are built when used (LazyPair): the values
    still equal the eager ones, worst pairs are named, loss distributions still come out."""
    rng = np.random.default_rng(4)
    w = rng.integers(1, 2**30, 70_000)
    nb = Neighbourhood.bd(2)
    lazy = exact_profile(IntegerForm("cyclic", w.astype(np.uint64), int(w.sum())), nb)
    assert type(lazy.pairs[0]).__name__ == "LazyPair"
    eager = [ef.IntegerPair.from_weights(w, np.roll(w, -s), int(w.sum()), f"mu={s}") for s in (1, 2, 69_998, 69_999)]
    v = lazy.values(0.3, 1e-5)
    assert v.delta_dp == max(pr.delta_dp(0.3) for pr in eager)
    assert v.epsilon_dp == max(pr.epsilon_dp(1e-5) for pr in eager)
    assert v.epsilon_pure == max(pr.epsilon_pure for pr in eager)
    assert set(v.worst) == set(FIVE) and lazy.worst_pair(0.3) in {pr.label for pr in eager}
    ld = lazy.pairs[0].loss_distribution()
    assert abs(float(ld.p_mass.sum()) + ld.infinite_mass - 1.0) < 1e-9


def test_bad_input_is_rejected():
    with pytest.raises(InvalidParameterError):
        ef.as_weights(np.array([1, -2]))
    with pytest.raises(InvalidParameterError):
        ef.as_weights(np.array([0.5, 0.5]))
    with pytest.raises(InvalidParameterError):
        ef.IntegerPair.from_weights(np.array([1]), np.array([1]), 0)
    with pytest.raises(InvalidParameterError):
        ef.IntegerPair.from_weights(np.array([1]), np.array([1]), 1).epsilon_dp(1.5)
    with pytest.raises(InvalidParameterError):
        ef.certify_pairs([])


# ------------------------------------------------------------------ rounding
@settings(max_examples=40, deadline=None)
@given(probs=st.lists(st.one_of(st.just(0.0), st.floats(1e-300, 1.0)), min_size=1, max_size=30)
       .filter(lambda v: sum(v) > 0), bits=st.sampled_from([8, 16, 32, 62]))
def test_round_weights_sum_exactly_and_keep_the_support(probs, bits):
    p = np.array(probs)
    if int((p > 0).sum()) > 2**bits:
        return
    w = round_weights(p, bits)
    assert sum(int(v) for v in w) == 2**bits
    assert np.array_equal(w > 0, p > 0)
    # close to the target where the target is resolvable
    scaled = p / p.sum() * 2.0**bits
    assert np.all(np.abs(w.astype(float) - scaled) <= np.maximum(2.0, 1e-9 * scaled) + len(p))
