"""Built-in example data (synthetic; a fixed seed makes it reproducible, it is not a privacy source)."""

from __future__ import annotations

import numpy as np

#: Hours of the day: the cyclic domain 0..23.
HOURS = 24


def meter_peak_hours(households: int = 10_000, seed: int = 2024) -> np.ndarray:
    """Synthetic hour of peak electricity use per household: an evening-heavy mixture on 0..23
    (Kadam et al. 2024, introduction, example (c); their AMI data are private)."""
    rng = np.random.default_rng(seed)
    evening = rng.normal(19.0, 1.6, households)
    morning = rng.normal(7.5, 1.2, households)
    hours = np.where(rng.random(households) < 0.72, evening, morning)
    return np.mod(np.rint(hours), HOURS).astype(np.int64)
