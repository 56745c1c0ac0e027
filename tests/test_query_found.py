"""Keys found in the data (issue 36): ``keys = "from-data"`` on a histogram of units -- the
candidates read first, a key shown only above the exact threshold, nothing about the suppressed
keys in any published part, the selection in the unit's total (docs/proofs/key-selection.md)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.found import MAX_FOUND, found_in_frame, with_found_keys
from optnoise.query.spec import parse_query_spec
from optnoise.query.threshold import upper_tail

runner = CliRunner()


def _spec(**stat) -> dict:
    base = {"kind": "histogram", "key": "product", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6}
    return {"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": {**base, **stat}}}


def _frame(seed: int = 1, n: int = 6000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    common = rng.choice(["apple", "pear", "fig"], n)
    rare = np.array([f"rare{i}" for i in rng.integers(0, 10 ** 6, n)])
    product = np.where(rng.random(n) < 0.9, common, rare)
    return pd.DataFrame({"c": rng.permutation(np.arange(n) // 3), "product": product})


def _query(frame, spec, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, seed=seed)


def test_frequent_keys_are_released_rare_ones_and_their_number_are_not():
    frame = _frame()
    doc = _query(frame, _spec(), 3)
    p = doc["statistics"]["p"]
    assert set(p["values"]) == {"apple", "pear", "fig"}
    assert set(p["intervals"]) == {"apple", "pear", "fig"}
    text = json.dumps(doc)
    assert "rare" not in text   # no suppressed key, nor how many, anywhere in the document
    keys = p["keys"]
    assert keys["found_in_data"] and keys["threshold"] > 1 and keys["selection_delta"] <= 1e-6
    total = doc["only_if_unseeded"]["total"]
    assert total["selection"]["delta"] == keys["selection_delta"] and total["basic"]["delta"] >= keys["selection_delta"]
    assert total["basic"]["epsilon"] >= 1.0 + keys["selection_epsilon"] * 0.999


@pytest.mark.parametrize("groups", [None, 3])
def test_the_threshold_is_the_least_meeting_delta_on_the_cells_noise(groups):
    """Over the keys one unit can hold: one, or ``unit.max_groups`` (a unit counted in each of
    its kept keys): the least threshold with ``1 - (1 - p)^m <= delta``. With three keys per unit
    (six cells under replace) the epsilon is 12, where the geometric's threshold is still the
    lower one over three keys (at 1 the truncated design is chosen, as it should be)."""
    frame = _frame()
    spec = _spec()
    if groups is not None:
        spec = _spec(epsilon=12.0)
        spec["unit"] = {**spec["unit"], "max_groups": groups}
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    assert "apple" in parsed.statistics[0].keys.values and len(parsed.statistics[0].keys.values) > 100
    from optnoise.query.aggregate import aggregate
    from optnoise.query.kinds import kind_of
    from optnoise.query.release import plan
    item = plan(parsed, aggregate([frame], parsed))[0]
    t = kind_of(item.stat).selection(item)
    q = item.cell.noise.quantize()
    m = groups or 1
    assert t.keys_per_unit == m and item.cell.design.get("method") != "truncated"
    assert 1 - (1 - upper_tail(q, t.tau - 1)) ** m <= Fraction(1e-6) < 1 - (1 - upper_tail(q, t.tau - 2)) ** m


def test_a_key_no_unit_counts_is_never_shown_and_a_key_of_one_unit_sometimes_is():
    """'ghost' is only in rows past each unit's max_rows (count 0: never a candidate); 'solo' is
    held by one unit. With a large delta the threshold is low: the solo key shows in about the
    exact fraction p of runs (binomial, 4 standard deviations: false alarm < 1e-4), the ghost
    never (power: at p it would show in ~p of runs too)."""
    rows = [(u, "common") for u in range(40) for _ in range(3)] + [(u, "ghost") for u in range(40)] + \
        [(99, "solo")]
    frame = pd.DataFrame(rows, columns=["c", "product"])
    spec = _spec(epsilon=0.5, delta=0.3)
    runs = 200
    shown = {"solo": 0, "ghost": 0}
    for seed in range(runs):
        values = _query(frame, spec, seed)["statistics"]["p"]["values"]
        for k in shown:
            shown[k] += k in values
    assert shown["ghost"] == 0
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    from optnoise.query.aggregate import aggregate
    from optnoise.query.kinds import kind_of
    from optnoise.query.release import plan
    item = plan(parsed, aggregate([frame], parsed))[0]
    t = kind_of(item.stat).selection(item)
    p = float(t.p)
    assert 0.05 < p < 0.95
    assert abs(shown["solo"] - runs * p) <= 4 * math.sqrt(runs * p * (1 - p))


@pytest.mark.parametrize("stat, key", [({"delta": 0}, "delta"), ({"of": "rows"}, "keys"),
                                       ({"unbiased": True}, "unbiased"),
                                       ({"mechanism": "clamped-discrete-gaussian"}, "mechanism")])
def test_refusals_name_the_key(stat, key):
    with pytest.raises(InvalidParameterError) as err:
        _query(_frame(n=30), _spec(**stat), 1)
    assert key in err.value.parameter


def test_consistent_with_found_keys_adds_up_with_an_other_keys_cell():
    """Once refused; now the released keys, the outside and the other keys add up to the units
    (tests/test_query_consistent_found.py has the rest)."""
    p = _query(_frame(n=300), _spec(consistent=True), 1)["statistics"]["p"]
    assert sum(p["values"].values()) + p["outside"]["value"] + p["other_keys"]["value"] == 100


def test_the_command_line_writes_only_released_keys_and_charges_a_ledger(tmp_path):
    frame = _frame(n=3000)
    frame["region"] = np.arange(len(frame)) % 2 + 1
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text('unit = { id = "c", max_rows = 3 }\n[statistics.p]\nkind = "histogram"\n'
                                     'key = "product"\nkeys = "from-data"\nby = "region"\ngroups = [1, 2]\n'
                                     'epsilon = 1.0\ndelta = 1e-6\n')
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                            "--csv", str(tmp_path / "out.csv"), "--output", str(tmp_path / "doc.json")])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp_path / "out.csv")
    assert set(out["key"]) <= {"apple", "pear", "fig"} and len(out) >= 4
    assert "rare" not in (tmp_path / "doc.json").read_text() and "rare" not in r.stdout
    assert runner.invoke(app, ["ledger", "init", str(tmp_path / "l.sqlite"), "--dataset", "sales", "--unit", "c",
                               "--budget-epsilon", "10", "--budget-delta", "1e-5"]).exit_code == 0
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                            "--ledger", str(tmp_path / "l.sqlite"), "--output", str(tmp_path / "led.json")])
    assert r.exit_code == 0, r.output
    from optnoise.publish.ledger import Ledger
    doc = json.loads((tmp_path / "led.json").read_text())
    shown = Ledger(tmp_path / "l.sqlite", write=False).show()
    assert shown["total"]["basic"] == doc["total"]["basic"] and shown["runs"][0]["shifts"][0]["about"] == "selection"
    assert shown["total"]["shifts"]["delta"] == doc["total"]["selection"]["delta"] > 0


def test_found_values_keep_their_type():
    frame = pd.DataFrame({"c": [1, 2, 3, 4], "product": [7, None, 7, 12]})   # floats with a missing value
    parsed = parse_query_spec(_spec())
    assert found_in_frame(frame, parsed)["product"].values == (7, 12)
    with pytest.raises(InvalidParameterError, match="integers or text"):
        found_in_frame(pd.DataFrame({"c": [1], "product": [0.5]}), parsed)


def test_too_many_found_keys_are_refused(monkeypatch):
    import optnoise.query.found as found
    monkeypatch.setattr(found, "MAX_FOUND", 5)
    frame = pd.DataFrame({"c": range(10), "product": range(10)})
    with pytest.raises(InvalidParameterError, match="at most 5 keys"):
        found.found_in_frame(frame, parse_query_spec(_spec()))
    assert MAX_FOUND >= 10_000


def test_at_a_small_epsilon_the_truncated_geometric_gives_the_lower_threshold_and_no_selection_delta():
    """At eps 0.1, delta 1e-6 (add-remove: one cell per unit) the geometric on [-T, T] needs a
    threshold of T + 2 = 111 against the tail's 133 (docs/statistics.md): it is chosen, a key of
    one unit alone can never show (its largest noisy count is 1 + T), and the selection adds
    nothing -- the cells' own delta is the statistic's; at eps 1 the geometric's tail is lower."""
    from optnoise.query.aggregate import aggregate
    from optnoise.query.kinds import kind_of
    from optnoise.query.release import plan
    frame = _frame(n=600)
    spec = _spec(epsilon=0.1)
    spec["unit"] = {"id": "c", "max_rows": 3, "change": "add-remove", "max_units": 10 ** 6}
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    item = plan(parsed, aggregate([frame], parsed))[0]
    t = kind_of(item.stat).selection(item)
    q = item.cell.noise.quantize()
    assert item.cell.design["method"] == "truncated" and q.left is None and q.right is None
    assert t.tau == q.hi + 2 and upper_tail(q, t.tau - 1) == 0 and t.delta == 0 and t.epsilon_shift == 0
    geometric = smallest_threshold_of(item.cell.n, 0.1, 1e-6)
    assert t.tau < geometric
    assert q.certificate.meets(item.cell.noise.target) and item.cell.epsilon_delta == (0.1, 1e-6)
    doc = _query(frame, spec, 2)
    assert doc["statistics"]["p"]["keys"]["threshold"] == t.tau
    assert doc["only_if_unseeded"]["total"]["selection"]["delta"] == 0
    spec1 = _spec(epsilon=1.0)
    spec1["unit"] = spec["unit"]
    parsed1 = parse_query_spec(spec1)
    parsed1 = with_found_keys(parsed1, found_in_frame(frame, parsed1))
    assert plan(parsed1, aggregate([frame], parsed1))[0].cell.design.get("method") != "truncated"


def smallest_threshold_of(n: int, epsilon: float, delta: float) -> int:
    from optnoise.query.mechanisms import count_cell
    from optnoise.query.threshold import smallest_threshold
    from optnoise.target import Target
    return smallest_threshold(count_cell("x", n, 0, 1, Target(epsilon), "clamped-geometric").noise.quantize(),
                              1, delta).tau


def test_the_choice_between_truncated_and_geometric_reads_the_keys_one_unit_can_create():
    """The truncated design's threshold ``T + 2`` does not depend on ``m`` (a key of one unit
    alone never shows); the geometric's grows with ``m`` (``1 - (1 - p)^m <= delta``). At eps 1,
    delta 1e-6 the geometric wins for one key per unit and loses for eight: the choice must be
    made with the unit's ``max_groups``, not with one key."""
    from optnoise.query.kinds.histogram import KIND
    from optnoise.query.statistic import Statistic
    from optnoise.query.threshold import smallest_threshold
    from optnoise.target import Target
    stat = Statistic("p", "histogram", Target(1.0, 1e-6), key="product", keys_from_data=True,
                     mechanism="clamped-geometric")   # the geometric designs only (no discrete Gaussian)
    chosen = {m: KIND.mechanism(stat, Target(1.0, 1e-6), 1, 1000, 0, keys_per_unit=m) for m in (1, 8)}
    assert chosen[1].design.get("method") != "truncated" and chosen[8].design.get("method") == "truncated"
    geometric = chosen[1].noise.quantize()
    half = chosen[8].design["half_width"]
    assert smallest_threshold(geometric, 1, 1e-6).tau <= half + 2 < smallest_threshold(geometric, 8, 1e-6).tau


def test_the_planned_cell_is_chosen_for_the_units_max_groups():
    """Through the query: with ``max_groups = 4`` (add-remove: 4 cells per unit at (eps / 4,
    delta / 4)) at eps 2, delta 1e-6 the planned cell is the truncated geometric, whose
    threshold is lower over 4 keys per unit; comparing over one key (the old rule) would have
    kept the geometric."""
    from optnoise.query.aggregate import aggregate
    from optnoise.query.kinds import kind_of
    from optnoise.query.mechanisms import cell_target
    from optnoise.query.release import plan
    from optnoise.query.threshold import smallest_threshold
    frame = _frame(n=600)
    spec = _spec(epsilon=2.0, mechanism="clamped-geometric")   # the geometric designs only (no discrete Gaussian)
    spec["unit"] = {"id": "c", "max_rows": 3, "change": "add-remove", "max_units": 10 ** 4, "max_groups": 4}
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    item = plan(parsed, aggregate([frame], parsed))[0]
    kind = kind_of(item.stat)
    t = kind.selection(item)
    assert t.keys_per_unit == 4 and item.cell.design.get("method") == "truncated"
    target = cell_target(item.stat.target, 4)
    old = kind.mechanism(item.stat, target, 1, item.cell.n, item.cell.offset, keys_per_unit=1)
    assert old.design.get("method") != "truncated"
    assert t.tau < smallest_threshold(old.noise.quantize(), 4, 1e-6).tau
