"""The per-record pure-DP channel as block randomized response: the request it answers and
its report, without an ``(n+1) x (n+1)`` matrix.

:func:`block_request` says which channel requests :func:`solve_block_channel` answers (per
record, pure DP, a prior-averaged ``abs-error`` or ``sq-error``, no structural constraint,
``n > STRUCTURED_FROM``); the design is :func:`~optnoise.design.record_blocks.solve_record_blocks`,
the mechanism its ``k x k`` core with a :class:`~optnoise.sampling.block_map.BlockMap` (the
file lists ``k^2 + 2 k + 1`` numbers, not ``(n+1)^2``), and the report summarises the channel
(its intervals, outputs and two probabilities) instead of listing it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..costs import ReleasedCost, check_prior, describe_cost
from ..mechanism import Mechanism
from ..neighbourhood import InputPairs
from ..pmf import Channel
from ..sampling.block_map import BlockMap
from ..target import Target
from .record_blocks import Blocks, solve_record_blocks
from .report import DesignResult, OfTarget, ProvenBound
from .request import RECORD_BLOCKS_FROM, Request

def _cost_and_prior(request: Request) -> tuple[str | None, np.ndarray | None]:
    """The named cost and the normalised prior, without forming the loss matrix (``None``: a
    cost this design does not take)."""
    cost = request.cost if request.cost is not None else "abs-error"
    if isinstance(cost, ReleasedCost):
        if cost.worst_case:
            return None, None
        return cost.name, cost.weights(request.size)
    if isinstance(cost, str):
        return cost.strip(), check_prior(request.prior, request.size)
    return None, None


def block_request(request: Request) -> bool:
    """Whether :func:`solve_block_channel` answers a channel request
    (:attr:`~optnoise.design.request.Request.record_blocks`: per record, pure DP, ``n >
    RECORD_BLOCKS_FROM``, a prior-averaged ``abs-error`` or ``sq-error``, no structural
    constraint), decided from the request's fields before any pair is listed."""
    return bool(request.record_blocks)


@dataclass(frozen=True, eq=False)
class BlockChannelDesign(ProvenBound, OfTarget, DesignResult):
    """Result of :func:`solve_block_channel`: block randomized response on ``{0..n}``.

    Attributes
    ----------
    blocks:
        The intervals ``[starts[j], starts[j+1])``, their outputs and the design's ratio ``e``.
    n, cost, prior:
        The domain, the cost's name and the prior (normalised).
    expected_cost:
        The prior-averaged cost of the designed channel.
    lower_bound, bound_method:
        The proven lower bound on every per-record channel's cost, and what gave it.
    """

    blocks: Blocks
    n: int
    cost: str
    prior: np.ndarray
    expected_cost: float
    target: Target
    lower_bound: float | None
    bound_method: str
    solve_seconds: float
    outputs_tried: int
    rounds: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    method = "block-randomized-response"
    worst_case = False

    @cached_property
    def block_map(self) -> BlockMap:
        return BlockMap(self.blocks.starts if self.blocks.k > 1 else (0, 1, self.n + 1), self.blocks.outputs)

    @cached_property
    def mechanism(self) -> Mechanism:
        """The ``k x k`` core with its block map; neighbours: every pair of its rows (every pair
        of answers, docs/proofs/record-blocks.md claim 3). One interval is written as two
        equal rows (``{0}`` and ``{1..n}``), so that the core has a pair of neighbours."""
        core = self.blocks.core() if self.blocks.k > 1 else np.ones((2, 1))
        rows = core.shape[0]
        return Mechanism(Channel(core), InputPairs.complete(rows, directed=True), self.target,
                         f"block randomized response ({self.blocks.k} intervals)", blocks=self.block_map)

    def row_costs(self) -> dict[str, np.ndarray]:
        """Expected ``er``, ``abs-error`` and ``sq-error`` of the released value for every answer."""
        q = np.arange(self.n + 1)
        ys = np.asarray(self.blocks.outputs)
        own = self.block_map.rows_of(q) if self.blocks.k > 1 else np.zeros(q.size, dtype=np.int64)
        low, high = self.blocks.low, 1.0 - (self.blocks.k - 1) * self.blocks.low
        out = {}
        for name, f in (("er", lambda d: (d != 0).astype(float)), ("abs-error", lambda d: d.astype(float)),
                        ("sq-error", lambda d: d.astype(float) ** 2)):
            loss = f(np.abs(q[:, None] - ys[None, :]))
            out[name] = low * loss.sum(axis=1) + (high - low) * loss[q, own]
        return out

    def released_errors(self) -> dict[str, dict[str, float]]:
        return {k: {"average": float(self.prior @ r), "worst": float(r.max())} for k, r in self.row_costs().items()}

    def report_json(self) -> dict:
        """The report (docs/cli.md ``design --form channel``): the channel summarised by its
        structure, not listed."""
        released = self.released_errors()
        uniform = bool(np.allclose(self.prior, 1.0 / self.prior.size, rtol=0, atol=1e-15))
        b = self.blocks
        return {
            "form": "channel",
            "n": self.n,
            "structure": {"kind": "block randomized response", "intervals": b.k, "starts": list(b.starts),
                          "outputs": list(b.outputs), "own_output": 1.0 - (b.k - 1) * b.low, "each_other_output": b.low,
                          "in_words": f"answers in [starts[j], starts[j+1]) release outputs[j] with probability "
                                      f"{1.0 - (b.k - 1) * b.low:.6g} and each other output with {b.low:.6g}; "
                                      f"no other value is ever released ({b.k} intervals; starts and outputs with --json)"},
            "cost": self.cost,
            "cost_meaning": describe_cost(self.cost),
            "prior": "uniform" if uniform else self.prior.tolist(),
            "worst_case": False,
            "expected_cost": self.expected_cost,
            "released_error": released,
            "error_rate": released["er"]["average"],
            "squared_error": released["sq-error"],
            **self.solver_json(self.mechanism.neighbourhood.to_json(), bound_method=self.bound_method),
            "objective": self.expected_cost,
            "constraints": [],
            "constraint_violations": {},
            "repair": {"kind": "none", "weight": 0.0, "lifted_mass": 0.0},
            "variables": self.outputs_tried * (self.n + 2),
            "rows": (self.outputs_tried + 1) * (self.n + 1),
            "notes": list(self.notes),
        }


def solve_block_channel(request: Request) -> BlockChannelDesign:
    """Answer a request of :func:`block_request` (:func:`~optnoise.design.record_blocks.solve_record_blocks`)."""
    t0 = time.perf_counter()
    cost, prior = _cost_and_prior(request)
    target = request.target
    sol = solve_record_blocks(cost, prior, target.epsilon,  # type: ignore[arg-type, union-attr]
                              time_limit=None if request.time_limit is None else float(request.time_limit))
    notes = (f"randomized response over {sol.blocks.k} intervals of the answers, each released as one value; found "
             f"by coordinate descent and from the outputs of the restricted LP ({sol.outputs} outputs, {sol.rounds} "
             "rounds); the bound is a dual certificate on every output, checked at e^eps in outward-rounded "
             "arithmetic (docs/proofs/record-blocks.md)",)
    return BlockChannelDesign(
        blocks=sol.blocks, n=request.size - 1, cost=str(cost), prior=prior, expected_cost=sol.cost,  # type: ignore[arg-type]
        target=target, lower_bound=sol.bound.value if math.isfinite(sol.bound.value) else None,  # type: ignore[arg-type]
        bound_method=f"{sol.bound.method} on every output (outward rounded, at e^eps)",
        solve_seconds=time.perf_counter() - t0, outputs_tried=sol.outputs, rounds=sol.rounds, notes=notes)


__all__ = ["RECORD_BLOCKS_FROM", "BlockChannelDesign", "block_request", "solve_block_channel"]
