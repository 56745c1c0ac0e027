"""Noise designed for K releases, and the usual mechanisms calibrated for K releases beside it.

The K-release design itself (the Rényi-constrained convex programs, the budget calibrated by
exact composition) is :mod:`.releases_design` on :mod:`.renyi_program`; this module holds the
baselines it is compared with -- the geometric and the discrete Gaussian calibrated so that
their K-fold composition meets the same target (:func:`optnoise.design.calibrate.calibrate`
with a builder), the single-release optimum composed K times -- the comparison
(:func:`compare_releases`, ``optnoise compare --releases``), the data of its plots, and the
historic entry points :func:`design_releases` and :func:`design_releases_line`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ..analysis import privacy_profile
from ..analysis.composition import delta_curve
from ..costs import Cost, expected_cost, parse_cost
from ..errors import InvalidParameterError
from ..families.baselines import discrete_gaussian_pmf, wrap
from ..families.geometric import geometric_pmf
from ..neighbourhood import Neighbourhood, as_neighbourhood
from ..target import Target, check_delta
from .calibrate import calibrate
from .releases_design import (
    RDP_MARGIN, ReleaseCandidate, ReleasesDesign, Trial, calibrated_single_release, calibrated_single_release_line,
    composed_epsilon, geometric_ratio_for, line_reach, sigma0, solve_releases,
)
from .renyi_program import (
    Pmf, RenyiProgram, RenyiSolution, constraint_terms, conversion, cyclic_program, integer_program, log_renyi_sums,
    solve_renyi_program,
)
from .request import DESIGN_ORDERS, Request, SolverOptions


@dataclass(frozen=True)
class ReleasesComparison:
    """Result of :func:`compare_releases`: one row per mechanism, cheapest first; ``lower_bound``
    (with ``bound_method``) is the K-release design's proven bound on every noise whose K-fold
    composition meets the target (:mod:`.releases_bound`), which every row also holds (its
    JSON: ``lower_bound`` and its ``gap`` above it)."""

    n: int | None
    k: int
    epsilon: float
    delta: float
    cost: str
    neighbourhood: Neighbourhood
    rows: tuple[ReleaseCandidate, ...]
    space: str = "cyclic"
    lower_bound: float | None = None
    bound_method: str | None = None

    @property
    def best(self) -> str:
        return self.rows[0].mechanism

    def row(self, mechanism: str) -> ReleaseCandidate:
        return next(r for r in self.rows if r.mechanism == mechanism)

    def to_json(self) -> dict:
        return {"n": self.n, "k": self.k, "epsilon": self.epsilon, "delta": self.delta, "cost": self.cost,
                "space": self.space, "neighbourhood": self.neighbourhood.to_json(), "best": self.best,
                "lower_bound": self.lower_bound, "bound_method": self.bound_method,
                "rows": [r.to_json() for r in self.rows]}


def _max_distance(nb: Neighbourhood, size: int) -> int:
    return max(min(s[0], size - s[0]) for s in nb.cyclic_shifts((size,)))


def _calibrated(name: str, request: Request, build: Callable[[float], Pmf], start: float, parameter: Callable,
                parameter_name: str, note: str) -> ReleaseCandidate:
    """A family calibrated so that its K-fold composition meets the request's target, as a row."""
    found = calibrate(build, request, start=start, name=name)
    pmf = found.representation
    cost = float(request.loss[1] @ pmf.probs) if request.space == "cyclic" else \
        expected_cost(pmf, parse_cost(request.cost if request.cost is not None else "sq"))  # type: ignore[arg-type]
    return ReleaseCandidate(name, pmf, parameter(found.parameter), parameter_name, cost,  # type: ignore[arg-type]
                            found.composed, note)


def geometric_for(request: Request) -> ReleaseCandidate:
    """The two-sided geometric (wrapped onto ``{0..n}``, or on Z with exact tails), per-unit
    ``eps1`` calibrated for the request's K releases."""
    k, eps = request.releases, request.target.epsilon  # type: ignore[union-attr]
    if request.space == "cyclic":
        size = request.size
        start = eps / (k * _max_distance(request.neighbours, size))  # type: ignore[arg-type]  # pure: eps1 * distance
        return _calibrated("geometric", request, lambda e: wrap(geometric_pmf(math.exp(-e)), size), start,
                           lambda e: e, "epsilon per unit distance (alpha = exp(-eps1))", "wrapped modulo n + 1")
    dmax = line_reach(request.neighbours)  # type: ignore[arg-type]
    return _calibrated("geometric", request, lambda e: geometric_pmf(math.exp(-e)), eps / (k * dmax), lambda e: e,
                       "epsilon per unit distance (alpha = exp(-eps1))", "on Z, exact tails")


def discrete_gaussian_for(request: Request) -> ReleaseCandidate:
    """The discrete Gaussian (wrapped onto ``{0..n}``, or on Z), ``sigma`` calibrated for the
    request's K releases. Start: :func:`~.releases_design.sigma0` (zCDP; wrapping is
    post-processing) certainly meets the target; the search then lowers ``sigma``. On Z it is
    certified as represented (:func:`~optnoise.families.baselines.discrete_gaussian_pmf`: the
    window ``+-40 sigma``, masses beyond it below the float range and dropped); its loss
    distributions include the edge's infinite-loss mass, so the PLD certificate is that of the
    represented (and sampled) noise."""
    k, tgt = request.releases, request.target
    check_delta(tgt.delta, positive=True, accepted="delta > 0 for the discrete Gaussian")  # type: ignore[union-attr]
    eps, dlt = tgt.epsilon, tgt.delta  # type: ignore[union-attr]
    if request.space == "cyclic":
        size = request.size
        sigma_cap = 8.0 * size                                        # wider is uniform to double precision
        start = 1.0 / min(sigma0(k, eps, dlt, _max_distance(request.neighbours, size)), sigma_cap)  # type: ignore[arg-type]
        return _calibrated("discrete-gaussian", request, lambda s: wrap(discrete_gaussian_pmf(1.0 / s), size), start,
                           lambda s: 1.0 / s, "sigma", "wrapped modulo n + 1")
    start = 1.0 / sigma0(k, eps, dlt, line_reach(request.neighbours))  # type: ignore[arg-type]
    return _calibrated("discrete-gaussian", request, lambda s: discrete_gaussian_pmf(1.0 / s), start,
                       lambda s: 1.0 / s, "sigma", "on Z, window +-40 sigma")


def _cyclic_request(n: int, k: int, epsilon: float, delta: float, neighbourhood: Neighbourhood | None,
                    cost: object) -> Request:
    return Request(space="cyclic", n=n, target=Target(epsilon, delta), neighbourhood=neighbourhood, releases=k,
                   cost=cost)


def _line_request(k: int, epsilon: float, delta: float, neighbourhood: Neighbourhood | None,
                  cost: object) -> Request:
    return Request(space="integer", target=Target(epsilon, delta), neighbourhood=neighbourhood, releases=k, cost=cost)


def calibrated_geometric(n: int, k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                         cost: str | Sequence[float] | np.ndarray = "circular-mse") -> ReleaseCandidate:
    """Two-sided geometric wrapped onto ``{0..n}`` (``wrap``), per-unit ``eps1`` calibrated for K releases."""
    return geometric_for(_cyclic_request(n, k, epsilon, delta, neighbourhood, cost))


def calibrated_discrete_gaussian(n: int, k: int, *, epsilon: float, delta: float,
                                 neighbourhood: Neighbourhood | None = None,
                                 cost: str | Sequence[float] | np.ndarray = "circular-mse") -> ReleaseCandidate:
    """Discrete Gaussian wrapped onto ``{0..n}``, ``sigma`` calibrated for K releases (:func:`discrete_gaussian_for`)."""
    return discrete_gaussian_for(_cyclic_request(n, k, epsilon, delta, neighbourhood, cost))


def calibrated_geometric_line(k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                              cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The two-sided geometric on Z (exact tails), per-unit ``eps1`` calibrated for K releases."""
    return geometric_for(_line_request(k, epsilon, delta, neighbourhood, cost))


def calibrated_discrete_gaussian_line(k: int, *, epsilon: float, delta: float,
                                      neighbourhood: Neighbourhood | None = None,
                                      cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The discrete Gaussian on Z, ``sigma`` calibrated for K releases (:func:`discrete_gaussian_for`)."""
    return discrete_gaussian_for(_line_request(k, epsilon, delta, neighbourhood, cost))


def releases_comparison(request: Request, *, single_release: bool = True) -> ReleasesComparison:
    """The K-release design against the single-release optimum composed K times and the
    geometric and discrete Gaussian calibrated for K releases, at the request's target.

    The ``k-release`` row is what :func:`~.releases_design.solve_releases` returns with the
    Rényi designs only, unless ``single_release`` lets the single-release optimum win (its
    note says which). Every row is certified by
    :func:`~optnoise.analysis.composition.compose_best` (the K-fold composition meets the
    target); rows are sorted by expected cost (on a tie the ``k-release`` row first).
    """
    tgt, nb, k = request.target, request.neighbours, request.releases
    renyi = request.replace(solver=SolverOptions(**{**request.solver.__dict__, "strategies": ("renyi",)}))
    d = solve_releases(renyi)
    cyclic = request.space == "cyclic"
    single = calibrated_single_release(request.largest, k, epsilon=tgt.epsilon, delta=tgt.delta,  # type: ignore[union-attr]
                                       neighbourhood=nb, cost=request.cost if request.cost is not None  # type: ignore[arg-type]
                                       else "circular-mse") if cyclic else \
        calibrated_single_release_line(k, epsilon=tgt.epsilon, delta=tgt.delta, neighbourhood=nb,  # type: ignore[union-attr, arg-type]
                                       cost=request.cost if request.cost is not None else "sq")
    rows = [single, geometric_for(request)]
    if tgt.delta > 0:  # type: ignore[union-attr]
        rows.append(discrete_gaussian_for(request))
    if single_release and single.expected_cost < d.expected_cost:
        best = ReleaseCandidate("k-release", single.pmf, single.parameter, single.parameter_name,
                                single.expected_cost, single.composed,
                                "single-release optimum (cheaper here than every Rényi design, "
                                f"best {d.expected_cost:.6g})")
    else:
        best = ReleaseCandidate("k-release", d.pmf, d.order, "Rényi order constrained", d.expected_cost, d.composed,
                                f"{d.method}; per-release D_{d.order:g} <= {d.budget:.6g}" if d.order else d.method)
    rows.insert(0, best)
    rows = [replace(r, lower_bound=d.lower_bound) for r in rows]
    rows.sort(key=lambda r: r.expected_cost)
    return ReleasesComparison(request.largest if cyclic else None, k, tgt.epsilon, tgt.delta,  # type: ignore[union-attr]
                              request.cost_name, nb, tuple(rows), request.space,  # type: ignore[arg-type]
                              d.lower_bound, d.bound_method)


def compare_releases(n: int | None, k: int, *, epsilon: float, delta: float,
                     neighbourhood: Neighbourhood | None = None,
                     cost: str | Sequence[float] | np.ndarray | None = None, space: str = "cyclic",
                     design_options: dict | None = None) -> ReleasesComparison:
    """:func:`releases_comparison` of the request ``(space, n, Target(epsilon, delta),
    neighbourhood, cost, releases=k)``; ``space="cyclic"`` (noise mod ``n + 1``, default cost
    ``circular-mse``) or ``"integer"`` (noise on Z, ``n`` unused, default cost ``sq``).
    ``design_options``: the K-release design's :class:`~optnoise.design.request.SolverOptions`
    (``strategies`` must hold ``"renyi"``)."""
    if space not in ("cyclic", "integer"):
        raise InvalidParameterError("space", space, "'cyclic' or 'integer'")
    opts = SolverOptions(**dict(design_options or {}))
    if "renyi" not in opts.strategies:
        raise InvalidParameterError("strategies", list(opts.strategies), "'renyi' (and optionally 'single-release')")
    request = Request(space=space, n=n if space == "cyclic" else None, target=Target(epsilon, delta),
                      neighbourhood=neighbourhood, releases=k, cost=cost, solver=opts)
    return releases_comparison(request, single_release="single-release" in opts.strategies)



# ------------------------------------------------------------------------- plot data
def composed_profiles(mechanisms: dict[str, Pmf], k: int, epsilons: Sequence[float],
                      neighbourhood: Neighbourhood | None = None) -> dict[str, np.ndarray]:
    """``delta(eps)`` after K releases for each named PMF (for a privacy-profile plot):
    :func:`~optnoise.analysis.composition.delta_curve`."""
    nb = as_neighbourhood(neighbourhood)
    return {name: delta_curve([(privacy_profile(pmf, nb), int(k))], epsilons)[1] for name, pmf in mechanisms.items()}


def cost_table(comparisons: Sequence[ReleasesComparison]) -> dict[str, np.ndarray]:
    """Expected cost of each mechanism for each comparison's K (for a cost-vs-K plot):
    ``{"k": array, mechanism: array of costs, ...}``."""
    out: dict[str, list[float]] = {}
    for comp in comparisons:
        for r in comp.rows:
            out.setdefault(r.mechanism, []).append(r.expected_cost)
    res = {"k": np.asarray([c.k for c in comparisons])}
    res.update({m: np.asarray(v) for m, v in out.items()})
    return res


def cost_against_k(n: int | None, ks: Sequence[int], *, epsilon: float, delta: float,
                   neighbourhood: Neighbourhood | None = None,
                   cost: str | Sequence[float] | np.ndarray | None = None,
                   space: str = "cyclic") -> dict[str, np.ndarray]:
    """:func:`cost_table` of :func:`compare_releases` at each K in ``ks``."""
    return cost_table([compare_releases(n, int(k), epsilon=epsilon, delta=delta, neighbourhood=neighbourhood,
                                        cost=cost, space=space) for k in ks])


def design_releases(n: int, k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                    cost: str | Sequence[float] | np.ndarray = "circular-mse",
                    orders: Sequence[float] = DESIGN_ORDERS, calibrate: bool = True,
                    strategies: Sequence[str] = ("renyi", "single-release"),
                    calibration_steps: int = 10, tol: float = 1e-9) -> ReleasesDesign:
    """Cyclic noise on ``{0..n}`` of least expected cost whose K-fold composition is ``(eps, delta)``-DP.

    Parameters
    ----------
    n:
        Largest answer; noise is added modulo ``n + 1``.
    k:
        Number of releases (same query, same neighbouring datasets, independent noise).
    epsilon, delta:
        Target of the K-fold composition (approximate DP).
    neighbourhood:
        Query distances (default SD 1, symmetric).
    cost:
        A cost name of :func:`~optnoise.costs.cost_vector` or a vector.
    orders:
        Rényi orders of the single-order convex programs (module docstring).
    calibrate:
        Loosen the Rényi budget while the exact (PLD) certificate allows, at the best
        order and its neighbours on ``orders`` while that lowers the cost.
    strategies:
        ``"renyi"``: the Rényi-constrained convex designs; ``"single-release"``: the
        single-release optimum at a per-release ``(eps1, delta1)`` calibrated for K
        releases (:func:`calibrated_single_release`). The cheapest certified one is
        returned; ``method`` says which.
    calibration_steps:
        Bisection steps on the budget per calibrated order.
    tol:
        Relative duality gap of the barrier solver.

    Returns
    -------
    ReleasesDesign
        The PMF, its cost and both certificates. At ``delta = 0`` pure DP composes
        exactly (``K eps_pure`` for one mechanism), so the design is the single-release
        optimum at ``eps / K`` (method ``"pure-split"``), which is optimal.
    """
    opts = SolverOptions(orders=tuple(orders), calibrate=calibrate, strategies=tuple(strategies),
                         calibration_steps=calibration_steps, tol=tol)
    return solve_releases(Request(space="cyclic", n=n, target=Target(epsilon, delta), neighbourhood=neighbourhood,
                                  releases=_k(k), cost=cost, solver=opts))


def design_releases_line(k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                         cost: str | Cost | Callable = "sq", half_width: int | None = None,
                         orders: Sequence[float] = DESIGN_ORDERS, calibrate: bool = True,
                         strategies: Sequence[str] = ("renyi", "single-release"),
                         calibration_steps: int = 10, tol: float = 1e-9) -> ReleasesDesign:
    """Noise on the integer line (window with exact geometric tails) of least expected cost
    whose K-fold composition is ``(eps, delta)``-DP.

    A thin wrapper, kept for one version (deprecated): ``optnoise.design(optnoise.Request(
    space="integer", target=Target(epsilon, delta), neighbourhood=..., cost=..., releases=k))``.

    The line version of :func:`design_releases` (module docstring: the tail ratio of each
    single-order program is the geometric's that spends half its budget). Parameters as
    there, plus ``cost`` (``sq``, ``abs``, ``pow:K``, ``er``; default ``sq``) and
    ``half_width`` (window ``-L..L``; default ``6 sigma0`` with ``sigma0`` from
    :func:`_sigma0`, at least ``8`` and the largest distance). ``strategies``
    ``"single-release"`` is the pure-DP optimum on Z (:func:`~.integer.design_integer`)
    calibrated for K releases. At ``delta = 0`` the design is that optimum at ``eps / K``.
    """
    opts = SolverOptions(orders=tuple(orders), calibrate=calibrate, strategies=tuple(strategies),
                         calibration_steps=calibration_steps, tol=tol, half_width=half_width)
    return solve_releases(Request(space="integer", target=Target(epsilon, delta), neighbourhood=neighbourhood,
                                  releases=_k(k), cost=cost, solver=opts))


def _k(k: object) -> int:
    """The number of releases as the historic functions named it (``k``)."""
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer)) or int(k) != k or k < 1:
        raise InvalidParameterError("k", k, "an integer number of releases >= 1")
    return int(k)


__all__ = ["DESIGN_ORDERS", "RDP_MARGIN", "ReleaseCandidate", "ReleasesComparison", "ReleasesDesign",
           "RenyiProgram", "RenyiSolution", "Trial", "calibrated_discrete_gaussian",
           "calibrated_discrete_gaussian_line", "calibrated_geometric", "calibrated_geometric_line",
           "calibrated_single_release", "calibrated_single_release_line", "compare_releases", "composed_epsilon",
           "composed_profiles", "constraint_terms", "conversion", "cost_against_k", "cost_table", "cyclic_program",
           "design_releases", "design_releases_line", "discrete_gaussian_for", "geometric_for",
           "geometric_ratio_for", "integer_program", "log_renyi_sums", "releases_comparison",
           "solve_renyi_program"]
