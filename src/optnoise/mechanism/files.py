"""Mechanism files: read one (any kind, or a plain PMF file), checked key by key, hashed as
read (docs/cli.md, "Mechanism files"). Written by :meth:`~optnoise.mechanism.Mechanism.to_json`."""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import InvalidParameterError, ResourceLimitError, one_line, show_value
from ..io import read_pmf_file
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from ..sampling.block_map import BlockMap
from ..sampling.clamp_remap import ClampRemap
from ..target import Target
from .core import SCHEMA, SCHEMA_VERSION, Mechanism, MechanismFile

#: Largest difference between a mass of a file's ``pmf`` (or ``channel``) and its ``exact``
#: value: written by optnoise, the float is the exact value's nearest double.
EXACT_AGREEMENT = 1e-12


def _exact_array(data: dict, floats: np.ndarray, parameter: str, key: str = "pmf") -> np.ndarray | None:
    """The file's ``exact`` masses, which must be the masses of ``key`` written exactly: a file
    whose two copies disagree was edited by hand, and which one was meant is unknown."""
    values = data.get("exact")
    if values is None:
        return None
    if not isinstance(values, list):
        raise InvalidParameterError(parameter, "exact", "exact masses: a list of 'p/q' strings")
    try:
        flat = [Fraction(str(v)) for v in values]
    except (ValueError, ZeroDivisionError, TypeError) as exc:
        raise InvalidParameterError(parameter, "exact", "exact masses written as 'p/q' strings") from exc
    if len(flat) != floats.size:
        raise InvalidParameterError(parameter, f"{len(flat)} exact masses", f"{floats.size} (one per mass of '{key}')")
    for i, (v, f) in enumerate(zip(flat, floats.ravel())):
        if abs(float(v) - float(f)) > EXACT_AGREEMENT:
            raise InvalidParameterError(parameter, f"'{key}' and 'exact' disagree at index {i} ({float(f):.12g} vs "
                                        f"{v})", "a file whose 'exact' masses are its masses written exactly (edit "
                                        "both, or delete 'exact')")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(floats.shape)


def _tail_from_json(data: Any, parameter: str) -> GeometricTail | None:
    if data is None:
        return None
    if not isinstance(data, dict) or "ratio" not in data:
        raise InvalidParameterError(parameter, data, "a tail object {\"ratio\": R, \"period\": P} or null")
    return GeometricTail(float(data["ratio"]), int(data.get("period", 1)))


def _number_list(data: dict, key: str, parameter: str) -> np.ndarray:
    if key not in data:
        what = "the matrix P[input, output]" if key == "channel" else "the masses"
        raise InvalidParameterError(parameter, f"no '{key}' key", f"a {data.get('kind') or 'cyclic'} mechanism file "
                                    f"with key '{key}' ({what})")
    try:
        arr = np.asarray(data[key], dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, key, f"key '{key}' holding a (nested) list of numbers") from exc
    return arr


def mechanism_from_json(data: dict, *, parameter: str = "mechanism") -> Mechanism:
    """A :class:`Mechanism` from a mechanism-file object.

    Also reads the files optnoise wrote before the schema existed: a ``design`` JSON
    (``pmf`` + ``guarantee``) is cyclic noise with the design's neighbourhood and target;
    an integer-line or Wasserstein design (``pmf`` + ``offset`` + ``tail``) is noise on Z
    with both tails. Whatever is wrong inside the object is reported as a bad ``parameter``
    (the file), naming the key and what it accepts.
    """
    with _file_errors(parameter, "the mechanism object"):
        return _mechanism_from_json(data, parameter)


@contextmanager
def _file_errors(parameter: str, source: str) -> Iterator[None]:
    """Errors about the *contents* of a file become errors about the file: ``parameter``
    (the file's parameter) with the value ``source`` (its path), saying what was wrong."""
    try:
        yield
    except ResourceLimitError:
        raise
    except InvalidParameterError as exc:
        if exc.parameter == parameter and exc.value == source:
            raise
        inner = "" if exc.parameter == parameter else f"its {exc.parameter}: "
        found = exc.value if isinstance(exc.value, str) else show_value(exc.value)
        accepted = exc.accepted.replace(" (normalize=True rescales them)", "")  # a file is not rescaled
        raise InvalidParameterError(parameter, source, f"a valid mechanism file ({inner}{found}; accepted: "
                                    f"{accepted})") from exc
    except KeyError as exc:
        raise InvalidParameterError(parameter, source, f"a valid mechanism file (its key {exc} is missing; "
                                    "docs/cli.md, 'Mechanism files')") from exc
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        raise InvalidParameterError(parameter, source, f"a valid mechanism file (docs/cli.md, 'Mechanism files'): "
                                    f"{one_line(exc)}") from exc


#: The keys each kind of mechanism file is written with (:meth:`Mechanism.to_json`): a file
#: whose ``kind`` names another kind than its keys was edited, and is refused.
KIND_KEYS = {"cyclic": ("pmf", "shape"), "integer": ("pmf", "offset", "left_tail", "right_tail"),
             "channel": ("channel",)}


def _check_kind(data: dict, kind: str, parameter: str) -> None:
    """The file's keys are those of its ``kind`` (report keys beside them are not schema keys)."""
    for other, keys in KIND_KEYS.items():
        foreign = [k for k in keys if k not in KIND_KEYS[kind] and data.get(k) is not None]
        if other != kind and foreign and all(k in data for k in keys):
            raise InvalidParameterError(parameter, f"kind '{kind}' with the keys of a {other} file ({', '.join(keys)})",
                                        "a file whose 'kind' matches its keys (was 'kind' edited?)")
    missing = [k for k in KIND_KEYS[kind] if k not in data]
    if missing:
        raise InvalidParameterError(parameter, f"kind '{kind}' without key '{missing[0]}'",
                                    f"a {kind} mechanism file, with key{'s' if len(KIND_KEYS[kind]) > 1 else ''} "
                                    + ", ".join(f"'{k}'" for k in KIND_KEYS[kind]))


def _mechanism_from_json(data: dict, parameter: str, origin: MechanismFile | None = None) -> Mechanism:
    if not isinstance(data, dict):
        raise InvalidParameterError(parameter, type(data).__name__, "a JSON object (a mechanism file)")
    if data.get("format") not in (None, SCHEMA):
        raise InvalidParameterError(parameter, data.get("format"), f"format '{SCHEMA}'")
    if data.get("format") == SCHEMA and data.get("format_version") != SCHEMA_VERSION:
        raise InvalidParameterError(parameter, data.get("format_version"), f"format_version {SCHEMA_VERSION}")
    legacy = data.get("format") is None
    kind = data.get("kind") or ("integer" if "offset" in data and "tail" in data else "cyclic")
    if kind not in ("cyclic", "integer", "channel"):
        raise InvalidParameterError(parameter, kind, "kind 'cyclic', 'integer' or 'channel'")
    if not legacy:
        _check_kind(data, kind, parameter)
    target = None
    nb_data = data.get("neighbourhood")
    if legacy and "guarantee" in data and not isinstance(data["guarantee"], dict):
        raise InvalidParameterError("guarantee", data["guarantee"], "an object {\"epsilon\", \"delta\", "
                                    "\"notion\", \"neighbourhood\"} (a design file)")
    if legacy and isinstance(data.get("guarantee"), dict):  # a design file from before the schema
        g = data["guarantee"]
        nb_data = g.get("neighbourhood", nb_data)
        target = Target(g["epsilon"], g.get("delta", 0.0) or 0.0, g.get("notion", "dp")) if "epsilon" in g else None
    elif data.get("target") is not None:
        target = Target.from_json(data["target"], parameter=parameter)
    elif legacy and kind == "integer" and "epsilon" in data:
        target = Target(data["epsilon"])
    if kind == "channel":
        matrix = _number_list(data, "channel", parameter)
        pmf: CyclicPMF | IntegerPMF | Channel = Channel(matrix, exact=_exact_array(data, matrix, parameter, "channel"))
        nb = InputPairs.from_json(nb_data) if isinstance(nb_data, dict) and "pairs" in nb_data else (
            Neighbourhood.from_json(nb_data) if nb_data else Neighbourhood((1,)))
    else:
        if "pmf" not in data:
            raise InvalidParameterError(parameter, "no 'pmf' key", "a mechanism file with key 'pmf'")
        probs = _number_list(data, "pmf", parameter)
        exact = _exact_array(data, probs, parameter)
        if kind == "cyclic":
            if not legacy and "shape" in data and list(data["shape"] or []) != list(probs.shape):
                raise InvalidParameterError(parameter, f"shape {data['shape']} for masses of shape {list(probs.shape)}",
                                            "a 'shape' that is the shape of 'pmf'")
            pmf = CyclicPMF(probs, exact=exact)
        else:
            offset = data.get("offset", 0)
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise InvalidParameterError(parameter, f"offset {offset!r}", "an integer offset")
            if legacy:
                tail = data["tail"]
                left = right = GeometricTail(float(tail["ratio"]), int(tail["period"]))
            else:
                left = _tail_from_json(data.get("left_tail"), parameter)
                right = _tail_from_json(data.get("right_tail"), parameter)
            pmf = IntegerPMF(probs, offset, left_tail=left, right_tail=right, exact=exact,
                             normalize=legacy and exact is None)
        nb = Neighbourhood.from_json(nb_data) if nb_data else (
            Neighbourhood.sensitivity(int(data["sensitivity"])) if legacy and "sensitivity" in data
            else Neighbourhood((1,)))
    blocks = BlockMap.from_json(data["blocks"]) if kind == "channel" and data.get("blocks") is not None else None
    release = ClampRemap.from_json(data["release"]) if kind == "integer" and data.get("release") is not None else None
    return Mechanism(pmf, nb, target, str(data.get("name") or data.get("mechanism") or kind), origin, blocks, release)


def load_mechanism(path: str | os.PathLike, *, neighbourhood: Neighbourhood | InputPairs | None = None,
                   target: Target | None = None, parameter: str = "path") -> Mechanism:
    """Read a mechanism file (any kind), or a plain PMF file (cyclic noise).

    ``neighbourhood`` and ``target`` replace the file's own when given; a plain PMF file
    has neither (default SD 1, no target).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()   # read once: parsed, and hashed for a manifest
    except OSError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable mechanism or PMF file ({exc})") from exc
    origin = MechanismFile(str(path), hashlib.sha256(raw).hexdigest())
    try:
        text = None if p.suffix.lower() == ".npy" else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(parameter, str(path), f"a readable mechanism or PMF file ({exc})") from exc
    if text is not None and text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(parameter, str(path), f"valid JSON ({exc.msg} at line {exc.lineno})") from exc
        except RecursionError:
            raise InvalidParameterError(parameter, str(path), "JSON nested at most a few levels deep") from None
        with _file_errors(parameter, str(path)):
            mech = _mechanism_from_json(data, parameter, origin if neighbourhood is None and target is None else None)
    else:
        pmf_file = read_pmf_file(p, parameter=parameter)
        with _file_errors(parameter, str(path)):
            mech = Mechanism(CyclicPMF(pmf_file["pmf"], exact=pmf_file["exact"]), Neighbourhood((1,)), None, p.name,
                             origin if neighbourhood is None and target is None else None)
    if neighbourhood is None and target is None:
        return mech
    return mech.replace(neighbourhood=neighbourhood if neighbourhood is not None else mech.neighbourhood,
                        target=target if target is not None else mech.target, origin=origin)


# ------------------------------------------------------------------ constructors


__all__ = ["EXACT_AGREEMENT", "KIND_KEYS", "load_mechanism", "mechanism_from_json"]
