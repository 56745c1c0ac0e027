"""Releasing a table on Spark (issue 13): one pass, the same distribution and manifest as the local engine.

Two-sample chi-square at ALPHA = 1e-3 between the engines; few, small tests (Spark is slow to start).
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from test_sampling import ALPHA

from optnoise import Neighbourhood, design_finite
from optnoise.errors import InvalidParameterError
from optnoise.randomness import SeededRandomSource
from optnoise.table import release_file

N = 23
STATES = ["CA", "NY", "TX", "WA"]


@pytest.fixture(scope="module")
def spark():
    from optnoise.table.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def _spec(hour_file):
    return {"keep": ["id"], "budget": {"epsilon": 2.5},
            "columns": {"hour": {"domain": {"lower": 0, "upper": N, "cyclic": True}, "mechanism": str(hour_file)},
                        "state": {"domain": {"categories": STATES}, "epsilon": 1.0}}}


def test_spark_spec_release_matches_local(tmp_path, spark):
    hour = tmp_path / "hour.json"
    design_finite(N, epsilon=1.0, neighbourhood=Neighbourhood.bd(N), cost="circular-mse").mechanism.save(hour)
    rows = 20_000
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(rows)], "hour": np.full(rows, 5),
                          "state": np.full(rows, "NY"), "other": 1})
    frame.to_csv(tmp_path / "in.csv", index=False)
    local = release_file(tmp_path / "in.csv", tmp_path / "local.csv", _spec(hour), source=SeededRandomSource(1))
    on_spark = release_file(tmp_path / "in.csv", tmp_path / "spark.csv", _spec(hour), engine="spark",
                            source=SeededRandomSource(2))
    assert on_spark["engine"] == "spark" and on_spark["input"]["rows"] == rows
    # seeded (issue 25): the total and every certificate are held under only_if_unseeded
    assert "total" not in local and "total" not in on_spark
    for key in ("unit", "kept", "only_if_unseeded"):
        assert on_spark[key] == local[key], key
    assert {k: v["certificate"] for k, v in on_spark["only_if_unseeded"]["columns"].items()} == \
           {k: v["certificate"] for k, v in local["only_if_unseeded"]["columns"].items()}
    parts = sorted((tmp_path / "spark.csv").glob("part-*.csv"))
    out_spark = pd.concat([pd.read_csv(p) for p in parts])
    out_local = pd.read_csv(tmp_path / "local.csv")
    assert list(out_spark.columns) == ["id", "hour", "state"] and sorted(out_spark["id"]) == sorted(frame["id"])
    for col, values in (("hour", range(N + 1)), ("state", STATES)):
        table = np.array([[np.sum(out[col].to_numpy() == v) for v in values] for out in (out_spark, out_local)])
        table = table[:, table.sum(axis=0) > 0]
        assert chi2_contingency(table).pvalue > ALPHA, col
    # power: the local release against a release of a different true value (hour 6) is caught
    frame.assign(hour=6).to_csv(tmp_path / "in6.csv", index=False)
    release_file(tmp_path / "in6.csv", tmp_path / "six.csv", _spec(hour), source=SeededRandomSource(3))
    six = pd.read_csv(tmp_path / "six.csv")
    table = np.array([[np.sum(out["hour"].to_numpy() == v) for v in range(N + 1)] for out in (six, out_local)])
    assert chi2_contingency(table).pvalue < ALPHA


def test_spark_bad_value_names_its_row_in_the_file(tmp_path, spark):
    rows = 30_000
    hours = (np.arange(rows) % 24).astype(str)
    hours[25_000] = "99"
    (tmp_path / "in.csv").write_text("id,hour,state\n" + "".join(f"{i},{h},CA\n" for i, h in enumerate(hours)))
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "65536")  # several partitions
    try:
        with pytest.raises(InvalidParameterError, match="row 25001: '99'"):
            release_file(tmp_path / "in.csv", tmp_path / "out.parquet",
                         {"columns": {"hour": {"domain": {"lower": 0, "upper": N, "cyclic": True}, "epsilon": 1.0}}},
                         engine="spark")
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]  # no output, no manifest, no temporary


def test_jvm_start_up_lines_stay_off_the_terminal(capfd):
    """Spark is quiet on success (issue 26): a process started while the session is created
    (the JVM) writes its start-up lines into the captured file, not to our stderr; our own
    stderr is back afterwards, and a failure is told in one line, the JVM's last."""
    import subprocess
    import sys

    from optnoise.table.spark import jvm_last_line, jvm_stderr_captured
    with jvm_stderr_captured() as log:
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('WARN Utils: loopback\\nError: no java\\n')"],
                       check=True)
        assert jvm_last_line(log, RuntimeError("ignored")) == "Error: no java"
    sys.stderr.write("ours\n")
    captured = capfd.readouterr()
    assert "loopback" not in captured.err and "no java" not in captured.err and "ours" in captured.err


def test_spark_release_writes_on_the_drivers_filesystem(tmp_path, spark):
    # issue 38: the output goes where the user said, by its file:// URI, even on a session
    # whose default filesystem is another one (HDFS on many clusters); the manifest says where
    (tmp_path / "in.csv").write_text("id,hour\n" + "".join(f"{i},{i % 24}\n" for i in range(50)))
    spec = {"columns": {"hour": {"domain": {"lower": 0, "upper": N, "cyclic": True}, "epsilon": 1.0}}}
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    saved = conf.get("fs.defaultFS")
    conf.set("fs.defaultFS", "hdfs://127.0.0.1:1")   # nothing listens there
    try:
        manifest = release_file(tmp_path / "in.csv", f"file://{tmp_path}/out.csv", spec, engine="spark",
                                source=SeededRandomSource(1))
    finally:
        conf.set("fs.defaultFS", saved)
    assert manifest["output"]["uri"] == f"file://{tmp_path}/out.csv"
    assert manifest["output"]["path"] == str(tmp_path / "out.csv")
    assert sum(len(pd.read_csv(p)) for p in (tmp_path / "out.csv").glob("part-*.csv")) == 50
    assert (tmp_path / "out.csv.manifest.json").exists()
    with pytest.raises(InvalidParameterError, match="driver's filesystem"):
        release_file(tmp_path / "in.csv", "hdfs://namenode/out.csv", spec, engine="spark")
