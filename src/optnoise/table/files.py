"""Files of a release: formats, reading a column, writing outputs atomically, digests."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from ..errors import InvalidParameterError, OptnoiseError

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


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


def read_column(path: str | os.PathLike, column: str) -> list:
    """The raw values of ``column`` (CSV values as strings, empty = missing)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError("input", str(path), "an existing CSV or Parquet file")
    fmt = file_format(p, "input")
    try:
        if fmt == "csv":
            header = pd.read_csv(p, nrows=0).columns
            if column not in header:
                raise InvalidParameterError("column", column, f"a column of {p.name}: {list(header)}")
            s = pd.read_csv(p, usecols=[column], dtype=str, keep_default_na=False, skip_blank_lines=False)[column]
            return [None if v == "" else v for v in s.tolist()]
        import pyarrow.parquet as pq
        names = pq.read_schema(p).names
        if column not in names:
            raise InvalidParameterError("column", column, f"a column of {p.name}: {names}")
        return pq.read_table(p, columns=[column]).column(column).to_pylist()
    except InvalidParameterError:
        raise
    except Exception as exc:  # malformed file
        raise OptnoiseError(f"cannot read {path}: {exc}") from exc


def write_frame(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    """Write a frame as CSV or Parquet (to a temporary path of the caller's)."""
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False, engine="pyarrow")


def move_dir_atomic(tmp_dir: Path, target: Path) -> None:
    """Rename a finished temporary directory onto ``target`` (replacing an old one)."""
    if target.exists():
        if target.is_dir():
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
