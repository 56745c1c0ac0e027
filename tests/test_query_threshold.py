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
from optnoise.query.threshold import selection_cost, smallest_threshold, upper_tail
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


def _delta(q, tau, m) -> Fraction:
    return 1 - (1 - upper_tail(q, tau - 1)) ** m


def test_smallest_threshold_is_the_smallest_meeting_delta():
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    for m, delta in ((1, 1e-6), (3, 1e-9), (10, 1e-5)):
        t = smallest_threshold(q, m, delta)
        assert _delta(q, t.tau, m) <= Fraction(delta) < _delta(q, t.tau - 1, m)
        assert Fraction(t.delta) >= _delta(q, t.tau, m) and t.delta <= delta
        assert t.epsilon_shift >= m * -math.log1p(-float(t.p)) and t.epsilon_shift < 10 * delta
    a = smallest_threshold(q, 1, 1e-6).tau
    assert a < smallest_threshold(q, 4, 1e-6).tau and a < smallest_threshold(q, 1, 1e-9).tau
    # the geometric's closed form: P[Z >= tau - 1] = alpha^(tau-1) / (1 + alpha) <= delta
    alpha = math.exp(-q.certificate.epsilon_pure)
    closed = 1 + math.ceil(math.log(1e-6 * (1 + alpha)) / math.log(alpha))
    assert abs(a - closed) <= 1   # the quantized tail differs from the float formula in its last digits


@pytest.mark.parametrize("bad", [0, 1, -1e-6, float("nan"), 2.0])
def test_a_delta_outside_zero_one_is_refused(bad):
    q = CASES[0]
    with pytest.raises(InvalidParameterError, match="delta"):
        smallest_threshold(q, 1, bad)


def _key_law(q: QuantizedInteger, count: int, tau: int, values: np.ndarray) -> dict:
    """The law of one key's output: ``None`` (not shown) or its noisy count (at least tau)."""
    masses = {int(v): float(_mass(q, int(v) - count)) for v in values if v >= tau}
    return {None: float(1 - upper_tail(q, tau - count)), **masses}


def test_selection_cost_bounds_the_exact_hockey_stick_both_ways():
    """One unit holds a shared key (count 3 with it, 2 without) and a key of its own (1 with it,
    absent without): the exact divergence of the whole output, both directions, at the shared
    key's epsilon plus the selection's epsilon, stays within the selection's delta (m = 2); the
    same for replace (the unit's own key moves to another key of its own)."""
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    eps1 = q.certificate.epsilon_pure
    tau = 4
    values = np.arange(tau, tau + 80)
    shared_d, shared_n = _key_law(q, 3, tau, values), _key_law(q, 2, tau, values)
    own = _key_law(q, 1, tau, values)
    absent = {None: 1.0}
    p = upper_tail(q, tau - 1)
    eps_shift, delta = selection_cost(p, 2)
    eps = eps1 + eps_shift
    # add-remove: D holds u (shared 3, own key shown or not); D' has neither
    # replace: u's own key b in D becomes its own key c in D' (shared key unchanged)
    for laws_d, laws_n in (((shared_d, own, absent), (shared_n, absent, absent)),
                           ((shared_d, own, absent), (shared_d, absent, own))):
        forward = backward = 0.0
        for oa in laws_d[0].keys() | laws_n[0].keys():
            for ob in laws_d[1].keys() | laws_n[1].keys():
                for oc in laws_d[2].keys() | laws_n[2].keys():
                    pd = laws_d[0].get(oa, 0) * laws_d[1].get(ob, 0) * laws_d[2].get(oc, 0)
                    pn = laws_n[0].get(oa, 0) * laws_n[1].get(ob, 0) * laws_n[2].get(oc, 0)
                    forward += max(0.0, pd - math.exp(eps) * pn)
                    backward += max(0.0, pn - math.exp(eps) * pd)
        assert forward <= delta * (1 + 1e-9) and backward <= delta * (1 + 1e-9)
        # not vacuous: the unit's own key shows with probability p, which no epsilon covers
        assert forward >= float(p) * (1 - 1e-9)
