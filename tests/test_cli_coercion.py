"""The plain coercion of option texts (cli/coercion.py) gives what typer's pydantic coercion
gives, on every option of every command, and leaves pydantic unimported on a normal run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer._coercion import build_runtime_param
from typer.main import get_command

from optnoise.cli import app
from optnoise.cli.coercion import PLAIN, plain_coercion, plain_value

#: Texts a user types, the odd ones included: each is either converted here exactly as pydantic
#: converts it, or handed to pydantic.
TEXTS = ["0", "1", "-3", "007", "12345678901234567890", "1.5", "-0.25", ".5", "5.", "1e-6", "1E+3", "1e500",
         "-1e-400", "inf", "nan", "-inf", " 1", "1 ", "+1", "1_000", "0x10", "1.0", "abc", "", "true", "a b",
         "dir/file.csv", "~/x", "é", "1e", "--", "0.1e1"]


def _commands():
    group = get_command(app)
    ctx = group.make_context("optnoise", ["--version"], resilient_parsing=True)
    return group, ctx


def _pydantic(param, text):
    try:
        return ("ok", build_runtime_param(param.type_descriptor)._coerce_value(text, param=param, ctx=None))
    except Exception as exc:  # noqa: BLE001 - the refusal itself is what is compared
        return ("refused", type(exc).__name__)


def test_every_option_is_plain():
    group, ctx = _commands()
    odd = [(name, p.name, p.type_descriptor.annotation) for name, cmd in group.commands.items() for p in cmd.params
           if p.type_descriptor.annotation not in (*PLAIN, bool) or p.multiple or p.nargs != 1]
    assert odd == []


@pytest.mark.parametrize("annotation", [int, float, str, Path])
def test_plain_values_equal_pydantic(annotation):
    group, ctx = _commands()
    param = next(p for cmd in group.commands.values() for p in cmd.params
                 if p.type_descriptor.annotation is annotation)
    converted = 0
    for text in TEXTS:
        mine = plain_value(annotation, text)
        if mine is None:
            continue
        converted += 1
        kind, theirs = _pydantic(param, text)
        assert kind == "ok", (text, theirs)
        assert type(mine) is type(theirs) and (mine == theirs or (mine != mine and theirs != theirs)), (text, mine,
                                                                                                     theirs)
    assert converted >= 4  # the fast path is taken, not only the fallback


def test_every_command_gets_the_plain_coercion():
    group, ctx = _commands()
    for name in group.commands:
        cmd = group.get_command(ctx, name)
        assert all(getattr(p, "_runtime_param", None) is not None for p in cmd.get_params(ctx)), name
    assert plain_coercion(cmd.get_params(ctx)) == 0  # already given: nothing changes twice


def test_a_normal_run_does_not_import_pydantic_and_a_refusal_still_names_the_flag():
    code = ("import sys; from optnoise.cli import main; sys.argv[1:] = {argv!r}\n"
            "try:\n    main()\nexcept SystemExit as e:\n    print('rc', e.code, 'pydantic' in sys.modules)")
    run = lambda argv: subprocess.run([sys.executable, "-c", code.format(argv=argv)], capture_output=True, text=True)
    ok = run(["verify", "--family", "geometric:0.5", "--epsilon", "1", "--compose", "3", "--json"])
    assert ok.stdout.strip().endswith("rc 0 False"), ok.stdout[-200:] + ok.stderr
    bad = run(["verify", "--family", "geometric:0.5", "--epsilon", "1", "--compose", "1.5"])
    assert bad.stdout.strip().endswith("rc 2 True")
    assert bad.stderr.startswith("error: invalid --compose: '1.5'; accepted: an integer")
