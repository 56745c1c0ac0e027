"""Noise design: optimal PMFs for finite domains (Kadam et al.) and closed forms."""
from .finite import COSTS, FiniteDesign, cost_vector, design_finite, wrapped_squared_error

__all__ = ["COSTS", "FiniteDesign", "cost_vector", "design_finite", "wrapped_squared_error"]
