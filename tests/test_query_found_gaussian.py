"""Keys found in the data with discrete-Gaussian cells whose profile holds the selection
(query/found_gaussian.py; docs/proofs/key-selection.md, "The selection inside the cells'
profile"): the probability that a key of one unit shows against enumeration, the composed
guarantee of a whole two-key release against a direct sum over its product law, the choice
between the designs as ``max_groups`` grows, and the unit's total."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from itertools import product

import numpy as np
import pandas as pd
import pytest

import optnoise
from optnoise.query.found_gaussian import FoundCell, composed, gaussian_cell
from optnoise.query.threshold import BOUNDARY_BITS
from optnoise.target import Target

FULL = 1 << BOUNDARY_BITS


def _key_law(cell: FoundCell, count: int) -> dict:
    """The exact law of one key's output (``None``: not shown; else the released count) for a
    true count of units ``count``, written out from the quantized weights, the clamp to the
    domain, the threshold and the boundary coin -- independently of :mod:`.threshold` -- as
    integers over the common denominator ``W 2^64``."""
    q = cell.noise.quantize()
    assert q.left is None and q.right is None   # a finite window: every value enumerated
    w = [int(x) for x in q.weights]
    rule = cell.threshold
    a = int(rule.boundary * FULL)
    out: dict = {}
    if count == 0:
        return {None: sum(w) * FULL}
    for i, weight in enumerate(w):
        y = min(max(count + q.lo + i, cell.offset), cell.offset + cell.n)
        if y >= rule.tau:
            out[y] = out.get(y, 0) + weight * FULL
        elif y == rule.tau - 1 and a:
            out[y] = out.get(y, 0) + weight * a
            out[None] = out.get(None, 0) + weight * (FULL - a)
        else:
            out[None] = out.get(None, 0) + weight * FULL
    return out


def _hockey(p: dict, q: dict, e_num: int, e_den: int) -> Fraction:
    """``sum_y max(0, P(y) - E Q(y))`` of two product laws over the same denominator ``D``
    (integers), with ``E = e_num / e_den``: exact, divided by ``D`` at the end."""
    total = 0
    for y, mass in p.items():
        diff = mass * e_den - e_num * q.get(y, 0)
        if diff > 0:
            total += diff
    return Fraction(total, e_den)


def _product(laws: list[dict]) -> dict:
    out = {(): 1}
    for law in laws:
        out = {k + (y,): m * n for k, m in out.items() for y, n in law.items()}
    return out


@pytest.fixture(scope="module")
def small() -> FoundCell:
    """Two cells per unit (``max_groups = 2`` under add-remove, or one key under replace) at
    eps 2, delta 1e-3: a narrow noise (sigma near 1.5), so every count can be enumerated."""
    cell = gaussian_cell("x", 60, 0, Target(2.0, 1e-3), 2, 2)
    assert cell is not None and cell.threshold.in_cells and cell.threshold.boundary > 0
    return cell


def test_a_key_of_one_unit_shows_with_the_exact_p(small):
    """``threshold.p`` equals the enumerated probability that a key of count 1 shows, and the
    pair (count 1, count 0) has that hockey-stick divergence at every epsilon."""
    law = _key_law(small, 1)
    den = sum(law.values())
    shown = Fraction(den - law.get(None, 0), den)
    assert shown == small.threshold.p
    assert 1 - (1 - shown) ** 2 <= Fraction(1e-3)
    for eps in (0.0, 1.0, 5.0):
        e = Fraction(math.exp(eps))
        assert _hockey(law, _key_law(small, 0), e.numerator, e.denominator) / den == shown


def test_the_composed_certificate_bounds_every_two_key_release(small):
    """Every pair of neighbouring two-key releases -- each key's count moved by one, from any
    count (a key held by the unit alone going from 1 to 0 or 0 to 1 included), both directions
    -- has an exact hockey-stick divergence at the statistic's epsilon within its delta, summed
    directly over the product law (no PLD, no composition theorem). It is not vacuous: the
    worst configuration uses more than half the delta, and more than the noise's pairs or the
    selection's alone could (each at most ``1 - (1 - p)^2`` or the noise's own delta)."""
    eps, delta = 2.0, Fraction(1e-3)
    e = Fraction(math.exp(eps) * (1 - 1e-12))   # below e^eps: the sums are upper bounds
    top = small.threshold.tau + 12
    laws = {c: _key_law(small, c) for c in range(top + 2)}
    den = sum(laws[1].values()) ** 2
    worst, at = Fraction(0), None
    for c1, c2 in product(range(top + 1), repeat=2):
        for d1, d2 in product((-1, 1), repeat=2):
            if min(c1 + d1, c2 + d2) < 0:
                continue
            p = _product([laws[c1], laws[c2]])
            q = _product([laws[c1 + d1], laws[c2 + d2]])
            value = _hockey(p, q, e.numerator, e.denominator) / den
            if value > worst:
                worst, at = value, (c1, c2, d1, d2)
    assert worst <= delta, (float(worst), at)
    assert worst > delta / 2
    noise_only = composed(small.noise_profile, 2, epsilon=eps).delta_dp
    assert float(worst) <= noise_only + 1 - (1 - float(small.threshold.p)) ** 2


def test_the_composition_of_the_cells_meets_the_target(small):
    """The certificate: the two cells' profiles (noise and selection pairs) composed as the
    unit's total composes them give at most the statistic's epsilon at its delta, and the
    same composition without the selection's pairs is no larger (they are in it)."""
    got = composed(small.composition_profile(), 2, delta=1e-3)
    assert got.epsilon_dp <= 2.0 and small.design["composed"]["epsilon"] == got.epsilon_dp
    assert composed(small.noise_profile, 2, delta=1e-3).epsilon_dp <= got.epsilon_dp


def _frame(groups: int, seed: int = 0, units: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    law = np.arange(1, 501, dtype=float) ** -1.1
    drawn = rng.choice(500, size=(units, groups), p=law / law.sum())
    return pd.DataFrame({"unit": np.repeat(np.arange(units), groups), "key": drawn.ravel()}).drop_duplicates()


def _doc(frame, groups: int, epsilon: float = 1.0, seed: int | None = 1, budget: dict | None = None) -> dict:
    unit = {"id": "unit", "max_rows": groups, "max_groups": groups, "change": "add-remove", "max_units": 10 ** 6}
    spec = {"unit": unit, "statistics": {"keys": {"kind": "histogram", "key": "key", "keys": "from-data",
                                                  "epsilon": epsilon, "delta": 1e-6}}}
    if budget is not None:
        spec["budget"] = budget
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, seed=seed)


def test_the_choice_flips_with_max_groups_and_the_total_meets_the_target():
    """At eps 1, delta 1e-6 (add-remove) one key per unit keeps the geometric (pure cells, the
    delta the selection's: a threshold near 15 against the Gaussian's 22); three keys per unit
    take the discrete Gaussian (38 against 44). Its document's total composes the selection in
    the cells: no shift, the PLD epsilon at the statistic's delta within its epsilon, while the
    basic sum of the cells' own points is above it (stated, not hidden)."""
    one = _doc(_frame(1), 1)["statistics"]["keys"]
    assert one["mechanism"].get("method") != "discrete-gaussian-found"
    doc = _doc(_frame(3), 3)
    stat = doc["statistics"]["keys"]
    assert stat["mechanism"]["method"] == "discrete-gaussian-found"
    assert stat["keys"]["threshold"] < one["keys"]["threshold"] * 3
    assert "selection_accounted" in stat["keys"] and stat["keys"]["keys_per_unit"] == 3
    total = doc["only_if_unseeded"]["total"]
    assert total["selection"] == {"epsilon": 0.0, "delta": 0.0, "statistics": 1}
    assert total["pld"]["delta"] == 1e-6 and total["pld"]["epsilon"] <= 1.0
    assert total["basic"]["delta"] <= 1e-6 * (1 + 1e-12) and total["basic"]["epsilon"] > 1.0
    assert stat["mechanism"]["composed"]["epsilon"] == total["pld"]["epsilon"]
    unseeded = _doc(_frame(3), 3, seed=None, budget={"epsilon": 1.0, "delta": 1e-6})   # the target as budget: met
    assert unseeded["total"]["within_budget"] and unseeded["total"]["pld"]["epsilon"] <= 1.0
    unseeded = unseeded["statistics"]["keys"]["certificate"]
    assert unseeded["composed"]["epsilon"] <= 1.0 and unseeded["composed"]["delta"] == 1e-6
    assert 3 * unseeded["cell_point"]["epsilon"] > 1.0 and "basic sum" in unseeded["composition"]


def test_the_gaussian_keeps_more_keys_at_three_keys_per_unit():
    """At three keys per unit the Gaussian design releases a key of every count up to its
    threshold with at least the probability of the geometric design it replaces (unless both
    are below 1e-3), and more keys in all over the counts 1..200 (each count once); above its
    threshold the geometric's heavier tail keeps a few more of the keys both keep mostly."""
    from optnoise.query.kinds.histogram import KIND
    from optnoise.query.statistic import Statistic
    from optnoise.query.threshold import randomised_threshold, release_probability
    stat = Statistic("p", "histogram", Target(1.0, 1e-6), key="k", keys_from_data=True)
    gauss = KIND.mechanism(stat, Target(1.0 / 3, 1e-6 / 3), 1, 10 ** 6, 0, keys_per_unit=3)
    plain = Statistic("p", "histogram", Target(1.0, 1e-6), key="k", keys_from_data=True, mechanism="clamped-geometric")
    geo = KIND.mechanism(plain, Target(1.0 / 3, 1e-6 / 3), 1, 10 ** 6, 0, keys_per_unit=3)
    assert isinstance(gauss, FoundCell) and not isinstance(geo, FoundCell)
    if geo.design.get("method") == "truncated":
        rule_tau, rule_q = geo.design["half_width"] + 2, Fraction(0)
    else:
        rule = randomised_threshold(geo.noise.quantize(), 3, 1e-6)
        rule_tau, rule_q = rule.tau, rule.boundary
    g_rule = gauss.threshold
    mine = [release_probability(gauss.noise.quantize(), c, g_rule.tau, g_rule.boundary) for c in range(1, 201)]
    theirs = [release_probability(geo.noise.quantize(), c, rule_tau, rule_q) for c in range(1, 201)]
    for c in range(1, g_rule.tau + 1):
        assert mine[c - 1] >= theirs[c - 1] or theirs[c - 1] < Fraction(1, 1000), c
    assert sum(mine) > sum(theirs) + 3


def test_a_ledger_adds_the_selection_the_document_composes(tmp_path):
    """A ledger rebuilds each part from its noise alone, so it records the selection of a
    Gaussian design as a shift (the claim of docs/proofs/key-selection.md): its total's delta is
    the document's plus the selection's (a looser, proven bound), never below it."""
    from optnoise.publish.ledger import Ledger
    frame = _frame(3)
    book = Ledger.init(tmp_path / "l.db", dataset="d", unit="unit (add-remove)", budget=Target(10.0, 1e-4))
    unit = {"id": "unit", "max_rows": 3, "max_groups": 3, "change": "add-remove", "max_units": 10 ** 6}
    spec = {"unit": unit, "budget": {"epsilon": 10.0, "delta": 1e-4},
            "statistics": {"keys": {"kind": "histogram", "key": "key", "keys": "from-data", "epsilon": 1.0,
                                    "delta": 1e-6}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = optnoise.query(frame, spec, ledger=book)
    keys = doc["statistics"]["keys"]["keys"]
    assert "selection_accounted" in keys and doc["total"]["selection"]["delta"] == 0.0
    shown = Ledger(tmp_path / "l.db", write=False).show()
    assert shown["total"]["basic"]["delta"] >= doc["total"]["basic"]["delta"] + keys["selection_delta"] * (1 - 1e-9)
    assert shown["total"]["basic"]["epsilon"] >= doc["total"]["basic"]["epsilon"]


@pytest.mark.spark
def test_spark_gives_the_local_document_with_gaussian_cells(tmp_path):
    """Three keys per unit (the Gaussian design): Spark and the local engine give the same
    document for the same seed, boundary coins included."""
    import json
    from typer.testing import CliRunner
    from optnoise.cli.app import app
    _frame(3, units=600).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text('unit = { id = "unit", max_rows = 3, max_groups = 3, change = "add-remove", '
                                     'max_units = 1000000 }\n[statistics.p]\nkind = "histogram"\nkey = "key"\n'
                                     'keys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n')
    args = ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"), "--seed", "4", "--json"]
    runs = {engine: CliRunner().invoke(app, [*args, "--engine", engine]) for engine in ("local", "spark")}
    assert all(r.exit_code == 0 for r in runs.values()), [r.output for r in runs.values()]
    local, spark = (json.loads(runs[e].stdout)["statistics"]["p"] for e in ("local", "spark"))
    assert local == spark and local["mechanism"]["method"] == "discrete-gaussian-found" and len(local["values"]) >= 5


@pytest.mark.parametrize("others", [("keys2",), ("count",), ("keys2", "count")])
def test_beside_other_statistics_each_enters_by_its_certified_point(others):
    """Beside anything else a Gaussian found-key statistic is composed by its certified point
    (its cells' four pairs each would pass the composition's enumeration cap, and the dominating
    pairs would carry the selection's mass in every release: a review found 3.52 at a budget of
    2 and a crash on a total with no finite PLD). The total is then the sum of the points and the
    rest, within a budget of exactly that, and never below the basic sum of the points."""
    frame = _frame(3)
    unit = {"id": "unit", "max_rows": 3, "max_groups": 3, "change": "add-remove", "max_units": 10 ** 6}
    found = {"kind": "histogram", "key": "key", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6}
    stats = {"keys": found, **{n: found for n in others if n == "keys2"},
             **({"n": {"kind": "count", "epsilon": 0.5}} if "count" in others else {})}
    budget = {"epsilon": 1.0 * (1 + ("keys2" in others)) + 0.5 * ("count" in others),
              "delta": 1e-6 * (1 + ("keys2" in others))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = optnoise.query(frame, {"unit": unit, "statistics": stats, "budget": budget}, seed=3)
    points = [doc["statistics"][n]["mechanism"]["composed"] for n in doc["statistics"] if n != "n"]
    assert all(p["epsilon"] <= 1.0 for p in points)
    total = doc["only_if_unseeded"]["total"]
    assert total["within_budget"] is True
    assert total["pld"]["epsilon"] <= budget["epsilon"]
    assert total["pld"]["epsilon"] >= sum(p["epsilon"] for p in points) - 1e-12
    assert total["composed_statistics"]["statistics"] == len(points) - ("count" not in others)
