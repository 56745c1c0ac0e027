"""optnoise: optimal noise mechanisms for differential privacy on discrete domains.

One object flows one way (docs/architecture.md): a :class:`Target` and a neighbourhood go
into a design, which returns a :class:`Mechanism`; any mechanism can be analysed
(``.privacy``), certified exactly (``.certify()``), quantized (``.quantize()``), sampled
(``.sample``), saved and loaded (:func:`load_mechanism`), and released.

>>> import optnoise
>>> best = optnoise.design_finite(23, epsilon=1.0, neighbourhood=optnoise.Neighbourhood.sd(1),
...                               cost="circular-mse")
>>> best.method, best.mechanism.kind, best.mechanism.meets()
('lp', 'cyclic', True)

Public names are loaded on first use, so ``import optnoise`` (and the command line's
start-up) costs little more than importing numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

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
    "FiniteDesign": "design.finite", "design_finite": "design.finite",
    "release": "table",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'optnoise' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
    from .analysis.composition import Composed, compose
    from .design.finite import FiniteDesign, design_finite
    from .errors import DesignError, InvalidParameterError, OptnoiseError
    from .mechanism import Mechanism, additive, channel, geometric, load_mechanism
    from .neighbourhood import InputPairs, Neighbourhood
    from .pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
    from .table import release
    from .target import Target
