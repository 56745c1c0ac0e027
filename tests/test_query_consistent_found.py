"""Tables of keys found in the data that add up (``consistent = true`` with ``keys =
"from-data"``; docs/proofs/consistent-tables.md, "Keys found in the data"): the released
cells, the outside cell and the other-keys cell sum to N in every release; the entry reads
nothing of the suppressed keys; the total is the found-key histogram's; the other keys'
interval covers at its rate under a selection that defeats a union bound over the released
cells alone (power check); local and Spark give one document; bad specs exit 2."""

from __future__ import annotations

import itertools
import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.consistent_found import body, fit_below, release, union_size
from optnoise.query.intervals import interval
from optnoise.query.mechanisms import count_cell
from optnoise.query.spec import parse_query_spec
from optnoise.query.threshold import upper_tail
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

warnings.filterwarnings("ignore", message=".*not private.*")
runner = CliRunner()


def _spec(**stat) -> dict:
    base = {"kind": "histogram", "key": "product", "keys": "from-data", "epsilon": 1.0, "delta": 1e-6,
            "consistent": True}
    return {"unit": {"id": "c", "max_rows": 3}, "statistics": {"p": {**base, **stat}}}


def _frame(seed: int = 1, n: int = 3000, rare: float = 0.1) -> pd.DataFrame:
    """Units of three rows; 90 % of rows of three common products, the rest one-off products
    (suppressed); region 0 (outside ``where = {region = [1, 2]}``) for a tenth of the rows."""
    rng = np.random.default_rng(seed)
    common = rng.choice(["apple", "pear", "fig"], n)
    odd = np.array([f"rare{i}" for i in rng.integers(0, 10 ** 6, n)])
    return pd.DataFrame({"c": rng.permutation(np.arange(n) // 3),
                         "product": np.where(rng.random(n) < 1 - rare, common, odd),
                         "region": rng.choice([0, 1, 2], n, p=[0.1, 0.45, 0.45])})


def _query(frame, spec, seed):
    return optnoise.query(frame, spec, seed=seed)


def _released(entry: dict) -> list[int]:
    return [v for x in entry["values"].values() for v in (x.values() if isinstance(x, dict) else [x])]


# ------------------------------------------------------------------ the projection
def test_fit_below_is_a_nearest_integer_point_on_every_tiny_case():
    """Against brute force over every integer point of the boxes with sum at most N: feasible,
    and no point is nearer; outside the boxes only when the boxes' lows pass N."""
    for y in itertools.product(range(-1, 4), repeat=3):
        for lo in itertools.product(range(3), repeat=3):
            hi = tuple(a + 1 for a in lo)
            for total in range(0, 6):
                z, inside = fit_below(np.array(y), np.array(lo), np.array(hi), total, SeededRandomSource(0))
                assert int(z.sum()) <= total and (z >= 0).all()
                box = (lo, hi) if sum(lo) <= total else ((0,) * 3, (total,) * 3)
                points = [p for p in itertools.product(*[range(a, b + 1) for a, b in zip(*box)]) if sum(p) <= total]
                best = min(sum((a - b) ** 2 for a, b in zip(p, y)) for p in points)
                assert sum((a - b) ** 2 for a, b in zip(z, y)) == best and inside == (sum(lo) <= total), (y, lo, total)


def test_union_size_counts_every_cell_that_can_hold_a_unit():
    assert union_size(1416, 12) == 1417 and union_size(10 ** 9, 2) == 200_001 and union_size(1, 1) == 2


# ------------------------------------------------------------------ documents
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("stat", [{}, {"where": {"region": [1, 2]}},
                                  {"by": "region", "groups": [1, 2], "epsilon": 2.0}])
def test_cells_outside_and_other_add_up_to_the_number_of_units(seed, stat):
    frame = _frame(seed, n=1500)
    doc = _query(frame, _spec(**stat), seed)
    p = doc["statistics"]["p"]
    cells = _released(p) + [p["outside"]["value"], p["other_keys"]["value"]]
    assert all(isinstance(v, int) and v >= 0 for v in cells) and sum(cells) == 500 == p["consistent"]["total"]
    assert "rare" not in json.dumps(doc) and set(_released(p)) and len(_released(p)) <= 6
    c = p["consistent"]
    if c["values_inside_simultaneous_intervals"]:
        for g, x in p["values"].items():
            rows = x.items() if isinstance(x, dict) else [(g, x)]
            for k, v in rows:
                box = c["simultaneous_intervals"][g][k] if isinstance(x, dict) else c["simultaneous_intervals"][k]
                assert box[0] <= v <= box[1]
    lo, hi = p["other_keys"]["interval"]
    assert lo <= p["other_keys"]["value"] <= hi or not c["values_inside_simultaneous_intervals"]


def _truth(frame: pd.DataFrame, where: bool) -> tuple[int, int]:
    """The true other-keys and outside cells: each unit at the product of most of its rows
    (ties to the least), the rare products being the suppressed ones (they never pass)."""
    kept = frame[frame["region"].isin([1, 2])] if where else frame
    home = kept.groupby(["c", "product"]).size().reset_index().sort_values(["c", 0, "product"],
                                                                            ascending=[True, False, True])
    home = home.drop_duplicates("c")
    outside = frame["c"].nunique() - home["c"].nunique()
    return int(home["product"].str.startswith("rare").sum()), outside


def test_other_keys_interval_holds_its_truth_in_released_documents():
    """The other keys' and the outside cell's intervals against the truth computed independently
    (pandas), 12 seeds: both hold at once with probability >= 0.95 in each, so four misses or
    more has probability below 2.3e-3 (binomial at the proven rate 0.05; fixed seeds)."""
    misses = 0
    for seed in range(12):
        frame = _frame(seed, n=1500, rare=0.3)
        p = _query(frame, _spec(where={"region": [1, 2]}), seed)["statistics"]["p"]
        other, outside = _truth(frame, True)
        lo, hi = p["other_keys"]["interval"]
        olo, ohi = p["consistent"]["simultaneous_outside"]
        misses += not (lo <= other <= hi and olo <= outside <= ohi)
    assert misses <= 3


def test_the_entry_reads_nothing_of_the_suppressed_cells():
    """``body`` of the same released cells and the same number of units, the suppressed units
    held by 900 candidates of one unit, 450 of two, or one of 900: the same entry, field for
    field, for the same seed -- neither the suppressed counts nor their number reach it; and
    moving 30 of those units to the outside cell changes it (the test can fail)."""
    from optnoise.query.statistic import Keys, Statistic
    cell = count_cell("p", 1000, 0, 2, Target(1.0))
    stat = Statistic("p", "histogram", Target(1.0, 1e-6), key="k", keys=Keys(("a", "b")), keys_from_data=True,
                     consistent=True)
    doc = {"values": {"a": 40, "b": 31}, "intervals": {"a": [37, 43], "b": [28, 34]}, "interval_method": "m",
           "expected_abs_error": 1.0, "expected_abs_error_method": "e", "keys": {"found_in_data": True}}
    units = 71 + 900 + 29

    def entry(suppressed: list[int]) -> str:
        cells = np.array([[41, 30] + suppressed])
        return json.dumps(body(stat, cell, dict(doc), cells, units, 0.05, SeededRandomSource(3)), sort_keys=True)

    one = entry([1] * 900)
    assert entry([2] * 450) == one == entry([900])
    assert entry([870]) != one
    got = json.loads(one)
    assert sum(got["values"].values()) + got["outside"]["value"] + got["other_keys"]["value"] == units


def test_the_document_has_the_same_fields_with_or_without_suppressed_keys():
    """The published entry's shape (every path but the released keys' labels) is the same for a
    table with no suppressed key and one with hundreds: the document cannot tell them apart."""
    def paths(x, at=""):
        if isinstance(x, dict):
            return {q for k, v in x.items() for q in paths(v, at + "/" + ("*" if k in ("apple", "pear", "fig") else k))}
        return {at}
    none = _query(_frame(1, n=1500, rare=0.0), _spec(), 1)
    lots = _query(_frame(1, n=1500, rare=0.3), _spec(), 1)
    assert paths(none["statistics"]) == paths(lots["statistics"])
    assert none["statistics"]["p"]["other_keys"]["value"] <= 60   # small with none suppressed


def test_the_total_is_the_found_key_histograms_and_the_selection_the_same():
    """Post-processing costs nothing: the document's total and certificate equal those of the
    same spec without consistent, and for the same seed the released keys and their independent
    values are that document's values."""
    frame = _frame(2, n=1500)
    cons = _query(frame, _spec(), 7)
    plain = _query(frame, _spec(consistent=False), 7)
    a, b = cons["only_if_unseeded"], plain["only_if_unseeded"]
    assert a["total"] == b["total"] and a["statistics"]["p"]["certificate"] == b["statistics"]["p"]["certificate"]
    assert cons["statistics"]["p"]["consistent"]["independent_values"] == plain["statistics"]["p"]["values"]
    assert cons["statistics"]["p"]["keys"] == plain["statistics"]["p"]["keys"]
    assert cons["statistics"]["p"]["neighbourhood"] == plain["statistics"]["p"]["neighbourhood"]


def _cli(tmp_path, frame: pd.DataFrame, spec: str, *flags: str):
    """``optnoise query`` on ``frame`` (written as CSV) with the spec's TOML text."""
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text(spec)
    return runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                               "--output", str(tmp_path / "doc.json"), *flags])


def test_the_command_line_keeps_suppressed_keys_out_of_csv_and_terminal(tmp_path):
    frame = _frame(3, n=1500, rare=0.3)
    r = _cli(tmp_path, frame, 'unit = { id = "c", max_rows = 3 }\n[statistics.p]\nkind = "histogram"\nkey = '
             '"product"\nkeys = "from-data"\nconsistent = true\nepsilon = 1.0\ndelta = 1e-6\n',
             "--csv", str(tmp_path / "out.csv"))
    assert r.exit_code == 0, r.output
    suppressed = frame["product"][frame["product"].str.startswith("rare")].nunique()
    assert set(pd.read_csv(tmp_path / "out.csv")["key"]) <= {"apple", "pear", "fig"}
    for text in (r.stdout, (tmp_path / "out.csv").read_text(), (tmp_path / "doc.json").read_text()):
        assert "rare" not in text and f"{suppressed}" not in text.replace(",", "")
    doc = json.loads((tmp_path / "doc.json").read_text())["statistics"]["p"]
    assert sum(_released(doc)) + doc["outside"]["value"] + doc["other_keys"]["value"] == 500


# ------------------------------------------------------------------ coverage under selection
#: The false-alarm rate of the simulation test (Bonferroni over its two binomial tests).
FALSE_ALARM = 1e-6


def test_other_keys_coverage_survives_the_selection_and_a_union_over_released_cells_does_not():
    """3,000 candidate keys of 8 units each, threshold 20 at epsilon 0.5 per cell: about 4.6
    keys pass per run, each only because its noise is at least 12 -- a selection that defeats
    intervals read after it. R = 400 runs, alpha = 0.1: the other keys' interval (boxes at
    alpha / (N + 1)) misses in at most the binomial quantile at rate alpha (false alarm
    FALSE_ALARM / 2); boxes at alpha / (released + 1) instead -- a union bound over the released
    cells alone, which the selection breaks -- miss above that quantile (power)."""
    alpha, runs, tau, outside = 0.1, 400, 20, 50
    truth = np.full(3000, 8)
    units = int(truth.sum()) + outside
    cell = count_cell("h", units, 0, 1, Target(0.5))
    source = SeededRandomSource(11)
    ours = naive = 0
    for _ in range(runs):
        y = cell.release(truth, source)
        kept = y >= tau
        f = release(cell, y[kept], outside, units, 1, alpha, source)
        other = units - int(truth[kept].sum()) - outside
        ours += not f.other_low <= other <= f.other_high
        lo, hi, _ = interval(cell, f.independent, alpha / (int(kept.sum()) + 1))
        naive += not units - int(hi.sum()) <= other <= units - int(lo.sum())
        if f.inside or f.other_low <= other <= f.other_high:
            assert f.values.sum() + f.other == units and (f.values >= 0).all() and f.other >= 0
    limit = binom.ppf(1 - FALSE_ALARM / 2, runs, alpha)
    assert ours <= limit < naive


# ------------------------------------------------------------------ privacy, exactly, on a tiny case
def _clamped_law(q, count: int, n: int) -> dict[int, Fraction]:
    """The exact law of ``clip(count + Z, 0, n)`` for the quantized noise ``Z``."""
    law = {v: upper_tail(q, v - count) - upper_tail(q, v + 1 - count) for v in range(1, n)}
    return {0: 1 - upper_tail(q, 1 - count), **law, n: upper_tail(q, n - count)}


def _shown(law: dict, tau: int) -> dict:
    """A key's output: ``None`` (not shown: below ``tau``) or its released count."""
    return {None: sum((m for v, m in law.items() if v < tau), Fraction(0)),
            **{v: m for v, m in law.items() if v >= tau}}


def test_the_outside_cell_keeps_the_found_histograms_guarantee_exactly():
    """The output the consistent entry is a kernel of -- each candidate key shown above the
    threshold, and the outside cell -- on tables of a shared key ``a``, keys ``b``, ``c`` of unit
    ``u`` alone, and the outside cell (domain 0..12, threshold 5, the clamped geometric at
    epsilon 1 per cell). Under replace ``u`` moves from ``b`` to the outside, from ``a`` to the
    outside, or from ``b`` to ``c``: the exact hockey-stick divergence at two cells' epsilon plus
    the selection's, both ways, is within the selection's delta (exact rationals, ``e^eps`` bounded
    below by a rational). Not vacuous: at one cell's epsilon plus the selection's the move from
    ``a`` to the outside (two cells of the rest) exceeds it."""
    import math
    from optnoise.query.threshold import selection_cost
    n, tau = 12, 5
    q = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    eps1 = q.certificate.epsilon_pure
    p = upper_tail(q, tau - 1)
    shift, delta = selection_cost(p, 1)
    absent = {None: Fraction(1)}

    def key(count):
        return _shown(_clamped_law(q, count, n), tau) if count else absent

    def divergence(d, e, eps):
        """``sum max(0, P_D - e^eps P_E)`` over the joint outputs (independent cells)."""
        lows = Fraction(math.exp(eps) * (1 - 1e-12))     # below e^eps: an upper bound on the divergence
        total = Fraction(0)
        for out in itertools.product(*[sorted(set(x) | set(y), key=str) for x, y in zip(d, e)]):
            pd_ = np.prod([law.get(o, Fraction(0)) for law, o in zip(d, out)], dtype=object)
            pe = np.prod([law.get(o, Fraction(0)) for law, o in zip(e, out)], dtype=object)
            total += max(Fraction(0), pd_ - lows * pe)
        return total

    # (a, b, c, outside): u at b -> outside; u at a -> outside; u at b -> c
    moves = [((3, 1, 0, 2), (3, 0, 0, 3)), ((3, 0, 0, 2), (2, 0, 0, 3)), ((3, 1, 0, 2), (3, 0, 1, 2))]
    for before, after in moves:
        d = [key(c) for c in before[:3]] + [_clamped_law(q, before[3], n)]
        e = [key(c) for c in after[:3]] + [_clamped_law(q, after[3], n)]
        for x, y in ((d, e), (e, d)):
            assert divergence(x, y, 2 * eps1 + shift) <= Fraction(delta)
    d = [key(3), absent, absent, _clamped_law(q, 2, n)]
    e = [key(2), absent, absent, _clamped_law(q, 3, n)]
    assert divergence(d, e, eps1 + shift) > Fraction(delta)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("mine, other", [
    ({"by": "region", "groups": [1, 2]},      # found groups under a declared overall table
     {"kind": "histogram", "key": "product", "keys": ["apple", "pear"], "consistent": True, "epsilon": 1.0}),
    ({}, {"kind": "histogram", "key": "product", "keys": ["apple"], "by": "region", "groups": [1, 2],
          "consistent": True, "epsilon": 1.0}),
    ({}, {"kind": "histogram", "key": "product", "keys": "from-data", "by": "region", "groups": [1, 2],
          "consistent": True, "epsilon": 1.0, "delta": 1e-6}),
    ({}, {"kind": "histogram", "key": "region", "keys": [1, 2], "by": "product", "groups": ["apple"],
          "consistent": True, "epsilon": 1.0}),
])
def test_a_hierarchy_of_found_keys_is_refused_naming_consistent(mine, other):
    spec = _spec(**mine)
    spec["statistics"]["q"] = other
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(spec)
    assert err.value.parameter.endswith(".consistent") and "hierarchy" in str(err.value)
    spec["statistics"]["q"] = {**other, "consistent": False}     # not tied: both released
    parse_query_spec(spec)


def test_two_tables_of_one_key_without_groups_are_not_a_hierarchy():
    spec = _spec()
    spec["statistics"]["q"] = {**spec["statistics"]["p"], "where": {"region": [1]}}
    assert len(parse_query_spec(spec).statistics) == 2


@pytest.mark.parametrize("unit, stat, words", [
    ({"change": "add-remove", "max_units": 1000}, {}, "number of units is not public"),
    ({"max_groups": 2}, {}, "max_groups"),
    ({}, {"unbiased": True}, "threshold"),
])
def test_refusals_name_the_key(unit, stat, words):
    spec = _spec(**stat)
    spec["unit"] = {**spec["unit"], **unit}
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(spec)
    assert err.value.parameter.startswith("statistics.p.") and words in str(err.value)


def test_cli_refuses_a_hierarchy_with_one_line_and_exit_2(tmp_path):
    table = '\nkind = "histogram"\nkey = "product"\nepsilon = 1.0\ndelta = 1e-6\nconsistent = true\n'
    run = _cli(tmp_path, _frame(1, n=30), 'unit = { id = "c", max_rows = 3 }\n[statistics.all]' + table +
               'keys = "from-data"\n[statistics.by]' + table + 'keys = "from-data"\nby = "region"\ngroups = [1, 2]\n')
    assert run.exit_code == 2 and "statistics.all.consistent" in run.output
    assert len(run.output.strip().splitlines()) == 1 and not (tmp_path / "doc.json").exists()


# ------------------------------------------------------------------ Spark
def test_spark_document_equals_the_local_one(tmp_path):
    from optnoise.publish.spark import spark_session
    from optnoise.query.files import query_file
    spark_session()
    _frame(4, n=900, rare=0.2).to_csv(tmp_path / "in.csv", index=False)
    spec = _spec(by="region", groups=[1, 2], epsilon=2.0)
    local = query_file(tmp_path / "in.csv", spec, source=SeededRandomSource(8))
    remote = query_file(tmp_path / "in.csv", spec, engine="spark", source=SeededRandomSource(8))
    assert json.dumps(remote["statistics"], sort_keys=True) == json.dumps(local["statistics"], sort_keys=True)
    p = local["statistics"]["p"]
    assert sum(_released(p)) + p["outside"]["value"] + p["other_keys"]["value"] == 300
