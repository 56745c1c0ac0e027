"""Per-record pure-DP channels at scale: column generation over the outputs.

Under pure ``eps``-DP with every pair of answers neighbours (the per-record unit) the ratio
constraints act on each column ``P[:, y]`` alone: the column lies in the cone ``K = {x >= 0
: max x <= E min x}``, ``E = e^eps``. Every ``x`` in ``K`` is ``x = m 1 + (E - 1) v`` with
``m = min x`` and ``0 <= v <= m`` (take ``v = (x - m) / (E - 1)``), and every such ``x`` lies in
``K`` (``min x >= m``, ``max x <= E m``). So the channel LP is, with ``c = diag(prior) L``,

    ``min sum_y m_y C_y + (E - 1) sum_{q,y} c[q, y] v[q, y]``  (``C_y = sum_q c[q, y]``)
    ``s.t. v[q, y] <= m_y,  sum_y (m_y + (E - 1) v[q, y]) = 1 for every q,  m, v >= 0``

-- the lossless per-column minimum reduction of :mod:`optnoise.design.channel_model`. Only
the row sums couple the outputs, and an optimal channel uses few of them (per record at eps
= 1 and ``E|y - q|``: two outputs, at n = 100 and at n = 1,000). So the LP is solved on a
*subset* ``Y`` of the outputs (the columns outside ``Y`` are 0: a restriction, so its channel
is feasible for the full LP), and an output joins ``Y`` when the restricted LP's row
multipliers ``u`` price it negative: ``min {<c[:, y] - u, x> : x in [1, E]^n} < 0``
(:func:`~optnoise.design.bounds.complete_values`, the reduced cost of the output's best
column). Dantzig-Wolfe column generation with each output's cone as one block.

Why the result is proven, not assumed: whatever ``Y`` is, the multipliers ``u`` of the last
restricted LP are a candidate dual of the *full* LP;
:func:`~optnoise.design.bounds.complete_bound` checks every output's column in
outward-rounded arithmetic at a float ``>= e^eps``, lowers ``u`` where a column fails, and
returns ``sum u``: a lower bound on the optimum over all channels. Generation stops when the
channel's cost is within ``GAP_TOLERANCE / 10`` of that bound (or no output prices
negative, or the round limit: the gap is then reported as it is).

The restricted LPs are solved incrementally (HiGHS through scipy, outputs added to the
solved model and the simplex warm-started from the last basis); where that interface is
missing each round is solved afresh with :func:`scipy.optimize.linprog` (same answer, slower).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError
from .bounds import GAP_TOLERANCE, Bound, complete_bound, complete_values
from .solver import RATIO_MARGIN

#: Outputs of the first restricted LP (evenly spaced over ``0..n``).
START_OUTPUTS = 41

#: Most outputs added per round (the most negative reduced costs first).
PER_ROUND = 10

#: Rounds of generation before the gap is reported as it stands.
MAX_ROUNDS = 300

#: HiGHS feasibility tolerances of the restricted LPs (row sums are then within about this).
TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class RecordSolution:
    """A per-record pure-DP channel from column generation, with its proven bound.

    Attributes
    ----------
    matrix:
        ``P[q, y]``: rows sum to 1, every column's ``max / min`` at most ``e^eps`` in the float
        check (columns outside the generated outputs are 0 unless mixing made them positive).
    cost:
        ``sum c * P`` of ``matrix``.
    bound:
        A proven lower bound on the optimum over *all* channels (:func:`complete_bound`).
    outputs, rounds:
        Outputs generated, restricted LPs solved.
    multipliers:
        The row multipliers ``u`` the bound was certified from (before its repair): a dual
        candidate of the full LP, reused by :mod:`optnoise.design.record_mix`.
    mixing:
        Weight of the uniform channel mixed in to absorb the solver's tolerance (0 if none).
    """

    matrix: np.ndarray
    cost: float
    bound: Bound
    outputs: int
    rounds: int
    mixing: float
    seconds: float
    multipliers: np.ndarray | None = None

    @property
    def gap(self) -> float:
        return self.bound.gap(self.cost)


class _Master:
    """The restricted LP over a growing set of outputs, solved incrementally.

    Variables per output ``y`` (added together): ``m_y`` then ``v[0..n, y]``; rows: the ``size``
    row sums first, then ``v[q, y] - m_y <= 0`` per added output.
    """

    def __init__(self, c: np.ndarray, e: float, interior: bool = False) -> None:
        from scipy.optimize._highspy._core import _Highs   # scipy's own HiGHS binding

        self.c, self.e, self.size = c, e, c.shape[0]
        self.outputs: list[int] = []
        self.h = _Highs()
        options: tuple = (("output_flag", False), ("primal_feasibility_tolerance", TOLERANCE),
                          ("dual_feasibility_tolerance", TOLERANCE))
        if interior:   # a point inside the optimal dual face, not a vertex (no crossover)
            options += (("solver", "ipm"), ("run_crossover", "off"))
        for name, value in options:
            self.h.setOptionValue(name, value)
        ones = np.ones(self.size)
        empty = np.zeros(0, dtype=np.int32)
        self.h.addRows(self.size, ones, ones, 0, np.zeros(self.size, dtype=np.int32), empty, np.zeros(0))

    def add(self, ys: list[int]) -> None:
        """Add the outputs ``ys``: their columns (cost, row-sum coefficients) and their rows
        ``v - m <= 0``."""
        size, q, inf = self.size, np.arange(self.size), 1e30
        for y in ys:
            col = self.c[:, y]
            first = len(self.outputs) * (size + 1)
            costs = np.concatenate([[col.sum()], (self.e - 1.0) * col])
            starts = np.concatenate([[0], size + q]).astype(np.int32)
            index = np.concatenate([q, q]).astype(np.int32)
            values = np.concatenate([np.ones(size), np.full(size, self.e - 1.0)])
            self.h.addCols(size + 1, costs, np.zeros(size + 1), np.full(size + 1, inf), 2 * size, starts, index, values)
            rows = np.stack([first + 1 + q, np.full(size, first)], axis=1).ravel().astype(np.int32)
            self.h.addRows(size, np.full(size, -inf), np.zeros(size), 2 * size, (2 * q).astype(np.int32), rows,
                           np.tile([1.0, -1.0], size))
            self.outputs.append(int(y))

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        """Solve (warm-started); ``(row multipliers u, variables)``."""
        from scipy.optimize._highspy._core import HighsModelStatus

        self.h.run()
        if self.h.getModelStatus() != HighsModelStatus.kOptimal:
            raise DesignError(f"the restricted per-record LP did not solve ({self.h.getModelStatus()})")
        sol = self.h.getSolution()
        return np.asarray(sol.row_dual[:self.size], dtype=np.float64), np.asarray(sol.col_value, dtype=np.float64)


class _PlainMaster:
    """The same restricted LP, solved afresh each round with :func:`scipy.optimize.linprog`."""

    def __init__(self, c: np.ndarray, e: float) -> None:
        self.c, self.e, self.size = c, e, c.shape[0]
        self.outputs: list[int] = []

    def add(self, ys: list[int]) -> None:
        self.outputs.extend(int(y) for y in ys)

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        import scipy.sparse as sp
        from scipy.optimize import linprog

        size, k = self.size, len(self.outputs)
        cols = self.c[:, self.outputs]
        cost = np.concatenate([np.concatenate([[cols[:, j].sum()], (self.e - 1.0) * cols[:, j]]) for j in range(k)])
        m_of = np.arange(k) * (size + 1)
        v_of = (m_of[:, None] + 1 + np.arange(size)[None, :]).ravel()     # y-major
        rows = np.arange(size * k)
        a_ub = sp.csr_matrix((np.concatenate([np.ones(size * k), -np.ones(size * k)]),
                              (np.concatenate([rows, rows]), np.concatenate([v_of, np.repeat(m_of, size)]))),
                             shape=(size * k, k * (size + 1)))
        q = np.tile(np.arange(size), k)
        a_eq = sp.csr_matrix((np.concatenate([np.ones(size * k), np.full(size * k, self.e - 1.0)]),
                              (np.concatenate([q, q]), np.concatenate([np.repeat(m_of, size), v_of]))),
                             shape=(size, k * (size + 1)))
        res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(size * k), A_eq=a_eq, b_eq=np.ones(size), bounds=(0, None),
                      method="highs", options={"primal_feasibility_tolerance": TOLERANCE,
                                               "dual_feasibility_tolerance": TOLERANCE})
        if res.status != 0:
            raise DesignError(f"the restricted per-record LP did not solve ({res.message})")
        return np.asarray(res.eqlin.marginals, dtype=np.float64), np.asarray(res.x, dtype=np.float64)


def interior_multipliers(cost: np.ndarray, epsilon: float) -> np.ndarray:
    """Row multipliers of the per-record pure LP over *every* output, from HiGHS's interior-point
    method without crossover: a point inside the optimal dual face rather than a vertex (the
    per-record ``(eps, delta)`` bound, :mod:`optnoise.design.record_mix`, can need one). A
    candidate only: whoever uses it checks it (the bounds repair any shortfall).
    ``O(n^2)`` variables: for small ``n``."""
    c = np.asarray(cost, dtype=np.float64)
    master = _Master(c, math.exp(epsilon) * (1.0 - RATIO_MARGIN), interior=True)
    master.add(list(range(c.shape[0])))
    return master.solve()[0]


def master_for(c: np.ndarray, e: float, incremental: bool = True, interior: bool = False) -> _Master | _PlainMaster:
    """The incremental master where scipy exposes HiGHS, else the plain one; ``interior``: solved
    by the interior point method without crossover (its multipliers a point inside the optimal
    dual face; the plain master then uses the simplex's)."""
    if incremental:
        try:
            return _Master(c, e, interior)
        except ImportError:
            pass
    return _PlainMaster(c, e)


def channel_of(outputs: list[int], x: np.ndarray, size: int, e: float) -> np.ndarray:
    """``P[q, y] = m_y + (E - 1) v[q, y]`` with ``v`` clipped to ``[0, m_y]`` (so every column is
    in the cone exactly, up to one rounding), zero outside ``outputs``."""
    P = np.zeros((size, size))
    for j, y in enumerate(outputs):
        base = j * (size + 1)
        m = max(0.0, float(x[base]))
        v = np.clip(x[base + 1:base + 1 + size], 0.0, m)
        P[:, y] += m + (e - 1.0) * v
    return P


def mix_to_ratio(P: np.ndarray, epsilon: float) -> tuple[np.ndarray, float]:
    """Rows normalised, then mixed with the uniform channel at the least weight (doubled) that
    brings every column's ``max / min`` within ``e^eps (1 - RATIO_MARGIN / 2)`` in floats.

    For a column with row-normalised ``max a`` and ``min b``, mixing at ``lam`` gives ``max
    ((1 - lam) a + lam / s)`` and ``min ((1 - lam) b + lam / s)``; the ratio is within ``E``
    once ``lam >= (a - E b) / (a - E b + (E - 1) / s)``. The exact certificate of the
    quantized channel decides in the end (this only spares the quantizer a failing round).
    """
    P = P / P.sum(axis=1, keepdims=True)
    size = P.shape[1]
    e = math.exp(epsilon) * (1.0 - RATIO_MARGIN / 2)
    hi, lo = P.max(axis=0), P.min(axis=0)
    excess = np.where(hi > 0, hi - e * lo, 0.0)
    if not np.any(excess > 0):
        return P, 0.0
    worst = float(np.max(excess))
    lam = min(1.0, 2.0 * worst / (worst + (e - 1.0) / size))
    return P * (1.0 - lam) + lam / size, lam


def _start(size: int) -> list[int]:
    return sorted({int(v) for v in np.linspace(0, size - 1, min(size, START_OUTPUTS)).round()})


def _generate(master: _Master | _PlainMaster, c: np.ndarray, epsilon: float, e: float,
              deadline: float) -> tuple[np.ndarray, Bound, int, np.ndarray]:
    """Rounds of solve / bound / price until the gap closes; ``(variables, best bound, rounds,
    the multipliers of the best bound)``."""
    best = Bound(-math.inf, "complete-dual", math.inf)
    best_u = np.zeros(c.shape[0])
    rounds = 0
    while True:
        u, x = master.solve()
        rounds += 1
        cost = float(np.sum(c * channel_of(master.outputs, x, c.shape[0], e)))
        bound = complete_bound(c, u, epsilon)
        if bound.value > best.value:
            best, best_u = bound, u
        values = complete_values(c, u, e)
        have = set(master.outputs)
        order = [int(y) for y in np.argsort(values) if values[y] < 0 and int(y) not in have][:PER_ROUND]
        if best.gap(cost) <= GAP_TOLERANCE / 10 or not order or rounds >= MAX_ROUNDS or time.perf_counter() > deadline:
            return x, best, rounds, best_u
        master.add(order)


def solve_record(cost: np.ndarray, epsilon: float, *, time_limit: float | None = None,
                 incremental: bool = True) -> RecordSolution:
    """The optimal per-record channel under pure ``epsilon``-DP for ``c = cost`` (``cost[q, y] =
    prior[q] L[q, y]``), by column generation over the outputs, with its proven bound.

    Parameters
    ----------
    cost:
        ``diag(prior) L``, square.
    epsilon:
        The pure-DP budget; the LP uses ``e^eps (1 - RATIO_MARGIN)``, the bound ``e^eps`` itself.
    time_limit:
        Seconds before the last restricted LP's channel is returned as it is (its gap says
        how far from optimal).
    incremental:
        Use the warm-started master (default) or the plain :func:`~scipy.optimize.linprog` one.
    """
    t0 = time.perf_counter()
    c = np.asarray(cost, dtype=np.float64)
    size = c.shape[0]
    e = math.exp(epsilon) * (1.0 - RATIO_MARGIN)
    master = master_for(c, e, incremental)
    master.add(_start(size))
    deadline = math.inf if time_limit is None else t0 + float(time_limit)
    x, bound, rounds, u = _generate(master, c, epsilon, e, deadline)
    P, lam = mix_to_ratio(channel_of(master.outputs, x, size, e), epsilon)
    return RecordSolution(P, float(np.sum(c * P)), bound, len(master.outputs), rounds, lam,
                          time.perf_counter() - t0, u)


__all__ = ["MAX_ROUNDS", "PER_ROUND", "START_OUTPUTS", "RecordSolution", "channel_of", "interior_multipliers",
           "master_for", "mix_to_ratio",
           "solve_record"]
