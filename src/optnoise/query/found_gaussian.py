"""Discrete-Gaussian cells for keys found in the data, the selection composed with the cells
(issue 36, item 1).

With the geometric (:mod:`.threshold`) the cells are pure at ``epsilon / k`` (``k`` the cells
one unit moves: ``g = max_groups`` under add-remove, ``2g`` under replace) and the selection's
delta is added on top, so the threshold grows about linearly in ``g``. Gaussian noise grows
like ``sqrt(g)``. Here each cell's noise is the discrete Gaussian (Canonne, Kamath & Steinke
2020), quantized and certified exactly, and the selection is not a shift added to the cells'
delta but part of each cell's **privacy profile**: one unit moves a key's count by one, so the
pair of outputs of a key is either its noisy count moved by one (the noise's pairs ``+-1``,
the threshold being post-processing) or -- a key held by the unit alone, a candidate on one
side only -- "shown with probability ``p``" against "never shown" (and the reverse). A cell's
profile holds these four pairs (:func:`found_profile`); the unit's total composes the ``k``
cells over every combination of their pairs (:func:`optnoise.analysis.composition.compose_sequence`),
so a unit whose keys are all its own pays ``1 - (1 - p)^k``, one whose keys are all shared pays
the noise's ``k``-fold delta, and a mix pays the mix -- never the sum of the two. The whole delta
of the statistic serves both.

:func:`gaussian_cell` designs it: the least ``sigma`` (within 0.1 %) whose noise alone,
composed over the ``k`` cells, meets ``(epsilon, delta (1 - room))``, then the least threshold
and the largest boundary probability whose ``1 - (1 - p)^k`` is at most ``delta (1 - room)``
(:func:`.threshold.randomised_threshold`, exact rationals), then the **certificate**: the
composition of the ``k`` cells' exact profiles (noise pairs and selection pairs) read at the
statistic's delta must give at most its epsilon -- the same composition the unit's total makes
for this statistic. ``room`` is tried from :data:`ROOMS` until the certificate passes (the PLD's
proven allowance needs a little). Floats only steer the search (:func:`predicted_threshold`);
the certificate decides.

Proof: docs/proofs/key-selection.md ("The selection inside the cells' profile")
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from statistics import NormalDist
from typing import Any

from ..target import Target
from .mechanisms import Cell
from .threshold import Threshold, randomised_threshold, selection_cost

#: Relative room left under the statistic's delta for the noise's composition and for the
#: selection, tried in turn until the composed certificate meets the target, where the unit's
#: total enumerates every combination of the cells' pairs (at most :data:`ENUMERATED` cells) ...
ROOMS = (1e-3, 1e-2, 0.05, 0.2)
#: ... and beyond, where it composes the cells' dominating pairs (each carries both the noise's
#: delta and the selection's): the delta split between the two, as if added.
SPLIT_ROOMS = (0.3, 0.5, 0.6)
#: The most cells whose three distinct pairs the composition enumerates (``3^3`` = 27; ``3^4``
#: is above :data:`optnoise.analysis.composition.MAX_COMBINATIONS` = 64).
ENUMERATED = 3
#: Relative width at which the search for ``sigma`` stops (the noise is then at most this much
#: wider than the least that meets the target).
SIGMA_TOLERANCE = 1e-3
#: The Gaussian design is tried only where its predicted threshold is below this many times
#: the other designs' (:func:`predicted_threshold`: a float guide, about 1 % off).
TRY_BELOW = 1.05
#: The least ``sigma`` designed: below it the discrete Gaussian's losses spread over a range that
#: makes its composition slow (seconds per query), and the thresholds are a few units, where
#: the geometric's pure cells serve about as well.
MIN_SIGMA = 2.0
#: The method name of the design (``mechanism.method`` in the document).
METHOD = "discrete-gaussian-found"


def selection_pairs(p: Fraction) -> tuple[Any, Any]:
    """The two ordered pairs of a key held by one unit alone: ``(shown with probability p,
    never shown)`` and the reverse, on the outputs ``{hidden, shown}`` as exact integer weights
    over ``p``'s denominator (every shown value collapsed into one output: the other side gives
    them no mass, so the loss is infinite on each and collapsing them changes no divergence)."""
    from ..analysis.exact_fast import IntegerPair
    den, num = p.denominator, p.numerator
    own = IntegerPair.from_weights([den - num, num], [den, 0], den, "key of the unit alone: shown or not")
    rev = IntegerPair.from_weights([den, 0], [den - num, num], den, "key of the unit alone, reversed")
    return own, rev


def found_profile(noise_profile: Any, p: Fraction) -> Any:
    """A found key's exact profile: the noise's pairs (its count moved by one) and the
    selection's (:func:`selection_pairs`)."""
    from ..analysis.profile import PrivacyProfile
    return PrivacyProfile(tuple(noise_profile.pairs) + selection_pairs(p), None, exact=True, space="found key")


@dataclass(frozen=True, eq=False)
class FoundCell(Cell):
    """A cell of keys found in the data whose selection is inside its profile (module
    docstring): ``threshold`` is the rule its keys are released by, ``threshold.p`` the
    probability that a key held by one unit alone shows. The unit's total composes each of the
    cells one unit moves as its own part (``per_cell``: every combination of their pairs)."""

    threshold: Threshold | None = None
    per_cell: bool = True

    @property
    def noise_profile(self) -> Any:
        """The exact profile of the quantized noise alone (what a ledger composes; kept by
        :class:`.mechanisms.Cell`)."""
        return self.kept_profile

    def composition_profile(self) -> Any:
        return found_profile(self.noise_profile, self.threshold.p)  # type: ignore[union-attr]


def composed(profile: Any, cells: int, *, epsilon: float | None = None, delta: float | None = None) -> Any:
    """The composition of ``cells`` cells of ``profile`` as the unit's total makes it for this
    statistic (each cell its own part: every combination of their pairs, beyond 64 the
    dominating pairs of :func:`~optnoise.analysis.composition.compose_best`)."""
    from ..analysis.composition import compose_sequence
    return compose_sequence([(profile, 1)] * int(cells), epsilon=epsilon, delta=delta)


def gaussian_noise(sigma: float) -> Any:
    """The discrete Gaussian of ``sigma`` on the integers, neighbours one apart (a count of
    units), its quantized weights made exactly symmetric (:func:`.unbiased.symmetric_noise`:
    its pairs ``+1`` and ``-1`` then have one loss distribution, so the composition enumerates
    three pairs per cell, not four)."""
    from ..families import discrete_gaussian_pmf
    from ..mechanism import Mechanism
    from ..neighbourhood import Neighbourhood
    from .mechanisms import coarse
    from .unbiased import symmetric_noise
    name = f"discrete Gaussian (sigma = {sigma:.6g})"
    noise = symmetric_noise(coarse(Mechanism(discrete_gaussian_pmf(sigma), Neighbourhood.bd(1), None, name))[0], None)
    return replace(noise, name=name)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """The continuous Gaussian's delta at ``epsilon`` (Balle & Wang 2018, Thm 8): a float guide
    for the search, never a certificate."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return _phi(a - b) - math.exp(epsilon) * _phi(-a - b)


def predicted_sigma(epsilon: float, delta: float, cells: int) -> float:
    """The continuous Gaussian's least ``sigma`` at L2 sensitivity ``sqrt(cells)`` (a guide)."""
    lo, hi = 1e-3, 1e6
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if gaussian_delta(epsilon, mid, math.sqrt(cells)) <= delta else (mid, hi)
    return hi


def predicted_threshold(epsilon: float, delta: float, cells: int) -> float:
    """The threshold the design is expected to reach (continuous Gaussian, the whole delta for
    both the noise and the selection): a guide for whether to design it."""
    p = -math.expm1(math.log1p(-delta) / cells)
    return 1 + predicted_sigma(epsilon, delta, cells) * NormalDist().inv_cdf(1 - p)


def least_sigma(epsilon: float, goal: float, cells: int) -> float:
    """The least ``sigma`` (within :data:`SIGMA_TOLERANCE`) whose quantized noise composed over
    ``cells`` cells has a certified delta at ``epsilon`` of at most ``goal`` (bisection on
    ``log sigma`` from the continuous guide; the delta falls as ``sigma`` grows)."""
    def meets(sigma: float) -> bool:
        noise = Cell("s", gaussian_noise(sigma), "clamped-line", 1, 0, "").composition_profile()
        return composed(noise, cells, epsilon=epsilon).delta_dp <= goal

    guess = predicted_sigma(epsilon, goal, cells)
    lo, hi = guess * 0.97, guess * 1.03
    while not meets(hi):
        lo, hi = hi, hi * 1.1
    while meets(lo) and lo > MIN_SIGMA / 2:
        lo, hi = lo / 1.1, lo
    while hi / lo > 1 + SIGMA_TOLERANCE:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi


def gaussian_cell(name: str, n: int, offset: int, target: Target, cells: int, keys_per_unit: int) -> FoundCell | None:
    """The discrete-Gaussian cell on ``offset + {0..n}`` for a statistic at ``target`` (its whole
    ``(epsilon, delta)``) whose unit moves ``cells`` cells and holds at most ``keys_per_unit``
    keys (module docstring); ``None`` where no room of :data:`ROOMS` certifies, or where the
    continuous Gaussian's ``sigma`` would be below :data:`MIN_SIGMA`.

    Proof: docs/proofs/key-selection.md
    """
    eps, delta = target.epsilon, target.delta
    if predicted_sigma(eps, delta, cells) < MIN_SIGMA:
        return None
    for room in ROOMS if cells <= ENUMERATED else SPLIT_ROOMS:
        goal = delta * (1 - room)
        sigma = least_sigma(eps, goal, cells)
        noise = gaussian_noise(sigma)
        rule = randomised_threshold(noise.quantize(), cells, goal, lowest=offset)
        shift = selection_cost(rule.p, keys_per_unit)   # what a ledger adds (the noise alone)
        rule = Threshold(rule.tau, rule.p, keys_per_unit, shift[0], shift[1], rule.boundary, in_cells=True)
        cell = FoundCell(name, noise, "clamped-line", n, offset, "", threshold=rule)
        profile = cell.composition_profile()
        got = composed(profile, cells, delta=delta)
        if got.epsilon_dp <= eps:
            return _finished(cell, profile, got, sigma, cells, room, delta)
    return None


def _finished(cell: FoundCell, profile: Any, got: Any, sigma: float, cells: int, room: float, delta: float) -> FoundCell:
    """``cell`` with its description, its composed certificate and its share for basic
    composition: ``(eps1, delta / cells)``, ``eps1`` the cell's own exact epsilon there (their
    sum's epsilon is above the statistic's: the composition, not the sum, meets it)."""
    share = delta / cells
    e1 = profile.epsilon_dp(share)
    point = Target(e1, share) if math.isfinite(e1) else Target(got.epsilon_dp / cells, profile.delta_dp(
        got.epsilon_dp / cells))
    rule = cell.threshold
    built = (f"discrete Gaussian noise (sigma = {sigma:.6g}), output clamped to the domain; keys found in the data: "
             f"a key is released from a noisy count of {rule.tau} (and at {rule.tau - 1} by the boundary coin), "  # type: ignore[union-attr]
             f"the selection composed with the cells (the whole delta serves both)")
    design = {"method": METHOD, "sigma": sigma, "room": room,
              "composed": {"epsilon": got.epsilon_dp, "delta": delta, "bound": got.bound.get("epsilon_dp"),
                           "cells": cells,
                           "over": "the cells one unit moves, each with its pairs: its count moved by one and a key "
                                   "held by the unit alone (shown or never); every combination composed"
                                   + ("" if cells <= ENUMERATED else " (beyond three cells, their dominating pairs)")}}
    return replace(cell, built=built, design=design, target=point)


__all__ = ["ENUMERATED", "FoundCell", "METHOD", "MIN_SIGMA", "ROOMS", "SPLIT_ROOMS", "SIGMA_TOLERANCE", "TRY_BELOW", "composed", "found_profile",
           "gaussian_cell", "gaussian_delta", "gaussian_noise", "least_sigma", "predicted_sigma",
           "predicted_threshold", "selection_pairs"]
