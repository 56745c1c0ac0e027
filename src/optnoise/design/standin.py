"""The stand-in that composition uses for a release known only by a pure-DP bound.

A release whose guarantee is a proven pure ``epsilon`` rather than an exact profile (a chained
geometric's ``distance x eps1``, report-noisy-max by theorem, a histogram under the L1 plan) is
composed as binary randomized response certified at no less than ``epsilon``: it dominates
every ``epsilon``-DP mechanism (Kairouz, Oh & Viswanath 2015, Thm 2.2: its trade-off curve
lies below theirs), so any bound on the composition of the stand-ins bounds the composition
of the releases (docs/proofs/rr-stand-in.md).
"""

from __future__ import annotations

from ..errors import OptnoiseError
from ..mechanism import Mechanism
from ..target import Target
from .dispatch import design
from .request import Request

#: Relative loosening of the target tried in turn until the certificate is at least epsilon.
BUMPS: tuple[float, ...] = (1e-9, 1e-7, 1e-5, 1e-4, 1e-3, 1e-2)


def dominating_rr(epsilon: float) -> Mechanism:
    """Binary randomized response whose exact pure epsilon is at least ``epsilon`` (and close):
    the composition stand-in of a pure ``epsilon``-DP release (module docstring). The check is
    exact: the quantized weights' ratio ``w_keep / w_flip`` (its pure epsilon is the log of it)
    is at least a rational upper bound of ``e^epsilon``; a rounded-up certificate would only
    prove ``>= epsilon`` less its rounding.

    Proof: docs/proofs/rr-stand-in.md
    """
    from fractions import Fraction

    from ..analysis.exact import exp_upper
    bound = exp_upper(epsilon)
    for bump in BUMPS:
        found = design(Request(space="categories", n=1, target=Target(epsilon * (1 + bump))))
        weights = [int(w) for w in found.mechanism.quantize().weights.ravel()]
        if min(weights) > 0 and Fraction(max(weights), min(weights)) >= bound:   # exactly: ln(ratio) >= epsilon
            return found.mechanism
    raise OptnoiseError(f"no randomized response certified at >= {epsilon!r}")


__all__ = ["BUMPS", "dominating_rr"]
