"""Statistics of a table (issue 22): derived neighbourhoods against brute force, released counts
against their certified channel, bounds, report-noisy-max, the document, bad input.

Statistical tests: chi-square at ALPHA (false-alarm rate per test), fixed seeds, with a power
check against a wrong law.
"""

import itertools
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.mechanisms import count_cell
from optnoise.query.kinds import derive, score_sensitivity
from optnoise.query.release import query
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

ALPHA = 1e-3

warnings.filterwarnings("ignore", message=".*not private.*")


# ------------------------------------------------------------------ brute force
#: The universe of rows a unit may hold: (key, group, value).
ROWS = [(0, 1, 0.0), (1, 1, 2.0), (1, 2, 1.0), (0, 2, 2.0)]


def _spec(stat: dict, change: str = "replace", max_rows: int = 2) -> dict:
    unit = {"id": "u", "max_rows": max_rows, "change": change}
    if change == "add-remove":
        unit["max_units"] = 4
    return {"unit": unit, "statistics": {"s": {"epsilon": 1.0, **stat}}}


STATS = {
    "count-units": {"kind": "count", "where": {"k": 1}},
    "count-rows": {"kind": "count", "of": "rows", "where": {"k": 1}},
    "histogram": {"kind": "histogram", "key": "k", "keys": [0, 1], "by": "g", "groups": [1, 2]},
    "histogram-rows": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1], "by": "g", "groups": [1, 2]},
    "histogram-rows-nogroup": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1]},
    "sum": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "by": "g", "groups": [1, 2]},
    "sum-nogroup": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}},
    "peak-scores": {"kind": "peak", "key": "k", "keys": [0, 1], "of": "v", "clamp": {"lower": 0, "upper": 2},
                    "method": "report-noisy-max"},
}


def _table(units: list[tuple]) -> pd.DataFrame:
    rows = [(i, *r) for i, rs in enumerate(units) for r in rs]
    return pd.DataFrame(rows, columns=["u", "k", "g", "v"]) if rows else pd.DataFrame(
        {"u": pd.Series([], dtype=int), "k": pd.Series([], dtype=int), "g": pd.Series([], dtype=int),
         "v": pd.Series([], dtype=float)})


_CACHE: dict = {}


def _answer(spec, units) -> np.ndarray:
    key = (repr(spec), tuple(tuple(u) for u in units))   # not id(spec): ids are reused after a spec is freed
    if key not in _CACHE:
        _CACHE[key] = _answer_of(spec, units)
    return _CACHE[key]


def _answer_of(spec, units) -> np.ndarray:
    agg = aggregate([_table(units)], spec)
    ans = answers(agg, spec.statistics[0])
    return ans.scores if ans.scores is not None else ans.cells


@pytest.mark.parametrize("change", ["replace", "add-remove"])
@pytest.mark.parametrize("name", list(STATS))
def test_derived_neighbourhood_covers_every_neighbouring_table(name, change):
    """All tables of 2 units (each 0..3 rows from ROWS, more than max_rows = 2), and every
    neighbour: one unit's rows replaced by any others (or added/removed). The largest change
    of a released cell, and the number of cells changed, stay inside the derived
    neighbourhood -- which is also reached (it is not looser than the query needs)."""
    spec = parse_query_spec(_spec(STATS[name], change))
    stat = spec.statistics[0]
    d = derive(stat, spec.unit)
    limit = score_sensitivity(stat, spec.unit) if name == "peak-scores" else d.distance
    contents = [c for r in range(4) for c in itertools.combinations_with_replacement(ROWS, r)]
    worst, cells_moved, total_moved = 0, 0, 0
    for other in (contents[0], contents[-1]):        # the rest of the table: empty, or full
        base = [other]
        for mine in contents:
            a = _answer(spec, base + [mine])
            neighbours = [base + [alt] for alt in contents] if change == "replace" else [base]
            for nb in neighbours:
                diff = np.abs(a - _answer(spec, nb))
                worst = max(worst, int(diff.max()))
                cells_moved = max(cells_moved, int((diff > 0).sum()))
                total_moved = max(total_moved, int(diff.sum()))
    assert worst <= limit
    assert worst == limit                           # reached: the derivation is not loose here
    if name != "peak-scores":
        assert cells_moved <= d.cells
    if name.startswith("histogram-rows"):
        assert cells_moved == d.cells                   # every cell the derivation allows is reached
    if d.l1 is not None:                                # the L1 plan: the total change, bounded and reached
        assert name.startswith("histogram-rows") and total_moved == d.l1


def test_sum_neighbourhood_with_a_positive_lower_clamp():
    """lower > 0: a unit with no rows contributes 0, with max_rows rows up to m * upper."""
    spec = parse_query_spec(_spec({"kind": "sum", "column": "v", "clamp": {"lower": 1, "upper": 2}}))
    d = derive(spec.statistics[0], spec.unit)
    assert (d.low, d.high, d.distance) == (0, 4, 4)
    a = _answer(spec, [[], [(0, 1, 2.0), (0, 1, 2.0)]])
    b = _answer(spec, [[], []])
    assert int(abs(a - b).max()) == 4


# ------------------------------------------------------------------ released counts
def test_counts_stay_in_the_domain_and_follow_the_certified_channel():
    """A count of units on {0..N}: every release is an integer in 0..N, and the frequencies of
    5,000 releases of the true count 7 match the quantized channel's row 7 (chi-square at
    ALPHA); power: the same draws against row 9 are rejected."""
    cell = count_cell("c", 30, 0, 1, Target(0.5))
    assert cell.space == "channel"
    src = SeededRandomSource(11)
    out = cell.release(np.full(5000, 7), src)
    assert out.min() >= 0 and out.max() <= 30 and out.dtype.kind == "i"
    q = cell.noise.quantize()
    row = np.asarray(q.weights[7], dtype=float) / float(1 << q.bits)
    counts = np.bincount(out, minlength=31)
    keep = row * 5000 >= 5
    exp = np.append(row[keep], row[~keep].sum()) * 5000
    obs = np.append(counts[keep], counts[~keep].sum())
    assert chisquare(obs, exp).pvalue > ALPHA
    wrong = np.asarray(q.weights[9], dtype=float) / float(1 << q.bits)
    exp_w = np.append(wrong[keep], wrong[~keep].sum()) * 5000
    assert chisquare(obs, exp_w).pvalue < ALPHA


def test_wide_counts_are_clamped_integers_and_intervals_cover():
    """A count of rows (distance 24) on a domain too wide for the channel: the clamped,
    chained geometric; releases stay in 0..N; the intervals cover the truth about 1 - alpha
    of the time (binomial tolerance) and are not trivially wide (below twice the noise's
    two-sided 95 % quantile)."""
    from optnoise.query.intervals import interval
    n = 2400
    cell = count_cell("c", n, 0, 24, Target(1.0))
    assert cell.space == "clamped-line" and cell.epsilon_pure <= 1.0
    src = SeededRandomSource(3)
    for truth in (0, 1200, n):
        y = cell.release(np.full(2000, truth), src)
        assert y.min() >= 0 and y.max() <= n
        low, high, _ = interval(cell, y, 0.05)
        cover = np.mean((low <= truth) & (truth <= high))
        assert cover >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 2000)
    width = int(np.median(high - low))
    assert width < 2 * 2 * np.log(20) / (1.0 / 24)


def test_certificate_of_a_histogram_composes_its_two_cells():
    frame = pd.DataFrame({"u": [1, 2, 3], "k": [0, 1, 1]})
    spec = {"unit": {"id": "u", "max_rows": 1}, "budget": {"epsilon": 1.0},
            "statistics": {"h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 1.0}}}
    doc = query(frame, spec)
    h = doc["statistics"]["h"]
    assert h["neighbourhood"]["cells_per_unit"] == 2
    assert h["certificate"]["cell"]["epsilon_pure"] <= 0.5 and h["certificate"]["epsilon_pure"] <= 1.0
    assert set(h["values"]) == {"0", "1"} and all(0 <= v <= 3 for v in h["values"].values())
    assert doc["total"]["basic"]["epsilon"] == 1.0 and doc["total"]["within_budget"]


# ------------------------------------------------------------------ report-noisy-max
def test_report_noisy_max_follows_its_exact_law():
    """The peak's noisy max over 3 keys (scores from the data) against the exact
    permute-and-flip law (chi-square at ALPHA), and a power check against the uniform law."""
    from optnoise.sampling.noisy_max import noisy_max_law
    from optnoise.query.noisy_max import noisy_argmax
    scores = np.array([4, 10, 7])
    law = np.array([float(x) for x in noisy_max_law(scores, 1.0, 2)])
    src = SeededRandomSource(8)
    draws = np.array([noisy_argmax(scores, 2, 1.0, src) for _ in range(3000)])
    counts = np.bincount(draws, minlength=3)
    assert chisquare(counts, law * 3000).pvalue > ALPHA
    assert chisquare(counts, np.full(3, 1000.0)).pvalue < ALPHA


# ------------------------------------------------------------------ the document
def _meter() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(h, 1 + h % 2, hour, float(rng.integers(0, 30)) / 10, (h * 7) % 24)
            for h in range(40) for hour in range(24)]
    return pd.DataFrame(rows, columns=["household", "circuit", "hour", "kwh", "peak_hour"])


CONTRACT = {
    "unit": {"id": "household", "max_rows": 24}, "budget": {"epsilon": 5.0, "delta": 1e-6}, "alpha": 0.05,
    "statistics": {
        "evening": {"kind": "count", "where": {"peak_hour": {"lower": 17, "upper": 21}}, "epsilon": 0.5},
        "peaks": {"kind": "histogram", "key": "peak_hour", "keys": {"lower": 0, "upper": 23}, "by": "circuit",
                  "groups": [1, 2], "epsilon": 1.0},
        "kwh": {"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 10}, "resolution": 0.1,
                "by": "circuit", "groups": [1, 2], "epsilon": 0.5},
        "peak": {"kind": "peak", "key": "hour", "keys": {"lower": 0, "upper": 23}, "of": "kwh",
                 "clamp": {"lower": 0, "upper": 10}, "method": "report-noisy-max", "epsilon": 1.0},
        "peak_noise": {"kind": "peak", "key": "hour", "keys": {"lower": 0, "upper": 23}, "of": "kwh",
                       "clamp": {"lower": 0, "upper": 10}, "epsilon": 1.0},
    }}


def test_contract_document_keys_and_seeded_is_not_private():
    doc = query(_meter(), CONTRACT, seed=1)
    assert doc["private"] is False and "total" not in doc and "total" in doc["only_if_unseeded"]
    s = doc["statistics"]
    assert set(s["peaks"]["values"]) == {"1", "2"} and len(s["peaks"]["values"]["1"]) == 24
    assert s["evening"]["kind"] == "count" and isinstance(s["evening"]["value"], int)
    assert all(len(iv) == 2 for iv in s["kwh"]["intervals"].values())
    assert s["peak"]["value"] in [str(h) for h in range(24)]
    for name in s:
        assert {"kind", "expected_abs_error", "mechanism", "neighbourhood"} <= set(s[name])
        assert ("value" in s[name]) != ("values" in s[name])
    assert "certificate" not in s["peak"] and doc["only_if_unseeded"]["statistics"]["peak"]["certificate"][
        "exact"] is False
    json.dumps(doc)


def test_unseeded_total_within_budget_and_refused_above():
    doc = query(_meter(), CONTRACT)
    assert doc["private"] is True and doc["total"]["within_budget"]
    assert doc["total"]["basic"]["epsilon"] == pytest.approx(4.0)
    assert "household" in doc["statement"]
    with pytest.raises(InvalidParameterError, match="budget"):
        query(_meter(), {**CONTRACT, "budget": {"epsilon": 3.0, "delta": 1e-6}})


def test_bounding_drops_extra_rows_and_undeclared_keys():
    frame = pd.DataFrame({"u": [1, 1, 1, 2], "k": [0, 1, 5, 1]})
    spec = {"unit": {"id": "u", "max_rows": 2},
            "statistics": {"n": {"kind": "count", "of": "rows", "where": {"k": [0, 1, 5]}, "epsilon": 1.0},
                           "h": {"kind": "histogram", "key": "k", "keys": [0, 1], "epsilon": 1.0}}}
    agg = aggregate([frame], parse_query_spec(spec))
    assert agg.rows - agg.kept == 1                 # the unit's third row
    assert agg.counts["h"].get("rows_undeclared_key_or_group", 0) == 0   # k = 5 was the dropped third row
    frame2 = pd.DataFrame({"u": [1, 2], "k": [0, 7]})
    agg2 = aggregate([frame2], parse_query_spec(spec))
    assert agg2.counts["h"]["rows_undeclared_key_or_group"] == 1


@pytest.mark.parametrize("spec, frame, match", [
    ({"statistics": {"s": {"kind": "count", "where": {"nope": 1}, "epsilon": 1.0}}}, None, "nope"),
    ({"unit": {"id": "u", "max_rows": 0}, "statistics": {"s": {"kind": "count", "epsilon": 1.0}}}, None, "max_rows"),
    ({"unit": {"id": "u", "max_rows": 1}, "statistics": {"s": {"kind": "sum", "column": "k", "clamp":
                                                              {"lower": 0, "upper": 1}, "epsilon": 1.0}}},
     pd.DataFrame({"u": [1, 2], "k": ["1", "x"]}), "row 2"),
    ({"unit": {"id": "u"}, "statistics": {"s": {"kind": "count", "epsilon": 1.0}}},
     pd.DataFrame({"u": [1, None], "k": [1, 2]}), "missing"),
    ({"unit": {"change": "add-remove"}, "statistics": {"s": {"kind": "count", "epsilon": 1.0}}}, None, "max_units"),
    ({"statistics": {"s": {"kind": "trimmed-mean", "epsilon": 1.0}}}, None, "kind"),
])
def test_bad_input_is_refused(spec, frame, match):
    frame = frame if frame is not None else pd.DataFrame({"u": [1, 2], "k": [1, 2]})
    with pytest.raises(InvalidParameterError, match=match):
        query(frame, spec)


def test_cli_query_writes_once_and_refuses_bad_input(tmp_path):
    from typer.testing import CliRunner
    from optnoise.cli.app import app
    _meter().to_csv(tmp_path / "r.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text('unit = { id = "household", max_rows = 24 }\nbudget = { epsilon = 2.0 }\n'
                    '[statistics.evening]\nkind = "count"\nwhere = { peak_hour = { lower = 17, upper = 21 } }\n'
                    'epsilon = 0.5\n')
    out = tmp_path / "o.json"
    run = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "r.csv"), "--spec", str(spec), "--output",
                                   str(out), "--json", "--seed", "3"])
    assert run.exit_code == 0, run.output
    doc = json.loads(out.read_text())
    assert doc["private"] is False and 0 <= doc["statistics"]["evening"]["value"] <= 40
    again = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "r.csv"), "--spec", str(spec), "--output",
                                     str(out)])
    assert again.exit_code == 2 and "--force" in again.output
    bad = tmp_path / "bad.toml"
    bad.write_text(spec.read_text().replace("epsilon = 0.5", "epsilon = 5.0"))
    refused = CliRunner().invoke(app, ["query", "--input", str(tmp_path / "r.csv"), "--spec", str(bad), "--output",
                                       str(tmp_path / "o2.json")])
    assert refused.exit_code == 2 and "budget" in refused.output and not (tmp_path / "o2.json").exists()


def test_pure_total_skips_only_what_cannot_beat_the_pure_sum():
    """Three releases of randomized response at eps 0.5 (hand: its worst pair puts
    p = e^eps / (1 + e^eps) on the loss eps): the composition's epsilon at delta is at least
    3 eps + ln(1 - delta / p^3), so the full composition lies between that and the pure sum."""
    import math

    from optnoise.analysis.composition import compose_sequence
    from optnoise.query.mechanisms import dominating_rr
    from optnoise.publish.accountant import pure_total
    from optnoise.query.release import TheoremPart
    prof = TheoremPart("s", dominating_rr(0.5), 0.5).composition_profile()
    eps = prof.epsilon_pure
    items = [(prof, 3)]
    got = pure_total(items, 1e-6, None)
    assert got is not None and got["bound"] == "pure" and got["epsilon"] >= 3 * eps
    p = math.exp(eps) / (1 + math.exp(eps))
    assert got["skipped"]["could_lower_by_at_most"] == pytest.approx(-math.log1p(-1e-6 / p ** 3), rel=1e-3, abs=1e-9)
    full = compose_sequence(items, delta=1e-6).epsilon_dp
    assert got["epsilon"] - got["skipped"]["could_lower_by_at_most"] <= full <= got["epsilon"]
    assert pure_total(items, 0.05, None) is None                   # delta / P large: the other bounds may win
    assert pure_total(items, 1e-6, Target(1.4)) is None            # budget below the pure sum: compose
    assert pure_total(items, 1e-6, Target(1.6))["delta_at_budget_epsilon"] == 0.0


# ------------------------------------------------------------------ the fast aggregate against a plain loop
_REF_SPEC = parse_query_spec({"unit": {"id": "u", "max_rows": 3}, "statistics": {
    "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": [1, 2], "epsilon": 1.0},
    "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 0.5, "by": "g",
          "groups": [1, 2], "epsilon": 1.0},
    "c": {"kind": "histogram", "key": "g", "keys": [1, 2], "epsilon": 1.0},   # the sum's rows and cells
    "n": {"kind": "count", "where": {"k": [0, 1]}, "epsilon": 1.0},
    "r": {"kind": "count", "of": "rows", "where": {"k": [0, 1]}, "epsilon": 1.0}}})


def _reference(rows: list[tuple]) -> dict:
    """The bounding rules (query/aggregate.py's docstring) as a loop over rows: ids compare as
    text; a unit keeps its first 3 rows; one (group, key) or group per unit by most rows,
    ties to the first declared."""
    seen: dict[str, int] = {}
    kept = []
    for u, k, g, v in rows:
        seen[str(u)] = seen.get(str(u), 0) + 1
        if seen[str(u)] <= 3:
            kept.append((str(u), k, g, v))
    keys, groups = [0, 1, 2], [1, 2]
    declared = [(u, groups.index(g), keys.index(k), v) for u, k, g, v in kept if k in keys and g in groups]
    hist, total = np.zeros((2, 3), np.int64), np.zeros((2, 1), np.int64)
    for unit in {u for u, *_ in declared}:
        mine = [r for r in declared if r[0] == unit]
        cells = sorted({(gi, ki) for _, gi, ki, _ in mine})
        best = max(cells, key=lambda c: (sum(1 for r in mine if (r[1], r[2]) == c), -c[0], -c[1]))
        hist[best] += 1
    in_groups = [(u, groups.index(g), 0, v) for u, k, g, v in kept if g in groups]   # the sum has no key
    per_group = np.zeros((1, 2), np.int64)
    for unit in {u for u, *_ in in_groups}:
        mine = [r for r in in_groups if r[0] == unit]
        home = max({r[1] for r in mine}, key=lambda gi: (sum(1 for r in mine if r[1] == gi), -gi))
        total[home, 0] += sum(min(4, max(0, round(v / 0.5))) for _, gi, _, v in mine if gi == home)
        per_group[0, home] += 1
    counted = [r for r in kept if r[1] in (0, 1)]
    return {"h": hist, "s": total, "c": per_group, "n": np.array([[len({r[0] for r in counted})]]),
            "r": np.array([[len(counted)]]), "units": len(seen), "kept": len(kept),
            "undeclared": len(kept) - len(declared), "outside_groups": len(kept) - len(in_groups)}


_ROW = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 3), st.sampled_from([-1.0, 0.0, 0.7, 1.25, 2.0, 3.0]))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(_ROW, max_size=30), text=st.sampled_from(["int", "str", "mixed", "int-then-str", "big",
                                                              "small-then-big", "negative"]),
       cut=st.integers(0, 30), dense=st.sampled_from([None, 0, 7]))
def test_fast_aggregate_equals_a_plain_loop(rows, text, cut, dense):
    """Integer ids by lookup array ("int"), by sorted arrays ("big", "negative") and both
    ("small-then-big"); totals dense, sparse (dense=0) and switched mid-way (dense=7)."""
    named = {"int": lambda u, i: u, "str": lambda u, i: f"id{u}", "mixed": lambda u, i: str(u) if i % 2 else u,
             "int-then-str": lambda u, i: u, "big": lambda u, i: u * 10 ** 15 + 1, "negative": lambda u, i: -u,
             "small-then-big": lambda u, i: u if i < cut else u + (10 ** 15 if u % 2 else 0)}
    rows = [(named[text](u, i), k, g, v) for i, (u, k, g, v) in enumerate(rows)]
    frame = pd.DataFrame(rows, columns=["u", "k", "g", "v"]) if rows else _table([])
    batches = [frame.iloc[:cut], frame.iloc[cut:]]
    if text == "int-then-str":   # a later batch of text ids: 7 and "7" are one unit
        batches[1] = batches[1].assign(u=batches[1]["u"].astype(str))
    agg = aggregate(batches, _REF_SPEC, dense_cells=dense)
    ref = _reference(rows)
    assert (agg.units, agg.kept, agg.rows) == (ref["units"], ref["kept"], len(rows))
    assert agg.counts["h"].get("rows_undeclared_key_or_group", 0) == ref["undeclared"]
    for name in ("s", "c"):   # one layout, computed once: both statistics' counts as if apart
        assert agg.counts[name].get("rows_undeclared_key_or_group", 0) == ref["outside_groups"]
        assert agg.counts[name].get("rows_counted_before_unit_rules", 0) == ref["kept"] - ref["outside_groups"]
    for stat in _REF_SPEC.statistics:
        assert np.array_equal(answers(agg, stat).cells, ref[stat.name]), stat.name


@settings(max_examples=20, deadline=None)
@given(ids=st.lists(st.integers(0, 3), min_size=1, max_size=10), at=st.integers(0, 9))
def test_a_missing_id_is_refused_naming_its_row(ids, at):
    at = at % len(ids)
    frame = pd.DataFrame({"u": [None if i == at else u for i, u in enumerate(ids)], "k": 0, "g": 1, "v": 1.0})
    with pytest.raises(InvalidParameterError, match=f"missing value at data row {at + 1}"):
        aggregate([frame.iloc[:1], frame.iloc[1:]], _REF_SPEC)


def test_identical_cells_are_designed_and_certified_once():
    """Statistics equal but for their name and ``where`` share one mechanism object (designed,
    quantized and certified once); another epsilon gets its own; both names stay in the
    document."""
    from optnoise.query.release import plan
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2}, "statistics": {
        "a": {"kind": "count", "where": {"k": [0]}, "epsilon": 0.5},
        "b": {"kind": "count", "where": {"k": [1]}, "epsilon": 0.5},
        "c": {"kind": "count", "epsilon": 0.7}}})
    frame = pd.DataFrame({"u": [1, 1, 2, 3], "k": [0, 1, 1, 0]})
    a, b, c = plan(spec, aggregate([frame], spec))
    assert (a.cell.name, b.cell.name, c.cell.name) == ("a", "b", "c")
    assert a.cell.noise is b.cell.noise and a.cell.noise is not c.cell.noise
    assert a.answers.cells.tolist() == [[2]] and b.answers.cells.tolist() == [[2]]


def test_clamped_cell_takes_the_staircase_where_it_is_cheaper():
    """A count of rows (distance d > 1) under pure eps: the default clamps Geng & Viswanath's
    discrete staircase when its E|eta| is at least 1 % below the geometric alpha = e^(-eps/d)'s,
    computed here independently from (82)-(83) (p(i) ~ b^(i // d), one more b where i % d >= r,
    b = e^-eps; min over r) and 2 alpha / (1 - alpha^2); else the chained geometric."""
    import math

    from optnoise.query.mechanisms import noise_abs

    def staircase_abs(eps: float, d: int) -> float:
        b, i = math.exp(-eps), np.arange(0, 400 * d)
        best = math.inf
        for r in range(1, d + 1):
            p = b ** (i // d) * np.where(i % d < r, 1.0, b)
            best = min(best, 2 * float((p * i).sum()) / (2 * float(p.sum()) - p[0]))
        return best

    for eps, d in ((1.0, 5), (3.0, 2), (0.25, 24)):
        cell = count_cell("c", 500, 0, d, Target(eps))
        chained = count_cell("c", 500, 0, d, Target(eps), "clamped-geometric")
        alpha = math.exp(-eps / d)
        geometric, stair = 2 * alpha / (1 - alpha ** 2), staircase_abs(eps, d)
        assert cell.epsilon_pure <= eps and cell.space == "clamped-line"
        assert "geometric noise" in chained.built
        if stair < geometric / 1.01:
            assert "staircase" in cell.built
            # calibrated a little below eps (by the margin its built text names, at most 1e-3 here)
            assert stair * (1 - 1e-9) <= noise_abs(cell.noise) <= stair * 1.002
            assert noise_abs(cell.noise) < noise_abs(chained.noise)
        else:
            assert cell.built == chained.built
        out = cell.release(np.array([0, 250, 500] * 200), SeededRandomSource(3))
        assert out.min() >= 0 and out.max() <= 500


def test_rows_histogram_l1_plan_certificate_and_error():
    """A histogram of rows (24 keys, max_rows 24, eps 1): the L1 plan gives each cell pure noise
    at distance 1 for eps / l1 (l1 = 2m = 48 under replace, m = 24 under add-remove); the
    statistic's certificate is l1 times the cell's exact one, within eps, and the unit's total
    says the same; each cell's error is about that of the geometric at eps / l1, 2a / (1 - a^2),
    against the cell-by-cell plan's e^(-eps / (24 * 24)) -- checked by forcing that plan."""
    import math
    from dataclasses import replace as dc_replace

    from optnoise.neighbourhood import Neighbourhood
    from optnoise.query.kinds import cell_domain, cell_for
    from optnoise.query.mechanisms import noise_abs
    frame = pd.DataFrame({"h": np.repeat(np.arange(100), 24), "hour": np.tile(np.arange(24), 100)})
    for change, l1 in (("replace", 48), ("add-remove", 24)):
        unit = {"id": "h", "max_rows": 24, "change": change}
        if change == "add-remove":
            unit["max_units"] = 200
        spec = {"unit": unit, "statistics": {"r": {"kind": "histogram", "of": "rows", "key": "hour",
                                                   "keys": list(range(24)), "epsilon": 1.0}}}
        parsed = parse_query_spec(spec)
        stat = parsed.statistics[0]
        d = derive(stat, parsed.unit)
        assert d.l1 == l1 and d.cells == 24 and d.distance == 24
        offset, n = cell_domain(stat, parsed.unit, 100)
        cell = cell_for(stat, d, n, offset)
        assert cell.noise.neighbourhood == Neighbourhood.bd(1)
        assert l1 * cell.epsilon_pure <= 1.0
        a = math.exp(-1.0 / l1)
        assert noise_abs(cell.noise) == pytest.approx(2 * a / (1 - a * a), rel=1e-3)
        old = cell_for(stat, dc_replace(d, l1=None), n, offset)   # cell by cell: 24 cells at eps/24, distance 24
        assert noise_abs(old.noise) > 10 * noise_abs(cell.noise)
        doc = query(frame, spec)   # unseeded: the certificates are stated
        cert = doc["statistics"]["r"]["certificate"]
        assert cert["l1"] == l1 and cert["epsilon_pure"] <= 1.0
        assert cert["epsilon_pure"] >= l1 * cert["cell"]["epsilon_pure"]    # rounded up, never down
        assert doc["total"]["cells"] == 1 and doc["total"]["basic"]["epsilon"] == cert["epsilon_pure"]
        assert doc["statistics"]["r"]["neighbourhood"]["l1"] == l1


def test_a_rows_key_does_not_depend_on_other_rows_missing_values(tmp_path):
    """Integer keys beyond 2^53 (review finding): Arrow turns an int64 column with a missing
    value into float64, which rounds 2^53 + 1 to 2^53 -- so a row's declared key depended on
    whether another row of its batch had a missing value, and adding one unit with a missing
    key moved 1,000 other units' cells. Now every row's key is its own exact value: adding that
    unit changes nothing (its row has no key)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from optnoise.publish.files import read_batches
    big = 2 ** 53
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 1}, "statistics": {
        "h": {"kind": "histogram", "key": "k", "keys": [big, big + 2], "epsilon": 1.0},
        "r": {"kind": "histogram", "of": "rows", "key": "k", "keys": [big, big + 2, big + 4], "epsilon": 1.0}}})
    got = []
    for extra in ([], [None]):
        keys = [big + 1] * 500 + [big + 2] * 300 + [big + 4] * 200 + extra
        path = tmp_path / f"k{len(extra)}.parquet"
        pq.write_table(pa.table({"u": pa.array(range(len(keys)), pa.int64()), "k": pa.array(keys, pa.int64())}), path)
        agg = aggregate(read_batches(path, "parquet", list(spec.columns)), spec)
        got.append([answers(agg, s).cells.tolist() for s in spec.statistics])
    assert got[0] == got[1] == [[[0, 300]], [[0, 300, 200]]]
