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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidParameterError
from ..target import check_delta, check_epsilon
from .floating import LossDistribution

if TYPE_CHECKING:  # dp_accounting is imported where it is used: it is slow to import
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    from .profile import PrivacyProfile

#: Loss discretisation of the PLDs (dp_accounting's default).
DISCRETIZATION = 1e-4


@dataclass(frozen=True)
class Composed:
    """Guarantee after ``k`` releases (CLI key ``composed``)."""

    k: int
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    epsilon_dp: float | None

    def to_json(self) -> dict:
        return {"k": self.k, "epsilon": self.epsilon, "delta": self.delta,
                "delta_dp": self.delta_dp, "epsilon_dp": self.epsilon_dp}


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
            discretization: float = DISCRETIZATION) -> Composed:
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
    """
    if int(k) != k or k < 1:
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
        composed = _pld(ld, discretization).self_compose(int(k))
        if eps is not None:
            deltas.append(float(composed.get_delta_for_epsilon(eps)))
        if dlt is not None:
            epsilons.append(float(composed.get_epsilon_for_delta(dlt)))
    return Composed(int(k), eps, dlt, max(deltas) if deltas else None, max(epsilons) if epsilons else None)
