"""The integer-line calibration searched under the largest shifts first (issue 23, item 4c)
finds the same edge as the search under every shift, and falls back when a smaller shift is
the binding one."""

from __future__ import annotations

import importlib

import pytest

from optnoise import Neighbourhood, Target
from optnoise.analysis import privacy_profile
from optnoise.design import Request, calibrate
from optnoise.families import boundary_search, calibration_of, parse_family


def _full_edge(family: str, nb: Neighbourhood, target: Target) -> float:
    """The plain search of every shift, written out independently of design.calibrate."""
    largest = max(abs(s) for s in nb.integer_shifts())
    def ok(v: float) -> bool:
        return privacy_profile(parse_family(f"{family}:{v!r}")[1], nb).meets(target)
    return boundary_search(calibration_of(family), largest, ok, more_private_ok=True)


@pytest.mark.parametrize("bd, eps, delta", [(4, 0.5, 1e-5), (7, 1.0, 1e-6)])
def test_screened_edge_equals_the_search_under_every_shift(bd: int, eps: float, delta: float) -> None:
    nb = Neighbourhood.bd(bd)
    got = calibrate("discrete-gaussian", Request(space="integer", target=Target(eps, delta), neighbourhood=nb,
                                                 family="discrete-gaussian"))
    # the calibration leaves a relative room of 1e-6 under delta for the quantized weights
    want = _full_edge("discrete-gaussian", nb, Target(eps, delta * (1 - 1e-6)))
    assert got.parameter == pytest.approx(want, rel=1e-6)
    assert got.mechanism.meets()


def test_a_binding_smaller_shift_sends_the_search_back_to_every_shift(monkeypatch) -> None:
    """When the whole neighbourhood fails at the point found under the largest shifts, the
    answer is the search under every shift. Made to happen by analysing the whole
    neighbourhood {1, 3} as {1, 3, 6} (a stricter rule than its largest shift's)."""
    cal_mod = importlib.import_module("optnoise.design.calibrate")   # the module (the package exports the function)
    real = cal_mod.privacy_profile
    seen: list[tuple[int, ...]] = []

    def stricter(pmf, pairs, *args, **kwargs):
        shifts = tuple(pairs.integer_shifts())
        seen.append(shifts)
        if shifts == (-3, -1, 1, 3):
            pairs = Neighbourhood((1, 3, 6))
        return real(pmf, pairs, *args, **kwargs)
    monkeypatch.setattr(cal_mod, "privacy_profile", stricter)
    got = calibrate("discrete-gaussian", Request(space="integer", target=Target(1.0, 1e-6),
                                                 neighbourhood=Neighbourhood((1, 3)), family="discrete-gaussian"))
    assert seen[0] == (-3, 3)                       # the first search: the largest shifts alone
    want = _full_edge("discrete-gaussian", Neighbourhood((1, 3, 6)), Target(1.0, 1e-6 * (1 - 1e-6)))
    assert got.parameter == pytest.approx(want, rel=1e-6)
    screened = _full_edge("discrete-gaussian", Neighbourhood((3,)), Target(1.0, 1e-6 * (1 - 1e-6)))
    assert got.parameter > screened * 1.5            # not the screened edge
