"""One Mechanism for every kind: analysis, exact certificate, quantize, sample, save and load.

Statistical checks use fixed seeds and a false-alarm rate ALPHA = 1e-3 per test
(chi-square goodness of fit against the exact quantized PMF), each with a power check:
the same draws must reject a slightly wrong distribution.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from test_sampling import ALPHA, chi2_pvalue
from typer.testing import CliRunner

import optnoise
from optnoise import Mechanism, Neighbourhood, Target, load_mechanism
from optnoise.cli import app
from optnoise.design.integer import design_integer
from optnoise.design.rr import design_rr
from optnoise.design.staircase import design_staircase
from optnoise.errors import InvalidParameterError
from optnoise.families.baselines import discrete_gaussian_pmf, exponential_channel
from optnoise.mechanism import SCHEMA, SCHEMA_VERSION

runner = CliRunner()


def _kinds() -> dict[str, Mechanism]:
    return {
        "cyclic design": optnoise.design_finite(23, epsilon=1.0, neighbourhood=Neighbourhood.sd(1),
                                                cost="circular-mse").mechanism,
        "vector design": optnoise.design_finite([3, 3], epsilon=2.0,
                                                neighbourhood=Neighbourhood(((1, 0), (0, 1)))).mechanism,
        "integer-line design": design_integer(1.0, 3, "abs").mechanism,
        "discrete staircase": design_staircase(1.0, 4, "abs", discrete=True).mechanism,
        "geometric": optnoise.geometric(epsilon=1.0),
        # sigma calibrated (by bisection on the float analysis) to (1, 1e-6)-DP with a little room
        "discrete gaussian": Mechanism(discrete_gaussian_pmf(4.25), Neighbourhood.sd(1), Target(1.0, 1e-6)),
        "randomized response": design_rr(4, epsilon=1.0).mechanism,
        "channel": optnoise.channel(exponential_channel(6, 0.4), sensitivity=1, target=Target(0.8)),
    }


KINDS = _kinds()


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_round_trips_with_an_identical_exact_certificate_and_samples(name, tmp_path):
    mech = KINDS[name]
    path = tmp_path / "m.json"
    mech.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == SCHEMA and data["format_version"] == SCHEMA_VERSION and data["kind"] == mech.kind
    back = load_mechanism(path)
    assert back.kind == mech.kind and back.target == mech.target
    assert back.neighbourhood.to_json() == mech.neighbourhood.to_json()
    # the exact certificate of the masses and of the quantized weights are identical
    assert back.verify(epsilon=1.0, exact=True) == mech.verify(epsilon=1.0, exact=True)
    q1, q2 = mech.quantize(), back.quantize()
    assert q1.certificate == q2.certificate and q1.certificate.exact
    assert mech.target is not None and back.quantize().certificate.meets(mech.target)
    kw = {"answer": 2} if mech.kind == "channel" else {}
    draws = back.sample(200, seed=3, **kw)
    assert draws.private is False and "NOT private" in draws.randomness
    assert np.array_equal(draws, back.sample(200, seed=3, **kw))
    if mech.kind == "cyclic":
        shape = mech.pmf.shape
        assert draws.shape == ((200,) if len(shape) == 1 else (200, len(shape)))
        assert np.all((np.asarray(draws) >= 0) & (np.asarray(draws) < np.asarray(shape)))
    elif mech.kind == "channel":
        assert np.all((np.asarray(draws) >= 0) & (np.asarray(draws) < mech.pmf.n_outputs))


def test_readme_tour_design_to_load_gives_the_same_exact_certificate(tmp_path):
    best = optnoise.design_finite(23, epsilon=1.0, neighbourhood=optnoise.Neighbourhood.sd(1), cost="circular-mse")
    mech = best.mechanism
    cert = mech.certify()                                   # exact profile of the designed masses
    assert cert.exact and cert.epsilon_pure <= 1.0 + 1e-12
    assert best.analysis.exact is False                     # the design's float analysis is named apart
    draws = mech.sample(5)                                  # the OS CSPRNG by default
    assert draws.private is True and draws.shape == (5,)
    mech.save(tmp_path / "hour.json")
    again = optnoise.load_mechanism(tmp_path / "hour.json")
    assert again.certify().epsilon_pure == cert.epsilon_pure
    assert again.quantize().certificate == mech.quantize().certificate == best.certify()


def test_quantized_integer_line_sampler_matches_its_exact_pmf():
    # the geometric at alpha = e^-1: the draws follow the exact quantized PMF, tails included,
    # and the same draws reject the geometric with alpha = 0.4
    mech = optnoise.geometric(epsilon=1.0)
    q = mech.quantize()
    exact = q.pmf
    lo = 30
    k = np.arange(-lo, lo + 1)
    probs = exact.mass(k)
    probs = np.append(probs, 1.0 - probs.sum())  # everything beyond +-30 pooled
    draws = np.asarray(mech.sample(200_000, seed=12))
    binned = np.where(np.abs(draws) > lo, lo + 1, draws)  # beyond +-30 -> the pooled bin
    assert chi2_pvalue(binned, probs, offset=lo) > ALPHA
    wrong = optnoise.geometric(alpha=0.4).pmf.mass(k)
    wrong = np.append(wrong, 1.0 - wrong.sum())
    assert chi2_pvalue(binned, wrong, offset=lo) < ALPHA


def test_quantized_staircase_tail_period_is_sampled_exactly():
    # Delta = 4, r = 2: the tails repeat the last block of four with ratio e^-1 per block
    mech = design_staircase(1.0, 4, "abs", r=2, discrete=True).mechanism
    q = mech.quantize()
    lo = 40
    k = np.arange(-lo, lo + 1)
    probs = q.pmf.mass(k)
    probs = np.append(probs, 1.0 - probs.sum())
    draws = np.asarray(mech.sample(200_000, seed=5))
    binned = np.where(np.abs(draws) > lo, lo + 1, draws)
    assert chi2_pvalue(binned, probs, offset=lo) > ALPHA
    other = design_staircase(1.0, 4, "abs", r=3, discrete=True).mechanism.pmf.mass(k)
    assert chi2_pvalue(binned, np.append(other, 1.0 - other.sum()), offset=lo) < ALPHA


def test_quantized_integer_pmf_is_exactly_normalised_and_keeps_the_pure_target():
    q = optnoise.geometric(epsilon=0.7, sensitivity=2).quantize()
    pmf = q.pmf
    total = sum(pmf.exact) + sum(pmf.exact[:1]) * Fraction(pmf.left_tail.ratio) / (1 - Fraction(pmf.left_tail.ratio)) \
        + sum(pmf.exact[-1:]) * Fraction(pmf.right_tail.ratio) / (1 - Fraction(pmf.right_tail.ratio))
    assert total == 1
    assert q.certificate.exact and q.certificate.epsilon_pure <= 0.7
    assert Fraction(pmf.right_tail.ratio) >= Fraction(math.exp(-0.35))  # rounded up: slower decay


def test_apply_privatizes_answers_of_every_kind():
    hour = KINDS["cyclic design"]
    out = np.asarray(hour.apply(np.array([0, 23, 12]), seed=1))
    assert out.shape == (3,) and np.all((out >= 0) & (out <= 23))
    geo = KINDS["geometric"]
    assert np.asarray(geo.apply(np.zeros(1000, dtype=int), seed=2)).std() > 0.5
    ch = KINDS["channel"]
    rows = np.asarray(ch.apply(np.array([0, 6, 6]), seed=3))
    assert np.all((rows >= 0) & (rows <= 6))


def test_mechanism_validates_its_parts():
    with pytest.raises(InvalidParameterError, match="distances"):
        Mechanism(optnoise.CyclicPMF([0.5, 0.5]), Neighbourhood.sd(5))
    with pytest.raises(InvalidParameterError, match="target"):
        Mechanism(optnoise.CyclicPMF([0.5, 0.5]), Neighbourhood.sd(1), target={"epsilon": 1})
    with pytest.raises(InvalidParameterError, match="answer"):
        KINDS["channel"].sample(3)
    with pytest.raises(InvalidParameterError, match="count"):
        KINDS["geometric"].sample(-1)


def test_a_mechanism_that_misses_its_target_is_not_quantized():
    mech = Mechanism(optnoise.CyclicPMF([0.7, 0.1, 0.1, 0.1]), Neighbourhood.sd(1), Target(1.0))
    assert not mech.meets()
    with pytest.raises(optnoise.OptnoiseError, match="cannot quantize"):
        mech.sample(1)


def test_pre_schema_design_files_still_load(tmp_path):
    legacy = {"pmf": [0.5, 0.25, 0.25], "guarantee": {"notion": "dp", "epsilon": 0.7, "delta": 0.0,
                                                        "neighbourhood": {"distances": [1], "directed": False}}}
    (tmp_path / "old.json").write_text(json.dumps(legacy))
    mech = load_mechanism(tmp_path / "old.json")
    assert mech.kind == "cyclic" and mech.target == Target(0.7) and mech.meets()


# ------------------------------------------------------------------ every producing command
PRODUCERS = {
    "design": ["design", "--n", "23", "--epsilon", "1", "--sd", "1", "--cost", "circular-mse"],
    "staircase": ["staircase", "--epsilon", "1", "--sensitivity", "3", "--discrete"],
    "wasserstein": ["wasserstein", "--input", "poisson:5", "--sensitivity", "2", "--epsilon", "1"],
    "rr": ["rr", "--categories", "5", "--epsilon", "1"],
    "families": ["families", "--family", "geometric:0.5", "--epsilon", "0.6932"],
    "verify": ["verify", "--family", "discrete-gaussian:4.25", "--epsilon", "1"],
}


@pytest.mark.parametrize("command", list(PRODUCERS))
def test_sample_accepts_the_file_of_every_producing_command(command, tmp_path):
    path = tmp_path / f"{command}.json"
    made = runner.invoke(app, [*PRODUCERS[command], "--output", str(path), "--json"])
    assert made.exit_code == 0, made.output
    extra = ["--delta", "1e-6", "--epsilon", "1"] if command == "verify" else []
    res = runner.invoke(app, ["sample", "--mechanism", str(path), "--count", "20", "--seed", "4", "--json", *extra])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert len(payload["samples"]) == 20 and payload["private"] is False
    assert payload["only_if_unseeded"]["certificate"]["exact"] and "certificate" not in payload   # seeded (issue 25)
    v = runner.invoke(app, ["verify", "--mechanism", str(path), "--epsilon", "1", "--json"])
    assert v.exit_code == 0, v.output


def test_sample_from_a_family_and_a_channel_answer():
    res = runner.invoke(app, ["sample", "--family", "geometric:0.5", "--epsilon", "0.6932", "--count", "10", "--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert payload["kind"] == "integer" and payload["private"] is True and payload["certificate"]["epsilon_pure"] <= 0.6932
    ch = runner.invoke(app, ["sample", "--family", "exponential:6,0.4", "--count", "5", "--answer", "3", "--json"])
    assert ch.exit_code == 0, ch.output
    assert json.loads(ch.stdout)["kind"] == "channel"
    bad = runner.invoke(app, ["sample", "--count", "5"])
    assert bad.exit_code == 2 and "--mechanism/--family" in bad.stderr


def test_exact_analysis_of_tails_reached_far_falls_back_to_fractions():
    # BD 120 on the geometric reaches 122 tail blocks per side: integer weights would need
    # ~2^1250, beyond the vectorised path; the Fraction path answers (was an error)
    g = optnoise.geometric(alpha=0.5)
    nb = Neighbourhood.bd(120)
    exact = optnoise.privacy_profile(g.pmf, nb, exact=True)
    floating = optnoise.privacy_profile(g.pmf, nb)
    assert exact.epsilon_pure >= 120 * math.log(2) and exact.epsilon_pure == pytest.approx(floating.epsilon_pure)
    assert exact.delta_dp(50.0) >= floating.delta_dp(50.0) - 1e-15
