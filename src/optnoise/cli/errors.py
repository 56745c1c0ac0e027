"""Exit codes and one-line messages: library errors become the contract's answers.

Library errors name Python parameters; :func:`cli_errors` maps them, once, to the flag
the user typed (a command may override the mapping, e.g. ``path`` is ``--mechanism`` in
``sample``), echoes the value as the user typed it when the error is about that flag's
value, and exits 2 (bad input), 1 (other failures) or 130 (interrupted).
"""

import functools
import inspect
import math
import re
from typing import Any, Callable, Sequence

import typer

from ..errors import InvalidParameterError, OptnoiseError, ResourceLimitError, TimeLimitError, shorten, show_value
from .render import error_line

#: Python parameter -> flag, where the flag is not ``--`` + the name with ``-`` for ``_``.
FLAGS: dict[str, str] = {
    "notion": "--guarantee", "k": "--compose", "half_width": "--window", "x": "--input",
    "neighbourhood": "--distances", "path": "--pmf-file", "spec": "--family", "target": "--epsilon",
    "max_memory": "--max-memory", "max_seconds": "--max-seconds",
}

#: Parameters that several flags can set: the flag the user typed wins (in this order).
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "neighbourhood": ("--bd", "--sd", "--distances"),
    "distances": ("--bd", "--sd", "--distances"),
    "notion": ("--guarantee", "--notion"),
}

#: ``name=value`` in a library message (``normalize=True``, ``minimize='delta'``).
_KEYWORD = re.compile(r"\b([a-z][a-z_]*)=(True|'([^']*)'|\"([^\"]*)\")")


def flag_for(parameter: str, overrides: dict[str, str] | None = None) -> str:
    """The command-line flag of a library parameter."""
    if parameter.startswith("--") or "/" in parameter or parameter.isupper():
        return parameter
    if overrides and parameter in overrides:
        return overrides[parameter]
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def as_flags(text: str, overrides: dict[str, str] | None = None) -> str:
    """Python keywords in a library message written as flags: ``normalize=True`` ->
    ``--normalize``, ``minimize='delta'`` -> ``--minimize delta``."""

    def repl(m: re.Match) -> str:
        flag = flag_for(m.group(1), overrides)
        if m.group(2) == "True":
            return flag
        value = m.group(3) if m.group(3) is not None else m.group(4) if m.group(4) is not None else m.group(2)
        return f"{flag} {value}"

    return _KEYWORD.sub(repl, text)


def typed_value(argv: Sequence[str], flags: Sequence[str]) -> str | None:
    """The value given to one of ``flags`` on the command line (the last one wins), as typed."""
    found = None
    for i, arg in enumerate(argv):
        for flag in flags:
            if arg == flag and i + 1 < len(argv) and not argv[i + 1].startswith("--"):  # not a boolean flag
                found = argv[i + 1]
            elif arg.startswith(flag + "="):
                found = arg[len(flag) + 1:]
    return found


def _argv(ctx: Any) -> list[str]:
    """The arguments of the running command (kept by the app in the root context's ``obj``)."""
    obj = getattr(ctx.find_root(), "obj", None) if ctx is not None else None
    return list(obj.get("argv", [])) if isinstance(obj, dict) else []


def bad_input_message(exc: InvalidParameterError, overrides: dict[str, str] | None, argv: Sequence[str] = (),
                      limits: bool = True, seconds: bool = True) -> str:
    """The one line of a bad input: the flag the user typed, the value as typed, what is accepted.

    ``limits``: whether the command has ``--max-memory`` (a refusal of a computation too large
    for the memory limit names it only then); ``seconds``: the same for ``--max-seconds``."""
    flag = flag_for(exc.parameter, overrides)
    choices = ALTERNATIVES.get(exc.parameter)
    if choices and not (overrides and exc.parameter in overrides):
        given = [f for f in choices if typed_value(argv, [f]) is not None]
        if given:
            flag = given[0]
    typed = typed_value(argv, [flag]) if flag.startswith("--") and " " not in flag else None
    shown = None
    if typed is not None:  # the value as typed, and what the library found in it when that differs
        shown = shorten(typed if re.fullmatch(r"[\w.+\-/:,]+", typed) else repr(typed))
        if not _same(exc.value, typed):
            shown += f" ({show_value(exc.value)})"
    accepted = as_flags(exc.accepted, overrides)
    if isinstance(exc, ResourceLimitError):
        accepted = accepted.replace("max_memory raises it", "--max-memory raises it" if limits else
                                    "half of this machine's memory: a smaller problem, or a larger machine")
    if isinstance(exc, TimeLimitError):
        accepted = accepted.replace("max_seconds raises the limit", "--max-seconds raises the limit" if seconds else
                                    "a smaller problem")
    return InvalidParameterError(flag, exc.value, accepted).message(shown=shown)


def _same(value: Any, typed: str) -> bool:
    """Whether the library's value is the option's whole value (then the typed value says it all)."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip("'\"") == typed
    if isinstance(value, (bool, list, tuple, dict)) or not isinstance(value, (int, float)):
        return False
    try:
        return float(typed) == float(value) or (math.isnan(float(typed)) and math.isnan(float(value)))
    except (ValueError, OverflowError):
        return False


def write_failure(exc: OSError) -> str:
    """The one line of an I/O failure: what could not be written, and why, in words."""
    import errno
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return "cannot write the results: stdout was closed before they were written (broken pipe)"
    where = f" {exc.filename}" if getattr(exc, "filename", None) else " the results"
    return f"cannot write{where}: {(exc.strerror or str(exc)).lower()}"


def _has_option(ctx: Any, flag: str) -> bool:
    """Whether the running command has the option ``flag`` (True when unknown)."""
    command = getattr(ctx, "command", None)
    if command is None:
        return True
    return any(flag in getattr(p, "opts", ()) for p in command.params)


def fail(code: int, message: str) -> None:
    """Print one line on stderr and exit with ``code``."""
    error_line(message)
    raise typer.Exit(code)


#: Keyword under which typer hands the command's context to :func:`cli_errors`.
CONTEXT = "typer_context"


def cli_errors(flags: dict[str, str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Map optnoise exceptions to exit codes and one-line messages naming the user's flags.

    The wrapper asks typer for the command's context (to read the arguments as typed) and
    does not pass it on.
    """

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx = kwargs.pop(CONTEXT, None)
            try:
                return fn(*args, **kwargs)
            except InvalidParameterError as exc:
                fail(2, bad_input_message(exc, flags, _argv(ctx), _has_option(ctx, "--max-memory"),
                                          _has_option(ctx, "--max-seconds")))
            except OptnoiseError as exc:   # DesignError included
                fail(1, as_flags(str(exc), flags))
            except MemoryError:
                fail(1, "out of memory: the computation needed more memory than the machine could give "
                        "(try smaller sizes)")
            except KeyboardInterrupt:
                fail(130, "interrupted")
            except OSError as exc:
                fail(1, write_failure(exc))

        sig = inspect.signature(fn)
        extra = inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
        wrapper.__signature__ = sig.replace(parameters=[*sig.parameters.values(), extra])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**getattr(fn, "__annotations__", {}), CONTEXT: typer.Context}
        return wrapper

    return deco
