import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise import Channel, CyclicPMF, GeometricTail, IntegerPMF, InvalidParameterError
from optnoise.pmf import SUM_TOLERANCE, cyclic_to_channel, rounded_table


@pytest.mark.parametrize("bad, fragment", [
    ([0.5, -0.1, 0.6], "masses >= 0"),
    ([0.5, float("nan"), 0.5], "finite"),
    ([0.5, float("inf")], "finite"),
    ([], "non-empty"),
    ([0.5, 0.4], "summing to 1"),
    ([0.0, 0.0], "positive sum"),
])
def test_cyclic_pmf_rejects_bad_masses(bad, fragment):
    with pytest.raises(InvalidParameterError) as info:
        CyclicPMF(bad)
    assert fragment in str(info.value)
    assert info.value.parameter == "pmf"


def _rounded_oracle(floats) -> bool:
    """The rule of ``rounded_table`` in Fractions: the exact sum of the floats differs from 1,
    by at most SUM_TOLERANCE once rounded to a float."""
    excess = float(sum((Fraction(float(x)) for x in np.ravel(floats)), Fraction(0)) - 1)
    return excess != 0.0 and abs(excess) <= SUM_TOLERANCE


def test_rounded_table_is_the_exact_sum_rule():
    """The vectorised exact sum against Fractions: exact sums of 1 (powers of two, subnormals),
    sums off by one unit in the last place, tables normalised in floating point, masses
    spanning every exponent, a table larger than one block (2^24 floats) of the sum."""
    rng = np.random.default_rng(7)
    u = 2.0**-53
    cases = [[0.5, 0.25, 0.25], [0.5, 0.25, 0.25 + 2 * u], [0.1] * 10, [1.0 - u, u], [1.0 - u, u, 5e-324],
             [1.0, 5e-324], [1.0, 0.0], [1.0, -5e-324], [1e-300] * 7 + [1.0], [1.0 + 1e-9, -5e-10]]
    for n in (3, 100, 10_000):
        f = rng.random(n) * 10.0 ** rng.integers(-30, 0, n)
        cases += [f / f.sum(), f / math.fsum(f), f]
    for f in cases:
        assert rounded_table(np.asarray(f, dtype=float)) == _rounded_oracle(f), f
    assert rounded_table(np.array([0.1] * 10)) and not rounded_table(np.array([0.5, 0.25, 0.25]))
    big = np.full(2**24 + 3, 1.0 / (2**24 + 3))   # two blocks; the exact sum is not 1
    excess = float(Fraction(1.0 / (2**24 + 3)) * (2**24 + 3) - 1)
    assert rounded_table(big) == (excess != 0.0 and abs(excess) <= SUM_TOLERANCE)


def test_normalize_rescales_and_says_so():
    pmf = CyclicPMF([0.5, 0.25, 0.2499], normalize=True)
    assert pmf.normalized
    assert pmf.probs.sum() == pytest.approx(1.0, abs=1e-15)
    assert not CyclicPMF([0.5, 0.5], normalize=True).normalized


def test_probs_are_read_only():
    pmf = CyclicPMF([0.5, 0.5])
    with pytest.raises(ValueError):
        pmf.probs[0] = 1.0


def test_from_weights_is_exact():
    pmf = CyclicPMF.from_weights([3, 1, 1, 1])
    assert list(pmf.exact) == [Fraction(1, 2), Fraction(1, 6), Fraction(1, 6), Fraction(1, 6)]
    assert pmf.n == 3 and pmf.size == 4
    with pytest.raises(InvalidParameterError):
        CyclicPMF.from_weights([1, -1, 2])


def test_exact_masses_within_the_tolerance_are_rescaled_exactly():
    # the contract (docs/cli.md): a sum within 1e-9 of 1 is accepted and normalised exactly, and said so
    near = CyclicPMF([1 / 3] * 3, exact=[Fraction("0.3333333333")] * 3)  # sum 1 - 1e-10
    assert sum(near.exact) == 1 and near.exact[0] == Fraction(1, 3) and near.normalized
    assert not CyclicPMF([0.5, 0.5], exact=[Fraction(1, 2)] * 2).normalized
    with pytest.raises(InvalidParameterError, match="normalize"):  # 1 - 1e-6: beyond the tolerance
        CyclicPMF([1 / 3] * 3, exact=[Fraction("0.333333")] * 3)
    ok = CyclicPMF([1 / 3] * 3, exact=[Fraction("0.333333")] * 3, normalize=True)
    assert sum(ok.exact) == 1 and ok.normalized


def test_joint_pmf_shape():
    pmf = CyclicPMF(np.full((3, 4), 1 / 12))
    assert pmf.shape == (3, 4) and pmf.n == (2, 3)


def test_integer_pmf_geometric_tails_are_exact():
    a = 0.6
    k = np.arange(-3, 4)
    probs = (1 - a) / (1 + a) * a ** np.abs(k)
    pmf = IntegerPMF(probs, offset=3, left_tail=GeometricTail(a), right_tail=GeometricTail(a))
    far = np.arange(-60, 61)
    expected = (1 - a) / (1 + a) * a ** np.abs(far)
    np.testing.assert_allclose(pmf.mass(far), expected, rtol=1e-13, atol=0)
    assert pmf.tail_mass == pytest.approx(2 * (1 - a) / (1 + a) * a ** 4 / (1 - a), rel=1e-13)


def test_periodic_tail_repeats_last_block():
    # staircase-like window with period 2: last block [0.1, 0.05] scaled by 0.5 each block
    r = 0.5
    window = np.array([0.2, 0.1, 0.05])
    total = window.sum() + (0.1 + 0.05) * r / (1 - r)
    pmf = IntegerPMF(window / total, 0, right_tail=GeometricTail(r, 2))
    got = pmf.mass(np.array([3, 4, 5, 6])) * total
    np.testing.assert_allclose(got, [0.1 * r, 0.05 * r, 0.1 * r * r, 0.05 * r * r], rtol=1e-12)


def test_tail_period_longer_than_window_is_rejected():
    with pytest.raises(InvalidParameterError, match="period"):
        IntegerPMF([1.0], 0, right_tail=GeometricTail(0.5, 2), normalize=True)


@pytest.mark.parametrize("ratio", [0.0, 1.0, 1.5, -0.2])
def test_tail_ratio_must_be_in_open_unit_interval(ratio):
    with pytest.raises(InvalidParameterError, match="tail ratio"):
        GeometricTail(ratio)


def test_channel_validation_and_normalize():
    with pytest.raises(InvalidParameterError, match="row 1"):
        Channel([[0.5, 0.5], [0.2, 0.7]])
    with pytest.raises(InvalidParameterError, match="2-D"):
        Channel([0.5, 0.5])
    ch = Channel([[1, 1], [1, 3]], normalize=True)
    np.testing.assert_allclose(ch.matrix, [[0.5, 0.5], [0.25, 0.75]])


def test_cyclic_to_channel_rows_are_shifts():
    pmf = CyclicPMF([0.5, 0.3, 0.2])
    ch = cyclic_to_channel(pmf)
    # P[q, (q + eta) mod 3] = f(eta)
    for q in range(3):
        for eta in range(3):
            assert ch.matrix[q, (q + eta) % 3] == pmf.probs[eta]
