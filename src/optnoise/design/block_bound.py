"""Proven bounds for channels on ``{0..n}`` too large for the ``O(n^2)`` chain: a block relaxation
below, the clamped noise's cost above.

The optimal channel on ``{0..n}`` under pure ``epsilon``-DP with neighbours one apart is
certified by :mod:`optnoise.design.chain` in ``O(n^2)`` time (``n = 10,000``: about 40 s). For
a count over a million households that is out of reach; this module bounds the optimum
from below in ``O(B^2)`` time (uniform prior) with a relative gap of order ``1 / B``:

* **Block relaxation** (:func:`block_lower_bound`; proof: docs/proofs/channel-lower-bounds.md,
  "Block relaxation"). Cut ``{0..n}`` into consecutive blocks of ``B`` answers and drop the
  ratio constraints between the last answer of a block and the first of the next: every
  channel of the request stays feasible, so the relaxed optimum is at most the true one. The
  relaxed problem splits into one problem per block (its rows), and for a loss
  non-decreasing in ``|y - q|`` moving every output outside the block to the block's nearest
  end is post-processing (the block's rows keep their DP) that lowers every cost, so each
  block's optimum is that of a channel on the block itself -- with a loss of ``y - q`` alone,
  the channel on ``{0..B-1}`` with the prior's weights on the block. Each is bounded below by
  the chain's dual certificate (:func:`optnoise.design.bounds.chain_bound`, outward rounded,
  at ``e^eps``) from the geometric-plus-remap candidate (:mod:`optnoise.design.chain`); the
  sum, rounded down, bounds the optimum. With a uniform prior every full block is the same
  problem: two certificates in all. Blocks with the same weights are certified once.
* **Worst case.** The worst case over ``q`` is at least the uniform average, so the uniform
  prior's bound bounds the optimal worst case too.
* **Above** (:func:`clamped_costs`): the cost of ``clamp(q + eta, 0, n)`` for integer-line
  noise ``eta`` (the clamped geometric: Ghosh et al.'s range-restricted mechanism) in ``O(n)``
  from prefix sums of the noise's masses, inflated by a bound on the float error so the
  reported gap is never smaller than the true one.

Proof: docs/proofs/channel-lower-bounds.md
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..costs import check_prior, loss_rows
from ..errors import InvalidParameterError
from ..pmf import IntegerPMF
from ..target import check_epsilon
from .bounds import UNIT, chain_bound, down, sum_down
from .chain import best_remap, geometric_dual
from .solver import RATIO_MARGIN

#: Named losses of ``|y - q|`` alone and non-decreasing in it (the relaxation's hypothesis);
#: the ``circular-*`` costs depend on ``n`` and are not.
MONOTONE_COSTS: tuple[str, ...] = ("er", "abs-error", "sq-error")
#: Answers per block by default: two chain certificates of about 1.5 s (uniform prior); the
#: relative gap of the bound is about ``1.6 / BLOCK`` for ``abs-error`` (docs/ordered-domains.md).
BLOCK = 2048
#: Answers per block by default for a prior that is not uniform: ``O(n B)`` work in all.
PRIOR_BLOCK = 256


@dataclass(frozen=True)
class BlockBound:
    """A proven lower bound on the optimal channel's cost from the block relaxation.

    Attributes
    ----------
    value:
        The bound (``<=`` the optimum of the request at ``e^eps``; outward rounded).
    n:
        Largest answer.
    block:
        Answers per block (the last block may be shorter).
    blocks:
        Number of blocks; ``solved``: distinct block problems certified.
    seconds:
        Wall time.
    """

    value: float
    n: int
    block: int
    blocks: int
    solved: int
    seconds: float

    @property
    def method(self) -> str:
        """What gave the bound, in words (a design's ``bound_method``)."""
        return (f"block relaxation (B = {self.block}: {{0..{self.n}}} cut into {self.blocks} blocks of <= {self.block} "
                f"answers, the DP constraints between blocks dropped; each block's chain-dual bound, outward rounded "
                f"at e^eps; {self.solved} distinct block problems; docs/proofs/channel-lower-bounds.md)")


def check_monotone_cost(cost: str) -> str:
    """``cost`` when it is one of :data:`MONOTONE_COSTS`, else :class:`InvalidParameterError`."""
    if not isinstance(cost, str) or cost.strip() not in MONOTONE_COSTS:
        raise InvalidParameterError("cost", cost, "a loss of |y - q| non-decreasing in it: " + ", ".join(MONOTONE_COSTS))
    return cost.strip()


def block_chain_bound(weights: np.ndarray, epsilon: float, cost: str) -> float:
    """A proven lower bound (``>= 0``) on ``min sum_q weights[q] E L(q, Y)`` over channels on
    ``{0..m-1}`` (``m = weights.size``) under pure ``epsilon``-DP, neighbours one apart.

    The candidate multipliers are Ghosh et al.'s geometric-plus-remap dual at the design's
    margin (:func:`~optnoise.design.chain.best_remap`, :func:`~optnoise.design.chain.geometric_dual`);
    :func:`~optnoise.design.bounds.chain_bound` checks and repairs them at ``e^eps`` in
    outward-rounded arithmetic, so the weights enter as the exact floats given (not
    renormalised), and each cost coefficient ``weight x loss`` rounded down (lowering a
    coefficient only lowers the optimum it bounds: ``P >= 0``). A non-negative loss makes 0 a
    bound too; one answer costs ``L(q, q) = 0``.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.size == 1 or not np.any(w > 0):
        return 0.0
    alpha = math.exp(-epsilon) / (1.0 - RATIO_MARGIN)
    _, v = best_remap(cost, w, alpha)
    top = w.size - 1
    # the cost coefficients rounded down: lower bounds of the exact products weight x loss
    bound = chain_bound(lambda lo, hi: down(w[lo:hi, None] * loss_rows(cost, top, np.arange(lo, hi))),
                        geometric_dual(v, alpha), epsilon)
    return max(0.0, bound.value) if math.isfinite(bound.value) else 0.0


def block_lower_bound(n: int, epsilon: float, cost: str = "abs-error",
                      prior: Sequence[float] | np.ndarray | None = None, block: int | None = None) -> BlockBound:
    """A proven lower bound on the optimal prior-averaged cost of a channel on ``{0..n}`` under
    pure ``epsilon``-DP with neighbours one apart, by the block relaxation (module docstring).

    Parameters
    ----------
    n:
        Largest answer (any size: no ``n x n`` array is formed).
    epsilon:
        Pure DP budget (``> 0``).
    cost:
        One of :data:`MONOTONE_COSTS`.
    prior:
        Weights on the answers (normalised; ``None``: uniform). The bound is on the cost under
        the normalised float weights, as every design's ``expected_cost`` is.
    block:
        Answers per block (default :data:`BLOCK` for the uniform prior, :data:`PRIOR_BLOCK`
        otherwise); at most ``n + 1``.

    Returns
    -------
    BlockBound
        Also a bound on the optimal *worst-case* cost when ``prior`` is uniform (the worst case
        is at least the uniform average).

    Notes
    -----
    Time ``O(B^2)`` per distinct block (two for the uniform prior), memory ``O(n + B * 2048)``.
    The relative gap to the optimum is of order ``1 / B`` (each block loses the cost its own
    ends save; docs/ordered-domains.md measures it).
    """
    t0 = time.perf_counter()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (domain {0..n})")
    size = int(n) + 1
    epsilon = check_epsilon(epsilon, allow_zero=False, accepted="a finite epsilon > 0")
    cost = check_monotone_cost(cost)
    pi = check_prior(prior, size)
    default = BLOCK if prior is None else PRIOR_BLOCK
    m = default if block is None else block
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise InvalidParameterError("block", block, "an integer >= 1 (answers per block)")
    m = min(int(m), size)
    found: dict[bytes, float] = {}
    counts: dict[bytes, int] = {}
    for lo in range(0, size, m):
        w = pi[lo:lo + m]
        key = w.tobytes()
        if key not in found:
            found[key] = block_chain_bound(w, epsilon, cost)
        counts[key] = counts.get(key, 0) + 1
    # count * bound is one correctly rounded product of exact floats: the float below it is a lower bound
    parts = [float(down(counts[k] * b)) if b > 0 else 0.0 for k, b in found.items()]
    value = max(0.0, sum_down(np.array(parts)))
    return BlockBound(value, size - 1, m, sum(counts.values()), len(found), time.perf_counter() - t0)


def worst_case_bound(bound: BlockBound | float, n: int | None = None) -> float:
    """A proven lower bound on the optimal *worst-case* cost from a uniform prior's bound (a
    :class:`BlockBound`, or a value with its ``n``): every channel's ``max_q cost_q >= sum_q p
    cost_q / ((n + 1) p)`` with ``p`` the float uniform weight; ``(n + 1) p`` rounded up, the
    quotient rounded down."""
    value, n = (bound.value, bound.n) if isinstance(bound, BlockBound) else (float(bound), int(n))  # type: ignore[arg-type]
    size = n + 1
    p = 1.0 / size
    total = float(np.nextafter(size * p, np.inf))
    return max(0.0, float(down(value / total)))


# ------------------------------------------------------------------ the whole chain, windowed (uniform prior)
#: Largest window of :func:`window_chain_bound` (``O(n W)`` vector steps).
MAX_WINDOW = 400
#: Half the size of the small problem whose geometric-plus-remap multipliers give the ends of
#: the candidate (the middle is their constant value).
EDGE = 1024


def step(a: np.ndarray, inv_lo: float, e_up: float) -> np.ndarray:
    """A lower bound of ``min(a / E, E a)`` for every ``E <= e_up`` (``inv_lo <= 1 / e_up``),
    rounded down; non-decreasing in ``a`` and 0 at 0 (the chain certificate's step)."""
    return down(np.where(a >= 0, a * inv_lo, a * e_up))


def window_values(u: np.ndarray, p: float | np.ndarray, f: np.ndarray, e_up: float, window: int) -> np.ndarray:
    """For each column ``y``: a lower bound of ``min {<c[:, y] - u, x> : x in K, x_y = 1}`` with
    ``c[q, y] = p f(|q - y|)`` (uniform weight ``p``, or ``p[q]`` for an array of prior weights),
    when every ``c[j, y] - u_j >= 0`` for ``|j - y| > window`` (the caller checks it).

    Derivation (as :func:`optnoise.design.bounds.chain_values`, whose steps are reused): the
    backward quantity ``F_k`` (least ``sum_{j <= k} w_j x_j`` with ``x_k = 1``) is ``>= 0``
    wherever every ``w_j``, ``j <= k``, is ``>= 0`` (``x >= 0``), so at ``k0 = y - window``
    ``F_{k0} = w_{k0} + s(F_{k0 - 1}) >= w_{k0} + s(0) = w_{k0}`` (``s`` non-decreasing,
    ``s(0) = 0``): the recursion may start at ``k0`` as if the domain began there, and likewise
    from the top. Every step rounds down. ``O(n window)``, vectorised over the columns.
    """
    size = u.size
    inv_lo = float(down(1.0 / e_up))
    w = np.broadcast_to(np.asarray(p, dtype=np.float64), (size,))
    left, right = np.zeros(size), np.zeros(size)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(min(window, size - 1), 0, -1):   # columns y >= t (q = y - t), y <= n - t (q = y + t)
            # the cost at distance t rounded down: a lower bound of p[q] f(t)
            left[t:] = down(down(down(w[:size - t] * f[t]) - u[:size - t]) + step(left[t:], inv_lo, e_up))
            right[:size - t] = down(down(down(w[t:] * f[t]) - u[t:]) + step(right[:size - t], inv_lo, e_up))
        out = down(down(down(down(w * f[0]) - u) + step(left, inv_lo, e_up)) + step(right, inv_lo, e_up))
    return np.where(np.isnan(out), -np.inf, out)


def window_chain_bound(n: int, epsilon: float, cost: str = "abs-error", edge: int = EDGE) -> tuple[float, int] | None:
    """A proven lower bound on the optimal cost of a channel on ``{0..n}`` for a *uniform*
    prior (pure ``epsilon``-DP, neighbours one apart; ``cost`` of :data:`MONOTONE_COSTS`): the
    chain certificate of the whole problem, each column checked over a window (:func:`window_values`).
    ``(bound, window)``, or ``None`` where no window up to :data:`MAX_WINDOW` is valid.

    The candidate multipliers: Ghosh et al.'s geometric-plus-remap dual on ``{0..2 edge}`` gives
    the ends, its middle value the rest (far from the ends the problem is translation
    invariant); :func:`~optnoise.design.chain.geometric_dual` maps it to ``u`` in ``O(n)``. The
    candidate is not trusted: :func:`window_values` checks every column and
    :func:`~optnoise.design.bounds.repair` lowers ``u`` where one fails. The window is valid
    when ``p f(window + 1)`` (rounded down) is at least ``max u``: then every cost beyond the
    window exceeds its multiplier (``f`` non-decreasing). It is widened to ``25 / epsilon`` (the
    truncation then costs about ``e^-25`` of a column's value). Proof:
    docs/proofs/channel-lower-bounds.md ("Windowed chain certificate").
    """
    from .bounds import exp_up, repair
    cost = check_monotone_cost(cost)
    size = int(n) + 1
    p = 1.0 / size
    if size <= 2 * edge + 1:
        return None
    alpha = math.exp(-epsilon) / (1.0 - RATIO_MARGIN)
    _, v_small = best_remap(cost, np.full(2 * edge + 1, p), alpha)
    v = np.concatenate((v_small[:edge], np.full(size - 2 * edge, v_small[edge]), v_small[edge + 1:]))
    u = geometric_dual(v, alpha)
    f = loss_rows(cost, min(n, MAX_WINDOW + 1), np.array([0]))[0]
    valid = [w for w in range(1, min(n - 1, MAX_WINDOW) + 1) if float(down(p * f[w + 1])) >= float(np.max(u))]
    if not valid:
        return None
    window = min(max(valid[0], math.ceil(25.0 / epsilon)), min(n - 1, MAX_WINDOW))
    values = window_values(u, p, f, exp_up(epsilon), window)
    if not np.all(np.isfinite(values)):
        return None
    fixed, _ = repair(u, values)
    return max(0.0, sum_down(fixed)), window


# ------------------------------------------------------------------ above: clamped noise in O(n)
def _beyond(pmf: IntegerPMF, edge: int, sign: int) -> float:
    """``P(eta * sign > edge)`` for ``edge >= |window|``: the window's masses beyond ``edge`` and
    the geometric tail's closed form (a tail of period ``p`` and ratio ``r`` beyond ``start``
    holds ``block / (1 - r)``)."""
    tail = pmf.right_tail if sign > 0 else pmf.left_tail
    if tail is None:
        return 0.0
    start = sign * (edge + 1)
    block = pmf.mass(start + sign * np.arange(tail.period))
    return float(np.sum(block) / (1.0 - tail.ratio))


def _side_costs(near: np.ndarray, beyond: float, f: np.ndarray) -> np.ndarray:
    """``side[a] = sum_{k=1}^{a-1} p_k f(k) + f(a) P(|eta| >= a on this side)`` for ``a = 0..n``:
    the error on one side of a true value ``a`` answers from the domain's end (outputs beyond the
    end are released as the end). ``near[k] = p_k`` for ``k = 0..n``; ``beyond``: the side's
    mass past ``n``. Sums of non-negative terms (prefix and suffix sums)."""
    terms = near * f
    prefix = np.concatenate(([0.0], np.cumsum(terms[1:-1]))) if near.size > 1 else np.zeros(1)
    at_least = np.cumsum(near[::-1])[::-1] + beyond
    side = f * at_least
    side[1:] += prefix
    side[0] = 0.0
    return side


#: Added to a rounded-up cost for the masses that underflow (:func:`clamped_costs`).
TINY = 2.0 ** -900
#: Below this a float mass is 0 (half the least subnormal is ``2^-1075``).
UNDERFLOW_BITS = 1080


def _reach(pmf: IntegerPMF) -> int:
    """``|k|`` beyond which every float mass of ``pmf`` is 0: past its window, a tail's mass after
    ``b`` blocks is at most ``ratio^b < 2^-UNDERFLOW_BITS`` once ``b > UNDERFLOW_BITS ln 2 / -ln ratio``."""
    reach = max(-pmf.lo, pmf.hi)
    for tail in (pmf.left_tail, pmf.right_tail):
        if tail is not None:
            blocks = math.ceil(UNDERFLOW_BITS * math.log(2.0) / -math.log(tail.ratio)) + 1
            reach = max(reach, max(-pmf.lo, pmf.hi) + tail.period * blocks)
    return reach


def clamped_row_costs(pmf: IntegerPMF, n: int, cost: str = "abs-error") -> np.ndarray:
    """``r[q] = E L(q, clamp(q + eta, 0, n))`` for ``q = 0..n`` in ``O(n)`` (float; see
    :func:`clamped_costs` for the rounded-up figures). ``L`` one of :data:`MONOTONE_COSTS`
    (``L(q, q) = 0``). The two sides of ``q`` add: ``r[q] = side_-(q) + side_+(n - q)``.
    Masses beyond :func:`_reach` are 0 in floats and are not computed."""
    cost = check_monotone_cost(cost)
    size = int(n) + 1
    f = loss_rows(cost, n, np.array([0]))[0]          # f[d] = L at distance d, d = 0..n
    span = min(size, _reach(pmf))
    lo, hi = min(pmf.lo, -span), max(pmf.hi, span)
    window = pmf.window(lo, hi)                        # masses of lo..hi
    ks = np.arange(lo, hi + 1)
    right, left = np.zeros(size), np.zeros(size)
    inside = (ks >= 0) & (ks <= n)
    right[ks[inside]] = window[inside]
    inside = (ks <= 0) & (ks >= -n)
    left[-ks[inside]] = window[inside]
    beyond_r = float(window[ks > n].sum()) + (_beyond(pmf, hi, 1) if hi >= n else 0.0)
    beyond_l = float(window[ks < -n].sum()) + (_beyond(pmf, -lo, -1) if -lo >= n else 0.0)
    low, high = _side_costs(left, beyond_l, f), _side_costs(right, beyond_r, f)
    return low + high[::-1]


@dataclass(frozen=True)
class ClampedCosts:
    """The clamped noise's cost, rounded up: ``average`` (over the prior) and ``worst``
    (over ``q``); each is the float figure times ``1 + slack``, ``slack`` bounding the relative
    float error (:func:`clamped_costs`)."""

    average: float
    worst: float
    slack: float


def clamped_costs(pmf: IntegerPMF, n: int, cost: str = "abs-error",
                  prior: Sequence[float] | np.ndarray | None = None) -> ClampedCosts:
    """The prior-averaged and worst-case cost of releasing ``clamp(q + eta, 0, n)``, rounded up.

    Why the rounding is enough: every figure is a sum of at most ``3 (n + 1) + 2`` products of
    non-negative floats (a mass, a loss value exact in floats, a weight), so its relative error
    is below ``(3 n + 10) u / (1 - (3 n + 10) u)`` (Higham, *Accuracy and Stability*, Sect. 3.1,
    with the masses taken as given); ``slack = 2 (3 n + 10) u`` covers it for ``n < 10^14``.
    The masses are the noise's float masses: the cost of the mechanism as designed, as every
    design's ``expected_cost`` is. Masses that underflow to 0 (each below ``2^-1075``, at most
    ``2 n + 2`` of them, each costing at most ``f(n) <= n^2``) are covered by the absolute
    ``TINY = 2^-900 >= (2 n + 2) n^2 2^-1075`` for ``n < 10^15``.
    """
    r = clamped_row_costs(pmf, n, cost)
    pi = check_prior(prior, r.size)
    slack = 2.0 * (3.0 * n + 10.0) * UNIT
    up = 1.0 + slack
    return ClampedCosts(float(pi @ r) * up + TINY, float(r.max()) * up + TINY, slack)


__all__ = ["BLOCK", "EDGE", "MAX_WINDOW", "MONOTONE_COSTS", "PRIOR_BLOCK", "BlockBound", "ClampedCosts", "block_chain_bound",
           "block_lower_bound", "check_monotone_cost", "clamped_costs", "clamped_row_costs", "window_chain_bound", "window_values",
           "worst_case_bound"]
