"""The command-line contract (shared/CLI.md): JSON keys, exit codes, error messages."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from optnoise.cli import app

runner = CliRunner()
TABLE1_COL3 = "0.5548,0.1238,0.1238,0.1238,0.0276,0.0276,0.0062,0.0062,0.0062"


def run(*args):
    return runner.invoke(app, list(args))


def run_json(*args):
    r = run(*args, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_verify_json_keys_and_values():
    out = run_json("verify", "--pmf", "0.5,0.25,0.25", "--sd", "1", "--epsilon", "0.2", "--delta", "0.1")
    for key in ("epsilon_pure", "delta_dp", "delta_pdp", "epsilon_dp", "epsilon_pdp", "neighbourhood"):
        assert key in out
    assert out["neighbourhood"] == {"distances": [1], "directed": False}
    assert out["epsilon_pure"] == pytest.approx(math.log(2))
    assert out["delta_dp"] == pytest.approx(0.5 - math.exp(0.2) / 4)
    assert out["epsilon_dp"] == pytest.approx(math.log(1.6))


def test_verify_infinite_epsilon_is_the_string_inf():
    out = run_json("verify", "--pmf", "0.7,0.3,0", "--epsilon", "1")
    assert out["epsilon_pure"] == "inf"


def test_verify_table1_directed_exact():
    out = run_json("verify", "--pmf", TABLE1_COL3, "--bd", "3", "--directed", "--epsilon", "1.505", "--exact")
    assert out["exact"] is True
    assert out["delta_pdp"] == pytest.approx(0.1238, abs=1e-12)
    assert out["neighbourhood"] == {"distances": [1, 2, 3], "directed": True}


def test_verify_integer_space_and_family_agree():
    a = 0.5
    k = np.arange(-40, 41)
    masses = ",".join(repr(float(x)) for x in (1 - a) / (1 + a) * a ** np.abs(k))
    by_pmf = run_json("verify", "--pmf", masses, "--space", "integer", "--offset", "40", "--epsilon", "0.3",
                      "--normalize")
    by_family = run_json("verify", "--family", "geometric:0.5", "--epsilon", "0.3")
    assert by_family["epsilon_pure"] == pytest.approx(math.log(2))
    assert by_pmf["delta_dp"] == pytest.approx(by_family["delta_dp"], abs=1e-10)


def test_verify_compose(tmp_path):
    out = run_json("verify", "--family", "geometric:0.5", "--epsilon", "1.0", "--delta", "1e-3", "--compose", "3")
    c = out["composed"]
    assert c["k"] == 3 and c["delta_dp"] > out["delta_dp"] and c["epsilon_dp"] > out["epsilon_dp"]


def test_verify_pmf_file_forms(tmp_path):
    pmf = [0.5, 0.3, 0.2]
    (tmp_path / "a.json").write_text(json.dumps(pmf))
    (tmp_path / "b.json").write_text(json.dumps({"pmf": pmf, "method": "lp"}))
    (tmp_path / "c.csv").write_text("mass\n0.5\n0.3\n0.2\n")
    np.save(tmp_path / "d.npy", np.array(pmf))
    values = {run_json("verify", "--pmf-file", str(tmp_path / f), "--epsilon", "0.1")["delta_dp"]
              for f in ("a.json", "b.json", "c.csv", "d.npy")}
    assert len(values) == 1


def test_verify_vector_pmf(tmp_path):
    joint = (np.outer([0.6, 0.3, 0.1], [0.5, 0.5])).tolist()
    (tmp_path / "j.json").write_text(json.dumps({"pmf": joint}))
    out = run_json("verify", "--pmf-file", str(tmp_path / "j.json"), "--distances", "1,0;0,1", "--epsilon", "0.1")
    assert out["neighbourhood"]["distances"] == [[1, 0], [0, 1]]


def test_verify_plot_is_written(tmp_path):
    target = tmp_path / "profile.png"
    r = run("verify", "--pmf", "0.5,0.25,0.25", "--plot", str(target))
    assert r.exit_code == 0, r.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["profile.png"]


def test_human_output_is_a_table():
    r = run("verify", "--pmf", "0.5,0.25,0.25", "--epsilon", "0.2")
    assert r.exit_code == 0
    assert "epsilon_pure" in r.stdout and "delta_pdp" in r.stdout


def test_families_json():
    out = run_json("families")
    names = {f["name"] for f in out["families"]}
    assert {"geometric", "rr"} <= names


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.startswith("optnoise ")


def test_registering_the_commands_imports_no_numerics():
    """Start-up (issue 37): the commands import numpy, pandas, scipy and the analysis when they
    run, not when they are registered, so ``--help`` and ``--version`` load none of them."""
    code = ("import sys, optnoise.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'pandas', 'pyarrow', 'scipy', 'mpmath', 'dp_accounting', 'matplotlib') "
            "or m.startswith(('optnoise.analysis', 'optnoise.mechanism', 'optnoise.pmf', 'optnoise.io'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})
    assert proc.stdout.strip() == "[]"


def test_escape_is_richs():
    """The help texts and tables escape markup as ``rich.markup.escape`` does (render.escape:
    without importing rich at start-up)."""
    from rich.markup import escape as rich_escape
    from optnoise.cli.render import escape
    rng = np.random.default_rng(4)
    cases = ["P[q, y]", "pmf[i]", "[bold]x[/]", "\\[b]", "a\\", "a\\\\", "[#fff]", "[@click]", "[/]", "[1]", "x[a][b",
             "\\\\[red]x", "", "[a b]c\\"]
    cases += ["".join(rng.choice(list("[]\\a/#@ 1Z"), int(rng.integers(0, 12)))) for _ in range(2000)]
    for text in cases:
        assert escape(text) == rich_escape(text), text


def test_a_json_command_imports_no_rich():
    """Start-up (issue 37): rich is imported when something is printed through it; ``--json``
    prints with typer.echo."""
    code = ("import sys; from optnoise.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n"
            "    print('rc', e.code, 'rich' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, "verify", "--family", "geometric:0.5", "--epsilon", "1",
                           "--delta", "1e-6", "--compose", "10", "--json"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})
    assert proc.stdout.strip().endswith("rc 0 False"), proc.stdout[-300:] + proc.stderr


def test_a_query_without_the_optimal_channel_imports_no_scipy(tmp_path):
    """Start-up (issue 37): scipy (sparse LP models, HiGHS: 0.3-0.4 s to import) is imported by
    the designs that solve an LP, not by a query whose cells are calibrated families."""
    (tmp_path / "t.csv").write_text("household,circuit,kwh\n" + "".join(f"{h},{1 + h % 3},{h % 7 / 2}\n"
                                                                       for h in range(12)))
    (tmp_path / "q.toml").write_text(
        'unit = { id = "household", max_rows = 2 }\n[statistics.n]\nkind = "histogram"\nkey = "circuit"\n'
        'keys = [1, 2, 3]\nepsilon = 1.0\nmechanism = "clamped-geometric"\n[statistics.kwh]\nkind = "sum"\n'
        'column = "kwh"\nclamp = { lower = 0, upper = 4 }\nresolution = 0.5\nepsilon = 1.0\n')
    proc = query_modules(tmp_path / "q.toml", tmp_path / "t.csv", "{m.split('.')[0] for m in sys.modules}",
                         {"scipy", "pydantic"})
    assert proc.stdout.strip().endswith("rc 0 []"), proc.stdout[-300:] + proc.stderr


def query_modules(spec: Path, data: Path, loaded: str, watched: set[str]) -> subprocess.CompletedProcess:
    """A seeded ``query --json`` in a fresh interpreter, printing its exit code and which of
    ``watched`` are among the modules it imported (``loaded``: a Python expression of their names)."""
    code = ("import sys; from optnoise.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n"
            f"    print('rc', e.code, sorted({loaded} & {watched!r}))")
    return subprocess.run([sys.executable, "-c", code, "query", "--spec", str(spec), "--input", str(data), "--json",
                           "--seed", "1"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})


def test_a_small_query_with_the_optimal_channel_imports_neither_pandas_nor_scipy(tmp_path):
    """Start-up (issue 37): the local engine reads a CSV file with Arrow and NumPy
    (``query/arrow.py``, ``query/rows.py``), and the optimal channel's LP is written in NumPy
    (``design/csr.py``) and solved by highspy; pandas, scipy.sparse and scipy.optimize (0.2,
    0.12 and 0.3 s to import) are imported where a rule or a design needs them, not by this
    query (bench/startup.py's)."""
    rows = [f"{h},{1 + h % 3},{t},{(h * 7 + t * 3) % 50 / 10:.1f}" for h in (1, 2) for t in range(24)]
    (tmp_path / "m.csv").write_text("household,circuit,hour,kwh\n" + "\n".join(rows) + "\n")
    (tmp_path / "q.toml").write_text(
        'unit = { id = "household", max_rows = 24 }\n[statistics.n]\nkind = "histogram"\nkey = "circuit"\n'
        'keys = [1, 2, 3]\nepsilon = 1.0\n[statistics.kwh]\nkind = "sum"\ncolumn = "kwh"\n'
        'clamp = { lower = 0, upper = 10 }\nresolution = 0.1\nby = "circuit"\ngroups = [1, 2, 3]\nepsilon = 1.0\n')
    proc = query_modules(tmp_path / "q.toml", tmp_path / "m.csv", "{m.split('.')[0] for m in sys.modules}",
                         {"pandas", "scipy", "highspy"})
    assert proc.stdout.strip().endswith("rc 0 ['highspy']"), proc.stdout[-300:] + proc.stderr
    assert '"name": "optimal channel"' in proc.stdout and '"optimal": true' in proc.stdout


# --------------------------------------------------------------- error paths
BAD = [
    (["--pmf", "0.5,-0.5,1"], "pmf"),
    (["--pmf", "0.5,0.4"], "pmf"),
    (["--pmf", "0.5,abc"], "--pmf"),
    (["--pmf", "nan,1"], "--pmf"),
    (["--pmf", ","], "--pmf"),
    (["--pmf", "0.5,0.5", "--epsilon", "-1"], "--epsilon"),
    (["--pmf", "0.5,0.5", "--delta", "1"], "--delta"),
    (["--pmf", "0.5,0.5", "--delta", "-0.1"], "--delta"),
    (["--pmf", "0.5,0.5", "--space", "torus"], "--space"),
    (["--pmf", "0.5,0.5", "--offset", "1"], "--offset"),
    (["--pmf", "0.5,0.5", "--distances", "0"], "distances"),
    (["--pmf", "0.5,0.25,0.25", "--distances", "5"], "distances"),
    (["--pmf", "0.5,0.25,0.25", "--distances", "x"], "--distances"),
    (["--pmf", "0.5,0.5", "--sd", "1", "--bd", "2"], "--distances/--sd/--bd"),
    (["--pmf", "0.5,0.5", "--bd", "0"], "--bd"),
    (["--pmf", "0.5,0.5", "--family", "geometric:0.5"], "--pmf/--pmf-file/--family"),
    ([], "--pmf/--pmf-file/--family"),
    (["--family", "laplace:1"], "--family"),
    (["--family", "geometric:1.5"], "alpha"),
    (["--family", "geometric"], "--family"),
    (["--pmf-file", "/nonexistent/pmf.json"], "--pmf-file"),
    (["--pmf", "0.5,0.5", "--compose", "0", "--epsilon", "1"], "--compose"),
    (["--pmf", "0.5,0.5", "--compose", "2"], "--compose"),
    (["--pmf", "0.5,0.5", "--plot", "x.jpg"], "--plot"),
]


@pytest.mark.parametrize("args, parameter", BAD)
def test_bad_input_exits_2_naming_the_parameter(args, parameter):
    r = run("verify", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    assert parameter in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_json_file_exits_2(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("[0.5, 0.5")
    r = run("verify", "--pmf-file", str(f))
    assert r.exit_code == 2 and "--pmf-file" in r.stderr


def test_vector_pmf_needs_vector_distances(tmp_path):
    f = tmp_path / "j.json"
    f.write_text(json.dumps([[0.25, 0.25], [0.25, 0.25]]))
    r = run("verify", "--pmf-file", str(f))
    assert r.exit_code == 2 and "--distances" in r.stderr


def test_unknown_option_is_a_usage_error():
    assert run("verify", "--epsilonn", "1").exit_code == 2


def test_installed_console_script(tmp_path):
    exe = Path(sys.executable).parent / "optnoise"
    assert exe.exists(), "make install must provide the optnoise console script"
    proc = subprocess.run([str(exe), "verify", "--pmf", "0.5,0.25,0.25", "--epsilon", "0.1", "--json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["delta_dp"] == pytest.approx(0.5 - math.exp(0.1) / 4)
    bad = subprocess.run([str(exe), "verify", "--pmf", "2"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stdout == ""


def test_a_cost_file_per_record(tmp_path):
    """A cost vector with --per-record is a noise cost (it was compared with the names of the
    released-value costs as an array: an unexpected failure)."""
    costs = tmp_path / "costs.txt"
    costs.write_text("0\n1\n2\n3\n4\n5\n")
    out = run_json("design", "--epsilon", "1", "--cost-file", str(costs), "--per-record", "--n", "5")
    assert out["cost"] == "user" and len(out["pmf"]) == 6


def test_design_output_says_what_it_wrote(tmp_path):
    """Issue 26, item 6: --output and --plot are named after the human view (one line each)."""
    out, fig = tmp_path / "d.json", tmp_path / "d.png"
    r = runner.invoke(app, ["design", "--n", "4", "--epsilon", "1", "--bd", "4", "--output", str(out),
                            "--plot", str(fig)])
    assert r.exit_code == 0, r.stderr
    text = "".join(r.stdout.split())   # however the console wrapped it
    assert f"wrote{out}:themechanismfile" in text and f"wrote{fig}:thefigure(PNG)" in text
    assert out.is_file() and fig.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args", [
    ["compare", "--n", "5", "--sd", "1", "--epsilons", "0.5,1"],
    ["compare", "--form", "channel", "--n", "6", "--epsilons", "1", "--per-record"],
])
def test_compare_tables_are_readable_at_80_columns(args, monkeypatch):
    """Issue 26, item 6: every line fits 80 columns, the title says what is compared (not a
    file name), mechanisms are never cut to 'optimal-...' (short names, with a legend)."""
    from optnoise.cli import render
    monkeypatch.setattr(render.out, "width", 80)
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in r.stdout and "the usual mechanisms" in " ".join(lines[:4])
    if "channel" in args:
        assert "opt-chan" in r.stdout and "opt-mod" in r.stdout and "opt-chan = optimal channel" in " ".join(lines)
