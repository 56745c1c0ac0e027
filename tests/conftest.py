"""Shared helpers for the optnoise tests."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# Property tests are reproducible in `make test` and CI (the same examples on every run, no
# example database); `pytest --hypothesis-profile=explore` searches with fresh random examples.
settings.register_profile("optnoise", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile("optnoise")

# Markers (registered in pyproject.toml), applied here once:
# * ``spark``: every test that takes the ``spark`` fixture (a local SparkSession: a JVM);
# * ``slow``: tests of several seconds each, marked where they are written (``@pytest.mark.slow``;
#   tests/test_docs.py as a whole: the documented commands, run in order).
# ``pytest -m "not spark and not slow"`` is the inner loop; ``make test`` runs everything.
#
# With pytest-xdist (``-n 2``: ``make test``) a test module runs on one worker, in its order,
# its module fixtures built once, and the modules that define a ``spark`` fixture run on one
# worker (one JVM); the two longest groups (the documented commands, Spark) are handed out
# first, so that they run side by side. (xdist's own ``loadgroup`` cannot be used: it renames
# node ids, which pytest 9 no longer allows.)
TESTS = Path(__file__).resolve().parent
FIRST = ("tests/test_docs.py", "spark")


def spark_modules() -> frozenset[str]:
    """The test modules (as node ids start) that define a ``spark`` fixture."""
    return frozenset(f"tests/{p.name}" for p in TESTS.glob("test_*.py")
                     if re.search(r"^def spark\(", p.read_text(), flags=re.M))


def group_of(nodeid: str, spark: frozenset[str]) -> str:
    module = nodeid.split("::")[0]
    return "spark" if module in spark else module


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "load":
        config.option.dist = "loadfile"   # the default of -n: by module (the scheduler below)
        config.option.loadscopereorder = False   # keep the order of the collection (the longest groups first)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """(xdist, on the controller) Scheduling by module, the Spark modules as one group."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    spark = spark_modules()

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid, spark)

    return ByModule(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        if "spark_cluster" in getattr(item, "fixturenames", ()):
            for mark in (pytest.mark.spark, pytest.mark.slow, pytest.mark.spark_cluster):
                item.add_marker(mark)
    if hasattr(config, "workerinput"):   # an xdist worker: the longest groups first (a stable sort)
        spark = spark_modules()
        rank = {name: i for i, name in enumerate(FIRST)}
        items.sort(key=lambda item: rank.get(group_of(item.nodeid, spark), len(FIRST)))


@pytest.fixture(scope="module")
def spark_cluster():
    """A Spark standalone cluster on loopback (a master and one worker of 1 core and 1 GB, free
    ports), started from the installed pyspark by ``bench/spark_cluster.py`` and stopped after
    the module (marked ``spark``, ``slow``, ``spark_cluster``)."""
    import sys
    sys.path.insert(0, str(TESTS.parent / "bench"))
    from spark_cluster import start
    cluster = start(workers=1, cores=1, memory="1g")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def both_engines():
    """``run(spec, data, seed)``: the documents of ``optnoise query --json`` on the local engine
    and on Spark, each asserted to exit 0 (a Spark test compares them)."""
    import json

    from typer.testing import CliRunner

    from optnoise.cli.app import app

    def run(spec: Path, data: Path, seed: int) -> list[dict]:
        docs = []
        for engine in ("local", "spark"):
            r = CliRunner().invoke(app, ["query", "--spec", str(spec), "--input", str(data), "--seed", str(seed),
                                         "--json", "--engine", engine])
            assert r.exit_code == 0, r.output
            docs.append(json.loads(r.stdout))
        return docs
    return run


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator for test data (never a privacy source)."""
    return np.random.default_rng(12345)


# Kadam et al. 2024, Table 1 (n = 8, directed BD mu_bar = 3, eps = 1.5): the printed,
# 4-decimal columns, keyed by the column's delta.
KADAM_TABLE1 = {
    0.0: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1212: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1238: [0.5548, 0.1238, 0.1238, 0.1238, 0.0276, 0.0276, 0.0062, 0.0062, 0.0062],
    0.1522: [0.5575, 0.1244, 0.1244, 0.1244, 0.0278, 0.0278, 0.0062, 0.0062, 0.0014],
}
