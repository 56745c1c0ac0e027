"""The privacy target: one value object, validated in one place.

A :class:`Target` is what a mechanism must guarantee: ``(epsilon, delta)`` under a
*notion* (docs/architecture.md, "Two notions of (eps, delta)"):

* ``"dp"``: approximate DP, ``delta_DP(eps) = max_pairs sum_y max(0, p(y) - e^eps p'(y))``;
* ``"pdp"``: probabilistic DP (Kadam et al. 2024, Def. 2),
  ``delta_PDP(eps) = max_pairs sum_y p(y) [p(y) > e^eps p'(y)]``.

``delta = 0`` is pure ``epsilon``-DP under either notion. Whether a mechanism *meets*
a target is decided by one rule, :meth:`optnoise.analysis.PrivacyProfile.meets`.

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

Notion = Literal["dp", "pdp"]
NOTIONS: tuple[str, ...] = ("dp", "pdp")

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
                  parameter: str = "epsilon") -> float:
    """Validate an epsilon: a real number ``>= 0`` (``> 0`` unless ``allow_zero``).

    Infinity is accepted only with ``allow_inf`` (where an analysis can answer it, e.g.
    "delta at eps = inf" is the mass facing impossible outputs).
    """
    accepted = ("a real number >= 0" if allow_zero else "a real number > 0") + ("" if allow_inf else ", finite")
    eps = _as_float(epsilon, parameter, accepted)
    if math.isnan(eps) or eps < 0 or (eps == 0 and not allow_zero) or (math.isinf(eps) and not allow_inf):
        raise InvalidParameterError(parameter, epsilon, accepted)
    return eps


def check_delta(delta: object, *, parameter: str = "delta") -> float:
    """Validate a delta: a real number with ``0 <= delta < 1``."""
    accepted = "a real number with 0 <= delta < 1"
    d = _as_float(delta, parameter, accepted)
    if not (0.0 <= d < 1.0):
        raise InvalidParameterError(parameter, delta, accepted)
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


def check_notion(notion: object, *, parameter: str = "notion") -> str:
    """Validate a notion: ``"dp"`` or ``"pdp"``."""
    if notion not in NOTIONS:
        raise InvalidParameterError(parameter, notion, "'dp' (approximate DP) or 'pdp' (probabilistic DP)")
    return str(notion)


@dataclass(frozen=True)
class Target:
    """A privacy target ``(epsilon, delta)`` under a notion; validates itself.

    Parameters
    ----------
    epsilon:
        ``> 0`` and finite.
    delta:
        ``0 <= delta < 1``; ``0`` is pure epsilon-DP (the notions then coincide).
    notion:
        ``"dp"`` (approximate DP, hockey-stick) or ``"pdp"`` (probabilistic DP).
    """

    epsilon: float
    delta: float = 0.0
    notion: str = "dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_zero=False))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "notion", check_notion(self.notion))

    @property
    def pure(self) -> bool:
        """``True`` for pure epsilon-DP (``delta = 0``)."""
        return self.delta == 0.0

    def admits(self, epsilon_pure: float, delta: float | None, *, exact: bool) -> bool:
        """The one rule for "meets this target", on a mechanism's evaluated values.

        ``epsilon_pure`` for a pure target; otherwise ``delta``, the mechanism's delta of
        this target's notion at this target's epsilon (``None``: not evaluated, does not
        meet). Float values may exceed by :data:`MEETS_TOLERANCE` (relative); exact ones
        (``exact=True``, rounded outward) by nothing.
        """
        slack = 1.0 if exact else 1.0 + MEETS_TOLERANCE
        if self.pure:
            return epsilon_pure <= self.epsilon * slack
        return delta is not None and delta <= self.delta * slack

    def to_json(self) -> dict:
        """``{"epsilon", "delta", "notion"}``."""
        return {"epsilon": self.epsilon, "delta": self.delta, "notion": self.notion}

    @classmethod
    def from_json(cls, data: dict, *, parameter: str = "target") -> "Target":
        """Inverse of :meth:`to_json` (missing ``delta``/``notion`` default to 0 and ``dp``)."""
        if not isinstance(data, dict) or "epsilon" not in data:
            raise InvalidParameterError(parameter, data, "an object with keys epsilon, delta, notion")
        return cls(data["epsilon"], data.get("delta", 0.0) or 0.0, data.get("notion", "dp") or "dp")

    def describe(self) -> str:
        """Plain words, e.g. ``"(1, 1e-06)-DP"`` or ``"pure 1-DP"``."""
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
