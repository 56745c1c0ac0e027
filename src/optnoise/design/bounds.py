"""Proven lower bounds on the optimal cost of a design: dual certificates, rounded outward.

A design LP ``min c.x`` has a *dual*; any dual-feasible point gives a lower bound on the
optimum (weak duality), whatever solver produced it and however it stopped. This module
turns candidate duals -- from an LP solver, or from a closed form -- into bounds that are
*proven*: every operation is rounded towards ``-inf`` (:func:`down`) or, where a float error
bound is simpler, the bound is lowered by that error, and ``e^eps`` enters through a float
``>= e^eps`` (:func:`exp_up`) wherever a larger ``e^eps`` can only lower the bound. A
candidate that is not quite feasible is *repaired* by lowering it (never by trusting it).

Three certificates:

* :func:`chain_bound` -- a channel on ``{0..n}``, pure DP, neighbours one apart (the
  Lagrangian dual on the row sums; one backward and one forward recursion per column);
* :func:`complete_bound` -- a channel under pure DP with every pair of inputs neighbours
  (the per-record unit);
* :func:`lp_bound` -- any LP ``min c.x, A_ub x <= b_ub, A_eq x = b_eq, lb <= x <= ub`` with
  finite bounds on ``x`` and any candidate multipliers (Neumaier & Shcherbina, Math. Prog.
  99, 2004: with boxed variables every multiplier vector gives a valid bound).

Why the channel certificates are bounds (a derivation, checked by the tests against plain
LPs). The channel LP with a prior is ``min sum_{q,y} c[q, y] P[q, y]`` over ``P >= 0`` with
rows summing to 1 and, under pure DP, ``P[a, y] <= e^eps P[b, y]`` for every neighbouring
pair ``(a, b)`` and output ``y``. These ratio constraints act on each column ``P[:, y]``
alone: the column lies in the cone ``K = {x >= 0 : x_a <= e^eps x_b for every pair}``. Put
multipliers ``u_q`` on the row sums; for every feasible ``P``

    ``sum_{q,y} c[q,y] P[q,y] = sum_q u_q + sum_y <c[:, y] - u, P[:, y]>``,

so whenever every ``w_y = c[:, y] - u`` is non-negative on ``K`` (``w_y`` in the dual cone
``K*``), the cost of every feasible channel is at least ``sum_q u_q``. (LP duality says the
best such ``u`` gives the optimum itself.) A worst-case objective ``max_q`` is at least its
average over any prior, so the same bound with ``c = diag(lambda) L`` bounds it for any
weights ``lambda`` on the answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.exact import float_up
from ..errors import InvalidParameterError
from .csr import CSR

if TYPE_CHECKING:  # imported where used: scipy.sparse costs 0.17 s at start-up (issue 37)
    import scipy.sparse as sp

#: Unit roundoff of float64 (round to nearest).
UNIT = 2.0 ** -53

#: Relative gap below which a design with a proven bound is called optimal.
GAP_TOLERANCE = 1e-6


def exp_up(epsilon: float) -> float:
    """A float ``>= e^epsilon``: the upper end of ``mpmath``'s 256-bit interval of ``exp`` at the
    float's exact binary value (outward rounded, explicit precision), rounded up to a float."""
    from fractions import Fraction

    from mpmath import libmp
    if epsilon >= 709.0:   # e^eps beyond the float range: no finite float bounds it
        return math.inf
    x = libmp.from_float(float(epsilon))
    sign, man, exp, _ = libmp.mpi_exp((x, x), 256)[1]
    value = Fraction(int(man) << exp) if exp >= 0 else Fraction(int(man), 1 << -exp)
    return float_up(-value if sign else value)


def down(x: np.ndarray | float) -> np.ndarray | float:
    """The float just below ``x``: after one correctly rounded operation, a lower bound of its
    exact result (the rounding error is at most half a unit in the last place)."""
    return np.nextafter(x, -np.inf)


def sum_down(x: np.ndarray) -> float:
    """A float ``<=`` the exact sum of the floats ``x`` (``math.fsum`` is correctly rounded)."""
    s = math.fsum(np.asarray(x, dtype=np.float64).ravel().tolist())
    return float(down(s)) if math.isfinite(s) else s


@dataclass(frozen=True)
class Bound:
    """A proven lower bound on an optimal cost, with how it was obtained.

    Attributes
    ----------
    value:
        The bound (a float ``<=`` the optimum, every operation rounded outward).
    method:
        What certified it (``"chain-dual"``, ``"complete-dual"``, ``"lp-dual"``, ...).
    repaired:
        How much the candidate dual had to be lowered to be feasible (0 when it was).
    """

    value: float
    method: str
    repaired: float = 0.0

    def gap(self, cost: float) -> float:
        """Relative gap ``(cost - bound) / |cost|`` of a mechanism costing ``cost`` (``>= 0``
        up to the float cost; 0 when both are 0)."""
        return relative_gap(cost, self.value)


class Bounded:
    """A design result with a ``cost`` and a proven ``bound`` on the optimum: its ``gap``, the
    relative distance of the cost above the bound (:func:`relative_gap`)."""

    cost: float
    bound: "Bound"

    @property
    def gap(self) -> float:
        """Relative gap of the design's cost to the proven bound."""
        return relative_gap(self.cost, self.bound.value)


def relative_gap(cost: float, bound: float) -> float:
    """``(cost - bound) / max(|cost|, tiny)``, never below 0 (a cost under its bound is float
    round-off of the cost, which is not itself rounded)."""
    if not math.isfinite(bound):
        return math.inf
    scale = max(abs(cost), 1e-300)
    return max(0.0, (cost - bound) / scale)


# ------------------------------------------------------------------ chain: neighbours one apart
def _step(a: np.ndarray, inv_lo: float, e_up: float) -> np.ndarray:
    """A lower bound of ``min_{t in [1/E, E]} t a = min(a / E, E a)`` for every ``E <= e_up``:
    ``a inv_lo`` (``inv_lo <= 1 / e_up``) when ``a >= 0`` and ``e_up a`` when ``a < 0``,
    rounded down. Non-decreasing in ``a`` (so lower bounds of ``a`` propagate)."""
    return down(a * np.where(a >= 0, inv_lo, e_up))


#: Rows of the cost matrix requested at once by :func:`chain_values`.
ROWS = 64


def chain_values(cost_rows: Callable[[int, int], np.ndarray], u: np.ndarray, e_up: float) -> np.ndarray:
    """For each column ``y``: a lower bound of ``min {<c[:, y] - u, x> : x in K, x_y = 1}``.

    ``K`` is the chain cone ``{x >= 0 : x_q <= E x_{q+1}, x_{q+1} <= E x_q}`` for any
    ``E <= e_up``; ``cost_rows(lo, hi)`` returns the rows ``c[lo:hi, :]``.

    Derivation. Every ``x`` in ``K`` with ``x_y = 1`` has ``x_{k} / x_{k+1}`` in
    ``[1/E, E]`` and nothing else constrains it, so the minimum splits into the part below
    ``y`` and the part above. Let ``F_k`` be the least value of ``sum_{j <= k} w_j x_j`` given
    ``x_k = 1`` (the ratios below ``k`` free in their intervals). Then ``F_0 = w_0`` and
    ``F_k = w_k + min_{t in [1/E, E]} t F_{k-1}``: by homogeneity the part below ``k`` with
    ``x_{k-1} = t`` is ``t F_{k-1}``, and a linear function of ``t`` is least at an end.
    Likewise ``R_k`` from the top. The column's value is ``w_y + s(F_{y-1}) + s(R_{y+1})``
    with ``s(a) = min(a / E, E a)``. Each step is non-decreasing in its argument and rounded
    down (:func:`_step`, :func:`down`), so the result is a lower bound for every ``E <=
    e_up``. ``O(n)`` per column, vectorised over columns (only the columns still ahead of
    the diagonal are carried): ``n^2`` steps in all, ``O(n)`` memory besides a block of rows.
    """
    u = np.asarray(u, dtype=np.float64)
    size = u.size
    inv_lo = float(down(1.0 / e_up))
    left = np.zeros(size)      # left[y]: bound of F_{y-1} for column y (unused at y = 0)
    right = np.zeros(size)     # right[y]: bound of R_{y+1} (unused at y = n)
    diag = np.zeros(size)
    with np.errstate(over="ignore", invalid="ignore"):
        acc = np.zeros(0)
        for lo in range(0, size, ROWS):   # forward: F_k for the columns y > k
            block = np.asarray(cost_rows(lo, min(size, lo + ROWS)), dtype=np.float64)
            for i, row in enumerate(block):
                k = lo + i
                diag[k] = row[k]
                if k == size - 1:
                    break
                w = down(row[k + 1:] - u[k])   # columns k+1..n
                acc = w if k == 0 else down(w + _step(acc[1:], inv_lo, e_up))
                left[k + 1] = acc[0]
        acc = np.zeros(0)
        for hi in range(size, 0, -ROWS):  # backward: R_k for the columns y < k
            block = np.asarray(cost_rows(max(0, hi - ROWS), hi), dtype=np.float64)
            for i in range(block.shape[0] - 1, -1, -1):
                k = hi - block.shape[0] + i
                if k == 0:
                    break
                w = down(block[i, :k] - u[k])   # columns 0..k-1
                acc = w if k == size - 1 else down(w + _step(acc[:-1], inv_lo, e_up))
                right[k - 1] = acc[-1]
        edge = np.arange(size)
        s_left = np.where(edge > 0, _step(left, inv_lo, e_up), 0.0)
        s_right = np.where(edge < size - 1, _step(right, inv_lo, e_up), 0.0)
        out = down(down(down(diag - u) + s_left) + s_right)
    return np.where(np.isnan(out), -np.inf, out)


def repair(u: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, float]:
    """Lower ``u_y`` by the shortfall ``-values[y]`` of every failing column ``y``.

    Why this makes every column pass: ``values[y]`` bounds the column's value over ``x`` in
    the cone with ``x_y = 1`` (or ``x_y >= 1``); lowering ``u_y`` by ``s`` raises ``w[y]`` by
    ``s`` in every column, so column ``y``'s value rises by ``s x_y >= s`` and no column's
    value falls (``x >= 0``). Rounded down. Returns the new ``u`` and the total lowered.
    """
    short = np.where(values < 0, -values, 0.0)
    if not np.any(short > 0):
        return u, 0.0
    fixed = down(u - short)
    return fixed, float(np.sum(short))


def chain_bound(cost_rows: Callable[[int, int], np.ndarray], u: np.ndarray, epsilon: float) -> Bound:
    """Proven lower bound on the optimal prior-averaged cost of a channel on ``{0..n}`` under
    pure ``epsilon``-DP with neighbours one apart, from candidate row multipliers ``u``.

    ``cost_rows(lo, hi)`` returns ``c[lo:hi, :]``, ``c = diag(prior) L``. The candidate is checked
    column by column (:func:`chain_values`) and repaired where it fails (:func:`repair`);
    the bound is ``sum u`` rounded down (module docstring: why it is a bound).
    """
    e_up = exp_up(epsilon)
    u = np.asarray(u, dtype=np.float64)
    values = chain_values(cost_rows, u, e_up)
    if not np.all(np.isfinite(values)):
        return Bound(-math.inf, "chain-dual", math.inf)
    fixed, lowered = repair(u, values)
    return Bound(sum_down(fixed), "chain-dual", lowered)


# ------------------------------------------------------------------ complete graph (per record)
def complete_values(cost: np.ndarray, u: np.ndarray, e_up: float) -> np.ndarray:
    """For each column ``y``: a lower bound of ``min {<c[:, y] - u, x> : x in [1, E]^n}``,
    which is ``>= 0`` exactly when ``c[:, y] - u`` is non-negative on the cone
    ``K = {x >= 0 : x_a <= E x_b for all a, b}`` (every pair neighbours), ``E <= e_up``.

    The box lies in ``K``, and every ``x`` of ``K`` with ``min x = 1`` lies in the box, so the
    box minimum is ``>= 0`` iff the cone's is; and raising ``w_y`` by ``s`` raises every box
    point's value by ``s x_y >= s`` (:func:`repair`). Over the box each ``x_a`` is free in
    ``[1, E]``, so the minimum is ``sum_a min(w_a, E w_a)``: ``w_a`` where ``w_a >= 0``,
    ``E w_a`` where not (each term
    rounded down with ``e_up``). The column sums are lowered by the float error bound of a
    sum of ``m`` terms, ``m 2^-53 sum |terms|`` (Higham, Accuracy and Stability, Thm. 4.4,
    with room), plus ``m`` times the smallest subnormal.
    """
    w = down(np.asarray(cost, dtype=np.float64) - np.asarray(u, dtype=np.float64)[:, None])
    t = down(np.where(w >= 0, w, w * e_up))
    m = t.shape[0]
    s = t.sum(axis=0)
    err = (m + 2) * UNIT * np.abs(t).sum(axis=0) * (1 + 1e-6) + m * 5e-324
    return down(s - err)


def complete_bound(cost: np.ndarray, u: np.ndarray, epsilon: float) -> Bound:
    """Proven lower bound on the optimal prior-averaged cost of a channel under pure
    ``epsilon``-DP with every pair of inputs neighbours (``cost = diag(prior) L``)."""
    u = np.asarray(u, dtype=np.float64)
    values = complete_values(cost, u, exp_up(epsilon))
    if not np.all(np.isfinite(values)):
        return Bound(-math.inf, "complete-dual", math.inf)
    fixed, lowered = repair(u, values)
    return Bound(sum_down(fixed), "complete-dual", lowered)


# ------------------------------------------------------------------ any boxed LP
def lp_bound(c: np.ndarray, a_ub: sp.spmatrix | None, b_ub: np.ndarray | None, a_eq: sp.spmatrix | None,
             b_eq: np.ndarray | None, lb: np.ndarray, ub: np.ndarray, y_ub: np.ndarray | None,
             y_eq: np.ndarray | None, method: str = "lp-dual") -> Bound:
    """Proven lower bound on ``min c.x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``,
    ``lb <= x <= ub`` (finite ``lb``, ``ub``), from *any* multipliers.

    For ``y_ub <= 0`` (clipped to it) and any ``y_eq``, every feasible ``x`` has
    ``c.x >= c.x + y_ub.(a_ub x - b_ub) + y_eq.(a_eq x - b_eq)`` ... rearranged:
    ``c.x >= b.y + r.x`` with reduced costs ``r = c - A^T y``, and ``r.x >= sum_j min(r_j lb_j,
    r_j ub_j)`` on the box. So ``b.y + sum_j min(r_j lb_j, r_j ub_j)`` is a lower bound for
    any ``y`` (Neumaier & Shcherbina 2004). Rounding: ``r`` is computed in floats and
    lowered by ``(k + 2) 2^-53 (|c| + |A|^T |y|)`` (``k`` the most entries of a column of
    ``A``; Higham Thm. 3.5 for dot products), the two sums by :func:`sum_down`.

    The caller passes the *relaxed* model (ratio coefficients ``e_up``, delta unshrunk), so
    that the bound holds for the true problem; the multipliers may come from a tighter one.
    """
    c = np.asarray(c, dtype=np.float64)
    lb = np.asarray(lb, dtype=np.float64)
    ub = np.asarray(ub, dtype=np.float64)
    if not (np.all(np.isfinite(lb)) and np.all(np.isfinite(ub))):
        raise InvalidParameterError("ub", "infinite", "finite bounds on every variable")
    parts_r = [c.copy()]
    parts_abs = [np.abs(c)]
    k = 1
    terms = []
    for A, b, y, sign in ((a_ub, b_ub, y_ub, -1), (a_eq, b_eq, y_eq, 0)):
        if A is None or y is None:
            continue
        y = np.asarray(y, dtype=np.float64)
        if sign < 0:
            y = np.minimum(y, 0.0)
        if isinstance(A, CSR):   # the channel model's (``A.T @ y`` summed as scipy's csc_matvec sums)
            per_column = np.bincount(A.indices, minlength=A.shape[1])
        else:
            import scipy.sparse as sp
            A = sp.csc_matrix(A)
            per_column = np.diff(A.indptr)
        parts_r.append(-(A.T @ y))
        parts_abs.append(abs(A).T @ np.abs(y))
        k = max(k, int(per_column.max(initial=0)) + 1)
        terms.append(np.asarray(b, dtype=np.float64) * y)
    r = np.sum(parts_r, axis=0)
    if not np.all(np.isfinite(r)):   # e.g. a coefficient e^eps beyond the float range
        return Bound(-math.inf, method, math.inf)
    err = (k + 2) * UNIT * np.sum(parts_abs, axis=0) * (1 + 1e-6) + (k + 2) * 5e-324
    r_lo = down(r - err)
    box = np.where(r_lo >= 0, r_lo * lb, r_lo * ub)
    # products b_i y_i and r_j x_j: each rounded once, so one ulp down each keeps them below
    pieces = [down(box)] + [down(t) for t in terms]
    return Bound(sum_down(np.concatenate(pieces)), method)


__all__ = [
    "Bounded",
    "GAP_TOLERANCE",
    "Bound",
    "chain_bound",
    "chain_values",
    "complete_bound",
    "complete_values",
    "down",
    "exp_up",
    "lp_bound",
    "relative_gap",
    "repair",
    "sum_down",
]
