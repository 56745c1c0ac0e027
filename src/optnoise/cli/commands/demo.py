"""``optnoise demo``: the main job end to end on built-in example data."""

from pathlib import Path
from typing import Annotated

import typer

from ..app import command
from ..options import WRITES, Json, Writes
from ..render import echo_json, out


@command(WRITES)
def demo(writes: Writes,
         out_dir: Annotated[Path, typer.Option("--out", help="Directory for the demo's files.")] = Path("demo-output"),
         as_json: Json = False) -> None:
    """Run the main job end to end on built-in example data and write the results to --out."""
    from ...demo import run_demo
    summary = run_demo(out_dir, console=None if as_json else out, force=writes.force)
    if as_json:
        echo_json(summary)
