"""Built-in noise families: one registry, addressable as ``NAME:PARAMS`` (docs/cli.md).

Each :class:`Family` has its parameters, a builder from a spec string and, for the
families that ``compare`` and ``release`` calibrate, a :class:`Calibration`: the one
parameter searched, its range, which direction is more private, and how the family
is used on a finite domain ``{0..n}``. :func:`calibrate` is the one calibration
routine (a monotone search with :func:`optnoise.search.boundary` and the one "meets"
rule :meth:`optnoise.analysis.PrivacyProfile.meets`).

>>> fam, pmf = parse_family("geometric:0.5")
>>> fam.space, round(float(pmf.mass(0)), 6)
('integer', 0.333333)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Literal

from ..analysis import PrivacyProfile, privacy_profile
from ..analysis.renyi import DEFAULT_ORDERS, ZCDP, RenyiReport, renyi_report
from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF, cyclic_to_channel
from ..search import boundary
from ..resources import array_bytes, check
from ..specs import Spec, parse_spec
from ..target import Target
from .baselines import (
    BOUNDARIES, data_independent_pmf, discrete_gaussian_divergence, discrete_gaussian_pmf, exponential_channel, on_domain,
)
from .geometric import alpha_for_epsilon, geometric_pmf
from .qin import qin_exponential_pmf, qin_gaussian_pmf, qin_laplace_pmf, qin_staircase_pmf, qin_uniform_pmf
from .rr import hamming_channel, hamming_neighbours, rr_pmf
from .staircase import discrete_staircase_pmf

Representation = CyclicPMF | IntegerPMF | Channel


@dataclass(frozen=True)
class ChannelFamily:
    """A channel family's mechanism together with its own neighbouring input pairs."""

    channel: Channel
    pairs: InputPairs
    inputs: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Calibration:
    """How a family is calibrated on ``{0..n}``.

    ``build(parameter, n, boundary)`` gives the mechanism on the domain; the parameter
    lies in ``[lower, upper(n)]``; ``more_private`` says in which direction of the
    parameter the mechanism gets more private (more noise).
    """

    parameter: str
    lower: float
    upper: Callable[[int], float]
    more_private: Literal["larger", "smaller"]
    build: Callable[[float, int, str], CyclicPMF | Channel]


@dataclass(frozen=True)
class Family:
    """A named family: its parameters, a description, a builder and its calibration."""

    name: str
    params: str
    space: str
    description: str
    build: Callable[[Spec], "Representation | ChannelFamily"]
    n_params: tuple[int, int]
    calibration: Calibration | None = None
    renyi: Callable[[Spec, tuple[int, ...], tuple[float, ...]], RenyiReport | None] | None = None
    #: Number of masses the builder allocates, from the spec (checked before building).
    size: Callable[[Spec], float] | None = None

    def to_json(self) -> dict:
        out = {"name": self.name, "params": self.params, "space": self.space, "description": self.description}
        if self.calibration is not None:
            out["calibrated_parameter"] = self.calibration.parameter
        return out


def _num(spec: Spec, i: int, what: str, default: float | None = None) -> float:
    return spec.number(i, parameter="family", accepted=f"{spec.name} with a numeric {what}", default=default)


def _int(spec: Spec, i: int, what: str) -> int:
    return spec.integer(i, parameter="family", accepted=f"{spec.name} with an integer {what}")


def _hamming(spec: Spec) -> ChannelFamily:
    m, n, k = _int(spec, 0, "M"), _int(spec, 1, "N"), _num(spec, 2, "K")
    if m < 1 or n < 1 or (m + 1) ** n > 4096:
        raise InvalidParameterError("family", spec.text, "hamming:M,N,K with M >= 1, N >= 1 and (M+1)^N <= 4096")
    if not k >= 0:
        raise InvalidParameterError("family", spec.text, "hamming:M,N,K with K >= 0")
    matrix, dbs = hamming_channel(m, n, k)
    return ChannelFamily(Channel(matrix), InputPairs(tuple(hamming_neighbours(dbs)), directed=True), tuple(dbs))


def _exponential(spec: Spec) -> Channel:
    n = _int(spec, 0, "N")
    if n < 1 or n > 4095:
        raise InvalidParameterError("family", spec.text, "exponential:N,BETA with 1 <= N <= 4095")
    return exponential_channel(n, _num(spec, 1, "BETA"))


def _discrete_gaussian_renyi(spec: Spec, shifts: tuple[int, ...], orders: tuple[float, ...]) -> RenyiReport | None:
    """The discrete Gaussian on Z in closed form (:func:`~.baselines.discrete_gaussian_divergence`);
    ``None`` for a non-integer centre ``MU`` (the shift invariance the closed form uses is lost)."""
    sigma, mu = _num(spec, 0, "SIGMA"), _num(spec, 1, "MU", 0.0)
    if mu != math.floor(mu) or not sigma > 0:
        return None
    values = tuple(max(discrete_gaussian_divergence(sigma, d, a) for d in shifts) for a in orders)
    rho = max(d * d for d in shifts) / (2.0 * sigma * sigma)
    return RenyiReport(orders, values, ZCDP(rho, 1.0, rho),
                       basis="closed form: discrete Gaussian on Z (Canonne, Kamath & Steinke 2020)")
def _size(*terms: Callable[[list[float]], float]) -> Callable[[Spec], float]:
    """A family's window size from its numeric parameters (0 when they do not parse: the
    builder then reports them)."""
    def size(spec: Spec) -> float:
        try:
            values = [float(p) for p in spec.params]
            total = sum(t(values) for t in terms)
        except (ValueError, IndexError, OverflowError):
            return 0.0
        return total if math.isfinite(total) else math.inf
    return size


def _line(make: Callable[[float], IntegerPMF]) -> Callable[[float, int, str], CyclicPMF | Channel]:
    return lambda x, n, boundary: on_domain(make(x), n, boundary)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("geometric", "ALPHA", "integer",
           "two-sided geometric, p(k) proportional to ALPHA^|k| (Ghosh et al. 2009); "
           "eps = -ln(ALPHA) per unit of sensitivity",
           lambda s: geometric_pmf(_num(s, 0, "ALPHA")), (1, 1),
           Calibration("alpha", 1e-9, lambda n: 1.0 - 1e-12, "larger", _line(geometric_pmf))),
    Family("discrete-gaussian", "SIGMA[,MU]", "integer",
           "discrete Gaussian (Canonne, Kamath, Steinke 2020), p(k) proportional to exp(-(k-MU)^2 / 2 SIGMA^2)",
           lambda s: discrete_gaussian_pmf(_num(s, 0, "SIGMA"), _num(s, 1, "MU", 0.0)), (1, 2),
           Calibration("sigma", 0.02, lambda n: 1e4, "larger", _line(discrete_gaussian_pmf)),
           renyi=_discrete_gaussian_renyi,
           size=_size(lambda v: 80 * abs(v[0]) + 2 * abs(v[1] if len(v) > 1 else 0.0))),
    Family("exponential", "N,BETA", "channel",
           "exponential mechanism on {0..N} with utility -|q - k|, P(k | q) proportional to exp(-BETA |q - k|) "
           "(McSherry & Talwar; Kadam footnote 6); neighbours from the distance flags, no wrap-around",
           _exponential, (2, 2),
           Calibration("beta", 0.0, lambda n: 60.0, "smaller", lambda x, n, b: exponential_channel(n, x))),
    Family("rr", "K,P", "cyclic",
           "K-ary randomized response as cyclic noise on {0..K-1}: mass 1-(K-1)P at 0 and P elsewhere "
           "(calibrated through RHO = (K-1)P, the probability of reporting another value)",
           lambda s: rr_pmf(_int(s, 0, "K"), _num(s, 1, "P")), (2, 2),
           Calibration("rho", 0.0, lambda n: n / (n + 1), "larger", lambda x, n, b: data_independent_pmf(n, x)),
           size=_size(lambda v: abs(v[0]))),
    Family("staircase", "EPS,D,R", "integer",
           "Geng & Viswanath's discrete staircase P_r (82)-(83): eps-DP for sensitivity D, 1 <= R <= D",
           lambda s: discrete_staircase_pmf(_num(s, 0, "EPS"), _int(s, 1, "D"), _int(s, 2, "R")), (3, 3),
           size=_size(lambda v: 2 * abs(v[1]))),
    Family("qin-gaussian", "SIGMA[,MU]", "integer",
           "Qin et al. (13): Gaussian discretised by (2), p(k) = Phi((k+1-MU)/SIGMA) - Phi((k-MU)/SIGMA)",
           lambda s: qin_gaussian_pmf(_num(s, 0, "SIGMA"), _num(s, 1, "MU", 0.0)), (1, 2),
           size=_size(lambda v: 80 * abs(v[0]))),
    Family("qin-laplace", "LAMBDA[,MU]", "integer",
           "Qin et al.: Laplace with scale LAMBDA discretised by (2) (exact geometric tails)",
           lambda s: qin_laplace_pmf(_num(s, 0, "LAMBDA"), _num(s, 1, "MU", 0.0)), (1, 2)),
    Family("qin-staircase", "A,RHO", "integer",
           "Qin et al. (20): stairs of width A, mass (1-RHO)/(2A) RHO^j on [jA, (j+1)A) and its mirror",
           lambda s: qin_staircase_pmf(_int(s, 0, "A"), _num(s, 1, "RHO")), (2, 2),
           size=_size(lambda v: 2 * abs(v[0]))),
    Family("qin-uniform", "A,B", "integer",
           "Qin et al. (22): uniform on the integers A..B",
           lambda s: qin_uniform_pmf(_int(s, 0, "A"), _int(s, 1, "B")), (2, 2),
           size=_size(lambda v: abs(v[1] - v[0]))),
    Family("qin-exponential", "ETA", "integer",
           "Qin et al. (23) normalised over k = 1, 2, ...: (1 - e^-ETA) e^(-ETA (k-1)) "
           "(as printed it sums to ETA/(e^ETA - 1))",
           lambda s: qin_exponential_pmf(_num(s, 0, "ETA")), (1, 1)),
    Family("hamming", "M,N,K", "channel",
           "Holohan et al.'s exponential mechanism on D^N, |D| = M+1, P(x|d) proportional to exp(-K H(x, d)); "
           "neighbours differ in one row (the neighbourhood flags do not apply)",
           _hamming, (3, 3)),
)}

#: Families calibrated by ``compare`` and ``release``.
CALIBRATED: tuple[str, ...] = tuple(name for name, f in FAMILIES.items() if f.calibration is not None)


def get_family(name: str, *, parameter: str = "family") -> Family:
    """The registered family ``name``."""
    fam = FAMILIES.get(name)
    if fam is None:
        raise InvalidParameterError(parameter, name, "one of " + ", ".join(f"{f.name}:{f.params}" for f in FAMILIES.values()))
    return fam


def parse_family(spec: str, *, max_memory: int | None = None) -> tuple[Family, "Representation | ChannelFamily"]:
    """Build the mechanism of a ``NAME:PARAMS`` specification; a window that would not fit
    ``max_memory`` (:mod:`optnoise.resources`) is refused before it is built."""
    parsed = parse_spec(spec, parameter="family")
    fam = FAMILIES.get(parsed.name)
    if fam is None:
        raise InvalidParameterError("family", spec, "one of " + ", ".join(f"{f.name}:{f.params}" for f in FAMILIES.values()))
    bare = "" if ":" in spec else " (a bare name is calibrated to a target only by release, on its column's domain)"
    parsed.count(*fam.n_params, parameter="family", accepted=f"{fam.name}:{fam.params}{bare}")
    if fam.size is not None:
        cells = fam.size(parsed)
        check(array_bytes(cells, 8, copies=12), parameter="family", value=spec,
              what=f"a window of {cells:.3g} masses", max_memory=max_memory)
    try:
        return fam, fam.build(parsed)
    except InvalidParameterError as exc:
        if exc.parameter == "family":
            raise
        raise InvalidParameterError("family", spec, f"{fam.name}:{fam.params} with {exc.parameter} "
                                                    f"{exc.accepted}") from exc


def calibration_of(name: str) -> Calibration:
    """The :class:`Calibration` of a calibrated family."""
    fam = get_family(name, parameter="mechanisms")
    if fam.calibration is None:
        raise InvalidParameterError("mechanisms", name, ", ".join(CALIBRATED))
    return fam.calibration


def build_on_domain(name: str, parameter: float, n: int, boundary: str = "modulo") -> CyclicPMF | Channel:
    """The calibrated family ``name`` with its parameter, on ``{0..n}``."""
    if boundary not in BOUNDARIES:
        raise InvalidParameterError("boundary", boundary, ", ".join(BOUNDARIES))
    return calibration_of(name).build(parameter, n, boundary)


def calibrate(name: str, n: int, target: Target, neighbourhood: Neighbourhood | InputPairs,
              boundary: str = "modulo", *, screen: Callable[[CyclicPMF | Channel], bool] | None = None) -> float:
    """The least-noisy parameter of family ``name`` on ``{0..n}`` that meets ``target``.

    A monotone search over the family's range (more noise is more private) with the
    one "meets" rule; the result always meets the target. Under input pairs (a
    neighbourhood of channels) a cyclic noise is analysed as its channel.

    ``screen`` (optional) is a faster predicate on the built mechanism that should agree
    with the rule (e.g. a vectorised check of many input pairs): the search runs on it and
    the rule confirms the result; if the rule disagrees there, a second search with the
    rule alone runs on the more private side of that point, so the result still meets the
    target by the rule.
    """
    cal = calibration_of(name)

    def build(x: float) -> CyclicPMF | Channel:
        mech = build_on_domain(name, x, n, boundary)
        return cyclic_to_channel(mech) if isinstance(neighbourhood, InputPairs) and isinstance(mech, CyclicPMF) \
            else mech

    def meets(x: float) -> bool:
        return privacy_profile(build(x), neighbourhood).meets(target)

    if screen is None:
        return boundary_search(cal, n, meets, more_private_ok=True)
    x = boundary_search(cal, n, lambda v: screen(build(v)), more_private_ok=True)
    if meets(x):
        return x
    larger = cal.more_private == "larger"
    return boundary(meets, x if larger else cal.lower, cal.upper(n) if larger else x,
                    ok_side="upper" if larger else "lower")


def boundary_search(cal: Calibration, n: int, ok: Callable[[float], bool], *, more_private_ok: bool) -> float:
    """The edge of ``ok`` over the family's range. ``more_private_ok``: ``ok`` holds on the
    more private side (a privacy target); otherwise on the less private side (a cost bound)."""
    upper_ok = (cal.more_private == "larger") == more_private_ok
    return boundary(ok, cal.lower, cal.upper(n), ok_side="upper" if upper_ok else "lower")


REPRESENTED_NOTE = (
    "renyi: the family on all of Z, in closed form; renyi_represented: the masses as represented, a finite "
    "window (what is quantized and sampled), whose Rényi divergence of order > 1 is infinite (its edge faces "
    "zeros). For the sampled noise optnoise certifies the exact (epsilon, delta) profile of its weights and, for "
    "repeated releases, the PLD composition of its masses")


def renyi_analysis(profile: PrivacyProfile, orders: Iterable[float] = DEFAULT_ORDERS, *,
                   family: str | None = None) -> RenyiReport:
    """Rényi curve and zCDP ``rho`` of a mechanism, in closed form for a family that has one.

    Without ``family`` (or for a family without a closed form) this is
    :func:`optnoise.analysis.renyi.renyi_report` of ``profile``: exact on the loss
    distributions of the masses as represented. For the discrete Gaussian the represented
    masses are a finite window whose edge faces zeros beyond it, so every order ``> 1``
    would be infinite although the family on Z has ``D_alpha <= alpha D^2 / (2 sigma^2)``;
    the closed form is reported under ``renyi`` and the window's curve beside it
    (``renyi_represented``), with a note on what is certified for the sampled noise.
    """
    generic = renyi_report(profile, orders)
    if family is None:
        return generic
    parsed = parse_spec(family, parameter="family")   # the family's masses are not built again
    fam = get_family(parsed.name)
    nb = profile.neighbourhood
    if fam.renyi is None or not isinstance(nb, Neighbourhood):
        return generic
    closed = fam.renyi(parsed, tuple(abs(int(s)) for s in nb.integer_shifts()), generic.orders)
    if closed is None:
        return generic
    return replace(closed, represented=generic.epsilons, note=REPRESENTED_NOTE)


__all__ = ["CALIBRATED", "Calibration", "ChannelFamily", "FAMILIES", "Family", "alpha_for_epsilon",
           "boundary_search", "build_on_domain", "calibrate", "calibration_of", "geometric_pmf", "get_family",
           "parse_family", "renyi_analysis", "rr_pmf"]
