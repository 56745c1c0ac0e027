"""A proven lower bound on the cost of *every* noise whose K-fold composition meets a target.

The K-release design (:mod:`.releases_design`) minimises over a convex *surrogate* of the
K-fold constraint, so its own optimum bounds nothing about the K-release problem. This
module bounds that problem from below by a relaxation that every feasible noise satisfies
(docs/proofs/k-release-bound.md):

**Claim.** If ``K`` independent releases of one noise ``f`` (the same neighbouring pair
each time) are together ``(eps, delta)``-DP, then for every ``j = 1..K`` one release is
``(eps / j, delta^(1/j))``-DP.

**Proof.** The first ``j`` releases are a post-processing of all ``K``, so they are
``(eps, delta)``-DP. For any event ``A`` of one release with probabilities ``p`` and ``q``
under the two neighbours, the event ``A x ... x A`` of ``j`` releases has probabilities
``p^j`` and ``q^j`` (independence), so ``p^j <= e^eps q^j + delta``. Taking ``j``-th roots
and using ``(a + b)^(1/j) <= a^(1/j) + b^(1/j)`` (``a, b >= 0``; ``t -> t^(1/j)`` is concave
with value 0 at 0, hence subadditive): ``p <= e^(eps/j) q + delta^(1/j)``. At ``delta = 0``
and ``j = K`` this is the exact statement that K-fold pure DP of one noise is ``K`` times
its pure epsilon.

So the K-release optimum is at least the optimum of one release under all these
``(eps / j, delta^(1/j))`` constraints together -- an LP (hockey-stick epigraph rows, one
block per level ``j``), whose dual is checked in outward-rounded arithmetic by
:func:`~optnoise.design.bounds.lp_bound`. Each level's ratio is a float ``E_j >=
e^(eps/j)`` and its budget a float ``b_j`` with ``b_j^j >= delta`` checked in rationals:
both only loosen the relaxation. On the integer line the relaxation is over a window
``-L..L`` with the masses beyond it in two variables costing ``c(-L-1)`` and ``c(L+1)``
(:mod:`.line_bound`: valid for a cost non-decreasing in ``|x|``), and the hockey-stick sums
keep only the pairs inside the window (dropped terms are non-negative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ..costs import Cost
from ..errors import DesignError
from .bounds import UNIT, Bound, down, exp_up, lp_bound
from .line_bound import monotone_in_magnitude
from .solver import solve_lp

#: Most levels ``j`` kept in the relaxation (any subset of ``1..K`` gives a valid bound).
MOST_LEVELS = 8
#: Levels whose budget ``delta^(1/j)`` exceeds this are left out (they hardly constrain).
LEVEL_BUDGET = 0.5


@dataclass(frozen=True)
class Level:
    """One implied single-release guarantee: ratio ``e >= e^(eps/j)`` and budget ``b >= delta^(1/j)``."""

    j: int
    e: float
    b: float


def root_up(delta: float, j: int) -> float:
    """A float ``b >= delta^(1/j)``: the float power, raised ulp by ulp until ``b^j >= delta``
    holds in exact rational arithmetic."""
    if delta == 0.0 or j == 1:
        return float(delta)
    b = float(delta ** (1.0 / j))
    target = Fraction(delta)
    while Fraction(b) ** j < target:
        b = float(np.nextafter(b, np.inf))
    return b


def levels(epsilon: float, delta: float, k: int, most: int = MOST_LEVELS) -> tuple[Level, ...]:
    """The levels ``j`` of the relaxation: ``K`` alone at ``delta = 0`` (it implies every other
    one); else ``j = 1, 2, 3, 4, 6, 8, ...`` up to ``K`` while ``delta^(1/j) <= LEVEL_BUDGET``,
    at most ``most`` of them. ``eps / j`` is raised to the next float before ``exp_up``."""
    if delta == 0.0:
        js = [int(k)]
    else:
        grid = sorted({1, 2, 3, 4} | {int(round(2 ** (t / 2))) for t in range(4, 64)} | {int(k)})
        js = [j for j in grid if j <= k and delta ** (1.0 / j) <= LEVEL_BUDGET][:most] or [1]
    out = []
    for j in js:
        x = float(np.nextafter(epsilon / j, np.inf)) if j > 1 else float(epsilon)
        out.append(Level(j, exp_up(x), root_up(delta, j)))
    return tuple(out)


#: Most half-width of :func:`level_window`.
WINDOW_MAX = 2000


def level_window(epsilon: float, delta: float, k: int, reach: int, most: int = WINDOW_MAX) -> int:
    """A window ``-L..L`` for :func:`line_releases_bound`: where the geometric of the loosest
    level's epsilon (``eps / j``, largest ``j`` of :func:`levels`) over distance ``reach`` has
    about ``e^-24`` left beyond it; at least ``max(8, reach)``, at most ``most`` (a narrower
    window gives a valid, looser bound)."""
    jmax = max(x.j for x in levels(epsilon, delta, k))
    return int(min(most, max(8, reach, math.ceil(24.0 * jmax * reach / epsilon))))


def hockey_rows(pairs: Sequence[tuple[np.ndarray, np.ndarray]], n_f: int,
                lv: Sequence[Level]) -> tuple[sp.csr_matrix, np.ndarray, int]:
    """The rows ``f_a - E f_b - s_ab <= 0`` and ``sum s <= b`` of every level and shift
    (``pairs``: per shift the index arrays ``(a, b)`` of the pairs kept); at budget 0 the
    plain ratio rows ``f_a - E f_b <= 0``. Columns: ``n_f`` masses, then the ``s``
    variables. Returns ``(a_ub, b_ub, number of s variables)``."""
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    s = n_f
    for level in lv:
        for a, b in pairs:
            m = a.size
            idx = r + np.arange(m)
            rows += [idx, idx]
            cols += [a, b]
            vals += [np.ones(m), np.full(m, -level.e)]
            rhs.append(np.zeros(m))
            r += m
            if level.b > 0.0:
                rows += [idx, np.full(m, r)]
                cols += [s + np.arange(m), s + np.arange(m)]
                vals += [np.full(m, -1.0), np.ones(m)]
                rhs.append(np.array([level.b]))
                r += 1
                s += m
    a_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, s))
    return a_ub, np.concatenate(rhs), s - n_f


def relaxation_bound(c: np.ndarray, pairs: Sequence[tuple[np.ndarray, np.ndarray]], lv: Sequence[Level],
                     method: str) -> Bound:
    """Proven lower bound of ``min c.f`` over PMFs ``f`` (all columns of ``c``) meeting the
    hockey-stick rows of every level (:func:`hockey_rows`); every variable boxed in
    ``[0, 1]`` (an ``s`` variable needs no more than ``f_a <= 1``)."""
    n_f = c.size
    a_ub, b_ub, n_s = hockey_rows(pairs, n_f, lv)
    cc = np.concatenate([c, np.zeros(n_s)])
    n = cc.size
    a_eq = sp.csr_matrix((np.ones(n_f), (np.zeros(n_f, dtype=int), np.arange(n_f))), shape=(1, n))
    try:
        res = solve_lp(cc, a_ub, b_ub, a_eq, [1.0], [(0.0, 1.0)] * n, None)
    except DesignError:   # no multipliers: no bound (not a failure of the design)
        return Bound(-math.inf, method, math.inf)
    return lp_bound(cc, a_ub, b_ub, a_eq, np.ones(1), np.zeros(n), np.ones(n), res.ineqlin.marginals,
                    res.eqlin.marginals, method=method)


def cyclic_releases_bound(rho: np.ndarray, shifts: Sequence[int], epsilon: float, delta: float, k: int) -> Bound:
    """Lower bound on the cost ``rho . f`` of every noise ``f`` mod ``rho.size`` whose K-fold
    composition is ``(eps, delta)``-DP for the ordered ``shifts`` (pair ``(f, f(. + mu))``)."""
    size = rho.size
    eta = np.arange(size)
    pairs = [(eta, (eta + int(mu)) % size) for mu in shifts]
    lv = levels(epsilon, delta, k)
    return relaxation_bound(np.asarray(rho, dtype=np.float64), pairs, lv, method_name(lv, "cyclic"))


def line_releases_bound(half: int, shifts: Sequence[int], epsilon: float, delta: float, k: int,
                        cost: Cost) -> Bound | None:
    """Lower bound on ``E c(X)`` over every noise ``X`` on Z whose K-fold composition is
    ``(eps, delta)``-DP for the ordered ``shifts``, from the window ``-half..half`` (module
    docstring); ``None`` for a cost not known to be non-decreasing in ``|x|``."""
    values = np.arange(-half, half + 1, dtype=np.float64)
    if not monotone_in_magnitude(cost) or float(np.min(cost(np.arange(-half - 1, half + 2)))) < 0:
        return None
    c = np.concatenate([cost(values), cost(np.array([-half - 1.0, half + 1.0]))])
    c = down(np.asarray(c, dtype=np.float64) * (1.0 - 4 * UNIT))   # |x|^k in floats: within 2 ulps
    n = values.size
    pairs = []
    for mu in shifts:
        a = np.arange(max(0, -int(mu)), min(n, n - int(mu)))
        pairs.append((a, a + int(mu)))
    lv = levels(epsilon, delta, k)
    return relaxation_bound(c, pairs, lv, method_name(lv, f"line window half-width {half}"))


def method_name(lv: Sequence[Level], where: str) -> str:
    """``bound_method`` in words: which implied single-release guarantees were used."""
    js = ",".join(str(x.j) for x in lv)
    if all(x.j == 1 for x in lv):
        return f"single-release lp-dual ({where}; hockey-stick rows of the target; outward rounded)"
    return (f"k-fold-implies-single lp-dual ({where}; one release (eps/j, delta^(1/j))-DP for j in {{{js}}}; "
            "outward rounded)")


__all__ = ["LEVEL_BUDGET", "Level", "MOST_LEVELS", "WINDOW_MAX", "level_window", "cyclic_releases_bound", "hockey_rows", "levels",
           "line_releases_bound", "method_name", "relaxation_bound", "root_up"]
