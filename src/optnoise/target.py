"""The privacy target: one value object, validated in one place.

A :class:`Target` is what a mechanism must guarantee: ``(epsilon, delta)`` under a
*notion* (docs/architecture.md, "Two notions of (eps, delta)"):

* ``"dp"``: approximate DP, ``delta_DP(eps) = max_pairs sum_y max(0, p(y) - e^eps p'(y))``;
* ``"pdp"``: probabilistic DP (Kadam et al. 2024, Def. 2),
  ``delta_PDP(eps) = max_pairs sum_y p(y) [p(y) > e^eps p'(y)]``.

``delta = 0`` is pure ``epsilon``-DP under either notion. A third notion, ``"attack"``,
bounds what the best attacker can do (docs/attacks.md): its true-positive rate at most
``max_tpr`` at false-positive rate ``at_fpr``, and/or Gaussian DP with ``mu <= max_mu``
(``Target.attack(...)``; ``epsilon`` is then ``None``). Whether a mechanism *meets* a target
is decided by one rule, :meth:`optnoise.analysis.PrivacyProfile.meets` (for an attack
target: on the exact trade-off curve, :mod:`optnoise.analysis.tradeoff`).

Every parameter check of an epsilon or a delta in the library goes through
:func:`check_epsilon` and :func:`check_delta` (and of an integer parameter through
:func:`check_integer`); errors name the Python parameter (the command line maps it to the
flag the user typed). Text is never taken for a number: ``epsilon="1"`` is refused.

>>> Target(1.0, 1e-6)
Target(epsilon=1.0, delta=1e-06, notion='dp')
>>> Target(1.0).pure
True
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

from .errors import InvalidParameterError

Notion = Literal["dp", "pdp", "attack"]
NOTIONS: tuple[str, ...] = ("dp", "pdp", "attack")

#: Relative tolerance of a *float* profile's :meth:`~optnoise.analysis.PrivacyProfile.meets`:
#: a float analysis of a PMF that meets a constraint with equality can land a few ulps on
#: the wrong side. An exact profile (rational arithmetic, outward rounding) meets with none.
MEETS_TOLERANCE = 1e-12


def _as_float(value: object, parameter: str, accepted: str) -> float:
    if isinstance(value, (bool, str, bytes)):  # "1" is text, not a number: the CLI parses, the library checks
        raise InvalidParameterError(parameter, value, accepted)
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParameterError(parameter, value, accepted) from exc


def check_epsilon(epsilon: object, *, allow_zero: bool = True, allow_inf: bool = False,
                  parameter: str = "epsilon", within: tuple[float, float] | None = None,
                  accepted: str | None = None) -> float:
    """Validate an epsilon: a real number ``>= 0`` (``> 0`` unless ``allow_zero``).

    Infinity is accepted only with ``allow_inf`` (where an analysis can answer it, e.g.
    "delta at eps = inf" is the mass facing impossible outputs). ``within``: the range a
    computation can answer (a solver's numerical range), said in ``accepted``.
    """
    words = accepted or (("a real number >= 0" if allow_zero else "a real number > 0")
                         + ("" if allow_inf else ", finite"))
    eps = _as_float(epsilon, parameter, words)
    if not _epsilon_ok(eps, allow_zero, allow_inf) or (within is not None and not within[0] <= eps <= within[1]):
        raise InvalidParameterError(parameter, epsilon, words)
    return eps


def _epsilon_ok(eps: float, allow_zero: bool, allow_inf: bool) -> bool:
    """The one rule of an epsilon's range (:func:`check_epsilon`, :func:`check_epsilons`)."""
    return not (math.isnan(eps) or eps < 0 or (eps == 0 and not allow_zero) or (math.isinf(eps) and not allow_inf))


def check_epsilons(epsilons: object, *, parameter: str = "epsilons", allow_zero: bool = False,
                   allow_inf: bool = False, accepted: str | None = None) -> list[float]:
    """Validate a non-empty list of epsilons, each a finite real number ``> 0`` (``>= 0`` with
    ``allow_zero``; infinity with ``allow_inf``)."""
    accepted = accepted or ("a list of numbers >= 0" if allow_zero else "a list of numbers > 0")
    try:
        values = list(epsilons)  # type: ignore[call-overload]
    except TypeError as exc:
        raise InvalidParameterError(parameter, epsilons, accepted) from exc
    if not values:
        raise InvalidParameterError(parameter, values, accepted)
    try:
        out = [_as_float(e, parameter, accepted) for e in values]   # one validation of the whole list
    except InvalidParameterError:
        raise InvalidParameterError(parameter, values, accepted) from None
    if not all(_epsilon_ok(e, allow_zero, allow_inf) for e in out):
        raise InvalidParameterError(parameter, values, accepted)
    return out


def check_delta(delta: object, *, parameter: str = "delta", positive: bool = False, at_most: float | None = None,
                accepted: str | None = None) -> float:
    """Validate a delta: a real number with ``0 <= delta < 1`` (``> 0`` with ``positive``; at
    most ``at_most`` where a computation bounds it, said in ``accepted``)."""
    words = accepted or ("a real number with 0 < delta < 1" if positive else "a real number with 0 <= delta < 1")
    d = _as_float(delta, parameter, words)
    if not (0.0 <= d < 1.0) or (positive and d == 0.0) or (at_most is not None and d > at_most):
        raise InvalidParameterError(parameter, delta, words)
    return d


def check_sensitivity(sensitivity: object, *, integer: bool = True, parameter: str = "sensitivity") -> float | int:
    """Validate a sensitivity: an integer ``>= 1`` (or, with ``integer=False``, a real ``> 0``)."""
    accepted = "an integer >= 1" if integer else "a finite real number > 0"
    value = _as_float(sensitivity, parameter, accepted)
    ok = math.isfinite(value) and value > 0 and (not integer or (value.is_integer() and value >= 1))
    if not ok:
        raise InvalidParameterError(parameter, sensitivity, accepted)
    return int(value) if integer else value


def check_integer(value: object, *, parameter: str, minimum: int | None = 1, accepted: str | None = None) -> int:
    """Validate an integer parameter (a size ``n``, a number of releases, categories): a Python or
    numpy integer, or an integral float such as ``3.0``, ``>= minimum``; never a bool, a string,
    NaN or a fraction such as ``2.5``."""
    words = accepted or ("an integer" if minimum is None else f"an integer >= {minimum}")
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(parameter, value, words)
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        f = float(value)
        if not (math.isfinite(f) and f.is_integer()):
            raise InvalidParameterError(parameter, value, words)
        number = int(f)
    if minimum is not None and number < minimum:
        raise InvalidParameterError(parameter, value, words)
    return number


def check_notion(notion: object, *, parameter: str = "notion", attack: bool = False) -> str:
    """Validate a notion: ``"dp"`` or ``"pdp"`` (and ``"attack"`` where ``attack`` says an
    attack target is understood: :class:`Target`)."""
    if notion not in NOTIONS or (notion == "attack" and not attack):
        extra = " or 'attack' (an attacker's true-positive rate or Gaussian-DP mu)" if attack else ""
        raise InvalidParameterError(parameter, notion, f"'dp' (approximate DP) or 'pdp' (probabilistic DP){extra}")
    return str(notion)


def check_rate(value: object, *, parameter: str, open_low: bool = False) -> float:
    """Validate a rate of an attack target: a real number in ``[0, 1]`` (``(0, 1]`` with
    ``open_low``)."""
    accepted = "a rate with 0 < rate <= 1" if open_low else "a rate with 0 <= rate <= 1"
    v = _as_float(value, parameter, accepted)
    if not (0.0 <= v <= 1.0) or (open_low and v == 0.0):
        raise InvalidParameterError(parameter, value, accepted)
    return v


def check_odds(odds: object, parameter: str = "prior_odds") -> float:
    """Validate prior odds (an attacker's, for one value against another): a finite real ``> 0``."""
    accepted = "prior odds > 0, e.g. 1 (1:1) or 0.01"
    v = _as_float(odds, parameter, accepted)
    if not (v > 0 and math.isfinite(v)):
        raise InvalidParameterError(parameter, odds, accepted)
    return v


@dataclass(frozen=True)
class Target:
    """A privacy target ``(epsilon, delta)`` under a notion, or an attack target; validates itself.

    Parameters
    ----------
    epsilon:
        ``> 0`` and finite (``None`` for an attack target).
    delta:
        ``0 <= delta < 1``; ``0`` is pure epsilon-DP (the notions then coincide).
    notion:
        ``"dp"`` (approximate DP, hockey-stick), ``"pdp"`` (probabilistic DP) or
        ``"attack"`` (use :meth:`attack`).
    max_tpr, at_fpr:
        Attack target: the best attacker's true-positive rate is at most ``max_tpr`` at
        false-positive rate ``at_fpr`` (``at_fpr < max_tpr <= 1``: guessing at random already
        reaches ``TPR = FPR``).
    max_mu:
        Attack target: the mechanism is ``max_mu``-Gaussian DP (its trade-off curve lies
        above ``G_mu``; Dong, Roth & Su 2022, Def. 2.7).
    """

    epsilon: float | None
    delta: float = 0.0
    notion: str = "dp"
    max_tpr: float | None = None
    at_fpr: float | None = None
    max_mu: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "notion", check_notion(self.notion, attack=True))
        if self.notion == "attack":
            self._check_attack()
            return
        if any(v is not None for v in (self.max_tpr, self.at_fpr, self.max_mu)):
            raise InvalidParameterError("notion", self.notion, "'attack' with max_tpr/at_fpr/max_mu")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_zero=False))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def _check_attack(self) -> None:
        if self.epsilon is not None or self.delta:
            raise InvalidParameterError("epsilon", self.epsilon, "no epsilon/delta with an attack target")
        if (self.max_tpr is None) != (self.at_fpr is None):
            raise InvalidParameterError("max_tpr" if self.max_tpr is None else "at_fpr", None,
                                        "max_tpr and at_fpr together")
        if self.max_tpr is None and self.max_mu is None:
            raise InvalidParameterError("max_tpr", None, "max_tpr with at_fpr, and/or max_mu")
        if self.max_tpr is not None:
            tpr = check_rate(self.max_tpr, parameter="max_tpr", open_low=True)
            fpr = check_rate(self.at_fpr, parameter="at_fpr")
            if not fpr < tpr:
                raise InvalidParameterError("max_tpr", self.max_tpr, f"a rate above at_fpr = {fpr:g} (an attacker "
                                            "guessing at random already has TPR = FPR)")
            object.__setattr__(self, "max_tpr", tpr)
            object.__setattr__(self, "at_fpr", fpr)
        if self.max_mu is not None:
            object.__setattr__(self, "max_mu", check_epsilon(self.max_mu, allow_zero=False, parameter="max_mu"))

    def __repr__(self) -> str:
        if self.notion == "attack":
            return f"Target.attack(max_tpr={self.max_tpr!r}, at_fpr={self.at_fpr!r}, max_mu={self.max_mu!r})"
        return f"Target(epsilon={self.epsilon!r}, delta={self.delta!r}, notion={self.notion!r})"

    @classmethod
    def attack(cls, *, max_tpr: float | None = None, at_fpr: float | None = None,
               max_mu: float | None = None) -> "Target":
        """An attack target: TPR at most ``max_tpr`` at FPR ``at_fpr`` and/or ``max_mu``-GDP.

        >>> Target.attack(max_tpr=0.1, at_fpr=0.01).describe()
        'attacker TPR <= 0.1 at FPR 0.01'
        """
        return cls(None, 0.0, "attack", max_tpr, at_fpr, max_mu)

    @classmethod
    def of(cls, epsilon: float | None = None, delta: float | None = None, notion: str | None = None, *,
           max_tpr: float | None = None, at_fpr: float | None = None,
           max_mu: float | None = None) -> "Target | None":
        """The target of optional values as a user gives them (command-line flags, spec keys):
        ``epsilon`` (with ``delta``, ``notion``) or the attack keys ``max_tpr`` + ``at_fpr``
        and/or ``max_mu``, never both; ``None`` when none is given. Validated here once: a
        bad combination raises :class:`InvalidParameterError` naming the value at fault.

        >>> Target.of(max_mu=1.0).describe()
        '1-GDP'
        >>> Target.of(1.0, 1e-6)
        Target(epsilon=1.0, delta=1e-06, notion='dp')
        """
        if any(v is not None for v in (max_tpr, at_fpr, max_mu)):
            beside = "no epsilon, delta or notion beside max_tpr/at_fpr/max_mu (an attack target is its own target)"
            for name, value in (("epsilon", epsilon), ("delta", delta)):
                if value is not None:
                    raise InvalidParameterError(name, value, beside)
            if notion not in (None, "attack"):
                raise InvalidParameterError("notion", notion, beside)
            return cls.attack(max_tpr=max_tpr, at_fpr=at_fpr, max_mu=max_mu)
        if epsilon is None:
            if delta is not None or notion is not None:
                raise InvalidParameterError("epsilon", None, "a target epsilon > 0 with delta/notion (or an attack "
                                            "target: max_tpr with at_fpr, and/or max_mu)")
            return None
        if notion == "attack":
            raise InvalidParameterError("notion", notion, "'dp' or 'pdp' with an epsilon (an attack target is "
                                        "max_tpr with at_fpr, and/or max_mu)")
        return cls(epsilon, 0.0 if delta is None else delta, notion or "dp")

    @property
    def pure(self) -> bool:
        """``True`` for pure epsilon-DP (``delta = 0``; never for an attack target)."""
        return self.notion != "attack" and self.delta == 0.0

    def admits(self, epsilon_pure: float, delta: float | None, *, exact: bool) -> bool:
        """The one rule for "meets this target", on a mechanism's evaluated values.

        ``epsilon_pure`` for a pure target; otherwise ``delta``, the mechanism's delta of
        this target's notion at this target's epsilon (``None``: not evaluated, does not
        meet). Float values may exceed by :data:`MEETS_TOLERANCE` (relative); exact ones
        (``exact=True``, rounded outward) by nothing. Attack targets: :meth:`admits_attack`.
        """
        if self.notion == "attack":
            raise InvalidParameterError("target", self.describe(), "an (epsilon, delta) target (attack targets are "
                                        "checked on the trade-off curve)")
        slack = 1.0 if exact else 1.0 + MEETS_TOLERANCE
        if self.pure:
            return epsilon_pure <= self.epsilon * slack  # type: ignore[operator]
        return delta is not None and delta <= self.delta * slack

    def admits_attack(self, *, tpr: float | None, mu: float | None, exact: bool) -> bool:
        """The rule for an attack target on a mechanism's evaluated trade-off curve: ``tpr``
        the best attacker's TPR at ``at_fpr``, ``mu`` its Gaussian-DP mu (``None``: not
        evaluated, does not meet); the same tolerance as :meth:`admits`."""
        if self.notion != "attack":
            raise InvalidParameterError("target", self.describe(), "an attack target")
        slack = 1.0 if exact else 1.0 + MEETS_TOLERANCE
        ok = True
        if self.max_tpr is not None:
            ok = tpr is not None and tpr <= self.max_tpr * slack
        if self.max_mu is not None:
            ok = ok and mu is not None and mu <= self.max_mu * slack
        return ok

    def to_json(self) -> dict:
        """``{"epsilon", "delta", "notion"}`` (and ``max_tpr``, ``at_fpr``, ``max_mu`` for an attack target)."""
        out = {"epsilon": self.epsilon, "delta": self.delta, "notion": self.notion}
        if self.notion == "attack":
            out.update(max_tpr=self.max_tpr, at_fpr=self.at_fpr, max_mu=self.max_mu)
        return out

    @classmethod
    def from_json(cls, data: dict, *, parameter: str = "target") -> "Target":
        """Inverse of :meth:`to_json` (missing ``delta``/``notion`` default to 0 and ``dp``)."""
        if isinstance(data, dict) and data.get("notion") == "attack":
            return cls.attack(max_tpr=data.get("max_tpr"), at_fpr=data.get("at_fpr"), max_mu=data.get("max_mu"))
        if not isinstance(data, dict) or "epsilon" not in data:
            raise InvalidParameterError(parameter, data, "an object with keys epsilon, delta, notion")
        return cls(data["epsilon"], data.get("delta", 0.0) or 0.0, data.get("notion", "dp") or "dp")

    def describe(self) -> str:
        """Plain words, e.g. ``"(1, 1e-06)-DP"``, ``"pure 1-DP"`` or ``"attacker TPR <= 0.1 at FPR 0.01"``."""
        if self.notion == "attack":
            parts = [] if self.max_tpr is None else [f"attacker TPR <= {self.max_tpr:g} at FPR {self.at_fpr:g}"]
            return " and ".join(parts + ([] if self.max_mu is None else [f"{self.max_mu:g}-GDP"]))
        if self.pure:
            return f"pure {self.epsilon:g}-DP"
        return f"({self.epsilon:g}, {self.delta:g})-{self.notion.upper()}"


def resolve_target(epsilon: float | None, delta: float, notion: str, target: Target | None) -> Target:
    """The target of a call that takes either ``target=`` or ``epsilon=``/``delta=``/``notion=``."""
    if target is not None:
        if epsilon is not None:
            raise InvalidParameterError("epsilon", epsilon, "either target= or epsilon=/delta=/notion=, not both")
        return target
    if epsilon is None:
        raise InvalidParameterError("epsilon", None, "a target epsilon > 0 (or target=Target(...))")
    return Target(epsilon, delta, notion)
