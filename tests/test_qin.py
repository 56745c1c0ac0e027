"""Qin et al.: discretised noises, Table V against the tight analysis, Wasserstein-optimal noise."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from optnoise.analysis import privacy_profile
from optnoise.cli import app
from optnoise.design.wasserstein import design_wasserstein, input_distribution, w1_distance
from optnoise.errors import InvalidParameterError
from optnoise.families import parse_family
from optnoise.families.qin import (
    qin_exponential_pmf,
    qin_exponential_printed_total,
    qin_gaussian_pmf,
    qin_laplace_pmf,
    qin_staircase_pmf,
    table5,
)
from optnoise.families.staircase import r_star
from optnoise.neighbourhood import Neighbourhood
from optnoise.pmf import IntegerPMF

runner = CliRunner()


# ------------------------------------------------------------------ discretisation (2)
def test_discretisations_match_the_integral_of_the_density():
    g = qin_gaussian_pmf(3.0, 0.4)
    k = np.arange(-10, 11)
    assert np.allclose(g.mass(k), stats.norm.cdf(k + 1, 0.4, 3.0) - stats.norm.cdf(k, 0.4, 3.0), rtol=1e-12, atol=1e-300)
    lap = qin_laplace_pmf(2.0, 0.3)
    k = np.arange(-40, 41)
    assert np.allclose(lap.mass(k), stats.laplace.cdf(k + 1, 0.3, 2.0) - stats.laplace.cdf(k, 0.3, 2.0), rtol=1e-10)
    st = qin_staircase_pmf(4, 0.6)
    k = np.arange(-30, 30)
    j = np.where(k >= 0, k // 4, (-k - 1) // 4)
    assert np.allclose(st.mass(k), 0.4 / 8 * 0.6 ** j, rtol=1e-13)
    assert st.probs.sum() + st.tail_mass == pytest.approx(1.0)


def test_exponential_as_printed_is_not_normalised():
    for eta in (0.1, 0.5, 2.0):
        printed = sum(eta * math.exp(-eta * k) for k in range(1, 5000))
        assert qin_exponential_printed_total(eta) == pytest.approx(printed, rel=1e-12)
        assert abs(printed - 1.0) > 0.04  # eta/(e^eta - 1) is 1 only in the limit eta -> 0
        p = qin_exponential_pmf(eta)
        assert p.probs.sum() + p.tail_mass == pytest.approx(1.0, abs=1e-15)
        assert p.mass(np.array([0, -3]))[0] == 0.0


# ------------------------------------------------------------------ Table V
@pytest.mark.parametrize("m", [1, 3, 7, 15])
def test_table5_verdicts_follow_from_independent_computations(m):
    rows = {r.mechanism: r for r in table5(m)}
    lam, a, rho, eta = 10.0, 5, 0.5, 0.5
    # Laplace: adjacent masses differ by e^(1/lambda) except across the centre: tight eps = m/lambda
    lap = qin_laplace_pmf(lam)
    k = np.arange(-200, 200)
    ratio = max(np.max(np.log(lap.mass(k) / lap.mass(k + s))) for s in range(-m, m + 1) if s)
    assert rows["laplace"].tight_epsilon_pure == pytest.approx(ratio, rel=1e-9)
    assert ratio == pytest.approx(m / lam, rel=1e-9)
    assert rows["laplace"].verdict == "valid, loose"
    # staircase (21) is tight
    assert rows["staircase"].tight_epsilon_pure == pytest.approx(math.ceil(m / a) * math.log(1 / rho), rel=1e-12)
    assert rows["staircase"].verdict == "tight"
    # uniform: delta = m/(b-a+1) at every eps
    assert rows["uniform"].tight_delta_at_paper_epsilon == pytest.approx(m / 21)
    assert rows["uniform"].verdict == "tight"
    # exponential: one-sided support, no pure eps; delta at eta*m is the mass of 1..m
    assert math.isinf(rows["exponential"].tight_epsilon_pure)
    assert rows["exponential"].tight_delta_at_paper_epsilon == pytest.approx(1 - math.exp(-eta * m), rel=1e-9)
    assert rows["exponential"].verdict == "invalid"
    # Gaussian, sigma = 10, M = 30: an independent hockey-stick sum at the printed eps
    g = qin_gaussian_pmf(10.0)
    k = np.arange(-400, 400)
    for name in ("gaussian", "gaussian (14)"):
        eps = rows[name].paper_epsilon
        hs = max(np.maximum(g.mass(k) - math.exp(eps) * g.mass(k + s), 0).sum() for s in range(-m, m + 1) if s)
        assert rows[name].tight_delta_at_paper_epsilon == pytest.approx(hs, rel=1e-9, abs=1e-300)
        assert rows[name].verdict == ("invalid" if hs > rows[name].paper_delta else "valid, loose")
    # Table V's eps is (m+1)(2M+1-m)/(2 sigma^2): invalid for m = 15; the sup in (14) is valid
    assert rows["gaussian"].verdict == ("invalid" if m == 15 else "valid, loose")
    assert rows["gaussian (14)"].verdict == "valid, loose"


def test_families_parse_and_verify():
    for spec in ("staircase:1,5,2", "qin-gaussian:10", "qin-laplace:10,0.5", "qin-staircase:5,0.5",
                 "qin-uniform:-3,3", "qin-exponential:0.5"):
        _, obj = parse_family(spec)
        assert isinstance(obj, IntegerPMF)
    _, ch = parse_family("hamming:1,3,0.5")
    assert privacy_profile(ch.channel, ch.pairs).epsilon_pure == pytest.approx(0.5)
    for bad in ("staircase:1,5,7", "qin-staircase:0,0.5", "qin-uniform:3,1", "hamming:1,20,1", "qin-laplace:-1"):
        with pytest.raises(InvalidParameterError):
            parse_family(bad)


def test_cli_verify_family_and_families_list():
    res = runner.invoke(app, ["verify", "--family", "qin-laplace:10", "--bd", "3", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["epsilon_pure"] == pytest.approx(0.3)
    res = runner.invoke(app, ["verify", "--family", "hamming:2,2,0.7", "--epsilon", "0.5", "--json"])
    assert json.loads(res.stdout)["epsilon_pure"] == pytest.approx(0.7)
    res = runner.invoke(app, ["verify", "--family", "hamming:2,2,0.7", "--bd", "2", "--json"])
    assert res.exit_code == 2
    names = {f["name"] for f in json.loads(runner.invoke(app, ["families", "--json"]).stdout)["families"]}
    assert {"staircase", "qin-gaussian", "qin-laplace", "qin-staircase", "qin-uniform", "qin-exponential",
            "hamming"} <= names


# ------------------------------------------------------------------ Wasserstein
@pytest.fixture(scope="module")
def gauss_input():
    return input_distribution("gaussian:0,10")[0]


@pytest.fixture(scope="module")
def poisson_input():
    return input_distribution("poisson:5")[0]


def _brute_w1(x: IntegerPMF, noise: IntegerPMF, reach: int) -> float:
    """Direct sum_k |F_X - F_{X+theta}| with the noise written out to +-reach (no tails)."""
    q = noise.window(-reach, reach)
    k = np.arange(x.lo - reach - 5, x.hi + reach + 5)
    fx = np.array([x.probs[: max(0, min(v - x.lo + 1, x.probs.size))].sum() for v in k])
    out = np.zeros(k.size)
    for xv, px in zip(range(x.lo, x.hi + 1), x.probs):
        out[(xv - reach) - k[0]:(xv + reach) - k[0] + 1] += px * q
    return float(np.abs(fx - np.cumsum(out)).sum())


def test_w1_distance_against_brute_force(poisson_input):
    noise = qin_staircase_pmf(5, math.exp(-1 / 3))
    assert w1_distance(poisson_input, noise) == pytest.approx(_brute_w1(poisson_input, noise, 1200), rel=1e-10)
    # W1 of a pure shift is the shift
    shift = IntegerPMF([1.0], offset=-3)
    assert w1_distance(poisson_input, shift) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("which", ["gauss", "poisson"])
@pytest.mark.parametrize("eps", [0.5, 2.0, 4.0])
def test_w1_lp_is_dp_optimal_and_window_independent(which, eps, gauss_input, poisson_input):
    x = gauss_input if which == "gauss" else poisson_input
    d = design_wasserstein(x, eps, 15)
    assert d.epsilon_certified <= eps * (1 + 1e-12)
    wide = design_wasserstein(x, eps, 15, half_width=2 * max(x.hi - x.lo, 60))
    assert d.w1 == pytest.approx(wide.w1, rel=1e-7)
    # never worse than the paper's baselines under the same eps-DP constraint
    for base in (qin_laplace_pmf(15 / eps), qin_staircase_pmf(5, math.exp(-eps / 3)), qin_staircase_pmf(20, math.exp(-eps))):
        assert privacy_profile(base, Neighbourhood.bd(15)).epsilon_pure <= eps * (1 + 1e-9)
        assert d.w1 <= w1_distance(x, base) * (1 + 1e-9)
    # P2 (E|theta|) is solved by Geng's P_r* and can only be worse in W1
    p2 = design_wasserstein(x, eps, 15, objective="expected-abs")
    assert p2.expected_abs_noise == pytest.approx(r_star(eps, 15, "abs").expected_cost, rel=1e-8)
    assert d.w1 <= p2.w1 * (1 + 1e-9)


def test_p2_ignores_the_input(gauss_input, poisson_input):
    a = design_wasserstein(gauss_input, 1.0, 15, objective="expected-abs")
    b = design_wasserstein(poisson_input, 1.0, 15, objective="expected-abs", half_width=159)
    k = np.arange(-60, 61)
    assert np.allclose(a.pmf.mass(k), b.pmf.mass(k), rtol=1e-6, atol=1e-12)


def test_w1_optimum_is_strictly_better_than_p2_somewhere(poisson_input):
    d = design_wasserstein(poisson_input, 3.0, 15)
    p2 = design_wasserstein(poisson_input, 3.0, 15, objective="expected-abs")
    assert d.w1 < 0.99 * p2.w1


def test_wasserstein_cli_and_errors(tmp_path):
    res = runner.invoke(app, ["wasserstein", "--input", "poisson:5", "--sensitivity", "3", "--epsilon", "1", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    for key in ("w1", "expected_abs_noise", "pmf", "offset", "tail_mass"):
        assert key in d
    assert sum(d["pmf"]) + d["tail_mass"] == pytest.approx(1.0, abs=1e-12)
    f = tmp_path / "x.json"
    f.write_text(json.dumps({"pmf": [0.25, 0.5, 0.25], "offset": 1}))
    res = runner.invoke(app, ["wasserstein", "--input", f"pmf-file:{f}", "--sensitivity", "2", "--epsilon", "1", "--json"])
    assert res.exit_code == 0, res.output
    for args in (["--input", "beta:1"], ["--input", "poisson:-1"], ["--input", "gaussian:0"],
                 ["--input", "poisson:5", "--objective", "w2"], ["--input", "poisson:5", "--window", "3"]):
        res = runner.invoke(app, ["wasserstein", *args, "--sensitivity", "5", "--epsilon", "1", "--json"])
        assert res.exit_code == 2, (args, res.output)
