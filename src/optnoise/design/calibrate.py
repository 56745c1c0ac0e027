"""One calibration: the least noisy member of a family that meets a request.

Every calibration in optnoise is one question -- given a family whose privacy grows with its
parameter, where is the boundary of "meets the request"? -- answered by the monotone searches
of :mod:`optnoise.search` and judged by the one rule
(:meth:`optnoise.analysis.PrivacyProfile.meets`, or the K-fold composition's certificate for
``releases > 1``). :func:`calibrate` takes the family as

* a registered name (``"geometric"``, ``"discrete-gaussian"``, ``"exponential"``, ``"rr"``:
  :data:`optnoise.families.CALIBRATED`) or its :class:`~optnoise.families.Calibration`, on the
  request's domain and boundary; on the integer line (``space="integer"``) the noise itself,
  with the room under the target that its quantized weights need;
* or a *builder* ``parameter -> PMF`` whose privacy decreases as the parameter grows, with a
  ``start`` known to meet the request (the K-release baselines, the single-release optimum at
  a per-release budget).

Calibrated mechanisms always meet their request: monotonicity only steers the search, and the
point returned passed the rule itself.

>>> from optnoise import Neighbourhood, Target
>>> from optnoise.design import Request
>>> c = calibrate("geometric", Request(space="integer", target=Target(1.0, 1e-6), family="geometric"))
>>> c.parameter_name, c.mechanism.kind, c.mechanism.meets()
('alpha', 'integer', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from ..analysis import privacy_profile
from ..errors import DesignError, InvalidParameterError, OptnoiseError
from ..families import (
    Calibration, alpha_for_epsilon, boundary_search, calibration_of, get_family, parse_family,
)
from ..families import calibrate as calibrate_registered
from ..mechanism import Mechanism
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF, cyclic_to_channel
from ..sampling.integer_line import coarse_tails
from ..search import largest_passing
from ..target import Target
from .report import DesignResult
from .request import Request

Representation = CyclicPMF | IntegerPMF | Channel

#: Relative room left under a target when an integer-line family is calibrated to it, tried
#: in turn until the quantized weights meet the target.
CALIBRATION_MARGINS = (1e-6, 1e-3, 1e-2, 0.1, 0.5)
#: Where a builder's search retreats to when its start misses (relative to the start): a
#: start proven to meet the target in exact arithmetic can miss by float round-off.
START_RETREATS = (1.0 - 1e-9, 1.0 - 1e-6, 0.999, 0.99, 0.5)


@dataclass(frozen=True, eq=False)
class CalibratedDesign(DesignResult):
    """A family calibrated to a request: its parameter and the mechanism it gives.

    ``composed`` is the K-fold certificate of a calibration for ``releases > 1`` (``None``
    otherwise). ``label`` names the member (``"geometric(alpha=0.367879)"``).
    """

    family: str
    parameter: float
    parameter_name: str
    mechanism: Mechanism
    boundary: str | None = None
    composed: Any = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: The relative room under the request's target the calibration used (``margins``).
    margin: float = 0.0
    #: What else picks the member (the discrete staircase's ``r``).
    member: dict = field(default_factory=dict)

    method = "calibrated"
    optimal = None

    @property
    def representation(self) -> Representation:
        return self.mechanism.pmf

    @property
    def label(self) -> str:
        return f"{self.family}({self.parameter_name}={self.parameter:.6g})"

    def report_json(self) -> dict:
        out = {"family": self.family, "parameter": self.parameter, "parameter_name": self.parameter_name,
               "boundary": self.boundary, "notes": list(self.notes), **self.privacy_json()}
        if self.composed is not None:
            out["composed"] = self.composed.to_json()
        return out


def calibrate(family: str | Calibration | Callable[[float], Representation], request: Request, *,
              start: float | None = None, screen: Callable[[Any], bool] | None = None,
              name: str | None = None, parameter_name: str = "parameter",
              margins: Sequence[float] | None = None,
              finish: Callable[[Mechanism], Mechanism | None] | None = None) -> CalibratedDesign:
    """The least noisy member of ``family`` meeting ``request`` (module docstring).

    Parameters
    ----------
    family:
        A registered family name, its :class:`~optnoise.families.Calibration`, or a builder
        ``parameter -> PMF`` (privacy decreasing in the parameter; needs ``start``).
    request:
        The target, neighbourhood (or unit), domain ``n``, ``boundary`` and ``releases``.
    start:
        For a builder: a parameter that meets the request (the search retreats a little if
        round-off makes it miss, then grows and bisects on its logarithm).
    screen:
        A faster predicate that should agree with the rule (a vectorised check of many input
        pairs); the rule confirms its answer (:func:`optnoise.families.calibrate`).
    name, parameter_name:
        Labels of a builder's result.
    margins, finish:
        Calibrate to the request's target tightened by each relative margin in turn
        (:func:`inside`; a negative margin loosens it) until ``finish`` accepts the member:
        ``finish(mechanism)`` returns the mechanism to release (e.g. its weights mirrored, or
        checked under a chained certificate), or ``None`` to try the next margin. The design
        records the margin used. Raises :class:`~optnoise.errors.DesignError` when none is
        accepted.
    """
    if margins is not None:
        return _within_margins(family, request, margins, finish, start=start, screen=screen, name=name,
                               parameter_name=parameter_name)
    if isinstance(family, str) or isinstance(family, Calibration):
        if request.space == "integer":
            return _line(family, request)
        return _on_domain(family, request, screen)
    if not callable(family) or start is None:
        raise InvalidParameterError("family", family, "a family name, a Calibration, or a builder with a start")
    return _builder(family, request, start, name or "custom", parameter_name)


def _within_margins(family: Any, request: Request, margins: Sequence[float],
                    finish: Callable[[Mechanism], Mechanism | None] | None, **options: Any) -> CalibratedDesign:
    """:func:`calibrate` at the target tightened by each margin in turn, until ``finish``
    accepts (its docstring)."""
    target = request.target
    for margin in margins:
        got = calibrate(family, request.replace(target=inside(target, margin)), **options)  # type: ignore[arg-type]
        mech = got.mechanism if finish is None else finish(got.mechanism)
        if mech is not None:
            return replace(got, mechanism=mech, margin=margin)
    label = family if isinstance(family, str) else "the family"
    raise DesignError(f"no member of {label} within the margins {list(margins)} of {target.describe()} "  # type: ignore[union-attr]
                      "is accepted")


#: Relative room left under an attack target's TPR and mu when a family is calibrated to it, tried in
#: turn until its exact trade-off curve (rounded up) meets the target itself.
ATTACK_MARGINS = (1e-9, 1e-6, 1e-3)


def inside(target: Target, margin: float) -> Target:
    """``target`` tightened by the relative ``margin``: a pure epsilon, or delta; an attack
    target's TPR and mu (its FPR kept). What meets the result meets ``target``."""
    if target.notion == "attack":
        return Target.attack(max_tpr=None if target.max_tpr is None else target.max_tpr * (1.0 - margin),
                             at_fpr=target.at_fpr, max_mu=None if target.max_mu is None else target.max_mu * (1.0 - margin))
    return Target(target.epsilon * (1.0 - margin) if target.pure else target.epsilon,  # type: ignore[operator]
                  target.delta * (1.0 - margin), target.notion)


def _on_domain(family: str | Calibration, request: Request, screen: Callable[[Any], bool] | None) -> CalibratedDesign:
    """A registered family on ``{0..n}`` (cyclic noise, categories or a channel); an attack
    target by the same search on its float trade-off curve, a little inside the target, until the
    exact curve meets the target itself (the float curve may miss it by round-off)."""
    t = request.target
    if t.notion != "attack":  # type: ignore[union-attr]
        return _on_domain_at(family, request, screen)
    for margin in ATTACK_MARGINS:
        got = _on_domain_at(family, request.replace(target=inside(t, margin)), None)  # type: ignore[arg-type]
        if got.mechanism.meets(t, exact=True):  # type: ignore[arg-type]
            mech = got.mechanism
            return CalibratedDesign(got.family, got.parameter, got.parameter_name,
                                    Mechanism(mech.pmf, mech.neighbourhood, t, mech.name, mech.origin), got.boundary)
    raise DesignError(f"no member of {family if isinstance(family, str) else 'the family'} meets {t.describe()} "  # type: ignore[union-attr]
                      "on its exact trade-off curve")


def _on_domain_at(family: str | Calibration, request: Request,
                  screen: Callable[[Any], bool] | None) -> CalibratedDesign:
    """:func:`_on_domain` for a target the one rule answers directly."""
    label = family if isinstance(family, str) else "custom"
    boundary = request.boundary or "modulo"
    n = request.largest
    if isinstance(family, str):
        x = calibrate_registered(family, n, request.target, request.neighbours, boundary,  # type: ignore[arg-type]
                                 screen=screen)
        cal = calibration_of(family)
    else:
        cal = family
        x = boundary_search(cal, n, lambda v: privacy_profile(cal.build(v, n, boundary), request.neighbours)
                            .meets(request.target), more_private_ok=True)  # type: ignore[arg-type]
    rep = cal.build(x, n, boundary)
    if isinstance(request.neighbours, InputPairs) and isinstance(rep, CyclicPMF):
        rep = cyclic_to_channel(rep)   # cyclic noise under input pairs: analysed (and released) as its channel
    mech = Mechanism(rep, request.neighbours, request.target, f"{label}({cal.parameter}={x:.6g})")
    return CalibratedDesign(label, x, cal.parameter, mech, request.boundary)


def _line(family: str | Calibration, request: Request) -> CalibratedDesign:
    """An integer-line family meeting the target under the request's distances.

    The geometric mechanism with a pure target is the closed form ``alpha = e^(-eps / D)``
    with ``D`` the largest distance (Ghosh et al. 2009: the privacy loss of a shift by ``mu``
    is ``|mu| ln(1/alpha)``); otherwise the parameter is searched with the float profile and
    the one "meets" rule, with the room of :data:`CALIBRATION_MARGINS` under the target that
    the quantized weights need: quantizing the window to integer weights moves delta by about
    ``sqrt(cells) 2^-36`` (absolute), which a family calibrated on the boundary loses, and
    the integer-line quantizer has no mixing to win it back. The room grows until the
    quantized weights meet the target exactly (what is released is what is certified); the
    exact check of whoever releases it decides.
    """
    if not isinstance(family, str):
        raise InvalidParameterError("family", family, "a registered integer-line family name")
    if get_family(family).space != "integer":
        raise InvalidParameterError("family", family, "a family of noise on the integer line (geometric, "
                                    "discrete-gaussian) on the integer line")
    target, nb = request.target, request.neighbours
    largest = max(abs(int(x)) for x in nb.integer_shifts())  # type: ignore[union-attr]
    if family == "staircase":
        return _staircase(request, largest)
    cal = calibration_of(family)

    def build(x: float) -> IntegerPMF:
        return parse_family(f"{family}:{x!r}")[1]  # type: ignore[return-value]

    if family == "geometric" and target.pure:  # type: ignore[union-attr]
        x = alpha_for_epsilon(target.epsilon, largest)  # type: ignore[union-attr]
        pmf = build(x)
    else:
        for margin in CALIBRATION_MARGINS:
            x = _line_edge(cal, largest, build, nb, inside(target, margin))  # type: ignore[arg-type]
            pmf = build(x)
            try:
                Mechanism(coarse_tails(pmf)[0], nb, target).quantize()
                break
            except OptnoiseError:
                continue
    mech = Mechanism(pmf, nb, target, f"{family}({cal.parameter}={x:.6g})")
    return CalibratedDesign(family, x, cal.parameter, mech, request.boundary)


def _staircase(request: Request, largest: int) -> CalibratedDesign:
    """Geng & Viswanath's discrete staircase ``P_r`` for a pure target (2016, (82)-(83)): pure
    ``eps``-DP for the sensitivity ``D`` = the largest distance, with ``r = r*`` of Theorem 13
    (the least ``E|eta|`` of all pure eps-DP noise on the integers): a closed form, like the
    geometric's. Whoever releases it certifies its quantized weights exactly."""
    from ..families.staircase import discrete_staircase_pmf, r_star
    target = request.target
    if not target.pure:  # type: ignore[union-attr]
        raise InvalidParameterError("target", target.describe(), "a pure target for the discrete staircase "  # type: ignore
                                    "(eps-DP by construction)")
    eps = float(target.epsilon)  # type: ignore[union-attr]
    r = r_star(eps, largest, "abs").r
    pmf = discrete_staircase_pmf(eps, largest, r)
    mech = Mechanism(pmf, request.neighbours, target, f"staircase P_r, D = {largest}")
    return CalibratedDesign("staircase", eps, "epsilon", mech, request.boundary, member={"r": r})


def _line_edge(cal: Calibration, largest: int, build: Callable[[float], IntegerPMF], nb: Neighbourhood,
               target: Target) -> float:
    """The least private parameter whose noise meets ``target`` under every shift of ``nb``,
    searched first under the largest shifts alone.

    Why this is the same edge (up to the search's tolerance): the largest shifts are a subset
    of ``nb``'s, so every parameter that meets the target under ``nb`` meets it under them
    (``meets`` is a bound over pairs; fewer pairs, smaller worst case). The edge found under
    the largest shifts is therefore at least as far towards "less private" as the edge
    under ``nb``; when the whole neighbourhood meets the target there too, it *is* the edge
    under ``nb``. Otherwise (a smaller shift is worse at that point) the search runs again
    under every shift. No monotonicity in the shift is assumed; it only makes the first
    search the one that answers (a bounded-difference column of ``U`` distances then costs
    one search over 2 shifts instead of ``2U``: issue 23, item 4c).
    """
    def meets(pairs: Neighbourhood) -> Callable[[float], bool]:
        return lambda v: privacy_profile(build(v), pairs).meets(target)

    shifts = nb.integer_shifts()
    extreme = Neighbourhood(tuple(s for s in shifts if abs(s) == largest), directed=True)
    if len(extreme.integer_shifts()) == len(shifts):
        return boundary_search(cal, largest, meets(nb), more_private_ok=True)
    x = boundary_search(cal, largest, meets(extreme), more_private_ok=True)
    if meets(nb)(x):
        return x
    return boundary_search(cal, largest, meets(nb), more_private_ok=True)


def _builder(build: Callable[[float], Representation], request: Request, start: float, name: str,
             parameter_name: str) -> CalibratedDesign:
    """Largest parameter ``s`` whose PMF meets the request: its target after ``releases`` K
    (the K-fold composition certified by :func:`~optnoise.analysis.composition.compose_best`:
    exact enumeration, PLD, RDP and pure bounds) or, for one release, by the one rule.
    Bisection on ``log s``, from ``start`` (doubling while it passes) to a relative width of
    ``1e-4`` or 40 further checks."""
    from ..analysis.composition import compose_best
    target, nb, k = request.target, request.neighbours, request.releases

    def check(s: float) -> tuple[bool, tuple[Representation, Any]]:
        pmf = build(s)
        profile = privacy_profile(pmf, nb)
        if k == 1 and target.notion != "dp":  # type: ignore[union-attr]
            return profile.meets(target), (pmf, None)  # type: ignore[arg-type]
        comp = compose_best([(profile, int(k))], delta=target.delta,  # type: ignore[union-attr]
                            methods=("exact", "pld", "rdp", "pure"))
        return comp.epsilon_dp <= target.epsilon, (pmf, comp)  # type: ignore[union-attr, operator]

    found = largest_passing(check, start, retreat=START_RETREATS, regrow=True, doublings=None, rel_tol=1e-4,
                            budget=40)
    if found is None:
        raise DesignError(f"calibration start {float(start):.12g} does not meet the target")
    pmf, comp = found.payload
    mech = Mechanism(pmf, nb, None if k > 1 else target, name)
    return CalibratedDesign(name, found.value, parameter_name, mech, None, comp)


__all__ = ["ATTACK_MARGINS", "CALIBRATION_MARGINS", "CalibratedDesign", "START_RETREATS", "calibrate", "inside"]
