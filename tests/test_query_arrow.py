"""The local engine reads Arrow batches without pandas (start-up, issue 37): Arrow arrays as
NumPy arrays from their buffers (:mod:`optnoise.query.arrow`) and the per-row rules on Arrow
columns (:class:`optnoise.query.rows.ArrowRows`) give what pyarrow's conversion and the rules
on the DataFrame give, value for value, error for error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.arrow import arrow_numpy
from optnoise.query.rows import arrow_to_pandas, numbers
from optnoise.query.spec import parse_query_spec

TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64(), pa.float32(),
         pa.float64(), pa.bool_()]


@pytest.mark.parametrize("kind", TYPES, ids=str)
@pytest.mark.parametrize("seed", range(4))
def test_arrow_numpy_equals_pyarrows_conversion(kind, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 70))
    values = rng.integers(0, 100, n)
    nulls = rng.random(n) < (0.3 if seed % 2 else 0.0)
    arr = pa.array([None if m else (bool(v % 2) if kind == pa.bool_() else v) for v, m in zip(values, nulls)], kind)
    lo = int(rng.integers(0, n + 1))
    hi = int(rng.integers(lo, n + 1))
    for part in (arr, arr.slice(lo, hi - lo), pa.chunked_array([arr.slice(0, lo), arr.slice(lo)], kind)):
        valid = np.array([x is not None for x in part.to_pylist()], dtype=bool)
        want = np.array([0 if x is None else x for x in part.to_pylist()], dtype=kind.to_pandas_dtype())
        got = arrow_numpy(part)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        if not valid.all():   # NaN where missing: what to_numpy gives integers and floats with nulls
            if kind != pa.bool_():
                ref = part.to_numpy(zero_copy_only=False) if isinstance(part, pa.Array) else \
                    part.combine_chunks().to_numpy(zero_copy_only=False)
                assert np.array_equal(arrow_numpy(part, np.nan), ref.astype(float), equal_nan=True)
        else:
            ref = part.combine_chunks() if isinstance(part, pa.ChunkedArray) else part
            assert np.array_equal(got, ref.to_numpy(zero_copy_only=False))


def test_arrow_numpy_refuses_text():
    with pytest.raises(TypeError, match="string"):
        arrow_numpy(pa.array(["1"]))


def test_numbers_read_arrow_text_as_pandas_does():
    texts = ["0.1", "-3", "+.5e+2", "1e400", None, "x", "1,5", " 2", "nan", ""]
    for sample in (texts[:5], texts):   # plain decimals (Arrow's parser), then pandas'
        col = pa.array(sample, pa.string())
        want = numbers(pa.record_batch({"c": col}).to_pandas()["c"])
        assert np.array_equal(numbers(col), want, equal_nan=True)


SPEC = {"unit": {"id": "u", "max_rows": 3}, "statistics": {
    "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": [1, 2], "epsilon": 1.0},
    "t": {"kind": "histogram", "key": "t", "keys": ["a", "b"], "where": {"w": [1, "1"]}, "epsilon": 1.0},
    "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 0.5, "epsilon": 1.0},
    "n": {"kind": "count", "where": {"f": {"lower": 0.5}}, "of": "units", "epsilon": 1.0}}}


def _batches(rng: np.random.Generator, typed: bool) -> list[pa.RecordBatch]:
    """Batches of text (a CSV's) or of typed columns (a Parquet file's: integers with and without
    missing values, uint64, floats with NaN and nulls, booleans)."""
    out = []
    for _ in range(3):
        n = int(rng.integers(0, 40))
        u, k, g = rng.integers(0, 9, n), rng.integers(-1, 4, n), rng.integers(1, 4, n)
        v, f = rng.choice([0.0, 0.5, 1.25, 3.0, -1.0], n), rng.choice([0.0, 1.0, np.nan], n)
        t, w = rng.choice(["a", "b", "c"], n), rng.integers(0, 3, n)
        hole = rng.random(n) < 0.15
        if typed:
            cols = {"u": pa.array(u, pa.uint64() if rng.random() < 0.3 else pa.int32()),
                    "k": pa.array([None if h else int(x) for x, h in zip(k, hole)], pa.int64()),
                    "g": pa.array(g, pa.int16()), "v": pa.array(v, pa.float32()),
                    "f": pa.array([None if h else x for x, h in zip(f, hole)], pa.float64()),
                    "t": pa.array(t), "w": pa.array(w == 1) if rng.random() < 0.3 else pa.array(w, pa.uint8())}
        else:
            cols = {name: pa.array([None if h and name in "kf" else str(x) for x, h in zip(col, hole)], pa.string())
                    for name, col in zip("ukgvftw", (u, k, g, v, f, t, w))}
        out.append(pa.record_batch(cols))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_rules_on_arrow_columns_equal_the_rules_on_the_frame(seed):
    """The aggregate and the answers, from Arrow columns and from the DataFrames pyarrow makes of
    the same batches; or the same error."""
    rng = np.random.default_rng(seed)
    batches = _batches(rng, typed=seed % 2 == 1)
    spec = parse_query_spec(SPEC)
    got = []
    for given in (batches, [arrow_to_pandas(b) for b in batches]):
        try:
            agg = aggregate(given, spec)
            got.append((agg.rows, agg.kept, agg.units, agg.counts,
                        {s.name: answers(agg, s).cells.tolist() for s in spec.statistics}))
        except InvalidParameterError as exc:
            got.append(str(exc))
    assert got[0] == got[1]
    if seed == 0:
        assert not isinstance(got[0], str) and got[0][0] > 0


def test_a_bad_value_names_its_column_and_row_from_arrow_and_from_pandas():
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2}, "statistics": {"s": {
        "kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 1, "epsilon": 1.0}}})
    for column in (pa.array([1.0, np.inf, 2.0]), pa.array(["1", "inf x", "2"]), pa.array([1.0, None, 2.0])):
        batch = pa.record_batch({"u": pa.array([1, 2, 3]), "v": column})
        errors = []
        for given in ([batch], [arrow_to_pandas(batch)]):
            with pytest.raises(InvalidParameterError) as exc:
                aggregate(given, spec)
            errors.append(str(exc.value))
        assert errors[0] == errors[1] and "column 'v'" in errors[0] and "data row 2" in errors[0]

