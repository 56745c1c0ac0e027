"""The typer application, ``--version``, and the console-script entry point."""

import sys
from typing import Any, Callable

import typer

from .. import __version__
from .errors import cli_errors
from .options import Group, with_groups
from .render import err

app = typer.Typer(
    name="optnoise",
    help=("Optimal noise for differential privacy on discrete query answers (counts, hours, "
          "categories): design it, verify exactly what a mechanism guarantees, compare, release."),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"optnoise {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """optnoise: optimal noise mechanisms for differential privacy."""


def command(*groups: Group, flags: dict[str, str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a command: its option groups (:func:`~.options.with_groups`), the mapping of
    library errors to exit codes and flags (:func:`~.errors.cli_errors`), and typer."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        return app.command()(cli_errors(flags)(with_groups(*groups)(fn) if groups else fn))

    return deco


def main() -> None:
    """Console-script entry point: exit 130 with one line on Ctrl-C, never a traceback."""
    debug = "--debug" in sys.argv[1:]
    if debug:
        sys.argv.remove("--debug")
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # the last resort: one line, exit 1 (tracebacks only with --debug)
        if debug:
            raise
        err.print(f"[bold red]error:[/] unexpected failure: {type(exc).__name__}: {exc}", highlight=False,
                  soft_wrap=True)
        sys.exit(1)
