"""Rendering: the two consoles, number formatting, JSON on stdout, simple tables.

Text that holds user data (names, paths, categories) or math (``P[q, q]``) is never read as
rich markup: it is printed with :func:`say` (plain text, styles given as styles) or, in a
table, passed through :func:`escape` (``rich.markup.escape``).

rich is imported when something is first printed through it: a command whose only output
is ``--json`` (typer.echo) never imports it (20-25 ms, start-up: issue 37).
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text


class LazyConsole:
    """A ``rich.console.Console`` made with ``options`` when one of its attributes is first read."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if name in ("options", "console"):
            raise AttributeError(name)
        if self.console is None:
            from rich.console import Console
            self.console = Console(**self.options)
        return getattr(self.console, name)


out = LazyConsole()
#: Messages on stderr never wrap: the contract's failures are one line each.
err = LazyConsole(stderr=True, soft_wrap=True)


#: What rich reads as a markup tag (``rich.markup.escape``'s pattern): ``[`` then a letter,
#: ``#``, ``/`` or ``@``, up to the next ``]``, with the backslashes before it.
MARKUP_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def escape(text: str) -> str:
    """``text`` printed as written by rich: what ``rich.markup.escape`` returns (a backslash
    before every tag, the backslashes before it doubled; a trailing backslash doubled), without
    importing rich when only help texts are prepared (``app._plain_help`` runs at every start;
    ``tests/test_cli.py`` checks the two agree)."""
    escaped = MARKUP_TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)
    return escaped + "\\" if escaped.endswith("\\") and not escaped.endswith("\\\\") else escaped


def error_line(message: str) -> None:
    """The one line of a failure on stderr: ``error: MESSAGE`` (the message's text is shown
    as is, never read as markup)."""
    from ..errors import one_line
    err.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line of plain text with styled parts: ``styled(("optimal noise", "bold"), ": eps=1")``
    (nothing in the text is read as markup)."""
    from rich.text import Text
    return Text.assemble(*parts)


def say(*parts: str | tuple[str, str]) -> None:
    """Print one line of plain text on stdout (``P[q, q]`` and a path like ``[x].csv`` print as
    written); ``(text, style)`` parts are styled: ``say(("method lp", "dim"))``."""
    out.print(styled(*parts))


def fmt(x: Any) -> str:
    """A number for a human table: 6 significant digits, ``inf``, ``-`` for none."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, float)):
        return f"{x:.6g}"
    return str(x)


def echo_json(payload: dict) -> None:
    """Exactly one JSON object on stdout (docs/cli.md)."""
    from ..io import dumps
    typer.echo(dumps(payload))


def key_value_table(title: str, rows: Iterable[tuple[str, Any]], *, meanings: dict[str, str] | None = None) -> None:
    """A two- (or three-) column table of quantities."""
    from rich.table import Table
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    if meanings is not None:
        table.add_column("meaning")
    for key, value in rows:
        cells = [key, fmt(value)] + ([meanings.get(key, "")] if meanings is not None else [])
        table.add_row(*(escape(c) for c in cells))
    out.print(table)


#: Short names of the mechanisms in narrow tables (explained in a legend under the table).
SHORT_NAMES = {"discrete-gaussian": "d-gauss", "exponential": "expon", "optimal-channel": "opt-chan",
               "optimal-modulo-noise": "opt-mod", "clamped-geometric": "cl-geom",
               "clamped-discrete-gaussian": "cl-dgauss", "randomized-response": "rr"}
#: What each short name stands for (the legend).
SHORT_MEANINGS = {"d-gauss": "discrete Gaussian", "expon": "exponential mechanism",
                  "opt-chan": "optimal channel", "opt-mod": "optimal noise mod n+1",
                  "cl-geom": "clamped geometric", "cl-dgauss": "clamped discrete Gaussian",
                  "rr": "randomized response"}


def short_name(name: str) -> str:
    """A mechanism's name for a narrow table (:data:`SHORT_NAMES`; others as they are)."""
    return SHORT_NAMES.get(name, name)


def legend(names: Iterable[str]) -> str | None:
    """The note that explains the short names used for ``names`` (``None`` when none is short)."""
    used = dict.fromkeys(short_name(n) for n in names if short_name(n) != n)
    if not used:
        return None
    return "mechanisms: " + "; ".join(f"{s} = {SHORT_MEANINGS.get(s, s)}" for s in used)


def narrow_table(title: str) -> Table:
    """A table that stays readable at 80 columns: no vertical rules (two characters a column
    less), cells folded (never cut with an ellipsis, so two rows never read the same). Add
    columns with :func:`column`."""
    from rich import box
    from rich.table import Table
    return Table(title=escape(title), box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, title_justify="left")


def column(table: Table, head: str, *, left: bool = False, cells: Iterable[str] = ()) -> None:
    """A column of a :func:`narrow_table`: right-aligned numbers (``left`` for names), folded;
    ``cells``: its values, kept whole (the column is as wide as the longest value or header
    word, up to 16 characters: the header folds between its words)."""
    widest = max([len(c) for c in cells] + [len(w) for w in head.split()], default=0)
    width = min(widest, 16) or None   # exactly: rich would otherwise widen headers and crop the last column
    table.add_column(escape(head), justify="left" if left else "right", overflow="fold", min_width=width,
                     max_width=width)


def notes(lines: Iterable[str]) -> None:
    """Dim bullet notes under a table."""
    for line in lines:
        say((f"- {line}", "dim"))


#: Without a terminal, a long step says it is still working this often (seconds).
HEARTBEAT_SECONDS = 5.0


@contextmanager
def heartbeat(what: str, every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """While the block runs, without a terminal (a log, a CI job), a line on stderr every
    ``every`` seconds: a long run (365 releases, a large compare) is never silent. On a
    terminal nothing (the command shows its own spinner)."""
    if err.is_terminal:
        yield
        return
    import threading
    import time
    stop, start = threading.Event(), time.monotonic()

    def beat() -> None:
        while not stop.wait(every):
            err.print(f"{what}: still working ({time.monotonic() - start:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1.0)


def warn(line: str) -> None:
    """One warning line on stderr (plain text: it may hold names from the user's spec)."""
    err.print(styled(("warning: ", "bold yellow"), line))


def warn_seed(seed: int | None, as_json: bool) -> None:
    """A seeded generator is reproducible and NOT private: say so on stderr."""
    if seed is not None and not as_json:
        from ..seeded import NOT_PRIVATE
        err.print(f"[bold yellow]warning:[/] --seed given: {escape(NOT_PRIVATE)} (output marked \"private\": false; "
                  "its certificates are under \"only_if_unseeded\")")
