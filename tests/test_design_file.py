"""The design file's two privacy figures, for every problem that writes one (docs/cli.md, "design";
issue 21 item 3, issue 33 item 6): the float analysis of the written masses at the file's target
under ``report.analysis`` (``"exact": false``), the exact certificate of the quantized weights that
are sampled under ``report.certificate`` and, for one version, the top-level ``certificate``
(``"exact": true``). Both are recomputed here from the file as ``load_mechanism`` reads it."""

import json

import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.analysis import guarantee
from optnoise.cli import app

runner = CliRunner()

#: One small request per problem of ``design`` (and ``rr``, whose file has the same report).
REQUESTS = {
    "finite": ["design", "--n", "6", "--epsilon", "1", "--delta", "0.01", "--sd", "1", "--cost", "circular-mse"],
    "modulo": ["design", "--n", "6", "--epsilon", "1", "--per-record", "--cost", "abs-error"],
    "channel": ["design", "--form", "channel", "--n", "5", "--epsilon", "1", "--per-record"],
    "releases": ["design", "--n", "6", "--sd", "1", "--epsilon", "2", "--delta", "1e-6", "--releases", "2"],
    "rr": ["rr", "--categories", "4", "--epsilon", "1", "--delta", "0.01"],
}


@pytest.mark.parametrize("problem", sorted(REQUESTS))
def test_the_float_analysis_is_under_report_analysis_and_the_certificate_is_exact(problem, tmp_path):
    out = tmp_path / "design.json"
    r = runner.invoke(app, [*REQUESTS[problem], "--output", str(out), "--json"])
    assert r.exit_code == 0, r.stderr
    written = json.loads(out.read_text())
    report = written["report"]
    assert report["problem"] == problem
    mechanism = optnoise.load_mechanism(out)
    target = mechanism.target
    at = {} if target is None else {"epsilon": target.epsilon, "delta": None if target.pure else target.delta}
    assert report["analysis"] == guarantee(mechanism.privacy, **at).to_json(point=False)
    assert report["analysis"]["exact"] is False
    assert report["certificate"] == mechanism.quantize().certificate.to_json(point=False)
    assert report["certificate"]["exact"] is True
    assert "analysis" not in written   # the float analysis has one place: report.analysis
    if "certificate" in written:       # the deprecated top-level copy is the exact one, never the float one
        assert written["certificate"]["exact"] is True
        assert written["certificate"] == mechanism.quantize().certificate.to_json()
