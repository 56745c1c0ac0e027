"""Dominating pairs and their privacy loss distributions, composed with a proven allowance.

What the ``pld`` bound of :func:`~optnoise.analysis.composition.compose_best`, the composed
privacy profile (:func:`~optnoise.analysis.composition.delta_curve`) and the dominating
trade-off curve (:mod:`~optnoise.analysis.tradeoff_composition`) compose: each mechanism's
pairs (or one pair of it) as one pessimistic Connect-the-Dots PMF on a loss grid that
dominates them (:func:`ctd_unit`, Doroshenko et al. 2022, Algorithm 1, on the maximum of the
pairs' hockey-stick curves; Zhu, Dong & Wang 2022), with a bound on its float error, then
self-composed and composed:

* with numpy's FFT (:mod:`~optnoise.analysis.dense_pld`: no truncation, its own proven
  allowance) while the composition has at most
  :data:`~optnoise.analysis.dense_pld.MAX_CELLS` grid cells -- no dp_accounting import,
  which costs about a second of start-up (docs/benchmarks.md);
* by dp_accounting beyond (:func:`unit_pld`; tail truncation and FFT round-off bounded by
  :func:`~optnoise.analysis.outward.pld_allowance`).

Either way a :class:`ComposedTotal` reads ``delta(eps)`` and ``epsilon(delta)`` as proven
upper bounds: the numerical allowance is added to delta, and an epsilon is certified by the
delta read there.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

import numpy as np

from ..errors import InvalidParameterError
from .dense_pld import MAX_CELLS, DensePLD, composed_cells, from_grid, self_compose
from .dense_pld import compose as dense_compose
from .dense_pld import delta_upper as dense_delta_upper
from .dense_pld import epsilon_upper as dense_epsilon_upper
from .floating import LossDistribution
from .outward import U, nudge_up, pld_allowance
from .profile import PrivacyProfile

if TYPE_CHECKING:  # dp_accounting is imported where it is used: it is slow to import
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

#: Loss discretisation of the PLDs (dp_accounting's default).
DISCRETIZATION = 1e-4


def distinct_pairs(profile: PrivacyProfile) -> list[tuple[object, LossDistribution]]:
    """The profile's pairs with distinct loss distributions, each with its distribution."""
    seen: dict[tuple, tuple[object, LossDistribution]] = {}
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (np.round(ld.losses, 12).tobytes(), np.round(ld.p_mass, 15).tobytes(),
               np.round(ld.q_mass, 15).tobytes(), float(ld.infinite_mass))
        seen.setdefault(key, (pair, ld))
    return list(seen.values())


def one_loss(profile: PrivacyProfile) -> bool:
    """Whether every pair of ``profile`` has the same loss distribution, bit for bit (losses,
    both masses, the infinite mass: no rounding, unlike :func:`distinct_pairs`). Then every mix
    of its pairs over several releases composes as one pair with itself (the composed curve
    depends on the factors' loss distributions alone)."""
    first = None
    for pair in profile.pairs:
        ld = pair.loss_distribution()
        key = (ld.losses.tobytes(), ld.p_mass.tobytes(), ld.q_mass.tobytes(), float(ld.infinite_mass))
        if first is not None and key != first:
            return False
        first = key
    return True


def hockey_bounds(lds: Sequence[LossDistribution], epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    return hockey_bounds(lds, epsilons)[0]


@dataclass(frozen=True)
class PLDUnit:
    """A PLD ready to compose, with the numbers its numerical allowance needs: its span in
    grid cells and ``error``, a bound on the l1 distance of its masses from the exact
    Connect-the-Dots masses."""

    pld: "PrivacyLossDistribution"
    span: int
    error: float


def ctd_masses(grid: np.ndarray, deltas: np.ndarray, errors: np.ndarray) -> tuple[np.ndarray, float]:
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


def unit_pld(lds: Sequence[LossDistribution], discretization: float) -> PLDUnit:
    """One PLD that dominates every given ordered pair, with its numerical error bounded.

    The maximum of the pairs' hockey-stick curves ``delta(eps)`` is convex in ``e^eps``,
    hence itself the curve of a single pair of distributions (Zhu, Dong & Wang 2022), and
    dominating pairs compose (ibid., Theorem 10). It is evaluated at every pair's loss
    values rounded *up* to the grid (and one grid point below the smallest) and turned into
    a PLD by pessimistic Connect-the-Dots: between grid points its curve interpolates
    linearly in ``e^eps``, above the convex maximum, and it is exact at the grid points.

    **Its round-off (issue 25).** The Connect-the-Dots PMF computed from the *exact* curve
    values is a probability PMF dominating the pairs; the float one differs from it by at
    most ``error`` in l1 (:func:`ctd_masses`, from the error bounds of the curve values,
    :func:`hockey_bounds`). Convolving probability vectors is 1-Lipschitz in l1 per factor and
    delta is a sum of masses times weights in ``[0, 1]``, so after ``k`` self-compositions
    the delta read off is within ``k error (1 + error)^(k - 1)`` of the exact PMF's
    (:func:`~optnoise.analysis.outward.pld_allowance` adds it).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ks, masses, infinity, error = ctd_unit(lds, discretization)
    pmf = pld_pmf.create_pmf(loss_probs=dict(zip(ks.tolist(), masses.tolist())), discretization=discretization,
                             infinity_mass=infinity, pessimistic_estimate=True)
    return PLDUnit(pld_lib.PrivacyLossDistribution(pmf), int(ks.max() - ks.min() + 1), error)


def ctd_unit(lds: Sequence[LossDistribution], discretization: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The pessimistic Connect-the-Dots PMF dominating every given pair (:func:`unit_pld`):
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
    target, target_err = hockey_bounds(lds, grid)
    deltas = np.minimum.accumulate(target)  # non-increasing up to round-off (the exact curve is)
    masses, error = ctd_masses(grid, deltas, target_err)
    return ks, masses, float(deltas[-1]), error


def dominating_pld(pairs: PrivacyProfile | Sequence[LossDistribution],
                   discretization: float = DISCRETIZATION) -> "PrivacyLossDistribution":
    """One PLD that dominates every given ordered pair (all of a mechanism's, or one).

    Pessimistic Connect-the-Dots on the maximum of the pairs' hockey-stick curves (see
    :func:`unit_pld` for the argument and its round-off, which callers that need a proven
    value add: :class:`ComposedTotal` does). For a single pair this
    is the pair's own Connect-the-Dots PLD (tighter than dp_accounting's privacy buckets on
    the same grid). Chosen over an exact dominating loss distribution interpolated at the
    union of the pairs' loss breakpoints and discretised by privacy buckets: on
    heterogeneous sequences this construction gave equal or smaller deltas and epsilons in
    every case tried (docs/repeated-releases.md).
    """
    lds = [pair.loss_distribution() for pair in pairs.pairs] if isinstance(pairs, PrivacyProfile) else list(pairs)
    return unit_pld(lds, discretization).pld


def loss_cells(lds: Sequence[LossDistribution], discretization: float) -> float:
    """Grid points of the PLD of loss distributions (their finite losses' range)."""
    finite = np.concatenate([ld.losses[np.isfinite(ld.losses)] for ld in lds] + [np.zeros(1)])
    return float(finite.max() - finite.min()) / discretization + 2


def pld_cells(profile: PrivacyProfile, discretization: float = DISCRETIZATION) -> float:
    """Grid points of a mechanism's single-release PLD (what :func:`~optnoise.analysis.composition.compose_best` composes;
    for time and memory estimates, :mod:`optnoise.resources`)."""
    return loss_cells([ld for _, ld in distinct_pairs(profile)], discretization)


def plan_units(sizes: list[int], max_combinations: int,
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


def accounting_totals(item_lds: list[list[LossDistribution]], units: list[list[tuple[int, ...]]],
                      counts: Sequence[int], discretization: float) -> Iterator["ComposedTotal"]:
    """The composed PLD of every combination of units by dp_accounting: each unit's PLD
    self-composed, then composed with the others; the allowance bounds the numerical error of
    the whole computation (:func:`~optnoise.analysis.outward.pld_allowance`)."""
    cache: dict[tuple[int, int], tuple] = {}
    for combo in itertools.product(*[range(len(u)) for u in units]):
        total = None
        spans: list[int] = []
        errors: list[float] = []
        for i, j in enumerate(combo):
            # dp_accounting's truncation bounds overflow harmlessly inside scipy's logsumexp
            with np.errstate(over="ignore", divide="ignore"):
                if (i, j) not in cache:
                    unit = unit_pld([item_lds[i][x] for x in units[i][j]], discretization)
                    pld = unit.pld.self_compose(int(counts[i])) if counts[i] > 1 else unit.pld
                    cache[(i, j)] = (pld, unit.span, unit.error)
                pld, span, error = cache[(i, j)]
                spans.append(span)
                errors.append(error)
                total = pld if total is None else total.compose(pld)
        allowance = pld_allowance(spans, counts, truncations=2 * len(spans), errors=errors)
        yield ComposedTotal(None, total, allowance)


def dense_totals(item_lds: list[list[LossDistribution]], units: list[list[tuple[int, ...]]],
                 counts: Sequence[int], discretization: float, max_cells: int) -> list["ComposedTotal"] | None:
    """The composed PLD of every combination of units by numpy's FFT
    (:class:`~optnoise.analysis.dense_pld.DensePLD`; the same units as
    :func:`accounting_totals`), or ``None`` when one would have more than ``max_cells`` cells."""
    units_built: dict[tuple[int, int], DensePLD] = {}
    powers: dict[tuple[int, int], DensePLD] = {}
    out = []
    for combo in itertools.product(*[range(len(u)) for u in units]):
        for i, j in enumerate(combo):
            if (i, j) not in units_built:
                ks, masses, infinity, error = ctd_unit([item_lds[i][x] for x in units[i][j]], discretization)
                units_built[(i, j)] = from_grid(ks, masses, infinity, error, discretization)
        if composed_cells([units_built[(i, j)].cells for i, j in enumerate(combo)], list(counts)) > max_cells:
            return None
        total = None
        for i, j in enumerate(combo):
            if (i, j) not in powers:
                powers[(i, j)] = self_compose(units_built[(i, j)], int(counts[i]))
            total = powers[(i, j)] if total is None else dense_compose(total, powers[(i, j)])
        out.append(ComposedTotal(total, None, total.error))
    return out


def combination_totals(item_lds: list[list[LossDistribution]], units: list[list[tuple[int, ...]]],
                       counts: Sequence[int], discretization: float = DISCRETIZATION,
                       max_cells: int = MAX_CELLS) -> Iterable["ComposedTotal"]:
    """The composed PLD of every combination of units: numpy's while every one fits
    ``max_cells`` cells, dp_accounting's otherwise (module docstring)."""
    dense = dense_totals(item_lds, units, counts, discretization, max_cells)
    return dense if dense is not None else accounting_totals(item_lds, units, counts, discretization)


@dataclass(frozen=True, eq=False)
class ComposedTotal:
    """One composed PLD (numpy's ``dense`` or dp_accounting's ``pld``) and its numerical
    ``allowance`` (for a dense PLD its l1 error, the evaluation's round-off added on reading);
    every value read is a proven upper bound."""

    dense: DensePLD | None
    pld: "PrivacyLossDistribution | None"
    allowance: float

    @property
    def engine(self) -> str:
        return "numpy (FFT, or sparse convolution for few losses)" if self.dense is not None else "dp_accounting"

    def delta_upper(self, epsilons: Sequence[float] | np.ndarray) -> np.ndarray:
        """Upper bounds on ``delta(eps)`` at every epsilon, capped at 1."""
        eps = np.asarray(epsilons, dtype=float)
        if self.dense is not None:
            return dense_delta_upper(self.dense, eps)
        # one call per epsilon: dp_accounting's array form walks the PLD in a Python loop
        with np.errstate(over="ignore"):
            values = np.array([float(self.pld.get_delta_for_epsilon(float(e))) for e in eps.ravel()])  # type: ignore
        values = np.where(np.isfinite(values), values, 1.0)   # a NaN or inf read is no bound: 1 is
        up = np.array([min(1.0, nudge_up(float(v), 4 * U, self.allowance)) for v in values])
        return up.reshape(eps.shape)

    def epsilon_upper(self, delta: float) -> float:
        """An epsilon whose :meth:`delta_upper` is at most ``delta`` (``inf`` when none is found)."""
        if self.dense is not None:
            return dense_epsilon_upper(self.dense, delta)
        if delta <= self.allowance:
            return math.inf
        eps = float(self.pld.get_epsilon_for_delta(delta - self.allowance))  # type: ignore[union-attr]
        for step in range(12):
            if not math.isfinite(eps) or float(self.pld.get_delta_for_epsilon(eps)) + self.allowance <= delta:  # type: ignore
                return max(0.0, eps)
            eps = eps + max(abs(eps), 1e-12) * 2.0 ** (-44 + 3 * step)
        return math.inf


__all__ = ["ComposedTotal", "DISCRETIZATION", "PLDUnit", "accounting_totals", "combination_totals", "ctd_masses", "one_loss",
           "ctd_unit", "dense_totals", "distinct_pairs", "dominating_pld", "hockey_bounds", "hockey_sticks",
           "loss_cells", "plan_units", "pld_cells", "unit_pld"]
