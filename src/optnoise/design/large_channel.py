"""Channels on ``{0..n}`` beyond the dense designs (a count over a million households): the
calibrated clamped noise, with its proven distance from the optimum.

For ``n > LARGE_FROM`` no ``(n+1) x (n+1)`` channel is formed. A request under pure DP with
neighbours one apart and a loss of ``|y - q|`` non-decreasing in it (``er``, ``abs-error``,
``sq-error``; prior-averaged or worst case) is answered by the clamped geometric mechanism,
``clamp(q + eta, 0, n)`` with two-sided geometric ``eta`` calibrated to the target (Ghosh,
Roughgarden & Sundararajan 2009's range-restricted geometric mechanism; for ``abs-error``
under a uniform prior it is their optimal geometric-plus-remap up to the ends). It is:

* **certified exactly** as the noise at distance 1 (the calibrated family's quantized weights,
  :mod:`optnoise.design.calibrate`): clamping is post-processing, and pure DP is closed under
  post-processing (the query package releases its huge counts the same way);
* **costed** in ``O(n)`` and rounded up (:func:`optnoise.design.block_bound.clamped_costs`);
* **bounded** below by the larger of two proven lower bounds on the optimal channel's cost:
  the whole chain's dual certificate checked column by column over a window
  (:func:`optnoise.design.block_bound.window_chain_bound`, uniform prior; usually the one
  reported) and the block relaxation (:func:`optnoise.design.block_bound.block_lower_bound`),
  so ``gap`` says how much any channel could still save.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..costs import describe_cost
from ..errors import InvalidParameterError
from ..mechanism import Mechanism
from ..neighbourhood import InputPairs, Neighbourhood
from ..target import Target
from .block_bound import (
    MONOTONE_COSTS, BlockBound, block_lower_bound, clamped_costs, window_chain_bound, worst_case_bound,
)
from .report import DesignResult, OfTarget, ProvenBound
from .request import Request

#: Domains above this size (``n > LARGE_FROM``) are answered here when the request allows it
#: (:func:`large_request`): the chain design's ``(n+1)^2`` channel would take over 3 GB and minutes.
LARGE_FROM = 20_000


@dataclass(frozen=True, eq=False)
class LargeChannelDesign(ProvenBound, OfTarget, DesignResult):
    """The calibrated clamped noise on ``{0..n}`` with its cost and a proven bound on the optimum.

    Attributes
    ----------
    mechanism:
        The noise ``eta`` on the integer line (what is sampled and certified, distance 1); the
        released value is ``clamp(q + eta, 0, n)``.
    n, cost, prior, worst_case:
        The objective (``prior`` ``None``: uniform).
    expected_cost, cost_average, cost_worst:
        The objective on the mechanism, and its prior average and worst case (rounded up).
    lower_bound, bound_method, block:
        The proven lower bound on the optimal channel's objective, what gave it, the block bound.
    """

    mechanism: Mechanism
    n: int
    cost: str
    prior: np.ndarray | None
    worst_case: bool
    expected_cost: float
    cost_average: float
    cost_worst: float
    target: Target
    lower_bound: float | None
    bound_method: str
    block: BlockBound
    solve_seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    window: int | None = None

    method = "clamped-geometric"

    def report_json(self) -> dict:
        """The report (docs/cli.md ``design --form channel``, large ``n``), without the mechanism's keys."""
        return {
            "form": "channel", "n": self.n, "released": f"clamp(q + eta, 0, {self.n}) with eta the mechanism's noise",
            "boundary": "clamp", "cost": self.cost, "cost_meaning": describe_cost(self.cost),
            "prior": "uniform" if self.prior is None else self.prior.tolist(), "worst_case": self.worst_case,
            "expected_cost": self.expected_cost,
            "released_error": {self.cost: {"average": self.cost_average, "worst": self.cost_worst}},
            **self.solver_json({"distances": [1], "directed": False}, bound_method=self.bound_method),
            "block": self.block.block, "blocks": self.block.blocks, "block_bound": self.block.value,
            "window": self.window, "block_seconds": self.block.seconds,
            "notes": list(self.notes),
        }


def one_apart(request: Request) -> bool:
    """Whether the request protects exactly the neighbours one apart, both ways (read from the
    neighbourhood given where it is one, without listing the pairs)."""
    if request.unit == "record":
        return False
    nb = request.neighbourhood
    if nb is None:
        return True
    if isinstance(nb, Neighbourhood):
        return nb.dimension == 1 and nb.integer_shifts() == [-1, 1]
    n = request.largest
    pairs = tuple(nb.ordered(n + 1)) if isinstance(nb, InputPairs) else ()
    return len(pairs) == 2 * n and set(pairs) == {p for q in range(n) for p in ((q, q + 1), (q + 1, q))}


def _named_cost(request: Request) -> tuple[str, np.ndarray | None, bool] | None:
    """``(name, prior or None, worst case)`` of a named monotone cost, else ``None``."""
    from ..costs import ReleasedCost, check_prior
    cost = request.cost if request.cost is not None else "abs-error"
    if isinstance(cost, ReleasedCost):
        name, prior, worst = cost.name, cost.prior, cost.worst_case
    elif isinstance(cost, str):
        name, prior, worst = cost.strip(), request.prior, bool(request.worst_case)
    else:
        return None
    if name not in MONOTONE_COSTS:
        return None
    return name, None if prior is None else check_prior(prior, request.size), worst


def large_request(request: Request) -> bool:
    """Whether :func:`solve_large_channel` answers the request: ``space="channel"``, ``n >
    LARGE_FROM``, pure DP, neighbours one apart, no structural constraint, a named cost of
    :data:`~optnoise.design.block_bound.MONOTONE_COSTS`."""
    t = request.target
    return (request.space == "channel" and request.largest > LARGE_FROM and t.delta == 0  # type: ignore[union-attr]
            and not request.constraints and _named_cost(request) is not None and one_apart(request))


def clamped_geometric(n: int, target: Target) -> Any:
    """The geometric noise calibrated to ``target`` at distance 1
    (:class:`~optnoise.design.calibrate.CalibratedDesign`: its parameter and mechanism, whose
    quantized weights are certified exactly), to be released clamped to ``{0..n}``."""
    from .calibrate import calibrate
    return calibrate("geometric", Request(space="integer", n=n, target=target, neighbourhood=Neighbourhood.sd(1),
                                          family="geometric", boundary="clamp"))


def solve_large_channel(request: Request) -> LargeChannelDesign:
    """The clamped geometric for a large channel request (module docstring), with its cost
    and the block relaxation's proven bound on the optimum."""
    t0 = time.perf_counter()
    if not large_request(request):
        raise InvalidParameterError("request", "a channel request", f"n > {LARGE_FROM}, pure DP, neighbours one "
                                    "apart, no constraint, a cost of " + ", ".join(MONOTONE_COSTS))
    name, prior, worst = _named_cost(request)  # type: ignore[misc]
    n, target = request.largest, request.target
    mech = clamped_geometric(n, target).mechanism  # type: ignore[arg-type]
    mech.quantize()   # certified now (refused here if it cannot be)
    costs = clamped_costs(mech.pmf, n, name, prior)  # type: ignore[arg-type]
    bound = block_lower_bound(n, target.epsilon, name, None if worst else prior)  # type: ignore[union-attr]
    value, method, window = bound.value, bound.method, None
    if prior is None or worst:   # the uniform prior: the whole chain's certificate, windowed
        found = window_chain_bound(n, target.epsilon, name)  # type: ignore[union-attr]
        if found is not None and found[0] > value:
            value, window = found
            method = (f"chain-dual of the whole domain, each column checked over a window of {window} (outward "
                      f"rounded, at e^eps; docs/proofs/channel-lower-bounds.md); the block relaxation (B = "
                      f"{bound.block}) gives {bound.value!r}")
    if worst:
        value = worst_case_bound(value, n)
    notes = ("the clamped geometric: clamp(q + eta, 0, n), eta the geometric noise certified exactly at distance 1 "
             "(clamping is post-processing: pure DP keeps its epsilon); sample eta and clamp",
             f"no {n + 1} x {n + 1} channel is formed: the cost is computed in O(n) (rounded up) and the lower "
             f"bound on every channel's cost by the block relaxation with blocks of {bound.block} answers"
             + ("" if window is None else f" and, better, the whole chain's dual certificate checked over windows "
                                         f"of {window}"),
             *(("the worst case is bounded by the uniform average (every channel's worst case is at least it)",)
               if worst else ()))
    return LargeChannelDesign(
        mechanism=mech, n=n, cost=name, prior=prior, worst_case=worst,
        expected_cost=costs.worst if worst else costs.average, cost_average=costs.average, cost_worst=costs.worst,
        target=target, lower_bound=value if math.isfinite(value) else None,  # type: ignore[arg-type]
        bound_method=method, block=bound, window=window, solve_seconds=time.perf_counter() - t0, notes=notes)


#: Largest domain :func:`proven_gap` scores: a release's cell pays it once (about 0.5 s at this
#: size on 2 loaded cores; 6.6 s at n = 10^6, mostly ``np.nextafter`` over arrays of ``n``).
PROVEN_GAP_MAX_N = 200_000
#: Answers per block of :func:`proven_gap`'s block relaxation, twice its windowed candidate's edge
#: (a release's cell: well under a second).
CELL_BLOCK = 512


def proven_gap(pmf: Any, n: int, epsilon: float, cost: str = "abs-error", block: int = CELL_BLOCK) -> dict:
    """How far releasing ``clamp(q + eta, 0, n)`` (noise ``pmf`` certified for pure ``epsilon``,
    neighbours one apart) is above the best channel for a uniform ``q``: ``expected_cost``
    (rounded up), the proven ``lower_bound`` (the larger of the windowed chain certificate, its
    candidate's ends from ``{0..2 block}``, and the block relaxation), ``gap`` and
    ``bound_method``; ``{}`` beyond :data:`PROVEN_GAP_MAX_N` (the O(n) arrays would be large)."""
    from .bounds import relative_gap
    if n > PROVEN_GAP_MAX_N:
        return {}
    c = clamped_costs(pmf, n, cost)
    b = block_lower_bound(n, epsilon, cost, block=block)
    value, method = b.value, b.method
    found = window_chain_bound(n, epsilon, cost, edge=block // 2)
    if found is not None and found[0] > value:
        value, method = found[0], f"chain-dual of the whole domain, each column checked over a window of {found[1]}"
    return {"expected_cost": c.average, "lower_bound": value, "gap": relative_gap(c.average, value),
            "bound_method": method}


#: The mechanisms ``compare --form channel`` scores beyond :data:`LARGE_FROM` (no channel matrix
#: is formed: the others' costs need one).
LARGE_MECHANISMS: tuple[str, ...] = ("optimal-channel", "clamped-geometric")


@dataclass(frozen=True)
class LargeRow:
    """One mechanism of a large comparison: its parameter and its costs (rounded up)."""

    name: str
    parameter: float | None
    parameter_name: str | None
    average: float
    worst: float
    error_rate: float


def large_rows(request: Request, names: tuple[str, ...]) -> tuple[LargeChannelDesign, tuple[LargeRow, ...]]:
    """The design of a large request (:func:`solve_large_channel`) and each of ``names``
    (:data:`LARGE_MECHANISMS`) scored in ``O(n)``: the design itself, and the calibrated clamped
    geometric (the same noise: Ghosh et al.'s mechanism is what the design returns here)."""
    bad = [m for m in names if m not in LARGE_MECHANISMS]
    if bad or not names:
        raise InvalidParameterError("mechanisms", ",".join(bad or names), f"at n > {LARGE_FROM} (no channel matrix is "
                                    "formed): " + ", ".join(LARGE_MECHANISMS))
    d = solve_large_channel(request)
    er = clamped_costs(d.mechanism.pmf, d.n, "er").worst  # type: ignore[arg-type]
    rows = []
    for name in names:
        if name == "optimal-channel":
            rows.append(LargeRow(name, None, None, d.cost_average, d.cost_worst, er))
        else:
            found = clamped_geometric(d.n, d.target)
            c = clamped_costs(found.mechanism.pmf, d.n, d.cost, d.prior)
            rows.append(LargeRow(name, found.parameter, found.parameter_name, c.average, c.worst, er))
    return d, tuple(rows)


__all__ = ["CELL_BLOCK", "LARGE_FROM", "LARGE_MECHANISMS", "PROVEN_GAP_MAX_N", "proven_gap", "LargeRow", "large_rows", "LargeChannelDesign", "clamped_geometric", "large_request", "one_apart",
           "solve_large_channel"]
