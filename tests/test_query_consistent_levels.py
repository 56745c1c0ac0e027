"""Consistent histograms at any depth (issue 36, item 4; ``within``; docs/proofs/
consistent-tables.md, "Hierarchies of any depth"): every level adds up in every release, the
true tables add up when each unit is counted in one (group, key) cell, the intervals keep
their coverage (a simulation with a stated false-alarm rate and a power check), refusals name
the key, and the Spark engine's document is the local one."""

import itertools
import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from typer.testing import CliRunner

from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.consistent import add_up, add_up_columns, add_up_within, fitted, narrow, project, release
from optnoise.query.hierarchy import top_down
from optnoise.query.mechanisms import count_cell
from optnoise.query.release import query
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

warnings.filterwarnings("ignore", message=".*not private.*")

#: Circuits 1..6 on feeders x (1-3), y (4-5), z (6); feeders x, y in region n, z in region s.
FEEDER = {1: "x", 2: "x", 3: "x", 4: "y", 5: "y", 6: "z"}
REGION = {"x": "n", "y": "n", "z": "s"}
H = {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "consistent": True, "epsilon": 1.0,
     "where": {"w": [0], "r": ["n", "s"]}}   # the same where at every level: region o (circuit 9) outside at all


def _spec(order=("all", "region", "feeder", "circuit")) -> dict:
    stats = {
        "all": H,
        "region": {**H, "by": "r", "groups": ["n", "s"]},
        "feeder": {**H, "by": "f", "groups": ["x", "y", "z"],
                   "within": {"statistic": "region", "map": REGION}},
        "circuit": {**H, "by": "c", "groups": [1, 2, 3, 4, 5, 6],
                    "within": {"statistic": "feeder", "map": {str(c): f for c, f in FEEDER.items()}}}}
    return {"unit": {"id": "u", "max_rows": 3}, "statistics": {name: stats[name] for name in order}}


def _frame(n: int, seed: int) -> pd.DataFrame:
    """``n`` units, each with 1-3 rows all in one (circuit, key) cell -- a few in circuit 9 on
    feeder q of region o (outside ``where``, so at no level), some rows of undeclared key 5, some
    failing ``where`` -- so that each unit is counted at one (group, key) cell at every level."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n):
        c = int(rng.choice([1, 2, 3, 4, 5, 6, 9], p=[.3, .2, .15, .15, .1, .05, .05]))
        f = FEEDER.get(c, "q")
        k, w = int(rng.choice([0, 1, 2, 5], p=[.5, .3, .15, .05])), int(rng.random() < 0.05)
        rows += [(u, k, c, f, REGION.get(f, "o"), w)] * int(rng.integers(1, 4))
    return pd.DataFrame(rows, columns=["u", "k", "c", "f", "r", "w"])


def _grid(entry: dict) -> np.ndarray:
    values = entry["values"]
    rows = list(values.values()) if isinstance(next(iter(values.values())), dict) else [values]
    return np.array([[row[k] for k in ("0", "1", "2")] for row in rows], np.int64)


def _summed(child: np.ndarray, labels: list, parent_labels: list, home: dict) -> np.ndarray:
    """The child's groups x keys grid added up into the parent's groups through ``home``."""
    out = np.zeros((len(parent_labels), child.shape[1]), np.int64)
    for i, g in enumerate(labels):
        out[parent_labels.index(home[g])] += child[i]
    return out


def _adds_up(doc: dict, units: int) -> None:
    """Every level of a document: non-negative integers, the cells and outside cell summing to
    ``units``, each level summing to the level above through its map, the outside cells equal."""
    s = doc["statistics"]
    grids = {name: _grid(s[name]) for name in ("all", "region", "feeder", "circuit")}
    for name, grid in grids.items():
        outside = s[name]["outside"]["value"]
        assert grid.dtype == np.int64 and (grid >= 0).all() and outside >= 0
        assert int(grid.sum()) + outside == units and outside == s["all"]["outside"]["value"]
    assert np.array_equal(grids["region"].sum(0, keepdims=True), grids["all"])
    assert np.array_equal(_summed(grids["feeder"], ["x", "y", "z"], ["n", "s"], REGION), grids["region"])
    assert np.array_equal(_summed(grids["circuit"], [1, 2, 3, 4, 5, 6], ["x", "y", "z"], FEEDER), grids["feeder"])
    assert [s[n]["consistent"]["adds_up_to"] for n in ("region", "feeder", "circuit")] == ["all", "region", "feeder"]


# ------------------------------------------------------------------ documents
@pytest.mark.parametrize("seed", range(6))
def test_every_level_adds_up_in_every_release(seed):
    """Four levels (all > region > feeder > circuit), six data sets and seeds; the spec in a
    shuffled order (children before parents in three of them): released top down all the same."""
    frame = _frame(150, seed)
    orders = list(itertools.permutations(("all", "region", "feeder", "circuit")))
    doc = query(frame, _spec(orders[(7 * seed) % len(orders)]), seed=seed)
    _adds_up(doc, frame["u"].nunique())
    assert doc["statistics"]["circuit"]["consistent"]["map"] == {str(c): f for c, f in FEEDER.items()}


def test_top_down_orders_parents_first_and_keeps_the_one_level_order():
    spec = parse_query_spec(_spec(("circuit", "feeder", "all", "region")))
    assert [(c.name, p.name) for c, p in top_down(spec.statistics)] == \
        [("region", "all"), ("feeder", "region"), ("circuit", "feeder")]
    one = {"unit": {"id": "u"}, "statistics": {n: {**H, "by": "c", "groups": [1, 2]} for n in ("b", "a")}}
    one["statistics"]["top"] = H
    assert [(c.name, p.name) for c, p in top_down(parse_query_spec(one).statistics)] == [("b", "top"), ("a", "top")]


def test_a_level_with_groups_may_be_the_top():
    """A hierarchy whose top has ``by`` (no overall histogram): it adds up to the number of
    units, the level below to it."""
    frame = _frame(80, 9)
    spec = _spec()
    del spec["statistics"]["all"], spec["statistics"]["region"], spec["statistics"]["feeder"]["within"]
    s = query(frame, spec, seed=3)["statistics"]
    feeder, circuit = _grid(s["feeder"]), _grid(s["circuit"])
    assert int(feeder.sum()) + s["feeder"]["outside"]["value"] == frame["u"].nunique()
    assert np.array_equal(_summed(circuit, [1, 2, 3, 4, 5, 6], ["x", "y", "z"], FEEDER), feeder)


def test_true_tables_add_up_when_each_unit_is_counted_at_one_cell():
    """The exact answers of every level (the aggregate the release reads), with the outside
    cells: each level is the level below summed through its map, every level sums to N."""
    frame = _frame(300, 4)
    spec = parse_query_spec(_spec())
    agg = aggregate([frame], spec)
    true = {s.name: answers(agg, s).cells for s in spec.statistics}
    n = frame["u"].nunique()
    assert np.array_equal(_summed(true["circuit"], [1, 2, 3, 4, 5, 6], ["x", "y", "z"], FEEDER), true["feeder"])
    assert np.array_equal(_summed(true["feeder"], ["x", "y", "z"], ["n", "s"], REGION), true["region"])
    assert np.array_equal(true["region"].sum(0), true["all"].ravel())
    outside = n - int(true["all"].sum())
    assert outside > 0 and all(n - int(t.sum()) == outside for t in true.values())


# ------------------------------------------------------------------ the projection by parent group
def test_add_up_within_projects_each_parent_groups_block():
    """Each (parent group, key) block is :func:`fitted` onto the parent's value, blocks in the
    order key, then parent group; one parent group is :func:`add_up_columns`."""
    rng = np.random.default_rng(0)
    y = rng.integers(-3, 20, (5, 3))
    lo, hi = np.maximum(y - 6, 0), y + 6
    totals, home = np.array([[20, 4, 9], [3, 0, 12]]), np.array([0, 1, 0, 1, 0])
    got, inside = add_up_within(y, lo, hi, totals, home, SeededRandomSource(1))
    source, want, ok = SeededRandomSource(1), np.zeros_like(y), True
    for k in range(3):
        for g in (0, 1):
            r = np.flatnonzero(home == g)
            want[r, k], fine = fitted(y[r, k], lo[r, k], hi[r, k], int(totals[g, k]), source)
            ok = ok and fine
    assert np.array_equal(got, want) and inside == ok and (got >= 0).all()
    assert np.array_equal(_summed(got, [0, 1, 2, 3, 4], [0, 1], dict(enumerate(home))), totals)
    one = add_up_within(y, lo, hi, totals[:1], np.zeros(5, np.int64), SeededRandomSource(2))
    assert np.array_equal(one[0], add_up_columns(y, lo, hi, totals[0], SeededRandomSource(2))[0])


def test_narrow_is_the_parent_values_some_child_values_reach():
    """Every tiny case: a parent cell's narrowed interval is its box met with the sums of child
    values within the child's boxes (enumerated), the outside cell the two boxes met; ``None``
    exactly when some cell would be empty."""
    home = np.array([0, 1, 0])                                 # three child groups, two parent groups, one key
    for c_lo in itertools.product(range(3), repeat=4):
        c_hi = np.array(c_lo) + np.array([1, 0, 2, 1])
        c_lo = np.array(c_lo)
        for p_lo in itertools.product(range(0, 6, 2), repeat=3):
            p_lo = np.array(p_lo)
            p_hi = p_lo + 2
            got = narrow(p_lo, p_hi, c_lo, c_hi, home)
            want, empty = [], False
            for g in (0, 1):
                reach = {sum(v) for v in itertools.product(*[range(c_lo[i], c_hi[i] + 1)
                                                             for i in np.flatnonzero(home == g)])}
                cell = [v for v in range(p_lo[g], p_hi[g] + 1) if v in reach]
                empty = empty or not cell
                want.append(cell)
            out = [v for v in range(p_lo[2], p_hi[2] + 1) if c_lo[3] <= v <= c_hi[3]]
            if empty or not out:
                assert got is None
                continue
            assert [list(range(a, b + 1)) for a, b in zip(*got)] == [*want, out]


def test_tight_child_intervals_carry_the_truth_to_every_level():
    """A document whose bottom level's simultaneous intervals are made exactly its true cells,
    the levels above [0, N]: released top down again, the narrowing carries the children's sums
    up, so every level's released values are its true table (the top re-projected)."""
    frame = _frame(120, 5)
    spec = _spec()
    spec["statistics"]["region"] = {**spec["statistics"]["region"], "within": {"statistic": "all"}}
    parsed = parse_query_spec(spec)
    n = frame["u"].nunique()
    true = {s.name: answers(aggregate([frame], parsed), s).cells for s in parsed.statistics}
    docs = query(frame, spec, seed=2)["statistics"]
    for s in parsed.statistics:
        c = docs[s.name]["consistent"]
        exact = s.name == "circuit"
        rows = c["simultaneous_intervals"].items() if s.groups else [(None, c["simultaneous_intervals"])]
        for i, (_, row) in enumerate(rows):
            for j, key in enumerate(row):
                row[key] = [int(true[s.name][i, j])] * 2 if exact else [0, n]
        outside = n - int(true[s.name].sum())
        c["simultaneous_outside"] = [outside, outside] if exact else [0, n]
    released = add_up(parsed.statistics, docs, SeededRandomSource(0))
    for s in parsed.statistics:
        assert np.array_equal(_grid(released[s.name]), true[s.name]), s.name
        assert released[s.name]["consistent"]["values_inside_simultaneous_intervals"]


# ------------------------------------------------------------------ coverage by simulation
def _top_down(levels: list, home: np.ndarray, n: int, source) -> list[np.ndarray]:
    """Three levels (top 1 x 3, middle 2 x 3, bottom 5 x 3, each with its outside cell last)
    released as :func:`optnoise.query.consistent.add_up` releases ``within`` ties, on arrays:
    the boxes narrowed bottom up (:func:`narrow`), the top projected into its narrowed boxes
    where its values leave them, then each level onto the one above inside its narrowed boxes."""
    boxes = [(lv.box_low, lv.box_high) for lv in levels]
    for i, h in ((1, home), (0, np.zeros(2, np.int64))):
        boxes[i] = narrow(*boxes[i], *boxes[i + 1], h) or boxes[i]
    top = levels[0].values
    lo, hi = boxes[0]
    if not ((lo <= top) & (top <= hi)).all() and lo.sum() <= n <= hi.sum():
        top = project(levels[0].independent, lo, hi, n, source)
    out = [top]
    for i, h in ((1, np.zeros(2, np.int64)), (2, home)):
        lv, (lo, hi) = levels[i], boxes[i]
        rows = len(h)
        grid, _ = add_up_within(lv.independent[:-1].reshape(rows, 3), lo[:-1].reshape(rows, 3),
                                hi[:-1].reshape(rows, 3), out[-1][:-1].reshape(-1, 3), h, source)
        out.append(np.append(grid.ravel(), out[-1][-1]))
    return out


#: The false-alarm rate of the whole simulation test (Bonferroni over its binomial tests).
FALSE_ALARM = 1e-6


def test_three_levels_sum_and_cover_by_simulation():
    """R = 1500 releases of three levels (overall 3 keys, 2 feeders x 3 keys, 5 circuits x 3
    keys; the outside cell in each; N = 40), pure eps 0.5 per cell, alpha = 0.1, the true
    tables adding up (units drawn into circuit cells), released as ``within`` ties are
    (:func:`_top_down`). In every release every level adds up exactly and is non-negative;
    whenever every truth lies in its simultaneous interval, so does every released value. Misses of each marginal interval (per cell), of each level's
    simultaneous intervals (any cell), and of all levels' at once are binomial with rates <=
    alpha, alpha, 3 alpha: each count stays below its binomial quantile at FALSE_ALARM / 27
    (27 tests). Power: the marginal intervals taken as all levels' simultaneous ones are
    rejected (true miss rate near 1 - 0.9^27)."""
    n, alpha, reps = 40, 0.1, 1500
    home = np.array([0, 0, 0, 1, 1])                       # circuit -> feeder
    circuit = np.array([[6, 3, 1], [5, 0, 2], [4, 2, 0], [7, 3, 1], [2, 1, 0]])
    feeder = np.array([circuit[home == g].sum(0) for g in (0, 1)])
    top = feeder.sum(0, keepdims=True)
    outside = n - int(top.sum())
    truth = [np.append(t.ravel(), outside) for t in (top, feeder, circuit)]
    cell = count_cell("h", n, 0, 1, Target(0.5))
    source = SeededRandomSource(36)
    tests = sum(t.size for t in truth) + 4
    limit = binom.ppf(1 - FALSE_ALARM / tests, reps, alpha)
    limit3 = binom.ppf(1 - FALSE_ALARM / tests, reps, 3 * alpha)
    misses = [np.zeros(t.size, int) for t in truth]
    box_misses, all_misses, naive_misses, on_e = np.zeros(3, int), 0, 0, 0
    for _ in range(reps):
        levels = [release(cell, t, n, alpha, source) for t in truth]
        z = _top_down(levels, home, n, source)
        z_f, z_c = z[1][:-1].reshape(2, 3), z[2][:-1].reshape(5, 3)
        assert all((v >= 0).all() and int(v.sum()) == n for v in z) and z[1][-1] == z[2][-1] == z[0][-1]
        assert np.array_equal(np.array([z_c[home == g].sum(0) for g in (0, 1)]), z_f)
        assert np.array_equal(z_f.sum(0), z[0][:-1])
        if all(((lv.box_low <= t) & (t <= lv.box_high)).all() for lv, t in zip(levels, truth)):
            on_e += 1      # every truth in its box: every released value in its box (proof, Claim H)
            assert all(((lv.box_low <= v) & (v <= lv.box_high)).all() for lv, v in zip(levels, z))
        missed_any = False
        for i, (lv, t) in enumerate(zip(levels, truth)):
            misses[i] += ~((lv.low <= t) & (t <= lv.high))
            box = ((lv.box_low <= t) & (t <= lv.box_high)).all()
            box_misses[i] += not box
            missed_any = missed_any or not box
        all_misses += missed_any
        naive_misses += not all(((lv.low <= t) & (t <= lv.high)).all() for lv, t in zip(levels, truth))
    assert all((m <= limit).all() for m in misses) and (box_misses <= limit).all() and all_misses <= limit3
    assert naive_misses > limit3 and on_e > reps // 2         # power; the event E is frequent (>= 0.7 proven)


# ------------------------------------------------------------------ refusals
def _with(changes: dict, unit: dict | None = None) -> dict:
    spec = _spec()
    for name, fields in changes.items():
        table = dict(spec["statistics"][name])
        for key, value in fields.items():
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
        spec["statistics"][name] = table
    if unit is not None:
        spec["unit"] = unit
    return spec


MAP = {str(c): f for c, f in FEEDER.items()}


@pytest.mark.parametrize("changes, unit, key, words", [
    ({"circuit": {"within": {"statistic": "feeder", "map": {k: v for k, v in MAP.items() if k != "4"}}}}, None,
     "circuit.within.map", "group 4 is missing"),
    ({"circuit": {"within": {"statistic": "feeder", "map": {**MAP, "8": "x"}}}}, None, "circuit.within.map",
     "8 is not one"),
    ({"circuit": {"within": {"statistic": "feeder", "map": {**MAP, "6": "w"}}}}, None, "circuit.within.map",
     "w is not one"),
    ({"circuit": {"within": {"statistic": "feeder", "map": {**MAP, "6": "y"}}}}, None, "circuit.within.map",
     "none into z"),
    ({"feeder": {"consistent": None, "within": None}}, None, "circuit.within.statistic", "consistent = true"),
    ({"circuit": {"within": {"statistic": "nowhere", "map": MAP}}}, None, "circuit.within.statistic", "another"),
    ({"feeder": {"keys": [0, 1], "within": None}}, None, "circuit.within.statistic", "same keys"),
    ({"feeder": {"where": {"w": [0, 1], "r": ["n", "s"]}, "within": None}}, None, "circuit.within.statistic", "same where"),
    ({"feeder": {"key": "c2"}}, None, "feeder.within.statistic", "same key"),
    ({"region": {"within": {"statistic": "circuit", "map": {"n": 1, "s": 6}}}}, None, "region.within", "no cycle"),
    ({"circuit": {"within": {"statistic": "circuit", "map": MAP}}}, None, "circuit.within", "no cycle"),
    ({"circuit": {"consistent": None}}, None, "circuit.within", "consistent = true"),
    ({"feeder": {"within": {"statistic": "all", "map": REGION}}}, None, "feeder.within.map", "no map"),
    ({"circuit": {"within": "feeder"}}, None, "circuit.within", "statistic ="),
    ({}, {"id": "u", "max_rows": 3, "change": "add-remove", "max_units": 500}, "consistent", "not public"),
])
def test_refusals_name_the_key(changes, unit, key, words):
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(_with(changes, unit))
    assert err.value.parameter.startswith("statistics.") and err.value.parameter.endswith(key), err.value.parameter
    assert words in str(err.value), str(err.value)


def test_a_parent_without_groups_may_be_named_without_a_map():
    doc = query(_frame(60, 2), _with({"region": {"within": {"statistic": "all"}}}), seed=1)
    _adds_up(doc, 60)


def test_cli_refuses_a_map_missing_a_group_with_one_line(tmp_path):
    _frame(10, 0).to_csv(tmp_path / "in.csv", index=False)
    maps = ", ".join(f'{c} = "{f}"' for c, f in FEEDER.items() if c != 2)
    (tmp_path / "s.toml").write_text(
        'unit = { id = "u", max_rows = 3 }\n'
        '[statistics.feeder]\nkind = "histogram"\nkey = "k"\nkeys = [0, 1, 2]\nby = "f"\ngroups = ["x", "y", "z"]\n'
        'consistent = true\nepsilon = 1.0\n'
        '[statistics.circuit]\nkind = "histogram"\nkey = "k"\nkeys = [0, 1, 2]\nby = "c"\ngroups = [1, 2, 3, 4, 5, 6]\n'
        f'consistent = true\nepsilon = 1.0\nwithin = {{ statistic = "feeder", map = {{ {maps} }} }}\n')
    run = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
                                   "--output", str(tmp_path / "o.json")])
    assert run.exit_code == 2 and "statistics.circuit.within.map" in run.output and "group 2 is missing" in run.output
    assert len(run.output.strip().splitlines()) == 1 and not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ Spark
def test_spark_document_equals_the_local_one(tmp_path):
    from optnoise.publish.spark import spark_session
    from optnoise.query.files import query_file
    spark_session()
    _frame(200, 7).to_csv(tmp_path / "in.csv", index=False)
    local = query_file(tmp_path / "in.csv", _spec(), source=SeededRandomSource(8))
    remote = query_file(tmp_path / "in.csv", _spec(), engine="spark", source=SeededRandomSource(8))
    assert json.dumps(remote["statistics"], sort_keys=True) == json.dumps(local["statistics"], sort_keys=True)
    _adds_up(remote, 200)


def test_a_one_level_tie_in_a_tree_with_within_narrows_too():
    """T (overall) <- R (by region: the one-level tie) <- F (by feeder, ``within`` R): every
    truth inside its simultaneous interval and the true tables adding up (F 5,5,5,5; R 10,10;
    T 20; outside 0), yet T's independent release (15, outside 5) is far off. Unless the
    one-level tie R -> T narrows T too, T keeps 15 and 5, and F, projected under it, leaves
    its own intervals [4, 6] and [0, 1] (Claim H, found by review)."""
    base = {"kind": "histogram", "key": "k", "keys": ["x"], "consistent": True, "epsilon": 1.0}
    spec = parse_query_spec({"unit": {"id": "u"}, "statistics": {
        "T": base, "R": {**base, "by": "region", "groups": ["r1", "r2"]},
        "F": {**base, "by": "feeder", "groups": ["f1", "f2", "f3", "f4"],
              "within": {"statistic": "R", "map": {"f1": "r1", "f2": "r1", "f3": "r2", "f4": "r2"}}}}})

    def doc(y, boxes, yout, obox, grouped):
        wrap = (lambda v: {g: {"x": a} for g, a in zip(grouped, v)}) if grouped else (lambda v: {"x": v[0]})
        return {"values": wrap(y), "outside": {"value": yout},
                "consistent": {"total": 20, "independent_values": wrap(y), "independent_outside": yout,
                               "simultaneous_intervals": wrap(boxes), "simultaneous_outside": obox}}
    docs = {"T": doc([15], [[14, 26]], 5, [0, 6], None),
            "R": doc([10, 10], [[5, 15], [5, 15]], 0, [0, 6], ["r1", "r2"]),
            "F": doc([5] * 4, [[4, 6]] * 4, 0, [0, 1], ["f1", "f2", "f3", "f4"])}
    out = add_up(spec.statistics, docs, SeededRandomSource(0))
    feeders = [out["F"]["values"][f]["x"] for f in ("f1", "f2", "f3", "f4")]
    assert all(4 <= v <= 6 for v in feeders) and 0 <= out["F"]["outside"]["value"] <= 1
    assert out["F"]["consistent"]["values_inside_simultaneous_intervals"] is True
    assert sum(feeders) == sum(out["R"]["values"][r]["x"] for r in ("r1", "r2")) == out["T"]["values"]["x"]
