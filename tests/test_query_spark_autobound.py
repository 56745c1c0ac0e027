"""Bounds chosen privately on Spark (issue 36 items 5 and 6): the grid's counts made on the
executors are the local engine's, on both of the engine's paths, so that for the same seed the
chosen bounds and the document are the local engine's (CSV and Parquet)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.publish.files import read_batches
from optnoise.query.autobound import grid_histogram, prepass_columns, requests, unit_values
from optnoise.query.files import query_file_audited
from optnoise.query.spark import read_input
from optnoise.query.spark_autobound import grid_counts, jvm_fits
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource


def _frame(units: int = 300, seed: int = 3) -> pd.DataFrame:
    """Units with 1..12 rows (a few with 40), shuffled; ``kwh`` with halves (ties of the
    rounding), negatives and a missing value; ``hour`` 0..3."""
    rng = np.random.default_rng(seed)
    rows = np.where(rng.random(units) < 0.03, 40, rng.integers(1, 13, units))
    ids = rng.permutation(np.repeat(np.arange(units) * 7 + 1, rows))
    kwh = np.round(rng.gamma(2, 1.5, len(ids)) * 2) / 2 - (rng.random(len(ids)) < 0.05) * 3
    kwh[5] = np.nan
    return pd.DataFrame({"h": ids, "kwh": kwh, "hour": rng.integers(0, 4, len(ids))})


SPEC = {"unit": {"id": "h", "max_rows": "auto", "bound_epsilon": 0.5, "max_rows_cap": 64},
        "statistics": {
            "n": {"kind": "count", "epsilon": 1.0},
            "s": {"kind": "sum", "column": "kwh", "clamp": "auto", "clamp_cap": 32, "resolution": 0.5,
                  "where": {"hour": {"lower": 1, "upper": 3}}, "epsilon": 1.0}}}
MEDIAN = {"kind": "median", "column": "kwh", "clamp": "auto", "clamp_cap": 64, "resolution": 0.5, "epsilon": 1.0}


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    where = tmp_path_factory.mktemp("auto")
    frame = _frame()
    frame.to_csv(where / "in.csv", index=False)
    frame.to_parquet(where / "in.parquet", index=False)
    frame.astype({"h": float}).to_parquet(where / "float_ids.parquet", index=False)
    return where


def _local_counts(path, fmt, spec):
    values, units = unit_values(read_batches(path, fmt, prepass_columns(spec)), spec)
    return [grid_histogram(v, r.grid).tolist() for (_, _, r, _), v in zip(requests(spec), values)], units


@pytest.mark.parametrize("name, fmt, jvm", [("in.csv", "csv", False), ("in.parquet", "parquet", True),
                                            ("float_ids.parquet", "parquet", False)])
def test_grid_counts_are_the_local_engines(spark, files, name, fmt, jvm):
    """Each request's counts per cell and the units, on the path the format takes: the CSV and
    a float id on the Python path, a Parquet file of integer ids on the JVM path."""
    spec = parse_query_spec({**SPEC, "statistics": {**SPEC["statistics"], "q": MEDIAN}})
    raw = read_input(spark, files / name, fmt, prepass_columns(spec))
    assert jvm_fits(fmt, raw, spec) is jvm
    counts, units = grid_counts(spark, files / name, fmt, spec)
    local, local_units = _local_counts(files / name, fmt, spec)
    assert units == local_units == 300
    assert [c.tolist() for c in counts] == local
    assert local[0][-1] > 0 and sum(local[2]) == 300   # a unit above the rows' cap; every unit has a total


def test_only_max_rows_on_a_csv_takes_the_jvm_path(spark, files):
    spec = parse_query_spec({**SPEC, "statistics": {"n": SPEC["statistics"]["n"]}})
    raw = read_input(spark, files / "in.csv", "csv", prepass_columns(spec))
    assert jvm_fits("csv", raw, spec)
    counts, units = grid_counts(spark, files / "in.csv", "csv", spec)
    assert ([c.tolist() for c in counts], units) == _local_counts(files / "in.csv", "csv", spec)


@pytest.mark.parametrize("name, fmt", [("in.csv", "csv"), ("in.parquet", "parquet")])
def test_the_same_document_as_the_local_engine(spark, files, name, fmt):
    """The same seed: the same histograms, the same chosen bounds, the same statistics."""
    doc, audit = query_file_audited(files / name, SPEC, engine="spark", source=SeededRandomSource(5))
    ref, ref_audit = query_file_audited(files / name, SPEC, source=SeededRandomSource(5))
    assert doc["engine"] == "spark" and set(doc["bounds"]) == {"unit.max_rows", "statistics.s.clamp"}
    assert set(doc) == set(ref)
    for key in set(ref) - {"created", "engine"}:
        assert doc[key] == ref[key], key
    assert audit["statistics"] == ref_audit["statistics"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_missing_id_is_refused_with_its_data_row(spark, files, fmt):
    frame = _frame()
    frame.loc[[40, 77], "h"] = None
    path = files / f"noid.{fmt}"
    frame.to_csv(path, index=False) if fmt == "csv" else frame.astype({"h": "Int64"}).to_parquet(path, index=False)
    spec = parse_query_spec(SPEC)
    with pytest.raises(InvalidParameterError, match="data row 41") as err:
        grid_counts(spark, path, fmt, spec)
    with pytest.raises(InvalidParameterError) as ref:
        _local_counts(path, fmt, spec)
    assert (err.value.parameter, str(err.value)) == (ref.value.parameter, str(ref.value))
