"""Statistics of a CSV or Parquet file, streamed (pyarrow).

The input is read batch by batch (:func:`optnoise.publish.files.read_batches`: memory bounded
apart from one counter per unit and one aggregate per unit and cell, :mod:`.aggregate`);
with ``engine="spark"`` the bounding and the group-by run on Spark (:mod:`.spark`, on
``spark_master``) and only the per-cell totals reach the driver.
The document is written atomically (:func:`optnoise.io.write_text_atomic`) under the one
output rule (:func:`optnoise.io.check_output`, checked before any work); on failure nothing
is written. ``csv`` also writes the released values as a table (statistic, group, key,
value, low, high).
"""

from __future__ import annotations

import importlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from ..io import atomic_path, check_output, dumps, write_text_atomic
from ..randomness import RandomSource, random_source
from ..seeded import warn_not_private
from ..publish.document import input_info
from ..publish.files import column_names, file_format, file_record, file_sha256, read_batches
from .aggregate import aggregate, bounding_key
from .kinds import KINDS
from .autobound import chosen_in_batches, has_auto, prepass_columns
from .found import found_in_batches, wanted, with_found_keys
from .release import build_documents, charge, delivered, ledger_unit
from .spec import QuerySpec, load_query_spec, parse_query_spec

#: Engines of the statistics: streamed with pyarrow, or on Spark (:mod:`.spark`).
ENGINES = ("local", "spark")
#: Imported in the background while the rows stream, when the spec may need them
#: (:func:`warm_modules`): a unit's total that is not the pure sum composes privacy loss
#: distributions with dp_accounting, whose import (SciPy's signal and stats packages) took
#: 1.3-2.6 s of a query's fixed cost (docs/benchmarks.md).
WARM_MODULES = ("dp_accounting.pld.privacy_loss_distribution",)


def warm_modules(spec: QuerySpec) -> tuple[str, ...]:
    """:data:`WARM_MODULES` when the spec may compose its total with dp_accounting, else none.

    Decided from the spec alone, before any row is read; a wrong guess costs time, never a
    number (the module is imported where it is used). The attack readout composes with numpy
    (:func:`optnoise.analysis.composition.delta_curve`), and a total whose parts are all pure
    is the pure sum (:func:`optnoise.publish.accountant.pure_total`) unless a budget below the sum of the
    statistics' epsilons asks for the tighter bounds; a statistic with ``delta > 0`` or the
    clamped discrete Gaussian (never pure) composes by PLDs.
    """
    stats = spec.statistics
    targets = [s.target for s in stats]
    if any(t is None or t.epsilon is None or t.delta > 0 for t in targets) or any(
            s.mechanism == "clamped-discrete-gaussian" for s in stats):
        return WARM_MODULES
    budget = spec.budget
    if budget is not None and budget.epsilon is not None and \
            sum(float(t.epsilon) for t in targets) > budget.epsilon:  # type: ignore[union-attr,arg-type]
        return WARM_MODULES
    return ()


def warm_imports(modules: tuple[str, ...] = WARM_MODULES) -> None:
    """Import ``modules`` (run on a worker thread). A failure is left to the import that
    needs the module, which raises it where it belongs."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:   # noqa: BLE001 -- re-raised by the real import
            return


def check_columns(names: list[str], spec: QuerySpec, where: str) -> None:
    """Every column the spec names exists (unknown columns are bad input)."""
    for col in spec.columns:
        if col not in names:
            raise InvalidParameterError("spec", f"column '{col}'", f"a column of {where}: {', '.join(names)}")


def query_file(input_path: str | os.PathLike, spec: Any, output: str | os.PathLike | None = None, *,
               csv: str | os.PathLike | None = None, engine: str = "local", seed: int | None = None,
               source: RandomSource | None = None, force: bool = False, spark_master: str | None = None,
               spec_file: str | os.PathLike | None = None, audit: str | os.PathLike | None = None) -> dict:
    """Release the statistics ``spec`` asks of ``input_path`` (CSV or Parquet).

    Returns the publishable document; writes it to ``output`` (JSON), the released values to
    ``csv`` and the private audit record to ``audit`` when given (:func:`query_file_audited`).
    A seed warns and marks the document ``"private": false``.
    """
    return query_file_audited(input_path, spec, output, csv=csv, engine=engine, seed=seed, source=source, force=force,
                              spark_master=spark_master, spec_file=spec_file, audit=audit)[0]


def query_file_audited(input_path: str | os.PathLike, spec: Any, output: str | os.PathLike | None = None, *,
                       csv: str | os.PathLike | None = None, engine: str = "local", seed: int | None = None,
                       source: RandomSource | None = None, force: bool = False, spark_master: str | None = None,
                       spec_file: str | os.PathLike | None = None,
                       audit: str | os.PathLike | None = None,
                       ledger: str | os.PathLike | None = None,
                       progress: Any = None) -> tuple[dict, dict]:
    """:func:`query_file`, returning ``(document, audit record)``: the publishable document and
    the private audit record (:func:`.release.build_documents`), each written where asked, every
    output checked before any work and written atomically. ``ledger``: the dataset's privacy
    ledger (:mod:`optnoise.publish.ledger`): opened before any work (a damaged, foreign or
    read-only file refused), the run's spend recorded once every statistic is certified and
    before any noise is drawn (refused, nothing drawn or written, above the lifetime budget),
    marked delivered once the outputs are in place."""
    if engine not in ENGINES:
        raise InvalidParameterError("engine", engine, "'local' or 'spark'")
    parsed = load_query_spec(spec) if isinstance(spec, (str, os.PathLike)) else parse_query_spec(spec)
    fmt = file_format(input_path, "input")
    reads = [input_path] + ([spec_file] if spec_file else []) + ([spec] if isinstance(spec, (str, Path)) else [])
    outputs = [(path, name) for path, name in ((output, "output"), (csv, "csv"), (audit, "audit")) if path is not None]
    for i, (path, name) in enumerate(outputs):
        same = next((other for p, other in outputs[:i] if os.path.realpath(p) == os.path.realpath(path)), None)
        if same is not None:
            raise InvalidParameterError(name, str(path), f"a path other than --{same}'s (two outputs on one path: the "
                                        "second would replace the first)")
        check_output(path, force=force, reads=reads, parameter=name)
    names = column_names(input_path, fmt)
    check_columns(names, parsed, Path(input_path).name)
    book = open_ledger(ledger if ledger is not None else parsed.ledger, parsed)   # --ledger, else the spec's
    if wanted(parsed):   # keys found in the data: one pass over their columns first (both engines)
        parsed = with_found_keys(parsed, found_in_batches(read_batches(input_path, fmt, list(wanted(parsed))), parsed))
    spec_info = None if spec_file is None else file_record(spec_file)
    src = source if source is not None else random_source(seed)
    warn_not_private(src, "query_file")
    if has_auto(parsed) and engine == "spark":   # a bound = "auto": the grid's counts made on Spark
        from .spark_autobound import chosen_on_spark
        parsed = chosen_on_spark(input_path, fmt, parsed, src, master=spark_master)
    elif has_auto(parsed):   # a bound = "auto": one pass over its columns, the histograms first
        parsed = chosen_in_batches(read_batches(input_path, fmt, prepass_columns(parsed)), parsed, src)
    with ThreadPoolExecutor(max_workers=2) as pool:   # hashing and an import beside the aggregation
        digest = pool.submit(file_sha256, input_path)
        warm = warm_modules(parsed)
        if warm:
            pool.submit(warm_imports, warm)
        if engine == "spark":
            from .spark import aggregate_spark
            agg = aggregate_spark(input_path, fmt, parsed, master=spark_master, key=bounding_key(parsed, src))
        else:
            agg = aggregate(read_batches(input_path, fmt, list(parsed.columns)), parsed, key=bounding_key(parsed, src))
        info = input_info(input_path, fmt, digest.result())
    runs: list = []

    def record_spend(planned: list, total: dict) -> None:
        if book is not None:
            runs.append(charge(book, parsed, planned, None if spec_info is None else spec_info["sha256"]))

    doc, record = build_documents(parsed, agg, src, engine=engine, input_info=info, before_draw=record_spend,
                                  progress=progress)
    if spec_info is not None:
        doc["spec"] = spec_info
    if audit is not None:
        write_text_atomic(audit, dumps(record), parameter="audit", replace=force)
    if output is not None and csv is not None:
        with atomic_path(csv, parameter="csv", replace=force) as tmp:
            tmp.write_text(released_table(doc), encoding="utf-8")
            write_text_atomic(output, dumps(doc), replace=force)
    elif output is not None:
        write_text_atomic(output, dumps(doc), replace=force)
    elif csv is not None:
        write_text_atomic(csv, released_table(doc), parameter="csv", replace=force)
    if runs:
        delivered(book, runs[0], record)
    return doc, record


def open_ledger(path: str | os.PathLike | None, spec: QuerySpec) -> Any:
    """The ledger at ``path`` (``None``: none), checked against the query's unit before any work
    (:func:`optnoise.publish.ledger.open_ledger`)."""
    if path is None:
        return None
    from ..publish.ledger import open_ledger as open_book   # sqlite3 loads only with a ledger
    return open_book(path, ledger_unit(spec))


def released_rows(doc: dict) -> list[tuple]:
    """The released values, one row per cell: ``(statistic, group, key, value, low, high)``
    (each kind's :meth:`~.kinds.base.Kind.csv_rows`)."""
    return [(name, group, key, v, *(iv if iv else ["", ""]))
            for name, s in doc["statistics"].items() for group, key, v, iv in KINDS.get(s["kind"]).csv_rows(s)]


def released_table(doc: dict) -> str:
    """The released values as CSV text: ``statistic,group,key,value,low,high``."""
    import csv as _csv
    import io
    buf = io.StringIO()
    w = _csv.writer(buf, lineterminator="\n")
    w.writerow(["statistic", "group", "key", "value", "low", "high"])
    w.writerows(released_rows(doc))
    return buf.getvalue()


__all__ = ["ENGINES", "WARM_MODULES", "check_columns", "query_file", "query_file_audited", "open_ledger", "released_rows", "released_table", "warm_imports", "warm_modules"]
