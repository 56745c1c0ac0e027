"""Files of a release: the output written batch by batch, its digests, and nothing lost.

The input is read by :mod:`optnoise.publish.files` (formats, columns, streamed batches; the
names are re-exported here). The output is written as each batch is released: a CSV with
its header first, a Parquet file in row groups of :data:`PARQUET_ROW_GROUP` rows. In a CSV
every selected column is read as text: privatized columns are validated by
:class:`~optnoise.table.domain.Domain` and kept columns are copied as they were written.

Nothing is lost: :func:`check_destination` applies the output rule of every command
(:func:`optnoise.io.check_output`) to the output and its manifest: never one of the files
read -- also through a link or another path to the same file -- and an existing one only
with ``force``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidParameterError
from ..io import check_output
from ..publish.files import (
    CSV_BLOCK,
    FORMATS,
    PARQUET_BATCH,
    Progress,
    column_names,
    file_format,
    file_sha256,
    input_schema,
    read_batches,
    unreadable,
)

if TYPE_CHECKING:
    import pyarrow as pa

#: Rows per row group written (Parquet).
PARQUET_ROW_GROUP = 1 << 20


def files_sha256(files: list[Path]) -> str:
    """One digest for one file, or for a dataset directory's part files."""
    if len(files) == 1:
        return file_sha256(files[0])
    return hashlib.sha256(b"".join(bytes.fromhex(file_sha256(f)) for f in sorted(files))).hexdigest()


def select_columns(names: list[str], privatized: tuple[str, ...], keep: tuple[str, ...], where: str) -> list[str]:
    """The columns to read and write, in the input's order; every named column must exist."""
    for parameter, wanted in (("columns", privatized), ("keep", keep)):
        missing = [c for c in wanted if c not in names]
        if missing:
            raise InvalidParameterError(parameter, missing[0], f"a column of {where}: {names}")
    chosen = set(privatized) | set(keep)
    return [c for c in names if c in chosen]


# ------------------------------------------------------------------ writing
class BatchWriter:
    """Write record batches incrementally as CSV (header first) or Parquet (row groups of
    :data:`PARQUET_ROW_GROUP` rows) to ``path`` (a temporary path of the caller's)."""

    def __init__(self, path: Path, fmt: str, schema: "pa.Schema") -> None:
        self.fmt = fmt
        self.schema = schema
        self._pending: list = []
        self._rows = 0
        if fmt == "csv":
            self._writer = open(path, "wb")
            with io.StringIO() as header:
                csv.writer(header, lineterminator="\n").writerow(schema.names)
                self._writer.write(header.getvalue().encode())
        else:
            import pyarrow.parquet as pq
            self._writer = pq.ParquetWriter(str(path), schema)

    def write(self, batch: "pa.RecordBatch") -> None:
        if self.fmt == "csv":
            self._write_csv(batch)
            return
        self._pending.append(batch)
        self._rows += batch.num_rows
        if self._rows >= PARQUET_ROW_GROUP:
            self._flush()

    def _write_csv(self, batch: "pa.RecordBatch") -> None:
        """Quote strings only in a batch where some string needs it (a comma, a quote, a line
        break): pyarrow's "needed" style quotes every string, so ids read as text would
        come out as ``"17"``."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
        needs = any(pc.any(pc.match_substring_regex(col, '[",\r\n]')).as_py()
                    for col in batch.columns if pa.types.is_string(col.type) or pa.types.is_large_string(col.type))
        sink = pa.BufferOutputStream()
        pcsv.write_csv(batch, sink, pcsv.WriteOptions(include_header=False,
                                                      quoting_style="needed" if needs else "none"))
        self._writer.write(sink.getvalue().to_pybytes())

    def _flush(self) -> None:
        import pyarrow as pa
        if self._pending:
            self._writer.write_table(pa.Table.from_batches(self._pending, schema=self.schema),
                                     row_group_size=PARQUET_ROW_GROUP)
        self._pending, self._rows = [], 0

    def close(self) -> None:
        if self.fmt == "parquet":
            self._flush()
        self._writer.close()

    def __enter__(self) -> "BatchWriter":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.close()


# ------------------------------------------------------------------ nothing lost
def check_destination(output: Path, manifest: Path, reads: list[Path], *, force: bool, dataset: bool = False) -> None:
    """The output rule (:func:`optnoise.io.check_output`) for the output and its manifest: never
    a file that is read, an existing one only with ``force``; ``dataset``: the output is a
    directory written whole (Spark)."""
    check_output(output, force=force, reads=reads, kind="dataset" if dataset else "file")
    try:
        check_output(manifest, force=force, reads=reads, what="manifest")
    except InvalidParameterError as exc:
        raise InvalidParameterError("output", str(output), exc.accepted) from None


def move_dir_atomic(tmp_dir: Path, target: Path) -> None:
    """Rename a finished temporary directory onto ``target`` (replacing an old one)."""
    if target.exists() or target.is_symlink():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    os.replace(tmp_dir, target)


def temp_dir_beside(target: Path) -> Path:
    """A new temporary directory in the target's directory (same file system: atomic rename)."""
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InvalidParameterError("output", str(target), "a path in an existing directory")
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=directory))


#: A path that names its filesystem (``hdfs://``, ``s3a://``, ``file://``...).
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def driver_output(path: str | os.PathLike) -> str:
    """The release's output as a path on the driver's filesystem: a plain path as given, a
    ``file://`` URI as its path. Spark then writes it by its ``file://`` URI
    (:func:`optnoise.publish.spark.local_file`), never on the session's default filesystem
    (HDFS on many clusters) where a bare path would land. A path naming another filesystem is
    refused (exit 2): the output's part files are hashed into the manifest, renamed into place
    and checked before any work on the driver's filesystem."""
    text = os.fspath(path)
    found = SCHEME.match(text)
    if found is None:
        return text
    rest = text[len(found.group(0)):]
    if found.group(1).lower() == "file" and rest.startswith("/"):
        return rest
    raise InvalidParameterError("output", text, "a path on the driver's filesystem (Spark writes it as file://...; "
                                "write the release there, then copy it to another filesystem)")


__all__ = ["SCHEME", "driver_output",
           "BatchWriter", "CSV_BLOCK", "FORMATS", "PARQUET_BATCH", "PARQUET_ROW_GROUP", "Progress", "check_destination",
           "column_names", "file_format", "file_sha256", "files_sha256", "input_schema", "move_dir_atomic",
           "read_batches", "select_columns", "temp_dir_beside", "unreadable"]
