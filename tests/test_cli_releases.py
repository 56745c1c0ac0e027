"""The command line of repeated releases: verify --renyi, verify --compose (best of the bounds),
design --releases, compare --releases (docs/cli.md)."""

import math

import pytest
from test_cli import run, run_json


def test_verify_renyi_keys_and_values():
    out = run_json("verify", "--family", "geometric:0.5", "--renyi", "1.5,2,8,inf", "--epsilon", "0.3")
    assert list(out["renyi"]) == ["1.5", "2", "8", "inf"]
    assert out["renyi"]["inf"] == pytest.approx(out["epsilon_pure"], rel=1e-13)
    # D_2 of the geometric (ratio a = 1/2, shift 1) by hand: log((a^-1 + a^2) / (1 + a)) = log(3/2 * 3/2)
    assert out["renyi"]["2"] == pytest.approx(math.log((2 + 0.25) / 1.5), rel=1e-13)
    assert out["zcdp_rho"] <= out["zcdp_rho_upper"] and out["renyi_basis"] == "loss distributions"


def test_verify_renyi_discrete_gaussian_is_the_closed_form():
    out = run_json("verify", "--family", "discrete-gaussian:2", "--renyi", "2,3,inf")
    assert out["renyi"]["2"] == pytest.approx(2 / 8, rel=1e-13) and out["renyi"]["3"] == pytest.approx(3 / 8, rel=1e-13)
    assert out["renyi"]["inf"] == "inf" and out["zcdp_rho"] == pytest.approx(1 / 8, rel=1e-15)
    assert out["renyi_represented"]["2"] == "inf" and "closed form" in out["renyi_basis"]


@pytest.mark.parametrize("value", ["0,2", "abc", "-1", ""])
def test_verify_renyi_bad_orders_exit_2(value):
    r = run("verify", "--family", "geometric:0.5", "--renyi", value)
    assert r.exit_code == 2 and "--renyi" in r.stderr


def test_verify_compose_is_the_best_bound_and_says_which():
    c = run_json("verify", "--family", "geometric:0.36787944117144233", "--compose", "12", "--delta", "0")["composed"]
    assert c["epsilon_dp"] == pytest.approx(12.0, abs=1e-12) and c["epsilon_bound"] == "pure"
    assert c["bound"]["epsilon_dp"] == "pure" and c["k"] == 12
    c = run_json("verify", "--family", "geometric:0.5", "--compose", "10", "--delta", "1e-6")["composed"]
    assert c["epsilon_dp"] <= 10 * math.log(2) and c["epsilon_bound"] == "exact"
    by_method = {b["method"]: b for b in c["candidates"]}
    assert set(by_method) == {"pure", "exact", "rdp", "pld", "basic"}
    assert all(c["epsilon_dp"] <= b["epsilon_dp"] for b in by_method.values())


def test_design_releases_cyclic_writes_a_mechanism_that_verifies(tmp_path):
    path = tmp_path / "k.json"
    out = run_json("design", "--n", "3", "--epsilon", "2", "--delta", "1e-5", "--releases", "4",
                   "--cost", "circular-mse", "--output", str(path))
    for key in ("k", "expected_cost", "method", "composed", "epsilon_certified", "epsilon_pld", "epsilon_rdp", "pmf",
                "format", "kind"):
        assert key in out
    assert out["k"] == 4 and out["kind"] == "cyclic" and out["composed"]["epsilon_dp"] <= 2.0
    again = run_json("verify", "--mechanism", str(path), "--compose", "4", "--delta", "1e-5")["composed"]
    assert again["epsilon_dp"] == pytest.approx(out["composed"]["epsilon_dp"], rel=1e-12)


@pytest.mark.slow
def test_design_releases_on_the_line_and_plot(tmp_path):
    png = tmp_path / "d.png"
    out = run_json("design", "--epsilon", "4", "--delta", "1e-5", "--releases", "2", "--space", "integer",
                   "--cost", "abs", "--plot", str(png))
    assert out["kind"] == "integer" and out["space"] == "integer" and out["right_tail"] is not None
    assert out["composed"]["epsilon_dp"] <= 4.0 and png.stat().st_size > 0


@pytest.mark.slow
def test_compare_releases(tmp_path):
    png = tmp_path / "c.png"
    out = run_json("compare", "--n", "3", "--epsilons", "2", "--delta", "1e-5", "--releases", "1,3",
                   "--cost", "circular-mse", "--plot", str(png))
    assert out["releases"] == [1, 3] and set(out["best"]) == {"1", "3"} and png.stat().st_size > 0
    for k in (1, 3):
        rows = [r for r in out["rows"] if r["k"] == k]
        assert {r["mechanism"] for r in rows} == {"k-release", "single-release", "geometric", "discrete-gaussian"}
        k_release = next(r for r in rows if r["mechanism"] == "k-release")
        assert all(k_release["expected_cost"] <= r["expected_cost"] for r in rows)
        assert all(r["composed"]["epsilon_dp"] <= 2.0 and r["composed"]["k"] == k for r in rows)


@pytest.mark.parametrize("args,flag", [
    (["compare", "--n", "3", "--epsilons", "1,2", "--releases", "3", "--delta", "1e-5"], "--epsilons"),
    (["compare", "--epsilons", "1", "--releases", "3", "--delta", "1e-5"], "--n"),
    (["compare", "--n", "3", "--epsilons", "1", "--releases", "0", "--delta", "1e-5"], "--releases"),
    (["compare", "--n", "3", "--epsilons", "1", "--releases", "2", "--target-cost", "1"], "--target-cost"),
    (["compare", "--n", "3", "--epsilons", "1", "--space", "integer"], "--space"),
    (["design", "--n", "3", "--epsilon", "1", "--releases", "3", "--guarantee", "pdp"], "--guarantee"),
    (["design", "--n", "3", "--epsilon", "1", "--releases", "3", "--space", "integer"], "--n"),
    (["design", "--epsilon", "1", "--releases", "3"], "--n"),
    (["design", "--n", "3", "--epsilon", "1", "--space", "integer"], "--space"),
    (["design", "--epsilon", "1"], "--n"),
])
def test_releases_bad_input_exit_2(args, flag):
    r = run(*args)
    assert r.exit_code == 2 and flag in r.stderr, r.stderr
