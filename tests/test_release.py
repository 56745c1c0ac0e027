"""`optnoise release` / `optnoise sample`: files, manifests, failures, distributions (issue 6).

Statistical checks: chi-square at a false-alarm rate ALPHA = 1e-3 with fixed seeds,
each with a power check against a wrong distribution; the empirical hockey-stick
test estimates delta(eps) from two neighbouring inputs' releases.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest
from test_sampling import ALPHA, chi2_pvalue
from typer.testing import CliRunner

from optnoise import Neighbourhood, design_finite
from optnoise.cli import app
from optnoise.io import dumps
from optnoise.mechanism import load_mechanism
from optnoise.table import release_column

runner = CliRunner()
N = 23


@pytest.fixture(scope="module")
def mech_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("mech")
    design = design_finite(N, epsilon=1.0, neighbourhood=Neighbourhood.sd(1), cost="circular-mse")
    path = d / "design.json"
    path.write_text(dumps(design.to_json()))
    return path


def _released_pmf(path):
    return load_mechanism(path)


def _files(d):
    return sorted(p.name for p in d.iterdir())


def test_numeric_csv_release_with_manifest(tmp_path, mech_path):
    src = tmp_path / "in.csv"
    pd.DataFrame({"hour": np.arange(1000) % 24, "secret": 1}).to_csv(src, index=False)
    res = runner.invoke(app, ["release", "--input", str(src), "--column", "hour", "--mechanism", str(mech_path),
                              "--output", str(tmp_path / "out.csv"), "--unit", "value", "--json",
                              "--audit", str(tmp_path / "audit.json")])
    assert res.exit_code == 0, res.output
    man = json.loads(res.stdout)
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == ["hour"] and len(out) == 1000  # only the privatized column
    assert out["hour"].between(0, N).all()
    assert man["input"]["rows"] == 1000 and man["input"]["column"] == "hour" and "sha256" not in man["input"]
    audit = json.loads((tmp_path / "audit.json").read_text())   # the input's hash: private (issue 34)
    assert audit["private"] is True and len(audit["input"]["sha256"]) == 64
    assert man["private"] is True and "os.urandom" in man["randomness"]["source"]
    assert man["certificate"]["exact"] and man["certificate"]["delta_dp"] == 0.0
    assert man["certificate"]["epsilon_pure"] <= 1.0
    assert json.loads((tmp_path / "out.csv.manifest.json").read_text()) == man
    assert _files(tmp_path) == ["audit.json", "in.csv", "out.csv", "out.csv.manifest.json"]


def test_categorical_parquet_round_trip_and_seeded_reproducibility(tmp_path, mech_path):
    cats = [f"h{i:02d}" for i in range(N + 1)]
    src = tmp_path / "in.parquet"
    pd.DataFrame({"c": [cats[i % 24] for i in range(500)]}).to_parquet(src)
    args = ["release", "--input", str(src), "--column", "c", "--mechanism", str(mech_path),
            "--categories", ",".join(cats), "--seed", "9", "--unit", "value", "--json"]
    r1 = runner.invoke(app, args + ["--output", str(tmp_path / "a.parquet")])
    r2 = runner.invoke(app, args + ["--output", str(tmp_path / "b.parquet")])
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output
    a, b = pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet")
    assert set(a["c"]) <= set(cats) and a.equals(b)
    man = json.loads(r1.stdout)
    assert man["private"] is False and man["randomness"]["private"] is False
    assert man["domain"] == {"kind": "categorical", "categories": cats}


@pytest.mark.parametrize("content, message", [
    ("hour\n3\n\n5\n", "row 2: missing value"),
    ("hour\n3\n24\n", "row 2: '24'"),
    ("hour\n3\n2.5\n", "row 2: '2.5'"),
    ("other\n3\n", "--column"),
])
def test_bad_values_fail_with_row_and_leave_no_output(tmp_path, mech_path, content, message):
    src = tmp_path / "in.csv"
    src.write_text(content)
    res = runner.invoke(app, ["release", "--input", str(src), "--column", "hour", "--mechanism", str(mech_path),
                              "--output", str(tmp_path / "out.csv"), "--unit", "value"])
    assert res.exit_code == 2
    assert message in res.output
    assert _files(tmp_path) == ["in.csv"]


def test_unknown_category_and_wrong_category_count(tmp_path, mech_path):
    cats = [f"c{i}" for i in range(N + 1)]
    src = tmp_path / "in.csv"
    src.write_text("c\nc1\nzz\n")
    base = ["release", "--input", str(src), "--column", "c", "--mechanism", str(mech_path),
            "--output", str(tmp_path / "o.parquet"), "--unit", "value"]
    res = runner.invoke(app, base + ["--categories", ",".join(cats)])
    assert res.exit_code == 2 and "row 2: 'zz'" in res.output
    res = runner.invoke(app, base + ["--categories", "a,b"])
    assert res.exit_code == 2 and "exactly 24 categories" in res.output
    assert _files(tmp_path) == ["in.csv"]


def test_release_distribution_matches_the_certified_pmf(tmp_path, mech_path):
    mech = load_mechanism(mech_path)
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": np.full(100_000, 5)}).to_csv(src, index=False)
    from optnoise.randomness import SeededRandomSource
    man = release_column(src, "x", mech, tmp_path / "o.csv", unit="value", source=SeededRandomSource(21))
    noise = (pd.read_csv(tmp_path / "o.csv")["x"].to_numpy() - 5) % (N + 1)
    weights = np.array([int(w) for w in man["mechanism"]["quantized"]["weights"]], dtype=float)
    probs = weights / weights.sum()
    assert chi2_pvalue(noise, probs) > ALPHA
    assert chi2_pvalue((noise + 1) % (N + 1), probs) < ALPHA  # power: a shifted release is caught


def _empirical_delta(a: np.ndarray, b: np.ndarray, eps: float, size: int) -> float:
    pa = np.bincount(a, minlength=size) / a.size
    pb = np.bincount(b, minlength=size) / b.size
    return float(np.maximum(pa - math.exp(eps) * pb, 0).sum())


def test_empirical_hockey_stick_of_release(tmp_path):
    """Release two neighbouring inputs (5 and 6) many times; estimate delta(eps) (Google's DP testing approach)."""
    eps, delta = 0.5, 0.05
    design = design_finite(N, epsilon=eps, delta=delta, neighbourhood=Neighbourhood.sd(1), cost="circular-mse")
    path = tmp_path / "m.json"
    path.write_text(dumps(design.to_json()))
    mech = load_mechanism(path)
    from optnoise.randomness import SeededRandomSource
    outs = []
    for value, seed in ((5, 1), (6, 2)):
        src = tmp_path / f"in{value}.csv"
        pd.DataFrame({"x": np.full(200_000, value)}).to_csv(src, index=False)
        man = release_column(src, "x", mech, tmp_path / f"o{value}.csv", unit="value", source=SeededRandomSource(seed))
        outs.append(pd.read_csv(tmp_path / f"o{value}.csv")["x"].to_numpy())
    certified = man["only_if_unseeded"]["certificate"]["delta_dp"]   # seeded: held apart (issue 25)
    assert certified <= delta
    est = max(_empirical_delta(outs[0], outs[1], eps, N + 1), _empirical_delta(outs[1], outs[0], eps, N + 1))
    # sampling error of the estimate is ~ sqrt(sum p / n) ~ 0.003 here; 0.01 is > 3 standard errors
    assert est <= certified + 0.01
    # power: the same data refute a claim of (0.5, 0.02)-DP, and of pure 0.25-DP
    assert est > 0.02 + 0.01
    assert _empirical_delta(outs[0], outs[1], 0.25, N + 1) > 0.05


def test_sample_cli_outputs(tmp_path, mech_path):
    res = runner.invoke(app, ["sample", "--mechanism", str(mech_path), "--count", "1000", "--output",
                              str(tmp_path / "s.npy"), "--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert payload["count"] == 1000 and payload["private"] is True and payload["certificate"]["exact"]
    assert np.load(tmp_path / "s.npy").shape == (1000,)
    a = json.loads(runner.invoke(app, ["sample", "--mechanism", str(mech_path), "--count", "50", "--json"]).stdout)
    b = json.loads(runner.invoke(app, ["sample", "--mechanism", str(mech_path), "--count", "50", "--json"]).stdout)
    assert a["samples"] != b["samples"]
    s = json.loads(runner.invoke(app, ["sample", "--mechanism", str(mech_path), "--count", "5", "--seed", "1",
                                       "--json"]).stdout)
    assert s["private"] is False
    bad = runner.invoke(app, ["sample", "--mechanism", str(mech_path), "--count", "5", "--output", str(tmp_path / "x.txt")])
    assert bad.exit_code == 2 and "--output" in bad.output


def test_plain_pmf_file_with_target(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps([0.5, 0.25, 0.25]))
    ok = runner.invoke(app, ["sample", "--mechanism", str(p), "--count", "3", "--epsilon", "0.7", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["certificate"]["delta_dp"] == 0.0
    miss = runner.invoke(app, ["sample", "--mechanism", str(p), "--count", "3", "--epsilon", "0.5"])
    assert miss.exit_code == 2 and "cannot quantize" in miss.output  # a missed target is bad input (issue 26)


# ------------------------------------------------------------------ Spark
@pytest.fixture(scope="module")
def spark():
    from optnoise.table.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    session = spark_session()
    yield session


def test_spark_release_matches_local_distribution(tmp_path, mech_path, spark):
    mech = load_mechanism(mech_path)
    src = tmp_path / "in.parquet"
    pd.DataFrame({"x": np.full(40_000, 7)}).to_parquet(src)
    from optnoise.randomness import SeededRandomSource
    man = release_column(src, "x", mech, tmp_path / "out.parquet", unit="value", engine="spark",
                         source=SeededRandomSource(4))
    assert (tmp_path / "out.parquet").is_dir() and man["engine"] == "spark" and man["input"]["rows"] == 40_000
    noise = (pd.read_parquet(tmp_path / "out.parquet")["x"].to_numpy() - 7) % (N + 1)
    weights = np.array([int(w) for w in man["mechanism"]["quantized"]["weights"]], dtype=float)
    assert chi2_pvalue(noise, weights / weights.sum()) > ALPHA
    assert chi2_pvalue((noise + 1) % (N + 1), weights / weights.sum()) < ALPHA
    # the local engine on the same input, same distribution (two-sample chi-square)
    release_column(src, "x", mech, tmp_path / "local.parquet", unit="value", source=SeededRandomSource(5))
    local = (pd.read_parquet(tmp_path / "local.parquet")["x"].to_numpy() - 7) % (N + 1)
    table = np.array([np.bincount(noise, minlength=N + 1), np.bincount(local, minlength=N + 1)])
    table = table[:, table.sum(axis=0) > 0]
    from scipy.stats import chi2_contingency
    assert chi2_contingency(table).pvalue > ALPHA


def test_spark_categorical_csv_and_failure_leaves_nothing(tmp_path, mech_path, spark):
    cats = [f"k{i}" for i in range(N + 1)]
    src = tmp_path / "in.csv"
    src.write_text("c\n" + "\n".join(cats[i % 24] for i in range(300)) + "\n")
    mech = load_mechanism(mech_path)
    man = release_column(src, "c", mech, tmp_path / "out.csv", categories=cats, unit="value", engine="spark")
    assert man["private"] is True
    parts = sorted((tmp_path / "out.csv").glob("part-*.csv"))
    values = pd.concat([pd.read_csv(p) for p in parts])["c"]
    assert len(values) == 300 and set(values) <= set(cats)
    bad = tmp_path / "bad.csv"
    bad.write_text("c\nk1\nnope\n")
    from optnoise.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="row 2: 'nope'"):
        release_column(bad, "c", mech, tmp_path / "bad_out.csv", categories=cats, unit="value", engine="spark")
    assert not (tmp_path / "bad_out.csv").exists() and not (tmp_path / "bad_out.csv.manifest.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bad_out")]
