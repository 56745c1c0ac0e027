"""A query charged to the dataset's ledger (issue 34, item 2): recorded before any noise is
drawn, refused above the lifetime budget with nothing drawn or written, the same parts the
unit's total composes; the CLI and Python doors alike."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.publish.ledger import Ledger
from optnoise.query import query
from optnoise.target import Target

warnings.filterwarnings("ignore", message=".*not private.*")
runner = CliRunner()
SPEC = ('unit = { id = "household", max_rows = 4 }\n[statistics.evening]\nkind = "count"\n'
        'where = { hour = { lower = 17 } }\nepsilon = 3\n')


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(4)
    pd.DataFrame({"household": rng.integers(0, 40, 200), "hour": rng.integers(0, 24, 200)}).to_csv(
        tmp_path / "readings.csv", index=False)
    (tmp_path / "month.toml").write_text(SPEC)
    Ledger.init(tmp_path / "meters.db", dataset="meters", unit="household", budget=Target(8.0))
    return tmp_path


def _run(d, n):
    return runner.invoke(app, ["query", "--input", str(d / "readings.csv"), "--spec", str(d / "month.toml"),
                               "--ledger", str(d / "meters.db"), "--output", str(d / f"month{n}.json")])


def test_three_monthly_runs_the_third_refused_before_any_noise(files):
    assert _run(files, 1).exit_code == 0 and _run(files, 2).exit_code == 0
    third = _run(files, 3)
    assert third.exit_code == 2 and "--ledger" in third.stderr and "what remains: eps 2" in third.stderr
    assert not (files / "month3.json").exists()
    book = Ledger(files / "meters.db")
    runs = book.runs()
    assert [r["state"] for r in runs] == ["delivered", "delivered"]
    report = book.verify()
    assert report["ok"] and not report["mismatches"]
    doc = json.loads((files / "month2.json").read_text())
    assert doc["total"]["basic"]["epsilon"] == 3.0   # each run's own total; the ledger holds the lifetime one


def test_a_ledger_of_another_unit_is_refused_before_any_work(files):
    other = files / "other.db"
    Ledger.init(other, dataset="meters", unit="meter", budget=Target(8.0))
    r = runner.invoke(app, ["query", "--input", str(files / "readings.csv"), "--spec", str(files / "month.toml"),
                            "--ledger", str(other), "--output", str(files / "x.json")])
    assert r.exit_code == 2 and "--ledger" in r.stderr and not (files / "x.json").exists()
    assert Ledger(other).runs() == []


def test_the_python_door_charges_the_same_ledger(files):
    frame = pd.read_csv(files / "readings.csv")
    spec = {"unit": {"id": "household", "max_rows": 4},
            "statistics": {"evening": {"kind": "count", "where": {"hour": {"lower": 17}}, "epsilon": 3}}}
    book = Ledger(files / "meters.db")
    doc, audit = query(frame, spec, ledger=book, with_audit=True)
    assert audit["ledger"]["total"]["basic"]["epsilon"] == 3.0 and doc["statistics"]["evening"]["value"] >= 0
    query(frame, spec, ledger=book)
    with pytest.raises(InvalidParameterError):
        query(frame, spec, ledger=book)
    assert len(book.runs()) == 2


def test_a_release_is_charged_to_its_ledger_too(files):
    """``release --ledger``: the columns' spend recorded before any noise, the third release of
    eps 3 refused with nothing written."""
    pd.DataFrame({"household": range(30), "hour": [h % 24 for h in range(30)]}).to_csv(files / "h.csv", index=False)
    book = files / "record.db"
    Ledger.init(book, dataset="households", unit="record", budget=Target(8.0))
    (files / "r.toml").write_text('keep = ["household"]\n[columns.hour]\n'
                                  'domain = { lower = 0, upper = 23, cyclic = true }\nepsilon = 3\n')

    def release(n):
        return runner.invoke(app, ["release", "--input", str(files / "h.csv"), "--spec", str(files / "r.toml"),
                                   "--ledger", str(book), "--output", str(files / f"out{n}.csv")])
    assert release(1).exit_code == 0 and release(2).exit_code == 0
    third = release(3)
    assert third.exit_code == 2 and "--ledger" in third.stderr and not (files / "out3.csv").exists()
    assert [r["state"] for r in Ledger(book).runs()] == ["delivered", "delivered"]


def test_the_spec_may_name_its_ledger(files):
    (files / "named.toml").write_text(f'ledger = "{files / "meters.db"}"\n' + SPEC)
    r = runner.invoke(app, ["query", "--input", str(files / "readings.csv"), "--spec", str(files / "named.toml"),
                            "--output", str(files / "named.json")])
    assert r.exit_code == 0, r.output
    assert len(Ledger(files / "meters.db").runs()) == 1


FOUND = ('unit = { id = "household", max_rows = 4 }\n[statistics.hours]\nkind = "histogram"\nkey = "hour"\n'
         'keys = "from-data"\nepsilon = 1\ndelta = 1e-6\n')


def _found_run(d, book, n, spec="found.toml"):
    return runner.invoke(app, ["query", "--input", str(d / "readings.csv"), "--spec", str(d / spec),
                               "--ledger", str(d / book), "--output", str(d / f"found{n}.json")])


def test_a_selection_is_recorded_and_the_ledger_total_is_the_documents(files):
    """Keys found in the data with a ledger (issue 36): the run's selection is stored as a shift;
    the ledger's total (show and verify, recomputed from the stored parts and shifts) equals the
    document's total -- basic and PLD, with the selection's (epsilon, delta) added."""
    (files / "found.toml").write_text(FOUND)
    Ledger.init(files / "found.db", dataset="meters", unit="household", budget=Target(8.0, 1e-5))
    r = _found_run(files, "found.db", 1)
    assert r.exit_code == 0, r.output
    doc = json.loads((files / "found1.json").read_text())
    total = doc["total"]
    assert total["selection"]["delta"] > 0
    book = Ledger(files / "found.db", write=False)
    shown = book.show()
    run = shown["runs"][0]
    assert run["shifts"] == [{"epsilon": total["selection"]["epsilon"], "delta": total["selection"]["delta"],
                              "about": "selection"}]
    assert run["total"]["basic"] == total["basic"] and run["spend"]["basic"] == total["basic"]
    assert run["total"]["pld"]["epsilon"] == total["pld"]["epsilon"]
    report = book.verify()
    assert report["ok"] and report["total"]["basic"] == total["basic"]
    assert report["total"]["pld"]["epsilon"] == total["pld"]["epsilon"]
    r = runner.invoke(app, ["ledger", "show", str(files / "found.db")])
    assert r.exit_code == 0 and "hours" in r.stdout


def test_the_budget_refusal_counts_the_selections_shift(files):
    """A lifetime delta that admits the cells (pure) but not the selection's delta: refused before
    any noise, nothing recorded -- without the shift it would have passed."""
    (files / "found.toml").write_text(FOUND)
    Ledger.init(files / "tight.db", dataset="meters", unit="household", budget=Target(8.0, 1e-7))
    r = _found_run(files, "tight.db", 1)
    assert r.exit_code == 2 and "--ledger" in r.stderr and "nothing was recorded" in r.stderr
    assert not (files / "found1.json").exists() and Ledger(files / "tight.db").runs() == []
    (files / "wide.toml").write_text(FOUND.replace("delta = 1e-6", "delta = 1e-8"))
    assert _found_run(files, "tight.db", 2, "wide.toml").exit_code == 0


def test_an_auto_bound_is_recorded_with_its_histograms_spend(files):
    """``max_rows = "auto"`` with a ledger: the bound's histogram cells and the statistic (by
    its declared target) are recorded; the ledger's total equals the document's."""
    (files / "auto.toml").write_text('unit = { id = "household", max_rows = "auto", bound_epsilon = 0.5, '
                                     'max_rows_cap = 16 }\n[statistics.evening]\nkind = "count"\nof = "rows"\n'
                                     'where = { hour = { lower = 17 } }\nepsilon = 3\n')
    r = _found_run(files, "meters.db", 1, "auto.toml")
    assert r.exit_code == 0, r.output
    total = json.loads((files / "found1.json").read_text())["total"]
    assert total["basic"]["epsilon"] == 3.5
    book = Ledger(files / "meters.db", write=False)
    assert book.show()["total"]["basic"] == total["basic"] and book.verify()["ok"]
    assert _found_run(files, "meters.db", 2, "auto.toml").exit_code == 0
    third = _found_run(files, "meters.db", 3, "auto.toml")   # 3 x 3.5 > 8: refused, 1 left
    assert third.exit_code == 2 and "what remains: eps 1" in third.stderr and not (files / "found3.json").exists()


def test_a_version_1_ledger_is_read_as_it_is_and_migrated_when_a_run_writes(files):
    """Schema 1 (before shifts): read only, its runs show with no shifts; opened for a run, it is
    migrated in one transaction to the current version, and its old runs still verify."""
    import sqlite3
    from optnoise.publish.ledger import SCHEMA_VERSION
    assert _run(files, 1).exit_code == 0
    path = files / "meters.db"
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE runs DROP COLUMN shifts")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    old = Ledger(path, write=False)
    assert old.show()["schema_version"] == 1 and old.runs()[0]["shifts"] == [] and old.verify()["ok"]
    Ledger(path)   # opened for writing: migrated
    assert Ledger(path, write=False).show()["schema_version"] == SCHEMA_VERSION
    assert _run(files, 2).exit_code == 0
    report = Ledger(path, write=False).verify()
    assert report["ok"] and report["runs"] == 2


def _open_for_writing(path, start):
    start.wait()
    Ledger(path)


def test_processes_opening_one_version_1_ledger_at_once_migrate_it_once(files):
    """Four processes open a schema-1 file for writing at the same instant: each migration reads
    the version inside its own immediate transaction, so the column is added once, every process
    opens the file, and it verifies."""
    import multiprocessing as mp
    import sqlite3
    from optnoise.publish.ledger import SCHEMA_VERSION
    assert _run(files, 1).exit_code == 0
    path = files / "meters.db"
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE runs DROP COLUMN shifts")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    ctx = mp.get_context("fork")
    start = ctx.Barrier(4)
    procs = [ctx.Process(target=_open_for_writing, args=(path, start)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with sqlite3.connect(path) as con:
        columns = [row[1] for row in con.execute("PRAGMA table_info(runs)")]
    assert columns.count("shifts") == 1
    book = Ledger(path, write=False)
    assert book.show()["schema_version"] == SCHEMA_VERSION and book.verify()["ok"]
