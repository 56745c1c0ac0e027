"""The truncated geometric for keys found in the data: bounded noise whose threshold needs no
selection delta (issue 36, item 1).

For a histogram whose keys are found in the data (:mod:`.found`), the cell's noise decides the
threshold ``tau`` a key's noisy count must reach. Two designs meet the statistic's
``(epsilon, delta)``:

* the clamped geometric at the cell's epsilon (pure), whose tail makes a key held by one unit
  alone show with probability ``p``: the threshold is the least with ``1 - (1 - p)^m <= delta``
  (:func:`.threshold.smallest_threshold`);
* the geometric **truncated** to ``[-T, T]`` (masses ``alpha^|k|``, no tails) at the cell's
  ``(epsilon, delta)``: neighbouring counts differ at the window's ends only, by the end mass,
  which is the cell's delta; a key held by one unit alone is released iff ``1 + Z >= tau`` and
  with ``tau = T + 2`` that never happens, so the selection adds nothing
  (docs/proofs/key-selection.md, "truncated").

:func:`truncated_cell` designs the second: the least ``T`` whose **exact certificate** (the
quantized weights' hockey-stick divergence, :meth:`optnoise.mechanism.Mechanism.quantize`)
meets the cell's target. The histogram takes whichever gives the smaller threshold (a tie: the
geometric, whose counts stay pure).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OptnoiseError
from ..mechanism import Mechanism
from ..mechanism.make import additive
from ..target import Target
from .mechanisms import Cell

#: The ratio of neighbouring masses is ``e^(epsilon (1 - RATIO_ROOM))``: room for the rounding of
#: the quantized weights under the target's ``e^epsilon``.
RATIO_ROOM = 1e-9
#: Largest half-width tried.
MAX_HALF_WIDTH = 100_000


def truncated_noise(half_width: int, epsilon: float, target: Target) -> Mechanism:
    """The geometric on ``[-T, T]``: masses proportional to ``alpha^|k|``, ``alpha =
    e^(-epsilon (1 - RATIO_ROOM))``, with ``target`` kept by its quantization."""
    alpha = math.exp(-epsilon * (1 - RATIO_ROOM))
    k = np.arange(-half_width, half_width + 1)
    masses = alpha ** np.abs(k)
    return additive(masses / masses.sum(), space="integer", offset=half_width, target=target,
                    name=f"truncated geometric (alpha={alpha:.6g}, window [-{half_width}, {half_width}])")


def _meets(half_width: int, target: Target) -> Mechanism | None:
    """The truncated noise at ``half_width`` if its exact certificate meets ``target``."""
    try:
        mech = truncated_noise(half_width, target.epsilon, target)
        cert = mech.quantize().certificate
    except OptnoiseError:   # its weights cannot meet the target at this width
        return None
    return mech if cert.meets(target) else None


def truncated_cell(name: str, n: int, offset: int, target: Target) -> Cell | None:
    """The truncated geometric cell on ``offset + {0..n}`` at the cell's ``(epsilon, delta)``
    with the least half-width ``T`` whose exact certificate meets it (bisection: the end mass,
    the delta, falls with ``T``); ``None`` for a pure target or beyond :data:`MAX_HALF_WIDTH`.

    Proof: docs/proofs/key-selection.md
    """
    if target.pure or target.notion != "dp":
        return None
    alpha = math.exp(-target.epsilon)
    guess = max(1, math.ceil(math.log(target.delta * (1 - alpha) / (1 + alpha)) / math.log(alpha)) - 2)
    lo, hi = 0, guess
    while _meets(hi, target) is None:
        lo, hi = hi, 2 * hi
        if hi > MAX_HALF_WIDTH:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _meets(mid, target) is not None else (mid, hi)
    mech = _meets(hi, target)
    return Cell(name, mech, "clamped-line", n, offset,  # type: ignore[arg-type]
                f"truncated geometric noise on [-{hi}, {hi}], output clamped to the domain (keys found in the data: "
                f"a threshold of {hi + 2} needs no selection delta)", {"method": "truncated", "half_width": hi})


__all__ = ["MAX_HALF_WIDTH", "RATIO_ROOM", "truncated_cell", "truncated_noise"]
