"""``optnoise release``: privatize a column of a CSV or Parquet file."""

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..app import command
from ..inputs import releasable
from ..options import NEIGHBOURHOOD, TARGET, Json, NeighbourhoodArgs, Seed, TargetArgs
from ..render import echo_json, err, fmt, out, warn_seed


@command(NEIGHBOURHOOD, TARGET, flags={"path": "--mechanism"})
def release(
    nb: NeighbourhoodArgs,
    target: TargetArgs,
    input_path: Annotated[Path, typer.Option("--input", help="CSV or Parquet file.")],
    column: Annotated[str, typer.Option("--column", help="The column to privatize.")],
    output: Annotated[Path, typer.Option(
        "--output", help="Output .csv or .parquet (only the privatized column); PATH.manifest.json beside it.")],
    mechanism: Annotated[Optional[Path], typer.Option(
        "--mechanism", help="A mechanism file (any kind) or a plain PMF file.")] = None,
    family: Annotated[Optional[str], typer.Option("--family", help="Or a built-in family NAME:PARAMS.")] = None,
    categories: Annotated[Optional[str], typer.Option(
        "--categories", help="Categorical column: the n+1 categories in domain order, comma-separated.")] = None,
    lower: Annotated[int, typer.Option(
        "--lower", help="Numeric column: values lower..lower+n map to 0..n (default 0).")] = 0,
    engine: Annotated[str, typer.Option(
        "--engine", help="local, or spark (pyspark; the output is a dataset directory).")] = "local",
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Privatize a column of a CSV/Parquet file with a certified mechanism: atomic output + manifest."""
    from ...table import release as do_release
    mech = releasable(mechanism, family, nb, target)
    cats = [c.strip() for c in categories.split(",")] if categories is not None else None
    with err.status("releasing...", spinner="dots") if not as_json else nullcontext():
        manifest = do_release(input_path, column, mech, output, categories=cats, lower=lower, engine=engine, seed=seed,
                              mechanism_file=mechanism)
    warn_seed(seed, as_json)  # once nothing can fail: a failure prints its one line only
    if as_json:
        echo_json(manifest)
        return
    c = manifest["certificate"]
    out.print(f"released {manifest['input']['rows']} values of '{column}' into {output} "
              f"(+ {output}.manifest.json); certified pure eps {fmt(c['epsilon_pure'])}"
              + (f", delta_DP {fmt(c['delta_dp'])} at eps {c['epsilon']:g}" if c.get("epsilon") else "")
              + f"; randomness: {manifest['randomness']['source']}")
