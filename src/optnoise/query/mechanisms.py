"""Each statistic's mechanism, chosen without looking at the data and built through a ``Request``.

One released value (a *cell*: a count, a histogram cell, a group's sum, a group's peak) is
privatized by one mechanism certified under the cell's derived neighbourhood
(:mod:`.neighbourhood`); a statistic whose unit moves ``k`` cells gives each cell the target
``(epsilon / k, delta / k)`` and its guarantee is their composition (basic composition of
the cells' exact certificates, rounded up; the record's total composes them again, with
PLD, as ``release`` does).

**Counts and sums** (answers in ``offset + {0..n}``): the output stays inside the domain,
non-negative and integer.

* ``optimal`` (default): the optimal channel on ``{0..n}`` for the released value's absolute
  error (:func:`optnoise.design.design`, ``space="channel"``) where it fits
  (:func:`channel_fits`): the LP with its proven gap, above ``n = 100`` the
  geometric-plus-remap channel (pure DP, distance 1) or the band LP (approximate DP); beyond
  that the best calibrated clamped family -- at distance 1 under pure DP up to ``n = 20,000``
  replaced by the same optimal channel stored as the geometric noise with a remap where the
  remap moves an output and lowers the average error (:func:`remap_or`);
* ``clamped-geometric`` / ``clamped-discrete-gaussian``: the family calibrated to the cell's
  target under the cell's distances (:func:`optnoise.design.calibrate`), its output clamped to
  the domain -- post-processing, so its certificate (the noise's) stands for approximate DP;
  a PDP target needs the channel.

**Unbiased counts and sums** (``unbiased = true``, :func:`unbiased_cell`): no channel inside the
domain is unbiased under a useful target (docs/proofs/unbiased-counts.md), so the output is
``q + eta`` on the integers, ``eta`` exactly symmetric (:mod:`.unbiased`): the two-sided
geometric (Ghosh et al. 2009; the optimal additive noise for absolute error at distance 1,
Geng & Viswanath), for ``delta > 0`` the discrete Gaussian instead where its ``E|eta|`` is
smaller; at distances 2..MAX_EXACT_DISTANCE Geng & Viswanath's discrete staircase (optimal
there), beyond that the chained geometric. The released value may be negative or
above ``n``. The cell keeps the default (bounded) mechanism at the same target in
``bounded``: the price of unbiasedness is read against it.

**Peaks and modes** (answer-noise: the papers' model): a key in ``{0..K-1}``; one unit can
move the argmax to *any* key, so the neighbourhood is every shift: cyclic noise on the keys
(``unit="record"``: every shift; cost ``circular-abs``) for integer keys, optimal randomized
response for text keys. ``report-noisy-max`` is in :mod:`.noisy_max`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable

import numpy as np

from ..analysis.abs_error import AbsError
from ..design import Request, design
from ..design.calibrate import calibrate
from ..design.standin import dominating_rr
from ..errors import DesignError, InvalidParameterError, ResourceLimitError, TimeLimitError
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..randomness import RandomSource
from ..sampling.integer_line import coarse_tails
from ..sampling.quantize import integer_line_form
from ..target import Target
from .statistic import Statistic
from .unbiased import symmetric_noise

#: The optimal channel is designed up to this domain for distance 1 under pure DP (the
#: geometric-plus-remap channel: about 0.5 s at n = 1,400 on the development machine) ...
CHANNEL_MAX_N = 2_000
#: ... and up to this many (domain x distance) otherwise (the LP).
CHANNEL_MAX_WORK = 2_000
#: Above this (:func:`remap_work`) the query keeps the clamped geometric rather than design the
#: remap: about 3 s at n = 20,000, eps = 0.05 (load 6); n = 10,000 at eps = 0.02 is above it.
REMAP_MAX_WORK = 50_000_000
#: Largest distance certified exactly for an approximate-DP target on the line.
MAX_EXACT_DISTANCE = 64
#: An unbiased cell with a PDP target is pure at ``eps (1 - PDP_MARGIN)`` (:func:`unbiased_cell`).
PDP_MARGIN = 1e-6
#: A clamped cell takes the staircase where its float ``E|eta|`` is this many times below the
#: geometric's (:func:`_least_line_noise`).
STAIRCASE_GAIN = 1.01
#: Relative room under a chained cell's target that rounding the weights may use.
CHAIN_MARGINS = (1e-6, 1e-4, 1e-3, 1e-2)


def cell_target(target: Target, cells: int) -> Target:
    """A cell's share of the statistic's target when one unit moves ``cells`` cells."""
    return target if cells == 1 else Target(target.epsilon / cells, target.delta / cells, target.notion)


def channel_fits(n: int, distance: int, target: Target) -> bool:
    """Whether the optimal channel is designed for ``{0..n}`` and the distances ``1..distance``."""
    if distance == 1 and target.pure:
        return n <= CHANNEL_MAX_N
    return n * distance <= CHANNEL_MAX_WORK


@dataclass(frozen=True, eq=False)
class Cell:
    """The certified mechanism of one released value of a statistic.

    ``noise`` is what is sampled (with the cell's neighbourhood; ``noise.quantize()`` is what
    is drawn). ``mechanism`` is what the unit's total composes (:mod:`optnoise.publish.accountant`,
    with ``epsilon_delta``): the noise itself, or, where
    the certificate is a proven pure-DP bound rather than the exact profile under the cell's
    distances (``chained``; report-noisy-max), binary randomized response certified at no less
    than that bound -- it dominates every mechanism with that pure epsilon (Kairouz, Oh &
    Viswanath 2015, Thm 2.2), so composing it is a valid bound. ``offset`` + index is the
    released value in answer units. ``space`` ``"line"``: an unbiased cell, released on the
    integers (no clamp); ``bounded`` then holds the default mechanism at the same target.
    """

    name: str
    noise: Mechanism
    space: str
    n: int
    offset: int
    built: str
    design: dict = field(default_factory=dict)
    chained: int = 1
    standin: Mechanism | None = None
    target: Target | None = None
    bounded: Cell | None = None

    @property
    def mechanism(self) -> Mechanism:
        return self.standin if self.standin is not None else self.noise

    @property
    def epsilon_delta(self) -> tuple[float, float]:
        t = self.target or self.noise.target
        return (t.epsilon, t.delta) if t is not None else (self.epsilon_pure, 0.0)

    @cached_property
    def epsilon_pure(self) -> float:
        """The cell's proven pure epsilon under its derived distances: ``chained`` times the
        certified epsilon, multiplied exactly (a :class:`~fractions.Fraction`) and rounded up
        -- the same float as the sum of ``chained`` copies, without 2,400 Fraction additions.

        Proof: docs/proofs/l1-chaining.md
        """
        from fractions import Fraction

        from ..analysis.outward import sum_up
        eps = self.noise.quantize().certificate.epsilon_pure
        return sum_up([Fraction(eps) * self.chained if math.isfinite(eps) else eps])

    def composition_profile(self):
        """The exact profile the unit's total composes: of the quantized weights that are
        sampled (or of the stand-in), computed on the integer weights directly
        (:func:`optnoise.analysis.exact_profile`; no Fraction matrix is built). Computed once
        per cell: the unit's total and a ledger's charge read the same cells."""
        return self.kept_profile

    @cached_property
    def kept_profile(self):
        """:meth:`composition_profile`, kept."""
        from ..analysis import IntegerForm, exact_profile, privacy_profile
        m = self.mechanism
        q = m.quantize()
        if m.kind in ("channel", "cyclic"):
            return exact_profile(IntegerForm(m.kind, q.weights, 1 << q.bits), q.neighbourhood)
        return privacy_profile(q.pmf, m.neighbourhood, exact=True)

    def certificate_json(self) -> dict:
        """The exact certificate of the quantized noise, and under the cell's distances."""
        q = self.noise.quantize()
        cert = {**q.certificate.to_json(point=False), "neighbourhood": q.neighbourhood.describe()}
        if self.chained == 1:
            return cert
        return {"epsilon_pure": self.epsilon_pure, "delta": 0.0, "exact": True,
                "distance_1": cert,
                "method": f"exact certificate at distance 1, times the distance {self.chained} (pure DP chains: "
                          "P[y|q] <= e^eps1 P[y|q+1] <= ... ; tight for the geometric), rounded up"}

    def release(self, index: np.ndarray, source: RandomSource) -> np.ndarray:
        """Privatize true answers given as indices ``0..n``: the released indices."""
        out = np.asarray(self.noise.apply(np.asarray(index, dtype=np.int64), source=source), dtype=np.int64)
        if self.space == "clamped-line":
            np.clip(out, 0, self.n, out=out)   # post-processing (module docstring)
        return out

    def to_json(self) -> dict:
        m = self.noise
        return {"name": m.name, "kind": m.kind, "space": self.space, "built": self.built, "domain": [0, self.n],
                "offset": self.offset, "output": "the integers (may be negative or above the domain)"
                if self.space == "line" else "the domain", "cell_neighbourhood": m.neighbourhood.describe(),
                "cell_target": None if self.epsilon_delta is None else
                {"epsilon": self.epsilon_delta[0], "delta": self.epsilon_delta[1]}, **self.design}


def _report(found: Any) -> dict:
    r = found.report
    out = {"method": r.method}
    for key in ("optimal", "lower_bound", "gap"):
        value = getattr(r, key, None)
        if value is not None:
            out[key] = value
    return out


def count_cell(name: str, n: int, offset: int, distance: int, target: Target, choice: str = "optimal", *,
               gap: bool = True) -> Cell:
    """The mechanism of a count or a sum cell on ``offset + {0..n}`` whose answer moves by
    at most ``distance`` (module docstring); ``gap=False`` leaves out the calibrated geometric's
    proven distance from the best channel (a report only: seconds at a large ``n``)."""
    nb = Neighbourhood.bd(distance)
    if choice == "optimal" and channel_fits(n, distance, target):
        try:
            found = design(Request(space="channel", n=n, target=target, neighbourhood=nb, cost="abs-error"))
            return Cell(name, found.mechanism, "channel", n, offset,
                        "optimal channel on the domain (released value's absolute error, uniform prior)",
                        _report(found))
        except (DesignError, ResourceLimitError, TimeLimitError):   # too slow for this n x distance: a family
            pass
    if target.notion != "dp":
        raise InvalidParameterError("notion", target.notion, f"'dp' for a domain of {n + 1} values (a PDP target "
                                    "needs the optimal channel, designed up to n * distance = "
                                    f"{CHANNEL_MAX_WORK}; clamping is not post-processing under PDP)")
    if distance > 1 and choice != "clamped-discrete-gaussian":   # pure DP meets any (eps, delta) target
        return _least_line_noise(name, n, offset, distance, target, choice)
    if distance > MAX_EXACT_DISTANCE:
        raise InvalidParameterError("delta", target.delta, f"no delta (a pure target) for a cell that one unit moves "
                                    f"by {distance} > {MAX_EXACT_DISTANCE}, or a coarser resolution / smaller clamp")
    families = {"clamped-geometric": ("geometric",), "clamped-discrete-gaussian": ("discrete-gaussian",)}.get(
        choice, ("geometric",) if target.pure else ("geometric", "discrete-gaussian"))
    _, fam, found, _ = min(family_designs(target, nb, families, n), key=lambda e: e[0])
    mech, note = coarse(found.mechanism)   # tails whose ratio the exact certificate can carry (as release does)
    mech.quantize()   # certified exactly now, refused here if it cannot be
    remap = choice == "optimal" and remap_fits(n, distance, target)
    why = "" if choice != "optimal" or remap else \
        f" (the optimal channel is designed up to n * distance = {CHANNEL_MAX_WORK})"
    from ..design.large_channel import proven_gap   # E|y - q| above the best channel's (issue 23)
    bound = proven_gap(mech.pmf, n, target.epsilon) if gap and fam == "geometric" and target.pure and distance == 1 \
        else {}
    cell = Cell(name, mech, "clamped-line", n, offset, f"calibrated {fam} noise, output clamped to the domain{why}"
                + (f"; {note}" if note else ""), {**_report(found), **bound})
    return remap_or(cell, target) if remap else cell


def remap_fits(n: int, distance: int, target: Target) -> bool:
    """Whether the optimal channel beyond :func:`channel_fits` is designed as the geometric noise
    with a remap (:mod:`optnoise.design.remap_design`): pure DP, distance 1, ``COMPACT_FROM < n <=
    LARGE_FROM``."""
    from ..design.large_channel import LARGE_FROM
    from ..design.remap_design import COMPACT_FROM
    return distance == 1 and target.pure and target.notion == "dp" and COMPACT_FROM < n <= LARGE_FROM


def clamped_errors(noise: Mechanism, n: int) -> AbsError:
    """``E|released - q|`` per true value ``q`` of noise on the integer line released on ``{0..n}``:
    clamped, then remapped where the noise has a release
    (:func:`~optnoise.analysis.abs_error.remapped_abs_error`), from the quantized weights that are
    sampled (a float accuracy figure)."""
    from ..analysis.abs_error import additive_abs_error, remapped_abs_error
    q = noise.quantize()
    form = integer_line_form(q.weights, q.lo, q.left, q.right)
    r = noise.release
    return additive_abs_error(form, n, output="clamped") if r is None else \
        remapped_abs_error(form, n, r.outputs, r.values)


def remap_work(n: int, epsilon: float) -> int:
    """About the number of weights the geometric-plus-remap design sums over, ``(n + 1) (2 W + 1)``
    (:func:`~optnoise.design.geometric_remap.design_width` at ``alpha = e^-eps``, uniform prior,
    absolute error): its time grows with it."""
    from ..design.geometric_remap import design_width
    width, _ = design_width(n, math.exp(-epsilon), 1.0 / (n + 1), float(n))
    return (n + 1) * (2 * width + 1)


def remap_or(clamped: Cell, target: Target) -> Cell:
    """The optimal channel for neighbours one apart (Ghosh, Roughgarden & Sundararajan 2012: the
    geometric noise, clamped, then the best remap for the released value's absolute error under
    the uniform prior; :func:`~optnoise.design.remap_design.solve_remap_channel`, its gap proven)
    in place of the calibrated clamped geometric ``clamped``, where its remap moves an output and
    its average ``E|released - q|`` over a uniform true value is below the clamped geometric's
    (both from the quantized weights, :func:`clamped_errors`); otherwise ``clamped``, the same
    mechanism, its description saying why. Tried up to :data:`REMAP_MAX_WORK` (:func:`remap_work`).

    Proof: docs/proofs/geometric-remap.md (claim 3: the noise's certificate is the released value's)
    """
    n = clamped.n
    work = remap_work(n, target.epsilon)
    if work > REMAP_MAX_WORK:
        return _kept(clamped, f"the optimal channel (geometric noise with a remap) is not designed here: its windows "
                              f"would sum {work:.3g} weights, above {REMAP_MAX_WORK:.3g} (seconds per cell)")
    try:
        found = design(Request(space="channel", n=n, target=target, neighbourhood=Neighbourhood.bd(1),
                               cost="abs-error"))
    except (DesignError, ResourceLimitError, TimeLimitError):
        return _kept(clamped, "the optimal channel (geometric noise with a remap) was not designed here")
    mech = found.mechanism
    if mech.release is None or not mech.release.outputs:
        return _kept(clamped, "the optimal channel's remap (geometric noise with a remap) moves no output here: "
                              f"the clamped geometric kept (the design's gap {found.report.gap:.2g})")
    mech = mech.replace(neighbourhood=Neighbourhood.bd(1))
    mech.quantize()   # certified exactly now, refused here if it cannot be
    before = float(clamped_errors(clamped.noise, n).per_value.mean())
    after = float(clamped_errors(mech, n).per_value.mean())
    if not after < before:
        return _kept(clamped, f"the optimal channel (geometric noise with a remap) is not better here: average "
                              f"E|released - true| {after:.6g} against {before:.6g}")
    moved = len(mech.release.outputs)
    return Cell(clamped.name, mech, "clamped-line", n, clamped.offset,
                f"optimal channel on the domain (released value's absolute error, uniform prior): geometric noise "
                f"(alpha = {found.details.solution.alpha:.6g}) clamped to the domain, then {moved} outputs near its "
                f"ends remapped (Ghosh, Roughgarden & Sundararajan); average E|released - true| {after:.6g} against "
                f"{before:.6g} for the calibrated clamped geometric",
                {**_report(found), "remapped_outputs": moved, "average_abs_error": after,
                 "clamped_geometric_average_abs_error": before})


def _kept(clamped: Cell, why: str) -> Cell:
    return replace(clamped, built=f"{clamped.built}; {why}")


def family_designs(target: Target, nb: Neighbourhood, families: tuple[str, ...], n: int | None,
                   shape: Callable[[Mechanism], Mechanism] | None = None) -> list[tuple[float, str, Any, Mechanism]]:
    """``(E|eta|, family, found, noise)`` for each family calibrated to ``target`` under ``nb``:
    on ``{0..n}`` clamped, or (``n=None``) on the integer line; ``noise`` is the found
    mechanism passed through ``shape`` (if given), whose error is taken."""
    out = []
    for fam in families:
        where: dict[str, Any] = {} if n is None else {"n": n, "boundary": "clamp"}
        found = design(Request(space="integer", target=target, neighbourhood=nb, family=fam, **where))
        noise = shape(found.mechanism) if shape else found.mechanism
        out.append((noise_abs(noise), fam, found, noise))
    return out


def unbiased_cell(name: str, n: int, offset: int, distance: int, target: Target) -> Cell:
    """An unbiased count or sum cell (module docstring): exactly symmetric integer noise on the
    line, calibrated to ``target`` under the distances ``1..distance``, with the default
    mechanism at the same target in ``bounded`` for the price (``None`` where none is
    certified: a PDP target beyond the optimal channel's size)."""
    try:
        bounded: Cell | None = count_cell(name, n, offset, distance, target)
    except (InvalidParameterError, DesignError):   # e.g. a PDP target beyond the optimal channel's size
        bounded = None
    if target.notion == "pdp":
        # A pure eps' < eps has privacy loss <= eps' < eps on every output, so it meets
        # (eps, delta)-PDP for every delta; the geometric calibrated to PDP itself has loss
        # exactly eps, which the outward-rounded certificate cannot place below eps.
        target = Target(target.epsilon * (1 - PDP_MARGIN))
    if 1 < distance <= MAX_EXACT_DISTANCE:
        return replace(_staircase(name, n, offset, distance, Target(target.epsilon)), bounded=bounded)
    if distance > 1:
        return replace(_chained_geometric(name, n, offset, distance, target, unbiased=True), bounded=bounded)
    families = ("geometric",) if target.pure else ("geometric", "discrete-gaussian")
    line = target
    _, fam, found, noise = min(family_designs(line, Neighbourhood.bd(1), families, None,
                                              lambda m: symmetric_noise(coarse(m)[0], line)), key=lambda e: e[0])
    note = coarse(found.mechanism)[1]
    return Cell(name, noise, "line", n, offset,
                f"calibrated {fam} noise on the integers, exactly symmetric: unbiased, not clamped (released values "
                "may be negative or above the domain)" + (f"; {note}" if note else ""), _report(found),
                bounded=bounded)


def _least_line_noise(name: str, n: int, offset: int, distance: int, target: Target, choice: str) -> Cell:
    """A clamped cell at ``distance > 1`` under a DP target: the chained geometric, and (default
    ``choice``, distances up to :data:`MAX_EXACT_DISTANCE`) Geng & Viswanath's discrete staircase,
    the one with the smaller ``E|eta|`` (a property of the noise alone, not of the data). The
    staircase's ``E|eta|`` is the least of all pure eps-DP noise on the integers at that
    sensitivity (Theorem 13), so it wins unless its certification margin costs more than that
    (at distance 24 and eps 1: 23.03 against 24.24)."""
    try:
        chained: Cell | None = _chained_geometric(name, n, offset, distance, target)
    except DesignError:   # its rounded weights miss the target at this epsilon: the staircase, if it may
        if choice != "optimal" or distance > MAX_EXACT_DISTANCE:
            raise
        chained = None
    if choice != "optimal" or distance > MAX_EXACT_DISTANCE:
        return chained  # type: ignore[return-value]
    if chained is not None and staircase_gain(target.epsilon, distance) < STAIRCASE_GAIN:
        return chained   # not worth its certificate (small eps per unit of distance: the two nearly agree)
    try:
        stair = _staircase(name, n, offset, distance, Target(target.epsilon), clamped=True)
    except DesignError:
        if chained is None:
            raise
        return chained
    return stair if chained is None else min((chained, stair), key=lambda c: noise_abs(c.noise))


def staircase_gain(epsilon: float, distance: int) -> float:
    """``E|eta|`` of the geometric over the discrete staircase's at ``r*`` (Geng & Viswanath
    2016, Theorem 13), from the families' closed forms (no design)."""
    from ..families.staircase import geometric_cost, r_star
    choice = r_star(epsilon, distance, "abs")
    value = choice.costs[choice.r - 1]
    return geometric_cost(epsilon, distance, "abs") / value if value > 0 else math.inf


def _staircase(name: str, n: int, offset: int, distance: int, target: Target, clamped: bool = False) -> Cell:
    """Geng & Viswanath's discrete staircase ``P_r`` (2016, (82)-(83), ``r*`` of Theorem 13: the
    least ``E|eta|`` of all pure eps-DP noise on the integers for sensitivity ``distance``),
    symmetric, calibrated just below the pure ``target`` (:func:`optnoise.design.calibrate.calibrate`
    within :data:`CHAIN_MARGINS`) and certified exactly under the distances ``1..distance`` on its
    mirrored quantized weights (:func:`.unbiased.symmetric_noise`). ``clamped``: the output
    clamped to the domain (post-processing of the certified noise); otherwise released on the
    integers, unbiased."""
    from ..errors import OptnoiseError
    nb = Neighbourhood.bd(distance)
    where = "output clamped to the domain" if clamped else \
        "on the integers, exactly symmetric: unbiased, not clamped (released values may be negative or above the domain)"

    def mirrored(mech: Mechanism) -> Mechanism | None:
        own = Mechanism(mech.pmf, nb, target, f"staircase P_r, D = {distance}")
        try:
            noise = symmetric_noise(own, target)
        except (DesignError, OptnoiseError):
            return None
        return replace(noise, name=f"staircase P_r, D = {distance}, symmetric") if clamped else noise

    try:
        found = calibrate("staircase", Request(space="integer", target=target, neighbourhood=nb, family="staircase"),
                          margins=CHAIN_MARGINS, finish=mirrored)
    except DesignError:
        raise DesignError(f"no discrete staircase for distance {distance} is certified at {target.describe()}") from None
    r = found.member["r"]
    return Cell(name, found.mechanism, "clamped-line" if clamped else "line", n, offset,
                f"discrete staircase noise (Geng & Viswanath 2016, r = {r}, eps less {found.margin:g}), {where}",
                {"method": "staircase", "r": r})


def coarse(own: Mechanism) -> tuple[Mechanism, str | None]:
    """The mechanism with geometric tails grouped so that the exact certificate and the
    sampler carry them (:func:`~optnoise.sampling.integer_line.coarse_tails`: the same law)."""
    rep, note = coarse_tails(own.pmf)
    return (own if rep is own.pmf else Mechanism(rep, own.neighbourhood, own.target, own.name)), note


def _chained_geometric(name: str, n: int, offset: int, distance: int, target: Target,
                       unbiased: bool = False) -> Cell:
    """The geometric mechanism ``alpha = e^(-eps / distance)`` (Ghosh et al. 2009), certified
    exactly at distance 1 for ``eps / distance`` and chained over the distance (pure DP; the
    geometric's loss is linear in the shift, so the chain is tight:
    docs/proofs/l1-chaining.md), calibrated within :data:`CHAIN_MARGINS` until the chained
    certificate meets ``target``. Its exact profile under every distance up to ``distance``
    would take minutes at a sum's distances. ``unbiased``: on the integer line, its quantized
    weights made exactly symmetric (:mod:`.unbiased`)."""
    space = "line" if unbiased else "clamped-line"
    where = ("on the integers, exactly symmetric: unbiased, not clamped (released values may be negative or "
             "above the domain)") if unbiased else "output clamped to the domain"

    def chained(own: Mechanism) -> Mechanism | None:
        noise = Mechanism(own.pmf, own.neighbourhood, None, own.name)   # quantized by rounding, certified exactly
        if unbiased:   # tails grouped for the sampler (the same law): every draw is unclamped
            noise = symmetric_noise(coarse(noise)[0], None)
        cell = Cell(name, noise, space, n, offset, "", chained=distance, target=target)
        return noise if cell.epsilon_pure <= target.epsilon else None

    step = Target(target.epsilon / distance)
    try:
        found = calibrate("geometric", Request(space="integer", n=n, target=step, neighbourhood=Neighbourhood.sd(1),
                                               family="geometric", boundary="clamp"),
                          margins=CHAIN_MARGINS, finish=chained)
    except DesignError:
        raise DesignError(f"the chained geometric is not certified within {target.epsilon!r}") from None
    cell = Cell(name, found.mechanism, space, n, offset,
                f"geometric noise (alpha = e^(-eps/{distance}) less {found.margin:g}), {where}",
                {"method": found.method}, chained=distance, target=target)
    return replace(cell, standin=dominating_rr(cell.epsilon_pure))


def key_cell(name: str, stat: Statistic, target: Target) -> Cell:
    """Answer-noise for a peak or a mode: every shift of the key (module docstring)."""
    k = stat.keys.size  # type: ignore[union-attr]
    if stat.keys.integer:  # type: ignore[union-attr]
        found = design(Request(space="cyclic", n=k - 1, target=target, unit="record", cost="circular-abs"))
        return Cell(name, found.mechanism, "cyclic", k - 1, 0,
                    "optimal cyclic noise on the keys under every shift (circular absolute error)", _report(found))
    found = design(Request(space="categories", n=k - 1, target=target))
    return Cell(name, found.mechanism, "categories", k - 1, 0, "optimal randomized response on the keys",
                _report(found))


def noise_abs(mechanism: Mechanism) -> float:
    """``E|eta|`` of integer-line noise, tails included (:func:`optnoise.costs.expected_cost`)."""
    from ..costs import expected_cost
    return float(expected_cost(mechanism.pmf, "abs"))  # type: ignore[arg-type]


#: Relative room under ``epsilon / l1`` for the L1 plan's cells, so that ``l1`` times the
#: cell's certificate, rounded up, stays within the statistic's epsilon.
L1_MARGIN = 1e-9


def l1_target(target: Target, l1: int) -> Target:
    """A cell's pure target under the L1 plan: ``epsilon / l1`` (less :data:`L1_MARGIN`),
    ``delta = 0`` whatever the statistic's (chaining needs pure DP; pure meets every ``(eps,
    delta)`` and every PDP target)."""
    return Target(target.epsilon / l1 * (1 - L1_MARGIN))


__all__ = ["CHANNEL_MAX_N", "CHANNEL_MAX_WORK", "Cell", "dominating_rr", "staircase_gain", "cell_target", "channel_fits", "count_cell",
           "clamped_errors", "coarse", "family_designs", "key_cell", "l1_target", "noise_abs", "remap_fits", "remap_or", "remap_work",
           "REMAP_MAX_WORK", "unbiased_cell"]
