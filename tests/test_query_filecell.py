"""A statistic's cells released by a mechanism from a file (query/filecell.py, issue 37 item 3):
re-certified exactly under the cell's distances and target, on the cell's domain."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError

runner = CliRunner()
N = 60


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"c": np.arange(N), "hour": rng.integers(0, 3, N)})


def _spec(mechanism, epsilon=1.0, kind="histogram") -> dict:
    stat = {"kind": kind, "key": "hour", "keys": [0, 1, 2], "epsilon": epsilon, "mechanism": mechanism}
    if kind == "peak":
        stat = {"kind": "peak", "key": "hour", "keys": [0, 1, 2], "of": "kwh", "clamp": {"lower": 0, "upper": 5},
                "epsilon": epsilon, "mechanism": mechanism}
    return {"unit": {"id": "c", "max_rows": 1}, "statistics": {"h": stat}}


def _query(frame, spec, seed=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optnoise.query(frame, spec, seed=seed)


@pytest.fixture(scope="module")
def channel_file(tmp_path_factory):
    """The optimal channel on {0..N} at the cell's target (replace: two cells, eps 0.5 each),
    designed by the command line as a publisher would."""
    path = tmp_path_factory.mktemp("ch") / "channel.json"
    r = runner.invoke(app, ["design", "--form", "channel", "--n", str(N), "--epsilon", "0.5", "--cost", "abs-error",
                            "--output", str(path)])
    assert r.exit_code == 0, r.output
    return path


def test_the_file_releases_what_the_same_built_in_channel_releases(channel_file):
    frame = _frame()
    by_file = _query(frame, _spec({"file": str(channel_file)}))
    built_in = _query(frame, _spec("optimal"))
    a, b = by_file["statistics"]["h"], built_in["statistics"]["h"]
    assert a["values"] == b["values"] and a["intervals"] == b["intervals"]
    assert a["mechanism"]["file"] == str(channel_file) and len(a["mechanism"]["sha256"]) == 64
    assert by_file["only_if_unseeded"]["total"]["basic"] == built_in["only_if_unseeded"]["total"]["basic"]


def test_the_file_is_certified_again_under_the_cells_target(channel_file):
    with pytest.raises(InvalidParameterError) as err:   # eps 0.5 per cell cannot meet 0.25
        _query(_frame(), _spec({"file": str(channel_file)}, epsilon=0.5))
    assert err.value.parameter == "statistics.h.mechanism" and "0.25" in str(err.value)


def test_a_file_of_another_domain_is_refused(channel_file):
    with pytest.raises(InvalidParameterError, match="61 answers"):
        _query(_frame().iloc[:40], _spec({"file": str(channel_file)}))


def test_noise_on_the_line_from_a_file_is_clamped_to_the_domain(tmp_path):
    path = tmp_path / "geo.json"
    from optnoise.mechanism.make import geometric
    geometric(epsilon=0.5).save(path)
    doc = _query(_frame(), _spec({"file": str(path)}))
    values = doc["statistics"]["h"]["values"]
    assert all(0 <= v <= N for v in values.values())
    assert doc["statistics"]["h"]["mechanism"]["space"] == "clamped-line"


@pytest.mark.parametrize("mechanism, kind, match", [({"file": ""}, "histogram", "file"),
                                                    ({"file": "x", "other": 1}, "histogram", "file"),
                                                    ({"file": "x.json"}, "peak", "peak")])
def test_bad_mechanism_tables_are_refused(mechanism, kind, match):
    with pytest.raises(InvalidParameterError, match=match):
        _query(_frame(), _spec(mechanism, kind=kind))


def test_a_compact_per_record_channel_releases_a_count_with_its_block_intervals(tmp_path):
    """The per-record optimal channel on {0..M} (block randomized response, stored as a core and
    a block map) releases a count: its released values are the block map's, and the interval of
    every released value covers every true answer with the core's Neyman coverage -- checked
    exactly over all M + 1 answers."""
    from optnoise.query.filecell import file_cell
    from optnoise.query.intervals import expected_abs_error, interval
    from optnoise.target import Target
    m = 1500
    path = tmp_path / "record.json"
    r = runner.invoke(app, ["design", "--form", "channel", "--n", str(m), "--epsilon", "1", "--per-record",
                            "--cost", "abs-error", "--output", str(path)])
    assert r.exit_code == 0, r.output
    cell = file_cell("c", str(path), m, 0, 1, Target(1.0))
    blocks = cell.noise.blocks
    assert blocks is not None and blocks.answers == m + 1
    q = cell.noise.quantize()
    p = np.asarray(q.weights, dtype=float)
    p /= p.sum(axis=1, keepdims=True)
    low, high, how = interval(cell, np.array(blocks.values), 0.05)
    row = np.searchsorted(np.asarray(blocks.starts), np.arange(m + 1), side="right") - 1
    coverage = [sum(p[row[a], c] for c in range(len(blocks.values)) if low[c] <= a <= high[c]) for a in range(m + 1)]
    assert min(coverage) >= 0.95 - 1e-12 and "Neyman" in how
    worst, _ = expected_abs_error(cell)
    brute = max(float(np.sum(p[row[a]] * np.abs(np.array(blocks.values) - a))) for a in range(m + 1))
    assert worst == pytest.approx(brute, rel=1e-12)
    frame = pd.DataFrame({"c": np.arange(m), "hour": np.arange(m) % 24})
    spec = {"unit": {"id": "c", "max_rows": 1}, "statistics": {"evening": {
        "kind": "count", "where": {"hour": {"lower": 17}}, "epsilon": 1.0, "mechanism": {"file": str(path)}}}}
    e = _query(frame, spec)["statistics"]["evening"]
    assert e["value"] in blocks.values and e["interval"][0] <= e["interval"][1]


def test_a_geometric_remap_file_releases_its_remap_on_the_cells_domain(tmp_path):
    """The geometric noise with a remap (design --form channel --sd 1 above n = 2,000, here made
    at the cell's small domain): certified as noise under the cell's distances, released as
    remap(clip(q + eta)); the interval of a value holds those of every output remapped to it."""
    from optnoise import Neighbourhood, Target
    from optnoise.design.geometric_remap import solve_geometric_remap
    from optnoise.families.geometric import geometric_pmf
    from optnoise.mechanism import Mechanism
    from optnoise.query.filecell import file_cell
    from optnoise.query.intervals import expected_abs_error, interval
    from optnoise.randomness import random_source
    from optnoise.sampling.clamp_remap import ClampRemap
    sol = solve_geometric_remap(N, 0.5)
    release = ClampRemap.of(sol.remap)
    assert release.outputs[0] == 0 and release.values[0] == 1    # the end merged into its neighbour
    path = tmp_path / "remap.json"
    Mechanism(geometric_pmf(sol.alpha), Neighbourhood.sd(1), Target(0.5), "remap", release=release).save(path)
    doc = _query(_frame(), _spec({"file": str(path)}))
    assert all(0 <= v <= N for v in doc["statistics"]["h"]["values"].values())
    cell = file_cell("h", str(path), N, 0, 1, Target(0.5))
    out = cell.release(np.zeros(20_000, dtype=np.int64), random_source(4))
    assert out.min() >= 1 and out.max() <= N    # 0 is never released: the remap moves it
    low, high, _ = interval(cell, np.array([1, 30, N]), 0.05)
    assert low[0] == 0 and np.all(low <= high)   # 1 is released for z = 0 and 1: its interval holds q = 0
    worst, how = expected_abs_error(cell)   # per true value, clamped then remapped: at most E|noise| + the largest move
    moved = max(abs(v - z) for z, v in zip(release.outputs, release.values))
    assert 0 < worst <= 2 * sol.alpha / (1 - sol.alpha ** 2) + moved and "worst case" in how
    with pytest.raises(InvalidParameterError, match="release is on 0..60"):
        file_cell("h", str(path), N - 5, 0, 1, Target(0.5))
