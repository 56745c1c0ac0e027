"""Noise designed for K releases: minimum cost subject to a K-fold composed target.

Problem. Noise ``f`` — cyclic on ``{0..n}`` (added modulo ``N = n + 1``), or on the
integer line (a window with exact geometric tails) — is released ``K`` times on the same
neighbouring datasets; the K-fold composition must be ``(eps, delta)``-DP, and the
expected cost is minimised. The exact composed guarantee is not a convex function of
``f``; Rényi divergences give a convex surrogate.

The program and its solver are :mod:`.renyi_program` (convexity, the barrier method).

**Budget over the orders.** The RDP -> DP conversion (Canonne, Kamath & Steinke 2020,
Prop. 12) certifies the K-fold composition at ``(eps, delta)`` if *some* order satisfies
``K D_alpha(f) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1) <= eps``. The
feasible set is a union over orders of convex sets, so the design solves one convex
program per order of a grid and keeps the cheapest (``"rdp"`` designs, certified by RDP
alone). The RDP route is conservative; the final design is certified by the exact
composition instead (:func:`optnoise.analysis.composition.compose_best`: PLD with
pessimistic rounding, exact enumeration where small): the per-release budget ``r`` of the
best orders is scaled up by bisection while the certified K-fold epsilon stays within the
target (``"calibrated"`` designs). Both certificates are reported.

**The integer line.** The tail ratio is fixed per program (it multiplies the variables,
so it cannot be a decision of a convex program): it is the ratio of the geometric that
spends half the budget, which also makes that geometric the strictly feasible start. The
window (default ``-6 sigma0 .. 6 sigma0``, with ``sigma0`` the discrete Gaussian that
certainly meets the target) is wide enough that the tails carry a negligible mass; the
returned PMF is a PMF on all of Z with exact tails (not a truncation).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from ..analysis import privacy_profile
from ..analysis.composition import Composed, compose_best
from ..analysis.renyi import renyi_curve
from ..costs import Cost, expected_cost, parse_cost
from ..errors import DesignError, InvalidParameterError
from ..families.geometric import geometric_pmf
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..pmf import CyclicPMF, IntegerPMF
from ..search import SearchError, boundary, largest_passing
from ..target import MEETS_TOLERANCE, Target, check_delta
from .calibrate import calibrate
from .finite import solve_finite
from .integer import TailedWindow, design_integer
from .renyi_program import (
    Pmf, RenyiProgram, RenyiSolution, conversion, cyclic_program, integer_program, solve_renyi_program,
)
from .bounds import GAP_TOLERANCE, Bound
from .releases_bound import cyclic_releases_bound, line_releases_bound
from .report import DesignResult, ProvenBound
from .request import Request


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Trial:
    """One solved single-order program: order, per-release Rényi budget, cost and (when the
    exact certificate was computed during calibration) the certified K-fold epsilon."""

    order: float
    budget: float
    expected_cost: float
    epsilon_certified: float | None
    feasible: bool | None

    def to_json(self) -> dict:
        return {"order": self.order, "budget": self.budget,
                "expected_cost": self.expected_cost, "epsilon_certified": self.epsilon_certified,
                "feasible": self.feasible}


@dataclass(frozen=True, eq=False)
class ReleasesDesign(ProvenBound, DesignResult):
    """Result of :func:`design_releases` / :func:`design_releases_line`.

    ``composed`` is the certificate (:func:`~optnoise.analysis.composition.compose_best`
    of the K-fold composition at ``delta``); ``epsilon_pld`` and ``epsilon_rdp`` are its
    PLD and RDP candidates. ``order``/``budget`` say which Rényi constraint produced the
    PMF (``budget`` = per-release ``D_order`` bound); ``surrogate_lower_bound`` is the lower
    bound of that convex program (a bound for the surrogate, not for the K-release problem);
    ``lower_bound`` is a proven lower bound on the cost of *every* noise whose K-fold
    composition meets the target (:mod:`.releases_bound`; ``bound_method`` says how), and
    ``gap``/``optimal`` are measured from it.
    ``mechanism`` is the noise with its neighbourhood and no single-release target (the
    target is the K-fold composition's).
    """

    pmf: Pmf
    k: int
    epsilon: float
    delta: float
    neighbourhood: Neighbourhood
    cost: str
    expected_cost: float
    method: str
    order: float | None
    budget: float | None
    lower_bound: float | None
    composed: Composed
    epsilon_pld: float | None
    epsilon_rdp: float | None
    solve_seconds: float
    trials: tuple[Trial, ...] = field(default_factory=tuple)
    surrogate_lower_bound: float | None = None
    bound_method: str | None = None

    @property
    def epsilon_certified(self) -> float:
        return float(self.composed.epsilon_dp)  # type: ignore[arg-type]

    @property
    def space(self) -> str:
        return "cyclic" if isinstance(self.pmf, CyclicPMF) else "integer"

    @cached_property
    def mechanism(self) -> Mechanism:
        """The designed noise as a :class:`~optnoise.mechanism.Mechanism` (no single-release target)."""
        return Mechanism(self.pmf, self.neighbourhood, None, f"optimal noise for {self.k} releases")

    def report_json(self) -> dict:
        out = {"k": self.k, "epsilon": self.epsilon, "delta": self.delta, "space": self.space,
               "neighbourhood": self.neighbourhood.to_json(), "cost": self.cost,
               "expected_cost": self.expected_cost, "method": self.method, "order": self.order,
               "budget": self.budget, "lower_bound": self.lower_bound, "bound_method": self.bound_method,
               "gap": self.gap, "optimal": self.optimal, "gap_tolerance": GAP_TOLERANCE,
               "surrogate_lower_bound": self.surrogate_lower_bound,
               "composed": self.composed.to_json(),
               "epsilon_certified": self.epsilon_certified, "epsilon_pld": self.epsilon_pld,
               "epsilon_rdp": self.epsilon_rdp, "solve_seconds": self.solve_seconds,
               "trials": [t.to_json() for t in self.trials]}
        if isinstance(self.pmf, IntegerPMF):
            out["tail_mass"] = self.pmf.tail_mass
        return out


# ------------------------------------------------------------------ calibrated baselines
@dataclass(frozen=True)
class ReleaseCandidate:
    """One mechanism calibrated so that its K-fold composition meets the target."""

    mechanism: str
    pmf: Pmf
    parameter: float | None
    parameter_name: str
    expected_cost: float
    composed: Composed
    note: str = ""
    lower_bound: float | None = None

    @property
    def gap(self) -> float | None:
        """Relative gap of ``expected_cost`` above ``lower_bound`` (a proven bound on every noise
        whose K-fold composition meets the target; ``None`` without one)."""
        from .bounds import relative_gap
        return None if self.lower_bound is None else relative_gap(self.expected_cost, self.lower_bound)

    @property
    def error_rate(self) -> float:
        """``P(noise != 0)``."""
        zero = self.pmf.probs[0] if isinstance(self.pmf, CyclicPMF) else self.pmf.mass(np.array([0]))[0]
        return float(1.0 - zero)

    def to_json(self) -> dict:
        out = {"mechanism": self.mechanism, "pmf": self.pmf.probs.tolist(), "parameter": self.parameter,
               "parameter_name": self.parameter_name, "expected_cost": self.expected_cost,
               "error_rate": self.error_rate, "composed": self.composed.to_json(), "note": self.note}
        if self.lower_bound is not None:
            out.update({"lower_bound": self.lower_bound, "gap": self.gap})
        if isinstance(self.pmf, IntegerPMF):
            out["offset"] = self.pmf.offset
        return out


# ------------------------------------------------------------------------------ API
def composed_epsilon(pmf: Pmf, k: int, delta: float, nb: Neighbourhood,
                     methods: Sequence[str] = ("exact", "pld", "rdp", "pure")) -> Composed:
    """The certified K-fold guarantee of a noise PMF (``compose_best`` at ``delta``)."""
    return compose_best([(privacy_profile(pmf, nb), int(k))], delta=delta, methods=methods)



#: Relative room left under the target when an RDP budget is spent to the full: the proven
#: composition adds the RDP value's float error and converts in interval arithmetic, so a
#: budget converting to eps exactly certifies a hair above it (10.0000000001 for 365 releases
#: at eps 10, delta 1e-6 on Z), and the design would be refused.
RDP_MARGIN = 1e-9


def _check_calibration_time(profile, k: int, steps: int, max_seconds: float | None) -> None:
    """Refuse, before it starts, a calibration whose compositions would take too long: about
    ``3 steps`` compositions of ``k`` releases (three orders), each estimated by
    :func:`optnoise.resources.pld_seconds` from the mechanism's PLD grid (issue 26: 10^8
    releases ground on for minutes)."""
    from ..analysis.composition import pld_cells
    from ..resources import check_time, pld_seconds
    calls = 3 * max(int(steps), 1)
    check_time(pld_seconds(pld_cells(profile), k) * calls, parameter="k", value=k,
               what=f"certifying the design by composing {k} releases ({calls} compositions with privacy loss "
                    "distributions, whose support grows with the number of releases)",
               way_out="fewer releases", max_seconds=max_seconds)


def _renyi_candidates(program_for: Callable[[float, float], RenyiProgram], k: int, eps: float, dlt: float,
                      nb: Neighbourhood, ords: list[float], calibrate: bool, calibration_steps: int, tol: float,
                      trials: list[Trial], reference: Callable[[], Pmf], max_seconds: float | None = None) -> list[tuple]:
    """The ``rdp`` design (cheapest single-order program certified by RDP) and, with
    ``calibrate``, the ``calibrated`` designs (budget raised while the exact composition
    allows) at the best order and its neighbours while that lowers the cost.

    ``program_for(alpha, budget)`` builds the program of one order and budget (on the
    line its tail depends on both). Returns ``(cost, pmf, method, order, budget, lower)``.
    """
    cands: list[tuple] = []
    rdp_best: tuple[float, int, float, RenyiSolution, RenyiProgram] | None = None
    for i, a in enumerate(ords):
        r = (eps * (1.0 - RDP_MARGIN) - conversion(a, dlt)) / k
        if r <= 0:
            continue
        prog = program_for(a, r)
        sol = solve_renyi_program(prog, a, (a - 1.0) * r, tol=tol)
        trials.append(Trial(a, r, sol.upper, None, None))
        if rdp_best is None or sol.upper < rdp_best[0]:
            rdp_best = (sol.upper, i, r, sol, prog)
    if rdp_best is not None:
        _, i_best, r_best, sol, prog = rdp_best
        cands.append((sol.upper, prog.pmf(sol.x), "rdp", ords[i_best], r_best, sol.lower))
    if not calibrate:
        return cands
    ref_profile = privacy_profile(min(cands, key=lambda c: c[0])[1] if cands else reference(), nb)
    _check_calibration_time(ref_profile, k, calibration_steps, max_seconds)
    if cands and not _certifies_without_rdp(cands[0][1], k, eps, dlt, nb):
        return cands

    def calibrated(i: int):
        a = ords[i]

        def certify(r: float):
            prog = program_for(a, r)
            s = solve_renyi_program(prog, a, (a - 1.0) * r, tol=tol)
            pmf = prog.pmf(s.x)
            c = composed_epsilon(pmf, k, dlt, nb, methods=("exact", "pld", "pure"))
            ok = c.epsilon_dp <= eps
            trials.append(Trial(a, r, s.upper, c.epsilon_dp, ok))
            return ok, (s, pmf)
        start = float(renyi_curve(ref_profile, [a])[0])
        if not (start > 0 and math.isfinite(start)):
            start = 1.0 / k
        got = largest_passing(certify, start, bisections=calibration_steps)
        return None if got is None else (got.payload[0].upper, got.value, got.payload)

    i0 = rdp_best[1] if rdp_best is not None else len(ords) // 2
    done: dict[int, tuple | None] = {i0: calibrated(i0)}
    for direction in (-1, 1):
        i = i0
        while 0 <= i + direction < len(ords):
            j = i + direction
            done[j] = calibrated(j)
            if done[j] is None or done[i] is None or done[j][0] >= done[i][0] * (1.0 - 1e-4):
                break
            i = j
    for i, got in done.items():
        if got is not None:
            cost_i, r_i, (s_i, pmf_i) = got
            cands.append((cost_i, pmf_i, "calibrated", ords[i], r_i, s_i.lower))
    return cands


def _certifies_without_rdp(pmf: Pmf, k: int, eps: float, dlt: float, nb: Neighbourhood) -> bool:
    """Whether the exact, PLD and pure compositions -- the certificates a calibration raises the
    budget with -- certify the RDP design itself.

    A heuristic that decides only how hard to search, never what is certified: when they do
    not (365 releases of noise on the integer line at delta 1e-6: the PLD's proven numerical
    allowance, K times the per-release error, exceeds delta), the calibration at the RDP
    design's order can only pass at a smaller budget, i.e. costlier noise, and the walk over
    the other orders is skipped (it took 95 of the 100 s of that design, and every candidate it
    found cost 90-280x the RDP design's). Another order's program could in principle be
    certified by the PLD at a cheaper point; the designs of the test suite and the docs are
    unchanged (tests/test_releases_design.py)."""
    return composed_epsilon(pmf, k, dlt, nb, methods=("exact", "pld", "pure")).epsilon_dp <= eps


def _result(pmf: Pmf, method: str, order, budget, lower, trials, *, k: int, eps: float, dlt: float,
            nb: Neighbourhood, cost_name: str, cost_of: Callable[[Pmf], float], t0: float,
            proven: "Bound | None" = None) -> ReleasesDesign:
    comp = composed_epsilon(pmf, k, dlt, nb, methods=("exact", "pld", "rdp", "pure"))
    # a float design meets its target within the float-profile tolerance (docs/architecture.md,
    # "Meets"); the certificate itself is proven, rounded up, and reported as it is
    if not comp.epsilon_dp <= eps * (1.0 + MEETS_TOLERANCE):
        raise DesignError(f"the design certifies eps {float(comp.epsilon_dp):.12g} > target {float(eps):.12g}; "
                          "refusing to return it")
    pld_c, rdp_c = comp.candidate("pld"), comp.candidate("rdp")
    ok = proven is not None and math.isfinite(proven.value)
    return ReleasesDesign(pmf, k, eps, dlt, nb, cost_name, cost_of(pmf), method, order, budget,
                          proven.value if ok else None,  # type: ignore[union-attr]
                          comp, pld_c.epsilon if pld_c else None, float(rdp_c.epsilon) if rdp_c else None,
                          time.perf_counter() - t0, tuple(trials), lower, proven.method if ok else None)  # type: ignore[union-attr]


def _cheapest(cands: list[tuple], strategies: Sequence[str], single: Callable[[], "ReleaseCandidate"],
              finish: Callable[..., ReleasesDesign], trials: list[Trial]) -> ReleasesDesign:
    """The cheapest candidate ``(cost, pmf, method, order, budget, lower)``, the single-release
    optimum (``single()``) included when ``strategies`` asks for it; certified by ``finish``."""
    if "single-release" in strategies:
        row = single()
        cands.append((row.expected_cost, row.pmf, "single-release", None, row.parameter, None))
    if not cands:
        raise DesignError("no Rényi order gives a positive per-release budget at this (epsilon, delta, k); "
                          "add larger orders or raise epsilon")
    _, pmf, method, order, budget, lower = min(cands, key=lambda c: c[0])
    return finish(pmf, method, order, budget, lower, trials)


#: Most half-width of the window over which a pure K-release bound on Z is proven.
BOUND_HALF_MAX = 4000


def bound_half(eps: float, k: int, dmax: int) -> int:
    """The window of the pure K-release bound on Z (:mod:`.releases_bound`): wide enough that the
    geometric at ``eps / K`` leaves about ``e^-24`` beyond it, at most :data:`BOUND_HALF_MAX`
    (a narrower window gives a valid but looser bound)."""
    return int(min(BOUND_HALF_MAX, max(8, dmax, math.ceil(24.0 * k * dmax / eps))))


def line_reach(nb: Neighbourhood) -> int:
    """The largest distance of a neighbourhood on the integer line."""
    return max(abs(s) for s in nb.integer_shifts())


def sigma0(k: int, eps: float, dlt: float, d: int) -> float:
    """The discrete Gaussian's ``sigma`` that certainly meets the K-fold target: it is
    ``K D^2 / (2 sigma^2)``-zCDP (Canonne, Kamath & Steinke 2020) and Bun & Steinke 2016,
    Prop. 1.3 (``eps = rho + 2 sqrt(rho log(1/delta))``) converts."""
    lg = math.log(1.0 / dlt)
    rho_total = (math.sqrt(lg + eps) - math.sqrt(lg)) ** 2        # rho + 2 sqrt(rho lg) = eps
    return d * math.sqrt(k / (2.0 * rho_total))


def geometric_ratio_for(budget: float, alpha: float, nb: Neighbourhood) -> float:
    """The ratio ``a`` of the two-sided geometric whose order-``alpha`` Rényi divergence
    (worst shift of ``nb``) is ``budget`` (bisection on ``a`` to a width of ``1e-13``; the
    divergence decreases as ``a -> 1``): the tail of the line programs, and their strictly
    feasible start."""
    def ok(a: float) -> bool:
        return float(renyi_curve(privacy_profile(geometric_pmf(a), nb), [alpha])[0]) <= budget
    try:
        return boundary(ok, 1e-6, 1.0 - 1e-12, ok_side="upper", iterations=100, tolerance=1e-13)
    except SearchError:   # no ratio below 1 spends so little: the flattest one represented
        return 1.0 - 1e-12


def calibrated_single_release(n: int, k: int, *, epsilon: float, delta: float,
                              neighbourhood: Neighbourhood | None = None,
                              cost: str | Sequence[float] | np.ndarray = "circular-mse",
                              per_release_deltas: Sequence[float] | None = None) -> ReleaseCandidate:
    """The single-release optimum (:func:`~optnoise.design.finite.design_finite`) at the
    per-release ``(eps1, delta1)`` whose K-fold composition meets the target; ``eps1`` by
    bisection for each ``delta1`` in ``per_release_deltas`` (default ``0`` and ``delta / K``),
    cheapest kept (:func:`optnoise.design.calibrate.calibrate` with a builder).

    ``eps1 = eps / K`` is always feasible: basic composition gives ``(eps, K delta1)``
    with ``K delta1 <= delta``.
    """
    request = Request(space="cyclic", n=n, target=Target(epsilon, delta), neighbourhood=neighbourhood, releases=k,
                      cost=cost)
    return _single_release(request, per_release_deltas)


def _single_release(request: Request, per_release_deltas: Sequence[float] | None = None) -> ReleaseCandidate:
    n, k, tgt = request.largest, request.releases, request.target
    eps, dlt = tgt.epsilon, tgt.delta  # type: ignore[union-attr]
    rho = request.loss[1]
    d1s = per_release_deltas if per_release_deltas is not None else ((0.0, dlt / k) if dlt > 0 else (0.0,))
    best: ReleaseCandidate | None = None
    for d1 in d1s:
        check_delta(d1, parameter="per_release_deltas", at_most=dlt / k * (1.0 + 1e-12),
                    accepted=f"values in [0, delta / k] = [0, {dlt / k:g}]")

        def build(e: float, d1: float = d1) -> Pmf:
            return solve_finite(Request(space="cyclic", n=n, target=Target(e, d1), neighbourhood=request.neighbours,
                                        cost=request.cost if request.cost is not None else "circular-mse")).pmf
        found = calibrate(build, request, start=eps / k, name="single-release")
        row = ReleaseCandidate("single-release", found.representation, found.parameter,  # type: ignore[arg-type]
                               f"per-release epsilon (per-release delta {d1:g})",
                               float(rho @ found.representation.probs), found.composed,  # type: ignore[operator]
                               f"design_finite at ({found.parameter:.6g}, {d1:g}) composed {k} times")
        if best is None or row.expected_cost < best.expected_cost:
            best = row
    assert best is not None
    return best


def calibrated_single_release_line(k: int, *, epsilon: float, delta: float,
                                   neighbourhood: Neighbourhood | None = None,
                                   cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The single-release pure-DP optimum on Z (:func:`~.integer.design_integer`, sensitivity =
    the largest distance) at the per-release ``eps1`` whose K-fold composition meets the
    target (``eps1 = eps / K`` always does)."""
    return _single_release_line(Request(space="integer", target=Target(epsilon, delta), neighbourhood=neighbourhood,
                                        releases=k, cost=cost))


def _single_release_line(request: Request) -> ReleaseCandidate:
    k, tgt = request.releases, request.target
    nb = request.neighbours
    dmax = line_reach(nb)  # type: ignore[arg-type]
    c = parse_cost(request.cost if request.cost is not None else "sq")
    found = calibrate(lambda e: design_integer(e, dmax, c).pmf, request, start=tgt.epsilon / k,  # type: ignore[union-attr]
                      name="single-release")
    return ReleaseCandidate("single-release", found.representation, found.parameter,  # type: ignore[arg-type]
                            "per-release epsilon (pure)", expected_cost(found.representation, c),  # type: ignore[arg-type]
                            found.composed, f"design_integer at eps {found.parameter:.6g} composed {k} times")


def solve_releases(request: Request) -> ReleasesDesign:
    """The K-release design of a validated request (``problem == "releases"``): noise on the
    cycle (:func:`optnoise.design.releases.design_releases`) or on the integer line
    (:func:`optnoise.design.releases.design_releases_line`) of least expected cost whose K-fold
    composition meets the target."""
    return _cyclic(request) if request.space == "cyclic" else _line(request)


def _cyclic(request: Request) -> ReleasesDesign:
    n, k, tgt, nb, opts = request.largest, request.releases, request.target, request.neighbours, request.solver
    eps, dlt = tgt.epsilon, tgt.delta  # type: ignore[union-attr]
    size = n + 1
    cost = request.cost if request.cost is not None else "circular-mse"
    cost_name, rho, _ = request.loss
    t0 = time.perf_counter()

    def finish(pmf, method, order, budget, lower, trials):
        shifts = [int(s[0]) for s in nb.cyclic_shifts((size,))]  # type: ignore[union-attr]
        proven = cyclic_releases_bound(np.asarray(rho, dtype=np.float64), shifts, eps, dlt, k)  # type: ignore[arg-type]
        return _result(pmf, method, order, budget, lower, trials, k=k, eps=eps, dlt=dlt, nb=nb,  # type: ignore[arg-type]
                       cost_name=cost_name, cost_of=lambda p: float(rho @ p.probs), t0=t0,  # type: ignore[operator]
                       proven=proven)

    if dlt == 0.0:
        # k-fold pure DP of one mechanism is exactly k eps_pure: the problem is the single-release one
        fd = solve_finite(Request(space="cyclic", n=n, target=Target(eps / k), neighbourhood=nb, cost=cost))
        return finish(fd.pmf, "pure-split", None, None, None, ())
    trials: list[Trial] = []
    cands: list[tuple] = []
    if "renyi" in opts.strategies:
        prog = cyclic_program(size, nb, rho)  # type: ignore[arg-type]
        cands += _renyi_candidates(lambda a, r: prog, k, eps, dlt, nb, list(opts.orders), opts.calibrate,  # type: ignore[arg-type]
                                   opts.calibration_steps, opts.tol, trials,
                                   lambda: CyclicPMF(np.full(size, 1.0 / size)), request.max_seconds)
    return _cheapest(cands, opts.strategies, lambda: _single_release(request), finish, trials)


def _line(request: Request) -> ReleasesDesign:
    k, tgt, opts = request.releases, request.target, request.solver
    eps, dlt = tgt.epsilon, tgt.delta  # type: ignore[union-attr]
    nb = request.neighbours
    dmax = line_reach(nb)  # type: ignore[arg-type]
    c = parse_cost(request.cost if request.cost is not None else "sq")
    t0 = time.perf_counter()

    half_width = opts.half_width
    if half_width is None:
        half = max(8, dmax, int(math.ceil(6.0 * sigma0(k, eps, dlt, dmax)))) if dlt > 0 else bound_half(eps, k, dmax)
    elif isinstance(half_width, bool) or int(half_width) != half_width or half_width < max(1, dmax):
        raise InvalidParameterError("half_width", half_width, f"an integer >= the largest distance {dmax}")
    else:
        half = int(half_width)

    def finish(pmf, method, order, budget, lower, trials):
        proven = line_releases_bound(half, nb.integer_shifts(), eps, dlt, k, c)  # type: ignore[union-attr]
        return _result(pmf, method, order, budget, lower, trials, k=k, eps=eps, dlt=dlt, nb=nb,
                       cost_name=c.name, cost_of=lambda p: expected_cost(p, c), t0=t0, proven=proven)

    if dlt == 0.0:
        return finish(design_integer(eps / k, dmax, c).pmf, "pure-split", None, None, None, ())
    trials: list[Trial] = []
    cands: list[tuple] = []
    if "renyi" in opts.strategies:
        def program_for(alpha: float, budget: float) -> RenyiProgram:
            ratio = geometric_ratio_for(budget / 2.0, alpha, nb)
            return integer_program(TailedWindow(half, 1, ratio), nb, c)
        cands += _renyi_candidates(program_for, k, eps, dlt, nb, list(opts.orders), opts.calibrate,
                                   opts.calibration_steps, opts.tol, trials, lambda: geometric_pmf(0.5),
                                   request.max_seconds)
    return _cheapest(cands, opts.strategies, lambda: _single_release_line(request), finish, trials)


__all__ = ["RDP_MARGIN", "ReleaseCandidate", "ReleasesDesign", "Trial", "calibrated_single_release",
           "calibrated_single_release_line",
           "composed_epsilon", "geometric_ratio_for", "line_reach", "sigma0", "solve_releases"]
