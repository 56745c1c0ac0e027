"""Privatize a column of a CSV or Parquet file with a certified mechanism.

A release maps each value onto the mechanism's inputs (:mod:`.domain`: integers
``lower..lower+n`` or categories in a given order for a finite domain; the integers
themselves for noise on the integer line), privatizes it with draws from the
*quantized, exactly certified* mechanism (:meth:`optnoise.mechanism.Mechanism.apply`),
and maps back. The output holds only the privatized column. Output and
``PATH.manifest.json`` are written atomically: a failure at any step leaves no output
behind. ``engine="spark"`` runs the same release on Spark (:mod:`.spark`).

Missing values are errors, not silently dropped or imputed: dropping rows or
filling them in is a decision about the data that changes what is private (see
docs/release.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..errors import InvalidParameterError
from ..io import atomic_path, dumps
from ..mechanism import Mechanism
from ..randomness import RandomSource, random_source
from .domain import Domain
from .files import file_format, read_column, write_frame
from .manifest import build_manifest


def domain_for(mechanism: Mechanism, categories: Sequence[str] | None, lower: int) -> Domain:
    """The column domain a mechanism can release: finite ``{0..n}`` (cyclic noise, channels
    whose outputs are their inputs) or all integers (noise on the integer line)."""
    cats = tuple(str(c) for c in categories) if categories is not None else None
    if mechanism.kind == "integer":
        if cats is not None:
            raise InvalidParameterError("categories", ",".join(cats), "no categories with noise on the integer line")
        return Domain(None)
    if mechanism.kind == "cyclic":
        shape = mechanism.pmf.shape  # type: ignore[union-attr]
        if len(shape) != 1:
            raise InvalidParameterError("mechanism", f"shape {shape}", "a scalar-query mechanism (1-D PMF)")
        return Domain(shape[0], cats, int(lower))
    ch = mechanism.pmf
    if ch.n_inputs != ch.n_outputs:  # type: ignore[union-attr]
        raise InvalidParameterError("mechanism", f"{ch.n_inputs} inputs, {ch.n_outputs} outputs",  # type: ignore[union-attr]
                                    "a channel whose outputs are its inputs (a square matrix)")
    return Domain(ch.n_inputs, cats, int(lower))  # type: ignore[union-attr]


def release(input_path: str | os.PathLike, column: str, mechanism: Mechanism, output_path: str | os.PathLike, *,
            categories: Sequence[str] | None = None, lower: int = 0, engine: str = "local",
            seed: int | None = None, source: RandomSource | None = None,
            mechanism_file: str | os.PathLike | None = None) -> dict:
    """Release a privatized ``column`` of ``input_path`` into ``output_path``.

    Returns the manifest (also written to ``output_path + ".manifest.json"``).
    ``source`` overrides the randomness (default: the OS CSPRNG, or a seeded, not
    private stream with ``seed``). ``mechanism_file`` is recorded (path and SHA-256).
    """
    if engine not in ("local", "spark"):
        raise InvalidParameterError("engine", engine, "'local' or 'spark'")
    out_fmt = file_format(output_path, "output")
    in_fmt = file_format(input_path, "input")
    mechanism.quantize()  # certify before reading any data
    domain = domain_for(mechanism, categories, lower)
    src = source or random_source(seed)
    output_path = Path(output_path)
    manifest_path = Path(str(output_path) + ".manifest.json")

    def manifest(parts: list, n_rows: int) -> dict:
        return build_manifest(input_path=input_path, in_fmt=in_fmt, column=column, rows=n_rows,
                              output_path=output_path, out_fmt=out_fmt, written_files=parts, mechanism=mechanism,
                              mechanism_file=mechanism_file, domain=domain, source=src, engine=engine)

    if engine == "spark":
        from .spark import release_spark
        return release_spark(input_path, in_fmt, column, mechanism, domain, output_path, out_fmt, src, manifest,
                             manifest_path)
    values = read_column(input_path, column)
    released = domain.from_index(mechanism.apply(domain.to_index(values), source=src))
    with atomic_path(manifest_path) as tmp_manifest, atomic_path(output_path) as tmp_out:
        write_frame(pd.DataFrame({column: released}), tmp_out, out_fmt)
        result = manifest([tmp_out], len(values))
        tmp_manifest.write_text(dumps(result))
    return result


__all__ = ["Domain", "domain_for", "release"]
