"""From a column spec to the certified mechanism that releases it, under the privacy unit.

**The unit.** Each row of a table is one record, released with its own noise. Per record
(the default) a record's value may change to *any* value of its domain, so the
neighbourhood is every distance:

* cyclic noise on ``{0..n}``: ``Neighbourhood.bd(n)`` (symmetric; modulo ``n + 1`` this
  is every non-zero shift);
* a channel on ``{0..n}``: every ordered pair of inputs;
* noise on the integer line for a column bounded by ``lower..upper``:
  ``Neighbourhood.bd(upper - lower)``. Clamping the output to the bounds makes the release
  a finite channel on ``lower..upper``; it is certified as that channel, exactly from the
  quantized weights (:func:`optnoise.sampling.clamp.certify_clamped`): for DP this can
  only tighten the noise's certificate, for PDP (not closed under post-processing) it is
  required, and a target the channel misses is refused (issue 25).

Under the value unit (the papers' model, opt-in) the mechanism keeps its own
neighbourhood: only changes of a value by those distances are protected.

**The check.** Every column's mechanism is rebuilt as ``Mechanism(pmf, unit
neighbourhood, target)``; its float profile must meet the target (the one rule,
:meth:`~optnoise.analysis.PrivacyProfile.meets`), and then :meth:`Mechanism.quantize`
certifies the integer weights that are sampled, exactly, against the same neighbourhood
and target. A mechanism that misses is refused with the epsilon (and delta) it does give
under the unit and the two ways out.

**Building.** A column with only a target gets: the optimal finite design for the unit
on a cyclic domain (:func:`optnoise.design_finite`, circular MSE by default); the
optimal randomized response on categories (:func:`optnoise.design.rr.design_rr`,
Holohan et al. Theorems 8-10); and on an ordered integer domain the geometric mechanism
on the integer line, ``alpha = e^(-eps / (upper - lower))`` (Ghosh et al. 2009), whose
output can be clamped. Cyclic noise on an ordered domain would wrap a value near
``upper`` round to ``lower`` (the error of the *released* value depends on the true value,
which an additive design's cost cannot express), so the integer line is the default
there. A family name alone is calibrated to the target under the unit with the one
monotone search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis import privacy_profile
from ..design import Request, design
from ..design.request import unit_neighbourhood
from ..errors import InvalidParameterError, OptnoiseError, ResourceLimitError
from ..families import get_family
from ..mechanism import Mechanism, from_family
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from ..publish.accountant import Accountant, Parts, composition_items
from ..publish.unit import RECORD
from ..randomness import RandomSource
from ..sampling.clamp import ClampedChannel
from ..sampling.integer_line import coarse_tails
from ..target import Target
from .domain import Domain
from .spec import ColumnSpec

if TYPE_CHECKING:
    import pyarrow as pa

Representation = CyclicPMF | IntegerPMF | Channel

#: How each kind of noise reaches the released value, in words (manifest ``noise``).
NOISE = {"cyclic": "added modulo n + 1 (the domain is a cycle)", "integer": "added on the integer line",
         "channel": "drawn from the channel row of the true value"}


@dataclass(frozen=True, eq=False)
class ColumnPlan:
    """A column ready to release: its domain and the mechanism certified under the unit.

    ``mechanism`` carries the unit's neighbourhood and the column's target (or none), so
    ``mechanism.quantize()`` is exactly what is sampled and certified.
    """

    name: str
    domain: Domain
    mechanism: Mechanism
    unit: str
    built: str
    clamp: bool = False
    mechanism_file: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: The clamped channel actually released (integer-line noise with ``clamp``), certified.
    released: ClampedChannel | None = None

    @property
    def certificate(self):
        """The exact certificate of what is released: the clamped channel's, else the
        quantized mechanism's."""
        return self.released.certificate if self.released is not None else self.mechanism.quantize().certificate

    @property
    def epsilon_delta(self) -> tuple[float, float]:
        """The column's ``(epsilon, delta)`` for basic composition: its certified target, or
        the certificate's pure epsilon when it has none."""
        t = self.mechanism.target
        if t is not None and t.notion != "attack":   # an attack target has no (epsilon, delta) of its own
            return t.epsilon, t.delta  # type: ignore[return-value]
        return self.certificate.epsilon_pure, 0.0

    def composition_profile(self):
        """The exact profile the record's total composes for this column (:func:`released_profile`;
        the core's :class:`~optnoise.publish.part.Part`)."""
        return released_profile(self)

    def privatize(self, values: "pa.Array | pa.ChunkedArray", *, first_row: int, source: RandomSource) -> "pa.Array":
        """Release a batch of raw values (validated; the first bad one raises, naming its row)."""
        idx = self.domain.to_index(values, column=self.name, first_row=first_row)
        out = np.asarray(self.mechanism.apply(idx, source=source))
        if self.clamp:
            np.clip(out, 0, self.domain.n, out=out)
        return self.domain.from_index(out)

    def output(self) -> str:
        """What the released values are, in words."""
        if self.mechanism.kind != "integer":
            return f"values of the domain ({self.domain.describe()})"
        if self.clamp:
            return (f"value + noise clamped to {self.domain.lower}..{self.domain.upper} (post-processing: the "
                    "certificate is that of the clamped channel actually released)")
        return "value + noise, unbounded integers (may leave the domain)"

    def protects(self) -> str:
        """What the column's certificate protects, in words."""
        if self.unit == "record":
            return f"any change of a record's '{self.name}' to another value of its domain ({self.domain.describe()})"
        return (f"changes of '{self.name}' by the distances {self.mechanism.neighbourhood.describe()} only; a larger "
                "change of the value is not covered by this certificate")

    def to_json(self) -> dict:
        from .files import file_sha256
        m = self.mechanism
        q = m.quantize()
        quantized = {k: v for k, v in q.to_json().items() if k not in ("certificate", "target")}   # stated once
        info: dict[str, Any] = {"name": m.name, "kind": m.kind, "noise": NOISE[m.kind], "built": self.built,
                                "neighbourhood": m.neighbourhood.to_json(),
                                "target": None if m.target is None else m.target.to_json(), "quantized": quantized}
        if m.kind == "cyclic":
            info["n"] = q.shape[0] - 1
        if self.mechanism_file is not None:
            info["path"] = self.mechanism_file
            origin = m.origin   # the bytes load_mechanism parsed: the file is not read again
            info["sha256"] = origin.sha256 if origin is not None else file_sha256(self.mechanism_file)
        out = {"domain": self.domain.to_json(), "mechanism": info, "certificate": certified(self.certificate),
               "clamp": self.clamp, "output": self.output(), "protects": self.protects(), "notes": list(self.notes)}
        if self.released is not None:
            out["noise_certificate"] = certified(q.certificate)
        return out


def certified(certificate: Any) -> dict:
    """An exact certificate's values, without the ``epsilon`` and ``delta`` it was evaluated at:
    they are the column's target, written once (``mechanism.target``; issue 33)."""
    return {k: v for k, v in certificate.to_json().items() if k not in ("epsilon", "delta")}


# ------------------------------------------------------------------ the unit
def all_pairs(size: int) -> InputPairs:
    """Every pair of inputs of ``{0..size-1}`` (symmetric): the per-record unit of a channel."""
    return InputPairs.complete(size)


def record_neighbourhood(kind: str, domain: Domain, column: str) -> Neighbourhood | InputPairs:
    """The per-record neighbourhood of noise of ``kind`` on ``domain``: every distance
    (:func:`optnoise.design.request.unit_neighbourhood`)."""
    if kind != "channel" and domain.size is None:
        raise InvalidParameterError("domain", f"column '{column}': all integers",
                                    "lower and upper for a per-record release (every distance up to upper - lower "
                                    "must be protected), or the value unit")
    try:   # a record's value contributes anything of 0..n: the unit's one rule gives every distance
        return unit_neighbourhood(kind, RECORD.distance(0, int(domain.n)))  # type: ignore[arg-type]
    except ResourceLimitError as exc:
        raise _too_large(exc, domain) from exc


def _too_large(exc: ResourceLimitError, domain: Domain) -> ResourceLimitError:
    """A per-record refusal for memory, naming the domain: the domain, not a distance the user
    gave, makes the neighbourhood large."""
    return ResourceLimitError("domain", f"{domain.describe()} ({domain.size} values)",
                              f"a domain small enough to protect per record: every distance up to {domain.n} is "
                              f"protected, and {exc.accepted.split(': ', 1)[-1]}", exc.estimate, exc.limit)


# ------------------------------------------------------------------ building
@dataclass(frozen=True)
class _Source:
    """Where a column's mechanism comes from: the mechanism (with the value unit's
    neighbourhood, or already the record's) and the column's target, how it was obtained
    (manifest ``built``) and, for one optnoise built, its name in the manifest."""

    mechanism: Mechanism
    built: str
    label: str | None = None


def plan_column(col: ColumnSpec, unit: str, *, max_seconds: float | None = None) -> ColumnPlan:
    """Build (or take) the column's mechanism, place it under the unit, and certify it.

    ``max_seconds``: the time its design (a channel LP) and its certificate may be estimated
    to take (:mod:`optnoise.resources`); beyond it the column is refused before it starts.

    Raises
    ------
    InvalidParameterError
        When the mechanism does not fit the domain, or misses its target under the unit
        (the message gives what it does give and the ways out).
    """
    if col.neighbourhood is not None and unit == "record":
        raise InvalidParameterError("distances", col.neighbourhood.to_json()["distances"],
                                    "no neighbourhood with the per-record unit (every distance is protected); "
                                    "use the value unit")
    src = _source(col, unit, max_seconds)
    if src.mechanism.blocks is not None:   # its pmf is the k x k core: the column's domain is the map's answers
        raise InvalidParameterError("mechanism", f"column '{col.name}': a block channel ({src.mechanism.n_answers} "
                                    f"answers on a {src.mechanism.pmf.n_inputs}-row core)",
                                    "a mechanism the release can place on the column's domain: a block channel file is "
                                    "sampled by optnoise sample, not released by a table yet (give the column's "
                                    "epsilon and optnoise designs it)")
    rep = src.mechanism.pmf
    _check_fit(col, rep)
    notes = []
    if isinstance(rep, IntegerPMF):
        rep, note = coarse_tails(rep)
        notes += [note] if note else []
    if col.domain.kind == "numeric" and not col.domain.cyclic and isinstance(rep, CyclicPMF):
        notes.append(f"cyclic noise on an ordered domain: a value near {col.domain.upper} can be released near "
                     f"{col.domain.lower} and the other way round (wrap-around)")
    kind = "cyclic" if isinstance(rep, CyclicPMF) else "integer" if isinstance(rep, IntegerPMF) else "channel"
    own = src.mechanism
    nb = record_neighbourhood(kind, col.domain, col.name) if unit == "record" else own.neighbourhood
    name = src.label or own.name
    same = rep is own.pmf and nb == own.neighbourhood and name == own.name
    mech = own if same else Mechanism(rep, nb, own.target, name, own.origin)
    if isinstance(rep, IntegerPMF) and isinstance(nb, Neighbourhood):
        check_certify_time(col, rep, nb, max_seconds)
    _certify(col, mech, unit)
    released = released_channel(col, mech, unit) if col.clamp and kind == "integer" else None
    if col.clamp and kind == "integer" and released is None:
        notes.append("the clamped channel is too wide to certify exactly: its certificate is the noise's (clamping "
                     "is post-processing, which can only tighten approximate DP)")
    return ColumnPlan(col.name, col.domain, mech, unit, src.built, col.clamp, col.mechanism_file, tuple(notes),
                      released)


def plan_key(col: ColumnSpec, unit: str) -> tuple | None:
    """What a column's plan depends on besides its name: the same (mechanism, unit, target,
    domain...) is planned and certified once for every column that shares it (issue 26:
    300 columns sharing a mechanism file). The mechanism by identity (a spec reads each
    file once); ``None`` when some part cannot be compared (then the column is planned alone)."""
    key = (id(col.mechanism) if col.mechanism is not None else None, col.family, col.target, col.cost, col.clamp,
           col.neighbourhood, col.domain, unit)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def released_channel(col: ColumnSpec, mech: Mechanism, unit: str) -> ClampedChannel | None:
    """The clamped channel of a column, certified exactly under the unit; refused (with its
    numbers) when it misses the column's target. Under the record unit its pairs are every
    pair of ``0..n``; under the value unit the pairs ``q, q + mu`` for the column's distances.
    ``None`` when the domain is too wide for the exact certificate and the target is
    approximate DP, which post-processing cannot break (the noise's certificate stands);
    a PDP target is then refused."""
    from ..sampling.clamp import certify_clamped, clamp_cells, MAX_CELLS
    n = int(col.domain.n)  # type: ignore[arg-type]
    pairs = None if unit == "record" else InputPairs.from_distances(mech.neighbourhood, n + 1)  # type: ignore[arg-type]
    if (n * (n + 1) ** 2 if pairs is None else clamp_cells(n, pairs)) > MAX_CELLS:   # every ordered pair per record
        if mech.target is None or mech.target.notion == "dp":
            return None
        raise InvalidParameterError("clamp", f"clamped to {col.domain.lower}..{col.domain.upper} with a PDP target",
                                    f"a domain narrow enough to certify the clamped channel exactly (PDP is not kept "
                                    f"by post-processing; at most {MAX_CELLS:.3g} cells), or clamp = false")
    got = certify_clamped(mech.quantize(), n, pairs or all_pairs(n + 1), mech.target)
    if not got.meets():
        c, t = got.certificate, mech.target
        gives = (f"pure eps {c.epsilon_pure:.6g}" if t is None or t.pure else
                 f"delta_{t.notion} {c.delta_pdp if t.notion == 'pdp' else c.delta_dp:.6g} at eps {t.epsilon:g}")
        raise InvalidParameterError(
            "clamp", f"clamped to {col.domain.lower}..{col.domain.upper}: {gives}",
            f"a clamped channel meeting {t.describe() if t is not None else 'a finite pure epsilon'} per {unit} "
            f"(the released channel of column '{col.name}' misses it: more noise), or clamp = false (the noise's own "
            "certificate; values may leave the domain)")
    return got


def check_certify_time(col: ColumnSpec, rep: IntegerPMF, nb: Neighbourhood, max_seconds: float | None) -> None:
    """Refuse, before it starts, integer-line noise whose ratio lift and exact certificate
    would take too long (:func:`optnoise.resources.certify_seconds`: the window, extended
    into the tails by up to 2 x 512 cells, against every distance of the unit)."""
    from ..resources import check_time, certify_seconds
    from ..sampling.quantize import MAX_EXTENSION
    shifts = len(nb.integer_shifts())
    cells = (rep.hi - rep.lo + 1) + (2 * MAX_EXTENSION if not rep.finite_support else 0)
    width = f"{col.domain.describe()}" if col.domain.size is not None else "all integers"
    check_time(certify_seconds(cells, shifts, finite_support=rep.finite_support), parameter="domain", value=width,
               what=f"certifying column '{col.name}' exactly ({cells} noise values x {shifts} distances)",
               way_out="a narrower domain, or the value unit (only the mechanism's own distances)",
               max_seconds=max_seconds)


def _source(col: ColumnSpec, unit: str, max_seconds: float | None = None) -> _Source:
    """The column's mechanism: given (a file), a family with its parameters, or built for the
    request the column makes (:func:`_designed`)."""
    d = col.domain
    default_nb = Neighbourhood.bd(d.n) if d.categories is not None else Neighbourhood.sd(1)  # type: ignore[arg-type]
    if col.mechanism is not None:
        m = col.mechanism
        if col.neighbourhood is None and col.target is None:
            return _Source(m, "mechanism file" if col.mechanism_file else "given mechanism")
        return _Source(Mechanism(m.pmf, col.neighbourhood or m.neighbourhood, col.target or m.target, m.name,
                                 m.origin), "mechanism file" if col.mechanism_file else "given mechanism")
    if col.family is not None and ":" in col.family:
        wrap = d.size if d.categories is not None or d.cyclic else None
        try:
            mech = from_family(col.family, col.neighbourhood, col.target, default=default_nb, wrap=wrap)
        except InvalidParameterError as exc:
            if exc.parameter == "neighbourhood":
                raise
            raise InvalidParameterError("family", col.family, exc.accepted) from exc
        return _Source(mech, "family")
    return _designed(col, unit, col.neighbourhood or default_nb, max_seconds)


def _request(col: ColumnSpec, unit: str, own: Neighbourhood, space: str, max_seconds: float | None = None,
             **fields: Any) -> Request:
    """The request of a column built by optnoise: its domain, target and unit (the value unit
    keeps the column's own neighbourhood)."""
    d = col.domain
    if unit == "record" and d.size is None:
        record_neighbourhood(space, d, col.name)   # refuses, naming the domain
    n = d.n if space != "integer" or unit == "record" else None
    try:
        return Request(space=space, n=n, target=col.target, unit="record" if unit == "record" else None,
                       neighbourhood=None if unit == "record" else own, max_seconds=max_seconds, **fields)
    except ResourceLimitError as exc:
        if unit != "record" or exc.parameter != "n":
            raise
        raise _too_large(exc, d) from exc


def _designed(col: ColumnSpec, unit: str, own: Neighbourhood, max_seconds: float | None = None) -> _Source:
    """A target only, or a family's name: the request the column makes, answered by
    :func:`optnoise.design.design` (see the module docstring)."""
    d = col.domain
    if col.family is not None:
        name = col.family.strip()
        fam = get_family(name)
        if fam.calibration is None:
            raise InvalidParameterError("family", name, "a calibrated family (geometric, discrete-gaussian, "
                                                        "exponential, rr) or NAME:PARAMS")
        line = fam.space == "integer" and d.categories is None and not d.cyclic
        if not line and d.size is None:
            raise InvalidParameterError("domain", "all integers", f"lower and upper for the family {name} on a "
                                                                  "finite domain")
        space = "integer" if line else "channel" if fam.space == "channel" else \
            "categories" if d.categories is not None else "cyclic"
        found = design(_request(col, unit, own, space, max_seconds, family=name))
        return _Source(found.mechanism, "calibrated family")
    if d.categories is not None:
        if col.cost is not None:
            raise InvalidParameterError("cost", col.cost, "no cost for categories (randomized response is optimal)")
        found = design(_request(col, unit, own, "categories", max_seconds))
        if found.report.method == "calibrated":
            return _Source(found.mechanism, "calibrated randomized response",
                           f"randomized response (rho={found.details.parameter:.6g})")
        return _Source(found.mechanism, "optimal randomized response (Holohan et al.)",
                       f"optimal randomized response, K={d.size}")
    if d.cyclic:
        cost = col.cost or "circular-mse"
        found = design(_request(col, unit, own, "cyclic", max_seconds, cost=cost))
        return _Source(found.mechanism, f"optimal design ({found.report.method}, cost {cost})",
                       f"optimal design ({cost})")
    if col.cost is not None:
        raise InvalidParameterError("cost", col.cost, "a cost only on a cyclic domain (an ordered domain gets the "
                                                      "geometric mechanism on the integer line)")
    found = design(_request(col, unit, own, "integer", max_seconds, family="geometric"))
    return _Source(found.mechanism, "calibrated family (geometric)")


def line_noise(family: str, target: Target, neighbourhood: Neighbourhood) -> tuple[IntegerPMF, str]:
    """The least noisy member of an integer-line family meeting ``target`` under
    ``neighbourhood`` (:func:`optnoise.design.calibrate.calibrate`, kept for one version)."""
    found = design(Request(space="integer", target=target, neighbourhood=neighbourhood, family=family))
    return found.mechanism.pmf, found.mechanism.name  # type: ignore[return-value]


def _check_fit(col: ColumnSpec, rep: Representation) -> None:
    d = col.domain
    if isinstance(rep, IntegerPMF):
        if d.categories is not None or d.cyclic:
            raise InvalidParameterError("mechanism", f"column '{col.name}': noise on the integer line",
                                        f"cyclic noise or a channel on a {'categorical' if d.categories else 'cyclic'} "
                                        "domain (the integer line would leave it)")
        if col.clamp and d.size is None:
            raise InvalidParameterError("clamp", True, "clamping with lower and upper")
        return
    if col.clamp:
        raise InvalidParameterError("clamp", True, "clamp only with noise on the integer line (finite mechanisms "
                                                   "release values of the domain)")
    if isinstance(rep, CyclicPMF) and len(rep.shape) != 1:
        raise InvalidParameterError("mechanism", f"shape {rep.shape}", "a scalar-query mechanism (1-D PMF)")
    size = rep.shape[0] if isinstance(rep, CyclicPMF) else rep.n_inputs
    if isinstance(rep, Channel) and rep.n_inputs != rep.n_outputs:
        raise InvalidParameterError("mechanism", f"{rep.n_inputs} inputs, {rep.n_outputs} outputs",
                                    "a channel whose outputs are its inputs (a square matrix)")
    if d.size != size:
        raise InvalidParameterError("mechanism", f"column '{col.name}': {size} values",
                                    f"a mechanism on the column's {d.size or 'unbounded'} values ({d.describe()})")


def _certify(col: ColumnSpec, mech: Mechanism, unit: str) -> None:
    """Float check with a helpful refusal, then the exact certificate of the quantized weights."""
    target = mech.target
    if target is None:
        cert = mech.quantize().certificate
        if not math.isfinite(cert.epsilon_pure):
            raise InvalidParameterError("epsilon", f"column '{col.name}': no target, no finite pure epsilon per {unit}",
                                        "a target epsilon (and delta) for the column")
        return
    if mech.meets():
        try:
            mech.quantize()
            return
        except OptnoiseError as exc:
            raise refusal(col, mech, unit, quantized=str(exc)) from exc
    raise refusal(col, mech, unit)


def refusal(col: ColumnSpec, mech: Mechanism, unit: str, quantized: str | None = None) -> InvalidParameterError:
    """The error for a mechanism that misses its target under the unit: what it gives, and
    the ways out (a mechanism made for the unit, only the target, or the value unit).
    ``quantized``: the quantizer's account when the float masses meet the target but no
    integer weights do (given whole, in what is accepted: the value stays short)."""
    t: Target = mech.target  # type: ignore[assignment]
    prof = mech.privacy
    if quantized is not None:
        value = f"column '{col.name}' per {unit}: {t.describe()} only before quantization"
    elif t.pure:
        value = f"column '{col.name}' per {unit}: pure eps {prof.epsilon_pure:.6g}, not {t.describe()}"
    else:
        value = (f"column '{col.name}' per {unit}: eps {prof.epsilon(t.delta, t.notion):.6g} at delta {t.delta:g}, "
                 f"not {t.describe()}")
    gives = "" if quantized is not None or t.pure else \
        f" (it gives delta {prof.delta(t.epsilon, t.notion):.6g} at eps {t.epsilon:g})"
    why = f" (the quantizer: {quantized})" if quantized is not None else gives
    if unit == "value":
        return InvalidParameterError("unit", value, f"a mechanism that meets its target{why}")
    d = col.domain
    delta = f" --delta {t.delta:g}" if t.delta else ""
    if d.categories is not None:
        design = f"optnoise rr --categories {d.size} --epsilon {t.epsilon:g}{delta}"
    elif mech.kind == "integer":
        design = f"--family geometric:{math.exp(-t.epsilon / (d.upper - d.lower)):.6g}"  # type: ignore[operator]
    elif mech.kind == "channel":
        design = f"optnoise design --form channel --n {d.n} --epsilon {t.epsilon:g}{delta} --per-record"
    else:
        design = f"optnoise design --n {d.n} --epsilon {t.epsilon:g}{delta} --bd {d.n} --cost circular-mse"
    if col.mechanism is None and col.family is None:  # optnoise built it from the target: say so, not "give it"
        return InvalidParameterError(
            "unit", value, f"a target optnoise can meet for this column{why}: a larger epsilon (or delta), or a "
            f"mechanism made for the per-record unit (e.g. {design}), or --unit value")
    return InvalidParameterError(
        "unit", value,
        f"a mechanism made for the per-record unit (e.g. {design}; or give only the target and optnoise builds it)"
        f"{why}, or --unit value to certify only changes by the mechanism's own distances")


# ------------------------------------------------------------------ the record's total
#: The record's accountant (:class:`optnoise.publish.accountant.Accountant`, the one place a
#: total is composed): ``total.columns``, the pld bound ``"one column"``, the attack readout
#: by the exact trade-off composition of every pair, no pure-sum shortcut.
ACCOUNTANT = Accountant(counted="columns", single="one column", readout="exact", pure_shortcut=False,
                        whose="the record's total", parts="the columns'")


def record_parts(plans: list[ColumnPlan]) -> Parts:
    """What one record moves: its privatized columns, each with its certified ``(epsilon,
    delta)`` (:attr:`ColumnPlan.epsilon_delta`) and its released profile
    (:func:`released_profile`, computed once per distinct mechanism); from
    :data:`~optnoise.publish.accountant.GROUP_FROM` columns on, the columns that share a
    mechanism as one item of their count (:func:`~optnoise.publish.accountant.composition_items`)."""
    items, mixed = composition_items(plans, released_profile)
    return Parts(items, [p.epsilon_delta for p in plans], mixed)


def _sampled(mech: Mechanism) -> Representation:
    """The exact PMF (or channel) of the quantized weights: what is actually sampled."""
    q = mech.quantize()
    return q.channel if mech.kind == "channel" else q.pmf


def released_profile(plan: ColumnPlan):
    """The exact profile the record's total composes for a column: its quantized mechanism's
    under the unit. For a clamped column this dominates the channel released (the total is
    approximate DP, which post-processing cannot break, and the channel's pairs ``(q, q')``
    are post-processings of the noise's pairs at the shift ``q' - q``); it has the noise's
    ``2 n`` pairs instead of the channel's ``n (n + 1)``."""
    return privacy_profile(_sampled(plan.mechanism), plan.mechanism.neighbourhood, exact=True)


__all__ = ["ACCOUNTANT", "ColumnPlan", "NOISE", "all_pairs", "certified", "coarse_tails", "line_noise", "plan_column", "plan_key",
           "record_neighbourhood", "record_parts", "refusal", "released_channel", "released_profile"]
