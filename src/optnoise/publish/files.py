"""The input of a publication: its format, its columns, its rows streamed batch by batch, and
the digests a document records.

Reading goes batch by batch through pyarrow, so memory does not grow with the number of
rows: a CSV is parsed in blocks of :data:`CSV_BLOCK` bytes (pyarrow reads a bounded number
of blocks ahead), a Parquet file one row group at a time (so its memory is bounded by the
largest row group, which the file's writer chose). In a CSV every selected column is read
as text: each publisher validates the values it uses (a release's
:class:`~optnoise.table.domain.Domain`, a query's per-row rules).
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from ..errors import InvalidParameterError, one_line, shorten

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Bytes per CSV block read (the reader keeps a few dozen blocks in flight).
CSV_BLOCK = 1 << 20
#: Rows per Parquet batch read.
PARQUET_BATCH = 1 << 17

Progress = Callable[[float | None, int], None]


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_record(path: str | os.PathLike, sha256: str | None = None) -> dict:
    """A file as a document records it: ``{"path", "sha256"}`` (``sha256`` when already taken)."""
    return {"path": str(path), "sha256": sha256 if sha256 is not None else file_sha256(path)}


def file_format(path: str | os.PathLike, parameter: str) -> str:
    """``csv`` or ``parquet`` from the file name."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidParameterError(parameter, str(path), "a .csv or .parquet path")
    return fmt


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


__all__ = ["CSV_BLOCK", "FORMATS", "PARQUET_BATCH", "Progress", "column_names", "file_format", "file_record",
           "file_sha256", "input_schema", "read_batches", "unreadable"]
