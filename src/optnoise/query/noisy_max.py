"""Report-noisy-max for a peak or a mode: a thin adapter to :mod:`optnoise.sampling.noisy_max`.

Permute-and-flip (McKenna & Sheldon 2020) over the keys' integer scores, with the scores'
sensitivity derived from the clamps and the unit
(:func:`optnoise.query.neighbourhood.score_sensitivity`), drawn exactly from the injected
source. Its guarantee is the theorem's (pure ``epsilon``-DP for scores moving by at most the
sensitivity, in either direction, several at once), not an exact certificate of a designed
mechanism: the document says ``exact: false``.
"""

from __future__ import annotations

import numpy as np

from ..randomness import RandomSource
from ..sampling.noisy_max import noisy_max, noisy_max_certificate

#: The rule used.
RULE = "permute-and-flip"


def noisy_argmax(scores: np.ndarray, sensitivity: int, epsilon: float, source: RandomSource) -> int:
    """One key index drawn by permute-and-flip over ``scores``."""
    return int(noisy_max(np.asarray(scores, dtype=np.int64), epsilon, max(1, int(sensitivity)), method=RULE,
                         source=source)[0])


def guarantee(epsilon: float, sensitivity: int, cells: int) -> dict:
    """The theorem's guarantee for the statistic (each of ``cells`` groups at ``epsilon / cells``)."""
    per = noisy_max_certificate(RULE, epsilon / cells, max(1, int(sensitivity))).to_json()
    return {"exact": False, "epsilon_pure": epsilon, "delta": 0.0, "cells_per_unit": cells, "per_group": per,
            "note": "a guarantee by theorem for the sampler drawn exactly; not an exact certificate of a designed "
                    "mechanism"}


__all__ = ["RULE", "guarantee", "noisy_argmax"]
