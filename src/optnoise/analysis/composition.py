"""Composition: the guarantee after repeated releases, never looser than a simple bound.

A sequence of items ``(profile, count)`` is released on the *same* pair of neighbouring
datasets ``(X, X')``: item ``i`` (a mechanism, given by its single-release
:class:`~optnoise.analysis.profile.PrivacyProfile`) runs ``k_i`` times with independent
noise. :func:`compose_best` computes several upper bounds on the composed guarantee and
reports the smallest, the name of the bound that won and every candidate:

``exact``
    Enumeration of the composed privacy loss distribution when each pair has few
    distinct losses (the k-fold product of a pair with ``m`` loss values has at most
    ``C(k + m - 1, m - 1)`` loss states; multinomial masses in logs). The geometric
    mechanism (two losses, ``+-eps`` for SD 1) and randomized response are exact this way.
``pld``
    Google's ``dp_accounting`` privacy loss distributions: each pair (or, beyond the
    enumeration cap, each mechanism's dominating pair, :func:`dominating_pld`) is
    discretised by pessimistic Connect-the-Dots and self-composed; an upper bound.
``rdp``
    The Rényi curves summed over the releases (Mironov 2017, Prop. 1) and converted by
    Canonne, Kamath & Steinke 2020, Prop. 12 (:mod:`optnoise.analysis.renyi`).
``pure``
    ``sum_i k_i eps_pure_i`` (pure DP composes additively; Dwork & Roth 2014, Thm. 3.16).
    For one item at ``delta = 0`` it is exact: the max loss of the k-fold product of a
    pair is k times the pair's max loss, attained on the product of its worst outputs.
``basic``
    ``sum_i k_i eps_i(delta / k_total)`` and ``sum_i k_i delta_i(eps / k_total)``
    (basic composition, Dwork & Roth 2014, Thm. 3.16, with an even split).

On a tie the simpler bound is named (``pure``, then ``exact``, ``rdp``, ``pld``,
``basic``).

**Which pairs are composed (the argument).** For fixed neighbouring datasets, item ``i``
sees one ordered pair ``(p_i, q_i)`` of its own pair set ``S_i`` and the composed output
distributions are the products ``prod_i p_i^{k_i}`` vs ``prod_i q_i^{k_i}``. Within one
item the pair is the same in all ``k_i`` releases (the datasets do not change), so
composing each pair with itself and taking the maximum over pairs is tight for a single
mechanism. Which pairs of *different* mechanisms occur together depends on how they relate
to the datasets, which the profiles do not record; the safe statement, tight when every
combination is realisable, is the maximum over all combinations in ``S_1 x ... x S_m``.
(Composing the per-item *worst pair at one epsilon* would not be valid: the worst pair of
a k-fold composition need not be the worst single-release pair at any fixed epsilon.)
When the number of combinations exceeds ``max_combinations``, the items with many pairs
are replaced by a *dominating pair* (:func:`dominating_pld`), whose product dominates every
combination, even with adaptively chosen pairs (Zhu, Dong & Wang 2022, Theorem 10). The
RDP bound uses ``sum_i k_i max_j D_alpha(S_i)``, likewise valid for every combination.

**dp_accounting's PLDs (library behaviour, not a paper's).** Two effects make a PLD value
looser than the truth, which the other bounds repair:

* the loss grid: every loss is rounded *up* to a multiple of ``discretization`` (1e-4),
  so ``geometric(1/2)`` (loss ``ln 2 = 0.693147``) composed 10 times reports
  ``6.93194 > 10 ln 2`` at ``delta = 1e-6`` (the ``exact`` bound gives the true
  ``ln(2^10 - 1e-6 * 3^10) = 6.931471``);
* tail truncation: ``self_compose`` drops tail mass below ``1e-15`` and, to stay
  pessimistic, moves it to an infinite loss; at ``delta = 0`` a PLD therefore reports
  ``eps = inf`` even for a pure mechanism (``geometric(e^-1)`` composed 12 times is exactly
  12-DP: the ``pure`` bound), and PLD values at ``delta`` below about ``k * 1e-15`` say
  nothing. PLD deltas can also exceed 1 by round-off; they are capped at 1.

All values are floats (the ``pld`` ones pessimistic, the ``exact`` ones up to rounding).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pld_bytes
from ..target import check_delta, check_epsilon
from .floating import FloatPair, LossDistribution
from .profile import PrivacyProfile
from .renyi import DEFAULT_ORDERS, rdp_to_delta, rdp_to_dp, renyi_curve

if TYPE_CHECKING:  # dp_accounting is imported where it is used: it is slow to import
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

#: Loss discretisation of the PLDs (dp_accounting's default).
DISCRETIZATION = 1e-4
#: Largest number of pair combinations enumerated before items are replaced by dominating pairs.
MAX_COMBINATIONS = 64
#: Largest number of composed loss states enumerated by the ``exact`` bound.
MAX_EXACT_STATES = 200_000
#: The bounds, in the order that names the winner of a tie.
METHODS: tuple[str, ...] = ("pure", "exact", "rdp", "pld", "basic")

Item = tuple[PrivacyProfile, int]


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Bound:
    """One candidate bound: ``epsilon`` at the requested delta, ``delta`` at the requested
    epsilon (``None`` when not requested or when this bound says nothing)."""

    method: str
    epsilon: float | None
    delta: float | None
    detail: str = ""

    def to_json(self) -> dict:
        return {"method": self.method, "epsilon_dp": self.epsilon, "delta_dp": self.delta, "detail": self.detail}


@dataclass(frozen=True)
class Composed:
    """Guarantee after repeated releases (CLI key ``composed``): the best of several bounds.

    ``counts`` holds how many times each mechanism was released (one entry for the
    self-composition of one mechanism; ``k`` is their sum). ``bound`` says which bound gave
    each value (``{"delta_dp": ..., "epsilon_dp": ...}``, also as :attr:`delta_bound` and
    :attr:`epsilon_bound`): ``"exact"``, ``"pld"``, ``"rdp"``, ``"pure"``, ``"basic"``, or
    ``"trivial"`` (``delta = 1`` when no bound says anything). ``candidates`` holds every
    bound computed.
    """

    counts: tuple[int, ...]
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    epsilon_dp: float | None
    bound: dict = field(default_factory=dict)
    candidates: tuple[Bound, ...] = field(default_factory=tuple)

    @property
    def k(self) -> int:
        """The total number of releases."""
        return sum(self.counts)

    @property
    def epsilon_bound(self) -> str | None:
        """Which bound gave :attr:`epsilon_dp`."""
        return self.bound.get("epsilon_dp")

    @property
    def delta_bound(self) -> str | None:
        """Which bound gave :attr:`delta_dp`."""
        return self.bound.get("delta_dp")

    def candidate(self, method: str) -> Bound | None:
        """The candidate bound ``method`` (``None`` if it was not computed)."""
        return next((c for c in self.candidates if c.method == method), None)

    def to_json(self) -> dict:
        return {"k": self.k, "counts": list(self.counts), "epsilon": self.epsilon, "delta": self.delta,
                "delta_dp": self.delta_dp, "epsilon_dp": self.epsilon_dp, "bound": self.bound,
                "epsilon_bound": self.epsilon_bound, "delta_bound": self.delta_bound,
                "candidates": [c.to_json() for c in self.candidates]}


# ------------------------------------------------------------------ dominating pairs, PLDs
def _distinct_lds(profile: PrivacyProfile) -> list[LossDistribution]:
    seen: dict[tuple, LossDistribution] = {}
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (np.round(ld.losses, 12).tobytes(), np.round(ld.p_mass, 15).tobytes(),
               np.round(ld.q_mass, 15).tobytes(), float(ld.infinite_mass))
        seen.setdefault(key, ld)
    return list(seen.values())


def hockey_sticks(lds: Sequence[LossDistribution], epsilons: np.ndarray) -> np.ndarray:
    """``max over the pairs of delta_DP(eps)`` at every ``eps`` (any sign), vectorised per pair.

    With a pair's losses ``L`` ascending, the masses above ``eps`` are suffix sums:
    ``delta(eps) = P_inf + sum_{L > eps} P - e^eps sum_{L > eps} Q``.
    """
    eps = np.asarray(epsilons, dtype=np.float64)
    out = np.zeros(eps.shape)
    for ld in lds:
        asc = ld.losses[::-1]  # the loss distribution is in decreasing-loss order
        p_asc, q_asc = ld.p_mass[::-1], ld.q_mass[::-1]
        sp = np.concatenate((np.cumsum(p_asc[::-1])[::-1], [0.0]))
        sq = np.concatenate((np.cumsum(q_asc[::-1])[::-1], [0.0]))
        i = np.searchsorted(asc, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            d = ld.infinite_mass + sp[i] - np.exp(eps) * sq[i]
        out = np.maximum(out, np.nan_to_num(np.clip(d, 0.0, 1.0), nan=0.0))
    return out


def dominating_pld(pairs: PrivacyProfile | Sequence[LossDistribution],
                   discretization: float = DISCRETIZATION) -> "PrivacyLossDistribution":
    """One PLD that dominates every given ordered pair (all of a mechanism's, or one).

    The maximum of the pairs' hockey-stick curves ``delta(eps)`` is convex in ``e^eps``,
    hence itself the curve of a single pair of distributions (Zhu, Dong & Wang 2022), and
    dominating pairs compose (ibid., Theorem 10). It is evaluated exactly at every pair's
    loss values rounded *up* to the grid (and one grid point below the smallest), and turned
    into a PLD by dp_accounting's pessimistic Connect-the-Dots (Doroshenko et al. 2022,
    Algorithm 1): between grid points the Connect-the-Dots curve interpolates linearly in
    ``e^eps``, which lies above the convex maximum, so the PLD is pessimistic, and it is
    exact at the grid points. For a single pair this is the pair's own Connect-the-Dots PLD
    (tighter than dp_accounting's privacy buckets on the same grid).

    Chosen over an exact dominating loss distribution interpolated at the union of the
    pairs' loss breakpoints and discretised by privacy buckets: on heterogeneous
    sequences this construction gave equal or smaller deltas and epsilons in every case
    tried (docs/repeated-releases.md).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    lds = [pair.loss_distribution() for pair in pairs.pairs] if isinstance(pairs, PrivacyProfile) else list(pairs)
    if not lds:
        raise InvalidParameterError("pairs", [], "at least one loss distribution")
    losses = np.concatenate([ld.losses for ld in lds] + [np.zeros(1)])
    ks = np.unique(np.ceil(losses / discretization - 1e-9).astype(np.int64))
    ks = np.unique(np.concatenate(([int(np.floor(losses.min() / discretization)) - 1], ks)))
    deltas = np.minimum.accumulate(hockey_sticks(lds, ks * discretization))  # non-increasing up to round-off
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, ks, deltas)
    return pld_lib.PrivacyLossDistribution(pmf)


def _units(item_lds: list[list[LossDistribution]], max_combinations: int) -> tuple[list[list[tuple]], list[bool]]:
    """Per item, the units to combine: each pair alone, or (beyond the cap) all pairs as one
    dominating unit; items with the fewest pairs are enumerated first."""
    order = sorted(range(len(item_lds)), key=lambda i: len(item_lds[i]))
    out: list[list[tuple]] = [[] for _ in item_lds]
    dominated = [False] * len(item_lds)
    product = 1
    for i in order:
        m = len(item_lds[i])
        if product * m <= max_combinations:
            out[i] = [(ld,) for ld in item_lds[i]]
            product *= m
        else:
            out[i] = [tuple(item_lds[i])]
            dominated[i] = True
    return out, dominated


def _composed_plds(units: list[list[tuple]], counts: Sequence[int], discretization: float):
    """The composed PLD of every combination of units (each unit's PLD self-composed once)."""
    cache: dict[tuple[int, int], "PrivacyLossDistribution"] = {}
    for combo in itertools.product(*[range(len(u)) for u in units]):
        total = None
        for i, j in enumerate(combo):
            # dp_accounting's truncation bounds overflow harmlessly inside scipy's logsumexp
            with np.errstate(over="ignore", divide="ignore"):
                if (i, j) not in cache:
                    pld = dominating_pld(units[i][j], discretization)
                    cache[(i, j)] = pld.self_compose(int(counts[i])) if counts[i] > 1 else pld
                total = cache[(i, j)] if total is None else total.compose(cache[(i, j)])
        yield total


# ------------------------------------------------------------------------------ bounds
def _pld_bound(units, counts, eps, dlt, discretization, dominated) -> Bound:
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    for total in _composed_plds(units, counts, discretization):
        if eps is not None:
            worst_d = max(worst_d, min(1.0, float(total.get_delta_for_epsilon(eps))))
        if dlt is not None:
            worst_e = max(worst_e, float(total.get_epsilon_for_delta(dlt)))
    how = "dominating pairs for some mechanisms, " if any(dominated) else ""
    return Bound("pld", worst_e, worst_d,
                 f"dp_accounting PLD, {how}pessimistic Connect-the-Dots, grid {discretization:g}")


@lru_cache(maxsize=64)
def _compositions(k: int, m: int) -> np.ndarray:
    """All count vectors of ``m`` non-negative integers summing to ``k`` (rows)."""
    if m == 1:
        return np.array([[k]], dtype=np.int64)
    blocks = []
    for first in range(k + 1):
        rest = _compositions(k - first, m - 1)
        blocks.append(np.hstack((np.full((rest.shape[0], 1), first, dtype=np.int64), rest)))
    return np.vstack(blocks)


def _kfold_states(ld: LossDistribution, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Loss values and log-masses (under ``p``) of the k-fold product's finite states,
    and the product's log probability of no infinite-loss output."""
    from scipy.special import gammaln

    p = np.asarray(ld.p_mass, float)
    finite = float(p.sum())
    total = finite + float(ld.infinite_mass)
    if ld.losses.size == 0:
        return np.zeros(0), np.zeros(0), -math.inf
    counts = _compositions(int(k), int(ld.losses.size))
    log_w = np.log(p / total)
    log_coef = math.lgamma(k + 1) - np.sum(gammaln(counts + 1.0), axis=1)
    logp = log_coef + counts @ log_w
    loss = counts @ np.asarray(ld.losses, float)
    return loss, logp, k * math.log(finite / total) if ld.infinite_mass > 0 else 0.0


def _state_count(units, counts) -> int:
    total = 0
    for combo in itertools.product(*units):
        n = 1
        for (ld,), k in zip(combo, counts):
            n *= math.comb(int(k) + ld.losses.size - 1, max(ld.losses.size - 1, 0)) if ld.losses.size else 1
        total = max(total, n)
    return total


def _exact_bound(units, counts, eps, dlt) -> Bound:
    """Enumerate the composed loss states of every pair combination (multinomial masses).

    For one pair with atoms ``(L_a, P_a)`` (and infinite mass ``P_inf``) the k-fold product
    has, for each count vector ``n`` (``sum n_a = k``), the loss ``sum n_a L_a`` with mass
    ``k! / prod n_a! prod P_a^n_a`` under ``p``, and the same under ``p'`` times
    ``e^-loss``; any output with an infinite-loss coordinate has infinite loss
    (probability ``1 - (1 - P_inf)^k``). Products of items multiply masses and add losses.
    The hockey-stick is then evaluated exactly on these states (:class:`FloatPair`).
    """
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    for combo in itertools.product(*units):
        loss = np.zeros(1)
        logp = np.zeros(1)
        log_finite = 0.0
        for (ld,), k in zip(combo, counts):
            l_i, p_i, f_i = _kfold_states(ld, int(k))
            loss = (loss[:, None] + l_i[None, :]).ravel()
            logp = (logp[:, None] + p_i[None, :]).ravel()
            log_finite += f_i
        inf_mass = -math.expm1(log_finite)
        with np.errstate(under="ignore", over="ignore"):
            pm = np.exp(logp)
            qm = np.exp(logp - loss)
        pair = FloatPair(np.concatenate((pm, [inf_mass])), np.concatenate((qm, [0.0])))
        if eps is not None:
            worst_d = max(worst_d, pair.delta_dp(eps))
        if dlt is not None:
            worst_e = max(worst_e, pair.epsilon_dp(dlt))
    return Bound("exact", worst_e, worst_d, "enumerated loss states (multinomial), exact up to float rounding")


def _rdp_bound(profiles, counts, eps, dlt, orders) -> Bound:
    a_pos = [float(a) for a in orders if float(a) > 1.0]   # orders <= 1 give no (eps, delta) bound
    if not a_pos:
        return Bound("rdp", math.inf if dlt is not None else None, 1.0 if eps is not None else None, "no order > 1")
    total = np.zeros(len(a_pos))
    for prof, k in zip(profiles, counts):   # sum of per-item maxima: valid for every pair combination
        total = total + k * renyi_curve(prof, a_pos)
    out_e = out_d = None
    detail = []
    if dlt is not None:
        out_e, a = rdp_to_dp(a_pos, total, dlt)
        out_e = float(out_e)
        detail.append(f"epsilon at order {a:g}")
    if eps is not None:
        out_d, a = rdp_to_delta(a_pos, total, eps)
        detail.append(f"delta at order {a:g}")
    return Bound("rdp", out_e, out_d, "Rényi curves summed, Canonne-Kamath-Steinke Prop. 12; " + ", ".join(detail))


def _pure_bound(profiles, counts, eps, dlt) -> Bound:
    total = math.fsum(k * prof.epsilon_pure for prof, k in zip(profiles, counts)) if all(
        math.isfinite(p.epsilon_pure) for p in profiles) else math.inf
    out_e = total if dlt is not None else None
    out_d = (0.0 if total <= eps else None) if eps is not None else None
    return Bound("pure", out_e, out_d, "sum of k * eps_pure (exact for one mechanism at delta = 0)")


def _basic_bound(profiles, counts, eps, dlt) -> Bound:
    k_total = sum(counts)
    out_e = out_d = None
    if dlt is not None:
        out_e = math.fsum(k * prof.epsilon_dp(dlt / k_total) for prof, k in zip(profiles, counts))
    if eps is not None:
        out_d = min(1.0, math.fsum(k * prof.delta_dp(eps / k_total) for prof, k in zip(profiles, counts)))
    return Bound("basic", out_e, out_d, "basic composition, (eps, delta) split evenly over the releases")


def _best(cands: list[Bound], attr: str) -> tuple[float | None, str | None]:
    vals = [(getattr(c, attr), METHODS.index(c.method), c.method) for c in cands if getattr(c, attr) is not None]
    if not vals:
        return None, None
    v, _, m = min(vals)
    return v, m


# ---------------------------------------------------------------------------------- API
def compose_best(items: Sequence[Item], *, epsilon: float | None = None, delta: float | None = None,
                 orders: Sequence[float] = DEFAULT_ORDERS, discretization: float = DISCRETIZATION,
                 max_combinations: int = MAX_COMBINATIONS, max_exact_states: int = MAX_EXACT_STATES,
                 methods: Sequence[str] = METHODS, max_memory: int | None = None) -> Composed:
    """The tightest of several upper bounds on a (heterogeneous) composition.

    Parameters
    ----------
    items:
        ``(profile, count)`` pairs: ``count`` independent releases of the mechanism whose
        single-release :class:`~optnoise.analysis.profile.PrivacyProfile` is ``profile``;
        all on the same pair of neighbouring datasets (module docstring for which pair
        combinations are covered).
    epsilon, delta:
        Where to evaluate: ``delta_dp`` at ``epsilon`` and/or ``epsilon_dp`` at ``delta``.
    orders:
        Rényi orders for the ``rdp`` bound (``inf`` included by default).
    discretization:
        Loss grid of the PLDs.
    max_combinations, max_exact_states:
        Enumeration caps (pair combinations of different mechanisms — a single mechanism's
        pairs are always composed one by one; composed loss states of the ``exact`` bound).
    methods:
        Which bounds to compute (all by default).
    max_memory:
        Bytes the composed PLDs may take (:mod:`optnoise.resources`): their support grows
        linearly in the counts, so a large count is refused before dp_accounting allocates it.

    Returns
    -------
    Composed
        The smallest ``epsilon_dp`` and ``delta_dp`` over the candidates, which bound won
        each (``bound``) and all candidates.
    """
    if not items:
        raise InvalidParameterError("items", [], "at least one (profile, count) pair")
    profiles, counts = [], []
    for it in items:
        try:
            prof, k = it
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("items", it, "(profile, count) pairs") from exc
        if not isinstance(prof, PrivacyProfile):
            raise InvalidParameterError("items", type(prof).__name__, "PrivacyProfile objects")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer, float)) or int(k) != k or k < 1:
            raise InvalidParameterError("count", k, "an integer count >= 1")
        profiles.append(prof)
        counts.append(int(k))
    eps = None if epsilon is None else check_epsilon(epsilon)
    dlt = None if delta is None else check_delta(delta)
    if eps is None and dlt is None:
        raise InvalidParameterError("epsilon", None, "an epsilon and/or a delta to evaluate at")
    unknown = set(methods) - set(METHODS)
    if unknown or not methods:
        raise InvalidParameterError("methods", sorted(unknown), ", ".join(METHODS))

    item_lds = [_distinct_lds(p) for p in profiles]
    if "pld" in methods:
        for lds, k in zip(item_lds, counts):
            finite = np.concatenate([ld.losses[np.isfinite(ld.losses)] for ld in lds] + [np.zeros(1)])
            cells = float(finite.max() - finite.min()) / discretization + 2
            check(pld_bytes(cells, k), parameter="k", value=k, max_memory=max_memory,
                  what=f"composing {int(k)} releases with privacy loss distributions (their support grows with "
                       f"the number of releases, from {math.ceil(cells)} grid points)")
    # one mechanism: its pairs are composed one by one, which is tight (module docstring)
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    units, dominated = _units(item_lds, cap)
    cands: list[Bound] = []
    if "exact" in methods and not any(dominated) and _state_count(units, counts) <= max_exact_states:
        cands.append(_exact_bound(units, counts, eps, dlt))
    if "pld" in methods:
        cands.append(_pld_bound(units, counts, eps, dlt, discretization, dominated))
    if "rdp" in methods:
        cands.append(_rdp_bound(profiles, counts, eps, dlt, list(orders)))
    if "pure" in methods:
        cands.append(_pure_bound(profiles, counts, eps, dlt))
    if "basic" in methods:
        cands.append(_basic_bound(profiles, counts, eps, dlt))
    cands.sort(key=lambda c: METHODS.index(c.method))

    bound: dict[str, str] = {}
    e_best = d_best = None
    if dlt is not None:
        e_best, bound["epsilon_dp"] = _best(cands, "epsilon")  # type: ignore[assignment]
    if eps is not None:
        d_best, method = _best(cands, "delta")
        d_best, bound["delta_dp"] = (d_best, method) if d_best is not None else (1.0, "trivial")  # type: ignore[assignment]
    return Composed(tuple(counts), eps, dlt, d_best, e_best, bound, tuple(cands))


def compose(profile: PrivacyProfile, k: int, *, epsilon: float | None = None, delta: float | None = None,
            discretization: float = DISCRETIZATION, max_memory: int | None = None) -> Composed:
    """Guarantee of ``k`` independent releases of the same query: :func:`compose_best` of one item.

    Parameters
    ----------
    profile:
        The single-release profile (its pairs carry the loss distributions).
    k:
        Number of releases, ``>= 1``.
    epsilon, delta:
        Where to evaluate: ``delta_dp`` at ``epsilon`` and/or ``epsilon_dp`` at ``delta``.
    discretization:
        Loss grid of the PLD; rounding is pessimistic, so values are upper bounds.
    max_memory:
        Bytes the composed PLDs may take (:mod:`optnoise.resources`): their support grows
        linearly in ``k``, so a large ``k`` is refused before dp_accounting allocates it.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer, float)) or int(k) != k or k < 1:
        raise InvalidParameterError("k", k, "an integer k >= 1")
    return compose_best([(profile, int(k))], epsilon=epsilon, delta=delta, discretization=discretization,
                        max_memory=max_memory)


def compose_sequence(items: Sequence[Item], *, epsilon: float | None = None, delta: float | None = None,
                     discretization: float = DISCRETIZATION, max_memory: int | None = None) -> Composed:
    """Guarantee of different mechanisms applied to the same neighbouring datasets.

    Each item is ``(profile, count)``: a mechanism released ``count`` times. The result is
    :func:`compose_best`: the best of the exact enumeration (small cases), the PLDs (each
    mechanism's pairs, or its dominating pair when the pair combinations exceed
    :data:`MAX_COMBINATIONS`), RDP, the pure bound ``sum count * epsilon_pure`` and basic
    composition; ``bound`` says which won. For one mechanism this is :func:`compose`.

    Examples: the columns of one record in a table release (each column's mechanism under
    the record's neighbourhood), or a daily statistic and a weekly one.
    """
    return compose_best(items, epsilon=epsilon, delta=delta, discretization=discretization, max_memory=max_memory)


def delta_curve(items: Sequence[Item], epsilons: Sequence[float], *, orders: Sequence[float] = DEFAULT_ORDERS,
                discretization: float = DISCRETIZATION,
                max_combinations: int = MAX_COMBINATIONS) -> tuple[np.ndarray, np.ndarray]:
    """The composed privacy profile ``delta(eps)`` at many epsilons (data for a plot).

    The minimum of the PLD bound (composed once, evaluated at every epsilon), the RDP
    bound and the pure bound, as in :func:`compose_best` (the ``exact`` and ``basic``
    bounds are left out here for speed). Returns ``(epsilons, deltas)``.
    """
    eps = np.asarray([float(e) for e in epsilons], dtype=float)
    if eps.size == 0 or np.any(~(eps >= 0)):
        raise InvalidParameterError("epsilons", list(epsilons), "epsilons >= 0")
    profiles = [p for p, _ in items]
    counts = [int(k) for _, k in items]
    item_lds = [_distinct_lds(p) for p in profiles]
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    units, _ = _units(item_lds, cap)
    worst = np.zeros(eps.size)
    for total in _composed_plds(units, counts, discretization):
        worst = np.maximum(worst, np.minimum(1.0, np.asarray(total.get_delta_for_epsilon(eps), dtype=float)))
    a_pos = [float(a) for a in orders if float(a) > 1.0]
    rdp_total = sum(k * renyi_curve(p, a_pos) for p, k in zip(profiles, counts))
    rdp = np.array([rdp_to_delta(a_pos, rdp_total, e)[0] for e in eps])
    pure_total = math.fsum(k * p.epsilon_pure for p, k in zip(profiles, counts))
    pure = np.where(eps >= pure_total, 0.0, 1.0)
    return eps, np.minimum(np.minimum(worst, rdp), pure)


__all__ = ["Bound", "Composed", "DISCRETIZATION", "METHODS", "compose", "compose_best", "compose_sequence",
           "delta_curve", "dominating_pld", "hockey_sticks"]
