"""Issue 25, item 2: a clamped integer-line column is certified as the channel it releases.

The oracle builds the channel ``P[q, y] = P(clip(q + eta, 0, n) = y)`` afresh from the
manifest's quantized weights (window weights and dyadic tails, Fractions, one entry at a time)
and certifies it with the Fraction analysis; the manifest's certificate must equal it.
"""

from fractions import Fraction

import numpy as np
import pytest

from optnoise import Channel, IntegerPMF
from optnoise.analysis import guarantee, privacy_profile
from optnoise.errors import InvalidParameterError
from optnoise.neighbourhood import InputPairs, Neighbourhood
from optnoise.table import prepare
from optnoise.table.plan import all_pairs, certified


def noise_mass(quantized: dict):
    """``p(k)`` of the quantized noise, exactly: window weights ``W`` on ``lo..hi`` and tails
    ``p(hi + t P + s) = W[hi - P + s] r^t`` (mirror on the left), normalised by their total."""
    w = [int(x) for x in quantized["weights"]]
    lo, hi = quantized["window"]

    def tail(t):
        if t is None:
            return None
        num, den = t["ratio"].split("/2^")
        return Fraction(int(num), 2 ** int(den)), int(t["period"])

    left, right = tail(quantized["left_tail"]), tail(quantized["right_tail"])
    total = Fraction(sum(w))
    if right:
        total += sum(w[-right[1]:]) * right[0] / (1 - right[0])
    if left:
        total += sum(w[:left[1]]) * left[0] / (1 - left[0])

    def p(k: int) -> Fraction:
        if lo <= k <= hi:
            return w[k - lo] / total
        if k > hi and right:
            r, period = right
            t = -(-(k - hi) // period)
            return w[k - t * period - lo] * r ** t / total
        if k < lo and left:
            r, period = left
            t = -(-(lo - k) // period)
            return w[k + t * period - lo] * r ** t / total
        return Fraction(0)

    def beyond(k: int, side: int) -> Fraction:
        """``P(eta >= k)`` (side +1) or ``P(eta <= k)`` (side -1), for ``k`` inside the window."""
        inside = sum((p(j) for j in (range(k, hi + 1) if side > 0 else range(lo, k + 1))), Fraction(0))
        t = right if side > 0 else left
        if t is None:
            return inside
        block = w[-t[1]:] if side > 0 else w[:t[1]]
        return inside + sum(block) * t[0] / (1 - t[0]) / total

    return p, beyond, (lo, hi)


def oracle_channel(quantized: dict, n: int) -> Channel:
    p, beyond, (lo, hi) = noise_mass(quantized)
    assert lo <= -n and n <= hi            # the windows used here cover the piles
    rows = []
    for q in range(n + 1):
        row = [beyond(-q, -1)] + [p(y - q) for y in range(1, n)] + [beyond(n - q, +1)]
        assert sum(row) == 1
        rows.append(row)
    ex = np.array(rows, dtype=object)
    return Channel(np.array([[float(v) for v in r] for r in rows]), exact=ex)


@pytest.fixture(scope="module")
def gaussian():
    """The issue's noise: the discrete Gaussian calibrated to (1, 0.3)-PDP per record on 0..10
    (as the spec's ``family = "discrete-gaussian"`` builds it), made once."""
    from optnoise import Mechanism
    from optnoise.table.plan import line_noise
    from optnoise.target import Target
    pmf, _ = line_noise("discrete-gaussian", Target(1.0, 0.3, "pdp"), Neighbourhood.bd(10))
    return Mechanism(pmf, Neighbourhood.bd(10), None, "discrete-gaussian")


def _column(mech, **target):
    return {"domain": {"lower": 0, "upper": 10}, "mechanism": mech, "clamp": True, **target}


CASES = [
    ({"domain": {"lower": 0, "upper": 6}, "family": "geometric:0.5", "clamp": True}, "record", None),
    ("gaussian", "record", {"epsilon": 1.0, "delta": 0.3}),
    ("gaussian", "record", {"epsilon": 1.0, "delta": 0.6, "notion": "pdp"}),
    ({"domain": {"lower": 0, "upper": 7}, "family": "geometric:0.3", "distances": [1, 2], "clamp": True}, "value",
     Neighbourhood.bd(2)),
]


@pytest.mark.parametrize("column, unit, extra", CASES)
def test_clamped_certificate_equals_the_exact_certificate_of_the_released_channel(column, unit, extra, gaussian):
    column = _column(gaussian, **extra) if column == "gaussian" else column
    plan = prepare({"unit": unit, "columns": {"x": column}}).plans[0]
    js = plan.to_json()
    n = column["domain"]["upper"] - column["domain"]["lower"]
    ch = oracle_channel(js["mechanism"]["quantized"], n)
    pairs = all_pairs(n + 1) if unit == "record" else InputPairs.from_distances(extra, n + 1)
    t = plan.mechanism.target
    truth = guarantee(privacy_profile(ch, pairs, exact=True), *((t.epsilon, t.delta) if t else ()))
    stated = {k: v for k, v in truth.to_json().items() if k not in ("epsilon", "delta")}   # the target: once
    assert js["certificate"] == stated
    assert js["noise_certificate"] == certified(plan.mechanism.quantize().certificate)
    if t is not None and t.notion == "dp":   # post-processing can only tighten approximate DP
        noise = plan.mechanism.quantize().certificate
        assert truth.delta_dp <= noise.delta_dp and truth.epsilon_pure <= noise.epsilon_pure


def test_issue_pdp_case_is_refused_with_the_released_delta(gaussian):
    """The issue's column: discrete Gaussian on 0..10, (1, 0.3)-PDP, clamped. The released channel
    has delta_PDP(1) = 0.519 (pair 10 -> 0: P(y = 10 | q = 10) = 0.519 against 0.182)."""
    with pytest.raises(InvalidParameterError, match=r"delta_pdp 0\.519\d* at eps 1") as err:
        prepare({"columns": {"x": _column(gaussian, epsilon=1.0, delta=0.3, notion="pdp")}})
    assert err.value.parameter == "columns.x.clamp" and "(1, 0.3)-PDP" in err.value.accepted
    # certified at its real delta: with the target at 0.6 the same noise is released and says 0.519
    plan = prepare({"columns": {"x": _column(gaussian, epsilon=1.0, delta=0.6, notion="pdp")}}).plans[0]
    cert = plan.certificate
    assert abs(cert.delta_pdp - 0.519) < 1e-3 and plan.released is not None
    assert plan.mechanism.quantize().certificate.delta_pdp <= 0.3    # the noise alone looked fine
    ch = oracle_channel(plan.to_json()["mechanism"]["quantized"], 10)
    e = Fraction(np.exp(1.0))
    assert ch.exact[10, 10] > e * ch.exact[0, 10]           # the violating output of the pair 10 -> 0
    assert abs(float(ch.exact[10, 10]) - 0.519) < 1e-3 and abs(float(ch.exact[0, 10]) - 0.182) < 1e-3


def test_too_wide_to_certify_keeps_the_noise_certificate_for_dp_and_refuses_pdp(monkeypatch, gaussian):
    from optnoise.sampling import clamp
    monkeypatch.setattr(clamp, "MAX_CELLS", 100)
    plan = prepare({"columns": {"x": _column(gaussian, epsilon=1.0, delta=0.3)}}).plans[0]
    assert plan.released is None and any("too wide" in note for note in plan.notes)
    assert plan.to_json()["certificate"] == certified(plan.mechanism.quantize().certificate)
    with pytest.raises(InvalidParameterError, match="PDP"):
        prepare({"columns": {"x": _column(gaussian, epsilon=1.0, delta=0.9, notion="pdp")}})


def test_record_total_composes_a_profile_that_dominates_the_released_channel(gaussian):
    from optnoise.table.plan import released_profile
    col = _column(gaussian, epsilon=1.0, delta=0.3)
    plan = prepare({"columns": {"x": col}}).plans[0]
    prof = released_profile(plan)   # the noise's exact profile: it dominates the clamped channel (DP)
    assert prof.exact and len(prof.pairs) == 20 and len(plan.released.profile.pairs) == 110
    two = prepare({"columns": {"x": col, "y": col}})
    assert two.total["basic"]["delta"] == 0.6 and two.total["pld"]["epsilon"] is not None
    assert plan.certificate.delta_dp <= 0.3
    for eps in (0.2, 1.0, 2.0):   # post-processing: the channel's curve lies under the noise's
        assert plan.released.profile.delta_dp(eps) <= prof.delta_dp(eps)
def test_clamped_form_rows_are_shifts_with_piled_ends():
    """The library function on its own: rows sum to the denominator, interior cells are the
    noise shifted, and a one-value domain is refused."""
    from optnoise.sampling.clamp import clamped_form
    plan = prepare({"columns": {"x": CASES[0][0]}}).plans[0]
    q = plan.mechanism.quantize()
    form = clamped_form(q, 6)
    w = np.array([[int(v) for v in row] for row in form.weights], dtype=object)
    assert all(sum(row) == form.denominator for row in w)
    assert all(w[a, y] == w[a + 1, y + 1] for a in range(6) for y in range(1, 5))
    assert isinstance(q.pmf, IntegerPMF)
    with pytest.raises(InvalidParameterError):
        clamped_form(q, 0)
