"""What a run spends, and the total of everything a ledger has recorded (docs/ledger.md).

A run's spend (:class:`Spend`) is a list of :class:`Part`: a mechanism that was certified and
is sampled (its quantized weights), the neighbourhood it is certified under (the
mechanism's own), how many times one unit can move it (``count``), the part's proven
``(epsilon, delta)`` for basic composition, and whether its releases may each see a
different pair of neighbouring datasets (``mixed``). What is stored of a part is what exact
composition needs, not only an epsilon: the mechanism-file object
(:meth:`optnoise.mechanism.Mechanism.to_json`, from which
:func:`~optnoise.mechanism.mechanism_from_json` and ``quantize()`` rebuild the weights that
were sampled) and the SHA-256 of those weights, so that a later reading can prove it
rebuilt the same ones.

:func:`lifetime_total` composes stored parts, the way a publication composes its own:

* ``basic``: the sums of the parts' epsilons and deltas (each part ``count`` times), exact
  and rounded up;
* ``pld``: :func:`optnoise.analysis.composition.compose_sequence` over the exact profiles
  of the quantized weights (the best of the exact sum, the PLDs, RDP and the pure bound,
  each proven and rounded outward). Parts that share a mechanism become one item whose
  count is theirs summed and whose releases may see different pairs (``mixed``: its
  dominating pair, Zhu, Dong & Wang 2022, Thm 10): two runs of a dataset that changed in
  between see different pairs, and the dominating pair covers every mix;
* ``shifts``: a run's parts whose release is the composed mechanisms' with a rare extra event
  (a selection of keys found in the data: docs/proofs/key-selection.md) or that are composed
  by their declared target (a statistic with a delta after a bound chosen privately:
  docs/proofs/private-bounds.md) are stored as ``(epsilon, delta)`` shifts: every bound is moved
  by their sums, as the core's accountant does (:func:`~.accountant.shifted`);
* ``attack``: a proven upper bound on the best attacker
  (:func:`optnoise.analysis.tradeoff.profile_readout` over the total's points and the
  composed privacy profile at a few epsilons);
* ``within_budget`` and ``remaining``: the budget is met when either bound meets it (no
  tolerance: every number is a proven bound), or, for a budget in attack terms, when the
  readout does.

Proof: docs/proofs/ledger-total.md
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence


from ..errors import InvalidParameterError
from ..mechanism import Mechanism, mechanism_from_json
from ..target import Target, check_delta, check_epsilon, check_integer
from .accountant import Accountant, Parts, profile_attack

#: The false-positive rates of every attack readout.
FPRS: tuple[float, ...] = (0.001, 0.01, 0.05, 0.1)


@dataclass(frozen=True, eq=False)
class Part:
    """One mechanism of a run, moved ``count`` times by one unit.

    ``epsilon_delta``: the part's proven ``(epsilon, delta)`` for basic composition; default
    the mechanism's ``(epsilon, delta)`` target (its quantized weights meet it), else the
    quantized weights' exact pure epsilon. ``mixed``: whether the ``count`` releases may
    each see a different pair (:func:`~optnoise.analysis.composition.compose_best`).
    """

    mechanism: Mechanism
    count: int = 1
    epsilon_delta: tuple[float, float] | None = None
    mixed: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise InvalidParameterError("parts", type(self.mechanism).__name__, "Mechanism objects (or "
                                        "(Mechanism, count) pairs)")
        object.__setattr__(self, "count", check_integer(self.count, parameter="count"))
        if self.epsilon_delta is None:
            object.__setattr__(self, "epsilon_delta", default_epsilon_delta(self.mechanism))
        eps, dlt = self.epsilon_delta  # type: ignore[misc]
        object.__setattr__(self, "epsilon_delta", (check_epsilon(eps), check_delta(dlt)))


def default_epsilon_delta(mechanism: Mechanism) -> tuple[float, float]:
    """The part's ``(epsilon, delta)`` when none is given: the mechanism's target (its
    quantized weights meet it: :meth:`~optnoise.mechanism.Mechanism.quantize`), else the
    exact pure epsilon of those weights."""
    t = mechanism.target
    if t is not None and t.notion == "dp":
        mechanism.quantize()   # refuses masses that miss the target
        return float(t.epsilon), float(t.delta)  # type: ignore[arg-type]
    eps = mechanism.quantize().certificate.epsilon_pure
    if not math.isfinite(eps):
        raise InvalidParameterError("epsilon_delta", None, f"a part's (epsilon, delta): the mechanism "
                                    f"{mechanism.name} has no DP target and no finite pure epsilon")
    return float(eps), 0.0


@dataclass(frozen=True)
class Shift:
    """What a run adds on top of its composed mechanisms (module docstring): ``(epsilon,
    delta)``, both rounded up where they were proven, and ``about`` in words (``"selection"``:
    keys found in the data; ``"declared target"``: a statistic after a bound chosen privately)."""

    epsilon: float
    delta: float
    about: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", check_delta(float(self.delta)))
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise InvalidParameterError("shifts", self.epsilon, "a shift's epsilon >= 0")

    def to_json(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "about": self.about}

    @classmethod
    def from_json(cls, data: dict) -> "Shift":
        return cls(float(data["epsilon"]), float(data["delta"]), str(data["about"]))


@dataclass(frozen=True, eq=False)
class Spend:
    """What one run spends on one dataset for one unit, with what the ledger records of it.

    ``parts``: :class:`Part` objects or ``(Mechanism, count)`` pairs. ``spec_sha256``: the
    SHA-256 of the spec that was run; ``statistics``: the names released; ``audit``: the
    private audit fields (JSON-able; stored, shown only by ``show(audit=True)``). ``shifts``:
    :class:`Shift` objects or ``(epsilon, delta, about)`` triples added on top of the parts.
    """

    parts: Sequence[Part | tuple[Mechanism, int]]
    dataset: str
    unit: str
    spec_sha256: str | None = None
    statistics: Sequence[str] = ()
    audit: Mapping[str, Any] = field(default_factory=dict)
    shifts: Sequence[Shift | tuple[float, float, str]] = ()

    def __post_init__(self) -> None:
        parts = [p if isinstance(p, Part) else Part(*_pair(p)) for p in self.parts]
        if not parts:
            raise InvalidParameterError("parts", [], "at least one part (a mechanism and its count)")
        object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "shifts", tuple(s if isinstance(s, Shift) else Shift(*s) for s in self.shifts))
        object.__setattr__(self, "statistics", tuple(str(s) for s in self.statistics))
        for name in ("dataset", "unit"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise InvalidParameterError(name, getattr(self, name), "a non-empty name")
        try:
            json.dumps(dict(self.audit), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("audit", type(self.audit).__name__, "a JSON-able mapping") from exc


def _pair(item: Any) -> tuple[Mechanism, int]:
    try:
        mech, count = item
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError("parts", type(item).__name__, "Part objects or (Mechanism, count) pairs") from exc
    return mech, count


# ------------------------------------------------------------------ stored form
def canonical(obj: Any) -> str:
    """The one JSON text of an object (sorted keys, no spaces): what digests are taken of."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pack(text: str) -> bytes:
    """A stored mechanism: its canonical JSON, compressed."""
    return zlib.compress(text.encode(), 9)


def unpack(blob: bytes) -> str:
    return zlib.decompress(blob).decode()


def weights_digest(mechanism: Mechanism) -> str:
    """SHA-256 of the quantized weights that are sampled (and their neighbourhood): what
    proves that a mechanism read back quantizes to the weights that were certified."""
    q = mechanism.quantize()
    body = {k: v for k, v in q.to_json(weights=True).items() if k not in ("certificate", "sampler", "target")}
    return sha256(canonical({"quantized": body, "neighbourhood": q.neighbourhood.to_json()}))


def exact_profile_of(mechanism: Mechanism):
    """The exact profile of the quantized weights that are sampled, under the mechanism's
    neighbourhood (as the query's cells compose them: integer weights directly for cyclic
    noise and channels, the exact PMF with its dyadic tails on the integer line)."""
    from ..analysis import IntegerForm, exact_profile, privacy_profile
    q = mechanism.quantize()
    if mechanism.kind in ("channel", "cyclic"):
        return exact_profile(IntegerForm(mechanism.kind, q.weights, 1 << q.bits), q.neighbourhood)
    return privacy_profile(q.pmf, mechanism.neighbourhood, exact=True)


@dataclass(frozen=True)
class StoredPart:
    """A part as the ledger holds it: the mechanism's digest (its JSON is stored once per
    ledger), the weights' digest, the count, the basic ``(epsilon, delta)`` and ``mixed``."""

    mechanism_sha256: str
    weights_sha256: str
    count: int
    epsilon: float
    delta: float
    mixed: bool

    def to_json(self) -> dict:
        return {"mechanism_sha256": self.mechanism_sha256, "weights_sha256": self.weights_sha256,
                "count": self.count, "epsilon": self.epsilon, "delta": self.delta, "mixed": self.mixed}

    @classmethod
    def from_json(cls, data: dict) -> "StoredPart":
        return cls(str(data["mechanism_sha256"]), str(data["weights_sha256"]), int(data["count"]),
                   float(data["epsilon"]), float(data["delta"]), bool(data["mixed"]))


def stored(part: Part) -> tuple[StoredPart, str]:
    """A part's stored form and its mechanism's canonical JSON."""
    text = canonical(part.mechanism.to_json())
    eps, dlt = part.epsilon_delta  # type: ignore[misc]
    return StoredPart(sha256(text), weights_digest(part.mechanism), part.count, eps, dlt, part.mixed), text


def rebuild(text: str) -> Mechanism:
    """The mechanism of a stored JSON text."""
    return mechanism_from_json(json.loads(text), parameter="ledger")


# ------------------------------------------------------------------ totals
def basic_total(parts: Sequence[StoredPart], shifts: Sequence[Shift] = ()) -> dict:
    """Basic composition: the exact sums of ``count * epsilon`` and ``count * delta``, rounded up
    (delta at most 1); with ``shifts``, the parts' sums plus the shifts' sums, each rounded up
    (as :func:`~.accountant.shifted` adds them)."""
    from ..analysis.outward import sum_up
    basic = {"epsilon": sum_up(p.count * Fraction(p.epsilon) for p in parts),
             "delta": min(1.0, sum_up(p.count * Fraction(p.delta) for p in parts))}
    if not shifts:
        return basic
    e_s, d_s = shift_sums(shifts)
    return {"epsilon": sum_up([basic["epsilon"], e_s]), "delta": min(1.0, sum_up([basic["delta"], d_s]))}


def shift_sums(shifts: Sequence[Shift]) -> tuple[float, float]:
    """The sums of the shifts' epsilons and deltas, rounded up (the accountant's order: one sum each)."""
    from ..analysis.outward import sum_up
    return sum_up(s.epsilon for s in shifts), sum_up(s.delta for s in shifts)


def own_spend(parts: Sequence[StoredPart], shifts: Sequence[Shift] = ()) -> dict:
    """A run's own spend as the ledger shows it: its basic ``(epsilon, delta)`` (the run's
    composed total is its publication's to state; with its shifts added) and how many releases
    one unit moved; with shifts, their sums and number (``shifts``)."""
    out: dict[str, Any] = {"basic": basic_total(parts, shifts), "parts": sum(p.count for p in parts)}
    if shifts:
        e_s, d_s = shift_sums(shifts)
        out["shifts"] = {"epsilon": e_s, "delta": d_s, "count": len(shifts)}
    return out


def composition_items(parts: Sequence[StoredPart], profiles: Mapping[str, Any]) -> tuple[list, list[bool]]:
    """The ``(profile, count)`` items and ``mixed`` flags of stored parts: one item per distinct
    mechanism; several parts of one mechanism are one item, their counts summed, ``mixed``."""
    groups: dict[str, list[StoredPart]] = {}
    for p in parts:
        groups.setdefault(p.mechanism_sha256, []).append(p)
    items, mixed = [], []
    for digest, group in groups.items():
        items.append((profiles[digest], sum(p.count for p in group)))
        mixed.append(len(group) > 1 or group[0].mixed)
    return items, mixed


#: The ledger's accountant: the core's one composition (:class:`~.accountant.Accountant`), its
#: attack readout bounded from the composed privacy profile.
LEDGER = Accountant(counted="parts", single="one part", readout="profile", pure_shortcut=True,
                    whose="the dataset's lifetime total", parts="the runs'")


def lifetime_total(parts: Sequence[StoredPart], profiles: Mapping[str, Any], budget: Target,
                   shifts: Sequence[Shift] = ()) -> dict:
    """The total of ``parts`` (every run recorded, delivered or not) against ``budget``, composed
    by the core's one accountant (:data:`LEDGER`: basic, PLD over the stored exact profiles with
    the pure-sum shortcut, the attack readout from the composed profile), every bound moved by
    the runs' ``shifts`` as the accountant moves a publication's (``shifts``: their sums).

    Keys: ``parts`` (how many releases one unit moved), ``basic``, ``pld`` (``epsilon`` at
    ``delta``, ``delta_at_budget_epsilon``, ``bound``: which bound won), ``attack``
    (``tpr_at_fpr``, ``advantage``, ``mu_gdp``, ``posterior``), ``within_budget``,
    ``remaining`` (module docstring).
    """
    items, mixed = composition_items(parts, profiles)
    attack_terms = budget.notion == "attack"
    moved = [(s.epsilon, s.delta) for s in shifts]
    accounted = Parts(items, [(p.epsilon, p.delta) for p in parts for _ in range(p.count)], mixed, moved)
    composed = LEDGER.composed(accounted, None if attack_terms else budget)
    total: dict[str, Any] = {"parts": composed["parts"], "basic": composed["basic"], "pld": composed["pld"]}
    if shifts:
        total["shifts"] = {**{k: composed["selection"][k] for k in ("epsilon", "delta")}, "count": len(shifts)}
    extra = (budget.at_fpr,) if attack_terms and budget.at_fpr is not None else ()
    readout = profile_attack(items, total, sorted({*FPRS, *extra}), lambda worst: {"subject": "a unit's rows"},
                             moved)
    total["attack"] = {k: readout[k] for k in ("tpr_at_fpr", "advantage", "mu_gdp", "posterior", "method")}
    total["within_budget"] = within(total, budget)
    total["remaining"] = remaining(total, budget)
    return total


def within(total: dict, budget: Target) -> bool:
    """Whether the total meets the budget: in ``(epsilon, delta)`` terms either bound (basic:
    both sums; PLD: epsilon at the budget's delta, or delta at its epsilon), in attack terms
    the readout (:meth:`~optnoise.target.Target.admits_attack`); no tolerance."""
    if budget.notion == "attack":
        a = total["attack"]
        tpr = a["tpr_at_fpr"].get(f"{budget.at_fpr:g}") if budget.max_tpr is not None else None
        return budget.admits_attack(tpr=tpr, mu=a["mu_gdp"], exact=True)
    b, p = total["basic"], total["pld"]
    by_basic = b["epsilon"] <= budget.epsilon and b["delta"] <= budget.delta  # type: ignore[operator]
    by_pld = (p["epsilon"] is not None and p["epsilon"] <= budget.epsilon) or (  # type: ignore[operator]
        p.get("delta_at_budget_epsilon") is not None and p["delta_at_budget_epsilon"] <= budget.delta)
    return by_basic or by_pld


def spent_epsilon(total: dict, budget: Target) -> float:
    """The smallest proven epsilon of the total at the budget's delta (basic when its delta
    fits, else PLD)."""
    b, p = total["basic"], total["pld"]
    cands = [p["epsilon"]] if p["epsilon"] is not None else []
    if budget.notion != "attack" and b["delta"] <= budget.delta:
        cands.append(b["epsilon"])
    return min(cands) if cands else math.inf


def remaining(total: dict, budget: Target) -> dict:
    """What is left of the budget: epsilon at the budget's delta (budget minus the smallest
    proven total, rounded down, never below 0), or the attacker's headroom in attack terms."""
    if budget.notion == "attack":
        a = total["attack"]
        out: dict[str, Any] = {}
        if budget.max_tpr is not None:
            at = f"{budget.at_fpr:g}"
            out["tpr_at_fpr"] = {at: _left(budget.max_tpr, a["tpr_at_fpr"][at])}
        if budget.max_mu is not None:
            out["mu_gdp"] = _left(budget.max_mu, a["mu_gdp"])
        return out
    spent = spent_epsilon(total, budget)
    return {"epsilon": _left(budget.epsilon, spent), "delta": budget.delta}


def _left(cap: float, spent: float) -> float:
    """``cap - spent`` rounded down, never below 0 (0 when ``spent`` is infinite)."""
    return max(0.0, _down(Fraction(cap) - Fraction(spent))) if math.isfinite(spent) else 0.0


def _down(x: Fraction) -> float:
    """Largest float ``<= x``."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def shown(x: float | None, digits: int = 6, *, up: bool = True) -> str:
    """A number for a message or a table, to ``digits`` significant digits, rounded outward:
    towards +infinity for a total (``up``), towards -infinity for what remains of a budget."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
    if x is None:
        return "-"
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    written = Decimal(repr(float(x)))   # the float as written (as the manifests' round_up reads it)
    q = written.quantize(Decimal(1).scaleb(written.adjusted() - digits + 1),
                         rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{float(q):.{digits}g}"


def describe_remaining(total: dict | None, budget: Target) -> str:
    """What remains, in words, for a refusal (rounded down)."""
    if total is None:
        return f"all of it ({budget.describe()})"
    left = total["remaining"]
    if budget.notion == "attack":
        parts = [f"TPR {shown(v, up=False)} at FPR {k}" for k, v in left.get("tpr_at_fpr", {}).items()]
        parts += [f"mu {shown(left['mu_gdp'], up=False)}"] if "mu_gdp" in left else []
        return "headroom " + ", ".join(parts)
    return f"eps {shown(left['epsilon'], up=False)} at delta {left['delta']:g}"
