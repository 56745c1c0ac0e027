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
from optnoise.query.files import query_file, query_file_audited
from optnoise.query.spark import aggregate_spark
from optnoise.query.spark_rules import eligible
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource
from optnoise.publish.files import read_batches

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
    from optnoise.publish.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def _same(spec_dict: dict, path, local_path=None) -> None:
    spec = parse_query_spec(spec_dict)
    from optnoise.publish.spark import spark_session
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
    # the whole document: the same as the local engine's, same seed
    small = {"unit": {"id": "u", "max_rows": 3}, "statistics": {k: STATS[k] for k in ("n", "p")}}
    doc, doc_audit = query_file_audited(tmp_path / "in.parquet", small, engine="spark", source=SeededRandomSource(1))
    ref, ref_audit = query_file_audited(tmp_path / "in.parquet", small, source=SeededRandomSource(1))
    assert doc["engine"] == "spark" and doc_audit["bounding"] == ref_audit["bounding"]
    assert doc_audit["statistics"] == ref_audit["statistics"]   # the bounding counts per statistic
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


def _over_by_one() -> pd.DataFrame:
    """Units of exactly max_rows + 1 = 4 rows whose 4th row would change every answer and
    count if it were kept: a missing value (must not be refused), a value beyond the clamp, a
    row failing ``where``, an undeclared key, a row in the unit's cell, a row alone in another
    declared cell (a second cell of the unit's if it were kept); beside units within
    max_rows, and units with no counted row at all."""
    rows = []
    last = [  # (k, g, v): the 4th row of each unit; the first three are (1, 2, 1.0)
        (1, 2, np.nan), (1, 2, 99.0), (-1, 2, 3.0), (1, 7, 2.5), (1, 2, 4.5), (1, 2, 0.5), (0, 3, 2.0)]
    for u, (k, g, v) in enumerate(last):
        rows += [(u, 1, 2, 1.0 + u / 4)] * 3 + [(u, k, g, v)]
    rows += [(10, 0, 1, 2.0), (10, 0, 1, 3.0), (11, 2, 3, 5.0)]     # within max_rows
    rows += [(12, 7, 7, 1.0)] * 4                                    # never counted, over by one
    # each unit's rows in this order, interleaved with the other units' rows
    rank = {}
    for i, r in enumerate(rows):
        rank[i] = (sum(1 for q in rows[:i] if q[0] == r[0]), np.random.default_rng(i).random())
    order = sorted(range(len(rows)), key=rank.get)
    return pd.DataFrame([rows[i] for i in order], columns=["u", "k", "g", "v"])


def _cells_only(monkeypatch) -> list:
    """Record the size of every table the driver collects in the JVM path."""
    import optnoise.query.spark_units as jvm
    sizes: list = []
    collect = jvm.to_frame

    def recorded(df):
        got = collect(df)
        sizes.append(len(got))
        return got
    monkeypatch.setattr(jvm, "to_frame", recorded)
    return sizes


def _passes(monkeypatch) -> list:
    """Record, for every call of ``spark_units.ranked``, whether it ranks the rows (a second
    job) or not (the first pass)."""
    import optnoise.query.spark_units as jvm
    passes: list = []
    rank = jvm.ranked
    monkeypatch.setattr(jvm, "ranked", lambda keyed, spec, rank_rows=True: passes.append(rank_rows) or
                        rank(keyed, spec, rank_rows))
    return passes


def _cells_bound(spec: dict) -> int:
    """Per branch of layouts, one row per (group, key of each keyed layout), a missing one
    included: a bound set by the declared keys and groups alone."""
    from optnoise.query.aggregate import layouts
    from optnoise.query.spark_units import branches
    shared = layouts(parse_query_spec(spec).statistics)
    return sum((shared[ids[0]][0].shape[0] + 1) * int(np.prod([shared[i][0].keys.size + 1 for i in ids
                                                                if shared[i][0].key is not None]))
               for ids in branches(shared))


def test_units_one_row_over_max_rows(tmp_path, spark, monkeypatch):
    frame = _over_by_one()
    frame.to_parquet(tmp_path / "over.parquet", index=False)
    stats = {"n": STATS["n"], "h": STATS["h"], "hr": STATS["hr"], "s": STATS["s"],
             "sn": {**STATS["s"], "where": {"k": {"lower": 0, "upper": 1}}}}
    spec = {"unit": {"id": "u", "max_rows": 3}, "statistics": stats}
    sizes = _cells_only(monkeypatch)
    import optnoise.query.spark_units as jvm
    passes = _passes(monkeypatch)
    local = _same(spec, tmp_path / "over.parquet")   # several layouts
    assert local.rows - local.kept == 8 and local.counts["s"].get("values_clamped", 0) == 0
    assert sizes and max(sizes) <= _cells_bound(spec)
    assert passes == [False, True]   # rows shuffled by unit (12 cells for 3 rows): set apart, then ranked
    # combined map-side (as when a unit's rows fall in few cells): each unit's last row taken out, no second job
    monkeypatch.setattr(jvm, "combines", lambda *args: True)
    passes.clear()
    _same(spec, tmp_path / "over.parquet")
    assert passes == [False]
    _same({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": STATS["s"]}}, tmp_path / "over.parquet")
    frame.loc[len(frame)] = (0, 2, 3, 1.0)   # unit 0's 5th row: over by two
    frame.to_parquet(tmp_path / "over2.parquet", index=False)
    passes.clear()
    _same(spec, tmp_path / "over2.parquet")
    assert passes == [False, True]   # unit 0 set apart and ranked, the others over by one trimmed
    # an id without max_rows (counts of units)
    _same({"unit": {"id": "u"}, "statistics": {"n": STATS["n"], "h": STATS["h"], "m": {
        "kind": "mode", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0}}}, tmp_path / "over2.parquet")


def _spread(units: int, seed: int) -> pd.DataFrame:
    """Units with rows in many cells and groups, tied counts between cells and between groups
    (the first declared wins), 1 to 9 rows (over ``max_rows = 4`` by up to 5), the rows of
    every unit scattered through the file (never contiguous)."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(units):
        n = int(rng.integers(1, 10))
        if u % 3 == 0:   # ties: two cells (and two groups) with as many rows each among the first 4
            pick = [(2, 1), (0, 3), (2, 1), (0, 3)] + [(int(rng.integers(0, 3)), int(rng.integers(1, 4)))
                                                       for _ in range(n)]
        else:
            pick = [(int(rng.integers(-1, 3)), int(rng.integers(0, 4))) for _ in range(n)]
        rows += [(u, k, g, float(np.round(rng.uniform(-1, 6), 2)), rng.choice(["a", "b", "c"])) for k, g in pick]
    frame = pd.DataFrame(rows, columns=["u", "k", "g", "v", "t"])
    place = rng.permutation(len(frame))   # each row's new position, in its unit's order
    for idx in frame.groupby("u").indices.values():
        place[idx] = np.sort(place[idx])
    return frame.iloc[np.argsort(place)].reset_index(drop=True)


def test_units_in_many_cells_ties_and_scattered_rows(tmp_path, spark, monkeypatch):
    frame = _spread(300, 5)
    assert (np.diff(frame.index[frame["u"] == 0]) > 1).any()   # a unit's rows are not contiguous
    frame.to_parquet(tmp_path / "spread.parquet", index=False, row_group_size=211)
    stats = {"n": STATS["n"], "h": STATS["h"], "hr": STATS["hr"], "s": STATS["s"], "p": {**STATS["p"], "key": "k",
             "keys": [0, 1, 2], "by": "g", "groups": GROUPS}, "m": STATS["m"],
             "mb": {"kind": "mode", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS, "epsilon": 1.0}}
    sizes = _cells_only(monkeypatch)
    passes = _passes(monkeypatch)
    most = int(frame.groupby("u").size().max())
    for m in (most, 1, 4, 9):   # no unit over max_rows: one pass, no row ranked; else a second, ranked
        spec = {"unit": {"id": "u", "max_rows": m}, "statistics": stats}
        passes.clear()
        local = _same(spec, tmp_path / "spread.parquet")
        assert max(sizes) <= _cells_bound(spec)
        # the units set apart ranked once, or twice where some branches trim the units over by one and
        # others (rows shuffled by unit) set them apart (:func:`trims`)
        assert passes == [False] if m == most else passes in ([False, True], [False, True, True]), (m, passes)
    assert local.counts["h"]["units_with_rows_in_several_cells"] > 50 and local.rows > local.kept
    assert local.counts["s"]["rows_outside_the_units_group"] > 50
    # text ids, the same units
    frame.assign(u="unit-" + frame["u"].astype(str)).to_parquet(tmp_path / "text.parquet", index=False)
    _same({"unit": {"id": "u", "max_rows": 4}, "statistics": stats}, tmp_path / "text.parquet")


def test_a_bad_value_among_the_first_rows_of_a_unit_over_by_one_is_refused(tmp_path, spark, monkeypatch):
    frame = _over_by_one()
    at = int(np.flatnonzero((frame["u"] == 4).to_numpy())[1])   # unit 4's second row, counted
    frame.loc[at, "v"] = np.nan
    frame.to_parquet(tmp_path / "bad.parquet", index=False)
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": STATS["s"]}})
    with pytest.raises(InvalidParameterError, match=f"missing value at data row {at + 1}"):
        aggregate(read_batches(tmp_path / "bad.parquet", "parquet", list(spec.columns)), spec)
    with pytest.raises(InvalidParameterError, match=f"missing value at data row {at + 1}"):
        aggregate_spark(tmp_path / "bad.parquet", "parquet", spec)
    import optnoise.query.spark_units as jvm
    monkeypatch.setattr(jvm, "combines", lambda *args: True)   # the units over by one trimmed in the first job
    with pytest.raises(InvalidParameterError, match=f"missing value at data row {at + 1}"):
        aggregate_spark(tmp_path / "bad.parquet", "parquet", spec)


def test_parquet_schema_is_the_one_spark_infers(tmp_path, spark):
    from optnoise.query.spark import parquet_schema
    frame = pd.DataFrame({"i8": np.array([1, -2], np.int8), "i16": np.array([3, 4], np.int16),
                          "i32": np.array([5, 6], np.int32), "i64": [2**40, -1], "f32": np.array([0.5, 1], np.float32),
                          "f64": [0.25, np.nan], "b": [True, False], "s": ["a", None],
                          "c": pd.Categorical(["x", "y"]), "n": pd.array([1, None], "Int64")})
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    names = list(frame.columns)
    given = parquet_schema(tmp_path / "t.parquet", names)
    inferred = spark.read.parquet(str(tmp_path / "t.parquet")).select(*names).schema
    assert [(f.name, f.dataType) for f in given.fields] == [(f.name, f.dataType) for f in inferred.fields]
    assert spark.read.schema(given).parquet(str(tmp_path / "t.parquet")).collect() == \
        spark.read.parquet(str(tmp_path / "t.parquet")).select(*names).collect()
    # a type not mapped here: Spark infers the schema itself
    pd.DataFrame({"u": np.array([1], np.uint32), "t": pd.to_datetime(["2024-01-01"])}).to_parquet(
        tmp_path / "other.parquet", index=False)
    assert parquet_schema(tmp_path / "other.parquet", ["u"]) is None
    assert parquet_schema(tmp_path / "other.parquet", ["t"]) is None


def test_a_failed_job_is_one_line(tmp_path, spark, capfd):
    from optnoise.errors import OptnoiseError
    # 4e18 in units of 1, three rows of a unit: the sum passes the 64-bit range (ANSI mode fails it)
    pd.DataFrame({"u": [1, 1, 1], "v": [4e18] * 3}).to_parquet(tmp_path / "big.parquet", index=False)
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": {
        "kind": "sum", "column": "v", "clamp": {"lower": 4e18, "upper": 4.000000001e18}, "resolution": 1,
        "epsilon": 1.0}}})
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")   # Spark 4's default
    capfd.readouterr()
    try:
        with pytest.raises(OptnoiseError, match="the Spark job failed: .*OVERFLOW") as info:
            aggregate_spark(tmp_path / "big.parquet", "parquet", spec)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)
    assert "\n" not in str(info.value)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "QueryContextLogger" not in err


@pytest.mark.parametrize("u, g, v", [
    # unit 1 simple (max_rows + 1 rows, one cell) with the first bad row; unit 2 in two cells
    ([1, 1, 1, 2, 2], [1, 1, 1, 1, 2], [np.nan, 1.0, 1.0, 1.0, np.nan]),
    ([1, 2, 2], [1, 1, 2], [np.nan, 1.0, np.nan]),        # unit 1 simple, unit 2 in two cells
])
def test_the_first_bad_row_is_named_whichever_job_finds_it(tmp_path, spark, u, g, v):
    # review finding: job 2 on the driver raised its own first bad row, a later one
    pd.DataFrame({"u": u, "g": g, "v": v}).to_parquet(tmp_path / "b.parquet", index=False)
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2}, "statistics": {"s": {
        **STATS["s"], "groups": [1, 2]}}})
    for run in (lambda: aggregate(read_batches(tmp_path / "b.parquet", "parquet", list(spec.columns)), spec),
                lambda: aggregate_spark(tmp_path / "b.parquet", "parquet", spec)):
        with pytest.raises(InvalidParameterError, match="missing value at data row 1'"):
            run()


def test_spark_reads_the_drivers_file(tmp_path, spark, monkeypatch):
    # the file checked and hashed on the driver, by its file:// path (a bare path would be
    # looked up on the session's default filesystem, HDFS on many clusters); a name with a
    # space and a percent sign reads as itself
    from optnoise.query.spark import read_input
    folder = tmp_path / "a b%20c"
    folder.mkdir()
    _over_by_one().to_parquet(folder / "in put.parquet", index=False)
    monkeypatch.chdir(tmp_path)
    df = read_input(spark, "a b%20c/in put.parquet", "parquet", ["u", "v"])
    files = df.inputFiles()
    assert len(files) == 1 and files[0].startswith("file:") and files[0].endswith("in%20put.parquet")
    assert df.count() == len(_over_by_one())
    _same({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": STATS["s"]}}, folder / "in put.parquet")


def test_float_keys_past_2_53(tmp_path, spark):
    # doubles past 2^53 against integer keys: the range test on doubles rounds outwards, the
    # index is checked as an integer (2^53 + 4.0 is no key of 2^53 + 1 .. 2^53 + 3, nor 2^53)
    big = 2.0 ** 53
    pd.DataFrame({"u": [1, 2, 3, 4, 5], "f": [big, big + 2, big + 4, big + 2, big + 8]}).to_parquet(
        tmp_path / "f.parquet", index=False)
    keys = [2**53 + 1, 2**53 + 2, 2**53 + 3]
    local = _same({"unit": {"id": "u"}, "statistics": {"h": {"kind": "histogram", "key": "f", "keys": keys,
                                                             "epsilon": 1.0}}}, tmp_path / "f.parquet")
    assert answers(local, parse_query_spec({"unit": {"id": "u"}, "statistics": {"h": {
        "kind": "histogram", "key": "f", "keys": keys, "epsilon": 1.0}}}).statistics[0]).cells.tolist() == [[0, 2, 0]]


def test_an_input_an_executor_cannot_see_is_named(tmp_path, spark, monkeypatch):
    # the file is read on the driver (columns, hash), then an executor cannot open it: one line
    # with its path and the rule (Spark's own message, not a copy of it)
    import optnoise.query.spark as engine
    from optnoise.errors import OptnoiseError
    _over_by_one().to_parquet(tmp_path / "gone.parquet", index=False)
    read = engine.read_input

    def then_gone(*args, **kwargs):
        df = read(*args, **kwargs)
        (tmp_path / "gone.parquet").unlink()
        return df
    monkeypatch.setattr(engine, "read_input", then_gone)
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 3}, "statistics": {"s": STATS["s"]}})
    with pytest.raises(OptnoiseError, match=f"an executor cannot read file://{tmp_path}/gone.parquet; every executor "
                                            "must see the input at the same path as the driver") as info:
        aggregate_spark(tmp_path / "gone.parquet", "parquet", spec)
    assert "\n" not in str(info.value)


def _places() -> pd.DataFrame:
    """Units of every kind the one-job path of single units (``spark_single``) tells apart, at
    ``max_rows = 3``, each unit's rows interleaved with the others': within ``max_rows`` in one
    place; of 4 rows with the 4th in the same place, or elsewhere (a greater or a lesser place:
    another key or group, an undeclared key, a row failing a ``where``, a missing or clamped
    value that must be neither refused nor counted); in several places among the first 3 rows;
    over by two; never counted."""
    units = [
        [(1, 2, 1.0)], [(0, 1, 0.5)] * 2, [(2, 3, 4.5)] * 3,              # within max_rows, one place
        [(1, 2, 2.0)] * 4, [(0, 3, 4.0)] * 3 + [(0, 3, 1.0)],              # over by one, the 4th in the place
        [(0, 1, 1.5)] * 3 + [(2, 3, 2.0)], [(2, 3, 1.5)] * 3 + [(0, 1, 2.0)],   # the 4th at a greater, a lesser place
        [(1, 1, 1.0)] * 3 + [(-1, 1, 3.0)], [(1, 1, 1.0)] * 3 + [(1, 7, 3.0)],  # undeclared key, group
        [(0, 2, 2.5)] * 3 + [(1, 2, np.nan)], [(2, 2, 2.5)] * 3 + [(0, 2, 99.0)],  # a bad, a clamped value
        [(1, 2, 0.5)] * 3 + [(3, 2, 1.0)],                                # the 4th fails the where
        [(0, 1, 1.0), (2, 1, 1.0), (0, 1, 3.0)],                          # several places: ranked
        [(1, 3, 1.0)] * 5, [(0, 3, 1.0)] * 3 + [(2, 3, 1.0), (2, 3, 4.0)],   # over by two: ranked
        [(1, 7, 2.0)] * 4, [(-1, 9, 1.0)] * 2,                            # never counted
    ]
    rows = [(u, k, g, v, i) for u, unit in enumerate(units) for i, (k, g, v) in enumerate(unit)]
    rng = np.random.default_rng(3)
    rows.sort(key=lambda r: (r[4], rng.random()))   # each unit's i-th row among the others' i-th rows
    return pd.DataFrame([r[:4] for r in rows], columns=["u", "k", "g", "v"])


def test_single_units_take_one_job_for_every_branch(tmp_path, spark, monkeypatch):
    frame = _places()
    frame.to_parquet(tmp_path / "places.parquet", index=False)
    stats = {"h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0},   # three branches
             "hr": {**STATS["hr"], "where": {"k": {"lower": 0, "upper": 2}}},
             "s": STATS["s"], "n": STATS["n"], "sn": {**STATS["s"], "where": {"k": {"lower": 0, "upper": 2}}},
             "m": STATS["m"] | {"key": "k", "keys": [0, 1, 2]}}
    spec = {"unit": {"id": "u", "max_rows": 3}, "statistics": stats}
    sizes = _cells_only(monkeypatch)
    import optnoise.query.spark_units as jvm
    passes = _passes(monkeypatch)
    monkeypatch.setattr(jvm, "combines", lambda *args: True)   # every branch's rows collapse
    local = _same(spec, tmp_path / "places.parquet")
    assert passes == [False, True]   # one job for the single units, their rows alone ranked for the others
    assert sizes and max(sizes) <= _cells_bound(spec)
    assert local.rows - local.kept == 9 + 2 * 2 + 1 and local.counts["s"].get("values_clamped", 0) == 0
    assert local.counts["h"]["units_with_rows_in_several_cells"] == 1
    # two groups kept per unit: a single unit's one cell is kept; the others' ranked as before
    passes.clear()
    _same({"unit": {"id": "u", "max_rows": 3, "max_groups": 2}, "statistics": stats}, tmp_path / "places.parquet")
    assert passes == [False, True]
    # single units alone: one job
    single = frame[~frame["u"].isin([12, 13, 14])]
    single.to_parquet(tmp_path / "single.parquet", index=False)
    passes.clear()
    _same(spec, tmp_path / "single.parquet")
    assert passes == [False]
    # each unit's rows contiguous, text ids: the same answers
    contiguous = frame.sort_values("u", kind="stable").assign(u=lambda f: "p" + f["u"].astype(str))
    contiguous.to_parquet(tmp_path / "contiguous.parquet", index=False)
    _same(spec, tmp_path / "contiguous.parquet")
    # a row without an id: refused at its data row, as locally (the caller's path)
    frame["u"] = frame["u"].astype("Int64")
    frame.loc[5, "u"] = None
    frame.to_parquet(tmp_path / "noid.parquet", index=False)
    with pytest.raises(InvalidParameterError, match="data row 6"):
        aggregate_spark(tmp_path / "noid.parquet", "parquet", parse_query_spec(spec))


def test_the_group_by_bench_spec_takes_one_job(tmp_path, spark, monkeypatch):
    # bench/query.py's spec (a histogram by circuit, a sum by circuit) on its kind of data: every
    # household's rows in one circuit, in time order, a few households of max_rows + 1 rows
    households, hours = 50, 24
    rows = [(h, h % 12 + 1, t, round(0.1 * ((h * 7 + t * 3) % 13), 3)) for t in range(hours) for h in range(households)]
    rows += [(h, h % 12 + 1, 24, 10.5) for h in (3, 17, 41)]
    frame = pd.DataFrame(rows, columns=["household", "circuit", "hour", "kwh"])
    frame.to_parquet(tmp_path / "meters.parquet", index=False)
    circuits = list(range(1, 13))
    spec = {"unit": {"id": "household", "max_rows": 24}, "statistics": {
        "households": {"kind": "histogram", "key": "circuit", "keys": circuits, "epsilon": 1.0},
        "kwh": {"kind": "sum", "column": "kwh", "clamp": {"lower": 0, "upper": 10}, "resolution": 0.1,
                "by": "circuit", "groups": circuits, "epsilon": 1.0}}}
    passes = _passes(monkeypatch)
    local = _same(spec, tmp_path / "meters.parquet")
    assert passes == [False] and local.rows - local.kept == 3
