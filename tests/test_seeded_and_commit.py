"""Issue 25, items 3 and 4: a seeded run says nothing of protection (command line, manifest
keys, Python warnings), and nothing fails after a release is written."""

import json
import warnings

import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise import geometric
from optnoise.cli import app
from optnoise.seeded import NOT_PRIVATE, UNSEEDED_KEY, NotPrivateWarning
from optnoise.table import release_file

runner = CliRunner()
SPEC = {"keep": ["id"], "columns": {"colour": {"domain": {"categories": ["red", "blue", "green"]}, "epsilon": 1.0},
                                    "age": {"domain": {"lower": 0, "upper": 9}, "family": "geometric:0.5", "clamp": True}}}
PROTECTION_WORDS = ("is protected", "at most a factor", "-DP", "certified")


@pytest.fixture()
def table(tmp_path):
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "colour": ["red", "blue", "green", "red"], "age": [0, 3, 9, 5]})
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "spec.toml").write_text(
        'keep = ["id"]\n[columns.colour]\ndomain = { categories = ["red", "blue", "green"] }\nepsilon = 1.0\n'
        '[columns.age]\ndomain = { lower = 0, upper = 9 }\nfamily = "geometric:0.5"\nclamp = true\n')
    return tmp_path, frame


def _release(d, *extra):
    return runner.invoke(app, ["release", "--input", str(d / "in.csv"), "--spec", str(d / "spec.toml"),
                               "--output", str(d / "out.csv"), *extra])


# ------------------------------------------------------------------ item 3: seeded means not private
def test_seeded_cli_release_says_nothing_of_protection(table):
    d, _ = table
    r = _release(d, "--seed", "1")
    assert r.exit_code == 0, r.output
    assert NOT_PRIVATE in " ".join(r.stdout.split())
    for words in PROTECTION_WORDS:
        assert words not in r.stdout, words
    man = json.loads((d / "out.csv.manifest.json").read_text())
    assert man["private"] is False and man["statement"] == NOT_PRIVATE and man["unit"]["protects"] == NOT_PRIVATE
    assert "total" not in man and UNSEEDED_KEY in man
    held = man[UNSEEDED_KEY]
    assert held["total"]["basic"]["epsilon"] > 1.0 and "only for draws" in held["note"]
    for name in ("colour", "age"):
        col = man["columns"][name]
        assert "certificate" not in col and "certificate" not in col["mechanism"]["quantized"]
        assert col["protects"] == NOT_PRIVATE
        assert held["columns"][name]["certificate"]["exact"] is True
        assert "certificate" not in held["columns"][name].get("mechanism", {}).get("quantized", {})   # stated once
    # the same release without a seed states its protection and keeps the keys in place
    r2 = _release(d, "--force")
    assert r2.exit_code == 0, r2.output
    man2 = json.loads((d / "out.csv.manifest.json").read_text())
    assert man2["private"] is True and UNSEEDED_KEY not in man2 and "total" in man2
    assert "is protected as a whole" in " ".join(r2.stdout.split()) and NOT_PRIVATE not in r2.stdout


def test_seeded_cli_sample_says_nothing_of_protection():
    r = runner.invoke(app, ["sample", "--family", "geometric:0.5", "--count", "5", "--seed", "4"])
    assert r.exit_code == 0 and NOT_PRIVATE in " ".join(r.stdout.split()) and "certified" not in r.stdout
    j = json.loads(runner.invoke(app, ["sample", "--family", "geometric:0.5", "--count", "5", "--seed", "4",
                                       "--json"]).stdout)
    assert "certificate" not in j and j[UNSEEDED_KEY]["certificate"]["exact"] is True and j["private"] is False
    plain = json.loads(runner.invoke(app, ["sample", "--family", "geometric:0.5", "--count", "5", "--json"]).stdout)
    assert "certificate" in plain and UNSEEDED_KEY not in plain


def test_python_warns_for_every_seeded_draw(table):
    d, frame = table
    g = geometric(epsilon=1.0)
    with pytest.warns(NotPrivateWarning, match="anyone who knows or guesses the seed"):
        g.sample(3, seed=1)
    with pytest.warns(NotPrivateWarning, match="Mechanism.apply"):
        g.apply([1, 2], seed=1)
    with pytest.warns(NotPrivateWarning, match="release"):
        _, man = optnoise.release(frame, SPEC, seed=1)
    assert man["statement"] == NOT_PRIVATE and "total" not in man
    with pytest.warns(NotPrivateWarning, match="release_file"):
        release_file(d / "in.csv", d / "py.csv", SPEC, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotPrivateWarning)   # and never without a seed
        g.sample(3)
        g.apply([1, 2])
        _, man = optnoise.release(frame, SPEC)
    assert man["private"] is True and "total" in man


# ------------------------------------------------------------------ item 4: nothing fails after writing
def test_epsilon_710_release_prints_without_overflow_and_exits_0(tmp_path):
    (tmp_path / "in.csv").write_text("colour\nred\nblue\nred\n")
    (tmp_path / "spec.toml").write_text('[columns.colour]\ndomain = { categories = ["red", "blue"] }\n'
                                        'epsilon = 710.0\n')
    r = runner.invoke(app, ["release", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "spec.toml"),
                            "--output", str(tmp_path / "out.csv")])
    assert r.exit_code == 0, r.output          # was: written, then exit 1 (OverflowError in e^eps)
    assert "e^710 > 1e308" in " ".join(r.stdout.split())
    man = json.loads((tmp_path / "out.csv.manifest.json").read_text())
    assert "e^710 > 1e308" in man["statement"]


def test_a_release_whose_printing_fails_leaves_no_output(table, monkeypatch):
    d, _ = table
    from optnoise.cli.commands import release as release_command

    def broken(manifest, output):
        raise RuntimeError("the printing failed")

    monkeypatch.setattr(release_command, "_render", broken)
    r = _release(d)
    assert r.exit_code == 1 and "the printing failed" in r.stderr
    assert not (d / "out.csv").exists() and not (d / "out.csv.manifest.json").exists()
    assert sorted(p.name for p in d.iterdir()) == ["in.csv", "spec.toml"]   # no temporary file either
    # the library alone: a failing words function fails the release before anything is in place
    from optnoise.publish import document as document_module
    monkeypatch.setattr(document_module, "factor", lambda eps: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        release_file(d / "in.csv", d / "lib.csv", SPEC)
    assert not (d / "lib.csv").exists() and not (d / "lib.csv.manifest.json").exists()
