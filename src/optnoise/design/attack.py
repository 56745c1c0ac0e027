"""The optimal design for an attack target: the right member of an (epsilon, delta) family.

**The family** (docs/attacks.md). A mechanism meets ``(epsilon, delta)``-DP iff its trade-off
curve lies above ``f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta -
alpha))`` (Dong, Roth & Su 2022, Prop. 2.5; the second line needs a symmetric neighbourhood).
So ``(eps, delta)``-DP bounds the attacker's TPR at FPR ``alpha`` by ``1 - f_{eps,delta}(alpha)``,
and a mechanism satisfies "TPR <= beta at FPR alpha" through *some* member iff

    delta_M(eps) <= d(eps) := max(beta - e^eps alpha, 1 - alpha - e^eps (1 - beta))   for some eps >= 0

(the first term is the line of slope ``-e^eps``; the second the line of slope ``-e^-eps``,
i.e. the hockey-stick at ``-eps``; symmetric neighbourhoods only). That is, by the duality of
DRS Prop. 2.12, iff the *convex hull* of its curve meets the target: the union over ``eps``
of the members ``(eps, d(eps))``. (The exact curve, the lower envelope over pairs, can meet
the target when its hull does not -- a different ``eps`` for each pair; that set is not a
union of LP-feasible sets and is not searched here. Every design is *checked* on the exact
curve.) The members run from ``(eps -> 0, delta = beta - alpha)`` (total variation at most
``beta - alpha``) to the pure member ``eps_max = ln(beta / alpha)`` (or ``ln((1 - alpha) /
(1 - beta))`` when that is larger and the neighbourhood is symmetric).

**Where the optimum lies.** Let ``C(eps, delta)`` be the optimal cost under ``(eps,
delta)``-DP: non-increasing in both arguments (the feasible sets grow). The family's optimum
is ``min over eps of V(eps) = C(eps, d(eps))``; ``d`` decreases in ``eps``, so ``V`` trades a
larger epsilon against a smaller delta and is not monotone or unimodal in general. Two facts
bound it exactly:

* an interval ``[e1, e2]`` of members can do no better than ``C(e2, d(e1))``: every member
  in it implies ``(e2, d(e1))``-DP (a larger epsilon and delta), so that relaxed design's cost
  is a *proven lower bound* for the whole interval;
* the optimum is attained at a member ``eps*`` that is the log of a likelihood ratio of its
  own optimal design (the slope of that design's hull at ``alpha``; any member the design
  meets is as good), or at an end of the family.

:func:`design_attack` therefore runs a branch and bound over ``eps``: the value ``V`` at
points (upper bounds), the relaxed design on intervals (lower bounds), splitting every
interval whose lower bound is below the best value by more than ``gap``, until none is left.
The result is the best member's design and a proven lower bound on the family's optimum
(equal to its cost up to ``gap`` and the solver's tolerance): the search is exact in that
sense -- no member's design is better than the returned one by more than the reported gap.

**Gaussian DP** (``max_mu``): ``f_{eps,delta}(0) = 1 - delta < 1 = G_mu(0)`` for ``delta > 0``,
so only pure members imply mu-GDP, and pure ``eps``-DP does iff ``eps <=
ln(Phi(mu/2) / Phi(-mu/2))`` (:func:`~optnoise.analysis.tradeoff.pure_epsilon_for_mu`): the
right member is that pure epsilon (with a TPR target as well: the smaller of the two pure
epsilons). Designing under the whole ``G_mu`` curve (every ``eps`` at once) is a
semi-infinite LP and is not done.

The design is made by a caller's ``design_for(Target) -> D`` (any design function) and
costed by ``cost_of(D) -> float``, so this plugs into any design of the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

from ..errors import DesignError, InvalidParameterError
from ..target import Target

D = TypeVar("D")

#: Relative margin by which the member a design is finally made for is tightened, so that a
#: float design meeting it with equality still meets the attack target on its exact curve.
MEMBER_MARGIN = 1e-9
#: Smallest epsilon of the family searched (a member at eps = 0 is not a Target; solvers need
#: e^eps - 1 well above their tolerances).
EPS_FLOOR = 1e-6


@dataclass(frozen=True)
class AttackDesign(Generic[D]):
    """The design for an attack target (:func:`design_attack`).

    ``design`` is what ``design_for`` returned for ``member`` (the ``(epsilon, delta)``
    target it was made for); ``cost`` its cost; ``lower_bound`` a proven lower bound on the
    cost of every member's design (``gap = cost - lower_bound``); ``members`` the members
    evaluated, ``(epsilon, delta, cost)``.
    """

    design: D
    member: Target
    target: Target
    cost: float
    lower_bound: float
    members: tuple[tuple[float, float, float], ...] = field(default_factory=tuple)

    @property
    def gap(self) -> float:
        return max(0.0, self.cost - self.lower_bound)

    def to_json(self) -> dict:
        return {"target": self.target.to_json(), "member": self.member.to_json(), "cost": self.cost,
                "lower_bound": self.lower_bound, "gap": self.gap, "designs_solved": len(self.members)}


class AttackResult:
    """An :class:`AttackDesign` as the details of a :class:`~optnoise.design.report.Design`:
    the member's design (its mechanism, cost and report keys), with the attack search's proven
    ``lower_bound`` over every member and its relative ``gap``, and the search under ``attack``
    (with ``checked``, the target checked on the exact curve of the sampled weights, under
    ``attack.exact_curve``)."""

    def __init__(self, found: AttackDesign, checked: dict | None = None) -> None:
        self.found = found
        self.checked = checked

    def __getattr__(self, name: str):
        return getattr(self.found.design, name)

    @property
    def lower_bound(self) -> float:
        return self.found.lower_bound

    @property
    def gap(self) -> float:
        return self.found.gap / max(abs(self.found.cost), 1e-300)

    def report_json(self) -> dict:
        search = self.found.to_json()
        if self.checked is not None:
            search["exact_curve"] = dict(self.checked)
        return {**self.found.design.report_json(), "attack": search}


def _exp_up(x: float) -> float:
    return math.nextafter(math.exp(x), math.inf)  # math.exp is within one ulp


def symmetric_neighbours(neighbours) -> bool:
    """Whether both lines of ``f_{eps,delta}`` count (module docstring): the neighbourhood is
    symmetric, or its listed pairs are closed under swapping."""
    if not neighbours.directed:
        return True
    if hasattr(neighbours, "pairs"):   # input pairs of a channel
        return set(neighbours.pairs) == {(b, a) for a, b in neighbours.pairs}

    def negated(d):
        return tuple(-v for v in d) if isinstance(d, tuple) else -d
    return set(neighbours.distances) == {negated(d) for d in neighbours.distances}


def member_delta(target: Target, epsilon: float, symmetric: bool) -> float:
    """``d(eps)`` (module docstring), rounded *down*: every mechanism meeting ``(eps, d)``
    has TPR at most ``max_tpr`` at ``at_fpr``. Negative values mean no member at ``eps``."""
    a, b = float(target.at_fpr), float(target.max_tpr)  # type: ignore[arg-type]
    e = _exp_up(epsilon)
    d = b - e * a
    if symmetric:
        d = max(d, 1.0 - a - e * (1.0 - b))
    if d <= 0:
        return d
    return math.nextafter(d * (1.0 - 4e-16), -math.inf)  # below the rounding of the two products


def pure_member(target: Target, symmetric: bool) -> float:
    """The largest pure epsilon implying the target (rounded down): the TPR bound's
    ``ln(max(beta / alpha, (1 - alpha) / (1 - beta)))`` and ``max_mu``'s
    :func:`~optnoise.analysis.tradeoff.pure_epsilon_for_mu`, whichever is smaller."""
    from ..analysis.tradeoff import pure_epsilon_for_mu
    eps = math.inf
    if target.max_tpr is not None:
        a, b = float(target.at_fpr), float(target.max_tpr)  # type: ignore[arg-type]
        ratio = b / a if a > 0 else math.inf
        if symmetric and b < 1:
            ratio = max(ratio, (1.0 - a) / (1.0 - b))
        eps = math.log(ratio) * (1.0 - 1e-15) if math.isfinite(ratio) else math.inf
        # rounded down: e^eps <= ratio, so the pure line meets the target
        while math.isfinite(eps) and eps > 0 and member_delta(target, eps, symmetric) < 0:
            eps = math.nextafter(eps, 0.0)
    if target.max_mu is not None:
        eps = min(eps, pure_epsilon_for_mu(target.max_mu))
    return eps


def _branch_and_bound(value: Callable[[float], float], interval_bound: Callable[[float, float], float],
                      eps_max: float, gap: float, exhausted: Callable[[], bool]) -> float:
    """Branch and bound over ``eps`` in ``[EPS_FLOOR, eps_max]`` (module docstring): ``value(eps)``
    is the cost of the member at ``eps`` (kept by the caller); every member in ``[e1, e2]``
    implies ``(e2, d(e1))``, so ``interval_bound(e1, e2)`` bounds the interval's costs below.
    Intervals whose bound is within ``gap`` of the best are closed; returns the proven lower bound."""
    lo, hi = EPS_FLOOR, eps_max
    points = [lo + (hi - lo) * k / 8 for k in range(9)]
    costs = {e: value(e) for e in points}
    intervals = [(points[k], points[k + 1]) for k in range(8)]
    bounds: dict[tuple[float, float], float] = {}
    while True:
        best = min(costs.values())
        tol = gap * max(1.0, abs(best)) if math.isfinite(best) else 0.0
        alive = []
        for iv in intervals:
            if iv not in bounds:
                bounds[iv] = interval_bound(*iv)
            if bounds[iv] < best - tol:
                alive.append(iv)
        if not alive or exhausted():
            return min([best] + [bounds[iv] for iv in alive])
        intervals = []
        for a, b in alive:
            mid = 0.5 * (a + b)
            costs[mid] = value(mid)
            intervals += [(a, mid), (mid, b)]


def design_attack(target: Target, design_for: Callable[[Target], D], cost_of: Callable[[D], float], *,
                  symmetric: bool = True, gap: float = 1e-4, max_designs: int = 200,
                  check: Callable[[D], bool] | None = None) -> AttackDesign[D]:
    """The cheapest design over the ``(epsilon, delta)`` members of an attack target.

    Parameters
    ----------
    target:
        An attack target (``Target.attack(max_tpr=..., at_fpr=...)`` and/or ``max_mu``).
    design_for:
        Makes the optimal design for an ``(epsilon, delta)`` target (e.g.
        ``lambda t: design_finite(n, target=t, ...)``); may raise :class:`DesignError`
        when a member is infeasible.
    cost_of:
        The cost of a design (e.g. ``lambda d: d.expected_cost``).
    symmetric:
        The neighbourhood is symmetric (both lines of ``f_{eps,delta}`` count).
    gap:
        Branch and bound tolerance, relative to the best cost (absolute below 1).
    max_designs:
        Designs solved at most; a search stopped by it reports its (larger) gap.
    check:
        Called on the final design (e.g. its exact curve meets ``target``); ``False`` raises
        :class:`DesignError`.

    Returns
    -------
    AttackDesign
        The design, the member it was made for and a proven lower bound (module docstring).
    """
    if not isinstance(target, Target) or target.notion != "attack":
        raise InvalidParameterError("target", target, "an attack target (Target.attack(...))")
    if target.max_tpr is not None and not target.at_fpr:
        raise InvalidParameterError("at_fpr", target.at_fpr, "an FPR > 0 for a design (at FPR 0 only the mass "
                                    "facing impossible outputs counts: no epsilon bounds it)")
    eps_max = pure_member(target, symmetric)
    members: list[tuple[float, float, float]] = []
    found: dict[float, tuple[float, D | None]] = {}

    def solve(t: Target) -> tuple[float, D | None]:
        try:
            got = design_for(t)
        except DesignError:
            return math.inf, None
        members.append((t.epsilon, t.delta, cost_of(got)))  # type: ignore[arg-type]
        return cost_of(got), got

    def value(eps: float) -> float:
        if eps not in found:
            found[eps] = solve(member_target(eps))
        return found[eps][0]

    def member_target(eps: float) -> Target:
        return Target(eps) if eps >= eps_max else Target(eps, max(member_delta(target, eps, symmetric), 0.0))

    if target.max_mu is not None or eps_max <= EPS_FLOOR:
        best_eps, lower = eps_max, None   # only the pure member (max_mu), or the family is one point
        value(best_eps)
    else:
        lower = _branch_and_bound(value, lambda a, b: solve(Target(b, max(member_delta(target, a, symmetric), 0.0)))[0],
                                  eps_max, gap, lambda: len(members) >= max_designs)
        best_eps = min(found, key=lambda e: found[e][0])
    best_cost = found[best_eps][0]
    if not math.isfinite(best_cost):
        raise DesignError(f"no member of {target.describe()} can be designed (every (epsilon, delta) tried is "
                          "infeasible)")
    final_target = member_target(best_eps)
    final_target = Target(final_target.epsilon * (1 - MEMBER_MARGIN), final_target.delta * (1 - MEMBER_MARGIN))
    cost, design = solve(final_target)
    if design is None:
        raise DesignError(f"the member {final_target.describe()} of {target.describe()} could not be designed")
    if check is not None and not check(design):
        raise DesignError(f"the design for {final_target.describe()} does not meet {target.describe()} on its exact "
                          "trade-off curve")
    return AttackDesign(design, final_target, target, cost, min(cost, lower) if lower is not None else cost,
                        tuple(members))


__all__ = ["AttackDesign", "AttackResult", "design_attack", "member_delta", "pure_member", "symmetric_neighbours"]
