"""Composition: the guarantee after ``k`` releases of the same query.

Built on Google's ``dp_accounting`` privacy loss distributions (PLDs): for each
ordered neighbouring pair of the mechanism, the pair's exact loss distribution
(distinct losses with their masses under ``p`` and ``p'``, from
:mod:`optnoise.analysis.floating`) becomes a PLD through
``from_two_probability_mass_functions`` with pessimistic rounding, which is
self-composed ``k`` times. The neighbouring datasets are the same in all ``k``
releases, so the composed guarantee is the maximum over pairs of the composed
pair's guarantee. Pairs with identical loss distributions are composed once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pld_bytes
from ..target import check_delta, check_epsilon
from .floating import LossDistribution

if TYPE_CHECKING:  # dp_accounting is imported where it is used: it is slow to import
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    from .profile import PrivacyProfile

#: Loss discretisation of the PLDs (dp_accounting's default).
DISCRETIZATION = 1e-4


@dataclass(frozen=True)
class Composed:
    """Guarantee after ``k`` releases (CLI key ``composed``).

    ``bound`` says which bound gave the values: ``"pld"`` (dp_accounting's privacy loss
    distributions, pessimistic) or ``"pure"`` (``k * epsilon_pure``, exact for pure
    mechanisms); the result is the better of the two, never looser than the simple bound.
    """

    k: int
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    epsilon_dp: float | None
    bound: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"k": self.k, "epsilon": self.epsilon, "delta": self.delta,
                "delta_dp": self.delta_dp, "epsilon_dp": self.epsilon_dp, "bound": self.bound}


def _pld(ld: LossDistribution, discretization: float) -> "PrivacyLossDistribution":
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    keys = range(ld.losses.size)
    with np.errstate(divide="ignore"):
        log_upper = dict(zip(keys, np.log(ld.p_mass).tolist()))
        log_lower = dict(zip(keys, np.log(ld.q_mass).tolist()))
    if ld.infinite_mass > 0:
        log_upper[-1] = math.log(ld.infinite_mass)
        log_lower[-1] = -math.inf
    return pld_lib.from_two_probability_mass_functions(
        log_lower, log_upper, pessimistic_estimate=True,
        value_discretization_interval=discretization, symmetric=True)


def compose(profile: "PrivacyProfile", k: int, *, epsilon: float | None = None, delta: float | None = None,
            discretization: float = DISCRETIZATION, max_memory: int | None = None) -> Composed:
    """Guarantee of ``k`` independent releases of the same query.

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
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InvalidParameterError("k", k, "an integer k >= 1")
    eps = None if epsilon is None else check_epsilon(epsilon)
    dlt = None if delta is None else check_delta(delta)
    seen: dict[tuple[bytes, bytes, bytes, float], None] = {}
    deltas: list[float] = []
    epsilons: list[float] = []
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (np.round(ld.losses, 12).tobytes(), np.round(ld.p_mass, 15).tobytes(),
               np.round(ld.q_mass, 15).tobytes(), ld.infinite_mass)
        if key in seen:
            continue
        seen[key] = None
        finite = ld.losses[np.isfinite(ld.losses)]
        cells = (float(finite.max() - finite.min()) if finite.size else 0.0) / discretization + 2
        check(pld_bytes(cells, k), parameter="k", value=k, max_memory=max_memory,
              what=f"{int(k)} compositions of a loss distribution over {cells:.3g} grid points")
        composed = _pld(ld, discretization).self_compose(int(k))
        if eps is not None:
            deltas.append(float(composed.get_delta_for_epsilon(eps)))
        if dlt is not None:
            epsilons.append(float(composed.get_epsilon_for_delta(dlt)))
    pure = int(k) * profile.epsilon_pure
    d, e, bound = best_of(eps, dlt, max(deltas) if deltas else None, max(epsilons) if epsilons else None, pure)
    return Composed(int(k), eps, dlt, d, e, bound)


def best_of(epsilon: float | None, delta: float | None, pld_delta: float | None, pld_epsilon: float | None,
            pure_epsilon: float) -> tuple[float | None, float | None, dict]:
    """The better of the PLD values and the pure bound ``sum k_i epsilon_pure_i`` (which gives
    ``delta = 0`` at every ``eps >= `` it, and ``eps = `` it at every delta). Returns
    ``(delta at epsilon, epsilon at delta, which bound won for each)``."""
    bound = {}
    d = e = None
    if epsilon is not None:
        use_pure = epsilon >= pure_epsilon
        d = 0.0 if use_pure else pld_delta
        bound["delta_dp"] = "pure" if use_pure and (pld_delta or 0.0) > 0.0 else "pld"
    if delta is not None:
        use_pure = pure_epsilon <= (pld_epsilon if pld_epsilon is not None else math.inf)
        e = pure_epsilon if use_pure else pld_epsilon
        bound["epsilon_dp"] = "pure" if use_pure and pure_epsilon < (pld_epsilon or math.inf) else "pld"
    return d, e, bound


# ------------------------------------------------------------------ different mechanisms in sequence
@dataclass(frozen=True)
class SequenceComposed:
    """Guarantee of a sequence of different mechanisms (JSON keys in :meth:`to_json`)."""

    counts: tuple[int, ...]
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    epsilon_dp: float | None
    bound: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"counts": list(self.counts), "epsilon": self.epsilon, "delta": self.delta,
                "delta_dp": self.delta_dp, "epsilon_dp": self.epsilon_dp, "bound": self.bound}


def profile_deltas(profile: "PrivacyProfile", epsilons: np.ndarray) -> np.ndarray:
    """``max over pairs of delta_DP(eps)`` at every ``eps`` (any sign), vectorised per pair.

    With a pair's losses ``L`` ascending, the masses above ``eps`` are suffix sums:
    ``delta(eps) = P_inf + sum_{L > eps} P - e^eps sum_{L > eps} Q``.
    """
    eps = np.asarray(epsilons, dtype=np.float64)
    out = np.zeros(eps.shape)
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        asc = ld.losses[::-1]  # the loss distribution is in decreasing-loss order
        p_asc, q_asc = ld.p_mass[::-1], ld.q_mass[::-1]
        sp = np.concatenate((np.cumsum(p_asc[::-1])[::-1], [0.0]))
        sq = np.concatenate((np.cumsum(q_asc[::-1])[::-1], [0.0]))
        i = np.searchsorted(asc, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            d = ld.infinite_mass + sp[i] - np.exp(eps) * sq[i]
        out = np.maximum(out, np.nan_to_num(np.clip(d, 0.0, 1.0), nan=0.0))
    return out


def dominating_pld(profile: "PrivacyProfile", discretization: float = DISCRETIZATION) -> "PrivacyLossDistribution":
    """One PLD that dominates every ordered pair of a mechanism (dp_accounting).

    The mechanism's privacy profile ``delta(eps) = max over pairs of the hockey-stick`` is
    the profile of a single pair of distributions (Zhu, Dong & Wang 2022: the maximum of
    hockey-stick curves is convex in ``e^eps``, hence itself a hockey-stick curve), and
    dominating pairs compose (ibid., Theorem 10). It is evaluated exactly at every pair's
    loss values rounded *up* to the grid (and one grid point below the smallest), and turned
    into a PLD by dp_accounting's pessimistic Connect-the-Dots (Doroshenko et al. 2022,
    Algorithm 1): between grid points the Connect-the-Dots curve interpolates linearly in
    ``e^eps``, which lies above the convex profile, so the PLD is pessimistic.
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    losses = np.concatenate([pair.loss_distribution().losses for pair in profile.pairs] + [np.zeros(1)])
    ks = np.unique(np.ceil(losses / discretization - 1e-9).astype(np.int64))
    ks = np.concatenate(([int(np.floor(losses.min() / discretization)) - 1], ks))
    ks = np.unique(ks)
    deltas = profile_deltas(profile, ks * discretization)
    deltas = np.minimum.accumulate(deltas)  # non-increasing (it is, up to round-off)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, ks, deltas)
    return pld_lib.PrivacyLossDistribution(pmf)


def compose_sequence(items: Sequence[tuple["PrivacyProfile", int]], *, epsilon: float | None = None,
                     delta: float | None = None, discretization: float = DISCRETIZATION) -> SequenceComposed:
    """Guarantee of different mechanisms applied to the same neighbouring datasets.

    Each item is ``(profile, count)``: a mechanism released ``count`` times. The
    mechanisms' dominating PLDs (:func:`dominating_pld`) are composed with dp_accounting;
    every rounding is pessimistic, so the values are upper bounds; the result is the better
    of that and the pure bound ``sum count * epsilon_pure`` (:func:`best_of`). For one mechanism this
    is :func:`compose` up to the dominating-pair step (``compose`` composes each pair with
    itself, which is tight when the datasets are the same in every release).

    Examples: the columns of one record in a table release (each column's mechanism under
    the record's neighbourhood), or a daily statistic and a weekly one.
    """
    if not items:
        raise InvalidParameterError("items", [], "at least one (profile, count) pair")
    for _, count in items:
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise InvalidParameterError("count", count, "an integer count >= 1")
    eps = None if epsilon is None else check_epsilon(epsilon)
    dlt = None if delta is None else check_delta(delta)
    total = None
    for profile, count in items:
        pld = dominating_pld(profile, discretization)
        pld = pld.self_compose(int(count)) if count > 1 else pld
        total = pld if total is None else total.compose(pld)
    pure = sum(int(c) * p.epsilon_pure for p, c in items)
    d, e, bound = best_of(eps, dlt, None if eps is None else float(total.get_delta_for_epsilon(eps)),  # type: ignore[union-attr]
                          None if dlt is None else float(total.get_epsilon_for_delta(dlt)), pure)  # type: ignore[union-attr]
    return SequenceComposed(tuple(int(c) for _, c in items), eps, dlt, d, e, bound)
