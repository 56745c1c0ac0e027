"""Mechanism design: one request in, one design out.

:class:`Request` says what is asked (space, target, neighbourhood or privacy unit, cost,
releases, constraints); :func:`design` answers it with a :class:`Design`: the
:class:`~optnoise.mechanism.Mechanism` and a :class:`DesignReport` (costs, solver status,
the float ``analysis`` and the exact ``certificate`` of the weights that are sampled).
:func:`calibrate` finds the least noisy member of a family meeting a request instead.

The package itself is callable, so that ``optnoise.design(request)`` reads as the one door
it is while ``optnoise.design.finite`` and the other modules stay importable:

>>> import optnoise
>>> d = optnoise.design(optnoise.Request(space="cyclic", n=23, target=optnoise.Target(1.0),
...                     neighbourhood=optnoise.Neighbourhood.sd(1), cost="circular-mse"))
>>> d.report.method, d.mechanism.kind, d.report.certificate.epsilon_pure <= 1.0
('lp', 'cyclic', True)

The solvers' own functions (``design_finite``, ``design_channel``, ``design_releases``...)
remain, as thin wrappers kept for one version.
"""

import sys
import types

from .calibrate import calibrate
from .dispatch import design
from .report import Design, DesignReport
from .request import Request, SolverOptions


class _Door(types.ModuleType):
    """The package's module type: calling the package is calling :func:`design`."""

    def __call__(self, request: Request) -> Design:
        return design(request)


def __getattr__(name: str) -> object:
    """The finite-space solver's names, imported on first use: its module builds sparse LP
    models (scipy.sparse, 0.17 s), which most commands never need (start-up, issue 37)."""
    if name in ("FiniteDesign", "design_finite"):
        from . import finite
        return getattr(finite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _Door

__all__ = ["Design", "DesignReport", "FiniteDesign", "Request", "SolverOptions", "calibrate", "design",
           "design_finite"]
