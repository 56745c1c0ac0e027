"""The optimal (eps, delta) K-ary randomized response (Holohan et al., Theorems 8-10), as a design."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from ..families.rr import rr_error_bounds, rr_optimal_p, rr_pmf
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..resources import check, distances_bytes, pairs_bytes
from ..target import Target, check_integer
from .calibrate import CalibratedDesign, calibrate
from .report import DesignResult
from .request import Request


@dataclass(frozen=True, eq=False)
class RRDesign(DesignResult):
    """Result of :func:`design_rr` (docs/cli.md ``rr`` keys in :meth:`to_json`)."""

    categories: int
    target: Target
    neighbourhood: Neighbourhood | None = None

    @property
    def p_other(self) -> float:
        """Probability of reporting each other category: ``(1 - delta) / (e^eps + K - 1)``."""
        return rr_optimal_p(self.categories, self.target.epsilon, self.target.delta)

    @property
    def p_keep(self) -> float:
        return 1.0 - (self.categories - 1) * self.p_other

    @cached_property
    def mechanism(self) -> Mechanism:
        """K-ary randomized response as cyclic noise on ``{0..K-1}``; a category may become any
        other, so the neighbourhood is every distance (the per-record unit)."""
        nb = self.neighbourhood if self.neighbourhood is not None else Neighbourhood.bd(self.categories - 1)
        return Mechanism(rr_pmf(self.categories, self.p_other), nb, self.target,
                         f"randomized response, K={self.categories}")



    cost = "er"
    method = "closed-form"
    solve_seconds = 0.0
    notes = ()

    @cached_property
    def lower_bound(self) -> float | None:
        """A proven lower bound on the error rate (averaged over the categories, hence also the
        worst one) of *any* channel on the categories under ``(eps, delta)``-DP with every
        category able to become any other (``None`` with fewer neighbours: Holohan et al.'s
        theorem stands there unproven by a bound). :func:`rr_dual_bound`."""
        k = self.categories
        shifts = {int(s[0]) % k for s in self.mechanism.neighbourhood.cyclic_shifts((k,))}
        if shifts != set(range(1, k)):
            return None
        return rr_dual_bound(k, self.target.epsilon, self.target.delta)

    @property
    def gap(self) -> float | None:
        """Relative gap of the error rate above :attr:`lower_bound` (``None`` without one)."""
        from .bounds import relative_gap
        return None if self.lower_bound is None else relative_gap(self.expected_cost, self.lower_bound)

    @property
    def optimal(self) -> bool:
        """Within :data:`~optnoise.design.bounds.GAP_TOLERANCE` of the proven bound; with fewer
        neighbours than every pair, Holohan et al.'s theorem (no bound computed)."""
        from .bounds import GAP_TOLERANCE
        return self.gap <= GAP_TOLERANCE if self.gap is not None else True

    @property
    def expected_cost(self) -> float:
        """The error rate ``(K - 1) p_other`` (what randomized response minimises)."""
        return (self.categories - 1) * self.p_other

    def report_json(self) -> dict:
        lower, upper = rr_error_bounds(self.categories, self.target.epsilon, self.target.delta)
        return {"categories": self.categories, "epsilon": self.target.epsilon,
                "delta": self.target.delta, "p_keep": self.p_keep, "p_other": self.p_other,
                "error_rate": self.expected_cost,
                "error_bounds": {"lower": lower, "upper": upper}, "lower_bound": self.lower_bound, "gap": self.gap,
                **self.privacy_json()}


def rr_dual_bound(categories: int, epsilon: float, delta: float) -> float | None:
    """A float ``<=`` the least uniform-prior error rate of any ``(eps, delta)``-DP channel on
    ``K`` categories with every pair neighbours, from a dual solution checked in rationals.

    The LP (with ``E = e^eps``): minimise ``sum_{q != y} P[q, y] / K`` over ``P >= 0``, ``t >= 0``
    with ``sum_y P[q, y] = 1`` (multiplier ``u_q``), ``P[a, y] - E P[b, y] - t[a, b, y] <= 0``
    (``lam[a, b, y] >= 0``) and ``sum_y t[a, b, y] <= delta`` (``nu[a, b] >= 0``) for every
    ``a != b`` -- the hockey-stick form of ``(eps, delta)``-DP for every event. For every
    feasible point the cost is at least ``sum u - delta sum nu`` plus the reduced costs times
    the variables (weak duality), so that sum is a bound when every reduced cost is ``>= 0``.
    The dual used (the permutation-symmetric one that Holohan et al.'s optimum suggests):
    ``lam[a, b, a] = nu[a, b] = l = 1 / (K (K - 1 + E))`` and every other ``lam`` 0, ``u_q =
    (K - 1) l``. Reduced costs: ``P[q, q]``: ``-u + (K - 1) l = 0``; ``P[q, y != q]``:
    ``1/K - u - E l = 0``; ``t[a, b, a]``: ``nu - l = 0``, other ``t``: ``nu >= 0``. So the bound
    is ``K u - delta K (K - 1) l = (K - 1)(1 - delta) / (E + K - 1)``, Holohan et al.'s error
    rate itself (Theorem 10): tight. Exactness: ``E`` is the rational value of a float ``>=
    e^eps`` (:func:`~optnoise.design.bounds.exp_up`) -- with ``E >= e^eps`` the reduced cost
    ``1/K - u - e^eps l`` is only larger, the others do not involve ``E`` -- the reduced costs
    are checked ``>= 0`` and the bound computed in :class:`fractions.Fraction`, then rounded
    down to a float. ``None`` where ``e^eps`` exceeds the float range.
    """
    from fractions import Fraction

    from .bounds import down, exp_up
    e_up = exp_up(epsilon)
    if not math.isfinite(e_up):
        return None
    k, e, d = Fraction(int(categories)), Fraction(e_up), Fraction(delta)
    lam = 1 / (k * (k - 1 + e))
    u = (k - 1) * lam
    reduced = (-u + (k - 1) * lam, 1 / k - u - e * lam, lam - lam, lam)   # P[q,q], P[q,y], t[a,b,a], other t
    if min(reduced) < 0:
        raise ArithmeticError("randomized response dual is not feasible")  # cannot happen (exact algebra above)
    value = k * u - d * k * (k - 1) * lam
    f = float(value)
    return float(down(f)) if Fraction(f) > value else f


def check_memory(categories: int, max_memory: int | None) -> None:
    """Refuse, naming ``categories``, an analysis of K-ary randomized response that would not
    fit ``max_memory``: every category may become any other, ``2 (K - 1)`` ordered pairs of
    ``K`` masses (:mod:`optnoise.resources`)."""
    k = int(categories)
    check(pairs_bytes(2 * (k - 1), k) + distances_bytes(k), parameter="categories", value=categories,
          what=f"the analysis of {k}-ary randomized response ({2 * (k - 1)} pairs of {k} masses)",
          max_memory=max_memory)


def solve_rr(request: Request) -> RRDesign | CalibratedDesign:
    """Categories: under approximate DP the optimal randomized response (Holohan et al.
    Theorems 8 and 10; optimal for any neighbourhood of categories, since it is optimal when
    every category may become any other); under PDP the randomized-response family calibrated
    to the target (one monotone search).

    ``request.max_memory`` bounds its analysis (every category may become any other:
    ``2 (K - 1)`` ordered pairs of ``K`` masses; :mod:`optnoise.resources`).
    """
    k, target = request.size, request.target
    check_memory(k, request.max_memory)
    if target.notion != "dp":  # type: ignore[union-attr]
        return calibrate("rr", request)
    rr_optimal_p(k, target.epsilon, target.delta)  # type: ignore[union-attr]  # the closed form's own range
    return RRDesign(k, target, request.neighbours)  # type: ignore[arg-type]


def design_rr(categories: int, *, epsilon: float, delta: float = 0.0, max_memory: int | None = None) -> RRDesign:
    """Holohan et al. Theorems 8 and 10: the most accurate (eps, delta)-DP K-ary randomized response.

    A thin wrapper, kept for one version (deprecated): ``optnoise.design(optnoise.Request(
    space="categories", n=K - 1, target=Target(epsilon, delta)))`` answers the same request.
    ``max_memory`` bounds its analysis (:func:`solve_rr`).

    >>> d = design_rr(4, epsilon=1.0)
    >>> round(d.p_keep, 4), d.mechanism.meets()
    (0.4754, True)
    """
    k = check_integer(categories, parameter="categories", minimum=2, accepted="an integer number of categories >= 2")
    target = Target(epsilon, delta)  # a design's target: epsilon > 0 (one message for -1 and 0), 0 <= delta < 1
    rr_optimal_p(k, epsilon, delta)
    check_memory(k, max_memory)      # before the request lists every distance
    request = Request(space="categories", n=k - 1, target=target, max_memory=max_memory)
    return solve_rr(request)  # type: ignore[return-value]
