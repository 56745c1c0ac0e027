"""The Target value object, the one "meets" rule, the monotone search and the spec parser."""

import math

import pytest

from optnoise import CyclicPMF, InvalidParameterError, Neighbourhood, Target, privacy_profile
from optnoise.analysis import pairs_from_arrays
from optnoise.search import SearchError, boundary, search
from optnoise.specs import parse_spec
from optnoise.target import MEETS_TOLERANCE


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-1.0), "epsilon"), (dict(epsilon=math.inf), "epsilon"),
    (dict(epsilon=math.nan), "epsilon"), (dict(epsilon="x"), "epsilon"), (dict(epsilon=True), "epsilon"),
    (dict(epsilon=1.0, delta=1.0), "delta"), (dict(epsilon=1.0, delta=-1e-9), "delta"),
    (dict(epsilon=1.0, notion="rdp"), "notion"),
])
def test_target_validates_itself_and_names_the_python_parameter(kwargs, parameter):
    with pytest.raises(InvalidParameterError) as info:
        Target(**kwargs)
    assert info.value.parameter == parameter
    assert not info.value.parameter.startswith("--")


def test_target_round_trip_and_words():
    t = Target(1.5, 0.1238, "pdp")
    assert Target.from_json(t.to_json()) == t and not t.pure
    assert Target(2.0).describe() == "pure 2-DP" and t.describe() == "(1.5, 0.1238)-PDP"


def test_meets_is_the_hand_computed_rule():
    # f = (1/2, 1/4, 1/4), SD 1: pure eps ln 2; delta_DP(eps) = 1/2 - e^eps / 4; delta_PDP = 1/2 below ln 2
    prof = privacy_profile(CyclicPMF([0.5, 0.25, 0.25]), Neighbourhood.sd(1))
    assert prof.meets(Target(math.log(2))) and not prof.meets(Target(0.69))
    eps = 0.3
    d = 0.5 - math.exp(eps) / 4
    assert prof.meets(Target(eps, d)) and not prof.meets(Target(eps, d * (1 - 1e-9)))
    assert prof.meets(Target(eps, 0.5, "pdp")) and not prof.meets(Target(eps, 0.49, "pdp"))


def test_float_tolerance_is_relative_1e12_and_exact_profiles_have_none():
    # a pair with ratio exactly 2 up to float round-off: float meets at eps = ln 2 within the tolerance
    p = [0.5, 0.25, 0.25]
    q = [0.25, 0.5, 0.25]
    prof = pairs_from_arrays([(p, q), (q, p)])
    assert prof.meets(Target(math.log(2) * (1 - 0.5 * MEETS_TOLERANCE)))
    assert not prof.meets(Target(math.log(2) * (1 - 10 * MEETS_TOLERANCE)))
    exact = privacy_profile(CyclicPMF(p), Neighbourhood.sd(1), exact=True)
    assert exact.epsilon_pure >= math.log(2)   # rounded up, never below
    assert not exact.meets(Target(math.log(2) * (1 - 0.5 * MEETS_TOLERANCE)))


def test_monotone_search_finds_the_boundary_on_the_ok_side():
    x = boundary(lambda v: v * v >= 2.0, 0.0, 2.0, ok_side="upper")
    assert x * x >= 2.0 and math.nextafter(x, 0.0) ** 2 < 2.0
    y = boundary(lambda v: v <= 0.3, 0.0, 1.0, ok_side="lower")
    assert y <= 0.3 and y == pytest.approx(0.3, abs=1e-15)
    assert search(lambda v: True, 0.0, 1.0, ok_side="upper").evaluations == 2   # both ends checked, done
    with pytest.raises(SearchError):
        boundary(lambda v: False, 0.0, 1.0, ok_side="upper")


def test_spec_parser():
    s = parse_spec("qin-uniform: -10, 10")
    assert s.name == "qin-uniform" and s.params == ("-10", "10") and s.integer(0, parameter="p", accepted="") == -10
    assert parse_spec("pmf-file:/a,b.json", split=False).params == ("/a,b.json",)
    for bad in ("", ":1", "  "):
        with pytest.raises(InvalidParameterError):
            parse_spec(bad, parameter="family")
    with pytest.raises(InvalidParameterError):
        parse_spec("geometric:x").number(0, parameter="family", accepted="a number")
