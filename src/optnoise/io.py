"""Reading PMFs from the command line and files; JSON; the output rule and atomic file writes."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

import numpy as np

from .errors import InvalidParameterError, OptnoiseError, one_line, shorten, show_value


#: Longest decimal accepted for an exact mass or cost: digits, and the exponent's size. A
#: decimal is kept as an exact rational, so ``1e999999999`` would be a billion-digit number.
MAX_DIGITS = 1000
MAX_EXPONENT = 1000

_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")
_NUMBER_WORDS = "finite decimal numbers (like 0.25 or 2.5e-3) or fractions like 1/3"


def exact_number(text: str, parameter: str = "pmf") -> Fraction:
    """The exact rational value of a decimal (``"0.1"``, ``"2.5e-3"``) or a fraction (``"1/3"``).

    Refuses, before any big-number arithmetic, what is not finite or would be huge: more than
    :data:`MAX_DIGITS` digits or an exponent beyond :data:`MAX_EXPONENT`, and values beyond
    the float range.
    """
    s = text.strip()
    if "/" in s:
        num, _, den = s.partition("/")
        p, q = exact_number(num, parameter), exact_number(den, parameter)
        if q == 0 or p.denominator != 1 or q.denominator != 1:
            raise InvalidParameterError(parameter, text, _NUMBER_WORDS + " (p/q with integers, q != 0)")
        value = p / q
    else:
        m = _DECIMAL.fullmatch(s)
        if not m or not (m.group(2) or m.group(3)):
            raise InvalidParameterError(parameter, text, _NUMBER_WORDS)
        digits = len(m.group(2)) + len(m.group(3) or "")
        exp_text = (m.group(4) or "0").lstrip("+-").lstrip("0")
        if digits > MAX_DIGITS or len(exp_text) > 6 or int(exp_text or "0") > MAX_EXPONENT:
            raise InvalidParameterError(parameter, text, f"{_NUMBER_WORDS}, with at most {MAX_DIGITS} digits and "
                                        f"an exponent within +-{MAX_EXPONENT}")
        value = Fraction(s)
    try:
        float(value)
    except OverflowError:
        raise InvalidParameterError(parameter, text, f"{_NUMBER_WORDS}, within the float range (up to 1e308)") from None
    return value


def _exact_array(values: list[Fraction]) -> tuple[np.ndarray, np.ndarray]:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return np.array([float(x) for x in values]), arr


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
    return _exact_array([exact_number(p, parameter) for p in parts])


def _bytes_for_file(size: int) -> float:
    """Planned memory to read a PMF file of ``size`` bytes: the text, one exact rational, one
    float and list slots per value (about 60 bytes per character, measured with 10-digit values)."""
    return 60.0 * size


def read_pmf_file(path: str | os.PathLike, *, parameter: str = "path",
                  max_memory: int | None = None) -> dict[str, Any]:
    """Read a PMF (or a cost vector) from a file.

    Formats: a JSON list (nested for a joint PMF), a JSON object with ``pmf`` (and optional
    integer ``offset``), ``.npy``, or CSV/text with *one value per line* (an optional
    one-word header, blank lines and ``#`` comments are skipped; a line with several
    fields is an error naming the line). Decimals in text and JSON are kept exactly, as
    typed; ``.npy`` values are exact binary rationals.

    Returns
    -------
    dict
        ``{"pmf": ndarray, "exact": object array of Fractions, "offset": int | None}``.
    """
    from .resources import check

    p = Path(path)
    if p.is_dir():
        raise InvalidParameterError(parameter, str(path), "a file (this is a directory)")
    if not p.is_file():
        raise InvalidParameterError(parameter, str(path), "an existing readable file")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable file ({exc.strerror})") from exc
    check(_bytes_for_file(size), parameter=parameter, value=str(path), what=f"reading a {size}-byte file",
          max_memory=max_memory)
    if size == 0:
        raise InvalidParameterError(parameter, str(path), "a non-empty file of values")
    if p.suffix.lower() == ".npy":
        return _read_npy(p, parameter)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(parameter, str(path), "a text file (JSON, CSV or one value per line) or .npy; "
                                    f"this one is binary (byte {exc.start})") from exc
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable file ({exc.strerror})") from exc
    if p.suffix.lower() == ".json" or text.lstrip().startswith(("[", "{")):
        return _read_json(text, str(path), parameter)
    return _read_lines(text, str(path), parameter)


def _read_npy(p: Path, parameter: str) -> dict[str, Any]:
    try:
        arr = np.load(p, allow_pickle=False)
        floats = np.asarray(arr, dtype=np.float64)
    except (OSError, ValueError, TypeError, EOFError) as exc:
        raise InvalidParameterError(parameter, str(p), f"a readable .npy array of numbers ({one_line(exc)})") from exc
    if floats.ndim == 0:
        floats = floats.reshape(1)
    # No Fractions here: a float is an exact binary rational already, analysed as every float
    # PMF is (the exact analysis takes integer weights over the floats' power-of-two
    # denominator, vectorised); a table off 1 within the tolerance is rescaled
    # (pmf.rounded_table), in floating point.
    return {"pmf": floats, "exact": None, "offset": None}


def _read_json(text: str, path: str, parameter: str) -> dict[str, Any]:
    def bad_constant(name: str) -> Any:
        raise InvalidParameterError(parameter, path, f"finite JSON numbers (found {name})")

    try:
        data = json.loads(text, parse_float=lambda t: exact_number(t, parameter),
                          parse_int=lambda t: exact_number(t, parameter), parse_constant=bad_constant)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(parameter, path, f"valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError:
        raise InvalidParameterError(parameter, path, "JSON nested at most a few levels deep") from None
    except InvalidParameterError as exc:
        if exc.value == path:
            raise
        raise InvalidParameterError(parameter, path, exc.accepted + f" (found {show_value(exc.value)})") from None
    offset = None
    if isinstance(data, dict):
        if "pmf" not in data:
            raise InvalidParameterError(parameter, path, "a JSON list or an object with key 'pmf'")
        raw_offset = data.get("offset")
        if raw_offset is not None:
            if not (isinstance(raw_offset, Fraction) and raw_offset.denominator == 1
                    and abs(raw_offset) <= MAX_OFFSET):
                raise InvalidParameterError(parameter, path, f"an integer 'offset' within +-{MAX_OFFSET:.0e} "
                                            f"(found {show_value(_plain(raw_offset))})")
            offset = int(raw_offset)
        data = data["pmf"]
    if not isinstance(data, list):
        raise InvalidParameterError(parameter, path, f"a list of numbers (found {type(_plain(data)).__name__})")
    try:
        exact = np.array(data, dtype=object)
    except ValueError as exc:
        raise InvalidParameterError(parameter, path, "a list of numbers (nested lists of equal length)") from exc
    flat = exact.ravel()
    if exact.size == 0 or not all(isinstance(v, Fraction) for v in flat):
        bad = next((v for v in flat if not isinstance(v, Fraction)), None)
        raise InvalidParameterError(parameter, path, "a non-empty (nested) list of numbers"
                                    + (f" (found {show_value(_plain(bad))})" if exact.size else ""))
    floats = np.array([float(v) for v in flat]).reshape(exact.shape)
    return {"pmf": floats, "exact": exact, "offset": offset}


#: Largest ``offset`` accepted in a PMF file (integer-line positions stay exact in float64).
MAX_OFFSET = 10**15


def _plain(value: Any) -> Any:
    """A JSON value with exact numbers shown as the numbers they are."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return value


def _read_lines(text: str, path: str, parameter: str) -> dict[str, Any]:
    values: list[Fraction] = []
    first = True
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f for f in re.split(r"[,;\t ]+", line) if f]
        if len(fields) > 1:
            raise InvalidParameterError(parameter, path, f"one value per line (line {number} has {len(fields)} "
                                        f"fields: {shorten(repr(line), 60)})")
        try:
            values.append(exact_number(fields[0], parameter))
        except InvalidParameterError as exc:
            if first and re.fullmatch(r"[A-Za-z_][\w .-]*", fields[0]):
                first = False
                continue  # a one-word header
            raise InvalidParameterError(parameter, path, f"one number per line (line {number}: "
                                        f"{shorten(repr(line), 60)}; {exc.accepted})") from None
        first = False
    if not values:
        raise InvalidParameterError(parameter, path, "at least one value (one per line)")
    floats, exact = _exact_array(values)
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


#: Lists at least this long are written on one line by the C encoder when they hold only
#: JSON's own values (a channel's rows, a per-record unit's million pairs).
COMPACT_FROM = 256


def dumps(obj: Any) -> str:
    """JSON text of ``obj`` (infinite values as ``"inf"``, docs/cli.md).

    Indented, except that a long list of plain values (numbers, strings, lists of them;
    numpy arrays as their lists; no dict) is written on one line by :func:`json.dumps`'s C encoder:
    the same JSON value as :func:`jsonable` would give (a non-finite float or a numpy
    scalar makes the C encoder refuse, and such a list takes the indented path)."""
    compact: list[str] = []

    def mark(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: mark(v) for k, v in o.items()}
        if isinstance(o, np.ndarray) and o.dtype.kind in "iuf" and o.size >= COMPACT_FROM:
            o = o.tolist()
        if isinstance(o, (list, tuple)) and len(o) >= COMPACT_FROM:
            try:
                text = json.dumps(o, allow_nan=False)
            except (TypeError, ValueError):
                return [mark(v) for v in o]
            if "{" in text:   # a dict inside: its keys are jsonable's to write (True -> "True", not "true")
                return [mark(v) for v in o]
            compact.append(text)
            return f"\x00\x01{len(compact) - 1}\x01\x00"
        if isinstance(o, (list, tuple)):
            return [mark(v) for v in o]
        return o

    text = json.dumps(jsonable(mark(obj)), indent=2, allow_nan=False)
    if not compact:
        return text
    marker = re.compile(r'"\\u0000\\u0001(\d+)\\u0001\\u0000"')
    if [int(m) for m in marker.findall(text)] != list(range(len(compact))):   # a string of the input mimics one
        return json.dumps(jsonable(obj), indent=2, allow_nan=False)
    return marker.sub(lambda m: compact[int(m.group(1))], text)


# ------------------------------------------------------------------ the output rule
#: How an output path is used: a file written whole, a dataset directory written whole
#: (Spark's output), or a directory that files are written into (``demo``, ``reproduce``).
OutputKind = Literal["file", "dataset", "directory"]


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name the same file: through links, ``..`` and other spellings."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _inside(path: str | os.PathLike, directory: str | os.PathLike) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(directory))
        return True
    except ValueError:
        return False


def check_output(path: str | os.PathLike, *, force: bool = False, reads: Iterable[str | os.PathLike] = (),
                 parameter: str = "output", kind: OutputKind = "file", what: str = "output") -> Path:
    """The one output rule of every command and library function that writes.

    Refuses (``InvalidParameterError`` naming ``parameter``, before anything is computed):

    * a path that is one of the files read (``reads``), by any spelling -- links, relative
      paths, ``..`` -- or, for a directory written whole, one that holds a file read: never
      replaced, ``force`` or not;
    * an existing file, or a non-empty directory written whole, unless ``force``;
    * a path of the wrong kind (a directory where a file goes, or the reverse), an empty
      path, a path whose directory does not exist.

    ``kind``: ``"file"`` (the default), ``"dataset"`` (a directory written whole) or
    ``"directory"`` (files are written into it: check each with :func:`check_outputs_in`).
    ``what`` names the file in the message (``"manifest"`` for a release's second file).
    Returns the path. The write itself goes through :func:`atomic_path`, which refuses,
    at the moment of the rename, a file that appeared meanwhile (unless ``force``).
    """
    if not str(path).strip():
        raise InvalidParameterError(parameter, str(path), "a path (this one is empty)")
    target = Path(path)
    for src in reads:
        if _same_file(target, src) or (kind != "file" and target.is_dir() and _inside(src, target)):
            raise InvalidParameterError(parameter, str(path), f"a path that is not the input or a file it reads "
                                        f"(the {what} would replace {src}, --force or not)")
    exists = target.exists() or target.is_symlink()
    if kind == "directory":
        if exists and not target.is_dir():
            raise InvalidParameterError(parameter, str(path), "a directory (this is a file)")
        return target
    if kind == "file" and target.is_dir():
        raise InvalidParameterError(parameter, str(path), "a file path (this is a directory)")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidParameterError(parameter, str(path), "a path in an existing directory")
    _check_writable(parent, path, parameter)
    if exists and not force:
        if target.is_dir() and not any(target.iterdir()):
            return target  # an empty directory is not replaced: nothing is lost
        found = "a non-empty directory" if target.is_dir() else "a file"
        name = f"the {what} {path}" if what != "output" else str(path)
        raise InvalidParameterError(parameter, str(path), f"a new path ({name} exists: {found}; force=True "
                                    "replaces it)")
    return target


def _check_writable(directory: Path, path: str | os.PathLike, parameter: str) -> None:
    """A file can be created in ``directory`` (tried: permissions alone do not tell, e.g. for
    root, or in /proc), so that a long computation is not refused only at its end."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".optnoise-probe.", dir=directory)
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a path in a directory this user can write to "
                                    f"({directory}: {(exc.strerror or str(exc)).lower()})") from None
    os.close(fd)
    os.unlink(probe)


def check_outputs_in(directory: str | os.PathLike, names: Iterable[str], *, force: bool = False,
                     parameter: str = "out") -> Path:
    """The output rule for files written into ``directory``: it is not a file, and no file
    it would write (``names``) exists unless ``force``; other files in it are left alone."""
    folder = check_output(directory, parameter=parameter, kind="directory")
    if folder.is_dir():
        _check_writable(folder, directory, parameter)
    existing = [name for name in names if (folder / name).exists() or (folder / name).is_symlink()]
    if existing and not force:
        more = f", and {len(existing) - 1} more of its files" if len(existing) > 1 else ""
        raise InvalidParameterError(parameter, str(directory), f"a directory where no file would be replaced "
                                    f"({folder / existing[0]} exists{more}; force=True replaces "
                                    f"{'them' if more else 'it'})")
    for name in names:
        if (folder / name).is_dir():
            raise InvalidParameterError(parameter, str(directory), f"a directory where {name} can be written "
                                        f"({folder / name} is a directory)")
    return folder


@contextmanager
def atomic_path(path: str | os.PathLike, *, parameter: str = "output", replace: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    Nothing is left behind when the body raises: no partial output file. The file gets the
    permissions the umask gives a new file (``0o666 & ~umask``), not ``mkstemp``'s 0600.
    ``replace=False``: the rename refuses an existing ``path`` (a hard link, which fails
    when the name exists; where links are not supported, a check just before the rename).

    Raises
    ------
    InvalidParameterError
        A directory where the file goes, a missing or unwritable directory (bad input).
    OptnoiseError
        The write failed (a full disk, an I/O error): named with ``path``, not the
        temporary file.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not str(path).strip() or target.is_dir():
        raise InvalidParameterError(parameter, str(path), "a file path (this is a directory)")
    if not directory.is_dir():
        raise InvalidParameterError(parameter, str(path), "a path in an existing directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".tmp", dir=directory)
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a path in a directory this user can write to "
                                    f"({directory}: {(exc.strerror or str(exc)).lower()})") from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            yield tmp_path
            os.chmod(tmp_path, 0o666 & ~current_umask())  # mkstemp makes 0600: give what a plain open() would
            _rename(tmp_path, target, parameter, replace)
        except OSError as exc:
            raise OptnoiseError(f"cannot write {path}: {exc.strerror or one_line(exc)}") from exc
    finally:
        tmp_path.unlink(missing_ok=True)


def _rename(tmp: Path, target: Path, parameter: str, replace: bool) -> None:
    if replace:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # atomic, and fails if the name exists
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not (target.exists() or target.is_symlink()):
            os.replace(tmp, target)
            return
    else:
        return
    raise InvalidParameterError(parameter, str(target), f"a new path ({target} exists; force=True "
                                "replaces it)")


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


def write_text_atomic(path: str | os.PathLike, text: str, *, parameter: str = "output",
                      replace: bool = True) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8; ``replace``: as :func:`atomic_path`)."""
    with atomic_path(path, parameter=parameter, replace=replace) as tmp:
        tmp.write_text(text, encoding="utf-8")


#: Suffixes of a file of draws, and what each holds.
DRAW_FORMATS = {".npy": "a numpy array", ".csv": "one draw per line (columns noise_0, noise_1... for a vector)"}


def write_draws(values: np.ndarray, path: str | os.PathLike, *, force: bool = False,
                reads: Iterable[str | os.PathLike] = (), parameter: str = "output") -> Path:
    """Write integer draws to ``path`` (``.npy``, or ``.csv`` with a header ``noise``), atomically,
    under the output rule (:func:`check_output`: an existing file only with ``force``)."""
    if Path(path).suffix.lower() not in DRAW_FORMATS:
        raise InvalidParameterError(parameter, str(path), "a path ending in .npy or .csv")
    target = check_output(path, force=force, reads=reads, parameter=parameter)
    values = np.asarray(values)
    with atomic_path(target, parameter=parameter, replace=force) as tmp:
        if target.suffix.lower() == ".npy":
            with open(tmp, "wb") as fh:
                np.save(fh, values)
        else:
            header = "noise" if values.ndim == 1 else ",".join(f"noise_{i}" for i in range(values.shape[1]))
            rows = values.reshape(len(values), -1 if values.size else max(values.ndim, 1))  # -1 fails on 0 draws
            np.savetxt(tmp, rows, fmt="%d", delimiter=",", header=header, comments="")
    return target
