"""The 18 confusing messages of issue 26, each rewritten: one line naming the flag (or the
Python parameter), the value and what is accepted, in the user's terms.

Each case is the command of the issue and the fragments its message must (and must not)
contain now; the numbers are the issue's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from optnoise.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("messages")
    (d / "d.csv").write_text("hour,cat,age\n0,a,3\n1,b,50\n")
    (d / "s4.toml").write_text("[columns.age]\ndomain = { lower = 0, upper = 1000000000 }\nepsilon = 1.0\n")
    (d / "m7.json").write_text(json.dumps({"format": "optnoise.mechanism", "format_version": 1, "kind": "channel"}))
    (d / "m8.json").write_text(json.dumps({"format": "optnoise.mechanism", "format_version": 1, "kind": "channel",
                                           "channel": [[1.0, 0.5], [0.5, 0.5]]}))
    (d / "s_wide.toml").write_text("[columns.age]\ndomain = { lower = 0, upper = 300 }\nepsilon = 0.1\n")
    (d / "s10.toml").write_text("[columns.hour]\ndomain = { lower = 0, upper = 23 }\ndelta = 0.1\n")
    (d / "s11.toml").write_text("budget = { epsilon = -1 }\n[columns.hour]\ndomain = { lower = 0, upper = 23 }\n"
                                "epsilon = 1.0\n")
    r = runner.invoke(app, ["design", "--form", "channel", "--n", "5", "--epsilon", "1", "--sd", "1", "--cost",
                            "abs-error", "--output", str(d / "ch.json")])
    assert r.exit_code == 0, r.stderr
    (d / "file").write_text("mine\n")
    return d


#: number -> (arguments, exit code, fragments that must appear, fragments that must not)
MESSAGES = {
    2: (["sample", "--family", "geometric:0.5", "--count", "3", "--epsilon", "0.1"], 2,
        ["invalid --epsilon: 0.1", "pure eps 0.693147 = ln 2 > 0.1"], ["lift", "converge"]),
    "3a": (["release", "--input", "{d.csv}", "--column", "cat", "--family", "rr", "--categories", "a,a,b",
            "--epsilon", "1", "--output", "{o3a.csv}"], 2, ["invalid --categories: a,a,b", "distinct"], ["rr:K,P"]),
    4: (["release", "--input", "{d.csv}", "--spec", "{s4.toml}", "--output", "{o4.csv}"], 2,
        ["--spec (columns.age.domain)", "1000000001 values", "half of this machine's memory"],
        ["max_memory", "columns.age.bd"]),
    5: (["verify", "--family", "geometric:0.5", "--compose", "100000000", "--delta", "1e-6", "--max-memory", "10M"],
        2, ["invalid --compose: 100000000", "composing 100000000 releases", "--max-memory raises it"],
        ["2.64 grid points"]),
    "5b": (["design", "--n", "5", "--epsilon", "1", "--delta", "1e-6", "--releases", "100000000"], 2,
           ["invalid --releases: 100000000", "composing 100000000 releases", "would take about",
            "fewer releases, or --max-seconds raises the limit"], ["grid points", "max_seconds"]),
    # --worst-case keeps the channel LP (a prior-averaged per-record request is the pure design mixed)
    "time-channel": (["design", "--form", "channel", "--n", "60", "--epsilon", "1", "--delta", "0.01",
                      "--per-record", "--worst-case"], 2, ["invalid --n: 60", "would take about", "the limit is about 5 minutes",
                                           "--max-seconds raises the limit"], ["max_seconds"]),
    "time-tiny": (["design", "--form", "channel", "--n", "30", "--epsilon", "1", "--delta", "0.01", "--per-record",
                   "--worst-case", "--max-seconds", "0.5"], 2, ["invalid --n: 30", "would take about", "the limit is under a second"],
                  []),
    "time-release": (["release", "--input", "{d.csv}", "--spec", "{s_wide.toml}", "--output", "{o_wide.csv}",
                      "--max-seconds", "1"], 2,
                     ["invalid --spec (columns.age.domain): 'integers 0..300'", "certifying column 'age' exactly",
                      "would take about", "the limit is about 1 second", "--max-seconds raises the limit"], []),
    "time-verify": (["verify", "--family", "geometric:0.99", "--bd", "400", "--exact"], 2,
                    ["invalid --bd: 400", "the exact analysis of 800 pairs", "would take about",
                     "the float analysis (without --exact), or --max-seconds raises the limit"], []),
    "time-flag": (["design", "--n", "3", "--epsilon", "1", "--max-seconds", "-3"], 2,
                  ["invalid --max-seconds: -3", "90, 90s, 5m or 1.5h"], []),
    6: (["verify", "--pmf", "1"], 2, ["invalid --pmf: 1", "at least 2 masses"], ["-0..0", "--distances"]),
    7: (["verify", "--mechanism", "{m7.json}"], 2, ["invalid --mechanism", "without key 'channel'"], ["KeyError"]),
    8: (["verify", "--mechanism", "{m8.json}"], 2, ["row 0 sums to 1.5", "rows summing to 1"],
        ["np.float64", "--normalize"]),
    9: (["design", "--n", "30", "--epsilon", "1", "--delta", "0.1", "--guarantee", "pdp", "--bd", "3",
         "--time-limit", "0.001"], 1, ["time limit reached (0.001 s)", "--time-limit"], ["None"]),
    10: (["release", "--input", "{d.csv}", "--spec", "{s10.toml}", "--output", "{o10.csv}"], 2,
         ["missing --spec (columns.hour.epsilon)", "a target epsilon > 0"], ["= None", "'columns"]),
    11: (["release", "--input", "{d.csv}", "--spec", "{s11.toml}", "--output", "{o11.csv}"], 2,
         ["invalid --spec (budget.epsilon): -1", "> 0"], ["budget.budget", "{"]),
    "12a": (["rr", "--categories", "3", "--epsilon", "-1"], 2, ["invalid --epsilon: -1", "> 0"], [">= 0"]),
    "12b": (["rr", "--categories", "3", "--epsilon", "0"], 2, ["invalid --epsilon: 0", "> 0"], [">= 0"]),
    13: (["release", "--input", "{d.csv}", "--column", "hour", "--mechanism", "{ch.json}", "--output", "{o13.csv}"],
         2, ["optnoise design --form channel --n 5 --epsilon 1 --per-record", "--unit value"], ["circular-mse"]),
    14: (["release", "--input", "{d.csv}", "--column", "hour", "--family", "geometric:0.5", "--unit", "value",
          "--output", "/proc/o14.csv"], 2, ["invalid --output: /proc/o14.csv;", "a directory this user can write to"],
         [".tmp", "manifest.json."]),
    15: (["sample", "--family", "geometric:0.5", "--answer", "3", "--count", "2"], 2,
         ["invalid --answer: 3", "no answer for additive noise", "optnoise release"], ["use apply"]),
    "18a": (["demo", "--out", "{file}"], 2, ["invalid --out", "a directory (this is a file)"], ["Errno", "I/O"]),
    "18b": (["reproduce", "kadam-table1", "--out", "{file}"], 2, ["invalid --out", "a directory (this is a file)"],
            ["Errno", "I/O"]),
}


@pytest.mark.parametrize("number", list(MESSAGES), ids=[str(k) for k in MESSAGES])
def test_message_names_the_flag_the_value_and_what_is_accepted(number, d):
    args, code, present, absent = MESSAGES[number]
    filled = [a.replace("{", str(d) + "/").replace("}", "") if a.startswith("{") else a for a in args]
    r = runner.invoke(app, filled)
    assert r.exit_code == code and r.stdout == "", (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for fragment in present:
        assert fragment in r.stderr, (fragment, r.stderr)
    for fragment in absent:
        assert fragment not in r.stderr, (fragment, r.stderr)


def test_1_a_target_only_column_is_not_told_to_give_only_the_target():
    """Message 1: optnoise built the mechanism from the target; the refusal says so, and the
    quantizer's account is given whole (the value is not cut in the middle)."""
    from optnoise import Target
    from optnoise.table.domain import Domain
    from optnoise.table.plan import refusal
    from optnoise.table.spec import ColumnSpec

    col = ColumnSpec("b", Domain(lower=0, upper=1), target=Target(0.05))
    from optnoise import Mechanism, Neighbourhood
    from optnoise.families.geometric import geometric_pmf
    mech = Mechanism(geometric_pmf(0.95), Neighbourhood.bd(1), Target(0.05), "geometric")
    account = "window -40..40 at 48 bits, 32-bit tail ratios: " + "x" * 200
    text = str(refusal(col, mech, "record", quantized=account))
    assert "give only the target" not in text and account in text and "characters)" not in text
    assert "a target optnoise can meet for this column" in text and "--unit value" in text


@pytest.mark.slow
def test_3_a_bare_family_is_calibrated_by_release_as_in_a_spec(d):
    r = runner.invoke(app, ["release", "--input", str(d / "d.csv"), "--column", "age", "--family", "geometric",
                            "--epsilon", "1", "--lower", "0", "--upper", "100", "--output", str(d / "o3b.csv"),
                            "--json"])
    assert r.exit_code == 0, r.stderr
    column = json.loads(r.stdout)["columns"]["age"]
    assert column["mechanism"]["built"] == "calibrated family" and column["certificate"]["epsilon_pure"] <= 1.0
    r = runner.invoke(app, ["sample", "--family", "geometric", "--epsilon", "1", "--count", "2"])
    assert r.exit_code == 2 and "calibrated to a target only by release" in r.stderr


def test_5_design_and_compare_name_their_releases_flag():
    """Message 5: a refusal about the number of releases names --releases in design and compare
    (their K), --compose in verify."""
    from optnoise.cli.errors import bad_input_message
    from optnoise.errors import ResourceLimitError
    exc = ResourceLimitError("k", 100000000, "a size that fits the memory limit: composing 100000000 releases ... "
                             "(max_memory raises it)", 1e12, 2**30)
    assert bad_input_message(exc, {"k": "--releases"}).startswith("invalid --releases: 100000000")
    assert bad_input_message(exc, None).startswith("invalid --compose: 100000000")
    import inspect

    from optnoise.cli.commands import compare, design
    for module in (design, compare):
        assert '"k": "--releases"' in inspect.getsource(module)


def test_16_compare_releases_labels_its_parameters():
    r = runner.invoke(app, ["compare", "--n", "5", "--sd", "1", "--epsilons", "1", "--delta", "1e-6",
                            "--releases", "1,3"])
    assert r.exit_code == 0, r.stderr
    assert "eps1=" in r.stdout and "sigma=" in r.stdout and "order =" in r.stdout.replace("\n", " ")


def test_17_text_is_never_read_as_markup():
    """Message 17: "P[q, q]" (math) and "pmf[i]" (help) print as written."""
    r = runner.invoke(app, ["design", "--form", "channel", "--n", "20", "--epsilon", "1", "--sd", "1"])
    assert r.exit_code == 0 and "P[q, q] from" in " ".join(r.stdout.split()), r.stdout
    r = runner.invoke(app, ["verify", "--help"])
    assert "pmf[i]" in r.stdout
    r = runner.invoke(app, ["design", "--help"])
    assert "P[q, y]" in " ".join(r.stdout.replace("│", " ").split())


def test_17_user_data_with_brackets_prints_as_written(tmp_path, monkeypatch):
    """A column or file name with rich markup in it ([bold], [/]) is printed as it is."""
    monkeypatch.chdir(tmp_path)   # short paths: a long temporary folder (a parallel worker's) would wrap the line
    Path("in.csv").write_text("[bold]x[/],y\n0,a\n1,b\n")
    r = runner.invoke(app, ["release", "--input", "in.csv", "--column", "[bold]x[/]", "--family",
                            "geometric:0.5", "--unit", "value", "--output", "[red]o.csv"])
    assert r.exit_code == 0, r.stderr
    flat = " ".join(r.stdout.replace("│", " ").split())
    assert "[bold]x[/]" in flat and "[red]o.csv" in flat


def test_time_is_refused_before_it_starts_in_the_library():
    """Time is a resource like memory (issue 26, item 2): the estimate is compared with
    ``max_seconds`` before the LP is built, and the error names it, the limit and the way out."""
    from optnoise import Target
    from optnoise.design import Request, design
    from optnoise.errors import OptnoiseError, TimeLimitError
    from optnoise.resources import format_seconds, lp_seconds, parse_seconds
    with pytest.raises(TimeLimitError) as info:
        design(Request(space="channel", n=30, target=Target(1.0, 0.01), unit="record", worst_case=True,
                       max_seconds=0.01))   # the worst case keeps the channel LP
    exc = info.value
    assert isinstance(exc, OptnoiseError) and exc.parameter == "n" and exc.limit == 0.01
    assert exc.estimate > 0.01 and format_seconds(exc.estimate) in str(exc) and "max_seconds raises" in str(exc)
    assert lp_seconds(2e4, milp=True) == 10 * lp_seconds(2e4)   # the MILP is estimated ten times the LP
    assert (parse_seconds("90"), parse_seconds("5m"), parse_seconds("1.5h")) == (90.0, 300.0, 5400.0)


def test_plot_functions_follow_the_output_rule(tmp_path):
    """Every public plot_* function refuses an existing file unless force=True, as the
    command line does without --force (issue 26, item 5's leftover)."""
    import inspect

    import numpy as np

    from optnoise import plots
    from optnoise.errors import InvalidParameterError
    public = [f for name, f in inspect.getmembers(plots, inspect.isfunction) if name.startswith("plot_")]
    assert public and all("force" in inspect.signature(f).parameters for f in public)
    path = tmp_path / "pmf.png"
    path.write_bytes(b"not a figure")
    with pytest.raises(InvalidParameterError, match="force=True replaces it"):
        plots.plot_pmf(np.array([0.5, 0.5]), path)
    assert path.read_bytes() == b"not a figure"
    plots.plot_pmf(np.array([0.5, 0.5]), path, force=True)
    assert path.read_bytes()[:4] == b"\x89PNG"
