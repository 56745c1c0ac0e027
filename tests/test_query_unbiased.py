"""``unbiased = true`` for counts, histograms and sums (issue 22, item 4).

Unbiasedness is checked exactly on the certified (sampled) weights, in rationals; the draws
against that law by chi-square at ALPHA (the false-alarm rate per test), with fixed seeds and
a power check against a wrong law; the price against closed forms computed here; the refusal
for a peak or a mode. docs/proofs/unbiased-counts.md has the arguments.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

from optnoise.design import Request, design
from optnoise.errors import InvalidParameterError
from optnoise.neighbourhood import Neighbourhood
from optnoise.analysis.intervals import noise_window
from optnoise.query.intervals import expected_abs_error, interval, unbiased_price
from optnoise.query.mechanisms import unbiased_cell
from optnoise.query.release import query
from optnoise.query.spec import parse_query_spec
from optnoise.query.unbiased import exact_mean, is_symmetric, symmetric_noise
from optnoise.randomness import SeededRandomSource
from optnoise.sampling.quantize import integer_line_form
from optnoise.target import Target

ALPHA = 1e-3

warnings.filterwarnings("ignore", message=".*not private.*")


# ------------------------------------------------------------------ exact unbiasedness
@pytest.mark.parametrize("distance,target,built", [(1, Target(1.0), "geometric"),
                                                   (1, Target(0.5, 1e-6), "geometric"),
                                                   (3, Target(1.0), "staircase"),
                                                   (80, Target(1.0), "alpha = e^(-eps/80)")])
def test_unbiased_cell_has_mean_zero_noise_exactly(distance, target, built):
    """sum_y y P(y | q) = q in rationals for the weights that are sampled: the noise is
    palindromic about 0 with equal tails, and its exact mean (closed-form tails) is 0 --
    the geometric (distance 1), the discrete staircase (2..64), the chained geometric."""
    cell = unbiased_cell("c", 20 if distance < 80 else 100, 0, distance, target)
    assert built in cell.built
    assert cell.space == "line"
    q = cell.noise.quantize()
    assert is_symmetric(q) and exact_mean(q) == 0
    for truth in (0, 7, 20):            # E[q + eta] = q + E[eta]
        assert truth + exact_mean(q) == truth
    # the certificate is of these weights, and meets the target
    assert q.certificate.exact and (cell.epsilon_pure <= target.epsilon if target.pure else
                                    q.certificate.delta_dp <= target.delta)


def test_a_pdp_target_gets_pure_noise_just_below_it():
    """PDP (1, 1e-6): the geometric at pure eps (1 - 1e-6), whose loss never exceeds eps, so
    its PDP delta is 0; exactly unbiased; no bounded mechanism at n = 20 (the PDP channel
    stops at n = 16), and the price says so instead of a ratio."""
    cell = unbiased_cell("c", 20, 0, 1, Target(1.0, 1e-6, "pdp"))
    q = cell.noise.quantize()
    assert exact_mean(q) == 0 and q.certificate.epsilon_pure < 1.0 and q.certificate.delta_pdp == 0
    price = unbiased_price(cell)
    assert price["ratio"] is None and "none certified" in price["bounded_mechanism"]


def test_mirroring_is_what_makes_it_unbiased():
    """The quantized two-sided geometric at (1, 1e-6) is off by a rounding unit (its exact
    mean is not 0); mirrored (W + reversed W), it is exactly 0, and certified again."""
    found = design(Request(space="integer", target=Target(1.0, 1e-6), neighbourhood=Neighbourhood.bd(1),
                           family="geometric"))
    raw = found.mechanism.quantize()
    assert not is_symmetric(raw) and exact_mean(raw) != 0
    sym = symmetric_noise(found.mechanism, Target(1.0, 1e-6)).quantize()
    assert is_symmetric(sym) and exact_mean(sym) == 0 and sym.certificate.delta_dp <= 1e-6


def test_exact_mean_against_a_cell_by_cell_sum():
    """exact_mean's closed-form tails against a direct sum over the cells (tails cut where
    their remaining mass times the distance is below 1e-30), on an asymmetric noise."""
    found = design(Request(space="integer", target=Target(1.0, 1e-6), neighbourhood=Neighbourhood.bd(1),
                           family="geometric"))
    q = found.mechanism.quantize()
    w = [int(x) for x in q.weights]
    (a, m, _), (a2, m2, _) = q.left, q.right
    r_l, r_r = Fraction(a, 1 << m), Fraction(a2, 1 << m2)
    z = sum(w) + w[0] * r_l / (1 - r_l) + w[-1] * r_r / (1 - r_r)
    total = sum((q.lo + i) * x for i, x in enumerate(w))
    total += sum((q.hi + t) * w[-1] * r_r ** t + (q.lo - t) * w[0] * r_l ** t for t in range(1, 160))
    assert abs(float(total / z - exact_mean(q))) < 1e-30
    assert exact_mean(q) != 0


# ------------------------------------------------------------------ draws against the law
def test_unbiased_draws_follow_the_certified_law():
    """20,000 releases of the true count 0 (N = 20): values below 0 occur (not clamped); the
    frequencies of y - q match the certified noise (chi-square at ALPHA, cells with expected
    count >= 5, the rest pooled each side); power: against the geometric at eps 1.3, rejected.
    The sample mean is within 4 standard errors of the truth (false alarm 6e-5)."""
    cell = unbiased_cell("c", 20, 0, 1, Target(1.0))
    q = cell.noise.quantize()
    size = 20_000
    y = cell.release(np.zeros(size, dtype=np.int64), SeededRandomSource(5))
    assert y.min() < 0 and y.dtype.kind == "i"
    r = Fraction(q.right[0], 1 << q.right[1])
    w = [int(x) for x in q.weights]
    z = sum(w) + 2 * w[-1] * r / (1 - r)
    ks = np.arange(-6, 7)
    p = np.array([float(Fraction(w[k - q.lo], 1) / z) if q.lo <= k <= q.hi else
                  float(w[-1] * r ** (abs(k) - q.hi) / z) for k in ks])
    side = (1 - p.sum()) / 2
    obs = np.array([np.sum(y < -6)] + [np.sum(y == k) for k in ks] + [np.sum(y > 6)])
    exp = np.concatenate([[side], p, [side]]) * size
    assert chisquare(obs, exp).pvalue > ALPHA
    a = math.exp(-1.3)
    wrong = np.array([(1 - a) / (1 + a) * a ** abs(k) for k in ks])
    exp_w = np.concatenate([[(1 - wrong.sum()) / 2], wrong, [(1 - wrong.sum()) / 2]]) * size
    assert chisquare(obs, exp_w).pvalue < ALPHA
    sd = math.sqrt(2 * math.exp(-1) / (1 - math.exp(-1)) ** 2)       # the geometric's standard deviation
    assert abs(y.mean()) < 4 * sd / math.sqrt(size)


def test_unbiased_intervals_cover_and_stay_in_the_domain():
    """Released values above N occur at q = N; the intervals lie inside 0..N and cover the
    truth at least 1 - alpha of the time (3 binomial standard errors)."""
    n = 20
    cell = unbiased_cell("c", n, 0, 1, Target(0.5))
    src = SeededRandomSource(8)
    for truth in (0, 10, n):
        y = cell.release(np.full(3000, truth), src)
        low, high, how = interval(cell, y, 0.05)
        assert low.min() >= 0 and high.max() <= n and "integers" in how
        assert np.mean((low <= truth) & (truth <= high)) >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 3000)
        if truth == n:
            assert y.max() > n


def test_chained_unbiased_intervals_cover_and_are_not_trivial():
    """Distance 80 (the chained geometric, alpha = e^(-1/80), tails grouped in blocks), N = 5,000:
    the window (exact, tails in closed form) covers the truth at least 1 - alpha of the time,
    its median width is below twice the Laplace 95 % width 2 ln(20) * 80 (not trivially wide),
    and it is the exact equal-tailed window (checked against brute force in test_query_total.py)."""
    n = 5000
    cell = unbiased_cell("c", n, 0, 80, Target(1.0))
    assert cell.chained == 80
    y = cell.release(np.full(3000, n // 2), SeededRandomSource(9))
    low, high, how = interval(cell, y, 0.05)
    assert np.mean((low <= n // 2) & (n // 2 <= high)) >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 3000)
    assert np.median(high - low) < 2 * 2 * math.log(20) * 80
    q = cell.noise.quantize()           # tails of period > 1: the exact equal-tailed window itself
    assert q.right[2] > 1
    exact = noise_window(integer_line_form(q.weights, q.lo, q.left, q.right), 0.05, method="equal-tailed")
    assert f"[{exact.low}, {exact.high}]" in how
    assert abs(float(y.mean()) - n // 2) < 4 * math.sqrt(2) * 80 / math.sqrt(3000)   # sd of Laplace(80)


# ------------------------------------------------------------------ the price
def test_price_against_closed_forms():
    """eps = 1, N = 30, distance 1: the unbiased error is the two-sided geometric's
    E|eta| = 2a / (1 - a^2), a = e^-eps; the default (the optimal channel) has the clamped
    geometric's errors (Ghosh et al. 2009): worst case in the middle, average
    mean_q [sum_{j=1}^{N-q} a^j / (1 + a) + sum_{j=1}^{q} a^j / (1 + a)], computed here."""
    n, a = 30, math.exp(-1.0)
    cell = unbiased_cell("c", n, 0, 1, Target(1.0))
    price = unbiased_price(cell)
    geo = 2 * a / (1 - a * a)
    per_q = [sum(a ** j / (1 + a) for j in range(1, n - q + 1)) + sum(a ** j / (1 + a) for j in range(1, q + 1))
             for q in range(n + 1)]
    assert price["expected_abs_error"] == pytest.approx(geo, rel=1e-6)
    assert price["bounded_expected_abs_error"] == pytest.approx(max(per_q), rel=1e-6)
    assert price["bounded_average_abs_error"] == pytest.approx(sum(per_q) / (n + 1), rel=1e-6)
    assert price["average_ratio"] == pytest.approx(geo * (n + 1) / sum(per_q), rel=1e-5)
    assert price["average_ratio"] > 1.05 and "biased near its ends" in price["price"]


def test_staircase_price_against_its_closed_form_and_units():
    """Distance 24 (a count of rows, 24 per unit), eps 1, N = 2,400: the unbiased error is
    E|eta| of Geng & Viswanath's P_r (computed here from (82)-(83): p(i) ~ b^(i // D) and one
    more b where i % D >= r, b = e^-eps; min over r), against the default (the clamped chained
    geometric, beyond the channel's size) whose worst case is about E|eta| of the geometric
    alpha = e^(-eps / 24), 2 alpha / (1 - alpha^2) -- the staircase is cheaper -- so the default is
    the same staircase clamped, whose worst case (mid-domain) is E|eta| itself (ratio 1).
    A sum's price is scaled by its resolution, like its error."""
    eps, d = 1.0, 24
    cell = unbiased_cell("s", 2400, 0, d, Target(eps))
    assert "staircase" in cell.built and cell.epsilon_pure <= eps
    b = math.exp(-eps)
    i = np.arange(0, 200 * d)

    def abs_err(r: int) -> float:
        p = b ** (i // d) * np.where(i % d < r, 1.0, b)
        return 2 * float((p * i).sum()) / (2 * float(p.sum()) - p[0])

    staircase = min(abs_err(r) for r in range(1, d + 1))
    alpha = math.exp(-eps / d)
    one, tenth = unbiased_price(cell), unbiased_price(cell, 0.1)
    assert one["expected_abs_error"] == pytest.approx(staircase, rel=1e-5)
    ideal = 2 * alpha / (1 - alpha ** 2)
    assert staircase < 0.97 * ideal
    # the default clamps the same noise: never worse, and mid-domain the clamp almost never acts
    assert "staircase" in cell.bounded.built and "clamped" in cell.bounded.built
    assert staircase * (1 - 1e-6) <= one["bounded_expected_abs_error"] <= staircase * (1 + 1e-5)
    assert one["ratio"] == pytest.approx(1.0, abs=1e-5) and one["average_ratio"] > 1.0
    assert tenth["expected_abs_error"] == pytest.approx(one["expected_abs_error"] / 10)
    assert one["expected_abs_error"] == pytest.approx(expected_abs_error(cell)[0])


# ------------------------------------------------------------------ the document and refusals
def test_document_says_unbiased_and_its_price():
    frame = pd.DataFrame({"u": [1, 1, 2, 3, 4], "k": [0, 1, 1, 0, 1], "v": [0.5, 1.0, 2.0, 0.0, 1.5]})
    spec = {"unit": {"id": "u", "max_rows": 2},
            "statistics": {"c": {"kind": "count", "where": {"k": 1}, "epsilon": 1.0, "unbiased": True},
                           "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 0.5,
                                 "epsilon": 1.0, "unbiased": True}}}
    doc = query(frame, spec, seed=4)
    c = doc["statistics"]["c"]
    assert isinstance(c["value"], int) and c["mechanism"]["space"] == "line"
    assert c["unbiased"]["unbiased"] is True and c["unbiased"]["ratio"] is not None
    assert 0 <= c["interval"][0] <= c["interval"][1] <= 4
    assert "may be negative" in c["unbiased"]["values"]
    assert "not unbiased" in doc["statistics"]["s"]["note"]


@pytest.mark.parametrize("stat,match", [
    ({"kind": "peak", "key": "k", "keys": [0, 1], "of": "v", "clamp": {"lower": 0, "upper": 2}},
     "statistics.s.unbiased"),
    ({"kind": "mode", "key": "k", "keys": [0, 1]}, "statistics.s.unbiased"),
    ({"kind": "count", "mechanism": "clamped-geometric"}, "not clamped"),
    ({"kind": "count", "unbiased": "yes"}, "true or false"),
])
def test_unbiased_refusals(stat, match):
    spec = {"unit": {"id": "u", "max_rows": 2}, "statistics": {"s": {"epsilon": 1.0, "unbiased": True, **stat}}}
    with pytest.raises(InvalidParameterError, match=match):
        parse_query_spec(spec)


def test_cli_refuses_unbiased_peak_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from optnoise.cli.app import app
    pd.DataFrame({"u": [1, 2], "k": [0, 1], "v": [1.0, 2.0]}).to_csv(tmp_path / "r.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text('unit = { id = "u", max_rows = 1 }\n[statistics.top]\nkind = "peak"\nkey = "k"\n'
                    'keys = [0, 1]\nof = "v"\nclamp = { lower = 0, upper = 2 }\nepsilon = 1.0\nunbiased = true\n')
    run = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "r.csv"), "--spec", str(spec), "--output",
                                   str(tmp_path / "o.json")])
    assert run.exit_code == 2 and "statistics.top.unbiased" in run.output
    assert len(run.output.strip().splitlines()) == 1 and "Traceback" not in run.output
    assert not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ no unbiased channel beats the geometric
def _pair_dual(a: Fraction) -> tuple[Fraction, Fraction]:
    """The dual of docs/proofs/unbiased-counts.md, item 4: ``c = -(1 + a) / (1 - a)`` and
    ``lambda = 2a / (1 - a^2)`` for the rows 0 and 1."""
    return -(1 + a) / (1 - a), 2 * a / (1 - a * a)


@pytest.mark.parametrize("a", [Fraction(1, 2), Fraction(1, 3), Fraction(9, 10), Fraction(1, 100)])
def test_pair_bound_dual_is_feasible_exactly(a):
    """For every output y: A + a B >= 0 and A + B / a >= 0, with A = |y| - c y - lambda and
    B = |y - 1| + c (y - 1) - lambda (exact rationals, y in -60..60; both are linear in y on
    y <= 0 and on y >= 1, so the ends and slopes there settle the rest), and one of them is 0:
    the bound 2 lambda is attained (by the two-sided geometric)."""
    c, lam = _pair_dual(a)
    for y in range(-60, 61):
        A = abs(y) - c * y - lam
        B = abs(y - 1) + c * (y - 1) - lam
        assert A + a * B >= 0 and A + B / a >= 0
        assert A + a * B == 0 if y <= 0 else A + B / a == 0
    af = float(a)
    k = np.arange(-3000, 3001)
    geo = float(np.sum(np.abs(k) * (1 - af) / (1 + af) * af ** np.abs(k)))   # E|eta| of the geometric, summed
    assert geo == pytest.approx(float(lam), rel=1e-12)


def test_no_unbiased_channel_beats_the_geometric_in_the_worst_case():
    """Floating-point LP (HiGHS), N = 2, eps = 1, outputs -15..17: the least worst-case
    E|y - q| of an unbiased pure eps-DP channel is the geometric's 2a / (1 - a^2) (the proven
    bound; the LP's optimum sits at it, up to the truncated tails). Power: without the
    unbiasedness rows, the LP goes below it (the clamped geometric's remap is biased)."""
    from scipy.optimize import linprog
    from scipy.sparse import lil_matrix
    n, eps, reach = 2, 1.0, 15
    ys = np.arange(-reach, n + reach + 1)
    m, rows, e = ys.size, n + 1, math.exp(eps)
    nv = rows * m + 1

    def solve(unbiased: bool) -> float:
        ub = lil_matrix((2 * n * m + rows, nv))
        r = 0
        for q in range(n):
            for j in range(m):
                ub[r, q * m + j], ub[r, (q + 1) * m + j] = 1, -e
                ub[r + 1, (q + 1) * m + j], ub[r + 1, q * m + j] = 1, -e
                r += 2
        for q in range(rows):
            ub[r, q * m:(q + 1) * m] = np.abs(ys - q)
            ub[r, nv - 1] = -1
            r += 1
        eq = lil_matrix((2 * rows, nv))
        for q in range(rows):
            eq[2 * q, q * m:(q + 1) * m] = 1
            eq[2 * q + 1, q * m:(q + 1) * m] = ys
        keep = np.arange(0, 2 * rows, 1 if unbiased else 2)       # the mean rows only when unbiased
        targets = np.array([v for q in range(rows) for v in (1, q)], dtype=float)[keep]
        cost = np.zeros(nv)
        cost[-1] = 1
        res = linprog(cost, A_ub=ub.tocsr(), b_ub=np.zeros(r), A_eq=eq.tocsr()[keep], b_eq=targets,
                      bounds=(0, None), method="highs")
        assert res.status == 0
        return float(res.fun)

    a = math.exp(-eps)
    bound = 2 * a / (1 - a * a)
    assert solve(True) >= bound * (1 - 1e-9)
    assert solve(True) <= bound * (1 + 1e-6)
    assert solve(False) < bound * 0.99
