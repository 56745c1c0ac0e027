"""Issue 34, item 5: never below the truth, to the last digit.

The composed guarantee of randomized response ``rr:K,P`` (the family as ``verify --family``
builds it) against an independent computation: the hockey-stick divergence of the K-fold
product pair summed term by term over its count vectors in 400-bit mpmath, with the masses
``1 - (K - 1) P`` and ``P`` exact (``P`` the float the spec parses to), and the epsilon at a
delta found by bisection on that sum (no closed form shared with the library). The reported
value must be at or above the truth and within two ulps of it. Before the fix ``rr:2,P``
held ``fl(1 - P)`` instead of ``1 - P`` (eps0 0.05, K 40, delta 1e-3 gave 0.7749300802881859,
the truth is 0.77493008028818604) and the certified epsilon was up to ``2^-40`` above the
truth.
"""

import math

import mpmath as mp
import pytest

from optnoise import Mechanism, Neighbourhood
from optnoise.families import parse_family

PREC = 400


def _spec(categories: int, eps0: float) -> tuple[str, float]:
    """``rr:K,P`` with ``P`` the optimal off-diagonal mass of an ``eps0``-DP randomized response."""
    p = 1.0 / (math.exp(eps0) + categories - 1)
    return f"rr:{categories},{p!r}", p


def _cells(categories: int, p: float) -> list[tuple[mp.mpf, mp.mpf]]:
    """The pair's outputs as ``(mass under x, mass under x')`` (x = 0, x' = 1), exactly."""
    ctx_p = mp.mpf(p)                      # the float's exact binary value
    keep = 1 - (categories - 1) * ctx_p    # exact at 400 bits
    cells = [(keep, ctx_p), (ctx_p, keep)]
    if categories > 2:
        cells.append(((categories - 2) * ctx_p, (categories - 2) * ctx_p))   # ratio 1, merged
    return cells


def _counts(k: int, m: int):
    if m == 1:
        yield (k,)
        return
    for first in range(k + 1):
        for rest in _counts(k - first, m - 1):
            yield (first,) + rest


def truth_delta(categories: int, p: float, k: int, eps) -> mp.mpf:
    """``sum over outcomes of max(0, P(y) - e^eps Q(y))`` of the k-fold product, by count vectors."""
    with mp.workprec(PREC):
        cells = _cells(categories, p)
        e = mp.exp(mp.mpf(eps))
        total = mp.mpf(0)
        for n in _counts(k, len(cells)):
            coef = mp.factorial(k)
            pp = qq = mp.mpf(1)
            for x, (a, b) in zip(n, cells):
                coef /= mp.factorial(x)
                pp *= a ** x
                qq *= b ** x
            total += coef * max(mp.mpf(0), pp - e * qq)
        return total


def truth_epsilon(categories: int, p: float, k: int, delta: float) -> mp.mpf:
    """The smallest epsilon with ``truth_delta <= delta``, by bisection to ``2^-120`` relative."""
    with mp.workprec(PREC):
        d = mp.mpf(delta)
        lo, hi = mp.mpf(0), k * mp.log(mp.mpf(1 - (categories - 1) * mp.mpf(p)) / mp.mpf(p)) + 1
        if truth_delta(categories, p, k, lo) <= d:
            return lo
        while hi - lo > hi * mp.mpf(2) ** -120:
            mid = (lo + hi) / 2
            if truth_delta(categories, p, k, mid) > d:
                lo = mid
            else:
                hi = mid
        return hi


def _ulps_above(value: float, truth: mp.mpf) -> int:
    """How many floats lie in ``[truth, value)`` (0: ``value`` is the float just at or above it)."""
    n, x = 0, value
    while mp.mpf(math.nextafter(x, -math.inf)) >= truth:
        x = math.nextafter(x, -math.inf)
        n += 1
        if n > 64:
            break
    return n


def _composed(spec: str, k: int, **at) -> object:
    _, pmf = parse_family(spec)
    return Mechanism(pmf, Neighbourhood.sd(1)).compose(k, **at)


def test_the_issue_reproduction():
    spec, p = _spec(2, 0.05)
    c = _composed(spec, 40, delta=1e-3)
    truth = truth_epsilon(2, p, 40, 1e-3)
    assert mp.nstr(truth, 17) == "0.77493008028818604"
    assert mp.mpf(c.epsilon_dp) >= truth                  # 0.7749300802881859 before the fix
    assert _ulps_above(c.epsilon_dp, truth) == 0          # the float just above the truth
    assert c.epsilon_bound == "exact"


def test_the_masses_are_exact():
    _, pmf = parse_family(_spec(2, 0.05)[0])
    assert pmf.exact is not None and sum(pmf.exact) == 1
    assert pmf.exact[0] == 1 - pmf.exact[1]               # not fl(1 - P)


@pytest.mark.parametrize("eps0", [0.05, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("k", [10, 40, 100])
def test_binary_randomized_response_on_a_grid(eps0, k):
    spec, p = _spec(2, eps0)
    for delta in (1e-3, 1e-6, 1e-9):
        truth = truth_epsilon(2, p, k, delta)
        c = _composed(spec, k, delta=delta)
        assert mp.mpf(c.epsilon_dp) >= truth, (delta, c.epsilon_dp, truth)
        if truth > 0:
            assert _ulps_above(c.epsilon_dp, truth) <= 1, (delta, c.epsilon_dp, truth)
        eps = float(mp.nstr(truth, 6))   # an epsilon where delta is near the grid's
        d_truth = truth_delta(2, p, k, eps)
        got = _composed(spec, k, epsilon=eps).delta_dp
        assert mp.mpf(got) >= d_truth and mp.mpf(got) <= d_truth * (1 + mp.mpf(2) ** -50)


@pytest.mark.parametrize("categories,eps0,k", [(3, 0.5, 12), (4, 1.0, 20)])
def test_k_ary_randomized_response(categories, eps0, k):
    spec, p = _spec(categories, eps0)
    for delta in (1e-3, 1e-7):
        truth = truth_epsilon(categories, p, k, delta)
        c = _composed(spec, k, delta=delta)
        assert mp.mpf(c.epsilon_dp) >= truth and _ulps_above(c.epsilon_dp, truth) <= 1


def test_a_truncated_noise_composed_has_infinite_mu():
    """``verify --family discrete-gaussian:1.0 --sd 1 --compose 10 --attack`` reported mu-GDP
    3.1766 after 10 releases while one release has mu = inf: the window's edge faces zeros,
    so some output is impossible under x' (with a mass near 1e-300 under x) in every release
    and in their product; no finite mu bounds that curve."""
    from optnoise.analysis import privacy_profile
    from optnoise.analysis.tradeoff import tradeoff_of
    from optnoise.analysis.tradeoff_composition import compose_tradeoff
    _, pmf = parse_family("discrete-gaussian:1.0")
    prof = privacy_profile(pmf, Neighbourhood.sd(1))
    assert tradeoff_of(prof).readout().mu_gdp == math.inf
    composed = compose_tradeoff([(prof, 10)])
    assert composed.method == "dominating"
    readout = composed.readout()
    assert readout.mu_gdp == math.inf and readout.posterior == 1.0
    mech = Mechanism(pmf, Neighbourhood.sd(1))
    assert mech.attack(releases=10).mu_gdp == math.inf
    sampled = Mechanism(mech.quantize().pmf, Neighbourhood.sd(1))                # what is sampled
    assert sampled.attack(releases=1).mu_gdp == math.inf
    assert sampled.attack(releases=10).mu_gdp == math.inf


def test_significant_digits_round_up():
    from optnoise.analysis.readout import significant_up
    assert significant_up(0.7749300802881861) == "0.774931"      # nearest would print 0.77493
    assert significant_up(0.12345649999) == "0.123457"
    assert significant_up(0.5) == "0.5" and significant_up(1e-7) == "1e-07"
    assert significant_up(math.inf) == "inf" and significant_up(0.0) == "0"
    for x in (0.1, 2.0 / 3.0, 6.931414138897699, 1234567.891, 3.3e-300):
        assert float(significant_up(x)) >= x


def test_the_human_table_prints_bounds_rounded_up():
    from typer.testing import CliRunner
    from optnoise.cli import app
    spec, _ = _spec(2, 0.05)
    r = CliRunner().invoke(app, ["verify", "--family", spec, "--compose", "40", "--delta", "1e-3"])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if "composed k=40: epsilon_dp" in line)
    assert "0.774931" in row and "0.77493 " not in row
