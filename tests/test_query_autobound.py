"""Bounds chosen privately (issue 36 item 5): ``unit.max_rows = "auto"`` and ``clamp = "auto"`` --
the pre-pass, the noisy histogram on the log grid, the choice, its spend in the unit's total
and its words in the document (docs/proofs/private-bounds.md)."""

from __future__ import annotations

import json
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.auto_spec import AutoRows
from optnoise.query.autobound import choose, choose_bound, grid_histogram, row_counts_histogram, unit_values
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import random_source

runner = CliRunner()


def _frame(units: int = 400, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 9, units)
    return pd.DataFrame({"h": np.repeat(np.arange(units), rows), "kwh": rng.integers(0, 5, rows.sum())})


def _spec(unit: dict | None = None, **stats) -> dict:
    base = {"n": {"kind": "count", "epsilon": 1.0},
            "s": {"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 4}, "epsilon": 0.5}}
    return {"unit": {"id": "h", "max_rows": "auto", "bound_epsilon": 0.25, **(unit or {})},
            "statistics": {**base, **stats}}


def _query(frame, spec, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, **options)


# ------------------------------------------------------------------ the pre-pass
def test_row_counts_histogram_by_hand():
    """Units with 1, 2, 3, 5 and 40 rows on the grid 1, 2, 4, 8, 16, 32: cells (<=1], (1,2],
    (2,4], (4,8], (8,16], above 16 -- one unit in each but (8,16]."""
    rows = [1, 2, 3, 5, 40]
    frame = pd.DataFrame({"h": np.repeat(["a", "b", "c", "d", "e"], rows)}).sample(frac=1, random_state=3)
    spec = parse_query_spec(_spec({"max_rows_cap": 32}, s={"kind": "count", "epsilon": 1.0}))
    assert spec.auto_rows.grid == (1, 2, 4, 8, 16, 32)
    halves = [frame.iloc[:20], frame.iloc[20:]]   # a unit's rows in two batches
    counts, units = row_counts_histogram(halves, spec, spec.auto_rows.grid)
    assert units == 5 and counts.tolist() == [1, 1, 1, 1, 0, 1]


def test_clamp_values_are_each_units_largest_kept_value_or_total():
    frame = pd.DataFrame({"h": [1, 1, 2, 2, 3], "kwh": [3.0, 9.5, 2.0, 40.0, 7.0], "hour": [1, 1, 1, 2, 2]})
    spec = parse_query_spec({"unit": {"id": "h", "max_rows": 4}, "statistics": {
        "s": {"kind": "sum", "column": "kwh", "clamp": "auto", "clamp_cap": 64, "where": {"hour": 1}, "epsilon": 1.0},
        "q": {"kind": "median", "column": "kwh", "clamp": "auto", "clamp_cap": 64, "epsilon": 1.0}}})
    (largest, total), units = unit_values([frame], spec)
    assert units == 3
    assert largest.tolist()[:2] == [9.5, 2.0] and np.isnan(largest[2])   # unit 3 keeps no row
    assert total.tolist() == [13.0, 42.0, 7.0]   # whole steps, half to even, as the quantile adds: 3 + 10
    assert grid_histogram(largest, (1, 2, 4, 8, 16)).tolist() == [0, 1, 0, 0, 1]


def test_prepass_memory_is_bounded_by_units_not_rows():
    """Ten units, 20,000 rows per batch: the peak traced memory of the pre-pass over 100 batches
    is within 1.5x of that over 5 (one counter per unit; a batch at a time)."""
    spec = parse_query_spec(_spec(s={"kind": "count", "epsilon": 1.0}))

    def batches(k):
        for i in range(k):
            yield pd.DataFrame({"h": np.arange(20_000) % 10})

    peaks = []
    for k in (5, 100):
        tracemalloc.start()
        counts, units = row_counts_histogram(batches(k), spec, spec.auto_rows.grid)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert units == 10 and counts[spec.auto_rows.grid.index(1024)] == 10
    assert peaks[1] < 1.5 * peaks[0], peaks


# ------------------------------------------------------------------ the choice
def _choices(cap: int, runs: int = 20) -> tuple[list[int], float]:
    """200,000 units: 97 % with 1..8 rows, 3 % with 30 (the 0.99 point is 32); the choice at
    bound_epsilon 1 under replace (0.5 per cell), each run seeded."""
    rng = np.random.default_rng(7)
    n = 200_000
    rows = np.where(np.arange(n) < int(0.97 * n), rng.integers(1, 9, n), 30).astype(float)
    request = AutoRows(1.0, 0.99, cap)
    spec = parse_query_spec(_spec({"bound_epsilon": 1.0, "max_rows_cap": cap}))
    counts = grid_histogram(rows, request.grid)
    chosen = [choose("unit.max_rows", "its rows", request, counts, spec, n, random_source(seed)).chosen
              for seed in range(runs)]
    return chosen, float(np.mean(rows <= chosen[0]))


def test_the_chosen_bound_covers_the_share():
    """Every run chooses 32, which covers 100 % >= 99 % of the units. False alarm: each cell is
    the clamped geometric at eps 0.5 (a = e^-0.5), noise floor 8. Choosing above 32 needs the 6
    empty cells above it to add more than 2,000 (0.01 N) over their floors, so one of them a
    noise above 341: P <= 6 a^342 < 1e-70; choosing below needs the cell of the 6,000 units with
    30 rows released below 2,008, a noise below -3,992: P < a^3992. So < 1e-70 per run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen, covered = _choices(1024)
    assert chosen == [32] * 20 and covered >= 0.99


def test_a_grid_too_small_fails_the_coverage():
    """Power: with the cap at 16 the choice reaches the cap, which covers 97 % < 99 %."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen, covered = _choices(16, runs=3)
    assert chosen == [16] * 3 and covered < 0.99


def test_choose_bound_by_hand():
    grid = (1, 2, 4, 8)
    # add-remove, no floor: the noisy cumulative count reaching 0.99 of the noisy total
    assert choose_bound([10, 50, 39, 1], grid, 0.99) == (4, True)        # tail 1 <= 0.01 * (99 + 1)
    assert choose_bound([10, 50, 38, 2], grid, 0.99) == (8, False)       # tail 2 > 0.01 * 100: only the cap
    assert choose_bound([0, 0, 0, 0], grid, 0.5) == (1, True)            # an empty histogram: the least
    # the public total: the tail read from the cells above, not from the total less the cells below
    assert choose_bound([10, 50, 39, 1], grid, 0.99, total=100) == (4, True)     # 1 <= 0.01 * 100
    assert choose_bound([10, 50, 39, 2], grid, 0.99, total=100) == (8, False)    # 2 > 1
    assert choose_bound([10, 50, 9, 2], grid, 0.99, total=200) == (4, True)      # 2 <= 2
    # the floor: each cell above counts max(0, count - floor)
    assert choose_bound([700, 100, 0, 9], grid, 0.99, floor=9) == (2, True)      # 0 + 0 <= 0.01 * 800
    assert choose_bound([700, 100, 0, 18], grid, 0.99, floor=9) == (8, False)    # 9 > 0.01 * (800 + 9) = 8.09
    assert choose_bound([700, 100, 0, 17], grid, 0.99, floor=9) == (2, True)     # 8 <= 0.01 * (800 + 8) = 8.08
    assert choose_bound([700, 100, 30, 60], grid, 0.99, total=800, floor=25) == (8, False)   # 5 + 35 > 8
    assert choose_bound([700, 100, 30, 30], grid, 0.99, total=800, floor=25) == (4, True)    # at 2: 5 + 5 > 8; at 4: 5 <= 8


def test_noise_floor_against_the_geometric_tail():
    """An empty cell's release exceeds the floor t with probability at most 0.1 / cells, and
    t - 1 with more: checked against the geometric's closed form P[Z > t] = a^(t+1) / (1 + a),
    a = e^-eps, within the quantization's relative error (the floor moves by at most one)."""
    import math

    from optnoise.query.autobound import histogram_cell, noise_floor
    for eps in (0.1, 1.0):
        cell, _ = histogram_cell(AutoRows(eps), "add-remove", 10_000)
        a = math.exp(-eps)
        closed = next(t for t in range(100_000) if a ** (t + 1) / (1 + a) <= 0.1 / 11)
        assert abs(noise_floor(cell, 11) - closed) <= 1, (eps, noise_floor(cell, 11), closed)
        assert noise_floor(cell, 11, level=0.5) < noise_floor(cell, 11) < noise_floor(cell, 11, level=0.01)


# ------------------------------------------------------------------ the total and the document
def test_max_rows_spend_is_added_exactly_to_the_total():
    """Basic epsilon: 1 (count) + 0.5 (sum) + 0.25 (the histogram, two cells at 0.125 under
    replace) = 1.75 exactly; with max_rows declared at the chosen value, 1.5."""
    frame = _frame()
    doc = _query(frame, _spec())
    chosen = doc["unit"]["max_rows"]
    assert doc["bounds"]["unit.max_rows"]["chosen"] == chosen
    assert doc["total"]["basic"]["epsilon"] == 1.75 and doc["total"]["basic"]["delta"] == 0.0
    declared = _query(frame, {**_spec(), "unit": {"id": "h", "max_rows": chosen}})
    assert declared["total"]["basic"]["epsilon"] == 1.5
    assert "bounds" not in declared
    # the pure statistics by randomized response certified at no less than their epsilons (a hair above)
    assert 1.75 <= doc["total"]["pld"]["epsilon"] <= 1.75 * (1 + 1e-8)


def test_clamp_spend_is_taken_from_the_statistic():
    frame = _frame()
    spec = {"unit": {"id": "h", "max_rows": 8}, "statistics": {
        "s": {"kind": "sum", "column": "kwh", "clamp": "auto", "clamp_cap": 16, "clamp_epsilon": 0.25,
              "epsilon": 1.0}}}
    doc = _query(frame, spec)
    b = doc["bounds"]["statistics.s.clamp"]
    assert b["epsilon"] == 0.25 and b["grid"] == [1, 2, 4, 8, 16] and b["chosen"] in b["grid"]
    assert doc["statistics"]["s"]["target"]["epsilon"] == 0.75
    assert doc["total"]["basic"]["epsilon"] == 1.0    # 0.75 + 2 x 0.125


def test_a_statistic_with_a_delta_is_composed_by_its_declared_target():
    """(eps, delta) = (0.5, 1e-7) for the sum: basic 1 + 0.5 + 0.25 with delta 1e-7; the pld
    bound at delta 1e-6 reads the pure items at 1e-6 - 1e-7 and adds 0.5."""
    doc = _query(_frame(), _spec(s={"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 4},
                                    "epsilon": 0.5, "delta": 1e-7}))
    total = doc["total"]
    assert total["basic"] == {"epsilon": 1.75, "delta": 1e-7}
    assert total["declared_targets"]["epsilon"] == 0.5 and total["declared_targets"]["delta"] == 1e-7
    assert "selection" not in total
    assert 1.75 <= total["pld"]["epsilon"] <= 1.75 * (1 + 1e-8)


def test_the_document_states_the_choice():
    doc = _query(_frame(), _spec({"coverage": 0.95}))
    b = doc["bounds"]["unit.max_rows"]
    assert b["epsilon"] == 0.25 and b["coverage"] == 0.95 and b["grid"][:3] == [1, 2, 4] and b["grid"][-1] == 1024
    assert b["cells_per_unit"] == 2 and len(b["noisy_counts"]) == len(b["grid"])
    assert b["mechanism"]["cell_target"] == {"epsilon": 0.125, "delta": 0.0}
    assert f"max_rows = {b['chosen']} was chosen privately" in doc["statement"]
    assert "pure eps 0.25" in doc["statement"] and "cover 0.95 of the units" in doc["statement"]


def test_add_remove_moves_one_cell():
    spec = _spec({"change": "add-remove", "max_units": 1000})
    doc = _query(_frame(), spec)
    b = doc["bounds"]["unit.max_rows"]
    assert b["cells_per_unit"] == 1 and b["mechanism"]["cell_target"]["epsilon"] == 0.25
    assert b["mechanism"]["domain"] == [0, 1000]
    assert doc["total"]["basic"]["epsilon"] == 1.75


def test_python_and_cli_give_the_same_document(tmp_path):
    frame = _frame(200)
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text(
        'unit = { id = "h", max_rows = "auto", bound_epsilon = 0.25 }\n'
        '[statistics.n]\nkind = "count"\nepsilon = 1.0\n'
        '[statistics.s]\nkind = "sum"\ncolumn = "kwh"\nclamp = "auto"\nclamp_cap = 8\nepsilon = 0.5\n')
    spec = {"unit": {"id": "h", "max_rows": "auto", "bound_epsilon": 0.25}, "statistics": {
        "n": {"kind": "count", "epsilon": 1.0},
        "s": {"kind": "sum", "column": "kwh", "clamp": "auto", "clamp_cap": 8, "epsilon": 0.5}}}
    py = _query(frame, spec, seed=4)
    r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                            "--seed", "4", "--json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    assert cli["bounds"] == py["bounds"] and cli["unit"] == py["unit"]
    assert {k: v["value"] for k, v in cli["statistics"].items()} == {k: v["value"] for k, v in py["statistics"].items()}
    assert cli["statement"] == py["statement"]


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("unit, stats, key", [
    ({"coverage": 1.0}, {}, "unit.coverage"),
    ({"coverage": 0}, {}, "unit.coverage"),
    ({"bound_epsilon": 0}, {}, "unit.bound_epsilon"),
    ({"bound_epsilon": 0.25, "max_rows": 4}, {}, "unit.bound_epsilon"),
    ({"max_rows_cap": 0}, {}, "unit.max_rows_cap"),
    ({"id": None}, {}, "unit.max_rows"),
    ({}, {"c": {"kind": "count", "clamp": "auto", "epsilon": 1.0}}, "statistics.c.clamp"),
    ({}, {"t": {"kind": "sum", "column": "kwh", "clamp": "auto", "clamp_cap": 8, "clamp_epsilon": 1.0,
                "epsilon": 1.0}}, "statistics.t.clamp_epsilon"),
    ({}, {"t": {"kind": "sum", "column": "kwh", "clamp": "auto", "epsilon": 1.0}}, "statistics.t.clamp_cap"),
    ({}, {"t": {"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 2}, "clamp_cap": 8,
                "epsilon": 1.0}}, "statistics.t.clamp_cap"),
])
def test_bad_auto_keys_are_refused_naming_the_key(unit, stats, key):
    spec = _spec(unit, **stats)
    spec["unit"] = {k: v for k, v in spec["unit"].items() if v is not None}
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec(spec)
    assert err.value.parameter == key


def test_no_share_of_the_budget_left_is_refused_before_any_noise():
    spec = {**_spec(), "budget": {"epsilon": 1.6}}     # 1.5 for the statistics, 0.25 asked
    with pytest.raises(InvalidParameterError, match="at most 0.1") as err:
        parse_query_spec(spec)
    assert err.value.parameter == "unit.bound_epsilon"
    assert parse_query_spec({**_spec(), "budget": {"epsilon": 1.75}}).auto_rows.epsilon == 0.25
    spec = {**_spec(), "budget": {"epsilon": 2.0}}
    del spec["unit"]["bound_epsilon"]
    default = parse_query_spec(spec)
    assert default.auto_rows.epsilon == pytest.approx(0.2)    # 10 % of the budget's epsilon


def test_cli_refusals_exit_2_with_one_line(tmp_path):
    _frame(50).to_csv(tmp_path / "in.csv", index=False)
    cases = {'unit = { id = "h", max_rows = "auto", coverage = 1.5 }': "unit.coverage",
             # auto bounds are recorded by a ledger (tests/test_ledger_query.py); a missing one is named
             'unit = { id = "h", max_rows = "auto" }\nledger = "x.db"': "ledger"}
    for engine, (head, key) in [("local", item) for item in cases.items()] + \
            [("spark", ('unit = { id = "h", max_rows = "auto", bound_epsilon = 0.5 }\nbudget = { epsilon = 1.2 }',
                        "unit.bound_epsilon"))]:   # no share of the budget left: refused before Spark starts
        (tmp_path / "q.toml").write_text(head + '\n[statistics.n]\nkind = "count"\nepsilon = 1.0\n')
        r = runner.invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                                "--json", "--engine", engine])
        assert r.exit_code == 2, r.output
        assert key in r.output and len(r.output.strip().splitlines()) == 1, r.output
