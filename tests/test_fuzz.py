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
NUMBERS = ["0", "-1", "1", "0.5", "2", "1e-300", "5e-324", "1e308", "1e400", "-1e308", "nan", "inf", "-inf",
           "abc", "", " ", "1,2", "0x10", "1e30", "800", "1e-5"]
COUNTS = ["0", "-1", "1", "2", "3", "1000000000", "1e3", "2.5", "abc", "", "nan", "-0",
          "99999999999999999999999"]
SMALL = ["0", "-1", "1", "2", "3", "2.5", "abc", "", "1000000000", "99999999999999999999999"]
PMFS = ["0.5,0.25,0.25", "1", "0.5,0.5", "0.3333333333333333,0.3333333333333333,0.3333333333333333",
        "0.5,-0.5,1", "1e400,1", "nan,1", "", ",", "a,b", "1/3,1/3,1/3", "1/0,1", "0.5;0.5",
        "1e-99999999,1", "0.5,0.4", "0", "0,0,1", "[b]x[/b],1", "0.5,0.5\n", "1e9999999999"]
FAMILIES = ["geometric:0.5", "geometric:1.5", "geometric", "discrete-gaussian:1e9", "discrete-gaussian:2",
            "discrete-gaussian:2,1e18", "rr:3,0.2", "rr:1e12,0.1", "rr:3,5", "staircase:1,3,2", "staircase:1,1e9,1",
            "qin-uniform:-1e12,1e12", "qin-uniform:0,3", "hamming:1,2,1", "exponential:4,1", "exponential:1e9,1",
            "laplace:1", "", ":", "geometric:nan", "qin-gaussian:1e9", "qin-laplace:1e308", "qin-staircase:2,0.5",
            "qin-exponential:0", "geometric:0.5,1,2"]
DISTANCES = ["1", "1..3", "0", "-0..0", "1,0;0,1", "x", "", "1..1000000000", "5..1", "1;2",
             "99999999999999999999", "1,1,1", "-1"]
COSTS = ["er", "mse", "sq", "abs", "circular-mse", "circular-abs", "pow:3", "pow:-1", "pow:1e308", "x", "", "pow:"]
SPACES = ["cyclic", "integer", "torus", ""]
NOTIONS = ["dp", "pdp", "x", ""]
MEMORY = ["1", "100M", "1G", "abc", "0", "-5G", "1e999G", "64T"]
#: Placeholders for the files made by the ``files`` fixture.
FILES = ["{pmf.json}", "{pmf.csv}", "{pmf.npy}", "{third.csv}", "{design.json}", "{stair.json}", "{empty.csv}",
         "{binary.dat}", "{dir}", "{missing.json}", "{fields.csv}", "{etamass.csv}", "{offset_x.json}",
         "{guarantee_x.json}", "{nested.json}", "{nan.json}", "{huge.json}", "{deep.json}", "{npy2d.npy}",
         "{npybad.npy}", "{costs.txt}", "{strings.json}", "{tail_x.json}", "{channel.json}"]
OUTPUTS = ["{out}/o.json", "{out}/o.npy", "{out}/o.csv", "{out}/o.txt", "{dir}", "{pmf.csv}/o.json", ""]

NB = {"--distances": DISTANCES, "--sd": SMALL, "--bd": SMALL, "--directed": None}
TARGET = {"--epsilon": NUMBERS, "--delta": NUMBERS, "--guarantee": NOTIONS}

#: command -> (always-present options, optional options); a pool of None is a flag.
COMMANDS: dict[str, tuple[dict, dict]] = {
    "verify": ({}, {"--pmf": PMFS, "--pmf-file": FILES, "--family": FAMILIES, "--mechanism": FILES,
                    "--space": SPACES, "--offset": COUNTS, "--normalize": None, "--epsilon": NUMBERS,
                    "--delta": NUMBERS, "--compose": COUNTS, "--exact": None, "--max-memory": MEMORY, **NB}),
    "design": ({"--n": SMALL, "--epsilon": NUMBERS},
               {"--delta": NUMBERS, "--guarantee": NOTIONS, "--cost": COSTS, "--cost-file": FILES,
                "--minimize": ["cost", "delta", "x"], "--max-cost": NUMBERS,
                "--formulation": ["standard", "paper", "x"], "--time-limit": NUMBERS, "--max-memory": MEMORY,
                "--output": OUTPUTS, **NB}),
    "staircase": ({"--epsilon": NUMBERS},
                  {"--sensitivity": NUMBERS, "--cost": COSTS, "--discrete": None, "--gamma": NUMBERS,
                   "--r": SMALL, "--lp": None, "--output": OUTPUTS, "--max-memory": MEMORY}),
    "wasserstein": ({"--input": ["gaussian:0,3", "gaussian:0,1e9", "poisson:5", "poisson:1e9", "pmf-file:{pmf.json}",
                                 "pmf-file:{binary.dat}", "pmf-file:{dir}", "x", "gaussian:0", "poisson:-1",
                                 "gaussian:nan,1", ""],
                     "--sensitivity": SMALL, "--epsilon": NUMBERS},
                    {"--objective": ["w1", "expected-abs", "x"], "--window": COUNTS, "--time-limit": NUMBERS,
                     "--output": OUTPUTS, "--max-memory": MEMORY}),
    "rr": ({"--categories": COUNTS, "--epsilon": NUMBERS}, {"--delta": NUMBERS, "--output": OUTPUTS,
                                                           "--max-memory": MEMORY}),
    "families": ({}, {"--family": FAMILIES, "--output": OUTPUTS, **NB, **TARGET}),
    "compare": ({"--n": SMALL, "--epsilons": ["1", "0.5,2", "", ";", "-1", "nan", "1e308", "a", "1,,2"]},
                {"--delta": NUMBERS, "--cost": COSTS, "--guarantee": NOTIONS, "--target-cost": NUMBERS,
                 "--mechanisms": ["optimal", "geometric", "rr", "x", "", "optimal,rr", "discrete-gaussian,exponential"],
                 "--boundary": ["modulo", "clamp", "truncate", "x"], "--max-memory": MEMORY, **NB}),
    "sample": ({"--count": COUNTS}, {"--mechanism": FILES, "--family": FAMILIES, "--seed": COUNTS, "--answer": COUNTS,
                                     "--output": OUTPUTS, "--max-memory": MEMORY, **NB, **TARGET}),
    "release": ({"--input": ["{data.csv}", "{pmf.json}", "{empty.csv}", "{binary.dat}", "{dir}", "{missing.json}"],
                 "--column": ["v", "missing", ""], "--output": OUTPUTS},
                {"--mechanism": FILES, "--family": FAMILIES, "--categories": ["a,b,c", "", "a,a", "x"],
                 "--lower": COUNTS, "--engine": ["local", "x"], "--seed": COUNTS}),
    "reproduce": ({}, {"--list": None, "--out": OUTPUTS}),  # no --all: it runs every item (35 s)
}
JUNK = [["--bogus"], ["--bogus", "1"], ["extra"], ["--json", "--json"], ["--epsilon"], ["--", "x"], ["-x"]]


@st.composite
def argument_lists(draw, command: str) -> list[str]:
    """``command`` with its required options (sometimes one dropped), a few optional ones,
    sometimes ``--json`` and sometimes junk."""
    required, optional = COMMANDS[command]
    args = [command]
    keep = [f for f in sorted(required) if draw(st.integers(0, 9)) > 0]  # a required option is left out 1 in 10
    chosen = keep + draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True))
    for flag in chosen:
        pool = required.get(flag, optional.get(flag))
        args += [flag] if pool is None else [flag, draw(st.sampled_from(pool))]
    if command == "reproduce" and draw(st.booleans()):
        args.append(draw(st.sampled_from(["nosuch", "ID", ""])))
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
        "data.csv": "v\n0\n1\n2\n1\n",
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
                                               "design.json", "stair.json", "dir", "out"]}
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


def run_in_process(args: list[str]) -> None:
    r = runner.invoke(app, args)
    check_contract(r.exit_code, r.stdout, r.stderr, args)


RUNS: dict[str, int] = {}


@pytest.mark.parametrize("command, examples", [("verify", 120), ("design", 70), ("staircase", 50), ("wasserstein", 40),
                                               ("rr", 40), ("families", 40), ("compare", 30), ("sample", 90),
                                               ("release", 50), ("reproduce", 15)])
def test_every_argument_list_gets_a_clear_answer(command, examples, files):
    @settings(FUZZ, max_examples=examples)
    @given(argument_lists(command))
    def run(args):
        RUNS[command] = RUNS.get(command, 0) + 1
        run_in_process(fill(args, files))

    run()
    assert RUNS[command] >= examples // 2  # hypothesis really ran the cases


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
@given(st.sampled_from(sorted(COMMANDS)).flatmap(argument_lists))
def test_real_processes_under_a_memory_limit(args, files):
    filled = fill(args, files)
    proc = run_process(filled)
    check_contract(proc.returncode, proc.stdout, proc.stderr, filled)
