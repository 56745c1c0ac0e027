"""Timing shared by the benchmarks (run as scripts from the repository root)."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def median_time(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The median wall time of ``repeats`` calls of ``fn`` and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out
