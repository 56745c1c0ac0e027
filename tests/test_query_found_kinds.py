"""Counts, sums and means by a key found in the data (issue 36, item 1): a selection -- the
noisy counts of units per key at a share of the epsilon, thresholded exactly -- and the values
released for the selected keys only; the selection's shift in the unit's total; no suppressed
key, nor how many, in the document, its CSV or the terminal; the Python door, the command line
and Spark alike (docs/proofs/key-selection.md, "Counts, sums and means by key")."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.spec import parse_query_spec

runner = CliRunner()
CLAMP = {"lower": 0, "upper": 10}
KINDS = {"count": {}, "rows": {"kind": "count", "of": "rows"}, "sum": {"kind": "sum", "column": "price", "clamp": CLAMP},
         "mean": {"kind": "mean", "column": "price", "clamp": CLAMP}}


def _stat(which: str, **more) -> dict:
    base = {"kind": "count", "key": "product", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6}
    return {**base, **KINDS[which], **more}


def _spec(which: str, unit: dict | None = None, **more) -> dict:
    return {"unit": unit or {"id": "c", "max_rows": 3}, "statistics": {"p": _stat(which, **more)}}


def _frame(seed: int = 1, n: int = 6000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    common = rng.choice(["apple", "pear", "fig"], n, p=[0.5, 0.3, 0.2])
    rare = np.array([f"rare{i}" for i in rng.integers(0, 10 ** 6, n)])
    return pd.DataFrame({"c": rng.permutation(np.arange(n) // 3), "product": np.where(rng.random(n) < 0.9, common, rare),
                         "price": rng.integers(0, 10, n)})


def _query(frame, spec, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, seed=seed)


@pytest.mark.parametrize("which", list(KINDS))
def test_only_selected_keys_are_released_and_the_selection_is_in_the_total(which):
    doc = _query(_frame(), _spec(which), 3)
    p = doc["statistics"]["p"]
    assert p["kind"] == _stat(which)["kind"]
    assert set(p["values"]) == {"apple", "pear", "fig"} and set(p["intervals"]) == set(p["values"])
    assert "rare" not in json.dumps(doc) and list(doc["statistics"]) == ["p"]
    keys, total = p["keys"], doc["only_if_unseeded"]["total"]
    assert keys["found_in_data"] and keys["threshold"] > 1
    assert total["selection"]["delta"] == keys["selection_delta"] <= 1e-6
    assert total["basic"]["epsilon"] <= 1.0 + keys["selection_epsilon"] + 1e-12
    if which != "count":   # a selection at half the epsilon, the values at the rest (pure)
        assert set(keys["counts"]) == set(p["values"]) and keys["selection_share"] == 0.5
        assert keys["selection"]["target"] == {"epsilon": 0.5, "delta": 1e-6, "notion": "dp"}
        assert p["target"]["epsilon"] == 0.5 and p["target"]["delta"] == 0
        assert min(keys["counts"].values()) >= keys["threshold"]
        assert "selection" in doc["only_if_unseeded"]["statistics"]["p"]["certificate"]


def _truth(frame: pd.DataFrame, max_rows: int = 3) -> tuple[dict, dict]:
    """Each key's number of units and sum of their totals, computed independently: a unit's first
    ``max_rows`` rows, its home key of most rows (ties: the least key), its total there."""
    kept = frame.groupby("c", sort=False).head(max_rows)
    per = kept.groupby(["c", "product"]).agg(rows=("price", "size"), total=("price", "sum")).reset_index()
    per = per.sort_values(["c", "rows", "product"], ascending=[True, False, True]).groupby("c").head(1)
    return per.groupby("product").size().to_dict(), per.groupby("product")["total"].sum().to_dict()


def test_the_mean_by_key_is_the_released_sum_over_the_released_count_and_its_intervals_cover():
    """The mean of each released key is clip(S / max(C, 1), L, U) of the released sum and count;
    over 30 seeded runs the intervals hold the true mean (computed independently) at least at
    their stated rate: 90 (run, key) pairs at coverage >= 0.95 miss at most 12 times except with
    probability below 1e-4 (binomial tail), and each miss would show here."""
    frame = _frame(n=3000)
    units, sums = _truth(frame)
    misses, seen = 0, 0
    for seed in range(30):
        p = _query(frame, _spec("mean"), seed)["statistics"]["p"]
        for key, (lo, hi) in p["intervals"].items():
            seen += 1
            misses += not lo <= sums[key] / units[key] <= hi
            assert 0 <= lo <= p["values"][key] <= hi <= 30
    assert seen == 90 and misses <= 12


def test_a_key_of_one_unit_shows_in_about_the_exact_fraction_of_runs_and_with_its_values():
    """A sum by key at a large delta: the solo key's values show exactly when its selection count
    passes, in about the exact fraction p of runs (4 standard deviations: false alarm < 1e-4)."""
    from optnoise.query.aggregate import aggregate
    from optnoise.query.found import found_in_frame, with_found_keys
    from optnoise.query.kinds import kind_of
    from optnoise.query.release import plan
    rows = [(u, "common", 1) for u in range(40) for _ in range(3)] + [(99, "solo", 5)]
    frame = pd.DataFrame(rows, columns=["c", "product", "price"])
    spec = _spec("sum", epsilon=1.0, delta=0.3)
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    item = plan(parsed, aggregate([frame], parsed))[0]
    assert item.stat.name == "p.keys"
    p = float(kind_of(item.stat).selection(item).p)
    assert 0.05 < p < 0.95
    runs, shown = 150, 0
    for seed in range(runs):
        doc = _query(frame, spec, seed)["statistics"]["p"]
        assert set(doc["values"]) == set(doc["keys"]["counts"])
        shown += "solo" in doc["values"]
    assert abs(shown - runs * p) <= 4 * math.sqrt(runs * p * (1 - p))


@pytest.mark.parametrize("which, more, key", [
    ("sum", {"delta": 0}, "statistics.p.delta"),
    ("mean", {"mechanism": "clamped-discrete-gaussian"}, "statistics.p.mechanism"),
    ("sum", {"selection_share": 1.5}, "statistics.p.selection_share"),
    ("sum", {"selection_share": 0.0001}, "statistics.p.selection_share"),
    ("sum", {"keys": ["apple"]}, "statistics.p.keys"),
    ("sum", {"by": "product", "groups": ["apple"]}, "statistics.p.by"),
    ("rows", {"notion": "pdp"}, "statistics.p.notion"),
    ("count", {"unbiased": True}, "statistics.p.unbiased")])
def test_bad_specs_are_refused_naming_the_key(which, more, key):
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(_spec(which, **more))
    assert err.value.parameter == key


def test_a_mean_by_key_under_random_bounding_and_a_name_clash_are_refused():
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(_spec("mean", {"id": "c", "max_rows": 3, "bounding": "random"}))
    assert "bounding" in err.value.parameter
    spec = _spec("sum")
    spec["statistics"]["p.keys"] = {"kind": "count", "epsilon": 1.0}
    with pytest.raises(InvalidParameterError, match="no other statistic"):
        parse_query_spec(spec)


def test_the_command_line_gives_the_python_document_and_shows_no_suppressed_key(tmp_path):
    """CLI and Python: the same statistics for the same seed; the CSV and the terminal's table list
    released keys only; a bad spec exits 2 naming the key."""
    frame = _frame(n=1500)
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text('unit = { id = "c", max_rows = 3 }\n[statistics.p]\nkind = "sum"\nkey = "product"\n'
                                     'keys = "from-data"\ncolumn = "price"\nclamp = { lower = 0, upper = 10 }\n'
                                     'epsilon = 1.0\ndelta = 1e-6\n[statistics.m]\nkind = "mean"\nkey = "product"\n'
                                     'keys = "from-data"\ncolumn = "price"\nclamp = { lower = 0, upper = 10 }\n'
                                     'epsilon = 1.0\ndelta = 1e-6\nselection_share = 0.3\n[statistics.u]\nkind = "count"\n'
                                     'key = "product"\nkeys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n'
                                     '[statistics.r]\nkind = "count"\nof = "rows"\nkey = "product"\n'
                                     'keys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n')
    args = ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"), "--seed", "5"]
    r = runner.invoke(app, args + ["--json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    spec = {"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": _stat("sum"), "m": _stat("mean", selection_share=0.3),
                                                                "u": _stat("count"), "r": _stat("rows")}}
    local = _query(pd.read_csv(tmp_path / "in.csv"), spec, 5)
    assert cli["statistics"] == local["statistics"]
    assert cli["only_if_unseeded"]["total"]["basic"] == local["only_if_unseeded"]["total"]["basic"]
    assert cli["statistics"]["m"]["keys"]["selection_share"] == 0.3
    r = runner.invoke(app, args + ["--csv", str(tmp_path / "out.csv")])
    assert r.exit_code == 0 and "rare" not in r.stdout and "apple" in r.stdout
    out = pd.read_csv(tmp_path / "out.csv")
    assert "rare" not in out.to_csv()
    released = {(s, k) for s in ("p", "m", "u", "r") for k in cli["statistics"][s]["values"]}
    assert set(zip(out["statistic"], out["key"])) == released and len(out) == len(released) >= 10
    (tmp_path / "bad.toml").write_text((tmp_path / "q.toml").read_text().replace("selection_share = 0.3",
                                                                                 "selection_share = 2"))
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "bad.toml"), "--input", str(tmp_path / "in.csv")])
    assert r.exit_code == 2 and "statistics.m.selection_share" in r.stderr


def test_a_ledger_records_the_sums_selection(tmp_path):
    """The ledger's total of a sum by key (selection, cells, shift) is the document's: basic, and
    PLD read at the same delta."""
    from optnoise.publish.ledger import Ledger
    from optnoise.target import Target
    frame = _frame(n=1500)
    book = Ledger.init(tmp_path / "l.db", dataset="sales", unit="c", budget=Target(5.0, 1e-5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = {**_spec("sum", epsilon=2.0), "budget": {"epsilon": 5.0, "delta": 1e-5}}   # pld read at one delta
        doc = optnoise.query(frame, spec, ledger=book)
    shown = Ledger(tmp_path / "l.db", write=False).show()
    assert shown["total"]["basic"] == doc["total"]["basic"] and shown["total"]["pld"]["epsilon"] == \
        doc["total"]["pld"]["epsilon"]
    assert shown["runs"][0]["statistics"] == ["p.keys", "p"]


@pytest.mark.spark
@pytest.mark.parametrize("which", ["histogram", "sum", "mean", "rows"])
def test_spark_gives_the_local_document(tmp_path, which):
    """Spark and the local engine: the same document for the same seed (keys found in the data
    on a histogram of units too)."""
    frame = _frame(n=900)
    frame.to_csv(tmp_path / "in.csv", index=False)
    extra = {"sum": 'kind = "sum"\ncolumn = "price"\nclamp = { lower = 0, upper = 10 }\n',
             "mean": 'kind = "mean"\ncolumn = "price"\nclamp = { lower = 0, upper = 10 }\n',
             "rows": 'kind = "count"\nof = "rows"\n', "histogram": 'kind = "histogram"\n'}[which]
    (tmp_path / "q.toml").write_text('unit = { id = "c", max_rows = 3 }\n[statistics.p]\n' + extra +
                                     'key = "product"\nkeys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n')
    docs = []
    for engine in ("local", "spark"):
        r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                                "--seed", "4", "--json", "--engine", engine])
        assert r.exit_code == 0, r.output
        docs.append(json.loads(r.stdout)["statistics"]["p"])
    assert docs[0] == docs[1] and set(docs[0]["values"]) <= {"apple", "pear", "fig"}


def _without_values(doc: dict) -> dict:
    """A document less what the noise draws (values, intervals, the boundary's coin count)."""
    out = json.loads(json.dumps(doc))
    out.pop("created", None)
    for stat in out["statistics"].values():
        for key in ("values", "intervals", "boundary_count"):
            stat.pop(key, None)
        for key in ("boundary_count", "counts", "counts_intervals"):   # the selection's own drawn counts
            stat.get("keys", {}).pop(key, None)
    return out


@pytest.mark.parametrize("change", ["replace", "add-remove"])
def test_the_number_of_candidate_keys_shapes_nothing_published(change):
    """A count of rows by found keys: one unit's rows moved to a key of its own (a candidate
    the neighbour adds) must not change the noise, its neighbourhood or its statement -- only
    drawn values may differ. (The cells a unit moves were once capped by the number of
    candidate keys K: 2 beside 3, another mechanism, told apart with probability 1.)"""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"c": np.repeat(np.arange(1000), 3), "product": rng.choice(["a", "b"], 3000), "price": 1})
    other = frame.copy()
    other.loc[other["c"] == 0, "product"] = "zz"
    unit = {"id": "c", "max_rows": 3, "change": change, **({"max_units": 2000} if change == "add-remove" else {})}
    spec = _spec("rows", unit)
    one, two = (_without_values(_query(f, spec, 3)) for f in (frame, other))
    assert one == two
