"""The optimal (eps, delta) K-ary randomized response (Holohan et al., Theorems 8-10), as a design."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..families.rr import rr_error_bounds, rr_optimal_p, rr_pmf
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..resources import check, distances_bytes, pairs_bytes
from ..target import Target, check_integer
from .report import DesignResult


@dataclass(frozen=True, eq=False)
class RRDesign(DesignResult):
    """Result of :func:`design_rr` (docs/cli.md ``rr`` keys in :meth:`to_json`)."""

    categories: int
    target: Target

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
        return Mechanism(rr_pmf(self.categories, self.p_other), Neighbourhood.bd(self.categories - 1),
                         self.target, f"randomized response, K={self.categories}")



    def to_json(self) -> dict:
        lower, upper = rr_error_bounds(self.categories, self.target.epsilon, self.target.delta)
        return {**self.mechanism.to_json(), "categories": self.categories, "epsilon": self.target.epsilon,
                "delta": self.target.delta, "p_keep": self.p_keep, "p_other": self.p_other,
                "error_rate": (self.categories - 1) * self.p_other,
                "error_bounds": {"lower": lower, "upper": upper}, "certificate": self.analysis.to_json()}


def design_rr(categories: int, *, epsilon: float, delta: float = 0.0, max_memory: int | None = None) -> RRDesign:
    """Holohan et al. Theorems 8 and 10: the most accurate (eps, delta)-DP K-ary randomized response.

    ``max_memory`` bounds its analysis (every category may become any other: ``2 (K - 1)``
    ordered pairs of ``K`` masses; :mod:`optnoise.resources`).

    >>> d = design_rr(4, epsilon=1.0)
    >>> round(d.p_keep, 4), d.mechanism.meets()
    (0.4754, True)
    """
    k = check_integer(categories, parameter="categories", minimum=2, accepted="an integer number of categories >= 2")
    Target(epsilon, delta)  # a design's target: epsilon > 0 (one message for -1 and 0), 0 <= delta < 1
    rr_optimal_p(k, epsilon, delta)
    check(pairs_bytes(2 * (k - 1), k) + distances_bytes(k), parameter="categories", value=categories,
          what=f"the analysis of {k}-ary randomized response ({2 * (k - 1)} pairs of {k} masses)",
          max_memory=max_memory)
    return RRDesign(int(categories), Target(epsilon, delta))
