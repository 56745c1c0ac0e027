"""Privatize a column of a CSV or Parquet file with a certified mechanism.

A release maps each value onto the mechanism's domain ``{0..n}`` (integers
``lower..lower+n`` for a numeric column, or a list of categories in a given
order), adds noise modulo ``n + 1`` drawn by :mod:`optnoise.sampling` from the
*quantized, exactly certified* PMF, and maps back. The output holds only the
privatized column (other columns of the input are not private and are never
copied). Output and ``PATH.manifest.json`` are written atomically: a failure at
any step leaves no output behind.

Missing values are errors, not silently dropped or imputed: dropping rows or
filling them in is a decision about the data that changes what is private (see
docs/release.md).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .errors import InvalidParameterError, OptnoiseError
from .io import atomic_path, dumps, read_pmf_file
from .neighbourhood import Neighbourhood
from .pmf import CyclicPMF
from .sampling import QuantizedPMF, RandomSource, SeededRandomSource, add_noise_cyclic, quantize, random_source

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


# ------------------------------------------------------------------ mechanism
@dataclass(frozen=True)
class LoadedMechanism:
    """A PMF read from a file, with the target it was designed for (if the file says)."""

    pmf: CyclicPMF
    neighbourhood: Neighbourhood
    notion: str
    epsilon: float | None
    delta: float
    path: str
    sha256: str


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_mechanism(path: str | os.PathLike, *, neighbourhood: Neighbourhood | None = None,
                   epsilon: float | None = None, delta: float | None = None,
                   notion: str | None = None) -> LoadedMechanism:
    """Read a ``design`` JSON (target and neighbourhood taken from its ``guarantee``)
    or a plain PMF file (target from the arguments, neighbourhood default SD 1)."""
    data = read_pmf_file(path)
    arr = np.asarray(data["pmf"], dtype=float)
    pmf = CyclicPMF(arr, exact=data["exact"]) if data["exact"] is not None else CyclicPMF(arr)
    g: dict[str, Any] = {}
    text = Path(path).read_text() if Path(path).suffix.lower() != ".npy" else ""
    if text.lstrip().startswith("{"):
        g = json.loads(text).get("guarantee") or {}
    nb = neighbourhood
    if nb is None and g.get("neighbourhood"):
        ds = tuple(tuple(d) if isinstance(d, list) else d for d in g["neighbourhood"]["distances"])
        nb = Neighbourhood(ds, bool(g["neighbourhood"].get("directed", False)))
    nb = nb or Neighbourhood((1,))
    return LoadedMechanism(
        pmf=pmf, neighbourhood=nb,
        notion=notion or g.get("notion", "dp"),
        epsilon=epsilon if epsilon is not None else g.get("epsilon"),
        delta=float(delta if delta is not None else g.get("delta", 0.0) or 0.0),
        path=str(path), sha256=file_sha256(path))


def certify_mechanism(mech: LoadedMechanism) -> QuantizedPMF:
    """Quantize and certify against the mechanism's target (:func:`optnoise.sampling.quantize`)."""
    return quantize(mech.pmf, mech.neighbourhood, epsilon=mech.epsilon, delta=mech.delta, notion=mech.notion)


# ------------------------------------------------------------------ domain mapping
@dataclass(frozen=True)
class Domain:
    """The released column's domain: categories (in order) or integers ``lower..lower+n``."""

    size: int
    categories: tuple[str, ...] | None = None
    lower: int = 0

    def __post_init__(self) -> None:
        if self.categories is not None:
            if len(self.categories) != self.size:
                raise InvalidParameterError("--categories", ",".join(self.categories),
                                            f"exactly {self.size} categories (the mechanism's domain size n + 1)")
            if len(set(self.categories)) != len(self.categories):
                raise InvalidParameterError("--categories", ",".join(self.categories), "distinct categories")

    def to_json(self) -> dict:
        if self.categories is not None:
            return {"kind": "categorical", "categories": list(self.categories)}
        return {"kind": "numeric", "lower": self.lower, "upper": self.lower + self.size - 1}

    def to_index(self, values: Sequence[Any]) -> np.ndarray:
        """Map raw values to ``0..size-1``; the first bad one raises, naming its data row (1-based)."""
        out = np.empty(len(values), dtype=np.int64)
        lookup = {c: i for i, c in enumerate(self.categories)} if self.categories is not None else None
        for row, v in enumerate(values):
            idx = self._one(v, lookup)
            if idx is None:
                raise InvalidParameterError("--input", f"row {row + 1}: {describe_value(v)}", self._accepted())
            out[row] = idx
        return out

    def _accepted(self) -> str:
        if self.categories is not None:
            return f"one of the categories {list(self.categories)} (no missing values)"
        return f"an integer in [{self.lower}, {self.lower + self.size - 1}] (no missing values)"

    def _one(self, v: Any, lookup: dict | None) -> int | None:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT:
            return None
        if lookup is not None:
            return lookup.get(str(v))
        try:
            if isinstance(v, str):
                x = int(v.strip())
            elif float(v) == int(float(v)):
                x = int(float(v))
            else:
                return None
        except (TypeError, ValueError, OverflowError):
            return None
        return x - self.lower if 0 <= x - self.lower < self.size else None

    def from_index(self, idx: np.ndarray) -> list | np.ndarray:
        if self.categories is not None:
            cats = np.array(self.categories, dtype=object)
            return cats[idx]
        return idx + self.lower


def describe_value(v: Any) -> str:
    """How a bad value is shown in an error: missing values say so."""
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return "missing value"
    return repr(v)


# ------------------------------------------------------------------ files
def file_format(path: str | os.PathLike, parameter: str) -> str:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidParameterError(parameter, str(path), "a .csv or .parquet path")
    return fmt


def read_column(path: str | os.PathLike, column: str) -> list:
    """The raw values of ``column`` (CSV values as strings, empty = missing)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError("--input", str(path), "an existing CSV or Parquet file")
    fmt = file_format(p, "--input")
    try:
        if fmt == "csv":
            header = pd.read_csv(p, nrows=0).columns
            if column not in header:
                raise InvalidParameterError("--column", column, f"a column of {p.name}: {list(header)}")
            s = pd.read_csv(p, usecols=[column], dtype=str, keep_default_na=False, skip_blank_lines=False)[column]
            return [None if v == "" else v for v in s.tolist()]
        import pyarrow.parquet as pq
        names = pq.read_schema(p).names
        if column not in names:
            raise InvalidParameterError("--column", column, f"a column of {p.name}: {names}")
        return pq.read_table(p, columns=[column]).column(column).to_pylist()
    except InvalidParameterError:
        raise
    except Exception as exc:  # malformed file
        raise OptnoiseError(f"cannot read {path}: {exc}") from exc


def _write_frame(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False, engine="pyarrow")


# ------------------------------------------------------------------ release
def release(input_path: str | os.PathLike, column: str, mechanism: LoadedMechanism, output_path: str | os.PathLike, *,
            categories: Sequence[str] | None = None, lower: int = 0, engine: str = "local",
            seed: int | None = None, source: RandomSource | None = None) -> dict:
    """Release a privatized ``column`` of ``input_path`` into ``output_path``.

    Returns the manifest (also written to ``output_path + ".manifest.json"``).
    ``source`` overrides the randomness (default: the OS CSPRNG, or a seeded, not
    private stream with ``seed``). ``engine="spark"`` runs on a Spark DataFrame.
    """
    if engine not in ("local", "spark"):
        raise InvalidParameterError("--engine", engine, "'local' or 'spark'")
    out_fmt = file_format(output_path, "--output")
    in_fmt = file_format(input_path, "--input")
    q = certify_mechanism(mechanism)
    if len(q.shape) != 1:
        raise InvalidParameterError("--mechanism", mechanism.path, "a scalar-query mechanism (1-D PMF)")
    domain = Domain(q.shape[0], tuple(str(c) for c in categories) if categories is not None else None, int(lower))
    src = source or random_source(seed)
    output_path = Path(output_path)
    manifest_path = Path(str(output_path) + ".manifest.json")
    if engine == "local":
        values = read_column(input_path, column)
        idx = domain.to_index(values)
        released = domain.from_index(add_noise_cyclic(idx, q, src))
        with atomic_path(manifest_path) as tmp_manifest, atomic_path(output_path) as tmp_out:
            _write_frame(pd.DataFrame({column: released}), tmp_out, out_fmt)
            manifest = _manifest(input_path, in_fmt, column, len(values), output_path, out_fmt,
                                 [tmp_out], mechanism, q, domain, src, engine)
            tmp_manifest.write_text(dumps(manifest))
        return manifest
    from . import spark as spark_engine
    return spark_engine.release_spark(
        input_path, in_fmt, column, q, domain, output_path, out_fmt, src,
        lambda parts, n_rows: _manifest(input_path, in_fmt, column, n_rows, output_path, out_fmt, parts,
                                        mechanism, q, domain, src, engine),
        manifest_path)


def _manifest(input_path, in_fmt, column, rows, output_path, out_fmt, written_files, mechanism: LoadedMechanism,
              q: QuantizedPMF, domain: Domain, src: RandomSource, engine: str) -> dict:
    from . import __version__
    files = [Path(f) for f in written_files]
    digest = file_sha256(files[0]) if len(files) == 1 else hashlib.sha256(
        b"".join(bytes.fromhex(file_sha256(f)) for f in sorted(files))).hexdigest()
    return {
        "tool": "optnoise", "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "input": {"path": str(input_path), "format": in_fmt, "sha256": file_sha256(input_path),
                  "column": column, "rows": int(rows)},
        "output": {"path": str(output_path), "format": out_fmt, "sha256": digest,
                   "files": len(files), "column": column},
        "domain": domain.to_json(),
        "mechanism": {"path": mechanism.path, "sha256": mechanism.sha256, "noise": "added modulo n + 1",
                      "n": domain.size - 1, "quantized": q.to_json()},
        "certificate": q.certificate.to_json(),
        "randomness": {"source": src.description, "private": bool(src.private)},
        "private": bool(src.private),
        "engine": engine,
    }


def derive_seed(seed: int, *parts: int) -> int:
    """A child seed for a partition/batch (seeded, not private, mode only)."""
    state = np.random.SeedSequence([int(seed), *map(int, parts)]).generate_state(2, dtype=np.uint32)
    return int(state[0]) << 32 | int(state[1])


def seeded_child(src: RandomSource, *parts: int) -> RandomSource:
    """Per-partition stream: fresh CSPRNG reads, or a derived seeded stream."""
    if isinstance(src, SeededRandomSource):
        return SeededRandomSource(derive_seed(src.seed, *parts))
    return src


def move_dir_atomic(tmp_dir: Path, target: Path) -> None:
    """Rename a finished temporary directory onto ``target`` (replacing an old one)."""
    if target.exists():
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    os.replace(tmp_dir, target)


def temp_dir_beside(target: Path) -> Path:
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InvalidParameterError("--output", str(target), "a path in an existing directory")
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=directory))
