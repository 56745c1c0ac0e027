"""A Spark standalone cluster on loopback, started from the installed pyspark (issue 38).

Run: .venv/bin/python bench/spark_cluster.py start [--workers 2] [--cores 1] [--memory 2g]
     .venv/bin/python bench/spark_cluster.py stop

``start`` launches a master and the workers (``spark-class org.apache.spark.deploy.master.Master``
and ``...worker.Worker``: the pip package has no ``sbin/start-master.sh``) on 127.0.0.1, on
free ports, waits until every worker has registered, prints the master's URL and writes the
processes' ids to ``.spark-cluster.json`` (or ``--state``); ``stop`` ends those processes
(by id, the whole process group of each) and removes the state. The tests'
``spark_cluster`` fixture and ``bench/query.py --engines spark-cluster`` use
:func:`start` and :meth:`Cluster.stop` from Python.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


def spark_home() -> Path:
    """The installed pyspark's directory (its ``bin/spark-class`` and jars)."""
    import pyspark
    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    """A running standalone cluster: its master URL, web UI port and processes."""

    url: str
    ui: int
    pids: list[int] = field(default_factory=list)
    logs: str = ""

    def workers_alive(self) -> int:
        """Workers registered and alive (the master's JSON page)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as r:
            return sum(1 for w in json.load(r).get("workers", []) if w.get("state") == "ALIVE")

    def kill_worker(self, index: int = 1) -> None:
        """Kill a worker (and its executors) at once, as a crashed machine (SIGKILL)."""
        _signal_group(self.pids[index], signal.SIGKILL)

    def stop(self) -> None:
        """End every process started, workers first (their executors with them)."""
        for pid in reversed(self.pids):
            _signal_group(pid, signal.SIGTERM)
        deadline = time.time() + 15
        for pid in reversed(self.pids):
            while time.time() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                _signal_group(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        return waited == 0
    except ChildProcessError:   # not our child (the command line's stop): ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)   # each process was started in its own session: its group is its id
    except (ProcessLookupError, PermissionError):
        pass


def _launch(args: list[str], log: Path, env: dict[str, str]) -> int:
    with open(log, "wb") as out:
        p = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], stdout=out, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
    return p.pid


def start(workers: int = 2, cores: int = 1, memory: str = "2g", timeout: float = 90.0,
          log_dir: str | None = None) -> Cluster:
    """Start a master and ``workers`` workers of ``cores`` cores and ``memory`` each on
    127.0.0.1 (free ports); return when all have registered (else stop them and raise)."""
    home = spark_home()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="optnoise-spark-cluster-"))
    work = logs / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_LOG_DIR": str(logs), "SPARK_WORKER_DIR": str(work)}
    port, ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    cluster = Cluster(url, ui, logs=str(logs))
    cluster.pids.append(_launch(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                                 "--webui-port", str(ui)], logs / "master.log", env))
    for i in range(workers):
        cluster.pids.append(_launch(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
                                     str(cores), "--memory", memory, "--webui-port", str(free_port()),
                                     "--work-dir", str(work / f"w{i}"), url], logs / f"worker{i}.log", env))
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cluster.workers_alive() >= workers:
                return cluster
        except OSError:
            pass
        time.sleep(0.5)
    cluster.stop()
    raise RuntimeError(f"the cluster did not start within {timeout:g} s (logs in {logs})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("start", "stop"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--memory", default="2g")
    ap.add_argument("--state", default=".spark-cluster.json")
    a = ap.parse_args()
    state = Path(a.state)
    if a.action == "start":
        c = start(a.workers, a.cores, a.memory)
        state.write_text(json.dumps({"url": c.url, "ui": c.ui, "pids": c.pids, "logs": c.logs}))
        print(c.url)
        return
    if state.exists():
        Cluster(**json.loads(state.read_text())).stop()
        state.unlink()


if __name__ == "__main__":
    main()
