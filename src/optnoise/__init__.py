"""optnoise: optimal noise mechanisms for differential privacy on discrete domains.

One object flows one way (docs/architecture.md): a :class:`Request` (what is asked: the
space, a :class:`Target`, a neighbourhood or privacy unit, a cost) goes into
:func:`design`, which returns a :class:`Design`: a :class:`Mechanism` and its report (the
float analysis and the exact certificate of the weights that are sampled); any mechanism can
be analysed (``.privacy``), certified exactly (``.certify()``), quantized (``.quantize()``),
sampled (``.sample``), saved and loaded (:func:`load_mechanism`), and released.

>>> import optnoise
>>> best = optnoise.design(optnoise.Request(space="cyclic", n=23, target=optnoise.Target(1.0),
...                        neighbourhood=optnoise.Neighbourhood.sd(1), cost="circular-mse"))
>>> best.report.method, best.mechanism.kind, best.mechanism.meets()
('lp', 'cyclic', True)

Public names are loaded on first use, so ``import optnoise`` (and the command line's
start-up) costs little more than importing numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

#: public name -> module that defines it
_PUBLIC: dict[str, str] = {
    "OptnoiseError": "errors", "InvalidParameterError": "errors", "DesignError": "errors",
    "Target": "target",
    "CyclicPMF": "pmf", "IntegerPMF": "pmf", "GeometricTail": "pmf", "Channel": "pmf",
    "Neighbourhood": "neighbourhood", "InputPairs": "neighbourhood",
    "PrivacyProfile": "analysis", "Guarantee": "analysis", "privacy_profile": "analysis", "guarantee": "analysis",
    "Composed": "analysis.composition", "compose": "analysis.composition",
    "Mechanism": "mechanism", "load_mechanism": "mechanism", "additive": "mechanism", "channel": "mechanism",
    "geometric": "mechanism",
    "Request": "design.request", "SolverOptions": "design.request", "Design": "design.report",
    "DesignReport": "design.report", "design": "design", "calibrate": "design.calibrate",
    "FiniteDesign": "design.finite", "design_finite": "design.finite",
    "release": "table", "query": "query",
    "Ledger": "publish.ledger", "Spend": "publish.spend",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'optnoise' has no attribute {name!r}")
    loaded = importlib.import_module(f".{module}", __name__)
    value = loaded if module == name else getattr(loaded, name)  # the callable package itself: optnoise.design
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
    from .analysis.composition import Composed, compose
    from . import design
    from .design.calibrate import calibrate
    from .design.finite import FiniteDesign, design_finite
    from .design.report import Design, DesignReport
    from .design.request import Request, SolverOptions
    from .errors import DesignError, InvalidParameterError, OptnoiseError
    from .mechanism import Mechanism, additive, channel, geometric, load_mechanism
    from .neighbourhood import InputPairs, Neighbourhood
    from .pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
    from . import query
    from .publish.ledger import Ledger
    from .publish.spend import Spend
    from .table import release
    from .target import Target
