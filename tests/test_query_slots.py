"""The bounded per-unit state of the local engine (issue 37, item 1): a unit's first ``max_rows``
rows kept as slots (``query/units.py``) give the same aggregate, counts, answers, errors and
documents as the per (unit, cell) totals folded row by row (the engine before the slots,
forced here with ``slot_bytes=0``, and switched to mid-way with a small ``slot_bytes``), on
random CSV tables read in many small batches: units spread over the file, ties in the
majority rules, undeclared keys, ``where`` filters, clamped values, bad values and missing ids;
and the same cells as an independent pandas computation of the rules. Also: the Arrow reading
of numbers and of text ids against pandas' and ``str``'s."""

import json

import numpy as np
import pandas as pd
import pytest

import optnoise.publish.files as publish_files
import optnoise.query.aggregate as aggregate_module
from optnoise.errors import InvalidParameterError
from optnoise.publish.files import read_batches
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.files import query_file
from optnoise.query.rows import numbers
from optnoise.query.spec import parse_query_spec
from optnoise.query.units import UnitIndex

SPEC = {"unit": {"id": "u", "max_rows": 4}, "statistics": {
    "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": [1, 2, 3], "epsilon": 1.0},
    "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 0.5, "by": "g",
          "groups": [1, 2, 3], "epsilon": 1.0},
    "p": {"kind": "peak", "of": "v", "clamp": {"lower": 0, "upper": 2}, "resolution": 0.5, "key": "k",
          "keys": [0, 1, 2], "epsilon": 1.0},
    "m": {"kind": "mode", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0},
    "r": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1, 2], "where": {"w": [1]}, "epsilon": 1.0},
    "n": {"kind": "count", "where": {"w": {"lower": 0, "upper": 0}}, "epsilon": 1.0}}}

#: Text ids: integers as ``str`` writes them, and texts that are not (each its own unit).
IDS = ["0", "7", "-7", "07", "+7", "-0", "7.0", " 7", "a", "A", "9223372036854775807", "9223372036854775808",
       "-9223372036854775808", "1000000000000000000", "12345678901234567890", "x y"]


def _table(rng: np.random.Generator, n: int, *, bad: bool = False) -> pd.DataFrame:
    pool = IDS if rng.random() < 0.5 else [str(i) for i in rng.integers(0, 40, 12)]
    u = rng.choice(pool, n).astype(object)
    k = rng.choice(["0", "1", "2", "3", "1.0", ""], n, p=[0.3, 0.3, 0.25, 0.05, 0.05, 0.05])
    g = rng.choice(["1", "2", "3", "4", "2e0"], n, p=[0.35, 0.3, 0.25, 0.05, 0.05])
    v = rng.choice(["0", "0.25", "0.75", "1.25", "2", "3", "-1", "1e-1", ".5"], n)
    if bad and n:   # a bad value in a counted row (a new unit's first, in a declared group), maybe others
        v[rng.integers(0, n, 2)] = rng.choice(["x", "", "1,5", "nan"])
        at = int(rng.integers(0, n))
        u[at], g[at], v[at] = "fresh", "1", "x"
    w = rng.choice(["0", "1", "2", ""], n)
    return pd.DataFrame({"u": u, "k": k, "g": g, "v": v, "w": w})


def _run(path, spec, **options):
    """``(aggregate, answers)`` or the error's text."""
    try:
        agg = aggregate(read_batches(path, "csv", list(spec.columns)), spec, **options)
        got = {s.name: answers(agg, s) for s in spec.statistics}
    except InvalidParameterError as exc:
        return str(exc)
    return agg, got


def _plain(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The histogram and the sum by pandas (an independent computation of the rules)."""
    df = frame[frame.groupby("u", sort=False).cumcount() < 4]
    k, g = pd.to_numeric(df["k"], errors="coerce"), pd.to_numeric(df["g"], errors="coerce")
    ok_g = g.isin([1, 2, 3]).to_numpy()
    cell = np.where(ok_g & k.isin([0, 1, 2]).to_numpy(), (g.fillna(1) - 1) * 3 + k.fillna(0), -1).astype(int)

    def home(units, keys):
        c = pd.DataFrame({"u": units, "c": keys}).groupby(["u", "c"]).size().reset_index(name="n")
        return c.sort_values(["u", "n", "c"], ascending=[True, False, True]).drop_duplicates("u").set_index("u")["c"]

    at = cell >= 0
    hist = np.bincount(home(df["u"].to_numpy()[at], cell[at]).to_numpy(), minlength=9).reshape(3, 3)
    units, group = df["u"].to_numpy()[ok_g], (g.to_numpy()[ok_g] - 1).astype(int)
    value = np.clip(np.rint(pd.to_numeric(df["v"]).to_numpy()[ok_g] / 0.5), 0, 4).astype(int)
    mine = home(units, group).reindex(units).to_numpy() == group
    return {"h": hist, "s": np.bincount(group[mine], weights=value[mine], minlength=3).astype(int).reshape(3, 1)}


@pytest.mark.parametrize("seed", range(12))
def test_slots_equal_totals_and_a_plain_computation(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(publish_files, "CSV_BLOCK", int(rng.choice([64, 200, 1 << 20])))   # many batches
    frame = _table(rng, int(rng.integers(0, 300)), bad=seed % 4 == 3)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    spec = parse_query_spec(SPEC)
    slots = _run(path, spec)
    for other in (_run(path, spec, slot_bytes=0), _run(path, spec, slot_bytes=int(rng.integers(1, 400)))):
        if isinstance(slots, str):   # a bad value: the same error, naming the same row
            assert slots == other
            continue
        (a, got), (b, ref) = slots, other
        assert (a.rows, a.kept, a.units) == (b.rows, b.kept, b.units)
        assert [list(c.items()) for c in a.counts.values()] == [list(c.items()) for c in b.counts.values()]
        for name in got:
            for field in ("cells", "scores", "argmax"):
                x, y = getattr(got[name], field), getattr(ref[name], field)
                assert (x is None and y is None) or np.array_equal(x, y), (name, field)
    if seed % 4 == 3:
        assert isinstance(slots, str) and "at data row" in slots
        return
    agg, got = slots
    assert agg.units == frame["u"].nunique()
    plain = _plain(frame)
    assert np.array_equal(got["h"].cells, plain["h"]) and np.array_equal(got["s"].cells, plain["s"])


def test_documents_are_identical_value_for_value(tmp_path, monkeypatch):
    """The whole document, seeded, with slots and with totals."""
    rng = np.random.default_rng(5)
    path = tmp_path / "t.csv"
    _table(rng, 2000).to_csv(path, index=False)
    monkeypatch.setattr(publish_files, "CSV_BLOCK", 2000)
    docs = []
    for slot_bytes in (aggregate_module.SLOT_BYTES, 0):
        monkeypatch.setattr(aggregate_module, "SLOT_BYTES", slot_bytes)
        doc = query_file(path, SPEC, seed=3)
        doc.pop("created")   # the time of the run, to the second
        docs.append(json.dumps(doc, sort_keys=True))
    assert docs[0] == docs[1] and '"value"' in docs[0]


def test_a_missing_id_names_its_row_in_a_csv(tmp_path, monkeypatch):
    monkeypatch.setattr(publish_files, "CSV_BLOCK", 64)
    path = tmp_path / "t.csv"
    lines = [f"{i % 5},0,1,1,0" for i in range(40)]
    lines[29] = ",0,1,1,0"
    path.write_text("u,k,g,v,w\n" + "\n".join(lines) + "\n")
    with pytest.raises(InvalidParameterError, match="missing value at data row 30"):
        aggregate(read_batches(path, "csv", ["u", "k", "g", "v", "w"]), parse_query_spec(SPEC))


def test_text_ids_are_one_unit_exactly_when_equal_as_text():
    """Integer texts go to the integer map, the others to a dictionary: codes equal exactly
    when the texts are; an integer id seen before is the unit of its text."""
    import pyarrow as pa
    index = UnitIndex()
    first = index.codes(np.array([7, -7, 2 ** 63 - 1, 10 ** 18], np.int64))
    texts = IDS + ["7", "-7", "07", "a"]
    codes = index.codes(pa.array(texts))
    assert list(codes[[1, 2, 10, 13]]) == list(first)   # "7", "-7", the int64 maximum, 10^18
    for i, x in enumerate(texts):
        for j, y in enumerate(texts):
            assert (codes[i] == codes[j]) == (x == y), (x, y)
    assert index.size == len(set(texts))
    integers = index.codes(pa.array(["-7", "7", "1000000000000000000", "0"]))   # integer texts only: no dictionary
    assert list(integers) == [codes[2], codes[1], codes[13], codes[0]] and index.size == len(set(texts))
    again = index.codes(np.array(["7", "a", "new", 3.5], dtype=object))   # other ids: their text
    assert list(again[:2]) == [codes[1], codes[8]] and index.size == len(set(texts)) + 2


@pytest.mark.parametrize("texts", [
    ["0.1", "0.7", "1.25", "-3", "+.5e+2", "5.", "1e400", "-1e400", "1e-400", "2.4703282292062328e-324",
     "1.7976931348623159e308", "123456789012345678901234567890.123456789", None],
    ["1", "x", "1,5", " 2", "nan", "inf", "0x10", None, ""],   # not all plain decimals: pandas reads them
])
def test_arrow_reads_numbers_as_pandas_does(texts):
    import pyarrow as pa
    col = pa.record_batch({"c": pa.array(texts, pa.string())}).to_pandas()["c"]
    want = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    got = numbers(col)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_statistic_names_never_meet_the_slots_own(tmp_path):
    """Statistics named like the slots' lanes ("cells 0", "values ...") keep their own."""
    rng = np.random.default_rng(8)
    path = tmp_path / "t.csv"
    _table(rng, 400).to_csv(path, index=False)
    renamed = {"cell0": "s", "cells 0": "p", "values cells 0": "h"}   # "cell0" was a lane of the first draft
    spec = parse_query_spec({"unit": SPEC["unit"], "statistics": {new: SPEC["statistics"][old]
                                                                  for new, old in renamed.items()}})
    (_, got), (_, ref) = _run(path, spec), _run(path, spec, slot_bytes=0)
    for name in renamed:
        assert np.array_equal(got[name].cells, ref[name].cells), name
