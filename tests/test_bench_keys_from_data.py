"""The keys-from-data bench's exact delta of a peer's threshold (bench/keys_from_data.py).

``threshold_delta(scale, t, g)`` is the delta the bench prints for OpenDP's thresholded
discrete Laplace: releasing a key iff ``c + Z >= t``, a unit holding ``g`` keys alone. Here
the same delta is found by enumeration, independently of the closed form: the hockey-stick
divergence ``sum_S max(0, P_D[S] - e^eps P_D'[S])`` between the dataset with the unit (each
of its ``g`` keys has count 1 and noise drawn from the discrete Laplace's masses, summed over
a window whose outside mass is below 1e-30) and the dataset without it (no key shown), over
the output sets ``S`` (which of the ``g`` keys show). Fails if the bench used the tail at the
threshold (``P[Z >= t]``, OpenDP's reported delta, issue 2922) instead of ``P[1 + Z >= t]``.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import mpmath
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from keys_from_data import threshold_delta  # noqa: E402


def enumerated_delta(scale: float, threshold: int, groups: int, eps: float) -> mpmath.mpf:
    """The hockey-stick divergence at ``eps`` of the release of ``groups`` keys held by one
    unit alone against the release without the unit, by enumeration of the noise values."""
    a = mpmath.exp(-1 / mpmath.mpf(scale))
    window = int(math.ceil(80 * scale)) + abs(threshold)     # a^window < 1e-30
    mass = {z: (1 - a) / (1 + a) * a ** abs(z) for z in range(-window, window + 1)}
    shows = sum(m for z, m in mass.items() if 1 + z >= threshold)
    outcome: dict[tuple[bool, ...], mpmath.mpf] = {}
    for pattern in itertools.product((True, False), repeat=groups):   # which keys show
        outcome[pattern] = mpmath.fprod(shows if s else 1 - shows for s in pattern)
    without = {pattern: (1 if not any(pattern) else 0) for pattern in outcome}
    return mpmath.fsum(max(0, outcome[s] - mpmath.exp(eps) * without[s]) for s in outcome)


@pytest.mark.parametrize("scale, threshold, groups", [(1.0, 5, 1), (1.0, 15, 1), (2.0, 27, 1), (3.0, 16, 3),
                                                      (0.5, 1, 2), (1.5, 0, 2), (1.0, 3, 3)])
def test_threshold_delta_equals_enumeration(scale, threshold, groups):
    with mpmath.workdps(40):
        for eps in (0.0, 1.0):
            exact = enumerated_delta(scale, threshold, groups, eps)
            got = threshold_delta(scale, threshold, groups)
            assert got >= exact                                   # rounded up
            assert got <= exact * (1 + 1e-9)


@pytest.mark.parametrize("scale, threshold, groups", [(1.0, 5, 1), (1.0, 15, 1), (3.0, 16, 3)])
def test_reported_delta_leaves_out_the_mass_at_the_threshold(scale, threshold, groups):
    """OpenDP's map reports ``1 - (1 - P[Z >= t])^g`` (issue 2922): the exact delta at ``t`` is
    that at ``t - 1``, larger by the mass at the threshold."""
    a = math.exp(-1 / scale)
    reported = 1 - (1 - a ** threshold / (1 + a)) ** groups
    one_lower = 1 - (1 - a ** (threshold - 1) / (1 + a)) ** groups
    exact = threshold_delta(scale, threshold, groups)
    assert exact > reported * 1.2   # about e^(1/scale) times
    assert exact == pytest.approx(one_lower, rel=1e-9)
