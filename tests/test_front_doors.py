"""One request, four front doors, one design (issue 21): the command line's ``design`` and
``compare``, the table planner and Python give the same mechanism and the same exact
certificate for the same request, because each builds a ``Request`` and asks ``design``."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise import compare as compare_module
from optnoise.cli import app

runner = CliRunner()

#: The hour of the day per record: every hour may become any other (bd 23 on {0..23}), pure 1-DP,
#: circular squared error.
N, EPSILON, COST = 23, 1.0, "circular-mse"


@pytest.fixture(scope="module")
def python_design():
    request = optnoise.Request(space="cyclic", n=N, target=optnoise.Target(EPSILON), unit="record", cost=COST)
    return optnoise.design(request)


def test_python_unit_and_neighbourhood_ask_the_same(python_design):
    by_distances = optnoise.design(optnoise.Request(space="cyclic", n=N, target=optnoise.Target(EPSILON),
                                                    neighbourhood=optnoise.Neighbourhood.bd(N), cost=COST))
    np.testing.assert_array_equal(by_distances.mechanism.pmf.probs, python_design.mechanism.pmf.probs)
    assert by_distances.report.certificate == python_design.report.certificate


def test_cli_design_gives_the_same_design_and_certificate(python_design, tmp_path):
    out = tmp_path / "hour.json"
    r = runner.invoke(app, ["design", "--n", str(N), "--epsilon", str(EPSILON), "--bd", str(N), "--cost", COST,
                            "--output", str(out), "--json"])
    assert r.exit_code == 0, r.stderr
    written = json.loads(out.read_text())
    np.testing.assert_array_equal(np.asarray(written["pmf"]), python_design.mechanism.pmf.probs)
    assert written["certificate"] == python_design.report.certificate.to_json()
    assert written["report"]["certificate"] == python_design.report.certificate.to_json(point=False)
    assert written["certificate"]["exact"] is True and written["report"]["analysis"]["exact"] is False
    loaded = optnoise.load_mechanism(out)   # what sample and release read: the same certified weights
    assert loaded.quantize().certificate == python_design.report.certificate


def test_cli_compare_designs_the_same_optimum(python_design, monkeypatch):
    seen = []

    def recording(request):
        found = optnoise.design(request)
        seen.append(found)
        return found

    monkeypatch.setattr(compare_module, "design", recording)
    r = runner.invoke(app, ["compare", "--n", str(N), "--epsilons", str(EPSILON), "--bd", str(N), "--cost", COST,
                            "--mechanisms", "optimal", "--json"])
    assert r.exit_code == 0, r.stderr
    (found,) = seen
    np.testing.assert_array_equal(found.mechanism.pmf.probs, python_design.mechanism.pmf.probs)
    assert found.report.certificate == python_design.report.certificate
    row = json.loads(r.stdout)["rows"][0]
    assert row["mechanism"] == "optimal" and row["expected_cost"] == pytest.approx(python_design.report.expected_cost,
                                                                                   rel=1e-12)


def test_table_planner_releases_the_same_design(python_design):
    frame = pd.DataFrame({"household": [1, 2, 3], "peak_hour": [18, 7, 19]})
    spec = {"keep": ["household"], "columns": {"peak_hour": {"domain": {"lower": 0, "upper": N, "cyclic": True},
                                                             "epsilon": EPSILON, "cost": COST}}}
    _, manifest = optnoise.release(frame, spec)   # unseeded: a seeded release withholds its certificate
    column = manifest["columns"]["peak_hour"]
    design_cert = python_design.report.certificate.to_json()   # its target, stated once in the manifest:
    assert column["certificate"] == {k: v for k, v in design_cert.items() if k not in ("epsilon", "delta")}
    assert (column["mechanism"]["target"]["epsilon"], column["mechanism"]["target"]["delta"]) == \
        (design_cert["epsilon"], design_cert["delta"])
    assert column["mechanism"]["quantized"]["weights"] == python_design.mechanism.quantize().to_json()["weights"]


def _without_time(doc: dict) -> dict:
    """A document less what differs between two runs of the same request: when, and which engine."""
    return {k: v for k, v in doc.items() if k not in ("created", "engine", "input", "spec")}


def test_the_query_door_cli_and_python_give_the_same_document(tmp_path):
    """The query's two front doors (issue 33): ``optnoise query`` and ``optnoise.query`` read the
    same spec and, for the same seed, write the same document (values, mechanisms, certificates,
    the unit's total)."""
    import warnings
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"household": rng.integers(0, 50, 300), "hour": rng.integers(0, 24, 300),
                          "kwh": np.round(rng.uniform(0, 3, 300), 1)})
    path = tmp_path / "readings.csv"
    frame.to_csv(path, index=False)
    spec = {"unit": {"id": "household", "max_rows": 6},
            "statistics": {"evening": {"kind": "count", "where": {"hour": {"lower": 17}}, "epsilon": 0.5},
                           "by_hour": {"kind": "histogram", "key": "hour", "keys": {"lower": 0, "upper": 23},
                                       "epsilon": 1.0},
                           "kwh": {"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 3},
                                   "resolution": 0.5, "epsilon": 1.0},
                           "peak": {"kind": "peak", "key": "hour", "keys": {"lower": 0, "upper": 23}, "of": "kwh",
                                    "clamp": {"lower": 0, "upper": 3}, "epsilon": 1.0}}}
    toml = tmp_path / "spec.toml"
    lines = ['unit = { id = "household", max_rows = 6 }',
             '[statistics.evening]', 'kind = "count"', 'where = { hour = { lower = 17 } }', 'epsilon = 0.5',
             '[statistics.by_hour]', 'kind = "histogram"', 'key = "hour"', 'keys = { lower = 0, upper = 23 }',
             'epsilon = 1.0',
             '[statistics.kwh]', 'kind = "sum"', 'column = "kwh"', 'clamp = { lower = 0, upper = 3 }',
             'resolution = 0.5', 'epsilon = 1.0',
             '[statistics.peak]', 'kind = "peak"', 'key = "hour"', 'keys = { lower = 0, upper = 23 }', 'of = "kwh"',
             'clamp = { lower = 0, upper = 3 }', 'epsilon = 1.0']
    toml.write_text("\n".join(lines) + "\n")
    out = tmp_path / "stats.json"
    r = runner.invoke(app, ["query", "--input", str(path), "--spec", str(toml), "--output", str(out), "--seed", "9"])
    assert r.exit_code == 0, r.output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        python = optnoise.query(pd.read_csv(path), spec, seed=9)
    cli = json.loads(out.read_text())
    assert _without_time(json.loads(json.dumps(python))) == _without_time(cli)
    assert cli["statistics"]["evening"]["value"] == python["statistics"]["evening"]["value"]
