"""The Spark engine of :func:`optnoise.table.release_file` (optional extra ``spark``).

The same release as the local engine, in one pass over the data: the selected columns
go through ``DataFrame.mapInArrow`` -- Spark's vectorised Python map on Arrow record
batches, the batch form of a ``pandas_udf`` without the conversion to pandas -- with the
very function the local engine uses (:func:`optnoise.table.batches.privatize_batch`):
validation, noise and the kept columns of a batch at once, no per-value Python. Each
batch reads its own bits from the executor's operating-system CSPRNG (no shared
generator state); in seeded (not private) mode each partition and batch gets a derived
seed. The row count comes from an accumulator filled by the same pass.

A bad value fails the job; only then a second job counts the rows of the earlier
partitions, so that the message names the value's data row in the file. The output is a
Spark dataset directory (part files), written to a temporary directory beside the
output and renamed onto it only after the manifest is written; a failure leaves nothing
behind. Input, output and manifest are local paths (the manifest hashes them). CSV values
must not contain quoted line breaks (Spark splits the file by lines).

The session: the active one, else a new one on ``master`` (``--spark-master``), else on
the master of the usual Spark configuration (:func:`configured_master`), else local on
all cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..errors import InvalidParameterError, OptnoiseError
from ..io import dumps, write_text_atomic
from ..randomness import RandomSource, child_source
from .batches import output_schema, privatize_batch
from .files import move_dir_atomic, temp_dir_beside
from .plan import ColumnPlan

#: Marks a bad value in the error text of a failed Spark task.
BAD_CELL = "OPTNOISE_BAD_CELL"


def configured_master(environ: Mapping[str, str] | None = None) -> str | None:
    """The master named by the usual Spark configuration, or ``None``.

    In order: ``--master`` in ``PYSPARK_SUBMIT_ARGS``, the ``MASTER`` environment variable,
    ``spark.master`` in ``spark-defaults.conf`` (in ``SPARK_CONF_DIR``, else
    ``SPARK_HOME/conf``).
    """
    env = os.environ if environ is None else environ
    args = env.get("PYSPARK_SUBMIT_ARGS", "").split()
    if "--master" in args[:-1]:
        return args[args.index("--master") + 1]
    if env.get("MASTER"):
        return env["MASTER"]
    conf_dir = env.get("SPARK_CONF_DIR") or (str(Path(env["SPARK_HOME"]) / "conf") if env.get("SPARK_HOME") else None)
    if conf_dir:
        defaults = Path(conf_dir) / "spark-defaults.conf"
        try:
            for line in defaults.read_text().splitlines():
                parts = line.split(None, 1)
                if len(parts) == 2 and parts[0] == "spark.master":
                    return parts[1].strip()
        except OSError:
            pass
    return None


def local_file(path: str | os.PathLike) -> str:
    """The Spark path of a file on the driver: ``file://`` and its absolute path.

    The input is checked, its columns read and its SHA-256 taken on the driver; a bare path
    would be looked up on the session's default filesystem instead (HDFS on many clusters),
    where a different file of the same name could be read and released under this one's
    hash. With the scheme, Spark reads this file or fails (an executor that does not see it).
    Not a percent-encoded URI: Hadoop's ``Path`` escapes the characters itself."""
    return "file://" + str(Path(path).resolve())


def spark_session(master: str | None = None):
    """The active SparkSession, or a new one (see the module docstring)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OptnoiseError("--engine spark needs pyspark: pip install 'optnoise[spark]'") from exc
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    chosen = master or configured_master()
    builder = SparkSession.builder.appName("optnoise-release").master(chosen or "local[*]")
    if chosen is None:  # local: no web UI, and no console progress (the command line draws its own bar)
        builder = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "4"))
    with jvm_stderr_captured() as log:
        try:
            spark = builder.getOrCreate()
        except Exception as exc:   # no Java, a bad master...: one line, the JVM's own last words if any
            raise OptnoiseError(f"Spark could not start: {jvm_last_line(log, exc)}") from None
    # a failed task (a bad value) becomes one line on stderr, not Java stack traces
    spark.sparkContext.setLogLevel("OFF")
    return spark


@contextmanager
def jvm_stderr_captured() -> Iterator:
    """Run the body with file descriptor 2 pointing at a temporary file, which is yielded.

    The JVM that a new SparkSession launches inherits it as its stderr for its whole life:
    the lines it writes before any log level can be set ("Using incubator modules", "Using
    Spark's default log4j profile", the loopback hostname and native-hadoop warnings,
    "Setting default log level") and its later log lines stay out of the terminal, so a
    successful release prints only its own output (issue 26). Python's own stderr is
    restored when the body ends.
    """
    sys.stderr.flush()
    log = tempfile.TemporaryFile(prefix="optnoise-spark-", suffix=".log")
    saved = os.dup(2)
    try:
        os.dup2(log.fileno(), 2)
        yield log
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()   # the JVM keeps its own descriptor of the (unlinked) file


def jvm_last_line(log, exc: Exception) -> str:
    """The last non-empty line the JVM wrote (``Error: ...``), else the exception's first line."""
    try:
        log.seek(0)
        lines = [ln.strip() for ln in log.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except (OSError, ValueError):
        lines = []
    text = lines[-1] if lines else next((ln.strip() for ln in str(exc).splitlines() if ln.strip()),
                                        type(exc).__name__)
    return text[:300]


def release_spark(input_path, in_fmt: str, columns: list[str], plans: dict[str, ColumnPlan], schema, output: Path,
                  out_fmt: str, src: RandomSource, finish: Callable[[list, int], dict], manifest_path: Path, *,
                  master: str | None = None) -> dict:
    """Run the release on Spark; returns the manifest written beside the output."""
    from pyspark import TaskContext
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StringType, StructField, StructType

    spark = spark_session(master)
    if in_fmt == "csv":  # every column as text, named from the header already read: no schema job
        from .files import column_names
        text = StructType([StructField(c, StringType()) for c in column_names(input_path, in_fmt)])
        df = spark.read.option("header", True).schema(text).csv(local_file(input_path))
    else:
        df = spark.read.parquet(local_file(input_path))
    df = df.select(*[f"`{c}`" for c in columns])
    kept_types = {f.name: f for f in df.schema.fields}
    out_struct = StructType([kept_types[f.name] if f.name not in plans else f
                             for f in from_arrow_schema(schema).fields])
    rows = spark.sparkContext.accumulator(0)

    def privatize(batches: Iterator) -> Iterator:
        part = TaskContext.get().partitionId()
        local = 0
        for b, batch in enumerate(batches):
            try:
                yield privatize_batch(batch, plans, output_schema(batch.schema, plans), first_row=local + 1,
                                      source=child_source(src, part, b))
            except InvalidParameterError as exc:
                raise RuntimeError(BAD_CELL + json.dumps({"partition": part, "value": str(exc.value),
                                                          "accepted": exc.accepted})) from None
            local += batch.num_rows
            rows.add(batch.num_rows)

    released = df.mapInArrow(privatize, out_struct)
    tmp = temp_dir_beside(output)
    shutil.rmtree(tmp)  # Spark creates the directory itself
    try:
        writer = released.write.mode("error")
        try:
            with quiet_failures():
                if out_fmt == "csv":
                    writer.option("header", True).csv(str(tmp))
                else:
                    writer.parquet(str(tmp))
        except Exception as exc:  # a failed Spark job: a bad value, or something else
            raise _job_error(exc, df) from None
        parts = sorted(p for p in tmp.iterdir() if p.name.startswith("part-"))
        manifest = finish(parts, rows.value)
        write_text_atomic(manifest_path, dumps(manifest))
        try:
            move_dir_atomic(tmp, output)
        except BaseException:
            manifest_path.unlink(missing_ok=True)  # no manifest without its output
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


#: PySpark's Python loggers that print a failed query's context (JSON, with the JVM's stack
#: trace) to stderr before the exception reaches the caller.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


@contextmanager
def quiet_failures() -> Iterator[None]:
    """Run the body (a Spark job) with PySpark's query-context loggers off, restored after:
    a failed job is then the one line :func:`marked_failure` makes of it, not a JSON stack
    trace on stderr first."""
    import logging
    loggers = [logging.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    saved = [log.disabled for log in loggers]
    for log in loggers:
        log.disabled = True
    try:
        yield
    finally:
        for log, was in zip(loggers, saved):
            log.disabled = was


def marked_failure(exc: Exception, marker: str) -> dict | OptnoiseError:
    """What a task attached (JSON) after ``marker`` to the error that failed a job, or the
    job's failure as one line when no task did."""
    text = str(exc)
    found = re.search(re.escape(marker) + r"(\{.*?\})\s*$", text, flags=re.MULTILINE)
    if found is None:
        first = next((line for line in text.splitlines() if line.strip()), type(exc).__name__)
        return OptnoiseError(f"the Spark job failed: {first.strip()[:300]}")
    return json.loads(found.group(1))


def _job_error(exc: Exception, df) -> Exception:
    """The bad value's error with its data row in the file, or a one-line job failure."""
    info = marked_failure(exc, BAD_CELL)
    if isinstance(info, Exception):
        return info
    from pyspark.sql import functions as F
    counts = {r["p"]: r["count"] for r in df.select(F.spark_partition_id().alias("p")).groupBy("p").count().collect()}
    before = sum(c for p, c in counts.items() if p < info["partition"])
    value = re.sub(r"^row (\d+)", lambda m: f"row {before + int(m.group(1))}", info["value"])
    return InvalidParameterError("input", value, info["accepted"])
