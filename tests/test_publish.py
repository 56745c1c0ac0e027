"""The publishing core beneath ``table`` and ``query`` (issue 33): one unit, one accountant, one
document builder, one spec reader with one set of number rules."""

import math

import pandas as pd
import pytest

from optnoise.errors import InvalidParameterError
from optnoise.publish.accountant import Accountant, Parts, attack_within, within
from optnoise.publish.document import round_up
from optnoise.publish.spec import number, parse_budget, positive_integer
from optnoise.publish.unit import RECORD, RELEASE_UNITS, PrivacyUnit, parse_unit
from optnoise.query.release import query
from optnoise.query.spec import Unit
from optnoise.table import release
from optnoise.target import Target


def test_the_query_unit_is_the_privacy_unit():
    assert Unit is PrivacyUnit
    u = parse_unit({"id": "household", "max_rows": 24})
    assert u == PrivacyUnit("household", 24, "replace", None) and u.rows_bound == 24
    assert RECORD.rows_bound == 1 and RECORD.change == "replace"       # each row a unit, replaced
    assert RELEASE_UNITS["record"].rows is RECORD and RELEASE_UNITS["record"].any_value
    assert RELEASE_UNITS["value"].rows is RECORD and not RELEASE_UNITS["value"].any_value
    with pytest.raises(InvalidParameterError, match="unit.max_units"):
        parse_unit({"id": "u", "change": "add-remove"})


@pytest.mark.parametrize("value", ["1.0", True, math.inf, math.nan, None])
def test_one_number_rule(value):
    """A number is written as a number and is finite, in a release's spec as in a query's."""
    with pytest.raises(InvalidParameterError, match="written without quotes"):
        number(value, "epsilon")
    with pytest.raises(InvalidParameterError, match="columns.c.epsilon"):
        release(pd.DataFrame({"c": ["a", "b"]}),
                {"columns": {"c": {"domain": {"categories": ["a", "b"]}, "epsilon": value}}})
    with pytest.raises(InvalidParameterError, match="statistics.n.epsilon"):
        query(pd.DataFrame({"u": [1]}), {"unit": {"id": "u", "max_rows": 1},
                                         "statistics": {"n": {"kind": "count", "epsilon": value}}})


def test_positive_integer_and_budget():
    assert positive_integer(3, "bd") == 3
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(InvalidParameterError):
            positive_integer(bad, "bd")
    assert parse_budget("1.5,1e-6") == Target(1.5, 1e-6)
    with pytest.raises(InvalidParameterError, match="budget.epsilon"):
        parse_budget({"epsilon": "1"})


def test_one_accountant_two_namings():
    """A release and a query refuse a total above its budget with their own words: the record's
    total and the columns' epsilons; the unit's total and the statistics' epsilons (issue 34)."""
    frame = pd.DataFrame({"u": [1, 2, 3], "c": ["a", "b", "a"]})
    col = {"domain": {"categories": ["a", "b"]}, "epsilon": 1.0}
    with pytest.raises(InvalidParameterError) as got:
        release(frame, {"columns": {"c": col}, "budget": {"epsilon": 0.5}})
    assert "the record's total" in got.value.accepted and "the columns' epsilons" in got.value.accepted
    spec = {"unit": {"id": "u", "max_rows": 1}, "budget": {"epsilon": 0.5},
            "statistics": {"n": {"kind": "count", "epsilon": 1.0}}}
    with pytest.raises(InvalidParameterError) as got:
        query(frame, spec)
    text = got.value.accepted
    assert "the unit's total" in text and "the statistics' epsilons" in text and "record" not in text
    with pytest.raises(InvalidParameterError) as got:
        query(frame, {**spec, "budget": {"max_tpr": 0.06, "at_fpr": 0.05}})
    assert "the unit's total" in got.value.accepted and "the statistics' targets" in got.value.accepted


def test_the_accountant_on_one_pure_part_by_hand():
    """One part of randomized response at eps0 >= 1 (its certified pure epsilon): basic is the
    part's epsilon 1; pld is the part's own profile at delta (no composition), by hand
    delta(eps) = (e^eps0 - e^eps) / (1 + e^eps0), so eps = ln(e^eps0 - delta (1 + e^eps0));
    within a budget of 1 and not of 0.99."""
    from optnoise.query.mechanisms import dominating_rr
    from optnoise.query.release import TheoremPart
    prof = TheoremPart("s", dominating_rr(1.0), 1.0).composition_profile()
    acc = Accountant("parts", "one part", "profile", True, "the total", "the parts'")
    parts = Parts([(prof, 1)], [(1.0, 0.0)])
    total = acc.composed(parts, Target(1.0, 1e-6))
    assert total["parts"] == 1 and total["basic"] == {"epsilon": 1.0, "delta": 0.0}
    e0 = math.exp(prof.epsilon_pure)
    assert total["pld"]["bound"] == "one part"
    assert total["pld"]["epsilon"] == pytest.approx(math.log(e0 - 1e-6 * (1 + e0)), abs=1e-9)
    assert total["within_budget"] and within(total["basic"], total["pld"], Target(1.0, 1e-6))
    with pytest.raises(InvalidParameterError, match="the parts' epsilons"):
        acc.total(parts, Target(0.99, 1e-6), lambda worst: {"subject": "a row"})
    out = acc.total(parts, None, lambda worst: {"subject": "a row"})
    assert out["attack"]["tpr_at_fpr"]["0.05"] == pytest.approx(e0 * 0.05, rel=1e-9)   # the pure line
    assert attack_within(out["attack"], Target.attack(max_tpr=e0 * 0.05 * 1.01, at_fpr=0.05))
    assert not attack_within(out["attack"], Target.attack(max_tpr=e0 * 0.05 * 0.99, at_fpr=0.05))
    assert round_up(2.50049) == "2.501"


def test_shifts_move_every_bound_of_the_items_by_hand():
    """Keys found in the data (docs/proofs/key-selection.md): a part of randomized response at
    eps0 with a selection shift (e_s, d_s): basic adds the shift; pld is the part's own
    epsilon at delta - d_s plus e_s (by hand as above); at the budget's epsilon its delta is
    the part's at epsilon - e_s plus d_s; a shift taking the whole delta leaves no pld bound;
    the attack readout is the shifted profile's, never below the unshifted one's."""
    from optnoise.query.mechanisms import dominating_rr
    from optnoise.query.release import TheoremPart
    prof = TheoremPart("s", dominating_rr(1.0), 1.0).composition_profile()
    acc = Accountant("parts", "one part", "profile", True, "the total", "the parts'")
    e_s, d_s = 1e-7, 4e-7
    parts = Parts([(prof, 1)], [(1.0, 0.0)], shifts=[(e_s, d_s)])
    total = acc.composed(parts, Target(1.1, 1e-6))
    e0 = math.exp(prof.epsilon_pure)
    assert total["basic"]["epsilon"] >= 1.0 + e_s and total["basic"]["delta"] >= d_s
    assert total["pld"]["epsilon"] == pytest.approx(math.log(e0 - (1e-6 - d_s) * (1 + e0)) + e_s, abs=1e-9)
    assert total["pld"]["epsilon"] > math.log(e0 - 1e-6 * (1 + e0))   # strictly above the unshifted
    by_hand = (e0 - math.exp(1.1 - e_s)) / (1 + e0) + d_s
    assert total["pld"]["delta_at_budget_epsilon"] == pytest.approx(max(by_hand, d_s), abs=1e-12)
    assert total["selection"] == {"epsilon": e_s, "delta": d_s, "statistics": 1} and total["within_budget"]
    none = acc.composed(Parts([(prof, 1)], [(1.0, 0.0)], shifts=[(e_s, 2e-6)]), Target(1.1, 1e-6))
    assert none["pld"]["epsilon"] is None and not none["within_budget"]
    subject = lambda worst: {"subject": "a row"}
    plain = acc.total(Parts([(prof, 1)], [(1.0, 0.0)]), None, subject)["attack"]["tpr_at_fpr"]["0.05"]
    moved = acc.total(parts, None, subject)["attack"]["tpr_at_fpr"]["0.05"]
    assert moved >= plain + d_s * 0.99


def test_the_pure_sum_shortcut_survives_a_worst_pair_mass_below_the_float_range():
    """120 parts whose worst pair has mass 1e-3 there: P = 1e-360 is below the float range.
    Compared in logs, the shortcut is refused (delta >> P, the skipped bounds could win) --
    before, exp(sum k ln p) underflowed to 0 and delta / 0 raised ZeroDivisionError."""
    import numpy as np

    from optnoise.publish.accountant import pure_total

    class Loss:
        losses = np.array([1.0, 0.0])
        p_mass = np.array([1e-3, 1 - 1e-3])

    class Pair:
        def loss_distribution(self):
            return Loss()

    class Profile:
        epsilon_pure = 1.0
        pairs = [Pair()]

    assert pure_total([(Profile(), 120)], 1e-6, None) is None
    assert pure_total([(Profile(), 2)], 1e-9, None)["bound"] == "pure"   # P = 1e-6 >> delta: skipped, proven


def test_a_column_a_cell_and_a_stand_in_are_parts_the_core_reads_alike():
    """The core's one protocol (issue 33): a release's column, a query's cell and the
    randomized-response stand-in each give a name, the mechanism composed, its (epsilon, delta)
    and an exact profile -- and the unit's one rule gives a record's column every distance."""
    import pandas as pd

    from optnoise.publish.part import Part
    from optnoise.publish.unit import RECORD, PrivacyUnit
    from optnoise.query.release import plan
    from optnoise.query.aggregate import aggregate
    from optnoise.query.spec import parse_query_spec
    from optnoise.table import prepare

    prepared = prepare({"columns": {"hour": {"domain": {"lower": 0, "upper": 23, "cyclic": True}, "epsilon": 1.0}}})
    spec = parse_query_spec({"unit": {"id": "u", "max_rows": 2}, "statistics": {
        "n": {"kind": "count", "epsilon": 1.0},
        "p": {"kind": "peak", "key": "h", "keys": [0, 1, 2], "of": "v", "clamp": {"lower": 0, "upper": 3},
              "method": "report-noisy-max", "epsilon": 1.0}}})
    frame = pd.DataFrame({"u": [1, 1, 2], "h": [0, 1, 2], "v": [1.0, 2.0, 3.0]})
    planned = plan(spec, aggregate([frame], spec))
    parts = [prepared.plans[0], planned[0].cell, planned[1].parts[0]]
    for part in parts:
        assert isinstance(part, Part), type(part).__name__
        eps, delta = part.epsilon_delta
        assert part.composition_profile().epsilon_pure <= eps * (1 + 1e-9) + 1e-12 or delta > 0
    assert prepared.plans[0].mechanism.neighbourhood.to_json()["distances"] == list(range(1, 24))
    assert RECORD.distance(0, 23) == 23 and PrivacyUnit("u", 3, "add-remove", 10).distance(-2, 5) == 5
