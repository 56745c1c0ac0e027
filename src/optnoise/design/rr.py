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
        """A proven lower bound on the error rate of *any* channel on the categories under pure
        ``eps``-DP with every category able to become any other (``None`` under approximate DP,
        or with fewer neighbours: Holohan et al.'s theorem stands there unproven by a bound).

        The dual certificate of :func:`~optnoise.design.bounds.complete_values` with ``u_q =
        (K - 1) / (K (e^eps + K - 1))`` for every ``q`` and ``c[q, y] = [q != y] / K`` (``1 / K``
        rounded down, so every channel's float cost is at most its true one). With ``u``
        constant every column of ``c - u`` is a permutation of column 0, so column 0's proven
        value is every column's; a shortfall lowers every ``u_q`` by it (as
        :func:`~optnoise.design.bounds.repair` would, column by column). ``sum u`` rounded down.
        """
        import numpy as np

        from .bounds import complete_values, down, exp_up, sum_down
        k, eps = self.categories, self.target.epsilon
        shifts = {int(s[0]) % k for s in self.mechanism.neighbourhood.cyclic_shifts((k,))}
        if self.target.delta != 0 or shifts != set(range(1, k)):
            return None
        e_up = exp_up(eps)
        if not math.isfinite(e_up):
            return None
        col = np.full(k, float(down(1.0 / k)))
        col[0] = 0.0
        u = np.full(k, (k - 1) / (k * (math.exp(eps) + k - 1)))
        value = float(complete_values(col[:, None], u, e_up)[0])
        if value < 0:
            u = down(u + value)
        return sum_down(u)

    @property
    def gap(self) -> float | None:
        """Relative gap of the error rate above :attr:`lower_bound` (``None`` without one)."""
        from .bounds import relative_gap
        return None if self.lower_bound is None else relative_gap(self.expected_cost, self.lower_bound)

    @property
    def optimal(self) -> bool:
        """Within :data:`~optnoise.design.bounds.GAP_TOLERANCE` of the proven bound; under
        approximate DP Holohan et al.'s theorem (no bound computed)."""
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
