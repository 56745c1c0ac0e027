"""Release a table: each record's values privatized with certified mechanisms, under one budget.

* :func:`release` -- a pandas DataFrame and a spec (the TOML structure as a dict) in,
  ``(released_frame, manifest)`` out;
* :func:`release_file` -- a CSV or Parquet file streamed batch by batch into a new file
  with ``PATH.manifest.json`` beside it (``engine="spark"``: on Spark, :mod:`.spark`);
* :func:`release_column` -- the single-column shortcut of ``optnoise release``.

The privacy unit is the record by default (:mod:`.plan`): every column's mechanism is
certified for a change of the record's value to any value of its domain, and the
manifest gives each column's exact certificate and the record's total (basic and PLD
composition). Values are validated batch by batch (:mod:`.domain`): a bad or missing
value stops the release naming its data row. Missing values are not dropped or imputed:
that is a decision about the data that changes what is private (docs/release.md).

Output and manifest are written to temporary files beside their targets and renamed when
complete: a failure at any step leaves nothing behind; an existing output is replaced
only with ``force``, and never when it is a file that is read (:mod:`.files`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..errors import InvalidParameterError
from ..io import atomic_path, check_output, dumps, write_text_atomic
from ..mechanism import Mechanism
from ..publish.document import input_info as input_record
from ..publish.document import split_audit
from ..publish.files import Progress, column_names, file_format, file_record, input_schema, read_batches
from ..randomness import RandomSource, random_source
from ..seeded import warn_not_private
from ..target import Target
from .batches import output_schema, privatize_batch
from .domain import Domain
from .files import BatchWriter, check_destination, driver_output, files_sha256, select_columns
from .manifest import build_manifest, record_subject, words
from .plan import ACCOUNTANT, ColumnPlan, plan_column, plan_key, record_parts
from .spec import ColumnSpec, TableSpec, column_spec, load_spec, parse_table_spec

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

ENGINES = ("local", "spark")


@dataclass(frozen=True, eq=False)
class Prepared:
    """A spec whose columns are planned and certified under its unit, with the record's total."""

    spec: TableSpec
    plans: tuple[ColumnPlan, ...]
    total: dict

    @property
    def by_name(self) -> dict[str, ColumnPlan]:
        return {p.name: p for p in self.plans}


def prepare(spec: TableSpec | Mapping[str, Any], *, max_seconds: float | None = None) -> Prepared:
    """Plan and certify every column, compose the record's total, check the budget.

    ``max_seconds``: the time a column's design or certificate may be estimated to take
    (``None``: :data:`optnoise.resources.DEFAULT_SECONDS`); beyond it the column is refused
    before it starts (:class:`~optnoise.errors.TimeLimitError`, naming the estimate).

    Raises
    ------
    InvalidParameterError
        A column whose mechanism misses its target under the unit, or a total above the
        budget.
    """
    table = spec if isinstance(spec, TableSpec) else parse_table_spec(spec)
    plans = _plans(table.columns, table.unit, max_seconds)
    # the record's accountant (optnoise.publish.accountant): a budget in attack terms is checked on the
    # exact composition of the columns' sampled weights, else the readout is the manifest's
    total = ACCOUNTANT.total(record_parts(list(plans)), table.budget, record_subject(list(plans)), attack=False)
    return Prepared(table, plans, total)


def _plans(columns: tuple[ColumnSpec, ...], unit: str, max_seconds: float | None = None) -> tuple[ColumnPlan, ...]:
    """Every column's plan; columns that share a mechanism, unit and target (the same
    :func:`~optnoise.table.plan.plan_key`) share one plan, certified once, under their own names."""
    done: dict[tuple, ColumnPlan] = {}
    out = []
    for col in columns:
        key = plan_key(col, unit)
        if key is not None and key in done:
            out.append(dataclasses.replace(done[key], name=col.name))
            continue
        plan = _plan(col, unit, max_seconds)
        if key is not None:
            done[key] = plan
        out.append(plan)
    return tuple(out)


def _plan(col: ColumnSpec, unit: str, max_seconds: float | None = None) -> ColumnPlan:
    """Plan one column; its errors name the key path ``columns.NAME.KEY`` (the unit's refusal
    names ``unit``)."""
    try:
        return plan_column(col, unit, max_seconds=max_seconds)
    except InvalidParameterError as exc:
        if exc.parameter in ("p", "q"):   # the exact engine's limit on the weights of one pair
            raise InvalidParameterError(f"columns.{col.name}.mechanism", f"column '{col.name}': {exc.value}",
                                        f"a mechanism whose exact certificate under the {unit} unit fits the exact "
                                        f"engine ({exc.accepted} once lifted over every distance of the domain): a less "
                                        "extreme mechanism (e.g. a larger geometric alpha), a target to design for "
                                        "(--epsilon), or --unit value") from exc
        if exc.parameter == "unit":
            raise
        raise exc.renamed(f"columns.{col.name}.{exc.parameter}") from exc


def release(frame: "pd.DataFrame", spec: TableSpec | Mapping[str, Any], *, seed: int | None = None,
            source: RandomSource | None = None, max_seconds: float | None = None) -> tuple["pd.DataFrame", dict]:
    """Release a DataFrame's columns as ``spec`` says.

    Parameters
    ----------
    frame:
        The table, one record per row.
    spec:
        The TOML structure as a dict (``columns``, ``keep``, ``unit``, ``budget``;
        :mod:`optnoise.table.spec`) or a :class:`TableSpec`. Mechanism paths are relative
        to the working directory; a :class:`~optnoise.mechanism.Mechanism` may be given
        directly as ``mechanism``.
    seed, source:
        Randomness: the operating system's CSPRNG by default; a seed gives a reproducible,
        **not private** release (``manifest["private"]`` is ``False``, its certificates and
        total are under ``only_if_unseeded``, and a
        :class:`~optnoise.seeded.NotPrivateWarning` is issued).
    max_seconds:
        As for :func:`prepare`.

    Returns
    -------
    (released_frame, manifest)
        The privatized and kept columns in the frame's order, with its index; the
        manifest as for a file, without paths.

    >>> import pandas as pd, optnoise
    >>> frame = pd.DataFrame({"id": [1, 2, 3], "colour": ["red", "blue", "red"]})
    >>> spec = {"keep": ["id"], "columns": {"colour": {"domain": {"categories": ["red", "blue"]}, "epsilon": 1.0}}}
    >>> out, manifest = optnoise.release(frame, spec)
    >>> list(out.columns), manifest["unit"]["kind"], manifest["total"]["basic"]["epsilon"]
    (['id', 'colour'], 'record', 1.0)
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError("frame", type(frame).__name__, "a pandas DataFrame")
    prepared = prepare(spec, max_seconds=max_seconds)
    table = prepared.spec
    names = [str(c) for c in frame.columns]  # spec keys are text: column 3 is "3"
    columns = select_columns(names, table.names, table.keep, "the frame")
    repeated = next((c for c in columns if names.count(c) > 1), None)
    if repeated is not None:
        raise InvalidParameterError("frame", repeated, f"a DataFrame whose released and kept columns have unique names "
                                    f"(column {repeated!r} appears {names.count(repeated)} times)")
    src = source if source is not None else random_source(seed)
    warn_not_private(src, "release")
    out: dict[Any, Any] = {}
    for name in columns:
        label = frame.columns[names.index(name)]  # the frame's own label (an integer stays an integer)
        plan = prepared.by_name.get(name)
        if plan is None:
            out[label] = frame.iloc[:, names.index(name)]
            continue
        released = plan.privatize(_arrow(frame.iloc[:, names.index(name)]), first_row=1, source=src)
        series = released.to_pandas()
        series.index = frame.index
        out[label] = series.rename(label)
    manifest = build_manifest(unit=table.unit, plans=list(prepared.plans), total=prepared.total, keep=table.keep,
                              rows=len(frame), source=src, engine="python", output_info={"columns": columns})
    return pd.DataFrame(out, index=frame.index), manifest


def _arrow(series: "pd.Series") -> "pa.Array":
    """A pandas column as an Arrow array; mixed Python objects become text (validated as such)."""
    import pyarrow as pa
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        import pandas as pd
        return pa.array([None if pd.api.types.is_scalar(v) and pd.isna(v) else str(v) for v in series.tolist()],
                        type=pa.string())


def release_file(input_path: str | os.PathLike, output_path: str | os.PathLike,
                 spec: TableSpec | Mapping[str, Any], *, engine: str = "local", seed: int | None = None,
                 source: RandomSource | None = None, force: bool = False, progress: Progress | None = None,
                 spark_master: str | None = None, spec_file: str | os.PathLike | None = None,
                 before_commit: Callable[[dict], object] | None = None, max_seconds: float | None = None,
                 audit: str | os.PathLike | None = None, ledger: str | os.PathLike | None = None) -> dict:
    """Release ``input_path`` (CSV or Parquet) into ``output_path`` as ``spec`` says.

    The manifest is publishable; the input's SHA-256 (a function of the data without noise)
    goes to the private audit record, written to ``audit`` when given
    (:func:`optnoise.publish.document.split_audit`). ``ledger``: the dataset's privacy ledger,
    checked before any work, charged the release's columns once they are certified and before
    any noise is drawn (refused above the lifetime budget), the run marked delivered once the
    output and the manifest are in place.

    Returns the manifest, also written to ``output_path + ".manifest.json"``. The input is
    streamed (memory independent of the row count); ``progress(fraction, rows)`` is
    called after each batch. ``engine="spark"`` runs the same release in one pass on
    Spark (a local session unless ``spark_master`` or the Spark configuration names a
    cluster); the output is then a dataset directory. ``force`` replaces an existing
    output; the input (or a file the spec reads) is never replaced.

    Nothing fails after the release is in place: the manifest (its plain-words
    ``statement`` included) is built, and ``before_commit(manifest)`` is called (the
    command line renders everything it will print there), before the output and the
    manifest are moved into place; an exception in either leaves nothing behind. A seed
    warns (:class:`~optnoise.seeded.NotPrivateWarning`).
    """
    if engine not in ENGINES:
        raise InvalidParameterError("engine", engine, "'local' or 'spark'")
    table = spec if isinstance(spec, TableSpec) else parse_table_spec(spec)
    in_fmt, out_fmt = file_format(input_path, "input"), file_format(output_path, "output")
    output = Path(driver_output(output_path) if engine == "spark" else output_path)   # Spark: file:// URIs
    manifest_path = Path(str(output) + ".manifest.json")
    reads = [Path(input_path)] + [Path(f) for f in table.files()] + ([Path(spec_file)] if spec_file else [])
    check_destination(output, manifest_path, reads, force=force, dataset=engine == "spark")
    if audit is not None:
        if os.path.realpath(audit) in (os.path.realpath(output), os.path.realpath(manifest_path)):
            raise InvalidParameterError("audit", str(audit), "a path other than the output's and its manifest's")
        check_output(audit, force=force, reads=reads, parameter="audit")
    book = None if ledger is None else ledger_of(ledger, table.unit)
    columns = select_columns(column_names(input_path, in_fmt), table.names, table.keep, Path(input_path).name)
    prepared = prepare(table, max_seconds=max_seconds)  # certify before reading any data
    spec_info = None if spec_file is None else file_record(spec_file)
    run = charge(book, prepared, spec_info)              # and record the spend before any noise
    schema = output_schema(input_schema(input_path, in_fmt, columns), prepared.by_name)
    src = source if source is not None else random_source(seed)

    warn_not_private(src, "release_file")

    def finish(written: list[Path], rows: int, uri: str | None = None) -> dict:
        manifest = build_manifest(
            unit=table.unit, plans=list(prepared.plans), total=prepared.total, keep=table.keep, rows=rows,
            source=src, engine=engine, spec_file=spec_info,
            input_info=input_record(input_path, in_fmt),
            output_info={"path": str(output), **({"uri": uri} if uri else {}), "format": out_fmt, "sha256":
                         files_sha256(written), "files": len(written), "columns": schema.names})
        manifest, record = split_audit(manifest, [("input", "sha256")])
        if audit is not None:
            write_text_atomic(audit, dumps(record), parameter="audit", replace=force)
        if before_commit is not None:
            before_commit(manifest)
        return manifest

    if engine == "spark":
        from .spark import release_spark
        manifest = release_spark(input_path, in_fmt, columns, prepared.by_name, schema, output, out_fmt, src, finish,
                                 manifest_path, master=spark_master)
    else:
        with atomic_path(manifest_path, replace=force) as tmp_manifest, atomic_path(output, replace=force) as tmp_out:
            rows = 0
            with BatchWriter(tmp_out, out_fmt, schema) as writer:
                for batch in read_batches(input_path, in_fmt, columns, progress):
                    writer.write(privatize_batch(batch, prepared.by_name, schema, first_row=rows + 1, source=src))
                    rows += batch.num_rows
            manifest = finish([tmp_out], rows)
            tmp_manifest.write_text(dumps(manifest))
    if run is not None:
        book.delivered(run.run_id)
    return manifest


def ledger_of(path: str | os.PathLike, unit: str) -> Any:
    """The dataset's ledger for the release's unit (``record`` or ``value``), checked before any
    work (:func:`optnoise.publish.ledger.open_ledger`; sqlite3 loads only with a ledger)."""
    from ..publish.ledger import open_ledger
    return open_ledger(path, unit)


def charge(book: Any, prepared: Prepared, spec_info: dict | None) -> Any:
    """Record the release's spend (every certified column, the parts its record total composes)
    in the ledger, before any noise is drawn; refused above the lifetime budget."""
    if book is None:
        return None
    from ..publish.spend import Part, Spend
    parts = [Part(p.mechanism, 1, p.epsilon_delta) for p in prepared.plans]
    return book.reserve(Spend(parts, book.dataset, prepared.spec.unit, statistics=[p.name for p in prepared.plans],
                              spec_sha256=None if spec_info is None else spec_info["sha256"]))


def release_column(input_path: str | os.PathLike, column: str, mechanism: Mechanism | str | None,
                   output_path: str | os.PathLike, *, categories: Sequence[str] | None = None, lower: int | None = None,
                   upper: int | None = None, clamp: bool = False, unit: str = "record", keep: Sequence[str] = (),
                   budget: Target | None = None, mechanism_file: str | os.PathLike | None = None,
                   target: Target | None = None, neighbourhood: Any = None, **options: Any) -> dict:
    """The single-column shortcut: release ``column`` with ``mechanism`` (domain from the
    mechanism; or a bare family name calibrated to ``target``, :func:`~optnoise.table.spec.column_spec`);
    ``options`` as for :func:`release_file`."""
    col = column_spec(column, mechanism, categories=None if categories is None else list(categories), lower=lower,
                      upper=upper, clamp=clamp, mechanism_file=mechanism_file, target=target,
                      neighbourhood=neighbourhood)
    return release_file(input_path, output_path, TableSpec((col,), tuple(keep), budget, unit), **options)


__all__ = ["ColumnPlan", "ColumnSpec", "Domain", "ENGINES", "Prepared", "TableSpec", "column_spec", "load_spec",
           "parse_table_spec", "prepare", "release", "release_column", "release_file", "words"]
