"""The optimal channel on ``{0..n}`` for a request: solve, repair, report.

:func:`solve_channel` answers a :class:`~optnoise.design.request.Request` with
``space="channel"``: it writes the model (:mod:`.channel_model`, with its lossless
reductions), solves it (the LP under approximate DP; the MILP and its polishing LP under
PDP), makes the answer meet the target exactly in the float analysis (:mod:`.channel_repair`)
and reports it as a :class:`ChannelDesign`. What is released is the quantized channel with
its exact certificate (``design.report.certificate``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..costs import ReleasedCost, channel_cost, check_prior, describe_cost, loss_matrix, named_row_costs, released_errors, row_costs
from ..errors import DesignError, InvalidParameterError
from ..mechanism import LISTED_UP_TO, Mechanism
from ..neighbourhood import InputPairs
from ..pmf import Channel
from ..target import Target
from ..resources import channel_bytes, check
from .block_design import block_request, solve_block_channel
from .channel_bounds import best_lp_bound
from .large_channel import LARGE_FROM, large_request, solve_large_channel
from .channel_model import (
    MAX_PDP_N, ChannelProblem, build_model, complete_on, model_size, pairs_from_distances, solve_model_lp,
)
from .channel_pdp import solve_pdp
from .channel_repair import (
    CONSTRAINT_TOLERANCE, channel_screen, clean_channel, constraint_violations, diagnose, lift_repair,
    meets_on_pairs, mix_repair, reference_channel,
)
from .remap_design import remap_request, solve_remap_channel
from .report import DesignResult, OfTarget, ProvenBound
from .request import MAX_NONZEROS, Request, released_objective
from .solver import Infeasible


@dataclass(frozen=True, eq=False)
class ChannelDesign(ProvenBound, OfTarget, DesignResult):
    """Result of :func:`design_channel`: the channel as a mechanism and the design's report.

    Attributes
    ----------
    matrix:
        ``P[q, y]`` (read-only), entries ``>= 0``, rows summing to 1 within ``1e-12``.
    cost, loss_matrix, prior, worst_case:
        The objective: a released-value cost (name, or ``"user"``), ``L[q, y]`` (``None`` for
        a named cost solved by the structured design at large ``n``: never expanded), the
        prior (normalised) and whether the worst case over ``q`` was minimised.
    expected_cost:
        The objective evaluated on ``matrix`` (after cleaning and any repair).
    lower_bound, bound_method:
        A proven lower bound on the optimum of the request (:mod:`optnoise.design.bounds`:
        a dual certificate checked in outward-rounded arithmetic at ``e^eps`` itself, not the
        design's margin) and what gave it; ``gap`` is the relative distance of
        ``expected_cost`` from it and ``optimal`` says it is below ``GAP_TOLERANCE``. A PDP
        design's bound is the (eps, delta)-DP LP's, proven (every PDP channel is an (eps,
        delta)-DP channel: :func:`pdp_bound`); HiGHS's MILP best bound is named in
        ``bound_method`` but not used (it is not re-checked).
    objective:
        The solver's optimum of the problem actually solved: ``e^eps`` shrunk by the relative
        margin ``RATIO_MARGIN = 1e-10`` and ``delta`` by at most ``1e-9``, so it can exceed the
        true optimum by about that much.
    repair:
        How a violation of the target left by the solver's absolute tolerance was removed:
        ``"none"``; ``"lift"`` (pure DP: entries below their neighbours' ratio raised, rows
        renormalised; largest L1 change of a row in ``lifted_mass``); ``"mix"`` (mixed with a
        reference channel at weight ``repair_weight``).
    method:
        ``"lp"``, ``"lp-mirror"`` (mirror symmetry imposed, lossless), ``"lp-complete-graph"``
        (per-column minimum substitution, lossless), ``"lp-circulant"`` (first row only,
        lossless), ``"milp"``, ``"milp-circulant"``, ``"lp-band"`` (approximate DP at large
        ``n`` on a band: :mod:`optnoise.design.band`), ``"geometric-remap"`` (pure DP,
        neighbours one apart, prior-averaged, large ``n``: :mod:`optnoise.design.chain`) or
        ``"column-generation"`` (pure DP per record, prior-averaged, large ``n``:
        :mod:`optnoise.design.record`) or ``"pure-mix"`` (``(eps, delta)``-DP per record,
        prior-averaged, ``n >= RECORD_DELTA_FROM``: :mod:`optnoise.design.record_mix`).

    ``analysis`` is the float analysis of ``matrix`` under ``pairs`` at the target;
    ``certificate`` the exact certificate of the quantized channel that is sampled.
    """

    matrix: np.ndarray
    cost: str
    loss_matrix: np.ndarray | None
    prior: np.ndarray
    worst_case: bool
    expected_cost: float
    objective: float
    target: Target
    pairs: tuple[tuple[int, int], ...]
    constraints: tuple[str, ...]
    method: str
    solve_seconds: float
    repair: str = "none"
    repair_weight: float = 0.0
    lifted_mass: float = 0.0
    n_variables: int = 0
    n_constraints: int = 0
    mip_gap: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    lower_bound: float | None = None
    bound_method: str | None = None

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0]) - 1

    @cached_property
    def input_pairs(self) -> InputPairs:
        """The neighbouring pairs the design protects (directed, as given)."""
        return InputPairs(self.pairs, directed=True)

    @cached_property
    def mechanism(self) -> Mechanism:
        """The channel as a :class:`~optnoise.mechanism.Mechanism` with its pairs and target."""
        return Mechanism(Channel(self.matrix), self.input_pairs, self.target, "optimal channel")

    def row_costs(self) -> np.ndarray:
        """Expected loss per true answer ``q``."""
        if self.loss_matrix is None:   # a named cost on a large domain: the loss in blocks
            return named_row_costs(self.matrix, self.cost)
        return row_costs(self.matrix, self.loss_matrix)

    def report_json(self) -> dict:
        """The report (docs/cli.md ``design --form channel``), without the mechanism schema keys."""
        released = released_errors(self.matrix, self.prior)
        uniform = bool(np.allclose(self.prior, 1.0 / self.prior.size, rtol=0, atol=1e-15))
        big = self.matrix.size > LISTED_UP_TO
        out = {
            "form": "channel",
            "channel": None if big else self.matrix.tolist(),
            "n": self.n,
            "cost": self.cost,
            "cost_meaning": describe_cost(self.cost),
            "prior": "uniform" if uniform else self.prior.tolist(),
            "worst_case": self.worst_case,
            "expected_cost": self.expected_cost,
            "released_error": released,
            "error_rate": released["er"]["average"],
            "squared_error": released["sq-error"],
            **self.solver_json(self.input_pairs.to_json(), bound_method=self.bound_method),
            "objective": self.objective,
            "constraints": list(self.constraints),
            "constraint_violations": constraint_violations(self.matrix, self.constraints),
            "repair": {"kind": self.repair, "weight": self.repair_weight, "lifted_mass": self.lifted_mass},
            "variables": self.n_variables,
            "rows": self.n_constraints,
            "notes": list(self.notes),
        }
        if big:   # summarised: the file of --output lists it
            d = np.diagonal(self.matrix)
            out["structure"] = {"kind": "dense channel", "shape": list(self.matrix.shape),
                                "in_words": f"a {self.matrix.shape[0]} x {self.matrix.shape[1]} matrix, not listed here "
                                            f"({self.matrix.size:.3g} entries; the mechanism file of --output lists "
                                            f"it); P[q, q] from {d.min():.4g} to {d.max():.4g}"}
        if self.mip_gap is not None:
            out["mip_gap"] = self.mip_gap
        return out


def problem_of(request: Request) -> ChannelProblem:
    """The channel problem of a request (``space="channel"``), refused when its model would be
    too large: more than :data:`~optnoise.design.request.MAX_NONZEROS` coefficients, or a PDP
    MILP beyond :data:`~optnoise.design.channel_model.MAX_PDP_N`."""
    size, target = request.size, request.target
    prs = tuple(request.neighbours.pairs)  # type: ignore[union-attr]
    notion = "dp" if target.delta == 0 else target.notion  # type: ignore[union-attr]
    exploit = bool(request.solver.exploit_structure)
    nnz = model_size(size, prs, target.delta, request.constraints, notion == "pdp", exploit)  # type: ignore[union-attr]
    if nnz > MAX_NONZEROS:
        raise InvalidParameterError("n", request.n, f"a smaller domain or fewer pairs: this channel model would have "
                                    f"about {nnz:.2g} coefficients (limit {MAX_NONZEROS:.0e}; {len(prs)} ordered "
                                    f"pairs x {size} outputs)")
    if notion == "pdp" and size - 1 > MAX_PDP_N:
        raise InvalidParameterError(
            "n", request.n, f"n <= {MAX_PDP_N} for a PDP channel (a MILP with {len(prs)} ordered pairs x {size} "
            f"outputs = {len(prs) * size} indicators here); use notion 'dp' (an LP) for larger domains")
    from ..resources import check_time, lp_seconds, parse_seconds
    check_time(lp_seconds(nnz, milp=notion == "pdp"), parameter="n", value=request.n,
               what=f"the channel {'MILP' if notion == 'pdp' else 'LP'} over {len(prs)} ordered pairs x {size} outputs "
                    f"(about {nnz:.2g} coefficients)",
               way_out="a smaller n, fewer pairs, or a pure target (delta 0: a structured solver)",
               max_seconds=None if request.max_seconds is None else parse_seconds(request.max_seconds))
    _, L, prior = request.loss
    return ChannelProblem(size, prs, L, prior, request.loss_worst, target.epsilon,  # type: ignore[arg-type, union-attr]
                          target.delta, notion, request.constraints, exploit,  # type: ignore[union-attr]
                          None if request.time_limit is None else float(request.time_limit))


@dataclass(frozen=True)
class _Repaired:
    matrix: np.ndarray
    kind: str = "none"
    weight: float = 0.0
    lifted_mass: float = 0.0
    notes: tuple[str, ...] = ()


def _repair(pb: ChannelProblem, P: np.ndarray) -> _Repaired:
    """Make a solved channel meet the target by the one rule (:mod:`.channel_repair`): lift
    (pure DP) when that keeps the structural constraints, else mix with a reference channel."""
    target, size = pb.target, pb.size
    pa, pbb = np.array([p[0] for p in pb.pairs]), np.array([p[1] for p in pb.pairs])
    fast_ok = channel_screen(pb.pairs, target)

    def ok(M: np.ndarray) -> bool:
        return meets_on_pairs(M, pb.pairs, target)

    out = _Repaired(P)
    if not ok(P):
        lifted = lift_repair(P, pa, pbb, pb.epsilon, fast_ok) if pb.delta == 0 else None
        if lifted is not None and ok(lifted) and not _beyond(pb, lifted):
            mass = float(np.abs(lifted - P).sum(axis=1).max())
            out = _Repaired(lifted, "lift", 0.0, mass, (f"entries below the ratio constraints (absolute solver "
                                                         f"tolerance) lifted; largest L1 change of a row {mass:.3g}",))
        else:
            ref = (lambda: np.full((size, size), 1.0 / size)) if "unbiased" not in pb.constraints \
                else (lambda: reference_channel(pb))
            mixed, lam = mix_repair(P, ref, fast_ok, ok)
            out = _Repaired(mixed, "mix", lam, 0.0,
                            (f"mixed with a reference channel at weight {lam:.3g} to absorb solver tolerance",))
    bad = _beyond(pb, out.matrix)
    if bad:
        raise DesignError(f"the solver's channel misses structural constraints beyond tolerance: {bad}")
    return out


def _beyond(pb: ChannelProblem, M: np.ndarray) -> dict[str, float]:
    """The structural constraints violated beyond :data:`CONSTRAINT_TOLERANCE` (``unbiased``:
    times ``max(1, n)``, a tolerance on the row mean)."""
    tol = {k: CONSTRAINT_TOLERANCE * (max(1, pb.size - 1) if k == "unbiased" else 1) for k in pb.constraints}
    return {k: v for k, v in constraint_violations(M, pb.constraints).items() if v > tol[k]}


#: Domains above this size (``n > STRUCTURED_FROM``) take the structured solver when the
#: request allows it (:func:`structured_request`); below it the LP is a second or two.
STRUCTURED_FROM = 100

#: Largest pair distance for which approximate-DP requests are solved on a band.
BAND_REACH = 8


def structured_request(n: int, pairs: tuple[tuple[int, int], ...], delta: float, constraints: tuple[str, ...],
                       worst_case: bool) -> bool:
    """Whether :func:`solve_channel` answers with :mod:`optnoise.design.chain`:
    ``n > STRUCTURED_FROM``, pure DP, exactly the pairs of neighbours one apart, no
    structural constraint, a prior-averaged cost."""
    return (n > STRUCTURED_FROM and delta == 0 and not constraints and not worst_case
            and len(pairs) == 2 * n and set(pairs) == set(pairs_from_distances(n, [1])))


def band_request(n: int, pairs: tuple[tuple[int, int], ...], delta: float, notion: str,
                 constraints: tuple[str, ...], worst_case: bool) -> bool:
    """Whether :func:`solve_channel` solves on a band (:mod:`optnoise.design.band`):
    ``n > STRUCTURED_FROM``, approximate DP with ``delta > 0``, pairs at most
    :data:`BAND_REACH` apart, no structural constraint, a prior-averaged cost."""
    return (n > STRUCTURED_FROM and delta > 0 and notion == "dp" and not constraints and not worst_case
            and max(abs(a - b) for a, b in pairs) <= BAND_REACH)


def record_request(n: int, pairs: tuple[tuple[int, int], ...], delta: float, constraints: tuple[str, ...],
                   worst_case: bool) -> bool:
    """Whether :func:`solve_channel` answers by column generation (:mod:`optnoise.design.record`):
    ``n > STRUCTURED_FROM``, pure DP, every pair of answers neighbours (per record), no
    structural constraint, a prior-averaged cost."""
    return (n > STRUCTURED_FROM and delta == 0 and not constraints and not worst_case
            and len(pairs) == n * (n + 1) and complete_on(pairs) == tuple(range(n + 1)))


#: Per-record ``(eps, delta)`` requests from this ``n`` on take :mod:`optnoise.design.record_mix`
#: (below it the channel LP finds the exact optimum in seconds: n = 20 in 1.3 s, n = 40 in 59 s).
RECORD_DELTA_FROM = 25


def record_delta_request(n: int, pairs: tuple[tuple[int, int], ...], delta: float, notion: str,
                         constraints: tuple[str, ...], worst_case: bool) -> bool:
    """Whether :func:`solve_channel` answers with :mod:`optnoise.design.record_mix`: ``n >=
    RECORD_DELTA_FROM``, ``(eps, delta)``-DP with ``delta > 0`` (not PDP: the mixture's own
    output carries ``delta`` beyond the ratio), every pair of answers neighbours, no
    structural constraint, a prior-averaged cost."""
    return (n >= RECORD_DELTA_FROM and delta > 0 and notion == "dp" and not constraints and not worst_case
            and len(pairs) == n * (n + 1) and complete_on(pairs) == tuple(range(n + 1)))


def _structured_loss(request: Request) -> tuple[str, str | np.ndarray, np.ndarray]:
    """``(name, loss, prior)`` for the structured solver: a named cost stays a name (its
    ``(n+1)^2`` matrix is never formed), a loss matrix is taken as given."""
    cost, size = request.cost if request.cost is not None else "abs-error", request.size
    if isinstance(cost, ReleasedCost):
        return cost.name, cost.name, cost.weights(size)
    if isinstance(cost, str):
        loss_matrix(cost.strip(), 1)   # validates the name
        return cost.strip(), cost.strip(), check_prior(request.prior, size)
    name, L, prior, _ = released_objective(cost, request.prior, False, size)
    return name, L, prior


def _structured(request: Request, t0: float) -> ChannelDesign:
    """The structured design (:func:`optnoise.design.chain.solve_chain`) as a :class:`ChannelDesign`."""
    from .chain import solve_chain

    n, target = request.largest, request.target
    name, L, pi = _structured_loss(request)
    sol = solve_chain(n, target.epsilon, L, pi)  # type: ignore[union-attr]
    notes = ["Ghosh et al.'s geometric mechanism with the best deterministic remap; the bound is a dual "
             "certificate checked at e^eps in outward-rounded arithmetic"]
    if sol.mixing:
        notes.append(f"mixed with the uniform channel at weight {sol.mixing:.3g} (entries below the float range)")
    return ChannelDesign(
        matrix=sol.matrix, cost=name, loss_matrix=None if isinstance(L, str) else L, prior=pi, worst_case=False,
        expected_cost=sol.cost, objective=sol.cost, target=target, pairs=tuple(request.neighbours.pairs),  # type: ignore[arg-type, union-attr]
        constraints=(), method="geometric-remap", solve_seconds=time.perf_counter() - t0,
        repair="mix" if sol.mixing else "none", repair_weight=sol.mixing, n_variables=n + 1, n_constraints=n + 1,
        notes=tuple(notes), lower_bound=sol.bound.value if math.isfinite(sol.bound.value) else None,
        bound_method=f"{sol.bound.method} (outward rounded, at e^eps)")


def _record(request: Request, t0: float) -> ChannelDesign:
    """The per-record design by column generation (:func:`optnoise.design.record.solve_record`)
    as a :class:`ChannelDesign`."""
    from .record import solve_record

    target = request.target
    _, L, prior = request.loss
    sol = solve_record(prior[:, None] * L, target.epsilon,  # type: ignore[index, union-attr, arg-type]
                       time_limit=None if request.time_limit is None else float(request.time_limit))
    notes = [f"column generation over the outputs: {sol.outputs} of {L.shape[0]} outputs generated in "  # type: ignore[union-attr]
             f"{sol.rounds} rounds; the bound is a dual certificate on every output, checked at e^eps in "
             "outward-rounded arithmetic"]
    if sol.mixing:
        notes.append(f"mixed with the uniform channel at weight {sol.mixing:.3g} to absorb solver tolerance")
    Lr = np.array(L, dtype=np.float64)
    Lr.flags.writeable = False
    P = sol.matrix
    P.flags.writeable = False
    return ChannelDesign(
        matrix=P, cost=request.cost_name, loss_matrix=Lr, prior=prior, worst_case=False,  # type: ignore[arg-type]
        expected_cost=channel_cost(P, Lr, prior, False), objective=sol.cost, target=target,  # type: ignore[arg-type]
        pairs=tuple(request.neighbours.pairs), constraints=(), method="column-generation",  # type: ignore[union-attr]
        solve_seconds=time.perf_counter() - t0, repair="mix" if sol.mixing else "none", repair_weight=sol.mixing,
        n_variables=sol.outputs * (L.shape[0] + 1), n_constraints=(sol.outputs + 1) * L.shape[0],  # type: ignore[union-attr]
        notes=tuple(notes), lower_bound=sol.bound.value if math.isfinite(sol.bound.value) else None,
        bound_method=f"{sol.bound.method} on every output (outward rounded, at e^eps)")


def _record_mix(request: Request, t0: float) -> ChannelDesign:
    """The per-record ``(eps, delta)`` design ``(1 - delta) B + delta D`` with its dual bound
    (:func:`optnoise.design.record_mix.solve_record_mix`) as a :class:`ChannelDesign`."""
    from .record_mix import solve_record_mix

    target = request.target
    _, L, prior = request.loss
    sol = solve_record_mix(prior[:, None] * L, target.epsilon, target.delta,  # type: ignore[index, union-attr, arg-type]
                           time_limit=None if request.time_limit is None else float(request.time_limit))
    notes = [f"the optimal pure-DP per-record channel ({sol.outputs} outputs, by column generation; its own gap "
             f"{sol.pure_gap:.2g}) mixed with weight delta on each answer's cheapest output; the bound is a dual "
             f"certificate with one transport plan per output (plans {sol.excess:.3g} above the ones that would "
             "prove optimality), checked at e^eps in outward-rounded arithmetic"]
    Lr = np.array(L, dtype=np.float64)
    Lr.flags.writeable = False
    P = sol.matrix
    P.flags.writeable = False
    size = Lr.shape[0]
    return ChannelDesign(
        matrix=P, cost=request.cost_name, loss_matrix=Lr, prior=prior, worst_case=False,  # type: ignore[arg-type]
        expected_cost=channel_cost(P, Lr, prior, False), objective=sol.cost, target=target,  # type: ignore[arg-type]
        pairs=tuple(request.neighbours.pairs), constraints=(), method="pure-mix",  # type: ignore[union-attr]
        solve_seconds=time.perf_counter() - t0, n_variables=size * size, n_constraints=size * (size - 1),
        notes=tuple(notes), lower_bound=sol.bound.value if math.isfinite(sol.bound.value) else None,
        bound_method=f"{sol.bound.method}: row multipliers of the pure LP and a transport plan per output "
                     "(outward rounded, at e^eps and delta)")


@dataclass(frozen=True)
class _Solved:
    """The solver's answer: full variables, objective, model size, method and bound."""

    x: np.ndarray
    objective: float
    n_rows: int
    n_cols: int
    method: str
    mip_gap: float | None = None
    lower_bound: float | None = None
    bound_method: str | None = None


def pdp_bound(pb: ChannelProblem) -> tuple[float | None, str]:
    """A proven lower bound on a PDP channel problem's optimum: the ``(eps, delta)``-DP LP's.

    Why it is one (docs/proofs/channel-lower-bounds.md): under PDP the outputs where ``P[a, y] >
    e^eps P[b, y]`` carry at most ``delta`` of ``P[a, .]``, so ``sum_y max(0, P[a, y] - e^eps
    P[b, y])`` -- at most the mass of those outputs -- is at most ``delta``: every PDP channel
    is an ``(eps, delta)``-DP channel on the same pairs, and the DP LP's optimum is at most the
    PDP optimum. That LP is solved and its multipliers checked on its relaxation at a float
    ``>= e^eps`` in outward-rounded arithmetic (:func:`~optnoise.design.channel_bounds.best_lp_bound`).
    """
    dp = pb.replace(notion="dp")
    duals: list = []
    solve_model_lp(build_model(dp), pb.time_limit, duals)
    bound, how = best_lp_bound(dp, duals[0])
    return bound, f"{how} of the (eps, delta)-DP relaxation (every PDP channel is one)"


def _solve(pb: ChannelProblem) -> _Solved:
    """Solve one problem: the band LP (approximate DP at large ``n``), the PDP MILP and its
    polishing LP, or the DP LP -- each with its lower bound."""
    if pb.exploit_structure and band_request(pb.size - 1, pb.pairs, pb.delta, pb.notion, pb.constraints, pb.worst):
        from .band import solve_band

        b = solve_band(pb.size - 1, pb.epsilon, pb.delta, pb.pairs, pb.L, pb.prior, time_limit=pb.time_limit)
        return _Solved(b.matrix.ravel(), b.objective, b.n_rows, b.n_variables, "lp-band",
                       lower_bound=b.bound.value if math.isfinite(b.bound.value) else None,
                       bound_method=f"band-lp-dual over the full LP (outward rounded, at e^eps; band {b.band})")
    if pb.notion == "pdp":
        s = solve_pdp(pb)
        bound, how = pdp_bound(pb)
        best = "none" if s.bound is None else f"{s.bound:.10g}"
        how += (f"; HiGHS's MILP best bound {best} is not re-checked and not used (at the design's margins"
                + (f", of the relaxation kept by row generation: {s.cells} cells, {s.rounds} MILPs)"
                   if s.rounds > 1 or s.method.endswith("row-generation") else ")"))
        return _Solved(s.x, s.objective, s.n_rows, s.n_cols, s.method, s.gap, bound, how)
    model = build_model(pb)
    duals: list = []
    x, obj, n_rows = solve_model_lp(model, pb.time_limit, duals)
    bound, how = best_lp_bound(pb, duals[0])
    return _Solved(x, obj, n_rows, model.n_cols, model.method, lower_bound=bound, bound_method=how)


def _check_dense(request: Request) -> None:
    """Refuse, before anything is allocated, a channel whose dense ``(n+1) x (n+1)`` matrix and a
    few working copies would not fit ``max_memory`` (large requests the clamped noise answers
    never get here: :func:`~optnoise.design.large_channel.large_request`)."""
    size = request.size
    check(channel_bytes(size, size, copies=4), parameter="n", value=request.largest, max_memory=request.max_memory,
          what=f"a channel on {{0..{size - 1}}} ({float(size) ** 2:.3g} entries; beyond n = {LARGE_FROM} only pure "
               "DP with neighbours one apart and an er, abs-error or sq-error cost is answered without one)")


def solve_channel(request: Request) -> ChannelDesign:
    """The optimal channel ``P[q, y]`` of a validated request (:func:`optnoise.design.channel.design_channel`
    documents the problem): solve, repair, report.

    Raises
    ------
    InvalidParameterError
        A model too large (parameter ``n``).
    DesignError
        Infeasible structural constraints (the message names the constraint(s)), time limit,
        or a solver failure.
    """
    t0 = time.perf_counter()
    target = request.target
    if block_request(request):   # per record, pure, abs/sq-error: no (n+1) x (n+1) matrix, no pair listed
        return solve_block_channel(request)  # type: ignore[return-value]
    if request.solver.exploit_structure and large_request(request):
        return solve_large_channel(request)  # type: ignore[return-value]
    if remap_request(request):   # neighbours one apart, n > COMPACT_FROM: the noise and a remap, no matrix
        return solve_remap_channel(request)  # type: ignore[return-value]
    _check_dense(request)
    if request.solver.exploit_structure and structured_request(
            request.largest, tuple(request.neighbours.pairs), target.delta,  # type: ignore[union-attr]
            request.constraints, request.loss_worst):
        return _structured(request, t0)
    if request.solver.exploit_structure and record_request(
            request.largest, tuple(request.neighbours.pairs), target.delta,  # type: ignore[union-attr]
            request.constraints, request.loss_worst):
        return _record(request, t0)
    if request.solver.exploit_structure and record_delta_request(
            request.largest, tuple(request.neighbours.pairs), target.delta, target.notion,  # type: ignore[union-attr, arg-type]
            request.constraints, request.loss_worst):
        return _record_mix(request, t0)
    pb = problem_of(request)
    try:
        solved = _solve(pb)
    except Infeasible:
        raise DesignError(diagnose(pb)) from None
    fixed = _repair(pb, clean_channel(solved.x, pb.size))
    P = fixed.matrix
    P.flags.writeable = False
    Lr = pb.L.copy()
    Lr.flags.writeable = False
    return ChannelDesign(
        matrix=P, cost=request.cost_name, loss_matrix=Lr, prior=pb.prior, worst_case=pb.worst,
        expected_cost=channel_cost(P, pb.L, pb.prior, pb.worst), objective=solved.objective, target=pb.target,
        pairs=pb.pairs, constraints=pb.constraints, method=solved.method, solve_seconds=time.perf_counter() - t0,
        repair=fixed.kind, repair_weight=fixed.weight, lifted_mass=fixed.lifted_mass, n_variables=solved.n_cols,
        n_constraints=solved.n_rows, mip_gap=solved.mip_gap, notes=fixed.notes, lower_bound=solved.lower_bound,
        bound_method=solved.bound_method)


__all__ = ["BAND_REACH", "RECORD_DELTA_FROM", "STRUCTURED_FROM", "ChannelDesign", "band_request", "problem_of",
           "record_delta_request", "record_request",
           "solve_channel", "structured_request"]
