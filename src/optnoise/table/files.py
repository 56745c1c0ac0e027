"""Files of a release: formats, streaming reads and writes, digests, and nothing lost.

Reading and writing go batch by batch through pyarrow, so memory does not grow with the
number of rows: a CSV is parsed in blocks of :data:`CSV_BLOCK` bytes (pyarrow reads a
bounded number of blocks ahead), a Parquet file one row group at a time (so its memory
is bounded by the largest row group, which the file's writer chose), and the output is
written as each batch is released. In a CSV every selected column is read as text:
privatized columns are validated by :class:`~optnoise.table.domain.Domain` and kept
columns are copied as they were written.

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
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from ..errors import InvalidParameterError, one_line, shorten
from ..io import check_output

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Bytes per CSV block read (the reader keeps a few dozen blocks in flight).
CSV_BLOCK = 1 << 20
#: Rows per Parquet batch read, and per row group written.
PARQUET_BATCH = 1 << 17
PARQUET_ROW_GROUP = 1 << 20

Progress = Callable[[float | None, int], None]


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def files_sha256(files: list[Path]) -> str:
    """One digest for one file, or for a dataset directory's part files."""
    if len(files) == 1:
        return file_sha256(files[0])
    return hashlib.sha256(b"".join(bytes.fromhex(file_sha256(f)) for f in sorted(files))).hexdigest()


def file_format(path: str | os.PathLike, parameter: str) -> str:
    """``csv`` or ``parquet`` from the file name."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidParameterError(parameter, str(path), "a .csv or .parquet path")
    return fmt


# ------------------------------------------------------------------ reading
def column_names(path: str | os.PathLike, fmt: str) -> list[str]:
    """The input's columns, in order; a file that cannot be read as ``fmt``, or whose column
    names repeat, is bad input naming the file (:func:`unreadable`)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError("input", str(path), "an existing CSV or Parquet file")
    try:
        if fmt == "csv":
            with open(p, "rb") as fh:
                head = fh.read(CSV_BLOCK)
            if b"\x00" in head:
                raise InvalidParameterError("input", str(path), "a CSV file of text (this one is binary: it holds "
                                            "NUL bytes)")
            with open(p, newline="", encoding="utf-8-sig") as fh:
                names = next(csv.reader(fh), [])
        else:
            import pyarrow.parquet as pq
            names = list(pq.read_schema(p).names)
    except InvalidParameterError:
        raise
    except Exception as exc:  # OSError, bad text or CSV, a malformed Parquet file
        raise unreadable(path, fmt, exc) from exc
    if not names:
        raise InvalidParameterError("input", str(path), "a file with a header line naming its columns (this one "
                                    "has none: it is empty)")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidParameterError("input", str(path), f"a file whose column names are unique ('{repeated[0]}' "
                                    f"appears {names.count(repeated[0])} times)")
    return names


def unreadable(path: str | os.PathLike, fmt: str, exc: BaseException) -> InvalidParameterError:
    """The bad-input error of a file that cannot be read as ``fmt``: what is wrong, in words."""
    text = one_line(str(exc).strip())
    if isinstance(exc, UnicodeDecodeError) or "invalid UTF8" in text or "UTF-8" in text:
        detail = (f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start} is not UTF-8"
                  if isinstance(exc, UnicodeDecodeError) else "it holds text that is not UTF-8")
        return InvalidParameterError("input", str(path), f"a CSV file encoded in UTF-8 ({detail}; convert it, e.g. "
                                     "iconv -f latin1 -t utf-8)")
    if isinstance(exc, OSError) and getattr(exc, "strerror", None):
        return InvalidParameterError("input", str(path), f"a readable file ({exc.strerror})")
    what = "a well-formed CSV file, one record per line" if fmt == "csv" else "a complete, readable Parquet file"
    return InvalidParameterError("input", str(path), f"{what} ({shorten(text, 160)})")


def select_columns(names: list[str], privatized: tuple[str, ...], keep: tuple[str, ...], where: str) -> list[str]:
    """The columns to read and write, in the input's order; every named column must exist."""
    for parameter, wanted in (("columns", privatized), ("keep", keep)):
        missing = [c for c in wanted if c not in names]
        if missing:
            raise InvalidParameterError(parameter, missing[0], f"a column of {where}: {names}")
    chosen = set(privatized) | set(keep)
    return [c for c in names if c in chosen]


def input_schema(path: str | os.PathLike, fmt: str, columns: list[str]) -> "pa.Schema":
    """Types of the selected input columns as read (all text for a CSV)."""
    import pyarrow as pa
    if fmt == "csv":
        return pa.schema([(c, pa.string()) for c in columns])
    import pyarrow.parquet as pq
    schema = pq.read_schema(path)
    return pa.schema([schema.field(c) for c in columns])


def read_batches(path: str | os.PathLike, fmt: str, columns: list[str],
                 progress: Progress | None = None) -> Iterator["pa.RecordBatch"]:
    """The selected columns, batch by batch, in row order (memory bounded; see the module)."""
    import pyarrow as pa
    try:
        if fmt == "csv":
            import pyarrow.csv as pcsv
            source = pa.OSFile(str(path), "rb")
            size = max(1, os.path.getsize(path))
            reader = pcsv.open_csv(
                source, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK),
                parse_options=pcsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
                convert_options=pcsv.ConvertOptions(include_columns=columns,
                                                    column_types={c: pa.string() for c in columns},
                                                    strings_can_be_null=True, null_values=[""]))
            rows = 0
            with source:
                for batch in reader:
                    rows += batch.num_rows
                    yield batch
                    if progress is not None:
                        progress(min(1.0, source.tell() / size), rows)
            return
        import pyarrow.parquet as pq
        pf = pq.ParquetFile(str(path))
        total = max(1, pf.metadata.num_rows)
        rows = 0
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=columns):
            rows += batch.num_rows
            yield batch
            if progress is not None:
                progress(rows / total, rows)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, UnicodeDecodeError) as exc:  # malformed file
        raise unreadable(path, fmt, exc) from exc


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
