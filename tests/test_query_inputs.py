"""The query's defects found by trying it as a new user (issue 34, item 4): each refused with
one line naming the flag or spec key, exit 2, before any noise is drawn and nothing written."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise.cli.app import app

runner = CliRunner()
SPEC = ('unit = { id = "household", max_rows = 4 }\n[statistics.t]\nkind = "sum"\ncolumn = "kwh"\n'
        'clamp = { lower = 0, upper = 4 }\nepsilon = EPS\n')


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "r.csv"
    pd.DataFrame({"household": rng.integers(0, 30, 200), "kwh": np.round(rng.uniform(0, 5, 200), 1)}).to_csv(
        path, index=False)
    return path


def _run(tmp_path, table, eps="1.0", *extra):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC.replace("EPS", eps))
    return runner.invoke(app, ["query", "--input", str(table), "--spec", str(spec), *extra])


@pytest.mark.parametrize("eps", ["710", "1e-9", "1e300", "0.0001"])
def test_extreme_epsilons_are_bad_input_naming_the_statistic(tmp_path, table, eps):
    r = _run(tmp_path, table, eps, "--output", str(tmp_path / "o.json"))
    assert r.exit_code == 2, r.output
    assert "--spec (statistics.t.epsilon)" in r.stderr and "from 0.001 to 20" in r.stderr
    assert not (tmp_path / "o.json").exists()


def test_csv_on_the_output_path_is_refused_before_any_work(tmp_path, table):
    out = tmp_path / "o.json"
    r = _run(tmp_path, table, "1.0", "--output", str(out), "--csv", str(out), "--force")
    assert r.exit_code == 2 and "--csv" in r.stderr and "other than --output" in r.stderr
    assert not out.exists()


def test_a_bad_value_names_the_input_and_the_seed_its_flag(tmp_path, table):
    bad = tmp_path / "bad.csv"
    bad.write_text("household,kwh\n1,2\n2,x\n")
    r = _run(tmp_path, bad)
    assert r.exit_code == 2 and "invalid --input (column 'kwh')" in r.stderr and "data row 2" in r.stderr
    r = _run(tmp_path, table, "1.0", "--seed", "-1")
    assert r.exit_code == 2 and "invalid --seed" in r.stderr


def test_an_empty_table_is_refused_and_a_huge_max_rows_names_it(tmp_path, table):
    empty = tmp_path / "empty.csv"
    empty.write_text("household,kwh\n")
    r = _run(tmp_path, empty)
    assert r.exit_code == 2 and "no rows" in r.stderr
    spec = tmp_path / "big.toml"
    spec.write_text(SPEC.replace("EPS", "1.0").replace("max_rows = 4", "max_rows = 100000000"))
    r = runner.invoke(app, ["query", "--input", str(table), "--spec", str(spec)])
    assert r.exit_code == 2 and "(unit.max_rows)" in r.stderr


def test_the_release_shortcut_designs_from_a_target_and_names_its_family(tmp_path):
    """``release --column --epsilon`` designs the column as a spec's column with only epsilon
    does; a family too extreme for the exact engine names --family, not a flag that does not
    exist (issue 34, item 4)."""
    path = tmp_path / "h.csv"
    pd.DataFrame({"household": range(50), "hour": [h % 24 for h in range(50)]}).to_csv(path, index=False)
    base = ["release", "--input", str(path), "--column", "hour", "--lower", "0", "--upper", "23"]
    r = runner.invoke(app, base + ["--epsilon", "1", "--output", str(tmp_path / "a.csv")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.csv.manifest.json").exists()
    r = runner.invoke(app, base + ["--family", "geometric:0.5", "--output", str(tmp_path / "b.csv")])
    assert r.exit_code == 2 and "invalid --family" in r.stderr and "--p" not in r.stderr


def test_a_block_channel_file_is_refused_by_the_release_not_placed_on_a_wrong_domain(tmp_path):
    """A per-record channel stored as a k x k core and a block map (issue 37) is sampled by
    ``sample``; the release planner reads a channel's rows as its domain, so it refuses the file
    (a column of values 0..k-1 would otherwise be released on the core's domain)."""
    mech = tmp_path / "blocks.json"
    r = runner.invoke(app, ["design", "--form", "channel", "--n", "101", "--epsilon", "1", "--per-record",
                            "--cost", "abs-error", "--output", str(mech)])
    assert r.exit_code == 0, r.output
    path = tmp_path / "v.csv"
    pd.DataFrame({"v": [i % 2 for i in range(40)]}).to_csv(path, index=False)
    r = runner.invoke(app, ["release", "--input", str(path), "--column", "v", "--mechanism", str(mech),
                            "--output", str(tmp_path / "o.csv")])
    assert r.exit_code == 2 and "block channel" in r.stderr and not (tmp_path / "o.csv").exists()


def test_report_noisy_max_states_how_often_it_names_the_true_key():
    """Its accuracy from exact laws on the --compare profiles (no data); with one key, none."""
    import warnings

    from optnoise.query import query
    frame = pd.DataFrame({"u": [1, 2, 3, 4], "h": [0, 1, 1, 2], "v": [1.0, 2.0, 1.0, 3.0]})
    stat = {"kind": "peak", "key": "h", "keys": [0, 1, 2], "of": "v", "clamp": {"lower": 0, "upper": 3},
            "method": "report-noisy-max", "epsilon": 1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = query(frame, {"unit": {"id": "u", "max_rows": 2}, "statistics": {"p": stat}}, seed=1)[
            "statistics"]["p"]["accuracy"]["p_correct"]
        one = query(frame, {"unit": {"id": "u", "max_rows": 2}, "statistics": {"p": {**stat, "keys": [0]}}},
                    seed=1)["statistics"]["p"]["accuracy"]
    assert set(acc) == {"flat", "one-peak", "two-near-tied"} and all(1 / 3 - 1e-9 <= p <= 1 for p in acc.values())
    assert one["p_correct"] is None
