"""Report-noisy-max for a peak or a mode: a thin adapter to :mod:`optnoise.sampling.noisy_max`.

Permute-and-flip (McKenna & Sheldon 2020) over the keys' integer scores with the scores'
sensitivity from the clamps (:func:`optnoise.query.neighbourhood.score_sensitivity`), drawn
exactly from an injected source. Its guarantee is the theorem's (pure ``epsilon``-DP), not an
exact certificate of a designed mechanism: the document says ``exact: false``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import RandomSource

#: The method used (the stats module may offer others).
RULE = "permute-and-flip"


def _module() -> Any:
    try:
        from ..sampling import noisy_max  # type: ignore[attr-defined]
    except ImportError:
        return None
    return noisy_max


def available() -> bool:
    """Whether the exact noisy-max sampler is present in this build."""
    return _module() is not None


def noisy_argmax(scores: np.ndarray, sensitivity: int, epsilon: float, source: RandomSource) -> int:
    """One key index drawn by permute-and-flip over ``scores`` (module docstring)."""
    mod = _module()
    if mod is None:
        raise InvalidParameterError("method", "report-noisy-max", "answer-noise (report-noisy-max needs "
                                    "optnoise.sampling.noisy_max, which this build does not have yet)")
    return int(mod.permute_and_flip(np.asarray(scores, dtype=np.int64), sensitivity=sensitivity, epsilon=epsilon,
                                    source=source))


def guarantee(epsilon: float, sensitivity: int, cells: int) -> dict:
    """The theorem's guarantee, in the document's ``certificate`` shape."""
    mod = _module()
    theorem = getattr(mod, "THEOREM", "McKenna & Sheldon 2020, Thm 1: permute-and-flip is epsilon-DP for scores of "
                                      "sensitivity Delta") if mod is not None else None
    return {"exact": False, "epsilon_pure": epsilon, "delta": 0.0, "per_group_epsilon": epsilon / cells,
            "score_sensitivity": sensitivity, "theorem": theorem,
            "note": "a guarantee by theorem for the ideal sampler, drawn exactly; not an exact certificate of a "
                    "designed mechanism"}


__all__ = ["RULE", "available", "guarantee", "noisy_argmax"]
