"""optnoise: optimal noise mechanisms for differential privacy on discrete domains."""
from .analysis import Guarantee, PrivacyProfile, guarantee, privacy_profile
from .errors import DesignError, InvalidParameterError, OptnoiseError
from .neighbourhood import InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF

__version__ = "0.1.0"
__all__ = [
    "Channel", "CyclicPMF", "DesignError", "GeometricTail", "Guarantee", "InputPairs",
    "IntegerPMF", "InvalidParameterError", "Neighbourhood", "OptnoiseError", "PrivacyProfile",
    "guarantee", "privacy_profile", "__version__",
]
from .accounting import Composed, compose
from .mechanism import Mechanism, additive, channel, geometric

__all__ += ["Composed", "Mechanism", "additive", "channel", "compose", "geometric"]
from .design import FiniteDesign, design_finite

__all__ += ["FiniteDesign", "design_finite"]
