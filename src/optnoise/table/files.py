"""Files of a release: formats, streaming reads and writes, digests, and nothing lost.

Reading and writing go batch by batch through pyarrow, so memory does not grow with the
number of rows: a CSV is parsed in blocks of :data:`CSV_BLOCK` bytes (pyarrow reads a
bounded number of blocks ahead), a Parquet file one row group at a time (so its memory
is bounded by the largest row group, which the file's writer chose), and the output is
written as each batch is released. In a CSV every selected column is read as text:
privatized columns are validated by :class:`~optnoise.table.domain.Domain` and kept
columns are copied as they were written.

Nothing is lost: :func:`check_destination` refuses an output (or manifest) that is one of
the files read -- also through a link or another path to the same file -- and an existing
output unless ``force``.
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

from ..errors import InvalidParameterError, OptnoiseError

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
    """The input's columns, in order."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError("input", str(path), "an existing CSV or Parquet file")
    try:
        if fmt == "csv":
            with open(p, newline="", encoding="utf-8-sig") as fh:
                return next(csv.reader(fh), [])
        import pyarrow.parquet as pq
        return list(pq.read_schema(p).names)
    except Exception as exc:  # OSError, bad text or CSV, a malformed Parquet file
        raise OptnoiseError(f"cannot read {path}: {exc}") from exc


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
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:  # malformed file
        raise OptnoiseError(f"cannot read {path}: {exc}") from exc


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
def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two existing paths are the same file (links and other paths included)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_destination(output: Path, manifest: Path, reads: list[Path], *, force: bool) -> None:
    """Refuse to write over a file that is read, and an existing output or manifest unless ``force``."""
    for target, what in ((output, "output"), (manifest, "manifest")):
        for src in reads:
            if same_file(target, src) or (target.is_dir() and _inside(src, target)):
                raise InvalidParameterError("output", str(output), f"a path that is not the input or a file it reads "
                                                                   f"(the {what} would replace {src})")
    if force:
        return
    for target, what in ((output, "output"), (manifest, "manifest")):
        if target.exists() or target.is_symlink():
            raise InvalidParameterError("output", str(output), f"a new path (the {what} {target} exists; --force "
                                                               "replaces it)")


def _inside(path: Path, directory: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(directory))
        return True
    except ValueError:
        return False


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
