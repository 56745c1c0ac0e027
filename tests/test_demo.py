"""`optnoise demo`: runs end to end and writes what it says."""

import json

from typer.testing import CliRunner

from optnoise.cli import app
from optnoise.datasets import meter_peak_hours
from optnoise.families.baselines import wrap
from optnoise.families.geometric import geometric_pmf


def test_demo_writes_its_files(tmp_path):
    r = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    for name in summary["files"]:
        assert (tmp_path / "out" / name).stat().st_size > 0
    rows = {row["mechanism"].split(" ")[0]: row for row in summary["comparison"]}
    # every mechanism is calibrated to the same pure epsilon; the optimum is never worse
    for row in rows.values():
        assert row["epsilon_pure"] <= 1.0 + 1e-9
        assert rows["optimal"]["circular_mse"] <= row["circular_mse"] + 1e-12
    design = json.loads((tmp_path / "out" / "design.json").read_text())
    assert design["certificate"]["epsilon_pure"] <= 1.0 + 1e-9
    # the release: the column of the example data, with a manifest whose certificate is exact
    manifest = json.loads((tmp_path / "out" / "released.csv.manifest.json").read_text())
    assert manifest["input"]["rows"] == summary["households"] and manifest["private"] is True
    assert manifest["certificate"]["exact"] and manifest["certificate"]["epsilon_pure"] <= 1.0
    released = (tmp_path / "out" / "released.csv").read_text().splitlines()
    assert released[0] == "peak_hour" and len(released) == summary["households"] + 1
    assert 0.3 < summary["release"]["changed_fraction"] < 0.8  # error rate of the design is 0.538


def test_example_data_is_on_the_hour_domain():
    h = meter_peak_hours(1000)
    assert h.min() >= 0 and h.max() <= 23 and h.size == 1000


def test_wrapped_geometric_is_the_wrap_of_the_integer_pmf():
    import numpy as np
    a, size = 0.6, 5
    k = np.arange(-400, 401)
    direct = np.bincount(k % size, weights=(1 - a) / (1 + a) * a ** np.abs(k), minlength=size)
    np.testing.assert_allclose(wrap(geometric_pmf(a), size).probs, direct / direct.sum(), rtol=1e-12)
