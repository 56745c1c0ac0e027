"""The Spark engine's JVM path (typed Parquet columns: the rules as Spark column expressions)
against the local engine on the same file: the same aggregates, counts and manifest.

The table exercises every rule where the two could part: units over ``max_rows`` whose later
rows (one with a missing value, which must not be refused) would change the answers, values
exactly half-way between two steps of the resolution (0.25, 0.75 at 0.5: ties go to even, as
``np.rint``), values beyond the clamp, undeclared and missing keys and groups, units whose rows
lie in several cells and groups (ties to the first declared), float keys (7.0 is the key 7,
7.5 is undeclared), text values of a ``where``; and one run without an id (each row a unit).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.files import query_file
from optnoise.query.spark import aggregate_spark
from optnoise.query.spark_rules import eligible
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource
from optnoise.table.files import read_batches

warnings.filterwarnings("ignore", message=".*not private.*")

GROUPS = [1, 2, 3]
STATS = {
    "n": {"kind": "count", "where": {"k": {"lower": 1, "upper": 2}}, "epsilon": 1.0},
    "rows": {"kind": "count", "of": "rows", "where": {"g": [1, 3], "t": ["a", "b"]}, "epsilon": 1.0},
    "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS, "epsilon": 1.0},
    "hr": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS,
           "epsilon": 1.0},
    "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 5}, "resolution": 0.5, "by": "g",
          "groups": GROUPS, "epsilon": 1.0},
    "s2": {"kind": "sum", "column": "w", "clamp": {"lower": -1, "upper": 3}, "resolution": 0.1, "by": "g",
           "groups": GROUPS, "epsilon": 1.0},
    "p": {"kind": "peak", "key": "f", "keys": [5, 7, 9], "of": "v", "clamp": {"lower": 0, "upper": 5},
          "method": "report-noisy-max", "epsilon": 1.0},
    "m": {"kind": "mode", "key": "t", "keys": ["a", "b", "c"], "epsilon": 1.0},
    # integer keys beyond 2^53 compare as integers (2^53 + 1 is no key, though its double is 2^53's)
    "hb": {"kind": "histogram", "of": "rows", "key": "big", "keys": [2**53, 2**53 + 2], "epsilon": 1.0},
}


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 500
    halves = np.array([0.25, 0.75, 1.25, 2.75, -0.25, 5.25, 4.75])
    v = np.where(rng.random(n) < 0.3, rng.choice(halves, n), np.round(rng.uniform(-2, 8, n), 3))
    frame = pd.DataFrame({"u": rng.integers(0, 70, n), "k": rng.integers(-1, 4, n), "g": rng.integers(0, 5, n),
                          "v": v, "w": np.round(rng.normal(1, 2, n), 2), "f": rng.choice([5.0, 7.0, 7.5, 9.0, np.nan], n),
                          "t": rng.choice(["a", "b", "c", "d"], n), "big": rng.choice([2**53, 2**53 + 1, 2**53 + 2], n)})
    # unit 100: 4 rows, the 4th (dropped at max_rows 3) has no value and would break its tie
    tie = pd.DataFrame({"u": [100] * 4 + [101] * 2, "k": [1, 2, 0, 2, 2, 1], "g": [3, 2, 1, 2, 3, 2],
                        "v": [1.0, 2.0, 3.0, np.nan, 5.0, 6.0], "w": [0.05, 0.15, 0.25, 0.35, 0.45, 2.5],
                        "f": [7.0, 7.0, 5.0, 5.0, 9.0, 9.0], "t": ["a", "b", "b", "a", "c", "c"],
                        "big": [2**53 + 1] * 6})
    return pd.concat([tie, frame], ignore_index=True)


@pytest.fixture(scope="module")
def spark():
    from optnoise.table.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def _same(spec_dict: dict, path, local_path=None) -> None:
    spec = parse_query_spec(spec_dict)
    from optnoise.table.spark import spark_session
    types = {f.name: f.dataType.simpleString() for f in spark_session().read.parquet(str(path)).schema.fields}
    assert eligible(types, spec)   # this path, not the local engine on the executors
    local = aggregate(read_batches(local_path or path, "parquet", list(spec.columns)), spec)
    remote = aggregate_spark(path, "parquet", spec)
    assert (remote.rows, remote.units, remote.kept) == (local.rows, local.units, local.kept)
    for stat in spec.statistics:
        a, b = answers(local, stat), answers(remote, stat)
        for field in ("cells", "scores", "argmax"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None and y is None) or np.array_equal(x, y), (stat.name, field, x, y)
        assert remote.counts[stat.name] == local.counts[stat.name], stat.name
    return local


def test_jvm_path_matches_local(tmp_path, spark, monkeypatch):
    frame = _table()
    frame.to_parquet(tmp_path / "in.parquet", index=False, row_group_size=97)   # several Spark splits? one file
    spec = {"unit": {"id": "u", "max_rows": 3}, "statistics": STATS}
    local = _same(spec, tmp_path / "in.parquet")
    assert local.rows - local.kept > 0 and {"values_clamped", "rows_undeclared_key_or_group"} <= set(local.counts["s"])
    assert local.counts["s"].get("rows_outside_the_units_group", 0) > 0
    assert local.counts["h"].get("units_with_rows_in_several_cells", 0) > 0
    assert answers(local, parse_query_spec(spec).statistics[-1]).cells.sum() < local.kept   # 2^53 + 1 left out
    # ties at the rounding: 0.25 / 0.5 = 0.5 -> 0, 0.75 / 0.5 = 1.5 -> 2 (half to even)
    assert np.rint(np.array([0.25, 0.75, 1.25]) / 0.5).tolist() == [0.0, 2.0, 2.0]
    # each row a unit (no id), and text ids
    frame.fillna({"v": 4.25}).to_parquet(tmp_path / "full.parquet", index=False)   # every row counted: no gap
    _same({"statistics": {k: STATS[k] for k in ("n", "h", "s", "m")}}, tmp_path / "full.parquet")
    # most units within max_rows: simple units (one cell) summed in Spark beside units in several cells
    _same({"unit": {"id": "u", "max_rows": 10}, "statistics": STATS}, tmp_path / "full.parquet")
    _same({"unit": {"id": "u", "max_rows": 10}, "statistics": {k: STATS[k] for k in ("n", "s", "p")}},
          tmp_path / "full.parquet")
    frame.assign(u="id" + frame["u"].astype(str)).to_parquet(tmp_path / "text.parquet", index=False)
    _same({"unit": {"id": "u", "max_rows": 2}, "statistics": {k: STATS[k] for k in ("n", "hr", "s2")}},
          tmp_path / "text.parquet")
    # the units that are not simple ranked on Spark (a window), not on the driver: by an IN filter, by a join
    import optnoise.query.spark as engine
    monkeypatch.setattr(engine, "DRIVER_ROWS", 0)
    _same(spec, tmp_path / "in.parquet")
    monkeypatch.setattr(engine, "IN_FILTER_UNITS", 0)
    _same({"unit": {"id": "u", "max_rows": 10}, "statistics": STATS}, tmp_path / "full.parquet")
    monkeypatch.undo()
    # the whole document: the same as the local engine's, same seed
    small = {"unit": {"id": "u", "max_rows": 3}, "statistics": {k: STATS[k] for k in ("n", "p")}}
    doc = query_file(tmp_path / "in.parquet", small, engine="spark", source=SeededRandomSource(1))
    ref = query_file(tmp_path / "in.parquet", small, source=SeededRandomSource(1))
    assert doc["engine"] == "spark" and doc["bounding"] == ref["bounding"]
    assert doc["statistics"] == ref["statistics"]


def test_jvm_path_refuses_as_local(tmp_path, spark):
    frame = _table()
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": STATS["s"]}})
    bad = frame.copy()
    bad.loc[10, "v"], bad.loc[10, "g"] = np.nan, 1   # a counted row without a value: data row 11
    bad.to_parquet(tmp_path / "bad.parquet", index=False)
    with pytest.raises(InvalidParameterError, match="missing value at data row 11"):
        aggregate_spark(tmp_path / "bad.parquet", "parquet", spec)
    with pytest.raises(InvalidParameterError, match="missing value at data row 11"):
        aggregate(read_batches(tmp_path / "bad.parquet", "parquet", list(spec.columns)), spec)
    frame["u"] = frame["u"].astype("Int64")
    frame.loc[200, "u"] = None
    frame.to_parquet(tmp_path / "noid.parquet", index=False)
    with pytest.raises(InvalidParameterError, match="data row 201"):
        aggregate_spark(tmp_path / "noid.parquet", "parquet", spec)
