"""`optnoise demo`: runs end to end and writes what it says."""

import json
import math

import pytest
from typer.testing import CliRunner

from optnoise.cli import app
from optnoise.datasets import meter_peak_hours
from optnoise.families.baselines import wrap
from optnoise.families.geometric import geometric_pmf


@pytest.mark.slow
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
    # the one-hour design per record: any hour may become any other (12 = 12 hours x eps 1, the farthest shift)
    assert abs(summary["per_record"]["epsilon_pure"] - 12.0) < 1e-6
    # the release: the households' table per record, one budget, household id kept (not protected)
    manifest = json.loads((tmp_path / "out" / "released.csv.manifest.json").read_text())
    assert manifest["input"]["rows"] == summary["households"] and manifest["private"] is True
    assert manifest["unit"]["kind"] == "record" and manifest["kept"] == {
        "columns": ["household"], "protected": False, "note": manifest["kept"]["note"]}
    for name, col in manifest["columns"].items():
        cert, target = col["certificate"], col["mechanism"]["target"]
        assert cert["exact"] and cert["epsilon_pure"] <= target["epsilon"], name
    total = manifest["total"]
    assert total["basic"]["epsilon"] == sum(c["mechanism"]["target"]["epsilon"] for c in manifest["columns"].values())
    assert total["within_budget"] and total["basic"]["epsilon"] <= total["budget"]["epsilon"]
    # the household's guarantee in attack terms, beside its epsilon (issue 24)
    said = summary["release"]["in_words"]
    assert "DP" in said and "In attack terms" in said and "right at most" in said
    assert total["attack"]["tpr_at_fpr"]["0.05"] <= math.exp(total["basic"]["epsilon"]) * 0.05
    released = (tmp_path / "out" / "released.csv").read_text().splitlines()
    assert released[0] == "household,peak_hour,tariff,occupants" and len(released) == summary["households"] + 1
    # per-record optimum at eps 1 on 24 hours: 11 noise values at e*m, 13 at m (the LP over k by hand), so the
    # true hour is kept with probability e/(11e + 13) = 0.0634
    assert 0.9 < summary["release"]["changed_fraction"] < 0.97


def test_example_data_is_on_the_hour_domain():
    h = meter_peak_hours(1000)
    assert h.min() >= 0 and h.max() <= 23 and h.size == 1000


def test_wrapped_geometric_is_the_wrap_of_the_integer_pmf():
    import numpy as np
    a, size = 0.6, 5
    k = np.arange(-400, 401)
    direct = np.bincount(k % size, weights=(1 - a) / (1 + a) * a ** np.abs(k), minlength=size)
    np.testing.assert_allclose(wrap(geometric_pmf(a), size).probs, direct / direct.sum(), rtol=1e-12)
