"""``optnoise reproduce``: regenerate the papers' tables and figures."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..options import WRITES, Json, Writes
from ..render import err, out, say
from .shared import deliver


@command(WRITES)
def reproduce(
    writes: Writes,
    item_id: Annotated[Optional[str], typer.Argument(metavar="ID", help="Item to regenerate (see --list).")] = None,
    list_items: Annotated[bool, typer.Option("--list", help="List the reproducible tables and figures.")] = False,
    run_all: Annotated[bool, typer.Option("--all", help="Regenerate every item.")] = False,
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the CSV and PNG files.")] = Path("reproduction"),
    as_json: Json = False,
) -> None:
    """Regenerate a paper's table or figure (CSV + PNG); verdicts are in docs/reproduction.md.

    Example: optnoise reproduce kadam-table1 --out reproduction
    """
    from rich.progress import Progress

    from ... import reproduce as rep
    chosen = sum([list_items, run_all, item_id is not None])
    if chosen != 1:
        raise InvalidParameterError("ID/--list/--all", "none" if chosen == 0 else "several", "exactly one of them")
    if list_items:
        deliver({"items": [it.to_json() for it in rep.items()]}, as_json=as_json, render=_print_list)
        return
    ids = [it.id for it in rep.items()] if run_all else [item_id]
    rep.check_items(ids, out_dir, force=writes.force)  # type: ignore[arg-type]  # before any item runs
    results = []
    with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("reproducing", total=len(ids))
        for i in ids:
            progress.update(task, description=f"reproducing {i}")
            results.append(rep.run(i, out_dir, force=writes.force))  # type: ignore[arg-type]
            progress.advance(task)
    deliver({"out": str(out_dir), "results": results}, as_json=as_json, render=_print_results)


def _print_list(p: dict) -> None:
    from rich.markup import escape
    from rich.table import Table
    table = Table(title="optnoise reproduce --list")
    for col in ("id", "paper", "what"):
        table.add_column(col)
    for it in p["items"]:
        table.add_row(*(escape(it[k]) for k in ("id", "paper", "what")))
    out.print(table)


def _print_results(p: dict) -> None:
    for r in p["results"]:
        files = ", ".join(str(Path(p["out"]) / f) for f in r.get("files", []))
        say((r["id"], "bold"), f" ({r['paper']}): {r['what']}\n  wrote {files}")
