"""The channel for neighbours one apart at large ``n`` as the geometric noise and a remap: the
request it answers and its report, without an ``(n+1) x (n+1)`` matrix.

:func:`remap_request` says which channel requests :func:`solve_remap_channel` answers (pure DP,
exactly the neighbours one apart, a prior-averaged cost of
:data:`~optnoise.design.block_bound.MONOTONE_COSTS`, no structural constraint, ``COMPACT_FROM <
n <= LARGE_FROM``); the design is :func:`~optnoise.design.geometric_remap.solve_geometric_remap`,
the mechanism the geometric noise on the integer line with a
:class:`~optnoise.sampling.clamp_remap.ClampRemap` (the file lists the noise's window, its two
tails and the outputs the remap moves: a few hundred numbers, not ``(n+1)^2``), and the report
summarises the channel instead of listing it. Below ``COMPACT_FROM`` the dense channel of
:mod:`optnoise.design.chain` is kept: the query's count cells and ``compare`` use its matrix.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..costs import ReleasedCost, check_prior, describe_cost
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..sampling.clamp_remap import ClampRemap
from ..target import Target
from .block_bound import MONOTONE_COSTS
from .geometric_remap import RemapSolution, released_row_costs, solve_geometric_remap
from .large_channel import LARGE_FROM, one_apart
from .report import DesignResult, OfTarget, ProvenBound
from .request import Request

#: Domains above this size (``n > COMPACT_FROM``) take the compact design (the query's cells
#: design channels up to ``n = 2,000`` and use their matrix; below it the dense chain is a second).
COMPACT_FROM = 2_000


def remap_cost(request: Request) -> tuple[str, np.ndarray] | None:
    """``(name, prior)`` of a prior-averaged cost of :data:`MONOTONE_COSTS`, else ``None``."""
    cost = request.cost if request.cost is not None else "abs-error"
    if isinstance(cost, ReleasedCost):
        if cost.worst_case or cost.name not in MONOTONE_COSTS:
            return None
        return cost.name, cost.weights(request.size)
    if not isinstance(cost, str) or cost.strip() not in MONOTONE_COSTS or request.worst_case:
        return None
    return cost.strip(), check_prior(request.prior, request.size)


def remap_request(request: Request) -> bool:
    """Whether :func:`solve_remap_channel` answers a channel request (module docstring)."""
    t = request.target
    return (request.space == "channel" and request.solver.exploit_structure and isinstance(request.largest, int)
            and COMPACT_FROM < request.largest <= LARGE_FROM and t is not None and t.notion != "attack"
            and t.delta == 0 and not request.constraints and request.releases == 1 and request.family is None
            and remap_cost(request) is not None and one_apart(request))


@dataclass(frozen=True, eq=False)
class RemapChannelDesign(ProvenBound, OfTarget, DesignResult):
    """Result of :func:`solve_remap_channel`: the geometric noise and a remap on ``{0..n}``.

    Attributes
    ----------
    solution:
        The design (:class:`~optnoise.design.geometric_remap.RemapSolution`: ``n``, ``alpha``, the
        remap, the cost, the proven bound and the windows).
    cost, prior, target:
        The cost's name, the prior (normalised) and the target.
    """

    solution: RemapSolution
    cost: str
    prior: np.ndarray
    target: Target
    solve_seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    method = "geometric-remap"
    worst_case = False

    @property
    def n(self) -> int:
        return self.solution.n

    @property
    def expected_cost(self) -> float:   # type: ignore[override]
        """The prior-averaged cost (the windows' float sums plus what they leave out)."""
        return self.solution.cost

    @property
    def lower_bound(self) -> float | None:   # type: ignore[override]
        """The proven lower bound on every channel's cost (``None`` where none was proven)."""
        value = self.solution.bound.value
        return value if math.isfinite(value) else None

    @property
    def bound_method(self) -> str:
        return (f"{self.solution.bound.method} of the whole domain, each column checked over a window of "
                f"{self.solution.window} (outward rounded, at e^eps)")

    @cached_property
    def release(self) -> ClampRemap:
        return ClampRemap.of(self.solution.remap)

    @cached_property
    def mechanism(self) -> Mechanism:
        """The geometric noise at the design's ``alpha`` (exact tails), neighbours one apart, with
        its release on ``{0..n}`` (docs/proofs/geometric-remap.md, claim 3)."""
        from ..families.geometric import geometric_pmf
        return Mechanism(geometric_pmf(self.solution.alpha), Neighbourhood.sd(1), self.target,
                         "geometric noise with a remap", release=self.release)

    @cached_property
    def matrix(self) -> np.ndarray:
        """The dense channel ``P[q, y]`` (``(n+1)^2`` floats: built only when asked, by ``compare``
        and ``--plot``)."""
        from .chain import remapped_geometric
        P = remapped_geometric(self.n + 1, self.solution.alpha, np.asarray(self.solution.remap))
        P /= P.sum(axis=1, keepdims=True)
        P.flags.writeable = False
        return P

    def released_errors(self) -> dict[str, dict[str, float]]:
        rows = released_row_costs(self.n, self.solution.alpha, np.asarray(self.solution.remap))
        return {k: {"average": float(self.prior @ r), "worst": float(r.max())} for k, r in rows.items()}

    def report_json(self) -> dict:
        """The report (docs/cli.md ``design --form channel``): the channel summarised by its
        structure, not listed."""
        released = self.released_errors()
        uniform = bool(np.allclose(self.prior, 1.0 / self.prior.size, rtol=0, atol=1e-15))
        s, r = self.solution, self.release
        return {
            "form": "channel", "n": self.n,
            "released": f"remap(clip(q + eta, 0, {self.n})) with eta the mechanism's geometric noise",
            "structure": {"kind": "geometric noise with a remap", "alpha": s.alpha, "remapped_outputs": len(r.outputs),
                          "in_words": f"q + eta, eta two-sided geometric with ratio {s.alpha:.6g} (pure eps at "
                                      f"distance 1), clamped to 0..{self.n}; {len(r.outputs)} of its outputs "
                                      f"released as another value (the user's best remap; listed in the "
                                      f"mechanism's release.remap)"},
            "cost": self.cost, "cost_meaning": describe_cost(self.cost),
            "prior": "uniform" if uniform else self.prior.tolist(),
            "worst_case": False, "expected_cost": self.expected_cost,
            "released_error": released, "error_rate": released["er"]["average"],
            "squared_error": released["sq-error"],
            **self.solver_json({"distances": [1], "directed": False}, bound_method=self.bound_method),
            "design_seconds": s.seconds[0], "bound_seconds": s.seconds[1], "window": s.window, "width": s.width,
            "objective": self.expected_cost, "constraints": [], "constraint_violations": {},
            "repair": {"kind": "none", "weight": 0.0, "lifted_mass": 0.0},
            "variables": self.n + 1, "rows": self.n + 1, "notes": list(self.notes),
        }


def solve_remap_channel(request: Request) -> RemapChannelDesign:
    """Answer a request of :func:`remap_request` (:func:`~optnoise.design.geometric_remap.solve_geometric_remap`)."""
    t0 = time.perf_counter()
    name, prior = remap_cost(request)  # type: ignore[misc]
    target = request.target
    sol = solve_geometric_remap(request.largest, target.epsilon, name, prior)  # type: ignore[union-attr, arg-type]
    notes = ("Ghosh et al.'s range-restricted geometric mechanism with the user's best deterministic remap, stored as "
             "the geometric noise (certified exactly at distance 1) and the outputs the remap moves; clamping and "
             "remapping are post-processing (docs/proofs/geometric-remap.md)",
             f"no {request.size} x {request.size} channel is formed: the remap and the cost over windows of "
             f"{2 * sol.width + 1} answers (what they leave out, at most {sol.truncation:.2g}, is added to the "
             f"cost); the bound is a dual certificate checked column by column over windows of {sol.window} at "
             "e^eps in outward-rounded arithmetic")
    return RemapChannelDesign(solution=sol, cost=name, prior=prior, target=target,  # type: ignore[arg-type]
                              solve_seconds=time.perf_counter() - t0, notes=notes)


__all__ = ["COMPACT_FROM", "RemapChannelDesign", "remap_cost", "remap_request", "solve_remap_channel"]
