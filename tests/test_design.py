"""Finite-domain design (Kadam et al. 2024): solver vs paper tables and closed forms."""

import json
import math

import numpy as np
import pytest
from conftest import KADAM_TABLE1
from typer.testing import CliRunner

from optnoise import CyclicPMF, DesignError, InvalidParameterError, Neighbourhood, privacy_profile
from optnoise.cli import app
from optnoise.costs import cost_vector, wrapped_squared_error
from optnoise.design import design_finite
from optnoise.design.closed_forms import (
    lemma3_sd,
    lemma4_bd,
    limit_error_rate_bd,
    limit_error_rate_bd_uncapped,
    limit_error_rate_sd,
    theorem2_sd,
    theorem3_bd,
)

BD3 = Neighbourhood.bd(3, directed=True)


@pytest.mark.parametrize("delta", sorted(KADAM_TABLE1))
def test_table1_with_the_papers_milp(delta):
    r = design_finite(8, epsilon=1.5, delta=delta, neighbourhood=BD3, notion="pdp",
                      formulation="paper", use_closed_form=False)
    # f*(6..8) are not unique at delta = 0.1238 (any split with the same sum is optimal): compare the
    # objective and the certified masses that are unique
    np.testing.assert_allclose(r.pmf.probs[:6], KADAM_TABLE1[delta][:6], atol=1e-4)
    assert r.pmf.probs[6:].sum() == pytest.approx(sum(KADAM_TABLE1[delta][6:]), abs=2e-4)
    assert r.optimal and r.method in ("lp", "milp")
    assert r.analysis.delta_pdp <= delta + 1e-12


def test_table1_under_correct_pdp_and_dp_is_better():
    f0 = {}
    for notion, form in (("pdp", "paper"), ("pdp", "standard"), ("dp", "standard")):
        r = design_finite(8, epsilon=1.5, delta=0.1212, neighbourhood=BD3, notion=notion, formulation=form)
        f0[(notion, form)] = r.pmf.probs[0]
    # the shared indicator of (13) is a restriction: per-distance PDP does better, standard DP better still
    assert f0[("pdp", "paper")] == pytest.approx(0.5432, abs=1e-4)
    assert f0[("pdp", "standard")] > f0[("pdp", "paper")] + 1e-3
    assert f0[("dp", "standard")] > f0[("pdp", "standard")] + 1e-2


def test_symmetric_bd_differs_from_directed():
    d = design_finite(8, epsilon=1.5, neighbourhood=BD3)
    s = design_finite(8, epsilon=1.5, neighbourhood=Neighbourhood.bd(3))
    assert d.error_rate == pytest.approx(1 - 0.5432, abs=1e-4)
    assert s.error_rate > d.error_rate + 0.1
    # the symmetric optimum is symmetric around 0 on the cycle
    np.testing.assert_allclose(s.pmf.probs[1:], s.pmf.probs[1:][::-1], atol=1e-8)
    assert privacy_profile(s.pmf, Neighbourhood.bd(3)).epsilon_pure <= 1.5 + 1e-9


@pytest.mark.parametrize("n", [5, 7, 8, 11])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_lemma3_both_cases_equal_the_lp(n, eps):
    for mu in range(1, n + 1):
        lp = design_finite(n, epsilon=eps, neighbourhood=Neighbourhood.sd(mu, directed=True), use_closed_form=False)
        assert lp.error_rate == pytest.approx(1 - lemma3_sd(n, mu, eps)[0], abs=1e-9), (mu, math.gcd(n + 1, mu))


@pytest.mark.parametrize("n", [5, 8, 11])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_lemma4_equals_the_lp(n, eps):
    for mb in range(2, n + 1):
        lp = design_finite(n, epsilon=eps, neighbourhood=Neighbourhood.bd(mb, directed=True), use_closed_form=False)
        cf = lemma4_bd(n, mb, eps)
        assert lp.error_rate == pytest.approx(1 - cf[0], abs=1e-9)
        assert cf.sum() == pytest.approx(1.0, abs=1e-12)
        assert privacy_profile(CyclicPMF(cf), Neighbourhood.bd(mb, directed=True)).epsilon_pure \
            <= eps + 1e-12


@pytest.mark.parametrize("n", [5, 7, 8])
@pytest.mark.parametrize("eps", [0.4, 1.0])
def test_theorem2_with_corrected_remark3_equals_the_milp(n, eps):
    for mu in range(1, n + 1):
        for delta in (0.01, 0.1, 0.2, 0.35, 0.6, 0.9):
            milp = design_finite(n, epsilon=eps, delta=delta, neighbourhood=Neighbourhood.sd(mu, directed=True),
                                 notion="pdp", use_closed_form=False)
            assert milp.pmf.probs[0] == pytest.approx(theorem2_sd(n, mu, eps, delta)[0], abs=1e-7)


def test_remark3_as_printed_is_off_by_one():
    # n = 7, mu = 2: orbit {0,2,4,6} of N = 4 values; "replace n by N" gives a chain of 5 values
    truth = design_finite(7, epsilon=1.0, neighbourhood=Neighbourhood.sd(2, directed=True), use_closed_form=False)
    printed = theorem2_sd(7, 2, 1.0, 0.0, remark3="printed")[0]
    assert truth.pmf.probs[0] == pytest.approx(theorem2_sd(7, 2, 1.0, 0.0)[0], abs=1e-9)
    assert abs(truth.pmf.probs[0] - printed) > 5e-3


@pytest.mark.parametrize("eps", [0.3, 0.5])
def test_limit_44_cap_at_one_half_is_wrong(eps):
    r = design_finite(2000, epsilon=eps, neighbourhood=Neighbourhood.sd(1, directed=True))
    assert r.error_rate == pytest.approx(math.exp(-eps), abs=1e-6)
    # (44) as printed caps the error rate at 1/2; the optimum is e^-eps > 1/2 for eps < ln 2
    assert limit_error_rate_sd(eps) == 0.5
    assert r.error_rate > 0.55


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_limit_47_uncapped_is_right(eps):
    r = design_finite(3000, epsilon=eps, neighbourhood=Neighbourhood.bd(3, directed=True), use_closed_form=False)
    assert r.error_rate == pytest.approx(limit_error_rate_bd_uncapped(eps, 3), abs=1e-6)
    if eps < math.log(4):
        assert limit_error_rate_bd(eps, 3) == 0.5 != pytest.approx(r.error_rate, abs=1e-2)


def test_min_delta_variant():
    r = design_finite(8, epsilon=1.5, neighbourhood=BD3, notion="pdp", minimize="delta", max_cost=0.445167)
    assert r.delta_min == pytest.approx(0.1238, abs=2e-4)
    assert r.expected_cost <= 0.445167 + 1e-9
    dp = design_finite(8, epsilon=1.5, neighbourhood=BD3, notion="dp", minimize="delta", max_cost=0.4)
    assert dp.analysis.delta_dp <= dp.delta_min + 1e-9 and dp.expected_cost <= 0.4 + 1e-9


def test_dp_design_certificate_meets_target():
    r = design_finite(30, epsilon=0.7, delta=0.05, neighbourhood=Neighbourhood.bd(2), cost="mse")
    assert r.analysis.delta_dp <= 0.05 + 1e-15
    lp_cost = r.expected_cost
    # the optimum must beat the best delta = 0 design
    assert lp_cost < design_finite(30, epsilon=0.7, neighbourhood=Neighbourhood.bd(2), cost="mse").expected_cost


def test_costs_and_reports():
    r = design_finite(6, epsilon=1.0, neighbourhood=Neighbourhood.sd(1), cost="circular-mse")
    f = r.pmf.probs
    eta = np.arange(7)
    assert r.noise_second_moment == pytest.approx(float(np.dot(f, eta ** 2)))
    assert r.expected_cost == pytest.approx(float(np.dot(f, np.minimum(eta, 7 - eta) ** 2)))
    assert r.error_rate == pytest.approx(1 - f[0])


def test_wrapped_squared_error_by_brute_force(rng):
    f = rng.dirichlet(np.ones(9))
    errs = []
    for q in range(9):
        e = 0.0
        for eta in range(9):
            released = (q + eta) % 9
            e += f[eta] * (released - q) ** 2
        errs.append(e)
    worst, avg = wrapped_squared_error(f)
    assert worst == pytest.approx(max(errs)) and avg == pytest.approx(np.mean(errs))


def test_vector_query_design_bd_staircase():
    nb = Neighbourhood(((1, 0), (0, 1), (1, 1)), directed=True)
    r = design_finite([3, 3], epsilon=1.0, neighbourhood=nb)
    assert r.pmf.shape == (4, 4)
    assert privacy_profile(r.pmf, nb).epsilon_pure <= 1.0 + 1e-9
    assert r.pmf.probs[0, 0] == r.pmf.probs.max()


def test_time_limit_is_an_error_with_bound_and_incumbent():
    with pytest.raises(DesignError, match="time limit"):
        design_finite(256, epsilon=0.2, delta=0.1, neighbourhood=Neighbourhood.bd(3), notion="pdp",
                      cost="mse", time_limit=0.05)


def test_infeasible_min_delta_is_an_error():
    with pytest.raises(DesignError, match="infeasible"):
        design_finite(4, epsilon=1.0, cost=np.ones(5), minimize="delta", max_cost=0.5)


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, neighbourhood=Neighbourhood.sd(9)), "distances"),
    (dict(epsilon=1.0, cost="huber"), "cost"),
    (dict(epsilon=1.0, minimize="delta"), "max_cost"),
    (dict(epsilon=1.0, formulation="paper"), "formulation"),
    (dict(epsilon=1.0, notion="rdp"), "notion"),
    (dict(epsilon=1.0, time_limit=0), "time_limit"),
])
def test_design_bad_input(kwargs, parameter):
    with pytest.raises(InvalidParameterError) as info:
        design_finite(8, **kwargs)
    assert info.value.parameter == parameter


# --------------------------------------------------------------------- CLI
runner = CliRunner()


def test_cli_design_json_keys(tmp_path):
    out = tmp_path / "design.json"
    r = runner.invoke(app, ["design", "--n", "8", "--epsilon", "1.5", "--delta", "0.1238", "--bd", "3", "--directed",
                            "--guarantee", "pdp", "--formulation", "paper", "--json", "--output", str(out),
                            "--plot", str(tmp_path / "pmf.png")])
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    for key in ("pmf", "expected_cost", "error_rate", "noise_second_moment", "guarantee", "certificate", "method",
                "optimal", "solve_seconds"):
        assert key in d
    assert d["guarantee"]["notion"] == "pdp" and d["method"] == "milp" and d["optimal"] is True
    assert d["pmf"][0] == pytest.approx(0.5548, abs=1e-4)
    assert json.loads(out.read_text())["pmf"] == d["pmf"]
    assert (tmp_path / "pmf.png").read_bytes()[:4] == b"\x89PNG"
    # a design file is a PMF file for verify
    v = runner.invoke(app, ["verify", "--pmf-file", str(out), "--bd", "3", "--directed", "--epsilon", "1.5", "--json"])
    assert json.loads(v.stdout)["delta_pdp"] <= 0.1238 + 1e-12


def test_cli_min_delta_reports_delta():
    r = runner.invoke(app, ["design", "--n", "8", "--epsilon", "1.5", "--bd", "3", "--directed", "--guarantee", "pdp",
                            "--minimize", "delta", "--max-cost", "0.445167", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["delta"] == pytest.approx(0.1238, abs=2e-4)


@pytest.mark.parametrize("args, parameter", [
    (["--n", "8", "--epsilon", "0"], "epsilon"),
    (["--n", "8", "--epsilon", "1", "--delta", "1"], "delta"),
    (["--n", "0", "--epsilon", "1"], "--n"),
    (["--n", "8", "--epsilon", "1", "--sd", "9"], "--sd"),  # the flag the user typed
    (["--n", "8", "--epsilon", "1", "--cost", "huber"], "cost"),
    (["--n", "8", "--epsilon", "1", "--minimize", "delta"], "--max-cost"),
    (["--n", "8", "--epsilon", "1", "--formulation", "paper"], "formulation"),
    (["--n", "8", "--epsilon", "1", "--max-cost", "1"], "--max-cost"),
    (["--n", "3,3", "--epsilon", "1"], "--distances"),
])
def test_cli_design_bad_input_exits_2(args, parameter):
    r = runner.invoke(app, ["design", *args])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert parameter in r.stderr and r.stdout == ""


def test_cli_design_time_limit_exits_1():
    r = runner.invoke(app, ["design", "--n", "256", "--epsilon", "0.2", "--delta", "0.1", "--bd", "3",
                            "--guarantee", "pdp", "--cost", "mse", "--time-limit", "0.05", "--json"])
    assert r.exit_code == 1 and "time limit" in r.stderr and r.stdout == ""


def test_cli_infeasible_exits_1(tmp_path):
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps([1, 1, 1, 1, 1]))
    r = runner.invoke(app, ["design", "--n", "4", "--epsilon", "1", "--cost-file", str(cost), "--minimize", "delta",
                            "--max-cost", "0.5"])
    assert r.exit_code == 1 and "infeasible" in r.stderr


def test_kadam_vector_example_marginals():
    """Kadam et al. (57): n = 4, eps = 3, mu in {0,1,2} per coordinate, delta = 0.

    Reproduced by the *directed* set {0,1,2}^2 minus (0,0); the symmetric set gives
    other marginals (0.6602, 0.085 x 4).
    """
    ds = tuple((a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0))
    r = design_finite([4, 4], epsilon=3.0, neighbourhood=Neighbourhood(ds, directed=True))
    for axis in (0, 1):
        np.testing.assert_allclose(r.pmf.probs.sum(axis=axis), [0.7681, 0.1073, 0.1073, 0.0086, 0.0086], atol=1e-4)
    # not a product of the scalar optima (Remark 4); the scalar optimum has five masses, not the four printed
    f1 = design_finite(4, epsilon=1.5, neighbourhood=Neighbourhood.bd(2, directed=True)).pmf.probs
    np.testing.assert_allclose(f1, [0.6469, 0.1443, 0.1443, 0.0322, 0.0322], atol=1e-4)
    assert not np.allclose(r.pmf.probs, np.outer(f1, f1), atol=1e-3)
    sym = design_finite([4, 4], epsilon=3.0, neighbourhood=Neighbourhood(ds))
    assert abs(sym.pmf.probs.sum(axis=1)[0] - 0.7681) > 0.05


def test_solver_output_on_fd1_is_silenced(capfd):
    import os

    from optnoise.design.solver import solver_silenced
    with solver_silenced():
        os.write(1, b"HighsMipSolverData::noise\n")
    print("after")
    assert capfd.readouterr().out == "after\n"


def test_cli_design_json_stdout_is_one_object_in_a_real_process():
    import subprocess
    import sys
    from pathlib import Path
    exe = Path(sys.executable).parent / "optnoise"
    proc = subprocess.run([str(exe), "design", "--n", "96", "--epsilon", "1", "--delta", "0.05", "--bd", "3",
                           "--directed", "--guarantee", "pdp", "--cost", "mse", "--json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["optimal"] is True


def test_large_pure_dp_design_is_feasible_and_converged():
    """n = 4096: the optimum needs masses below the double floor; the lift keeps it exact.

    The circular-MSE optimum decays geometrically, so beyond a few hundred values the
    domain size no longer matters: n = 4096 must cost what n = 512 costs.
    """
    nb = Neighbourhood.bd(3)
    big = design_finite(4096, epsilon=1.0, neighbourhood=nb, cost="circular-mse")
    small = design_finite(512, epsilon=1.0, neighbourhood=nb, cost="circular-mse")
    assert big.analysis.epsilon_pure <= 1.0 + 1e-12
    assert big.pmf.probs.min() > 0
    assert big.expected_cost == pytest.approx(small.expected_cost, rel=1e-9)


def test_ratio_lift_is_the_smallest_feasible_pmf_above():
    from optnoise.design.finite import ratio_lift
    from optnoise.design.model import cyclic_shift_table
    nb = Neighbourhood.sd(1)
    sh = cyclic_shift_table((6,), nb)
    f = np.array([0.7, 0.3, 0.0, 0.0, 0.0, 0.0])
    g = ratio_lift(f, sh, math.e)
    prof = privacy_profile(CyclicPMF(g), nb)
    assert prof.epsilon_pure <= 1.0 + 1e-12
    # before renormalising, the lift is f where feasible and f(neighbour)/e elsewhere
    raw = g * (0.7 / g[0])
    np.testing.assert_allclose(raw[:3], [0.7, 0.3, 0.3 / math.e], rtol=1e-12)


# ---------------------------------------------------------------- Theorem 3 (BD, delta > 0)
def _shared_violation(f: np.ndarray, mu_bar: int, eps: float) -> float:
    """Kadam (13c) as printed: mass of values violating f(h) <= e^eps f(h + mu) for *some* mu."""
    shifted = np.stack([np.roll(f, -m) for m in range(1, mu_bar + 1)])
    return float(f[(f > math.exp(eps) * shifted * (1 + 1e-9)).any(axis=0)].sum())


@pytest.mark.parametrize("n, mu_bar", [(6, 3), (9, 4), (11, 5), (15, 5), (16, 5), (23, 7), (30, 9)])
def test_theorem3_error_rate_equals_the_paper_milp_for_b_up_to_3(n, mu_bar):
    for eps in (0.2, 0.5, 1.0, 2.0):
        for delta in np.linspace(0.005, 0.9, 9):
            closed = theorem3_bd(n, mu_bar, eps, delta)
            assert closed.sum() == pytest.approx(1.0, abs=1e-12) and closed.min() >= 0
            milp = design_finite(n, epsilon=eps, delta=delta, neighbourhood=Neighbourhood.bd(mu_bar, directed=True),
                                 notion="pdp", formulation="paper", use_closed_form=False)
            assert milp.pmf.probs[0] == pytest.approx(closed[0], abs=1e-7), (eps, delta)


def test_theorem3_normaliser_as_printed_is_wrong_when_j_equals_h():
    # (34) is 1 / sum_i l_i e^{-i eps}; (35)-(36) as printed drop (mu_bar - 1) e^{-(b+1) eps} when j = h
    n, mu_bar, eps = 6, 3, 0.3
    b, r = divmod(n, mu_bar)
    e = math.exp(-eps)
    h = j = 1
    xi = lambda a: sum(e ** i for i in range(a))  # noqa: E731
    lengths = [1] + [mu_bar] * (b - h) + [mu_bar - 1] * h + [r + h]
    direct = sum(length * e ** i for i, length in enumerate(lengths))
    alpha = e * xi(b) - math.exp(-(b - h + j + 1) * eps)
    beta = 1 + math.exp(-(b - h + 1) * eps) * (math.exp(-j * eps) - xi(h)) + (r + h) * math.exp(-(b + 1) * eps)
    assert mu_bar * alpha + beta == pytest.approx(direct - (mu_bar - 1) * e ** (b + 1), rel=1e-12)
    assert abs(mu_bar * alpha + beta - direct) > 0.1
    assert theorem3_bd(n, mu_bar, 1.0, 0.0)[0] == pytest.approx(lemma4_bd(n, mu_bar, 1.0)[0])


def test_theorem3_linear_region_pmf_can_violate_but_its_f0_is_right():
    n, mu_bar, eps, delta = 21, 7, 1.0, 0.0762
    closed = theorem3_bd(n, mu_bar, eps, delta)
    assert _shared_violation(closed, mu_bar, eps) > delta + 0.02
    milp = design_finite(n, epsilon=eps, delta=delta, neighbourhood=Neighbourhood.bd(mu_bar, directed=True),
                         notion="pdp", formulation="paper", use_closed_form=False)
    assert _shared_violation(milp.pmf.probs, mu_bar, eps) <= delta * (1 + 1e-6)
    assert milp.pmf.probs[0] == pytest.approx(closed[0], abs=1e-7)


def test_theorem3_fails_for_b_at_least_4():
    n, mu_bar, eps, delta = 35, 7, 0.5, 0.0829  # b = 5, r = 0: flat region (h, j) = (4, 1)
    with pytest.raises(InvalidParameterError, match="n // mu_bar <= 3"):
        theorem3_bd(n, mu_bar, eps, delta)
    printed = theorem3_bd(n, mu_bar, eps, delta, unverified=True)
    assert _shared_violation(printed, mu_bar, eps) > delta * 1.1
    milp = design_finite(n, epsilon=eps, delta=delta, neighbourhood=Neighbourhood.bd(mu_bar, directed=True),
                         notion="pdp", formulation="paper", use_closed_form=False)
    assert milp.pmf.probs[0] < printed[0] - 1e-4


# ------------------------------------------------- the DP LP at scale (issue 14)
def _oracle_dp_lp(n, eps, delta, distances, rho, max_cost=None):
    """The standard-DP LP written out densely from its definition (no optnoise model code);
    ``n`` an int (``distances`` ints) or a tuple (``distances`` tuples) for a product of cycles."""
    from scipy.optimize import linprog
    dims = (n + 1,) if isinstance(n, int) else tuple(v + 1 for v in n)
    size = int(np.prod(dims))
    grid = np.arange(size).reshape(dims)
    e = math.exp(eps)
    vecs = sorted({tuple(x % s for x, s in zip((d,) if isinstance(d, int) else d, dims)) for d in distances})
    partner = [np.roll(grid, tuple(-x for x in v), axis=tuple(range(len(dims)))).ravel() for v in vecs]
    k = len(vecs)
    n_t = k * size if (delta > 0 or max_cost is not None) else 0
    n_cols = size + n_t + (1 if max_cost is not None else 0)
    a, b = [], []
    for j in range(k):
        for eta in range(size):
            row = np.zeros(n_cols)
            row[eta] += 1.0
            row[partner[j][eta]] -= e
            if n_t:
                row[size + j * size + eta] = -1.0
            a.append(row)
            b.append(0.0)
        if n_t:
            row = np.zeros(n_cols)
            row[size + j * size:size + (j + 1) * size] = 1.0
            if max_cost is not None:
                row[-1] = -1.0
            a.append(row)
            b.append(0.0 if max_cost is not None else delta)
    c = np.zeros(n_cols)
    if max_cost is not None:
        row = np.zeros(n_cols)
        row[:size] = rho
        a.append(row)
        b.append(max_cost)
        c[-1] = 1.0
    else:
        c[:size] = rho
    eq = np.zeros((1, n_cols))
    eq[0, :size] = 1.0
    res = linprog(c, A_ub=np.array(a), b_ub=b, A_eq=eq, b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


MIRROR = "mirror-symmetric problem"


@pytest.mark.parametrize("n, eps, delta, nb_args, cost, mirrored", [
    (7, 1.0, 0.0, (3, False), "circular-mse", True),
    (8, 0.5, 0.05, (3, False), "circular-abs", True),
    (9, 1.5, 0.2, (2, False), "er", True),
    (10, 0.7, 0.0, (4, False), "user-symmetric", True),
    (8, 1.0, 0.05, (3, False), "mse", False),           # eta^2 on 0..n is not mirror-symmetric
    (8, 1.0, 0.05, (3, True), "circular-mse", False),   # directed BD: shifts not closed under negation
    (9, 1.0, 0.0, (2, True), "er", False),
])
def test_mirror_reduction_is_lossless_and_only_where_valid(n, eps, delta, nb_args, cost, mirrored):
    eta = np.arange(n + 1)
    cost_value = np.minimum(eta, n + 1 - eta) ** 1.5 + 3.0 * (eta != 0) if cost == "user-symmetric" else cost
    rho = cost_vector(cost_value, (n + 1,))
    nb = Neighbourhood.bd(*nb_args[:1], directed=nb_args[1])
    distances = list(range(1, nb_args[0] + 1)) + ([] if nb_args[1] else [-d for d in range(1, nb_args[0] + 1)])
    oracle = _oracle_dp_lp(n, eps, delta, distances, rho)
    for rg in (False, True):
        r = design_finite(n, epsilon=eps, delta=delta, neighbourhood=nb, cost=cost_value, notion="dp",
                          use_closed_form=False, row_generation=rg)
        assert r.expected_cost == pytest.approx(oracle, rel=1e-7, abs=1e-10), rg
        assert any(MIRROR in note for note in r.notes) is mirrored
        assert r.analysis.epsilon_pure <= eps + 1e-12 if delta == 0 else r.analysis.delta_dp <= delta + 1e-15
        if mirrored:
            np.testing.assert_array_equal(r.pmf.probs[1:], r.pmf.probs[1:][::-1])


@pytest.mark.parametrize("cost, delta", [("circular-mse", 0.0), ("circular-abs", 0.1)])
def test_mirror_reduction_on_a_product_of_cycles(cost, delta):
    ds = ((1, 0), (0, 1), (1, 1))
    distances = list(ds) + [(-a, -b) for a, b in ds]
    oracle = _oracle_dp_lp((4, 5), 1.0, delta, distances, cost_vector(cost, (5, 6)))
    r = design_finite([4, 5], epsilon=1.0, delta=delta, neighbourhood=Neighbourhood(ds), cost=cost)
    assert any(MIRROR in note for note in r.notes)
    assert r.expected_cost == pytest.approx(oracle, rel=1e-7)
    f = r.pmf.probs
    np.testing.assert_array_equal(f, f[(-np.arange(5)) % 5][:, (-np.arange(6)) % 6])


def test_mirror_of_a_nearly_symmetric_cost_is_not_taken():
    eta = np.arange(9)
    rho = np.minimum(eta, 9 - eta).astype(float)
    rho[2] += 1e-9   # not exactly symmetric: the averaging argument does not apply
    r = design_finite(8, epsilon=1.0, delta=0.05, neighbourhood=Neighbourhood.bd(2), cost=rho)
    assert not any(MIRROR in note for note in r.notes)


@pytest.mark.parametrize("cost, delta, max_cost", [
    ("mse", 0.0, None), ("mse", 0.02, None), ("abs", 0.3, None), ("er", 1e-3, None),
    ("circular-mse", 0.0, None), ("mse", 0.0, 40.0), ("circular-abs", 0.0, 2.0),
])
def test_row_generation_reaches_the_full_lp_optimum(cost, delta, max_cost):
    n, eps = 60, 0.8
    nb = Neighbourhood.bd(3)
    rho = cost_vector(cost, (n + 1,))
    oracle = _oracle_dp_lp(n, eps, delta, [1, 2, 3, -1, -2, -3], rho, max_cost)
    kw = dict(minimize="delta", max_cost=max_cost) if max_cost is not None else dict(delta=delta)
    r = design_finite(n, epsilon=eps, neighbourhood=nb, cost=cost, row_generation=True, use_closed_form=False, **kw)
    got = r.delta_min if max_cost is not None else r.expected_cost
    assert got == pytest.approx(oracle, rel=1e-7, abs=1e-12)
    assert any(note.startswith("row generation") for note in r.notes)
    prof = privacy_profile(r.pmf, nb)
    if max_cost is not None:
        assert r.expected_cost <= max_cost * (1 + 1e-12) and prof.delta_dp(eps) <= r.delta_min + 1e-12
    elif delta == 0:
        assert prof.epsilon_pure <= eps + 1e-12
    else:
        assert prof.delta_dp(eps) <= delta + 1e-15


def test_row_generation_large_design_is_the_small_one():
    """delta > 0 and an MSE cost: the optimum sits on a few values near 0 whatever n is, so
    n = 200000 (1.2 million ratio rows, solved by row generation) must cost what n = 300 costs
    with every row in the LP."""
    nb = Neighbourhood.bd(3)
    big = design_finite(200_000, epsilon=1.0, delta=0.05, neighbourhood=nb, cost="mse")
    small = design_finite(300, epsilon=1.0, delta=0.05, neighbourhood=nb, cost="mse", row_generation=False)
    assert any(note.startswith("row generation") for note in big.notes)
    assert big.expected_cost == pytest.approx(small.expected_cost, rel=1e-9)
    assert big.analysis.delta_dp <= 0.05


def test_row_generation_is_sized_by_what_it_holds_not_by_the_full_lp():
    """n = 200000, BD 3: the full LP (1.2 million ratio rows with their hockey-stick
    variables) is estimated at about 4 GiB and refused under 1 GiB; row generation holds
    the shift table and a few hundred rows, so it runs under the same limit, and its
    fixed part is still refused under 10 MiB."""
    from optnoise.errors import ResourceLimitError
    nb = Neighbourhood.bd(3)
    args = dict(epsilon=1.0, delta=0.05, neighbourhood=nb, cost="mse")
    with pytest.raises(ResourceLimitError) as full:
        design_finite(200_000, **args, row_generation=False, max_memory=2**30)
    assert full.value.parameter == "n" and "the LP over 200001 noise values" in str(full.value)
    assert design_finite(200_000, **args, max_memory=2**30).analysis.delta_dp <= 0.05
    with pytest.raises(ResourceLimitError, match="row generation over 200001 noise values"):
        design_finite(200_000, **args, max_memory=10 * 2**20)


def test_ratio_lift_equals_the_fixpoint_by_full_sweeps(rng):
    from optnoise.design.finite import MASS_FLOOR, ratio_lift
    from optnoise.design.model import cyclic_shift_table
    nb = Neighbourhood(((1, 0), (0, 2), (1, 1)))
    shape = (7, 9)
    sh = cyclic_shift_table(shape, nb)
    f = rng.random(63) * (rng.random(63) < 0.2)
    e = math.exp(0.4)
    g = np.maximum(f, MASS_FLOOR)
    while True:   # the plain iteration: every constraint of every value, until nothing moves
        need = np.max([np.bincount(p, weights=g / e, minlength=g.size) for p in sh.partner], axis=0)
        if np.all(need <= g):
            break
        g = np.maximum(g, need)
    np.testing.assert_allclose(ratio_lift(f, sh, e), g / g.sum(), rtol=1e-15, atol=0)


def test_cli_large_design_prints_a_bounded_summary(tmp_path):
    out = tmp_path / "noise.json"
    r = runner.invoke(app, ["design", "--n", "2000", "--epsilon", "1", "--bd", "3", "--cost", "circular-mse",
                            "--output", str(out)])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) < 60
    assert "2001 masses" in r.stdout and str(out) in r.stdout.replace("\n", "")
    assert len(json.loads(out.read_text())["pmf"]) == 2001
    small = runner.invoke(app, ["design", "--n", "8", "--epsilon", "1"])
    assert sum(1 for line in small.stdout.splitlines() if line.startswith("│") and "..." not in line) >= 9


@pytest.mark.parametrize("directed, cost, delta", [(True, "er", 0.05), (False, "mse", 0.05), (False, "circular-abs", 0.1)])
def test_pdp_row_generation_equals_the_full_milp(directed, cost, delta):
    nb = Neighbourhood.bd(3, directed=directed)
    kw = dict(epsilon=1.0, delta=delta, neighbourhood=nb, notion="pdp", cost=cost, use_closed_form=False)
    full = design_finite(30, row_generation=False, **kw)
    lazy = design_finite(30, row_generation=True, **kw)
    assert not any(note.startswith("row generation") for note in full.notes)
    assert any(note.startswith("row generation") for note in lazy.notes)
    assert lazy.optimal and lazy.mip_gap <= 1e-6
    assert lazy.expected_cost == pytest.approx(full.expected_cost, rel=2e-6)
    assert privacy_profile(lazy.pmf, nb).delta_pdp(1.0) <= delta + 1e-12


def test_pdp_row_generation_min_delta_equals_the_full_milp():
    kw = dict(epsilon=1.0, neighbourhood=Neighbourhood.bd(2), notion="pdp", cost="circular-abs",
              minimize="delta", max_cost=1.2)
    full = design_finite(30, row_generation=False, **kw)
    lazy = design_finite(30, row_generation=True, **kw)
    assert lazy.delta_min == pytest.approx(full.delta_min, rel=2e-6, abs=1e-12)
    assert lazy.expected_cost <= 1.2 + 1e-9


def test_symmetric_pdp_at_scale_is_the_small_optimum():
    """Symmetric BD 3, MSE, delta 0.05: the PDP optimum sits on about twenty values near 0,
    so n = 2000 (12006 pairs, row generation) must cost what n = 64 costs with the full MILP."""
    kw = dict(epsilon=1.0, delta=0.05, neighbourhood=Neighbourhood.bd(3), notion="pdp", cost="mse")
    big = design_finite(2000, time_limit=120, **kw)
    small = design_finite(64, row_generation=False, **kw)
    assert any(note.startswith("row generation") for note in big.notes)
    assert big.expected_cost == pytest.approx(small.expected_cost, rel=2e-6)
    assert big.analysis.delta_pdp <= 0.05 + 1e-12


def test_row_generation_time_limit_is_an_error():
    with pytest.raises(DesignError, match="time limit"):
        design_finite(100_000, epsilon=0.05, delta=0.0, neighbourhood=Neighbourhood.bd(3), cost="circular-mse",
                      time_limit=0.01)
