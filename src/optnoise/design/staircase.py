"""The optimal staircase for a cost (Geng & Viswanath 2016), as a design with a report.

Continuous: the staircase ``f_gamma`` (37)-(38) with ``gamma*`` from (43) for ``|x|``,
(50) for ``x^2`` and a numeric minimisation (Theorem 4) for any other cost, against
Laplace noise with scale ``Delta / eps`` ((46), (52)). Discrete (integer ``Delta``): the
staircase PMF ``P_r`` (82)-(83) with ``r*`` (Theorem 13) against the geometric mechanism,
optionally checked by the integer-line LP (:func:`optnoise.design.integer.design_integer`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from ..costs import Cost, parse_cost
from ..errors import InvalidParameterError
from ..families import staircase as st
from ..mechanism import Mechanism
from ..resources import array_bytes, check
from ..target import check_sensitivity
from .integer import design_integer, line_mechanism
from .report import DesignResult



@dataclass(frozen=True, eq=False)
class StaircaseDesign(DesignResult):
    """Result of :func:`design_staircase` (docs/cli.md ``staircase`` keys in :meth:`to_json`)."""

    epsilon: float
    sensitivity: float
    cost: Cost
    discrete: bool
    report: dict = field(default_factory=dict)

    @property
    def gamma(self) -> float | None:
        return self.report.get("gamma")

    @property
    def r(self) -> int | None:
        return self.report.get("r")

    @cached_property
    def mechanism(self) -> Mechanism:
        """The discrete staircase ``P_r`` on Z (BD ``Delta``, pure target); the continuous
        staircase has real outputs and is not a releasable mechanism here."""
        if not self.discrete:
            raise InvalidParameterError("discrete", False, "a discrete staircase (the continuous one has real outputs)")
        pmf = st.discrete_staircase_pmf(self.epsilon, int(self.sensitivity), int(self.report["r"]))
        return line_mechanism(pmf, self.epsilon, int(self.sensitivity), f"discrete staircase P_{self.report['r']}")

    def to_json(self) -> dict:
        out = {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "cost": self.cost.name,
               "discrete": self.discrete, **self.report}
        return {**self.mechanism.to_json(), **out} if self.discrete else out


#: Most window half-width times sensitivity of the staircase's proven bound (``2 Delta (2L + 1)``
#: ratio rows: about 80,000 at the cap).
BOUND_WINDOW_CELLS = 20000


def bound_window(epsilon: float, sensitivity: int) -> int:
    """The window ``-L..L`` of the staircase's bound: where the geometric tail ``e^(-eps x / Delta)``
    is below ``e^-30``, at least ``max(4 Delta, 8)`` and at most ``BOUND_WINDOW_CELLS / Delta``
    (a narrower window gives a valid, looser bound)."""
    d = int(sensitivity)
    return max(8, 4 * d, min(math.ceil(30.0 * d / epsilon), BOUND_WINDOW_CELLS // d))


def staircase_bound(epsilon: float, sensitivity: int, cost: Cost, value: float,
                    max_memory: int | None = None) -> dict[str, Any]:
    """``lower_bound`` (a proven lower bound on ``E c(X)`` over *every* eps-DP noise ``X`` on Z with
    sensitivity ``Delta``: :func:`~optnoise.design.line_bound.line_lower_bound`, the window
    relaxation's LP dual checked in outward-rounded arithmetic; ``None`` for a cost not known to
    be non-decreasing in ``|x|``), ``bound_method``, ``gap`` (of ``value`` above it) and
    ``gap_tolerance``."""
    from .bounds import GAP_TOLERANCE, relative_gap
    from .integer import tailed_lp_bytes
    from .line_bound import line_lower_bound
    half = bound_window(epsilon, sensitivity)
    check(tailed_lp_bytes(2 * half + 1, sensitivity), parameter="sensitivity", value=sensitivity,
          max_memory=max_memory, what=f"the bound's LP over a window of {2 * half + 1} masses")
    b = line_lower_bound(half, sensitivity, epsilon, cost)
    ok = b is not None and math.isfinite(b.value)
    return {"lower_bound": b.value if ok else None,  # type: ignore[union-attr]
            "bound_method": f"{b.method} over noise on all of Z (outward rounded, at e^eps; window half-width {half})"
            if ok else None,  # type: ignore[union-attr]
            "gap": relative_gap(value, b.value) if ok else None, "gap_tolerance": GAP_TOLERANCE}  # type: ignore[union-attr]


def design_staircase(epsilon: float, sensitivity: float = 1.0, cost: str | Cost | Callable = "abs", *,
                     discrete: bool = False, gamma: float | None = None, r: int | None = None,
                     lp: bool = False, max_memory: int | None = None, bound: bool = True) -> StaircaseDesign:
    """The optimal staircase (or a given member) for ``cost``, its cost and the gain over
    Laplace (continuous) or the geometric mechanism (discrete).

    Parameters
    ----------
    epsilon:
        Pure epsilon, ``> 0``.
    sensitivity:
        ``Delta``; an integer with ``discrete``.
    cost:
        ``abs``, ``sq``, ``pow:K`` or a vectorised callable.
    discrete:
        The staircase PMF ``P_r`` for integer-valued queries.
    gamma, r:
        Evaluate this member instead of the optimum (``gamma`` continuous, ``r`` discrete).
    lp:
        With ``discrete``: also solve the integer-line LP (Theorem 13 check).
    max_memory:
        Bytes the computation may take (:mod:`optnoise.resources`): every member ``P_r``
        for ``discrete``, the LP with ``lp``.
    bound:
        With ``discrete``: also the proven lower bound over all noise on Z
        (:func:`staircase_bound`: an LP over a window, seconds at small epsilon); without it
        the report has no ``lower_bound``.
    """
    eps = st.check_eps(epsilon)
    c = parse_cost(cost)
    if c.circular:
        raise InvalidParameterError("cost", c.name, "abs, sq or pow:K (a cost on the real line)")
    report: dict[str, Any] = {}
    if discrete:
        if gamma is not None:
            raise InvalidParameterError("gamma", gamma, "no gamma with discrete=True (gamma is for the continuous "
                                                        "staircase; r picks a discrete member)")
        d = check_sensitivity(sensitivity)
        check(array_bytes(d, 8, copies=12), parameter="sensitivity", value=sensitivity, max_memory=max_memory,
              what=f"the costs of the {d} staircases P_r")
        choice = st.r_star(eps, d, c)
        chosen = choice.r if r is None else st.check_r(r, d)
        value = choice.costs[chosen - 1]
        base = st.geometric_cost(eps, d, c)
        report.update({"r": chosen, "r_star": choice.r, "optimal": chosen == choice.r, "expected_cost": value,
                       "geometric_cost": base, "gain": base / value if value > 0 else None,
                       "costs_by_r": list(choice.costs)})
        if bound:
            report.update(staircase_bound(eps, d, c, value, max_memory))
        if lp:
            des = design_integer(eps, d, c, max_memory=max_memory)
            report["lp_expected_cost"] = des.expected_cost
            report["lp_relative_gap"] = abs(des.expected_cost - choice.expected_cost) / choice.expected_cost
            # a proven lower bound over every eps-DP noise on Z (design/line_bound.py)
            report["lp_lower_bound"] = des.lower_bound
            report["lp_gap"] = des.gap
        return StaircaseDesign(eps, d, c, True, report)
    if r is not None or lp:
        raise InvalidParameterError("r" if r is not None else "lp", r if r is not None else lp, "only with discrete=True")
    d = check_sensitivity(sensitivity, integer=False)
    g_star = st.gamma_star(eps, c, d)
    g = g_star if gamma is None else gamma
    mech = st.Staircase(eps, d, g)
    value = mech.expected_cost(c)
    base = st.laplace_cost(eps, c, d)
    heur = st.gamma_heuristic(eps)
    report.update({"gamma": g, "gamma_star": g_star, "optimal": gamma is None, "expected_cost": value,
                   "laplace_cost": base, "gain": base / value if value > 0 else None, "gamma_heuristic": heur,
                   "heuristic_cost": st.Staircase(eps, d, heur).expected_cost(c),
                   "gamma_source": {1.0: "closed form (43)", 2.0: "closed form (50)"}.get(
                       c.power, "numeric minimisation over gamma (Theorem 4)")})
    if c.power == 1.0:
        report["closed_form_cost"] = st.cost_star_abs(eps, d)
    elif c.power == 2.0:
        report["closed_form_cost"] = st.cost_star_sq(eps, d)
    return StaircaseDesign(eps, d, c, False, report)
