"""Float analysis of one ordered pair: tight eps, delta_DP, delta_PDP and their inverses.

For one ordered pair of neighbouring output distributions ``p`` (dataset ``X``) and
``p'`` (dataset ``X'``) on a discrete output space:

* tight pure epsilon: ``max_y ln p(y) / p'(y)`` (Qin et al., Theorem 1; infinite when a
  positive mass of ``p`` faces a zero of ``p'``);
* approximate DP: ``delta_DP(eps) = sum_y max(0, p(y) - e^eps p'(y))``, the hockey-stick
  divergence, tight because ``{y : p(y) > e^eps p'(y)}`` is the worst event (Holohan et
  al., sufficient sets; Kadam et al. Def. 1);
* probabilistic DP: ``delta_PDP(eps) = sum_y p(y) [p(y) > e^eps p'(y)]`` (Kadam et al.
  2024, Def. 2 and eqs. (7)-(8)).

Everything is computed from the pair's *privacy loss distribution*: the distinct loss
values ``L = ln p/p'`` with the masses ``P`` (under ``p``) and ``Q`` (under ``p'``) on them.
With the losses sorted, ``delta_DP(eps) = sum_{L > eps} (P - e^eps Q)`` is continuous and
decreasing; its inverse is found segment by segment in closed form.

Float mode treats a likelihood ratio within a relative :data:`RATIO_TOLERANCE` of
``e^eps`` as *not* exceeding it when it counts PDP violations; this only matters for
designs that meet a constraint with equality. :mod:`optnoise.analysis.exact` gives a
certificate in rational arithmetic with outward rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Protocol

import numpy as np

#: Relative tolerance on ``p > e^eps p'`` when counting PDP violations in float mode.
RATIO_TOLERANCE = 1e-9


class PairAnalysis(Protocol):
    """What a mechanism's profile needs from one ordered neighbouring pair."""

    label: str

    @property
    def epsilon_pure(self) -> float: ...

    def delta_dp(self, epsilon: float) -> float: ...

    def delta_pdp(self, epsilon: float) -> float: ...

    def epsilon_dp(self, delta: float) -> float: ...

    def epsilon_pdp(self, delta: float) -> float: ...

    def loss_distribution(self) -> "LossDistribution": ...


@dataclass(frozen=True)
class LossDistribution:
    """Privacy loss distribution of an ordered pair ``(p, p')``.

    ``losses`` are the distinct finite values of ``ln p/p'`` in decreasing order,
    ``p_mass``/``q_mass`` the masses of ``p`` and ``p'`` on each, and
    ``infinite_mass`` the mass of ``p`` where ``p' = 0``.
    """

    losses: np.ndarray
    p_mass: np.ndarray
    q_mass: np.ndarray
    infinite_mass: float


@dataclass(frozen=True)
class PairMaxima:
    """The values of a profile at once: maxima over the ordered pairs.

    ``delta_dp``/``delta_pdp`` are at the ``epsilon`` asked for and ``epsilon_dp``/
    ``epsilon_pdp`` at the ``delta`` asked for (``None`` when not asked); ``worst`` names
    a pair attaining each value; ``pairs`` counts the pairs visited. Streamed analyses
    (:mod:`~optnoise.analysis.streaming`, :mod:`~optnoise.analysis.exact_fast`) produce
    it in one walk over the pairs.
    """

    epsilon_pure: float
    delta_dp: float | None = None
    delta_pdp: float | None = None
    epsilon_dp: float | None = None
    epsilon_pdp: float | None = None
    pairs: int = 0
    worst: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class FloatPair:
    """One ordered pair ``(p, p')`` in floating point (cells where ``p = 0`` are dropped)."""

    p: np.ndarray
    q: np.ndarray
    label: str = ""
    ratio_tolerance: float = RATIO_TOLERANCE

    def __post_init__(self) -> None:
        p = np.asarray(self.p, dtype=np.float64)
        q = np.asarray(self.q, dtype=np.float64)
        keep = p > 0
        object.__setattr__(self, "p", p[keep])
        object.__setattr__(self, "q", q[keep])

    # -- single-epsilon evaluations: O(n), no sorting -------------------------
    @cached_property
    def epsilon_pure(self) -> float:
        if self.p.size == 0:
            return 0.0
        if np.any(self.q == 0):
            return math.inf
        return max(0.0, float(np.max(_log_ratio(self.p, self.q))))

    def delta_dp(self, epsilon: float) -> float:
        e = math.exp(epsilon) if epsilon < 700 else math.inf
        with np.errstate(over="ignore", invalid="ignore"):
            excess = self.p - e * self.q
        excess = np.where(self.q == 0, self.p, excess)
        return float(np.sum(excess[excess > 0]))

    def delta_pdp(self, epsilon: float) -> float:
        e = math.exp(epsilon) if epsilon < 700 else math.inf
        with np.errstate(over="ignore", invalid="ignore"):
            violated = self.p > e * self.q * (1.0 + self.ratio_tolerance)
        violated |= self.q == 0
        return float(np.sum(self.p[violated]))

    # -- inverses: through the sorted loss distribution ------------------------
    @cached_property
    def _sorted(self) -> LossDistribution:
        finite = self.q > 0
        inf_mass = float(np.sum(self.p[~finite]))
        p = self.p[finite]
        q = self.q[finite]
        loss = _log_ratio(p, q)
        uniq, inv = np.unique(-loss, return_inverse=True)
        pm = np.bincount(inv, weights=p, minlength=uniq.size)
        qm = np.bincount(inv, weights=q, minlength=uniq.size)
        return LossDistribution(-uniq, pm, qm, inf_mass)

    def loss_distribution(self) -> LossDistribution:
        return self._sorted

    def epsilon_dp(self, delta: float) -> float:
        return _epsilon_dp_from_losses(self._sorted, delta)

    def epsilon_pdp(self, delta: float) -> float:
        return _epsilon_pdp_from_losses(self._sorted, delta)


def _log_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``ln(p / q)`` for positive arrays, accurate for tiny masses.

    ``log(p / q)`` is exact to an ulp of the ratio, while ``log p - log q`` loses
    ``|log p| * 1e-16`` (7e-14 at masses near 1e-300); fall back to the difference of
    logs where the ratio overflows or underflows.
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        r = p / q
        out = np.log(r)
        bad = ~np.isfinite(out) | (r < 1e-300)
        if np.any(bad):
            out[bad] = np.log(p[bad]) - np.log(q[bad])
    return out


def _prefix_sums(ld: LossDistribution) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Losses > 0 and, for each, the sums of P and Q over *strictly greater* losses."""
    pos = ld.losses > 0
    losses = ld.losses[pos]
    a = ld.infinite_mass + np.concatenate(([0.0], np.cumsum(ld.p_mass[pos])))
    b = np.concatenate(([0.0], np.cumsum(ld.q_mass[pos])))
    return losses, a, b


def _epsilon_dp_from_losses(ld: LossDistribution, delta: float) -> float:
    """Smallest ``eps >= 0`` with ``delta_DP(eps) <= delta`` (closed form per segment)."""
    if ld.infinite_mass > delta:
        return math.inf
    losses, a, b = _prefix_sums(ld)
    # g(eps) on [l_j, l_{j-1}) equals a[j] - e^eps b[j] (sums over the first j losses).
    # g at l_j, for j = 0..m-1, and at 0 (index m).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g_at = a[:-1] - np.exp(losses + np.log(b[:-1]))
    g_zero = a[-1] - b[-1]
    if g_zero <= delta:
        return 0.0
    over = np.nonzero(g_at > delta)[0]
    j = int(over[0]) if over.size else losses.size   # first loss at which g is too big
    lower = float(losses[j]) if j < losses.size else 0.0
    upper = float(losses[j - 1]) if j > 0 else math.inf
    if b[j] <= 0:
        return lower
    eps = math.log((a[j] - delta) / b[j])
    return min(max(eps, lower), upper)


def _epsilon_pdp_from_losses(ld: LossDistribution, delta: float) -> float:
    """Smallest ``eps >= 0`` with ``sum_{L > eps} P <= delta``."""
    if ld.infinite_mass > delta:
        return math.inf
    losses, a, _ = _prefix_sums(ld)
    if a[-1] <= delta:
        return 0.0
    # a[j] = mass strictly above losses[j]; a is non-decreasing in j
    ok = np.nonzero(a[:-1] <= delta)[0]
    return float(losses[ok[-1]]) if ok.size else math.inf
