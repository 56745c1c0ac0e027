"""Keys found in the data: the exact tail of the quantized noise, the selection delta and the
smallest threshold (query/threshold.py; docs/proofs/key-selection.md)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.neighbourhood import Neighbourhood
from optnoise.query.mechanisms import count_cell
from optnoise.query.threshold import selection_delta, smallest_threshold, upper_tail
from optnoise.sampling.quantized import QuantizedInteger
from optnoise.target import Target


def _quantized(weights, lo, left, right) -> QuantizedInteger:
    w = np.array(weights, dtype=np.int64)
    return QuantizedInteger(w, lo, left, right, Neighbourhood.bd(1), None, None)  # type: ignore[arg-type]


def _mass(q: QuantizedInteger, k: int) -> Fraction:
    """The exact mass at ``k``, written independently from IntegerPMF.mass's rule."""
    w = [int(x) for x in q.weights]
    z = Fraction(sum(w))
    for tail, block in ((q.left, w[:q.left[2]] if q.left else []), (q.right, w[-q.right[2]:] if q.right else [])):
        if tail:
            r = Fraction(tail[0], 1 << tail[1])
            z += sum(block) * r / (1 - r)
    if q.lo <= k <= q.hi:
        return w[k - q.lo] / z
    if k > q.hi:
        if q.right is None:
            return Fraction(0)
        j = k - q.hi - 1
        r, per = Fraction(q.right[0], 1 << q.right[1]), q.right[2]
        return w[len(w) - per + j % per] * r ** (j // per + 1) / z
    if q.left is None:
        return Fraction(0)
    j = q.lo - 1 - k
    r, per = Fraction(q.left[0], 1 << q.left[1]), q.left[2]
    return w[per - 1 - j % per] * r ** (j // per + 1) / z


CASES = [
    _quantized([3, 7, 20, 9, 4, 1], -2, (5, 4, 2), (3, 3, 3)),    # periods 2 and 3, unequal ratios
    _quantized([1, 5, 2], 0, None, (1, 1, 1)),                     # one tail, r = 1/2
    _quantized([2, 6, 2], -1, None, None),                          # finite support
]


@pytest.mark.parametrize("q", CASES)
def test_upper_tail_differences_are_the_exact_masses(q):
    for k in range(q.lo - 12, q.hi + 14):
        assert upper_tail(q, k) - upper_tail(q, k + 1) == _mass(q, k), k


@pytest.mark.parametrize("q", CASES)
def test_upper_tail_runs_from_one_to_zero(q):
    assert upper_tail(q, q.lo - (0 if q.left else 5)) == 1 or q.left is not None
    far = upper_tail(q, q.lo - 400)
    assert 0 <= 1 - far < Fraction(1, 10 ** 20)
    assert 0 <= upper_tail(q, q.hi + 400) < Fraction(1, 10 ** 20)


def test_upper_tail_of_the_clamped_geometric_is_its_closed_form():
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    a = math.exp(-q.certificate.epsilon_pure)
    for k in range(1, 12):   # P[Z >= k] = a^k / (1 + a) for the two-sided geometric
        assert float(upper_tail(q, k)) == pytest.approx(a ** k / (1 + a), rel=1e-5)  # 24-bit weights


def test_smallest_threshold_is_the_smallest_meeting_delta():
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    for m, delta in ((1, 1e-6), (3, 1e-9), (10, 1e-5)):
        eps = m * 1.0
        t = smallest_threshold(q, m, delta, eps)
        assert selection_delta(upper_tail(q, t.tau - 1), m, eps) <= Fraction(delta)
        assert selection_delta(upper_tail(q, t.tau - 2), m, eps) > Fraction(delta)
        assert t.delta <= delta
    a = smallest_threshold(q, 1, 1e-6, 1.0).tau
    assert a < smallest_threshold(q, 4, 1e-6, 4.0).tau and a < smallest_threshold(q, 1, 1e-9, 1.0).tau
    # the geometric's closed form: 1 + log(delta e^-eps (1 + a)) / log(a), rounded up
    alpha = math.exp(-q.certificate.epsilon_pure)
    assert a == 1 + math.ceil(math.log(1e-6 / math.e * (1 + alpha)) / math.log(alpha)) or \
        a == 2 + math.ceil(math.log(1e-6 / math.e * (1 + alpha)) / math.log(alpha))


@pytest.mark.parametrize("bad", [0, 1, -1e-6, float("nan"), 2.0])
def test_a_delta_outside_zero_one_is_refused(bad):
    q = CASES[0]
    with pytest.raises(InvalidParameterError, match="delta"):
        smallest_threshold(q, 1, bad, 1.0)


def _key_law(q: QuantizedInteger, count: int, tau: int, values: np.ndarray) -> dict:
    """The law of one key's output: ``None`` (not shown) or its noisy count (at least tau)."""
    masses = {int(v): float(_mass(q, int(v) - count)) for v in values if v >= tau}
    return {None: float(1 - upper_tail(q, tau - count)), **masses}


def test_selection_delta_bounds_the_exact_hockey_stick_both_ways():
    """One unit holds a shared key (count 3 with it, 2 without) and a key of its own (1 with it,
    absent without): the exact divergence of the whole output, both directions, at the
    epsilon of the shared key, stays within the selection delta (m = 2)."""
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    eps1 = q.certificate.epsilon_pure
    tau = 4
    values = np.arange(tau, tau + 80)
    shared_d, shared_n = _key_law(q, 3, tau, values), _key_law(q, 2, tau, values)
    own_d = _key_law(q, 1, tau, values)
    for eps in (eps1, 2 * eps1):
        forward = backward = 0.0
        for oa in shared_d:
            for ob in own_d:
                pd = shared_d[oa] * own_d[ob]
                pn = shared_n[oa] * (1.0 if ob is None else 0.0)
                forward += max(0.0, pd - math.exp(eps) * pn)
                backward += max(0.0, pn - math.exp(eps) * pd)
        bound = float(selection_delta(upper_tail(q, tau - 1), 2, eps))
        assert forward <= bound * (1 + 1e-9) and backward <= bound * (1 + 1e-9)
        # not vacuous: the unit's own key shows with probability p, which no epsilon covers
        assert forward >= float(upper_tail(q, tau - 1)) * (1 - 1e-9)
