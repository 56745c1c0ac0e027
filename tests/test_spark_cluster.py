"""Statistics on a real Spark standalone cluster (issue 38): the ``spark_cluster`` fixture's
master and worker on loopback. The query's document is the local engine's for the same seed;
Ctrl-C exits 130 and ends the application on the master. The command runs in a process of
its own (a new session on the cluster: the tests' local session is not reused)."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from test_spark_failures import interrupted_query

from optnoise.demo import STATISTICS_TOML
from optnoise.query.files import query_file
from optnoise.randomness import SeededRandomSource

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _apps(cluster) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.ui}/json/", timeout=5) as r:
        return json.load(r)


def test_query_on_the_cluster_is_the_local_document(tmp_path, spark_cluster):
    from optnoise.datasets import meter_readings
    frame = meter_readings(150, seed=3)
    frame = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)   # a household's rows scattered
    frame.to_parquet(tmp_path / "readings.parquet", index=False, row_group_size=500)
    (tmp_path / "statistics.toml").write_text(STATISTICS_TOML)
    run = subprocess.run([sys.executable, "-c", "from optnoise.cli import main; main()", "query", "--input",
                          str(tmp_path / "readings.parquet"), "--spec", str(tmp_path / "statistics.toml"), "--engine",
                          "spark", "--spark-master", spark_cluster.url, "--seed", "7", "--output",
                          str(tmp_path / "cluster.json")], capture_output=True, text=True, env=ENV, timeout=600)
    assert run.returncode == 0, run.stderr
    remote = json.loads((tmp_path / "cluster.json").read_text())
    local = query_file(tmp_path / "readings.parquet", tmp_path / "statistics.toml", source=SeededRandomSource(7))
    assert remote["engine"] == "spark" and local["engine"] == "local"
    assert remote["statistics"] == local["statistics"]
    apart = ("engine", "created", "spec")   # the spec file's record: the command line's
    assert {k: v for k, v in remote.items() if k not in apart} == {k: v for k, v in local.items() if k not in apart}
    assert any(a["name"] == "optnoise-release" for a in _apps(spark_cluster)["completedapps"])


def test_ctrl_c_on_the_cluster_exits_130_and_ends_the_application(tmp_path, spark_cluster):
    p, err = interrupted_query(tmp_path, spark_cluster.url)
    assert p.returncode == 130, err
    deadline = time.time() + 30
    while time.time() < deadline and _apps(spark_cluster)["activeapps"]:
        time.sleep(0.5)
    assert not _apps(spark_cluster)["activeapps"]
