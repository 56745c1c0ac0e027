"""Exact integer-line samplers: finite exactness checks, enclosure checks, chi-square with power,
and the law sampled for a quantized mechanism equal (as Fractions) to the law certified."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import optnoise
from optnoise import GeometricTail, IntegerPMF
from optnoise.analysis import integer_masses
from optnoise.design.staircase import design_staircase
from optnoise.errors import InvalidParameterError
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import integer_line as z
from optnoise.sampling import inversion
from optnoise.sampling.words import geometric_failures

#: False-alarm rate of every chi-square test (fixed seeds: deterministic runs).
ALPHA = 1e-3


class Replay:
    """A source returning prepared words, then a fallback stream."""

    def __init__(self, *chunks: np.ndarray, seed: int = 0) -> None:
        self._chunks = [np.asarray(c, dtype=np.uint64) for c in chunks]
        self._rest = SeededRandomSource(seed)

    def words(self, count: int) -> np.ndarray:
        if self._chunks:
            c = self._chunks.pop(0)
            assert c.size >= count, (c.size, count)
            return c[:count]
        return self._rest.words(count)


def bytes_to_words(b: list[int]) -> np.ndarray:
    raw = np.zeros(-(-len(b) // 8) * 8, dtype=np.uint8)
    raw[:len(b)] = b
    return raw.view(np.uint64)


# ------------------------------------------------------------------ chi-square helpers
def chi_square_pvalue(samples: np.ndarray, pmf, lo: int, hi: int) -> float:
    """Chi-square of integer samples against ``pmf(x)`` on ``lo..hi`` plus two tail bins
    (their masses ``P(x < lo)``, ``P(x > hi)`` from ``1 -`` the window), bins merged from the
    outside in until each expects at least 5."""
    n = samples.size
    xs = np.arange(lo, hi + 1)
    probs = np.array([pmf(int(x)) for x in xs])
    left = float(pmf.left(lo)) if hasattr(pmf, "left") else None
    right = float(pmf.right(hi)) if hasattr(pmf, "right") else None
    inside = samples[(samples >= lo) & (samples <= hi)]
    obs = [int(np.sum(samples < lo))] + np.bincount(inside - lo, minlength=hi - lo + 1).tolist() \
        + [int(np.sum(samples > hi))]
    exp = [left if left is not None else 0.0] + probs.tolist() + [right if right is not None else 0.0]
    exp = np.array(exp) * n
    obs = np.array(obs, dtype=float)
    def merge(o, e):  # merge small bins from the outside inward
        oo, ee = [], []
        acc_o = acc_e = 0.0
        for a, b in zip(o, e):
            acc_o += a
            acc_e += b
            if acc_e >= 5:
                oo.append(acc_o)
                ee.append(acc_e)
                acc_o = acc_e = 0.0
        if acc_e > 0 or acc_o > 0:
            if ee:
                oo[-1] += acc_o
                ee[-1] += acc_e
            else:
                oo.append(acc_o)
                ee.append(acc_e)
        return oo, ee
    half = len(obs) // 2
    lo_o, lo_e = merge(obs[:half], exp[:half])
    hi_o, hi_e = merge(obs[half:][::-1], exp[half:][::-1])
    o = np.array(lo_o + hi_o[::-1])
    e = np.array(lo_e + hi_e[::-1])
    e *= o.sum() / e.sum()
    return float(stats.chisquare(o, e).pvalue)


class Laplace:
    def __init__(self, t: float) -> None:
        self.b = math.exp(-1.0 / t)

    def __call__(self, x: int) -> float:
        return (1 - self.b) / (1 + self.b) * self.b ** abs(x)

    def left(self, lo: int) -> float:  # P(X < lo), lo < 0
        return self.b ** (-lo + 1) / (1 + self.b) * 1.0 if lo <= 0 else 0.0

    def right(self, hi: int) -> float:
        return self.b ** (hi + 1) / (1 + self.b)


class Gaussian:
    def __init__(self, sigma2: float) -> None:
        self.s2 = sigma2
        k = int(60 * math.sqrt(sigma2)) + 10
        self.z = sum(math.exp(-y * y / (2 * sigma2)) for y in range(-k, k + 1))
        self.k = k

    def __call__(self, x: int) -> float:
        return math.exp(-x * x / (2 * self.s2)) / self.z

    def left(self, lo: int) -> float:
        return sum(self(y) for y in range(-self.k, lo))

    def right(self, hi: int) -> float:
        return sum(self(y) for y in range(hi + 1, self.k + 1))


class Staircase:
    """GV16 (82)-(83), computed independently from the block formula."""

    def __init__(self, eps: float, delta: int, r: int) -> None:
        self.b, self.d, self.r = math.exp(-eps), delta, r
        self.a = (1 - self.b) / (2 * r + 2 * self.b * (delta - r) - (1 - self.b))

    def __call__(self, x: int) -> float:
        k = abs(x)
        j, i = divmod(k, self.d)
        return self.a * self.b ** j * (1.0 if i < self.r else self.b)

    def left(self, lo: int) -> float:
        return self.right(-lo)  # P(X < lo) = P(X > -lo)

    def right(self, hi: int) -> float:
        return 0.5 * (1.0 - sum(self(x) for x in range(-hi, hi + 1)))


# ------------------------------------------------------------------ building blocks
@pytest.mark.parametrize("num,den", [(1, 3), (2, 7), (0, 5), (5, 5), (123456, 1000003)])
def test_bernoulli_rational_is_exact_to_16_bits(num, den):
    """All 2^16 values of the first two 8-bit digits: exactly floor(p 2^16) draws are decided
    True before the third digit, one draw (the tie with p's digits) is left to later digits."""
    first = [i >> 8 for i in range(1 << 16)]
    second = list(range(256))
    src = Replay(bytes_to_words(first), bytes_to_words(second), seed=1)
    got = z.bernoulli_rational(np.full(1 << 16, num), np.full(1 << 16, den), src)
    floor16 = (num << 16) // den
    assert int(got.sum()) in (floor16, floor16 + 1) if num < den else int(got.sum()) == 1 << 16


def test_bernoulli_rational_and_exp_chi_square_with_power():
    src = SeededRandomSource(11)
    n = 200_000
    for num, den in ((1, 3), (7, 10), (1, 1000)):
        k = int(z.bernoulli_rational(np.full(n, num), np.full(n, den), src).sum())
        assert stats.binomtest(k, n, num / den).pvalue > ALPHA
    for num, den in ((0, 1), (1, 2), (1, 1), (7, 3), (25, 4)):
        g = num / den
        k = int(z.bernoulli_exp(np.full(n, num), np.full(n, den), src).sum())
        assert stats.binomtest(k, n, math.exp(-g)).pvalue > ALPHA
        if g > 0:  # power: a 5 % larger exponent is rejected
            assert stats.binomtest(k, n, math.exp(-1.05 * g - 0.02)).pvalue < ALPHA


# ------------------------------------------------------------------ enclosures and the slow path
def mp_laplace_cdf(t: Fraction, x: int) -> mpmath.mpf:
    with mpmath.workdps(80):
        b = mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator)
        return 1 - b ** (x + 1) / (1 + b) if x >= 0 else b ** (-x) / (1 + b)


def mp_gaussian_cdf(s2: Fraction, x: int) -> mpmath.mpf:
    with mpmath.workdps(80):
        s2m = mpmath.mpf(s2.numerator) / s2.denominator
        k = int(40 * math.sqrt(float(s2))) + 40
        terms = [mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2m)) for y in range(-k, k + 1)]
        z_ = mpmath.fsum(terms)
        return mpmath.fsum(terms[:x + k + 1]) / z_


def mp_staircase_cdf(eps: Fraction, delta: int, r: int, x: int) -> mpmath.mpf:
    """Direct summation of GV16 (82)-(83) at 80 digits (independent of the closed form)."""
    with mpmath.workdps(80):
        b = mpmath.exp(-mpmath.mpf(eps.numerator) / eps.denominator)
        a = (1 - b) / (2 * r + 2 * b * (delta - r) - (1 - b))

        def pmf(i: int) -> mpmath.mpf:
            j, k = divmod(abs(i), delta)
            return a * b ** j * (1 if k < r else b)

        far = delta * (int(200 / float(eps)) + 2)
        return mpmath.fsum(pmf(i) for i in range(-far, x + 1))


def _table_and_ref(kind: str):
    if kind == "laplace":
        t = Fraction(3, 2)
        return inversion.laplace_table(t), (lambda x: mp_laplace_cdf(t, x))
    if kind == "gaussian":
        s2 = Fraction(9, 4)
        return inversion.gaussian_table(s2), (lambda x: mp_gaussian_cdf(s2, x))
    e = Fraction(3, 2)
    return inversion.staircase_table(e, 3, 2), (lambda x: mp_staircase_cdf(e, 3, 2, x))


@pytest.mark.parametrize("kind", ["laplace", "gaussian", "staircase"])
def test_table_enclosures_contain_the_cdf(kind):
    tab, ref = _table_and_ref(kind)
    with mpmath.workdps(80):
        for j in range(0, tab.c_lo.size, 3):
            c = ref(tab.lo - 1 + j) * mpmath.mpf(2) ** 64
            assert int(tab.c_lo[j]) <= c <= int(tab.c_hi[j])
            assert int(tab.c_hi[j]) - int(tab.c_lo[j]) <= 2


@pytest.mark.parametrize("kind", ["laplace", "gaussian", "staircase"])
def test_slow_path_at_boundaries_and_in_the_tails(kind):
    """Words whose 64-bit prefix straddles C(x), and words beyond the table window: the
    result must be F^-1(U) for U given by all the words drawn (checked at 80 digits)."""
    tab, ref = _table_and_ref(kind)
    rng = np.random.default_rng(5)
    cases = [int(tab.c_lo[j]) for j in (1, tab.c_lo.size // 3, tab.c_lo.size - 2)] + [0, 1, (1 << 64) - 1, (1 << 64) - 2]
    for u0 in cases:
        extra = rng.integers(0, 2**63, size=6, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        src = Replay(np.array([u0], dtype=np.uint64), *[np.array([w]) for w in extra])
        x = int(inversion.draw_inversion(tab, 1, src)[0])
        used = 6 - len(src._chunks)
        with mpmath.workdps(80):
            num = u0
            for w in extra[:used]:
                num = (num << 64) | int(w)
            u_lo = mpmath.mpf(num) / mpmath.mpf(2) ** (64 * (used + 1))
            u_hi = mpmath.mpf(num + 1) / mpmath.mpf(2) ** (64 * (used + 1))
            assert ref(x - 1) <= u_lo and u_hi <= ref(x)


# ------------------------------------------------------------------ samplers: chi-square and power
def _check(samples, pmf, wrong, lo, hi):
    assert chi_square_pvalue(samples, pmf, lo, hi) > ALPHA
    assert chi_square_pvalue(samples, wrong, lo, hi) < ALPHA


def test_discrete_laplace_by_inversion_and_by_cks():
    src = SeededRandomSource(21)
    x = z.discrete_laplace(Fraction(3, 2), 1_000_000, src)
    _check(x, Laplace(1.5), Laplace(1.5 * 1.03), -15, 15)
    y = z.discrete_laplace_cks(Fraction(3, 2), 200_000, src)
    _check(y, Laplace(1.5), Laplace(1.5 * 1.08), -12, 12)


def test_discrete_gaussian_by_inversion_and_by_cks():
    src = SeededRandomSource(22)
    x = z.discrete_gaussian(Fraction(4), 1_000_000, src)
    _check(x, Gaussian(4.0), Gaussian(4.0 * 1.03), -10, 10)
    y = z.discrete_gaussian_cks(Fraction(9, 4), 150_000, src)
    _check(y, Gaussian(2.25), Gaussian(2.25 * 1.08), -8, 8)


def test_discrete_staircase_by_inversion_and_by_rejection():
    src = SeededRandomSource(23)
    x = z.discrete_staircase(Fraction(1), 4, 2, 1_000_000, src)
    _check(x, Staircase(1.0, 4, 2), Staircase(1.0, 4, 3), -24, 24)
    y = z.discrete_staircase_rejection(Fraction(1, 2), 3, 1, 150_000, src)
    _check(y, Staircase(0.5, 3, 1), Staircase(0.55, 3, 1), -30, 30)


def test_dyadic_geometrics():
    src = SeededRandomSource(24)
    a, m = 3, 3  # r = 3/8
    g = geometric_failures(a, m, 300_000, src)
    pmf = lambda x: (1 - 3 / 8) * (3 / 8) ** x if x >= 0 else 0.0  # noqa: E731
    obs = np.bincount(np.minimum(g, 10), minlength=11)
    exp = np.array([pmf(x) for x in range(10)] + [(3 / 8) ** 10]) * g.size
    assert stats.chisquare(obs, exp).pvalue > ALPHA
    wrong = np.array([0.6 * 0.4 ** x for x in range(10)] + [0.4 ** 10]) * g.size
    assert stats.chisquare(obs, wrong).pvalue < ALPHA
    x = z.two_sided_geometric(a, m, 300_000, src)
    r = 3 / 8
    two = lambda v: (1 - r) / (1 + r) * r ** abs(v)  # noqa: E731
    two.left = lambda lo: r ** (-lo + 1) / (1 + r)  # type: ignore[attr-defined]
    two.right = lambda hi: r ** (hi + 1) / (1 + r)  # type: ignore[attr-defined]
    _check(x, two, Laplace(-1 / math.log(0.4)), -8, 8)


def test_window_with_dyadic_tails():
    """Window weights [1, 4, 6, 4, 2] at -2..2, right tail ratio 1/2 with period 2, left tail
    ratio 3/4 with period 1 (IntegerPMF semantics)."""
    w = [1, 4, 6, 4, 2]
    left, right = z.Tail(3, 2, 1), z.Tail(1, 1, 2)
    tab = z.window_tails_table(np.array(w), -2, left=left, right=right)
    total = sum(w) + (4 + 2) * 1.0 + 1 * 3.0  # tails: (4 + 2) * (1/2)/(1/2), 1 * (3/4)/(1/4)

    def mass(x: int) -> float:
        if -2 <= x <= 2:
            return w[x + 2] / total
        if x > 2:
            b, t = divmod(x - 3, 2)
            return w[3 + t] * 0.5 ** (b + 1) / total
        b = -2 - x
        return w[0] * 0.75 ** b / total

    mass.left = lambda lo: sum(mass(x) for x in range(lo - 400, lo))  # type: ignore[attr-defined]
    mass.right = lambda hi: sum(mass(x) for x in range(hi + 1, hi + 400))  # type: ignore[attr-defined]
    assert abs(sum(mass(x) for x in range(-400, 400)) - 1) < 1e-12
    x = z.draw_window_tails(tab, 500_000, SeededRandomSource(25))

    def wrong(v: int) -> float:
        return mass(v) * (1.06 if v == 0 else 1.0) / (1 + 0.06 * mass(0))

    wrong.left, wrong.right = mass.left, mass.right  # type: ignore[attr-defined]
    _check(x, mass, wrong, -15, 12)


def test_invalid_parameters():
    src = SeededRandomSource(1)
    with pytest.raises(InvalidParameterError):
        z.discrete_laplace(0, 5, src)
    with pytest.raises(InvalidParameterError):
        z.discrete_gaussian(-1, 5, src)
    with pytest.raises(InvalidParameterError):
        z.discrete_staircase(1, 3, 4, 5, src)
    with pytest.raises(InvalidParameterError):
        geometric_failures(8, 3, 5, src)
    with pytest.raises(InvalidParameterError):
        z.Tail(1, 1, 0)
    with pytest.raises(InvalidParameterError):
        z.bernoulli_rational(np.array([3]), np.array([2]), src)


# ------------------------------------------------------------------ what is sampled is what was certified
def sampled_law(wt: z.WindowTailsTable, values: list[int]) -> dict[int, Fraction]:
    """The exact law that draw_window_tails samples, from the table's integer cell weights:
    a window cell with probability cell / T, a tail class with cell / T times the geometric
    block probability (1 - r) r^(b - 1) -- computed here by hand, value by value."""
    total = sum(wt.cells)
    law = {}
    hi = wt.lo + wt.width - 1
    for v in values:
        if wt.lo <= v <= hi:
            law[v] = Fraction(wt.cells[v - wt.lo], total)
        elif v > hi and wt.right:
            j = v - hi - 1
            b, t = j // wt.right.period + 1, j % wt.right.period
            r = Fraction(wt.right.a, 1 << wt.right.m)
            law[v] = Fraction(wt.cells[wt.width + t], total) * (1 - r) * r ** (b - 1)
        elif v < wt.lo and wt.left:
            j = wt.lo - 1 - v
            b, t = j // wt.left.period + 1, wt.left.period - 1 - j % wt.left.period
            r = Fraction(wt.left.a, 1 << wt.left.m)
            start = wt.width + (wt.right.period if wt.right else 0)
            law[v] = Fraction(wt.cells[start + t], total) * (1 - r) * r ** (b - 1)
        else:
            law[v] = Fraction(0)
    return law


@pytest.mark.parametrize("make", [
    lambda: optnoise.geometric(epsilon=1.0),
    lambda: optnoise.additive(IntegerPMF([0.1, 0.3, 0.4, 0.2], offset=1, left_tail=GeometricTail(0.3, 2),
                                         right_tail=GeometricTail(0.6, 1), normalize=True), space="integer"),
    lambda: design_staircase(1.0, 3, "abs", r=2, discrete=True).mechanism,
])
def test_the_sampled_law_is_the_certified_law(make):
    """For quantized mechanisms on Z, the law of draw_window_tails (from its integer cells)
    equals, as Fractions, the exact PMF the certificate is about (window and tails)."""
    q = make().quantize()
    tail = (lambda t: None if t is None else z.Tail(*t))
    wt = z.window_tails_table(q.weights, q.lo, left=tail(q.left), right=tail(q.right))
    certified = q.pmf  # exact masses W / Z, dyadic tails
    span = range(q.lo - 12, q.hi + 13)
    law = sampled_law(wt, list(span))
    want = integer_masses(certified, np.array(list(span)), exact=True)
    assert [law[v] for v in span] == list(want)


def alias_units(table) -> list[int]:
    """Units of each outcome over all columns of an alias table (own part + alias part)."""
    cap = 1 << (table.resolution - table.k)
    units = np.zeros(table.columns, dtype=object)
    for c, (t, a) in enumerate(zip(table.threshold, table.alias)):
        units[c] += int(t)
        units[int(a)] += cap - int(t)
    return units[:table.size].tolist()


def test_window_tails_table_holds_the_cells_exactly():
    """The 62-bit alias table of a window with tails draws each cell with probability
    cell / T given no rejection: its units are the cells times one integer, plus the
    rejection cell."""
    wt = z.window_tails_table(np.array([3, 1, 4, 1, 5]), -2, left=z.Tail(5, 4, 2), right=z.Tail(1, 3, 1))
    units = alias_units(wt.table)
    scale = units[0] // wt.cells[0]
    assert units[:len(wt.cells)] == [c * scale for c in wt.cells]
    assert units[-1] == (1 << 62) - scale * sum(wt.cells) and units[-1] < sum(wt.cells)


def test_window_tails_beyond_62_bits_are_drawn_by_regions():
    """Cells summing beyond 2^62 (no alias table): a uniform integer below T, still exact."""
    wt = z.window_tails_table(np.array([1 << 60, 3 << 60, 1 << 60], dtype=object), 0, right=z.Tail(1, 1, 1))
    assert wt.table is None
    x = z.draw_window_tails(wt, 200_000, SeededRandomSource(31))
    law = sampled_law(wt, list(range(0, 25)))
    obs = np.bincount(np.minimum(x, 25), minlength=26)
    exp = np.array([float(law[v]) for v in range(25)] + [1 - float(sum(law.values()))]) * x.size
    keep = exp >= 5
    obs, exp = np.append(obs[keep], obs[~keep].sum()), np.append(exp[keep], exp[~keep].sum())
    assert stats.chisquare(obs, exp).pvalue > ALPHA
    wrong = exp.copy()
    wrong[1], wrong[2] = wrong[1] * 0.98, wrong[2] + wrong[1] * 0.02  # 2 % moved between two values
    assert stats.chisquare(obs, wrong).pvalue < ALPHA
