"""Quantiles and medians (issue 35, items 1 and 4): the joint exponential mechanism over the grid.

Closed forms: the utility against an independent computation over the boxes' vertices, its
sensitivity and the privacy ratio of the exact law by brute force over every small table and
every neighbour (Fractions), tables of two units through the unit rules; the sampled law
against the exact law by chi-square (fixed seed, false-alarm rate 1e-3) with a power check;
the accuracy bound against the exact tail; refusals before any noise; Spark and the command
line give the Python door's document.
"""

import itertools
import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise.analysis.exact import exp_lower
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query import query
from optnoise.query.kinds.quantile import (BASE_BITS, Chain, law_of, pair_terms, ranks, sample_many, unit_points,
                                           utility, weight_table)
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource

warnings.filterwarnings("ignore", message=".*not private.*")
runner = CliRunner()
#: Chi-square tests reject at this p-value: the false-alarm rate of a correct sampler.
FALSE_ALARM = 1e-3


def stat_of(levels, upper=3, resolution=1, **extra):
    spec = {"unit": {"id": "u", "max_rows": 3, **extra.pop("unit", {})}, "statistics": {"q": {
        "kind": "quantile", "column": "v", "clamp": {"lower": 0, "upper": upper}, "resolution": resolution,
        "quantiles": levels if isinstance(levels, str) else list(levels), "epsilon": extra.pop("epsilon", 1.0), **extra}}}
    return parse_query_spec(spec).statistics[0]


def brute_utility(levels, scale, hist, c):
    """``U(c)`` by trying every walk through the boxes' vertices (an optimum of the piecewise-
    linear convex problem lies there): independent of the lazy walk."""
    low, high, n = ranks(np.asarray(hist, dtype=np.int64))
    boxes = [(scale * int(low[cj]) - int(q * scale) * n, scale * int(high[cj]) - int(q * scale) * n)
             for q, cj in zip(levels, c)]
    points = sorted({0} | {v for box in boxes for v in box})
    best = None
    for e in itertools.product(*[[p for p in points if lo <= p <= hi] for lo, hi in boxes]):
        walk = (0, *e, 0)
        cost = sum(abs(b - a) for a, b in zip(walk, walk[1:]))
        best = cost if best is None else min(best, cost)
    return best


def sequences(points, m):
    return list(itertools.combinations_with_replacement(range(points), m))


def exact_law(law, hist):
    """``beta^U / Z`` over every output, in Fractions."""
    outs = sequences(law.points, len(law.levels))
    w = [law.beta ** brute_utility(law.levels, law.scale, hist, c) for c in outs]
    z = sum(w)
    return outs, [x / z for x in w]


def tables(points, most):
    for n in range(most + 1):
        for multiset in itertools.combinations_with_replacement(range(points), n):
            yield tuple(np.bincount(multiset, minlength=points)) if n else (0,) * points


def neighbours(hist):
    """Every table one unit changes: a point added, removed or moved."""
    g = len(hist)
    for i in range(g):
        up = list(hist)
        up[i] += 1
        yield tuple(up)
        if hist[i]:
            down = list(hist)
            down[i] -= 1
            yield tuple(down)
            for j in range(g):
                if j != i:
                    moved = list(down)
                    moved[j] += 1
                    yield tuple(moved)


# ------------------------------------------------------------------ closed forms
def test_utility_is_the_least_walk_and_bounds_the_relaxation_and_the_rank_errors():
    rng = np.random.default_rng(5)
    levels = (Fraction(1, 4), Fraction(1, 2), Fraction(9, 10))
    law = law_of(stat_of([0.25, 0.5, 0.9], upper=5), 1.0, 1)
    for _ in range(40):
        hist = rng.integers(0, 4, 6) * (rng.uniform(size=6) < 0.7)
        low, high, n = ranks(hist)
        us = {}
        for c in sequences(6, 3):
            u = utility(law, low, high, n, list(c))
            assert u == brute_utility(levels, law.scale, hist, c)
            first = max(int(levels[0] * 20) * n - 20 * int(high[c[0]]), 20 * int(low[c[0]]) - int(levels[0] * 20) * n, 0)
            mids = [int(pair_terms(law, low, high, n, j, row=c[j - 2])[c[j - 1]]) for j in (2, 3)]
            last = max(int(levels[2] * 20) * n - 20 * int(high[c[2]]), 20 * int(low[c[2]]) - int(levels[2] * 20) * n, 0)
            assert first + sum(mids) + last <= u   # the proposal's relaxation
            for q, cj in zip(levels, c):   # every rank error <= U / (2D)
                err = max(q * n - int(high[cj]), int(low[cj]) - q * n, 0)
                assert err <= Fraction(u, 2 * law.scale)
            us[c] = u
        assert min(us.values()) == 0   # the true quantiles


def test_sensitivity_and_privacy_ratio_by_brute_force_in_fractions():
    """Every table of up to three points on a 4-point grid, every add, remove and move: the
    utility moves by at most Delta = 2D and the exact law's ratio is at most beta^(-2 Delta),
    itself at most e^eps (exactly). Fails if Delta were D (a move of a point shifts two gaps)."""
    for levels, eps in (((0.25, 0.75), 1.0), ((0.5,), 0.5), ((0.2, 0.5, 0.8), 2.0)):
        law = law_of(stat_of(levels), eps, 1)
        assert law.sensitivity == 2 * law.scale
        assert (1 / law.beta) ** (2 * law.sensitivity) <= exp_lower(eps)
        bound = law.beta ** (-2 * law.sensitivity)
        laws, worst_u, worst = {}, 0, Fraction(0)
        for hist in tables(4, 3):
            laws.setdefault(hist, exact_law(law, hist)[1])
        for hist in tables(4, 3):
            for other in neighbours(hist):
                if sum(other) > 3:
                    continue
                us = [brute_utility(law.levels, law.scale, hist, c) for c in sequences(4, len(levels))]
                vs = [brute_utility(law.levels, law.scale, other, c) for c in sequences(4, len(levels))]
                worst_u = max(worst_u, max(abs(u - v) for u, v in zip(us, vs)))
                worst = max(worst, max(p / q for p, q in zip(laws[hist], laws[other])))
        assert worst_u <= law.sensitivity and worst <= bound, (levels, worst_u, float(worst))
        assert worst_u > law.sensitivity // 2   # the bound is needed: Delta = D would fail


def test_two_units_of_up_to_three_rows_through_the_unit_rules():
    """Tables of two units with 0..3 rows each (values 0..2, a unit's total clamped to [0, 2]):
    replacing or adding/removing one unit's rows moves the utility by at most Delta."""
    stat = stat_of([0.5, 0.75], upper=2)
    law = law_of(stat, 1.0, 1)
    rows = [r for k in range(4) for r in itertools.product(range(3), repeat=k)]

    def hist(units):
        part = pd.DataFrame({"unit": [i for i, r in enumerate(units) if r], "group": [0] * sum(1 for r in units if r),
                             "key": [0] * sum(1 for r in units if r), "rows": [len(r) for r in units if r],
                             "value": [sum(r) for r in units if r]})
        return unit_points(stat, part, {})[0]

    outs = sequences(3, 2)

    def us(h):
        low, high, n = ranks(h)
        return [utility(law, low, high, n, list(c)) for c in outs]

    point = {r: tuple(hist([r])) for r in rows}
    assert point[(2, 2)] == (0, 0, 1)   # a total of 4 clamped to 2
    cache = {}
    for a, b, b2 in itertools.product(sorted(set(point.values())), repeat=3):
        for h, h2 in ((np.add(a, b), np.add(a, b2)), (np.add(a, b), np.array(a))):   # replace, add-remove
            key = (tuple(h), tuple(h2))
            if key not in cache:
                cache[key] = max(abs(x - y) for x, y in zip(us(h), us(h2)))
    assert max(cache.values()) <= law.sensitivity


def test_unit_points_take_each_unit_total_in_its_home_group_clamped():
    stat = stat_of([0.5], upper=10, by="g", groups=[1, 2])
    part = pd.DataFrame({"unit": [0, 0, 1, 2], "group": [0, 1, 1, 0], "key": [0] * 4, "rows": [2, 1, 1, 3],
                         "value": [5, 9, 3, 14]})
    counts: dict = {}
    hist = unit_points(stat, part, counts)
    expected = np.zeros((2, 11), np.int64)
    expected[0, 5] = expected[1, 3] = expected[0, 10] = 1   # unit 0: 5 in group 1 (its 1 row in group 2 dropped)
    assert hist.tolist() == expected.tolist()
    assert counts == {"rows_outside_the_units_group": 1, "unit_values_clamped": 1}


def test_weight_table_bounds_the_base_powers_and_ends_at_one():
    law = law_of(stat_of([0.5]), 0.7, 1)
    table = weight_table(law)
    assert table[-1] == 1 and table[0] == 1 << BASE_BITS
    for t in list(range(0, len(table), max(1, len(table) // 50))) + [len(table) - 1, len(table) + 5]:
        x = int(table[min(t, len(table) - 1)])
        assert Fraction(x) >= (1 << BASE_BITS) * law.beta ** t


def _chi_square(counts, probs):
    """Pearson's statistic and p-value, bins pooled to expected >= 5."""
    from scipy.stats import chi2
    order = np.argsort(probs)
    total = counts.sum()
    obs, exp, acc_o, acc_e = [], [], 0, 0.0
    for i in order:
        acc_o, acc_e = acc_o + counts[i], acc_e + probs[i] * total
        if acc_e >= 5:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o, acc_e = 0, 0.0
    if acc_e:
        obs[-1] += acc_o
        exp[-1] += acc_e
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp))
    return stat, chi2.sf(stat, len(obs) - 1)


def test_sampled_law_is_the_exact_law_chi_square_with_power():
    """4,000 draws (seed 11) against the exact law: p > 1e-3 (a correct sampler fails this with
    probability 1e-3 over seeds). Power: the same draws against the law at twice the epsilon
    (a sampler with the wrong base) give p < 1e-3."""
    hist = np.array([1, 3, 0, 2, 4, 1])
    stat = stat_of([0.25, 0.5, 0.75], upper=5)
    law = law_of(stat, 2.0, 1)
    outs, probs = exact_law(law, hist)
    index = {c: i for i, c in enumerate(outs)}
    draws = sample_many(law, hist, SeededRandomSource(11), 4000)
    assert all(a <= b for d in draws for a, b in zip(d, d[1:]))   # monotone
    counts = np.bincount([index[tuple(d)] for d in draws], minlength=len(outs))
    _, p = _chi_square(counts, np.array([float(x) for x in probs]))
    assert p > FALSE_ALARM, p
    sharper = law_of(stat, 4.0, 1)
    _, wrong = exact_law(sharper, hist)
    _, p_wrong = _chi_square(counts, np.array([float(x) for x in wrong]))
    assert p_wrong < FALSE_ALARM, p_wrong


def test_accuracy_bound_holds_on_the_exact_tail():
    """P(some rank error > the stated bound) from the exact law is at most alpha."""
    for levels, hist, eps in (((0.5,), [0, 5, 0, 0, 3, 2], 0.5), ((0.25, 0.75), [4, 0, 0, 1, 0, 5], 1.0)):
        law = law_of(stat_of(levels, upper=5), eps, 1)
        low, high, n = ranks(np.array(hist))
        outs, probs = exact_law(law, hist)
        for alpha in (0.05, 0.2):
            bound = law.rank_error(alpha)
            tail = sum(p for c, p in zip(outs, probs)
                       if any(max(q * n - int(high[cj]), int(low[cj]) - q * n, 0) > bound
                              for q, cj in zip(law.levels, c)))
            assert tail <= alpha and bound >= 0


def test_joint_bound_is_tighter_than_an_even_split():
    """The stated rank error of quartiles by the joint mechanism against three exponential
    mechanisms at eps / 3 each (union bound over them), on the same grid."""
    stat = stat_of([0.25, 0.5, 0.75], upper=300)
    joint = law_of(stat, 1.0, 1).rank_error(0.05)
    single = law_of(stat_of([0.5], upper=300), 1.0 / 3, 1)
    split = single.rank_error(0.05 / 3)
    assert joint < 0.7 * split, (float(joint), float(split))


# ------------------------------------------------------------------ refusals (exit 2, before noise)
@pytest.mark.parametrize("levels, why", [([0.0], "strictly between"), ([1.0], "strictly between"), ([1.5], "between"),
                                         ([0.5, 0.5], "distinct"), ([], "1 to"), ("0.5", "a list"),
                                         ([0.123456], "denominator")])
def test_bad_levels_are_refused_naming_the_key(levels, why):
    with pytest.raises(InvalidParameterError) as exc:
        stat_of(levels)
    assert exc.value.parameter.endswith("quantiles") and why in str(exc.value)


def test_grid_too_large_and_clamp_off_the_resolution_are_refused():
    with pytest.raises(InvalidParameterError) as exc:
        stat_of([0.5], upper=100, resolution=0.01)
    assert exc.value.parameter.endswith("resolution") and "grid points" in str(exc.value)
    with pytest.raises(InvalidParameterError) as exc:
        stat_of([0.5], upper=1, resolution=0.3)
    assert exc.value.parameter.endswith("resolution") and "divides the clamp" in str(exc.value)
    spec = {"unit": {"id": "u"}, "statistics": {"m": {"kind": "median", "column": "v", "quantiles": [0.5],
                                                      "clamp": {"lower": 0, "upper": 3}, "epsilon": 1.0}}}
    with pytest.raises(InvalidParameterError, match="keys of a median"):
        parse_query_spec(spec)


def test_cli_refuses_a_repeated_level_with_one_line_and_no_output(tmp_path):
    pd.DataFrame({"u": [1, 2], "v": [1.0, 2.0]}).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text('unit = { id = "u" }\n[statistics.q]\nkind = "quantile"\ncolumn = "v"\n'
                                     'clamp = { lower = 0, upper = 3 }\nquantiles = [0.5, 0.5]\nepsilon = 1.0\n')
    r = runner.invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                            "--output", str(tmp_path / "o.json")])
    assert r.exit_code == 2 and "statistics.q.quantiles" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ the doors
def _frame(n=300, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"u": rng.integers(0, n // 2, n), "v": np.round(rng.gamma(2, 2, n), 1),
                         "g": rng.integers(1, 4, n)})


SPEC = {"unit": {"id": "u", "max_rows": 3}, "statistics": {
    "q": {"kind": "quantile", "column": "v", "clamp": {"lower": 0, "upper": 20}, "resolution": 0.5,
          "quantiles": [0.25, 0.5, 0.75], "epsilon": 1.0},
    "m": {"kind": "median", "column": "v", "clamp": {"lower": 0, "upper": 20}, "resolution": 0.5, "by": "g",
          "groups": [1, 2, 3], "epsilon": 1.0}}}
TOML = ('unit = { id = "u", max_rows = 3 }\n[statistics.q]\nkind = "quantile"\ncolumn = "v"\n'
        'clamp = { lower = 0, upper = 20 }\nresolution = 0.5\nquantiles = [0.25, 0.5, 0.75]\nepsilon = 1.0\n'
        '[statistics.m]\nkind = "median"\ncolumn = "v"\nclamp = { lower = 0, upper = 20 }\nresolution = 0.5\n'
        'by = "g"\ngroups = [1, 2, 3]\nepsilon = 1.0\n')


def test_document_python_and_cli_agree_and_state_accuracy(tmp_path):
    frame = _frame()
    doc = query(frame, SPEC, seed=4)
    q = doc["statistics"]["q"]
    values = [q["value"][k] for k in ("0.25", "0.5", "0.75")]
    assert values == sorted(values) and all(0 <= v <= 20 for v in values)
    cert = doc["only_if_unseeded"]["statistics"]["q"]["certificate"]   # seeded: under only_if_unseeded
    assert cert["exact"] is False and cert["epsilon_pure"] == 1.0
    assert q["accuracy"]["rank_error"] > 0 and q["interval"] is None
    assert q["neighbourhood"]["utility_distance"] == 8 and q["mechanism"]["name"] == "joint exponential mechanism"
    m = doc["statistics"]["m"]
    assert set(m["values"]) == {"1", "2", "3"}
    assert doc["only_if_unseeded"]["statistics"]["m"]["certificate"]["cells_per_unit"] == 2
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text(TOML)
    r = runner.invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                            "--output", str(tmp_path / "o.json"), "--seed", "4"])
    assert r.exit_code == 0, r.output
    cli = json.loads((tmp_path / "o.json").read_text())
    assert cli["statistics"]["q"]["value"] == q["value"] and cli["statistics"]["m"]["values"] == m["values"]
    private = query(frame, SPEC)
    assert private["total"]["basic"]["epsilon"] == 2.0   # two statistics at 1 each, through the accountant
    moved = {**SPEC, "unit": {"id": "u", "max_rows": 3, "change": "add-remove", "max_units": 1000}}
    adds = query(frame, moved)["statistics"]["m"]
    assert adds["neighbourhood"]["change"] == "add-remove" and adds["certificate"]["cells_per_unit"] == 1
    assert adds["neighbourhood"]["cell_distance"] == 1 and adds["certificate"]["per_group"]["epsilon"] == 1.0


def test_empty_group_and_all_equal_values_release_grid_points():
    frame = pd.DataFrame({"u": range(50), "v": [7.0] * 50, "g": [1] * 50})
    doc = query(frame, SPEC, seed=1)
    assert doc["statistics"]["m"]["values"]["2"]["0.5"] in [x / 2 for x in range(41)]   # an empty group: noise
    assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in doc["statistics"]["q"]["value"].values())


def test_spark_gives_the_local_document(tmp_path, spark):
    from optnoise.query.files import query_file_audited
    frame = _frame(400, 9)
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_parquet(tmp_path / "in.parquet")
    ref, ref_audit = query_file_audited(tmp_path / "in.csv", SPEC, source=SeededRandomSource(2))
    for path in ("in.csv", "in.parquet"):   # a Parquet file too: the JVM path is not taken for a quantile
        doc, audit = query_file_audited(tmp_path / path, SPEC, engine="spark", source=SeededRandomSource(2))
        assert doc["statistics"] == ref["statistics"] and audit["statistics"] == ref_audit["statistics"], path


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session
    return spark_session()


def test_compare_shows_the_joint_mechanism_beats_an_even_split():
    from optnoise.query.compare import compare
    spec = {"unit": {"id": "u", "max_rows": 3}, "statistics": {"q": SPEC["statistics"]["q"]}}
    doc = compare(spec, units=400)
    q = doc["quantiles"]["q"]
    assert doc["reads_data"] is False and q["stated_rank_error"]["joint"] < q["stated_rank_error"]["even-split"]
    spread = q["profiles"]["spread"]
    assert spread["units"] == 400
    for level in q["levels"]:   # 200 draws: a mean well below the split's exact expectation
        assert spread["joint"]["expected_rank_error"][level] < spread["even-split"]["expected_rank_error"][level]


def test_chain_is_reused_across_draws():
    law = law_of(stat_of([0.5], upper=5), 1.0, 1)
    chain = Chain.of(law, np.array([0, 0, 9, 0, 0, 1]))
    draws = [chain.draw(SeededRandomSource(s))[0] for s in range(200)]
    assert np.bincount(draws, minlength=6).argmax() == 2


def test_compare_on_the_terminal_shows_each_level_and_the_proven_rank_errors(tmp_path):
    (tmp_path / "s.toml").write_text(TOML.split("[statistics.m]")[0])
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "s.toml"), "--compare", "--units", "300"],
                      env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    j = runner.invoke(app, ["query", "--spec", str(tmp_path / "s.toml"), "--compare", "--units", "300", "--json"])
    q = json.loads(j.stdout)["quantiles"]["q"]
    text = " ".join(r.stdout.split())   # the console's width may wrap lines
    assert all(p in text for p in q["profiles"]) and "E rank" in text
    stated = ", ".join(f"{m} {q['stated_rank_error'][m]:.4g}" for m in ("joint", "even-split"))
    assert stated in text and "flat:" not in text
