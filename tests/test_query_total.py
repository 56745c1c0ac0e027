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
