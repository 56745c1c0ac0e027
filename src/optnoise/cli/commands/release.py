"""``optnoise release``: privatize a table's columns (a spec) or one column (the shortcut)."""

import threading
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..errors import flag_for
from ..inputs import neighbourhood, releasable
from ..inputs import target as target_of
from ..options import Audit, LedgerPath, NEIGHBOURHOOD, SECONDS, TARGET, WRITES, Json, NeighbourhoodArgs, Seed, TargetArgs, Writes
from ..render import err, fmt, out, say, warn_seed

#: Seconds of work before the progress bar appears.
PROGRESS_AFTER = 2.0
#: A column key of the shortcut -> the flag that set it.
SHORTCUT_FLAGS = {"domain": "--lower/--upper", "distances": "--distances/--sd/--bd", "notion": "--guarantee"}


@command(NEIGHBOURHOOD, TARGET, SECONDS, WRITES, flags={"path": "--mechanism", "columns": "--column", "spec": "--spec",
                                                         "audit": "--audit", "ledger": "--ledger"})
def release(
    nb: NeighbourhoodArgs,
    target: TargetArgs,
    max_seconds: Optional[float],
    writes: Writes,
    input_path: Annotated[Path, typer.Option("--input", help="CSV or Parquet file, one record per row.")],
    output: Annotated[Path, typer.Option(
        "--output", help="Output .csv or .parquet (privatized and --keep columns); PATH.manifest.json beside it.")],
    spec: Annotated[Optional[Path], typer.Option(
        "--spec", help="TOML spec: the columns to privatize, keep, unit, budget (docs/release.md).")] = None,
    column: Annotated[Optional[str], typer.Option("--column", help="Shortcut: the one column to privatize.")] = None,
    mechanism: Annotated[Optional[Path], typer.Option(
        "--mechanism", help="Shortcut: a mechanism file (any kind) or a plain PMF file.")] = None,
    family: Annotated[Optional[str], typer.Option("--family", help="Shortcut: or a built-in family NAME:PARAMS.")] = None,
    categories: Annotated[Optional[str], typer.Option(
        "--categories", help="Shortcut, categorical column: the n+1 categories in domain order, comma-separated.")] = None,
    lower: Annotated[Optional[int], typer.Option(
        "--lower", help="Shortcut, numeric column: values lower..lower+n map to 0..n (default 0).")] = None,
    upper: Annotated[Optional[int], typer.Option(
        "--upper", help="Shortcut, integer-line noise: the column's largest value (with --lower; needed per record).")] = None,
    clamp: Annotated[bool, typer.Option(
        "--clamp", help="Shortcut, integer-line noise: clamp the output to lower..upper (post-processing).")] = False,
    keep: Annotated[Optional[str], typer.Option(
        "--keep", help="Columns copied unchanged (NOT protected), comma-separated.")] = None,
    unit: Annotated[Optional[str], typer.Option(
        "--unit", help="record (default: any value of a record may change) or value (the mechanism's distances).")] = None,
    budget: Annotated[Optional[str], typer.Option(
        "--budget", help="EPS[,DELTA]: refuse a release whose record total exceeds it.")] = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="local, or spark (pyspark; the output is a dataset directory).")] = "local",
    spark_master: Annotated[Optional[str], typer.Option(
        "--spark-master", help="With --engine spark: the master URL (default: the Spark configuration's, else local).")] = None,
    audit: Audit = None, ledger: LedgerPath = None,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Privatize a table (--spec) or one column (--column) with certified mechanisms, per record by default."""
    from ...table import release_column, release_file
    from ...publish.spec import parse_budget

    if (spec is None) == (column is None):
        raise InvalidParameterError("--spec/--column", "both" if spec else "none", "exactly one of --spec FILE.toml "
                                                                                   "or --column NAME")
    shortcut = {"--mechanism": mechanism, "--family": family, "--categories": categories, "--lower": lower,
                "--upper": upper, "--clamp": clamp or None, "--epsilon/--delta/--guarantee": target.given or None,
                "--distances/--sd/--bd/--directed": nb.given or None}
    if spec is not None and any(v is not None for v in shortcut.values()):
        flag = next(k for k, v in shortcut.items() if v is not None)
        raise InvalidParameterError(flag, "given with --spec", "the column's keys in the spec file")
    if nb.given and unit != "value":
        raise InvalidParameterError("--distances/--sd/--bd/--directed", "given", "only with --unit value (per record "
                                                                                 "every distance is protected)")
    kept = tuple(c.strip() for c in keep.split(",") if c.strip()) if keep is not None else None
    goal = parse_budget(budget, parameter="--budget") if budget is not None else None
    rendered: list[str] = []   # what will be printed, made before the release is moved into place

    def render(manifest: dict) -> None:
        rendered.append(_text(manifest, output, as_json))

    options = {"engine": engine, "seed": seed, "force": writes.force, "spark_master": spark_master,
               "before_commit": render, "max_seconds": max_seconds, "audit": audit, "ledger": ledger}
    bar = _Progress(enabled=not as_json and err.is_terminal)
    try:
        with bar:
            if spec is not None:
                table = _spec_file(spec).replace(keep=kept, budget=goal, unit=unit)
                manifest = release_file(input_path, output, table, spec_file=spec, progress=bar, **options)
            else:
                mech, bare = _shortcut(mechanism, family, nb, target)
                cats = [c.strip() for c in categories.split(",")] if categories is not None else None
                manifest = release_column(input_path, column, mech, output, categories=cats, lower=lower, upper=upper,
                                          clamp=clamp, unit=unit or "record", keep=kept or (), budget=goal,
                                          mechanism_file=mechanism, progress=bar, target=target_of(target) if bare
                                          else None, neighbourhood=neighbourhood(nb) if bare and nb.given else None,
                                          **options)
    except InvalidParameterError as exc:
        raise exc.renamed(_flag(exc.parameter, spec is not None, family is not None, budget is not None)) from exc
    warn_seed(seed, as_json)  # once nothing can fail: a failure prints its one line only
    typer.echo(rendered[0], nl=False)


def _shortcut(mechanism: Optional[Path], family: Optional[str], nb: NeighbourhoodArgs, target: TargetArgs):
    """The shortcut's mechanism and whether optnoise builds it for the unit (``bare``): a target
    alone is designed as a spec's column with only epsilon, a family name alone calibrated."""
    if mechanism is None and family is None and target.given:
        return None, True
    if family is not None and mechanism is None and ":" not in family:
        return family.strip(), True
    return releasable(mechanism, family, nb, target), False


def _spec_file(path: Path):
    """The spec file, its errors naming the key they are about: ``--spec (columns.hour.epsilon)``."""
    from ...table import load_spec
    try:
        return load_spec(path)
    except InvalidParameterError as exc:
        raise exc.renamed("--spec" if exc.parameter == "spec" else f"--spec ({exc.parameter})") from exc


def _flag(parameter: str, spec_mode: bool, family: bool, budget_flag: bool = False) -> str:
    """The flag (or spec key) a library parameter of ``release`` came from."""
    if parameter.startswith("--"):
        return parameter
    if spec_mode and not budget_flag and parameter.split(".")[0] == "budget":
        return f"--spec ({parameter})"   # the spec's own budget (--budget replaces it when given)
    if parameter.startswith("columns."):
        if spec_mode:
            return f"--spec ({parameter})"
        key = parameter.split(".", 2)[-1]
        if key == "mechanism":
            return "--family" if family else "--mechanism"
        return SHORTCUT_FLAGS.get(key, flag_for(key))
    if parameter == "columns":
        return "--spec" if spec_mode else "--column"
    return parameter


def _text(manifest: dict, output: Path, as_json: bool) -> str:
    """Everything the command prints, as text (the JSON object, or the tables and lines)."""
    if as_json:
        from ...io import dumps
        return dumps(manifest) + "\n"
    with out.capture() as captured:
        _render(manifest, output)
    return captured.get()


def _render(manifest: dict, output: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ...table import words
    unit = manifest["unit"]
    seeded = manifest.get("private") is False
    table = Table(title=escape(f"released {manifest['input']['rows']} records into {output} (+ {output}.manifest.json)"))
    for name in ("column", "mechanism", "output", "certificate" if seeded else f"certificate (per {unit['kind']})"):
        table.add_column(name)
    for name, col in manifest["columns"].items():
        c = col.get("certificate")
        cert = "none: the release is seeded (not private)" if c is None else f"pure eps {fmt(c['epsilon_pure'])}" + (
            f"; delta_DP {fmt(c['delta_dp'])} at eps {c['epsilon']:g}" if c.get("epsilon") and c.get("delta_dp") else "")
        table.add_row(*(escape(cell) for cell in (name, f"{col['mechanism']['name']} ({col['mechanism']['built']})",
                                                  col["output"], cert)))
    for name in manifest["kept"]["columns"]:
        table.add_row(escape(name), "kept: copied unchanged", "", "NOT protected")
    out.print(table)
    if seeded:
        say(words(manifest))
    else:
        say(f"protected: {unit['protects']}")
        say(f"not protected: {unit['not_protected']}")
        say(f"total for {words(manifest)}")
    say(f"randomness: {manifest['randomness']['source']}")


class _Progress:
    """A progress bar on stderr, shown only once the work has taken ``PROGRESS_AFTER`` seconds.

    Called as ``progress(fraction, rows)`` by the local engine after each batch; before the
    first batch (certifying the columns, composing the total), and on Spark, it shows an
    indeterminate bar.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._progress = None
        self._task = None
        self._timer: threading.Timer | None = None
        self._state: tuple[float | None, int] = (None, 0)

    def __enter__(self) -> "_Progress":
        if self.enabled:
            self._started = time.monotonic()
            self._timer = threading.Timer(PROGRESS_AFTER, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        with self._lock:
            if self._timer is None:
                return
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                                      console=err, transient=True)
            self._progress.start()
            self._task = self._progress.add_task("certifying and releasing", total=None)
            self._update()

    def _update(self) -> None:
        fraction, rows = self._state
        if self._progress is not None and fraction is not None:
            self._progress.update(self._task, total=1.0, completed=fraction,  # type: ignore[arg-type]
                                  description=f"released {rows:,} rows")

    def __call__(self, fraction: float | None, rows: int) -> None:
        with self._lock:
            self._state = (fraction, rows)
            self._update()

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._progress is not None:
                self._progress.stop()
                self._progress = None
