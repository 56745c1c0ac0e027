"""``optnoise query``: statistics of a table (counts, histograms, sums, peaks, modes) with
optimal certified noise, per person, under one budget (docs/statistics.md)."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from ...errors import InvalidParameterError
from ..app import command
from ..options import Audit, LedgerPath, WRITES, Json, Seed, Writes
from ..render import escape, err, out, say, warn, warn_seed


@command(WRITES, flags={"spec": "--spec", "output": "--output", "csv": "--csv", "engine": "--engine",
                        "units": "--units", "audit": "--audit", "ledger": "--ledger"})
def query(
    writes: Writes,
    spec: Annotated[Path, typer.Option("--spec", help="TOML spec: unit, budget, alpha, statistics "
                                                      "(docs/statistics.md).")],
    input_path: Annotated[Optional[Path], typer.Option("--input", help="CSV or Parquet file, one row per record.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", help="Write the document (JSON) here.")] = None,
    csv: Annotated[Optional[Path], typer.Option("--csv", help="Also write the released values as a CSV table.")] = None,
    audit: Audit = None,
    ledger: LedgerPath = None,
    engine: Annotated[str, typer.Option("--engine", help="local (streamed with pyarrow) or spark (bounding and group-by on Spark; noise on the driver).")] = "local",
    spark_master: Annotated[Optional[str], typer.Option(
        "--spark-master", help="With --engine spark: the master URL (default: the Spark configuration's, else local).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare", help="Show both methods of each peak and mode on synthetic data of the spec's shape (exact "
                          "laws; never reads data: no --input).")] = False,
    units: Annotated[Optional[int], typer.Option(
        "--units", help="With --compare: units in the synthetic data (default: unit.max_units under add-remove, "
                        "else 1000).")] = None,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Release statistics of a table with optimal, certified noise per person (unit), under one budget
    (--compare: both methods of each peak and mode on synthetic data of the spec's shape instead)."""
    from ...query.files import query_file_audited
    from ...query.spec import load_query_spec
    _check_mode(compare, input_path, units, csv=csv, seed=seed, engine=engine, spark_master=spark_master)
    try:
        parsed = load_query_spec(spec)
    except InvalidParameterError as exc:
        raise exc.renamed("--spec" if exc.parameter == "spec" else f"--spec ({exc.parameter})") from exc
    if compare:
        _compare(parsed, spec, output, units, writes.force, as_json)
        return
    try:
        doc, record = query_file_audited(input_path, parsed, output, csv=csv, engine=engine, seed=seed,
                                         force=writes.force, spark_master=spark_master, spec_file=spec, audit=audit,
                                         ledger=ledger, progress=_Progress())
    except InvalidParameterError as exc:
        raise exc.renamed(_flag(exc)) from exc
    warn_seed(seed, as_json)
    for line in record["warnings"]:
        warn(line)
    if as_json:
        from ...io import dumps
        typer.echo(dumps(doc))
        return
    _render(doc, output)


class _Progress:
    """A line on stderr every few seconds while the statistics are designed and certified (a
    long run is never silent, with or without a terminal)."""

    EVERY = 5.0

    def __init__(self) -> None:
        import time
        self.clock = time.monotonic
        self.start = self.last = self.clock()

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.last >= self.EVERY and done < total:
            self.last = now
            err.print(f"designed and certified {done} of {total} statistics ({now - self.start:.0f} s)")


def _flag(exc: InvalidParameterError) -> str:
    """The flag a library error is about: a bad value in the data is the input's (with its data
    row), the seed the seed's, the rest the spec's key path."""
    p = exc.parameter
    if p.startswith("--"):
        return p
    if p in ("input", "output", "csv", "engine", "seed", "audit", "ledger"):
        return f"--{p}"
    if "data row" in str(exc.value):
        return f"--input ({p})"
    return "--spec" if p == "spec" else f"--spec ({p})"


def _check_mode(compare: bool, input_path: Optional[Path], units: Optional[int], *, csv: Optional[Path],
                seed: Optional[int], engine: str, spark_master: Optional[str]) -> None:
    """--compare takes no data (and nothing that draws or reads it); a release needs --input."""
    if not compare:
        if input_path is None:
            raise InvalidParameterError("--input", None, "a CSV or Parquet file to release statistics of (or "
                                                         "--compare: both peak methods on synthetic data)")
        if units is not None:
            raise InvalidParameterError("--units", units, "--units only with --compare (a release counts the units "
                                                          "of its input)")
        return
    given = (("--input", input_path), ("--csv", csv), ("--seed", seed), ("--spark-master", spark_master),
             ("--engine", None if engine == "local" else engine))
    for flag, value in given:
        if value is not None:
            raise InvalidParameterError(flag, str(value), "nothing with --compare: it uses synthetic data of the "
                                        "spec's shape only (exact laws, no draws, the user's data never read)")


def _compare(parsed: object, spec: Path, output: Optional[Path], units: Optional[int], force: bool,
             as_json: bool) -> None:
    from ...query.compare import compare_file
    try:
        doc = compare_file(parsed, output, units=units, force=force, spec_file=spec)
    except InvalidParameterError as exc:
        p = exc.parameter
        raise exc.renamed({"output": "--output", "units": "--units", "spec": "--spec"}.get(p, f"--spec ({p})")) \
            from exc
    if as_json:
        from ..render import echo_json
        echo_json(doc)
        return
    _render_compare(doc, output)


def _render_compare(doc: dict, output: Optional[Path]) -> None:
    """One narrow table per peak or mode: profile x method -> P(right key), E distance, guarantee;
    one per quantile (:func:`_render_quantile`)."""
    from ..render import column, narrow_table, notes
    for name, s in doc["statistics"].items():
        what = s["about"]
        units = f"{s['groups']} groups of {s['units_per_group']} units" if s["groups"] > 1 else \
            f"{s['units_per_group']} units"
        table = narrow_table(f"{name}: {what}, {s['keys']} keys, {units}; the spec chose {s['chosen_method']}")
        guarantee = {m: _guarantee(s["methods"][m]["certificate"]) for m in doc["methods"]}
        rows = [(p, m, f"{v[m]['p_correct']:.4f}", f"{v[m]['expected_distance']:.3g}", guarantee[m])
                for p, v in s["profiles"].items() for m in doc["methods"]]
        heads = ("profile", "method", "P(true key)", "E distance", "guarantee")
        for i, head in enumerate(heads):
            column(table, head, left=i in (0, 1, 4), cells=[r[i] for r in rows])
        for row in rows:
            table.add_row(*(escape(c) for c in row))
        out.print(table)
        notes([f"distance: {s['distance']}", f"scores: {s['scores']}",
               "answer-noise: the same law on every profile (the true key shifted by the noise)"])
    for name, q in doc.get("quantiles", {}).items():
        _render_quantile(name, q, doc["quantile_methods"])
    skipped = f"; not compared (not a peak or mode): {', '.join(doc['skipped'])}" if doc["skipped"] else ""
    source = {"default": "the default: under replace the spec holds no number of units; --units to change it",
              "unit.max_units": "the spec's unit.max_units", "units": "--units"}[doc["units_from"]]
    notes([f"units: {doc['units']} ({source}){skipped}",
           *(f"{p}: {about}" for p, about in doc["profiles"].items() if doc["statistics"]),
           ("exact laws, no simulation; " if doc["statistics"] else "") + doc["data"]])
    if output is not None:
        say((f"wrote {output}: the comparison (JSON)", "dim"))


def _render_quantile(name: str, q: dict, methods: list[str]) -> None:
    """One narrow table per quantile statistic: profile x method -> each level's expected rank
    and value error; the stated (proven) rank error of each method beneath."""
    from ..render import column, narrow_table, notes
    units = f"{q['groups']} groups of {q['units_per_group']} units" if q["groups"] > 1 else \
        f"{q['units_per_group']} units"
    table = narrow_table(f"{name}: {q['about']}, {q['grid_points']} grid points, {units}")
    rows = [(p, m, *(f"{v[m]['expected_rank_error'][lv]:.3g} / {v[m]['expected_value_error'][lv]:.3g}"
                     for lv in q["levels"])) for p, v in q["profiles"].items() for m in methods]
    heads = ("profile", "method", *(f"q {lv}: E rank / E value error" for lv in q["levels"]))
    for i, head in enumerate(heads):
        column(table, head, left=i < 2, cells=[r[i] for r in rows])
    for row in rows:
        table.add_row(*(escape(c) for c in row))
    out.print(table)
    stated = ", ".join(f"{m} {q['stated_rank_error'][m]:.4g}" for m in methods)
    notes([f"proven rank error, all levels at once with probability >= {1 - q['alpha']:g}: {stated}",
           *(f"{m}: {about}" for m, about in q["methods"].items()), f"laws: {q['laws']}",
           *(f"{p}: {v['about']}" for p, v in q["profiles"].items())])


def _guarantee(cert: dict) -> str:
    eps = cert["epsilon_pure"]
    return f"exact eps {eps:.4g}" if cert["exact"] else f"theorem eps {eps:.4g}"


def _render(doc: dict, output: Optional[Path]) -> None:
    """One row per released cell (as the CSV), then each statistic's mechanism and error."""
    from rich.table import Table

    from ...query.files import released_rows
    units = doc["unit"].get("units")
    title = f"{len(doc['statistics'])} statistics" + (f" of {units} units" if units is not None else "") + \
        (f" -> {output}" if output else "")
    table = Table(title=escape(title))
    for name in ("statistic", "group", "key", "released", f"{1 - doc['alpha']:g} interval"):
        table.add_column(name, overflow="fold")
    for stat, group, key, value, low, high in released_rows(doc):
        interval = "" if low == "" else f"[{low}, {high}]"
        table.add_row(*(escape(str(c)) for c in (stat, group, key, value, interval)))
    out.print(table)
    for name, s in doc["statistics"].items():
        err = s.get("expected_abs_error")
        acc = s.get("accuracy", {}).get("p_correct") or {}
        right = "" if not acc else ", P(true key) " + ", ".join(f"{p}: {v:.3f}" for p, v in acc.items()) + \
            " (synthetic profiles, query --compare)"
        say(f"{name} ({s['kind']}): {s['mechanism']['name']}" + ("" if err is None else f", E|error| {err:.4g}") + right)
    say(doc["statement"])
    say(f"randomness: {doc['randomness']['source']}")


