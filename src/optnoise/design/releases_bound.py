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
keep only the pairs inside the window (dropped terms are non-negative). The binary
reduction (:func:`binary_levels`) adds single-release guarantees at more slopes.

Proof: docs/proofs/k-release-bound.md
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..costs import Cost
from ..errors import DesignError
from .bounds import UNIT, Bound, down, exp_up, lp_bound
from .line_bound import monotone_in_magnitude
from .solver import solve_lp

if TYPE_CHECKING:  # imported where used: scipy.sparse costs 0.17 s at start-up (issue 37)
    import scipy.sparse as sp

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


# ------------------------------------------------------------------ the binary reduction
#: Slopes ``e^eps'`` of :func:`binary_levels`: ``eps'`` on a geometric grid from ``eps / (2K)``
#: (at least ``eps / 400``) to ``eps``.
BINARY_SLOPES = 12
#: Grid points over ``q`` in :func:`binary_levels` before refinement, and at most after it.
BINARY_GRID, BINARY_GRID_MAX = 40, 480
#: Largest K the binary reduction is computed for (beyond it, the levels of :func:`levels` only).
BINARY_MAX_K = 400


@lru_cache(maxsize=8)
def log_binomials(k: int) -> np.ndarray:
    """``ln C(K, N)`` for ``N = 0..K`` (floats: the search only)."""
    from scipy.special import gammaln
    n = np.arange(k + 1, dtype=np.float64)
    return gammaln(k + 1.0) - gammaln(n + 1.0) - gammaln(k - n + 1.0)


def binomial_pmf(k: int, p: float) -> np.ndarray:
    """Float ``Bin(N; K, p)`` for ``N = 0..K`` (the search only)."""
    n = np.arange(k + 1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log = log_binomials(k) + np.where(n > 0, n * math.log(p) if p > 0 else -np.inf, 0.0) + \
            np.where(n < k, (k - n) * math.log1p(-p) if p < 1 else -np.inf, 0.0)
    return np.exp(log)


def binary_terms(p: float, q: float, k: int, e: float) -> np.ndarray:
    """Float ``Bin(N; K, p) - e Bin(N; K, q)`` for ``N = 0..K`` (the search only)."""
    return binomial_pmf(k, p) - e * binomial_pmf(k, q)


def binary_h(p: float, q: float, k: int, e: float) -> float:
    """Float ``H_K(p, q) = sum_N max(0, Bin(N; K, p) - e Bin(N; K, q))`` (the search only)."""
    return float(np.maximum(binary_terms(p, q, k, e), 0.0).sum())


@lru_cache(maxsize=8)
def binomials(k: int) -> tuple[int, ...]:
    """``C(K, N)`` for ``N = 0..K``, exact."""
    return tuple(math.comb(k, n) for n in range(k + 1))


def binomial_sum(a: int, b: int, k: int, lo: int, hi: int) -> int:
    """``sum_{N=lo..hi} C(K, N) a^N b^(K-N)`` exactly (Python integers).

    Horner's scheme in ``a`` over ``j = N - lo``: ``sum_j C(K, lo+j) a^j b^(m-j)`` with ``m =
    hi - lo``, times ``a^lo b^(K-hi)``; every step multiplies a large integer by a small one
    (linear in its size), where expanding each term costs a product of two large ones."""
    combs, acc, b_pow = binomials(k), 0, 1
    for j in range(hi - lo, -1, -1):
        acc = acc * a + combs[lo + j] * b_pow
        b_pow *= b
    return acc * a ** lo * b ** (k - hi)


def certified_above(p: float, q: float, k: int, delta: float, e_up: float) -> bool:
    """Whether ``H_K(p, q) > delta`` is *proven*, in exact integer arithmetic: the floats ``p``,
    ``q``, ``e_up >= e^eps`` and ``delta`` are dyadic rationals, so over the range ``S = lo..hi``
    of the terms that are positive in floats the inequality ``sum_S C(K,N) (p^N (1-p)^(K-N) -
    e_up q^N (1-q)^(K-N)) > delta`` is decided exactly after multiplying out the
    denominators (:func:`binomial_sum`). The sum over any ``S`` is at most the sum of the
    terms' ``max(0, .)``, and ``e_up >= e^eps`` only lowers it, so a pass proves ``H_K(p, q)
    > delta``. (The likelihood ratio of two binomials is monotone in ``N``, so the positive
    terms are a range and nothing is lost by summing the range. K is limited by
    :data:`BINARY_MAX_K`: the integers have about ``K`` times a float's bits.)"""
    t = binary_terms(p, q, k, e_up)
    positive = np.nonzero(t > 0)[0]
    # a float screen only: rejected where even a generous allowance for the float sum's
    # cancellation (terms of up to ~1 summing to ~delta) cannot reach delta; the rest is exact
    if positive.size == 0 or float(np.sum(t[positive])) + 1e-12 * float(np.abs(t).sum()) <= delta:
        return False
    lo, hi = int(positive[0]), int(positive[-1])
    fp, fq, fe, fd = Fraction(p), Fraction(q), Fraction(e_up), Fraction(delta)
    d_p, d_q = fp.denominator, fq.denominator
    # common denominator d_p^K d_q^K e_den: the p side times e_den d_q^K, the q side times e_num d_p^K
    total = (fe.denominator * d_q ** k * binomial_sum(fp.numerator, d_p - fp.numerator, k, lo, hi)
             - fe.numerator * d_p ** k * binomial_sum(fq.numerator, d_q - fq.numerator, k, lo, hi))
    # total / (d_p^K d_q^K e_den) > delta  <=>  total * delta_den > delta_num * d_p^K d_q^K e_den
    return total * fd.denominator > fd.numerator * d_p ** k * d_q ** k * fe.denominator


def p_above(q: float, k: int, delta: float, e_up: float) -> float:
    """A float ``p_hi in [q, 1]`` with ``H_K(p_hi, q) > delta`` proven (:func:`certified_above`),
    or ``1.0`` where none is found: float bisection for the least infeasible ``p``, raised by
    ``1e-7`` relative for room."""
    if q >= 1.0 or binary_h(1.0, q, k, e_up) <= delta:
        return 1.0
    lo, hi = q, 1.0
    for _ in range(55):
        mid = 0.5 * (lo + hi)
        if binary_h(mid, q, k, e_up) <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * hi:
            break
    for room in (1e-7, 1e-5, 1e-3):
        cand = min(1.0, hi * (1 + room))
        if certified_above(cand, q, k, delta, e_up):
            return cand
    return 1.0


def cell_bounds(qs: np.ndarray, p_hi: np.ndarray, a: float) -> np.ndarray:
    """Per cell ``[q_i, q_{i+1}]``: ``max(q_{i+1}, p_hi(q_{i+1})) - a q_i`` (floats; the bound
    itself is recomputed exactly by :func:`binary_budget`)."""
    return np.maximum(qs[1:], p_hi[1:]) - a * qs[:-1]


def binary_budget(qs: np.ndarray, p_hi: np.ndarray, a: float) -> float:
    """A float ``b >= sup {p - a q}`` over the pairs ``(p, q)`` of one event allowed by the
    binary reduction (docs/proofs/k-release-bound.md, Claim 2), from the certified ``p_hi``
    on the grid ``qs`` (``q_0 = 0``, ``q_m = 1``): ``max(0, max_i max(q_{i+1}, p_hi_{i+1}) -
    a q_i)``, in rationals, rounded up."""
    from ..analysis.exact import float_up
    fa = Fraction(a)
    best = Fraction(0)
    for i in range(qs.size - 1):
        v = Fraction(max(float(qs[i + 1]), float(p_hi[i + 1]))) - fa * Fraction(float(qs[i]))
        best = max(best, v)
    return float_up(best)


@lru_cache(maxsize=32)   # a pure function of its arguments: a design and its comparisons at one target share it
def binary_levels(epsilon: float, delta: float, k: int, slopes: int = BINARY_SLOPES) -> tuple[Level, ...]:
    """Single-release guarantees ``(ln a, b)`` implied by K-fold ``(eps, delta)``-DP through the
    binary reduction (docs/proofs/k-release-bound.md, Claim 2): for every event ``A`` of one
    release, ``(P(A), Q(A))`` makes ``Bern(P(A))^K`` against ``Bern(Q(A))^K`` ``(eps,
    delta)``-DP, so ``P(A) - a Q(A) <= b(a)``, the largest ``p - a q`` over such pairs.
    ``b(a)`` is bounded from above on a grid over ``q``, refined where the bound is loosest;
    only ``p_hi`` values proven in interval arithmetic enter it. ``Level.j`` is 0 (not a
    level of :func:`levels`)."""
    if delta <= 0.0 or k < 2 or k > BINARY_MAX_K:
        return ()
    e_up = exp_up(epsilon)
    if not math.isfinite(e_up):
        return ()
    lo_eps = max(epsilon / (2.0 * k), epsilon / 400.0)
    slope_list = [math.exp(x) for x in np.geomspace(lo_eps, epsilon, slopes)]
    qs = np.concatenate([[0.0], np.geomspace(1e-15, 1.0, BINARY_GRID)])
    cache: dict[float, float] = {}

    def p_hi_of(grid: np.ndarray) -> np.ndarray:
        for q in grid:
            if float(q) not in cache:
                cache[float(q)] = p_above(float(q), k, delta, e_up)
        return np.array([cache[float(q)] for q in grid])

    p_hi = p_hi_of(qs)
    while qs.size < BINARY_GRID_MAX:
        worst = set()
        for a in slope_list:
            cb = cell_bounds(qs, p_hi, a)
            low = float(np.max(p_hi - a * qs))           # a float estimate of the supremum from below
            loose = np.nonzero(cb > max(low, 0.0) + 1e-3 * max(abs(low), 1e-12))[0]
            worst.update(int(i) for i in loose[np.argsort(-cb[loose])][:3])
        if not worst:
            break
        mids = [0.5 * (qs[i] + qs[i + 1]) if qs[i] > 0 else qs[i + 1] * 1e-3 for i in sorted(worst)]
        qs = np.unique(np.concatenate([qs, mids]))
        p_hi = p_hi_of(qs)
    return tuple(Level(0, float(a), binary_budget(qs, p_hi, a)) for a in slope_list)


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
    import scipy.sparse as sp

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
    import scipy.sparse as sp

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
    lv = levels(epsilon, delta, k) + binary_levels(epsilon, delta, k)
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
    lv = levels(epsilon, delta, k) + binary_levels(epsilon, delta, k)
    return relaxation_bound(c, pairs, lv, method_name(lv, f"line window half-width {half}"))


def method_name(lv: Sequence[Level], where: str) -> str:
    """``bound_method`` in words: which implied single-release guarantees were used."""
    js = ",".join(str(x.j) for x in lv if x.j > 0)
    if all(x.j == 1 for x in lv):
        return f"single-release lp-dual ({where}; hockey-stick rows of the target; outward rounded)"
    binary = sum(1 for x in lv if x.j == 0)
    more = f" and (eps', b(eps')) at {binary} slopes by the binary reduction" if binary else ""
    return (f"k-fold-implies-single lp-dual ({where}; one release (eps/j, delta^(1/j))-DP for j in {{{js}}}{more}; "
            "outward rounded)")


__all__ = ["binary_terms", "binomial_pmf", "log_binomials", "BINARY_MAX_K", "BINARY_SLOPES", "binary_budget", "binary_h", "binary_levels", "certified_above",
           "cell_bounds", "p_above", "LEVEL_BUDGET", "Level", "MOST_LEVELS", "WINDOW_MAX", "level_window", "cyclic_releases_bound", "hockey_rows", "levels",
           "line_releases_bound", "method_name", "relaxation_bound", "root_up"]
