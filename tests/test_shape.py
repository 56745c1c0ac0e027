"""The shape issue 21 set (docs/architecture.md section 4): no function over 80 lines in the
packages that hold the design path, the publishing core, the table planner and the CLI. ``bench/follow.py`` reports
the same count for every package."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "optnoise"
#: Packages where a function may not exceed :data:`MAX_LINES` (issue 21's goal).
SHORT = ("design", "publish", "table", "cli")
MAX_LINES = 80


def long_functions(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > MAX_LINES:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return out


def test_the_counter_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    assert [s.split()[1] for s in long_functions(tmp_path)] == ["long"]


def test_no_function_over_80_lines_in_design_publish_table_and_cli():
    bad = [f for pkg in SHORT for f in long_functions(SRC / pkg)]
    assert not bad, "split these functions by job: " + ", ".join(bad)
