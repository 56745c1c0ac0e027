"""Mechanism design: optimal noise on the cycle (Kadam et al.), on Z (Geng & Viswanath),
Wasserstein-optimal noise (Qin et al.) and the staircase (Geng & Viswanath).

Every design function returns a result holding ``.mechanism`` (a
:class:`~optnoise.mechanism.Mechanism` with its neighbourhood and target), the float
``analysis`` of what it returned, ``certify()`` (the exact certificate of the weights that
are sampled) and a report (costs, solver status, timings).
"""
from .finite import FiniteDesign, design_finite

__all__ = ["FiniteDesign", "design_finite"]
