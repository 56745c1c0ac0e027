"""Optimal channels on a finite ordered domain ``{0..n}`` (outputs stay in the domain).

A *channel* is a row-stochastic matrix ``P[q, y]``: row ``q`` is the distribution of the
released value ``y`` when the true answer is ``q`` (docs/architecture.md: the universal
representation). Noise added modulo ``n + 1`` (Kadam et al. 2024) is the special case of a
*circulant* channel; the clamped geometric of Ghosh, Roughgarden & Sundararajan (2009) and
randomized response are others. The design finds the best channel of all for a cost a user
feels (:mod:`optnoise.costs`, :class:`~optnoise.costs.ReleasedCost`: a loss ``L[q, y]`` of the
released value, averaged over a prior on ``q`` or in the worst case over ``q``), under
approximate DP (an LP) or PDP (a MILP, small ``n``), with Cormode et al.'s structural
constraints (:data:`CONSTRAINTS`).

This module is the face of the channel designs; the work is split by job:

* :mod:`.channel_model` -- the LP/MILP and its lossless reductions;
* :mod:`.channel_repair` -- the answer made to meet the target exactly, the screen, the
  structural constraints' violations and the diagnosis of infeasible ones;
* :mod:`.channel_design` -- solve, repair and report one request (:class:`ChannelDesign`);
* :mod:`.channel_baselines` -- Ghosh et al.'s channels and the calibrated baselines;
* :mod:`.modulo` -- the optimal noise mod ``n + 1`` for a released-value cost.

What is released is the quantized channel with its exact certificate
(``design.report.certificate``, :meth:`~optnoise.mechanism.Mechanism.quantize`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ..costs import ReleasedCost
from ..neighbourhood import InputPairs
from ..target import Target, resolve_target
from .channel_baselines import (
    BASELINE_FAMILIES, BASELINES, BaselineChannel, PostProcessing, calibrate_channel, calibrated_baselines,
    optimal_post_processing, truncated_geometric_channel,
)
from .channel_design import BAND_REACH, STRUCTURED_FROM, ChannelDesign, band_request, solve_channel, structured_request
from .channel_model import MAX_PDP_N, all_pairs, cyclic_pairs, ordered_pairs, pairs_from_distances
from .channel_repair import CONSTRAINT_TOLERANCE, channel_screen, constraint_violations
from .modulo import optimal_modulo_noise
from .request import CONSTRAINTS, MAX_NONZEROS, Request, SolverOptions, check_n


def design_channel(n: int, *, epsilon: float | None = None, delta: float = 0.0, notion: str = "dp",
                   target: Target | None = None,
                   pairs: Iterable[tuple[int, int]] | InputPairs | str | None = None,
                   cost: str | ReleasedCost | np.ndarray = "abs-error",
                   prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False,
                   constraints: Iterable[str] = (), exploit_structure: bool = True,
                   time_limit: float | None = None) -> ChannelDesign:
    """Optimal channel ``P[q, y]`` on ``{0..n}`` under a privacy target.

    Parameters
    ----------
    n:
        Largest answer; inputs and outputs are ``{0..n}``.
    epsilon, delta, notion:
        The target (:class:`~optnoise.target.Target`); ``delta = 0`` is pure ``epsilon``-DP
        (then ``notion`` does not matter). ``"dp"``: approximate DP, an LP; ``"pdp"``: Kadam
        Def. 2 per pair of rows, a MILP with ``|pairs| (n + 1)`` binaries, refused for
        ``n >`` :data:`MAX_PDP_N`.
    target:
        The same as a :class:`~optnoise.target.Target` (instead of the three above).
    pairs:
        Ordered neighbouring input pairs ``(a, b)`` as given, or an :class:`InputPairs`
        (expanded by its own rule). Default: neighbours one apart, both directions
        (:func:`pairs_from_distances` ``(n, [1])``). Per-record release: ``"all"`` (or
        :func:`all_pairs`; the string lets a too large domain be refused before the pairs
        are listed).
    cost:
        A released-value cost of :data:`optnoise.costs.RELEASED_COSTS`, a
        :class:`~optnoise.costs.ReleasedCost` (with its prior or worst case), or an
        ``(n+1) x (n+1)`` loss matrix ``L[q, y]``.
    prior:
        Weights on the answers for the averaged objective (uniform by default).
    worst_case:
        Minimise ``max_q sum_y P[q, y] L[q, y]`` (epigraph variable) instead.
    constraints:
        Any of :data:`CONSTRAINTS`.
    exploit_structure:
        Use the lossless reductions (complete pair graph under pure DP; mirror symmetry under
        DP; circulant channels by their first row). ``False`` writes the plain model, for
        cross-checks.
    time_limit:
        Seconds for the solver; reaching it raises :class:`DesignError`.

    Returns
    -------
    ChannelDesign
        ``.mechanism`` (the channel with its pairs and target), ``.expected_cost``, the float
        ``.analysis``, the exact ``.certificate`` and how the design was obtained.

    Raises
    ------
    InvalidParameterError
        Bad parameters (named), or a PDP problem too large (parameter ``n``).
    DesignError
        Infeasible structural constraints (the message names the constraint(s)), time limit,
        or a solver failure.

    Notes
    -----
    Without structural constraints the problem is always feasible (the uniform channel
    meets every target). Sizes: the LP has ``(n+1)^2`` variables (about half with the mirror
    reduction); pure DP writes ``|pairs| (n+1)`` ratio rows (``(n+1)^2`` with the
    complete-graph reduction); ``delta > 0`` adds ``|pairs| (n+1)`` epigraph variables and
    rows, which is what limits the per-record unit with ``delta > 0`` (``|pairs| = n (n+1)``,
    no reduction known; see docs/benchmarks.md). Above ``n =`` :data:`STRUCTURED_FROM`,
    :func:`structured_request` and :func:`band_request` say which requests take a structured
    solver; every design carries a proven ``lower_bound`` and its ``gap``.

    >>> d = design_channel(1, epsilon=math.log(3), pairs=all_pairs(1), cost="er")
    >>> round(d.expected_cost, 6), d.mechanism.kind     # binary randomized response: 1/(1 + e^eps)
    (0.25, 'channel')
    """
    size = check_n(n)[0]
    tgt = resolve_target(epsilon, delta, notion, target)
    record = isinstance(pairs, str) and pairs == "all"   # refused by size before the pairs are listed
    nb = None if record else InputPairs(ordered_pairs(pairs, size), directed=True)
    return solve_channel(Request(space="channel", n=n, target=tgt, neighbourhood=nb, unit="record" if record else None,
                                 cost=cost, prior=prior, worst_case=worst_case, constraints=tuple(constraints),
                                 time_limit=time_limit, solver=SolverOptions(exploit_structure=bool(exploit_structure))))


__all__ = [
    "BAND_REACH",
    "BASELINES",
    "BASELINE_FAMILIES",
    "CONSTRAINTS",
    "CONSTRAINT_TOLERANCE",
    "MAX_NONZEROS",
    "MAX_PDP_N",
    "BaselineChannel",
    "ChannelDesign",
    "PostProcessing",
    "all_pairs",
    "calibrate_channel",
    "calibrated_baselines",
    "channel_screen",
    "constraint_violations",
    "cyclic_pairs",
    "design_channel",
    "optimal_modulo_noise",
    "optimal_post_processing",
    "pairs_from_distances",
    "STRUCTURED_FROM",
    "band_request",
    "structured_request",
    "truncated_geometric_channel",
]
