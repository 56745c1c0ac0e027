"""The channel for neighbours one apart as the geometric noise and a remap (issue 37, item 3):
its cost and proven bound against independent computations, its release certified by the
noise's certificate, its file, its sampler. docs/proofs/geometric-remap.md."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.stats import chi2

from optnoise import Neighbourhood, Request, Target, design
from optnoise.analysis import IntegerForm, exact_profile
from optnoise.costs import loss_rows
from optnoise.design.block_bound import window_values
from optnoise.design.bounds import chain_values, down, exp_up
from optnoise.design.chain import solve_chain
from optnoise.design.geometric_remap import remap_bound, solve_geometric_remap
from optnoise.design.remap_design import COMPACT_FROM, RemapChannelDesign
from optnoise.errors import InvalidParameterError
from optnoise.families.geometric import geometric_pmf
from optnoise.mechanism import Mechanism, load_mechanism
from optnoise.neighbourhood import InputPairs
from optnoise.randomness import random_source
from optnoise.sampling.clamp import clamped_form
from optnoise.sampling.clamp_remap import ClampRemap


def plain_chain_lp(n: int, eps: float, cost: str, prior: np.ndarray) -> float:
    """The optimum of the whole channel LP (variables P[q, y], pure eps, neighbours one apart),
    written out densely and solved by HiGHS: independent of the design and of its bound."""
    size = n + 1
    L = loss_rows(cost, n, np.arange(size))
    c = (prior[:, None] * L).ravel()
    E = math.exp(eps)
    rows, cols, vals = [], [], []
    r = 0
    for q in range(n):
        for a, b in ((q, q + 1), (q + 1, q)):
            for y in range(size):   # P[a, y] - E P[b, y] <= 0
                rows += [r, r]
                cols += [a * size + y, b * size + y]
                vals += [1.0, -E]
                r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, size * size))
    A_eq = sp.kron(sp.eye(size), np.ones((1, size))).tocsr()
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(size), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


#: The plain LP's own accuracy (HiGHS at feasibility tolerance 1e-10, absolute): a bound may exceed
#: its float optimum by this much relative without exceeding the true optimum.
PLAIN = 1e-8


def skewed(size: int) -> np.ndarray:
    w = np.exp(-np.arange(size) / (size / 3.0)) + 0.05
    return w / w.sum()


@pytest.mark.parametrize("n, eps, cost, prior", [
    (50, 1.0, "abs-error", "uniform"), (50, 0.3, "abs-error", "skewed"), (50, 0.5, "sq-error", "uniform"),
    (50, 0.7, "er", "skewed"), (50, 2.0, "sq-error", "skewed"), pytest.param(200, 0.2, "abs-error", "uniform", marks=pytest.mark.slow),
])
def test_compact_design_equals_the_plain_lp_within_its_proven_gap(n, eps, cost, prior):
    pi = np.full(n + 1, 1.0 / (n + 1)) if prior == "uniform" else skewed(n + 1)
    sol = solve_geometric_remap(n, eps, cost, pi)
    opt = plain_chain_lp(n, eps, cost, pi)
    assert sol.bound.value <= opt * (1 + PLAIN)       # a lower bound of the true optimum
    assert opt <= sol.cost * (1 + PLAIN)              # the design is a feasible channel at e^eps
    assert sol.gap <= 1e-6
    assert abs(sol.cost - opt) <= 1e-6 * opt


@pytest.mark.parametrize("eps, cost, rough", [(1.0, "abs-error", False), (0.1, "abs-error", False),
                                               (0.5, "sq-error", False), (1.0, "er", False), (0.5, "abs-error", True)])
def test_compact_design_matches_the_dense_chain(eps, cost, rough):
    """``rough``: a Dirichlet(0.3) prior, weights near 0 beside large ones -- the bound's window
    then widens to the candidate's reach (a fixed window's cap would lose 20 %)."""
    n = 1000
    prior = np.random.default_rng(0).dirichlet(np.full(n + 1, 0.3)) if rough else None
    compact, dense = solve_geometric_remap(n, eps, cost, prior), solve_chain(n, eps, cost, prior)
    assert compact.gap <= 1e-6
    np.testing.assert_array_equal(compact.remap, dense.remap)
    assert compact.cost == pytest.approx(dense.cost, rel=1e-9)
    assert compact.bound.value == pytest.approx(dense.bound.value, rel=1e-9)
    if eps == 0.1:
        assert np.any(compact.remap != np.arange(n + 1))   # the ends are merged: a remap that moves outputs


@pytest.mark.parametrize("seed", range(3))
def test_window_values_with_weights_never_above_the_full_chain(seed):
    rng = np.random.default_rng(seed)
    n, eps, window = 80, 0.6, 12
    prior = skewed(n + 1)
    f = loss_rows("abs-error", n, np.array([0]))[0]
    u = rng.uniform(-0.5, 1.5, n + 1) * prior * 2
    u = np.minimum(u, down(prior * f[window + 1]))   # the cap of remap_bound: w_j >= 0 beyond the window
    e_up = exp_up(eps)
    full = chain_values(lambda lo, hi: prior[lo:hi, None] * loss_rows("abs-error", n, np.arange(lo, hi)), u, e_up)
    got = window_values(u, prior, f, e_up, window)
    assert np.all(got <= full + 1e-15)
    np.testing.assert_allclose(window_values(u, prior, f, e_up, n), full, rtol=0, atol=1e-12)


def test_bound_holds_for_any_candidate():
    n, eps = 60, 0.8
    pi = skewed(n + 1)
    opt = plain_chain_lp(n, eps, "abs-error", pi)
    rng = np.random.default_rng(5)
    for _ in range(3):
        bound, _ = remap_bound(rng.uniform(0, 0.05, n + 1), math.exp(-eps), "abs-error", pi, eps)
        assert bound.value <= opt * (1 + PLAIN)


def released_channel(mech: Mechanism) -> IntegerForm:
    """The exact channel of ``R(clip(q + eta, 0, n))`` for the quantized noise: the clamped
    channel's integer columns summed by the remap (independent of the sampler)."""
    r = mech.release
    form = clamped_form(mech.quantize(), r.n)
    W = np.asarray(form.weights, dtype=object)
    out = np.zeros_like(W)
    table = r.table()
    for z in range(r.n + 1):
        out[:, table[z]] += W[:, z]
    return IntegerForm("channel", out, form.denominator)


def small_remap_mechanism(n: int = 30, eps: float = 0.3) -> Mechanism:
    sol = solve_geometric_remap(n, eps)
    return Mechanism(geometric_pmf(sol.alpha), Neighbourhood.sd(1), Target(eps), "test", release=ClampRemap.of(sol.remap))


def test_released_value_is_certified_by_the_noise_certificate():
    mech = small_remap_mechanism()
    assert mech.release.outputs, "the case must move outputs"
    noise = mech.quantize().certificate.epsilon_pure
    released = exact_profile(released_channel(mech), InputPairs.from_distances(Neighbourhood.sd(1), 31))
    assert released.epsilon_pure <= noise <= 0.3
    assert released.epsilon_pure > 0.29      # and not vacuous


def test_sampler_draws_the_released_law():
    """Chi-square of 200,000 seeded draws at an answer near the end (where the remap acts)
    against the exact released row; false-alarm rate 1e-6 per run."""
    mech = small_remap_mechanism()
    form = released_channel(mech)
    q = 1
    p = np.array([float(x) for x in form.weights[q]]) / float(form.denominator)
    draws = mech.sample(200_000, answer=q, source=random_source(11))
    counts = np.bincount(np.asarray(draws), minlength=31)
    assert np.all(counts[p == 0] == 0)
    keep = p * 200_000 >= 5
    expected = p[keep] * 200_000
    stat = float(np.sum((counts[keep] - expected) ** 2 / expected)) + float(counts[~keep & (p > 0)].sum())
    assert stat < chi2.ppf(1 - 1e-6, keep.sum() - 1)


def test_request_above_compact_from_gives_the_compact_file(tmp_path):
    n = COMPACT_FROM + 500
    d = design(Request(space="channel", n=n, target=Target(1.0), neighbourhood=Neighbourhood.sd(1), cost="abs-error"))
    assert isinstance(d.details, RemapChannelDesign)
    assert d.report.optimal and d.report.gap <= 1e-6 and d.report.certificate.exact
    assert d.report.certificate.epsilon_pure <= 1.0
    payload = d.to_json()
    assert payload["structure"]["kind"] == "geometric noise with a remap" and len(json.dumps(payload)) < 20_000
    path = tmp_path / "m.json"
    d.mechanism.save(path, report=d.details.report_json())
    m = load_mechanism(path)
    assert m.release is not None and m.release.n == n and m.n_answers == n + 1
    assert m.quantize().certificate.epsilon_pure == d.report.certificate.epsilon_pure
    x = np.asarray(m.sample(1000, answer=0, source=random_source(3)))
    assert x.min() >= 0 and x.max() <= n
    with pytest.raises(InvalidParameterError):
        m.sample(10, answer=n + 1)


def test_tampered_file_is_refused(tmp_path):
    n = COMPACT_FROM + 1
    d = design(Request(space="channel", n=n, target=Target(1.0), neighbourhood=Neighbourhood.sd(1), cost="abs-error"))
    path = tmp_path / "m.json"
    d.mechanism.save(path)
    data = json.loads(path.read_text())
    data["pmf"][1] += 0.2                      # the centre raised (ratio 3.9 to its neighbours, beyond e^1) ...
    data["pmf"] = [v / 1.2 for v in data["pmf"]]   # ... and every mass rescaled (the tails follow the edges)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParameterError, match="pure eps"):
        load_mechanism(bad).quantize()
    data = json.loads(path.read_text())
    data["left_tail"]["ratio"] = 0.3           # a steeper tail: ratio 1 / 0.3 > e^1
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParameterError):
        load_mechanism(bad).quantize()
    data = json.loads(path.read_text())
    data["release"]["remap"] = {"outputs": [0], "values": [n + 5]}
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParameterError, match="release"):
        load_mechanism(bad)


def test_command_line_at_n_10000_summarises_and_samples(tmp_path):
    """Issue 37's command: the report summarises (no 1e8 entries), the file is small and says what
    it is, and sample --mechanism draws released values of the answer asked."""
    from typer.testing import CliRunner

    from optnoise.cli import app
    runner = CliRunner()
    path = tmp_path / "sd1.json"
    r = runner.invoke(app, ["design", "--form", "channel", "--n", "10000", "--epsilon", "1", "--sd", "1", "--cost",
                            "abs-error", "--output", str(path), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["method"] == "geometric-remap" and report["optimal"] and report["gap"] <= 1e-6
    assert report["certificate"]["exact"] and report["certificate"]["epsilon_pure"] <= 1.0
    assert report["lower_bound"] <= report["expected_cost"] and len(r.output) < 20_000
    data = json.loads(path.read_text())
    assert data["kind"] == "integer" and data["release"]["clamp"] == [0, 10000] and path.stat().st_size < 20_000
    draws = tmp_path / "d.npy"
    s = runner.invoke(app, ["sample", "--mechanism", str(path), "--count", "5000", "--answer", "10000",
                            "--output", str(draws), "--json"])
    assert s.exit_code == 0, s.output
    x = np.load(draws)
    assert x.min() >= 9950 and x.max() == 10000   # clamped at the top: 10000 has mass 1 / (1 + alpha)
    bad = runner.invoke(app, ["sample", "--mechanism", str(path), "--count", "5", "--answer", "10001"])
    assert bad.exit_code == 2 and "--answer" in bad.output
