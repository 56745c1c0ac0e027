"""Bounds chosen privately together with keys found in the data (issue 36, items 1 and 5):
``max_rows = "auto"`` and ``clamp = "auto"`` beside a histogram, count, sum or mean whose keys
are from the data. The bounds' histograms are composed exactly, every statistic by its declared
target, and each selection adds its threshold's shift -- a threshold that reads no chosen bound
(docs/proofs/private-bounds.md, "With keys found in the data")."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app

runner = CliRunner()


def _frame(seed: int = 1, n: int = 6000, rows_per_unit: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    common = rng.choice(["apple", "pear", "fig"], n, p=[0.5, 0.3, 0.2])
    rare = np.array([f"rare{i}" for i in rng.integers(0, 10 ** 6, n)])
    return pd.DataFrame({"c": rng.permutation(np.arange(n) // rows_per_unit),
                         "product": np.where(rng.random(n) < 0.9, common, rare), "price": rng.integers(0, 10, n)})


def _spec(**unit) -> dict:
    return {"unit": {"id": "c", "max_rows": "auto", "bound_epsilon": 0.25, "max_rows_cap": 16, **unit},
            "statistics": {
                "p": {"kind": "sum", "column": "price", "clamp": "auto", "clamp_cap": 16, "key": "product",
                      "keys": "from-data", "epsilon": 1.0, "delta": 1e-6},
                "h": {"kind": "histogram", "key": "product", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6}}}


def _query(frame, spec, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, **options)


def test_the_total_is_the_bounds_histograms_the_declared_targets_and_the_selections_shifts():
    """By hand: max_rows's histogram 0.25; the sum's clamp histogram 0.1 (10 % of its 1.0), its
    selection at 0.45 and its values at 0.45; the histogram 1.0; plus each selection's shift. The
    sum's selection (0.45 at delta 1e-6) takes the truncated geometric (its cells' delta is the
    declared 1e-6, its shift 0), the histogram's (1.0) the geometric (pure cells, its shift the
    threshold's). Only released keys are in the document."""
    doc = _query(_frame(), _spec(), seed=3)
    p, h = doc["statistics"]["p"], doc["statistics"]["h"]
    assert p["keys"]["selection"]["mechanism"]["built"].startswith("truncated") or \
        "truncated" in json.dumps(p["keys"]["selection"]["mechanism"])
    assert p["keys"]["selection_epsilon"] == 0 and p["keys"]["selection_delta"] == 0
    assert h["keys"]["selection_epsilon"] > 0 and 0 < h["keys"]["selection_delta"] <= 1e-6
    total = doc["only_if_unseeded"]["total"]
    eps = 0.25 + 0.1 + 0.45 + 0.45 + 1.0 + h["keys"]["selection_epsilon"]
    assert total["basic"]["epsilon"] == pytest.approx(eps, rel=1e-12) and total["basic"]["epsilon"] >= eps
    assert total["basic"]["delta"] == pytest.approx(1e-6 + h["keys"]["selection_delta"], rel=1e-12)
    assert total["selection"] == {"epsilon": h["keys"]["selection_epsilon"], "delta": h["keys"]["selection_delta"],
                                  "statistics": 2}
    assert total["declared_targets"]["epsilon"] == 0.45 and total["declared_targets"]["delta"] == 1e-6
    assert set(doc["bounds"]) == {"unit.max_rows", "statistics.p.clamp"}
    assert set(p["values"]) <= {"apple", "pear", "fig"} and set(h["values"]) <= {"apple", "pear", "fig"}
    assert "rare" not in json.dumps(doc)


def test_both_together_an_auto_clamp_and_a_sum_by_declared_groups_and_a_found_key():
    """The two of issue 36 at once: ``clamp = "auto"`` on a sum by (region, found product) under
    ``max_groups = 2``: by hand, 0.25 (max_rows) + 1.0 (the sum: 0.1 clamp, 0.45 selection, 0.45
    values) plus the selection's shift over m = 2 cells per unit."""
    frame = _frame()
    frame["region"] = np.where(np.arange(len(frame)) % 3 == 0, "south", "north")
    spec = _spec(max_groups=2)
    spec["statistics"] = {"p": {**spec["statistics"]["p"], "by": "region", "groups": ["north", "south"]}}
    doc = _query(frame, spec, seed=5)
    p = doc["statistics"]["p"]
    assert set(p["values"]) == {"north", "south"} and p["keys"]["keys_per_unit"] == 2
    assert all(set(row) <= {"apple", "pear", "fig"} for row in p["values"].values())
    total = doc["only_if_unseeded"]["total"]
    assert total["basic"]["epsilon"] == pytest.approx(1.25 + p["keys"]["selection_epsilon"], rel=1e-12)
    cells_delta = 0.0 if p["keys"]["selection_epsilon"] else 1e-6   # the geometric's shift, or the truncated cells'
    assert total["basic"]["delta"] == pytest.approx(cells_delta + p["keys"]["selection_delta"], rel=1e-12)


def _published_selection(doc: dict) -> dict:
    """What a selection publishes that no draw decides: its threshold, its shift, its mechanism."""
    out = {}
    for name, stat in doc["statistics"].items():
        keys = dict(stat["keys"])
        for drawn in ("counts", "counts_intervals", "boundary_count"):
            keys.pop(drawn, None)
        out[name] = keys
    return out


def test_the_selection_reads_no_chosen_bound():
    """The composition's premise: the threshold, the shift and the selection's mechanism depend
    on public numbers only. Two tables of the same number of units (public under replace) whose
    units hold 3 and 12 rows: the chosen max_rows differ, the selections' published parts do not."""
    few, many = _frame(n=6000, rows_per_unit=3), _frame(n=24000, rows_per_unit=12)
    assert few["c"].nunique() == many["c"].nunique() == 2000
    one, two = (_query(f, _spec(), seed=3) for f in (few, many))
    assert one["bounds"]["unit.max_rows"]["chosen"] < two["bounds"]["unit.max_rows"]["chosen"]
    assert _published_selection(one) == _published_selection(two)
    t1, t2 = (d["only_if_unseeded"]["total"] for d in (one, two))
    assert t1["basic"] == t2["basic"] and t1["selection"] == t2["selection"]


def _neighbour_docs(change: str) -> tuple[dict, dict]:
    """A table and its neighbour (one unit's rows moved to a product of its own), seeded alike."""
    frame = _frame(n=3000)
    other = frame.copy()
    other.loc[other["c"] == 0, "product"] = "solo"
    unit = {"change": change, **({"max_units": 4000} if change == "add-remove" else {})}
    return tuple(_query(f, _spec(**unit), seed=7) for f in (frame, other))  # type: ignore[return-value]


@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_on_neighbouring_tables_the_solo_key_never_shows_and_nothing_else_published_moves(change):
    """The neighbour adds a candidate key held by one unit alone: it is not shown (its count, 1,
    is far below the threshold; a key of one unit shows with probability at most the delta), and
    the selections' thresholds, shifts and the total are the same on both tables."""
    one, two = _neighbour_docs(change)
    assert "solo" not in json.dumps(two)
    assert _published_selection(one) == _published_selection(two)
    assert one["only_if_unseeded"]["total"]["basic"] == two["only_if_unseeded"]["total"]["basic"]


def test_a_ledger_records_the_bounds_histograms_the_declared_targets_and_the_selections(tmp_path):
    """``--ledger``: the run's shifts hold the selections and the declared targets, and the ledger's
    total is the document's."""
    from optnoise.publish.ledger import Ledger
    from optnoise.target import Target
    book = Ledger.init(tmp_path / "l.db", dataset="sales", unit="c", budget=Target(8.0, 1e-5))
    spec = {**_spec(), "budget": {"epsilon": 8.0, "delta": 1e-5}}
    doc = _query(_frame(n=3000), spec, ledger=book)
    shown = Ledger(tmp_path / "l.db", write=False).show()
    assert shown["total"]["basic"] == doc["total"]["basic"]
    shifts = shown["runs"][0]["shifts"]
    assert sorted(s["about"] for s in shifts) == ["declared target", "selection", "selection"]
    assert sum(s["epsilon"] for s in shifts if s["about"] == "selection") == pytest.approx(
        doc["total"]["selection"]["epsilon"], rel=1e-12)
    assert Ledger(tmp_path / "l.db", write=False).verify()["ok"]


def test_a_bad_combined_spec_exits_2_naming_the_key(tmp_path):
    _frame(n=600).to_csv(tmp_path / "in.csv", index=False)
    bad = ('unit = { id = "c", max_rows = "auto", bound_epsilon = 0.25 }\n[statistics.p]\nkind = "sum"\n'
           'column = "price"\nclamp = "auto"\nclamp_cap = 16\nkey = "product"\nkeys = "from-data"\nepsilon = 1.0\n')
    for name, text, key in (("nodelta.toml", bad, "statistics.p.delta"),
                            ("share.toml", bad + 'delta = 1e-6\nselection_share = 0.9999\n',
                             "statistics.p.selection_share")):
        (tmp_path / name).write_text(text)
        r = runner.invoke(app, ["query", "--spec", str(tmp_path / name), "--input", str(tmp_path / "in.csv")])
        assert r.exit_code == 2 and key in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.spark
def test_spark_gives_the_local_document(tmp_path, both_engines):
    """Both engines: the bounds' histograms, the choices, the selections and the values drawn in
    the same order from the same seed."""
    _frame(n=1200).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text(
        'unit = { id = "c", max_rows = "auto", bound_epsilon = 0.25, max_rows_cap = 16 }\n'
        '[statistics.p]\nkind = "mean"\ncolumn = "price"\nclamp = "auto"\nclamp_cap = 16\nkey = "product"\n'
        'keys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n'
        '[statistics.h]\nkind = "histogram"\nkey = "product"\nkeys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n')
    docs = both_engines(tmp_path / "q.toml", tmp_path / "in.csv", 4)
    for key in ("statistics", "bounds", "only_if_unseeded"):
        assert docs[0][key] == docs[1][key]
    assert set(docs[0]["statistics"]["p"]["values"]) <= {"apple", "pear", "fig"}
