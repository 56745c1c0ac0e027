"""A statistic is one file (issue 33, item 2): the kinds are found by a registry, and a kind
registered from this test file alone -- no other module edited -- runs locally and on Spark.

The toy kind ``toy-units`` counts the units with a counted row, as ``count`` does, but is
defined here: its document must equal the built-in count's for the same seed (the same
mechanism, the same draws), on the local engine and on Spark's two paths (CSV: the local
engine on the executors, which receive the kind with their function; Parquet: the JVM path).
"""

import sys
import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.query import query
from optnoise.query.cells import Answers
from optnoise.query.files import query_file
from optnoise.query.kinds import KINDS, derive, registered
from optnoise.query.kinds.base import Kind
from optnoise.query.spec import parse_query_spec

warnings.filterwarnings("ignore", message=".*not private.*")


class ToyUnits(Kind):
    """Units with at least one counted row (what ``count`` of units is), written here only."""

    name = "toy-units"
    keys = ()

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def contribution(self, stat, unit):
        return 0, 1

    def cells(self, stat, unit):
        return 1

    def answers(self, stat, part, counts):
        return Answers(np.array([[part["unit"].nunique()]], np.int64))

    def counts_units(self, stat):
        return True


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 300
    return pd.DataFrame({"u": rng.integers(0, 80, n), "h": rng.integers(0, 24, n)})


def _specs() -> tuple[dict, dict]:
    base = {"unit": {"id": "u", "max_rows": 2}}
    toy = {**base, "statistics": {"x": {"kind": "toy-units", "where": {"h": {"lower": 17}}, "epsilon": 1.0}}}
    count = {**base, "statistics": {"x": {"kind": "count", "where": {"h": {"lower": 17}}, "epsilon": 1.0}}}
    return toy, count


def _same(a: dict, b: dict) -> None:
    x, y = a["statistics"]["x"], b["statistics"]["x"]
    assert x["kind"] == "toy-units" and y["kind"] == "count"
    for key in ("value", "interval", "mechanism", "neighbourhood", "expected_abs_error"):
        assert x[key] == y[key], key
    assert a["only_if_unseeded"]["total"] == b["only_if_unseeded"]["total"]   # seeded: withheld, still composed


def test_the_registry_finds_the_five_kinds_in_order_and_refuses_others():
    assert KINDS.names()[:5] == ["count", "histogram", "sum", "peak", "mode"]
    with pytest.raises(InvalidParameterError) as err:
        parse_query_spec({"statistics": {"x": {"kind": "trimmed-mean", "epsilon": 1.0}}})
    assert err.value.parameter == "statistics.x.kind" and "count, histogram, sum, peak, mode" in err.value.accepted


def test_a_toy_kind_registered_here_runs_locally_as_its_twin():
    toy, count = _specs()
    with registered(ToyUnits()):
        assert "toy-units" in KINDS.names()
        stat = parse_query_spec(toy).statistics[0]
        assert derive(stat, parse_query_spec(toy).unit).distance == 1
        a = query(_frame(), toy, seed=11)
    _same(a, query(_frame(), count, seed=11))
    assert "toy-units" not in KINDS.names()   # removed after the block
    with pytest.raises(InvalidParameterError):
        parse_query_spec(toy)


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session   # pyspark is installed by `make test` (extra "spark")
    return spark_session()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_toy_kind_runs_on_spark_as_locally(tmp_path, fmt, spark):
    from pyspark import cloudpickle   # the executors unpickle the kind by value: this module is not importable there
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        path = tmp_path / f"in.{fmt}"
        frame = _frame()
        frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, index=False)
        toy, count = _specs()
        with registered(ToyUnits()):
            remote = query_file(path, toy, engine="spark", seed=5)
            local = query_file(path, toy, seed=5)
        assert remote["engine"] == "spark"
        for key in ("value", "interval"):
            assert remote["statistics"]["x"][key] == local["statistics"]["x"][key], key
        _same(local, query_file(path, count, seed=5))
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


MEAN = {"column": "kwh", "clamp": {"lower": 0, "upper": 3}, "resolution": 0.5, "epsilon": 1.0}


def _readings(units: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    return pd.DataFrame({"u": rng.integers(0, units, 400), "kwh": np.round(rng.uniform(-1, 4, 400), 2)})


def test_a_mean_is_the_released_sum_over_the_public_number_of_units():
    frame = _readings()
    units = frame["u"].nunique()
    mean = query(frame, {"unit": {"id": "u", "max_rows": 4}, "statistics": {"x": {"kind": "mean", **MEAN}}}, seed=4)
    total = query(frame, {"unit": {"id": "u", "max_rows": 4}, "statistics": {"x": {"kind": "sum", **MEAN}}}, seed=4)
    m, s = mean["statistics"]["x"], total["statistics"]["x"]
    assert m["units"] == units and m["value"] == pytest.approx(s["value"] / units, rel=1e-12)
    assert m["interval"] == pytest.approx([b / units for b in s["interval"]], rel=1e-12)
    assert m["expected_abs_error"] == pytest.approx(s["expected_abs_error"] / units, rel=1e-12)
    assert m["mechanism"] == s["mechanism"] and mean["only_if_unseeded"]["total"] == total["only_if_unseeded"]["total"]


def test_a_mean_under_add_remove_has_a_noisy_count_and_is_never_nan():
    # issue 35: under add-remove the mean is released from a centred sum and a noisy count
    # (tests/test_query_moments.py); under replace an empty table is refused (nothing public)
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 4, "change": "add-remove", "max_units": 100},
                             "statistics": {"x": {"kind": "mean", **MEAN}}})
    assert spec.statistics[0].kind == "mean"
    with pytest.raises(InvalidParameterError) as err:   # no units: nothing to release (never NaN)
        query(_readings().iloc[:0], {"unit": {"id": "u", "max_rows": 4}, "statistics": {"x": {"kind": "mean", **MEAN}}},
              seed=1)
    assert err.value.parameter == "input" and "no rows" in str(err.value.value)
