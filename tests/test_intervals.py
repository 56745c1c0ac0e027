"""Exact confidence intervals (analysis/intervals.py): coverage computed exactly for every true
value on the quantized weights, widths against the noise quantiles, a property test on random
channels, and coverage over repeated seeded releases."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from optnoise.analysis import IntegerForm
from optnoise.analysis.intervals import (additive_abs_error, additive_intervals, channel_abs_error,
                                         channel_coverage, exact_alpha, neyman_intervals, noise_window)
from optnoise.families.geometric import geometric_pmf
from optnoise.mechanism import Mechanism
from optnoise.neighbourhood import Neighbourhood
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import integer_line_form
from optnoise.sampling.clamp import clamped_form


def quantized_geometric(eps: float):
    return Mechanism(geometric_pmf(math.exp(-eps), half_width=3), Neighbourhood.sd(1)).quantize()


def brute_coverage(weights, low, high) -> list[Fraction]:
    """P(q in [low[Y], high[Y]]) per q, in Fractions, cell by cell (independent of the module)."""
    out = []
    for q, row in enumerate(weights):
        total = sum(int(x) for x in row)
        out.append(sum(Fraction(int(x), total) for y, x in enumerate(row) if low[y] <= q <= high[y]))
    return out


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_clamped_geometric_covers_every_value_and_matches_the_quantiles(eps):
    q = quantized_geometric(eps)
    n = 15
    channel = clamped_form(q, n)
    ci = neyman_intervals(channel, 0.05)
    ai = additive_intervals(integer_line_form(q.weights, q.lo, q.left, q.right), n, 0.05)
    a_low, a_high = ai.intervals(np.arange(n + 1))
    for low, high in ((ci.low, ci.high), (a_low, a_high)):
        cov = brute_coverage(channel.weights, low, high)
        assert min(cov) >= Fraction(19, 20)
    assert min(brute_coverage(channel.weights, ci.low, ci.high)) == ci.coverage
    # Not trivially wide: the Neyman interval is within one step of the quantile interval.
    assert np.all(np.abs(ci.low - a_low) <= 1) and np.all(np.abs(ci.high - a_high) <= 1)
    assert ci.widths().max() <= ai.window.high - ai.window.low + 1 < n


def test_noise_window_is_the_shortest_by_brute_force():
    q = quantized_geometric(0.7)
    form = integer_line_form(q.weights, q.lo, q.left, q.right)
    win = noise_window(form, 0.1)
    # Independent: the exact masses from the quantized weights and dyadic tail ratios by hand.
    w = [int(x) for x in q.weights]
    (al, ml, pl), (ar, mr, pr) = q.left, q.right
    rl, rr = Fraction(al, 2 ** ml), Fraction(ar, 2 ** mr)
    z = sum(w) + sum(w[:pl]) * rl / (1 - rl) + sum(w[-pr:]) * rr / (1 - rr)

    def cell(k):
        if q.lo <= k <= q.hi:
            return Fraction(w[k - q.lo], 1) / z
        if k > q.hi:
            t, s = divmod(k - q.hi - 1, pr)
            return w[len(w) - pr + s] * rr ** (t + 1) / z
        t, s = divmod(q.lo - 1 - k, pl)
        return w[pl - 1 - s] * rl ** (t + 1) / z

    def mass(lo, hi):
        return sum(cell(k) for k in range(lo, hi + 1))
    length = win.high - win.low + 1
    assert win.mass >= Fraction(9, 10)
    assert all(mass(a, a + length - 2) < Fraction(9, 10) for a in range(-20, 20))   # nothing shorter holds 90 %
    et = noise_window(form, 0.1, method="equal-tailed")
    assert et.mass >= Fraction(9, 10) and et.high - et.low + 1 >= length


def test_cyclic_arc_coverage_is_exact_for_every_value():
    n = 23
    pm = np.exp(-0.7 * np.minimum(np.arange(n + 1), n + 1 - np.arange(n + 1)))
    pm /= pm.sum()
    w = np.floor(pm * 2 ** 32).astype(np.uint64)
    w[0] += np.uint64(2 ** 32) - w.sum()
    ai = additive_intervals(IntegerForm("cyclic", w, 2 ** 32), n, output="cyclic")
    for q in range(n + 1):
        covered = Fraction(0)
        for eta in range(n + 1):
            y = (q + eta) % (n + 1)
            lo, hi = ai.interval(y)
            inside = lo <= q <= hi if lo <= hi else (q >= lo or q <= hi)    # an arc through n -> 0
            covered += Fraction(int(w[eta]), 2 ** 32) * inside
        assert covered == ai.coverage >= Fraction(19, 20)
    # Shortest: no arc one cell shorter holds 95 %.
    length = ai.window.high - ai.window.low + 1
    ints = [int(x) for x in w] * 2
    assert max(sum(ints[a:a + length - 1]) for a in range(n + 1)) < Fraction(19, 20) * 2 ** 32


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6).flatmap(lambda m: st.lists(st.lists(st.integers(0, 20), min_size=m, max_size=m)
                                                    .filter(lambda r: sum(r) > 0), min_size=2, max_size=6)),
       st.sampled_from([0.05, 0.1, 0.2, 0.5]), st.sampled_from(["shortest", "equal-tailed"]))
def test_random_channels_cover_every_true_value(rows, alpha, method):
    w = np.array(rows, dtype=np.int64)
    ci = neyman_intervals(w, alpha, method=method)
    cov = brute_coverage(w, ci.low, ci.high)
    assert min(cov) >= 1 - exact_alpha(alpha)
    assert min(cov) == ci.coverage and cov == channel_coverage(w, ci.low, ci.high)
    assert np.all(ci.low <= ci.high)


def covered_count(q, channel_draws, low, high):
    return int(((low[channel_draws] <= q) & (q <= high[channel_draws])).sum())


def test_repeated_releases_cover_within_tolerance_and_a_narrow_table_is_rejected():
    """Seeded releases of the clamped geometric: the covered count is above the binomial
    1e-6 quantile of Bin(draws, 0.95) (false-alarm rate <= 1e-6 per value given coverage >= 0.95);
    power: the point 'interval' {y} (coverage ~0.46) falls below the same threshold."""
    q = quantized_geometric(1.0)
    n, draws = 20, 4000
    ci = neyman_intervals(clamped_form(q, n), 0.05)
    threshold = binom.ppf(1e-6, draws, 0.95)
    source = SeededRandomSource(2026)
    point = np.arange(n + 1)
    for true in (0, 3, 10, 20):
        y = np.clip(true + q.draw(draws, source), 0, n)
        assert covered_count(true, y, ci.low, ci.high) >= threshold
        if 0 < true < n:
            assert covered_count(true, y, point, point) < threshold


def test_expected_abs_error_clamped_equals_the_channel_and_line_matches_closed_form():
    q = quantized_geometric(0.8)
    n = 12
    form = integer_line_form(q.weights, q.lo, q.left, q.right)
    clamped = additive_abs_error(form, n)
    channel = channel_abs_error(clamped_form(q, n))
    assert np.allclose(clamped.per_value, channel.per_value, rtol=1e-12, atol=1e-14)
    assert clamped.worst == pytest.approx(channel.worst, rel=1e-12)
    a = q.right[0] / 2 ** q.right[1]       # the quantized ratio (rounded up from e^-0.8)
    line = additive_abs_error(form, n, output="line")
    assert line.worst == pytest.approx(2 * a / ((1 + a) * (1 - a)), rel=1e-6)
    # clamping never lengthens the distance to a truth inside the domain: E|noise| bounds every
    # clamped error from above (the query's bound for huge domains), and meets it in the middle
    # of a wide domain
    assert clamped.per_value.max() <= line.worst * (1 + 1e-12)
    wide = additive_abs_error(form, 400)
    assert wide.worst <= line.worst * (1 + 1e-12) and wide.worst == pytest.approx(line.worst, rel=1e-9)


def test_bad_alpha_and_method_are_refused():
    from optnoise.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError):
        exact_alpha(1.0)
    with pytest.raises(InvalidParameterError):
        neyman_intervals(np.eye(3, dtype=np.int64), 0.05, method="widest")
    assert exact_alpha(0.05) == Fraction(1, 20)


def test_wide_quantized_rows_stay_exact_in_uint64():
    """Rows summing to 2^62 with entries near 2^61 (max x width >= 2^63, the old screen's
    trigger for Python integers): the row-total screen keeps uint64, and intervals and errors
    equal the Python-integer computation; a row summing to 2^63 or more is not admitted."""
    from optnoise.analysis.intervals import row_totals_below
    total = 1 << 62
    rng = np.random.default_rng(7)
    rows = []
    for q in range(6):
        cuts = np.sort(rng.integers(0, total, 8, dtype=np.int64))
        parts = np.diff(np.concatenate(([0], cuts, [total]))).astype(np.uint64)   # 9 cells summing to 2^62
        parts[q] += parts[(q + 3) % 9] - parts[(q + 3) % 9] // 64                 # most of a far cell moves to q
        parts[(q + 3) % 9] //= 64
        rows.append(parts)
    w = np.array(rows, dtype=np.uint64)
    assert [sum(int(x) for x in r) for r in w] == [total] * 6 and int(w.max()) * w.shape[1] >= 1 << 63
    assert row_totals_below(w, 1 << 63) and row_totals_below(w, total + 1) and not row_totals_below(w, total)
    fast, slow = neyman_intervals(w, 0.1), neyman_intervals(w.astype(object), 0.1)
    assert np.array_equal(fast.low, slow.low) and np.array_equal(fast.high, slow.high)
    assert fast.coverage == slow.coverage == min(channel_coverage(w.astype(object), fast.low, fast.high))
    assert np.array_equal(channel_abs_error(w).per_value, channel_abs_error(w.astype(object)).per_value)
    big = w.copy()
    big[0, 0] += np.uint64(1 << 62)          # row total 2^63: not admitted to uint64
    assert not row_totals_below(big, 1 << 63)
    wide = neyman_intervals(big, 0.1)
    assert wide.coverage == min(channel_coverage(big.astype(object), wide.low, wide.high))


def test_tail_below_is_the_exact_comparison():
    """The tail search's test (``b r^(k+1) / (1 - r) <= half``) decided by logarithms where they
    are clearly apart, and exactly otherwise: the same answer as the integers', at random and at
    the boundary of each case (where the two sides are within a factor r, or equal)."""
    from optnoise.analysis.intervals import tail_below
    rng = np.random.default_rng(11)
    for _ in range(60):
        rd = int(rng.choice([2 ** 20, 2 ** 53, 3 ** 30]))
        rn = rd - int(rng.integers(rd // 200, rd // 2))   # r in (1/2, 0.995): k up to a few thousand
        b, hn, hd = int(rng.integers(1, 10 ** 6)), int(rng.integers(1, 10 ** 6)), int(rng.integers(1, 10 ** 9))
        exact = (lambda k: b * rn ** (k + 1) * hd <= hn * rd ** k * (rd - rn))
        x = Fraction(hn, hd) * (1 - Fraction(rn, rd)) / b
        est = math.log(x) / math.log(rn / rd) - 1 if 0 < x < 1 else 1.0
        k0 = max(0, int(est))
        for k in {0, 1, max(0, k0 - 1), k0, k0 + 1, k0 + 2, int(rng.integers(0, 4 * k0 + 3))}:
            assert tail_below(b, rn, rd, hn, hd, k) == exact(k), (b, rn, rd, hn, hd, k)
    # equal sides (the comparison's tie: <= holds), and one unit off either way
    b, rn, rd, k = 3, 5, 8, 4
    lhs, rhs_unit = b * rn ** (k + 1), rd ** k * (rd - rn)
    for hn, hd in ((lhs, rhs_unit), (lhs - 1, rhs_unit), (lhs + 1, rhs_unit)):
        assert tail_below(b, rn, rd, hn, hd, k) == (b * rn ** (k + 1) * hd <= hn * rd ** k * (rd - rn))
    assert tail_below(0, 1, 2, 1, 1, 3) and tail_below(b, rn, rd, lhs, rhs_unit, k)
