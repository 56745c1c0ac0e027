"""Layering as documented in docs/architecture.md: no upward import, no cycle, no private name
across modules; bench/ and tests/ use public names only.

Every ``import`` statement counts, including those inside functions and ``TYPE_CHECKING``
blocks: a lazy import is still a dependency.
"""

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "optnoise"

#: Module (dotted, without the ``optnoise.`` prefix) or package prefix -> layer; lower layers
#: never import higher ones. The same table is in docs/architecture.md.
LAYERS: list[tuple[str, int]] = [
    ("errors", 0), ("version", 0),
    ("target", 1), ("search", 1), ("specs", 1), ("randomness", 1), ("seeded", 1), ("io", 1), ("datasets", 1),
    ("resources", 1),
    ("pmf", 2), ("neighbourhood", 2),
    ("analysis", 3), ("costs", 3),
    ("families", 4),
    ("sampling", 5),
    ("mechanism", 6),
    ("design", 7),
    ("compare", 8), ("publish", 8), ("plots", 8),
    ("table", 9), ("query", 9),
    ("demo", 10), ("reproduce", 10),
    ("cli", 11),
]


def layer_of(module: str) -> int:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"module {module} has no layer: add it to LAYERS and docs/architecture.md")


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        if node.module and (node.module == "optnoise" or node.module.startswith("optnoise.")):
            return node.module[len("optnoise"):].lstrip(".")
        return None
    base = module.split(".") if module else []
    if not is_package:
        base = base[:-1]
    up = node.level - 1
    base = base[: len(base) - up] if up else base
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(imported module, names)`` for every optnoise import in a file."""
    module = module_name(path) if path.is_relative_to(SRC) else ""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            if target is None:
                continue
            names = [a.name for a in node.names]
            submodules = [f"{target}.{n}" if target else n for n in names
                          if (SRC / Path(*(f"{target}.{n}".split(".") if target else [n]))).exists()
                          or (SRC / Path(*((f"{target}.{n}" if target else n).split(".")))).with_suffix(".py").exists()]
            out.append((target, [n for n in names if (f"{target}.{n}" if target else n) not in submodules]))
            out.extend((s, []) for s in submodules)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("optnoise"):
                    out.append((alias.name[len("optnoise"):].lstrip("."), []))
    return out


SOURCES = sorted(SRC.rglob("*.py"))


def test_no_upward_import():
    bad = []
    for path in SOURCES:
        module = module_name(path)
        if module == "":  # the top-level package loads public names lazily from every layer
            continue
        for target, _ in imports(path):
            if target and layer_of(target) > layer_of(module):
                bad.append(f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})")
    assert not bad, "\n".join(bad)


def test_nothing_imports_the_package_face():
    """Modules import what they use from its own module, never from ``optnoise`` itself (the
    face loads every layer lazily; importing it from inside would tie a floor to all of them)."""
    bad = []
    for path in SOURCES:
        for target, names in imports(path):
            if target == "" and names:
                bad.append(f"{module_name(path) or 'optnoise'} imports {', '.join(names)} from the package face")
    assert not bad, "\n".join(bad)


def test_the_package_face_imports_only_the_ground_floor():
    """The face's own imports (outside ``TYPE_CHECKING``) are ground-floor modules, and every
    public name it promises lives in a module of the table."""
    import optnoise

    tree = ast.parse((SRC / "__init__.py").read_text())
    checking = [n for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
    hidden = {id(m) for block in checking for m in ast.walk(block)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in hidden and node.level:
            assert layer_of(node.module) == 0, f"the package face imports {node.module} (layer {layer_of(node.module)})"
    for name, module in optnoise._PUBLIC.items():
        layer_of(module)
        assert hasattr(importlib.import_module(f"optnoise.{module}"), name), f"optnoise.{module} has no {name}"


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        module = module_name(path)
        if module == "":
            continue
        graph[module] = {t for t, _ in imports(path) if t and t != module and not module.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if state.get(n) is None:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("where", ["src", "tests", "bench"])
def test_no_private_name_across_modules(where):
    root = {"src": SRC, "tests": ROOT / "tests", "bench": ROOT / "bench"}[where]
    bad = []
    for path in sorted(root.rglob("*.py")):
        for target, names in imports(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            hidden = [p for p in target.split(".") if p.startswith("_") and p != "__init__"]
            if private or hidden:
                bad.append(f"{path.relative_to(ROOT)}: from optnoise.{target} import {', '.join(names)}")
    assert not bad, "\n".join(bad)


def test_the_cli_does_not_compute():
    """Commands call the library: no solver, sampler or analysis arithmetic inside cli/."""
    heavy = ("scipy", "linprog", "milp", "mpmath", "Fraction")
    for path in sorted((SRC / "cli").rglob("*.py")):
        text = path.read_text()
        for word in heavy:
            assert word not in text, f"{path.relative_to(ROOT)} uses {word}"
