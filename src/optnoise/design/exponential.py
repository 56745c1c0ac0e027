"""The exponential mechanism on ``{0..n}`` calibrated to a pure target without building a channel
per step of the search.

``P(k | q) = r^|q - k| / Z(q)``, ``r = e^-beta``, ``Z(q) = sum_k r^|q - k|``. For neighbours ``q``
and ``q + d`` (no wrap-around) the log ratio at output ``k`` is ``beta (|q + d - k| - |q - k|) +
log Z(q + d) - log Z(q)``, and the first term ranges over ``[-beta d, beta d]`` with both ends
reached (``k <= q`` and ``k >= q + d``), so the pair's pure epsilon is ``beta d + |log Z(q + d) -
log Z(q)|``; ``Z`` is a sum of two geometric series. The search runs on this ``O(n |M|)``
formula (with the float channel's underflow: an entry of 0 beside positive ones is an infinite
ratio, which at ``n = 3,000`` and ``eps = 1`` is what binds), and the one "meets" rule confirms
the member found on the channel itself (the general calibration answers whenever it does not).
"""

from __future__ import annotations

import math

import numpy as np

from ..families import boundary_search, calibration_of
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..analysis import privacy_profile
from .calibrate import CalibratedDesign
from .request import Request


def log_normaliser(n: int, beta: float) -> np.ndarray:
    """``log Z(q)`` for ``q = 0..n``: ``(1 - r^(q+1) + r (1 - r^(n-q))) / (1 - r)``, ``r = e^-beta``."""
    q = np.arange(n + 1, dtype=np.float64)
    if beta == 0:
        return np.full(n + 1, math.log(n + 1))
    one_minus_r = -math.expm1(-beta)
    z = (-np.expm1(-beta * (q + 1)) - math.exp(-beta) * np.expm1(-beta * (n - q))) / one_minus_r
    return np.log(z)


def exponential_epsilon(n: int, beta: float, distances: list[int]) -> float:
    """The pure epsilon of the exponential mechanism on ``{0..n}`` under the (symmetric) distances;
    infinite where its float channel has an entry that underflows to 0 (``e^(-beta n) / Z(0)``, row
    0's last, computed as the family builds it), as the float analysis of the built channel says."""
    edge = np.exp(-beta * np.arange(n + 1, dtype=np.float64))   # row 0 as the family builds it: the smallest entry
    if not (edge / edge.sum()).min() > 0:
        return math.inf
    logz = log_normaliser(n, beta)
    return max(beta * d + float(np.max(np.abs(logz[d:] - logz[:-d]))) for d in distances if 0 < d <= n)


def calibrate_exponential(request: Request) -> CalibratedDesign | None:
    """The least noisy exponential mechanism meeting a pure target under symmetric query distances, by
    the closed form, confirmed by the rule; ``None`` where it does not apply or the rule
    disagrees (the caller's general calibration then answers)."""
    given, t = request.neighbourhood, request.target   # the distances (a channel's neighbours are their pairs)
    if not isinstance(given, Neighbourhood) or given.directed or t is None or t.notion == "attack" or t.delta != 0:
        return None
    n, nb = request.largest, request.neighbours
    distances = sorted({abs(int(d)) for d in given.integer_shifts()})
    cal = calibration_of("exponential")
    beta = boundary_search(cal, n, lambda b: exponential_epsilon(n, b, distances) <= t.epsilon * (1 - 1e-12),
                           more_private_ok=True)
    rep = cal.build(beta, n, "modulo")
    if not privacy_profile(rep, nb).meets(t):
        return None
    return CalibratedDesign("exponential", beta, cal.parameter, Mechanism(rep, nb, t, f"exponential(beta={beta:.6g})"))


__all__ = ["calibrate_exponential", "exponential_epsilon", "log_normaliser"]
