"""The one door: :func:`design` answers a :class:`~optnoise.design.request.Request`.

Which problem answers a request is the request's own word
(:attr:`~optnoise.design.request.Request.problem`); this module only hands it to the solver
of that problem and wraps the answer in one shape, :class:`~optnoise.design.report.Design`:

========== ===================================================== ==============================
problem    solver                                                 paper
========== ===================================================== ==============================
finite     LP / MILP on the cycle (:mod:`.finite`)                Kadam et al. 2024 (13)-(15)
modulo     noise mod n+1 for a released-value cost (:mod:`.modulo`) (issue 15)
channel    channel LP / MILP on {0..n} (:mod:`.channel_design`)   Ghosh et al.; Cormode et al.
releases   Rényi-constrained design for K releases               Mironov; Canonne et al. 2020
           (:mod:`.releases_design`)
rr         optimal randomized response (:mod:`.rr`)               Holohan et al. Thms 8-10
calibrated a family's least noisy member (:mod:`.calibrate`)      (one monotone search)
========== ===================================================== ==============================

A target of the ``attack`` notion is designed as the cheapest of its ``(epsilon, delta)``
members, each by the request's own problem (:mod:`.attack`); a family is calibrated to it
directly, on its trade-off curve (:mod:`.calibrate`).

Solvers are imported when first asked for, so that asking for one does not load the others.

>>> from optnoise import Neighbourhood, Target
>>> d = design(Request(space="cyclic", n=4, target=Target(1.0), neighbourhood=Neighbourhood.sd(1)))
>>> d.report.method, d.mechanism.kind, d.report.certificate.exact
('lp', 'cyclic', True)
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import InvalidParameterError
from .report import Design, DesignReport
from .request import Request


def _finite(request: Request) -> Any:
    from .finite import solve_finite
    return solve_finite(request)


def _modulo(request: Request) -> Any:
    from .modulo import solve_modulo
    return solve_modulo(request)


def _channel(request: Request) -> Any:
    from .remap_design import remap_request, solve_remap_channel
    if remap_request(request):   # as solve_channel answers it (no block or large request is one), without
        return solve_remap_channel(request)   # importing the dense channel's model (scipy.sparse): 0.4 s a query
    from .channel_design import solve_channel
    return solve_channel(request)


def _releases(request: Request) -> Any:
    from .releases_design import solve_releases
    return solve_releases(request)


def _rr(request: Request) -> Any:
    from .rr import solve_rr
    return solve_rr(request)


def _calibrated(request: Request) -> Any:
    from .calibrate import calibrate
    from .family_bound import with_bound
    return with_bound(calibrate(request.family, request), request)  # type: ignore[arg-type]


#: problem -> solver (each returns its own result, the ``details`` of the design).
SOLVERS: dict[str, Callable[[Request], Any]] = {
    "finite": _finite, "modulo": _modulo, "channel": _channel, "releases": _releases, "rr": _rr,
    "calibrated": _calibrated,
}


def design(request: Request) -> Design:
    """The best mechanism for a request (or the calibrated family it names), with its report.

    Parameters
    ----------
    request:
        What is asked (:class:`~optnoise.design.request.Request`, validated when built).

    Returns
    -------
    Design
        ``.mechanism`` (with the request's neighbourhood and target) and ``.report``: the
        cost, how it was solved, the float ``analysis`` and the exact ``certificate`` of the
        quantized weights that are sampled.

    Raises
    ------
    InvalidParameterError
        A model too large for ``max_memory`` (named, before anything is allocated).
    DesignError
        An infeasible request, a time limit, or a solver failure (exit 1 on the command line).
    """
    if not isinstance(request, Request):
        raise InvalidParameterError("request", type(request).__name__, "an optnoise.Request")
    solve = SOLVERS[request.problem]
    by_members = request.target.notion == "attack" and request.problem != "calibrated"  # type: ignore[union-attr]
    details = _attack(request, solve) if by_members else solve(request)  # a family: calibrated to the curve itself
    return Design(details.mechanism, DesignReport(request, details.mechanism, details))


def _attack(request: Request, solve: Callable[[Request], Any]) -> Any:
    """An attack target: the cheapest design over its ``(epsilon, delta)`` members, each the
    request's own problem at that member (:func:`optnoise.design.attack.design_attack`), its
    exact trade-off curve checked against the target."""
    from .attack import AttackResult, design_attack, symmetric_neighbours
    target = request.target
    nb = request.neighbours
    symmetric = symmetric_neighbours(nb)
    got = design_attack(target, lambda member: solve(request.replace(target=member)),  # type: ignore[arg-type]
                        lambda d: d.expected_cost, symmetric=symmetric,
                        check=lambda d: d.mechanism.meets(target, exact=True))
    return AttackResult(got, checked_on_curve(got.design.mechanism, target))


def checked_on_curve(mechanism: Any, target: Any) -> dict:
    """The attack target checked on the exact trade-off curve of the quantized weights that are
    sampled (rounded up): the TPR at ``at_fpr`` and/or the Gaussian-DP mu, and ``meets``. The
    member those weights were certified for implies the target (module :mod:`.attack`); this
    is the direct check of the same claim on the curve itself."""
    from ..analysis.tradeoff import tradeoff
    q = mechanism.quantize()
    sampled = q.channel if q.kind == "channel" else q.pmf
    curve = tradeoff(sampled, mechanism.neighbourhood, exact=True, max_memory=None)
    tpr = curve.tpr(target.at_fpr)[0] if target.max_tpr is not None else None
    mu = curve.mu_gdp()[0] if target.max_mu is not None else None
    return {"on": "the quantized weights that are sampled", "method": curve.method, "tpr_at_fpr": tpr,
            "at_fpr": target.at_fpr, "mu_gdp": mu, "meets": target.admits_attack(tpr=tpr, mu=mu, exact=True)}


__all__ = ["SOLVERS", "design"]
