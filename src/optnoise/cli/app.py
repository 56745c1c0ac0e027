"""The typer application, ``--version``, and the console-script entry point."""

import sys

import typer

from .. import __version__
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
