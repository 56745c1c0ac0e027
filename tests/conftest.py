"""Shared helpers for the optnoise tests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings

# Property tests are reproducible in `make test` and CI (the same examples on every run, no
# example database); `pytest --hypothesis-profile=explore` searches with fresh random examples.
settings.register_profile("optnoise", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile("optnoise")


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator for test data (never a privacy source)."""
    return np.random.default_rng(12345)


# Kadam et al. 2024, Table 1 (n = 8, directed BD mu_bar = 3, eps = 1.5): the printed,
# 4-decimal columns, keyed by the column's delta.
KADAM_TABLE1 = {
    0.0: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1212: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1238: [0.5548, 0.1238, 0.1238, 0.1238, 0.0276, 0.0276, 0.0062, 0.0062, 0.0062],
    0.1522: [0.5575, 0.1244, 0.1244, 0.1244, 0.0278, 0.0278, 0.0062, 0.0062, 0.0014],
}
