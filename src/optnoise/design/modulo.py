"""The best noise added modulo ``n + 1`` for a cost of the released value.

Noise mod ``n + 1`` is the circulant channel ``P[q, y] = f((y - q) mod (n+1))`` (Kadam et al.
2024). For a cost of the released value over a prior its expected cost is linear in ``f``
(:func:`~optnoise.costs.modulo_cost_vector`), so the finite LP/MILP finds it exactly; in the
worst case over the true answer it is not (a maximum of ``n + 1`` linear forms), and the
channel LP constrained to circulant channels does (:mod:`.channel_design`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from ..analysis import privacy_profile
from ..costs import ReleasedCost, channel_cost, cost_vector, modulo_cost_vector, wrapped_squared_error
from ..errors import DesignError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import CyclicPMF
from ..target import Target, resolve_target
from .channel_design import solve_channel
from .channel_model import cyclic_pairs, ordered_pairs
from .finite import FiniteDesign, solve_finite
from .request import Request, check_n


def noise_neighbourhood(pairs: Iterable[tuple[int, int]] | InputPairs | Neighbourhood | None,
                         size: int) -> Neighbourhood:
    """Query distances for noise mod ``size``: a :class:`Neighbourhood` as given; pairs become
    their differences ``a - b`` (directed, as listed), so the noise protects every pair."""
    if isinstance(pairs, Neighbourhood):
        return pairs
    prs = ordered_pairs(pairs, size)
    return Neighbourhood(tuple(sorted({a - b for a, b in prs})), directed=True)


def solve_modulo(request: Request) -> FiniteDesign:
    """The modulo noise of a validated request (``problem == "modulo"``): :func:`optimal_modulo_noise`."""
    size, tgt, name = request.size, request.target, request.cost_name
    nb = noise_neighbourhood(request.neighbours, size)
    _, L, pi = request.loss
    if not request.loss_worst:
        fd = solve_finite(Request(space="cyclic", n=size - 1, target=tgt, neighbourhood=nb,
                                  cost=modulo_cost_vector(L, pi), time_limit=request.time_limit,  # type: ignore[arg-type]
                                  max_memory=request.max_memory))
        return replace(fd, cost=name)
    d = solve_channel(Request(space="channel", n=size - 1, target=tgt,
                              neighbourhood=InputPairs(cyclic_pairs(size - 1, nb), directed=True), cost=L,
                              worst_case=True, constraints=("circulant",), time_limit=request.time_limit))
    f = np.array(d.matrix[0])
    pmf = CyclicPMF(f / f.sum())
    if not privacy_profile(pmf, nb).meets(tgt):  # type: ignore[arg-type]
        raise DesignError("the circulant channel's first row does not meet the target as noise; refusing to "
                          "return it")
    sq_worst, sq_avg = wrapped_squared_error(pmf.probs)
    return FiniteDesign(
        pmf=pmf, cost=name, expected_cost=channel_cost(pmf, L, worst_case=True),  # type: ignore[arg-type]
        error_rate=float(1.0 - pmf.probs[0]),
        noise_second_moment=float(cost_vector("noise-second-moment", (size,)) @ pmf.probs),
        squared_error_worst=sq_worst, squared_error_average=sq_avg, target=tgt, neighbourhood=nb,  # type: ignore[arg-type]
        method=d.method, optimal=True, solve_seconds=d.solve_seconds,
        notes=d.notes + ("worst case over q: the channel LP constrained to circulant channels (noise mod n+1)",))


def optimal_modulo_noise(n: int, *, epsilon: float | None = None, delta: float = 0.0, notion: str = "dp",
                         target: Target | None = None,
                         neighbourhood: Iterable[tuple[int, int]] | InputPairs | Neighbourhood | None = None,
                         cost: str | ReleasedCost | np.ndarray = "abs-error",
                         prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False,
                         time_limit: float | None = None) -> FiniteDesign:
    """The best noise added modulo ``n + 1`` for a cost of the released value.

    ``neighbourhood``: query distances (a :class:`Neighbourhood`, cyclic as for any modulo
    noise), or input pairs, whose differences ``a - b`` the noise then protects (directed, as
    listed), so that its channel meets the target on exactly those pairs -- and on all their
    rotations, e.g. the wrap pair ``(n, 0)`` for distance 1: a cyclic noise cannot tell them
    apart. Default: distance 1, symmetric.

    Prior-averaged: :func:`optnoise.design.finite.design_finite` with the cost vector
    :func:`~optnoise.costs.modulo_cost_vector` (exact: the objective is linear in the PMF).
    Worst case over ``q``: the channel LP with the constraint ``circulant`` over the cyclic
    pairs (:func:`cyclic_pairs`); its first row is the noise PMF (the per-answer costs differ
    unless the loss is circular, so no cost vector captures the maximum).

    Returns a :class:`~optnoise.design.finite.FiniteDesign` whose ``cost`` is the
    released-value cost's name and ``expected_cost`` its value (prior-averaged or worst).
    A thin wrapper, kept for one version (deprecated): ``optnoise.design(optnoise.Request(
    space="cyclic", n=n, target=..., cost=..., prior=..., worst_case=...))``.
    """
    tgt = resolve_target(epsilon, delta, notion, target)
    size = check_n(n)[0]
    nb = neighbourhood if isinstance(neighbourhood, Neighbourhood) else \
        InputPairs(ordered_pairs(neighbourhood, size), directed=True)
    if isinstance(cost, str) and prior is None and not worst_case:
        cost = ReleasedCost(cost)   # a released-value cost over a uniform answer, not a noise cost
    return solve_modulo(Request(space="cyclic", n=n, target=tgt, neighbourhood=nb, cost=cost, prior=prior,
                                worst_case=worst_case, time_limit=time_limit))

__all__ = ["noise_neighbourhood", "optimal_modulo_noise", "solve_modulo"]
