"""The privacy profile of a mechanism: maxima over its ordered neighbouring pairs.

:func:`privacy_profile` builds the pairs once (:mod:`optnoise.analysis.pairs`) and
analyses them in floating point (:mod:`optnoise.analysis.floating`) or exactly
(:mod:`optnoise.analysis.exact`). :meth:`PrivacyProfile.meets` is the one rule for
"meets a target" in the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF
from ..target import MEETS_TOLERANCE, Notion, Target, check_delta, check_epsilon, check_notion
from .floating import FloatPair, PairAnalysis
from .pairs import neighbouring_pairs


@dataclass(frozen=True, eq=False)
class PrivacyProfile:
    """The privacy of a mechanism: maxima over its ordered neighbouring pairs.

    Methods take and return floats; ``math.inf`` means "no finite value". ``exact``
    profiles round every value outward (never optimistic).
    """

    pairs: tuple[PairAnalysis, ...]
    neighbourhood: Neighbourhood | InputPairs | None = None
    exact: bool = False
    space: str = "cyclic"

    def __post_init__(self) -> None:
        if not self.pairs:
            raise InvalidParameterError("neighbourhood", self.neighbourhood, "at least one neighbouring pair")

    @cached_property
    def epsilon_pure(self) -> float:
        """Tight pure epsilon (Qin et al. Theorem 1); ``inf`` if none is finite."""
        return max(pr.epsilon_pure for pr in self.pairs)

    def delta_dp(self, epsilon: float) -> float:
        """Tight ``delta`` of approximate DP at ``epsilon`` (hockey-stick maximum)."""
        eps = check_epsilon(epsilon, allow_inf=True)
        return max(pr.delta_dp(eps) for pr in self.pairs)

    def delta_pdp(self, epsilon: float) -> float:
        """Tight ``delta`` of probabilistic DP at ``epsilon`` (Kadam Def. 2)."""
        eps = check_epsilon(epsilon, allow_inf=True)
        return max(pr.delta_pdp(eps) for pr in self.pairs)

    def delta(self, epsilon: float, notion: Notion = "dp") -> float:
        """``delta_DP`` or ``delta_PDP`` at ``epsilon``."""
        return self.delta_dp(epsilon) if check_notion(notion) == "dp" else self.delta_pdp(epsilon)

    def epsilon_dp(self, delta: float) -> float:
        """Smallest ``epsilon`` with ``delta_DP(epsilon) <= delta``."""
        d = check_delta(delta)
        return max(pr.epsilon_dp(d) for pr in self.pairs)

    def epsilon_pdp(self, delta: float) -> float:
        """Smallest ``epsilon`` with ``delta_PDP(epsilon) <= delta``."""
        d = check_delta(delta)
        return max(pr.epsilon_pdp(d) for pr in self.pairs)

    def epsilon(self, delta: float, notion: Notion = "dp") -> float:
        """``epsilon_DP`` or ``epsilon_PDP`` at ``delta``."""
        return self.epsilon_dp(delta) if check_notion(notion) == "dp" else self.epsilon_pdp(delta)

    def meets(self, target: Target) -> bool:
        """Whether the mechanism guarantees ``target``: the one rule of the library.

        Pure targets (``delta = 0``) need ``epsilon_pure <= epsilon``; otherwise the delta
        of the target's notion at its epsilon must be ``<= delta``. A float profile is
        allowed a relative :data:`~optnoise.target.MEETS_TOLERANCE` (1e-12) on that
        comparison, for round-off in designs that meet a constraint with equality; an
        exact profile meets with no tolerance (its values are already rounded outward).

        >>> from optnoise import CyclicPMF, Neighbourhood, Target, privacy_profile
        >>> prof = privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1))
        >>> prof.meets(Target(0.7)), prof.meets(Target(0.6)), prof.meets(Target(0.6, 0.05))
        (True, False, True)
        """
        if not isinstance(target, Target):
            raise InvalidParameterError("target", target, "a Target(epsilon, delta, notion)")
        slack = 1.0 if self.exact else 1.0 + MEETS_TOLERANCE
        if target.pure:
            return self.epsilon_pure <= target.epsilon * slack
        return self.delta(target.epsilon, target.notion) <= target.delta * slack  # type: ignore[arg-type]

    def worst_pair(self, epsilon: float, notion: Notion = "dp") -> str:
        """Label of the pair attaining ``delta(epsilon)``."""
        eps = check_epsilon(epsilon, allow_inf=True)
        fn = (lambda pr: pr.delta_dp(eps)) if check_notion(notion) == "dp" else (lambda pr: pr.delta_pdp(eps))
        return max(self.pairs, key=fn).label

    def curve(self, epsilons: Iterable[float] | None = None, notion: Notion = "dp") -> tuple[np.ndarray, np.ndarray]:
        """``(epsilons, deltas)`` for plotting the privacy profile."""
        if epsilons is None:
            top = self.epsilon_pure if math.isfinite(self.epsilon_pure) else 10.0
            epsilons = np.linspace(0.0, max(top * 1.1, 1e-3), 200)
        eps = np.asarray(list(epsilons), dtype=float)
        return eps, np.array([self.delta(e, notion) for e in eps])


def privacy_profile(mechanism: CyclicPMF | IntegerPMF | Channel,
                    neighbourhood: Neighbourhood | InputPairs | None = None, *,
                    exact: bool = False, max_memory: int | None = None) -> PrivacyProfile:
    """The :class:`PrivacyProfile` of a mechanism under a neighbourhood.

    Parameters
    ----------
    mechanism:
        A cyclic PMF (noise mod ``n + 1``), a PMF on the integer line or a channel.
    neighbourhood:
        Query distances for additive noise (default: SD 1, symmetric); input pairs
        for a channel (a :class:`Neighbourhood` is turned into pairs with
        ``q - q'`` in ``M``, without wrap-around).
    exact:
        Rational arithmetic with outward rounding. Masses are the mechanism's exact
        twin when it has one (integer weights, exact decimals), otherwise the exact
        binary value of each float; tail ratios are exact binary values too.
    max_memory:
        Bytes the analysis may plan to use (:mod:`optnoise.resources`; default half the
        machine's memory): larger analyses are refused before anything is built.

    >>> from optnoise import CyclicPMF, Neighbourhood
    >>> round(privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1)).epsilon_pure, 6)
    0.693147
    """
    pairs, nb = neighbouring_pairs(mechanism, neighbourhood, exact=exact, max_memory=max_memory)
    space = {CyclicPMF: "cyclic", IntegerPMF: "integer", Channel: "channel"}[type(mechanism)]
    if exact:
        from .exact import ExactPair  # local import: mpmath is needed only here
        return PrivacyProfile(tuple(ExactPair(pm.p, pm.q, pm.label) for pm in pairs), nb, exact=True, space=space)
    return PrivacyProfile(tuple(FloatPair(pm.p, pm.q, pm.label) for pm in pairs), nb, space=space)


def pairs_from_arrays(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> PrivacyProfile:
    """Profile of explicit ``(p, p')`` arrays (for tests and custom mechanisms)."""
    return PrivacyProfile(tuple(FloatPair(np.asarray(p, float), np.asarray(q, float), label=str(i))
                                for i, (p, q) in enumerate(pairs)), None, space="pairs")


def neighbourhood_json(neighbourhood: Neighbourhood | InputPairs | None) -> dict:
    """``{"distances", "directed"}`` or ``{"pairs", "directed"}`` (the CLI's key)."""
    if neighbourhood is None:
        return {}
    return neighbourhood.to_json()


@dataclass(frozen=True)
class Guarantee:
    """The values ``optnoise verify`` reports (docs/cli.md keys)."""

    epsilon_pure: float
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    delta_pdp: float | None
    epsilon_dp: float | None
    epsilon_pdp: float | None
    neighbourhood: dict = field(default_factory=dict)
    exact: bool = False

    def to_json(self) -> dict:
        return {
            "epsilon_pure": self.epsilon_pure,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "delta_dp": self.delta_dp,
            "delta_pdp": self.delta_pdp,
            "epsilon_dp": self.epsilon_dp,
            "epsilon_pdp": self.epsilon_pdp,
            "neighbourhood": self.neighbourhood,
            "exact": self.exact,
        }

    def meets(self, target: Target) -> bool:
        """:meth:`PrivacyProfile.meets` on the evaluated values (needs ``epsilon`` at the
        target's epsilon for an approximate target)."""
        slack = 1.0 if self.exact else 1.0 + MEETS_TOLERANCE
        if target.pure:
            return self.epsilon_pure <= target.epsilon * slack
        if self.epsilon != target.epsilon:
            raise InvalidParameterError("target", target.to_json(), f"a target at the evaluated epsilon {self.epsilon}")
        value = self.delta_dp if target.notion == "dp" else self.delta_pdp
        return value is not None and value <= target.delta * slack


def guarantee(profile: PrivacyProfile, epsilon: float | None = None, delta: float | None = None) -> Guarantee:
    """Evaluate a profile at an ``epsilon`` and/or a ``delta``."""
    return Guarantee(
        epsilon_pure=profile.epsilon_pure,
        epsilon=epsilon,
        delta=delta,
        delta_dp=None if epsilon is None else profile.delta_dp(epsilon),
        delta_pdp=None if epsilon is None else profile.delta_pdp(epsilon),
        epsilon_dp=None if delta is None else profile.epsilon_dp(delta),
        epsilon_pdp=None if delta is None else profile.epsilon_pdp(delta),
        neighbourhood=neighbourhood_json(profile.neighbourhood),
        exact=profile.exact,
    )
