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
  would be slow, and huge ones must be refused by the resource guards.

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
#: Placeholders for the files made by the ``files`` fixture.
GOOD_FILES = ["{pmf.json}", "{pmf.csv}", "{pmf.npy}", "{third.csv}", "{design.json}", "{stair.json}", "{channel.json}"]
FILES = ["{empty.csv}", "{binary.dat}", "{dir}", "{missing.json}", "{fields.csv}", "{etamass.csv}", "{offset_x.json}",
         "{guarantee_x.json}", "{nested.json}", "{nan.json}", "{huge.json}", "{deep.json}", "{npy2d.npy}",
         "{npybad.npy}", "{costs.txt}", "{strings.json}", "{tail_x.json}"]
OUTPUTS = ["{dir}", "{pmf.csv}/o.json", "", "{out}/o.txt"]

EPS = (["1", "0.5", "2"], NUMBERS)
DELTA = (["0", "0.1"], NUMBERS)
SMALL = (["1", "2", "3"], COUNTS)
NB = {"--distances": (["1", "1..2", "1,1"], DISTANCES), "--sd": (["1", "2"], COUNTS), "--bd": (["1", "2"], COUNTS),
      "--directed": None}
TARGET = {"--epsilon": EPS, "--delta": DELTA, "--guarantee": (["dp", "pdp"], ["x", ""])}
OUT = (["{out}/o.json"], OUTPUTS)
PLOT = (["{out}/p.png"], ["{out}/p.jpg", "{dir}", "", "{pngdir.png}", "{pmf.csv}/p.png"])

#: command -> (options always given, optional options); a pool of None is a flag.
COMMANDS: dict[str, tuple[dict, dict]] = {
    "verify": ({}, {"--pmf": (["0.5,0.25,0.25", "0.3333333333333333,0.3333333333333333,0.3333333333333333",
                               "1/3,1/3,1/3", "0,0,1"], PMFS),
                    "--pmf-file": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                    "--mechanism": (GOOD_FILES, FILES), "--space": (["cyclic", "integer"], ["torus", ""]),
                    "--offset": (["0", "1"], COUNTS), "--normalize": None, "--epsilon": EPS, "--delta": DELTA,
                    "--compose": (["2", "3"], COUNTS), "--exact": None, "--max-memory": (["1G"], MEMORY),
                    "--renyi": (["2", "1.5,2,inf"], ["0.5", "x", "", "1", "-2", "nan", "1e308"]),
                    "--output": OUT, "--plot": PLOT, **NB}),
    "design": ({"--n": SMALL, "--epsilon": EPS},
               {"--delta": DELTA, "--guarantee": TARGET["--guarantee"], "--cost": (GOOD_COSTS, COSTS),
                "--cost-file": (["{costs.txt}", "{pmf.json}"], FILES), "--minimize": (["cost", "delta"], ["x"]),
                "--max-cost": (["0.5", "2"], NUMBERS), "--formulation": (["standard", "paper"], ["x"]),
                "--time-limit": (["30"], NUMBERS), "--max-memory": (["1G"], MEMORY), "--output": OUT,
                "--plot": PLOT, "--form": (["noise", "channel"], ["x", ""]),
                "--constraints": (["row-monotone", "fair,weak-honest"], ["x", "", "unbiased,fair"]),
                "--prior": (["uniform", "{pmf.json}"], ["x", "{binary.dat}", "{dir}", ""]), "--worst-case": None,
                "--per-record": None, "--releases": (["1", "3"], COUNTS),
                "--space": (["cyclic", "integer"], ["x"]), **NB}),
    "staircase": ({"--epsilon": EPS},
                  {"--sensitivity": (["1", "2", "3"], NUMBERS), "--cost": (["abs", "sq", "pow:3"], COSTS),
                   "--discrete": None, "--gamma": (["0.25", "0", "1"], NUMBERS), "--r": (["1", "2"], COUNTS),
                   "--lp": None, "--output": OUT, "--max-memory": (["1G"], MEMORY)}),
    "wasserstein": ({"--input": (["gaussian:0,3", "poisson:5", "pmf-file:{pmf.json}"],
                                 ["gaussian:0,1e9", "poisson:1e9", "pmf-file:{binary.dat}", "pmf-file:{dir}", "x",
                                  "gaussian:0", "poisson:-1", "gaussian:nan,1", ""]),
                     "--sensitivity": SMALL, "--epsilon": EPS},
                    {"--objective": (["w1", "expected-abs"], ["x"]), "--window": (["20"], COUNTS),
                     "--time-limit": (["30"], NUMBERS), "--output": OUT, "--max-memory": (["1G"], MEMORY)}),
    "rr": ({"--categories": (["2", "3", "5"], COUNTS), "--epsilon": EPS},
           {"--delta": DELTA, "--output": OUT, "--max-memory": (["1G"], MEMORY)}),
    "families": ({}, {"--family": (GOOD_FAMILIES, FAMILIES), "--output": OUT, **NB, **TARGET}),
    "compare": ({"--n": SMALL, "--epsilons": (["1", "0.5,2"], ["", ";", "-1", "nan", "1e308", "a", "1,,2"])},
                {"--delta": DELTA, "--cost": (GOOD_COSTS, COSTS), "--guarantee": TARGET["--guarantee"],
                 "--target-cost": (["0.5"], NUMBERS),
                 "--mechanisms": (["optimal", "geometric,rr", "discrete-gaussian,exponential"], ["x", "", ",,"]),
                 "--boundary": (["modulo", "clamp", "truncate"], ["x"]), "--max-memory": (["1G"], MEMORY),
                 "--form": (["noise", "channel"], ["x"]), "--prior": (["uniform", "{pmf.json}"], ["x", "{dir}"]),
                 "--worst-case": None, "--per-record": None, "--releases": (["1", "2"], COUNTS),
                 "--space": (["cyclic", "integer"], ["x"]), **NB}),
    "sample": ({"--count": (["0", "1", "5"], COUNTS)},
               {"--mechanism": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                "--seed": (["1"], COUNTS), "--answer": (["0", "1"], COUNTS),
                "--output": (["{out}/o.npy", "{out}/o.csv"], OUTPUTS), "--max-memory": (["1G"], MEMORY), **NB,
                **TARGET}),
    "release": ({"--input": (["{data.csv}"], ["{pmf.json}", "{empty.csv}", "{binary.dat}", "{dir}", "{missing.json}"]),
                 "--output": (["{out}/r.csv", "{out}/r.parquet"], OUTPUTS)},
                {"--column": (["v"], ["missing", ""]), "--mechanism": (GOOD_FILES, FILES), "--family": (GOOD_FAMILIES, FAMILIES),
                 "--categories": (["0,1,2"], ["", "a,a", "x"]), "--lower": (["0"], COUNTS),
                 "--engine": (["local"], ["x"]), "--seed": (["1"], COUNTS),
                 "--spec": (["{spec.toml}"], ["{pmf.json}", "{badspec.toml}", "{dir}", "{missing.json}"]),
                 "--unit": (["record", "value"], ["x", ""]), "--keep": (["v", "w"], ["nope", "", ","]),
                 "--budget": (["10", "10,1e-6"], ["x", "-1", "1,2", ""]), "--force": None,
                 "--upper": (["2", "5"], COUNTS), "--clamp": None}),
    "reproduce": ({}, {"--list": None, "--out": OUT}),  # no --all: it runs every item (35 s)
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
    }
    for name, body in text.items():
        (d / name).write_text(body)
    (d / "binary.dat").write_bytes(bytes(range(256)) * 4)
    np.save(d / "pmf.npy", np.array([0.5, 0.25, 0.25]))
    np.save(d / "npy2d.npy", np.full((2, 2), 0.25))
    np.save(d / "npybad.npy", np.array(["a", "b"]))
    for name, args in (("design.json", ["design", "--n", "3", "--epsilon", "1"]),
                       ("stair.json", ["staircase", "--epsilon", "1", "--sensitivity", "2", "--discrete"])):
        r = runner.invoke(app, [*args, "--output", str(d / name)])
        assert r.exit_code == 0, r.stderr
    paths = {name: str(d / name) for name in [*text, "binary.dat", "pmf.npy", "npy2d.npy", "npybad.npy",
                                               "design.json", "stair.json", "dir", "out", "pngdir.png"]}
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


#: command -> exit code -> number of runs (printed with ``pytest -s``: how many cases ran).
RUNS: dict[str, dict[int, int]] = {}


@pytest.mark.parametrize("command, examples", [("verify", 250), ("design", 150), ("staircase", 100),
                                               ("wasserstein", 80), ("rr", 60), ("families", 80), ("compare", 60),
                                               ("sample", 180), ("release", 100), ("reproduce", 20)])
def test_every_argument_list_gets_a_clear_answer(command, examples, files):
    @settings(FUZZ, max_examples=examples)
    @given(argument_lists(command))
    def run(args):
        code = run_in_process(fill(args, files))
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


@settings(derandomize=True, database=None, deadline=None, max_examples=6,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(args=st.sampled_from(sorted(COMMANDS)).flatmap(argument_lists))
def test_real_processes_under_a_memory_limit(args, files):
    filled = fill(args, files)
    proc = run_process(filled)
    check_contract(proc.returncode, proc.stdout, proc.stderr, filled)
