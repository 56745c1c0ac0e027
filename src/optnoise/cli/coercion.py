"""Start-up (issue 37): option values coerced without building pydantic adapters.

typer 0.29 coerces every option's text through a pydantic ``TypeAdapter`` built on first use:
importing pydantic and building one adapter per option of the command costs 90-110 ms, more
than the rest of ``optnoise verify`` on a small mechanism. Every option of this command line
is a plain ``str``, ``int``, ``float``, ``bool`` or ``Path`` (a test checks it), whose text
needs no schema: this module gives such an option a coercion that converts the texts whose
value is unambiguous itself and hands **every other text** to typer's own (pydantic)
coercion, built then. So a value accepted here is the value pydantic gives for the same text
(``tests/test_cli_coercion.py`` compares them on every option and a corpus of texts), and a
value refused, or unusual, gets typer's own answer and message, unchanged.

With a typer that has no such hooks (another version) nothing is changed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

#: Texts whose conversion is the same in Python and in pydantic's lax mode.
_INT = re.compile(r"-?[0-9]{1,18}\Z")
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?\Z")


def _text_to_int(text: str) -> int | None:
    return int(text) if _INT.match(text) else None


def _text_to_float(text: str) -> float | None:
    return float(text) if _FLOAT.match(text) else None


def _text_to_str(text: str) -> str | None:
    return text


def _text_to_path(text: str) -> Path | None:
    return Path(text) if text and "\x00" not in text else None


#: The plain conversions, by annotation; ``None`` from one means "ask typer".
PLAIN: dict[type, Callable[[str], Any]] = {int: _text_to_int, float: _text_to_float, str: _text_to_str,
                                           Path: _text_to_path}


def plain_value(annotation: Any, value: Any) -> Any | None:
    """The value of an option's text when it is unambiguous (module docstring), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, str):
        return value if annotation is bool and isinstance(value, bool) else None
    convert = PLAIN.get(annotation)
    return None if convert is None else convert(value)


def _runtime_classes() -> tuple[Any, Any] | None:
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # pragma: no cover - another typer
        return None
    return RuntimeParam, build_runtime_param


def _plain_class(base: Any, build: Any) -> Any:
    """A typer ``RuntimeParam`` converting plain texts itself, the rest through ``build``."""

    class PlainRuntimeParam(base):  # type: ignore[misc, valid-type]
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = plain_value(self.annotation, value)
            if plain is not None:
                return plain
            return build(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)

    return PlainRuntimeParam


def plain_coercion(params: Any) -> int:
    """Give each plain option among ``params`` the coercion of the module docstring; returns how
    many were given it (0 with another typer)."""
    classes = _runtime_classes()
    if classes is None:
        return 0
    runtime = _plain_class(*classes)
    given = 0
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", None) is not None:
            continue
        if (descriptor.annotation not in PLAIN and descriptor.annotation is not bool) or param.multiple \
                or param.nargs != 1 or descriptor.file_annotation is not None or descriptor.is_ranged \
                or descriptor.is_choice:
            continue
        try:
            param._runtime_param = runtime(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
        except TypeError:  # pragma: no cover - another typer
            return given
        given += 1
    return given
