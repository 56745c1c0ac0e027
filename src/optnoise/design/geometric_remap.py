"""The optimal channel on ``{0..n}`` for neighbours one apart, without an ``(n+1) x (n+1)`` array.

For a count under pure ``epsilon``-DP with neighbours one apart and a loss of the released
value non-decreasing in ``|y - q|`` averaged over a prior, Ghosh, Roughgarden & Sundararajan
(STOC 2009 / SICOMP 2012, Thm. 1.2 with Sect. 2.2) show that the range-restricted geometric
mechanism ``G`` followed by the user's best deterministic remap ``T`` is optimal.
:mod:`optnoise.design.chain` builds that channel densely (``O(n^2)`` time and memory); this
module finds the same ``T`` and proves the same gap in ``O(n W)`` time and ``O(W)`` memory per
block of outputs, ``W`` about ``41 / epsilon``:

* **Primal.** ``C[z, y] = d_z sum_q alpha^|q-z| prior_q L(|q - y|)`` (``G[q, z] = d_z
  alpha^|q-z|``, :func:`~optnoise.design.chain.geometric_weights`). The posterior weights of
  ``q`` given ``z`` fall off as ``alpha^|q-z|``, so the sums are taken over ``|q - z| <= W``
  (what is left out is bounded and added to the reported cost, :func:`design_width`), and
  the best ``y`` of each ``z`` is the posterior's weighted median (``abs-error``), the better
  integer beside its mean (``sq-error``) or its mode (``er``) -- each evaluated directly.
* **Dual.** ``u = G^{-T} v`` with ``v_z = C[z, T z]``
  (:func:`~optnoise.design.chain.geometric_dual`, ``O(n)``), capped so that every cost beyond a
  window exceeds its multiplier, then checked column by column over that window in
  outward-rounded arithmetic at ``e^eps`` (:func:`~optnoise.design.block_bound.window_values`
  with the prior's weights) and repaired where a column fails. Nothing of the theorem is
  trusted: the bound is the certificate's (docs/proofs/geometric-remap.md, claims 1-2).

The mechanism is the geometric noise at the design's ``alpha = e^-eps / (1 - RATIO_MARGIN)``
on the integer line (exact tails) with the remap: ``T(clip(q + eta, 0, n))``
(:class:`~optnoise.sampling.clamp_remap.ClampRemap`), certified exactly as noise at distance 1
(claim 3).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..costs import check_prior, loss_rows
from ..errors import InvalidParameterError
from ..target import check_epsilon
from .block_bound import MONOTONE_COSTS, check_monotone_cost, window_values
from .bounds import UNIT, Bound, Bounded, down, exp_up, repair, sum_down
from .chain import geometric_dual, geometric_weights
from .solver import RATIO_MARGIN

#: Entries of one block of window weights (rows x (2 W + 1)): about 16 MB of floats.
BLOCK_ENTRIES = 1 << 21
#: The window's truncation is below ``2^-TRUNCATION_BITS`` of the cost in all (:func:`design_width`).
TRUNCATION_BITS = 60
#: The bound's window is ``BOUND_REACH / epsilon`` (a column's truncation costs about ``e^-40``).
BOUND_REACH = 40.0


@dataclass(frozen=True, eq=False)
class RemapSolution(Bounded):
    """The geometric-plus-remap channel of one request, its cost and the proven bound.

    Attributes
    ----------
    n, alpha:
        The domain ``{0..n}`` and the geometric's ratio (the design's, ``e^-eps / (1 - RATIO_MARGIN)``).
    remap:
        ``remap[z]``: the released value of the clamped output ``z`` (read-only).
    cost:
        The prior-averaged cost of the channel (float sums over the window, plus the bound on
        what the window leaves out).
    truncation:
        That bound (included in ``cost``).
    bound:
        The proven lower bound on every channel's cost (:class:`~optnoise.design.bounds.Bound`).
    width, window:
        The window of the design's sums and of the bound's column checks.
    seconds:
        Wall time of the design and of the bound.
    """

    n: int
    alpha: float
    remap: np.ndarray
    cost: float
    truncation: float
    bound: Bound
    width: int
    window: int
    seconds: tuple[float, float]


def loss_profile(cost: str, n: int) -> np.ndarray:
    """``f[d]``, the loss at distance ``d = 0..n`` of a cost of :data:`MONOTONE_COSTS`."""
    return loss_rows(check_monotone_cost(cost), n, np.array([0]))[0]


def design_width(n: int, alpha: float, top: float, cost_max: float) -> tuple[int, float]:
    """``(W, A)``: the half-width of the design's sums and the bound ``A`` on what they leave out.

    For every output ``z``, the terms with ``|q - z| > W`` of ``C[z, y]`` sum to at most
    ``d_z top cost_max 2 alpha^(W+1) / (1 - alpha)`` (``top``: the largest prior weight,
    ``cost_max``: the largest loss, ``d_z <= 1``); over the ``n + 1`` outputs, ``A``. ``W`` is the
    least with ``A <= 2^-TRUNCATION_BITS`` (at most ``n``, where nothing is left out)."""
    if alpha <= 0.0:
        return 1, 0.0
    scale = 2.0 * (n + 1) * top * max(cost_max, 1.0) / (1.0 - alpha)
    need = (math.log(scale) + TRUNCATION_BITS * math.log(2.0)) / -math.log(alpha) if scale > 0 else 0.0
    width = int(min(n, max(1, math.ceil(need))))
    left_out = 0.0 if width >= n else scale * alpha ** (width + 1)
    return width, float(np.nextafter(left_out, np.inf)) if left_out else 0.0


def window_weights(centres: np.ndarray, g: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``w[i, k] = alpha^|t_k| g[centres_i + t_k]`` for ``t_k = -W..W`` (0 outside ``0..n``);
    ``powers[k] = alpha^|t_k|``."""
    width = (powers.size - 1) // 2
    idx = centres[:, None] + np.arange(-width, width + 1)[None, :]
    inside = (idx >= 0) & (idx < g.size)
    return np.where(inside, powers[None, :] * g[np.clip(idx, 0, g.size - 1)], 0.0)


def distance_loss(cost: str, dist: np.ndarray) -> np.ndarray:
    """The loss of :data:`MONOTONE_COSTS` at integer distances ``dist`` (exact in floats below ``2^26``)."""
    d = np.abs(dist).astype(np.float64)
    return (d != 0).astype(np.float64) if cost == "er" else d if cost == "abs-error" else d * d


def _choose(cost: str, w: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of posterior weights ``w`` over offsets ``t``: the offset ``s`` of the best
    released value and ``sum_k w_k L(t_k - s)`` (evaluated directly, sums of non-negative terms)."""
    total = w.sum(axis=1)
    if cost == "er":
        s = t[np.argmax(w, axis=1)]
    elif cost == "abs-error":   # the weighted median: the first offset where half the weight is reached
        cum = np.cumsum(w, axis=1)
        s = t[np.argmax(cum >= 0.5 * total[:, None], axis=1)]
    else:                       # sq-error: the better integer beside the mean
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(total > 0, (w @ t) / np.where(total > 0, total, 1.0), 0.0)
        lo = np.clip(np.floor(mean), t[0], t[-1] - 1).astype(np.int64)
        a = (w * distance_loss(cost, t[None, :] - lo[:, None])).sum(axis=1)
        b = (w * distance_loss(cost, t[None, :] - lo[:, None] - 1)).sum(axis=1)
        s = np.where(b < a, lo + 1, lo)
    s = np.where(total > 0, s, 0)
    return s, (w * distance_loss(cost, t[None, :] - s[:, None])).sum(axis=1)


def windowed_remap(n: int, alpha: float, cost: str, prior: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``(remap, v)``: for every output ``z`` of the range-restricted geometric at ``alpha`` the
    best released value over the posterior window ``|q - z| <= width`` and ``v_z = C[z, remap z]``
    over that window (module docstring); blocks of outputs of :data:`BLOCK_ENTRIES` weights."""
    size = n + 1
    t = np.arange(-width, width + 1)
    with np.errstate(under="ignore"):
        powers = np.exp(np.abs(t) * math.log(alpha)) if alpha > 0 else (t == 0) * 1.0
    d = geometric_weights(size, alpha)
    remap = np.empty(size, dtype=np.int64)
    v = np.empty(size)
    rows = max(1, BLOCK_ENTRIES // t.size)
    for lo in range(0, size, rows):
        z = np.arange(lo, min(size, lo + rows))
        s, value = _choose(cost, window_weights(z, prior, powers), t)
        remap[z] = np.clip(z + s, 0, n)
        v[z] = d[z] * value
    return remap, v


def reach(u: np.ndarray, prior: np.ndarray, f: np.ndarray) -> int:
    """The least window ``W`` with ``prior_j f(W + 1) >= u_j`` for every ``j`` (one more for the
    rounding; ``n`` where none is): beyond it every cost exceeds its multiplier, so the cap of
    :func:`remap_bound` lowers nothing. A smooth prior needs a few answers; a prior with weights
    near 0 where the multipliers are not may need the whole domain (``O(n^2)`` steps then)."""
    n = u.size - 1
    positive = u > 0
    if not np.any(positive):
        return 1
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(prior[positive] > 0, u[positive] / prior[positive], np.inf)
    first = np.searchsorted(f, ratio * (1.0 + 1e-12), side="left")   # least t with f(t) >= ratio
    return int(min(n, np.max(first) + 1))


def remap_bound(v: np.ndarray, alpha: float, cost: str, prior: np.ndarray, epsilon: float) -> tuple[Bound, int]:
    """A proven lower bound on the optimal cost of every channel on ``{0..n}`` under pure
    ``epsilon``-DP with neighbours one apart (prior ``prior``, a cost of :data:`MONOTONE_COSTS`),
    from the candidate ``u = G^{-T} v``; ``(bound, window)``.

    Proof: docs/proofs/geometric-remap.md (claim 2). The window ``W`` is ``BOUND_REACH /
    epsilon`` or the candidate's :func:`reach`, whichever is larger (at most ``n``). The candidate
    is capped at ``prior_j f(W + 1)`` rounded down (lowering a multiplier keeps any candidate a
    candidate), so every cost beyond the window is at least its multiplier and each column is
    checked over the window (:func:`~optnoise.design.block_bound.window_values`), repaired where
    it fails, summed rounded down.
    """
    n = v.size - 1
    f = loss_profile(cost, n)
    u = geometric_dual(v, alpha)
    window = int(min(n, max(1, math.ceil(BOUND_REACH / epsilon), reach(u, prior, f))))
    if window < n:
        u = np.minimum(u, down(prior * f[window + 1]))
    values = window_values(u, prior, f, exp_up(epsilon), window)
    if not np.all(np.isfinite(values)):
        return Bound(-math.inf, "chain-dual", math.inf), window
    fixed, lowered = repair(u, values)
    return Bound(max(0.0, sum_down(fixed)), "chain-dual", lowered), window


def solve_geometric_remap(n: int, epsilon: float, cost: str = "abs-error",
                          prior: Sequence[float] | np.ndarray | None = None) -> RemapSolution:
    """The optimal channel on ``{0..n}`` under pure ``epsilon``-DP, neighbours one apart, for a
    prior-averaged cost of :data:`MONOTONE_COSTS`, as the geometric noise and a remap, with a
    proven lower bound on the optimum (module docstring).

    Notes
    -----
    ``O(n W)`` time, ``W`` about ``(41 + ln(n f(n))) / epsilon``; memory ``O(n)`` plus one block
    of :data:`BLOCK_ENTRIES` weights. At ``n = 10,000``, ``eps = 1``: ``W = 57``, well under a
    second (the dense chain: ``10^8`` entries, minutes to certify).
    """
    t0 = time.perf_counter()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (domain {0..n})")
    n = int(n)
    epsilon = check_epsilon(epsilon, allow_zero=False, accepted="a finite epsilon > 0")
    cost = check_monotone_cost(cost)
    pi = check_prior(prior, n + 1)
    alpha = math.exp(-epsilon) / (1.0 - RATIO_MARGIN)   # the design's ratio e^eps (1 - RATIO_MARGIN)
    f = loss_profile(cost, n)
    width, left_out = design_width(n, alpha, float(pi.max()), float(f[-1]))
    remap, v = windowed_remap(n, alpha, cost, pi, width)
    # float sums of at most 2 W + 1 non-negative terms per output: relative error within (4 W + 16) u
    total = math.fsum(v.tolist()) * (1.0 + (4 * width + 16) * UNIT) + left_out
    t1 = time.perf_counter()
    bound, window = remap_bound(v, alpha, cost, pi, epsilon)
    t2 = time.perf_counter()
    remap.flags.writeable = False
    return RemapSolution(n, alpha, remap, total, left_out, bound, width, window, (t1 - t0, t2 - t1))


def released_row_costs(n: int, alpha: float, remap: np.ndarray) -> dict[str, np.ndarray]:
    """``E L(q, remap(z))`` for every answer ``q`` and ``L`` of :data:`MONOTONE_COSTS`, ``z`` the
    range-restricted geometric's output at ``alpha`` (``P[q, z] = d_z alpha^|q-z|``), over the
    window of :func:`design_width` (float figures for the report)."""
    size = n + 1
    width, _ = design_width(n, alpha, 1.0, float(n) ** 2)
    t = np.arange(-width, width + 1)
    with np.errstate(under="ignore"):
        powers = np.exp(np.abs(t) * math.log(alpha)) if alpha > 0 else (t == 0) * 1.0
    d = geometric_weights(size, alpha)
    out = {name: np.empty(size) for name in MONOTONE_COSTS}
    rows = max(1, BLOCK_ENTRIES // t.size)
    for lo in range(0, size, rows):
        q = np.arange(lo, min(size, lo + rows))
        w = window_weights(q, d, powers)
        z = np.clip(q[:, None] + t[None, :], 0, n)
        dist = remap[z] - q[:, None]
        for name in MONOTONE_COSTS:
            out[name][q] = (w * distance_loss(name, dist)).sum(axis=1)
    return out


__all__ = ["BLOCK_ENTRIES", "BOUND_REACH", "RemapSolution", "TRUNCATION_BITS", "design_width", "distance_loss", "loss_profile",
           "reach", "released_row_costs", "remap_bound", "solve_geometric_remap", "window_weights", "windowed_remap"]
