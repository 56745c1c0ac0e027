"""Counts, sums and means by a key found in the data beside declared ``by`` groups (issue 36,
item 1): the released cells are (group, key) pairs; the selection is the histogram of units over
those cells, thresholded cell by cell (as a histogram ``by`` groups with found keys is); a sum or
mean keeps a unit's rows in its ``max_groups`` (group, key) cells of most counted rows -- the
cells its selection counts it in (docs/proofs/key-selection.md, "Beside declared groups")."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.found import found_in_frame, with_found_keys
from optnoise.query.kinds import derive, kind_of
from optnoise.query.spec import parse_query_spec
from optnoise.query.statistic import Keys

runner = CliRunner()
CLAMP = {"lower": 0, "upper": 10}
KINDS = {"count": {"kind": "count"}, "rows": {"kind": "count", "of": "rows"},
         "sum": {"kind": "sum", "column": "price", "clamp": CLAMP}, "mean": {"kind": "mean", "column": "price", "clamp": CLAMP}}
BY = {"by": "region", "groups": ["north", "south"]}


def _stat(which: str, **more) -> dict:
    return {"key": "product", "keys": "from-data", **BY, "epsilon": 1.0, "delta": 1e-6, **KINDS[which], **more}


def _frame(seed: int = 1, n: int = 6000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    common = rng.choice(["apple", "pear", "fig"], n, p=[0.5, 0.3, 0.2])
    rare = np.array([f"rare{i}" for i in rng.integers(0, 10 ** 6, n)])
    return pd.DataFrame({"c": rng.permutation(np.arange(n) // 3), "product": np.where(rng.random(n) < 0.9, common, rare),
                         "price": rng.integers(0, 10, n), "region": rng.choice(["north", "south", "west"], n,
                                                                                 p=[0.6, 0.35, 0.05])})


def _query(frame, spec, seed, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, seed=seed, **options)


# ------------------------------------------------------------------ the derived neighbourhood by brute force
GROUPS, KEYS, VALUES = [0, 1, 2], [0, 1], [0, 2]
UNIVERSE = list(itertools.product(GROUPS, KEYS, VALUES))
OTHERS = [(100, 0, 0, 2), (100, 1, 1, 0), (101, 2, 0, 2), (101, 2, 1, 2), (101, 0, 1, 0)]


def _grids(spec, tables):
    out = {s.name: [] for s in spec.statistics}
    for rows in tables:
        frame = pd.DataFrame(rows, columns=["u", "g", "k", "v"])
        agg = aggregate([frame], spec)
        for s in spec.statistics:
            out[s.name].append(np.asarray(kind_of(s).grid(answers(agg, s)), np.int64))
    return {k: np.stack(v) for k, v in out.items()}


@pytest.mark.parametrize("groups, per_group", [(1, None), (2, None), (2, 2), (3, None)])
@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_the_cells_one_unit_moves_hold_over_all_neighbours(groups, per_group, change):
    """Every table ``D0 + A`` (one unit holding any multiset ``A`` of at most 3 rows over 3 groups x
    2 keys x 2 values) against every other (replace) or ``D0`` (add-remove): each statistic --
    the selections and the values -- moves at most its derived cells, each by at most its derived
    distance (the L1 plan's total too); the sum's bound is reached."""
    unit = {"id": "u", "max_rows": 3, "max_groups": groups, "change": change,
            **({"max_rows_per_group": per_group} if per_group else {}),
            **({"max_units": 10} if change == "add-remove" else {})}
    clamp = {"lower": 0, "upper": 2}
    stats = {name: {"key": "k", "keys": "from-data", "by": "g", "groups": GROUPS, "epsilon": 1.0, "delta": 1e-6, **more}
             for name, more in {"units": {"kind": "count"}, "rows": {"kind": "count", "of": "rows"},
                                "sum": {"kind": "sum", "column": "v", "clamp": clamp},
                                "mean": {"kind": "mean", "column": "v", "clamp": clamp}}.items()}
    spec = with_found_keys(parse_query_spec({"unit": unit, "statistics": stats}), {"k": Keys(tuple(KEYS))})
    sets = [c for size in range(4) for c in itertools.combinations_with_replacement(UNIVERSE, size)]
    grids = _grids(spec, [OTHERS + [(7, *row) for row in a] for a in sets] + [OTHERS])
    n = len(sets)
    pairs = np.stack(np.triu_indices(n, 1), axis=1) if change == "replace" else \
        np.stack([np.arange(n), np.full(n, n)], axis=1)
    assert [s.name for s in spec.statistics] == ["units", "rows.keys", "rows", "sum.keys", "sum", "mean.keys", "mean"]
    for s in spec.statistics:
        d = derive(s, spec.unit)
        diff = (grids[s.name][pairs[:, 0]] - grids[s.name][pairs[:, 1]]).reshape(len(pairs), -1)
        moved = (diff != 0).sum(axis=1)
        assert moved.max() <= d.cells and np.abs(diff).max() <= d.distance, (s.name, int(moved.max()), d)
        if d.l1 is not None:
            assert np.abs(diff).sum(axis=1).max() <= d.l1, s.name
        if s.name in ("units", "sum") and groups < 3:   # reached: a unit's g old and g new cells
            assert moved.max() == d.cells, (s.name, d)
        if s.name.endswith(".keys") or s.name == "units":   # the selection's keys per unit: g
            assert d.cells == (2 * groups if change == "replace" else groups)


def _by_hand(frame: pd.DataFrame, g: int, max_rows: int = 3) -> tuple[dict, dict]:
    """The first rule unit by unit, written independently: a unit's first ``max_rows`` rows with a
    declared region, its ``g`` (region, product) cells of most rows (ties to the least region, then
    product, in declared and sorted order), its units and totals there."""
    order = {"north": 0, "south": 1}
    kept = frame.groupby("c", sort=False).head(max_rows)
    kept = kept[kept["region"].isin(order)]
    per = kept.groupby(["c", "region", "product"]).agg(rows=("price", "size"), total=("price", "sum")).reset_index()
    per["r"] = per["region"].map(order)
    per = per.sort_values(["c", "rows", "r", "product"], ascending=[True, False, True, True]).groupby("c").head(g)
    units = per.groupby(["region", "product"]).size().to_dict()
    totals = per.groupby(["region", "product"])["total"].sum().to_dict()
    return units, totals


@pytest.mark.parametrize("g", [1, 2])
def test_a_sum_keeps_a_unit_in_the_cells_its_selection_counts_it_in(g):
    """The values and the selection on the same (group, key) cells: the sum's exact cells and the
    selection's counts of units against the rule written independently."""
    frame = _frame(n=1500)
    spec = parse_query_spec({"unit": {"id": "c", "max_rows": 3, "max_groups": g}, "statistics": {"p": _stat("sum")}})
    spec = with_found_keys(spec, found_in_frame(frame, spec))
    agg = aggregate([frame], spec)
    units, totals = _by_hand(frame, g)
    keys = spec.statistics[1].keys.labels()
    for name, truth in (("p.keys", units), ("p", totals)):
        stat = next(s for s in spec.statistics if s.name == name)
        grid = answers(agg, stat).cells
        got = {(r, k): int(grid[i, j]) for i, r in enumerate(["north", "south"]) for j, k in enumerate(keys)
               if grid[i, j]}
        assert got == {k: int(v) for k, v in truth.items() if v}, name


# ------------------------------------------------------------------ documents
@pytest.mark.parametrize("which", list(KINDS))
def test_only_selected_group_key_cells_are_released_with_the_selection_in_the_total(which):
    doc = _query(_frame(), {"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": _stat(which)}}, 3)
    p = doc["statistics"]["p"]
    assert set(p["values"]) == {"north", "south"} and "rare" not in json.dumps(doc) and "west" not in json.dumps(doc)
    assert all(set(row) <= {"apple", "pear", "fig"} for row in p["values"].values())
    assert set(p["values"]["north"]) == {"apple", "pear", "fig"}   # the common cells pass
    assert {g: set(r) for g, r in p["intervals"].items()} == {g: set(r) for g, r in p["values"].items()}
    keys, total = p["keys"], doc["only_if_unseeded"]["total"]
    assert keys["keys_per_unit"] == 1 and keys["threshold"] > 1
    assert total["selection"]["epsilon"] == keys["selection_epsilon"]
    assert total["basic"]["epsilon"] <= 1.0 + keys["selection_epsilon"] + 1e-12
    if which != "count":
        assert {g: set(r) for g, r in keys["counts"].items()} == {g: set(r) for g, r in p["values"].items()}
        assert all(c >= keys["threshold"] - 1 for r in keys["counts"].values() for c in r.values())
        assert p["neighbourhood"]["cells_per_unit"] == (2 if which != "rows" else 6)


def test_the_total_against_a_hand_computation():
    """A sum and a histogram of rows by (region, found product) at (1, 1e-6), max_groups 2 under
    add-remove: each selection at 0.5 over m = 2 keys per unit, the values at 0.5, so basic
    epsilon 1 + 1 plus each selection's shift, delta each selection's (cells' or shift's)."""
    unit = {"id": "c", "max_rows": 3, "max_groups": 2, "change": "add-remove", "max_units": 5000}
    doc = _query(_frame(), {"unit": unit, "statistics": {"s": _stat("sum"), "r": _stat("rows")}}, 3)
    ks = [doc["statistics"][n]["keys"] for n in ("s", "r")]
    assert all(k["keys_per_unit"] == 2 for k in ks)
    total = doc["only_if_unseeded"]["total"]
    eps = 2.0 + sum(k["selection_epsilon"] for k in ks)
    delta = sum(k["selection_delta"] if k["selection_delta"] else 1e-6 for k in ks)   # geometric: shift; truncated: cells
    # the cells' certificates are at most their targets (the L1 plan's rows: a hair below)
    assert total["basic"]["epsilon"] == pytest.approx(eps, rel=1e-8) and total["basic"]["epsilon"] <= eps * (1 + 1e-12)
    assert total["basic"]["delta"] == pytest.approx(delta, rel=1e-9)


def test_the_mean_by_group_and_key_covers_the_true_mean():
    """Each released (group, key) mean's interval holds the true mean (computed independently) at
    its rate: over 25 seeded runs, 100 (run, cell) pairs at coverage >= 0.95 miss more than 13
    times with probability below 5e-4 (binomial tail; 1 miss seen)."""
    frame = _frame(n=3000)
    units, totals = _by_hand(frame, 1)
    misses = seen = 0
    for seed in range(25):
        p = _query(frame, {"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": _stat("mean")}}, seed)["statistics"]["p"]
        for region, row in p["intervals"].items():
            for key, (lo, hi) in row.items():
                seen += 1
                misses += not lo <= totals[(region, key)] / units[(region, key)] <= hi
                assert 0 <= lo <= p["values"][region][key] <= hi <= 30
    assert seen == 100 and misses <= 13


def _without_draws(doc: dict) -> dict:
    out = json.loads(json.dumps(doc))
    out.pop("created", None)
    for stat in out["statistics"].values():
        for key in ("values", "intervals"):
            stat.pop(key, None)
        for key in ("boundary_count", "counts", "counts_intervals"):
            stat.get("keys", {}).pop(key, None)
    return out


@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_on_neighbouring_tables_only_drawn_values_differ(change):
    """A unit's rows moved to a product of its own (a candidate the neighbour adds, in one group):
    the noise, neighbourhoods, thresholds and total are the same; the solo cell is not shown."""
    frame = _frame(n=3000)
    other = frame.copy()
    other.loc[other["c"] == 0, ["product", "region"]] = ["solo", "north"]
    unit = {"id": "c", "max_rows": 3, "change": change, **({"max_units": 4000} if change == "add-remove" else {})}
    spec = {"unit": unit, "statistics": {w: _stat(w) for w in KINDS}}
    one, two = (_query(f, spec, 3) for f in (frame, other))
    assert _without_draws(one) == _without_draws(two) and "solo" not in json.dumps(two)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("which, more, key", [
    ("count", {"keys": ["apple"]}, "statistics.p.keys"),
    ("sum", {"by": "product"}, "statistics.p.by"),
    ("mean", {"groups": None}, "statistics.p.groups"),
    ("rows", {"delta": 0}, "statistics.p.delta")])
def test_bad_specs_are_refused_naming_the_key(which, more, key):
    stat = {k: v for k, v in {**_stat(which), **more}.items() if v is not None}
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec({"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": stat}})
    assert err.value.parameter == key


@pytest.mark.parametrize("kind", ["count", "mean"])
def test_by_without_a_found_key_exits_2_in_one_line(tmp_path, kind):
    _frame(n=300).to_csv(tmp_path / "in.csv", index=False)
    extra = 'column = "price"\nclamp = { lower = 0, upper = 10 }\n' if kind == "mean" else ""
    (tmp_path / "q.toml").write_text(f'unit = {{ id = "c", max_rows = 3 }}\n[statistics.p]\nkind = "{kind}"\n{extra}'
                                     'by = "region"\ngroups = ["north", "south"]\nepsilon = 1.0\n')
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv")])
    assert r.exit_code == 2 and "statistics.p.by" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_the_command_line_csv_lists_released_group_key_cells_only(tmp_path):
    frame = _frame(n=1500)
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text(
        'unit = { id = "c", max_rows = 3 }\n[statistics.s]\nkind = "sum"\ncolumn = "price"\n'
        'clamp = { lower = 0, upper = 10 }\nkey = "product"\nkeys = "from-data"\nby = "region"\n'
        'groups = ["north", "south"]\nepsilon = 1.0\ndelta = 1e-6\n')
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                            "--seed", "2", "--json", "--csv", str(tmp_path / "out.csv")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    out = pd.read_csv(tmp_path / "out.csv")
    released = {(g, k) for g, row in doc["statistics"]["s"]["values"].items() for k in row}
    assert set(zip(out["group"], out["key"])) == released and len(out) == len(released) >= 3
    assert "rare" not in out.to_csv() and "rare" not in r.stdout


@pytest.mark.spark
@pytest.mark.parametrize("groups, fmt, bounding", [(1, "parquet", "first"), (2, "parquet", "first"),
                                                   (2, "csv", "first"), (2, "parquet", "random")])
def test_spark_gives_the_local_document(tmp_path, groups, fmt, bounding, both_engines):
    """The four kinds beside declared groups, one spec, both engines, the same seed: Parquet takes
    the JVM path (one home cell, and ``max_groups = 2``: its two ways of keeping cells; random
    bounding: the cells of least priority, without the mean, which needs first), CSV the local
    engine's rules per partition."""
    frame = _frame(n=900)
    data = tmp_path / f"in.{fmt}"
    frame.to_csv(data, index=False) if fmt == "csv" else frame.to_parquet(data, index=False)
    text = f'unit = {{ id = "c", max_rows = 3, max_groups = {groups}, bounding = "{bounding}" }}\n'
    kinds = (("count", ""), ("rows", 'of = "rows"\n'), ("sum", 'column = "price"\nclamp = { lower = 0, upper = 10 }\n'),
             ("mean", 'column = "price"\nclamp = { lower = 0, upper = 10 }\n'))
    for which, body in kinds[:3 if bounding == "random" else 4]:
        kind = "count" if which in ("count", "rows") else which
        text += (f'[statistics.{which}]\nkind = "{kind}"\n{body}key = "product"\nkeys = "from-data"\nby = "region"\n'
                 'groups = ["north", "south"]\nepsilon = 1.0\ndelta = 1e-6\n')
    (tmp_path / "q.toml").write_text(text)
    docs = both_engines(tmp_path / "q.toml", data, 4)
    assert docs[0]["statistics"] == docs[1]["statistics"]
    assert docs[0]["only_if_unseeded"]["total"] == docs[1]["only_if_unseeded"]["total"]
    assert set(docs[0]["statistics"]["sum"]["values"]["north"]) <= {"apple", "pear", "fig"}
