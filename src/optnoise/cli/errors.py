"""Exit codes and one-line messages: library errors become the contract's answers.

Library errors name Python parameters; :func:`cli_errors` maps them, once, to the flag
the user typed (a command may override the mapping, e.g. ``path`` is ``--mechanism`` in
``sample``) and exits 2 (bad input) or 1 (other failures).
"""

import functools
from typing import Any, Callable

import typer

from ..errors import DesignError, InvalidParameterError, OptnoiseError
from .render import err

#: Python parameter -> flag, where the flag is not ``--`` + the name with ``-`` for ``_``.
FLAGS: dict[str, str] = {
    "notion": "--guarantee", "k": "--compose", "half_width": "--window", "x": "--input",
    "neighbourhood": "--distances", "path": "--pmf-file", "spec": "--family", "target": "--epsilon",
}


def flag_for(parameter: str, overrides: dict[str, str] | None = None) -> str:
    """The command-line flag of a library parameter."""
    if parameter.startswith("--") or "/" in parameter or parameter.isupper():
        return parameter
    if overrides and parameter in overrides:
        return overrides[parameter]
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def fail(code: int, message: str) -> None:
    """Print one line on stderr and exit with ``code``."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def cli_errors(flags: dict[str, str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Map optnoise exceptions to exit codes and one-line messages naming the user's flags."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except InvalidParameterError as exc:
                fail(2, exc.message(flag_for(exc.parameter, flags)))
            except (DesignError, OptnoiseError) as exc:
                fail(1, str(exc))
            except OSError as exc:
                fail(1, f"I/O error: {exc}")

        return wrapper

    return deco
