"""Fuzzing the command-line contract (docs/cli.md): every argument list gets a clear answer.

Hypothesis builds argument lists for every command from pools of awkward values -- huge,
tiny, zero, negative, NaN, inf, non-numeric, empty and conflicting values, and malformed,
empty, binary and directory inputs -- and runs them in-process (``CliRunner``), a few as
real processes under an address-space limit. The contract checked on every run:

* exit code 0, 1 or 2, and never a traceback nor the last-resort "unexpected failure"
  (every failure is one the code knows about);
* on failure: nothing on stdout and exactly one line on stderr, ``error: ...``;
* with ``--json`` on success: exactly one JSON object on stdout;
* bounded time: a per-example ``deadline``; the generated sizes are small where success
  would be slow, and huge ones must be refused by the resource guards;
* nothing lost (issue 26): no file of the fixture changes, except one named as an output
  with ``--force`` that the command does not also read.

Below the generated cases, the cases of issue 26 one by one: an existing output for every
command that writes, an output that is an input by any path, every kind of bad file,
closed and full stdout, the Python API's bad arguments, hand-edited mechanism files.

Reproducible: ``derandomize=True`` and no example database (the same cases on every run).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from optnoise.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

FUZZ = settings(derandomize=True, database=None, deadline=timedelta(seconds=45), print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

# ------------------------------------------------------------------ value pools
# Each option draws from a pool of values that work (small sizes: success stays fast) four
# times in five, and from a pool of awkward values otherwise.
NUMBERS = ["0", "-1", "1e-300", "5e-324", "1e308", "1e400", "-1e308", "nan", "inf", "-inf", "abc", "", " ", "1,2",
           "0x10", "1e30", "800", "1e-5"]
COUNTS = ["0", "-1", "1000000000", "1e3", "2.5", "abc", "", "nan", "-0", "99999999999999999999999"]
PMFS = ["0.5,-0.5,1", "1e400,1", "nan,1", "", ",", "a,b", "1/0,1", "0.5;0.5", "1e-99999999,1", "0.5,0.4", "0",
        "[b]x[/b],1", "0.5,0.5\n", "1e9999999999"]
FAMILIES = ["geometric:1.5", "geometric", "discrete-gaussian:1e9", "discrete-gaussian:2,1e18", "rr:1e12,0.1", "rr:3,5",
            "staircase:1,1e9,1", "qin-uniform:-1e12,1e12", "exponential:1e9,1", "laplace:1", "", ":", "geometric:nan",
            "qin-gaussian:1e9", "qin-laplace:1e308", "qin-exponential:0", "geometric:0.5,1,2"]
GOOD_FAMILIES = ["geometric:0.5", "discrete-gaussian:2", "rr:3,0.2", "staircase:1,3,2", "qin-uniform:0,3",
                 "hamming:1,2,1", "exponential:4,1", "qin-staircase:2,0.5", "qin-laplace:2"]
DISTANCES = ["0", "-0..0", "1,0;0,1", "x", "", "1..1000000000", "5..1", "1;2", "99999999999999999999", "-1"]
COSTS = ["pow:-1", "pow:1e308", "x", "", "pow:"]
GOOD_COSTS = ["er", "mse", "sq", "abs", "circular-mse", "circular-abs", "pow:3"]
MEMORY = ["1", "abc", "0", "-5G", "1e999G", "100M"]
#: --max-seconds (issue 26: time is a resource like memory): bad values, and a tiny limit that refuses by estimate.
SECONDS = ["0", "-1", "abc", "1e999", "nan", "", "5x", "0.0001"]
#: Placeholders for the files made by the ``files`` fixture.
GOOD_FILES = ["{pmf.json}", "{pmf.csv}", "{pmf.npy}", "{third.csv}", "{design.json}", "{stair.json}", "{channel.json}"]
#: Hand-edited mechanism files (issue 26): each part disagrees with another.
EDITED = ["{edited_exact.json}", "{edited_shape.json}", "{edited_kind.json}", "{edited_kind2.json}",
          "{no_channel.json}", "{rows15.json}", "{latin1.csv}", "{ragged.csv}"]
FILES = ["{empty.csv}", "{binary.dat}", "{dir}", "{missing.json}", "{fields.csv}", "{etamass.csv}", "{offset_x.json}",
         "{guarantee_x.json}", "{nested.json}", "{nan.json}", "{huge.json}", "{deep.json}", "{npy2d.npy}",
         "{npybad.npy}", "{costs.txt}", "{strings.json}", "{tail_x.json}", *EDITED]
#: Outputs: bad paths, existing files (kept unless --force) and files the command may read.
OUTPUTS = ["{dir}", "{pmf.csv}/o.json", "", "{out}/o.txt", "{keep.json}", "{keep.csv}", "{pmf.csv}", "{design.json}",
           "{data.csv}", "/proc/o.json"]
#: Input tables that are not: bad encodings, ragged rows, a repeated header, a cut Parquet file.
BAD_TABLES = ["{pmf.json}", "{empty.csv}", "{binary.dat}", "{dir}", "{missing.json}", "{latin1.csv}", "{ragged.csv}",
              "{dup.csv}", "{trunc.parquet}", "{binary.csv}"]

#: Query specs that are not: TOML syntax, an unknown column, max_rows 0, a budget exceeded, a
#: sum of a text column, a histogram without keys, not TOML at all.
QUERY_SPECS = ["{badspec.toml}", "{qcolumn.toml}", "{qrows.toml}", "{qbudget.toml}", "{qtext.toml}", "{qkeys.toml}",
               "{binary.toml}", "{pmf.json}", "{dir}", "{missing.json}", "{spec.toml}"]

EPS = (["1", "0.5", "2"], NUMBERS)
DELTA = (["0", "0.1"], NUMBERS)
SMALL = (["1", "2", "3"], COUNTS)
NB = {"--distances": (["1", "1..2", "1,1"], DISTANCES), "--sd": (["1", "2"], COUNTS), "--bd": (["1", "2"], COUNTS),
      "--directed": None}
TARGET = {"--epsilon": EPS, "--delta": DELTA, "--guarantee": (["dp", "pdp"], ["x", ""])}
OUT = (["{out}/o.json"], OUTPUTS)
PLOT = (["{out}/p.png"], ["{out}/p.jpg", "{dir}", "", "{pngdir.png}", "{pmf.csv}/p.png", "{keep.png}"])

#: command -> (options always given, optional options); a pool of None is a flag.
COMMANDS: dict[str, tuple[dict, dict]] = {
    "verify": ({}, {"--pmf": (["0.5,0.25,0.25", "0.3333333333333333,0.3333333333333333,0.3333333333333333",
                               "1/3,1/3,1/3", "0,0,1"], PMFS),
                    "--pmf-file": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                    "--mechanism": (GOOD_FILES, FILES), "--space": (["cyclic", "integer"], ["torus", ""]),
                    "--offset": (["0", "1"], COUNTS), "--normalize": None, "--epsilon": EPS, "--delta": DELTA,
                    "--compose": (["2", "3"], COUNTS), "--exact": None, "--max-memory": (["1G"], MEMORY),
                    "--max-seconds": (["300", "5m"], SECONDS),
                    "--renyi": (["2", "1.5,2,inf"], ["0.5", "x", "", "1", "-2", "nan", "1e308"]),
                    "--output": OUT, "--plot": PLOT, "--force": None, **NB}),
    "design": ({"--n": SMALL, "--epsilon": EPS},
               {"--delta": DELTA, "--guarantee": TARGET["--guarantee"], "--cost": (GOOD_COSTS, COSTS),
                "--cost-file": (["{costs.txt}", "{pmf.json}"], FILES), "--minimize": (["cost", "delta"], ["x"]),
                "--max-cost": (["0.5", "2"], NUMBERS), "--formulation": (["standard", "paper"], ["x"]),
                "--time-limit": (["30"], NUMBERS), "--max-memory": (["1G"], MEMORY), "--output": OUT,
                "--max-seconds": (["300", "5m"], SECONDS), "--plot": PLOT, "--form": (["noise", "channel"], ["x", ""]),
                "--constraints": (["row-monotone", "fair,weak-honest"], ["x", "", "unbiased,fair"]),
                "--prior": (["uniform", "{pmf.json}"], ["x", "{binary.dat}", "{dir}", ""]), "--worst-case": None,
                "--per-record": None, "--releases": (["1", "3"], COUNTS), "--force": None,
                "--space": (["cyclic", "integer"], ["x"]), **NB}),
    "staircase": ({"--epsilon": EPS},
                  {"--sensitivity": (["1", "2", "3"], NUMBERS), "--cost": (["abs", "sq", "pow:3"], COSTS),
                   "--discrete": None, "--gamma": (["0.25", "0", "1"], NUMBERS), "--r": (["1", "2"], COUNTS),
                   "--lp": None, "--output": OUT, "--max-memory": (["1G"], MEMORY), "--force": None}),
    "wasserstein": ({"--input": (["gaussian:0,3", "poisson:5", "pmf-file:{pmf.json}"],
                                 ["gaussian:0,1e9", "poisson:1e9", "pmf-file:{binary.dat}", "pmf-file:{dir}", "x",
                                  "gaussian:0", "poisson:-1", "gaussian:nan,1", ""]),
                     "--sensitivity": SMALL, "--epsilon": EPS},
                    {"--objective": (["w1", "expected-abs"], ["x"]), "--window": (["20"], COUNTS),
                     "--time-limit": (["30"], NUMBERS), "--output": OUT, "--max-memory": (["1G"], MEMORY),
                     "--force": None}),
    "rr": ({"--categories": (["2", "3", "5"], COUNTS), "--epsilon": EPS},
           {"--delta": DELTA, "--output": OUT, "--max-memory": (["1G"], MEMORY), "--force": None}),
    "families": ({}, {"--family": (GOOD_FAMILIES, FAMILIES), "--output": OUT, "--force": None, **NB, **TARGET}),
    "compare": ({"--n": SMALL, "--epsilons": (["1", "0.5,2"], ["", ";", "-1", "nan", "1e308", "a", "1,,2"])},
                {"--delta": DELTA, "--cost": (GOOD_COSTS, COSTS), "--guarantee": TARGET["--guarantee"],
                 "--target-cost": (["0.5"], NUMBERS),
                 "--mechanisms": (["optimal", "geometric,rr", "discrete-gaussian,exponential"], ["x", "", ",,"]),
                 "--boundary": (["modulo", "clamp", "truncate"], ["x"]), "--max-memory": (["1G"], MEMORY),
                 "--form": (["noise", "channel"], ["x"]), "--prior": (["uniform", "{pmf.json}"], ["x", "{dir}"]),
                 "--worst-case": None, "--per-record": None, "--releases": (["1", "2"], COUNTS), "--plot": PLOT,
                 "--force": None,
                 "--space": (["cyclic", "integer"], ["x"]), **NB}),
    "sample": ({"--count": (["0", "1", "5"], COUNTS)},
               {"--mechanism": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                "--seed": (["1"], COUNTS), "--answer": (["0", "1"], COUNTS),
                "--output": (["{out}/o.npy", "{out}/o.csv"], OUTPUTS), "--max-memory": (["1G"], MEMORY),
                "--force": None, **NB,
                **TARGET}),
    "release": ({"--input": (["{data.csv}", "{data.parquet}"], BAD_TABLES),
                 "--output": (["{out}/r.csv", "{out}/r.parquet"], OUTPUTS)},
                {"--column": (["v"], ["missing", ""]), "--mechanism": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                 "--categories": (["0,1,2"], ["", "a,a", "x"]), "--lower": (["0"], COUNTS),
                 "--engine": (["local"], ["x"]), "--seed": (["1"], COUNTS),
                 "--spec": (["{spec.toml}"], ["{pmf.json}", "{badspec.toml}", "{dir}", "{missing.json}",
                                              "{binary.toml}", "{textspec.toml}", "{budgetspec.toml}"]),
                 "--unit": (["record", "value"], ["x", ""]), "--keep": (["v", "w"], ["nope", "", ","]),
                 "--budget": (["10", "10,1e-6"], ["x", "-1", "1,2", ""]), "--force": None,
                 "--max-seconds": (["300", "5m"], SECONDS),
                 "--upper": (["2", "5"], COUNTS), "--clamp": None}),
    # issue 22: statistics of a table (--engine spark is left out: a JVM per case is too slow here)
    "query": ({"--input": (["{data.csv}", "{data.parquet}"], BAD_TABLES),
               "--spec": (["{qspec.toml}", "{qsum.toml}", "{qpeak.toml}"], QUERY_SPECS)},
              {"--output": (["{out}/q.json"], OUTPUTS), "--csv": (["{out}/q.csv"], OUTPUTS), "--seed": (["1"], COUNTS),
               "--engine": (["local"], ["x", ""]), "--force": None,
               "--compare": None, "--units": (["5", "50"], COUNTS)}),   # --compare: without --input only
    "reproduce": ({}, {"--list": None, "--out": OUT, "--force": None}),  # no --all: it runs every item (35 s)
}
JUNK = [["--bogus"], ["--bogus", "1"], ["extra"], ["--json", "--json"], ["--epsilon"], ["--", "x"], ["-x"]]


@st.composite
def argument_lists(draw, command: str) -> list[str]:
    """``command`` with its required options (one in ten left out), a few optional ones
    (values that work four times in five), sometimes ``--json`` and sometimes junk."""
    required, optional = COMMANDS[command]
    if command == "release" and draw(st.integers(0, 3)) == 0:  # a whole table from a spec, to a fresh output
        args = [command, "--input", "{data.csv}", "--spec", "{spec.toml}",
                "--output", f"{{out}}/t{draw(st.integers(0, 10**9))}.{draw(st.sampled_from(['csv', 'parquet']))}"]
        args += draw(st.lists(st.sampled_from(["--force", "--json", "--unit", "--budget"]), max_size=2, unique=True))
        if "--unit" in args:
            args.insert(args.index("--unit") + 1, draw(st.sampled_from(["record", "value", "x"])))
        if "--budget" in args:
            args.insert(args.index("--budget") + 1, draw(st.sampled_from(["10", "0.5", "x"])))
        return args
    args = [command]
    keep = [f for f in sorted(required) if draw(st.integers(0, 9)) > 0]
    chosen = keep + draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True))
    for flag in chosen:
        pools = required.get(flag, optional.get(flag))
        if pools is None:
            args.append(flag)
            continue
        good, bad = pools
        args += [flag, draw(st.sampled_from(good if draw(st.integers(0, 4)) else bad))]
    if command == "reproduce" and draw(st.booleans()):
        args.append(draw(st.sampled_from(["nosuch", "ID", "", "holohan-theorems"])))
    if draw(st.booleans()):
        args.append("--json")
    if draw(st.integers(0, 7)) == 0:
        args += draw(st.sampled_from(JUNK))
    return args


# ------------------------------------------------------------------ inputs on disk
def _set(key, value):
    return lambda data: data.__setitem__(key, value)


def _scale_first(data):  # a mass changed by hand, its exact value left as it was
    data["pmf"][0] = data["pmf"][0] * 0.5
    data["pmf"][1] = data["pmf"][1] + data["pmf"][0]


#: Hand-edits of a design file (and of a channel file): each leaves parts that disagree.
EDITS = {
    "edited_exact.json": _scale_first,
    "edited_shape.json": _set("shape", [2, 2]),
    "edited_kind.json": _set("kind", "integer"),
    "edited_kind2.json": _set("kind", "channel"),
    "no_channel.json": lambda data: data.pop("channel"),
    "rows15.json": _set("channel", [[0.75, 0.75], [0.25, 0.75]]),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """The files the placeholders name: valid ones and every kind of malformed one."""
    d = tmp_path_factory.mktemp("fuzz")
    (d / "dir").mkdir()
    (d / "out").mkdir()
    (d / "pngdir.png").mkdir()
    text = {
        "pmf.json": json.dumps([0.5, 0.25, 0.25]), "pmf.csv": "mass\n0.5\n0.25\n0.25\n",
        "third.csv": "0.3333333333333333\n" * 3, "empty.csv": "", "fields.csv": "0.5,0.25,0.25\n",
        "etamass.csv": "eta,mass\n0,0.5\n1,0.5\n", "offset_x.json": json.dumps({"pmf": [0.5, 0.5], "offset": "x"}),
        "guarantee_x.json": json.dumps({"pmf": [0.5, 0.25, 0.25], "guarantee": "x"}),
        "nested.json": json.dumps([[0.5], [0.25, 0.25]]), "nan.json": "[NaN, 1]",
        "huge.json": "[1e999999999, 1]", "deep.json": "[" * 100000 + "]" * 100000,
        "costs.txt": "0\n1\n2\n3\n", "strings.json": json.dumps(["0.5", "0.5"]),
        "tail_x.json": json.dumps({"format": "optnoise.mechanism", "format_version": 1, "kind": "integer",
                                   "pmf": [0.5, 0.5], "offset": 0, "left_tail": {"ratio": "x"}}),
        "channel.json": json.dumps({"format": "optnoise.mechanism", "format_version": 1, "kind": "channel",
                                    "channel": [[0.75, 0.25], [0.25, 0.75]]}),
        "data.csv": "v,w\n0,a\n1,b\n2,c\n1,d\n",
        "spec.toml": 'keep = ["w"]\n[columns.v]\ndomain = { lower = 0, upper = 2 }\nepsilon = 1.0\n',
        "badspec.toml": "[columns.v]\ndomain = 3\nepsilon = [\n",
        # issue 26: files that exist (never replaced without --force), bad tables and specs
        "keep.json": "precious\n", "keep.csv": "precious\n", "keep.png": "precious\n",
        "ragged.csv": "v,w\n0,a\n1,b,extra\n2\n", "dup.csv": "v,v\n0,1\n",
        "textspec.toml": '[columns.v]\ndomain = { lower = 0, upper = 2 }\nepsilon = "1.0"\n',
        "qspec.toml": '[statistics.c]\nkind = "count"\nwhere = { v = { lower = 1, upper = 2 } }\nepsilon = 1.0\n',
        "qsum.toml": 'unit = { id = "w", max_rows = 2 }\n[statistics.s]\nkind = "sum"\ncolumn = "v"\n'
                     'clamp = { lower = 0, upper = 2 }\nepsilon = 1.0\n',
        "qpeak.toml": 'unit = { id = "w", max_rows = 2 }\n[statistics.p]\nkind = "peak"\nkey = "v"\n'
                      'keys = { lower = 0, upper = 2 }\nof = "v"\nclamp = { lower = 0, upper = 2 }\n'
                      'method = "report-noisy-max"\nepsilon = 1.0\n',
        "qcolumn.toml": '[statistics.c]\nkind = "count"\nwhere = { nope = 1 }\nepsilon = 1.0\n',
        "qrows.toml": 'unit = { id = "w", max_rows = 0 }\n[statistics.c]\nkind = "count"\nepsilon = 1.0\n',
        "qbudget.toml": 'budget = { epsilon = 0.1 }\n[statistics.c]\nkind = "count"\nepsilon = 1.0\n',
        "qtext.toml": '[statistics.s]\nkind = "sum"\ncolumn = "w"\nclamp = { lower = 0, upper = 2 }\nepsilon = 1.0\n',
        "qkeys.toml": '[statistics.h]\nkind = "histogram"\nkey = "v"\nepsilon = 1.0\n',
        "budgetspec.toml": 'budget = { epsilon = -1 }\n[columns.v]\ndomain = { lower = 0, upper = 2 }\nepsilon = 1.0\n',
    }
    for name, body in text.items():
        (d / name).write_text(body)
    (d / "latin1.csv").write_bytes("v,w\n0,caf\xe9\n1,b\n".encode("latin-1"))
    (d / "binary.csv").write_bytes(b"v,w\n0,\x00\x01\x02\n")
    (d / "binary.toml").write_bytes(bytes(range(256)))
    pd.DataFrame({"v": [0, 1, 2, 1], "w": list("abcd")}).to_parquet(d / "data.parquet")
    (d / "trunc.parquet").write_bytes((d / "data.parquet").read_bytes()[:200])
    (d / "binary.dat").write_bytes(bytes(range(256)) * 4)
    np.save(d / "pmf.npy", np.array([0.5, 0.25, 0.25]))
    np.save(d / "npy2d.npy", np.full((2, 2), 0.25))
    np.save(d / "npybad.npy", np.array(["a", "b"]))
    for name, args in (("design.json", ["design", "--n", "3", "--epsilon", "1"]),
                       ("stair.json", ["staircase", "--epsilon", "1", "--sensitivity", "2", "--discrete"]),
                       ("exact.json", ["verify", "--pmf", "1/2,1/4,1/4"])):
        r = runner.invoke(app, [*args, "--output", str(d / name)])
        assert r.exit_code == 0, r.stderr
    for name, edit in EDITS.items():
        source = {"no_channel.json": "channel.json", "rows15.json": "channel.json", "edited_exact.json": "exact.json"}
        data = json.loads((d / source.get(name, "design.json")).read_text())
        edit(data)
        (d / name).write_text(json.dumps(data))
    paths = {name: str(d / name) for name in [*text, "binary.dat", "pmf.npy", "npy2d.npy", "npybad.npy",
                                               "design.json", "stair.json", "exact.json", "dir", "out", "pngdir.png",
                                               "latin1.csv", "binary.csv", "binary.toml", "data.parquet",
                                               "trunc.parquet", *EDITS]}
    paths["missing.json"] = str(d / "missing.json")
    return paths


def fill(args: list[str], files: dict[str, str]) -> list[str]:
    out = []
    for a in args:
        for name, path in files.items():
            a = a.replace("{" + name + "}", path)
        out.append(a)
    return out


# ------------------------------------------------------------------ the contract
def check_contract(code: int, stdout: str, stderr: str, args: list[str]) -> None:
    shown = f"args={args!r}\nexit={code}\nstdout={stdout[:500]!r}\nstderr={stderr[:800]!r}"
    assert code in (0, 1, 2), shown
    assert "Traceback" not in stdout + stderr, shown
    assert "unexpected failure" not in stderr, shown
    if code != 0:
        assert stdout == "", shown
        lines = stderr.rstrip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("error: "), shown
    elif "--json" in args:
        assert isinstance(json.loads(stdout), dict), shown


def run_in_process(args: list[str]) -> int:
    r = runner.invoke(app, args)
    check_contract(r.exit_code, r.stdout, r.stderr, args)
    return r.exit_code


WRITERS = ("--output", "--out", "--plot", "--csv")


def snapshot(files: dict[str, str]) -> dict[str, bytes]:
    """The bytes of every file of the fixture."""
    return {p: Path(p).read_bytes() for p in files.values() if Path(p).is_file() and not Path(p).is_symlink()}


def check_nothing_lost(before: dict[str, bytes], args: list[str]) -> None:
    """No fixture file changed, except one named as an output with --force that the command
    does not also read (then it is restored for the next cases)."""
    outputs = {args[i + 1] for i, a in enumerate(args[:-1]) if a in WRITERS}
    inputs = {a.removeprefix("pmf-file:") for i, a in enumerate(args) if i == 0 or args[i - 1] not in WRITERS}
    for path, data in before.items():
        now = Path(path).read_bytes() if Path(path).is_file() else None
        if now != data:
            Path(path).write_bytes(data)
            assert "--force" in args and path in outputs and path not in inputs, f"{path} changed: args={args!r}"


def run_guarded(args: list[str], files: dict[str, str]) -> int:
    before = snapshot(files)
    code = run_in_process(args)
    check_nothing_lost(before, args)
    return code


#: command -> exit code -> number of runs (printed with ``pytest -s``: how many cases ran).
RUNS: dict[str, dict[int, int]] = {}


@pytest.mark.parametrize("command, examples", [pytest.param("verify", 250, marks=pytest.mark.slow),
                                               pytest.param("design", 150, marks=pytest.mark.slow), ("staircase", 100),
                                               ("wasserstein", 80), ("rr", 60), ("families", 80),
                                               pytest.param("compare", 60, marks=pytest.mark.slow),
                                               pytest.param("sample", 180, marks=pytest.mark.slow), ("release", 100),
                                               ("query", 60), ("reproduce", 20)])
def test_every_argument_list_gets_a_clear_answer(command, examples, files):
    @settings(FUZZ, max_examples=examples)
    @given(argument_lists(command))
    def run(args):
        code = run_guarded(fill(args, files), files)
        counts = RUNS.setdefault(command, {})
        counts[code] = counts.get(code, 0) + 1

    run()
    print(f"\nfuzz {command}: {sum(RUNS[command].values())} cases, by exit code {dict(sorted(RUNS[command].items()))}")
    assert sum(RUNS[command].values()) >= examples // 2  # hypothesis really ran the cases
    assert RUNS[command].get(0, 0) > 0 or command == "reproduce"  # some cases get through to the computation


@settings(FUZZ, max_examples=40)
@given(st.lists(st.sampled_from(["verify", "design", "--json", "--epsilon", "1", "--debug", "--version", "--help",
                                 "nosuch", "-", "--", "", "--n", "é", "\x00", "--max-memory"]), max_size=5))
def test_any_tokens_at_the_root_get_a_clear_answer(tokens):
    r = runner.invoke(app, tokens)
    if "--help" in tokens or not tokens:
        assert r.exit_code in (0, 2) and "Traceback" not in r.stdout + r.stderr
        return
    check_contract(r.exit_code, r.stdout, r.stderr, tokens)


# ------------------------------------------------------------------ real processes
#: Address-space limit of the subprocesses: far below the machine, so a missing guard shows.
MEMORY_LIMIT = 3 * 2**30


def _limit_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_process(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", "from optnoise.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=_limit_memory,
                          check=False)


@pytest.mark.slow
@settings(derandomize=True, database=None, deadline=None, max_examples=6,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(args=st.sampled_from(sorted(COMMANDS)).flatmap(argument_lists))
def test_real_processes_under_a_memory_limit(args, files):
    filled = fill(args, files)
    before = snapshot(files)
    proc = run_process(filled)
    check_contract(proc.returncode, proc.stdout, proc.stderr, filled)
    check_nothing_lost(before, filled)


# ================================================================== issue 26, case by case
#: Every command that writes, with its output flag and a fresh output ({o}: a path in a new folder).
WRITING = {
    "design": (["design", "--n", "3", "--epsilon", "1"], "--output", "o.json"),
    "design --plot": (["design", "--n", "3", "--epsilon", "1"], "--plot", "o.png"),
    "verify": (["verify", "--pmf", "0.5,0.25,0.25"], "--output", "o.json"),
    "verify --plot": (["verify", "--pmf", "0.5,0.25,0.25"], "--plot", "o.png"),
    "rr": (["rr", "--categories", "3", "--epsilon", "1"], "--output", "o.json"),
    "staircase": (["staircase", "--epsilon", "1", "--sensitivity", "2", "--discrete"], "--output", "o.json"),
    "wasserstein": (["wasserstein", "--input", "poisson:3", "--sensitivity", "1", "--epsilon", "1"], "--output",
                    "o.json"),
    "families": (["families", "--family", "geometric:0.5"], "--output", "o.json"),
    "sample csv": (["sample", "--family", "geometric:0.5", "--count", "3"], "--output", "o.csv"),
    "sample npy": (["sample", "--family", "geometric:0.5", "--count", "3"], "--output", "o.npy"),
    "compare --plot": (["compare", "--n", "3", "--epsilons", "1", "--mechanisms", "geometric"], "--plot", "o.png"),
    "release": (["release", "--input", "{data.csv}", "--column", "v", "--family", "geometric:0.5", "--unit", "value"],
                "--output", "o.csv"),
    "query": (["query", "--input", "{data.csv}", "--spec", "{qspec.toml}"], "--output", "o.json"),
    "query --csv": (["query", "--input", "{data.csv}", "--spec", "{qspec.toml}"], "--csv", "o.csv"),
    "reproduce": (["reproduce", "holohan-theorems"], "--out", "holohan-theorems.csv"),
    "demo": (["demo"], "--out", "households.csv"),
}


@pytest.mark.parametrize("name", sorted(WRITING))
def test_no_command_replaces_an_existing_output_without_force(name, files, tmp_path):
    """An existing file (for --out: a file the command would write into the folder) is refused,
    exit 2 naming the flag and --force, and left as it was; --force replaces it."""
    args, flag, target = WRITING[name]
    precious = tmp_path / target
    precious.write_text("precious\n")
    where = str(tmp_path if flag == "--out" else precious)
    r = runner.invoke(app, [*fill(args, files), flag, where])
    check_contract(r.exit_code, r.stdout, r.stderr, args)
    assert r.exit_code == 2 and flag in r.stderr and "--force" in r.stderr, r.stderr
    assert precious.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target]  # nothing else written, no temporary file
    if name in ("demo", "reproduce"):  # --force is tested for the others; these two take seconds
        return
    r = runner.invoke(app, [*fill(args, files), flag, where, "--force"])
    assert r.exit_code == 0, r.stderr
    assert precious.read_bytes() != b"precious\n"


@pytest.mark.parametrize("args", [
    ["sample", "--mechanism", "{in}", "--count", "2", "--output", "{in}"],
    ["sample", "--mechanism", "{in}", "--count", "2", "--output", "{link}"],
    ["sample", "--mechanism", "{in}", "--count", "2", "--output", "{dotted}"],
    ["verify", "--mechanism", "{in}", "--bd", "2", "--output", "{in}"],
    ["verify", "--pmf-file", "{in}", "--output", "{hard}"],
    ["wasserstein", "--input", "pmf-file:{in}", "--sensitivity", "1", "--epsilon", "1", "--output", "{in}"],
    ["design", "--n", "2", "--epsilon", "1", "--cost-file", "{in}", "--output", "{link}"],
    ["release", "--input", "{table}", "--column", "v", "--family", "geometric:0.5", "--unit", "value",
     "--output", "{table}"],
])
def test_no_command_writes_over_a_file_it_reads(args, tmp_path):
    """The input is never replaced, by any spelling of its path, --force or not."""
    src = tmp_path / "in.csv"
    src.write_text("0.5\n0.25\n0.25\n")
    (tmp_path / "table.csv").write_text("v\n0\n1\n")
    (tmp_path / "link.csv").symlink_to(src)
    os.link(src, tmp_path / "hard.csv")
    (tmp_path / "sub").mkdir()
    names = {"in": src, "link": tmp_path / "link.csv", "hard": tmp_path / "hard.csv",
             "dotted": tmp_path / "sub" / ".." / "in.csv", "table": tmp_path / "table.csv"}
    filled = [a.format(**{k: str(v) for k, v in names.items()}) if "{" in a else a for a in args]
    before = {p: p.read_bytes() for p in (src, tmp_path / "table.csv")}
    r = runner.invoke(app, [*filled, "--force"])
    check_contract(r.exit_code, r.stdout, r.stderr, filled)
    assert r.exit_code == 2 and "not the input" in r.stderr, r.stderr
    assert all(p.read_bytes() == b for p, b in before.items())


@pytest.mark.parametrize("kind", ["latin1.csv", "ragged.csv", "dup.csv", "trunc.parquet", "binary.csv", "binary.dat",
                                  "empty.csv", "dir"])
def test_every_bad_table_is_bad_input_naming_input(kind, files, tmp_path):
    r = runner.invoke(app, ["release", "--input", files[kind], "--column", "v", "--family", "geometric:0.5",
                            "--unit", "value", "--output", str(tmp_path / "o.csv")])
    check_contract(r.exit_code, r.stdout, r.stderr, [kind])
    assert r.exit_code == 2 and "invalid --input" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind, fragment", [("binary.toml", "UTF-8"), ("badspec.toml", "valid TOML"),
                                            ("textspec.toml", "written without quotes"),
                                            ("budgetspec.toml", "budget.epsilon"), ("dir", "directory")])
def test_every_bad_spec_is_bad_input_naming_spec(kind, fragment, files, tmp_path):
    r = runner.invoke(app, ["release", "--input", files["data.csv"], "--spec", files[kind],
                            "--output", str(tmp_path / "o.csv")])
    check_contract(r.exit_code, r.stdout, r.stderr, [kind])
    assert r.exit_code == 2 and "--spec" in r.stderr and fragment in r.stderr, r.stderr


@pytest.mark.parametrize("kind, fragment", [
    ("edited_exact.json", "'pmf' and 'exact' disagree"), ("edited_shape.json", "shape"),
    ("edited_kind.json", "kind 'integer'"), ("edited_kind2.json", "kind 'channel'"),
    ("no_channel.json", "key 'channel'"), ("rows15.json", "row 0 sums to 1.5"),
])
@pytest.mark.parametrize("flag", ["verify --mechanism", "verify --pmf-file", "sample --mechanism"])
def test_hand_edited_mechanism_files_are_refused(kind, fragment, flag, files):
    command, option = flag.split()
    args = [command, option, files[kind]] + (["--count", "1"] if command == "sample" else [])
    r = runner.invoke(app, args)
    check_contract(r.exit_code, r.stdout, r.stderr, args)
    assert r.exit_code == 2 and f"invalid {option}" in r.stderr and fragment in r.stderr, r.stderr
    assert "np.float64" not in r.stderr and "KeyError" not in r.stderr


def test_hand_edited_mechanism_files_are_refused_in_python(files):
    from optnoise import InvalidParameterError, load_mechanism
    for kind in EDITS:
        with pytest.raises(InvalidParameterError):
            load_mechanism(files[kind])
    assert load_mechanism(files["design.json"]).kind == "cyclic"  # the unedited file loads


@pytest.mark.parametrize("how", ["closed", "full", "pipe"])
def test_a_result_that_cannot_be_written_is_a_failure(how):
    """stdout closed (``>&-``), a full disk (/dev/full) or a pipe closed early: exit 1 with one
    line on stderr, never 0 with nothing written."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, "-c", "from optnoise.cli import main; main()", "verify", "--pmf", "0.5,0.25,0.25", "--json"]
    if how == "closed":
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                              preexec_fn=lambda: os.close(1), timeout=120, check=False)
    elif how == "full":
        with open("/dev/full", "w") as full:
            proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                                  check=False)
    else:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        p.stdout.close()  # type: ignore[union-attr]
        proc = subprocess.CompletedProcess(argv, p.wait(timeout=120), "", p.stderr.read())  # type: ignore[union-attr]
    lines = proc.stderr.rstrip("\n").split("\n")
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def test_an_unwritable_output_is_bad_input_before_any_work(tmp_path):
    r = runner.invoke(app, ["design", "--n", "3", "--epsilon", "1", "--output", "/proc/optnoise-o.json"])
    assert r.exit_code == 2 and "invalid --output: /proc/optnoise-o.json" in r.stderr and ".tmp" not in r.stderr
    (tmp_path / "f").write_text("")
    r = runner.invoke(app, ["reproduce", "kadam-table1", "--out", str(tmp_path / "f")])
    assert r.exit_code == 2 and "invalid --out" in r.stderr and "a directory (this is a file)" in r.stderr


# ------------------------------------------------------------------ the Python API
def _api_cases():
    import optnoise
    from optnoise import Target
    from optnoise.design.channel import design_channel
    from optnoise.design.releases import design_releases
    from optnoise.design.rr import design_rr
    from optnoise.design.staircase import design_staircase
    cyc = optnoise.additive([0.5, 0.25, 0.25])
    line = optnoise.geometric(epsilon=1.0)
    ch = optnoise.channel([[0.75, 0.25], [0.25, 0.75]])
    return {
        "apply NaN cyclic": lambda: cyc.apply([0, float("nan")]),
        "apply NaN line": lambda: line.apply([float("nan")]),
        "apply 1.7 channel": lambda: ch.apply([1.7]),
        "apply out of range": lambda: cyc.apply([3]),
        "apply negative": lambda: ch.apply([-1]),
        "apply text": lambda: cyc.apply(["1"]),
        "apply inf": lambda: line.apply([float("inf")]),
        "apply huge": lambda: line.apply([2.0**70]),
        "sample answer out of range": lambda: ch.sample(2, answer=2),
        "sample answer 1.5": lambda: ch.sample(2, answer=1.5),
        "sample answer additive": lambda: cyc.sample(2, answer=0),
        "sample count 2.5": lambda: cyc.sample(2.5),
        "design epsilon text": lambda: optnoise.design_finite(5, epsilon="1"),
        "design n 2.5": lambda: optnoise.design_finite(2.5, epsilon=1),
        "design n text": lambda: optnoise.design_finite("5", epsilon=1),
        "design neighbourhood text": lambda: optnoise.design_finite(5, epsilon=1, neighbourhood="sd1"),
        "design neighbourhood number": lambda: optnoise.design_finite(5, epsilon=1, neighbourhood=1),
        "design delta text": lambda: optnoise.design_finite(5, epsilon=1, delta="0.1"),
        "channel n 2.5": lambda: design_channel(2.5, epsilon=1),
        "releases k 2.5": lambda: design_releases(5, 2.5, epsilon=1, delta=1e-6),
        "releases epsilon text": lambda: design_releases(5, 2, epsilon="1", delta=1e-6),
        "releases neighbourhood text": lambda: design_releases(5, 2, epsilon=1, delta=1e-6, neighbourhood="sd1"),
        "rr categories text": lambda: design_rr("4", epsilon=1),
        "rr epsilon 0": lambda: design_rr(4, epsilon=0),
        "staircase epsilon text": lambda: design_staircase("1"),
        "target text": lambda: Target("1.0"),
        "release duplicate column": lambda: optnoise.release(
            pd.DataFrame([[0, 1]], columns=["v", "v"]),
            {"columns": {"v": {"domain": {"lower": 0, "upper": 2}, "epsilon": 1.0}}}),
        "release epsilon text": lambda: optnoise.release(
            pd.DataFrame({"v": [0, 1]}), {"columns": {"v": {"domain": {"lower": 0, "upper": 2}, "epsilon": "1.0"}}}),
        "release frame not a frame": lambda: optnoise.release({"v": [0]}, {"columns": {"v": {"epsilon": 1.0}}}),
        "quantize missed target": lambda: optnoise.additive([0.5, 0.25, 0.25], target=Target(0.1)).quantize(),
    }


API_CASES = sorted(_api_cases())


@pytest.mark.parametrize("name", API_CASES)
def test_the_python_api_refuses_bad_arguments_as_the_cli_does(name):
    from optnoise import InvalidParameterError
    with pytest.raises(InvalidParameterError) as info:
        _api_cases()[name]()
    assert "\n" not in str(info.value) and "np.float64" not in str(info.value)


def test_the_python_api_writes_under_the_output_rule(tmp_path):
    import optnoise
    from optnoise import InvalidParameterError
    from optnoise.demo import run_demo
    from optnoise.io import write_draws
    mech = optnoise.additive([0.5, 0.25, 0.25])
    path = tmp_path / "m.json"
    path.write_text("precious\n")
    with pytest.raises(InvalidParameterError, match="force=True"):
        mech.save(path)
    draws = tmp_path / "d.csv"
    draws.write_text("precious\n")
    with pytest.raises(InvalidParameterError, match="force=True"):
        write_draws(np.zeros(2, dtype=int), draws)
    with pytest.raises(InvalidParameterError, match="this is a file"):
        run_demo(path)
    assert path.read_text() == "precious\n" and draws.read_text() == "precious\n"
    mech.save(path, force=True)
    assert optnoise.load_mechanism(path).kind == "cyclic"


def test_release_takes_any_column_names():
    import optnoise
    frame = pd.DataFrame([[1, "a", 2], [0, "b", 1]], columns=[3, "x", 7])
    out, manifest = optnoise.release(frame, {"keep": ["7"], "columns": {"3": {"domain": {"lower": 0, "upper": 3},
                                                                              "epsilon": 1.0}}})
    assert list(out.columns) == [3, 7] and out[7].tolist() == [2, 1] and manifest["total"]["columns"] == 1


@settings(FUZZ, max_examples=60)
@given(values=st.lists(st.one_of(st.integers(-3, 5), st.floats(allow_nan=True, allow_infinity=True, width=32),
                                 st.sampled_from([1.7, 2.0, -0.0, 1e300])), max_size=4),
       kind=st.sampled_from(["cyclic", "integer", "channel"]))
def test_apply_answers_in_the_domain_or_refuses(values, kind):
    """Any list of numbers: drawn from for answers in the domain, refused otherwise (never a
    wrapped NaN, never a truncated 1.7)."""
    import optnoise
    from optnoise import InvalidParameterError
    mech = {"cyclic": optnoise.additive([0.5, 0.25, 0.25]), "integer": optnoise.geometric(epsilon=1.0),
            "channel": optnoise.channel([[0.75, 0.25], [0.25, 0.75]])}[kind]
    arr = np.asarray(values, dtype=float)
    top = {"cyclic": 2, "integer": 2.0**62, "channel": 1}[kind]
    low = 0 if kind != "integer" else -(2.0**62)
    fine = bool(np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)) and np.all((arr >= low) & (arr <= top)))
    try:
        out = mech.apply(values, seed=1)
    except InvalidParameterError:
        assert not fine, values
        return
    assert fine, values
    if kind != "integer":
        assert np.all((out >= 0) & (out <= top))


#: A command whose estimated time is well above a tiny --max-seconds, per command with the flag.
#: (design: the worst case keeps the channel LP; a prior-averaged per-record (eps, delta) request
#: is answered by the pure design mixed, in about a second, since issue 23.)
SLOW = {"design": ["design", "--form", "channel", "--n", "30", "--epsilon", "1", "--delta", "0.01", "--per-record",
                   "--worst-case"],
        "verify": ["verify", "--family", "geometric:0.99", "--bd", "100", "--exact"],
        "release": ["release", "--input", "{wide.csv}", "--spec", "{wide.toml}", "--output", "{out}/wide.csv"]}


@pytest.mark.parametrize("value", SECONDS)
@pytest.mark.parametrize("command", sorted(SLOW))
def test_max_seconds_is_bad_input_or_a_refusal_naming_the_estimate(command, value, tmp_path):
    """Issue 26, item 2: every bad --max-seconds is one line naming it (exit 2); a tiny one
    refuses the computation before it starts, naming the estimate and --max-seconds."""
    (tmp_path / "wide.csv").write_text("x\n0\n300\n")
    (tmp_path / "wide.toml").write_text("[columns.x]\ndomain = { lower = 0, upper = 300 }\nepsilon = 0.1\n")
    (tmp_path / "out").mkdir()
    args = [a.replace("{", str(tmp_path) + "/").replace("}", "") for a in SLOW[command]] + ["--max-seconds", value]
    r = CliRunner().invoke(app, args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and r.stdout == "", (args, r.stderr)
    if value == "0.0001":
        assert "would take about" in lines[0] and "--max-seconds raises the limit" in lines[0]
    else:
        assert lines[0].startswith("error: invalid --max-seconds")
