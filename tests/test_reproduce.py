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


@pytest.fixture
def drawn(monkeypatch):
    """The figures the reproduce helpers draw, kept open instead of saved."""
    import optnoise.plots as plots
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path, **kw: figures.append(fig))
    yield figures
    import matplotlib.pyplot as plt
    for fig in figures:
        plt.close(fig)


def test_coinciding_curves_stay_visible(drawn, tmp_path):
    """Issue 26, item 6 (kadam-fig6/7a/11): identical series get different markers and line
    styles, each later one thinner and above the earlier (no curve hides another)."""
    from optnoise.reproduce.common import line_plot
    line_plot(tmp_path / "x.png", [0, 1, 2], {"a": [1, 2, 3], "b": [1, 2, 3], "c": [1, 2, 3]}, title="t",
              xlabel="x", ylabel="y")
    lines = drawn[0].axes[0].get_lines()
    assert len({ln.get_marker() for ln in lines}) == 3 and len({str(ln.get_linestyle()) for ln in lines}) == 3
    assert [ln.get_zorder() for ln in lines] == sorted(ln.get_zorder() for ln in lines)
    assert lines[0].get_linewidth() > lines[1].get_linewidth() > lines[2].get_linewidth()


def test_categorical_bars_are_named_not_numbered(drawn, tmp_path):
    """holohan-example2: the two methods are named on the axis, not 0 and 1 (nor -0.25...)."""
    from optnoise.reproduce.common import bar_plot
    bar_plot(tmp_path / "x.png", {"ours": ([0, 1], [18360, 924]), "paper": ([0, 1], [18360, 1092])}, title="t",
             ticks=["all subsets", "sufficient sets only"], values=True)
    ax = drawn[0].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["all subsets", "sufficient sets only"]
    assert "924" in [t.get_text() for t in ax.texts]


def test_a_profile_below_the_floor_is_not_drawn_as_a_line(drawn):
    """releases.png: a delta below the axis' floor ends the curve (NaN), instead of a line at 1e-10."""
    import numpy as np
    import matplotlib.pyplot as plt

    from optnoise.plots import profile_axis
    fig, ax = plt.subplots()
    eps = np.linspace(0, 2, 5)
    profile_axis(ax, {"k-release": np.array([0.5, 1e-3, 1e-7, 0.0, 0.0])}, eps, 10, 1.0, 1e-6)
    y = ax.get_lines()[0].get_ydata()
    assert np.isnan(y[3:]).all() and not np.isnan(y[:3]).any()
    plt.close(fig)
