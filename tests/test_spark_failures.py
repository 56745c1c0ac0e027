"""A failed Spark job says why in one line (issue 38): out of memory (which side, the setting),
an executor lost after the retries, the input missing on an executor, an unreachable master
(its URL, within 30 s); Ctrl-C exits 130 and stops the Spark application.

The texts below are Spark's own (Spark 4, standalone and local); the unreachable master and
Ctrl-C are real processes."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optnoise.errors import OptnoiseError
from optnoise.publish.spark import check_master, job_failure

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

EXECUTOR_OOM = ("An error occurred while calling o1309.getResult.\n: org.apache.spark.SparkException: Job aborted due to "
                "stage failure: Task 0 in stage 3.0 failed 4 times, most recent failure: Lost task 0.3 in stage 3.0 "
                "(TID 9) (127.0.0.1 executor 1): java.lang.OutOfMemoryError: Java heap space\n\tat java.base/...")
EXECUTOR_OOM_EXIT = ("Job aborted due to stage failure: Task 2 in stage 1.0 failed 4 times, most recent failure: Lost task "
                     "2.3 in stage 1.0 (TID 11) (127.0.0.1 executor 4): ExecutorLostFailure (executor 4 exited caused by "
                     "one of the running tasks) Reason: Command exited with code 52")
BROADCAST = ("An error occurred while calling o1309.getResult.\n: org.apache.spark.sql.errors.QueryExecutionErrors: Not "
             "enough memory to build and broadcast the table to all worker nodes. As a workaround, you can either "
             "disable broadcast by setting spark.sql.autoBroadcastJoinThreshold to -1 or increase the spark driver "
             "memory by setting spark.driver.memory to a higher value.")
DRIVER_OOM = "An error occurred while calling o88.collectToPython.\n: java.lang.OutOfMemoryError: Java heap space\n\tat"
LOST = ("Job aborted due to stage failure: Task 1 in stage 2.0 failed 4 times, most recent failure: Lost task 1.3 in "
        "stage 2.0 (TID 7) (127.0.0.1 executor 3): ExecutorLostFailure (executor 3 exited caused by one of the running "
        "tasks) Reason: Remote RPC client disassociated. Likely due to containers exceeding thresholds, or network "
        "issues. Check driver logs for WARN messages.")
MISSING = ("Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0 in "
           "stage 0.0 (TID 0) (127.0.0.1 executor driver): org.apache.spark.SparkFileNotFoundException: "
           "[FAILED_READ_FILE.FILE_NOT_EXIST] File file:/data/readings.parquet does not exist. It is possible the "
           "underlying files have been updated.")


@pytest.mark.parametrize("text, words", [
    (EXECUTOR_OOM, ["an executor ran out of memory after 4 tries (spark.task.maxFailures)", "spark.executor.memory"]),
    (EXECUTOR_OOM_EXIT, ["an executor ran out of memory after 4 tries", "spark.executor.memory"]),
    (BROADCAST, ["the driver ran out of memory", "spark.driver.memory"]),
    (DRIVER_OOM, ["the driver ran out of memory", "spark.driver.memory"]),
    (LOST, ["an executor was lost after 4 tries (spark.task.maxFailures)"]),
    (MISSING, ["an executor cannot read file:/data/readings.parquet;", "every executor must see the input at the same"
               " path as the driver"]),
    ("An error occurred while calling o7.getResult.\n: something else", ["the Spark job failed: An error occurred"]),
])
def test_a_failed_job_says_why_in_one_line(text, words):
    message = str(job_failure(RuntimeError(text)))
    assert "\n" not in message and message.startswith("the Spark job failed: ")
    for w in words:
        assert w in message, (w, message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_master_is_named_at_once(tmp_path):
    url = f"spark://127.0.0.1:{_free_port()}"
    with pytest.raises(OptnoiseError, match=f"no Spark master answers at {url} "):
        check_master(url)
    check_master("local[2]")   # other masters are Spark's business
    (tmp_path / "in.csv").write_text("u,k\n1,0\n")
    (tmp_path / "q.toml").write_text('unit = { id = "u" }\n[statistics.n]\nkind = "count"\nepsilon = 1.0\n')
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", "from optnoise.cli import main; main()", "query", "--input",
                          str(tmp_path / "in.csv"), "--spec", str(tmp_path / "q.toml"), "--engine", "spark",
                          "--spark-master", url], capture_output=True, text=True, env=ENV, timeout=60)
    assert run.returncode == 1 and time.perf_counter() - t0 < 30
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "no Spark master answers" in lines[0], run.stderr


INTERRUPTED = r'''
import sys, threading, time
from optnoise.publish.spark import spark_session
spark = spark_session(sys.argv[1] or None)
spark.range(1).count()
print("ready", flush=True)
tracker = spark.sparkContext.statusTracker()

def job_started():   # the query's first Spark job under way
    while not tracker.getActiveJobsIds():
        time.sleep(0.05)
    print("job", flush=True)
threading.Thread(target=job_started, daemon=True).start()
from optnoise.cli import main
sys.argv = ["optnoise", "query", "--input", sys.argv[2], "--spec", sys.argv[3], "--engine", "spark"]
main()
'''


def interrupted_query(tmp_path: Path, master: str = "", delay: float = 0.5) -> tuple[subprocess.Popen, str]:
    """A query on Spark in a process group of its own, interrupted as Ctrl-C does (SIGINT to
    the group, the JVM included) ``delay`` seconds after its first Spark job started; its exit
    code and stderr. (Before issue 38 this exited 1, "the Spark job failed".)"""
    import numpy as np
    import pandas as pd
    n = 400_000
    pd.DataFrame({"u": np.arange(n) % 20_000, "k": np.arange(n) % 3, "v": np.arange(n) % 7 * 1.0}).to_parquet(
        tmp_path / "in.parquet", index=False)
    (tmp_path / "q.toml").write_text('unit = { id = "u", max_rows = 20 }\n[statistics.s]\nkind = "sum"\ncolumn = "v"\n'
                                     'clamp = { lower = 0, upper = 6 }\nby = "k"\ngroups = [0, 1, 2]\nepsilon = 1.0\n')
    p = subprocess.Popen([sys.executable, "-c", INTERRUPTED, master, str(tmp_path / "in.parquet"),
                          str(tmp_path / "q.toml")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=ENV, start_new_session=True)
    assert p.stdout.readline().strip() == "ready"
    assert p.stdout.readline().strip() == "job"
    time.sleep(delay)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    return p, err


@pytest.mark.spark
@pytest.mark.slow
def test_ctrl_c_exits_130(tmp_path):
    p, err = interrupted_query(tmp_path)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1].endswith("interrupted"), err
