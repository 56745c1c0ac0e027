"""The manifest written beside every release: what was released, how, and its certificate."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from ..mechanism import Mechanism
from ..randomness import RandomSource
from .domain import Domain
from .files import file_sha256, files_sha256

_NOISE = {"cyclic": "added modulo n + 1", "integer": "added on the integer line (output unbounded)",
          "channel": "drawn from the channel row of the true value"}


def build_manifest(*, input_path: str | os.PathLike, in_fmt: str, column: str, rows: int,
                   output_path: str | os.PathLike, out_fmt: str, written_files: list, mechanism: Mechanism,
                   mechanism_file: str | os.PathLike | None, domain: Domain, source: RandomSource,
                   engine: str) -> dict:
    """The manifest object (JSON keys: docs/release.md)."""
    from .. import __version__
    q = mechanism.quantize()
    files = [Path(f) for f in written_files]
    mech_info = {"name": mechanism.name, "kind": mechanism.kind, "noise": _NOISE[mechanism.kind],
                 "neighbourhood": mechanism.neighbourhood.to_json(),
                 "target": None if mechanism.target is None else mechanism.target.to_json(),
                 "quantized": q.to_json()}
    if mechanism.kind == "cyclic":
        mech_info["n"] = q.shape[0] - 1
    if mechanism_file is not None:
        mech_info["path"] = str(mechanism_file)
        mech_info["sha256"] = file_sha256(mechanism_file)
    return {
        "tool": "optnoise", "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "input": {"path": str(input_path), "format": in_fmt, "sha256": file_sha256(input_path),
                  "column": column, "rows": int(rows)},
        "output": {"path": str(output_path), "format": out_fmt, "sha256": files_sha256(files),
                   "files": len(files), "column": column},
        "domain": domain.to_json(),
        "mechanism": mech_info,
        "certificate": q.certificate.to_json(),
        "randomness": {"source": source.description, "private": bool(source.private)},
        "private": bool(source.private),
        "engine": engine,
    }
