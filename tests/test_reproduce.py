"""optnoise reproduce: the fast items' CSV numbers against the papers' printed values."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from optnoise import reproduce
from optnoise.cli import app
from optnoise.reproduce.kadam import TABLE1

runner = CliRunner()


def _csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_list_json_names_every_item_with_paper_and_description():
    res = runner.invoke(app, ["reproduce", "--list", "--json"])
    assert res.exit_code == 0, res.output
    items = json.loads(res.stdout)["items"]
    ids = {i["id"] for i in items}
    assert {"kadam-table1", "kadam-fig5a", "kadam-fig13", "geng-fig3", "geng-fig4", "qin-fig7", "qin-fig8",
            "qin-fig9", "qin-fig10", "qin-table5", "holohan-example2", "holohan-theorems"} <= ids
    assert all(i["paper"] and i["what"] for i in items)


def test_kadam_table1_within_printed_precision(tmp_path):
    res = runner.invoke(app, ["reproduce", "kadam-table1", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    rows = _csv(tmp_path / "kadam-table1.csv")
    assert (tmp_path / "kadam-table1.png").stat().st_size > 10_000
    for delta, paper in TABLE1.items():
        ours = [float(r["ours"]) for r in rows if float(r["delta"]) == delta]
        # f(0..5) are unique and match to the printed 4 decimals; f(6..8) are not unique at
        # delta = 0.1238 (docs/paper-notes.md): compare their sum
        assert ours[:6] == pytest.approx(paper[:6], abs=1e-4)
        assert sum(ours[6:]) == pytest.approx(sum(paper[6:]), abs=2e-4)


def test_geng_fig3_gains_at_a_few_epsilons(tmp_path):
    reproduce.run("geng-fig3", tmp_path)
    rows = {float(r["epsilon"]): r for r in _csv(tmp_path / "geng-fig3.csv")}
    # "for eps ~ 10 ... about 15-fold and 23-fold improvement"
    assert float(rows[10.0]["gain_abs"]) == pytest.approx(15, abs=0.5)
    assert float(rows[10.0]["gain_sq"]) == pytest.approx(23, abs=1.0)
    # high privacy: Laplace is asymptotically optimal, gain -> 1
    assert float(rows[0.1]["gain_abs"]) == pytest.approx(1.0, abs=0.01)
    gains = [float(r["gain_abs"]) for r in rows.values()]
    assert all(b >= a for a, b in zip(gains, gains[1:]))  # increasing in eps


def test_holohan_example2_counts(tmp_path):
    reproduce.run("holohan-example2", tmp_path)
    rows = {r["quantity"]: r for r in _csv(tmp_path / "holohan-example2.csv")}
    assert rows["checks without sufficient sets"]["ours"] == "18360" == rows["checks without sufficient sets"]["paper"]
    assert rows["ordered neighbour pairs"]["ours"] == "36"
    assert rows["checks with sufficient sets"]["ours"] == "924"  # the paper prints 1,092: see paper-notes


def test_unknown_item_is_exit_2(tmp_path):
    res = runner.invoke(app, ["reproduce", "kadam-table9", "--out", str(tmp_path)])
    assert res.exit_code == 2
    res = runner.invoke(app, ["reproduce", "--list", "--all"])
    assert res.exit_code == 2
