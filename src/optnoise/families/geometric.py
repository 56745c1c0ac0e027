"""Two-sided geometric noise (Ghosh, Roughgarden & Sundararajan 2009; Geng & Viswanath 2016, Thm. 12).

``p(k) = (1 - alpha) / (1 + alpha) * alpha^|k|`` on ``Z``. With sensitivity ``Delta``
it is ``eps``-DP for ``alpha = e^(-eps / Delta)``; for ``Delta = 1`` it is the
optimal staircase ``P_r`` of Geng & Viswanath (Theorem 12).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidParameterError
from ..pmf import GeometricTail, IntegerPMF
from ..target import check_epsilon, check_sensitivity


def geometric_pmf(alpha: float, *, half_width: int = 1) -> IntegerPMF:
    """Two-sided geometric PMF with exact tails, window ``-half_width..half_width``.

    Parameters
    ----------
    alpha:
        Decay per unit step, ``0 < alpha < 1``.
    half_width:
        Window half-width (the tails make the PMF exact for any width >= 0).
    """
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise InvalidParameterError("alpha", alpha, "a number with 0 < alpha < 1")
    if int(half_width) != half_width or half_width < 0:
        raise InvalidParameterError("half_width", half_width, "an integer >= 0")
    k = np.arange(-half_width, half_width + 1)
    probs = (1.0 - a) / (1.0 + a) * np.power(a, np.abs(k))
    tail = GeometricTail(a, 1)
    return IntegerPMF(probs, offset=half_width, left_tail=tail, right_tail=tail)


def alpha_for_epsilon(epsilon: float, sensitivity: int = 1) -> float:
    """``alpha = exp(-epsilon / sensitivity)``: the geometric mechanism that is eps-DP."""
    return math.exp(-check_epsilon(epsilon, allow_zero=False) / check_sensitivity(sensitivity))
