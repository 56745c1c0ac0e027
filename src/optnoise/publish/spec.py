"""The spec reader of every publication: a TOML file, its top-level sections, the budget, and
the one set of number rules (a number is written as a number and is finite; a count is an
integer >= 1; a choice is one of its words).

Errors are :class:`~optnoise.errors.InvalidParameterError` naming the key; the callers
(:mod:`optnoise.table.spec`, :mod:`optnoise.query.spec`) prefix the key path.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError
from ..target import Target

#: The keys of a target in attack terms (docs/attacks.md), in a column and in a budget.
ATTACK_KEYS = ("max_tpr", "at_fpr", "max_mu")
#: What a number of a spec must be, in words.
NUMBER = "a finite number (written without quotes)"


def read_toml(path: str | os.PathLike) -> dict:
    """A TOML file's structure; a missing, unreadable, binary or malformed file is bad input
    naming ``spec``."""
    import tomllib
    p = Path(path)
    if p.is_dir():
        raise InvalidParameterError("spec", str(path), "a TOML file (this is a directory)")
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise InvalidParameterError("spec", str(path), f"a readable TOML file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise InvalidParameterError("spec", str(path), f"a TOML file of UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                                    f"at offset {exc.start} is not UTF-8: is it binary?)") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InvalidParameterError("spec", str(path), f"valid TOML ({exc})") from exc


def section(data: Any, keys: tuple[str, ...], name: str, each: str) -> Mapping[str, Any]:
    """The spec's table of tables ``name`` (``[name.NAME]``), after checking that ``data`` is
    a table whose top-level keys are among ``keys``; errors name ``spec``."""
    if not isinstance(data, Mapping):
        raise InvalidParameterError("spec", type(data).__name__, f"a table (dict) with key '{name}'")
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise InvalidParameterError("spec", unknown[0], f"top-level keys {', '.join(keys)}")
    tables = data.get(name)
    if not isinstance(tables, Mapping) or not tables:
        raise InvalidParameterError("spec", name, f"a table [{name}.NAME] for each {each}")
    return tables


# ------------------------------------------------------------------ the number rules
def number(value: Any, key: str) -> Any:
    """A number written as a number, finite: TOML ``epsilon = "1.0"`` is text and ``true`` a
    boolean, both refused (not read as 1.0 or 1); ``inf`` and ``nan`` are refused too."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidParameterError(key, value, NUMBER)
    return value


def positive_integer(value: Any, key: str, accepted: str = "an integer >= 1") -> int:
    """An integer ``>= 1`` written as one (not a boolean, not ``2.0``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParameterError(key, value, accepted)
    return int(value)


def choice(value: Any, key: str, accepted: tuple[str, ...]) -> str:
    """One of the words ``accepted``."""
    if value not in accepted:
        raise InvalidParameterError(key, value, " or ".join(repr(a) for a in accepted))
    return str(value)


# ------------------------------------------------------------------ the budget
def parse_budget(value: Any, *, parameter: str = "budget") -> Target:
    """A budget ``{epsilon, delta}`` (or ``"EPS[,DELTA]"``) as an approximate-DP target, or
    ``{max_tpr, at_fpr}`` and/or ``{max_mu}`` as an attack target (the unit's best attacker,
    docs/attacks.md)."""
    if isinstance(value, Mapping) and set(value) & set(ATTACK_KEYS):
        return _attack_target(value, parameter)
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not 1 <= len(parts) <= 2:
            raise InvalidParameterError(parameter, value, "EPS or EPS,DELTA")
        try:
            nums = [float(p) for p in parts]
        except ValueError:
            raise InvalidParameterError(parameter, value, "EPS or EPS,DELTA (numbers)") from None
        value = {"epsilon": nums[0], "delta": nums[1] if len(nums) > 1 else 0.0}
    if not isinstance(value, Mapping) or "epsilon" not in value or set(value) - {"epsilon", "delta"}:
        raise InvalidParameterError(parameter, value, "{ epsilon = E, delta = D } (delta optional)")
    try:
        return Target(number(value["epsilon"], "epsilon"), number(value.get("delta", 0.0), "delta"))
    except InvalidParameterError as exc:  # name the budget's own key: budget.epsilon (a flag keeps its name)
        name = parameter if parameter.startswith("--") else f"{parameter}.{exc.parameter}"
        raise InvalidParameterError(name, exc.value, f"{exc.parameter}: {exc.accepted} (a budget is epsilon E > 0 "
                                    "and delta D with 0 <= D < 1)") from exc


def _attack_target(value: Mapping[str, Any], parameter: str) -> Target:
    """A budget in attack terms (no epsilon or delta beside it), its errors naming ``budget.KEY``."""
    extra = sorted(set(value) - set(ATTACK_KEYS))
    try:
        if extra:
            raise InvalidParameterError(extra[0], value[extra[0]], "no epsilon/delta beside max_tpr/at_fpr/max_mu")
        got = Target.of(**{k: number(v, k) for k, v in value.items()})
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{parameter}.{exc.parameter}", exc.value, f"{exc.accepted} (a budget in attack "
                                    "terms is max_tpr = B with at_fpr = A, and/or max_mu = M)") from exc
    return got  # type: ignore[return-value]


__all__ = ["ATTACK_KEYS", "NUMBER", "choice", "number", "parse_budget", "positive_integer", "read_toml", "section"]
