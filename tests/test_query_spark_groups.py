"""A person in several groups and random bounding on Spark (issue 36, items 2, 3 and 6): the
Spark engine keeps the local engine's rows and groups, value for value, for the same seed.

* The priorities: Spark's (a vectorised UDF) are the local AES (:mod:`optnoise.query.priority`)
  for rows and for (unit, group) pairs, indices and codes up to the top bits, as signed longs in
  the same order; one block checked against an independent AES call and Spark SQL's
  ``aes_encrypt``; the read index Spark computes is the local row number on a file read in
  many partitions.
* The answers and counts of ``max_groups``, ``max_rows_per_group`` and ``bounding = "random"``
  (CSV: the Python path; Parquet: the JVM path), with units over ``max_rows``, units in several
  groups and cells, ties between groups, rows failing ``where`` and undeclared keys (and on the
  JVM path with every row ranked in one pass, past the ids the driver collects); the whole
  document for one seed. Random answers differ from the ``first`` rule's and from another
  seed's on these tables (the equality is not the trivial one).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from optnoise.cli.app import app

from optnoise.publish.files import read_batches
from optnoise.query.aggregate import aggregate, answers
from optnoise.query.files import query_file_audited
from optnoise.query.priority import draw_key, group_priorities, row_priorities
from optnoise.query.spark import aggregate_spark
from optnoise.query.spark_rules import eligible
from optnoise.query.spec import parse_query_spec
from optnoise.randomness import SeededRandomSource

warnings.filterwarnings("ignore", message=".*not private.*")

GROUPS = [0, 1, 2, 3]
STATS = {
    "n": {"kind": "count", "where": {"k": {"lower": 0, "upper": 1}}, "epsilon": 1.0},
    "rows": {"kind": "count", "of": "rows", "epsilon": 1.0},
    "h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS, "epsilon": 1.0},
    "hf": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 1.0},
    "hr": {"kind": "histogram", "of": "rows", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS,
           "epsilon": 1.0},
    "s": {"kind": "sum", "column": "v", "clamp": {"lower": 0, "upper": 5}, "resolution": 0.5, "by": "g",
          "groups": GROUPS, "epsilon": 1.0},
    "p": {"kind": "peak", "key": "k", "keys": [0, 1, 2], "of": "v", "clamp": {"lower": 0, "upper": 5}, "by": "g",
          "groups": GROUPS, "method": "report-noisy-max", "epsilon": 1.0},
    "m": {"kind": "mode", "key": "k", "keys": [0, 1, 2], "by": "g", "groups": GROUPS, "epsilon": 1.0},
}


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def _table(n: int = 900, seed: int = 3) -> pd.DataFrame:
    """Units of 1 to ~40 rows (most over ``max_rows``), spread over the groups and keys, their
    rows scattered through the file; undeclared keys (3) and groups (4)."""
    rng = np.random.default_rng(seed)
    u = np.concatenate([np.repeat(np.arange(20), rng.integers(1, 40, 20)), rng.integers(20, 80, n)])
    rng.shuffle(u)
    return pd.DataFrame({"u": u, "g": rng.integers(0, 5, len(u)), "k": rng.integers(0, 4, len(u)),
                         "v": np.round(rng.uniform(-1, 6, len(u)), 2)})


def _answers(agg, spec) -> dict:
    """Each statistic's exact answers as lists (``answers`` once each: it adds to the counts)."""
    out = {}
    for s in spec.statistics:
        a = answers(agg, s)
        out[s.name] = tuple(None if getattr(a, f) is None else getattr(a, f).tolist()
                            for f in ("cells", "scores", "argmax"))
    return out


def _same(path, fmt: str, unit: dict, stats: dict = STATS, seed: int = 4) -> dict:
    """The exact answers and counts of both engines for the same key; the local ones."""
    spec = parse_query_spec({"unit": unit, "statistics": stats})
    key = draw_key(SeededRandomSource(seed)) if unit.get("bounding") == "random" else None
    if fmt == "parquet":   # the JVM path (the rules as Spark windows), not the local engine on the executors
        import pyarrow.parquet as pq
        types = {"int64": "bigint", "double": "double"}
        assert eligible({f.name: types[str(f.type)] for f in pq.read_schema(path)}, spec)
    local = aggregate(read_batches(path, fmt, list(spec.columns)), spec, key=key)
    remote = aggregate_spark(path, fmt, spec, key=key)
    assert (remote.rows, remote.units, remote.kept) == (local.rows, local.units, local.kept)
    want = _answers(local, spec)
    assert _answers(remote, spec) == want, unit
    for s in spec.statistics:
        assert remote.counts[s.name] == local.counts[s.name], (s.name, unit)
    return want


def test_spark_priorities_are_the_local_aes_and_order_as_it(spark):
    from pyspark.sql import functions as F

    from optnoise.query.priority import spark_group_priority, spark_row_priority
    key = draw_key(SeededRandomSource(9))
    index = np.array([1, 2, 3, 255, 256, 2 ** 32 + 7, 2 ** 62 + 5, 2 ** 63 - 1], np.int64)
    code = np.array([0, 1, 2, 7, 1000, 2 ** 40, 2 ** 62, 2 ** 63 - 1], np.int64)
    frame = spark.createDataFrame([(int(a), int(b)) for a, b in zip(index, code)], "i long, c long")
    got = frame.select(spark_row_priority(key, F.col("i")).alias("r"),
                       spark_group_priority(key, F.col("i"), F.col("c")).alias("g")).toPandas()
    unsigned = [int(x) for x in row_priorities(key, index)]
    assert [(int(x) + 2 ** 64) % 2 ** 64 ^ 2 ** 63 for x in got["r"]] == unsigned   # the top bit flipped
    assert np.argsort(got["r"].to_numpy(), kind="stable").tolist() == np.argsort(unsigned, kind="stable").tolist()
    assert [(int(x) + 2 ** 64) % 2 ** 64 ^ 2 ** 63 for x in got["g"]] == \
        [int(x) for x in group_priorities(key, index, code)]
    # an independent computation of one block: AES_k(0^8 || be64(1)), first 8 bytes; and Spark
    # SQL's aes_encrypt of the block (ECB, PKCS padding: its first 16 bytes encrypt the block)
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    block = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(bytes(15) + b"\x01")
    assert int.from_bytes(block[:8], "big") == unsigned[0]
    sql = spark.range(1).select(F.aes_encrypt(F.unhex(F.lit("00" * 15 + "01")), F.unhex(F.lit(key.hex())),
                                              F.lit("ECB")).alias("e")).toPandas()["e"][0]
    assert bytes(sql)[:16] == block
    assert len(set(unsigned)) == len(unsigned) and unsigned != sorted(unsigned)


def test_the_read_index_is_the_local_row_number_in_many_partitions(tmp_path, spark):
    from pyspark.sql import functions as F

    from optnoise.query.spark import read_input
    from optnoise.query.spark import index_column
    from optnoise.query.spark_groups import INDEX
    from optnoise.query.spark_units import ROW
    frame = pd.DataFrame({"x": np.arange(20_000) * 7})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet", index=False, row_group_size=500)
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "8k")
    try:
        for path, fmt in ((tmp_path / "t.csv", "csv"), (tmp_path / "t.parquet", "parquet")):
            raw = read_input(spark, path, fmt, ["x"]).withColumn(ROW, F.monotonically_increasing_id())
            assert raw.rdd.getNumPartitions() > 3, fmt
            got = raw.withColumn(INDEX, index_column(raw)).select(F.col("x").cast("long").alias("x"), INDEX)
            got = got.toPandas().sort_values(INDEX)
            assert got[INDEX].tolist() == list(range(1, 20_001)), fmt
            assert (got["x"].to_numpy() == 7 * (got[INDEX].to_numpy() - 1)).all(), fmt
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_groups_and_random_bounding_give_the_local_answers(tmp_path, spark, fmt, monkeypatch):
    frame = _table()
    path = tmp_path / f"t.{fmt}"
    frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, index=False, row_group_size=211)
    base = {"id": "u", "max_rows": 6}
    first = _same(path, fmt, {**base, "max_groups": 2})
    per_group = _same(path, fmt, {**base, "max_groups": 3, "max_rows_per_group": 3})
    assert first != per_group
    one = _same(path, fmt, {**base, "bounding": "random"})
    two = _same(path, fmt, {**base, "max_groups": 2, "bounding": "random"})
    three = _same(path, fmt, {**base, "max_groups": 3, "max_rows_per_group": 3, "bounding": "random"})
    other = _same(path, fmt, {**base, "max_groups": 3, "max_rows_per_group": 3, "bounding": "random"}, seed=5)
    assert three != other and three != per_group and two != first and one != two
    if fmt == "parquet":   # more units over max_rows than the driver collects: every row ranked in one pass
        from optnoise.query import spark_units
        monkeypatch.setattr(spark_units, "OVER_IDS", 3)
        assert _same(path, fmt, {**base, "max_groups": 3, "max_rows_per_group": 3, "bounding": "random"}) == three
        assert _same(path, fmt, {**base, "max_groups": 3, "max_rows_per_group": 3}) == per_group
        monkeypatch.undo()
    # without max_rows: random groups only; no id: each row a unit
    _same(path, fmt, {"id": "u", "max_groups": 2, "bounding": "random"}, {k: STATS[k] for k in ("h", "hf", "m")})
    _same(path, fmt, {"bounding": "random"}, {k: STATS[k] for k in ("n", "h", "s")})


def test_the_document_is_the_local_one_for_the_same_seed(tmp_path, spark):
    frame = _table(400, 8)
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    spec = {"unit": {"id": "u", "max_rows": 5, "max_groups": 2, "max_rows_per_group": 3, "bounding": "random"},
            "statistics": {k: STATS[k] for k in ("h", "s")}}
    for path in (tmp_path / "t.csv", tmp_path / "t.parquet"):
        doc, audit = query_file_audited(path, spec, engine="spark", source=SeededRandomSource(6))
        ref, ref_audit = query_file_audited(path, spec, source=SeededRandomSource(6))
        assert doc["engine"] == "spark" and doc["private"] is False
        assert audit["bounding"] == ref_audit["bounding"] and audit["statistics"] == ref_audit["statistics"]
        assert doc["statistics"] == ref["statistics"] and doc["unit"] == ref["unit"]


def test_the_cli_runs_the_unit_keys_on_spark(tmp_path, spark):
    _table(200, 2).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.toml").write_text('unit = { id = "u", max_rows = 4, max_groups = 2, max_rows_per_group = 2, '
                                     'bounding = "random" }\n[statistics.c]\nkind = "count"\nepsilon = 1.0\n')
    args = ["query", "--input", str(tmp_path / "t.csv"), "--spec", str(tmp_path / "s.toml"), "--seed", "3",
            "--output", str(tmp_path / "o.json")]
    assert CliRunner().invoke(app, [*args, "--engine", "spark"]).exit_code == 0
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["engine"] == "spark" and doc["unit"]["bounding"] == "random" and doc["unit"]["max_groups"] == 2
    assert CliRunner().invoke(app, [*args, "--force"]).exit_code == 0
    assert json.loads((tmp_path / "o.json").read_text())["statistics"] == doc["statistics"]
