"""Per-record pure-DP channels by column generation (design/record.py) and the complete-graph
column pair of the privacy profiles (analysis/profile.py).

Every optimum here comes from an independent plain LP written in this file (one variable per
entry of P, one ratio row per ordered pair and output), never from the code under test; every
profile value is compared with the plain walk over all pairs.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optnoise.analysis.exact_fast import IntegerPair, certify_pairs
from optnoise.analysis.pairs import IntegerForm
from optnoise.analysis.profile import PrivacyProfile, exact_profile, privacy_profile
from optnoise.costs import loss_matrix
from optnoise.design.bounds import GAP_TOLERANCE
from optnoise.design.channel import design_channel
from optnoise.design.record import mix_to_ratio, solve_record
from optnoise.neighbourhood import InputPairs
from optnoise.pmf import Channel

#: The plain LP runs at HiGHS's default feasibility tolerance: its optimum may sit this far
#: (relative) below the true one.
PLAIN = 1e-8


def plain_record_lp(eps: float, c: np.ndarray) -> float:
    """min sum c * P over channels with P[a, y] <= e^eps P[b, y] for every ordered pair (a, b)."""
    size = c.shape[0]
    e = math.exp(eps)
    rows, cols, vals = [], [], []
    r = 0
    for a in range(size):
        for b in range(size):
            if a == b:
                continue
            for y in range(size):
                rows += [r, r]
                cols += [a * size + y, b * size + y]
                vals += [1.0, -e]
                r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, size * size))
    a_eq = sp.kron(sp.eye(size), np.ones((1, size)))
    res = linprog(c.ravel(), A_ub=a_ub, b_ub=np.zeros(r), A_eq=a_eq, b_eq=np.ones(size), bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def _cost(n: int, name: str, seed: int | None) -> np.ndarray:
    prior = np.full(n + 1, 1 / (n + 1)) if seed is None else np.random.default_rng(seed).dirichlet(np.ones(n + 1))
    return prior[:, None] * loss_matrix(name, n)


@pytest.mark.parametrize("incremental", [True, False])
@pytest.mark.parametrize("n,eps,name,seed", [(1, 0.5, "abs-error", None), (6, 1.0, "sq-error", 3),
                                             (12, 0.7, "abs-error", 5), (15, 2.0, "er", None)])
def test_column_generation_equals_the_plain_lp(incremental, n, eps, name, seed):
    c = _cost(n, name, seed)
    s = solve_record(c, eps, incremental=incremental)
    want = plain_record_lp(eps, c)
    assert s.bound.value <= want * (1 + PLAIN) + 1e-15
    assert s.gap <= GAP_TOLERANCE and s.cost == pytest.approx(want, rel=2 * GAP_TOLERANCE, abs=1e-14)
    P = s.matrix
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12) and np.all(P >= 0)
    hi, lo = P.max(axis=0), P.min(axis=0)
    assert np.all(hi <= math.exp(eps) * lo * (1 + 1e-12))


def test_a_random_loss_and_a_stop_after_one_round():
    # a loss with no structure: the bound still holds, and a run cut short says how far it is
    rng = np.random.default_rng(11)
    c = rng.uniform(0, 1, (14, 14)) * rng.dirichlet(np.ones(14))[:, None]
    want = plain_record_lp(1.3, c)
    full = solve_record(c, 1.3)
    short = solve_record(c, 1.3, time_limit=0.0)
    assert short.rounds == 1 and full.rounds >= 1
    for s in (full, short):
        assert s.bound.value <= want * (1 + PLAIN) + 1e-15 and s.cost >= want * (1 - PLAIN)
        assert s.gap == pytest.approx((s.cost - s.bound.value) / s.cost, abs=1e-15)
    assert full.cost == pytest.approx(want, rel=2 * GAP_TOLERANCE)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 7), eps=st.floats(0.05, 4.0), name=st.sampled_from(["er", "abs-error", "sq-error"]),
       weights=st.lists(st.integers(0, 9), min_size=8, max_size=8))
def test_bound_never_exceeds_the_optimum_fuzz(n, eps, name, weights):
    w = np.array(weights[: n + 1], dtype=float) + 1e-3
    c = (w / w.sum())[:, None] * loss_matrix(name, n)
    s = solve_record(c, eps)
    want = plain_record_lp(eps, c)
    assert s.bound.value <= want * (1 + PLAIN) + 1e-15
    if s.gap <= GAP_TOLERANCE:
        assert s.cost == pytest.approx(want, rel=2 * GAP_TOLERANCE, abs=1e-14)


def test_mixing_brings_every_column_within_the_ratio():
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.1, 0.4, 0.5]])
    M, lam = mix_to_ratio(P, 1.0)
    assert 0 < lam < 1 and np.allclose(M.sum(axis=1), 1.0)
    assert np.all(M.max(axis=0) <= math.e * M.min(axis=0))
    same, none = mix_to_ratio(np.full((3, 3), 1 / 3), 1.0)
    assert none == 0.0 and np.allclose(same, 1 / 3)


def test_design_channel_routes_per_record_beyond_n_100():
    d = design_channel(120, epsilon=1.0, pairs="all", cost="abs-error")
    assert d.method == "block-randomized-response" and d.optimal and d.lower_bound <= d.expected_cost
    # the ages example's structure (docs/ordered-domains.md): two outputs, binary randomized response
    assert d.blocks.k == 2 and len(d.mechanism.blocks.values) == 2
    assert d.mechanism.pmf.matrix[0, 0] == pytest.approx(math.e / (1 + math.e), rel=1e-6)
    # column generation on the dense cost (still the route of the other costs) finds the same optimum
    q = np.arange(121)
    s = solve_record(np.abs(q[:, None] - q[None, :]) / 121.0, 1.0)
    assert s.cost == pytest.approx(d.expected_cost, rel=2 * GAP_TOLERANCE)
    used = np.flatnonzero(s.matrix.max(axis=0) > 1e-9)
    assert used.size == 2 and s.matrix[0, used[0]] == pytest.approx(math.e / (1 + math.e), rel=1e-6)
    c = design_channel(120, epsilon=1.0, pairs="all", cost="circular-abs")
    assert c.method == "column-generation" and c.optimal


# ----------------------------------------------------------------------- the complete-graph column pair
def test_covers_all():
    assert InputPairs.complete(5, directed=True).covers_all(5)
    assert InputPairs.complete(5).covers_all(5)
    assert not InputPairs.complete(5).covers_all(6)
    some = InputPairs.complete(5, directed=True).pairs[1:]
    assert not InputPairs(some, directed=True).covers_all(5)
    both = InputPairs(((0, 1), (1, 0), (0, 2)))   # undirected, duplicates as sets: not complete on 3
    assert not both.covers_all(3)
    assert not InputPairs(((0, 5),), directed=True).covers_all(2)


def test_every_pair_is_the_complete_graph_in_its_order():
    from optnoise.analysis.pairs import EveryPair
    k = 7
    every = EveryPair(k, lambda a, b: (a, b))
    listed = InputPairs.complete(k, directed=True).pairs
    assert len(every) == len(listed) == k * (k - 1)
    assert tuple(every) == listed == tuple(every[i] for i in range(len(every)))
    assert every[-1] == listed[-1] and every[3:9] == list(listed[3:9])
    assert tuple(every.map(lambda p: p[::-1])) == tuple((b, a) for a, b in listed)
    for k in (2, 3, 7, 12):   # symmetric: the order InputPairs.ordered lists the complete graph in
        both = EveryPair(k, lambda a, b: (a, b), interleaved=True)
        want = tuple(InputPairs.complete(k).ordered(k))
        assert tuple(both) == want == tuple(both[i] for i in range(len(both)))
        assert tuple(both.map(lambda p: p[::-1])) == tuple((b, a) for a, b in want)


def test_every_pair_only_for_pairs_listed_in_the_complete_graph_order():
    """Pairs listed in another order keep the listed path, so ties keep their labels."""
    from optnoise.analysis.pairs import every_pair_of
    k = 70
    for directed in (True, False):
        listed = InputPairs.complete(k, directed=directed)
        assert every_pair_of(listed, k)
        assert not every_pair_of(InputPairs(tuple(reversed(listed.pairs)), directed=directed), k)
    assert not every_pair_of(InputPairs(tuple((b, a) for a, b in InputPairs.complete(k).pairs)), k)


def test_input_pairs_and_dumps_edge_cases_found_in_review():
    """Mixed tuple/list pairs are normalised to tuples (the vectorised check checks every
    pair's type, not only the first); a long list of dicts is written by jsonable (True keys
    as "True", as before the one-line lists)."""
    import json

    from optnoise.io import dumps, jsonable
    k = 80
    pairs = tuple([(0, 1)] + [[a, b] for a in range(k) for b in range(k) if a != b and (a, b) != (0, 1)])
    ip = InputPairs(pairs, directed=True)
    assert all(type(p) is tuple for p in ip.pairs) and len(set(ip.pairs)) == len(pairs)
    obj = {"a": [{True: 1, None: 2}] * 300, "b": list(range(300))}
    assert json.loads(dumps(obj)) == json.loads(json.dumps(jsonable(obj), indent=2))


def test_input_pairs_vectorised_check_equals_the_loop():
    """The large-tuple check keeps what the loop would, and leaves every bad case to it."""
    k = 80   # 6,320 ordered pairs: past the vectorised check's threshold
    listed = tuple((a, b) for a in range(k) for b in range(k) if a != b)
    fast = InputPairs(listed, directed=True)
    assert fast.pairs == listed and fast.covers_all(k) and fast.ordered(k) == list(listed)
    assert fast.to_json()["pairs"] == [list(p) for p in listed]
    dup = InputPairs(listed + listed[:3], directed=True)     # duplicates dropped by the loop
    assert dup.pairs == listed
    mixed = InputPairs(tuple((np.int64(a), b) for a, b in listed), directed=True)   # converted by the loop
    assert mixed.pairs == listed and all(type(a) is int for a, _ in mixed.pairs)
    with pytest.raises(Exception, match="distinct"):
        InputPairs(listed + ((3, 3),), directed=True)
    with pytest.raises(Exception, match="input indices"):
        fast.ordered(k - 1)


def test_long_lists_are_written_compact_with_the_same_json():
    import json
    from optnoise.io import COMPACT_FROM, dumps, jsonable
    obj = {"pairs": [[a, a + 1] for a in range(COMPACT_FROM)], "floats": np.linspace(0, 1, COMPACT_FROM),
           "odd": [math.inf] + [1.0] * COMPACT_FROM, "np": [np.int64(2)] * COMPACT_FROM, "short": [1, 2]}
    text = dumps(obj)
    assert json.loads(text) == json.loads(json.dumps(jsonable(obj), indent=2))
    lines = text.split("\n")
    assert sum(line.startswith('  "pairs": [[0, 1], [1, 2]') for line in lines) == 1   # one line each
    assert sum(line.startswith('  "floats": [0.0, ') for line in lines) == 1
    assert len(lines) > 2 * COMPACT_FROM   # "odd" (an infinity) and "np" (numpy scalars) indented as before
    mimic = {**obj, "text": "\x00\x01" + "0\x01\x00"}   # a string that looks like a marker: the plain path
    assert json.loads(dumps(mimic)) == json.loads(json.dumps(jsonable(mimic), indent=2))


def _channel(k: int, seed: int, zero: bool = False) -> np.ndarray:
    M = np.random.default_rng(seed).uniform(1, 2, (k, k))
    if zero:
        M[3, 4] = 0.0
    return M / M.sum(axis=1, keepdims=True)


@pytest.mark.slow
def test_float_profile_of_every_pair_equals_the_plain_walk():
    k = 70   # 4,830 ordered pairs x 70 outputs: past STREAM_CELLS, so the column pair is used
    nb = InputPairs.complete(k, directed=True)
    for zero in (False, True):
        prof = privacy_profile(Channel(_channel(k, 1, zero)), nb)
        plain = PrivacyProfile(prof.pairs, nb)
        assert prof.epsilon_pure == plain.epsilon_pure and math.isinf(prof.epsilon_pure) == zero
        assert prof.delta_dp(5.0) == plain.delta_dp(5.0) and prof.epsilon_dp(0.0) == plain.epsilon_dp(0.0)
        if not zero:   # below the pure epsilon every pair is visited: the same walk
            assert prof.delta_dp(0.3) == plain.delta_dp(0.3) > 0


def test_exact_profile_of_every_pair_equals_the_plain_walk():
    k, bits = 70, 40
    M = _channel(k, 2)
    W = np.floor(M * 2.0 ** bits).astype(np.uint64)
    W[:, 0] += (np.uint64(1 << bits) - W.sum(axis=1, dtype=np.uint64))
    form = IntegerForm("channel", W, 1 << bits)
    nb = InputPairs.complete(k, directed=True)
    fast = exact_profile(form, nb)
    pairs = [IntegerPair.from_weights(W[a], W[b], 1 << bits, f"x={a},x'={b}") for a, b in nb.ordered(k)]
    for eps, d in ((None, None), (1.0, 0.0), (5.0, 0.0), (0.2, None)):
        got, want = fast.values(eps, d), certify_pairs(pairs, epsilon=eps, delta=d)
        assert (got.epsilon_pure, got.delta_dp, got.delta_pdp, got.epsilon_dp) == \
            (want.epsilon_pure, want.delta_dp, want.delta_pdp, want.epsilon_dp)


# ----------------------------------------------------------------------- noise on Z, streamed
def test_finite_line_noise_streamed_equals_the_plain_walk():
    from optnoise.families import parse_family
    from optnoise.neighbourhood import Neighbourhood
    pmf = parse_family("discrete-gaussian:30.0")[1]   # finite support (a window, no tails)
    nb = Neighbourhood(tuple(range(1, 61)))           # 120 shifts x 2,403 cells: past STREAM_CELLS
    prof = privacy_profile(pmf, nb)
    assert prof.summarize is not None
    plain = PrivacyProfile(prof.pairs, nb)
    for eps, d in ((0.5, 1e-5), (2.0, 0.0), (0.05, 0.3)):
        got, want = prof.values(eps, d), plain._from_pairs(eps, d)
        for key in ("epsilon_pure", "delta_dp", "delta_pdp", "epsilon_dp", "epsilon_pdp"):
            assert getattr(got, key) == pytest.approx(getattr(want, key), rel=1e-12)
        assert {k: abs(int(v.split("=")[1])) for k, v in got.worst.items()} == \
            {k: abs(int(v.split("=")[1])) for k, v in want.worst.items()}


# ----------------------------------------------------------------------- randomized response's bound
@pytest.mark.parametrize("k,eps", [(2, 0.3), (5, 0.8), (9, 2.5)])
def test_randomized_response_bound_against_the_plain_lp(k, eps):
    from optnoise.design.rr import design_rr
    d = design_rr(k, epsilon=eps)
    want = plain_record_lp(eps, (1.0 - np.eye(k)) / k)   # any channel, every pair neighbours, error rate
    assert d.lower_bound <= want * (1 + PLAIN)
    assert d.optimal and d.gap <= GAP_TOLERANCE and d.expected_cost == pytest.approx(want, rel=1e-8)
    assert d.report_json()["lower_bound"] == d.lower_bound
    # approximate DP (issue 23): the bound is Holohan et al.'s error rate (k - 1)(1 - delta) / (e^eps + k - 1)
    assert design_rr(k, epsilon=eps, delta=1e-3).lower_bound == pytest.approx(
        (k - 1) * (1 - 1e-3) / (math.exp(eps) + k - 1), rel=1e-12)
