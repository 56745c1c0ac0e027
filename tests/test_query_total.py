"""The unit's total of a query document (issue 22): its attack readout (``total.attack``),
bounded from the composed privacy profile, against closed forms by hand and against the exact
composed trade-off curve of the same cells (the computation the release manifest's
``record_attack`` runs, :func:`optnoise.analysis.tradeoff_composition.compose_tradeoff`)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from optnoise.analysis.tradeoff import profile_readout, swap_closed
from optnoise.analysis.tradeoff_composition import compose_tradeoff
from optnoise.neighbourhood import InputPairs, Neighbourhood
from optnoise.query.aggregate import aggregate
from optnoise.query.release import plan, query, unit_total
from optnoise.query.spec import parse_query_spec

warnings.filterwarnings("ignore", message=".*not private.*")

FPRS = (0.001, 0.01, 0.05, 0.1)


# ------------------------------------------------------------------ closed forms by hand
def test_pure_total_is_the_closed_form():
    """Pure eps = 1, symmetric: TPR(a) = min(e a, 1 - e^-1 (1 - a)); advantage (e - 1)/(e + 1);
    posterior e/(1 + e); mu = 2 Phi^-1(e / (1 + e)). Each rounded up, by less than 1e-12."""
    e = math.e
    r = profile_readout([], pure=1.0, symmetric=True, fprs=(0.05, 0.5))
    assert r.tpr(0.05) == pytest.approx(e * 0.05, abs=1e-12) and r.tpr(0.05) >= e * 0.05
    assert r.tpr(0.5) == pytest.approx(1 - 0.5 / e, abs=1e-12) and r.tpr(0.5) >= 1 - 0.5 / e
    assert r.advantage == pytest.approx((e - 1) / (e + 1), abs=1e-12) and r.advantage >= (e - 1) / (e + 1)
    assert r.posterior == pytest.approx(e / (1 + e), abs=1e-12) and r.posterior >= e / (1 + e)
    assert r.mu_gdp == pytest.approx(2 * norm.ppf(e / (1 + e)), rel=1e-9)
    directed = profile_readout([], pure=1.0, symmetric=False, fprs=(0.5,))
    assert directed.tpr(0.5) == 1.0                    # without the swapped pair only e a, capped at 1
    assert directed.advantage == pytest.approx(1 - 1 / e, abs=1e-12)


def test_points_with_delta_by_hand():
    """(eps, delta) = (1, 0.1) and (0, 0.3): TPR(0.05) = min(e 0.05 + 0.1, 0.05 + 0.3,
    1 - e^-1 (0.85), 1 - 0.65) = 0.2359; advantage min((e - 1 + 0.2)/(e + 1), 0.3)."""
    e = math.e
    r = profile_readout([(1.0, 0.1), (0.0, 0.3)], pure=math.inf, symmetric=True, fprs=(0.05,))
    assert r.tpr(0.05) == pytest.approx(e * 0.05 + 0.1, abs=1e-12) and r.tpr(0.05) >= e * 0.05 + 0.1
    assert r.worst_pair["tpr_at_fpr 0.05"].startswith("epsilon 1,")
    assert r.advantage == pytest.approx(0.3, abs=1e-12)
    assert r.posterior == 1.0 and r.mu_gdp == math.inf   # no pure epsilon: nothing bounds the ratio


def test_swap_closed():
    assert swap_closed(Neighbourhood((1, 2)))
    assert swap_closed(InputPairs(((0, 1), (1, 0)), directed=True))
    assert not swap_closed(InputPairs(((0, 1),), directed=True))


# ------------------------------------------------------------------ against the exact curve
def _frame(units: int = 5) -> pd.DataFrame:
    rows = [(u, u % 2, u % 3) for u in range(units)]
    return pd.DataFrame(rows, columns=["u", "k", "g"])


def _total(stats: dict, units: int = 5):
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 1}, "statistics": stats})
    planned = plan(spec, aggregate([_frame(units)], spec))
    items = [(item.profile(), len(item.parts)) for item in planned]
    return unit_total(planned, spec), items


@pytest.mark.parametrize("stats", [
    {"n": {"kind": "count", "where": {"k": 1}, "epsilon": 0.7},
     "h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 0.6}},
    {"n": {"kind": "count", "where": {"k": 1}, "epsilon": 1.0, "delta": 1e-3,
           "mechanism": "clamped-discrete-gaussian"}},
])
def test_bound_is_never_below_the_exact_composed_curve(stats):
    total, items = _total(stats)
    got = total["attack"]
    exact = compose_tradeoff(items).readout(FPRS)
    assert exact.method == "exact composition"
    for a in FPRS:
        assert got["tpr_at_fpr"][f"{a:g}"] >= exact.tpr(a)
    assert got["advantage"] >= exact.advantage and got["posterior"] >= exact.posterior
    assert got["mu_gdp"] >= exact.mu_gdp
    assert got["tpr_at_fpr"]["0.05"] < 1.0          # and not trivial


def test_a_pure_curve_is_met_exactly():
    """A count over one unit (domain {0, 1}): the optimal channel is randomized response,
    whose exact curve is the pure curve f_{eps,0} itself, eps its certified pure epsilon: the
    bound equals the exact readout, up to rounding up."""
    total, items = _total({"n": {"kind": "count", "where": {"k": 0}, "epsilon": 1.0}}, units=1)
    got = total["attack"]
    exact = compose_tradeoff(items).readout(FPRS)
    assert exact.method == "exact composition"
    for a in FPRS:
        t = got["tpr_at_fpr"][f"{a:g}"]
        assert exact.tpr(a) <= t <= exact.tpr(a) + 1e-12
    assert exact.advantage <= got["advantage"] <= exact.advantage + 1e-12
    assert exact.posterior <= got["posterior"] <= exact.posterior + 1e-12
    assert exact.mu_gdp <= got["mu_gdp"] <= exact.mu_gdp + 1e-9


# ------------------------------------------------------------------ the document
def test_document_total_has_the_attack_and_the_statement_says_it():
    spec = {"unit": {"id": "u", "max_rows": 1}, "budget": {"epsilon": 2.0},
            "statistics": {"n": {"kind": "count", "where": {"k": 1}, "epsilon": 0.5},
                           "h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 0.5}}}
    doc = query(_frame(), spec)
    attack = doc["total"]["attack"]
    assert {"tpr_at_fpr", "advantage", "mu_gdp", "posterior", "prior_odds", "exact", "method", "worst_pair",
            "in_words", "how"} <= set(attack)
    assert attack["exact"] is False and attack["method"] == "privacy profile"
    assert "In attack terms: " in doc["statement"] and "a u's rows" in doc["statement"]
    seeded = query(_frame(), spec, seed=1)
    assert "total" not in seeded and "attack" in seeded["only_if_unseeded"]["total"]
    removed = query(_frame(), {**spec, "unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 9}})
    assert "A: in the table, B: left out" in removed["total"]["attack"]["in_words"]


# ------------------------------------------------------------------ the chained geometric's interval, exactly
from fractions import Fraction  # noqa: E402

from optnoise.analysis.intervals import equal_tailed_noise_window  # noqa: E402
from optnoise.analysis.pairs import IntegerForm  # noqa: E402
from optnoise.query.intervals import interval  # noqa: E402
from optnoise.query.mechanisms import count_cell  # noqa: E402
from optnoise.sampling.quantize import integer_line_form  # noqa: E402
from optnoise.target import Target  # noqa: E402


def _unrolled(form: IntegerForm, cells: int) -> tuple[dict, Fraction, Fraction]:
    """Brute force: exact masses on the window and ``cells`` blocks of each tail, unrolled one
    by one, and the exact mass left beyond them on each side (left, right)."""
    w = [Fraction(int(x), form.denominator) for x in form.weights]
    lo, hi = form.lo, form.lo + len(w) - 1
    mass = {lo + i: m for i, m in enumerate(w)}
    rest = []
    for side, tail in ((-1, form.left), (1, form.right)):
        if tail is None:
            rest.append(Fraction(0))
            continue
        r, period = Fraction(tail[0]), int(tail[1])
        block = w[:period] if side < 0 else w[-period:]
        for t in range(1, cells + 1):
            for j, m in enumerate(block):
                x = (lo - t * period + j) if side < 0 else (hi + (t - 1) * period + j + 1)
                mass[x] = m * r ** t
        rest.append(sum(block) * r ** (cells + 1) / (1 - r))
    return mass, rest[0], rest[1]


def _quantiles(form: IntegerForm, alpha: Fraction, cells: int) -> tuple[int, int]:
    """The largest l with P(eta < l) <= alpha/2 and the smallest u with P(eta > u) <= alpha/2, by definition."""
    mass, left, right = _unrolled(form, cells)
    xs = sorted(mass)
    below, acc = [], left
    for x in xs:
        below.append(acc)
        acc += mass[x]
    above, acc = [], right
    for x in reversed(xs):
        above.append(acc)
        acc += mass[x]
    above.reverse()
    half = alpha / 2
    assert below[-1] > half and above[0] > half       # enough unrolled: the quantiles are inside
    return max(x for x, b in zip(xs, below) if b <= half), min(x for x, a in zip(xs, above) if a <= half)


@pytest.mark.parametrize("weights, tails, alpha", [
    ([5, 9, 20, 9, 5], ((1, 1), (1, 1)), "0.05"),            # r = 1/2 both sides, quantiles in the tails
    ([5, 9, 20, 9, 5], ((3, 2), (3, 2)), "0.2"),             # r = 3/4, period 2
    ([1, 200, 3, 2], ((1, 1), (5, 1)), "0.1"),               # asymmetric: 1/2 left, 5/6 right
    ([40, 30, 20, 10], (None, (1, 1)), "0.5"),               # the quantile inside the window
])
def test_equal_tailed_window_against_brute_force(weights, tails, alpha):
    left, right = ((Fraction(t[0], t[0] + 1), t[1]) if t else None for t in tails)
    den = Fraction(sum(weights))
    for tail, block in ((left, weights[:left[1]] if left else []), (right, weights[-right[1]:] if right else [])):
        if tail:
            den += sum(block) * tail[0] / (1 - tail[0])
    scale = den.denominator
    form = IntegerForm("integer", np.array([w * scale for w in weights], dtype=object), int(den * scale), lo=-2,
                       left=left, right=right)
    win = equal_tailed_noise_window(form, alpha)
    l, u = _quantiles(form, Fraction(alpha), 60)
    assert (win.low, win.high) == (l, u)
    mass, rest_l, rest_r = _unrolled(form, 60)
    assert win.mass == 1 - sum(m for x, m in mass.items() if x < l or x > u) - rest_l - rest_r


def test_chained_geometric_interval_covers_every_truth_exactly():
    """A sum cell one unit moves by 3 (the chained geometric), domain 0..12: the exact law of
    the clamped release for every true q, from the quantized weights unrolled by brute force;
    P(q in I(Y)) >= 1 - alpha for every q, and the window is the exact equal-tailed one (one
    step narrower on either side breaks a tail's alpha/2)."""
    n, alpha = 12, Fraction(1, 10)
    cell = count_cell("s", n, 0, 3, Target(1.0), choice="clamped-geometric")
    assert cell.chained == 3
    q = cell.noise.quantize()
    form = integer_line_form(q.weights, q.lo, q.left, q.right)
    mass, left, right = _unrolled(form, 100)
    assert left < Fraction(1, 10 ** 12) and right < Fraction(1, 10 ** 12)
    low, high, how = interval(cell, np.arange(n + 1), 0.1)
    assert "exact equal-tailed" in how
    for truth in range(n + 1):
        law = [Fraction(0)] * (n + 1)
        for x, m in mass.items():
            law[min(max(truth + x, 0), n)] += m
        law[0] += left
        law[n] += right
        covered = sum(p for y, p in enumerate(law) if low[y] <= truth <= high[y])
        assert covered >= 1 - alpha
    l, u = _quantiles(form, alpha, 100)
    assert f"[{l}, {u}]" in how


def test_attack_budget_is_checked_on_the_attack_readout():
    """budget = { max_tpr, at_fpr } (or max_mu): met iff the total's attack readout meets it --
    the readout at at_fpr is a proven bound, never below the pure sum's exact curve
    min(e^eps FPR, 1 - e^-eps (1 - FPR)) at eps = 1.5 here (the pure line is among its lines),
    refused just below the readout -- and a share of it is refused."""
    from optnoise.errors import InvalidParameterError
    from optnoise.query.files import warm_modules
    from optnoise.query.spec import parse_query_spec
    frame = pd.DataFrame({"u": [1, 1, 2, 3, 4], "k": [0, 1, 1, 0, 1]})
    stats = {"n": {"kind": "count", "epsilon": 1.0},
             "h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 0.5}}
    pure_line = min(math.exp(1.5) * 0.05, 1 - math.exp(-1.5) * 0.95)
    ok = {"unit": {"id": "u", "max_rows": 2}, "budget": {"max_tpr": 0.5, "at_fpr": 0.05}, "statistics": stats}
    assert warm_modules(parse_query_spec(ok)) == ()
    doc = query(frame, ok)
    tpr = doc["total"]["attack"]["tpr_at_fpr"]["0.05"]
    assert tpr <= pure_line * (1 + 1e-9) and doc["total"]["within_budget"] is True
    assert doc["total"]["budget"]["notion"] == "attack"
    with pytest.raises(InvalidParameterError, match="TPR"):
        query(frame, {**ok, "budget": {"max_tpr": tpr * 0.99, "at_fpr": 0.05}})
    doc = query(frame, {**ok, "budget": {"max_mu": 3.0}})
    assert doc["total"]["within_budget"] is True
    with pytest.raises(InvalidParameterError, match="share"):
        query(frame, {**ok, "statistics": {"n": {"kind": "count", "share": 0.5}}})


def test_a_statistics_cells_are_composed_as_mixed_pairs():
    """One unit moves a statistic's two cells by *different* pairs (under replace: one cell
    down, one up). With asymmetric noise the mix of the ``+1`` and ``-1`` pairs is worse than
    either pair composed with itself, so the unit's total must compose the cells as mixed
    (docs/proofs/composed-bounds.md, "The cells of one statistic"); symmetric noise keeps one
    pair and its exact self-composition. The truth is the hockey-stick divergence of the
    product law, summed directly."""
    from optnoise import IntegerPMF, Neighbourhood
    from optnoise.analysis import privacy_profile
    from optnoise.analysis.composition import compose_best
    from optnoise.query.release import moved_items

    w = np.array([0.018, 0.636, 0.277, 0.002, 0.062, 0.005])
    w = w / w.sum()
    eps = 2.68
    here, there = np.append(w, 0.0), np.insert(w, 0, 0.0)     # the noise at x and at x + 1
    up, down = (here, there), (there, here)
    product = np.outer(up[0], down[0]).ravel(), np.outer(up[1], down[1]).ravel()
    truth = float(np.maximum(product[0] - math.exp(eps) * product[1], 0).sum())

    class Part:
        def __init__(self, pmf):
            self.pmf = pmf

        def composition_profile(self):
            return privacy_profile(self.pmf, Neighbourhood.sd(1))

    asymmetric = IntegerPMF(w, offset=0)
    items, mixed = moved_items([(Part(asymmetric), 2, (eps, 0.0))])
    assert mixed == [True]
    same_pair = compose_best(items, epsilon=eps, mixed=[False]).delta_dp
    assert same_pair < truth - 0.05                     # the old composition understated it
    assert compose_best(items, epsilon=eps, mixed=mixed).delta_dp >= truth
    symmetric = IntegerPMF(np.array([0.1, 0.2, 0.4, 0.2, 0.1]), offset=-2)
    assert moved_items([(Part(symmetric), 2, (eps, 0.0))])[1] == [False]
