"""The query's default count cell above n = 2,000: the optimal channel for neighbours one apart as
the geometric noise with a remap (query/mechanisms.py ``remap_or``, issue 37 item 3), where its
remap moves an output and its average error under the uniform prior is below the calibrated
clamped geometric's; otherwise the clamped geometric, unchanged."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import optnoise
from optnoise.query.intervals import expected_abs_error, interval
from optnoise.query.mechanisms import REMAP_MAX_WORK, count_cell, remap_fits, remap_work
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

N = 2_100   # just above the dense channel's size: the smallest domain the remap cell is chosen on


class _Law:
    """P[released = y | q] for y = 0..n, enumerated independently from the quantized noise: the
    masses of eta over ``-n..n`` (what lies beyond, summed over a further 20,000 values of each
    tail, into the clamped ends), clamped, then each output sent through the remap table."""

    def __init__(self, cell):
        pmf = cell.noise.quantize().pmf
        self.n = n = cell.n
        self.mass = pmf.mass(np.arange(-n, n + 1))
        self.left = float(pmf.mass(np.arange(-n - 20_000, -n)).sum())
        self.right = float(pmf.mass(np.arange(n + 1, n + 20_001)).sum())
        self.table = np.arange(n + 1) if cell.noise.release is None else cell.noise.release.table()

    def __call__(self, q: int) -> np.ndarray:
        n = self.n
        z = np.clip(q + np.arange(-n, n + 1), 0, n)
        law = np.bincount(z, weights=self.mass, minlength=n + 1)
        law[0] += self.left
        law[n] += self.right
        return np.bincount(self.table, weights=law, minlength=n + 1)


def _average_error(cell, qs: np.ndarray) -> np.ndarray:
    law, y = _Law(cell), np.arange(cell.n + 1)
    return np.array([float(law(int(q)) @ np.abs(y - q)) for q in qs])


@pytest.mark.parametrize("eps", [0.3, 0.5])
def test_the_remap_cell_is_certified_at_the_target_and_beats_the_clamped_geometric(eps):
    """At eps < ln 2 the remap moves the ends: the default cell is the geometric noise with a
    remap, its exact certificate meets the target, and its E|released - q| -- enumerated here per
    q from the quantized noise and the remap table, not by the analysis module -- averaged over a
    uniform q is below the clamped geometric's, by the gain near the ends; in the middle the two
    agree (the same noise up to the design's ratio margin)."""
    target = Target(eps)
    cell = count_cell("c", N, 0, 1, target)
    plain = count_cell("c", N, 0, 1, target, "clamped-geometric")
    assert cell.noise.release is not None and cell.noise.release.outputs and plain.noise.release is None
    assert cell.design["method"] == "geometric-remap" and cell.design["gap"] < 1e-6
    assert "remapped" in cell.built and "Ghosh" in cell.built
    cert = cell.noise.quantize().certificate
    assert cert.exact and cert.epsilon_pure <= eps and cell.noise.quantize().certificate.delta == 0.0
    # the moved outputs are near the ends: the error differs only there, so the sum over every q
    # is the sum over the ends plus the middle's (equal up to the ratio margin, checked at a few)
    reach = int(math.ceil(40 / eps))
    ends = np.r_[np.arange(reach), np.arange(N - reach + 1, N + 1)]
    mine, theirs = _average_error(cell, ends), _average_error(plain, ends)
    middle = np.array([reach, N // 3, N // 2])
    assert np.allclose(_average_error(cell, middle), _average_error(plain, middle), rtol=1e-7)
    assert mine.sum() < theirs.sum() - 1e-3
    # the figures the cell reports agree with the enumeration
    assert cell.design["average_abs_error"] < cell.design["clamped_geometric_average_abs_error"]
    gain = (theirs.sum() - mine.sum()) / (N + 1)
    reported = cell.design["clamped_geometric_average_abs_error"] - cell.design["average_abs_error"]
    assert reported == pytest.approx(gain, rel=1e-6)
    worst, how = expected_abs_error(cell)
    assert "worst case" in how and worst == pytest.approx(max(mine.max(), _average_error(cell, middle).max()),
                                                          rel=1e-9)


def test_where_the_remap_moves_nothing_the_clamped_geometric_is_kept():
    """At eps = 1 the posterior of every output has its median at the output (``1 - alpha >=
    1/2``): the remap is the identity and the cell is the calibrated clamped geometric, the same
    draws for the same seed as before; outside ``remap_fits`` (distance 2, an (eps, delta)
    target, n above 20,000) the remap is not tried."""
    cell = count_cell("c", N, 0, 1, Target(1.0))
    plain = count_cell("c", N, 0, 1, Target(1.0), "clamped-geometric")
    assert cell.noise.release is None and cell.noise.name == plain.noise.name and "moves no output" in cell.built
    truth = np.arange(0, N + 1, 7)
    assert np.array_equal(cell.release(truth, SeededRandomSource(3)), plain.release(truth, SeededRandomSource(3)))
    assert remap_fits(N, 1, Target(0.5)) and not remap_fits(N, 2, Target(0.5))
    assert not remap_fits(N, 1, Target(0.5, 1e-6)) and not remap_fits(2_000, 1, Target(0.5))
    assert not remap_fits(20_001, 1, Target(0.5))
    # beyond the work the query spends on it (n = 10,000 at eps = 0.01: windows of about 11,200): not designed
    assert remap_work(10_000, 0.01) > REMAP_MAX_WORK >= remap_work(20_000, 0.05)
    slow = count_cell("c", 10_000, 0, 1, Target(0.01), gap=False)
    assert slow.noise.release is None and "not designed here" in slow.built


def test_the_remap_cells_intervals_cover_exactly():
    """Coverage of the 90 % interval, enumerated for every true value q in 0..n: the law of the
    released value (quantized noise, clamped, remapped) summed over the values whose interval
    holds q, at least 1 - alpha (to float rounding of the masses, far below the margin the
    noise window leaves). The remap moves outputs inward, so the coverage holds even without
    the widening; what the widening adds is checked directly: every value's interval holds the
    noise window's interval of each output remapped to it (it fails without the widening)."""
    alpha = 0.1
    cell = count_cell("c", N, 0, 1, Target(0.05))   # 120 outputs moved; at 0.4 no interval is widened
    assert cell.noise.release is not None
    y = np.arange(N + 1)
    low, high, how = interval(cell, y, alpha)
    assert "coverage" in how
    cover, released = np.empty(N + 1), _Law(cell)
    for q in range(N + 1):
        law = released(q)
        cover[q] = law[(low <= q) & (q <= high)].sum()
    assert cover.min() >= 1 - alpha - 1e-12, (int(cover.argmin()), cover.min())
    # each value's interval holds the noise window's interval of every output remapped to it
    from dataclasses import replace
    bare = replace(cell, noise=cell.noise.replace(release=None))
    bl, bh, _ = interval(bare, y, alpha)
    table = cell.noise.release.table()
    assert np.all(low[table] <= bl) and np.all(high[table] >= bh)
    assert np.any((low < bl) | (high > bh))   # wider than the value's own window somewhere
    # not trivially wide: the widest interval is that of the clamped geometric's window, or less
    plain = count_cell("c", N, 0, 1, Target(0.05), "clamped-geometric")
    pl, ph, _ = interval(plain, y, alpha)
    assert (high - low).max() <= (ph - pl).max() + 1   # one count wider at most (docs/benchmarks.md)
    assert Fraction(int((cover < 1 - alpha + 0.02).sum()), N + 1) > Fraction(1, 2)   # tight in the middle


def test_the_query_document_names_the_remap():
    """A histogram of 2,500 units (add-remove, max_units public): the document's mechanism says
    geometric noise with a remap, its values inside the domain and its intervals holding them."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"u": np.arange(2_400), "k": rng.integers(0, 3, 2_400)})
    spec = {"unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 2_500},
            "statistics": {"h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 0.2}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = optnoise.query(frame, spec, seed=5)
    stat = doc["statistics"]["h"]
    text = str(stat["mechanism"])
    assert "remap" in text and "Ghosh" in text, text
    for key, value in stat["values"].items():
        assert 0 <= value <= 2_500


@pytest.fixture(scope="module")
def spark():
    from optnoise.publish.spark import spark_session  # pyspark is installed by `make test` (extra "spark")
    return spark_session()


def test_the_remap_cell_releases_the_same_on_spark(tmp_path, spark):
    """The same document on Spark and locally for the same seed: the cell is chosen and drawn on
    the driver from the same exact answers."""
    from optnoise.query.files import query_file
    rng = np.random.default_rng(1)
    pd.DataFrame({"u": np.arange(2_400), "k": rng.integers(0, 3, 2_400)}).to_csv(tmp_path / "in.csv", index=False)
    spec = {"unit": {"id": "u", "max_rows": 1, "change": "add-remove", "max_units": 2_500},
            "statistics": {"h": {"kind": "histogram", "key": "k", "keys": [0, 1, 2], "epsilon": 0.2}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = query_file(tmp_path / "in.csv", spec, engine="spark", source=SeededRandomSource(9))
        ref = query_file(tmp_path / "in.csv", spec, source=SeededRandomSource(9))
    assert "remap" in str(ref["statistics"]["h"]["mechanism"])
    assert doc["engine"] == "spark" and doc["statistics"] == ref["statistics"]
