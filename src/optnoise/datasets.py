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


def meter_readings(households: int = 1416, circuits: int = 12, seed: int = 2024):
    """Synthetic hourly smart-meter readings like Kadam et al.'s Fig. 14 data (1,416 houses in
    12 circuits; theirs are private): one row per household and hour, columns ``household``,
    ``circuit`` (1..circuits), ``hour`` (0..23), ``kwh`` (one decimal) and ``peak_hour`` (the
    household's hour of largest use, repeated on its rows). Each circuit has its own evening
    (or morning) habit, so the circuits' peak hours differ. A pandas DataFrame."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    circuit = 1 + np.arange(households) % circuits
    habit = np.where(np.arange(1, circuits + 1) % 4 == 0, 8.0, 17.0 + np.arange(1, circuits + 1) % 4)
    centre = habit[circuit - 1] + rng.normal(0.0, 1.5, households)
    hours = np.arange(HOURS)
    dist = np.abs(((hours[None, :] - centre[:, None]) + 12) % HOURS - 12)
    base = rng.gamma(2.0, 0.25, (households, HOURS))
    kwh = np.round(base + 2.5 * np.exp(-0.5 * (dist / 1.5) ** 2) * rng.uniform(0.6, 1.4, (households, 1)), 1)
    peak = np.argmax(kwh, axis=1)
    return pd.DataFrame({"household": np.repeat(np.arange(1, households + 1), HOURS),
                         "circuit": np.repeat(circuit, HOURS), "hour": np.tile(hours, households),
                         "kwh": kwh.ravel(), "peak_hour": np.repeat(peak, HOURS)})
