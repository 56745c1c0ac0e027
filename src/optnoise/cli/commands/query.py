"""``optnoise query``: statistics of a table (counts, histograms, sums, peaks, modes) with
optimal certified noise, per person, under one budget (docs/statistics.md)."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..options import WRITES, Json, Seed, Writes
from ..render import out, say, warn_seed


@command(WRITES, flags={"spec": "--spec", "output": "--output", "csv": "--csv", "engine": "--engine"})
def query(
    writes: Writes,
    input_path: Annotated[Path, typer.Option("--input", help="CSV or Parquet file, one row per record.")],
    spec: Annotated[Path, typer.Option("--spec", help="TOML spec: unit, budget, alpha, statistics "
                                                      "(docs/statistics.md).")],
    output: Annotated[Optional[Path], typer.Option("--output", help="Write the document (JSON) here.")] = None,
    csv: Annotated[Optional[Path], typer.Option("--csv", help="Also write the released values as a CSV table.")] = None,
    engine: Annotated[str, typer.Option("--engine", help="local (streamed with pyarrow) or spark (bounding and group-by on Spark; noise on the driver).")] = "local",
    spark_master: Annotated[Optional[str], typer.Option(
        "--spark-master", help="With --engine spark: the master URL (default: the Spark configuration's, else local).")] = None,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Release statistics of a table with optimal, certified noise per person (unit), under one budget."""
    from ...query.files import query_file
    from ...query.spec import load_query_spec
    try:
        parsed = load_query_spec(spec)
    except InvalidParameterError as exc:
        raise exc.renamed("--spec" if exc.parameter == "spec" else f"--spec ({exc.parameter})") from exc
    try:
        doc = query_file(input_path, parsed, output, csv=csv, engine=engine, seed=seed, force=writes.force,
                         spark_master=spark_master, spec_file=spec)
    except InvalidParameterError as exc:
        p = exc.parameter
        flag = p if p.startswith("--") else "--spec" if p == "spec" else f"--spec ({p})"
        raise exc.renamed({"input": "--input", "output": "--output", "csv": "--csv", "engine": "--engine"}.get(p, flag)) \
            from exc
    warn_seed(seed, as_json)
    if as_json:
        from ...io import dumps
        typer.echo(dumps(doc))
        return
    _render(doc, output)


def _render(doc: dict, output: Optional[Path]) -> None:
    from rich.markup import escape
    from rich.table import Table
    table = Table(title=escape(f"{len(doc['statistics'])} statistics of {doc['input']['rows']} rows, "
                               f"{doc['bounding']['units']} units" + (f" -> {output}" if output else "")))
    for name in ("statistic", "released", f"{1 - doc['alpha']:g} interval", "E|error|", "mechanism"):
        table.add_column(name)
    for name, s in doc["statistics"].items():
        value = s.get("value", s.get("values"))
        iv = s.get("interval", s.get("intervals"))
        err = s.get("expected_abs_error")
        table.add_row(*(escape(c) for c in (f"{name} ({s['kind']})", _short(value), _short(iv),
                                            "" if err is None else f"{err:.4g}", s["mechanism"]["name"])))
    out.print(table)
    say(doc["statement"])
    say(f"randomness: {doc['randomness']['source']}")


def _short(value: object, width: int = 70) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."
