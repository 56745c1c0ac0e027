"""Geng & Viswanath: continuous and discrete staircase, the integer-line LP, samplers."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from optnoise.analysis import privacy_profile
from optnoise.cli import app
from optnoise.costs import expected_cost, parse_cost
from optnoise.design.integer import design_integer
from optnoise.errors import InvalidParameterError
from optnoise.families.geometric import geometric_pmf
from optnoise.families.staircase import (
    Staircase,
    a_r,
    cost_star_abs,
    cost_star_sq,
    discrete_staircase_pmf,
    gamma_heuristic,
    gamma_star,
    gamma_star_abs,
    gamma_star_numeric,
    gamma_star_sq,
    laplace_cost,
    r_star,
)
from optnoise.neighbourhood import Neighbourhood
from optnoise.pmf import GeometricTail, IntegerPMF
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import sample_discrete_staircase

ALPHA = 1e-3  # false-alarm rate of every statistical test in this file
EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
runner = CliRunner()


# ------------------------------------------------------------------ continuous
@pytest.mark.parametrize("eps", EPSILONS)
def test_abs_gamma_star_and_cost_match_43_44_and_a_numeric_minimum(eps):
    g = gamma_star_abs(eps)
    assert g == pytest.approx(1 / (1 + math.exp(eps / 2)), rel=1e-15)
    st = Staircase(eps, 1.0, g)
    assert st.moment_abs(1) == pytest.approx(cost_star_abs(eps), rel=1e-12)
    # an independent minimisation of a brute-force integral over gamma
    grid = np.linspace(0, 1, 201)
    vals = [Staircase(eps, 1.0, float(x)).moment_abs(1) for x in grid]
    assert min(vals) >= cost_star_abs(eps) * (1 - 1e-12)
    assert gamma_star_numeric(eps, "abs") == pytest.approx(g, abs=1e-6)


@pytest.mark.parametrize("eps", EPSILONS)
def test_sq_gamma_star_and_cost_match_50_51(eps):
    g = gamma_star_sq(eps)
    assert Staircase(eps, 1.0, g).moment_abs(2) == pytest.approx(cost_star_sq(eps), rel=1e-10)
    assert gamma_star_numeric(eps, "sq") == pytest.approx(g, abs=1e-6)
    assert gamma_star(eps, "sq") == g


@pytest.mark.parametrize("eps,expected_abs,expected_sq", [(10.0, 15, 23)])
def test_gain_over_laplace_at_eps_10_is_about_15_and_23(eps, expected_abs, expected_sq):
    gain_abs = laplace_cost(eps, "abs") / cost_star_abs(eps)
    gain_sq = laplace_cost(eps, "sq") / cost_star_sq(eps)
    assert round(gain_abs) == expected_abs  # 14.84
    assert round(gain_sq) in (expected_sq, expected_sq + 1)  # 23.61: "about 23-fold"
    assert laplace_cost(eps, "abs", 3.0) == pytest.approx(3.0 / eps)
    assert laplace_cost(eps, "sq", 3.0) == pytest.approx(2 * 9.0 / eps ** 2)


def _pieces(st: Staircase, blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The density on [0, blocks*Delta) as constant pieces, read off ``pdf`` at midpoints."""
    g, d = st.gamma, st.sensitivity
    edges = np.sort(np.concatenate([np.arange(blocks) * d, (np.arange(blocks) + g) * d, [blocks * d]]))
    lo, hi = edges[:-1], edges[1:]
    return lo, hi, st.pdf((lo + hi) / 2)


@pytest.mark.parametrize("gamma,delta,eps", [(0.3, 2.0, 1.0), (0.0, 1.0, 0.5), (1.0, 1.5, 3.0), (0.05, 1.0, 8.0)])
def test_density_moments_cdf_quantile_against_brute_force(gamma, delta, eps):
    st = Staircase(eps, delta, gamma)
    lo, hi, h = _pieces(st, int(80 / eps) + 5)
    assert 2 * np.sum(h * (hi - lo)) == pytest.approx(1.0, abs=1e-12)
    for k in (1, 1.5, 2, 3):
        brute = 2 * np.sum(h * (hi ** (k + 1) - lo ** (k + 1))) / (k + 1)
        assert st.moment_abs(k) == pytest.approx(brute, rel=1e-10)
    # a user callable goes through quadrature: same numbers
    assert st.expected_cost(lambda x: np.abs(x) ** 1.5) == pytest.approx(st.moment_abs(1.5), rel=1e-9)
    anti = lambda x: x * np.log1p(x * x) - 2 * x + 2 * np.arctan(x)  # noqa: E731  (of log(1 + x^2))
    assert st.expected_cost(lambda x: np.log1p(x * x)) == pytest.approx(2 * np.sum(h * (anti(hi) - anti(lo))), rel=1e-9)
    for xi in np.array([-3.3, -0.2, 0.0, 0.7, 2.2]) * delta:
        part = np.sum(h * np.clip(np.minimum(hi, abs(xi)) - lo, 0, None))
        assert st.cdf(xi) == pytest.approx(0.5 + math.copysign(1, xi) * part, abs=1e-12)
    u = np.array([1e-6, 0.1, 0.49, 0.5, 0.73, 0.999999])
    assert np.allclose(st.cdf(st.quantile(u)), u, atol=1e-12)


def test_density_satisfies_39_and_heuristic_68():
    st = Staircase(1.3, 2.0, 0.27)
    x = np.linspace(-9, 9, 4001)
    for d in np.linspace(-2, 2, 17):
        assert np.all(st.pdf(x) <= math.exp(1.3) * st.pdf(x + d) * (1 + 1e-12))
    for eps in (5.0, 10.0, 20.0):
        b = math.exp(-eps)
        h = Staircase(eps, 1.0, gamma_heuristic(eps))
        prob = h.cdf(gamma_heuristic(eps)) - h.cdf(-gamma_heuristic(eps))
        assert prob == pytest.approx((b - b * b) / (3 * b - b * b), rel=1e-9)  # (68), -> 1/3


def test_gamma_validation():
    with pytest.raises(InvalidParameterError, match="gamma"):
        Staircase(1.0, 1.0, 1.2)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        Staircase(0.0, 1.0, 0.5)
    with pytest.raises(InvalidParameterError, match="cost"):
        parse_cost("cube")


# ------------------------------------------------------------------ discrete
@pytest.mark.parametrize("delta", [1, 2, 5, 10])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_discrete_staircase_is_a_pmf_and_exactly_eps_dp(delta, eps):
    for r in sorted({1, max(1, delta // 2), delta}):
        p = discrete_staircase_pmf(eps, delta, r, blocks=2)
        i = np.arange(-5 * delta, 5 * delta)
        brute = a_r(eps, delta, r) * np.exp(-eps * (np.abs(i) // delta)) * np.where(np.abs(i) % delta < r, 1, math.exp(-eps))
        assert np.allclose(p.mass(i), brute, rtol=1e-13, atol=0)
        assert p.probs.sum() + p.tail_mass == pytest.approx(1.0, abs=1e-14)
        prof = privacy_profile(p, Neighbourhood.sensitivity(delta))
        assert prof.epsilon_pure == pytest.approx(eps, rel=1e-12)
        # not eps-DP for a larger sensitivity: the guarantee is tight in Delta too
        assert privacy_profile(p, Neighbourhood.sensitivity(delta + 1)).epsilon_pure > eps * 1.01


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_delta_one_is_the_geometric_mechanism(eps):
    p = discrete_staircase_pmf(eps, 1, 1, blocks=3)
    g = geometric_pmf(math.exp(-eps), half_width=3)
    assert np.allclose(p.window(-10, 10), g.window(-10, 10), rtol=1e-13)
    assert r_star(eps, 1, "sq").r == 1


def test_discrete_costs_against_mpmath_sums():
    for eps, delta, r, k in ((1.0, 5, 2, 1), (0.5, 3, 3, 2), (2.0, 4, 1, 3)):
        a = a_r(eps, delta, r)
        mpmath.mp.dps = 30
        exact = 2 * mpmath.fsum(mpmath.mpf(i) ** k * a * mpmath.exp(-eps * (i // delta))
                                * (1 if i % delta < r else mpmath.exp(-eps)) for i in range(1, 4000))
        mpmath.mp.dps = 15
        assert expected_cost(discrete_staircase_pmf(eps, delta, r), f"pow:{k}") == pytest.approx(float(exact), rel=1e-12)


def test_expected_cost_tail_blocks_straddling_zero():
    """Tail blocks that contain both signs: the closed-form tail sums must start at the signed position."""
    tail = GeometricTail(0.5, 3)
    k = np.arange(-400, 400)
    for offset in (5, 1):  # right block -1, 0, 1 / left block -1, 0, 1
        p = IntegerPMF(np.arange(1.0, 8.0), offset=offset, left_tail=tail, right_tail=tail, normalize=True)
        for cost, fn in (("abs", np.abs), ("sq", np.square), ("pow:3", lambda x: np.abs(x) ** 3)):
            assert expected_cost(p, cost) == pytest.approx(float(p.mass(k) @ fn(k.astype(float))), rel=1e-12)


LP_CASES = [(d, e, c) for d in (2, 5, 10) for e in (0.5, 1.0, 2.0, 5.0) for c in ("abs", "sq")]


@pytest.mark.parametrize("delta,eps,cost", LP_CASES)
def test_integer_lp_equals_best_staircase_theorem_13(delta, eps, cost):
    lp = design_integer(eps, delta, cost)
    best = r_star(eps, delta, cost)
    assert lp.expected_cost == pytest.approx(best.expected_cost, rel=1e-9)
    assert lp.epsilon_certified <= eps * (1 + 1e-12)
    # the LP's PMF is P_r*: compare a few blocks (ties between r's excepted)
    second = sorted(best.costs)[1]
    if second > best.expected_cost * (1 + 1e-6):
        ref = discrete_staircase_pmf(eps, delta, best.r)
        k = np.arange(-3 * delta, 3 * delta + 1)
        assert np.allclose(lp.pmf.mass(k), ref.mass(k), rtol=1e-6)


def test_integer_lp_asymmetric_cost_and_window_independence():
    # costlier positive noise: the optimum shifts mass to the left and is no staircase
    cost = lambda x: np.where(x > 0, 3.0 * np.abs(x), np.abs(x))  # noqa: E731
    a = design_integer(1.0, 3, cost, half_width=24)
    b = design_integer(1.0, 3, cost, half_width=60)
    assert a.expected_cost == pytest.approx(b.expected_cost, rel=1e-9)
    assert a.pmf.mass(np.array([-2])) > a.pmf.mass(np.array([2]))
    assert a.expected_cost < r_star(1.0, 3, cost).expected_cost * (1 - 1e-3)
    assert a.epsilon_certified <= 1.0 * (1 + 1e-12)


def test_integer_lp_validation():
    with pytest.raises(InvalidParameterError, match="half_width"):
        design_integer(1.0, 5, "abs", half_width=3)
    with pytest.raises(InvalidParameterError, match="sensitivity"):
        design_integer(1.0, 0, "abs")


# ------------------------------------------------------------------ samplers
def _chi2_integer(draws: np.ndarray, pmf, half: int) -> float:
    """Chi-square of integer draws against a PMF on Z: bins -half..half plus one tail bin."""
    k = np.arange(-half, half + 1)
    probs = pmf.mass(k)
    exp = np.append(probs, 1.0 - probs.sum()) * draws.size
    inside = np.abs(draws) <= half
    obs = np.append(np.bincount(draws[inside] + half, minlength=k.size), (~inside).sum())
    keep = exp >= 5
    obs = np.append(obs[keep], obs[~keep].sum())
    exp = np.append(exp[keep], exp[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


@pytest.mark.parametrize("delta,r,wrong_r", [(5, 2, 4), (1, 1, None)])
def test_discrete_staircase_sampler_chi_square_and_power(delta, r, wrong_r):
    eps = 1.0
    draws = sample_discrete_staircase(eps, delta, r, 20000, SeededRandomSource(11))
    assert _chi2_integer(draws, discrete_staircase_pmf(eps, delta, r), 6 * delta) > ALPHA
    wrong = (discrete_staircase_pmf(eps, delta, wrong_r) if wrong_r is not None
             else geometric_pmf(math.exp(-1.2)))  # Delta = 1: a geometric with the wrong ratio
    assert _chi2_integer(draws, wrong, 6 * delta) < ALPHA


def test_continuous_sampler_ks_and_power():
    st = Staircase(1.0, 2.0, gamma_star_abs(1.0))
    x = st.sample(20000, SeededRandomSource(5))
    assert stats.kstest(x, st.cdf).pvalue > ALPHA
    wrong = Staircase(1.0, 2.0, gamma_star_abs(1.0) + 0.2)
    assert stats.kstest(x, wrong.cdf).pvalue < ALPHA
    assert np.mean(np.abs(x)) == pytest.approx(st.moment_abs(1), rel=0.05)


# ------------------------------------------------------------------ CLI
def test_cli_staircase_json_keys_and_values():
    res = runner.invoke(app, ["staircase", "--epsilon", "10", "--cost", "abs", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["gamma"] == pytest.approx(gamma_star_abs(10))
    assert d["gain"] == pytest.approx(d["laplace_cost"] / d["expected_cost"])
    res = runner.invoke(app, ["staircase", "--epsilon", "1", "--sensitivity", "5", "--discrete", "--cost", "sq",
                              "--r", "1", "--json"])
    d = json.loads(res.stdout)
    assert d["r"] == 1 and d["r_star"] == r_star(1.0, 5, "sq").r and d["optimal"] is False
    assert d["gain"] == pytest.approx(d["geometric_cost"] / d["expected_cost"])


def test_cli_staircase_bad_input_exit_2(tmp_path):
    for args in (["--epsilon", "1", "--discrete", "--sensitivity", "2.5"], ["--epsilon", "1", "--gamma", "2"],
                 ["--epsilon", "-1"], ["--epsilon", "1", "--cost", "cube"], ["--epsilon", "1", "--r", "1"]):
        res = runner.invoke(app, ["staircase", *args, "--json"])
        assert res.exit_code == 2, (args, res.output)
