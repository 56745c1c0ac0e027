"""Per-record ``(eps, delta)``-DP channels: constraint generation over the pairs of inputs.

Every ordered pair of answers ``(a, b)`` is a pair of neighbours (the per-record unit); the
channel LP is, with ``c = diag(prior) L`` and ``E = e^eps``,

    ``min sum c * P``  s.t.  rows of ``P`` sum to 1, ``P >= 0``, and for every ``a != b``
    ``H_ab(P) = sum_y max(0, P[a, y] - E P[b, y]) <= delta``.

``H_ab`` is the largest of ``sum_{y in S} (P[a, y] - E P[b, y])`` over the sets ``S`` of
outputs, attained at ``S = {y : P[a, y] > E P[b, y]}``; so the constraint of a pair is the
family of *cuts* ``(a, b, S)``: ``sum_{y in S} P[a, y] - E P[b, y] <= delta``. The LP with
every output and only some cuts is a *relaxation* (each cut holds for every feasible channel),
so its optimum is a lower bound; once its channel meets every pair's constraint it is
optimal. The cuts are generated: solve (HiGHS, the cuts added to the solved model and the
dual simplex warm-started), find for each row ``a`` the pair ``(a, b)`` with the largest
``H_ab`` (vectorised over ``b`` on the outputs row ``a`` uses: a vertex uses few), add its cut
where it exceeds ``delta``, until none does (Kelley's cutting planes; finitely many cuts).
There are ``(n + 1)^2`` variables and at most one cut per row per round -- never the
``n (n + 1)`` pairs times ``n + 1`` outputs of the epigraph model
(:mod:`optnoise.design.channel_model`).

Why the bound is proven, not assumed: the last relaxation's multipliers ``(u, w)`` are
checked by :func:`~optnoise.design.bounds.lp_bound` on that relaxation with the ratio
coefficients at a float ``>= e^eps`` and ``delta`` unshrunk (a relaxation of the true cuts,
which in turn relax the true LP), outward rounded: a lower bound on the optimum over all
channels whatever the solver's accuracy. The channel is designed at ``e^eps (1 -
RATIO_MARGIN)`` and ``delta (1 - DELTA_MARGIN)``, rows normalised and mixed with the uniform
channel where the float check still finds an ``H_ab`` above the design's delta (mixing at
``lam`` multiplies every ``H_ab`` by at most ``1 - lam``); the exact certificate of the
quantized weights decides in the end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError
from .bounds import Bounded, Bound, exp_up, lp_bound
from .solver import RATIO_MARGIN

#: ``delta`` is designed this much (relative) below the target; HiGHS's feasibility
#: tolerances (:data:`TOLERANCE`) are far below it.
DELTA_MARGIN, TOLERANCE = 1e-7, 1e-10

#: Rounds of cut generation before the gap is reported as it stands (:data:`MAX_ROUNDS`),
#: and cuts added per row and round, the most violated pairs first (:data:`PER_ROW`).
MAX_ROUNDS, PER_ROW = 400, 2


@dataclass(frozen=True, eq=False)
class RecordDeltaSolution(Bounded):
    """A per-record ``(eps, delta)`` channel from cut generation, with its proven bound.

    Attributes
    ----------
    matrix:
        ``P[q, y]``, rows summing to 1.
    cost:
        ``sum c * P`` of ``matrix``.
    bound:
        A proven lower bound on the optimum over all channels.
    cuts, rounds:
        Cuts generated, relaxations solved.
    worst:
        The largest ``H_ab`` of ``matrix`` in floats (at most the target's delta up to
        rounding; the exact certificate decides).
    mixing:
        Weight of the uniform channel mixed in (0 if none).
    """

    matrix: np.ndarray
    cost: float
    bound: Bound
    cuts: int
    rounds: int
    worst: float
    mixing: float
    seconds: float


class _CutMaster:
    """The relaxation over every output and the cuts so far, solved incrementally.

    Variables ``P[q, y]`` at index ``q * size + y``; rows: the ``size`` row sums, then one
    row per cut."""

    def __init__(self, c: np.ndarray, e: float, delta: float) -> None:
        from scipy.optimize._highspy._core import _Highs   # scipy's own HiGHS binding

        self.size, self.e, self.delta = c.shape[0], e, delta
        self.cuts: list[tuple[int, int, np.ndarray]] = []
        self.h = _Highs()
        for name, value in (("output_flag", False), ("primal_feasibility_tolerance", TOLERANCE),
                            ("dual_feasibility_tolerance", TOLERANCE)):
            self.h.setOptionValue(name, value)
        size = self.size
        ones = np.ones(size)
        self.h.addRows(size, ones, ones, 0, np.zeros(size, dtype=np.int32), np.zeros(0, dtype=np.int32),
                       np.zeros(0))
        k = size * size
        self.h.addCols(k, np.ascontiguousarray(c, dtype=np.float64).ravel(), np.zeros(k), np.full(k, 1e30), k,
                       np.arange(k, dtype=np.int32), np.repeat(np.arange(size, dtype=np.int32), size), np.ones(k))

    def add(self, cuts: list[tuple[int, int, np.ndarray]]) -> None:
        """Rows ``sum_{y in S} P[a, y] - E P[b, y] <= delta`` for the cuts ``(a, b, S)``."""
        size = self.size
        starts, index, values = [], [], []
        at = 0
        for a, b, S in cuts:
            starts.append(at)
            index.extend([a * size + S, b * size + S])
            values.extend([np.ones(S.size), np.full(S.size, -self.e)])
            at += 2 * S.size
        self.h.addRows(len(cuts), np.full(len(cuts), -1e30), np.full(len(cuts), self.delta), at,
                       np.asarray(starts, dtype=np.int32), np.concatenate(index).astype(np.int32),
                       np.concatenate(values))
        self.cuts.extend(cuts)

    def solve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Solve (warm-started); ``(P, row multipliers u, cut multipliers)``."""
        from scipy.optimize._highspy._core import HighsModelStatus

        self.h.run()
        if self.h.getModelStatus() != HighsModelStatus.kOptimal:
            raise DesignError(f"the per-record (eps, delta) relaxation did not solve ({self.h.getModelStatus()})")
        sol = self.h.getSolution()
        duals = np.asarray(sol.row_dual, dtype=np.float64)
        P = np.asarray(sol.col_value, dtype=np.float64).reshape(self.size, self.size)
        return np.maximum(P, 0.0), duals[:self.size], duals[self.size:]


def hockey_rows(P: np.ndarray, e: float, rows: np.ndarray | None = None) -> np.ndarray:
    """``H[a, b] = sum_y max(0, P[a, y] - e P[b, y])`` for the rows ``a`` of ``rows`` (default
    all) against every ``b``; only the outputs where ``P[a, y] > 0`` can contribute."""
    rows = np.arange(P.shape[0]) if rows is None else rows
    out = np.zeros((rows.size, P.shape[0]))
    eP = e * P
    for i, a in enumerate(rows):
        S = np.flatnonzero(P[a] > 0)
        out[i] = np.maximum(P[a, S][None, :] - eP[:, S], 0.0).sum(axis=1)
    out[np.arange(rows.size), rows] = 0.0
    return out


def find_cuts(P: np.ndarray, e: float, delta: float, per_row: int = PER_ROW
              ) -> tuple[list[tuple[int, int, np.ndarray]], float]:
    """The most violated pairs of each row (``H_ab > delta``, at most ``per_row``), as cuts
    ``(a, b, S)`` with ``S = {y : P[a, y] > e P[b, y]}``; and the largest ``H_ab``."""
    H = hockey_rows(P, e)
    worst = float(H.max())
    cuts = []
    for a in np.flatnonzero(H.max(axis=1) > delta):
        order = np.argsort(-H[a])[:per_row]
        for b in order[H[a, order] > delta]:
            S = np.flatnonzero(P[a] > e * P[b])
            cuts.append((int(a), int(b), S))
    return cuts, worst


#: Most cuts the candidate seeds the relaxation with.
MAX_SEED_CUTS = 20_000


def candidate(c: np.ndarray, epsilon: float, e: float, delta: float) -> np.ndarray:
    """``(1 - delta) B + delta I``: ``B`` the optimal pure-DP per-record channel at ``e``
    (:func:`~optnoise.design.record.solve_record`), each row's ``delta`` on its own output.

    Feasible for every pair: ``H_ab`` is at most ``delta (max(0, 1 - e 0)) + (1 - delta)
    H_ab(B) = delta``, the hockey-stick sum being subadditive and ``H_ab(B) = 0`` for a pure
    ``B`` (every column of ``B`` within ``e`` after its mixing). Optimal in the cases measured
    (E|y - q|, eps = 1, delta = 1e-3, n = 10..30), so its cuts seed the relaxation."""
    from .record import solve_record

    B = solve_record(c, epsilon).matrix
    return (1.0 - delta) * B + delta * np.eye(c.shape[0])


def seed_cuts(P: np.ndarray, e: float, delta: float) -> list[tuple[int, int, np.ndarray]]:
    """The cuts of ``P`` for its (near) tight pairs, ``H_ab >= delta (1 - 1e-6)``, at most
    :data:`MAX_SEED_CUTS` (evenly spread over each row's tight pairs)."""
    size = P.shape[0]
    per_row = max(2, MAX_SEED_CUTS // size)
    H = hockey_rows(P, e)
    cuts = []
    for a in range(size):
        tight = np.flatnonzero(H[a] >= delta * (1.0 - 1e-6))
        for b in tight[np.unique(np.linspace(0, tight.size - 1, min(per_row, tight.size)).round().astype(int))] \
                if tight.size else ():
            cuts.append((a, int(b), np.flatnonzero(P[a] > e * P[b])))
    return cuts


def cut_bound(master: _CutMaster, c: np.ndarray, u: np.ndarray, w: np.ndarray, epsilon: float,
              delta: float) -> Bound:
    """Proven lower bound from the relaxation's multipliers (:func:`lp_bound` on the cuts at a
    float ``>= e^eps`` and the target's ``delta``, ``0 <= P <= 1``)."""
    import scipy.sparse as sp

    size = master.size
    e_up = exp_up(epsilon)
    rows, cols, vals = [], [], []
    for i, (a, b, S) in enumerate(master.cuts):
        rows.append(np.full(2 * S.size, i))
        cols.append(np.concatenate([a * size + S, b * size + S]))
        vals.append(np.concatenate([np.ones(S.size), np.full(S.size, -e_up)]))
    k = size * size
    a_eq = sp.csr_matrix((np.ones(k), (np.repeat(np.arange(size), size), np.arange(k))), shape=(size, k))
    if master.cuts:
        a_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(len(master.cuts), k))
        b_ub = np.full(len(master.cuts), float(delta))
    else:
        a_ub, b_ub, w = None, None, None
    return lp_bound(c.ravel(), a_ub, b_ub, a_eq, np.ones(size), np.zeros(k), np.ones(k), w, u, method="cut-dual")


def mix_to_delta(P: np.ndarray, e: float, delta: float) -> tuple[np.ndarray, float, float]:
    """Rows normalised, then mixed with the uniform channel at the least weight (with room)
    that brings every ``H_ab`` (at ``e``) within ``delta``: mixing at ``lam`` gives ``H_ab <=
    (1 - lam) H_ab(P)`` (each term ``(1 - lam)(P[a, y] - e P[b, y]) + lam (1 - e) / m`` with
    the last part negative). Returns ``(channel, lam, largest H_ab)``."""
    P = P / P.sum(axis=1, keepdims=True)
    worst = float(hockey_rows(P, e).max())
    if worst <= delta:
        return P, 0.0, worst
    lam = min(1.0, 2.0 * (1.0 - delta / worst))
    Q = P * (1.0 - lam) + lam / P.shape[1]
    return Q, lam, float(hockey_rows(Q, e).max())


def solve_record_delta(cost: np.ndarray, epsilon: float, delta: float, *,
                       time_limit: float | None = None) -> RecordDeltaSolution:
    """The optimal per-record channel under ``(epsilon, delta)``-DP for ``c = cost``
    (``diag(prior) L``), by cut generation over the pairs, with its proven bound.

    Parameters
    ----------
    cost:
        ``diag(prior) L``, square.
    epsilon, delta:
        The target (``delta > 0``); the LP uses ``e^eps (1 - RATIO_MARGIN)`` and ``delta (1 -
        DELTA_MARGIN)``, the bound ``e^eps`` and ``delta`` themselves.
    time_limit:
        Seconds before the last relaxation's channel is returned (mixed to meet the target;
        its gap says how far from optimal).

    Proof: docs/proofs/per-record-certificate.md.
    """
    t0 = time.perf_counter()
    c = np.asarray(cost, dtype=np.float64)
    e = math.exp(epsilon) * (1.0 - RATIO_MARGIN)
    d = float(delta) * (1.0 - DELTA_MARGIN)
    master = _CutMaster(c, e, d)
    P0 = candidate(c, epsilon, e, d)
    master.add(seed_cuts(P0, e, d))
    deadline = math.inf if time_limit is None else t0 + float(time_limit)
    best = Bound(-math.inf, "cut-dual", math.inf)
    rounds = 0
    while True:
        P, u, w = master.solve()
        rounds += 1
        bound = cut_bound(master, c, u, w, epsilon, delta)
        best = bound if bound.value > best.value else best
        cuts, worst = find_cuts(P, e, d * (1.0 + 1e-6))
        if not cuts or rounds >= MAX_ROUNDS or time.perf_counter() > deadline:
            break
        master.add(cuts)
    Q, lam, worst = mix_to_delta(P, e, d)
    Q0, lam0, worst0 = mix_to_delta(P0, e, d)
    if np.sum(c * Q0) < np.sum(c * Q):   # the candidate, when the relaxation has not closed
        Q, lam, worst = Q0, lam0, worst0
    return RecordDeltaSolution(Q, float(np.sum(c * Q)), best, len(master.cuts), rounds, worst, lam,
                               time.perf_counter() - t0)


__all__ = ["DELTA_MARGIN", "MAX_ROUNDS", "MAX_SEED_CUTS", "PER_ROW", "RecordDeltaSolution", "candidate", "find_cuts",
           "hockey_rows", "mix_to_delta", "seed_cuts", "solve_record_delta"]
