"""Guard beside tests/test_layering.py: every check of a target value goes through ``optnoise.target``.

An epsilon or a delta is validated by :func:`optnoise.target.check_epsilon`,
:func:`~optnoise.target.check_epsilons` or :func:`~optnoise.target.check_delta` (or by building a
:class:`~optnoise.target.Target`), with the messages and ranges they keep; a request's rules
about them live in :mod:`optnoise.design.request`. This test fails when a new hand-written
check appears elsewhere: an ``if`` that compares an epsilon or a delta with a number and raises
an :class:`~optnoise.errors.InvalidParameterError` naming an epsilon or a delta.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "optnoise"
HOME = SRC / "target.py"

#: Names under which an epsilon or a delta travels.
TARGET_NAMES = {"epsilon", "eps", "e", "delta", "dlt", "d", "epsilons", "deltas", "d1"}
#: Parameters (and flags) an error about an epsilon or a delta names.
TARGET_PARAMETERS = {"epsilon", "delta", "epsilons", "deltas", "--epsilon", "--delta", "--epsilons"}


def _operand_name(node: ast.AST) -> str | None:
    """The target name an operand is, directly or through ``float(...)``/``abs(...)``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("float", "abs") and node.args:
        return _operand_name(node.args[0])
    return None


def _compares_a_target_value(test: ast.AST) -> bool:
    for cmp in (n for n in ast.walk(test) if isinstance(n, ast.Compare)):
        operands = [cmp.left, *cmp.comparators]
        names = {_operand_name(o) for o in operands} & TARGET_NAMES
        numbers = [o for o in operands if isinstance(o, ast.Constant) and isinstance(o.value, (int, float))
                   and not isinstance(o.value, bool)]
        if names and numbers:
            return True
    return False


def _raises_about_a_target(body: list[ast.stmt]) -> bool:
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                and getattr(node.exc.func, "id", "") == "InvalidParameterError" and node.exc.args:
            first = node.exc.args[0]
            if isinstance(first, ast.Constant) and first.value in TARGET_PARAMETERS:
                return True
    return False


def hand_written_checks(source: str) -> list[int]:
    """Lines of the ``if`` statements that check an epsilon or a delta by hand."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.If) and _compares_a_target_value(node.test) and _raises_about_a_target(node.body)]


def test_the_detector_finds_a_hand_written_check():
    written = "def f(epsilon, delta):\n" \
              "    if not (0.0 <= float(delta) < 1.0):\n" \
              "        raise InvalidParameterError('delta', delta, 'a real number with 0 <= delta < 1')\n" \
              "    if eps > 0:\n" \
              "        pass\n" \
              "    if epsilon < 1e-9:\n" \
              "        raise InvalidParameterError('epsilon', epsilon, 'a real number >= 1e-9')\n"
    assert hand_written_checks(written) == [2, 6]
    # through the target's checks, or a rule that names another parameter: not flagged
    assert hand_written_checks("if delta == 0:\n    raise InvalidParameterError('n', n, 'x')\n") == []
    assert hand_written_checks("d = check_delta(delta)\n") == []


@pytest.mark.slow
def test_no_hand_written_check_of_a_target_value_outside_target_py():
    bad = [f"{path.relative_to(SRC)}:{line}" for path in sorted(SRC.rglob("*.py")) if path != HOME
           for line in hand_written_checks(path.read_text())]
    assert not bad, "check epsilons and deltas with optnoise.target.check_*: " + ", ".join(bad)
