"""Rényi differential privacy, zCDP and the conversion of an RDP curve to (eps, delta).

Everything is computed from the exact privacy loss distribution of each ordered
neighbouring pair (:class:`optnoise.analysis.floating.LossDistribution`): the distinct finite
losses ``L = ln p/p'`` with the masses ``P`` (under ``p``) and ``Q`` (under ``p'``)
grouped on them, and the mass ``p`` puts where ``p' = 0``. On the integer line the
geometric tails are already folded in exactly (a tail class of constant loss is one
weighted cell), so every value below is exact up to floating-point rounding.

**Rényi divergence from grouped losses.** For ``alpha != 1``
(Rényi 1961; Mironov 2017, Definition 3)::

    D_alpha(p || q) = 1/(alpha - 1) * log sum_y p(y)^alpha q(y)^(1 - alpha).

On the outputs ``y`` of one loss group, ``q(y) = p(y) e^(-L)``, so
``p^alpha q^(1-alpha) = p(y) e^((alpha-1) L)`` and the group contributes
``P_L e^((alpha-1) L)``: the grouped sum is *exactly* the ungrouped one. Outputs with
``p > 0 = q`` make the sum infinite for ``alpha > 1`` and contribute nothing for
``alpha < 1``; outputs with ``p = 0`` contribute nothing for either. Hence, with
``t = alpha - 1`` and the cumulant generating function of the loss under ``p``,
``K(t) = log E_P[e^(t L)]`` (over the finite part)::

    D_alpha = (log P(L finite) + K(alpha - 1)) / (alpha - 1).

Limits: ``alpha -> 1`` gives the Kullback-Leibler divergence ``E_P[L]``; ``alpha -> inf``
gives ``max L`` (the pure epsilon of the pair, Mironov 2017 Prop. 4 / eq. for
``D_inf``). ``K`` is convex with ``K(0) = 0``, so ``t D_{1+t} = K(t)`` is convex and
``D_alpha`` is non-decreasing in ``alpha`` (van Erven & Harremoës 2014, Thm. 3).

**Mechanism values.** The RDP curve ``eps(alpha)`` of a mechanism is the maximum over
its ordered neighbouring pairs (Mironov 2017, Definition 4); its zCDP parameter is
``rho = sup_{alpha > 1} eps(alpha) / alpha`` (Bun & Steinke 2016, Definition 1.1 with
``xi = 0``), computed by :func:`zcdp_rho` with a certified branch-and-bound.

**Conversion to (eps, delta).** :func:`rdp_to_dp` and :func:`rdp_to_delta` use
Canonne, Kamath & Steinke 2020 ("The Discrete Gaussian for Differential Privacy",
NeurIPS 2020, arXiv:2004.00010, Proposition 12; the same bound is Asoodeh et al. 2020
arXiv:2001.05990 eq. (20) and Balle et al. 2020 "Hypothesis testing interpretations
and Rényi DP", Theorem 21): an ``(alpha, tau)``-RDP mechanism is ``(eps, delta)``-DP
with::

    delta = exp((alpha - 1)(tau - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha,
    eps   = tau + log((alpha - 1)/alpha) - (log delta + log alpha) / (alpha - 1),

optimised over the given orders. It improves Mironov 2017 Prop. 3
(``eps = tau + log(1/delta)/(alpha - 1)``) by ``log(alpha/(alpha-1)) + log(alpha)/(alpha-1)``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..target import check_delta, check_epsilon, check_epsilons
from .floating import LossDistribution
from .profile import PrivacyProfile

#: Default Rényi orders: dense near 1 (many releases), sparse above, and the pure limit.
DEFAULT_ORDERS: tuple[float, ...] = (
    1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4, 1.5, 1.6, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0,
    10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0, 64.0, 128.0, 256.0, 512.0, 1024.0, math.inf)


# --------------------------------------------------------------------------- one pair
@dataclass(frozen=True)
class _Atoms:
    """A loss distribution normalised for the Rényi computations.

    ``weights`` are ``P_L / P(L finite)`` (they sum to 1, so ``K(0) = 0`` exactly and
    float round-off in the PMF's total never divides by ``alpha - 1``);
    ``log_finite`` is ``log P(L finite)`` from the masses' own total.
    """

    losses: np.ndarray
    weights: np.ndarray
    log_finite: float
    infinite: bool

    @property
    def max_loss(self) -> float:
        return float(self.losses.max()) if self.losses.size else -math.inf

    @property
    def max_abs_loss(self) -> float:
        return float(np.abs(self.losses).max()) if self.losses.size else 0.0


def _atoms(ld: LossDistribution) -> _Atoms:
    p = np.asarray(ld.p_mass, dtype=float)
    finite = float(p.sum())
    inf_mass = float(ld.infinite_mass)
    total = finite + inf_mass
    if total <= 0:
        raise InvalidParameterError("loss distribution", "zero mass", "a loss distribution with positive mass")
    weights = p / finite if finite > 0 else p
    log_finite = math.log(finite / total) if finite > 0 else -math.inf
    if inf_mass == 0.0:
        log_finite = 0.0  # the masses of a PMF sum to one; keep K(0) = 0 exact
    return _Atoms(np.asarray(ld.losses, dtype=float), weights, log_finite, inf_mass > 0)


def _log_mgf(at: _Atoms, t: float) -> float:
    """``K(t) = log sum_L w_L e^(t L)`` (weights summing to 1), stable for all ``t``.

    For ``|t| max|L| <= 1/2`` the sum is written ``1 + sum w (e^(tL) - 1)`` and taken
    through ``log1p``/``expm1``, which keeps its relative accuracy as ``t -> 0`` (the
    value is ``O(t)`` there and is divided by ``t``); otherwise log-sum-exp.
    """
    if at.losses.size == 0:
        return -math.inf
    if t == 0.0:
        return 0.0
    x = t * at.losses
    if abs(t) * at.max_abs_loss <= 0.5:
        return math.log1p(float(np.dot(at.weights, np.expm1(x))))
    with np.errstate(divide="ignore"):
        z = np.log(at.weights) + x
    m = float(z.max())
    return m + math.log(float(np.sum(np.exp(z - m))))


def _check_alpha(alpha: float) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError("alpha", alpha, "a Rényi order > 0 (inf allowed)") from exc
    if math.isnan(a) or a <= 0:
        raise InvalidParameterError("alpha", alpha, "a Rényi order > 0 (inf allowed)")
    return a


def _divergence(at: _Atoms, alpha: float) -> float:
    if alpha == math.inf:
        return math.inf if at.infinite else max(0.0, at.max_loss)
    if alpha == 1.0:
        return math.inf if at.infinite else max(0.0, float(np.dot(at.weights, at.losses)))
    if alpha > 1.0 and at.infinite:
        return math.inf
    if at.losses.size == 0:
        return math.inf  # disjoint supports
    t = alpha - 1.0
    value = (at.log_finite + _log_mgf(at, t)) / t
    return max(0.0, value)  # a divergence is >= 0; only round-off can make it negative


def renyi_divergence(ld: LossDistribution, alpha: float) -> float:
    """Order-``alpha`` Rényi divergence ``D_alpha(p || p')`` of one ordered pair.

    Parameters
    ----------
    ld:
        The pair's loss distribution (``FloatPair.loss_distribution()``).
    alpha:
        Order ``> 0``: ``1`` is the Kullback-Leibler divergence, ``inf`` the max-divergence
        (pure epsilon); orders in ``(0, 1)`` are supported too.

    Returns
    -------
    float
        ``D_alpha`` in nats; ``inf`` when ``alpha >= 1`` and ``p`` has mass where ``p' = 0``.

    Notes
    -----
    Exact on grouped losses: a group with loss ``L`` and mass ``P`` contributes
    ``P e^((alpha-1) L)`` to ``sum p^alpha p'^(1-alpha)`` (module docstring).
    """
    return _divergence(_atoms(ld), _check_alpha(alpha))


def _distinct_atoms(profile: PrivacyProfile) -> list[_Atoms]:
    seen: dict[tuple, _Atoms] = {}
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (np.asarray(ld.losses).tobytes(), np.asarray(ld.p_mass).tobytes(), float(ld.infinite_mass))
        if key not in seen:
            seen[key] = _atoms(ld)
    return list(seen.values())


def renyi_curve(profile: PrivacyProfile, alphas: Iterable[float] = DEFAULT_ORDERS) -> np.ndarray:
    """The mechanism's tight RDP curve ``eps(alpha) = max over ordered pairs of D_alpha``.

    Mironov 2017, Definition 4: a mechanism is ``(alpha, eps)``-RDP iff
    ``D_alpha(M(X) || M(X')) <= eps`` for all ordered neighbouring ``(X, X')``; the
    maximum over the profile's pairs is therefore the smallest such ``eps``.
    """
    orders = [_check_alpha(a) for a in alphas]
    atoms = _distinct_atoms(profile)
    return np.array([max(_divergence(at, a) for at in atoms) for a in orders], dtype=float)


# ------------------------------------------------------------------------------ zCDP
@dataclass(frozen=True)
class ZCDP:
    """``rho = sup_{alpha > 1} eps(alpha) / alpha`` and where it is (approached).

    ``alpha`` is the order of the best evaluated point; ``1.0`` means the supremum is
    the limit ``alpha -> 1+`` (the KL divergence), as for randomized response.
    ``upper`` is the certified upper bound from the branch-and-bound (``rho <= upper``).
    """

    rho: float
    alpha: float
    upper: float


def _pair_zcdp(at: _Atoms, rtol: float, max_intervals: int = 20000) -> ZCDP:
    """Certified ``sup_{t > 0} K(t) / (t (t + 1))`` for one pair (``t = alpha - 1``).

    Why this is reliable:

    * ``K`` is convex with ``K(0) = 0``, so on an interval ``[a, b]`` it lies below
      its chord; ``chord(t) / (t (t + 1))`` is maximised in closed form (endpoints and
      the roots of ``s t^2 + 2 A t + A = 0`` for the chord ``A + s t``), giving an upper
      bound on the interval. Near ``t = 0`` the chord starts at ``(0, 0)``.
    * As ``t -> 0+`` the ratio tends to ``K'(0) = KL``, a candidate value (the
      supremum can be this limit, e.g. randomized response).
    * For large ``t``, ``K(t) <= t max L``, so the ratio is ``<= max L / (t + 1)``:
      nothing beyond ``t = max L / best - 1`` can beat the best value found.

    Branch-and-bound refines the intervals whose bound exceeds the incumbent by more
    than ``rtol`` (relative); the result's ``upper`` is the final certified bound.
    """
    if at.infinite or at.losses.size == 0:
        return ZCDP(math.inf, math.inf, math.inf)
    kl = max(0.0, float(np.dot(at.weights, at.losses)))
    lmax = at.max_loss
    if lmax <= 0.0 or kl == 0.0:
        return ZCDP(0.0, 1.0, 0.0)

    def ratio(t: float) -> float:
        return _log_mgf(at, t) / (t * (t + 1.0))

    best, best_t = kl, 0.0
    grid = [float(t) for t in np.geomspace(1e-6, 1e6, 121)]
    for t in grid:
        v = ratio(t)
        if v > best:
            best, best_t = v, t
    t_hi = max(lmax / best - 1.0, 1e-6)
    points = [0.0] + [t for t in grid if t < t_hi] + [t_hi]
    kvals = {0.0: 0.0}
    for t in points[1:]:
        kvals[t] = _log_mgf(at, t)

    def bound(a: float, b: float) -> float:
        ka, kb = kvals[a], kvals[b]
        s = (kb - ka) / (b - a)
        big_a = ka - s * a
        cands = [b] + ([a] if a > 0 else [])
        if s != 0.0:
            disc = big_a * big_a - s * big_a
            if disc >= 0:
                for r in ((-big_a + math.sqrt(disc)) / s, (-big_a - math.sqrt(disc)) / s):
                    if a < r < b:
                        cands.append(r)
        ub = max((big_a + s * t) / (t * (t + 1.0)) for t in cands)
        if a == 0.0:
            ub = max(ub, kb / b)  # the chord from (0, 0): s / (t + 1) <= s = kb / b
        return ub

    heap: list[tuple[float, float, float]] = []
    for a, b in zip(points[:-1], points[1:]):
        heapq.heappush(heap, (-bound(a, b), a, b))
    count = 0
    dropped = -math.inf   # largest bound of an interval discarded as unable to beat best (1 + rtol)
    while heap and -heap[0][0] > best * (1.0 + rtol) and count < max_intervals:
        _, a, b = heapq.heappop(heap)
        mid = 0.5 * (a + b) if a > 0 else b / 4.0
        kvals[mid] = _log_mgf(at, mid)
        v = kvals[mid] / (mid * (mid + 1.0))
        if v > best:
            best, best_t = v, mid
        for lo, hi in ((a, mid), (mid, b)):
            ub = bound(lo, hi)
            if ub > best * (1.0 + rtol):
                heapq.heappush(heap, (-ub, lo, hi))
            else:
                dropped = max(dropped, ub)
        count += 1
    # beyond t_hi the ratio is <= max L / (t + 1) <= best; every other interval is in the
    # heap or was dropped with a bound <= dropped
    upper = max([best, dropped] + [-h[0] for h in heap])
    return ZCDP(float(best), 1.0 + float(best_t), float(upper))


def zcdp_rho(profile: PrivacyProfile, *, rtol: float = 1e-7) -> ZCDP:
    """The zCDP parameter ``rho = sup_{alpha > 1} eps(alpha) / alpha`` of a mechanism.

    Bun & Steinke 2016, Definition 1.1 (``xi = 0``): ``D_alpha <= rho alpha`` for every
    ``alpha > 1`` and every ordered neighbouring pair, so ``rho`` is the supremum over
    pairs and orders; the supremum over orders is certified per pair to relative
    accuracy ``rtol`` (see :func:`_pair_zcdp`). ``inf`` when some pair has infinite
    Rényi divergence. The discrete Gaussian with ``sigma`` and sensitivity ``Delta``
    has ``rho = Delta^2 / (2 sigma^2)`` (Canonne, Kamath & Steinke 2020, Prop. 5);
    a pure ``eps``-DP randomized response has ``rho = eps tanh(eps/2)`` (its KL).
    """
    results = [_pair_zcdp(at, rtol) for at in _distinct_atoms(profile)]
    top = max(results, key=lambda r: r.rho)
    return ZCDP(top.rho, top.alpha, max(r.upper for r in results))


# ------------------------------------------------------------------------ conversion
def _check_orders(alphas: Sequence[float], epsilons: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray([float(x) for x in alphas], dtype=float)
    e = np.asarray([float(x) for x in epsilons], dtype=float)
    if a.shape != e.shape or a.size == 0:
        raise InvalidParameterError("epsilons", list(e), "one RDP epsilon per order")
    if np.any(~(a > 1.0)):
        raise InvalidParameterError("alphas", list(a), "Rényi orders > 1 (inf allowed)")
    check_epsilons(e, allow_zero=True, allow_inf=True, accepted="RDP epsilons >= 0 (inf allowed)")
    return a, e


def rdp_to_dp(alphas: Sequence[float], epsilons: Sequence[float], delta: float) -> tuple[float, float]:
    """Smallest ``eps`` with ``(eps, delta)``-DP implied by an RDP curve.

    Canonne, Kamath & Steinke 2020, Proposition 12: ``(alpha, tau)``-RDP implies
    ``(eps, delta)``-DP for
    ``eps = tau + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1)``;
    the order ``alpha = inf`` gives ``eps = tau`` (pure DP, any ``delta >= 0``).
    The result is clipped below at 0 and minimised over the given orders.

    Returns
    -------
    (epsilon, alpha)
        The bound and the order attaining it (``inf`` bound if no order gives one).
    """
    a, e = _check_orders(alphas, epsilons)
    d = check_delta(delta)
    best, arg = math.inf, math.nan
    for alpha, tau in zip(a, e):
        if not math.isfinite(tau):
            continue
        if alpha == math.inf:
            eps = tau
        elif d == 0.0:
            continue
        else:
            eps = tau + math.log1p(-1.0 / alpha) - (math.log(d) + math.log(alpha)) / (alpha - 1.0)
        eps = max(0.0, eps)
        if eps < best:
            best, arg = eps, float(alpha)
    return best, arg


def rdp_to_delta(alphas: Sequence[float], epsilons: Sequence[float], epsilon: float) -> tuple[float, float]:
    """Smallest ``delta`` with ``(epsilon, delta)``-DP implied by an RDP curve.

    The same bound solved for ``delta`` (Canonne, Kamath & Steinke 2020, Prop. 12):
    ``delta = exp((alpha - 1)(tau - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha``,
    computed in logs; ``alpha = inf`` gives ``delta = 0`` when ``tau <= eps``.
    Capped at 1. Returns ``(delta, alpha)``.
    """
    a, e = _check_orders(alphas, epsilons)
    eps = check_epsilon(epsilon, allow_inf=True, accepted="a real number >= 0")
    best, arg = 1.0, math.nan
    for alpha, tau in zip(a, e):
        if not math.isfinite(tau):
            continue
        if alpha == math.inf:
            log_d = -math.inf if tau <= eps else 0.0
        else:
            log_d = ((alpha - 1.0) * (tau - eps) - math.log(alpha - 1.0) + alpha * math.log1p(-1.0 / alpha))
        dl = math.exp(min(log_d, 0.0))
        if dl < best:
            best, arg = dl, float(alpha)
    return best, arg


# ---------------------------------------------------------------------------- report
def order_key(alpha: float) -> str:
    """The JSON key of a Rényi order: ``"2"``, ``"1.5"``, ``"inf"``."""
    return "inf" if alpha == math.inf else f"{alpha:g}"


@dataclass(frozen=True)
class RenyiReport:
    """A mechanism's Rényi curve at the requested orders and its zCDP parameter (CLI keys).

    ``basis`` says where the values come from: ``"loss distributions"`` (the exact loss
    distributions of the masses as represented, :func:`renyi_curve`) or a closed form
    for a family (e.g. the discrete Gaussian on Z). ``represented`` holds, for a closed
    form, the curve of the masses as represented (a finite window, which is what is
    quantized and sampled), so the two are never taken for one another.
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    zcdp: ZCDP
    basis: str = "loss distributions"
    represented: tuple[float, ...] | None = None
    note: str = ""

    def to_json(self) -> dict:
        out: dict = {"renyi": {order_key(a): e for a, e in zip(self.orders, self.epsilons)},
                     "zcdp_rho": self.zcdp.rho, "zcdp_rho_upper": self.zcdp.upper, "zcdp_order": self.zcdp.alpha,
                     "renyi_basis": self.basis}
        if self.represented is not None:
            out["renyi_represented"] = {order_key(a): e for a, e in zip(self.orders, self.represented)}
        if self.note:
            out["renyi_note"] = self.note
        return out


def renyi_report(profile: PrivacyProfile, orders: Iterable[float] = DEFAULT_ORDERS) -> RenyiReport:
    """The tight Rényi curve of a mechanism at ``orders`` and its certified zCDP ``rho``
    (:func:`renyi_curve`, :func:`zcdp_rho`): exact up to float rounding, never a bound."""
    ords = tuple(_check_alpha(a) for a in orders)
    if not ords:
        raise InvalidParameterError("orders", [], "at least one Rényi order > 0")
    return RenyiReport(ords, tuple(float(v) for v in renyi_curve(profile, ords)), zcdp_rho(profile))


__all__ = ["DEFAULT_ORDERS", "RenyiReport", "ZCDP", "order_key", "rdp_to_delta", "rdp_to_dp", "renyi_curve",
           "renyi_divergence", "renyi_report", "zcdp_rho"]
