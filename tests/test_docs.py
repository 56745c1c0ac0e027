"""Every command printed in README.md and docs/*.md runs as printed (issue 26).

The README says once how the commands are run -- the environment active and a scratch
folder ``tour`` beside the demo's ``demo-output`` -- and every page follows it. This module
builds that situation in a temporary directory (``make demo``'s output, then ``tour/``),
extracts every command of every code block (fenced, or indented by four spaces; ``\\``
continues a line; ``$ `` prompts are dropped) and runs them in the order a reader meets
them: the README first, then docs/*.md by name, all in one ``tour`` folder. A command
documented as failing (a trailing ``# exit 2``, or an ``error:`` line printed under it)
must fail with that exit code and one ``error:`` line; every other one must succeed, and
with ``--json`` print one JSON object.

The commands run in-process (``CliRunner``: the same code as the console script, without
an interpreter start per command); the console script itself is tested in test_cli.py.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from optnoise.cli import app

#: Every documented command, in order, in one folder: minutes in all (the 365-release designs).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
runner = CliRunner()


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    text: str
    exit_code: int
    printed_error: str | None = None  # the error line the page prints under the command

    @property
    def args(self) -> list[str]:
        return shlex.split(self.text, comments=True)[1:]


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """``(first line number, lines)`` of every code block: fenced, or indented by four spaces
    after a blank line."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((i + 2, lines[i + 1:j]))
            i = j + 1
        elif lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            out.append((i + 1, [line[4:] for line in lines[i:j]]))
            i = j
        else:
            i += 1
    return out


def commands(page: Path) -> list[Command]:
    """The optnoise commands of a page, with the exit code the page documents."""
    found = []
    for start, block in _blocks(page.read_text()):
        k = 0
        while k < len(block):
            first = k
            line = block[k]
            while line.rstrip().endswith("\\") and k + 1 < len(block):
                k += 1
                line = line.rstrip()[:-1] + " " + block[k].strip()
            k += 1
            text = line.strip().removeprefix("$ ")
            if not re.match(r"optnoise\s", text):
                continue
            comment = text.split("#", 1)[1] if "#" in text else ""
            printed = None
            if k < len(block) and block[k].startswith("error:"):
                end = k
                while end < len(block) and block[end].strip() and not re.match(r"(\$ )?optnoise\s", block[end]):
                    end += 1
                printed = " ".join(line.strip() for line in block[k:end])
            code = 2 if ("exit 2" in comment or printed) else 0
            found.append(Command(page.name, start + first, text, code, printed))
    return found


ALL = [c for page in PAGES for c in commands(page)]
#: Options whose value is a path a command writes.
WRITTEN = ("--output", "--out", "--plot")


def test_the_pages_have_commands_and_the_readme_says_how_to_run_them():
    readme = (ROOT / "README.md").read_text()
    assert "source .venv/bin/activate" in readme and "mkdir -p tour && cd tour" in readme
    printed = [line.strip() for page in PAGES for _, block in _blocks(page.read_text()) for line in block]
    assert not [line for line in printed if line.startswith(".venv/bin/")]  # one way, followed everywhere
    pages = {c.page for c in ALL}
    assert {"README.md", "concepts.md", "ordered-domains.md", "release.md", "repeated-releases.md",
            "reproduction.md"} <= pages
    assert len(ALL) >= 50


def test_no_two_commands_write_the_same_file():
    """So a reader may follow the pages in any order in one folder: no command is refused for
    a file another page wrote (the output rule), unless it says --force."""
    seen: dict[str, Command] = {}
    for c in ALL:
        args = c.args
        if c.exit_code:  # a refused command writes nothing
            continue
        for i, a in enumerate(args[:-1]):
            if a in WRITTEN and "--force" not in args:
                assert args[i + 1] not in seen, (c, seen.get(args[i + 1]))
                seen[args[i + 1]] = c


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    """A clone after ``make demo``: ``demo-output`` beside the scratch folder ``tour``. At the
    end, the time the commands took (shown with ``pytest -s``)."""
    base = tmp_path_factory.mktemp("clone")
    r = runner.invoke(app, ["demo", "--out", str(base / "demo-output"), "--json"])
    assert r.exit_code == 0, r.stderr
    (base / "tour").mkdir()
    yield base / "tour"
    slowest = sorted(TIMES.items(), key=lambda kv: -kv[1])[:8]
    print(f"\ndocs commands: {len(TIMES)} in {sum(TIMES.values()):.1f} s; slowest "
          + ", ".join(f"{k} {v:.1f} s" for k, v in slowest))


TIMES: dict[str, float] = {}


@pytest.mark.parametrize("command", ALL, ids=[f"{c.page}:{c.line}" for c in ALL])
def test_command_runs_as_printed(command, tour, monkeypatch):
    monkeypatch.chdir(tour)
    t0 = time.perf_counter()
    r = runner.invoke(app, command.args)
    TIMES[f"{command.page}:{command.line}"] = time.perf_counter() - t0
    shown = f"{command.page}:{command.line}: {command.text}\nexit {r.exit_code}\n{r.stderr[-2000:]}"
    assert r.exit_code == command.exit_code, shown
    assert "Traceback" not in r.stdout + r.stderr, shown
    if command.exit_code:
        assert r.stdout == "" and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, shown
    if command.printed_error is not None:  # the page prints the message as it is
        assert " ".join(r.stderr.split()) == command.printed_error, shown
    elif "--json" in command.args:
        assert isinstance(json.loads(r.stdout), dict), shown

