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
    Privacy loss distributions (:mod:`~optnoise.analysis.dominating`): each pair (or, beyond
    the enumeration cap, each mechanism's dominating pair, :func:`dominating_pld`) is
    discretised by pessimistic Connect-the-Dots and self-composed -- with numpy's FFT
    (:mod:`~optnoise.analysis.dense_pld`) while the composition fits
    :data:`~optnoise.analysis.dense_pld.MAX_CELLS` grid cells, by Google's ``dp_accounting``
    beyond; an upper bound.
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

**PLDs (dp_accounting's behaviour, not a paper's; the numpy PLD shares the first).** Two
effects make a PLD value looser than the truth, which the other bounds repair:

* the loss grid: every loss is rounded *up* to a multiple of ``discretization`` (1e-4),
  so ``geometric(1/2)`` (loss ``ln 2 = 0.693147``) composed 10 times reports
  ``6.93194 > 10 ln 2`` at ``delta = 1e-6`` (the ``exact`` bound gives the true
  ``ln(2^10 - 1e-6 * 3^10) = 6.931471``);
* tail truncation (dp_accounting only): ``self_compose`` drops tail mass below ``1e-15`` and, to stay
  pessimistic, moves it to an infinite loss; at ``delta = 0`` a PLD therefore reports
  ``eps = inf`` even for a pure mechanism (``geometric(e^-1)`` composed 12 times is exactly
  12-DP: the ``pure`` bound), and PLD values at ``delta`` below about ``k * 1e-15`` say
  nothing. PLD deltas can also exceed 1 by round-off; they are capped at 1.

**Every candidate is proven (issue 25).** Each value is an upper bound in outward-rounded
arithmetic (:mod:`~optnoise.analysis.exact_composition`, :mod:`~optnoise.analysis.outward`):

* ``exact`` composes the pair's loss atoms by a binomial/multinomial sum (not by
  enumerating outcomes) with directed rounding; it is *exact* (``Bound.exact``) when the
  pairs' masses are exact and no loss had to be merged, else a proven bound;
* ``pld`` carries a numerical allowance: the l1 distance of the single-release
  Connect-the-Dots masses from the exact ones (propagated through the compositions), the
  error of the FFT compositions and of the evaluation, all bounded a priori
  (:mod:`~optnoise.analysis.dense_pld`, :func:`~optnoise.analysis.outward.pld_allowance`)
  and added to delta (epsilon is read
  at ``delta`` minus it, then certified). A pessimistic PLD is pessimistic only
  up to its round-off: uncorrected, it reported ``eps = 11.304029257962474`` for
  randomized response composed 300 times at ``delta = 1e-9``, below the exact
  ``11.304030160351596`` (docs/paper-notes.md);
* ``rdp`` adds the float error of the Rényi values and converts in interval arithmetic;
* ``pure`` and ``basic`` sum exactly and round up.

The candidates are computed in :mod:`~optnoise.analysis.composition_bounds`, the PLDs they
compose in :mod:`~optnoise.analysis.dominating`.

A candidate below an *exact* ``exact`` candidate is impossible for a proven bound: it is
reported in ``rejected`` and never chosen. ``Composed.exact`` says whether each reported
value is exact or a bound.
"""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pld_bytes
from ..target import check_delta, check_epsilon, check_epsilons
from .composition_bounds import (
    METHODS, Bound, basic_bound, best_of, exact_bound, exact_items, pld_bound, pure_bound, rdp_bound, rdp_totals,
)
from .dense_pld import MAX_CELLS as DENSE_CELLS
from .dominating import (
    DISCRETIZATION, combination_totals, distinct_pairs, dominating_pld, hockey_sticks, loss_cells, plan_units,
    pld_cells,
)
from .profile import PrivacyProfile
from .renyi import DEFAULT_ORDERS

#: Largest number of pair combinations enumerated before items are replaced by dominating pairs.
MAX_COMBINATIONS = 64
#: Largest number of composed loss states summed by the ``exact`` bound.
MAX_EXACT_STATES = 50_000

Item = tuple[PrivacyProfile, int]


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class Composed:
    """Guarantee after repeated releases (CLI key ``composed``): the best of several bounds.

    ``counts`` holds how many times each mechanism was released (one entry for the
    self-composition of one mechanism; ``k`` is their sum). ``bound`` says which bound gave
    each value (``{"delta_dp": ..., "epsilon_dp": ...}``, also as :attr:`delta_bound` and
    :attr:`epsilon_bound`): ``"exact"``, ``"pld"``, ``"rdp"``, ``"pure"``, ``"basic"``, or
    ``"trivial"`` (``delta = 1`` when no bound says anything); ``exact`` whether that value
    is the exact composed guarantee (else a proven bound). ``candidates`` holds every bound
    computed, ``rejected`` the names of candidates found below an exact value (impossible
    for a proven bound; never chosen).
    """

    counts: tuple[int, ...]
    epsilon: float | None
    delta: float | None
    delta_dp: float | None
    epsilon_dp: float | None
    bound: dict = field(default_factory=dict)
    candidates: tuple[Bound, ...] = field(default_factory=tuple)
    exact: dict = field(default_factory=dict)
    rejected: tuple[str, ...] = field(default_factory=tuple)

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
                "epsilon_bound": self.epsilon_bound, "delta_bound": self.delta_bound, "exact": self.exact,
                "value_is": {key: ("exact" if flag else "bound") for key, flag in self.exact.items()},
                "rejected": list(self.rejected), "candidates": [c.to_json() for c in self.candidates]}


# ---------------------------------------------------------------------------------- API
def compose_best(items: Sequence[Item], *, epsilon: float | None = None, delta: float | None = None,
                 orders: Sequence[float] = DEFAULT_ORDERS, discretization: float = DISCRETIZATION,
                 max_combinations: int = MAX_COMBINATIONS, max_exact_states: int = MAX_EXACT_STATES,
                 methods: Sequence[str] = METHODS, max_memory: int | None = None,
                 mixed: Sequence[bool] | None = None, dense_cells: int = DENSE_CELLS) -> Composed:
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
        linearly in the counts, so a large count is refused before it is allocated.
    mixed:
        Per item, whether its ``count`` releases may each see a *different* pair of the item
        (the columns of a record that share one mechanism, each changed by its own distance)
        rather than the same pair. Such an item enters the PLD bound as its dominating pair
        (:func:`dominating_pld`), whose self-composition dominates every mix of pairs (Zhu,
        Dong & Wang 2022, Theorem 10), and the exact bound (per pair) is skipped; the RDP,
        pure and basic bounds take the worst pair per release, valid for any mix.
    dense_cells:
        Most grid cells a composed PLD may have to be composed with numpy's FFT
        (:mod:`~optnoise.analysis.dense_pld`); beyond, dp_accounting composes it (0: always).

    Returns
    -------
    Composed
        The smallest ``epsilon_dp`` and ``delta_dp`` over the candidates, which bound won
        each (``bound``) and all candidates.
    """
    profiles, counts = _checked(items)
    eps = None if epsilon is None else check_epsilon(epsilon)
    dlt = None if delta is None else check_delta(delta)
    if eps is None and dlt is None:
        raise InvalidParameterError("epsilon", None, "an epsilon and/or a delta to evaluate at")
    unknown = set(methods) - set(METHODS)
    if unknown or not methods:
        raise InvalidParameterError("methods", sorted(unknown), ", ".join(METHODS))
    if mixed is not None and len(mixed) != len(items):
        raise InvalidParameterError("mixed", list(mixed), f"one flag per item ({len(items)})")
    distinct = [distinct_pairs(p) for p in profiles]
    item_pairs = [[pair for pair, _ in d] for d in distinct]
    item_lds = [[ld for _, ld in d] for d in distinct]
    if "pld" in methods:
        _check_memory(item_lds, counts, discretization, max_memory)
    # one mechanism: its pairs are composed one by one, which is tight (module docstring)
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    units, dominated = plan_units([len(x) for x in item_lds], cap, mixed)
    cands: list[Bound] = []
    if "exact" in methods:
        combos = exact_items(item_pairs, units, counts, dominated, max_exact_states)
        if combos is not None:
            cands.append(exact_bound(combos, eps, dlt))
    if "pld" in methods:
        cands.append(pld_bound(item_lds, units, counts, eps, dlt, dominated, discretization, dense_cells))
    if "rdp" in methods:
        cands.append(rdp_bound(item_lds, profiles, counts, eps, dlt, list(orders)))
    if "pure" in methods:
        cands.append(pure_bound(profiles, counts, eps, dlt))
    if "basic" in methods:
        cands.append(basic_bound(profiles, counts, eps, dlt))
    return _chosen(cands, counts, eps, dlt)


def _checked(items: Sequence[Item]) -> tuple[list[PrivacyProfile], list[int]]:
    """The items' profiles and counts, validated."""
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
    return profiles, counts


def _check_memory(item_lds, counts: list[int], discretization: float, max_memory: int | None) -> None:
    """Refuse compositions whose PLDs would not fit ``max_memory`` (:mod:`optnoise.resources`)."""
    for lds, k in zip(item_lds, counts):
        cells = loss_cells(lds, discretization)
        check(pld_bytes(cells, k), parameter="k", value=k, max_memory=max_memory,
              what=f"composing {int(k)} releases with privacy loss distributions (their support grows with "
                   f"the number of releases, from {math.ceil(cells)} grid points)")


def _chosen(cands: list[Bound], counts: list[int], eps: float | None, dlt: float | None) -> Composed:
    """The :class:`Composed` of the candidates: the best of each value (:func:`best_of`)."""
    cands.sort(key=lambda c: METHODS.index(c.method))
    bound: dict[str, str] = {}
    exact: dict[str, bool] = {}
    rejected: list[str] = []
    e_best = d_best = None
    if dlt is not None:
        e_best, bound["epsilon_dp"], exact["epsilon_dp"], out = best_of(cands, "epsilon")  # type: ignore[assignment]
        rejected += out
    if eps is not None:
        d_best, method, exact["delta_dp"], out = best_of(cands, "delta")
        rejected += out
        d_best, bound["delta_dp"] = (d_best, method) if d_best is not None else (1.0, "trivial")  # type: ignore[assignment]
    return Composed(tuple(counts), eps, dlt, d_best, e_best, bound, tuple(cands), exact,
                    tuple(dict.fromkeys(rejected)))


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
        linearly in ``k``, so a large ``k`` is refused before it is allocated.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer, float)) or int(k) != k or k < 1:
        raise InvalidParameterError("k", k, "an integer k >= 1")
    return compose_best([(profile, int(k))], epsilon=epsilon, delta=delta, discretization=discretization,
                        max_memory=max_memory)


def compose_sequence(items: Sequence[Item], *, epsilon: float | None = None, delta: float | None = None,
                     discretization: float = DISCRETIZATION, max_memory: int | None = None,
                     mixed: Sequence[bool] | None = None) -> Composed:
    """Guarantee of different mechanisms applied to the same neighbouring datasets.

    Each item is ``(profile, count)``: a mechanism released ``count`` times. The result is
    :func:`compose_best`: the best of the exact enumeration (small cases), the PLDs (each
    mechanism's pairs, or its dominating pair when the pair combinations exceed
    :data:`MAX_COMBINATIONS`), RDP, the pure bound ``sum count * epsilon_pure`` and basic
    composition; ``bound`` says which won. For one mechanism this is :func:`compose`.

    Examples: the columns of one record in a table release (each column's mechanism under
    the record's neighbourhood), or a daily statistic and a weekly one.
    """
    return compose_best(items, epsilon=epsilon, delta=delta, discretization=discretization, max_memory=max_memory,
                        mixed=mixed)


def delta_curve(items: Sequence[Item], epsilons: Sequence[float], *, orders: Sequence[float] = DEFAULT_ORDERS,
                discretization: float = DISCRETIZATION,
                max_combinations: int = MAX_COMBINATIONS,
                dense_cells: int = DENSE_CELLS) -> tuple[np.ndarray, np.ndarray]:
    """The composed privacy profile ``delta(eps)`` at many epsilons (data for a plot).

    The minimum of the PLD bound (composed once, evaluated at every epsilon, its numerical
    allowance added), the RDP bound and the pure bound, as in :func:`compose_best` (the
    ``exact`` and ``basic`` bounds are left out here for speed); every value is an upper
    bound. Returns ``(epsilons, deltas)``.

    The PLDs are the same pessimistic Connect-the-Dots units as :func:`compose_best`'s,
    composed with numpy's FFT (:mod:`~optnoise.analysis.dense_pld`: no truncation, its own
    proven allowance) while the composition has at most
    :data:`~optnoise.analysis.dense_pld.MAX_CELLS` grid cells (``dense_cells``), by
    dp_accounting beyond (:func:`~optnoise.analysis.dominating.combination_totals`).
    """
    eps = np.asarray(check_epsilons(epsilons, allow_zero=True, allow_inf=True, accepted="epsilons >= 0"), dtype=float)
    profiles = [p for p, _ in items]
    counts = [int(k) for _, k in items]
    item_lds = [[ld for _, ld in distinct_pairs(p)] for p in profiles]
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    units, _ = plan_units([len(x) for x in item_lds], cap)
    worst = np.zeros(eps.size)
    for total in combination_totals(item_lds, units, counts, discretization, dense_cells):
        worst = np.maximum(worst, total.delta_upper(eps))
    a_pos = [float(a) for a in orders if float(a) > 1.0]
    totals = rdp_totals(item_lds, profiles, counts, a_pos) if a_pos else None
    rdp = np.array([rdp_bound(item_lds, profiles, counts, float(e), None, orders, totals).delta for e in eps])
    pure = np.array([1.0 if pure_bound(profiles, counts, float(e), None).delta is None else 0.0 for e in eps])
    return eps, np.minimum(np.minimum(worst, rdp), pure)


__all__ = ["Bound", "Composed", "DISCRETIZATION", "METHODS", "compose", "compose_best", "compose_sequence",
           "delta_curve", "dominating_pld", "hockey_sticks", "pld_cells"]
