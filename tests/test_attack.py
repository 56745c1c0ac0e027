"""Attack targets end to end: the optimal design over the (epsilon, delta) family, the
command line (verify --attack) and the release manifest's total in attack terms."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import optnoise
from optnoise import Neighbourhood, Target
from optnoise.analysis.tradeoff import tradeoff
from optnoise.cli import app
from optnoise.design.attack import design_attack, member_delta, pure_member
from optnoise.errors import InvalidParameterError

N, NB, COST = 11, Neighbourhood.sd(1), "circular-mse"


def design_for(t: Target):
    return optnoise.design_finite(N, target=t, neighbourhood=NB, cost=COST)


@pytest.mark.parametrize("beta, alpha", [(0.3, 0.05), (0.1, 0.01)])
def test_attack_design_meets_its_target_and_beats_every_member(beta, alpha):
    target = Target.attack(max_tpr=beta, at_fpr=alpha)
    got = design_attack(target, design_for, lambda d: d.expected_cost,
                        check=lambda d: d.mechanism.meets(target, exact=True))
    mech = got.design.mechanism
    # on the exact curve: of the designed masses, and of the quantized weights that are sampled
    assert mech.meets(target, exact=True)
    q = mech.quantize()
    assert tradeoff(q.pmf, NB, exact=True).tpr(alpha)[0] <= beta
    # no (epsilon, delta) design that meets the target is cheaper (beyond the proven gap)
    costs = []
    for eps in np.linspace(1e-3, pure_member(target, True), 25):
        member = Target(float(eps), max(member_delta(target, float(eps), True), 0.0))
        d = design_for(member)
        assert d.mechanism.meets(target)              # every member implies the target
        costs.append(d.expected_cost)
    assert got.lower_bound <= min(costs) * (1 + 1e-9)
    assert got.cost <= min(costs) * (1 + 2e-4)
    assert got.gap <= 1e-4 * got.cost + 1e-9


def test_mu_target_designs_the_largest_pure_member():
    target = Target.attack(max_mu=1.0)
    got = design_attack(target, design_for, lambda d: d.expected_cost,
                        check=lambda d: d.mechanism.meets(target, exact=True))
    assert got.member.pure and got.member.epsilon == pytest.approx(math.log(0.6914624612740131 / 0.3085375387259869))
    assert got.design.mechanism.meets(target, exact=True)


def test_attack_design_refuses_what_it_cannot_design():
    with pytest.raises(InvalidParameterError):
        design_attack(Target(1.0), design_for, lambda d: d.expected_cost)
    with pytest.raises(InvalidParameterError, match="at_fpr"):
        design_attack(Target.attack(max_tpr=0.1, at_fpr=0.0), design_for, lambda d: d.expected_cost)


# ------------------------------------------------------------------ command line
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_verify_attack_keys_and_values(tmp_path):
    r = run("verify", "--family", "geometric:0.5", "--attack", "--compose", "3", "--exact", "--json",
            "--fpr", "0.01,0.05", "--prior-odds", "1:3", "--plot", str(tmp_path / "curve.png"))
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    a = out["attack"]
    assert set(a["tpr_at_fpr"]) == {"0.01", "0.05"}
    assert a["tpr_at_fpr"]["0.05"] == pytest.approx(0.1)           # e^eps alpha with e^eps = 2
    assert a["advantage"] == pytest.approx(1 / 3) and a["exact"] is True
    assert a["posterior"] == pytest.approx(0.4)                    # (1/3) 2 / (1 + (1/3) 2)
    c = out["composed"]["attack"]
    assert out["composed"]["k"] == 3 and c["method"] == "exact composition"
    assert c["posterior"] == pytest.approx((8 / 3) / (1 + 8 / 3))
    assert "in_words" in a and (tmp_path / "curve.png").stat().st_size > 0


@pytest.mark.parametrize("args, flag", [
    (["--fpr", "0.05"], "--fpr"),
    (["--attack", "--fpr", "1.5"], "--fpr"),
    (["--attack", "--prior-odds", "0:1"], "--prior-odds"),
    (["--attack", "--prior-odds", "x"], "--prior-odds"),
])
def test_verify_attack_bad_input_names_the_flag(args, flag):
    r = run("verify", "--family", "geometric:0.5", *args)
    assert r.exit_code == 2 and flag in r.stderr


def test_release_manifest_states_the_record_total_in_attack_terms():
    import pandas as pd
    frame = pd.DataFrame({"hour": [1, 5, 7, 0]})
    spec = {"columns": {"hour": {"domain": {"lower": 0, "upper": 7, "cyclic": True}, "epsilon": 1.0}}}
    _, manifest = optnoise.release(frame, spec)          # unseeded: a seeded release states no protection
    a = manifest["total"]["attack"]
    assert a["method"] == "exact composition" and a["exact"] is True
    # pure 1-DP per record: no attacker beats e^1 alpha
    assert a["tpr_at_fpr"]["0.05"] <= math.e * 0.05 + 1e-12
    assert "right at most" in a["in_words"] and "hour" in a["in_words"]
    from optnoise.table import words
    assert "In attack terms" in words(manifest)
    with pytest.warns(UserWarning):
        _, seeded = optnoise.release(frame, spec, seed=1)
    assert "total" not in seeded and "attack" in seeded["only_if_unseeded"]["total"]
    assert "In attack terms" not in words(seeded) and "not private" in words(seeded)
