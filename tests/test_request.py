"""What is asked (issue 21): the Request's field rules, the unit -> neighbourhood rule, which
problem answers it, and the one calibration and the searches it stands on."""

import math

import numpy as np
import pytest

import optnoise
from optnoise import InvalidParameterError, Neighbourhood, Target
from optnoise.costs import ReleasedCost
from optnoise.design import Request, SolverOptions, calibrate
from optnoise.neighbourhood import InputPairs
from optnoise.search import HALVINGS, first_passing, largest_passing


# ------------------------------------------------------------------ which problem answers it
@pytest.mark.parametrize("fields, problem", [
    (dict(space="cyclic", n=5), "finite"),
    (dict(space="cyclic", n=5, cost="abs-error"), "finite"),          # averaged over a uniform answer: a noise cost
    (dict(space="cyclic", n=5, cost="abs-error", worst_case=True), "modulo"),
    (dict(space="cyclic", n=5, cost=ReleasedCost("sq-error")), "modulo"),
    (dict(space="channel", n=5), "channel"),
    (dict(space="categories", n=3), "rr"),
    (dict(space="cyclic", n=5, releases=3, target=Target(1.0, 1e-6)), "releases"),
    (dict(space="integer", target=Target(1.0, 1e-6)), "releases"),
    (dict(space="integer", family="geometric"), "calibrated"),
])
def test_the_request_says_which_problem_answers_it(fields, problem):
    fields.setdefault("target", Target(1.0))
    assert Request(**fields).problem == problem


# ------------------------------------------------------------------ field rules, named
@pytest.mark.parametrize("fields, parameter", [
    (dict(space="square", n=3), "space"),
    (dict(n=3, target=1.0), "target"),
    (dict(n=0), "n"),
    (dict(n=2.5), "n"),
    (dict(space="channel", n=(2, 3)), "n"),
    (dict(n=(2, 3)), "neighbourhood"),                                   # a vector query needs vector distances
    (dict(n=3, unit="person"), "unit"),
    (dict(n=3, unit="record", neighbourhood=Neighbourhood.sd(1)), "unit"),
    (dict(n=3, releases=0), "releases"),
    (dict(n=3, constraints=("fair",)), "constraints"),                  # only on a channel
    (dict(space="channel", n=3, constraints=("honest",)), "constraints"),
    (dict(n=3, minimize="delta"), "max_cost"),
    (dict(n=3, minimize="delta", max_cost=0.5, target=Target(1.0, 0.1)), "delta"),
    (dict(n=3, max_cost=0.5), "max_cost"),                               # only with minimize='delta'
    (dict(n=3, formulation="paper"), "formulation"),                    # only under PDP
    (dict(n=3, time_limit=0), "time_limit"),
    (dict(n=3, releases=3, target=Target(1.0, 0.1, "pdp")), "notion"),
    (dict(n=3, releases=3, target=Target(1.0, 0.1), time_limit=5), "time_limit"),
    (dict(n=3, prior=[1, 1, 1, 1], cost="mse"), "cost"),                 # a prior only for a released-value cost
    (dict(space="categories", n=3, cost="er"), "cost"),
    (dict(space="integer", n=10, target=Target(1.0, 1e-6)), "n"),      # no n on the line, but for a unit or a clamp
    (dict(space="integer", unit="record", family="geometric"), "n"),
    (dict(n=3, family="geometric", cost="er"), "family"),
    (dict(n=3, boundary="clamp"), "boundary"),
    (dict(n=3, target=Target(1e-12)), "epsilon"),                       # below the solver's range
    (dict(n=3, neighbourhood=Neighbourhood.sd(9)), "distances"),        # checked against the domain
    (dict(space="channel", n=3, neighbourhood=InputPairs(((0, 9),))), "pairs"),
])
def test_each_rule_names_its_field(fields, parameter):
    fields.setdefault("target", Target(1.0))
    with pytest.raises(InvalidParameterError) as err:
        Request(**fields)
    assert err.value.parameter == parameter


def test_solver_options_are_checked():
    for fields, parameter in ((dict(row_generation="yes"), "row_generation"), (dict(orders=(0.5,)), "orders"),
                              (dict(strategies=("magic",)), "strategies")):
        with pytest.raises(InvalidParameterError) as err:
            SolverOptions(**fields)
        assert err.value.parameter == parameter


# ------------------------------------------------------------------ the unit -> neighbourhood rule
def test_the_record_unit_protects_every_change():
    n = 6
    cyclic = Request(space="cyclic", n=n, target=Target(1.0), unit="record").neighbours
    assert cyclic == Neighbourhood.bd(n)
    channel = Request(space="channel", n=n, target=Target(1.0), unit="record").neighbours
    assert set(channel.pairs) == {(a, b) for a in range(n + 1) for b in range(n + 1) if a != b}
    assert len(channel.pairs) == n * (n + 1) and channel.directed
    line = Request(space="integer", n=n, target=Target(1.0), unit="record", family="geometric").neighbours
    assert line == Neighbourhood.bd(n)
    assert Request(space="categories", n=n, target=Target(1.0)).neighbours == Neighbourhood.bd(n)


def test_channel_distances_become_pairs_without_wrap():
    pairs = Request(space="channel", n=4, target=Target(1.0), neighbourhood=Neighbourhood.sd(1)).neighbours.pairs
    assert set(pairs) == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 4), (4, 3)}


def test_a_per_record_channel_too_large_is_refused_before_its_pairs_are_listed():
    with pytest.raises(InvalidParameterError) as err:   # a cost the block design does not take: pairs needed
        Request(space="channel", n=5000, target=Target(1.0), unit="record", cost="er")
    assert err.value.parameter == "n" and "per-record channel" in str(err.value)
    with pytest.raises(InvalidParameterError) as err:   # the worst case over q: pairs needed
        Request(space="channel", n=5000, target=Target(1.0), unit="record", worst_case=True)
    assert err.value.parameter == "n" and "per-record channel" in str(err.value)
    # the block design (issue 37) lists no pair: the request is made, its pairs only when asked
    r = Request(space="channel", n=5000, target=Target(1.0), unit="record")
    assert r.record_blocks and "neighbours" not in r.__dict__


# ------------------------------------------------------------------ one design, one report
def test_the_report_names_the_float_analysis_and_the_exact_certificate_apart():
    d = optnoise.design(Request(space="cyclic", n=7, target=Target(1.0), neighbourhood=Neighbourhood.sd(1)))
    assert not d.report.analysis.exact and d.report.certificate.exact
    assert d.report.certificate == d.mechanism.quantize().certificate
    assert d.report.certificate.epsilon_pure <= 1.0      # the exact certificate meets the target, no tolerance
    # the LP's proven lower bound (issue 23) reaches the report, and the design is within its gap
    assert d.report.lower_bound <= d.report.expected_cost and d.report.gap <= 1e-6 and d.report.optimal
    # randomized response under pure DP: a proven bound from its closed-form dual (issue 23),
    # equal to Holohan's optimum (K - 1) / (e^eps + K - 1); under (eps, delta) too (the LP dual, issue 23)
    rr = optnoise.design(Request(space="categories", n=3, target=Target(1.0)))
    holohan = 3 / (math.e + 3)
    assert rr.report.lower_bound <= rr.report.expected_cost
    assert abs(rr.report.lower_bound - holohan) <= 1e-9 and rr.report.gap <= 1e-9
    rr_delta = optnoise.design(Request(space="categories", n=3, target=Target(1.0, 0.01)))
    assert abs(rr_delta.report.lower_bound - 3 * 0.99 / (math.e + 3)) <= 1e-9 and rr_delta.report.gap <= 1e-9
    nested = d.to_json()["report"]
    assert nested["lower_bound"] == d.report.lower_bound
    assert "epsilon" not in nested["certificate"] and "neighbourhood" not in nested["analysis"]
    assert "pmf" not in nested and "guarantee" not in nested and nested["problem"] == "finite"


def test_randomized_response_under_dp_is_holohan_and_under_pdp_is_calibrated():
    k, eps = 4, 1.0
    dp = optnoise.design(Request(space="categories", n=k - 1, target=Target(eps)))
    assert dp.report.method == "closed-form"
    assert dp.report.expected_cost == pytest.approx((k - 1) / (math.exp(eps) + k - 1), rel=1e-9)  # Theorem 8
    pdp = optnoise.design(Request(space="categories", n=k - 1, target=Target(eps, 0.1, "pdp")))
    assert pdp.report.method == "calibrated" and pdp.mechanism.meets()


# ------------------------------------------------------------------ the one calibration
def test_calibrate_gives_the_closed_form_geometric_and_meets_every_target():
    eps = 0.7
    geo = calibrate("geometric", Request(space="integer", target=Target(eps), neighbourhood=Neighbourhood.bd(3),
                                         family="geometric"))
    assert geo.parameter == pytest.approx(math.exp(-eps / 3), rel=1e-15)    # Ghosh et al.: |mu| ln(1/alpha)
    for family, target in (("discrete-gaussian", Target(1.0, 1e-5)), ("rr", Target(1.0))):
        found = calibrate(family, Request(space="cyclic", n=9, target=target, family=family))
        assert found.mechanism.meets()
        # the least noisy: one step less noise misses the target
        cal = optnoise.families.calibration_of(family)
        step = found.parameter * (1 - 1e-3) if cal.more_private == "larger" else found.parameter * (1 + 1e-3)
        less = optnoise.Mechanism(cal.build(step, 9, "modulo"), Neighbourhood.sd(1), target)
        assert not less.meets()


def test_calibrate_with_a_builder_for_k_releases_is_certified():
    k, target = 4, Target(2.0, 1e-5)
    request = Request(space="integer", target=target, releases=k)
    found = calibrate(lambda e: optnoise.geometric(alpha=math.exp(-e)).pmf, request, start=target.epsilon / k)
    assert found.composed.epsilon_dp <= target.epsilon
    assert found.parameter >= target.epsilon / k               # at least the basic-composition split


# ------------------------------------------------------------------ the searches it stands on
def test_largest_passing_keeps_the_payload_of_the_best_passing_point():
    calls = []

    def check(x):
        calls.append(x)
        return x <= 10.0, f"payload {x}"

    found = largest_passing(check, 1.0, bisections=30)
    assert found.value <= 10.0 and found.value == pytest.approx(10.0, rel=1e-6)
    assert found.payload == f"payload {found.value}" and found.evaluations <= len(calls)
    # from a failing start it retreats by halving, and the bracket keeps the failing point above
    calls.clear()
    back = largest_passing(check, 100.0, bisections=30)
    assert calls[:5] == [100.0 * r for r in (1.0, *HALVINGS[:4])] == [100.0, 50.0, 25.0, 12.5, 6.25]
    assert 6.25 < min(calls[5:]) and max(calls[5:]) < 12.5          # bisected inside [6.25, 12.5]
    assert back.value == pytest.approx(10.0, rel=1e-6) and back.value <= 10.0
    assert largest_passing(lambda x: (False, None), 1.0) is None


def test_first_passing_doubles_from_the_start():
    assert first_passing(lambda x: x >= 5e-12, 1e-12, 1.0) == (4e-12, 8e-12)
    assert first_passing(lambda x: x >= 0.9, 0.25, 1.0, cap=True) == (0.5, 1.0)
    assert first_passing(lambda x: False, 0.25, 1.0, cap=True) is None
    assert first_passing(lambda x: x > 0, 1e-12, 1.0) == (0.0, 1e-12)
    assert np.isclose(first_passing(lambda x: x >= 0.3, 0.1, 1.0)[1], 0.4)


def test_the_statistics_of_a_table_can_ask_what_they_need():
    """The two requests issue 22's statistics make: a channel on {0..N} with neighbours up to
    d apart in the worst case, and integer-line noise for sensitivity d clamped to 0..N."""
    channel = Request(space="channel", n=40, target=Target(1.0), neighbourhood=Neighbourhood.bd(3),
                      cost="abs-error", worst_case=True)
    assert channel.problem == "channel" and channel.loss_worst
    assert all(0 < abs(a - b) <= 3 for a, b in channel.neighbours.pairs)
    line = Request(space="integer", n=40, target=Target(1.0, 1e-6), neighbourhood=Neighbourhood.bd(3),
                   family="geometric", boundary="clamp")
    found = optnoise.design(line)
    assert found.report.method == "calibrated" and found.mechanism.neighbourhood == Neighbourhood.bd(3)
    assert found.mechanism.quantize().certificate.delta_dp <= 1e-6


@pytest.mark.slow
def test_an_attack_target_is_designed_through_the_one_door():
    """issue 24's attack notion: design() answers it as the cheapest (epsilon, delta) member,
    each member the request's own problem (the same search as design_attack with design_finite)."""
    from optnoise.design.attack import design_attack
    target, nb = Target.attack(max_tpr=0.3, at_fpr=0.05), Neighbourhood.sd(1)
    found = optnoise.design(Request(space="cyclic", n=11, target=target, neighbourhood=nb, cost="circular-mse"))
    direct = design_attack(target, lambda t: optnoise.design_finite(11, target=t, neighbourhood=nb,
                                                                     cost="circular-mse"),
                           lambda d: d.expected_cost)
    assert found.mechanism.target == direct.member and found.report.expected_cost == direct.cost
    assert found.mechanism.meets(target, exact=True) and found.report.lower_bound == direct.lower_bound
    assert found.to_json()["report"]["attack"]["member"] == direct.member.to_json()
    with pytest.raises(InvalidParameterError) as err:       # not for K releases (approximate DP only)
        Request(space="cyclic", n=11, target=target, releases=3)
    assert err.value.parameter == "notion"
