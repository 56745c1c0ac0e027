"""Statistics on Spark (issue 22, item 6): the same bounded aggregate as the local engine.

Spark is slow to start: one library test and one CLI run. The table is built so that every
bounding rule is exercised: a unit over ``max_rows`` whose dropped rows would change the
answers, ties between groups and between cells (first declared wins), undeclared keys and
groups, rows failing the ``where``, clamped values, a unit without an id refused.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.files import query_file, query_file_audited
from optnoise.query.spark import aggregate_spark
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource

warnings.filterwarnings("ignore", message=".*not private.*")

GROUPS = [1, 2, 3]
SPEC = {
    "unit": {"id": "u", "max_rows": 3},
    "statistics": {
        "n": {"kind": "count", "where": {"k": {"lower": 1, "upper": 2}}, "epsilon": 1.0},
        "rows": {"kind": "count", "of": "rows", "where": {"g": [1, 3]}, "epsilon": 1.0},
        "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS, "epsilon": 1.0},
        "hr": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS,
               "epsilon": 1.0},
        "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 5}, "resolution": 0.5, "by": "g",
              "groups": GROUPS, "epsilon": 1.0},
        "p": {"kind": "peak", "key": "k", "keys": [0, 1, 2], "of": "v", "clamp": {"lower": 0, "upper": 5},
              "method": "report-noisy-max", "epsilon": 1.0},
        "m": {"kind": "mode", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0},
    },
}


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    frame = pd.DataFrame({"u": rng.integers(0, 60, n), "k": rng.integers(-1, 4, n),  # -1, 3: undeclared
                          "g": rng.integers(0, 5, n), "v": np.round(rng.uniform(-2, 8, n), 2)})
    # a unit whose 4th row (dropped, max_rows 3) would break its tie; a tie between groups 2 and 3
    tie = pd.DataFrame({"u": [100] * 4 + [101] * 2, "k": [1, 2, 0, 2, 2, 1], "g": [3, 2, 1, 2, 3, 2],
                        "v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    return pd.concat([tie, frame], ignore_index=True)


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def test_spark_bounds_and_aggregates_as_local(tmp_path, spark):
    frame = _table()
    frame.to_csv(tmp_path / "in.csv", index=False)
    spec = parse_query_spec(SPEC)
    local = aggregate([frame.astype(str)], spec)   # the CSV as text, as the engines read it
    remote = aggregate_spark(tmp_path / "in.csv", "csv", spec)
    assert (remote.rows, remote.units, remote.kept) == (local.rows, local.units, local.kept)
    assert local.rows - local.kept > 0
    for stat in spec.statistics:
        a, b = answers(local, stat), answers(remote, stat)
        for field in ("cells", "scores", "argmax"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None and y is None) or np.array_equal(x, y), (stat.name, field)
        assert remote.counts[stat.name] == local.counts[stat.name], stat.name
    assert {"rows_undeclared_key_or_group", "values_clamped"} <= set(local.counts["s"])
    assert local.counts["n"]["rows_not_matching_where"] > 0
    assert local.counts["s"].get("rows_outside_the_units_group", 0) > 0
    assert answers(local, spec.statistics[3]).cells.sum() > answers(local, spec.statistics[2]).cells.sum()  # rows
    # the same document apart from the draws: engine "spark"
    small = {**SPEC, "statistics": {k: SPEC["statistics"][k] for k in ("n", "p")}}   # quick designs
    doc, doc_audit = query_file_audited(tmp_path / "in.csv", small, engine="spark", source=SeededRandomSource(1))
    ref, ref_audit = query_file_audited(tmp_path / "in.csv", small, source=SeededRandomSource(1))
    assert doc["engine"] == "spark" and doc_audit["bounding"] == ref_audit["bounding"]
    assert doc_audit["statistics"] == ref_audit["statistics"]   # the bounding counts per statistic
    assert doc["statistics"] == ref["statistics"]   # same exact answers, same seed: same draws
    # a summed value that is not a number, then an id missing: refused with its data row
    bad = frame.astype({"v": object})
    bad.loc[1, "v"] = "x"   # unit 100, group 2: a counted row of the sum
    bad.to_csv(tmp_path / "text.csv", index=False)
    with pytest.raises(InvalidParameterError, match="'x' at data row 2"):
        aggregate_spark(tmp_path / "text.csv", "csv", spec)
    frame.loc[200, "u"] = None
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InvalidParameterError, match="data row 201"):
        aggregate_spark(tmp_path / "bad.csv", "csv", spec)


def test_cli_query_on_spark(tmp_path, spark):
    _table().to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.toml").write_text('unit = { id = "u", max_rows = 3 }\n[statistics.m]\nkind = "mode"\n'
                                     'key = "k"\nkeys = [0, 1, 2]\nmethod = "report-noisy-max"\nepsilon = 1.0\n')
    args = ["query", "--input", str(tmp_path / "in.csv"), "--spec", str(tmp_path / "s.toml"),
            "--output", str(tmp_path / "out.json"), "--engine", "spark"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["engine"] == "spark" and doc["statistics"]["m"]["value"] in ("0", "1", "2", 0, 1, 2)


def test_python_path_keys_do_not_depend_on_other_rows_missing_values(tmp_path, spark):
    """The Spark twin of the local engine's rule (docs/proofs/spark-bounding.md): on Spark's
    Python path (a Parquet file the JVM path does not take: float ids), an integer key column
    with a missing value stays integer, so keys beyond 2^53 are not rounded onto declared keys.
    Before, pandas turned the batch's column into float64 and one unit's missing key moved five
    other units into a declared cell (a neighbourhood of distance 1 moved by 5)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    big = 2 ** 53
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 1}, "statistics": {
        "h": {"kind": "histogram", "key": "big", "keys": [big, big + 2], "epsilon": 1.0}}})
    for missing in (False, True):
        path = tmp_path / f"k{missing}.parquet"
        keys = [big + 1] * 5 + [None if missing else big + 2]
        pq.write_table(pa.table({"u": pa.array([0.5, 1.5, 2.5, 3.5, 4.5, 9.5]), "big": pa.array(keys, pa.int64())}),
                       path)
        local = answers(aggregate([pq.read_table(path)], spec), spec.statistics[0]).cells
        remote = answers(aggregate_spark(path, "parquet", spec), spec.statistics[0]).cells
        assert remote.tolist() == local.tolist() == [[0, 0 if missing else 1]], missing
