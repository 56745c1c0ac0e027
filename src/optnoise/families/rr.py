"""K-ary randomized response as additive noise on the cyclic domain ``{0..K-1}``.

Keeping the true category with probability ``1 - (K - 1) P`` and moving to each
other category with probability ``P`` is the same as adding cyclic noise with mass
``1 - (K - 1) P`` at 0 and ``P`` elsewhere (Kadam et al.'s "data independent
mechanism"; Holohan et al., product sanitisation with ``m = K - 1``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InvalidParameterError
from ..pmf import CyclicPMF


def rr_pmf(k: int, p: float | Fraction) -> CyclicPMF:
    """Noise PMF of K-ary randomized response with off-diagonal probability ``p``."""
    if int(k) != k or k < 2:
        raise InvalidParameterError("K", k, "an integer number of categories >= 2")
    k = int(k)
    if not 0 <= float(p) <= 1.0 / (k - 1):
        raise InvalidParameterError("P", p, f"a probability with 0 <= P <= 1/(K-1) = {1 / (k - 1):.6g}")
    if isinstance(p, Fraction):
        exact = [1 - (k - 1) * p] + [p] * (k - 1)
        return CyclicPMF([float(x) for x in exact], exact=exact)
    probs = np.full(k, float(p))
    probs[0] = 1.0 - (k - 1) * float(p)
    return CyclicPMF(probs)
