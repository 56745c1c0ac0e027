"""``optnoise query --compare`` / ``optnoise.query.compare``: both methods of a peak or a mode
on synthetic data of the spec's shape, from exact laws -- checked against hand computations
on 3 keys (randomized response's and permute-and-flip's laws written out by hand), and the
CLI's document and refusals."""

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise.cli.app import app
from optnoise.errors import InvalidParameterError
from optnoise.query.compare import DEFAULT_UNITS, compare, permute_and_flip_law, profile_shares, summary
from optnoise.sampling.noisy_max import noisy_max_law


def pf3(scores: list[int], eps: float, sens: int) -> list[float]:
    """Permute-and-flip on 3 keys by hand: with the maximum's coin sure (p = 1), key r != top is
    returned when it comes first (1/3) or second after the other non-maximum key with tails
    (1/6 times 1 - p_other); the maximum takes the rest."""
    top = int(np.argmax(scores))
    p = [math.exp(-eps * (max(scores) - s) / (2 * sens)) for s in scores]
    law = [0.0] * 3
    for r in range(3):
        if r != top:
            other = 3 - r - top
            law[r] = p[r] * (1 / 3 + (1 - p[other]) / 6)
    law[top] = 1 - sum(law)
    return law


def mode_spec(**unit) -> dict:
    return {"unit": {"id": "household", "max_rows": 2, **unit},
            "statistics": {"fuel": {"kind": "mode", "key": "fuel", "keys": ["gas", "oil", "heat"], "epsilon": 1.0}}}


def test_a_mode_on_three_text_keys_against_the_hand_laws():
    doc = compare(mode_spec(), units=30)
    s = doc["statistics"]["fuel"]
    one = s["profiles"]["one-peak"]
    # one-peak on 3 keys: shares 1:1:2 (the peak at position 3 * 3 // 4 = 2), 30 units -> 7.5 -> 8 (round half
    # to even), 15
    assert one["scores"] == [8, 8, 15] and one["true_key"] == "heat"
    # answer-noise: optimal randomized response on 3 values at eps 1: e / (e + 2) (to the quantization's 2^-48)
    rr = math.e / (math.e + 2)
    for prof in s["profiles"].values():
        assert prof["answer-noise"]["p_correct"] == pytest.approx(rr, abs=1e-12)
        assert prof["answer-noise"]["expected_distance"] == pytest.approx(1 - rr, abs=1e-12)
    # report-noisy-max: sensitivity 1 (a unit counted once), one cell
    assert s["methods"]["report-noisy-max"]["mechanism"]["score_sensitivity"] == 1
    for prof in s["profiles"].values():
        law = pf3(prof["scores"], 1.0, 1)
        true = int(np.argmax(prof["scores"]))
        assert prof["report-noisy-max"]["p_correct"] == pytest.approx(law[true], rel=1e-12)
        assert prof["report-noisy-max"]["expected_distance"] == pytest.approx(1 - law[true], rel=1e-9, abs=1e-15)
    assert s["methods"]["answer-noise"]["certificate"]["exact"] is True
    assert s["methods"]["report-noisy-max"]["certificate"]["exact"] is False
    assert doc["reads_data"] is False and "never read" in doc["data"]


def test_a_grouped_peak_on_three_hours_splits_the_target_and_uses_the_clamp():
    """By group under replace: one unit moves 2 groups, each at eps / 2. Three integer keys:
    every shift costs circular distance 1 and the optimal cyclic noise is randomized response."""
    spec = {"unit": {"id": "household", "max_rows": 2},
            "statistics": {"p": {"kind": "peak", "key": "hour", "keys": {"lower": 0, "upper": 2}, "of": "kwh",
                                 "clamp": {"lower": 0, "upper": 3}, "by": "circuit", "groups": [1, 2],
                                 "epsilon": 1.0}}}
    s = optnoise.query.compare(spec, units=40)["statistics"]["p"]
    assert s["units_per_group"] == 20 and s["groups"] == 2
    one = s["profiles"]["one-peak"]
    # 20 units x 2 rows at 1.5 (middle of the clamp 0..3) = 60, shares 1:1:2
    assert one["scores"] == [15, 15, 30]
    # the cyclic design keeps a hair under its target (certified: P(0) <= e^0.5 P(s), so never above rr)
    rr = math.exp(0.5) / (math.exp(0.5) + 2)
    assert rr - 1e-8 <= one["answer-noise"]["p_correct"] <= rr + 1e-15
    assert one["answer-noise"]["expected_distance"] == pytest.approx(1 - one["answer-noise"]["p_correct"], abs=1e-15)
    # sensitivity: max_rows x (upper - lower) = 6; each group at eps 0.5
    assert s["methods"]["report-noisy-max"]["mechanism"]["score_sensitivity"] == 6
    law = pf3([15, 15, 30], 0.5, 6)
    assert one["report-noisy-max"]["p_correct"] == pytest.approx(law[2], rel=1e-12)
    assert s["methods"]["report-noisy-max"]["certificate"]["epsilon_pure"] == 1.0
    assert s["methods"]["answer-noise"]["certificate"]["epsilon_pure"] <= 1.0


def test_circular_distance_and_the_integral_law():
    # 4 integer keys, truth 1: released 0 and 2 are 1 away, 3 is 2 away around the cycle
    assert summary([0.1, 0.4, 0.2, 0.3], 1, np.array([0, 1, 2, 1])) == pytest.approx(
        {"p_correct": 0.4, "expected_distance": 0.1 + 0.2 + 2 * 0.3})
    scores = np.array([5, 3, 0, 7, 6, 2, 1])
    exact = [float(p) for p in noisy_max_law(scores, 0.7, 2)]
    assert permute_and_flip_law(scores, 0.7, 2, max_exact_keys=0) == pytest.approx(exact, rel=1e-10)
    assert permute_and_flip_law(np.array([4, 2, 0]), 1.0, 2) == pytest.approx(pf3([4, 2, 0], 1.0, 2), rel=1e-12)


def test_profiles_and_units():
    for k in (2, 3, 24):
        shares = profile_shares(k)
        assert set(shares) == {"flat", "one-peak", "two-near-tied"}
        assert all(w.sum() == pytest.approx(1) and (w > 0).all() for w in shares.values())
    assert compare(mode_spec(), units=None)["units"] == DEFAULT_UNITS
    doc = compare(mode_spec(change="add-remove", max_units=500))
    assert doc["units"] == 500 and doc["units_from"] == "unit.max_units"
    with pytest.raises(InvalidParameterError, match="units"):
        compare(mode_spec(change="add-remove", max_units=500), units=501)
    with pytest.raises(InvalidParameterError, match="peak or mode"):
        compare({"statistics": {"n": {"kind": "count", "epsilon": 1.0}}})
    one_key = mode_spec()
    one_key["statistics"]["fuel"]["keys"] = ["gas"]
    with pytest.raises(InvalidParameterError, match="statistics.fuel.keys"):
        compare(one_key)


def test_a_clamp_below_zero_keeps_each_profile_s_peak():
    """Rows at -6 (the middle of -10..-2): the key with the fewest rows has the largest total, so
    the shares are mirrored and the profile's peak (position 3 * 5 // 4 = 3) stays the argmax;
    twice the same peak (once per method in the spec) gives the same numbers."""
    peak = {"kind": "peak", "key": "k", "keys": {"lower": 0, "upper": 4}, "of": "v",
            "clamp": {"lower": -10, "upper": -2}, "epsilon": 1.0}
    doc = compare({"unit": {"id": "h", "max_rows": 3}, "statistics": {
        "a": peak, "b": {**peak, "method": "report-noisy-max"}}}, units=100)
    a, b = doc["statistics"]["a"], doc["statistics"]["b"]
    one = a["profiles"]["one-peak"]["scores"]
    assert all(x < 0 for x in one) and int(np.argmax(one)) == 3 and a["profiles"]["two-near-tied"]["true_key"] == "3"
    assert a["profiles"] == b["profiles"] and b["chosen_method"] == "report-noisy-max"


def test_cli_json_output_and_refusals(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('unit = { id = "household", max_rows = 2 }\n[statistics.fuel]\nkind = "mode"\nkey = "fuel"\n'
                    'keys = ["gas", "oil", "heat"]\nmethod = "report-noisy-max"\nepsilon = 1.0\n'
                    '[statistics.n]\nkind = "count"\nepsilon = 1.0\n')
    out = tmp_path / "c.json"
    run = CliRunner().invoke(app, ["query", "--spec", str(spec), "--compare", "--units", "30", "--json",
                                   "--output", str(out)])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.stdout)
    assert json.loads(out.read_text())["statistics"] == doc["statistics"]
    assert {"data", "reads_data", "units", "units_from", "unit", "methods", "profiles", "statistics", "skipped",
            "spec"} <= set(doc)
    s = doc["statistics"]["fuel"]
    assert s["chosen_method"] == "report-noisy-max" and doc["skipped"] == ["n"]
    assert set(s["profiles"]["flat"]) == {"about", "scores", "true_key", "answer-noise", "report-noisy-max"}
    assert set(s["profiles"]["flat"]["answer-noise"]) == {"p_correct", "expected_distance"}
    human = CliRunner().invoke(app, ["query", "--spec", str(spec), "--compare", "--units", "30"])
    assert human.exit_code == 0 and "never read" in " ".join(human.stdout.split())
    nopeak = tmp_path / "n.toml"
    nopeak.write_text('[statistics.n]\nkind = "count"\nepsilon = 1.0\n')
    for args in (["--spec", str(nopeak), "--compare"],                        # nothing to compare
                 ["--spec", str(spec), "--compare", "--input", str(spec)],    # compare reads no data
                 ["--spec", str(spec), "--compare", "--units", "0"],
                 ["--spec", str(spec), "--units", "5", "--input", str(spec)],  # --units only with --compare
                 ["--spec", str(spec)],                                       # a release needs --input
                 ["--spec", str(spec), "--compare", "--output", str(out)]):   # exists, no --force
        r = CliRunner().invoke(app, ["query", *args])
        assert r.exit_code == 2 and r.stdout == "" and r.stderr.startswith("error: ") and \
            r.stderr.count("\n") == 1, (args, r.output)
