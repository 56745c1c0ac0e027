"""Optimal noise for a finite domain ``{0..n}``, added modulo ``n + 1`` (Kadam et al. 2024).

Problems (all built with sparse matrices and solved by HiGHS through scipy):

* **standard DP**, ``delta = 0``: Kadam's LP (14), ``f(eta) <= e^eps f(eta + mu)``
  for every ``eta`` and every ordered shift ``mu``;
* **standard DP**, ``delta > 0``: an LP; the hockey-stick constraint
  ``sum_eta max(0, f(eta) - e^eps f(eta + mu)) <= delta`` is linearised with one
  variable ``t[mu, eta] >= f(eta) - e^eps f(eta + mu)``, ``t >= 0`` per distance and value;
* **PDP** (Kadam Def. 2, per distance): a MILP with one indicator ``u[mu, eta]``
  per distance and noise value and ``y[mu, eta] = u f(eta)``:
  ``f(eta) - e^eps f(eta + mu) <= y``, ``y <= f``, ``y >= f - (1 - u)``,
  ``y <= delta u``, ``sum_eta y[mu, .] <= delta``;
* **PDP as printed** (``formulation="paper"``): (13a)-(13h) literally, one
  indicator per noise value shared by all distances;
* **min-delta** (15): smallest ``delta`` subject to expected cost ``<= max_cost``.

Every MILP solution is *polished*: with its indicators fixed the problem is an LP,
re-solved at tight tolerances with a ``1e-10`` relative margin on ``e^eps``;
every LP solution is clipped, renormalised and, if the certificate still shows a
violation from solver tolerance, mixed with the uniform PMF by the smallest
weight that restores the target. The returned ``certificate`` is the analysis of
the returned PMF (:mod:`optnoise.analysis`), not the solver's claim.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from ..analysis import privacy_profile
from ..costs import Cost, cost_vector, wrapped_squared_error
from ..errors import DesignError
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..pmf import CyclicPMF
from ..resources import design_lp_bytes, row_generation_bytes
from ..search import first_passing
from ..target import Target, resolve_target
from .bounds import GAP_TOLERANCE, relative_gap
from .finite_lp import ROW_GENERATION_MIN_ROWS, ROW_TOLERANCE, MemoryLimit, lp_lower_bound, solve_dp_lp
from .finite_milp import PDP_ROW_GENERATION_MIN_PAIRS, pdp_row_generation, polish_pdp, solve_pdp_milp
from .model import Shifts, cyclic_shift_table, identity_orbits, mirror_orbits
from .report import DesignResult, OfTarget
from .request import SOLVER_EPSILON_MAX, Request, SolverOptions
from .solver import RATIO_MARGIN


# ----------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class FiniteDesign(OfTarget, DesignResult):
    """Result of :func:`design_finite`: the mechanism and the design's report.

    ``analysis`` is the tight *float* analysis of the returned PMF; ``certificate`` the
    *exact* certificate of the quantized weights that :attr:`mechanism` samples
    (:class:`~.report.DesignResult`).
    Keys of :meth:`to_json`: docs/cli.md.
    """

    pmf: CyclicPMF
    cost: str
    expected_cost: float
    error_rate: float
    noise_second_moment: float
    squared_error_worst: float
    squared_error_average: float
    target: Target
    neighbourhood: Neighbourhood
    method: str
    optimal: bool
    solve_seconds: float
    formulation: str = "standard"
    minimize: str = "cost"
    delta_min: float | None = None
    mip_gap: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    lower_bound: float | None = None

    @property
    def gap(self) -> float | None:
        """Relative gap of the objective (the cost, or delta with ``minimize="delta"``) above the
        proven ``lower_bound`` (an LP design's multipliers checked at ``e^eps`` in outward-rounded
        arithmetic; ``None`` for closed forms and MILPs, whose ``optimal`` is the solver's)."""
        if self.lower_bound is None:
            return None
        return relative_gap(self.expected_cost if self.minimize == "cost" else float(self.delta_min or 0.0),
                            self.lower_bound)

    @property
    def delta(self) -> float:
        """The design's delta: the target's, or with ``minimize="delta"`` the minimum found."""
        return self.target.delta if self.minimize == "cost" else float(self.delta_min or 0.0)

    @cached_property
    def mechanism(self) -> Mechanism:
        """The designed noise as a :class:`~optnoise.mechanism.Mechanism` with its target."""
        return Mechanism(self.pmf, self.neighbourhood, self.target, "optimal design")


    def report_json(self) -> dict:
        out = {
            "pmf": self.pmf.probs.tolist(),
            "n": self.pmf.n if isinstance(self.pmf.n, int) else list(self.pmf.n),
            "cost": self.cost,
            "expected_cost": self.expected_cost,
            "error_rate": self.error_rate,
            "noise_second_moment": self.noise_second_moment,
            "squared_error": {"worst": self.squared_error_worst, "average": self.squared_error_average},
            **self.solver_json(self.neighbourhood.to_json()),
            "formulation": self.formulation,
            "minimize": self.minimize,
            "notes": list(self.notes),
        }
        if self.mip_gap is not None:
            out["mip_gap"] = self.mip_gap
        if self.minimize == "delta":
            out["delta"] = self.delta_min
        return out


def _clean(f: np.ndarray) -> np.ndarray:
    f = np.clip(f, 0.0, None)
    f[f < 1e-300] = 0.0
    return f / f.sum()


def _meets(f: np.ndarray, shape: tuple[int, ...], nb: Neighbourhood, target: Target) -> bool:
    return privacy_profile(CyclicPMF(f.reshape(shape)), nb).meets(target)


#: Smallest mass a repaired pure-DP design may hold (far above the subnormal range).
MASS_FLOOR = 1e-300


def ratio_lift(f: np.ndarray, sh: Shifts, e: float) -> np.ndarray:
    """Smallest ``g >= max(f, MASS_FLOOR)`` with ``g(eta) <= e g(eta + mu)`` for every shift.

    Pure-DP repair. Raising ``g(eta + mu)`` to ``g(eta) / e`` never breaks a
    constraint in which it is the smaller side, so repeated relaxation converges to
    the pointwise-smallest feasible ``g`` above ``f`` (Bellman-Ford on the neighbourhood
    graph, at most one round per step of its diameter). Each round only revisits the
    values raised in the round before (the frontier), so a design whose far masses are
    all lifted costs ``O(|M|)`` per lifted value, not ``O(n |M|)`` per round. The floor
    matters: the exact optimum can need masses like ``e^(-2730)`` (n = 16384, eps = 1,
    BD 3), below the smallest double, and a zero facing a positive mass is infinite
    epsilon. Renormalising keeps every ratio; the cost moves by about ``N * MASS_FLOOR``
    times the largest cost.

    Proof: docs/proofs/quantization-and-repair.md.
    """
    g = np.maximum(f, MASS_FLOOR)
    frontier = np.arange(g.size)
    while frontier.size:
        source = g[frontier] / e                      # g(eta) / e, from the round's start
        raised = []
        for partner in sh.partner:
            x = partner[frontier]                     # eta + mu: needs g(x) >= g(eta) / e
            up = source > g[x]
            if up.any():
                g[x[up]] = np.maximum(g[x[up]], source[up])   # x distinct within one shift
                raised.append(x[up])
        frontier = np.unique(np.concatenate(raised)) if raised else raised
        frontier = np.asarray(frontier, dtype=np.int64)
    return g / g.sum()


def _repair_with_uniform(f: np.ndarray, shape, nb, target: Target) -> tuple[np.ndarray, float]:
    """Smallest uniform mixing weight (doubling from 1e-12) that meets the target.

    Proof: docs/proofs/quantization-and-repair.md (mixing with the uniform PMF keeps a pure or
    approximate DP target that the uniform PMF meets with room; the doubling only steers).
    """
    if _meets(f, shape, nb, target):
        return f, 0.0
    found = first_passing(lambda lam: _meets((1 - lam) * f + lam / f.size, shape, nb, target), 1e-12, 1.0)
    if found is None:
        raise DesignError("the solver's design violates the privacy target and could not be repaired")
    lam = found[1]
    return (1 - lam) * f + lam / f.size, lam


# -------------------------------------------------------------------- API
@dataclass(frozen=True)
class _Plan(OfTarget):
    """One finite design problem, read from its (validated) request."""

    shape: tuple[int, ...]
    nb: Neighbourhood
    target: Target
    minimize: str
    max_cost: float | None
    formulation: str
    time_limit: float | None
    rho: np.ndarray
    cost_name: str
    lp_path: bool
    may_generate: bool
    row_generation: bool | None
    closed_form: bool
    memory: MemoryLimit

    @property
    def eps_solve(self) -> float:
        """The epsilon the problem is solved at (at most :data:`SOLVER_EPSILON_MAX`)."""
        return min(self.epsilon, SOLVER_EPSILON_MAX)


def _plan(request: Request) -> _Plan:
    """The problem's constants, and its memory refused up front (from ``n`` and the distances)."""
    shape, nb, target = request.shape, request.neighbours, request.target
    dlt, minimize = target.delta, request.minimize  # type: ignore[union-attr]
    values, shifts = int(np.prod(shape)), len(nb.cyclic_shifts(shape))  # type: ignore[union-attr]
    lp_path = target.notion == "dp" or (dlt == 0.0 and minimize == "cost")  # type: ignore[union-attr]
    kind = "pure" if dlt == 0.0 and minimize == "cost" else "dp" if lp_path else "pdp"
    row_generation = request.solver.row_generation
    may_generate = (lp_path or request.formulation == "standard") and (
        values * shifts > (ROW_GENERATION_MIN_ROWS if lp_path else PDP_ROW_GENERATION_MIN_PAIRS)
        if row_generation is None else row_generation)
    memory = MemoryLimit(request.n, request.max_memory)
    if may_generate:   # the shift table, the mask and (PDP) the polishing LP over every pair
        polish = 0.0 if lp_path else design_lp_bytes(values, shifts, kind="pure")
        memory.check(row_generation_bytes(values, shifts) + polish,
                     f"row generation over {values} noise values x {shifts} distances")
    else:
        memory.check(design_lp_bytes(values, shifts, kind=kind),
                     f"the {'MILP' if kind == 'pdp' else 'LP'} over {values} noise values x {shifts} distances")
    name, rho, _ = request.loss
    return _Plan(shape, nb, target, minimize, request.max_cost, request.formulation,  # type: ignore[arg-type]
                 request.time_limit, rho, name, lp_path, may_generate, row_generation,  # type: ignore[arg-type]
                 request.solver.closed_form, memory)


@dataclass(frozen=True)
class _Solved:
    """What a solver returned, before cleaning and repair (``lower``: a proven lower bound of the
    objective, from an LP's multipliers)."""

    f: np.ndarray
    method: str
    notes: tuple[str, ...] = ()
    gap: float | None = None
    delta_min: float | None = None
    lower: float | None = None


def _closed_form(p: _Plan) -> _Solved | None:
    """Kadam et al.'s Lemmas 3 and 4 where the tests prove them optimal (directed SD/BD, ER, pure)."""
    if not (p.closed_form and p.minimize == "cost" and p.delta == 0.0 and p.cost_name == "er" and len(p.shape) == 1):
        return None
    from .closed_forms import closed_form_delta0
    f = closed_form_delta0(p.shape[0] - 1, p.eps_solve, p.nb)
    return None if f is None else _Solved(f, "closed-form")


def _lp(p: _Plan, sh: Shifts, e: float) -> _Solved:
    """Standard DP (at delta = 0 both notions are pure eps-DP): Kadam's LP (14), hockey-stick rows.

    When the shift set is closed under negation and the cost is mirror-symmetric exactly, it is
    solved over ``f(eta) = f(-eta)`` with one shift of each pair ``{mu, -mu}``: half the mass
    variables, nothing lost (not for the PDP MILP, whose feasible set is not convex).

    Proof: docs/proofs/mirror-reduction.md.
    """
    orbits = mirror_orbits(p.shape, sh, p.rho) or identity_orbits(sh)
    lazy = (orbits.shifts.size * sh.n > ROW_GENERATION_MIN_ROWS) if p.row_generation is None else p.row_generation
    sol = solve_dp_lp(sh, orbits, p.rho, e * (1 - RATIO_MARGIN), p.delta * (1 - 1e-12), p.minimize, p.max_cost,
                       p.time_limit, lazy, p.memory)
    notes = []
    if orbits.reduced:
        notes.append("mirror-symmetric problem (neighbourhood and cost): solved over f(eta) = f(-eta), "
                     "which loses nothing")
    if lazy:
        notes.append(f"row generation: {sol.lps} LPs held {sol.rows} of the {sol.all_rows} ratio rows; "
                     f"the others hold at the solution (tolerance {ROW_TOLERANCE:g})")
    lower = lp_lower_bound(sh, orbits, p.rho, p.epsilon, p.delta, p.max_cost if p.minimize == "delta" else None,
                            p.delta > 0 or p.minimize == "delta", sol.duals)
    return _Solved(sol.f, "lp", tuple(notes), None, sol.objective if p.minimize == "delta" else None, lower)


def _milp(p: _Plan, sh: Shifts, e: float) -> _Solved:
    """PDP: the per-distance MILP (by row generation when large) or Kadam (13) as printed, polished."""
    notes = []
    if p.may_generate:   # values * shifts == sh.k * sh.n pairs
        psol = pdp_row_generation(sh, p.rho, e, p.delta, p.minimize, p.max_cost, p.time_limit, p.memory)
        f, pobj, obj, gap = psol.f, psol.objective, psol.milp_objective, psol.gap
        notes.append(f"row generation: {psol.milps} MILPs held {psol.pairs} of the {sh.k * sh.n} "
                     "(distance, value) pairs; the polished design is feasible for all of them and within "
                     "the MIP gap of the last MILP's bound")
    else:
        sol = solve_pdp_milp(sh, p.rho, e, p.delta, p.minimize, p.max_cost, p.time_limit, p.formulation)
        obj, gap = sol.objective, sol.gap
        f, pobj = polish_pdp(sh, p.rho, e, p.delta, p.minimize, p.max_cost, sol.u, p.formulation, p.time_limit)
    if abs(pobj - obj) > 1e-6 * max(1.0, abs(obj)):
        notes.append(f"polished LP objective {pobj:.10g} differs from the MILP's {obj:.10g}")
    return _Solved(f, "milp", tuple(notes), gap, pobj if p.minimize == "delta" else None)


def _repair(p: _Plan, sh: Shifts, e: float, f: np.ndarray, target: Target) -> tuple[np.ndarray, list[str]]:
    """Lift a pure design's masses below the ratios; mix a DP design with the uniform PMF until
    the float analysis meets the target (the one rule); refuse a PDP design that misses it.

    Proof: docs/proofs/quantization-and-repair.md.
    """
    notes: list[str] = []
    if target.pure and privacy_profile(CyclicPMF(f.reshape(p.shape)), p.nb).epsilon_pure > p.eps_solve:
        # strict, not within MEETS_TOLERANCE: a pure design's ratios must not exceed e^eps by an ulp
        # (float closed forms do), or its certificate shows delta_DP ~ 1e-17 instead of 0
        f = ratio_lift(f, sh, e * (1 - RATIO_MARGIN))
        notes.append("masses below the ratio constraints (solver round-off, float underflow) lifted to the "
                     "smallest feasible values, floor 1e-300")
    if target.notion == "dp" or target.pure:   # (pure targets are met alike under either notion)
        f, lam = _repair_with_uniform(f, p.shape, p.nb, target)
        if lam > 0:
            notes.append(f"mixed with the uniform PMF at weight {lam:.3g} to absorb solver tolerance")
    elif not _meets(f, p.shape, p.nb, target):
        raise DesignError("the polished PDP design does not meet the target in the certificate; "
                          "refusing to return it")
    return f, notes


def solve_finite(request: Request) -> FiniteDesign:
    """The optimal noise mod ``n + 1`` for a noise cost: what :func:`design_finite` documents,
    for a validated :class:`~optnoise.design.request.Request` (``problem == "finite"``)."""
    p = _plan(request)
    sh = cyclic_shift_table(p.shape, p.nb)
    e = math.exp(p.eps_solve)
    notes: list[str] = []
    if p.eps_solve < p.epsilon:
        notes.append(f"designed at eps = {p.eps_solve:g} (the solver cannot resolve ratios e^eps beyond it); the PMF "
                     f"meets eps = {p.epsilon:g} too, but a PMF closer to the optimum may exist (optimal: false)")
    t0 = time.perf_counter()
    solved = _closed_form(p) or (_lp(p, sh, e) if p.lp_path else _milp(p, sh, e))
    notes += solved.notes
    f = _clean(np.asarray(solved.f, dtype=float))
    target = p.target
    if p.minimize == "delta":
        target = Target(p.epsilon, min(float(solved.delta_min or 0.0) + 1e-12, math.nextafter(1.0, 0.0)), target.notion)
    f, repaired = _repair(p, sh, e, f, target)
    notes += repaired
    seconds = time.perf_counter() - t0
    pmf = CyclicPMF(f.reshape(p.shape))
    worst, avg = wrapped_squared_error(pmf.probs)
    second = float(np.dot(cost_vector("noise-second-moment", p.shape), pmf.probs.ravel()))
    if p.formulation == "paper":
        notes.append("Kadam (13) as printed: one indicator per noise value shared by all distances")
    objective = float(np.dot(p.rho, f)) if p.minimize == "cost" else float(solved.delta_min or 0.0)
    optimal = p.eps_solve == p.epsilon and (solved.lower is None
                                           or relative_gap(objective, solved.lower) <= GAP_TOLERANCE)
    return FiniteDesign(
        pmf=pmf, cost=p.cost_name, expected_cost=float(np.dot(p.rho, f)),
        error_rate=float(1.0 - pmf.probs.ravel()[0]), noise_second_moment=second,
        squared_error_worst=worst, squared_error_average=avg, target=target,
        neighbourhood=p.nb, method=solved.method, optimal=optimal, solve_seconds=seconds,
        formulation=p.formulation, minimize=p.minimize, delta_min=solved.delta_min, mip_gap=solved.gap,
        notes=tuple(notes), lower_bound=solved.lower)


def design_finite(n: int | Sequence[int], *, epsilon: float | None = None, delta: float = 0.0,
                  notion: str = "dp", target: Target | None = None,
                  neighbourhood: Neighbourhood | None = None,
                  cost: str | Cost | Sequence[float] | np.ndarray = "er", minimize: str = "cost",
                  max_cost: float | None = None, formulation: str = "standard",
                  time_limit: float | None = None, use_closed_form: bool = True,
                  max_memory: int | None = None, row_generation: bool | None = None) -> FiniteDesign:
    """Optimal noise PMF on ``{0..n}`` (or a product domain), added mod ``n + 1``.

    A thin wrapper, kept for one version (deprecated): ``optnoise.design(optnoise.Request(
    space="cyclic", n=n, target=..., neighbourhood=..., cost=...))`` answers the same request
    and returns a :class:`~optnoise.design.report.Design`; this returns its ``details``.

    Parameters
    ----------
    n:
        Largest answer (domain ``{0..n}``), or a sequence for a vector query.
    epsilon, delta, notion:
        The target, as in :class:`~optnoise.target.Target` (``notion`` ``"dp"``: approximate
        DP, an LP; ``"pdp"``: Kadam Def. 2, a MILP). ``delta`` is ignored with
        ``minimize="delta"``.
    target:
        The same as a :class:`~optnoise.target.Target` (instead of the three above).
    neighbourhood:
        Query distances (default SD 1, symmetric). Kadam's tables use ``directed``.
    cost:
        A cost of :mod:`optnoise.costs` (``er``, ``mse``, ``circular-mse``, ``abs``,
        ``circular-abs``, ``pow:K``...) or a vector of costs, one per noise value.
    minimize:
        ``"cost"`` or ``"delta"`` (Kadam (15); needs ``max_cost``).
    formulation:
        ``"standard"`` (per-distance indicators) or ``"paper"`` (Kadam (13) as
        printed; PDP only).
    time_limit:
        Seconds for the solver; reaching it raises :class:`DesignError`.
    use_closed_form:
        Use a closed form where the tests prove it optimal (directed SD/BD, ER,
        ``delta = 0``): Kadam Lemmas 3 and 4.
    max_memory:
        Bytes the LP/MILP may take (:mod:`optnoise.resources`; default half the machine's
        memory): a larger model is refused from ``n`` and the number of distances before
        it is built.
    row_generation:
        Solve the standard-DP LP over a growing subset of its ratio rows until the others
        hold, or the per-distance PDP MILP over a growing subset of its (distance, value)
        pairs until a polished design meets all of them within the MIP gap (``True``); all
        rows at once (``False``); or by size (``None``: above :data:`ROW_GENERATION_MIN_ROWS`
        LP rows or :data:`PDP_ROW_GENERATION_MIN_PAIRS` MILP pairs). Same optimum either way;
        where the optimum is not unique the PMF returned may differ. Not used with
        ``formulation="paper"``.

    Above ``epsilon = SOLVER_EPSILON_MAX`` the ratio constraints ``f <= e^eps f'`` have
    coefficients beyond the solver's numerical range (at ``eps = 36`` HiGHS reports
    feasible problems infeasible): the design is then made at ``SOLVER_EPSILON_MAX``,
    which also meets the larger epsilon, and reported with ``optimal = False``.

    Returns
    -------
    FiniteDesign
        ``.mechanism`` (the PMF with its neighbourhood and target), the costs, the float
        ``analysis``, the exact ``certificate`` and how the design was obtained.

    Notes
    -----
    A mirror-symmetric problem is solved over ``f(eta) = f(-eta)`` without loss, and the LP's
    rows are generated without loss (docs/proofs/mirror-reduction.md, row-generation.md).

    >>> d = design_finite(4, epsilon=1.0, cost="er", neighbourhood=Neighbourhood.sd(1))
    >>> d.method, round(d.error_rate, 4), d.mechanism.kind
    ('lp', 0.5016, 'cyclic')
    """
    tgt = resolve_target(epsilon, 0.0 if minimize == "delta" else delta, notion, target)
    request = Request(space="cyclic", n=n, target=tgt, neighbourhood=neighbourhood, cost=cost, minimize=minimize,
                      max_cost=max_cost if minimize == "delta" else None, formulation=formulation,
                      time_limit=time_limit, max_memory=max_memory,
                      solver=SolverOptions(row_generation=row_generation, closed_form=use_closed_form))
    return solve_finite(request)
