"""Optimal channels on a finite ordered domain ``{0..n}`` (outputs stay in the domain).

A *channel* is a row-stochastic matrix ``P[q, y]``: row ``q`` is the distribution of the
released value ``y`` when the true answer is ``q`` (docs/architecture.md: the universal
representation). Noise added modulo ``n + 1`` (Kadam et al. 2024) is the special case of a
*circulant* channel; the clamped geometric of Ghosh, Roughgarden & Sundararajan (2009) and
randomized response are others. This module finds the best channel of all:

* **Costs a user feels** (:mod:`optnoise.costs`, :class:`~optnoise.costs.ReleasedCost`): a
  loss ``L[q, y]`` of the released value against the true answer (``er``, ``abs-error``,
  ``sq-error``, ``circular-*``), averaged over a prior on ``q`` or in the worst case over ``q``.
* **The channel LP** (:func:`design_channel`, approximate DP): variables ``P[q, y]``, rows
  summing to 1, and per ordered neighbouring pair ``(a, b)``

  - ``delta = 0``: ``P[a, y] <= e^eps P[b, y]`` for every ``y``;
  - ``delta > 0``: the hockey-stick divergence ``sum_y max(0, P[a, y] - e^eps P[b, y]) <=
    delta`` (tight for approximate DP, docs/architecture.md "Two notions"), linearised by
    epigraph variables ``t[a, b, y] >= P[a, y] - e^eps P[b, y]``, ``t >= 0``,
    ``sum_y t[a, b, .] <= delta``.

  The objective is ``sum_q pi(q) sum_y P[q, y] L[q, y]`` or the worst case ``z`` with
  ``z >= sum_y P[q, y] L[q, y]`` for every ``q`` (an epigraph).
* **Structural constraints** after Cormode, Kulkarni & Srivastava (2018): :data:`CONSTRAINTS`.
* **PDP channels** (Kadam Def. 2 on pairs of rows): a MILP with one indicator per (pair,
  output), polished as an LP with the indicators fixed; small ``n`` only (:data:`MAX_PDP_N`).
* **Ghosh et al.** (:func:`truncated_geometric_channel`, :func:`optimal_post_processing`),
  **the optimal modulo noise** for a released-value cost (:func:`optimal_modulo_noise`) and
  **calibrated baselines** as channels (:func:`calibrated_baselines`).

Lossless reductions (each with its proof beside the code): the complete pair graph under
pure DP is written with one per-column minimum ``m_y`` and ``P[a, y] = m_y + s[a, y]``,
``0 <= s <= (e^eps - 1) m_y`` (``(n+1)^2`` rows instead of ``n (n+1)^2``); a problem invariant
under the mirror ``q -> n - q`` is solved over mirror-symmetric channels (half the
variables); a circulant channel is written with its first row only, one pair per distance.

Every returned matrix is clipped to ``>= 0`` and renormalised (rows sum to 1 within
``1e-12``), and the float analysis of its :class:`~optnoise.mechanism.Mechanism` must meet the
target by the one rule (:meth:`~optnoise.analysis.PrivacyProfile.meets`). HiGHS's
feasibility tolerance is absolute (1e-10), so an entry the optimum holds near zero can come
back as 0 beside a neighbour at 1e-10: an infinite ratio. Such a violation is removed (pure
DP) by lifting the entries below their neighbours' ratio and renormalising, or else by mixing
with a reference channel (the uniform channel, or a strictly feasible design when
``unbiased`` is asked for) by the smallest weight found that restores the target; the result
says which and by how much. What is released is the quantized channel with its exact
certificate (``result.certify()``, :meth:`~optnoise.mechanism.Mechanism.quantize`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..analysis import privacy_profile
from ..analysis.floating import RATIO_TOLERANCE
from ..costs import (
    ReleasedCost, channel_cost, check_prior, cost_vector, describe_cost, loss_matrix, modulo_cost_vector,
    named_row_costs, released_errors, row_costs, wrapped_squared_error,
)
from ..errors import DesignError, InvalidParameterError
from ..families import calibrate, calibration_of
from ..families.baselines import clamp_channel
from ..families.geometric import geometric_pmf
from ..mechanism import Mechanism
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, channel_matrix
from ..search import boundary
from ..target import Target, check_integer, resolve_target
from .finite import FiniteDesign, design_finite
from .bounds import GAP_TOLERANCE, Bound, chain_bound, complete_bound, exp_up, lp_bound, relative_gap
from .model import sum_rows
from .report import DesignResult
from .solver import RATIO_MARGIN, Infeasible, solve_lp, solve_milp

#: Structural constraints (Cormode, Kulkarni & Srivastava 2018, and ``circulant``).
#:
#: * ``row-monotone``: in row ``q``, ``P[q, y]`` is non-increasing as ``y`` moves away from
#:   ``q`` on either side (no "spikes" away from the truth);
#: * ``column-monotone``: in column ``y``, ``P[q, y]`` is non-increasing as ``q`` moves away
#:   from ``y`` on either side;
#: * ``fair``: ``P[q, q]`` is the same for every ``q`` (every answer reported correctly with
#:   the same probability);
#: * ``weak-honest``: ``P[q, q] >= P[q, y]`` for every ``y`` (the truth is a most likely output);
#: * ``unbiased``: ``sum_y y P[q, y] = q`` for every ``q``;
#: * ``circulant``: ``P[q, y]`` depends only on ``(y - q) mod (n + 1)``: exactly the channels
#:   of noise added modulo ``n + 1`` (Kadam et al.), so this gives the optimal modulo noise
#:   for any objective, including the worst case over ``q``.
#:
#: These are the definitions of optnoise's issue 15. Cormode et al.'s full text could not be
#: read while this was written; from memory it calls ``P[q, q] >= P[q, y]`` *row honesty* and
#: uses *weak honesty* for the weaker ``P[q, q] >= 1 / (n + 1)``: check before citing.
CONSTRAINTS: tuple[str, ...] = ("row-monotone", "column-monotone", "fair", "weak-honest", "unbiased", "circulant")

#: Absolute tolerance within which every structural constraint holds on a returned matrix
#: (probabilities; for ``unbiased`` the tolerance is on the row mean, times ``max(1, n)``).
CONSTRAINT_TOLERANCE = 1e-9

#: The PDP MILP has one binary per (ordered pair, output), up to ``n (n+1)^2`` (2028 at
#: n = 12). Larger ``n`` is refused: bench/channel.py measured neighbours one apart at
#: n = 10 in ~25 s and n = 12 in ~50 s, with n = 16 not proved optimal in 60 s.
MAX_PDP_N = 12

#: Largest model written (coefficients of the constraint matrix, about 24 bytes each while it
#: is assembled, and HiGHS keeps its own copy): 5e7 is about 2.5 GB. The LPs that fit take
#: minutes already (docs/benchmarks.md, "Channels"); larger ones are refused up front.
MAX_NONZEROS = 50_000_000

#: Dual simplex pricing for the channel LPs: devex was 15-30 % faster than HiGHS's default
#: on the n = 100 models (bench/channel.py).
_LP_OPTIONS = {"simplex_dual_edge_weight_strategy": "devex"}
#: Absolute margin on delta when solving (at most 1e-3 delta): HiGHS's feasibility tolerance
#: (1e-10) is absolute, so a relative margin would not keep a small delta from being crossed.
_DELTA_MARGIN = 1e-9


# ============================================================== validation helpers
def _check_n(n: int) -> int:
    return check_integer(n, parameter="n", accepted="an integer n >= 1 (domain {0..n})")


def _check_pairs(pairs: Iterable[tuple[int, int]] | InputPairs | str | None,
                 size: int) -> tuple[tuple[int, int], ...]:
    if pairs is None:
        return pairs_from_distances(size - 1, [1])
    if isinstance(pairs, str):
        if pairs != "all":
            raise InvalidParameterError("pairs", pairs, "'all' (per record), input pairs or None (neighbours one "
                                                        "apart)")
        return all_pairs(size - 1)
    if isinstance(pairs, InputPairs):
        return tuple(pairs.ordered(size))
    return tuple(InputPairs(tuple(pairs), directed=True).ordered(size))


def _released(cost: str | ReleasedCost | np.ndarray, prior, worst_case: bool, size: int
              ) -> tuple[str, np.ndarray, np.ndarray, bool]:
    """``(name, L, prior, worst_case)`` of a named cost, a :class:`ReleasedCost` or a user matrix."""
    if isinstance(cost, ReleasedCost):
        if prior is not None or worst_case:
            raise InvalidParameterError("prior", "given", "prior/worst_case inside the ReleasedCost, not beside it")
        return cost.name, cost.matrix(size - 1), cost.weights(size), cost.worst_case
    if isinstance(cost, str):
        return cost.strip(), loss_matrix(cost, size - 1), check_prior(prior, size), bool(worst_case)
    L = np.asarray(cost, dtype=float)
    if L.shape != (size, size) or not np.all(np.isfinite(L)):
        raise InvalidParameterError("cost", f"shape {L.shape}", f"a released-value cost name or a finite {size} x "
                                                                f"{size} loss matrix")
    return "user", L, check_prior(prior, size), bool(worst_case)


# ============================================================== neighbours
def pairs_from_distances(n: int, distances: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Ordered pairs ``(q, q')`` of ``{0..n}`` with ``q - q'`` in ``+-distances``, no wrap-around.

    The symmetric value-distance neighbourhood of an ordered domain (distances ``{1}``:
    ages one year apart): :meth:`~optnoise.neighbourhood.InputPairs.from_distances`, with
    every distance checked to lie in ``1..n``. Unlike modulo noise's cyclic neighbourhood it
    has no pair ``(0, n)``.
    """
    size = _check_n(n) + 1
    given = list(distances)
    ds = sorted({abs(int(d)) for d in given})
    if not ds or ds[0] == 0 or ds[-1] > size - 1:
        raise InvalidParameterError("distances", given, f"non-zero distances with |d| <= {size - 1}")
    return tuple(InputPairs.from_distances(Neighbourhood(tuple(ds)), size).pairs)


def all_pairs(n: int) -> tuple[tuple[int, int], ...]:
    """Every ordered pair of distinct answers: the per-record privacy unit (docs/architecture.md)."""
    size = _check_n(n) + 1
    return tuple((a, b) for a in range(size) for b in range(size) if a != b)


def cyclic_pairs(n: int, neighbourhood: Neighbourhood) -> tuple[tuple[int, int], ...]:
    """The input pairs of noise added modulo ``n + 1`` under query distances: ``(a, (a - s)
    mod (n+1))`` for every answer ``a`` and ordered cyclic shift ``s`` (wrap pairs included).

    For the channel ``P[q, y] = f((y - q) mod (n+1))`` the pair ``(a, b)`` compares ``f(eta)``
    with ``f(eta + a - b)``: the shift ``s = a - b`` of Kadam et al. (7)-(8).
    """
    size = _check_n(n) + 1
    shifts = [s[0] for s in neighbourhood.cyclic_shifts((size,))]
    return tuple((a, (a - s) % size) for s in shifts for a in range(size))


def _complete_on(pairs: tuple[tuple[int, int], ...]) -> tuple[int, ...] | None:
    """The vertex set ``V`` if the pairs are exactly all ordered pairs of distinct ``V``."""
    verts = sorted({v for p in pairs for v in p})
    k = len(verts)
    return tuple(verts) if len(set(pairs)) == k * (k - 1) else None


# ============================================================== result type
@dataclass(frozen=True, eq=False)
class ChannelDesign(DesignResult):
    """Result of :func:`design_channel`: the channel as a mechanism and the design's report.

    Attributes
    ----------
    matrix:
        ``P[q, y]`` (read-only), entries ``>= 0``, rows summing to 1 within ``1e-12``.
    cost, loss_matrix, prior, worst_case:
        The objective: a released-value cost (name, or ``"user"``), ``L[q, y]``, the prior
        (normalised) and whether the worst case over ``q`` was minimised.
    expected_cost:
        The objective evaluated on ``matrix`` (after cleaning and any repair).
    lower_bound, bound_method:
        A proven lower bound on the optimum of the request (:mod:`optnoise.design.bounds`:
        a dual certificate checked in outward-rounded arithmetic at ``e^eps`` itself, not the
        design's margin) and what gave it; ``gap`` is the relative distance of
        ``expected_cost`` from it and ``optimal`` says it is below ``GAP_TOLERANCE``. A PDP
        MILP's bound is HiGHS's best bound, not re-checked (said in ``bound_method``).
    objective:
        The solver's optimum of the problem actually solved: ``e^eps`` shrunk by the relative
        margin ``RATIO_MARGIN = 1e-10`` and ``delta`` by at most ``1e-9``, so it can exceed the
        true optimum by about that much.
    repair:
        How a violation of the target left by the solver's absolute tolerance was removed:
        ``"none"``; ``"lift"`` (pure DP: entries below their neighbours' ratio raised, rows
        renormalised; largest L1 change of a row in ``lifted_mass``); ``"mix"`` (mixed with a
        reference channel at weight ``repair_weight``).
    method:
        ``"lp"``, ``"lp-mirror"`` (mirror symmetry imposed, lossless), ``"lp-complete-graph"``
        (per-column minimum substitution, lossless), ``"lp-circulant"`` (first row only,
        lossless), ``"milp"``, ``"milp-circulant"`` or ``"geometric-remap"`` (pure DP,
        neighbours one apart, prior-averaged, large ``n``: :mod:`optnoise.design.chain`).

    ``analysis`` is the float analysis of ``matrix`` under ``pairs`` at the target;
    :meth:`certify` the exact certificate of the quantized channel that is sampled.
    """

    matrix: np.ndarray
    cost: str
    loss_matrix: np.ndarray | None
    prior: np.ndarray
    worst_case: bool
    expected_cost: float
    objective: float
    target: Target
    pairs: tuple[tuple[int, int], ...]
    constraints: tuple[str, ...]
    method: str
    solve_seconds: float
    repair: str = "none"
    repair_weight: float = 0.0
    lifted_mass: float = 0.0
    n_variables: int = 0
    n_constraints: int = 0
    mip_gap: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    lower_bound: float | None = None
    bound_method: str | None = None

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0]) - 1

    @property
    def gap(self) -> float | None:
        """Relative gap between ``expected_cost`` and the proven ``lower_bound`` (None without one)."""
        return None if self.lower_bound is None else relative_gap(self.expected_cost, self.lower_bound)

    @property
    def optimal(self) -> bool:
        """Whether the proven gap is below :data:`~optnoise.design.bounds.GAP_TOLERANCE`."""
        return self.gap is not None and self.gap <= GAP_TOLERANCE

    @property
    def epsilon(self) -> float:
        return self.target.epsilon

    @property
    def delta(self) -> float:
        return self.target.delta

    @property
    def notion(self) -> str:
        return self.target.notion

    @property
    def input_pairs(self) -> InputPairs:
        """The neighbouring pairs the design protects (directed, as given)."""
        return InputPairs(self.pairs, directed=True)

    @cached_property
    def mechanism(self) -> Mechanism:
        """The channel as a :class:`~optnoise.mechanism.Mechanism` with its pairs and target."""
        return Mechanism(Channel(self.matrix), self.input_pairs, self.target, "optimal channel")

    def row_costs(self) -> np.ndarray:
        """Expected loss per true answer ``q``."""
        if self.loss_matrix is None:   # a named cost on a large domain: the loss in blocks
            return named_row_costs(self.matrix, self.cost)
        return row_costs(self.matrix, self.loss_matrix)

    def to_json(self) -> dict:
        """The report (docs/cli.md ``design --form channel``) plus the mechanism schema keys."""
        released = released_errors(self.matrix, self.prior)
        uniform = bool(np.allclose(self.prior, 1.0 / self.prior.size, rtol=0, atol=1e-15))
        out = {
            "form": "channel",
            "channel": self.matrix.tolist(),
            "n": self.n,
            "cost": self.cost,
            "cost_meaning": describe_cost(self.cost),
            "prior": "uniform" if uniform else self.prior.tolist(),
            "worst_case": self.worst_case,
            "expected_cost": self.expected_cost,
            "released_error": released,
            "error_rate": released["er"]["average"],
            "squared_error": released["sq-error"],
            "guarantee": {"notion": self.notion, "epsilon": self.epsilon, "delta": self.delta,
                          "neighbourhood": self.input_pairs.to_json()},
            "certificate": self.analysis.to_json(),
            "method": self.method,
            "optimal": self.optimal,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "gap_tolerance": GAP_TOLERANCE,
            "bound_method": self.bound_method,
            "solve_seconds": self.solve_seconds,
            "objective": self.objective,
            "constraints": list(self.constraints),
            "constraint_violations": constraint_violations(self.matrix, self.constraints),
            "repair": {"kind": self.repair, "weight": self.repair_weight, "lifted_mass": self.lifted_mass},
            "variables": self.n_variables,
            "rows": self.n_constraints,
            "notes": list(self.notes),
        }
        if self.mip_gap is not None:
            out["mip_gap"] = self.mip_gap
        return {**out, **self.mechanism.to_json()}


# ============================================================== model building
@dataclass(frozen=True)
class _Layout:
    """Column offsets of the *full* variable space of one channel model:
    ``P`` (``size^2``, flat ``q * size + y``), ``m`` (per-column minimum, complete-graph
    reduction only), ``t`` or ``w`` (per pair and output), ``u`` (PDP indicators), ``z``
    (worst-case epigraph)."""

    size: int
    n_pairs: int
    complete: bool
    per_pair: bool     # t (hockey-stick epigraph) or w (PDP) block present
    pdp: bool          # u block present
    worst: bool

    @property
    def n_p(self) -> int:
        return self.size * self.size

    @property
    def off_m(self) -> int:
        return self.n_p

    @property
    def off_t(self) -> int:
        return self.off_m + (self.size if self.complete else 0)

    @property
    def off_u(self) -> int:
        return self.off_t + (self.n_pairs * self.size if self.per_pair else 0)

    @property
    def off_z(self) -> int:
        return self.off_u + (self.n_pairs * self.size if self.pdp else 0)

    @property
    def n_cols(self) -> int:
        return self.off_z + (1 if self.worst else 0)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lb, ub, integrality)`` of the full variables: probabilities and per-column minima
        in ``[0, 1]``; PDP ``w`` and ``u`` in ``[0, 1]`` (``u`` integer); ``t``, ``z`` ``>= 0``."""
        lb = np.zeros(self.n_cols)
        ub = np.full(self.n_cols, np.inf)
        ub[:self.off_t] = 1.0
        integ = np.zeros(self.n_cols)
        if self.pdp:
            ub[self.off_t:self.off_z] = 1.0
            integ[self.off_u:self.off_z] = 1
        return lb, ub, integ


@dataclass(frozen=True)
class _Model:
    """A model in reduced variables ``x``; the full variables are ``S @ x``."""

    c: np.ndarray
    blocks: list
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    S: sp.csr_matrix
    layout: _Layout
    method: str

    @property
    def n_cols(self) -> int:
        return int(self.c.size)


def _block(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, n_rows: int, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_cols))


def _ratio_rows(pa: np.ndarray, pb: np.ndarray, size: int, e: float, n_cols: int,
                t_offset: int | None) -> sp.csr_matrix:
    """Rows ``P[a_k, y] - e P[b_k, y] (- t[k, y])`` for pairs ``k`` and outputs ``y``."""
    k = pa.size
    y = np.tile(np.arange(size), k)
    r = np.arange(k * size)
    rows = [r, r]
    cols = [np.repeat(pa, size) * size + y, np.repeat(pb, size) * size + y]
    data = [np.ones(k * size), np.full(k * size, -e)]
    if t_offset is not None:
        rows.append(r)
        cols.append(t_offset + r)
        data.append(np.full(k * size, -1.0))
    return _block(np.concatenate(rows), np.concatenate(cols), np.concatenate(data), k * size, n_cols)


def _structural_rows(name: str, size: int, n_cols: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """``(A, lo, hi)`` for one structural constraint, on the ``P`` block (flat ``q * size + y``)."""
    idx = np.arange(size * size).reshape(size, size)
    pairs: list[tuple[int, int]] = []   # (smaller, larger): P[smaller] - P[larger] <= 0
    if name == "row-monotone":
        for q in range(size):
            pairs += [(idx[q, y + 1], idx[q, y]) for y in range(q, size - 1)]
            pairs += [(idx[q, y - 1], idx[q, y]) for y in range(1, q + 1)]
    elif name == "column-monotone":
        for y in range(size):
            pairs += [(idx[q + 1, y], idx[q, y]) for q in range(y, size - 1)]
            pairs += [(idx[q - 1, y], idx[q, y]) for q in range(1, y + 1)]
    elif name == "weak-honest":
        pairs = [(idx[q, y], idx[q, q]) for q in range(size) for y in range(size) if y != q]
    if pairs:
        a = np.array(pairs)
        k = a.shape[0]
        r = np.arange(k)
        A = _block(np.concatenate((r, r)), np.concatenate((a[:, 0], a[:, 1])),
                   np.concatenate((np.ones(k), -np.ones(k))), k, n_cols)
        return A, np.full(k, -np.inf), np.zeros(k)
    if name == "fair":
        r = np.arange(size - 1)
        diag = idx[np.arange(1, size), np.arange(1, size)]
        A = _block(np.concatenate((r, r)), np.concatenate((diag, np.zeros(size - 1, int))),
                   np.concatenate((np.ones(size - 1), -np.ones(size - 1))), size - 1, n_cols)
        return A, np.zeros(size - 1), np.zeros(size - 1)
    if name == "unbiased":
        A = _block(np.repeat(np.arange(size), size), idx.ravel(), np.tile(np.arange(size, dtype=float), size),
                   size, n_cols)
        target = np.arange(size, dtype=float)
        return A, target, target
    if name == "circulant":
        q = np.repeat(np.arange(1, size), size)
        y = np.tile(np.arange(size), size - 1)
        r = np.arange(q.size)
        A = _block(np.concatenate((r, r)), np.concatenate((idx[q, y], idx[0, (y - q) % size])),
                   np.concatenate((np.ones(q.size), -np.ones(q.size))), q.size, n_cols)
        return A, np.zeros(q.size), np.zeros(q.size)
    raise InvalidParameterError("constraints", name, "any of " + ", ".join(CONSTRAINTS))


@dataclass(frozen=True)
class _Problem:
    """Everything that defines one channel design problem (validated)."""

    size: int
    pairs: tuple[tuple[int, int], ...]
    L: np.ndarray
    prior: np.ndarray
    worst: bool
    epsilon: float
    delta: float
    notion: str
    constraints: tuple[str, ...]
    exploit_structure: bool
    time_limit: float | None

    def replace(self, **kw) -> _Problem:
        return replace(self, **kw)

    @property
    def target(self) -> Target:
        return Target(self.epsilon, self.delta, self.notion)


def _mirror_symmetric(pb: _Problem) -> bool:
    """Whether the problem is invariant under the reflection ``q -> n - q``, ``y -> n - y``.

    Then an optimal channel with ``P[q, y] = P[n-q, n-y]`` exists (for DP), so fixing that
    symmetry loses nothing: if ``P`` is optimal, its mirror ``R(P)`` is feasible (the pair
    ``(n-a, n-b)`` is a neighbour whenever ``(a, b)`` is, and a DP condition on a pair of rows
    does not change when the outputs are permuted) and costs the same (``L`` and the prior
    are mirror-invariant; in the worst case the row costs are permuted). The feasible set is
    convex (pure DP: linear rows; approximate DP: the hockey-stick divergence is jointly
    convex), so ``(P + R(P)) / 2`` is feasible, mirror-symmetric and costs no more. Every
    structural constraint of :data:`CONSTRAINTS` is mirror-invariant (``unbiased``:
    ``sum_y y P[n-q, n-y] = n - (n - q) = q``). Not used for PDP (not convex).
    """
    n = pb.size - 1
    pairs = set(pb.pairs)
    return (pb.notion == "dp" or pb.delta == 0) and {(n - a, n - b) for a, b in pairs} == pairs \
        and np.array_equal(pb.L, pb.L[::-1, ::-1]) and (pb.worst or np.array_equal(pb.prior, pb.prior[::-1]))


def _circulant_model(pb: _Problem) -> _Problem:
    """The problem with one pair per cyclic distance and without the ``circulant`` rows.

    Lossless for circulant channels ``P[q, y] = f((y - q) mod N)``: the pair ``(a, b)``
    compares ``P[a, y] = f(eta)`` with ``P[b, y] = f(eta + a - b)`` (``eta = y - a``, a
    permutation of the outputs), so every DP or PDP condition on it depends only on
    ``(a - b) mod N``, and one pair per such distance gives the same constraints. The
    circulant rows are implied by the substitution ``P = S f``.
    """
    seen: dict[int, tuple[int, int]] = {}
    for a, b in pb.pairs:
        seen.setdefault((a - b) % pb.size, (a, b))
    return pb.replace(pairs=tuple(seen.values()), constraints=tuple(c for c in pb.constraints if c != "circulant"))


def _reduction(pb: _Problem, plain_lp: bool) -> str:
    if not pb.exploit_structure:
        return "identity"
    if "circulant" in pb.constraints:
        return "circulant"
    if plain_lp and pb.delta == 0.0 and _complete_on(pb.pairs) is not None:
        return "complete"
    if plain_lp and _mirror_symmetric(pb):
        return "mirror"
    return "identity"


def _substitution(pb: _Problem, lay: _Layout, kind: str) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """``(S, lb, ub, integrality)`` of the reduced variables ``x`` with full variables ``S @ x``.

    Each reduced variable takes the bounds of a full variable it stands for.
    """
    size, n_full = pb.size, lay.n_cols
    lb, ub, integ = lay.bounds()
    if kind == "identity":
        return sp.identity(n_full, format="csr"), lb, ub, integ
    if kind == "complete":
        # x = [s (size^2) | m (size) | z]: P[a, y] = s[a, y] + m_y for a in V, P = s elsewhere
        verts = np.array(sorted({v for p in pb.pairs for v in p}))
        y = np.tile(np.arange(size), verts.size)
        r = np.concatenate((np.arange(n_full), np.repeat(verts, size) * size + y))
        c = np.concatenate((np.arange(n_full), lay.off_m + y))
        return _block(r, c, np.ones(r.size), n_full, n_full), lb, ub, integ
    if kind == "circulant":
        # x = [f (size) | the rest]: P[q, y] = f[(y - q) mod size]
        q, y = np.divmod(np.arange(lay.n_p), size)
        rest = np.arange(lay.n_p, n_full)
        cols = np.concatenate(((y - q) % size, size + rest - lay.n_p))
        rep = np.concatenate((np.arange(size), rest))
        return _block(np.arange(n_full), cols, np.ones(n_full), n_full, rep.size), lb[rep], ub[rep], integ[rep]
    # mirror: P[q, y] = P[n-q, n-y] and t[k, y] = t[mirror(k), n-y]
    n = size - 1
    rep = np.arange(n_full)
    idx = np.arange(size * size)
    rep[: lay.n_p] = np.minimum(idx, idx.reshape(size, size)[::-1, ::-1].ravel())
    if lay.per_pair:
        pos = {p: k for k, p in enumerate(pb.pairs)}
        mk = np.array([pos[(n - a, n - b)] for a, b in pb.pairs])
        kk = np.repeat(np.arange(len(pb.pairs)), size)
        yy = np.tile(np.arange(size), len(pb.pairs))
        rep[lay.off_t:lay.off_u] = lay.off_t + np.minimum(kk * size + yy, mk[kk] * size + (n - yy))
    uniq, red = np.unique(rep, return_inverse=True)
    return _block(np.arange(n_full), red, np.ones(n_full), n_full, uniq.size), lb[uniq], ub[uniq], integ[uniq]


def _build(pb: _Problem, *, pdp_pattern: np.ndarray | None = None, milp_model: bool = False,
           relaxed: bool = False) -> _Model:
    """The sparse model of one problem.

    ``milp_model`` builds the PDP MILP; ``pdp_pattern`` (bool, pairs x outputs) builds the
    polishing LP of a PDP design: ratio rows only where the indicator is 0, and a mass row
    ``sum_{y: u = 1} P[a, y] <= delta`` per pair. Otherwise the DP LP. Each is reduced where
    that is provably lossless (:func:`_reduction`). ``relaxed`` writes the ratio rows with a
    float ``>= e^eps`` and delta unshrunk: a relaxation of the true problem, whose bound from
    any multipliers bounds the true optimum (:func:`_lp_lower_bound`).
    """
    plain_lp = pdp_pattern is None and not milp_model
    kind = _reduction(pb, plain_lp)
    if kind == "circulant":
        pb = _circulant_model(pb)
    size, K = pb.size, len(pb.pairs)
    e = exp_up(pb.epsilon) if relaxed else math.exp(pb.epsilon) * (1.0 - RATIO_MARGIN)
    d = pb.delta if relaxed else pb.delta - min(_DELTA_MARGIN, 1e-3 * pb.delta)
    pure = pb.delta == 0.0
    lay = _Layout(size, K, complete=kind == "complete",
                  per_pair=milp_model or (plain_lp and not pure), pdp=milp_model, worst=pb.worst)
    n_cols = lay.n_cols
    pa = np.array([p[0] for p in pb.pairs])
    pbb = np.array([p[1] for p in pb.pairs])
    blocks: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]] = []

    def ub(A: sp.csr_matrix, hi: float) -> None:
        blocks.append((A, np.full(A.shape[0], -np.inf), np.full(A.shape[0], float(hi))))

    method = "milp" if milp_model else {"complete": "lp-complete-graph", "mirror": "lp-mirror"}.get(kind, "lp")
    if kind == "circulant":
        method += "-circulant"
    if kind == "complete":
        # Lossless for the complete graph on V under pure DP: for a fixed column y the
        # constraints P[a, y] <= e P[b, y] for all ordered a != b in V say exactly
        # max_{a in V} P[a, y] <= e min_{b in V} P[b, y] (a = b is implied since e >= 1),
        # i.e. some m_y has m_y <= P[a, y] <= e m_y for every a in V. Substituting
        # P[a, y] = m_y + s[a, y] with s >= 0 leaves one row per (a, y):
        # s[a, y] <= (e - 1) m_y. Rows: |V| (n+1) instead of |V| (|V| - 1) (n+1).
        verts = np.array(sorted({v for p in pb.pairs for v in p}))
        v = np.repeat(verts, size)
        y = np.tile(np.arange(size), verts.size)
        r = np.arange(v.size)
        ub(_block(np.concatenate((r, r)), np.concatenate((v * size + y, lay.off_m + y)),
                  np.concatenate((np.ones(v.size), np.full(v.size, -e))), v.size, n_cols), 0.0)
    elif pdp_pattern is not None:
        keep = ~pdp_pattern.ravel()
        ub(_ratio_rows(pa, pbb, size, e, n_cols, None)[keep], 0.0)
        rows, cols = [], []
        for k in range(K):
            ys = np.flatnonzero(pdp_pattern[k])
            rows += [k] * ys.size
            cols += list(pa[k] * size + ys)
        if rows:
            A = _block(np.array(rows), np.array(cols), np.ones(len(rows)), K, n_cols)
            ub(A[pdp_pattern.any(axis=1)], d)
    elif milp_model:
        # Kadam Def. 2 on pairs of rows, as design/finite.py's standard PDP MILP:
        # w = u P[a, y]; P[a,y] - e P[b,y] <= w, w <= P[a,y], w >= P[a,y] - (1 - u),
        # w <= delta u, sum_y w <= delta.
        kn = K * size
        r = np.arange(kn)
        y = np.tile(np.arange(size), K)
        pcol = np.repeat(pa, size) * size + y
        w = lay.off_t + r
        u = lay.off_u + r
        ub(_ratio_rows(pa, pbb, size, e, n_cols, lay.off_t), 0.0)
        ub(_block(np.concatenate((r, r)), np.concatenate((w, pcol)),
                  np.concatenate((np.ones(kn), -np.ones(kn))), kn, n_cols), 0.0)
        ub(_block(np.concatenate((r, r, r)), np.concatenate((pcol, w, u)),
                  np.concatenate((np.ones(kn), -np.ones(kn), np.ones(kn))), kn, n_cols), 1.0)
        ub(_block(np.concatenate((r, r)), np.concatenate((w, u)),
                  np.concatenate((np.ones(kn), np.full(kn, -min(d, 1.0)))), kn, n_cols), 0.0)
        ub(sum_rows(K, size, lay.off_t, n_cols), d)
    elif pure:
        ub(_ratio_rows(pa, pbb, size, e, n_cols, None), 0.0)
    else:
        ub(_ratio_rows(pa, pbb, size, e, n_cols, lay.off_t), 0.0)
        ub(sum_rows(K, size, lay.off_t, n_cols), d)

    for name in pb.constraints:
        blocks.append(_structural_rows(name, size, n_cols))
    one = np.ones(size)
    blocks.append((sum_rows(size, size, 0, n_cols), one, one))
    c = np.zeros(n_cols)
    if pb.worst:
        # z >= sum_y L[q, y] P[q, y] for every q
        A = _block(np.concatenate((np.repeat(np.arange(size), size), np.arange(size))),
                   np.concatenate((np.arange(size * size), np.full(size, lay.off_z))),
                   np.concatenate((pb.L.ravel(), -np.ones(size))), size, n_cols)
        ub(A, 0.0)
        c[lay.off_z] = 1.0
    else:
        c[:lay.n_p] = (pb.prior[:, None] * pb.L).ravel()
    S, lb, ubnd, integ = _substitution(pb, lay, kind)
    if kind != "identity":
        blocks = [((A @ S).tocsr(), lo, hi) for A, lo, hi in blocks]
        if kind == "circulant":   # the rows of different answers coincide: keep one of each
            blocks = [_unique_rows(A, lo, hi) for A, lo, hi in blocks]
        c = S.T @ c
    return _Model(np.asarray(c, float), blocks, lb, ubnd, integ, S, lay, method)


def _unique_rows(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Drop exact duplicate rows (same coefficients and bounds) of a block."""
    if A.shape[0] < 2:
        return A, lo, hi
    A = A.tocsr()
    A.sum_duplicates()
    A.sort_indices()
    keys = {}
    for i in range(A.shape[0]):
        s, t = A.indptr[i], A.indptr[i + 1]
        keys.setdefault((A.indices[s:t].tobytes(), A.data[s:t].tobytes(), lo[i], hi[i]), i)
    keep = np.array(sorted(keys.values()))
    return A[keep], lo[keep], hi[keep]


def _split(blocks) -> tuple[sp.csr_matrix | None, np.ndarray | None, sp.csr_matrix | None, np.ndarray | None]:
    """``linprog`` form: ``A_ub x <= b_ub`` (``lo = -inf``) and ``A_eq x = b_eq`` (``lo = hi``)."""
    ub_a, ub_b, eq_a, eq_b = [], [], [], []
    for A, lo, hi in blocks:
        if np.all(lo == hi):
            eq_a.append(A)
            eq_b.append(hi)
        else:
            ub_a.append(A)
            ub_b.append(hi)
    stack = (lambda m: sp.vstack(m, format="csr") if m else None)
    cat = (lambda v: np.concatenate(v) if v else None)
    return stack(ub_a), cat(ub_b), stack(eq_a), cat(eq_b)


def _solve_lp(model: _Model, time_limit: float | None, duals: list | None = None) -> tuple[np.ndarray, float, int]:
    """:func:`~optnoise.design.solver.solve_lp`; returns the *full* variables, the objective
    and the number of rows; appends ``(y_ub, y_eq)`` to ``duals`` when given."""
    a_ub, b_ub, a_eq, b_eq = _split(model.blocks)
    bounds = [(lo, None if math.isinf(hi) else hi) for lo, hi in zip(model.lb, model.ub)]
    res = solve_lp(model.c, a_ub, b_ub, a_eq, b_eq, bounds, time_limit, _LP_OPTIONS)
    n_rows = (0 if a_ub is None else a_ub.shape[0]) + (0 if a_eq is None else a_eq.shape[0])
    if duals is not None:
        duals.append((None if a_ub is None else res.ineqlin.marginals, None if a_eq is None else res.eqlin.marginals))
    return model.S @ res.x, float(res.fun), n_rows


def _column_bound(pb: _Problem, y_eq: np.ndarray | None) -> Bound | None:
    """The column-by-column certificate of :mod:`optnoise.design.bounds` from the LP's row-sum
    multipliers, where the request has one (pure DP, no structural constraint, prior-averaged;
    neighbours one apart or every pair). It finds the best ratio multipliers for those row
    multipliers itself, so it is at least as tight as the LP's own (HiGHS's dual tolerance
    is absolute). The mirror model holds each row sum twice; the symmetrised split is used."""
    if pb.delta != 0 or pb.constraints or pb.worst or y_eq is None:
        return None
    n = pb.size - 1
    u = np.asarray(y_eq, dtype=np.float64)[-pb.size:]
    if _mirror_symmetric(pb):
        u = (u + u[::-1]) / 2
    c = pb.prior[:, None] * pb.L
    pairs = set(pb.pairs)
    if len(pairs) == 2 * n and pairs == set(pairs_from_distances(n, [1])):
        return chain_bound(lambda lo, hi: c[lo:hi], u, pb.epsilon)
    if _complete_on(pb.pairs) == tuple(range(pb.size)):
        return complete_bound(c, u, pb.epsilon)
    return None


def _lp_lower_bound(pb: _Problem, y_ub: np.ndarray | None, y_eq: np.ndarray | None) -> float | None:
    """A proven lower bound on the true optimum from the solved LP's multipliers.

    The relaxed model (:func:`_build` with ``relaxed``) has the same rows as the solved one
    and a feasible set containing the true problem's (reduced as the solved model was; the
    reductions are lossless for the true problem too). Variables without an upper bound get
    one that keeps the optimum: the epigraph ``t <= P[a, y] <= 1`` can be lowered to
    ``max(0, P[a, y] - E P[b, y]) <= 1``, the worst-case ``z`` to the largest row cost
    ``<= max L``. Then :func:`~optnoise.design.bounds.lp_bound`.
    """
    if not math.isfinite(exp_up(pb.epsilon)):
        return None
    model = _build(pb, relaxed=True)
    a_ub, b_ub, a_eq, b_eq = _split(model.blocks)
    cap = max(1.0, float(np.max(np.abs(pb.L))))
    ub = np.where(np.isinf(model.ub), cap, model.ub)
    value = lp_bound(model.c, a_ub, b_ub, a_eq, b_eq, model.lb, ub, y_ub, y_eq).value
    return value if math.isfinite(value) else None


def _solve_milp(model: _Model, time_limit: float | None) -> tuple[np.ndarray, float, float, int, float | None]:
    from scipy.optimize import Bounds, LinearConstraint

    cons = [LinearConstraint(A, lo, hi) for A, lo, hi in model.blocks]
    res = solve_milp(model.c, cons, model.integrality, Bounds(model.lb, model.ub), time_limit)
    n_rows = sum(A.shape[0] for A, _, _ in model.blocks)
    bound = getattr(res, "mip_dual_bound", None)
    return (model.S @ res.x, float(res.fun), float(getattr(res, "mip_gap", 0.0) or 0.0), n_rows,
            None if bound is None else float(bound))


# ============================================================== checks and repair
def _clean(x: np.ndarray, size: int) -> np.ndarray:
    """Clip to ``>= 0``, flush subnormals, renormalise rows (sums within ~1e-15 of 1)."""
    P = np.clip(np.asarray(x[: size * size], float).reshape(size, size), 0.0, None)
    P[P < 1e-300] = 0.0
    return P / P.sum(axis=1, keepdims=True)


def _meets(P: np.ndarray, pairs: Sequence[tuple[int, int]], target: Target) -> bool:
    """The one rule: the float analysis of ``Channel(P)`` under the directed pairs meets ``target``."""
    return privacy_profile(Channel(P), InputPairs(tuple(pairs), directed=True)).meets(target)


def channel_screen(pairs: Sequence[tuple[int, int]] | InputPairs, target: Target,
                   n_inputs: int | None = None) -> Callable[[np.ndarray | Channel], bool]:
    """A vectorised twin of :meth:`~optnoise.analysis.PrivacyProfile.meets` for channels.

    The same formulas as :class:`~optnoise.analysis.floating.FloatPair` (largest log ratio;
    hockey-stick; PDP mass with the ratio tolerance) judged by the same rule
    (:meth:`~optnoise.target.Target.admits`, float values), on all pairs at once (in blocks of about a
    million entries), instead of one pair object per ordered pair: per record at ``n = 100``
    (10,100 pairs) a check takes milliseconds instead of half a second. For searches only
    (calibration, repair weights); results are confirmed by the rule itself.
    """
    if isinstance(pairs, InputPairs):
        if n_inputs is None:
            raise InvalidParameterError("n_inputs", None, "the number of inputs, to expand InputPairs")
        pairs = pairs.ordered(n_inputs)
    pa = np.array([p[0] for p in pairs], dtype=np.int64)
    pb = np.array([p[1] for p in pairs], dtype=np.int64)
    eps, dlt, notion = target.epsilon, target.delta, target.notion
    e = math.exp(eps)

    def worst(P: np.ndarray, lo: int, hi: int) -> float:
        A, B = P[pa[lo:hi]], P[pb[lo:hi]]
        pos = A > 0
        if dlt == 0:
            if np.any(pos & (B == 0)):
                return math.inf
            with np.errstate(divide="ignore"):
                return float(np.max(np.log(A[pos] / B[pos]), initial=0.0))
        if notion == "dp":
            excess = np.where(B == 0, A, A - e * B)
            return float(np.max(np.sum(np.where(excess > 0, excess, 0.0), axis=1)))
        viol = pos & ((A > e * B * (1.0 + RATIO_TOLERANCE)) | (B == 0))
        return float(np.max(np.sum(np.where(viol, A, 0.0), axis=1)))

    def ok(P: np.ndarray | Channel) -> bool:
        M = P.matrix if isinstance(P, Channel) else np.asarray(P, float)
        step = max(1, (1 << 20) // max(1, M.shape[1]))
        # worst() is the largest log ratio (pure) or the largest delta of the notion: the rule itself
        return all(target.admits(v, v, exact=False) for v in (worst(M, lo, lo + step)
                                                              for lo in range(0, pa.size, step)))

    return ok


def _lift_repair(P: np.ndarray, pa: np.ndarray, pb: np.ndarray, epsilon: float,
                 fast_ok: Callable[[np.ndarray], bool], rounds: int = 20) -> np.ndarray | None:
    """Pure DP: lift entries that sit below their neighbours' ``P[a, y] / e`` (solver tolerance
    is absolute, so an entry the exact optimum holds at ``1e-12`` can come back as 0 beside a
    neighbour at ``1e-10``: an infinite ratio), then renormalise the rows; repeat until the
    fast check passes. Returns ``None`` if it does not within ``rounds``.

    Lifting ``G[b, y]`` to ``max(G[b, y], G[a, y] / e'')`` over every pair until nothing
    changes gives the pointwise-smallest ``G >= P`` meeting the ratios at ``e'' =
    e^eps (1 - 5e-10)``: raising ``G[b, y]`` only helps the constraints in which it is the
    smaller side and can break only those in which it is the larger one, which the next sweep
    repairs by raising that neighbour; every value stays below its column's maximum, so the
    sweeps stop (within the graph's diameter). Renormalising row ``a`` by ``1 + tau_a`` (the
    mass it gained, ~1e-10) moves each ratio by a factor within ``1 +- tau``, which the margin
    ``e'' < e`` absorbs; the next round fixes any rest. Unlike mixing with the uniform
    channel, it moves only the mass the solver's tolerance misplaced, so the cost barely changes.
    """
    e2 = math.exp(epsilon) * (1.0 - 5e-10)
    G = P.copy()
    for _ in range(rounds):
        while True:
            need = np.zeros_like(G)
            np.maximum.at(need, pb, G[pa] / e2)
            lifted = np.maximum(G, need)
            if np.array_equal(lifted, G):
                break
            G = lifted
        G = G / G.sum(axis=1, keepdims=True)
        if fast_ok(G):
            return G
    return None


def _mix_repair(P: np.ndarray, reference: Callable[[], np.ndarray], fast_ok: Callable[[np.ndarray], bool],
                ok: Callable[[np.ndarray], bool]) -> tuple[np.ndarray, float]:
    """Smallest weight ``lam`` found with ``ok((1 - lam) P + lam R)``.

    For DP the feasible channels form a convex set (pure DP: linear rows; approximate DP:
    the hockey-stick divergence is jointly convex), so with a reference ``R`` that meets the
    target with slack the good weights form an interval ``[lam*, 1]``: ``lam*`` is bracketed
    by doubling from ``1e-12`` and narrowed by bisection on the fast check, then confirmed
    (doubling again if needed) by the authoritative ``ok``. Linear structural constraints
    hold for the mixture when they hold for ``P`` and ``R``. The caller has checked that
    ``P`` itself fails ``ok``.
    """
    R = reference()

    def mix(lam: float) -> np.ndarray:
        G = (1.0 - lam) * P + lam * R
        return G / G.sum(axis=1, keepdims=True)

    lo, hi = 0.0, 1e-12
    while not fast_ok(mix(hi)) and hi < 1.0:
        lo, hi = hi, min(1.0, 2.0 * hi)
    if fast_ok(mix(hi)):
        hi = max(boundary(lambda lam: fast_ok(mix(lam)), lo, hi, ok_side="upper", iterations=20), 1e-12)
    while not ok(mix(hi)):
        if hi >= 1.0:
            raise DesignError("the solver's channel violates the privacy target and could not be repaired")
        hi = min(1.0, 2.0 * hi)
    return mix(hi), hi


def constraint_violations(P: np.ndarray, constraints: Iterable[str]) -> dict[str, float]:
    """Largest violation of each structural constraint on ``P`` (0 when it holds exactly).

    Differences of probabilities, except ``unbiased``: ``max_q |sum_y y P[q, y] - q|``.
    """
    P = np.asarray(P, float)
    size = P.shape[0]
    out: dict[str, float] = {}
    for name in constraints:
        if name == "row-monotone":
            v = 0.0
            for q in range(size):
                right = np.diff(P[q, q:])        # must be <= 0
                left = -np.diff(P[q, : q + 1])   # P[q, y-1] - P[q, y] <= 0
                v = max(v, float(np.max(right, initial=0.0)), float(np.max(left, initial=0.0)))
        elif name == "column-monotone":
            v = constraint_violations(P.T, ["row-monotone"])["row-monotone"]
        elif name == "fair":
            d = np.diag(P)
            v = float(d.max() - d.min())
        elif name == "weak-honest":
            v = float(np.max(P - np.diag(P)[:, None]))
        elif name == "unbiased":
            v = float(np.max(np.abs(P @ np.arange(size) - np.arange(size))))
        elif name == "circulant":
            q = np.arange(size)
            circ = P[0, (q[None, :] - q[:, None]) % size]
            v = float(np.max(np.abs(P - circ)))
        else:
            raise InvalidParameterError("constraints", name, "any of " + ", ".join(CONSTRAINTS))
        out[name] = max(v, 0.0)
    return out


# ==================================================================== API
def design_channel(n: int, *, epsilon: float | None = None, delta: float = 0.0, notion: str = "dp",
                   target: Target | None = None,
                   pairs: Iterable[tuple[int, int]] | InputPairs | str | None = None,
                   cost: str | ReleasedCost | np.ndarray = "abs-error",
                   prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False,
                   constraints: Iterable[str] = (), exploit_structure: bool = True,
                   time_limit: float | None = None) -> ChannelDesign:
    """Optimal channel ``P[q, y]`` on ``{0..n}`` under a privacy target.

    Parameters
    ----------
    n:
        Largest answer; inputs and outputs are ``{0..n}``.
    epsilon, delta, notion:
        The target (:class:`~optnoise.target.Target`); ``delta = 0`` is pure ``epsilon``-DP
        (then ``notion`` does not matter). ``"dp"``: approximate DP, an LP; ``"pdp"``: Kadam
        Def. 2 per pair of rows, a MILP with ``|pairs| (n + 1)`` binaries, refused for
        ``n >`` :data:`MAX_PDP_N`.
    target:
        The same as a :class:`~optnoise.target.Target` (instead of the three above).
    pairs:
        Ordered neighbouring input pairs ``(a, b)`` as given, or an :class:`InputPairs`
        (expanded by its own rule). Default: neighbours one apart, both directions
        (:func:`pairs_from_distances` ``(n, [1])``). Per-record release: ``"all"`` (or
        :func:`all_pairs`; the string lets a too large domain be refused before the pairs
        are listed).
    cost:
        A released-value cost of :data:`optnoise.costs.RELEASED_COSTS`, a
        :class:`~optnoise.costs.ReleasedCost` (with its prior or worst case), or an
        ``(n+1) x (n+1)`` loss matrix ``L[q, y]``.
    prior:
        Weights on the answers for the averaged objective (uniform by default).
    worst_case:
        Minimise ``max_q sum_y P[q, y] L[q, y]`` (epigraph variable) instead.
    constraints:
        Any of :data:`CONSTRAINTS`.
    exploit_structure:
        Use the lossless reductions (complete pair graph under pure DP; mirror symmetry under
        DP; circulant channels by their first row). ``False`` writes the plain model, for
        cross-checks.
    time_limit:
        Seconds for the solver; reaching it raises :class:`DesignError`.

    Returns
    -------
    ChannelDesign
        ``.mechanism`` (the channel with its pairs and target), ``.expected_cost``, the float
        ``.analysis``, ``.certify()`` and how the design was obtained.

    Raises
    ------
    InvalidParameterError
        Bad parameters (named), or a PDP problem too large (parameter ``n``).
    DesignError
        Infeasible structural constraints (the message names the constraint(s)), time limit,
        or a solver failure.

    Notes
    -----
    Without structural constraints the problem is always feasible (the uniform channel
    meets every target). Sizes: the LP has ``(n+1)^2`` variables (about half with the mirror
    reduction); pure DP writes ``|pairs| (n+1)`` ratio rows (``(n+1)^2`` with the
    complete-graph reduction); ``delta > 0`` adds ``|pairs| (n+1)`` epigraph variables and
    rows, which is what limits the per-record unit with ``delta > 0`` (``|pairs| = n (n+1)``,
    no reduction known; see docs/benchmarks.md).

    >>> d = design_channel(1, epsilon=math.log(3), pairs=all_pairs(1), cost="er")
    >>> round(d.expected_cost, 6), d.mechanism.kind     # binary randomized response: 1/(1 + e^eps)
    (0.25, 'channel')
    """
    t0 = time.perf_counter()
    size = _check_n(n) + 1
    tgt = resolve_target(epsilon, delta, notion, target)
    eps, dlt = tgt.epsilon, tgt.delta
    notion_eff = "dp" if dlt == 0 else tgt.notion
    if isinstance(pairs, str) and pairs == "all" and 4 * size ** 2 * (1 if dlt == 0 else size) > MAX_NONZEROS:
        raise InvalidParameterError("n", n, f"a smaller domain for a per-record channel: its model would have more "
                                            f"than {MAX_NONZEROS:.0e} coefficients")
    prs = _check_pairs(pairs, size)
    cons = tuple(dict.fromkeys(constraints))
    for c in cons:
        if c not in CONSTRAINTS:
            raise InvalidParameterError("constraints", c, "any of " + ", ".join(CONSTRAINTS))
    if exploit_structure and structured_request(size - 1, prs, dlt, cons, bool(worst_case) or (
            isinstance(cost, ReleasedCost) and cost.worst_case)):
        return _structured(size - 1, tgt, prs, cost, prior, t0)
    nnz = _model_size(size, prs, dlt, cons, notion_eff == "pdp", bool(exploit_structure))
    if nnz > MAX_NONZEROS:
        raise InvalidParameterError("n", n, f"a smaller domain or fewer pairs: this channel model would have about "
                                            f"{nnz:.2g} coefficients (limit {MAX_NONZEROS:.0e}; {len(prs)} ordered "
                                            f"pairs x {size} outputs)")
    cost_name, L, pi, worst = _released(cost, prior, worst_case, size)
    if time_limit is not None and (isinstance(time_limit, bool) or not float(time_limit) > 0):
        raise InvalidParameterError("time_limit", time_limit, "a number of seconds > 0")
    use_milp = notion_eff == "pdp"
    if use_milp and size - 1 > MAX_PDP_N:
        raise InvalidParameterError(
            "n", n, f"n <= {MAX_PDP_N} for a PDP channel (a MILP with {len(prs)} ordered pairs x {size} outputs = "
            f"{len(prs) * size} indicators here); use notion 'dp' (an LP) for larger domains")
    pb = _Problem(size, prs, L, pi, worst, eps, dlt, notion_eff, cons, bool(exploit_structure),
                  None if time_limit is None else float(time_limit))
    target_eff = pb.target
    gap = None
    duals: list = []
    try:
        if band_request(size - 1, prs, dlt, notion_eff, cons, worst) and exploit_structure:
            from .band import solve_band
            sol = solve_band(size - 1, eps, dlt, prs, L, pi, time_limit=pb.time_limit)
            x, obj, n_rows, n_cols, method = sol.matrix.ravel(), sol.objective, sol.n_rows, sol.n_variables, "lp-band"
            bound = sol.bound.value if math.isfinite(sol.bound.value) else None
            bound_method = f"band-lp-dual over the full LP (outward rounded, at e^eps; band {sol.band})"
        elif use_milp:
            x, obj, gap, n_rows, n_cols, method, best_bound = _solve_pdp(pb)
            bound, bound_method = best_bound, "milp-best-bound (HiGHS's, at the design's margins; not re-checked)"
        else:
            model = _build(pb)
            x, obj, n_rows = _solve_lp(model, pb.time_limit, duals)
            n_cols, method = model.n_cols, model.method
            bound, bound_method = _lp_lower_bound(pb, *duals[0]), "lp-dual (outward rounded, at e^eps)"
            column = _column_bound(pb, duals[0][1])
            if column is not None and math.isfinite(column.value) and (bound is None or column.value > bound):
                bound, bound_method = column.value, f"{column.method} from the LP's row multipliers (outward rounded, at e^eps)"
    except Infeasible:
        raise DesignError(_diagnose(pb)) from None
    P = _clean(x, size)
    pa, pbb = np.array([p[0] for p in prs]), np.array([p[1] for p in prs])
    fast_ok = channel_screen(prs, target_eff)
    ok = (lambda M: _meets(M, prs, target_eff))
    ref = (lambda: np.full((size, size), 1.0 / size)) if "unbiased" not in cons else (lambda: _reference(pb))
    tol = {k: CONSTRAINT_TOLERANCE * (max(1, size - 1) if k == "unbiased" else 1) for k in cons}

    def beyond(M: np.ndarray) -> dict[str, float]:
        return {k: v for k, v in constraint_violations(M, cons).items() if v > tol[k]}

    notes: list[str] = []
    lam, lifted_mass, repair = 0.0, 0.0, "none"
    if not ok(P):
        lifted = _lift_repair(P, pa, pbb, eps, fast_ok) if dlt == 0 else None
        if lifted is not None and ok(lifted) and not beyond(lifted):
            lifted_mass = float(np.abs(lifted - P).sum(axis=1).max())
            P, repair = lifted, "lift"
            notes.append(f"entries below the ratio constraints (absolute solver tolerance) lifted; largest "
                         f"L1 change of a row {lifted_mass:.3g}")
        else:
            P, lam = _mix_repair(P, ref, fast_ok, ok)
            repair = "mix"
            notes.append(f"mixed with a reference channel at weight {lam:.3g} to absorb solver tolerance")
    bad = beyond(P)
    if bad:
        raise DesignError(f"the solver's channel misses structural constraints beyond tolerance: {bad}")
    P.flags.writeable = False
    Lr = L.copy()
    Lr.flags.writeable = False
    return ChannelDesign(
        matrix=P, cost=cost_name, loss_matrix=Lr, prior=pi, worst_case=worst,
        expected_cost=channel_cost(P, L, pi, worst), objective=obj, target=target_eff, pairs=prs,
        constraints=cons, method=method, solve_seconds=time.perf_counter() - t0, repair=repair,
        repair_weight=lam, lifted_mass=lifted_mass, n_variables=n_cols, n_constraints=n_rows, mip_gap=gap,
        notes=tuple(notes), lower_bound=bound, bound_method=bound_method)


#: Domains above this size (``n > STRUCTURED_FROM``) take the structured solver when the
#: request allows it (:func:`structured_request`); below it the LP is a second or two.
STRUCTURED_FROM = 100


def structured_request(n: int, pairs: Sequence[tuple[int, int]], delta: float, constraints: Sequence[str],
                       worst_case: bool) -> bool:
    """Whether :func:`design_channel` solves the request with :mod:`optnoise.design.chain`:
    ``n > STRUCTURED_FROM``, pure DP, exactly the pairs of neighbours one apart, no
    structural constraint, a prior-averaged cost."""
    return (n > STRUCTURED_FROM and delta == 0 and not constraints and not worst_case
            and len(pairs) == 2 * n and set(pairs) == set(pairs_from_distances(n, [1])))


#: Largest pair distance for which approximate-DP requests are solved on a band.
BAND_REACH = 8


def band_request(n: int, pairs: Sequence[tuple[int, int]], delta: float, notion: str, constraints: Sequence[str],
                 worst_case: bool) -> bool:
    """Whether :func:`design_channel` solves the request on a band (:mod:`optnoise.design.band`):
    ``n > STRUCTURED_FROM``, approximate DP with ``delta > 0``, pairs at most
    :data:`BAND_REACH` apart, no structural constraint, a prior-averaged cost."""
    return (n > STRUCTURED_FROM and delta > 0 and notion == "dp" and not constraints and not worst_case
            and max(abs(a - b) for a, b in pairs) <= BAND_REACH)


def _structured(n: int, target: Target, pairs: tuple[tuple[int, int], ...], cost, prior, t0: float) -> ChannelDesign:
    """The structured design (:func:`optnoise.design.chain.solve_chain`) as a :class:`ChannelDesign`.

    A named cost is never expanded into its ``(n+1)^2`` loss matrix (``loss_matrix`` is
    ``None``; row costs are computed in blocks)."""
    from .chain import solve_chain

    if isinstance(cost, ReleasedCost):
        name, pi, L = cost.name, cost.weights(n + 1), cost.name
    elif isinstance(cost, str):
        name, pi, L = cost.strip(), check_prior(prior, n + 1), cost.strip()
        loss_matrix(name, 1)   # validates the name
    else:
        name, L, pi, _ = _released(cost, prior, False, n + 1)
    sol = solve_chain(n, target.epsilon, L, pi)
    notes = ["Ghosh et al.'s geometric mechanism with the best deterministic remap; the bound is a dual "
             "certificate checked at e^eps in outward-rounded arithmetic"]
    if sol.mixing:
        notes.append(f"mixed with the uniform channel at weight {sol.mixing:.3g} (entries below the float range)")
    Lr = None if isinstance(L, str) else L
    return ChannelDesign(
        matrix=sol.matrix, cost=name, loss_matrix=Lr, prior=pi, worst_case=False, expected_cost=sol.cost,
        objective=sol.cost, target=target, pairs=pairs, constraints=(), method="geometric-remap",
        solve_seconds=time.perf_counter() - t0, repair="mix" if sol.mixing else "none", repair_weight=sol.mixing,
        n_variables=n + 1, n_constraints=n + 1, notes=tuple(notes),
        lower_bound=sol.bound.value if math.isfinite(sol.bound.value) else None,
        bound_method=f"{sol.bound.method} (outward rounded, at e^eps)")


def _model_size(size: int, pairs: tuple[tuple[int, int], ...], delta: float, constraints: tuple[str, ...],
                milp: bool, exploit: bool) -> int:
    """Coefficients of the model :func:`_build` would write (after its reductions), roughly:
    ratio rows 2-3 per (pair, output) -- (n+1)^2 rows of 2 for the per-record reduction, one
    pair per distance when circulant -- plus the PDP rows, the rows sums, the objective's
    epigraph and the structural constraints (at most 2 per entry of P)."""
    k = len(pairs)
    if exploit and "circulant" in constraints:
        k = len({(a - b) % size for a, b in pairs})
    elif exploit and not milp and delta == 0 and _complete_on(pairs) is not None:
        k = size
    per_pair = 2 * size * k
    if milp:
        per_pair *= 5
    elif delta > 0:
        per_pair = per_pair * 3 // 2 + k * size
    return per_pair + (2 + 2 * len(constraints)) * size * size


def _solve_pdp(pb: _Problem):
    """MILP, then the LP with the indicators fixed (tight tolerances, margins on e and delta)."""
    model = _build(pb, milp_model=True)
    lay = model.layout
    x, _obj, gap, n_rows, best_bound = _solve_milp(model, pb.time_limit)
    # the indicators of the problem the model was built for (one pair per distance if circulant)
    u = np.rint(x[lay.off_u:lay.off_z]).astype(bool).reshape(lay.n_pairs, pb.size)
    x2, obj2, _ = _solve_lp(_build(pb, pdp_pattern=u), pb.time_limit)
    # the polished LP's optimum <= the MILP's incumbent (the incumbent is feasible for it)
    return np.asarray(x2), obj2, gap, n_rows, model.n_cols, model.method, best_bound


def _reference(pb: _Problem) -> np.ndarray:
    """A channel meeting the target with slack and every structural constraint: the same
    design at half the delta (or half the epsilon when delta = 0)."""
    half = pb.replace(epsilon=pb.epsilon / (2 if pb.delta == 0 else 1), delta=pb.delta / 2)
    try:
        if pb.notion == "pdp" and pb.delta > 0:
            x = _solve_pdp(half)[0]
        else:
            x = _solve_lp(_build(half), pb.time_limit)[0]
    except Infeasible:
        raise DesignError("the solver's channel violates the privacy target within solver tolerance, and no "
                          "strictly feasible channel with these constraints exists to repair it") from None
    return _clean(x, pb.size)


def _feasible(pb: _Problem, cons: tuple[str, ...]) -> bool:
    trial = pb.replace(worst=False, constraints=cons)
    try:
        if pb.notion == "pdp" and pb.delta > 0:
            _solve_pdp(trial)
        else:
            _solve_lp(_build(trial), pb.time_limit)
    except Infeasible:
        return False
    return True


def _diagnose(pb: _Problem) -> str:
    """Name the structural constraint(s) that make the design infeasible.

    The uniform channel meets every privacy target and every constraint except
    ``unbiased``, so infeasibility always involves ``unbiased``. Try ``unbiased`` alone,
    then with each other constraint.
    """
    target = f"{pb.target.describe()}, {len(pb.pairs)} ordered pairs"
    if "unbiased" in pb.constraints and not _feasible(pb, ("unbiased",)):
        n = pb.size - 1
        pairs = set(pb.pairs)
        why = ""
        if pb.delta == 0:
            why = (": an unbiased channel with outputs in {0..n} must release 0 for answer 0 and n for answer "
                   "n with probability 1, and a deterministic row has infinite epsilon against any neighbour "
                   "whose row differs")
        elif (0, n) in pairs or (n, 0) in pairs:
            why = (": rows 0 and n of an unbiased channel on {0..n} are point masses at 0 and n, and they are "
                   "neighbours here (delta_DP = 1)")
        elif ((1, 0) in pairs or (n - 1, n) in pairs) and pb.delta < 1.0 / n:
            why = (f": row 0 is the point mass at 0, so the pair (1, 0) needs P[1, 0] >= 1 - delta and the mean "
                   f"of row 1 is at most n delta = {n * pb.delta:g} < 1")
        return f"infeasible design: constraint 'unbiased' cannot hold under {target}{why}"
    others = [c for c in pb.constraints if c != "unbiased"]
    culprits = [c for c in others if not _feasible(pb, tuple(sorted({"unbiased", c})))]
    if culprits:
        return (f"infeasible design: constraint 'unbiased' together with {', '.join(repr(c) for c in culprits)} "
                f"cannot hold under {target} (each alone can)")
    return (f"infeasible design: the constraints {', '.join(repr(c) for c in pb.constraints)} cannot all hold "
            f"under {target} (every pair of them can)")


# ======================================================= Ghosh et al.
def truncated_geometric_channel(n: int, epsilon: float) -> np.ndarray:
    """Ghosh, Roughgarden & Sundararajan's range-restricted geometric mechanism on ``{0..n}``.

    ``y = clamp(q + Z, 0, n)`` with two-sided geometric ``Z``, ``P(Z = k) ∝ alpha^|k|``,
    ``alpha = e^-epsilon``: ``P[q, y] = (1 - alpha)/(1 + alpha) alpha^|y - q|`` inside,
    ``P[q, 0] = alpha^q / (1 + alpha)`` and ``P[q, n] = alpha^(n - q) / (1 + alpha)``.
    Pure ``epsilon``-DP for neighbours one apart (it is post-processing of the geometric
    mechanism). Built by :func:`optnoise.families.baselines.clamp_channel`.
    """
    size = _check_n(n) + 1
    eps = Target(epsilon).epsilon
    return np.array(clamp_channel(geometric_pmf(math.exp(-eps)), size - 1).matrix)


@dataclass(frozen=True, eq=False)
class PostProcessing:
    """Result of :func:`optimal_post_processing`: the remap ``T``, the channel ``G @ T``, its cost."""

    remap: np.ndarray
    matrix: np.ndarray
    cost: float
    deterministic: bool


def optimal_post_processing(G: np.ndarray | Channel, L: np.ndarray, prior: Sequence[float] | np.ndarray | None = None,
                            worst_case: bool = False) -> PostProcessing:
    """The best post-processing ``T`` (row-stochastic, outputs to outputs) of a channel ``G``.

    Minimises the cost of ``G @ T`` under loss ``L``. Prior-averaged: the cost is
    ``sum_{z, y} T[z, y] C[z, y]`` with ``C = G^T diag(prior) L``, separable per row ``z``, so
    the LP's optimum puts row ``z`` on ``argmin_y C[z, y]`` (a deterministic remap: the
    Bayesian user's best response, Ghosh et al. 2009, Section 2). Worst case: an LP with
    ``z >= sum_{z', y} G[q, z'] T[z', y] L[q, y]`` for every ``q``; its optimal ``T`` may be
    randomized (Gupte & Sundararajan 2010's minimax users).
    """
    Gm = G.matrix if isinstance(G, Channel) else np.asarray(G, float)
    L = np.asarray(L, float)
    rows, outs = Gm.shape
    if L.shape[0] != rows:
        raise InvalidParameterError("L", f"shape {L.shape}", f"a loss matrix with {rows} rows")
    m = L.shape[1]
    if not worst_case:
        pi = check_prior(prior, rows)
        C = Gm.T @ (pi[:, None] * L)
        T = np.zeros((outs, m))
        T[np.arange(outs), np.argmin(C, axis=1)] = 1.0
        M = Gm @ T
        return PostProcessing(T, M, channel_cost(M, L, pi), True)
    # variables T (outs x m) flat, then z; row q: sum_{z', y} G[q, z'] L[q, y] T[z', y] - z <= 0
    n_t = outs * m
    coef = (Gm[:, :, None] * L[:, None, :]).reshape(rows, n_t)
    A_ub = sp.hstack((sp.csr_matrix(coef), sp.csr_matrix(-np.ones((rows, 1))))).tocsr()
    A_eq = sum_rows(outs, m, 0, n_t + 1)
    c = np.zeros(n_t + 1)
    c[-1] = 1.0
    res = solve_lp(c, A_ub, np.zeros(rows), A_eq, np.ones(outs), [(0, 1)] * n_t + [(0, None)], None)
    T = np.clip(res.x[:n_t].reshape(outs, m), 0.0, None)
    T = T / T.sum(axis=1, keepdims=True)
    M = Gm @ T
    det = bool(np.all((T < 1e-9) | (T > 1 - 1e-9)))
    return PostProcessing(T, M, channel_cost(M, L, worst_case=True), det)


# ======================================================= the optimal modulo noise
def _noise_neighbourhood(pairs: Iterable[tuple[int, int]] | InputPairs | Neighbourhood | None,
                         size: int) -> Neighbourhood:
    """Query distances for noise mod ``size``: a :class:`Neighbourhood` as given; pairs become
    their differences ``a - b`` (directed, as listed), so the noise protects every pair."""
    if isinstance(pairs, Neighbourhood):
        return pairs
    prs = _check_pairs(pairs, size)
    return Neighbourhood(tuple(sorted({a - b for a, b in prs})), directed=True)


def optimal_modulo_noise(n: int, *, epsilon: float | None = None, delta: float = 0.0, notion: str = "dp",
                         target: Target | None = None,
                         neighbourhood: Iterable[tuple[int, int]] | InputPairs | Neighbourhood | None = None,
                         cost: str | ReleasedCost | np.ndarray = "abs-error",
                         prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False,
                         time_limit: float | None = None) -> FiniteDesign:
    """The best noise added modulo ``n + 1`` for a cost of the released value.

    ``neighbourhood``: query distances (a :class:`Neighbourhood`, cyclic as for any modulo
    noise), or input pairs, whose differences ``a - b`` the noise then protects (directed, as
    listed), so that its channel meets the target on exactly those pairs -- and on all their
    rotations, e.g. the wrap pair ``(n, 0)`` for distance 1: a cyclic noise cannot tell them
    apart. Default: distance 1, symmetric.

    Prior-averaged: :func:`optnoise.design.finite.design_finite` with the cost vector
    :func:`~optnoise.costs.modulo_cost_vector` (exact: the objective is linear in the PMF).
    Worst case over ``q``: the channel LP with the constraint ``circulant`` over the cyclic
    pairs (:func:`cyclic_pairs`); its first row is the noise PMF (the per-answer costs differ
    unless the loss is circular, so no cost vector captures the maximum).

    Returns a :class:`~optnoise.design.finite.FiniteDesign` whose ``cost`` is the
    released-value cost's name and ``expected_cost`` its value (prior-averaged or worst).
    """
    size = _check_n(n) + 1
    tgt = resolve_target(epsilon, delta, notion, target)
    nb = _noise_neighbourhood(neighbourhood, size)
    name, L, pi, worst = _released(cost, prior, worst_case, size)
    if not worst:
        fd = design_finite(size - 1, target=tgt, neighbourhood=nb, cost=modulo_cost_vector(L, pi),
                           time_limit=time_limit)
        return replace(fd, cost=name)
    d = design_channel(size - 1, target=tgt, pairs=cyclic_pairs(size - 1, nb), cost=L, worst_case=True,
                       constraints=("circulant",), time_limit=time_limit)
    f = np.array(d.matrix[0])
    pmf = CyclicPMF(f / f.sum())
    if not privacy_profile(pmf, nb).meets(tgt):
        raise DesignError("the circulant channel's first row does not meet the target as noise; refusing to "
                          "return it")
    sq_worst, sq_avg = wrapped_squared_error(pmf.probs)
    return FiniteDesign(
        pmf=pmf, cost=name, expected_cost=channel_cost(pmf, L, worst_case=True),
        error_rate=float(1.0 - pmf.probs[0]),
        noise_second_moment=float(cost_vector("noise-second-moment", (size,)) @ pmf.probs),
        squared_error_worst=sq_worst, squared_error_average=sq_avg, target=tgt, neighbourhood=nb,
        method=d.method, optimal=True, solve_seconds=d.solve_seconds,
        notes=d.notes + ("worst case over q: the channel LP constrained to circulant channels (noise mod n+1)",))


# ======================================================= calibrated baselines
#: Baselines as channels on ``{0..n}``: name -> (registry family, boundary).
BASELINE_FAMILIES: dict[str, tuple[str, str]] = {
    "clamped-geometric": ("geometric", "clamp"),
    "clamped-discrete-gaussian": ("discrete-gaussian", "clamp"),
    "randomized-response": ("rr", "modulo"),
    "exponential": ("exponential", "modulo"),
}
#: The baselines of ``compare --form channel`` (issue 15), the optimal modulo noise last.
BASELINES: tuple[str, ...] = ("clamped-geometric", "clamped-discrete-gaussian", "randomized-response",
                              "optimal-modulo-noise")


@dataclass(frozen=True, eq=False)
class BaselineChannel:
    """One baseline as a channel, calibrated to a target, with its cost under the objective."""

    name: str
    parameter: float | None
    parameter_name: str | None
    matrix: np.ndarray
    cost: float
    boundary: str | None = None
    notes: tuple[str, ...] = ()


def calibrate_channel(name: str, n: int, *, target: Target,
                      pairs: Iterable[tuple[int, int]] | InputPairs | None = None) -> tuple[float, np.ndarray]:
    """``(parameter, channel)`` of the least noisy member of a baseline family meeting ``target``
    on the pairs (:data:`BASELINE_FAMILIES`).

    The family registry's calibration (:func:`optnoise.families.calibrate`, one monotone
    search, confirmed by the one "meets" rule) with :func:`channel_screen` as its fast
    predicate; randomized response is analysed as its channel.
    """
    size = _check_n(n) + 1
    if name not in BASELINE_FAMILIES:
        raise InvalidParameterError("name", name, ", ".join(BASELINE_FAMILIES))
    family, boundary = BASELINE_FAMILIES[name]
    prs = _check_pairs(pairs, size)
    nb = InputPairs(prs, directed=True)
    x = calibrate(family, size - 1, target, nb, boundary, screen=channel_screen(prs, target))
    mech = calibration_of(family).build(x, size - 1, boundary)
    return x, np.array(channel_matrix(mech))


def calibrated_baselines(n: int, *, epsilon: float | None = None, delta: float = 0.0, notion: str = "dp",
                         target: Target | None = None, pairs: Iterable[tuple[int, int]] | InputPairs | None = None,
                         cost: str | ReleasedCost | np.ndarray = "abs-error",
                         prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False,
                         names: Sequence[str] = BASELINES) -> tuple[BaselineChannel, ...]:
    """Each baseline as a channel calibrated to the same target and pairs, with its cost.

    Which inequalities hold (same target, pairs, cost, prior or worst case):

    * ``design_channel(...).expected_cost <=`` the cost of every baseline here: each baseline
      channel meets the target on the pairs, so it is feasible for the channel problem.
    * optimal modulo noise ``<=`` randomized response: RR *is* a modulo noise (circulant), and
      its guarantee is the same for every pair of distinct inputs, so it meets the target on
      the rotations of the pairs too.
    * optimal modulo noise ``<=`` the clamped baselines holds when the pair set and the
      objective are invariant under rotation ``q -> q + 1 mod (n+1)`` -- e.g. all pairs (per
      record) with a circular cost (``circular-abs``, ``circular-mse``) and a uniform prior or
      the worst case -- and the notion is DP: averaging an optimal channel over the ``n + 1``
      rotations keeps it feasible (DP's constraints are convex) and keeps its cost (uniform
      prior) or lowers it (worst case), and the average is circulant. Otherwise it can fail,
      and does for the plain released-value cost: wrap-around errors of size ``~n`` make modulo
      noise worse than clamping (n = 10, one-year neighbours: the clamped geometric costs
      less than 0.6 times the best modulo noise's ``abs-error``; see the tests).
    """
    size = _check_n(n) + 1
    tgt = resolve_target(epsilon, delta, notion, target)
    prs = _check_pairs(pairs, size)
    _, L, pi, worst = _released(cost, prior, worst_case, size)
    out = []
    for name in names:
        if name == "optimal-modulo-noise":
            fd = optimal_modulo_noise(size - 1, target=tgt, neighbourhood=prs, cost=L, prior=pi, worst_case=worst)
            M = channel_matrix(fd.pmf)
            how = ("the channel LP constrained to circulant channels" if worst
                   else "design_finite with the prior-averaged released-value cost vector")
            out.append(BaselineChannel(name, None, None, M, channel_cost(M, L, pi, worst), None, (how,)))
        elif name in BASELINE_FAMILIES:
            param, M = calibrate_channel(name, size - 1, target=tgt, pairs=prs)
            family, boundary = BASELINE_FAMILIES[name]
            out.append(BaselineChannel(name, param, calibration_of(family).parameter, M,
                                       channel_cost(M, L, pi, worst), boundary if boundary == "clamp" else None))
        else:
            raise InvalidParameterError("names", name,
                                        "any of " + ", ".join((*BASELINE_FAMILIES, "optimal-modulo-noise")))
    return tuple(out)


__all__ = [
    "BASELINES",
    "BASELINE_FAMILIES",
    "CONSTRAINTS",
    "CONSTRAINT_TOLERANCE",
    "MAX_PDP_N",
    "BaselineChannel",
    "ChannelDesign",
    "PostProcessing",
    "all_pairs",
    "calibrate_channel",
    "calibrated_baselines",
    "channel_screen",
    "constraint_violations",
    "cyclic_pairs",
    "design_channel",
    "optimal_modulo_noise",
    "optimal_post_processing",
    "pairs_from_distances",
    "truncated_geometric_channel",
]
