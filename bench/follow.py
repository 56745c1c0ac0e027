"""Architecture counts: follow one parameter through the calls, and measure the code's shape.

Run: .venv/bin/python bench/follow.py [--src DIR]

Four measures (docs/architecture.md, "Measuring the shape"), each made by running the
code, not by reading it:

* **epsilon on the design path.** ``optnoise design --n 23 --epsilon E --sd 1 --cost
  circular-mse --output F`` runs under a profiler hook with an epsilon no other number
  equals (``E = 0.8765432``). Every call whose *arguments* hold it is recorded:
  ``forms`` are the distinct kinds of value that carry it (the typed text, a float, a
  ``Target``, ``e^eps``, a JSON object...), ``names`` the distinct parameter names it
  travels under; ``validations`` counts the calls of an epsilon check (``check_epsilon``)
  and of ``Target.__init__`` built from the bare number; ``copies`` counts the places of the
  written file that hold ``E``.
* **the mechanism on the release path.** ``design --output hour.json`` for the per-record
  neighbourhood, then ``release --mechanism hour.json``: ``constructions`` counts the
  ``Mechanism`` objects built during the release, ``reads`` the times the mechanism file is
  opened (Python's ``open`` audit event).
* **epsilon on the query and release paths.** The same hook on ``optnoise query`` with a
  statistic of epsilon ``E`` and on ``optnoise release --spec`` with a column of epsilon ``E``:
  ``validations`` and ``copies`` in the document or manifest written.
* **functions over 80 lines** (AST) per package, and **the largest file** (lines).
* **structure** (AST): imports between ``query/`` and ``table/``, the modules that compose a
  unit's total (that call a composition of ``analysis/``), and the comparisons of a
  statistic's kind with a kind's name outside ``query/kinds/``.

``--src`` measures another checkout's ``src`` (e.g. the one before a change). Asserts nothing.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

EPS = 0.8765432


def _holds(value: object, depth: int = 0) -> str | None:
    """The kind of value ``value`` is when it carries :data:`EPS` (or ``e^EPS``), else ``None``."""
    if depth > 3:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value == EPS:
            return "float"
        if math.isclose(float(value), math.exp(EPS), rel_tol=1e-9):
            return "e^eps"
        return None
    if isinstance(value, str):
        return "text" if value.strip() == str(EPS) else None
    if isinstance(value, dict):
        return "json" if any(_holds(v, depth + 1) for v in list(value.values())[:64]) else None
    if isinstance(value, (list, tuple)):
        return "sequence" if any(_holds(v, depth + 1) for v in list(value)[:16]) else None
    fields = getattr(value, "__dataclass_fields__", None)
    if fields:
        for name in fields:
            try:
                inner = getattr(value, name)
            except Exception:  # noqa: BLE001 - a property that cannot run here
                continue
            if _holds(inner, depth + 1):
                return type(value).__name__
    return None


def _run_cli(args: list[str]) -> None:
    from typer.testing import CliRunner

    from optnoise.cli import app
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise SystemExit(f"optnoise {' '.join(args)} failed: {result.output}")


def epsilon_path(workdir: Path) -> dict:
    """Follow ``--epsilon`` from the command line to the design file."""
    out = workdir / "design.json"
    return follow(["design", "--n", "23", "--epsilon", str(EPS), "--sd", "1", "--cost", "circular-mse",
                   "--output", str(out)], out)


def follow(args: list[str], out: Path) -> dict:
    """Run a command under the profiler hook and follow :data:`EPS` (the epsilon path's measures)."""
    seen: Counter[str] = Counter()
    names: set[str] = set()
    validations = 0
    here = str(Path(sys.modules["optnoise"].__file__).parent)

    def hook(frame, event, arg):  # noqa: ANN001
        nonlocal validations
        if event != "call" or not frame.f_code.co_filename.startswith(here):
            return
        code = frame.f_code
        if code.co_name in ("check_epsilon", "check_epsilons"):
            validations += 1
        for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            if name in frame.f_locals and name != "self" and _holds(frame.f_locals[name]) is not None:
                seen[_holds(frame.f_locals[name])] += 1  # type: ignore[index]
                names.add(name)

    sys.setprofile(hook)
    try:
        _run_cli(args)
    finally:
        sys.setprofile(None)
    return {"forms": sorted(seen), "names": sorted(names), "validations": validations,
            "copies_in_file": _count(json.loads(out.read_text()))}


def query_path(workdir: Path) -> dict:
    """Follow a statistic's epsilon from a query spec to the written document."""
    data = workdir / "readings.csv"
    data.write_text("household,hour,kwh\n" + "".join(f"{i % 40},{(5 * i) % 24},{(i % 7) / 2}\n" for i in range(400)))
    spec = workdir / "query.toml"
    spec.write_text(f'unit = {{ id = "household", max_rows = 24 }}\n[statistics.evening]\nkind = "count"\n'
                    f'where = {{ hour = {{ lower = 17 }} }}\nepsilon = {EPS}\n')
    out = workdir / "stats.json"
    return follow(["query", "--input", str(data), "--spec", str(spec), "--output", str(out)], out)


def release_spec_path(workdir: Path) -> dict:
    """Follow a column's epsilon from a release spec to the written manifest."""
    data = workdir / "households2.csv"
    data.write_text("household,peak_hour\n" + "".join(f"{i},{(7 * i) % 24}\n" for i in range(200)))
    spec = workdir / "release.toml"
    spec.write_text(f'keep = ["household"]\n[columns.peak_hour]\ndomain = {{ lower = 0, upper = 23, cyclic = true }}\n'
                    f'epsilon = {EPS}\n')
    out = workdir / "released2.csv"
    got = follow(["release", "--input", str(data), "--spec", str(spec), "--output", str(out)],
                 Path(str(out) + ".manifest.json"))
    return got


def structure(src: Path) -> dict:
    """Imports between ``query/`` and ``table/``, modules that compose a unit's total, and the
    places outside ``query/kinds/`` that test a statistic's kind (AST)."""
    pkg = src / "optnoise"
    kinds = {"count", "histogram", "sum", "peak", "mode", "mean", "quantile", "median", "variance"}
    between, composers, kind_tests = 0, [], []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        tree = ast.parse(path.read_text())
        text = path.read_text()
        top = rel.parts[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and top in ("query", "table"):
                other = "table" if top == "query" else "query"
                if node.module.split(".")[0] == other or node.module.startswith(f"optnoise.{other}"):
                    between += 1
            if isinstance(node, ast.Compare) and top in ("query", "cli", "demo.py") and "kinds" not in rel.parts:
                sides = [node.left, *node.comparators]
                named = any(isinstance(x, ast.Attribute) and x.attr == "kind" or
                            isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Constant) and x.slice.value == "kind"
                            for x in sides)
                literal = any(isinstance(c, ast.Constant) and c.value in kinds for x in sides
                              for c in ([x] if isinstance(x, ast.Constant) else getattr(x, "elts", [])))
                if named and literal:
                    kind_tests.append(f"{rel}:{node.lineno}")
        if top in ("publish", "table", "query") and any(f in text for f in ("compose_sequence(", "compose_tradeoff(",
                                                                           "delta_curve(")):
            composers.append(str(rel))
    return {"imports_between_query_and_table": between, "modules_composing_a_total": composers,
            "kind_tests_outside_the_kinds": len(kind_tests), "where": kind_tests}


def _count(value: object) -> int:
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count(v) for v in value)
    return int(isinstance(value, float) and value == EPS)


def release_path(workdir: Path) -> dict:
    """Constructions and reads of one mechanism from ``design --output`` to a released file."""
    import optnoise.mechanism as mechanism_module

    hour = workdir / "hour.json"
    _run_cli(["design", "--n", "23", "--epsilon", "1", "--bd", "23", "--cost", "circular-mse", "--output", str(hour)])
    data = workdir / "households.csv"
    data.write_text("household,peak_hour\n" + "".join(f"{i},{(7 * i) % 24}\n" for i in range(200)))
    reads = 0
    target = os.path.realpath(hour)

    def audit(event: str, args: tuple) -> None:
        nonlocal reads
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            if os.path.realpath(os.fsdecode(args[0])) == target:
                reads += 1

    built = 0
    original = mechanism_module.Mechanism.__post_init__

    def counting(self):  # noqa: ANN001
        nonlocal built
        built += 1
        original(self)

    sys.addaudithook(audit)
    mechanism_module.Mechanism.__post_init__ = counting
    before = reads
    try:
        _run_cli(["release", "--input", str(data), "--column", "peak_hour", "--mechanism", str(hour),
                  "--keep", "household", "--output", str(workdir / "released.csv")])
    finally:
        mechanism_module.Mechanism.__post_init__ = original
    return {"constructions": built, "reads": reads - before}


def shape(src: Path) -> dict:
    """Functions over 80 lines by package, and the largest file."""
    long: dict[str, list[str]] = {}
    largest = (0, "")
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        lines = text.count("\n")
        largest = max(largest, (lines, str(path.relative_to(src))))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                package = path.relative_to(src).parts[1] if len(path.relative_to(src).parts) > 2 else "(top)"
                long.setdefault(package, []).append(f"{node.name} ({node.end_lineno - node.lineno + 1})")
    return {"functions_over_80_lines": long, "count": sum(len(v) for v in long.values()),
            "largest_file": {"path": largest[1], "lines": largest[0]}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    for name in [m for m in sys.modules if m == "optnoise" or m.startswith("optnoise.")]:
        del sys.modules[name]
    import optnoise
    with tempfile.TemporaryDirectory() as tmp:
        report = {"src": str(Path(optnoise.__file__).parents[1]), "epsilon_on_the_design_path": epsilon_path(Path(tmp)),
                  "epsilon_on_the_query_path": query_path(Path(tmp)),
                  "epsilon_on_the_release_path": release_spec_path(Path(tmp)),
                  "mechanism_on_the_release_path": release_path(Path(tmp)), "shape": shape(args.src),
                  "structure": structure(args.src)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
