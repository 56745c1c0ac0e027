"""Per-record ``(eps, delta)``-DP channels at scale: the pure optimum mixed with the best row
minimum, and a dual certificate of how close that is to optimal.

Every ordered pair of answers ``(a, b)`` is a pair of neighbours (the per-record unit); the
LP is ``min sum c * P`` over channels (``c = diag(prior) L``, ``E = e^eps``) with, for every
``a != b``, ``H_ab(P) = sum_y max(0, P[a, y] - E P[b, y]) <= delta``.

**The channel.** ``P = (1 - delta) B + delta D``: ``B`` the optimal pure ``eps``-DP per-record
channel (:func:`~optnoise.design.record.solve_record`, column generation) and ``D`` the
deterministic channel sending each answer to its cheapest output (``argmin_y c[q, y]``; for
``abs-error`` the answer itself). It meets the target: ``H_ab`` is convex and positively
homogeneous in the pair of rows, so ``H_ab(P) <= (1 - delta) H_ab(B) + delta H_ab(D) <= 0 +
delta * 1`` (``H_ab(B) = 0`` for a pure channel, ``H_ab(D) <= sum_y D[a, y] = 1``). Its cost is
``(1 - delta) OPT_pure + delta sum_q min_y c[q, y]``. Its rows have at most (outputs of ``B``)
+ 1 positive entries, so its exact certificate over all ``n (n + 1)`` pairs is cheap
(:mod:`optnoise.analysis.sparse_complete`). It was the LP's optimum in every small case
measured (``abs-error``, uniform, eps 0.3..2, delta 1e-4..1e-2, n <= 30), but it is not
optimal for every request (a large ``delta``): the bound says how far it is.

**The bound** (docs/proofs/per-record-delta-bound.md). Every set ``S`` of outputs gives a
valid cut ``sum_{y in S} (P[a, y] - E P[b, y]) <= H_ab(P) <= delta``. For row multipliers ``u``
and any ``lam[a, b, y] >= 0`` (``a != b``), every channel has the identity

    ``sum c P = sum_q u_q + sum_{q,y} r[q, y] P[q, y] - sum_{a != b} sum_y lam[a, b, y] (P[a, y] - E P[b, y])``

with reduced costs ``r[q, y] = c[q, y] - u_q + sum_b lam[q, b, y] - E sum_a lam[a, q, y]``. If
every ``r >= 0``, the middle sum is ``>= 0`` and the last is at most ``sum_{a != b} max_y lam[a,
b, y] H_ab(P)``, so for every ``(eps, delta)`` channel

    ``cost >= LB = sum_q u_q - delta sum_{a != b} max_y lam[a, b, y]``.

``u`` is the pure LP's (the same ``r >= 0`` is the pure dual's feasibility, so ``sum u`` is
``OPT_pure`` up to its proven gap), and ``lam[., ., y]`` a *transport plan* per column: the
rows with ``g_q = c[q, y] - u_q < 0`` send ``-g_q`` to rows with ``g_b > 0``, each receiving at
most ``g_b / E``. ``sum_{a,b} max_y lam >= sum_a max_y (-g_a(y)) = sum_q (u_q - min_y c[q, y])``,
which makes ``LB`` equal to the channel's cost: a plan attaining it proves optimality. The
plans are built column by column under a common target ``K`` (row ``a`` of ``K`` is row ``a``'s
proportional plan in its own cheapest column, where its demand is largest): the maximum flow of
the column's network with edge capacities ``K`` (:func:`flow_plan`), so only what exceeds ``K``
costs ``delta`` in the bound. Measured (abs-error, uniform, eps = 1, delta = 1e-3): every column
fits ``K`` up to the flow's rounding, gap ``1e-9`` at n = 8..100 and ``4e-8`` at n = 1,000; at
eps = 0.3, n = 100 ``K`` admits no plan in some columns and the gap is ``3.7e-6``.
Any plan gives a valid bound: the reduced costs are checked in outward-rounded arithmetic at a
float ``>= e^eps`` and ``u_q`` lowered by any shortfall (:func:`delta_bound`), ``O(n^2)``
memory (one column's plan at a time).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .bounds import GAP_TOLERANCE, UNIT, Bound, down, exp_up, relative_gap, sum_down

#: ``delta`` is designed this much (relative) below the target, so that rounding the channel
#: to integer weights (``2^-32`` of a row at the coarsest) keeps ``H_ab <= delta``.
DELTA_MARGIN = 1e-6

#: Rounds of capped proportional fitting per column (:func:`column_plan`).
FIT_ROUNDS = 10

#: Seconds (from the start of the design) after which :func:`delta_bound` starts no further pass.
BOUND_BUDGET = 40.0

#: Up to this many answers, a bound short of the tolerance is tried again from an interior point
#: of the pure LP's optimal dual face (:func:`~optnoise.design.record.interior_multipliers`: the
#: vertex HiGHS returns may admit no plans under the target; measured: eps = 0.3, n = 30, gap
#: 4.4e-6 -> 4e-11; eps = 1, n = 9, 2.2e-5 -> 4e-11); the better bound is kept.
INTERIOR_UP_TO = 201


@dataclass(frozen=True, eq=False)
class RecordMixSolution:
    """``(1 - delta) B + delta D`` with its proven bound.

    Attributes
    ----------
    matrix, cost:
        The channel (rows sum to 1) and ``sum c * matrix``.
    bound:
        A proven lower bound on the optimum over all ``(eps, delta)`` per-record channels.
    pure_gap:
        The pure design's own proven gap (``B`` against its bound).
    outputs:
        Outputs ``B`` uses.
    excess:
        ``sum max_y lam - sum_q (u_q - min_y c[q, y])`` relative to the latter: how far the
        fitted plans are from the ones that would prove optimality (0 there).
    """

    matrix: np.ndarray
    cost: float
    bound: Bound
    pure_gap: float
    outputs: int
    excess: float
    seconds: float
    bound_seconds: float

    @property
    def gap(self) -> float:
        """``(cost - bound) / cost``: the bound's :meth:`~optnoise.design.bounds.Bound.gap`."""
        return self.bound.gap(self.cost)


def mixture(B: np.ndarray, c: np.ndarray, delta: float) -> np.ndarray:
    """``(1 - delta) B + delta D``, ``D[q, argmin_y c[q, y]] = 1`` (module docstring: why it
    meets the target)."""
    P = (1.0 - delta) * np.asarray(B, dtype=np.float64)
    rows = np.arange(P.shape[0])
    P[rows, np.argmin(c, axis=1)] += delta
    return P / P.sum(axis=1, keepdims=True)


def own_plans(g: np.ndarray) -> np.ndarray:
    """The target ``K``: row ``a`` is ``a``'s share of the proportional plan of its cheapest
    column ``y_a = argmin_y g[a, y]`` (``-g[a, y_a]`` spread over the receivers ``b`` of that
    column in proportion to ``g[b, y_a] > 0``)."""
    own = np.argmin(g, axis=1)
    demand = np.maximum(-g[np.arange(g.shape[0]), own], 0.0)
    share = np.maximum(g[:, own], 0.0).T                  # share[a, b] = g[b, y_a]^+
    total = share.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        K = np.where(total > 0, share * (demand[:, None] / total), 0.0)
    np.fill_diagonal(K, 0.0)
    return K


def column_plan(supply: np.ndarray, cap: np.ndarray, K: np.ndarray, rounds: int = FIT_ROUNDS) -> np.ndarray:
    """A transport plan from senders (``supply``) to receivers (``cap``) that stays under ``K``
    where it can: each round every sender spreads what it has left over its edges in
    proportion to their room under ``K``, receivers over their capacity are scaled back; what
    is left after ``rounds`` goes in proportion to the receivers' remaining capacity (beyond
    ``K``). Needs ``sum cap >= sum supply`` for every sender to be served within ``cap``; a
    heuristic (any plan gives a valid bound: :func:`delta_bound` checks it)."""
    lam = np.zeros(K.shape)
    left, room = supply.astype(np.float64).copy(), cap.astype(np.float64).copy()
    for _ in range(rounds):
        if left.sum() <= 1e-15 * supply.sum():
            break
        W = np.maximum(K - lam, 0.0) * (left > 0)[:, None] * (room > 0)[None, :]
        ws = W.sum(axis=1)
        add = W * np.where(ws > 0, np.minimum(1.0, left / np.where(ws > 0, ws, 1.0)), 0.0)[:, None]
        got = add.sum(axis=0)
        add *= np.where(got > 0, np.minimum(1.0, room / np.where(got > 0, got, 1.0)), 0.0)[None, :]
        lam += add
        left = np.maximum(left - add.sum(axis=1), 0.0)
        room = np.maximum(room - add.sum(axis=0), 0.0)
    if left.sum() > 0 and room.sum() > 0:
        lam += np.outer(left, room / room.sum())
    elif left.sum() > 0:   # no capacity left: proportional to the original capacity
        lam += np.outer(left, cap / max(cap.sum(), 1e-300))
    return lam


#: Capacities of the max-flow are integers below 2^31 (scipy's ``maximum_flow``).
FLOW_UNITS = 2.0 ** 30


def _flow_graph(supply: np.ndarray, room: np.ndarray, caps: np.ndarray):  # noqa: ANN202 - a scipy csr_matrix
    """The network source -> senders (``supply``) -> receivers (``caps``, dense) -> sink
    (``room``) as a CSR matrix of int32 capacities, built row by row without sorting."""
    import scipy.sparse as sp

    S, R = caps.shape
    size = S + R + 2
    indptr = np.concatenate([[0, S], S + R * np.arange(1, S + 1), S + R * S + np.arange(1, R + 1), [S + R * S + R]])
    indices = np.concatenate([1 + np.arange(S), np.tile(1 + S + np.arange(R), S), np.full(R, size - 1)])
    data = np.concatenate([supply, caps.ravel(), room])
    return sp.csr_matrix((data.astype(np.int32), indices.astype(np.int32), indptr.astype(np.int32)), shape=(size, size))


def flow_plan(supply: np.ndarray, cap: np.ndarray, K: np.ndarray) -> np.ndarray:
    """A transport plan under ``K`` wherever one exists: the maximum flow (Dinic, scipy) of the
    network with the capacities scaled to :data:`FLOW_UNITS` and floored, so the flow fits
    ``K`` and ``cap``; what the flooring leaves unrouted (about ``1e-9`` of the supply per
    edge of the cut) is spread over the receivers' remaining capacity. A heuristic's
    ingredient like :func:`column_plan` (:func:`delta_bound` checks whatever it returns)."""
    from scipy.sparse.csgraph import maximum_flow

    S, R = K.shape
    scale = FLOW_UNITS / max(float(supply.sum()), 1e-300)
    top = float(2 ** 31 - 1)
    graph = _flow_graph(np.minimum(np.floor(supply * scale), top), np.minimum(np.floor(cap * scale), top),
                        np.minimum(np.floor(K * scale), top))
    flow = maximum_flow(graph, 0, S + R + 1, method="dinic").flow
    lam = np.maximum(flow[1:1 + S, 1 + S:1 + S + R].toarray().astype(np.float64), 0.0) / scale
    left, room = np.maximum(supply - lam.sum(axis=1), 0.0), np.maximum(cap - lam.sum(axis=0), 0.0)
    if left.sum() > 0:
        lam += np.outer(left, room / room.sum() if room.sum() > 0 else cap / max(cap.sum(), 1e-300))
    return lam


#: A column whose max-flow plan exceeds ``K`` by more than this (relative to its supply: ``K``
#: admits no plan there) is also fitted by :func:`column_plan`, and the better of the two kept.
FLOW_FROM = 1e-9


def best_plan(supply: np.ndarray, cap: np.ndarray, K: np.ndarray, rounds: int = FIT_ROUNDS) -> np.ndarray:
    """:func:`flow_plan`, or :func:`column_plan` where the flow exceeds ``K`` by more than
    :data:`FLOW_FROM` of the supply and the fitted plan exceeds it less."""
    lam = flow_plan(supply, cap, K)
    over = float(np.maximum(lam - K, 0.0).sum())
    if over > FLOW_FROM * float(supply.sum()):
        fit = column_plan(supply, cap, K, rounds)
        if float(np.maximum(fit - K, 0.0).sum()) < over:
            return fit
    return lam


def fitted_plans(g: np.ndarray, K: np.ndarray, e_up: float, rounds: int = FIT_ROUNDS,
                 mirror: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One plan per column (:func:`best_plan` under ``K``), streamed: ``(T, short)`` with ``T[a, b]
    = max_y lam[a, b, y]`` and ``short[q]`` the largest shortfall ``max(0, -r[q, y])`` of a
    reduced cost, rounded outward.

    ``r[q, y] = (down(c - u_q) + out_q) - e_up in_q`` is computed in floats and lowered by ``(m +
    4) 2^-53 (|c - u| + out + e_up in)`` (``m`` the terms of a sum: Higham, Thm. 3.5/4.4, with
    room), which bounds the error of the sums and the three operations *in any order*.

    ``mirror``: ``g[n - q, n - y] == g[q, y]`` exactly (and ``K`` likewise); only the columns
    ``y <= n / 2`` are planned and column ``n - y`` takes the mirrored plan ``lam[n - a, n - b]``.
    Its reduced costs are then exactly those of column ``y`` at the mirrored rows (the same
    terms, summed in another order: the error bound above covers it), so ``T`` and ``short``
    are the maxima of the half and its mirror."""
    size = g.shape[0]
    T = np.zeros((size, size))
    short = np.zeros(size)
    for y in range((size + 1) // 2 if mirror else size):
        gy = g[:, y]
        send, take = np.flatnonzero(gy < 0), np.flatnonzero(gy > 0)
        out, inn = np.zeros(size), np.zeros(size)
        if send.size and take.size:
            lam = best_plan(-gy[send], gy[take] / e_up, K[np.ix_(send, take)], rounds)
            out[send], inn[take] = lam.sum(axis=1), lam.sum(axis=0)
            T[np.ix_(send, take)] = np.maximum(T[np.ix_(send, take)], lam)
        w = down(gy)
        m = max(send.size, take.size, 1)
        with np.errstate(over="ignore", invalid="ignore"):
            r = (w + out) - e_up * inn
            r = down(r - (m + 4) * UNIT * (np.abs(w) + out + e_up * inn) * (1 + 1e-6) - (m + 4) * 5e-324)
        short = np.maximum(short, np.where(np.isnan(r), np.inf, -r))
    if mirror:
        T, short = np.maximum(T, T[::-1, ::-1]), np.maximum(short, short[::-1])
    return T, np.maximum(short, 0.0)


#: Most passes of :func:`delta_bound` (each refits every column under the last pass's maxima).
PASSES = 3


def delta_bound(c: np.ndarray, u: np.ndarray, epsilon: float, delta: float, rounds: int = FIT_ROUNDS,
                deadline: float = math.inf) -> tuple[Bound, float]:
    """``LB = sum u' - delta sum_{a != b} max_y lam[a, b, y]`` (module docstring), proven:
    ``lam`` the fitted plans (:func:`fitted_plans`), ``u'`` = ``u`` lowered by each row's largest
    shortfall of a reduced cost, at ``e_up >= e^eps``; ``sum u'`` rounded down, ``delta sum max
    lam`` up. Where the plans exceed ``K``, a next pass (at most :data:`PASSES`, none after
    ``deadline``, a ``time.perf_counter`` value) refits under the maxima ``T`` scaled to the
    rows' demands; the best bound is kept. Returns it and its plans' relative excess over
    ``sum_q (u_q - min_y c[q, y])``."""
    c = np.asarray(c, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    mirror = bool(np.array_equal(c, c[::-1, ::-1]))
    if mirror:   # the mirrored multipliers are as feasible (the constraints' map), so is their mean
        u = 0.5 * (u + u[::-1])
    e_up = exp_up(epsilon)
    g = c - u[:, None]
    need_rows = np.maximum(u - c.min(axis=1), 0.0)
    need = float(need_rows.sum())
    K = own_plans(g)
    best, best_excess = Bound(-math.inf, "record-delta-dual", math.inf), math.inf
    for _ in range(PASSES):
        if mirror:   # any K serves; a mirror-symmetric one lets half the columns stand for all
            K = 0.5 * (K + K[::-1, ::-1])
        T, short = fitted_plans(g, K, e_up, rounds, mirror)
        phi = math.fsum(T.ravel().tolist())
        phi_up = float(np.nextafter(phi * (1 + 4 * UNIT), np.inf))
        value = float(down(sum_down(down(u - short)) - float(np.nextafter(delta * phi_up, np.inf))))
        excess = (phi - need) / need if need > 0 else 0.0
        if math.isfinite(value) and value > best.value:
            best, best_excess = Bound(value, "record-delta-dual", float(short.sum())), excess
        if excess <= 1e-9 or time.perf_counter() > deadline:
            break
        rows = T.sum(axis=1)
        K = T * np.where(rows > 0, need_rows / np.where(rows > 0, rows, 1.0), 0.0)[:, None]
    return best, best_excess


def solve_record_mix(cost: np.ndarray, epsilon: float, delta: float, *,
                     time_limit: float | None = None) -> RecordMixSolution:
    """The per-record ``(epsilon, delta)`` channel ``(1 - delta) B + delta D`` for ``c = cost``
    (``diag(prior) L``) with its proven bound (module docstring).

    Parameters
    ----------
    cost:
        ``diag(prior) L``, square.
    epsilon, delta:
        The target (``delta > 0``); the channel mixes at ``delta (1 - DELTA_MARGIN)``, the
        bound is at ``e^eps`` and ``delta`` themselves.
    time_limit:
        Passed to the pure design (its gap, and so this one's, says how far it got).

    Proof: docs/proofs/per-record-delta-bound.md.
    """
    from .record import interior_multipliers, solve_record

    t0 = time.perf_counter()
    c = np.asarray(cost, dtype=np.float64)
    pure = solve_record(c, epsilon, time_limit=time_limit)
    P = mixture(pure.matrix, c, float(delta) * (1.0 - DELTA_MARGIN))
    t1 = time.perf_counter()
    u = pure.multipliers if pure.multipliers is not None else np.zeros(c.shape[0])
    # a further pass only while the first one's time fits again before the deadline
    deadline = t0 + (BOUND_BUDGET if time_limit is None else float(time_limit))
    bound, excess = delta_bound(c, u, epsilon, float(delta), deadline=deadline - (t1 - t0))
    if relative_gap(float(np.sum(c * P)), bound.value) > GAP_TOLERANCE / 10 and c.shape[0] <= INTERIOR_UP_TO:
        other, more = delta_bound(c, interior_multipliers(c, epsilon), epsilon, float(delta), deadline=deadline)
        if other.value > bound.value:
            bound, excess = other, more
    return RecordMixSolution(P, float(np.sum(c * P)), bound, pure.gap, pure.outputs, excess,
                             time.perf_counter() - t0, time.perf_counter() - t1)


__all__ = ["BOUND_BUDGET", "DELTA_MARGIN", "FIT_ROUNDS", "FLOW_FROM", "FLOW_UNITS", "INTERIOR_UP_TO", "PASSES", "RecordMixSolution", "best_plan", "column_plan",
           "delta_bound", "fitted_plans", "flow_plan", "mixture", "own_plans", "solve_record_mix"]
