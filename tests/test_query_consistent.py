"""Histograms that add up (issue 36, item 4; docs/proofs/consistent-tables.md): the projection
against brute force, the exact law of a tiny release, coverage by simulation with a stated
false-alarm rate and a power check, the sums of every document, hierarchies, refusals, and
the Spark engine's document."""

import itertools
import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from typer.testing import CliRunner

from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.consistent import fitted, project, release
from optnoise.query.intervals import interval
from optnoise.query.mechanisms import count_cell
from optnoise.query.release import query
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

warnings.filterwarnings("ignore", message=".*not private.*")


# ------------------------------------------------------------------ the projection
def _brute(y, lo, hi, total):
    """Every integer point of the box summing to ``total``, and the least squared distance."""
    points = [np.array(p) for p in itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi)]) if sum(p) == total]
    return points, min(int(((p - y) ** 2).sum()) for p in points)


def test_projection_is_a_nearest_integer_point_on_every_tiny_case():
    """Every y in {-2..5}^3, boxes [0, 3] or [1, 4], totals from sum(low) to sum(high): the
    projection is feasible and attains the brute-force least squared distance."""
    source = SeededRandomSource(0)
    for lo, hi in (((0, 0, 0), (3, 3, 3)), ((1, 0, 2), (4, 3, 2))):
        lo, hi = np.array(lo), np.array(hi)
        for y in itertools.product(range(-2, 6), repeat=3):
            y = np.array(y)
            for total in range(int(lo.sum()), int(hi.sum()) + 1):
                z = project(y, lo, hi, total, source)
                points, best = _brute(y, lo, hi, total)
                assert z.dtype == np.int64 and int(z.sum()) == total and (lo <= z).all() and (z <= hi).all()
                assert int(((z - y) ** 2).sum()) == best, (y, lo, hi, total, z)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 80), st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=12),
       st.floats(0, 1), st.integers(0, 2**32))
def test_projection_sums_exactly_and_stays_in_the_box(cells, where, seed):
    y = np.array([c[0] for c in cells])
    lo = np.array([min(c[1], c[2]) for c in cells])
    hi = np.array([max(c[1], c[2]) for c in cells])
    total = int(lo.sum() + round(where * (hi.sum() - lo.sum())))
    z = project(y, lo, hi, total, SeededRandomSource(seed))
    assert int(z.sum()) == total and (lo <= z).all() and (z <= hi).all()
    # no transfer of one unit lowers the squared distance (the optimality condition)
    up = 2 * (z - y) + 1          # cost of +1
    down = -2 * (z - y) + 1       # cost of -1
    can_up, can_down = z < hi, z > lo
    if can_up.any() and can_down.any():     # (a transfer within one cell costs 2 > 0)
        assert up[can_up].min() + down[can_down].min() >= 0


def test_projection_refuses_a_total_the_box_cannot_hold():
    with pytest.raises(InvalidParameterError, match="total"):
        project(np.array([1, 2]), np.array([0, 0]), np.array([1, 1]), 3, SeededRandomSource(0))


# ------------------------------------------------------------------ the exact law of a tiny release
def test_exact_law_of_a_tiny_release():
    """N = 3 units in m = 3 cells, every true table: the joint law of the three independent
    cells enumerated exactly (the quantized channel's integer weights); the marginal intervals
    cover each cell with probability >= 1 - alpha, the simultaneous ones all cells at once, and
    whenever every true value lies in its box, so does every projected value, for every tie."""
    n, alpha = 3, 0.2
    cell = count_cell("h", n, 0, 1, Target(0.5))
    w = cell.noise.quantize().weights
    den = int(w[0].sum())
    ys = np.arange(n + 1)
    low, high, _ = interval(cell, ys, alpha)
    blow, bhigh, _ = interval(cell, ys, Fraction(1, 5) / 3)
    for q in [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]:
        marginal = [Fraction(0)] * 3
        together = Fraction(0)
        for y in itertools.product(range(n + 1), repeat=3):
            p = Fraction(int(np.prod([int(w[q[i], y[i]]) for i in range(3)], dtype=object)), den ** 3)
            for i in range(3):
                marginal[i] += p * (low[y[i]] <= q[i] <= high[y[i]])
            lo, hi = blow[list(y)], bhigh[list(y)]
            if all(lo[i] <= q[i] <= hi[i] for i in range(3)):
                together += p
                for seed in range(4):        # the ties, several ways
                    z, inside = fitted(np.array(y), lo, hi, n, SeededRandomSource(seed))
                    assert inside and (lo <= z).all() and (z <= hi).all() and int(z.sum()) == n
        assert min(marginal) >= 1 - Fraction(1, 5) and together >= 1 - Fraction(1, 5), q


def test_release_is_the_intervals_and_the_projection_of_the_independent_cells():
    cell = count_cell("h", 20, 0, 1, Target(0.5))
    truth = np.array([9, 6, 3, 2, 0])
    got = release(cell, truth, 20, 0.1, SeededRandomSource(5))
    source = SeededRandomSource(5)
    y = cell.release(truth, source)
    low, high, _ = interval(cell, y, 0.1)
    blow, bhigh, _ = interval(cell, y, Fraction(1, 10) / 5)
    z, inside = fitted(y, blow, bhigh, 20, source)
    assert np.array_equal(got.independent, y) and np.array_equal(got.values, z) and got.inside == inside
    assert np.array_equal(got.low, low) and np.array_equal(got.box_high, bhigh)
    with pytest.raises(InvalidParameterError, match="summing to the total"):
        release(cell, truth, 21, 0.1, SeededRandomSource(5))


# ------------------------------------------------------------------ coverage by simulation
#: The false-alarm rate of the whole simulation test (Bonferroni over its binomial tests).
FALSE_ALARM = 1e-6


def test_coverage_by_simulation_and_power():
    """R = 3000 releases of m = 7 cells (N = 60), seed fixed, alpha = 0.1. Misses of each
    marginal interval and releases with any miss of the simultaneous intervals are binomial
    with rate <= alpha: each count stays below its binomial quantile at FALSE_ALARM / 8. Power:
    the same test rejects the marginal intervals taken as simultaneous ones (true rate about
    1 - 0.9^7), and intervals at 3 alpha claimed at alpha."""
    n, alpha, reps = 60, 0.1, 3000
    truth = np.array([25, 12, 8, 6, 5, 4, 0])
    m = truth.size
    cell = count_cell("h", n, 0, 1, Target(0.5))
    source = SeededRandomSource(2026)
    y = cell.release(np.tile(truth, reps), source).reshape(reps, m)
    low, high, _ = interval(cell, y.ravel(), alpha)
    blow, bhigh, _ = interval(cell, y.ravel(), Fraction(1, 10) / m)
    wide_low, wide_high, _ = interval(cell, y.ravel(), 0.3)
    shape = (reps, m)
    low, high, blow, bhigh, wide_low, wide_high = (np.asarray(v).reshape(shape)
                                                   for v in (low, high, blow, bhigh, wide_low, wide_high))
    limit = binom.ppf(1 - FALSE_ALARM / (m + 1), reps, alpha)
    covered = (low <= truth) & (truth <= high)
    assert ((~covered).sum(axis=0) <= limit).all()
    in_box = (blow <= truth) & (truth <= bhigh)
    assert (~in_box.all(axis=1)).sum() <= limit
    for r in range(reps):                    # the projected values lie in the boxes whenever the truth does
        z, inside = fitted(y[r], blow[r], bhigh[r], n, source)
        assert int(z.sum()) == n and (z >= 0).all()
        if in_box[r].all():
            assert inside and ((blow[r] <= z) & (z <= bhigh[r])).all()
    # power: the test tells wrong claims apart
    assert (~covered.all(axis=1)).sum() > limit
    assert ((~((wide_low <= truth) & (truth <= wide_high))).sum(axis=0) > limit).any()


# ------------------------------------------------------------------ documents
def _frame(units: list[tuple[int, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(units, columns=["u", "k", "g"])


CONSISTENT = {"unit": {"id": "u"}, "statistics": {
    "all": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0, "consistent": True,
            "where": {"g": [1, 2, 3]}},
    "by": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": [1, 2], "epsilon": 1.0,
           "consistent": True, "where": {"g": [1, 2, 3]}}}}


def _cells(entry: dict) -> list[int]:
    values = entry["values"]
    return [v for row in values.values() for v in (row.values() if isinstance(row, dict) else [row])]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 4)), min_size=1, max_size=25), st.integers(0, 2**32))
def test_every_document_adds_up_to_the_number_of_units(rows, seed):
    """Units with one row each (key -1 and 3 undeclared, group 0 and 4 outside ``where`` or
    undeclared): every consistent entry's cells and outside cell are non-negative integers
    summing to N, and the groups add up to the overall histogram key by key."""
    frame = _frame([(i, k, g) for i, (k, g) in enumerate(rows)])
    doc = query(frame, CONSISTENT, seed=seed)
    top, child = doc["statistics"]["all"], doc["statistics"]["by"]
    for entry in (top, child):
        cells = _cells(entry) + [entry["outside"]["value"]]
        assert all(isinstance(v, int) and v >= 0 for v in cells) and sum(cells) == len(rows)
        assert entry["consistent"]["total"] == len(rows)
    assert child["consistent"]["adds_up_to"] == "all"
    for k in ("0", "1", "2"):
        assert sum(child["values"][g][k] for g in ("1", "2")) == top["values"][k]
    assert child["outside"]["value"] == top["outside"]["value"]


def test_document_keeps_its_certificate_and_intervals():
    rng = np.random.default_rng(1)
    frame = _frame([(i, int(rng.integers(0, 3)), int(rng.integers(1, 3))) for i in range(80)])
    spec = {"unit": {"id": "u"}, "statistics": {
        "plain": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0},
        "sum": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0, "consistent": True}}}
    doc = query(frame, spec, seed=4)
    plain, cons = doc["statistics"]["plain"], doc["statistics"]["sum"]
    cert = doc["only_if_unseeded"]["statistics"]
    assert cert["sum"]["certificate"] == cert["plain"]["certificate"]     # post-processing: the same certificate
    assert cons["neighbourhood"] == plain["neighbourhood"] and cons["mechanism"] == plain["mechanism"]
    c = cons["consistent"]
    for k, (a, b) in c["simultaneous_intervals"].items():
        lo, hi = cons["intervals"][k]
        assert a <= lo <= hi <= b                 # at alpha / m the intervals are wider
    assert "union bound" in c["simultaneous_coverage"] and c["adds_up_to"] is None
    assert sum(cons["values"].values()) + cons["outside"]["value"] == 80


def test_outside_cell_keeps_the_histograms_neighbourhood():
    """All tables of two units (each 1..3 rows of a universe with an undeclared key and a row
    failing ``where``; max_rows 2) and every replacement of one unit's rows: the cells with the
    outside cell move in at most 2 places, each by at most 1 -- the derived neighbourhood the
    accountant composes (cells = 2, distance 1)."""
    universe = [(0, 1), (1, 2), (9, 1), (1, 3)]
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2}, "statistics": {"h": {
        "kind": "histogram", "key": "k", "keys": [0, 1], "by": "g", "groups": [1, 2], "where": {"g": [1, 2]},
        "epsilon": 1.0, "consistent": True}}})
    contents = [c for r in range(1, 4) for c in itertools.combinations_with_replacement(universe, r)]

    def vector(units):
        frame = _frame([(i, k, g) for i, rows in enumerate(units) for k, g in rows])
        cells = answers(aggregate([frame], spec), spec.statistics[0]).cells.ravel()
        return np.append(cells, len(units) - cells.sum())

    moved, worst = 0, 0
    for other in (contents[0], contents[-1]):
        vectors = [vector([other, mine]) for mine in contents]
        for a, b in itertools.product(vectors, repeat=2):
            d = np.abs(a - b)
            moved, worst = max(moved, int((d > 0).sum())), max(worst, int(d.max()))
    assert (moved, worst) == (2, 1)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("change, stat, words", [
    ("add-remove", {}, "number of units is not public"),
    ("replace", {"of": "rows"}, "of = 'units'"),
    ("replace", {"unbiased": True}, "unbiased"),
    ("replace", {"consistent": "yes"}, "true or false"),
])
def test_refusals_name_the_key(change, stat, words):
    unit = {"id": "u", "max_rows": 2, "change": change, **({"max_units": 10} if change == "add-remove" else {})}
    spec = {"unit": unit, "statistics": {"h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 1.0,
                                               "consistent": True, **stat}}}
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(spec)
    assert err.value.parameter == "statistics.h.consistent" and words in str(err.value)


@pytest.mark.parametrize("kind", [{"kind": "count"}, {"kind": "mode", "key": "k", "keys": [0, 1]}])
def test_other_kinds_refuse_consistent(kind):
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec({"unit": {"id": "u"}, "statistics": {"c": {**kind, "epsilon": 1.0, "consistent": True}}})
    assert err.value.parameter == "statistics.c.consistent"


def test_cli_refuses_consistent_under_add_remove_with_one_line(tmp_path):
    _frame([(1, 0, 1), (2, 1, 1)]).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text('unit = { id = "u", change = "add-remove", max_units = 10 }\n'
                                     '[statistics.h]\nkind = "histogram"\nkey = "k"\nkeys = [0, 1]\n'
                                     'epsilon = 1.0\nconsistent = true\n')
    run = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                                   "--output", str(tmp_path / "o.json")])
    assert run.exit_code == 2 and "statistics.h.consistent" in run.output
    assert len(run.output.strip().splitlines()) == 1 and not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ Spark
@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session
    return spark_session()


def test_spark_document_equals_the_local_one(tmp_path, spark):
    from optnoise.query.files import query_file
    rng = np.random.default_rng(3)
    _frame([(i, int(rng.integers(-1, 4)), int(rng.integers(0, 4))) for i in range(120)]).to_csv(
        tmp_path / "in.csv", index=False)
    local = query_file(tmp_path / "in.csv", CONSISTENT, source=SeededRandomSource(8))
    remote = query_file(tmp_path / "in.csv", CONSISTENT, engine="spark", source=SeededRandomSource(8))
    assert json.dumps(remote["statistics"], sort_keys=True) == json.dumps(local["statistics"], sort_keys=True)
    assert remote["statistics"]["by"]["consistent"]["adds_up_to"] == "all"
