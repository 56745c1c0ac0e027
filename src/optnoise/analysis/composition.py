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

**Every candidate is proven (issue 25).** Each value is an upper bound in outward-rounded
arithmetic (:mod:`~optnoise.analysis.exact_composition`, :mod:`~optnoise.analysis.outward`):

* ``exact`` composes the pair's loss atoms by a binomial/multinomial sum (not by
  enumerating outcomes) with directed rounding; it is *exact* (``Bound.exact``) when the
  pairs' masses are exact and no loss had to be merged, else a proven bound;
* ``pld`` carries a numerical allowance: the l1 distance of the single-release
  Connect-the-Dots masses from the exact ones (propagated through the compositions), the
  error of dp_accounting's FFT compositions and of the evaluation, all bounded a priori
  (:func:`~optnoise.analysis.outward.pld_allowance`) and added to delta (epsilon is read
  at ``delta`` minus it, then certified). A pessimistic PLD is pessimistic only
  up to its round-off: uncorrected, it reported ``eps = 11.304029257962474`` for
  randomized response composed 300 times at ``delta = 1e-9``, below the exact
  ``11.304030160351596`` (docs/paper-notes.md);
* ``rdp`` adds the float error of the Rényi values and converts in interval arithmetic;
* ``pure`` and ``basic`` sum exactly and round up.

A candidate below an *exact* ``exact`` candidate is impossible for a proven bound: it is
reported in ``rejected`` and never chosen. ``Composed.exact`` says whether each reported
value is exact or a bound.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..resources import check, pld_bytes
from ..target import check_delta, check_epsilon, check_epsilons
from .dense_pld import MAX_CELLS as DENSE_CELLS
from .dense_pld import DensePLD, composed_cells, delta_upper, from_grid, self_compose
from .dense_pld import compose as dense_compose
from .exact_composition import MAX_ATOMS, KFold, loss_atoms, state_count
from .floating import LossDistribution
from .outward import U, nudge_up, pld_allowance, rdp_delta_up, rdp_epsilon_up, renyi_allowance, sum_up
from .profile import PrivacyProfile
from .renyi import DEFAULT_ORDERS, renyi_curve

if TYPE_CHECKING:  # dp_accounting is imported where it is used: it is slow to import
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

#: Loss discretisation of the PLDs (dp_accounting's default).
DISCRETIZATION = 1e-4
#: Largest number of pair combinations enumerated before items are replaced by dominating pairs.
MAX_COMBINATIONS = 64
#: Largest number of composed loss states summed by the ``exact`` bound.
MAX_EXACT_STATES = 50_000
#: The bounds, in the order that names the winner of a tie.
METHODS: tuple[str, ...] = ("pure", "exact", "rdp", "pld", "basic")

Item = tuple[PrivacyProfile, int]


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Bound:
    """One candidate bound: ``epsilon`` at the requested delta, ``delta`` at the requested
    epsilon (``None`` when not requested or when this bound says nothing). Both are proven
    upper bounds; ``exact`` says that they are the exact composed values (rounded outward),
    ``allowance`` is the numerical error added on the safe side (the ``pld`` candidate)."""

    method: str
    epsilon: float | None
    delta: float | None
    detail: str = ""
    exact: bool = False
    allowance: float | None = None

    def to_json(self) -> dict:
        out = {"method": self.method, "epsilon_dp": self.epsilon, "delta_dp": self.delta, "detail": self.detail,
               "exact": self.exact}
        if self.allowance is not None:
            out["allowance"] = self.allowance
        return out


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


# ------------------------------------------------------------------ dominating pairs, PLDs
def _distinct(profile: PrivacyProfile) -> list[tuple[object, LossDistribution]]:
    """The profile's pairs with distinct loss distributions, each with its distribution."""
    seen: dict[tuple, tuple[object, LossDistribution]] = {}
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (np.round(ld.losses, 12).tobytes(), np.round(ld.p_mass, 15).tobytes(),
               np.round(ld.q_mass, 15).tobytes(), float(ld.infinite_mass))
        seen.setdefault(key, (pair, ld))
    return list(seen.values())


def _hockey(lds: Sequence[LossDistribution], epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``max over the pairs of delta_DP(eps)`` at every ``eps`` and a bound on its float error.

    With a pair's losses ``L`` ascending, the masses above ``eps`` are suffix sums:
    ``delta(eps) = P_inf + sum_{L > eps} P - e^eps sum_{L > eps} Q``; the product is taken as
    ``exp(eps + log sum Q)``, which never overflows (``e^eps Q < e^L Q = P`` above ``eps``).
    Error (standard model, :mod:`~optnoise.analysis.outward`): the sums of ``n`` masses
    ``(n + 16) 4u``, the product ``(|eps| + |log sum Q| + 4) 4u`` of its value, and the
    losses' own float error ``(max |L| + 2) 4u`` (a loss off by ``x`` moves delta by at most
    ``x`` times the mass it carries).
    """
    eps = np.asarray(epsilons, dtype=np.float64)
    out = np.zeros(eps.shape)
    err = np.zeros(eps.shape)
    for ld in lds:
        asc = ld.losses[::-1]  # the loss distribution is in decreasing-loss order
        p_asc, q_asc = ld.p_mass[::-1], ld.q_mass[::-1]
        sp = np.concatenate((np.cumsum(p_asc[::-1])[::-1], [0.0]))
        sq = np.concatenate((np.cumsum(q_asc[::-1])[::-1], [0.0]))
        i = np.searchsorted(asc, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            log_sq = np.log(sq[i])
            prod = np.exp(eps + log_sq)
            d = ld.infinite_mass + sp[i] - prod
        d = np.nan_to_num(np.clip(d, 0.0, 1.0), nan=0.0)
        n = ld.losses.size
        lmax = float(np.max(np.abs(ld.losses), initial=0.0))
        with np.errstate(invalid="ignore"):
            e = 4 * U * ((n + 16) * (sp[i] + ld.infinite_mass)
                         + np.nan_to_num(prod * (np.abs(eps) + np.abs(log_sq) + 4), nan=0.0, posinf=0.0) + lmax + 2)
        better = d > out
        out = np.where(better, d, out)
        err = np.maximum(err, e)
    return out, err


def hockey_sticks(lds: Sequence[LossDistribution], epsilons: np.ndarray) -> np.ndarray:
    """``max over the pairs of delta_DP(eps)`` at every ``eps`` (any sign), vectorised per pair
    (float values; :func:`dominating_pld` adds their error bound)."""
    return _hockey(lds, epsilons)[0]


@dataclass(frozen=True)
class _Unit:
    """A PLD ready to compose, with the numbers its numerical allowance needs: its span in
    grid cells and ``error``, a bound on the l1 distance of its masses from the exact
    Connect-the-Dots masses."""

    pld: "PrivacyLossDistribution"
    span: int
    error: float


def _ctd_masses(grid: np.ndarray, deltas: np.ndarray, errors: np.ndarray) -> tuple[np.ndarray, float]:
    """Pessimistic Connect-the-Dots masses (Doroshenko et al. 2022, Algorithm 1) at the
    grid losses ``grid`` (ascending) from the hockey-stick values ``deltas`` there: the mass
    at ``eps_i`` is ``(delta_i - delta_{i-1}) / (e^(eps_{i-1} - eps_i) - 1) +
    (delta_{i+1} - delta_i) / (e^(eps_{i+1} - eps_i) - 1)`` with ``delta_0 = 1`` and no
    second term at the last point; ``delta_n`` goes to infinity.

    Also a bound on the l1 distance of the float masses from the exact ones computed from the
    exact hockey-stick values, given that each ``deltas[i]`` is within ``errors[i]`` of it:
    a difference is off by the two errors plus its rounding, and is divided by
    ``|e^(+-gap) - 1|`` (within 4 ulps); the clamp at 0 only moves a mass towards its exact,
    non-negative value.
    """
    gaps = np.diff(grid)
    diffs = np.diff(deltas)
    down, up = np.expm1(-gaps), np.expm1(gaps)
    first = np.append(1.0 - deltas[0], diffs / down)
    second = np.append(diffs / up, 0.0)
    masses = np.maximum(0.0, first + second)
    d_err = errors[:-1] + errors[1:] + 4 * U * np.abs(diffs)
    err_first = np.append(errors[0] + 2 * U, d_err / np.abs(down) + 8 * U * np.abs(diffs / down))
    err_second = np.append(d_err / up + 8 * U * np.abs(diffs / up), 0.0)
    total = float(np.sum(err_first + err_second + 4 * U * (np.abs(first) + np.abs(second))))
    return masses, nudge_up(total, 1e-6, errors[-1])   # and the infinite mass: delta_n, within its error


def _unit_pld(lds: Sequence[LossDistribution], discretization: float) -> _Unit:
    """One PLD that dominates every given ordered pair, with its numerical error bounded.

    The maximum of the pairs' hockey-stick curves ``delta(eps)`` is convex in ``e^eps``,
    hence itself the curve of a single pair of distributions (Zhu, Dong & Wang 2022), and
    dominating pairs compose (ibid., Theorem 10). It is evaluated at every pair's loss
    values rounded *up* to the grid (and one grid point below the smallest) and turned into
    a PLD by pessimistic Connect-the-Dots: between grid points its curve interpolates
    linearly in ``e^eps``, above the convex maximum, and it is exact at the grid points.

    **Its round-off (issue 25).** The Connect-the-Dots PMF computed from the *exact* curve
    values is a probability PMF dominating the pairs; the float one differs from it by at
    most ``error`` in l1 (:func:`_ctd_masses`, from the error bounds of the curve values,
    :func:`_hockey`). Convolving probability vectors is 1-Lipschitz in l1 per factor and
    delta is a sum of masses times weights in ``[0, 1]``, so after ``k`` self-compositions
    the delta read off is within ``k error (1 + error)^(k - 1)`` of the exact PMF's
    (:func:`~optnoise.analysis.outward.pld_allowance` adds it).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ks, masses, infinity, error = _ctd_unit(lds, discretization)
    pmf = pld_pmf.create_pmf(loss_probs=dict(zip(ks.tolist(), masses.tolist())), discretization=discretization,
                             infinity_mass=infinity, pessimistic_estimate=True)
    return _Unit(pld_lib.PrivacyLossDistribution(pmf), int(ks.max() - ks.min() + 1), error)


def _ctd_unit(lds: Sequence[LossDistribution], discretization: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The pessimistic Connect-the-Dots PMF dominating every given pair (:func:`_unit_pld`):
    ``(grid indices, their masses, the mass at +inf, error)``, the grid losses being
    ``fl(index * discretization)`` and ``error`` a bound on the l1 distance of the float
    masses (``+inf`` included) from the exact ones."""
    lds = list(lds)
    if not lds:
        raise InvalidParameterError("pairs", [], "at least one loss distribution")
    losses = np.concatenate([ld.losses for ld in lds] + [np.zeros(1)])
    ks = np.unique(np.ceil(losses / discretization - 1e-9).astype(np.int64))
    ks = np.unique(np.concatenate(([int(np.floor(losses.min() / discretization)) - 1], ks)))
    grid = ks * discretization
    target, target_err = _hockey(lds, grid)
    deltas = np.minimum.accumulate(target)  # non-increasing up to round-off (the exact curve is)
    masses, error = _ctd_masses(grid, deltas, target_err)
    return ks, masses, float(deltas[-1]), error


def dominating_pld(pairs: PrivacyProfile | Sequence[LossDistribution],
                   discretization: float = DISCRETIZATION) -> "PrivacyLossDistribution":
    """One PLD that dominates every given ordered pair (all of a mechanism's, or one).

    Pessimistic Connect-the-Dots on the maximum of the pairs' hockey-stick curves (see
    :func:`_unit_pld` for the argument and its round-off, which callers that need a proven
    value add: :func:`compose_best` does). For a single pair this
    is the pair's own Connect-the-Dots PLD (tighter than dp_accounting's privacy buckets on
    the same grid). Chosen over an exact dominating loss distribution interpolated at the
    union of the pairs' loss breakpoints and discretised by privacy buckets: on
    heterogeneous sequences this construction gave equal or smaller deltas and epsilons in
    every case tried (docs/repeated-releases.md).
    """
    lds = [pair.loss_distribution() for pair in pairs.pairs] if isinstance(pairs, PrivacyProfile) else list(pairs)
    return _unit_pld(lds, discretization).pld


def _cells(lds: Sequence[LossDistribution], discretization: float) -> float:
    """Grid points of the PLD of loss distributions (their finite losses' range)."""
    finite = np.concatenate([ld.losses[np.isfinite(ld.losses)] for ld in lds] + [np.zeros(1)])
    return float(finite.max() - finite.min()) / discretization + 2


def pld_cells(profile: PrivacyProfile, discretization: float = DISCRETIZATION) -> float:
    """Grid points of a mechanism's single-release PLD (what :func:`compose_best` composes;
    for time and memory estimates, :mod:`optnoise.resources`)."""
    return _cells([ld for _, ld in _distinct(profile)], discretization)


def _units(sizes: list[int], max_combinations: int,
           mixed: Sequence[bool] | None = None) -> tuple[list[list[tuple[int, ...]]], list[bool]]:
    """Per item, the units to combine (indices of its pairs): each pair alone, or (beyond
    the cap, or for a ``mixed`` item with several pairs) all pairs as one dominating unit;
    items with the fewest pairs are enumerated first."""
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    out: list[list[tuple[int, ...]]] = [[] for _ in sizes]
    dominated = [False] * len(sizes)
    product = 1
    for i in order:
        m = sizes[i]
        if mixed is not None and mixed[i] and m > 1:
            out[i] = [tuple(range(m))]
            dominated[i] = True
        elif product * m <= max_combinations:
            out[i] = [(j,) for j in range(m)]
            product *= m
        else:
            out[i] = [tuple(range(m))]
            dominated[i] = True
    return out, dominated


def _composed_plds(item_lds: list[list[LossDistribution]], units: list[list[tuple[int, ...]]],
                   counts: Sequence[int], discretization: float):
    """``(PLD, allowance)`` of every combination of units: each unit's PLD self-composed,
    then composed with the others; the allowance bounds the numerical error of the whole
    computation (:func:`~optnoise.analysis.outward.pld_allowance`)."""
    cache: dict[tuple[int, int], tuple] = {}
    for combo in itertools.product(*[range(len(u)) for u in units]):
        total = None
        spans: list[int] = []
        errors: list[float] = []
        for i, j in enumerate(combo):
            # dp_accounting's truncation bounds overflow harmlessly inside scipy's logsumexp
            with np.errstate(over="ignore", divide="ignore"):
                if (i, j) not in cache:
                    unit = _unit_pld([item_lds[i][x] for x in units[i][j]], discretization)
                    pld = unit.pld.self_compose(int(counts[i])) if counts[i] > 1 else unit.pld
                    cache[(i, j)] = (pld, unit.span, unit.error)
                pld, span, error = cache[(i, j)]
                spans.append(span)
                errors.append(error)
                total = pld if total is None else total.compose(pld)
        yield total, pld_allowance(spans, counts, truncations=2 * len(spans), errors=errors)


def _dense_plds(item_lds: list[list[LossDistribution]], units: list[list[tuple[int, ...]]],
                counts: Sequence[int], discretization: float, max_cells: int) -> list[DensePLD] | None:
    """The composed PLD of every combination of units as :class:`~.dense_pld.DensePLD`
    (the same units as :func:`_composed_plds`), or ``None`` when one would have more than
    ``max_cells`` cells."""
    units_built: dict[tuple[int, int], DensePLD] = {}
    powers: dict[tuple[int, int], DensePLD] = {}
    out = []
    for combo in itertools.product(*[range(len(u)) for u in units]):
        for i, j in enumerate(combo):
            if (i, j) not in units_built:
                ks, masses, infinity, error = _ctd_unit([item_lds[i][x] for x in units[i][j]], discretization)
                units_built[(i, j)] = from_grid(ks, masses, infinity, error, discretization)
        if composed_cells([units_built[(i, j)].cells for i, j in enumerate(combo)], list(counts)) > max_cells:
            return None
        total = None
        for i, j in enumerate(combo):
            if (i, j) not in powers:
                powers[(i, j)] = self_compose(units_built[(i, j)], int(counts[i]))
            total = powers[(i, j)] if total is None else dense_compose(total, powers[(i, j)])
        out.append(total)
    return out


# ------------------------------------------------------------------------------ bounds
def _pld_epsilon(total, delta: float, allowance: float) -> float:
    """The PLD's epsilon at ``delta``, certified: read at ``delta - allowance``, then moved up
    until the PLD's delta there plus the allowance is at most ``delta``."""
    if delta <= allowance:
        return math.inf
    eps = float(total.get_epsilon_for_delta(delta - allowance))
    for step in range(12):
        if not math.isfinite(eps) or float(total.get_delta_for_epsilon(eps)) + allowance <= delta:
            return max(0.0, eps)
        eps = eps + max(abs(eps), 1e-12) * 2.0 ** (-44 + 3 * step)
    return math.inf


def _pld_bound(item_lds, units, counts, eps, dlt, discretization, dominated) -> Bound:
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    worst_a = 0.0
    for total, allowance in _composed_plds(item_lds, units, counts, discretization):
        worst_a = max(worst_a, allowance)
        if eps is not None:
            worst_d = max(worst_d, min(1.0, nudge_up(float(total.get_delta_for_epsilon(eps)), 4 * U, allowance)))
        if dlt is not None:
            worst_e = max(worst_e, _pld_epsilon(total, dlt, allowance))
    how = "dominating pairs for some mechanisms, " if any(dominated) else ""
    return Bound("pld", worst_e, worst_d,
                 f"dp_accounting PLD, {how}pessimistic Connect-the-Dots, grid {discretization:g}, numerical "
                 f"allowance {worst_a:.2g} added", allowance=worst_a)


def _exact_items(item_pairs, units, counts, dominated, max_states: int):
    """Per combination of pairs, the items ``(atoms, count)`` of the exact composition, or
    ``None`` when some pair has too many distinct losses or the states are too many."""
    if any(dominated):
        return None
    atoms: list[list] = []
    for pairs in item_pairs:
        got = [loss_atoms(p, MAX_ATOMS) for p in pairs]
        if any(a is None for a in got):
            return None
        atoms.append(got)
    combos = [[(atoms[i][unit[0]], int(counts[i])) for i, unit in enumerate(combo)]
              for combo in itertools.product(*units)]
    if sum(state_count(c) for c in combos) > max_states:
        return None
    return combos


def _exact_bound(combos, eps, dlt) -> Bound:
    """The exact composition (:mod:`~optnoise.analysis.exact_composition`), worst combination."""
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    exact = True
    for items in combos:
        kf = KFold(items)
        exact = exact and kf.exact
        if eps is not None:
            worst_d = max(worst_d, kf.delta_upper(eps))
        if dlt is not None:
            worst_e = max(worst_e, kf.epsilon_upper(dlt))
    how = "exact rational masses" if exact else "masses and ratios rounded up"
    return Bound("exact", worst_e, worst_d, f"binomial/multinomial sum over the loss atoms ({how}), directed "
                 "rounding", exact=exact)


def _rdp_totals(item_lds, profiles, counts, a_pos: list[float]) -> list[float]:
    """``sum_i k_i max_j D_alpha(S_i)`` at each order, each divergence with its float error
    added (:func:`~optnoise.analysis.outward.renyi_allowance`), summed exactly and rounded
    up; the sum of per-item maxima is valid for every pair combination."""
    parts: list[list] = [[] for _ in a_pos]
    for lds, prof, k in zip(item_lds, profiles, counts):
        atoms = max(ld.losses.size for ld in lds)
        lmax = max(float(np.max(np.abs(ld.losses), initial=0.0)) for ld in lds)
        for j, (alpha, value) in enumerate(zip(a_pos, renyi_curve(prof, a_pos))):
            value = float(value)
            parts[j].append(k * Fraction(nudge_up(value, 0.0, renyi_allowance(value, alpha, atoms, lmax)))
                            if math.isfinite(value) else math.inf)
    return [sum_up(p) for p in parts]


def _rdp_bound(item_lds, profiles, counts, eps, dlt, orders, totals=None) -> Bound:
    a_pos = [float(a) for a in orders if float(a) > 1.0]   # orders <= 1 give no (eps, delta) bound
    if not a_pos:
        return Bound("rdp", math.inf if dlt is not None else None, 1.0 if eps is not None else None, "no order > 1")
    totals = _rdp_totals(item_lds, profiles, counts, a_pos) if totals is None else totals
    out_e = out_d = None
    detail = []
    if dlt is not None:
        out_e, a = rdp_epsilon_up(a_pos, totals, dlt)
        detail.append(f"epsilon at order {a:g}")
    if eps is not None:
        out_d, a = rdp_delta_up(a_pos, totals, eps)
        detail.append(f"delta at order {a:g}")
    return Bound("rdp", out_e, out_d, "Rényi curves summed, Canonne-Kamath-Steinke Prop. 12 in interval arithmetic; "
                 + ", ".join(detail))


def _up(profile: PrivacyProfile, value: float, kind: str) -> float:
    """A float profile's value made an upper bound (its round-off, module
    :mod:`~optnoise.analysis.outward`); exact profiles are already rounded outward."""
    if profile.exact or not math.isfinite(value):
        return value
    if kind == "epsilon":
        return nudge_up(value, 2.0 ** -44, 2.0 ** -50)
    return min(1.0, nudge_up(value, 2.0 ** -20, 2.0 ** -48))


def _certified_epsilon(profile: PrivacyProfile, delta: float) -> float:
    """``epsilon_dp(delta)`` of one release, an upper bound: exact profiles round outward; a
    float value is moved up until the (rounded-up) delta there is at most ``delta``."""
    e = profile.epsilon_dp(delta)
    if profile.exact or not math.isfinite(e):
        return e
    for step in range(12):
        if _up(profile, profile.delta_dp(e), "delta") <= delta:
            return e
        e = e + max(e, 1e-12) * 2.0 ** (-44 + 3 * step)
    return min(_up(profile, profile.epsilon_pure, "epsilon"), math.inf)


def _pure_bound(profiles, counts, eps, dlt) -> Bound:
    pures = [_up(p, p.epsilon_pure, "epsilon") for p in profiles]
    total = sum_up(k * Fraction(e) for e, k in zip(pures, counts)) if all(math.isfinite(e) for e in pures) \
        else math.inf
    out_e = total if dlt is not None else None
    out_d = (0.0 if total <= eps else None) if eps is not None else None
    # exact for one mechanism at delta = 0 (its max loss k times), and where delta is 0
    exact = len(profiles) == 1 and profiles[0].exact and dlt in (None, 0.0) and (eps is None or out_d is not None)
    return Bound("pure", out_e, out_d, "sum of k * eps_pure, rounded up (exact for one mechanism at delta = 0)",
                 exact=exact)


def _basic_bound(profiles, counts, eps, dlt) -> Bound:
    k_total = sum(counts)
    out_e = out_d = None
    if dlt is not None:
        share = math.nextafter(dlt / k_total, 0.0) if dlt > 0 else 0.0   # k_total * share <= delta
        parts = [_certified_epsilon(p, share) for p in profiles]
        out_e = sum_up(k * Fraction(e) for e, k in zip(parts, counts)) if all(math.isfinite(e) for e in parts) \
            else math.inf
    if eps is not None:
        share = math.nextafter(eps / k_total, 0.0) if eps > 0 else 0.0   # k_total * share <= eps
        out_d = min(1.0, sum_up(k * Fraction(_up(p, p.delta_dp(share), "delta")) for p, k in zip(profiles, counts)))
    return Bound("basic", out_e, out_d, "basic composition, (eps, delta) split evenly over the releases, rounded up")


def _best(cands: list[Bound], attr: str) -> tuple[float | None, str | None, bool, list[str]]:
    """The smallest value, the bound that gave it, whether it is exact, and the candidates
    rejected because they fell below an exact value (an exact value is the truth rounded
    outward: a candidate below it is either wrong or within that rounding; the exact value
    is reported)."""
    vals = [(getattr(c, attr), METHODS.index(c.method), c.method, c.exact) for c in cands
            if getattr(c, attr) is not None]
    if not vals:
        return None, None, False, []
    exact = [v for v in vals if v[3]]
    rejected = []
    if exact:
        floor = min(v[0] for v in exact)
        rejected = [v[2] for v in vals if v[0] < floor]
        vals = [v for v in vals if v[0] >= floor]
    v, _, m, ex = min(vals)
    return v, m, ex, rejected


# ---------------------------------------------------------------------------------- API
def compose_best(items: Sequence[Item], *, epsilon: float | None = None, delta: float | None = None,
                 orders: Sequence[float] = DEFAULT_ORDERS, discretization: float = DISCRETIZATION,
                 max_combinations: int = MAX_COMBINATIONS, max_exact_states: int = MAX_EXACT_STATES,
                 methods: Sequence[str] = METHODS, max_memory: int | None = None,
                 mixed: Sequence[bool] | None = None) -> Composed:
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
    mixed:
        Per item, whether its ``count`` releases may each see a *different* pair of the item
        (the columns of a record that share one mechanism, each changed by its own distance)
        rather than the same pair. Such an item enters the PLD bound as its dominating pair
        (:func:`dominating_pld`), whose self-composition dominates every mix of pairs (Zhu,
        Dong & Wang 2022, Theorem 10), and the exact bound (per pair) is skipped; the RDP,
        pure and basic bounds take the worst pair per release, valid for any mix.

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

    distinct = [_distinct(p) for p in profiles]
    item_pairs = [[pair for pair, _ in d] for d in distinct]
    item_lds = [[ld for _, ld in d] for d in distinct]
    if "pld" in methods:
        for lds, k in zip(item_lds, counts):
            cells = _cells(lds, discretization)
            check(pld_bytes(cells, k), parameter="k", value=k, max_memory=max_memory,
                  what=f"composing {int(k)} releases with privacy loss distributions (their support grows with "
                       f"the number of releases, from {math.ceil(cells)} grid points)")
    # one mechanism: its pairs are composed one by one, which is tight (module docstring)
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    if mixed is not None and len(mixed) != len(item_lds):
        raise InvalidParameterError("mixed", list(mixed), f"one flag per item ({len(item_lds)})")
    units, dominated = _units([len(x) for x in item_lds], cap, mixed)
    cands: list[Bound] = []
    if "exact" in methods:
        combos = _exact_items(item_pairs, units, counts, dominated, max_exact_states)
        if combos is not None:
            cands.append(_exact_bound(combos, eps, dlt))
    if "pld" in methods:
        cands.append(_pld_bound(item_lds, units, counts, eps, dlt, discretization, dominated))
    if "rdp" in methods:
        cands.append(_rdp_bound(item_lds, profiles, counts, eps, dlt, list(orders)))
    if "pure" in methods:
        cands.append(_pure_bound(profiles, counts, eps, dlt))
    if "basic" in methods:
        cands.append(_basic_bound(profiles, counts, eps, dlt))
    cands.sort(key=lambda c: METHODS.index(c.method))

    bound: dict[str, str] = {}
    exact: dict[str, bool] = {}
    rejected: list[str] = []
    e_best = d_best = None
    if dlt is not None:
        e_best, bound["epsilon_dp"], exact["epsilon_dp"], out = _best(cands, "epsilon")  # type: ignore[assignment]
        rejected += out
    if eps is not None:
        d_best, method, exact["delta_dp"], out = _best(cands, "delta")
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
        linearly in ``k``, so a large ``k`` is refused before dp_accounting allocates it.
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
    dp_accounting beyond.
    """
    eps = np.asarray(check_epsilons(epsilons, allow_zero=True, allow_inf=True, accepted="epsilons >= 0"), dtype=float)
    profiles = [p for p, _ in items]
    counts = [int(k) for _, k in items]
    item_lds = [[ld for _, ld in _distinct(p)] for p in profiles]
    cap = max(max_combinations, len(item_lds[0])) if len(item_lds) == 1 else max_combinations
    units, _ = _units([len(x) for x in item_lds], cap)
    worst = np.zeros(eps.size)
    dense = _dense_plds(item_lds, units, counts, discretization, dense_cells)
    for total in dense or ():
        worst = np.maximum(worst, delta_upper(total, eps))
    for total, allowance in () if dense is not None else _composed_plds(item_lds, units, counts, discretization):
        # one call per epsilon: dp_accounting's array form walks the PLD in a Python loop
        with np.errstate(over="ignore"):
            values = np.array([float(total.get_delta_for_epsilon(float(e))) for e in eps])
        values = np.where(np.isfinite(values), values, 1.0)   # a NaN or inf read is no bound: 1 is
        up = np.array([nudge_up(float(v), 4 * U, allowance) for v in values])
        worst = np.maximum(worst, np.minimum(1.0, up))
    a_pos = [float(a) for a in orders if float(a) > 1.0]
    totals = _rdp_totals(item_lds, profiles, counts, a_pos) if a_pos else None
    rdp = np.array([_rdp_bound(item_lds, profiles, counts, float(e), None, orders, totals).delta for e in eps])
    pure = np.array([1.0 if _pure_bound(profiles, counts, float(e), None).delta is None else 0.0 for e in eps])
    return eps, np.minimum(np.minimum(worst, rdp), pure)


__all__ = ["Bound", "Composed", "DISCRETIZATION", "METHODS", "compose", "compose_best", "compose_sequence",
           "delta_curve", "dominating_pld", "hockey_sticks", "pld_cells"]
