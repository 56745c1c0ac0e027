"""The Spark helpers of every publication (optional extra ``spark``): the session, the
driver's file, a failed job as one line, and the data row of a bad value.

The session: the active one, else a new one on ``master`` (``--spark-master``), else on the
master of the usual Spark configuration (:func:`configured_master`), else local on all
cores; a new session's JVM writes to a temporary file, not the terminal
(:func:`jvm_stderr_captured`). A file is read as the driver's (:func:`local_file`). A task
that meets a bad value raises an error carrying a marker and JSON (:func:`marked_failure`
reads it back); :func:`bad_value` turns it into the one-line error naming the value's data
row in the file, counted by a second job of the caller's.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..errors import InvalidParameterError, OptnoiseError


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


#: Seconds to wait for a standalone master to accept a connection before giving up.
CONNECT_SECONDS = 10.0


def check_master(master: str, timeout: float = CONNECT_SECONDS) -> None:
    """Refuse a standalone master (``spark://host:port[,host:port...]``) that no address
    accepts within ``timeout`` seconds each: one line naming the URL (exit 1), not the JVM's
    retries for a minute and more (issue 38). Other masters are left to Spark."""
    import socket
    if not master.startswith("spark://"):
        return
    why = ""
    for address in master[len("spark://"):].split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host or "localhost", int(port)), timeout=timeout):
                return
        except ValueError:
            why = f"no port in {address!r}"
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
    raise OptnoiseError(f"Spark could not start: no Spark master answers at {master} ({why}); start it or correct "
                        "--spark-master")


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
    if chosen:
        check_master(chosen)
    # no call-site capture around each column operation (PySpark's DataFrame debugging): about
    # 0.2 s less of plan building through py4j (docs/benchmarks.md); errors are one line anyway
    builder = (SparkSession.builder.appName("optnoise-release").master(chosen or "local[*]")
               .config("spark.python.sql.dataFrameDebugging.enabled", "false"))
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
        return job_failure(exc)
    return json.loads(found.group(1))


def bad_value(exc: Exception, marker: str, locate: Callable[[dict], str]) -> Exception:
    """The error of a failed job: the bad value a task marked, its data row in the file put in
    by ``locate(info)`` (the value's text with the file's row: a second job counts the rows
    before it; ``info`` is the JSON the task attached), or the job's failure as one line when
    no task marked one. The parameter is the task's (``input`` when it named none)."""
    info = marked_failure(exc, marker)
    if isinstance(info, Exception):
        return info
    return InvalidParameterError(info.get("parameter", "input"), locate(info), info["accepted"])


#: What a failed job's text says, and the one line that says why (``{path}``: the file).
MISSING_FILE = re.compile(r"(?:FileNotFoundException|FAILED_READ_FILE|PATH_NOT_FOUND|does not exist)[^\n]*?"
                          r"(file:[^\s'\"\]\)]+)")
OOM = re.compile(r"OutOfMemoryError|Java heap space|GC overhead limit|Not enough memory to build and broadcast|"
                 r"\bMemoryError\b|exceeding memory limits|exited with code 52\b|Container killed .* memory")
ON_EXECUTOR = re.compile(r"stage failure|Task \S+ in stage|ExecutorLostFailure|Python worker")
LOST = re.compile(r"ExecutorLostFailure|executor \S+ lost|Executor heartbeat timed out|worker lost", re.IGNORECASE)


def job_failure(exc: BaseException) -> OptnoiseError:
    """A failed Spark job as one line that says why (issue 38): out of memory (on the driver
    or the executors, and the setting that raises it), an executor lost after the task's
    retries, the input missing on an executor (its path, and the rule), else the job's own
    first line."""
    text = str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    retries = re.search(r"failed (\d+) times", text)
    tries = f" after {retries.group(1)} tries (spark.task.maxFailures)" if retries else ""
    if OOM.search(text):
        if "broadcast" in text or not ON_EXECUTOR.search(text):
            return OptnoiseError("the Spark job failed: the driver ran out of memory; raise spark.driver.memory "
                                 "(--driver-memory, or spark-defaults.conf)")
        return OptnoiseError(f"the Spark job failed: an executor ran out of memory{tries}; raise spark.executor.memory"
                             " (and spark.executor.memoryOverhead for the Python workers), or use more partitions")
    missing = MISSING_FILE.search(text)
    if missing:
        path = missing.group(1).rstrip(".,;:")
        return OptnoiseError(f"the Spark job failed: an executor cannot read {path}; every executor must "
                             "see the input at the same path as the driver (a filesystem shared by every node)")
    if LOST.search(text):
        return OptnoiseError(f"the Spark job failed: an executor was lost{tries or ' and the task was not retried'} "
                             "(a worker died, ran out of memory or was killed; see the worker's log)")
    return OptnoiseError(f"the Spark job failed: {first[:300]}")


@contextmanager
def interruptible(spark) -> Iterator[None]:
    """Run the body (Spark jobs) so that Ctrl-C is an interrupt: the jobs cancelled, the Spark
    application stopped and ``KeyboardInterrupt`` raised (the command line exits 130), even
    when the JVM, which shares the terminal's process group, fails the job first."""
    import signal
    import threading
    hit: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame):
        hit.append(True)
        raise KeyboardInterrupt
    saved = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    except BaseException as exc:
        if hit or isinstance(exc, KeyboardInterrupt):
            stop_quietly(spark)
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, saved)


def stop_quietly(spark) -> None:
    """Stop the session's Spark application (its jobs cancelled), whatever state it is in."""
    import contextlib
    with contextlib.suppress(BaseException):
        spark.sparkContext.cancelAllJobs()
    with contextlib.suppress(BaseException):
        spark.stop()


__all__ = ["CONNECT_SECONDS", "QUERY_CONTEXT_LOGGERS", "bad_value", "check_master", "configured_master",
           "interruptible", "job_failure", "stop_quietly", "jvm_last_line", "jvm_stderr_captured",
           "local_file", "marked_failure", "quiet_failures", "spark_session"]
