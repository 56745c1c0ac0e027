"""Per-record pure channels as block randomized response (design/record_blocks.py,
design/record_bound.py, design/block_design.py, sampling/block_map.py;
docs/proofs/record-blocks.md)."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.stats import chi2

from optnoise.analysis.profile import privacy_profile
from optnoise.design import Request, design
from optnoise.design.bounds import GAP_TOLERANCE, complete_values, exp_up
from optnoise.design.record import solve_record
from optnoise.design.record_blocks import IntervalLoss, solve_record_blocks
from optnoise.design.record_bound import column_values, columns_bound
from optnoise.errors import InvalidParameterError
from optnoise.mechanism import Mechanism, load_mechanism
from optnoise.neighbourhood import InputPairs
from optnoise.pmf import Channel
from optnoise.sampling.block_map import BlockMap
from optnoise.target import Target


def plain_record_lp(c: np.ndarray, epsilon: float) -> float:
    """The per-record pure LP written plainly: one variable per entry, ``P[a, y] <= e^eps P[b, y]``
    for every ordered pair and output (no reduction)."""
    size = c.shape[0]
    e = math.exp(epsilon)
    rows, cols, vals = [], [], []
    r = 0
    for y in range(size):
        for a in range(size):
            for b in range(size):
                if a != b:
                    rows += [r, r]
                    cols += [a * size + y, b * size + y]
                    vals += [1.0, -e]
                    r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, size * size))
    a_eq = sp.kron(sp.eye(size), np.ones((1, size))).tocsr()
    res = linprog(c.ravel(), A_ub=a_ub, b_ub=np.zeros(r), A_eq=a_eq, b_eq=np.ones(size), bounds=(0, 1),
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def cost_matrix(n: int, power: int, prior: np.ndarray) -> np.ndarray:
    q = np.arange(n + 1)
    return prior[:, None] * np.abs(q[:, None] - q[None, :]).astype(float) ** power


@pytest.mark.parametrize("cost,power", [("abs-error", 1), ("sq-error", 2)])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("skewed", [False, True])
def test_block_design_is_the_dense_lp_optimum(cost, power, epsilon, skewed):
    n = 12
    prior = np.random.default_rng(3).random(n + 1) if skewed else np.ones(n + 1)
    prior = prior / prior.sum()
    got = solve_record_blocks(cost, prior, epsilon)
    c = cost_matrix(n, power, prior)
    lp = solve_record(c, epsilon)
    assert got.cost == pytest.approx(lp.cost, rel=1e-9)
    assert got.bound.value <= lp.cost * (1 + 1e-12) and got.gap <= GAP_TOLERANCE
    if epsilon == 1.0:   # an independent plain LP (no reduction) on a smaller domain
        m = 7
        pm = prior[: m + 1] / prior[: m + 1].sum()
        small = solve_record_blocks(cost, pm, epsilon)
        plain = plain_record_lp(cost_matrix(m, power, pm), epsilon)
        assert small.cost == pytest.approx(plain, rel=1e-7)
        assert small.bound.value <= plain * (1 + 1e-9)


def test_block_design_at_n_400_against_column_generation():
    n = 400
    prior = np.full(n + 1, 1.0 / (n + 1))
    got = solve_record_blocks("abs-error", prior, 2.0)
    lp = solve_record(cost_matrix(n, 1, prior), 2.0)
    assert got.cost == pytest.approx(lp.cost, rel=2 * GAP_TOLERANCE)
    assert got.gap <= GAP_TOLERANCE and got.bound.value <= lp.cost * (1 + 1e-12)


def test_interval_sums_against_the_matrix():
    rng = np.random.default_rng(5)
    prior = rng.random(31)
    for power, name in ((1, "abs-error"), (2, "sq-error")):
        loss = IntervalLoss.of(name, prior)
        c = cost_matrix(30, power, prior)
        for a, b in ((0, 30), (3, 9), (17, 17), (0, 0), (29, 30)):
            assert np.allclose(loss.sums(a, b), c[a:b + 1].sum(axis=0), rtol=1e-12, atol=1e-12)
        assert np.array_equal(loss.columns(np.array([0, 7, 30])), c[:, [0, 7, 30]])
    with pytest.raises(InvalidParameterError):
        IntervalLoss.of("er", prior)


def test_column_values_are_below_the_exact_box_minimum():
    rng = np.random.default_rng(11)
    n = 9
    prior = rng.random(n + 1)
    prior /= prior.sum()
    loss = IntervalLoss.of("sq-error", prior)
    e_up = exp_up(1.3)
    for _ in range(5):
        u = rng.normal(scale=5.0, size=n + 1)
        got = column_values(loss.columns, n + 1, u, e_up)
        slow = complete_values(loss.columns(np.arange(n + 1)), u, e_up)   # every operation rounded down
        E = Fraction(e_up)
        for y in range(n + 1):
            exact = sum(min(a, E * a) for a in (Fraction(float(prior[q])) * (q - y) ** 2 - Fraction(float(u[q]))
                                                for q in range(n + 1)))
            assert Fraction(float(got[y])) <= exact
            assert abs(float(exact) - got[y]) <= 1e-12 * (1 + abs(float(exact)))
            assert abs(got[y] - slow[y]) <= 1e-12 * (1 + abs(slow[y]))


def test_columns_bound_repairs_a_bad_candidate():
    n = 20
    prior = np.full(n + 1, 1.0 / (n + 1))
    loss = IntervalLoss.of("abs-error", prior)
    lp = solve_record(cost_matrix(n, 1, prior), 1.0)
    bound, values = columns_bound(loss.columns, n + 1, np.full(n + 1, 50.0), 1.0)   # far too high
    assert np.any(values < 0) and bound.repaired > 0 and bound.value <= lp.cost


def small_design(n=150, epsilon=1.0, cost="abs-error"):
    return design(Request(space="channel", n=n, target=Target(epsilon), unit="record", cost=cost))


def expanded(mech: Mechanism) -> list[list[Fraction]]:
    """The whole quantized channel on the answers, as exact fractions."""
    q = mech.quantize()
    W = np.asarray(q.channel.exact, dtype=object)
    b = mech.blocks
    rows = b.rows_of(np.arange(b.answers))
    out = [[Fraction(0)] * b.answers for _ in range(b.answers)]
    for a in range(b.answers):
        for i, v in enumerate(b.values):
            out[a][v] = Fraction(W[rows[a], i])
    return out


def test_block_mechanism_certificate_is_the_whole_channels():
    d = small_design(n=120, epsilon=1.0)
    mech = d.mechanism
    assert d.report.method == "block-randomized-response" and d.report.optimal
    cert = mech.quantize().certificate
    whole = privacy_profile(Channel(expanded(mech)), InputPairs.complete(121, directed=True), exact=True)
    assert cert.epsilon_pure == whole.epsilon_pure and cert.delta_dp == 0 and cert.epsilon_pure <= 1.0


def test_the_certificate_refuses_a_perturbed_core():
    mech = small_design(n=120, epsilon=1.0).mechanism
    core = np.array(mech.pmf.matrix)
    core[0, 0] *= 1 + 1e-6          # one ratio just above e^eps
    bad = Mechanism(Channel(core, normalize=True), mech.neighbourhood, Target(1.0), "perturbed", blocks=mech.blocks)
    with pytest.raises(InvalidParameterError, match="pure eps"):
        bad.quantize()
    assert bad.certify().epsilon_pure > 1.0


def test_block_map_is_validated():
    with pytest.raises(InvalidParameterError):
        BlockMap((0, 5, 5, 9), (1, 2, 3))           # an empty interval
    with pytest.raises(InvalidParameterError):
        BlockMap((0, 5, 9), (1, 1))                 # a value twice
    with pytest.raises(InvalidParameterError):
        BlockMap((0, 5, 9), (1, 9))                 # a value outside 0..8
    core = Channel([[0.7, 0.3], [0.3, 0.7]])
    with pytest.raises(InvalidParameterError):
        Mechanism(core, InputPairs.complete(2, directed=True), None, "x", blocks=BlockMap((0, 3, 6, 9), (1, 2)))
    m = Mechanism(core, InputPairs.complete(2, directed=True), None, "x", blocks=BlockMap((0, 4, 9), (1, 7)))
    assert m.n_answers == 9
    assert list(m.blocks.rows_of(np.array([0, 3, 4, 8]))) == [0, 0, 1, 1]
    with pytest.raises(InvalidParameterError):
        m.answers([9])


def test_file_round_trip(tmp_path):
    d = small_design(n=150, epsilon=2.0, cost="sq-error")
    path = tmp_path / "blocks.json"
    d.mechanism.save(path, report=d.to_json())
    text = path.read_text()
    assert len(text) < 20_000                       # k^2 + 2k + 1 numbers, not 151^2
    data = json.loads(text)
    assert data["structure"]["kind"] == "block randomized response" and "blocks" in data
    back = load_mechanism(path)
    assert back.blocks.starts == d.mechanism.blocks.starts and back.blocks.values == d.mechanism.blocks.values
    assert np.array_equal(back.pmf.matrix, d.mechanism.pmf.matrix) and back.target == d.mechanism.target
    assert back.quantize().certificate.epsilon_pure == d.mechanism.quantize().certificate.epsilon_pure
    with pytest.warns(Warning):
        one = back.sample(50, seed=4, answer=100)
    with pytest.warns(Warning):
        two = d.mechanism.sample(50, seed=4, answer=100)
    assert np.array_equal(one, two) and set(one.tolist()) <= set(back.blocks.values)


def test_sampler_law_chi_square_with_power():
    """Chi-square goodness of fit at false-alarm rate 1e-6 (fixed seed); the power check: the
    same draws against a law with 1 % moved between two outputs must be rejected."""
    d = small_design(n=200, epsilon=3.0)
    mech = d.mechanism
    q = mech.quantize()
    W = np.asarray(q.weights, dtype=float)
    answer = 137
    row = int(mech.blocks.rows_of(np.array([answer]))[0])
    p = W[row] / W[row].sum()
    count = 200_000
    with pytest.warns(Warning):
        draws = mech.sample(count, seed=20261128, answer=answer)
    index = {v: i for i, v in enumerate(mech.blocks.values)}
    seen = np.bincount([index[v] for v in draws.tolist()], minlength=p.size)
    critical = chi2.ppf(1 - 1e-6, p.size - 1)
    stat = float(((seen - count * p) ** 2 / (count * p)).sum())
    assert stat < critical
    wrong = p.copy()
    wrong[row] -= 0.01
    wrong[(row + 1) % p.size] += 0.01
    assert float(((seen - count * wrong) ** 2 / (count * wrong)).sum()) > critical


def test_apply_maps_answers_through_the_blocks():
    mech = small_design(n=150).mechanism
    values = np.array([0, 10, 75, 76, 150] * 40)
    with pytest.warns(Warning):
        out = mech.apply(values, seed=1)
    assert out.shape == values.shape and set(out.tolist()) <= set(mech.blocks.values)


# ----------------------------------------------------------------------- compare: the exponential mechanism
def test_exponential_closed_form_epsilon_equals_the_float_analysis():
    from optnoise.design.exponential import exponential_epsilon
    from optnoise.families import calibration_of
    from optnoise.neighbourhood import Neighbourhood
    cal = calibration_of("exponential")
    for n, beta, ds in ((30, 0.7, [1]), (30, 0.2, [1, 2, 5]), (200, 0.05, [3]), (12, 2.0, [1, 12])):
        rep = cal.build(beta, n, "modulo")
        pairs = InputPairs.from_distances(Neighbourhood(tuple(ds)), n + 1)
        want = privacy_profile(rep, pairs).epsilon_pure
        assert exponential_epsilon(n, beta, ds) == pytest.approx(want, rel=1e-12)
    assert exponential_epsilon(3000, 0.5, [1]) == math.inf   # entries underflow: the float channel's ratio is infinite


def test_compare_calibrates_the_exponential_mechanism_as_before():
    from optnoise.compare import compare
    from optnoise.design.calibrate import calibrate
    from optnoise.neighbourhood import Neighbourhood
    rows = compare(400, [0.5, 2.0], cost="abs-error", mechanisms=("exponential",))
    for row, eps in zip(rows, (0.5, 2.0)):
        general = calibrate("exponential", Request(space="channel", n=400, target=Target(eps),
                                                   neighbourhood=Neighbourhood.sd(1), family="exponential"))
        assert row.parameter == pytest.approx(general.parameter, rel=1e-9)
        assert general.mechanism.meets(Target(eps))
