"""Reading PMFs from the command line and files; JSON and atomic file writes."""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .errors import InvalidParameterError


def parse_pmf_text(text: str, parameter: str = "pmf") -> tuple[np.ndarray, np.ndarray]:
    """Parse ``"0.5,0.25,0.25"`` into float masses and their exact decimal values.

    Returns
    -------
    (floats, exact):
        The masses as floats and as :class:`~fractions.Fraction` (object array): a
        decimal written by the user is a rational number, kept exactly.
    """
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise InvalidParameterError(parameter, text, "comma-separated masses like 0.5,0.25,0.25")
    try:
        exact = [Fraction(p) for p in parts]
    except (ValueError, ZeroDivisionError) as exc:
        bad = next((p for p in parts if not _is_number(p)), text)
        raise InvalidParameterError(parameter, bad, "finite decimal numbers or fractions like 1/3") from exc
    arr = np.empty(len(exact), dtype=object)
    arr[:] = exact
    return np.array([float(x) for x in exact]), arr


def _is_number(s: str) -> bool:
    try:
        Fraction(s)
        return True
    except (ValueError, ZeroDivisionError):
        return False


def read_pmf_file(path: str | os.PathLike, *, parameter: str = "path") -> dict[str, Any]:
    """Read a PMF from a file: JSON list, JSON object with ``pmf`` (and optional
    ``offset``), ``.npy``, or CSV/text with one value per line.

    Returns
    -------
    dict
        ``{"pmf": ndarray, "exact": object array | None, "offset": int | None}``.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError(parameter, str(path), "an existing readable file")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(p, allow_pickle=False)
            return {"pmf": np.asarray(arr, dtype=float), "exact": None, "offset": None}
        text = p.read_text()
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable .npy/.json/.csv file ({exc})") from exc
    stripped = text.lstrip()
    if suffix == ".json" or stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(parameter, str(path), f"valid JSON ({exc.msg} at line {exc.lineno})") from exc
        offset = None
        if isinstance(data, dict):
            if "pmf" not in data:
                raise InvalidParameterError(parameter, str(path), "a JSON list or an object with key 'pmf'")
            offset = data.get("offset")
            data = data["pmf"]
        try:
            arr = np.asarray(data, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(parameter, str(path), "a (nested) list of numbers") from exc
        return {"pmf": arr, "exact": None, "offset": offset}
    values = [line.split(",")[0].strip() for line in text.splitlines()]
    values = [v for v in values if v and not v.startswith("#")]
    if values and not _is_number(values[0]):
        values = values[1:]  # a CSV header
    floats, exact = parse_pmf_text(",".join(values), parameter)
    return {"pmf": floats, "exact": exact, "offset": None}


def jsonable(obj: Any) -> Any:
    """Make ``obj`` JSON-ready: numpy types to Python, non-finite floats to strings."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating, Fraction)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    return obj


def dumps(obj: Any) -> str:
    """JSON text of ``obj`` (infinite values as ``"inf"``, docs/cli.md)."""
    return json.dumps(jsonable(obj), indent=2, allow_nan=False)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    Nothing is left behind when the body raises: no partial output file. The file gets the
    permissions the umask gives a new file (``0o666 & ~umask``), not ``mkstemp``'s 0600.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InvalidParameterError("path", str(path), "a path in an existing directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~current_umask())  # mkstemp makes 0600: give what a plain open() would
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (read from /proc on Linux; elsewhere set and restored at once)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
