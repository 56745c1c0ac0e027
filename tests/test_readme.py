"""The README's Python tour runs as written, and its claims hold."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_tour_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert abs(ns["mech"].privacy.epsilon_pure - 0.6931471805599453) < 1e-12
    assert ns["hour"].kind == "cyclic" and ns["hour"].target.epsilon == 1.0
    assert ns["again"].quantize().certificate == ns["best"].certify()
    # the one door: the same design as the historic call, its exact certificate what is sampled
    assert ns["result"].report.certificate == ns["again"].quantize().certificate
    assert ns["result"].report.certificate.exact and not ns["result"].report.analysis.exact
    assert (ns["result"].mechanism.pmf.probs == ns["best"].pmf.probs).all()
    assert ns["again"].certify().epsilon_pure == ns["hour"].certify().epsilon_pure
    assert (tmp_path / "hour.json").is_file()
    assert ns["manifest"]["unit"]["kind"] == "record" and ns["released"]["household"].tolist() == [1, 2, 3]
    assert ns["manifest"]["columns"]["peak_hour"]["certificate"]["epsilon_pure"] <= 1.0
