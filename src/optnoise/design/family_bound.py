"""A calibrated family's distance from the best noise on Z: proven lower bounds per cost.

A request naming a ``family`` (:func:`optnoise.design.calibrate.calibrate`) has no objective of
its own (it may name no cost). For noise on the integer line under ``(eps, delta)``-DP the
calibrated member is scored by each cost of :data:`LINE_COSTS` (all non-decreasing in
``|x|``) and compared with a proven lower bound on that cost over *every* noise on Z meeting
the same target and neighbourhood (:func:`~optnoise.design.releases_bound.line_releases_bound`
at one release: the window relaxation with the mass beyond the window charged at the cost of
its first point, an LP dual checked in outward-rounded arithmetic; docs/proofs/k-release-bound.md).
Not covered (``cost_bounds`` absent): a family on ``{0..n}`` (cyclic noise or a clamped
channel), a PDP or attack target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..costs import expected_cost, parse_cost
from ..neighbourhood import Neighbourhood
from ..pmf import IntegerPMF
from .bounds import GAP_TOLERANCE, Bound, relative_gap
from .calibrate import CalibratedDesign
from .releases_bound import level_window, line_releases_bound
from .request import Request


#: Costs a calibrated family on Z is scored by (each non-decreasing in ``|x|``).
LINE_COSTS: tuple[str, ...] = ("abs", "sq")


@dataclass(frozen=True, eq=False)
class BoundedCalibration(CalibratedDesign):
    """A :class:`~optnoise.design.calibrate.CalibratedDesign` on Z with, per cost of
    :data:`LINE_COSTS`, the member's ``expected_cost``, a proven ``lower_bound`` on the best
    noise's, ``bound_method``, ``gap`` and ``optimal`` (gap within ``gap_tolerance``)."""

    cost_bounds: dict = field(default_factory=dict)

    def report_json(self) -> dict:
        return {**super().report_json(), "cost_bounds": self.cost_bounds}


def score(value: float, bound: Bound | None) -> dict:
    """One cost's entry of ``cost_bounds``."""
    ok = bound is not None and math.isfinite(bound.value)
    gap = relative_gap(value, bound.value) if ok else None  # type: ignore[union-attr]
    return {"expected_cost": value, "lower_bound": bound.value if ok else None,  # type: ignore[union-attr]
            "bound_method": bound.method if ok else None, "gap": gap,  # type: ignore[union-attr]
            "optimal": gap is not None and gap <= GAP_TOLERANCE, "gap_tolerance": GAP_TOLERANCE}


def family_bounds(request: Request, pmf: object) -> dict | None:
    """``{cost: score}`` of a calibrated member on Z (module docstring), or ``None`` where none
    is proven here."""
    target, nb = request.target, request.neighbours
    if not isinstance(pmf, IntegerPMF) or request.n is not None or not isinstance(nb, Neighbourhood) \
            or target is None or target.notion != "dp":
        return None
    shifts = nb.integer_shifts()
    half = level_window(target.epsilon, target.delta, 1, max(abs(s) for s in shifts))
    out = {}
    for name in LINE_COSTS:
        c = parse_cost(name)
        out[name] = score(expected_cost(pmf, c),
                          line_releases_bound(half, shifts, target.epsilon, target.delta, 1, c))
    return out


def with_bound(got: CalibratedDesign, request: Request) -> CalibratedDesign:
    """``got`` with its ``cost_bounds`` (:func:`family_bounds`), or ``got`` itself."""
    bounds = family_bounds(request, got.representation)
    if bounds is None:
        return got
    return BoundedCalibration(got.family, got.parameter, got.parameter_name, got.mechanism, got.boundary,
                              got.composed, got.notes, got.margin, got.member, cost_bounds=bounds)


__all__ = ["LINE_COSTS", "BoundedCalibration", "family_bounds", "score", "with_bound"]
