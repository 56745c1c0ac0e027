"""Per-record (eps, delta)-DP channels by cut generation (design/record_delta.py).

Every optimum here comes from an independent plain LP written in this file (the hockey-stick
epigraph: one slack per ordered pair and output, solved by scipy's linprog), never from the
code under test; the certificate is checked against the exact pair-by-pair verifier and a
Fraction computation of every pair's hockey-stick sum.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optnoise.analysis.exact import exp_lower
from optnoise.analysis.exact_fast import IntegerPair, certify_pairs
from optnoise.design.record_delta import hockey_rows, mix_to_delta, solve_record_delta
from optnoise.mechanism import Mechanism
from optnoise.neighbourhood import InputPairs
from optnoise.pmf import Channel
from optnoise.target import Target

#: The plain LP runs at HiGHS's default tolerances: its optimum may sit this far (relative)
#: from the true one.
PLAIN = 1e-7


def plain_delta_lp(eps: float, delta: float, c: np.ndarray) -> float:
    """min sum c * P over channels with sum_y s[a, b, y] <= delta, s >= P[a] - e^eps P[b], s >= 0,
    for every ordered pair (a, b): the textbook epigraph, all variables explicit."""
    size = c.shape[0]
    e = math.exp(eps)
    pairs = [(a, b) for a in range(size) for b in range(size) if a != b]
    n_p = size * size
    n_s = len(pairs) * size
    rows, cols, vals = [], [], []
    r = 0
    for k, (a, b) in enumerate(pairs):
        for y in range(size):   # P[a, y] - e P[b, y] - s[k, y] <= 0
            rows += [r, r, r]
            cols += [a * size + y, b * size + y, n_p + k * size + y]
            vals += [1.0, -e, -1.0]
            r += 1
    for k in range(len(pairs)):   # sum_y s[k, y] <= delta
        rows += [r] * size
        cols += list(range(n_p + k * size, n_p + (k + 1) * size))
        vals += [1.0] * size
        r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, n_p + n_s))
    b_ub = np.concatenate([np.zeros(len(pairs) * size), np.full(len(pairs), delta)])
    a_eq = sp.csr_matrix((np.ones(n_p), (np.repeat(np.arange(size), size), np.arange(n_p))), shape=(size, n_p + n_s))
    cost = np.concatenate([c.ravel(), np.zeros(n_s)])
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(size), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _abs_error(n: int) -> np.ndarray:
    q = np.arange(n + 1)
    return np.abs(q[:, None] - q[None, :]) / (n + 1.0)


CASES = [(4, 1.0, 1e-3, "abs"), (5, 0.5, 0.05, "abs"), (4, 1.0, 0.1, "random0"), (5, 2.0, 0.01, "random1"),
         (3, 0.3, 0.2, "random2")]


def _cost(n: int, name: str) -> np.ndarray:
    if name == "abs":
        return _abs_error(n)
    rng = np.random.default_rng(int(name[-1]))
    return rng.uniform(0, 1, (n + 1, n + 1)) * rng.dirichlet(np.ones(n + 1))[:, None]


@pytest.mark.parametrize("n, eps, delta, name", CASES)
def test_optimum_equals_the_plain_lp_and_the_bound_is_below(n, eps, delta, name):
    c = _cost(n, name)
    want = plain_delta_lp(eps, delta, c)
    got = solve_record_delta(c, eps, delta)
    assert got.cost == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert got.bound.value <= want * (1 + PLAIN) + 1e-12          # a lower bound on the optimum
    assert got.bound.value >= want * (1 - 1e-6) - 1e-9            # and a tight one
    assert got.gap <= 1e-6
    P = got.matrix
    assert np.allclose(P.sum(axis=1), 1.0) and P.min() >= 0
    assert got.worst <= delta


def test_hockey_rows_and_mixing_against_a_loop():
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.ones(6), size=6)
    P[2, 3] = 0.0
    P /= P.sum(axis=1, keepdims=True)
    e = math.exp(0.4)
    H = hockey_rows(P, e)
    for a in range(6):
        for b in range(6):
            want = 0.0 if a == b else sum(max(0.0, P[a, y] - e * P[b, y]) for y in range(6))
            assert H[a, b] == pytest.approx(want, abs=1e-15)
    Q, lam, worst = mix_to_delta(P, e, 0.5 * H.max())
    assert 0 < lam <= 1 and worst <= 0.5 * H.max()
    assert worst == pytest.approx(hockey_rows(Q, e).max())


def test_certificate_agrees_with_the_exact_verifier():
    n, eps, delta = 5, 1.0, 1e-2
    sol = solve_record_delta(_abs_error(n), eps, delta)
    size = n + 1
    nb = InputPairs.complete(size, directed=True)
    q = Mechanism(Channel(sol.matrix), nb, Target(eps, delta), "record-delta").quantize()
    cert = q.certificate
    assert cert.delta_dp <= delta
    W, D = q.weights, 1 << q.bits
    pairs = [IntegerPair.from_weights(W[a], W[b], D, f"x={a},x'={b}") for a, b in nb.pairs]
    plain = certify_pairs(pairs, epsilon=eps, delta=delta)
    assert (cert.delta_dp, cert.epsilon_dp) == (plain.delta_dp, plain.epsilon_dp)
    # every pair's hockey-stick sum in Fractions, at a rational below e^eps (so above the true sum)
    e = exp_lower(eps)
    worst = max(sum(max(Fraction(0), Fraction(int(W[a, y]), D) - e * Fraction(int(W[b, y]), D)) for y in range(size))
                for a, b in nb.pairs)
    assert float(worst) <= delta
    assert cert.delta_dp == pytest.approx(float(worst), rel=1e-9, abs=1e-15)


def test_candidate_meets_every_pair_and_a_stopped_run_keeps_its_bound():
    """(1 - delta) B + delta I meets every pair's constraint (the argument in its docstring),
    and a run stopped after its first round returns a feasible channel with a bound below the
    plain optimum."""
    import optnoise.design.record_delta as rd
    n, eps, delta = 6, 1.0, 0.01
    c = _abs_error(n)
    e = math.exp(eps)
    P0 = rd.candidate(c, eps, e, delta)
    assert hockey_rows(P0, e).max() <= delta * (1 + 1e-9)
    want = plain_delta_lp(eps, delta, c)
    stopped = solve_record_delta(c, eps, delta, time_limit=0.0)
    assert stopped.rounds == 1 and stopped.worst <= delta
    assert stopped.bound.value <= want * (1 + PLAIN) + 1e-12 <= stopped.cost * (1 + PLAIN) + 2e-12
