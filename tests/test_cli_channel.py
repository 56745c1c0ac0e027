"""The command line of issue 15: released-value costs, ``design --form channel``, ``compare --form channel``.

Oracles: the library's independent routes (the circulant channel LP against the noise LP, the
channel optimum against every calibrated baseline), the channel file's own rows, and a
goodness-of-fit test of the sampled outputs against the quantized row (fixed seed, stated
false-alarm rate, with a power check).
"""

import json
import math

import numpy as np
import pytest
from scipy.stats import chisquare
from typer.testing import CliRunner

from optnoise import Channel, InputPairs, Target, load_mechanism, privacy_profile
from optnoise.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def run_json(*args):
    r = run(*args, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def goodness_of_fit(seen: np.ndarray, row: np.ndarray) -> float:
    """Chi-square p-value of counts against a distribution, cells expecting fewer than 5 pooled;
    0 when a draw fell where the row has no mass."""
    if seen[row == 0].sum() > 0:
        return 0.0
    expected = row * seen.sum()
    small = expected < 5
    obs = np.append(seen[~small], seen[small].sum()) if small.any() else seen
    exp = np.append(expected[~small], expected[small].sum()) if small.any() else expected
    return float(chisquare(obs, exp).pvalue)


def test_design_channel_json_keys_and_guarantee():
    out = run_json("design", "--form", "channel", "--n", 6, "--epsilon", 1, "--sd", 1, "--cost", "sq-error")
    for key in ("form", "channel", "expected_cost", "released_error", "error_rate", "squared_error", "guarantee",
                "certificate", "method", "optimal", "solve_seconds", "cost", "cost_meaning", "prior", "worst_case",
                "constraints", "format", "kind", "neighbourhood", "target"):
        assert key in out, key
    assert out["form"] == "channel" and out["kind"] == "channel" and out["prior"] == "uniform"
    P = np.asarray(out["channel"])
    assert P.shape == (7, 7) and np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # the report's numbers are those of the matrix it prints
    q = np.arange(7)
    assert out["expected_cost"] == pytest.approx(float(np.mean((P * (q[None, :] - q[:, None]) ** 2).sum(axis=1))))
    assert out["released_error"]["sq-error"]["average"] == pytest.approx(out["expected_cost"])
    pairs = InputPairs.from_json(out["neighbourhood"])
    assert privacy_profile(Channel(P), pairs).meets(Target(1.0))
    assert "squared error (y - q)^2 of the released value" in out["cost_meaning"]


def test_design_channel_default_cost_is_the_released_absolute_error():
    out = run_json("design", "--form", "channel", "--n", 4, "--epsilon", 1)
    assert out["cost"] == "abs-error"


def test_design_channel_round_trip_verify_sample_release(tmp_path):
    path = tmp_path / "ages.json"
    out = run_json("design", "--form", "channel", "--n", 8, "--epsilon", 1, "--delta", 0.01, "--per-record",
                   "--constraints", "row-monotone,weak-honest", "--output", path)
    assert out["output"] == str(path) and out["constraints"] == ["row-monotone", "weak-honest"]
    mech = load_mechanism(path)
    assert mech.kind == "channel" and mech.target == Target(1.0, 0.01)
    assert len(mech.neighbourhood.ordered(9)) == 9 * 8                     # per record: every ordered pair
    ver = run_json("verify", "--mechanism", path, "--epsilon", 1, "--exact")
    assert ver["exact"] is True and ver["delta_dp"] <= 0.01
    # sample: outputs for answer 3 follow the quantized row (chi-square, seed fixed, alpha = 1e-3)
    count = 4000
    s = run_json("sample", "--mechanism", path, "--answer", 3, "--count", count, "--seed", 11)
    assert s["kind"] == "channel" and s["private"] is False and "certificate" not in s   # seeded (issue 25)
    assert s["only_if_unseeded"]["certificate"]["delta_dp"] <= 0.01
    draws = np.asarray(s["samples"])
    assert draws.min() >= 0 and draws.max() <= 8
    rows = mech.quantize().channel.matrix
    seen = np.bincount(draws, minlength=9)
    assert goodness_of_fit(seen, rows[3]) > 1e-3      # false alarm rate 1e-3
    # power: the same draws are rejected as a sample of answer 8's row
    assert goodness_of_fit(seen, rows[8]) < 1e-3
    # release a column of ages in 0..8 with the channel; outputs stay in the domain
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "\n".join(str(v) for v in [0, 3, 8, 5, 5, 1]) + "\n")
    released = tmp_path / "released.csv"
    r = run("release", "--input", data, "--column", "age", "--mechanism", path, "--output", released, "--seed", 3)
    assert r.exit_code == 0, r.stderr
    values = [int(v) for v in released.read_text().split()[1:]]
    assert len(values) == 6 and all(0 <= v <= 8 for v in values)
    manifest = json.loads((tmp_path / "released.csv.manifest.json").read_text())
    assert manifest["mechanism"]["kind"] == "channel"


def test_design_noise_released_costs_and_worst_case():
    avg = run_json("design", "--n", 7, "--epsilon", 0.8, "--cost", "sq-error")
    assert avg["form"] == "noise" and avg["cost"] == "sq-error" and avg["method"] == "lp"
    assert avg["released_error"]["sq-error"]["average"] == pytest.approx(avg["expected_cost"], rel=1e-9)
    worst = run_json("design", "--n", 7, "--epsilon", 0.8, "--cost", "sq-error", "--worst-case")
    assert worst["method"] == "lp-circulant" and worst["worst_case"] is True
    assert worst["released_error"]["sq-error"]["worst"] == pytest.approx(worst["expected_cost"], rel=1e-9)
    assert worst["expected_cost"] <= avg["released_error"]["sq-error"]["worst"] + 1e-9
    # the paper's MSE says what it is, and the released value's error is reported beside it
    mse = run_json("design", "--n", 7, "--epsilon", 0.8, "--cost", "mse")
    assert "noise second moment" in mse["cost_meaning"]
    assert mse["released_error"]["sq-error"]["worst"] == pytest.approx(mse["squared_error"]["worst"], rel=1e-9)


def test_design_noise_per_record():
    out = run_json("design", "--n", 5, "--epsilon", 1, "--per-record", "--cost", "mse")
    assert out["guarantee"]["neighbourhood"] == {"distances": [1, 2, 3, 4, 5], "directed": False}
    rr = run_json("design", "--n", 5, "--epsilon", 1, "--bd", 5, "--cost", "mse")
    assert out["pmf"] == pytest.approx(rr["pmf"], abs=1e-12)


def test_design_noise_prior_file(tmp_path):
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps([1, 1, 1, 1, 1, 1, 1, 9]))
    out = run_json("design", "--n", 7, "--epsilon", 0.8, "--cost", "abs-error", "--prior", prior)
    w = np.array([1, 1, 1, 1, 1, 1, 1, 9]) / 16
    assert out["prior"] == pytest.approx(list(w))
    assert out["released_error"]["abs-error"]["average"] == pytest.approx(out["expected_cost"], rel=1e-9)
    uniform = run_json("design", "--n", 7, "--epsilon", 0.8, "--cost", "abs-error")
    f = np.asarray(uniform["pmf"])
    q = np.arange(8)
    err = np.abs(((q[:, None] + q[None, :]) % 8) - q[:, None]) @ f   # E|y - q| per q for the uniform design
    assert out["expected_cost"] <= float(w @ err) + 1e-9             # the prior's design is no worse under it


@pytest.mark.parametrize("args,flag,code", [
    (("design", "--form", "channel", "--n", 17, "--epsilon", 1, "--delta", 0.1, "--guarantee", "pdp"), "--n", 2),
    (("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--cost", "mse"), "--cost", 2),
    (("design", "--form", "curve", "--n", 4, "--epsilon", 1), "--form", 2),
    (("design", "--n", 4, "--epsilon", 1, "--constraints", "fair"), "--constraints", 2),
    (("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--constraints", "honest"), "--constraints", 2),
    (("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--per-record", "--sd", 1), "--per-record", 2),
    (("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--prior", "nofile.json"), "--prior", 2),
    (("design", "--n", 4, "--epsilon", 1, "--cost", "mse", "--worst-case"), "--cost", 2),
    (("compare", "--form", "channel", "--n", 4, "--epsilons", 1, "--boundary", "clamp"), "--boundary", 2),
    (("compare", "--n", 4, "--epsilons", 1, "--worst-case"), "--prior/--worst-case/--per-record", 2),
])
def test_bad_input_names_the_flag(args, flag, code):
    r = run(*args)
    assert r.exit_code == code, r.stderr
    assert flag in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 3


def test_prior_of_the_wrong_length_is_bad_input(tmp_path):
    prior = tmp_path / "prior.csv"
    prior.write_text("1\n2\n3\n")
    r = run("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--prior", prior)
    assert r.exit_code == 2 and "--prior" in r.stderr and "5 weights" in r.stderr


def test_infeasible_constraint_is_a_failure_that_says_why():
    r = run("design", "--form", "channel", "--n", 4, "--epsilon", 1, "--constraints", "unbiased")
    assert r.exit_code == 1
    assert "'unbiased' cannot hold" in r.stderr and "deterministic" in r.stderr


def test_compare_channel_ranks_by_the_released_error():
    out = run_json("compare", "--form", "channel", "--n", 8, "--epsilons", "0.5,2", "--per-record")
    assert out["form"] == "channel" and out["cost"] == "abs-error" and "released value" in out["ranked_by"]
    names = {r["mechanism"] for r in out["rows"]}
    assert names == {"optimal-channel", "optimal-modulo-noise", "clamped-geometric", "clamped-discrete-gaussian",
                     "randomized-response"}
    for eps in (0.5, 2.0):
        rows = {r["mechanism"]: r for r in out["rows"] if r["epsilon"] == eps}
        best = rows["optimal-channel"]
        assert best["rank"] == 1
        for r in rows.values():
            for key in ("mechanism", "epsilon", "delta", "expected_cost", "expected_cost_average", "error_rate",
                        "parameter", "parameter_name", "boundary", "rank", "expected_cost_worst"):
                assert key in r
            assert best["expected_cost"] <= r["expected_cost"] + 1e-8
        # randomized response is a modulo noise: the best modulo noise is no worse
        assert rows["optimal-modulo-noise"]["expected_cost"] <= rows["randomized-response"]["expected_cost"] + 1e-8
        assert rows["clamped-geometric"]["boundary"] == "clamp"


def test_compare_channel_worst_case_and_plot(tmp_path):
    plot = tmp_path / "c.png"
    out = run_json("compare", "--form", "channel", "--n", 6, "--epsilons", 1, "--cost", "sq-error", "--worst-case",
                   "--mechanisms", "optimal-channel,exponential", "--plot", plot)
    assert plot.stat().st_size > 0 and out["worst_case"] is True
    rows = {r["mechanism"]: r for r in out["rows"]}
    assert rows["optimal-channel"]["expected_cost"] == rows["optimal-channel"]["expected_cost_worst"]
    assert rows["optimal-channel"]["expected_cost"] <= rows["exponential"]["expected_cost"] + 1e-8


def test_compare_noise_reports_the_released_error_beside_a_noise_cost():
    out = run_json("compare", "--n", 8, "--epsilons", 1, "--cost", "mse", "--mechanisms", "optimal,geometric")
    assert "noise second moment" in out["ranked_by"]
    for r in out["rows"]:
        assert r["released_error"]["cost"] == "sq-error"
    table = run("compare", "--n", 8, "--epsilons", 1, "--cost", "mse", "--mechanisms", "optimal,geometric")
    assert table.exit_code == 0 and "ranked by mse" in " ".join(table.stdout.split())
    # a released-value cost ranks by it directly: clamped channels are not scored as if they wrapped
    clamp = run_json("compare", "--n", 8, "--epsilons", 1, "--cost", "abs-error", "--boundary", "clamp",
                     "--mechanisms", "geometric")
    r = clamp["rows"][0]
    alpha = math.exp(-1.0)
    assert r["parameter"] == pytest.approx(alpha, rel=1e-9)
    assert r["expected_cost_average"] == pytest.approx(r["released_error"]["average"], rel=1e-12)


@pytest.mark.slow
def test_demo_table_names_its_cost(tmp_path):
    r = run("demo", "--out", tmp_path / "out")
    assert r.exit_code == 0, r.stderr
    assert "ranked by circular-mse: squared distance" in " ".join(r.stdout.split())
