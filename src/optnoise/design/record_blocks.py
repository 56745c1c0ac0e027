"""Per-record pure-DP channels as randomized response over intervals of answers.

Under pure ``eps``-DP with every pair of answers neighbours (the per-record unit), each column
of a channel lies in the cone ``{x >= 0 : max x <= E min x}``, ``E = e^eps``
(:mod:`optnoise.design.record`). On the exact LP of small domains (``tests/test_record_blocks.py``
compares them) the optimum for ``abs-error`` and ``sq-error`` has a simple shape: ``k``
outputs ``y_1 < ... < y_k``, each column two-valued, ``E m`` on an interval ``B_j`` of answers
and ``m`` elsewhere, the intervals partitioning ``{0..n}``. The row sums force ``m = 1 / (E + k
- 1)``: the channel is ``k``-ary randomized response on the index of the interval, released as
its output ``y_j`` (*block randomized response*). Its cost is

    ``m [sum_j C(y_j) + (E - 1) sum_j S(B_j, y_j)]``,  ``C(y) = sum_q c[q, y]``,
    ``S(B, y) = sum_{q in B} c[q, y]``,  ``c = diag(prior) L``,

which needs ``O(n)`` numbers: prefix sums of the prior, ``prior q`` and ``prior q^2`` give
``S(B, y)`` for every ``y`` at once (:class:`IntervalLoss`).

The structure is *found*, not assumed: the blocks and outputs are searched by coordinate
descent (:func:`best_blocks`: answers to the nearest output, each output the best for its
block, for ``k = 1, 2, ...``) and from the outputs the restricted LP uses; the *proof* of how
optimal the result is does not rely on the shape. It is :func:`~optnoise.design.record_bound.columns_bound`:
the row multipliers of the restricted per-record LP over the generated outputs (HiGHS's
interior point method without crossover, whose point lies inside the optimal dual face: the
vertex a simplex returns is far from dual feasible for the outputs left out), checked on
*every* output's column in outward-rounded arithmetic at a float ``>= e^eps`` and repaired
where a column fails (docs/proofs/record-blocks.md). The first restricted LP has the design's
outputs only (at ``n = 10,000`` and ``eps = 1`` its multipliers already prove a gap of 6e-9);
then the outputs beside the design's (an interior point of that LP's dual face is the one that
proves the bound: adding far outputs first moves it away); where that is not enough (more
intervals, larger ``eps``) the simplex over a spread of outputs takes over, warm-started, and
the outputs whose column fails most join it each round (column generation, as in
:mod:`optnoise.design.record`) until the gap is below ``GAP_TOLERANCE / 10``.

Nothing here is ``(n+1) x (n+1)``: memory is ``O(n k)`` plus the restricted LP (``k (n+1)``
variables) and blocks of ``BLOCK`` columns when the bound is checked.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from .bounds import Bounded, GAP_TOLERANCE, Bound, relative_gap
from .record import master_for
from .record_bound import columns_bound
from .solver import RATIO_MARGIN

#: Named costs whose block structure is searched here (a loss increasing in ``|y - q|``).
BLOCK_COSTS = ("abs-error", "sq-error")

#: Most intervals tried (the core channel is ``k x k``).
MAX_BLOCKS = 1000

#: Rounds of the restricted LP before the gap is reported as it stands.
MAX_ROUNDS = 30

#: Outputs added to the restricted LP per round (the most negative columns first).
PER_ROUND = 10

#: Rounds of the restricted LP solved by the interior point method (the design's outputs, then
#: those beside them) before the simplex over a spread of outputs takes over.
INTERIOR_ROUNDS = 2

#: Evenly spread outputs added when the simplex takes over (as :mod:`optnoise.design.record` starts).
SPREAD = 41

#: Coordinate-descent sweeps per number of intervals.
SWEEPS = 200


@dataclass(frozen=True, eq=False)
class IntervalLoss:
    """``c = diag(prior) L`` for a loss ``L[q, y] = |y - q|^power`` (power 1: ``abs-error``, 2:
    ``sq-error``), with the prefix sums that give ``S([a, b], y)`` for every ``y`` in ``O(n)``."""

    prior: np.ndarray
    power: int

    @classmethod
    def of(cls, cost: str, prior: np.ndarray) -> "IntervalLoss":
        if cost not in BLOCK_COSTS:
            raise InvalidParameterError("cost", cost, "abs-error or sq-error (a block design)")
        return cls(np.asarray(prior, dtype=np.float64), 1 if cost == "abs-error" else 2)

    @property
    def size(self) -> int:
        return int(self.prior.size)

    def columns(self, ys: np.ndarray) -> np.ndarray:
        """``c[:, ys]`` as a ``(size, len(ys))`` array."""
        q = np.arange(self.size, dtype=np.float64)[:, None]
        d = np.abs(q - np.asarray(ys, dtype=np.float64).reshape(1, -1))
        return self.prior[:, None] * (d if self.power == 1 else d * d)

    def _prefix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self.__dict__.get("_sums")
        if got is None:
            q = np.arange(self.size, dtype=np.float64)
            got = tuple(np.concatenate([[0.0], np.cumsum(self.prior * q ** i)]) for i in range(3))
            self.__dict__["_sums"] = got
        return got  # type: ignore[return-value]

    def sums(self, a: int, b: int, ys: np.ndarray | None = None) -> np.ndarray:
        """``S([a, b], y) = sum_{q=a..b} c[q, y]`` for ``y`` in ``ys`` (default every output)."""
        p0, p1, p2 = self._prefix()
        y = np.arange(self.size, dtype=np.float64) if ys is None else np.asarray(ys, dtype=np.float64)
        if self.power == 2:
            s0, s1, s2 = p0[b + 1] - p0[a], p1[b + 1] - p1[a], p2[b + 1] - p2[a]
            return np.maximum(y * y * s0 - 2.0 * y * s1 + s2, 0.0)
        m = np.clip(y.astype(np.int64), a - 1, b) + 1   # answers a..m-1 lie at or below y
        low0, low1 = p0[m] - p0[a], p1[m] - p1[a]
        high0, high1 = p0[b + 1] - p0[m], p1[b + 1] - p1[m]
        return np.maximum(y * low0 - low1 + high1 - y * high0, 0.0)


@dataclass(frozen=True)
class Blocks:
    """Block randomized response: intervals ``[starts[j], starts[j+1])`` of ``{0..n}`` released
    as ``outputs[j]`` with probability ``E m`` (``m`` for each other output), ``m = 1 / (E + k - 1)``."""

    starts: tuple[int, ...]
    outputs: tuple[int, ...]
    e: float

    @property
    def k(self) -> int:
        return len(self.outputs)

    @property
    def low(self) -> float:
        """``m``: every output's probability outside its own interval."""
        return 1.0 / (self.e + self.k - 1)

    def cost(self, loss: IntervalLoss) -> float:
        """The prior-averaged cost (module docstring)."""
        ys = np.asarray(self.outputs)
        total = loss.sums(0, loss.size - 1, ys)
        own = np.array([loss.sums(self.starts[j], self.starts[j + 1] - 1, ys[j:j + 1])[0] for j in range(self.k)])
        return float(self.low * (math.fsum(total.tolist()) + (self.e - 1.0) * math.fsum(own.tolist())))

    def core(self) -> np.ndarray:
        """The ``k x k`` channel on the intervals: ``E m`` on the diagonal, ``m`` elsewhere."""
        out = np.full((self.k, self.k), self.low)
        np.fill_diagonal(out, 1.0 - (self.k - 1) * self.low)
        return out


def nearest_starts(outputs: np.ndarray, size: int) -> tuple[int, ...]:
    """Each answer to its nearest output (ties to the lower one): for a loss increasing in
    ``|y - q|`` the cheapest interval for every answer, given the outputs."""
    ys = np.asarray(outputs, dtype=np.int64)
    cuts = (ys[:-1] + ys[1:]) // 2 + 1
    return tuple(int(v) for v in np.concatenate([[0], cuts, [size]]))


def descend(loss: IntervalLoss, outputs: np.ndarray, e: float) -> Blocks | None:
    """Coordinate descent from ``outputs``: answers to their nearest output, each output the
    best for its interval (``argmin_y C(y) + (E - 1) S(B, y)``), until nothing moves. ``None``
    when two intervals want the same output (fewer intervals do better)."""
    size = loss.size
    total = loss.sums(0, size - 1)
    ys = np.asarray(sorted(set(int(v) for v in outputs)), dtype=np.int64)
    for _ in range(SWEEPS):
        starts = nearest_starts(ys, size)
        new = np.array([int(np.argmin(total + (e - 1.0) * loss.sums(starts[j], starts[j + 1] - 1)))
                        for j in range(len(ys))], dtype=np.int64)
        if np.any(np.diff(new) <= 0):
            return None
        if np.array_equal(new, ys):
            break
        ys = new
    return Blocks(nearest_starts(ys, size), tuple(int(v) for v in ys), e)


def best_blocks(loss: IntervalLoss, e: float, extra: list[np.ndarray] = ()) -> Blocks:  # type: ignore[assignment]
    """The cheapest block randomized response found by :func:`descend` from evenly spread
    outputs for ``k = 1, 2, ...`` (until three ``k`` in a row cost more than the best) and from
    each of ``extra``."""
    size = loss.size
    cum = np.cumsum(loss.prior)
    best: Blocks | None = None
    worse = 0
    starts_from = [np.searchsorted(cum, (np.arange(k) + 0.5) / k * cum[-1]) for k in range(1, min(size, MAX_BLOCKS) + 1)]
    for k, start in enumerate(starts_from, 1):
        got = descend(loss, np.minimum(start, size - 1), e) if k > 1 else descend(loss, np.array([0]), e)
        cost = got.cost(loss) if got is not None else math.inf
        if best is None or cost < best.cost(loss):
            best, worse = got, 0
        else:
            worse += 1
        if worse >= 3:
            break
    for ys in extra:
        got = descend(loss, ys, e)
        if got is not None and (best is None or got.cost(loss) < best.cost(loss)):
            best = got
    assert best is not None
    return best


@dataclass(frozen=True, eq=False)
class BlockSolution(Bounded):
    """The per-record block channel with its proven bound.

    Attributes
    ----------
    blocks:
        The intervals, their outputs and the ratio ``e`` of the design (``e^eps (1 - RATIO_MARGIN)``).
    cost:
        Its prior-averaged cost (float).
    bound:
        A proven lower bound on the optimum over *all* per-record channels.
    outputs, rounds:
        Outputs in the restricted LP, rounds solved.
    """

    blocks: Blocks
    cost: float
    bound: Bound
    outputs: int
    rounds: int
    seconds: float


class _Columns:
    """``c[:, y]`` on demand, as :func:`~optnoise.design.record.master_for` reads it."""

    def __init__(self, loss: IntervalLoss) -> None:
        self.loss, self.shape = loss, (loss.size, loss.size)

    def __getitem__(self, index: tuple) -> np.ndarray:
        ys = index[1]
        return self.loss.columns(np.atleast_1d(ys)) if not np.isscalar(ys) else self.loss.columns(np.array([ys]))[:, 0]


def _active(outputs: list[int], x: np.ndarray, size: int) -> np.ndarray:
    """The outputs the restricted LP uses: of adjacent outputs, the one with the
    largest ``m`` (an interior point spreads mass over ties)."""
    m = np.array([x[j * (size + 1)] for j in range(len(outputs))])
    order = np.argsort(outputs)
    ys, ms = np.asarray(outputs)[order], m[order]
    picked: list[list[float]] = []
    for y, mass in zip(ys.tolist(), ms.tolist()):
        if mass <= 1e-6 * ms.max():
            continue
        if picked and y - picked[-1][0] <= 1:
            if mass > picked[-1][1]:
                picked[-1] = [y, mass]
        else:
            picked.append([y, mass])
    return np.array([int(p[0]) for p in picked], dtype=np.int64)


def solve_record_blocks(cost: str, prior: np.ndarray, epsilon: float, *, time_limit: float | None = None) -> BlockSolution:
    """The per-record pure-``epsilon``-DP channel on ``{0..n}`` (``n + 1 = len(prior)``) for a
    prior-averaged ``abs-error`` or ``sq-error``, as block randomized response, with a proven
    lower bound on every channel's cost (module docstring; docs/proofs/record-blocks.md).

    Parameters
    ----------
    cost:
        ``"abs-error"`` or ``"sq-error"``.
    prior:
        Weights of the answers ``0..n`` (normalised by the caller).
    epsilon:
        The pure-DP budget; the design uses ``e^eps (1 - RATIO_MARGIN)``, the bound ``e^eps``.
    time_limit:
        Seconds before the best design and bound so far are returned (the gap says how far).

    Proof: docs/proofs/record-blocks.md (claims 1 and 2: the bound holds whatever the blocks).
    """
    t0 = time.perf_counter()
    loss = IntervalLoss.of(cost, prior)
    size = loss.size
    e = math.exp(epsilon) * (1.0 - RATIO_MARGIN)
    best = best_blocks(loss, e)
    bound = Bound(-math.inf, "complete-dual", math.inf)
    columns = _Columns(loss)
    master, interior = master_for(columns, e, interior=True), True   # type: ignore[arg-type]
    master.add(list(best.outputs))
    deadline = math.inf if time_limit is None else t0 + float(time_limit)
    rounds = 0
    while True:
        u, x = master.solve()
        rounds += 1
        got, values = columns_bound(loss.columns, size, u, epsilon)
        bound = got if got.value > bound.value else bound
        if relative_gap(best.cost(loss), bound.value) > GAP_TOLERANCE / 10:
            candidate = descend(loss, _active(master.outputs, x, size), e)
            if candidate is not None and candidate.cost(loss) < best.cost(loss):
                best = candidate
        have = set(master.outputs)
        negative = [int(y) for y in np.argsort(values) if values[y] < 0 and int(y) not in have][:PER_ROUND]
        beside = sorted({y + d for y in best.outputs for d in (-1, 1) if 0 <= y + d < size} - have)
        if relative_gap(best.cost(loss), bound.value) <= GAP_TOLERANCE / 10 or rounds >= MAX_ROUNDS \
                or time.perf_counter() > deadline or not (negative or (interior and beside)):
            break
        if interior and rounds < INTERIOR_ROUNDS:   # solved afresh, in order: the interior point found
            master = master_for(columns, e, interior=True)   # depends on the columns' order  # type: ignore[arg-type]
            master.add(sorted(have | set(beside or negative)))
        elif interior:   # the simplex over a spread of outputs, warm-started from here on
            interior = False
            spread = np.linspace(0, size - 1, min(size, SPREAD)).round().astype(int).tolist()
            master = master_for(columns, e)   # type: ignore[arg-type]
            master.add(sorted(have | set(beside) | set(negative) | set(spread)))
        else:
            master.add(negative)
    return BlockSolution(best, best.cost(loss), bound, len(master.outputs), rounds, time.perf_counter() - t0)


__all__ = ["BLOCK_COSTS", "BlockSolution", "Blocks", "IntervalLoss", "best_blocks", "descend", "nearest_starts",
           "solve_record_blocks"]
