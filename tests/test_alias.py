"""Exact integer alias tables: exhaustive exactness proofs on small tables, chi-square on large draws."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from optnoise.errors import InvalidParameterError
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import alias, round_weights

#: False-alarm rate of every chi-square test below (fixed seeds make each run deterministic).
ALPHA = 1e-3


def random_weights(rnd: random.Random, n: int, bits: int) -> list[int]:
    total = 1 << bits
    cuts = sorted(rnd.randint(0, total) for _ in range(n - 1))
    return [b - a for a, b in zip([0] + cuts, cuts + [total])]


def exhaustive_counts(table: alias.AliasTable, n: int) -> np.ndarray:
    """Outcome counts over ALL 2^resolution values of the random input."""
    x = np.arange(1 << table.resolution, dtype=np.uint64)
    return np.bincount(alias.lookup(table, x), minlength=n)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), bits=st.integers(0, 8), n=st.integers(1, 40))
def test_every_random_input_is_counted_exactly_once_per_weight_unit(data, bits, n):
    """P(i) = w_i / 2^bits exactly: over all 2^B equally likely inputs, outcome i
    occurs exactly w_i 2^(B - bits) times (and padding outcomes never)."""
    seed = data.draw(st.integers(0, 2**32))
    w = random_weights(random.Random(seed), n, bits)
    table = alias.build(np.array(w, dtype=np.int64), bits)
    counts = exhaustive_counts(table, n)
    assert counts.size == n
    assert counts.tolist() == [v << (table.resolution - bits) for v in w]


def test_exhaustive_with_many_zero_weights_and_more_outcomes_than_units():
    # k > bits: 300 outcomes, only 16 units of weight
    w = np.zeros(300, dtype=np.int64)
    w[[0, 17, 299]] = [5, 10, 1]
    table = alias.build(w, 4)
    assert table.resolution == 9  # max(bits, k)
    counts = exhaustive_counts(table, 300)
    assert counts[[0, 17, 299]].tolist() == [5 << 5, 10 << 5, 1 << 5]
    assert counts.sum() == 512


def test_point_mass_and_uniform_tables():
    for n, idx in ((1, 0), (5, 3), (64, 63)):
        w = np.zeros(n, dtype=np.int64)
        w[idx] = 1 << 10
        table = alias.build(w, 10)
        assert set(exhaustive_counts(table, n).nonzero()[0]) == {idx}
    w = np.full(16, 1 << 4, dtype=np.int64)
    assert exhaustive_counts(alias.build(w, 8), 16).tolist() == [16] * 16


class _Words:
    """A source replaying given words (to check the bit extraction of `draw`)."""

    def __init__(self, words: np.ndarray) -> None:
        self._w = words
        self._i = 0

    def words(self, count: int) -> np.ndarray:
        out = self._w[self._i:self._i + count]
        self._i += count
        return out


def test_draw_uses_the_top_bits_of_each_word_like_lookup():
    rnd = random.Random(9)
    w = random_weights(rnd, 11, 7)
    table = alias.build(np.array(w), 7)
    b = table.resolution
    x = np.arange(1 << b, dtype=np.uint64)
    low_noise = np.array([rnd.getrandbits(64 - b) for _ in range(x.size)], dtype=np.uint64)
    words = (x << np.uint64(64 - b)) | low_noise  # the low bits must be ignored
    got = alias.draw(table, x.size, _Words(words))
    assert np.array_equal(got, alias.lookup(table, x))
    assert np.bincount(got, minlength=11).tolist() == [v << (b - 7) for v in w]


def test_draw_in_several_chunks(monkeypatch):
    monkeypatch.setattr(alias, "CHUNK", 1000)
    table = alias.build(np.array([1, 3]), 2)
    words = np.arange(2500, dtype=np.uint64) << np.uint64(62)
    got = alias.draw(table, 2500, _Words(words))
    assert np.array_equal(got, alias.lookup(table, np.arange(2500, dtype=np.uint64) % np.uint64(4)))


def test_62_bit_weights_chi_square_with_power():
    """Large draws from 62-bit weights: the chi-square test accepts the true PMF
    (false-alarm rate ALPHA) and rejects a PMF 2 % off on two outcomes (power check)."""
    rnd = random.Random(1)
    w = np.array(random_weights(rnd, 50, 62), dtype=np.uint64)
    table = alias.build(w, 62)
    count = 2_000_000
    got = np.bincount(alias.draw(table, count, SeededRandomSource(2024)), minlength=50)
    probs = w.astype(float) / 2.0**62
    assert stats.chisquare(got, probs * count).pvalue > ALPHA
    wrong = probs.copy()
    j, k = int(np.argmax(probs)), int(np.argsort(probs)[-2])
    wrong[j] *= 1.02
    wrong[k] -= wrong[j] - probs[j]
    assert stats.chisquare(got, wrong * count).pvalue < ALPHA


def test_large_support_chi_square():
    n = 100_000
    rng = np.random.default_rng(3)
    w = round_weights(rng.dirichlet(np.ones(n)), 62)
    table = alias.build(w, 62)
    got = np.bincount(alias.draw(table, 3_000_000, SeededRandomSource(7)), minlength=n)
    # pool outcomes into 200 bins of equal expected mass (expected counts >> 5)
    probs = w.astype(float) / 2.0**62
    bins = np.minimum((np.cumsum(probs) * 200).astype(int), 199)
    obs = np.bincount(bins, weights=got, minlength=200)
    exp = np.bincount(bins, weights=probs, minlength=200) * 3_000_000
    assert stats.chisquare(obs, exp).pvalue > ALPHA


def test_invalid_tables_are_rejected():
    with pytest.raises(InvalidParameterError):
        alias.build(np.array([1, 2]), 2)  # sums to 3, not 4
    with pytest.raises(InvalidParameterError):
        alias.build(np.array([-1, 5]), 2)
    with pytest.raises(InvalidParameterError):
        alias.build(np.array([0.5, 0.5]), 0)
    with pytest.raises(InvalidParameterError):
        alias.build(np.array([1]), 63)
    with pytest.raises(InvalidParameterError):
        alias.draw(alias.build(np.array([1]), 0), -1, SeededRandomSource(1))


def test_choose():
    assert alias.choose(10**6) == "alias"
    assert alias.choose(2) == "cdf"
