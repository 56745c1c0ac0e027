"""A person in several groups and bounding that does not depend on file order (issue 36, items
2 and 3): ``unit.max_groups``, ``unit.max_rows_per_group`` and ``unit.bounding = "random"``.

* The derived neighbourhood of every kind (cells one unit moves, each by at most the derived
  distance, within the derived contribution, and the L1 plan's total) checked by brute force:
  every table ``D0 + A`` (a fixed table of other units plus one unit holding any multiset ``A``
  of at most ``max_rows`` rows from a small universe), every pair of them (``replace``) and
  every ``(D0, D0 + A)`` (``add-remove``), with ``max_groups`` 2 and 3; the bound is attained
  where it is claimed tight.
* Random bounding: the kept rows (and groups) of a unit uniform over its subsets (chi-square at
  a stated false-alarm rate, with a power check against the ``first`` rule), the same law
  whatever the file's order, reproducible with a seed, and the bottom-``m`` rule exact across
  batches against a brute force with given priorities.
* Refusals (exit 2, one line naming the key). (The Spark engine runs the three keys:
  tests/test_query_spark_groups.py.)
"""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from optnoise.errors import InvalidParameterError
from optnoise.query import query
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.files import query_file
from optnoise.query.kinds import derive, kind_of, score_sensitivity
from optnoise.query.priority import draw_key, row_priorities
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource

#: Statistical tests reject a true hypothesis with probability 1e-3 each.
FALSE_ALARM = 1e-3

GROUPS = [0, 1, 2, 3]
KEYS = [0, 1]
VALUES = [-1, 2]
#: The universe of one unit's rows: (group, key, value).
UNIVERSE = list(itertools.product(GROUPS, KEYS, VALUES))
#: Other units, fixed: (unit, group, key, value).
OTHERS = [(100, 0, 0, 2), (100, 1, 1, -1), (101, 2, 0, 2), (101, 2, 1, 2), (101, 0, 1, -1)]

CLAMP = {"lower": -1, "upper": 2}
BY = {"by": "g", "groups": GROUPS}
STATS = {
    "hist_units": {"kind": "histogram", "key": "k", "keys": KEYS, **BY},
    "hist_units_flat": {"kind": "histogram", "key": "k", "keys": KEYS},
    "hist_rows": {"kind": "histogram", "of": "rows", "key": "k", "keys": KEYS, **BY},
    "sum": {"kind": "sum", "column": "v", "clamp": CLAMP, **BY},
    "sum_flat": {"kind": "sum", "column": "v", "clamp": CLAMP},
    "count_rows": {"kind": "count", "of": "rows"},
    "mode": {"kind": "mode", "key": "k", "keys": KEYS, **BY},
    "peak": {"kind": "peak", "of": "v", "clamp": CLAMP, "key": "k", "keys": KEYS, **BY},
    "median": {"kind": "median", "column": "v", "clamp": CLAMP, **BY},
}


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows or [(0, 0, 0, 0)], columns=["u", "g", "k", "v"]).iloc[:len(rows)]


def _grids(spec, tables: list[list[tuple]]) -> dict[str, np.ndarray]:
    """Each statistic's summed grid (what its mechanisms see) for every table, stacked."""
    out: dict[str, list] = {s.name: [] for s in spec.statistics}
    for rows in tables:
        agg = aggregate([_frame(rows)], spec)
        for s in spec.statistics:
            out[s.name].append(np.asarray(kind_of(s).grid(answers(agg, s)), np.int64))
    return {k: np.stack(v) for k, v in out.items()}


def _unit_sets(m: int) -> list[tuple]:
    return [c for size in range(m + 1) for c in itertools.combinations_with_replacement(UNIVERSE, size)]


def _check(spec, grids: dict[str, np.ndarray], pairs: np.ndarray, tight: set[str]) -> None:
    """Every pair of neighbouring tables moves each statistic within its derived neighbourhood."""
    for s in spec.statistics:
        d = derive(s, spec.unit)
        grid = grids[s.name]
        diff = grid[pairs[:, 0]] - grid[pairs[:, 1]]            # pairs x groups x keys
        if kind_of(s).releases_key or s.kind == "median":      # released per group: groups moved
            moved = (diff != 0).any(axis=2).sum(axis=1)
            per_score = np.abs(diff).max(axis=(1, 2))
            if s.kind == "median":   # one point of each moved group moves (or appears, or leaves)
                assert np.abs(diff).sum(axis=2).max() <= 2 * spec.unit.distance(0, 1), s.name
            else:
                assert per_score.max() <= score_sensitivity(s, spec.unit), s.name
        else:
            flat = diff.reshape(len(diff), -1)
            moved = (flat != 0).sum(axis=1)
            assert np.abs(flat).max() <= d.distance, (s.name, np.abs(flat).max(), d)
            if d.l1 is not None:
                assert np.abs(flat).sum(axis=1).max() <= d.l1, s.name
        assert moved.max() <= d.cells, (s.name, int(moved.max()), d)
        if s.name in tight:
            assert moved.max() == d.cells, (s.name, int(moved.max()), d)


@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_the_derived_neighbourhood_of_every_kind_holds_over_all_neighbours(groups, change):
    m = 3
    unit = {"id": "u", "max_rows": m, "max_groups": groups, "change": change}
    if change == "add-remove":
        unit["max_units"] = 10
    spec = parse_query_spec({"unit": unit, "statistics": {k: {**v, "epsilon": 1.0} for k, v in STATS.items()}})
    sets = _unit_sets(m)
    tables = [OTHERS + [(7, *row) for row in a] for a in sets]
    grids = _grids(spec, tables + [OTHERS])
    n = len(sets)
    if change == "replace":
        i, j = np.triu_indices(n, 1)
        pairs = np.stack([i, j], axis=1)
    else:   # the unit in the table (any rows) or left out (the last table)
        pairs = np.stack([np.arange(n), np.full(n, n)], axis=1)
    # attained: a histogram of units (a unit in g of the 8 cells) and a sum by group where the
    # 4 groups hold a unit's g old and g new ones
    _check(spec, grids, pairs, tight={"hist_units", "sum"} if groups == 2 or change == "add-remove" else
           {"hist_units"})
    for name in ("hist_units", "sum", "mode", "median"):
        s = next(x for x in spec.statistics if x.name == name)
        assert derive(s, spec.unit).cells == (2 * groups if change == "replace" else groups)


@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_rows_per_group_bounds_each_cell_and_the_derived_distances(change):
    m, r = 3, 2
    unit = {"id": "u", "max_rows": m, "max_groups": 2, "max_rows_per_group": r, "change": change}
    if change == "add-remove":
        unit["max_units"] = 10
    spec = parse_query_spec({"unit": unit, "statistics": {k: {**v, "epsilon": 1.0} for k, v in STATS.items()}})
    sets = _unit_sets(m)
    grids = _grids(spec, [OTHERS + [(7, *row) for row in a] for a in sets] + [OTHERS])
    n = len(sets)
    pairs = np.stack(np.triu_indices(n, 1), axis=1) if change == "replace" else \
        np.stack([np.arange(n), np.full(n, n)], axis=1)
    _check(spec, grids, pairs, tight=set())
    by_name = {s.name: s for s in spec.statistics}
    assert derive(by_name["sum"], spec.unit).high == r * 2                     # r rows of at most 2 per group
    assert derive(by_name["count_rows"], spec.unit).high == r                  # one group: r rows
    assert derive(by_name["hist_rows"], spec.unit).distance == r


def test_keys_found_in_the_data_select_with_one_unit_holding_max_groups_keys():
    from optnoise.query.threshold import smallest_threshold
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"u": rng.integers(0, 300, 3000), "k": rng.integers(0, 4, 3000)})
    spec = {"unit": {"id": "u", "max_rows": 4, "max_groups": 3}, "statistics": {
        "h": {"kind": "histogram", "key": "k", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6}}}
    doc = query(frame, spec, seed=1)
    sel = doc["statistics"]["h"]["keys"]
    assert sel["keys_per_unit"] == 3
    one = query(frame, {**spec, "unit": {"id": "u", "max_rows": 4}}, seed=1)["statistics"]["h"]["keys"]
    assert one["keys_per_unit"] == 1 and sel["threshold"] >= one["threshold"]
    assert doc["statistics"]["h"]["neighbourhood"]["cells_per_unit"] == 6


def test_the_document_names_the_new_unit_keys_only_when_given():
    frame = pd.DataFrame({"u": [1, 1, 2], "k": [0, 1, 1]})
    stats = {"h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 1.0}}
    plain = query(frame, {"unit": {"id": "u", "max_rows": 2}, "statistics": stats}, seed=3)
    assert not {"max_groups", "max_rows_per_group", "bounding"} & set(plain["unit"])
    doc = query(frame, {"unit": {"id": "u", "max_rows": 2, "max_groups": 2, "bounding": "random"},
                        "statistics": stats}, seed=3)
    assert doc["unit"]["max_groups"] == 2 and doc["unit"]["bounding"] == "random" and doc["private"] is False


def _by_hand(frame: pd.DataFrame, m: int, r: int, g: int, keys: int) -> tuple[np.ndarray, np.ndarray]:
    """The first rule by hand, unit by unit: a sum by group and a histogram of units by
    (group, key): the first ``m`` rows, the first ``r`` of each group, the ``g`` groups (cells)
    of most rows, ties to the least index."""
    sums, hist = np.zeros(4, np.int64), np.zeros((4, keys), np.int64)
    for _, rows in frame.groupby("u", sort=False):
        rows = rows.head(m)
        rows = rows[rows.groupby("g").cumcount() < r]
        per_group = rows.groupby("g").size()
        kept = sorted(per_group.index, key=lambda x: (-per_group[x], x))[:g]
        sums[kept] += [int(rows.loc[rows["g"] == x, "v"].sum()) for x in kept]
        per_cell = rows.groupby(["g", "k"]).size()
        for x, k in sorted(per_cell.index, key=lambda c: (-per_cell[c], c[0] * keys + c[1]))[:g]:
            hist[x, k] += 1
    return sums, hist


@pytest.mark.parametrize("seed", range(4))
def test_the_first_rule_with_groups_and_rows_per_group_equals_a_computation_by_hand(seed):
    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame({"u": rng.integers(0, 40, n), "g": rng.integers(0, 4, n), "k": rng.integers(0, 3, n),
                          "v": rng.integers(0, 3, n)})
    m, r, g = int(rng.integers(2, 8)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": m, "max_rows_per_group": r, "max_groups": g},
                             "statistics": {
        "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "by": "g", "groups": [0, 1, 2, 3],
              "epsilon": 1.0},
        "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": [0, 1, 2, 3], "epsilon": 1.0}}})
    sums, hist = _by_hand(frame, m, r, g, 3)
    for size in (n, 7):
        agg = aggregate([frame.iloc[i:i + size] for i in range(0, n, size)], spec)
        assert answers(agg, spec.statistics[0]).cells[:, 0].tolist() == sums.tolist()
        assert answers(agg, spec.statistics[1]).cells.tolist() == hist.tolist()


# ------------------------------------------------------------------ random bounding
def _kept_keys(frame: pd.DataFrame, unit: dict, seed: int, stat: dict) -> pd.DataFrame:
    spec = parse_query_spec({"unit": unit, "statistics": {"x": {**stat, "epsilon": 1.0}}})
    agg = aggregate([frame], spec, source=SeededRandomSource(seed))
    return agg.parts["x"].frame()


def _subset_counts(part: pd.DataFrame, column: str, categories: list[tuple]) -> np.ndarray:
    kept = part.groupby("unit")[column].apply(lambda s: tuple(sorted(s)))
    index = {c: i for i, c in enumerate(categories)}
    return np.bincount([index[t] for t in kept], minlength=len(categories))


def _uniform(counts: np.ndarray) -> bool:
    """Chi-square goodness of fit to the uniform law: ``True`` unless rejected at FALSE_ALARM."""
    expected = np.full(len(counts), counts.sum() / len(counts))
    return sps.chisquare(counts, expected).pvalue > FALSE_ALARM


def _rows_table(units: int, keys: int, rng: np.random.Generator | None = None) -> pd.DataFrame:
    frame = pd.DataFrame({"u": np.repeat(np.arange(units), keys), "k": np.tile(np.arange(keys), units)})
    return frame if rng is None else frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


HIST_ROWS = {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1, 2, 3, 4]}
PAIRS = list(itertools.combinations(range(5), 2))


def test_random_bounding_keeps_a_uniform_subset_of_each_units_rows_and_first_does_not():
    frame = _rows_table(2000, 5)
    got = _subset_counts(_kept_keys(frame, {"id": "u", "max_rows": 2, "bounding": "random"}, 11, HIST_ROWS), "key",
                         PAIRS)
    assert got.sum() == 2000 and _uniform(got)
    first = _subset_counts(_kept_keys(frame, {"id": "u", "max_rows": 2}, 11, HIST_ROWS), "key", PAIRS)
    assert not _uniform(first)                                  # power: the input's order is not uniform
    mixed = (0.8 * got + 0.2 * first).round()                   # a fifth of the units by file order
    assert not _uniform(mixed)


def test_random_bounding_has_the_same_law_whatever_the_files_order():
    rng = np.random.default_rng(4)
    unit = {"id": "u", "max_rows": 2, "bounding": "random"}
    a = _subset_counts(_kept_keys(_rows_table(2000, 5), unit, 21, HIST_ROWS), "key", PAIRS)
    b = _subset_counts(_kept_keys(_rows_table(2000, 5, rng), unit, 22, HIST_ROWS), "key", PAIRS)
    assert _uniform(b)
    assert sps.chi2_contingency(np.stack([a, b])).pvalue > FALSE_ALARM   # homogeneity of the two laws
    # in many small batches (rows merged into full slots) the law is the same
    spec = parse_query_spec({"unit": unit, "statistics": {"x": {**HIST_ROWS, "epsilon": 1.0}}})
    frame = _rows_table(2000, 5, rng)
    agg = aggregate([frame.iloc[i:i + 97] for i in range(0, len(frame), 97)], spec, source=SeededRandomSource(23))
    assert _uniform(_subset_counts(agg.parts["x"].frame(), "key", PAIRS))


def test_random_groups_are_uniform_whatever_the_units_rows_in_each():
    # each unit: 3 rows in group 0, one in each of groups 1..3; max_groups 2 keeps a uniform pair
    # (the first rule keeps group 0 always: its most rows)
    g = np.tile([0, 0, 0, 1, 2, 3], 1500)
    frame = pd.DataFrame({"u": np.repeat(np.arange(1500), 6), "g": g, "v": np.ones(len(g), np.int64)})
    stat = {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 1}, "by": "g", "groups": [0, 1, 2, 3]}
    pairs = list(itertools.combinations(range(4), 2))
    unit = {"id": "u", "max_rows": 6, "max_groups": 2}
    spec = parse_query_spec({"unit": {**unit, "bounding": "random"}, "statistics": {"x": {**stat, "epsilon": 1.0}}})
    agg = aggregate([frame], spec, source=SeededRandomSource(5))
    from optnoise.query.cells import in_kept
    part = agg.parts["x"].frame()
    keep = in_kept(part["unit"].to_numpy(), part["group"].to_numpy(), part["rows"].to_numpy(), agg.rules())
    counts = _subset_counts(part[keep], "group", pairs)
    assert counts.sum() == 1500 and _uniform(counts)
    cells = answers(agg, spec.statistics[0]).cells[:, 0]     # a fresh draw: group 0 adds its 3 rows when kept
    assert cells[0] % 3 == 0 and cells[0] // 3 + cells[1:].sum() == 1500 * 2
    first = parse_query_spec({"unit": unit, "statistics": {"x": {**stat, "epsilon": 1.0}}})
    assert answers(aggregate([frame], first), first.statistics[0]).cells[0, 0] == 3 * 1500


def test_random_rows_per_group_are_uniform_within_each_group():
    values = [1, 2, 4, 8]                                      # a pair's sum names the pair
    frame = pd.DataFrame({"u": np.repeat(np.arange(2400), 4), "v": np.tile(values, 2400)})
    stat = {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 8}}
    part = _kept_keys(frame, {"id": "u", "max_rows": 4, "max_rows_per_group": 2, "bounding": "random"}, 9, stat)
    per_unit = part.groupby("unit")["value"].sum()
    sums = sorted(a + b for a, b in itertools.combinations(values, 2))
    counts = np.array([(per_unit == s).sum() for s in sums])
    assert counts.sum() == 2400 and _uniform(counts)
    first = _kept_keys(frame, {"id": "u", "max_rows": 4, "max_rows_per_group": 2}, 9, stat)
    assert (first.groupby("unit")["value"].sum() == 3).all()  # the first two rows: 1 + 2


class GivenWords:
    """A source whose words are given (the priorities of the rows, in order)."""

    private = False
    description = "given words"

    def __init__(self, words: np.ndarray) -> None:
        self.words_left = np.asarray(words, np.uint64)

    def words(self, count: int) -> np.ndarray:
        out, self.words_left = self.words_left[:count], self.words_left[count:]
        return out

    def randbelow(self, bound: int) -> int:
        raise AssertionError("not used")


def test_each_unit_keeps_its_rows_of_smallest_priority_in_any_batches():
    rng = np.random.default_rng(8)
    n, m = 3000, 3
    # units 0..199 appear first in increasing order: their dense index is their id
    frame = pd.DataFrame({"u": np.concatenate([np.arange(200), rng.integers(0, 200, n - 200)]),
                          "k": rng.integers(0, 6, n)})
    words = rng.integers(0, 2 ** 63, 2, dtype=np.int64).astype(np.uint64)   # the key's
    prio = row_priorities(draw_key(GivenWords(words)), np.arange(1, n + 1))  # each row's, by its read index
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": m, "bounding": "random"}, "statistics": {
        "x": {"kind": "histogram", "of": "rows", "key": "k", "keys": list(range(6)), "epsilon": 1.0}}})
    expected = frame.assign(p=prio).sort_values(["u", "p"]).groupby("u").head(m)
    want = expected.groupby(["u", "k"]).size()
    for size in (n, 1, 17, 250):
        agg = aggregate([frame.iloc[i:i + size] for i in range(0, n, size)], spec, source=GivenWords(words))
        part = agg.parts["x"].frame()
        got = part.set_index(["unit", "key"])["rows"].sort_index()
        assert got.index.tolist() == want.sort_index().index.tolist(), size
        assert got.tolist() == want.sort_index().tolist(), size
        assert agg.kept == int(np.minimum(frame["u"].value_counts().to_numpy(), m).sum())


def test_random_bounding_is_reproducible_with_a_seed_and_labelled_not_private(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"u": rng.integers(0, 50, 600), "k": rng.integers(0, 4, 600)})
    spec = {"unit": {"id": "u", "max_rows": 2, "max_groups": 2, "bounding": "random"}, "statistics": {
        "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2, 3], "epsilon": 1.0}}}
    a, b = query(frame, spec, seed=12), query(frame, spec, seed=12)
    assert json.dumps(a["statistics"], sort_keys=True) == json.dumps(b["statistics"], sort_keys=True)
    assert a["private"] is False and a["only_if_unseeded"] == b["only_if_unseeded"]
    parsed = parse_query_spec(spec)
    one, two = (answers(aggregate([frame], parsed, source=SeededRandomSource(s)), parsed.statistics[0]).cells
                for s in (1, 2))
    assert not np.array_equal(one, two)                        # the bounding's randomness is the seed's
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    c, d = (query_file(path, spec, seed=12) for _ in range(2))
    assert c["statistics"] == d["statistics"]


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("unit, key", [
    ({"id": "u", "max_rows": 2, "max_groups": 0}, "unit.max_groups"),
    ({"id": "u", "max_rows": 2, "max_groups": 1.5}, "unit.max_groups"),
    ({"id": "u", "max_rows_per_group": 2}, "unit.max_rows_per_group"),
    ({"id": "u", "max_rows": 2, "max_rows_per_group": 0}, "unit.max_rows_per_group"),
    ({"max_groups": 2}, "unit.max_groups"),
    ({"id": "u", "max_rows": 2, "bounding": "last"}, "unit.bounding"),
])
def test_bad_unit_keys_are_refused_naming_the_key(unit, key):
    with pytest.raises(InvalidParameterError) as exc:
        parse_query_spec({"unit": unit, "statistics": {"c": {"kind": "count", "epsilon": 1.0}}})
    assert exc.value.parameter == key


def test_a_consistent_histogram_is_refused_when_a_unit_counts_in_several_cells():
    with pytest.raises(InvalidParameterError) as exc:
        parse_query_spec({"unit": {"id": "u", "max_rows": 2, "max_groups": 2}, "statistics": {
            "h": {"kind": "histogram", "key": "k", "keys": [0, 1], "consistent": True, "epsilon": 1.0}}})
    assert exc.value.parameter == "statistics.h.consistent" and "max_groups" in str(exc.value)


def test_random_bounding_past_the_slots_memory_is_refused_naming_the_key():
    frame = pd.DataFrame({"u": np.arange(100), "k": np.zeros(100, np.int64)})
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2, "bounding": "random"}, "statistics": {
        "c": {"kind": "count", "epsilon": 1.0}}})
    with pytest.raises(InvalidParameterError) as exc:
        aggregate([frame], spec, slot_bytes=10, source=SeededRandomSource(1))
    assert exc.value.parameter == "unit.bounding"


def test_fewer_rows_per_group_than_groups_on_a_histogram_with_no_by_is_refused():
    """With no ``by`` a histogram's one group is the whole unit: ``max_rows_per_group = 1``
    keeps one row, so one key, while ``max_groups = 3`` would charge the noise for three."""
    stats = {"h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0}}
    with pytest.raises(InvalidParameterError) as exc:
        parse_query_spec({"unit": {"id": "u", "max_rows": 4, "max_groups": 3, "max_rows_per_group": 1},
                          "statistics": stats})
    assert exc.value.parameter.endswith("unit.max_rows_per_group") and "max_groups (3)" in str(exc.value)
    parse_query_spec({"unit": {"id": "u", "max_rows": 4, "max_groups": 3, "max_rows_per_group": 3}, "statistics": stats})
    by = {"h": {**stats["h"], "by": "g", "groups": [0, 1]}}       # with groups, r rows per group: accepted
    parse_query_spec({"unit": {"id": "u", "max_rows": 4, "max_groups": 3, "max_rows_per_group": 1}, "statistics": by})
