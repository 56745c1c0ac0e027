"""Keys found in the data: the randomised boundary (query/threshold.py, ``randomised_threshold``;
docs/proofs/key-selection.md, "The randomised boundary").

A key whose noisy count is exactly ``tau - 1`` is released with probability ``q = a / 2^64``:
the largest ``q`` whose exact selection delta meets the target. Checked here against brute-force
enumeration of the unit's keys' outputs (finite-support noise: every outcome listed, exact
rationals), against the exact hockey-stick divergence of a whole release, by the coin's
frequency, and by the keys it keeps against the plain threshold."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise.query.mechanisms import count_cell
from optnoise.query.threshold import (BOUNDARY_BITS, randomised_threshold, release_probability, selection_cost,
                                      smallest_threshold, upper_tail)
from optnoise.query.truncated import truncated_noise
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target

FULL = 1 << BOUNDARY_BITS


def _finite_masses(noise) -> dict[int, Fraction]:
    """The exact law of finite-support quantized noise: its weights over their sum."""
    assert noise.left is None and noise.right is None
    w = [int(x) for x in noise.weights]
    z = sum(w)
    return {noise.lo + i: Fraction(x, z) for i, x in enumerate(w)}


def _shown_brute(masses: dict[int, Fraction], tau: int, q: Fraction, m: int) -> Fraction:
    """P[some key of a unit's ``m`` one-unit keys is released], by listing every noise tuple and
    every coin: a key of noisy count ``1 + z`` shows if ``1 + z >= tau``, and at ``1 + z = tau - 1``
    with its coin (probability ``q``)."""
    none = Fraction(0)
    for zs in itertools.product(masses, repeat=m):
        weight = math.prod((masses[z] for z in zs), start=Fraction(1))
        hidden = Fraction(1)
        for z in zs:
            if 1 + z >= tau:
                hidden = Fraction(0)
            elif 1 + z == tau - 1:
                hidden *= 1 - q
        none += weight * hidden
    return 1 - none


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("m", [1, 3])
def test_the_boundary_probability_and_the_delta_match_brute_force(eps, m):
    """Finite-support noise (the truncated geometric on [-5, 5]): ``p(q)`` is the enumerated
    release probability of a one-unit key, the selection delta is the enumerated probability that
    one of ``m`` such keys shows, it meets the target, and ``q + 2^-64`` would not."""
    noise = truncated_noise(5, eps, Target(eps, 0.2)).quantize()
    masses = _finite_masses(noise)
    tail = {k: sum((v for z, v in masses.items() if z >= k), start=Fraction(0)) for k in range(-8, 9)}
    assert all(upper_tail(noise, k) == v for k, v in tail.items())
    for delta in (0.02, 0.05):
        t = randomised_threshold(noise, m, delta, lowest=-100)
        assert 0 < t.boundary < 1 and (t.boundary * FULL).denominator == 1
        assert t.p == _shown_brute(masses, t.tau, t.boundary, 1)
        exact = _shown_brute(masses, t.tau, t.boundary, m)
        assert exact == 1 - (1 - t.p) ** m <= Fraction(delta)
        assert Fraction(t.delta) >= exact and t.delta <= delta
        assert _shown_brute(masses, t.tau, t.boundary + Fraction(1, FULL), m) > Fraction(delta)
        plain = smallest_threshold(noise, m, delta)
        assert plain.tau == t.tau and plain.p < t.p   # the same threshold, more of the delta used
        assert release_probability(noise, 1, t.tau, t.boundary) == t.p


def test_the_delta_never_exceeds_the_target_and_the_boundary_is_maximal():
    """The clamped geometric (tails both sides) over an eps, delta and m grid: the exact delta
    meets the target, one more step of ``q`` does not, and the printed delta is at most the
    target."""
    for eps in (0.25, 1.0, 3.0):
        noise = count_cell("x", 1000, 0, 1, Target(eps), "clamped-geometric").noise.quantize()
        for m, delta in ((1, 1e-6), (3, 1e-9), (10, 1e-5), (2, 0.3)):
            t = randomised_threshold(noise, m, delta)
            goal = Fraction(delta)
            assert 1 - (1 - t.p) ** m <= goal < 1 - (1 - release_probability(
                noise, 1, t.tau, t.boundary + Fraction(1, FULL))) ** m
            assert t.delta <= delta and t.boundary > 0
            eps_shift, d = selection_cost(t.p, m)
            assert (t.epsilon_shift, t.delta) == (eps_shift, d)


def test_the_boundary_stays_off_the_domains_least_value():
    """At ``tau - 1 <= lowest`` the clamp gathers the lower tail there: no boundary."""
    noise = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    t = randomised_threshold(noise, 1, 0.45)
    assert t.tau == 2 and t.boundary > 0
    assert randomised_threshold(noise, 1, 0.45, lowest=1).boundary == 0


def _key_law(noise, count: int, tau: int, q: Fraction, values: np.ndarray) -> dict:
    """One key's output: ``None`` or its noisy count (released at ``tau - 1`` with probability q)."""
    def mass(k: int) -> float:
        return float(upper_tail(noise, k) - upper_tail(noise, k + 1))
    law = {int(v): mass(int(v) - count) for v in values if v >= tau}
    law[tau - 1] = float(q) * mass(tau - 1 - count)
    return {None: 1.0 - sum(law.values()), **law}


def test_the_whole_release_keeps_the_selection_cost_exactly_both_ways():
    """The exact hockey-stick divergence of a two-key release (a shared key, count 3 with the unit
    and 2 without, and its own key, 1 or absent), both directions, add-remove and replace, at the
    shared key's epsilon plus the selection's epsilon, stays within the selection's delta with the
    boundary; and the forward divergence is at least ``p(q)`` (not vacuous)."""
    noise = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    t = randomised_threshold(noise, 2, 0.05)
    assert t.boundary > 0
    values = np.arange(t.tau, t.tau + 80)
    shared_d, shared_n = (_key_law(noise, c, t.tau, t.boundary, values) for c in (3, 2))
    own, absent = _key_law(noise, 1, t.tau, t.boundary, values), {None: 1.0}
    eps = noise.certificate.epsilon_pure + t.epsilon_shift
    for laws_d, laws_n in (((shared_d, own, absent), (shared_n, absent, absent)),
                           ((shared_d, own, absent), (shared_d, absent, own))):
        forward = backward = 0.0
        for outs in itertools.product(*(a.keys() | b.keys() for a, b in zip(laws_d, laws_n))):
            pd = math.prod(law.get(o, 0.0) for law, o in zip(laws_d, outs))
            pn = math.prod(law.get(o, 0.0) for law, o in zip(laws_n, outs))
            forward += max(0.0, pd - math.exp(eps) * pn)
            backward += max(0.0, pn - math.exp(eps) * pd)
        assert forward <= t.delta * (1 + 1e-9) and backward <= t.delta * (1 + 1e-9)
        assert forward >= float(t.p) * (1 - 1e-9)


def test_the_coin_falls_with_its_probability():
    """200,000 coins at the boundary from a seeded source: the count of releases is within 4.5
    binomial standard deviations of ``n q`` (false alarm < 1e-5); a coin off by 0.005 would be
    about 15 deviations away (power ~1)."""
    noise = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    t = randomised_threshold(noise, 1, 1e-6)
    q = float(t.boundary)
    assert 0.1 < q < 0.9
    n = 200_000
    words = SeededRandomSource(7).words(n)
    released = sum(t.keeps(t.tau - 1, int(w)) for w in words)
    assert abs(released - n * q) <= 4.5 * math.sqrt(n * q * (1 - q))
    assert all(t.keeps(v) for v in (t.tau, t.tau + 5)) and not t.keeps(t.tau - 2)
    assert t.keeps(t.tau - 1, 0) and not t.keeps(t.tau - 1, FULL - 1)


def test_the_boundary_keeps_more_keys_of_every_count():
    """Every count's release probability grows (strictly at counts near the threshold)."""
    noise = count_cell("x", 1000, 0, 1, Target(1.0), "clamped-geometric").noise.quantize()
    t = randomised_threshold(noise, 1, 1e-6)
    for c in range(1, 40):
        plain = release_probability(noise, c, t.tau)
        assert release_probability(noise, c, t.tau, t.boundary) >= plain
    assert release_probability(noise, t.tau - 1, t.tau, t.boundary) > release_probability(noise, t.tau - 1, t.tau)


def _boundary_frame(keys: int, count: int):
    """``keys`` keys each held by ``count`` units (one row per unit)."""
    import pandas as pd
    rows = [(k * count + u, f"k{k}") for k in range(keys) for u in range(count)]
    return pd.DataFrame(rows, columns=["c", "product"])


def _boundary_spec() -> dict:
    return {"unit": {"id": "c", "max_rows": 1},
            "statistics": {"p": {"kind": "histogram", "key": "product", "keys": "from-data", "epsilon": 1.0,
                                 "delta": 1e-6}}}


def _planned_threshold(frame, spec):
    from optnoise.query.aggregate import aggregate
    from optnoise.query.found import found_in_frame, with_found_keys
    from optnoise.query.kinds import kind_of
    from optnoise.query.release import plan
    from optnoise.query.spec import parse_query_spec
    parsed = parse_query_spec(spec)
    parsed = with_found_keys(parsed, found_in_frame(frame, parsed))
    item = plan(parsed, aggregate([frame], parsed))[0]
    return kind_of(item.stat).selection(item), item.cell.noise.quantize()


def test_released_documents_keep_boundary_keys_at_their_exact_rate():
    """120 keys of ``tau - 1`` units each, 25 seeded documents: the share released is within 4.5
    binomial standard deviations of ``P[Z >= 1] + q P[Z = 0]`` (false alarm < 1e-5); the plain
    threshold's ``P[Z >= 1]`` is about 7 deviations lower (power > 0.99). The document states the
    threshold and ``q``, and a key shown at ``tau - 1`` is one of the boundary's."""
    import warnings
    import optnoise
    t, noise = _planned_threshold(_boundary_frame(2, 3), _boundary_spec())
    assert t.boundary > 0
    keys = 120
    frame = _boundary_frame(keys, t.tau - 1)
    rate = float(release_probability(noise, t.tau - 1, t.tau, t.boundary))
    plain = float(release_probability(noise, t.tau - 1, t.tau))
    runs, shown, at_boundary = 25, 0, 0
    for seed in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = optnoise.query(frame, _boundary_spec(), seed=seed)["statistics"]["p"]
        assert doc["keys"]["threshold"] == t.tau and doc["keys"]["boundary_count"] == t.tau - 1
        assert doc["keys"]["boundary_probability"] == float(t.boundary)   # the exact one below
        assert doc["keys"]["boundary_probability_exact"] == f"{t.boundary * FULL}/2^64"
        shown += len(doc["values"])
        at_boundary += sum(v == t.tau - 1 for v in doc["values"].values())
        assert all(v >= t.tau - 1 for v in doc["values"].values())
    n = runs * keys
    sd = math.sqrt(n * rate * (1 - rate))
    assert abs(shown - n * rate) <= 4.5 * sd
    assert n * (rate - plain) > 6.5 * sd and at_boundary > 0


@pytest.mark.spark
def test_spark_draws_the_same_boundary_coins(tmp_path):
    """Keys at the boundary count: Spark and the local engine give the same document for the
    same seed, coins included (a key is released at ``tau - 1`` in it: the coins were drawn)."""
    import json
    from typer.testing import CliRunner
    from optnoise.cli.app import app
    t, _ = _planned_threshold(_boundary_frame(2, 3), _boundary_spec())
    _boundary_frame(30, t.tau - 1).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "q.toml").write_text('unit = { id = "c", max_rows = 1 }\n[statistics.p]\nkind = "histogram"\n'
                                     'key = "product"\nkeys = "from-data"\nepsilon = 1.0\ndelta = 1e-6\n')
    docs = []
    for engine in ("local", "spark"):
        r = CliRunner().invoke(app, ["query", "--spec", str(tmp_path / "q.toml"), "--input", str(tmp_path / "in.csv"),
                                     "--seed", "4", "--json", "--engine", engine])
        assert r.exit_code == 0, r.output
        docs.append(json.loads(r.stdout)["statistics"]["p"])
    assert docs[0] == docs[1]
    assert any(v == t.tau - 1 for v in docs[0]["values"].values())
