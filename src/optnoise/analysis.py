"""Exact privacy analysis of discrete mechanisms: tight eps, delta_DP, delta_PDP.

For one ordered pair of neighbouring output distributions ``p`` (dataset ``X``)
and ``p'`` (dataset ``X'``) on a discrete output space:

* tight pure epsilon: ``max_y ln p(y) / p'(y)`` (Qin et al., Theorem 1; infinite
  when a positive mass of ``p`` faces a zero of ``p'``);
* approximate DP: ``delta_DP(eps) = sum_y max(0, p(y) - e^eps p'(y))``, the
  hockey-stick divergence, tight because the set ``{y : p(y) > e^eps p'(y)}`` is
  the worst event (Holohan et al., sufficient sets; Definition 1 of Kadam et al.);
* probabilistic DP: ``delta_PDP(eps) = sum_y p(y) [p(y) > e^eps p'(y)]``
  (Kadam et al. 2024, Definition 2 and eq. (7)-(8)).

A mechanism's values are the maxima over all ordered neighbouring pairs
(DESIGN.md section 1). Everything is computed from the *privacy loss
distribution* of each pair: the distinct loss values ``L = ln p/p'`` with the
masses ``P`` (under ``p``) and ``Q`` (under ``p'``) that sit on them. With the
losses sorted, ``delta_DP(eps) = sum_{L > eps} (P - e^eps Q)`` is continuous and
decreasing; its inverse is found segment by segment in closed form.

Float mode treats a likelihood ratio within a relative ``ratio_tolerance``
(default ``1e-9``) of ``e^eps`` as *not* exceeding ``e^eps`` when it counts PDP
violations; this only matters for designs that meet a constraint with equality.
Use ``exact=True`` (:mod:`optnoise.exact`) for a certificate in rational
arithmetic with outward rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Literal, Protocol, Sequence

import numpy as np

from .errors import InvalidParameterError
from .neighbourhood import InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, IntegerPMF

Notion = Literal["dp", "pdp"]

#: Relative tolerance on ``p > e^eps p'`` when counting PDP violations in float mode.
RATIO_TOLERANCE = 1e-9


def check_epsilon(epsilon: float, *, allow_zero: bool = True, parameter: str = "epsilon") -> float:
    """Validate an epsilon (``>= 0``, or ``> 0`` when ``allow_zero`` is false)."""
    try:
        eps = float(epsilon)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, epsilon, "a real number >= 0") from exc
    if math.isnan(eps) or eps < 0 or (eps == 0 and not allow_zero):
        raise InvalidParameterError(parameter, epsilon, "a real number >= 0" if allow_zero else "a real number > 0")
    return eps


def check_delta(delta: float, parameter: str = "delta") -> float:
    """Validate a delta (``0 <= delta < 1``)."""
    try:
        d = float(delta)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, delta, "a real number with 0 <= delta < 1") from exc
    if not (0.0 <= d < 1.0):
        raise InvalidParameterError(parameter, delta, "a real number with 0 <= delta < 1")
    return d


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


@dataclass(frozen=True, eq=False)
class FloatPair:
    """One ordered pair ``(p, p')`` in floating point, with optional cell weights.

    ``weight[i]`` multiplies both masses of cell ``i``; a weight above 1 stands for
    a whole geometric tail class on which the likelihood ratio is constant.
    """

    p: np.ndarray
    q: np.ndarray
    weight: np.ndarray | None = None
    label: str = ""
    ratio_tolerance: float = RATIO_TOLERANCE

    def __post_init__(self) -> None:
        keep = self.p > 0
        p = self.p[keep]
        q = self.q[keep]
        if self.weight is not None:
            w = self.weight[keep]
            p = p * w
            q = q * w
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "weight", None)

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


# --------------------------------------------------------------------------- pairs
def cyclic_pairs(pmf: CyclicPMF, neighbourhood: Neighbourhood) -> list[FloatPair]:
    """Ordered pairs ``(f(eta), f(eta + mu mod (n+1)))`` for every shift of ``M``."""
    f = pmf.probs
    axes = tuple(range(f.ndim))
    out = []
    for shift in neighbourhood.cyclic_shifts(pmf.shape):
        q = np.roll(f, tuple(-s for s in shift), axis=axes)
        label = f"mu={shift[0] if len(shift) == 1 else shift}"
        out.append(FloatPair(f.ravel(), q.ravel(), label=label))
    return out


def integer_pair_arrays(pmf: IntegerPMF, mu: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masses ``p(eta) = f(eta)``, ``p'(eta) = f(eta + mu)`` and cell weights on Z.

    The window is extended by ``|mu| + period`` on each side that has a tail; beyond
    that, both masses are geometric with the same ratio, so the loss is periodic and
    the last ``period`` cells stand for their whole residue classes with weight
    ``1 / (1 - ratio)`` (Geng & Viswanath (82)-(83): exact, no truncation).
    """
    lo, hi = pmf.lo, pmf.hi
    lt, rt = pmf.left_tail, pmf.right_tail
    lo_ext = lo - (abs(mu) + lt.period if lt else 0)
    hi_ext = hi + (abs(mu) + rt.period if rt else 0)
    eta = np.arange(lo_ext, hi_ext + 1, dtype=np.int64)
    p = pmf.mass(eta)
    q = pmf.mass(eta + mu)
    w = np.ones_like(p)
    if rt:
        w[-rt.period:] = 1.0 / (1.0 - rt.ratio)
    if lt:
        w[: lt.period] = 1.0 / (1.0 - lt.ratio)
    return p, q, w


def integer_pairs(pmf: IntegerPMF, neighbourhood: Neighbourhood) -> list[FloatPair]:
    """Ordered pairs for noise on the integer line, one per shift of ``M`` (and ``-M``)."""
    out = []
    for mu in neighbourhood.integer_shifts():
        p, q, w = integer_pair_arrays(pmf, mu)
        out.append(FloatPair(p, q, w, label=f"mu={mu}"))
    return out


def channel_pairs(channel: Channel, pairs: InputPairs) -> list[FloatPair]:
    """Ordered pairs of rows ``(P[x], P[x'])`` of a channel."""
    m = channel.matrix
    return [FloatPair(m[a], m[b], label=f"x={a},x'={b}") for a, b in pairs.ordered(channel.n_inputs)]


# ------------------------------------------------------------------------- profile
@dataclass(frozen=True, eq=False)
class PrivacyProfile:
    """The privacy of a mechanism: maxima over its ordered neighbouring pairs.

    Methods take and return floats; ``math.inf`` means "no finite value".
    ``exact`` profiles (from :mod:`optnoise.exact`) round every value outward.
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
        eps = check_epsilon(epsilon)
        return max(pr.delta_dp(eps) for pr in self.pairs)

    def delta_pdp(self, epsilon: float) -> float:
        """Tight ``delta`` of probabilistic DP at ``epsilon`` (Kadam Def. 2)."""
        eps = check_epsilon(epsilon)
        return max(pr.delta_pdp(eps) for pr in self.pairs)

    def delta(self, epsilon: float, notion: Notion = "dp") -> float:
        """``delta_DP`` or ``delta_PDP`` at ``epsilon``."""
        return self.delta_dp(epsilon) if _notion(notion) == "dp" else self.delta_pdp(epsilon)

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
        return self.epsilon_dp(delta) if _notion(notion) == "dp" else self.epsilon_pdp(delta)

    def worst_pair(self, epsilon: float, notion: Notion = "dp") -> str:
        """Label of the pair attaining ``delta(epsilon)``."""
        eps = check_epsilon(epsilon)
        fn = (lambda pr: pr.delta_dp(eps)) if _notion(notion) == "dp" else (lambda pr: pr.delta_pdp(eps))
        return max(self.pairs, key=fn).label

    def curve(self, epsilons: Iterable[float] | None = None, notion: Notion = "dp") -> tuple[np.ndarray, np.ndarray]:
        """``(epsilons, deltas)`` for plotting the privacy profile."""
        if epsilons is None:
            top = self.epsilon_pure if math.isfinite(self.epsilon_pure) else 10.0
            epsilons = np.linspace(0.0, max(top * 1.1, 1e-3), 200)
        eps = np.asarray(list(epsilons), dtype=float)
        return eps, np.array([self.delta(e, notion) for e in eps])


def _notion(notion: str) -> str:
    if notion not in ("dp", "pdp"):
        raise InvalidParameterError("notion", notion, "'dp' or 'pdp'")
    return notion


def privacy_profile(mechanism: CyclicPMF | IntegerPMF | Channel,
                    neighbourhood: Neighbourhood | InputPairs | None = None, *,
                    exact: bool = False) -> PrivacyProfile:
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
        Rational arithmetic with outward rounding (needs rational masses: integer
        weights, exact decimals or finite-support float masses).
    """
    if exact:
        from .exact import exact_profile  # local import: exact mode is optional
        return exact_profile(mechanism, neighbourhood)
    nb = neighbourhood if neighbourhood is not None else Neighbourhood((1,))
    if isinstance(mechanism, CyclicPMF):
        if not isinstance(nb, Neighbourhood):
            raise InvalidParameterError("neighbourhood", nb, "query distances for additive noise")
        return PrivacyProfile(tuple(cyclic_pairs(mechanism, nb)), nb, space="cyclic")
    if isinstance(mechanism, IntegerPMF):
        if not isinstance(nb, Neighbourhood):
            raise InvalidParameterError("neighbourhood", nb, "query distances for additive noise")
        return PrivacyProfile(tuple(integer_pairs(mechanism, nb)), nb, space="integer")
    if isinstance(mechanism, Channel):
        pairs = nb if isinstance(nb, InputPairs) else InputPairs.from_distances(nb, mechanism.n_inputs)
        return PrivacyProfile(tuple(channel_pairs(mechanism, pairs)), pairs, space="channel")
    raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")


@dataclass(frozen=True)
class Guarantee:
    """The values `optnoise verify` reports (CLI.md keys)."""

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


def guarantee(profile: PrivacyProfile, epsilon: float | None = None, delta: float | None = None) -> Guarantee:
    """Evaluate a profile at an ``epsilon`` and/or a ``delta``."""
    nb = profile.neighbourhood.to_json() if isinstance(profile.neighbourhood, Neighbourhood) else (
        {"pairs": [list(p) for p in profile.neighbourhood.pairs], "directed": profile.neighbourhood.directed}
        if isinstance(profile.neighbourhood, InputPairs) else {})
    return Guarantee(
        epsilon_pure=profile.epsilon_pure,
        epsilon=epsilon,
        delta=delta,
        delta_dp=None if epsilon is None else profile.delta_dp(epsilon),
        delta_pdp=None if epsilon is None else profile.delta_pdp(epsilon),
        epsilon_dp=None if delta is None else profile.epsilon_dp(delta),
        epsilon_pdp=None if delta is None else profile.epsilon_pdp(delta),
        neighbourhood=nb,
        exact=profile.exact,
    )


def pairs_from_arrays(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> PrivacyProfile:
    """Profile of explicit ``(p, p')`` arrays (for tests and custom mechanisms)."""
    return PrivacyProfile(tuple(FloatPair(np.asarray(p, float), np.asarray(q, float), label=str(i))
                                for i, (p, q) in enumerate(pairs)), None, space="pairs")


# ------------------------------------------------------------------ sufficient sets (Holohan et al.)
@dataclass(frozen=True)
class SubsetChecks:
    """How many subset checks verifying DP takes, with and without sufficient sets."""

    pairs: int
    with_sufficient_sets: int
    without: int
    set_sizes: tuple[int, ...]


def sufficient_set(matrix: np.ndarray, x: int, x_prime: int, rtol: float = 1e-12) -> np.ndarray:
    """Holohan et al. (8): ``S = {y : P(y | x) > P(y | x')}``; by their Theorem 2, checking
    ``P(A | x) <= e^eps P(A | x') + delta`` on the subsets of ``S`` suffices for the pair.
    (The largest violation is at ``A = S`` itself: the hockey-stick divergence.)
    Outputs equal up to ``rtol`` (ties computed through different float sums) are not in ``S``."""
    m = np.asarray(matrix, dtype=float)
    return np.flatnonzero(m[x] > m[x_prime] * (1.0 + rtol))


def subset_check_counts(matrix: np.ndarray, pairs: Sequence[tuple[int, int]]) -> SubsetChecks:
    """Subset checks for all ordered ``pairs``: ``2^|S| - 1`` each with sufficient sets,
    ``2^|Y| - 2`` each without (all subsets but the empty set and ``Y``), Holohan Example 2."""
    m = np.asarray(matrix, dtype=float)
    sizes = tuple(int(sufficient_set(m, a, b).size) for a, b in pairs)
    return SubsetChecks(len(pairs), sum(2 ** s - 1 for s in sizes), len(pairs) * (2 ** m.shape[1] - 2), sizes)
