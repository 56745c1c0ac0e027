"""The privacy ledger (``optnoise.publish.ledger``, docs/ledger.md): a round trip through init,
runs, show and verify (Python and the command line); the total is the composition of the
stored mechanisms, computed here independently; refusal before the budget is exceeded, with
nothing stored; 8 processes racing for a budget that admits 3; 50 runs killed with SIGKILL
across reserve, draw, write and delivered; damaged, foreign, newer and read-only files refused
with one line. The stress version is bench/ledger_stress.py.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
import sys
import zlib
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.analysis import privacy_profile
from optnoise.analysis.composition import compose_sequence
from optnoise.cli import app
from optnoise.errors import InvalidParameterError, OptnoiseError
from optnoise.publish.ledger import SCHEMA_VERSION, Ledger, LedgerMismatchError
from optnoise.publish.spend import Part, Spend
from optnoise.target import Target

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import ledger_stress  # noqa: E402  (the race and kill drivers, shared with the stress run)

DATASET, UNIT = "survey", "household"
runner = CliRunner()


def spend(*parts, **kw) -> Spend:
    return Spend(list(parts), dataset=DATASET, unit=UNIT, **kw)


@pytest.fixture(scope="module")
def geo3():
    return optnoise.geometric(epsilon=3.0)


def exact_of(mechanism):
    """The exact profile of the weights that are sampled, computed here from the quantized PMF."""
    return privacy_profile(mechanism.quantize().pmf, mechanism.neighbourhood, exact=True)


def test_init_runs_show_verify_round_trip(tmp_path, geo3):
    path = tmp_path / "l.db"
    ledger = Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(8.0, 1e-6))
    first = ledger.reserve(spend((geo3, 1), spec_sha256="a" * 64, statistics=["employed"], audit={"rows": 5400}))
    ledger.delivered(first.run_id)
    ledger.delivered(first.run_id)   # idempotent
    second = ledger.reserve(spend((geo3, 1), statistics=["employed"]))   # never delivered: still counts
    doc = Ledger(path, write=False).show()
    assert [r["state"] for r in doc["runs"]] == ["delivered", "reserved"] and doc["undelivered"] == 1
    assert [r["run_id"] for r in doc["runs"]] == [first.run_id, second.run_id]
    assert doc["runs"][0]["spec_sha256"] == "a" * 64 and doc["runs"][0]["statistics"] == ["employed"]
    assert [r["total"]["basic"]["epsilon"] for r in doc["runs"]] == [3.0, 6.0]
    assert [r["spend"]["basic"] for r in doc["runs"]] == [{"epsilon": 3.0, "delta": 0.0}] * 2
    assert "audit" not in doc["runs"][0] and ledger.show(audit=True)["runs"][0]["audit"] == {"rows": 5400}
    pld = doc["total"]["pld"]["epsilon"]
    assert pld <= 6.0 and doc["remaining"]["epsilon"] <= 8.0 - pld < doc["remaining"]["epsilon"] + 1e-12
    assert 0 < doc["total"]["attack"]["tpr_at_fpr"]["0.05"] <= 1
    report = ledger.verify()
    assert report["ok"] and report["runs"] == 2 and report["delivered"] == 1 and report["mechanisms"] == 1
    shown = runner.invoke(app, ["ledger", "show", str(path), "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["runs"][1]["run_id"] == second.run_id
    human = runner.invoke(app, ["ledger", "show", str(path)])
    assert human.exit_code == 0 and "employed" in human.stdout and max(map(len, human.stdout.splitlines())) <= 80
    checked = runner.invoke(app, ["ledger", "verify", str(path), "--json"])
    assert checked.exit_code == 0 and json.loads(checked.stdout)["ok"] is True


def test_the_total_is_the_composition_of_the_stored_mechanisms(tmp_path):
    """Two runs: (a twice, b once), then (a once), with a a discrete Gaussian (no pure epsilon:
    the PLD decides) and b a geometric. The ledger's PLD total equals composing the same exact
    profiles directly (a's parts from two runs: one item of count 3 whose releases may see
    different pairs); basic is the exact sum of the parts' (epsilon, delta) rounded up to the
    next float."""
    from optnoise.mechanism import from_family
    a, b = from_family("discrete-gaussian:3.0"), optnoise.geometric(epsilon=0.4, sensitivity=2)
    pa, pb = exact_of(a), exact_of(b)
    eps_a = pa.epsilon_dp(1e-7)
    ledger = Ledger.init(tmp_path / "l.db", dataset=DATASET, unit=UNIT, budget=Target(10.0, 1e-6))
    one = ledger.reserve(spend(Part(a, 2, epsilon_delta=(eps_a, 1e-7)), Part(b, 1)))
    direct = compose_sequence([(pa, 2), (pb, 1)], epsilon=10.0, delta=1e-6)
    assert one.total["pld"]["bound"] != "pure" and one.total["pld"]["epsilon"] == direct.epsilon_dp
    assert one.total["pld"]["delta_at_budget_epsilon"] == direct.delta_dp
    two = ledger.reserve(spend(Part(a, 1, epsilon_delta=(eps_a, 1e-7))))
    direct = compose_sequence([(pa, 3), (pb, 1)], epsilon=10.0, delta=1e-6, mixed=[True, False])
    assert two.total["pld"]["epsilon"] == direct.epsilon_dp
    exact_eps, exact_delta = 3 * Fraction(eps_a) + Fraction(0.4), 3 * Fraction(1e-7)
    basic = two.total["basic"]
    assert Fraction(basic["epsilon"]) >= exact_eps > Fraction(math.nextafter(basic["epsilon"], 0.0))
    assert Fraction(basic["delta"]) >= exact_delta > Fraction(math.nextafter(basic["delta"], 0.0))
    assert two.total["parts"] == 4 and ledger.verify()["ok"]


def test_pure_spends_skip_only_what_cannot_beat_the_pure_sum(tmp_path, geo3):
    """Pure parts: the PLD entry is the pure sum (exact, rounded up) when no other bound could
    lower it by more than 0.1 %; the full composition, computed here, is indeed within that."""
    ledger = Ledger.init(tmp_path / "l.db", dataset=DATASET, unit=UNIT, budget=Target(10.0, 1e-6))
    ledger.reserve(spend((geo3, 1)))
    two = ledger.reserve(spend((geo3, 1)))
    pure = float(2 * Fraction(exact_of(geo3).epsilon_pure))
    assert two.total["pld"]["bound"] == "pure" and two.total["pld"]["epsilon"] >= pure
    full = compose_sequence([(exact_of(geo3), 2)], epsilon=10.0, delta=1e-6, mixed=[True]).epsilon_dp
    assert (1 - 1e-3) * two.total["pld"]["epsilon"] <= full <= two.total["pld"]["epsilon"]


def test_refused_before_the_budget_is_exceeded_and_nothing_stored(tmp_path, geo3):
    path = tmp_path / "l.db"
    ledger = Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(8.0, 1e-6))
    for _ in range(2):
        ledger.reserve(spend((geo3, 1)))
    with pytest.raises(InvalidParameterError, match=r"what remains: eps 2(\.0*\d*)? at delta 1e-06") as exc:
        ledger.reserve(spend((geo3, 1)))
    assert str(path) in str(exc.value) and "\n" not in str(exc.value) and "nothing was recorded" in str(exc.value)
    for wrong in (dict(dataset="other", unit=UNIT), dict(dataset=DATASET, unit="person")):
        with pytest.raises(InvalidParameterError, match="this one records"):
            ledger.reserve(Spend([(geo3, 1)], **wrong))
    assert len(ledger.runs()) == 2 and ledger.verify()["ok"]
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


@pytest.mark.slow
def test_eight_processes_race_for_a_budget_that_admits_three(tmp_path):
    """Fresh interpreters (spawn) released together at a barrier: exactly 3 recorded."""
    out = ledger_stress.race(tmp_path / "race.db", processes=8, admits=3)
    assert len(out["recorded"]) == 3 and len(out["refused"]) == 5 and out["exit_codes"] == [0] * 8, out["failed"]
    assert all("lifetime budget" in m for m in out["refused"])
    ledger = Ledger(tmp_path / "race.db", write=False)
    assert sorted(r["run_id"] for r in ledger.runs()) == sorted(out["recorded"]) and ledger.verify()["ok"]


def test_a_lock_held_past_the_timeout_is_one_line_and_records_nothing(tmp_path, geo3):
    path = tmp_path / "l.db"
    Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(10.0))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")   # another run's transaction
    try:
        with pytest.raises(OptnoiseError, match="database is locked for 0.2 s: another run holds it") as exc:
            Ledger(path, timeout=0.2).reserve(spend((geo3, 1)))
        assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert Ledger(path).runs() == []


@pytest.mark.slow
def test_fifty_runs_killed_at_random_points_leave_a_ledger_that_verifies(tmp_path):
    """SIGKILL of a run at random points of reserve, draw, write and delivered: every ledger
    verifies, no output exists without its recorded spend, no delivered run lacks its output."""
    out = ledger_stress.kill(tmp_path, kills=50, concurrent=5, per_ledger=1, seed=7)
    assert out["killed"] >= 50
    # each child is armed at one of 4 phases drawn at random (a kill armed at the draw lands in
    # the draw or the write): the kills land in at least reserve, draw and delivered
    assert len(out["phases"]) >= 3, out["phases"]
    after = ledger_stress.check_after_kills(tmp_path)
    assert after["ledgers"] == out["ledgers"] and after["runs"] >= after["outputs"] > 0
    assert after["outputs_without_spend"] == [] and after["delivered_without_output"] == []


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "corrupted":
        path.write_bytes(data[:4096] + bytes(b ^ 0x5A for b in data[4096:8192]) + data[8192:])
    elif how == "header":
        path.write_bytes(b"SQLite format 2\x00" + data[16:])


@pytest.mark.parametrize("how, words", [("truncated", "corrupted or truncated"),
                                        ("corrupted", "corrupted or truncated"),
                                        ("header", "not an SQLite file")])
def test_a_damaged_ledger_is_refused_with_one_line(tmp_path, geo3, how, words):
    path = tmp_path / "l.db"
    ledger = Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(100.0))
    for _ in range(3):
        ledger.reserve(spend((geo3, 1), audit={"pad": "x" * 3000}))
    _damage(path, how)
    with pytest.raises(InvalidParameterError, match=words) as exc:
        Ledger(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    r = runner.invoke(app, ["ledger", "show", str(path)])
    assert r.exit_code == 2 and r.stderr.startswith("error: invalid ledger") and r.stderr.count("\n") == 1


def test_foreign_newer_and_read_only_ledgers_are_refused(tmp_path, geo3):
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    with pytest.raises(InvalidParameterError, match="another SQLite database"):
        Ledger(foreign)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(InvalidParameterError, match="an empty file"):
        Ledger(empty)
    newer = tmp_path / "newer.db"
    Ledger.init(newer, dataset=DATASET, unit=UNIT, budget=Target(8.0))
    with sqlite3.connect(newer) as con:
        con.execute(f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    with pytest.raises(InvalidParameterError, match="newer optnoise"):
        Ledger(newer)
    path = tmp_path / "l.db"
    Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(8.0))
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP)
    with pytest.raises(InvalidParameterError, match="read-only") as exc:
        Ledger(path)   # a run opens it for writing: refused before any work
    assert str(path) in str(exc.value)
    assert Ledger(path, write=False).show()["runs"] == []   # reading it is fine
    with pytest.raises(InvalidParameterError, match="never replaced"):
        Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(8.0))


def test_verify_finds_a_total_that_was_edited(tmp_path, geo3):
    path = tmp_path / "l.db"
    ledger = Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(8.0, 1e-6))
    ledger.reserve(spend((geo3, 1)))
    ledger.reserve(spend((geo3, 1)))
    with sqlite3.connect(path) as con:
        total = json.loads(con.execute("SELECT total FROM runs WHERE seq = 2").fetchone()[0])
        total["basic"]["epsilon"] = 5.0   # under-reported
        con.execute("UPDATE runs SET total = ? WHERE seq = 2", (json.dumps(total),))
    with pytest.raises(LedgerMismatchError, match=r"run 2 .*total\.basic\.epsilon stored 5\.0, recomputed 6\.0"):
        Ledger(path, write=False).verify()
    r = runner.invoke(app, ["ledger", "verify", str(path)])
    assert r.exit_code == 1 and r.stderr.startswith("error: ledger") and r.stderr.count("\n") == 1


def test_a_mechanism_that_no_longer_rebuilds_its_weights_stops_runs_and_fails_verify(tmp_path, geo3):
    """The total must compose what was sampled: a stored weights digest that the stored
    mechanism no longer reproduces (as a changed quantizer would) refuses the next run, and a
    mechanism whose JSON was edited fails verify."""
    path = tmp_path / "l.db"
    Ledger.init(path, dataset=DATASET, unit=UNIT, budget=Target(100.0)).reserve(spend((geo3, 1)))
    with sqlite3.connect(path) as con:
        parts = json.loads(con.execute("SELECT parts FROM runs").fetchone()[0])
        parts[0]["weights_sha256"] = "0" * 64
        con.execute("UPDATE runs SET parts = ?", (json.dumps(parts),))
    with pytest.raises(OptnoiseError, match="no longer quantizes to the weights that were certified"):
        Ledger(path).reserve(spend((geo3, 1)))
    report = Ledger(path, write=False).verify(strict=False)
    assert not report["ok"] and "no longer quantizes" in report["mismatches"][0]
    with sqlite3.connect(path) as con:
        con.execute("UPDATE mechanisms SET body = ?", (zlib.compress(b'{"edited": true}'),))
    with pytest.raises(LedgerMismatchError, match="does not have this digest"):
        Ledger(path, write=False).verify()


def test_cli_init_and_its_bad_input(tmp_path):
    path = tmp_path / "l.db"
    r = runner.invoke(app, ["ledger", "init", str(path), "--dataset", DATASET, "--unit", UNIT,
                            "--max-tpr", "0.5", "--at-fpr", "0.05", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["budget"]["max_tpr"] == 0.5
    assert Ledger(path).budget == Target.attack(max_tpr=0.5, at_fpr=0.05)
    for args, flag in ((["--budget-epsilon", "1", "--max-tpr", "0.5", "--at-fpr", "0.05"], "--budget-epsilon"),
                       ([], "--budget-epsilon"), (["--budget-epsilon", "-1"], "--budget-epsilon"),
                       (["--budget-epsilon", "1", "--budget-delta", "2"], "--budget-delta")):
        r = runner.invoke(app, ["ledger", "init", str(tmp_path / "m.db"), "--dataset", DATASET, "--unit", UNIT, *args])
        assert r.exit_code == 2 and flag in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "m.db").exists()


def test_an_attack_budget_refuses_by_the_readout(tmp_path, geo3):
    """At eps 3 the best attacker's TPR at FPR 0.01 is at most e^3 * 0.01 = 0.2009 for one run
    and above 0.3 for two (the pure closed form min(e^eps a, 1 - e^-eps (1 - a)) at eps 6)."""
    ledger = Ledger.init(tmp_path / "l.db", dataset=DATASET, unit=UNIT,
                         budget=Target.attack(max_tpr=0.3, at_fpr=0.01))
    one = ledger.reserve(spend((geo3, 1)))
    assert one.total["attack"]["tpr_at_fpr"]["0.01"] <= 0.2009
    with pytest.raises(InvalidParameterError, match="headroom TPR"):
        ledger.reserve(spend((geo3, 1)))
    assert len(ledger.runs()) == 1
