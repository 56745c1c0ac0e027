"""Baselines as channels on ``{0..n}``, each calibrated to a target, and Ghosh et al.'s channels.

* **Ghosh, Roughgarden & Sundararajan (2009)**: the range-restricted (clamped) geometric
  mechanism (:func:`truncated_geometric_channel`) and the best post-processing of any channel
  for a loss (:func:`optimal_post_processing`);
* **calibrated baselines** (:func:`calibrated_baselines`): the clamped geometric, the clamped
  discrete Gaussian, randomized response and the exponential mechanism as channels, each the
  least noisy member of its family meeting the target on the input pairs
  (:func:`optnoise.design.calibrate.calibrate`), and the optimal modulo noise
  (:mod:`.modulo`), with their costs under the same objective: what ``compare --form
  channel`` ranks against the optimal channel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..costs import ReleasedCost, channel_cost, check_prior
from ..errors import InvalidParameterError
from ..families import calibration_of
from ..families.baselines import clamp_channel
from ..families.geometric import geometric_pmf
from ..neighbourhood import InputPairs
from ..pmf import Channel, channel_matrix
from ..target import Target, resolve_target
from .calibrate import calibrate
from .channel_model import ordered_pairs
from .channel_repair import channel_screen
from .model import sum_rows
from .modulo import optimal_modulo_noise
from .request import Request, check_n, released_objective
from .solver import solve_lp


# ======================================================= Ghosh et al.
def truncated_geometric_channel(n: int, epsilon: float) -> np.ndarray:
    """Ghosh, Roughgarden & Sundararajan's range-restricted geometric mechanism on ``{0..n}``.

    ``y = clamp(q + Z, 0, n)`` with two-sided geometric ``Z``, ``P(Z = k) ∝ alpha^|k|``,
    ``alpha = e^-epsilon``: ``P[q, y] = (1 - alpha)/(1 + alpha) alpha^|y - q|`` inside,
    ``P[q, 0] = alpha^q / (1 + alpha)`` and ``P[q, n] = alpha^(n - q) / (1 + alpha)``.
    Pure ``epsilon``-DP for neighbours one apart (it is post-processing of the geometric
    mechanism). Built by :func:`optnoise.families.baselines.clamp_channel`.
    """
    size = check_n(n)[0]
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
    size = check_n(n)[0]
    if name not in BASELINE_FAMILIES:
        raise InvalidParameterError("name", name, ", ".join(BASELINE_FAMILIES))
    family, boundary = BASELINE_FAMILIES[name]
    prs = ordered_pairs(pairs, size)
    request = Request(space="channel", n=size - 1, target=target, neighbourhood=InputPairs(prs, directed=True),
                      family=family, boundary=boundary)
    found = calibrate(family, request, screen=channel_screen(prs, target))
    return found.parameter, np.array(channel_matrix(found.representation))


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
    size = check_n(n)[0]
    tgt = resolve_target(epsilon, delta, notion, target)
    prs = ordered_pairs(pairs, size)
    _, L, pi, worst = released_objective(cost, prior, worst_case, size)
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


__all__ = ["BASELINES", "BASELINE_FAMILIES", "BaselineChannel", "PostProcessing", "calibrate_channel",
           "calibrated_baselines", "optimal_post_processing", "truncated_geometric_channel"]
