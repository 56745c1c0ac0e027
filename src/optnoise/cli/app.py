"""The typer application, ``--version``, the last-resort handler and the entry point.

Every way a command line can go wrong ends in one line on stderr and an exit code
(docs/cli.md): usage errors that typer/click detect while parsing (unknown option,
missing option, a value of the wrong type) exit 2 naming the flag and echoing the value;
library errors are mapped by :mod:`.errors`; anything unexpected exits 1 with one line
(``--debug`` anywhere on the command line shows the traceback instead); Ctrl-C exits 130.
"""

import inspect
import os
import sys
import traceback
import warnings
from typing import Any, Callable, Sequence

import typer
from typer.core import TyperGroup

from ..version import __version__
from ..errors import one_line, shorten
from .coercion import plain_coercion
from .errors import cli_errors, typed_value, write_failure
from .options import Group, with_groups
from .render import error_line, escape, out

#: Words for an option's Python type in "accepted: ...".
_TYPE_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "Path": "a path",
               "str": "a text value"}


def _usage_message(exc: Any, argv: Sequence[str]) -> str:
    """One line for a typer/click usage error: what was wrong, the value as typed, what is accepted."""
    kind = type(exc).__name__
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path.replace(ctx.find_root().info_name or "", "optnoise", 1) if ctx else "optnoise"
    param = getattr(exc, "param", None)
    opts = list(getattr(param, "opts", []) or [])
    flag = opts[0] if opts else (getattr(param, "human_readable_name", None) or "")
    help_text = one_line(getattr(param, "help", None) or "")
    if kind == "NoSuchOption":
        name = getattr(exc, "option_name", "?")
        maybe = sorted(getattr(exc, "possibilities", None) or [])
        hint = f"did you mean {' or '.join(maybe[:3])}? " if maybe else ""
        return (f"unknown option {shorten(repr(name))} for '{command}'; {hint}accepted: the options in "
                f"'{command} --help'")
    if kind == "MissingParameter":
        what = flag or "an argument"
        return f"missing {what} for '{command}'; accepted: {help_text or 'see ' + repr(command + ' --help')}"
    if kind == "BadParameter" and param is not None:
        typed = typed_value(argv, opts) if opts else None
        shown = shorten(repr(typed)) if typed is not None else "(as typed)"
        bare = getattr(param, "bare_type", None)
        words = _TYPE_WORDS.get(str(bare() if callable(bare) else ""), "a valid value")
        return f"invalid {flag}: {shown}; accepted: {words}" + (f" ({help_text})" if help_text else "")
    if kind == "BadOptionUsage":
        name = getattr(exc, "option_name", "") or flag
        return f"{name} needs a value; accepted: {name} VALUE (see '{command} --help')"
    text = one_line(exc.format_message() if hasattr(exc, "format_message") else str(exc))
    if text.startswith("No such command"):
        names = ", ".join(sorted(getattr(ctx.command, "commands", {}))) if ctx else ""
        return f"unknown command {shorten(text.split(' ', 3)[-1].rstrip('.'))}; accepted: one of {names}"
    if text.startswith("Got unexpected extra argument"):
        extra = text.rsplit("(", 1)[-1].rstrip(")")
        return f"unexpected argument(s) {shorten(repr(extra))} for '{command}'; accepted: the options in " \
               f"'{command} --help'"
    return f"{text} (see '{command} --help')"


def _flushed(code: int) -> int:
    """Flush stdout: a result that could not be written (a full disk, a closed pipe) is a failure
    (exit 1, one line), never a silent success. Afterwards stdout points at /dev/null, so the
    interpreter's own flush at exit cannot print a second message."""
    try:
        sys.stdout.flush()
        return code
    except OSError as exc:
        if code == 0:
            error_line(write_failure(exc))
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1 if code == 0 else code


class OptnoiseGroup(TyperGroup):
    """The root command: parses in non-standalone mode and answers every outcome itself."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        debug = "--debug" in argv
        argv = [a for a in argv if a != "--debug"]
        if sys.stdout is None:  # started with stdout closed (``>&-``): every result would be lost
            error_line("stdout is closed: optnoise prints its results there (redirect it to a file or /dev/null "
                       "instead); nothing was done")
            return self._exit(1, standalone_mode)
        try:
            with warnings.catch_warnings():  # library warnings (numpy, the solvers) would break the one-line rule
                if not debug:
                    warnings.simplefilter("ignore")
                code = self._run(argv, prog_name, complete_var, extra)
        except KeyboardInterrupt:
            error_line("interrupted")
            code = 130
        except Exception as exc:  # the last resort: one line, exit 1 (the traceback only with --debug)
            if debug:
                traceback.print_exc()
            else:
                error_line(f"unexpected failure: {type(exc).__name__}: {shorten(one_line(exc), 300)} "
                           "(rerun with --debug for the traceback)")
            code = 1
        return self._exit(_flushed(code), standalone_mode)

    def get_help_option(self, ctx: Any) -> Any:
        """The root's ``--help``, coerced as the flag it is (:mod:`.coercion`)."""
        option = super().get_help_option(ctx)
        if option is not None:
            plain_coercion([option])
        return option

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """A command whose plain options skip pydantic (:mod:`.coercion`: start-up)."""
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:  # its own ``--help`` included (cached by the command)
            plain_coercion(cmd.get_params(ctx))
        return cmd

    @staticmethod
    def _exit(code: int, standalone_mode: bool) -> int:
        if not standalone_mode:
            return code
        sys.exit(code)

    def _run(self, argv: list[str], prog_name: str | None, complete_var: str | None, extra: dict) -> int:
        if not argv:
            out.print(self.get_help(self.make_context(prog_name or "optnoise", ["--help"], resilient_parsing=True)),
                      highlight=False)
            return 0
        extra.setdefault("obj", {"argv": argv})
        try:
            rv = super().main(argv, prog_name or "optnoise", complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            error_line("aborted")
            return 1
        except typer.TyperException as exc:  # click's usage errors (ClickException) derive from it
            error_line(_usage_message(exc, argv))
            return int(getattr(exc, "exit_code", 2))
        return rv if isinstance(rv, int) else 0


app = typer.Typer(
    cls=OptnoiseGroup,
    name="optnoise",
    help=("Optimal noise for differential privacy on discrete query answers (counts, hours, "
          "categories): design it, verify exactly what a mechanism guarantees, compare, release."),
    no_args_is_help=False,
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
        wrapped = cli_errors(flags)(with_groups(*groups)(fn) if groups else fn)
        _plain_help(wrapped)
        return app.command()(wrapped)

    return deco


def _plain_help(fn: Callable[..., Any]) -> None:
    """Options' help is plain text, not rich markup: ``pmf[i]`` and ``P[q, y]`` print as written."""
    for param in inspect.signature(fn).parameters.values():
        for info in getattr(param.annotation, "__metadata__", ()):
            help_text = getattr(info, "help", None)
            if isinstance(help_text, str) and not getattr(info, "_plain", False):
                info.help = escape(help_text)
                info._plain = True  # shared declarations (--json, --plot) are escaped once


def main() -> None:
    """Console-script entry point: the root command answers every outcome (:class:`OptnoiseGroup`)."""
    app()
