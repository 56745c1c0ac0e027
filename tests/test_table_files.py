"""Releasing a table (issue 13): nothing lost, values read alike from CSV and Parquet, streaming."""

import hashlib
import json
import math
import os

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise import Neighbourhood, design_finite
from optnoise.cli import app
from optnoise.families.geometric import geometric_pmf
from optnoise.randomness import SeededRandomSource
from optnoise.table import release_file
from optnoise.table.files import CSV_BLOCK
from optnoise.table.plan import coarse_tails
from optnoise.table.spark import configured_master

runner = CliRunner()
N = 23


@pytest.fixture(scope="module")
def hour(tmp_path_factory):
    path = tmp_path_factory.mktemp("mech") / "hour.json"
    design_finite(N, epsilon=1.0, neighbourhood=Neighbourhood.bd(N), cost="circular-mse").mechanism.save(path)
    return path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _release(src, out, hour, *extra):
    return runner.invoke(app, ["release", "--input", str(src), "--column", "h", "--mechanism", str(hour),
                               "--output", str(out), *extra])


def test_never_writes_over_the_input_by_any_path(tmp_path, hour):
    src = tmp_path / "in.csv"
    src.write_text("h\n1\n2\n")
    before = _digest(src)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.csv").symlink_to(src)
    os.link(src, tmp_path / "hard.csv")
    for out in (src, tmp_path / "sub" / ".." / "in.csv", tmp_path / "link.csv", tmp_path / "hard.csv"):
        res = _release(src, out, hour, "--force")
        assert res.exit_code == 2 and "--output" in res.output and "not the input" in res.output, out
    assert _digest(src) == before and (tmp_path / "link.csv").is_symlink()
    # nor may the manifest (here a link to the input named like the manifest)
    (tmp_path / "o.csv.manifest.json").symlink_to(src)
    res = _release(src, tmp_path / "o.csv", hour, "--force")
    assert res.exit_code == 2 and "manifest would replace" in res.output and _digest(src) == before
    # a mechanism file that is read is protected too (through a link with an output's name)
    (tmp_path / "m.csv").symlink_to(hour)
    res = _release(src, tmp_path / "m.csv", hour, "--force")
    assert res.exit_code == 2 and "not the input" in res.output


def test_existing_output_or_manifest_needs_force(tmp_path, hour):
    src = tmp_path / "in.csv"
    src.write_text("h\n1\n2\n")
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    res = _release(src, out, hour)
    assert res.exit_code == 2 and "--force" in res.output and out.read_text() == "precious\n"
    out.unlink()
    (tmp_path / "out.csv.manifest.json").write_text("{}")
    res = _release(src, out, hour)
    assert res.exit_code == 2 and "manifest" in res.output and not out.exists()
    res = _release(src, out, hour, "--force", "--json")
    assert res.exit_code == 0 and json.loads((tmp_path / "out.csv.manifest.json").read_text())["input"]["rows"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv", "out.csv.manifest.json"]


def test_files_get_the_permissions_of_the_umask(tmp_path, hour):
    src = tmp_path / "in.csv"
    src.write_text("h\n1\n")
    old = os.umask(0o027)
    try:
        assert _release(src, tmp_path / "o.csv", hour).exit_code == 0
    finally:
        os.umask(old)
    for name in ("o.csv", "o.csv.manifest.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640, name


def test_keep_copies_text_unchanged_and_only_named_columns_are_written(tmp_path, hour):
    src = tmp_path / "in.csv"
    src.write_text('id,h,secret,note\n007,1,x,"a, b"\n010,2,y,\n')
    res = _release(src, tmp_path / "o.csv", hour, "--keep", "id,note", "--json")
    assert res.exit_code == 0, res.output
    man = json.loads(res.stdout)
    lines = (tmp_path / "o.csv").read_text().splitlines()
    assert lines[0] == "id,h,note"  # the input's column order; 'secret' is not written
    ids = [line.split(",")[0].strip('"') for line in lines[1:]]
    assert ids == ["007", "010"] and lines[1].endswith('"a, b"') and lines[2].endswith(",")
    assert man["kept"]["columns"] == ["id", "note"] and man["kept"]["protected"] is False
    assert man["output"]["columns"] == ["id", "h", "note"]
    bad = _release(src, tmp_path / "p.csv", hour, "--keep", "nope")
    assert bad.exit_code == 2 and "invalid --keep: nope" in bad.output
    both = _release(src, tmp_path / "p.csv", hour, "--keep", "h")
    assert both.exit_code == 2 and "--keep" in both.output


def test_integer_cells_read_alike_from_csv_and_parquet(tmp_path, hour):
    """``1.0`` is 1 in both formats; ``1_0``, booleans, exponents and fractions are refused with row and value."""
    (tmp_path / "a.csv").write_text("h\n3\n1.0\n+7.00\n")
    pd.DataFrame({"h": [3.0, 1.0, 7.0]}).to_parquet(tmp_path / "a.parquet")
    outs = []
    for name in ("a.csv", "a.parquet"):
        man = release_file(tmp_path / name, tmp_path / f"o_{name}", {"columns": {"h": {
            "domain": {"lower": 0, "upper": N, "cyclic": True}, "mechanism": hour}}}, source=SeededRandomSource(1))
        assert man["input"]["rows"] == 3
        out = tmp_path / f"o_{name}"
        outs.append((pd.read_csv(out) if name.endswith("csv") else pd.read_parquet(out))["h"].tolist())
    assert outs[0] == outs[1]  # same seed, same values read: same release
    for text, shown in (("1_0", "'1_0'"), ("true", "'true'"), ("false", "'false'"), ("1e3", "'1e3'"),
                        ("2.5", "'2.5'")):
        (tmp_path / "b.csv").write_text(f"h\n1\n{text}\n")
        res = _release(tmp_path / "b.csv", tmp_path / "ob.csv", hour)
        assert res.exit_code == 2 and f"row 2: {shown}" in res.output, (text, res.output)
    pd.DataFrame({"h": [True, False]}).to_parquet(tmp_path / "b.parquet")
    res = _release(tmp_path / "b.parquet", tmp_path / "ob.parquet", hour)
    assert res.exit_code == 2 and "row 1: True" in res.output
    res = _release(tmp_path / "a.csv", tmp_path / "oc.csv", hour, "--categories", ",".join(map(str, range(24))),
                   "--lower", "0")
    assert res.exit_code == 2 and "--lower" in res.output and "--categories" in res.output


@pytest.mark.slow
def test_streamed_batches_number_rows_across_the_file(tmp_path, hour):
    rows = CSV_BLOCK  # lines of 2-3 bytes: about three CSV blocks, so several batches
    values = np.arange(rows) % 24
    values_text = values.astype(str)
    values_text[rows - 5] = "x"
    (tmp_path / "in.csv").write_text("h\n" + "\n".join(values_text) + "\n")
    res = _release(tmp_path / "in.csv", tmp_path / "o.csv", hour)
    assert res.exit_code == 2 and f"row {rows - 4}: 'x'" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    values_text[rows - 5] = "1"
    (tmp_path / "in.csv").write_text("h\n" + "\n".join(values_text) + "\n")
    res = _release(tmp_path / "in.csv", tmp_path / "o.csv", hour, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["input"]["rows"] == rows
    assert len(pd.read_csv(tmp_path / "o.csv")) == rows


def test_coarse_tails_keep_the_distribution():
    alpha = math.exp(-0.005)
    pmf, note = coarse_tails(geometric_pmf(alpha))
    assert pmf.right_tail.period == math.ceil(math.log(0.9) / math.log(alpha)) and "blocks" in note
    k = np.arange(-3000, 3001, 7)
    np.testing.assert_allclose(pmf.mass(k), (1 - alpha) / (1 + alpha) * alpha ** np.abs(k), rtol=1e-9)
    same, none = coarse_tails(geometric_pmf(0.5))
    assert none is None and same.right_tail.period == 1


def test_configured_master_reads_the_usual_configuration(tmp_path):
    assert configured_master({}) is None
    assert configured_master({"PYSPARK_SUBMIT_ARGS": "--master yarn pyspark-shell"}) == "yarn"
    assert configured_master({"MASTER": "spark://h:7077"}) == "spark://h:7077"
    (tmp_path / "spark-defaults.conf").write_text("# comment\nspark.master   k8s://h:443\n")
    assert configured_master({"SPARK_CONF_DIR": str(tmp_path)}) == "k8s://h:443"
    assert configured_master({"SPARK_HOME": str(tmp_path / "none")}) is None
