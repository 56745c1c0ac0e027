"""The shape the brief sets (docs/architecture.md section 4): no function over 80 lines and no
file over 600 lines anywhere in ``src/``. ``bench/follow.py`` reports the same counts.

Issue 21 held ``design/``, ``table/`` and ``cli/`` to the function limit; issue 33 extends both
limits to every module, with :data:`CHANGING` naming the files that other work is reshaping at
the same time. Remove an entry once that work has landed: its file is then held like every other.
"""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "optnoise"
MAX_LINES = 80
MAX_FILE_LINES = 600

#: Paths under ``src/optnoise`` (a file, or a folder ending in ``/``) exempt for now, each being
#: reshaped by other work of issue 33 while this test was extended. Each entry must still match a
#: file (checked below), so a stale one is noticed.
CHANGING: dict[str, str] = {
    # each file below is over a limit on main today and is being changed by other work of issue 33
}


def changing(rel: str) -> bool:
    return any(rel == key or (key.endswith("/") and rel.startswith(key)) for key in CHANGING)


def long_functions(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > MAX_LINES:
                    out.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name} ({lines} lines)")
    return out


def long_files(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > MAX_FILE_LINES:
            out.append(f"{path.relative_to(root).as_posix()} ({lines} lines)")
    return out


def test_the_counter_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    assert [s.split()[1] for s in long_functions(tmp_path)] == ["long"]


def test_the_counter_sees_a_long_file(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_FILE_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    assert long_files(tmp_path) == [f"long.py ({MAX_FILE_LINES + 1} lines)"]


def test_the_allow_list_is_not_stale():
    for key in CHANGING:
        assert (SRC / key).exists(), f"{key} is in CHANGING but no longer exists: remove the entry"


def test_no_function_over_80_lines():
    bad = [f for f in long_functions(SRC) if not changing(f.split(":")[0])]
    assert not bad, "split these functions by job: " + ", ".join(bad)


def test_no_file_over_600_lines():
    bad = [f for f in long_files(SRC) if not changing(f.split(" ")[0])]
    assert not bad, "split these files by concern: " + ", ".join(bad)


def test_the_allow_list_covers_only_what_it_must():
    """Every file-level entry still needs its exemption (a package entry covers work in progress)."""
    over = {f.split(":")[0] for f in long_functions(SRC)} | {f.split(" ")[0] for f in long_files(SRC)}
    unneeded = [key for key in CHANGING if not key.endswith("/") and key not in over]
    assert not unneeded, "these files now meet the limits: remove them from CHANGING: " + ", ".join(unneeded)
