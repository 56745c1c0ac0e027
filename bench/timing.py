"""Timing shared by the benchmarks (run as scripts from the repository root)."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from typing import Any, Callable

#: GNU time: the child's own peak RSS, not inflated by the measuring process's memory.
TIME = "/usr/bin/time"


def median_time(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The median wall time of ``repeats`` calls of ``fn`` and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def process_run(cmd: list[str], env: dict[str, str] | None = None, *, tree: bool = False) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of one process.

    The peak RSS is the largest single process of the run's tree as reported by GNU time
    (``%M``, from ``wait4``); with ``tree`` (Spark: a JVM and Python workers) the process
    tree is also sampled from /proc every 0.1 s and the largest *sum* of its resident sets is
    reported instead when larger.
    """
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        p = subprocess.Popen([TIME, "-f", "%M"] + cmd, stdout=out_f, stderr=err_f, env=env)
        total = 0.0
        while p.poll() is None:
            total = max(total, tree_rss_mb(p.pid)) if tree else 0.0
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        out_f.seek(0)
        err_f.seek(0)
        err = err_f.read().decode()
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[:4]} failed: {err[-2000:]}")
        peak = int(err.strip().splitlines()[-1]) / 1024
        return wall, max(peak, total), out_f.read().decode()


def tree_rss_mb(pid: int) -> float:
    """Sum of the resident sets of ``pid`` and its descendants (MB), from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total / 1024
