"""A mean under add-remove, a variance and a standard deviation (issue 35, items 2-4): parts,
budget split, intervals with proven coverage (docs/proofs/mean-interval.md), range rules,
refusals, the accountant, Python and the command line, Spark."""

import itertools
import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query import query
from optnoise.query.aggregate import aggregate
from optnoise.query.intervals import alpha_split, interval, outward, ratio_interval, variance_interval
from optnoise.query.kinds import kind_of
from optnoise.query.kinds.mean import mean_value, moment_shares
from optnoise.query.kinds.variance import variance_value
from optnoise.query.release import accounted, plan, unit_total
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource

warnings.filterwarnings("ignore", message=".*not private.*")


def _spec(kind: str, change: str = "add-remove", most: int = 400, clamp=(0, 10), eps: float = 1.0,
          rows: int = 1, **extra) -> dict:
    unit = {"id": "u", "max_rows": rows, "change": change, **({"max_units": most} if change != "replace" else {})}
    return {"unit": unit, "statistics": {"m": {"kind": kind, "column": "x", "epsilon": eps,
                                               "clamp": {"lower": clamp[0], "upper": clamp[1]}, **extra}}}


def _planned(spec: dict, frame: pd.DataFrame):
    parsed = parse_query_spec(spec)
    return parse_query_spec(spec), plan(parsed, aggregate([frame], parsed))


# ------------------------------------------------------------------ the pure rules
@given(st.floats(0.001, 0.5), st.lists(st.floats(0.01, 100.0), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_alpha_split_meets_the_product_rule_exactly_and_beats_the_union(alpha, weights):
    alphas = alpha_split(alpha, weights)
    prod = Fraction(1)
    for a in alphas:
        prod *= 1 - Fraction(a)
    assert prod >= 1 - Fraction(alpha)
    if len(weights) > 1:
        assert sum(alphas) > alpha * (1 - 1e-9)   # independence: each alpha_i above its union share
    ratios = [a / w for a, w in zip(alphas, weights)]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-9)   # proportional to the weights


def test_moment_shares_minimise_the_first_order_error():
    """Lagrange: sum w_i / eps_i under sum eps_i = 1 is least at eps_i ~ sqrt(w_i); any other
    split on a grid is no better."""
    w = [1.0, 8.0, 4.0]
    best = sum(x / s for x, s in zip(w, moment_shares(w)))
    for a, b in itertools.product(np.linspace(0.05, 0.9, 18), repeat=2):
        if a + b < 0.99:
            assert sum(x / s for x, s in zip(w, (a, b, 1 - a - b))) >= best - 1e-12


box = st.tuples(st.integers(-6, 6), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1]))


@given(box, st.tuples(st.integers(-2, 5), st.integers(0, 5)).map(lambda t: (t[0], t[0] + t[1])),
       st.tuples(st.integers(-3, 0), st.integers(0, 3)))
@settings(max_examples=200, deadline=None)
def test_ratio_interval_against_every_point_of_the_box(s, c, bounds):
    low, high = ratio_interval(s, c, bounds)
    assert bounds[0] <= low <= high <= bounds[1]
    points = [Fraction(x, y) for x in range(s[0], s[1] + 1) for y in range(max(1, c[0]), c[1] + 1)]
    inside = [p for p in points if bounds[0] <= p <= bounds[1]]
    assert all(low <= p <= high for p in inside)
    if inside:   # tight: the ends are the box's extreme ratios, clipped into the bounds
        assert low == max(min(points), bounds[0]) and high == min(max(points), bounds[1])


@given(st.tuples(st.integers(0, 12), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])), box,
       st.tuples(st.integers(-1, 4), st.integers(0, 4)).map(lambda t: (t[0], t[0] + t[1])),
       st.integers(1, 40))
@settings(max_examples=200, deadline=None)
def test_variance_interval_against_every_point_of_the_box(q, s, c, top4):
    top = Fraction(top4, 4)
    low, high = variance_interval(q, s, c, top)
    assert 0 <= low <= high <= top
    for qq, ss, cc in itertools.product(range(q[0], q[1] + 1), range(s[0], s[1] + 1), range(max(1, c[0]), c[1] + 1)):
        v = Fraction(qq, cc) - Fraction(ss, cc) ** 2
        if 0 <= v <= top:
            assert low <= v <= high, (qq, ss, cc)


@given(st.integers(-10 ** 6, 10 ** 6), st.integers(-10 ** 6, 10 ** 6), st.integers(-10 ** 6, 10 ** 6),
       st.integers(1, 10 ** 4))
@settings(max_examples=200, deadline=None)
def test_released_values_never_leave_their_range_nor_are_nan(q, s, c, top4):
    top = Fraction(top4, 4)
    v = variance_value(q, s, c, top)
    assert 0 <= v <= top and math.isfinite(float(v))
    m = mean_value(s, c, (-top4, top4))
    assert -top4 <= m <= top4 and math.isfinite(float(m))


@given(st.fractions(-1000, 1000), st.fractions(0, 1000), st.sampled_from([Fraction(1), Fraction(1, 10), Fraction(3, 7)]))
@settings(max_examples=100, deadline=None)
def test_outward_rounding_holds_the_exact_interval(a, w, scale):
    lo, hi = outward(a, a + w, scale)
    assert Fraction(lo) <= a * scale and Fraction(hi) >= (a + w) * scale
    if a >= 0:
        rlo, rhi = outward(a, a + w, scale, root=True)
        assert Fraction(rlo) ** 2 <= a * scale and Fraction(rhi) ** 2 >= (a + w) * scale


# ------------------------------------------------------------------ the parts' neighbourhoods, by brute force
ROWS = [(0.0,), (2.0,), (1.0,), (2.0,)]


def _parts(spec, units: list[tuple], c: int, kind: str) -> list[int]:
    """The parts' true values (centred sum, sum of squares, count) of a table of ``units``."""
    frame = pd.DataFrame([(i, *r) for i, rs in enumerate(units) for r in rs], columns=["u", "x"]) if any(units) \
        else pd.DataFrame({"u": pd.Series([], dtype=int), "x": pd.Series([], dtype=float)})
    agg = aggregate([frame], spec)
    cells = kind_of(spec.statistics[0]).answers(spec.statistics[0], agg.parts["m"], {}).cells
    n = agg.units
    if kind == "mean":
        return [int(cells[0, 0]) - c * n, n]
    squares, total = (int(x) for x in cells[0])
    return [total - c * n, squares - 2 * c * total + c * c * n, n]


@pytest.mark.parametrize("kind, change", [("mean", "add-remove"), ("variance", "replace"), ("variance", "add-remove")])
def test_each_part_moves_by_its_derived_distance_on_every_small_table(kind, change):
    """All tables of 2 units (each 0..3 rows, more than max_rows = 2; values clamped to [0, 2])
    and every neighbour (one unit's rows replaced by any others, the number of units kept; or
    the unit added/removed): every part moves by at most its derived distance, which is reached.
    (A mean under replace is its sum: tests/test_query.py.)"""
    spec = parse_query_spec(_spec(kind, change, most=4, clamp=(0, 2), rows=2))
    (item,) = plan(spec, aggregate([pd.DataFrame({"u": [0], "x": [1.0]})], spec))
    cells = [item.cell, *item.extra]
    c = int(item.cell.design["centre"])
    limits = [int(cell.design["distance"]) for cell in cells]
    contents = [x for r in range(4) for x in itertools.combinations_with_replacement(ROWS, r)]
    worst = [0] * len(cells)
    for other in (contents[0], contents[-1]):
        for mine in contents:
            a = _parts(spec, [other, mine], c, kind)
            neighbours = [[other, alt] for alt in contents if bool(alt) == bool(mine)] if change == "replace" \
                else [[other]]
            for nb in neighbours:
                b = _parts(spec, nb, c, kind)
                worst = [max(w, abs(x - y)) for w, x, y in zip(worst, a, b)]
    parts = [cell.design["part"] for cell in cells]
    assert worst[:len(limits)] == limits, (parts, worst, limits)


# ------------------------------------------------------------------ exact coverage on small cases
def _law(cell) -> tuple[np.ndarray, int]:
    """The channel's integer weights (rows: true index) and their bits: what is sampled."""
    assert cell.space == "channel"
    q = cell.noise.quantize()
    return np.asarray(q.weights, dtype=object), q.bits


def _intervals(cell, alpha):
    outputs = np.arange(cell.n + 1)
    low, high, _ = interval(cell, outputs, alpha)
    return np.asarray(low) + cell.offset, np.asarray(high) + cell.offset


def test_mean_interval_covers_every_small_table_exactly():
    """Every table of 1..4 units with values 0..2 (max_units 4): the probability that the
    mean's interval holds the true mean, summed exactly over the joint law of the two parts'
    quantized channels, is >= 1 - alpha; and the intervals are not trivial."""
    alpha = 0.2
    spec, (item,) = _planned(_spec("mean", most=4, clamp=(0, 2), eps=2.0), pd.DataFrame({"u": [0], "x": [1.0]}))
    sums, count = item.cell, item.extra[0]
    c = int(sums.design["centre"])
    a_s, a_c = alpha_split(alpha, [sums.design["share"], count.design["share"]])
    (ws, bs), (wc, bc) = _law(sums), _law(count)
    (sl, sh), (cl, ch) = _intervals(sums, a_s), _intervals(count, a_c)
    boxes = {(i, j): ratio_interval((int(sl[i]), int(sh[i])), (int(cl[j]), int(ch[j])), (0 - c, 2 - c))
             for i in range(sums.n + 1) for j in range(count.n + 1)}
    assert any(hi - lo < 2 for lo, hi in boxes.values())   # some released pairs say something
    worst = Fraction(1)
    for n in range(1, 5):
        for total in range(-n, n + 1):   # the centred sum of n values in 0..2 (c = 1)
            truth = Fraction(total, n)
            mass = sum(ws[total - sums.offset, i] * wc[n, j] for (i, j), (lo, hi) in boxes.items() if lo <= truth <= hi)
            worst = min(worst, Fraction(mass, 2 ** (bs + bc)))
    assert worst >= 1 - Fraction(alpha)


def test_variance_interval_covers_every_small_table_exactly():
    """Every table of 1..4 units with values 0..2 (max_units 4): the exact probability, over
    the joint law of the three parts' channels, that the variance's interval holds the truth."""
    alpha = 0.3
    spec, (item,) = _planned(_spec("variance", most=4, clamp=(0, 2), eps=12.0), pd.DataFrame({"u": [0], "x": [1.0]}))
    cells = [item.cell, *item.extra]   # centred sum, sum of squares, count
    assert [cl.design["part"] for cl in cells] == ["sum", "sum_of_squares", "count"]
    alphas = alpha_split(alpha, [cl.design["share"] for cl in cells])
    laws = [_law(cl) for cl in cells]
    ivs = [_intervals(cl, a) for cl, a in zip(cells, alphas)]
    top = Fraction(4, 4)
    found = {}
    for i, j, k in itertools.product(*(range(cl.n + 1) for cl in cells)):
        (sl, sh), (ql, qh), (cl_, ch) = ((int(lo[x]), int(hi[x])) for (lo, hi), x in zip(ivs, (i, j, k)))
        found[i, j, k] = variance_interval((ql, qh), (sl, sh), (cl_, ch), top)
    assert any(hi - lo < top for lo, hi in found.values())
    bits = sum(b for _, b in laws)
    for n in range(1, 5):
        for values in itertools.combinations_with_replacement((-1, 0, 1), n):   # centred at c = 1
            s, q = sum(values), sum(v * v for v in values)
            truth = Fraction(q, n) - Fraction(s, n) ** 2
            mass = sum(laws[0][0][s - cells[0].offset, i] * laws[1][0][q, j] * laws[2][0][n, k]
                       for (i, j, k), (lo, hi) in found.items() if lo <= truth <= hi)
            assert Fraction(mass, 2 ** bits) >= 1 - Fraction(alpha), values


# ------------------------------------------------------------------ coverage by simulation
#: Runs per simulated coverage check, and the largest number of misses allowed: for a true
#: coverage of 0.9 (alpha 0.1), P(Binomial(200, 0.1) > 44) < 1e-6 -- the false-alarm rate.
RUNS, MISSES = 200, 44


@pytest.mark.parametrize("kind", ["mean", "variance", "std"])
def test_coverage_by_simulation_on_a_larger_table(kind):
    from scipy.stats import binom
    assert binom.sf(MISSES, RUNS, 0.1) < 1e-6
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"u": np.arange(150), "x": rng.choice([0.0, 1.0, 9.0, 10.0], 150)})
    spec, (item,) = _planned(_spec(kind, eps=1.0), frame)
    x = frame["x"].to_numpy()
    truth = {"mean": x.mean(), "variance": x.var(), "std": x.std()}[kind]
    misses = points = 0
    for seed in range(RUNS):
        doc = kind_of(item.stat).body(item, 0.1, SeededRandomSource(seed))
        lo, hi = doc["interval"]
        misses += not lo <= truth <= hi
        points += doc["value"] != pytest.approx(truth, abs=1e-9)
    assert misses <= MISSES
    assert points > MISSES   # power: the same check rejects the point estimate as an interval


# ------------------------------------------------------------------ end to end
ADVERSARIAL = {
    "all equal": pd.DataFrame({"u": np.arange(30), "x": 7.0}),
    "one unit": pd.DataFrame({"u": [5, 5], "x": [3.0, 9.0]}),
    "no counted row": pd.DataFrame({"u": np.arange(20), "x": 4.0, "w": 0}),
}


@pytest.mark.parametrize("change", ["replace", "add-remove"])
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_variance_and_std_never_negative_never_above_never_nan(name, change):
    frame = ADVERSARIAL[name].assign(w=ADVERSARIAL[name].get("w", 1))
    where = {"where": {"w": {"lower": 1}}}
    for kind, bound in (("variance", 25.0), ("std", 5.0), ("mean", None)):
        for seed in range(3):
            doc = query(frame, _spec(kind, change, most=60, **where), seed=seed)["statistics"]["m"]
            assert math.isfinite(doc["value"]) and all(math.isfinite(v) for v in doc["interval"])
            if bound is not None:
                assert 0 <= doc["value"] <= bound and doc["bound"] == bound
                assert 0 <= doc["interval"][0] <= doc["interval"][1] <= bound
            else:
                assert 0 <= doc["value"] <= 10


def test_parts_are_composed_by_the_unit_total_and_recorded_by_the_ledger():
    frame = pd.DataFrame({"u": np.arange(40), "x": np.linspace(0, 10, 40)})
    spec, planned = _planned({"unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 100},
                              "statistics": {"m": {"kind": "mean", "column": "x", "clamp": {"lower": 0, "upper": 10},
                                                   "epsilon": 1.0},
                                             "v": {"kind": "variance", "column": "x",
                                                   "clamp": {"lower": 0, "upper": 10}, "epsilon": 1.0}}}, frame)
    assert [len(item.parts) for item in planned] == [2, 3]
    spent, shifts = accounted(planned, spec, ledger=True)   # what charge() records
    assert len(spent) == 5 and shifts == [] and all(k == 1 for _, k, _ in spent)
    eps = [e for _, _, (e, _) in spent]
    assert sum(eps[:2]) <= 1.0 and sum(eps[2:]) <= 1.0 and sum(eps) > 1.99
    total = unit_total(planned, spec)
    assert total["cells"] == 5 and 1.99 < total["basic"]["epsilon"] <= 2.0
    # the document's certificate adds every part's
    doc = query(frame, {"unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 100},
                        "statistics": {"v": {"kind": "variance", "column": "x", "clamp": {"lower": 0, "upper": 10},
                                             "epsilon": 1.0}}})
    cert = doc["statistics"]["v"]["certificate"]
    assert set(cert["parts"]) == {"v.sum_of_squares", "v.count"} and cert["epsilon_pure"] <= 1.0


def test_a_ledger_records_every_part_and_refuses_above_its_budget(tmp_path):
    from optnoise.publish.ledger import Ledger
    from optnoise.target import Target
    Ledger.init(tmp_path / "b.db", dataset="d", unit="u (add-remove)", budget=Target(1.2))
    frame = pd.DataFrame({"u": np.arange(40), "x": np.linspace(0, 10, 40)})
    query(frame, _spec("variance", most=100), ledger=Ledger(tmp_path / "b.db"))
    (run,) = Ledger(tmp_path / "b.db").runs()
    assert run["state"] == "delivered" and len(run["parts"]) == 3
    with pytest.raises(InvalidParameterError):   # a second statistic of eps 1: above 1.2, nothing drawn
        query(frame, _spec("mean", most=100), ledger=Ledger(tmp_path / "b.db"))
    assert len(Ledger(tmp_path / "b.db").runs()) == 1


def test_budget_split_follows_the_parts_weights():
    """Mean under add-remove, values 0..10 centred at 5: the sum moves by 5 and the count by 1
    with weight 5 -- an even split; the variance's (1 x 25, 2*5 x 5, 25 x 1): sqrt 1 : 2 : 1... of
    sqrt(25), sqrt(50), sqrt(25)."""
    frame = pd.DataFrame({"u": [0, 1], "x": [1.0, 2.0]})
    _, (mean,) = _planned(_spec("mean"), frame)
    assert [mean.cell.design["share"], mean.extra[0].design["share"]] == pytest.approx([0.5, 0.5])
    assert mean.cell.design["distance"] == 5   # centred: max(-L, U) = 10 before
    _, (var,) = _planned(_spec("variance"), frame)
    shares = [var.cell.design["share"]] + [c.design["share"] for c in var.extra]
    assert shares == pytest.approx(np.sqrt([50, 25, 25]) / np.sqrt([50, 25, 25]).sum())


def test_mean_under_replace_is_unchanged_post_processing():
    frame = pd.DataFrame({"u": np.arange(30), "x": np.linspace(0, 10, 30)})
    doc = query(frame, _spec("mean", "replace"), seed=2)["statistics"]["m"]
    total = query(frame, {**_spec("mean", "replace"), "statistics": {"m": {**_spec("mean", "replace")["statistics"]["m"],
                                                                           "kind": "sum"}}}, seed=2)["statistics"]["m"]
    assert doc["units"] == 30 and doc["value"] == pytest.approx(total["value"] / 30) and "parts" not in doc


def test_a_cell_whose_chained_geometric_misses_its_epsilon_takes_the_staircase():
    """At eps 0.7 and distance 24 the chained geometric's rounded weights miss the target (a sum
    was refused there before); the staircase is certified instead -- a budget share of a part
    lands on such epsilons."""
    from optnoise.query.mechanisms import count_cell
    from optnoise.target import Target
    cell = count_cell("x", 1440, 0, 24, Target(0.7))
    assert "staircase" in cell.built and cell.epsilon_pure <= 0.7


# ------------------------------------------------------------------ refusals (exit 2, before any noise)
@pytest.mark.parametrize("stat, key, words", [
    ({"kind": "variance", "column": "x", "epsilon": 1.0}, "clamp", "lower = L, upper = U"),
    ({"kind": "std", "column": "x", "epsilon": 1.0, "clamp": {"lower": 0, "upper": 1}, "by": "g"}, "by", "keys of a std"),
    ({"kind": "variance", "column": "x", "epsilon": 1.0, "clamp": {"lower": 0, "upper": 1}, "unbiased": True},
     "unbiased", "false for a variance"),
    ({"kind": "variance", "column": "x", "epsilon": 1.0, "clamp": {"lower": 0, "upper": 10 ** 6}}, "clamp",
     "resolution steps"),
    ({"kind": "mean", "column": "x", "epsilon": 1.0, "clamp": {"lower": 0, "upper": 1}, "resolution": 0.3},
     "resolution", "divides the clamp"),
])
def test_bad_specs_are_refused_naming_the_key(stat, key, words):
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec({"unit": {"id": "u", "max_rows": 1}, "statistics": {"m": stat}})
    assert err.value.parameter == f"statistics.m.{key}" and words in str(err.value)


def test_cli_refuses_a_variance_without_clamp_in_one_line_exit_2(tmp_path):
    pd.DataFrame({"u": [1, 2], "x": [1.0, 2.0]}).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text('unit = { id = "u", max_rows = 1 }\n[statistics.v]\nkind = "variance"\n'
                                     'column = "x"\nepsilon = 1.0\n')
    res = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                                   "--output", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and not (tmp_path / "o.json").exists()
    assert "statistics.v.clamp" in res.output and "lower = L, upper = U" in res.output
    assert len([line for line in res.output.strip().splitlines() if line.strip()]) == 1


TOML = ('unit = { id = "u", max_rows = 2, change = "add-remove", max_units = 80 }\n'
        '[statistics.m]\nkind = "mean"\ncolumn = "x"\nclamp = { lower = 0, upper = 4 }\nresolution = 0.5\nepsilon = 1.0\n'
        '[statistics.v]\nkind = "variance"\ncolumn = "x"\nclamp = { lower = 0, upper = 4 }\nepsilon = 1.0\n'
        '[statistics.s]\nkind = "std"\ncolumn = "x"\nclamp = { lower = 0, upper = 4 }\nepsilon = 1.0\n')
SPEC = {"unit": {"id": "u", "max_rows": 2, "change": "add-remove", "max_units": 80}, "statistics": {
    "m": {"kind": "mean", "column": "x", "clamp": {"lower": 0, "upper": 4}, "resolution": 0.5, "epsilon": 1.0},
    "v": {"kind": "variance", "column": "x", "clamp": {"lower": 0, "upper": 4}, "epsilon": 1.0},
    "s": {"kind": "std", "column": "x", "clamp": {"lower": 0, "upper": 4}, "epsilon": 1.0}}}


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"u": rng.integers(0, 50, 120), "x": np.round(rng.uniform(-1, 5, 120), 2)})


def test_python_and_the_command_line_accept_the_same_spec(tmp_path):
    frame = _table()
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text(TOML)
    res = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                                   "--output", str(tmp_path / "o.json"), "--seed", "9"])
    assert res.exit_code == 0, res.output
    cli = json.loads((tmp_path / "o.json").read_text())["statistics"]
    py = query(pd.read_csv(tmp_path / "in.csv"), SPEC, seed=9)["statistics"]
    assert set(cli) == set(py) == {"m", "v", "s"}
    for name in py:
        assert cli[name]["value"] == py[name]["value"] and cli[name]["interval"] == py[name]["interval"], name


def test_spark_gives_the_local_document(tmp_path, spark):
    from optnoise.query.files import query_file_audited
    frame = _table()
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    ref, _ = query_file_audited(tmp_path / "in.csv", SPEC, source=SeededRandomSource(4))
    for path in ("in.csv", "in.parquet"):   # the Python path, and a Parquet file the JVM path would take
        doc, _ = query_file_audited(tmp_path / path, SPEC, engine="spark", source=SeededRandomSource(4))
        assert doc["engine"] == "spark" and doc["statistics"] == ref["statistics"], path
    mean = {**SPEC, "statistics": {"m": SPEC["statistics"]["m"]}}   # a mean alone: the JVM path on Parquet
    ref, _ = query_file_audited(tmp_path / "in.csv", mean, source=SeededRandomSource(6))
    doc, _ = query_file_audited(tmp_path / "in.parquet", mean, engine="spark", source=SeededRandomSource(6))
    assert doc["statistics"] == ref["statistics"]


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session
    return spark_session()
