"""What a spec asks of a bound chosen privately (issue 36 item 5): ``unit.max_rows = "auto"``
and a statistic's ``clamp = "auto"`` read and checked, before any data or noise
(:mod:`.autobound` releases the histograms and chooses; docs/statistics.md, "Bounds chosen
privately"). Errors name the key (``unit.coverage``, ``clamp_epsilon`` under its statistic)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import InvalidParameterError
from ..publish.spec import number, positive_integer

if TYPE_CHECKING:
    from ..target import Target
    from .statistic import Statistic

#: ``max_rows = "auto"``, ``clamp = "auto"``.
AUTO = "auto"
#: The keys of ``unit = { ... }`` that an auto bound adds.
AUTO_KEYS: tuple[str, ...] = ("bound_epsilon", "coverage", "max_rows_cap")
#: The keys of a statistic that ``clamp = "auto"`` adds.
CLAMP_KEYS: tuple[str, ...] = ("clamp_epsilon", "clamp_coverage", "clamp_cap")
#: The kinds whose clamp may be chosen privately; a quantile's unit value is its total.
CLAMP_KINDS: tuple[str, ...] = ("sum", "mean", "variance", "std", "quantile", "median")
TOTAL_KINDS: tuple[str, ...] = ("quantile", "median")
#: The largest grid point by default (the grid 1, 2, 4, ..., 1024: 11 cells).
DEFAULT_CAP = 1024
#: The largest cap accepted (the grid 1 .. 2^20: 21 cells).
MAX_CAP = 1 << 20
#: The share of the units the chosen bound covers by default.
DEFAULT_COVERAGE = 0.99
#: ``bound_epsilon``'s default: this share of the budget's epsilon (of the statistics'
#: epsilons added up without a budget).
DEFAULT_SHARE = 0.1
#: The smallest epsilon of one cell of the histogram (the query cells' range).
MIN_CELL_EPSILON = 1e-3


@dataclass(frozen=True)
class AutoRows:
    """What an auto bound asks: the histogram's epsilon, the coverage and the grid's cap (in
    units of ``resolution``: a clamp's grid is ``resolution x grid``)."""

    epsilon: float
    coverage: float = DEFAULT_COVERAGE
    cap: int = DEFAULT_CAP
    resolution: Fraction = Fraction(1)

    @property
    def grid(self) -> tuple[int, ...]:
        """The public grid ``1, 2, 4, ...`` below the cap, then the cap."""
        out = [1]
        while out[-1] * 2 < self.cap:
            out.append(out[-1] * 2)
        return tuple(out + [self.cap]) if out[-1] != self.cap else tuple(out)


# ------------------------------------------------------------------ reading the spec
def split_auto(unit: Any) -> tuple[Any, dict]:
    """The unit's table without the auto keys (``max_rows = "auto"`` replaced by the cap, a
    public bound, so that the statistics are read as under a declared bound) and the auto
    keys read (``{}`` without ``"auto"``). Errors name ``unit.KEY``."""
    if not isinstance(unit, Mapping) or unit.get("max_rows") != AUTO:
        extra = [k for k in AUTO_KEYS if isinstance(unit, Mapping) and k in unit]
        if extra:
            raise InvalidParameterError(f"unit.{extra[0]}", unit[extra[0]], "only with max_rows = \"auto\"")
        return unit, {}
    if unit.get("id") is None:
        raise InvalidParameterError("unit.max_rows", AUTO, "an integer max_rows, or \"auto\" with an id column "
                                    "(without one each row is a unit)")
    auto = {k: unit[k] for k in AUTO_KEYS if k in unit}
    cap = positive_integer(auto.get("max_rows_cap", DEFAULT_CAP), "unit.max_rows_cap",
                           f"an integer cap from 1 to {MAX_CAP:,} (the grid's largest point)")
    if cap > MAX_CAP:
        raise InvalidParameterError("unit.max_rows_cap", cap, f"an integer cap from 1 to {MAX_CAP:,}")
    rest = {k: v for k, v in unit.items() if k not in AUTO_KEYS}
    return {**rest, "max_rows": cap}, {**auto, "max_rows_cap": cap}


def parse_auto(auto: dict, budget: Target | None, epsilons: list[float]) -> AutoRows | None:
    """The :class:`AutoRows` of the keys :func:`split_auto` read, checked against the budget
    before any noise: ``bound_epsilon`` (default :data:`DEFAULT_SHARE` of the budget's
    epsilon, or of the statistics' epsilons added up) from ``2 x`` :data:`MIN_CELL_EPSILON`
    to 20, below the budget's epsilon with the statistics' epsilons fitting beside it (basic
    composition); ``coverage`` in ``(0, 1)``."""
    if not auto:
        return None
    coverage = _coverage(auto.get("coverage", DEFAULT_COVERAGE), "unit.coverage")
    by_budget = budget is not None and budget.epsilon is not None
    if "bound_epsilon" in auto:
        eps = number(auto["bound_epsilon"], "unit.bound_epsilon")
    elif by_budget or epsilons:
        eps = DEFAULT_SHARE * (budget.epsilon if by_budget else sum(epsilons))  # type: ignore[union-attr]
    else:
        raise InvalidParameterError("unit.bound_epsilon", None, "an epsilon for the histogram that chooses max_rows")
    if not 2 * MIN_CELL_EPSILON <= eps <= 20:
        raise InvalidParameterError("unit.bound_epsilon", eps, f"an epsilon from {2 * MIN_CELL_EPSILON:g} to 20 for "
                                    "the histogram that chooses max_rows")
    if by_budget:
        room = budget.epsilon - sum(epsilons)  # type: ignore[union-attr,operator]
        if eps >= budget.epsilon or eps > room * (1 + 1e-12):  # type: ignore[union-attr,operator]
            raise InvalidParameterError("unit.bound_epsilon", eps, f"a share of the budget left beside the statistics' "
                                        f"epsilons (budget {budget.epsilon:g}, statistics {sum(epsilons):g}: at most "
                                        f"{max(room, 0):g}); lower the statistics' epsilons or bound_epsilon")
    return AutoRows(float(eps), coverage, int(auto["max_rows_cap"]))


def _coverage(value: Any, key: str) -> float:
    coverage = number(value, key)
    if not 0 < coverage < 1:
        raise InvalidParameterError(key, coverage, "a share 0 < coverage < 1 of the units")
    return float(coverage)


def split_clamp(t: Any, kind: str) -> tuple[Any, dict]:
    """A statistic's table with ``clamp = "auto"`` replaced by ``[0, clamp_cap]`` (public), and
    the clamp keys read (``{}`` without ``"auto"``). Errors name the statistic's key."""
    if not isinstance(t, Mapping) or t.get("clamp") != AUTO:
        extra = [k for k in CLAMP_KEYS if isinstance(t, Mapping) and k in t]
        if extra:
            raise InvalidParameterError(extra[0], t[extra[0]], "only with clamp = \"auto\"")
        return t, {}
    if kind not in CLAMP_KINDS:
        raise InvalidParameterError("clamp", AUTO, f"no clamp for a {kind} (clamp = \"auto\" is for a "
                                    f"{', '.join(CLAMP_KINDS)})")
    if "clamp_cap" not in t:
        raise InvalidParameterError("clamp_cap", None, "a public cap for clamp = \"auto\": the grid's largest value")
    cap = Fraction(str(number(t["clamp_cap"], "clamp_cap")))
    res = Fraction(str(number(t.get("resolution", 1), "resolution")))
    if res <= 0 or cap <= 0 or (cap / res).denominator != 1 or cap / res > MAX_CAP:
        raise InvalidParameterError("clamp_cap", t["clamp_cap"], f"a multiple of the resolution {res}, above 0 and "
                                    f"at most {MAX_CAP:,} times it")
    rest = {k: v for k, v in t.items() if k not in CLAMP_KEYS}
    rest["clamp"] = {"lower": 0, "upper": t["clamp_cap"]}
    return rest, {"epsilon": t.get("clamp_epsilon"), "coverage": t.get("clamp_coverage", DEFAULT_COVERAGE),
                  "cap": int(cap / res), "resolution": res}


def clamp_target(auto: dict, target: Target) -> tuple[Target, AutoRows | None]:
    """The statistic's target less ``clamp_epsilon`` (default :data:`DEFAULT_SHARE` of its
    epsilon, below it), and the clamp's request; ``(target, None)`` without ``"auto"``."""
    if not auto:
        return target, None
    from ..target import Target as Made
    if target.epsilon is None:
        raise InvalidParameterError("clamp", AUTO, "a declared clamp with an attack target (the clamp's share is an "
                                    "epsilon)")
    eps = DEFAULT_SHARE * target.epsilon if auto["epsilon"] is None else number(auto["epsilon"], "clamp_epsilon")
    if not 2 * MIN_CELL_EPSILON <= eps < target.epsilon:
        raise InvalidParameterError("clamp_epsilon", eps, f"an epsilon from {2 * MIN_CELL_EPSILON:g} to below the "
                                    f"statistic's epsilon {target.epsilon:g} (its share spent on choosing the clamp)")
    request = AutoRows(float(eps), _coverage(auto["coverage"], "clamp_coverage"), auto["cap"], auto["resolution"])
    return Made(target.epsilon - eps, target.delta, target.notion), request


def check_auto(auto_rows: AutoRows | None, stats: list[Statistic]) -> None:
    """With a bound chosen privately, every statistic has an epsilon (the total composes each by
    its declared target). Keys found in the data are allowed: their selection's threshold and
    shift read public numbers only, never the chosen bound (docs/proofs/private-bounds.md,
    "With keys found in the data")."""
    if auto_rows is None and not any(s.auto_clamp for s in stats):
        return
    key = "unit.max_rows" if auto_rows is not None else "clamp"
    for s in stats:
        if s.target.epsilon is None:
            raise InvalidParameterError(key, AUTO, f"a declared bound, or an epsilon for statistics.{s.name} (a bound "
                                        "chosen privately composes every statistic by its declared epsilon)")



__all__ = ["AUTO", "AUTO_KEYS", "AutoRows", "CLAMP_KEYS", "CLAMP_KINDS", "DEFAULT_CAP", "DEFAULT_COVERAGE",
           "DEFAULT_SHARE", "MAX_CAP", "MIN_CELL_EPSILON", "TOTAL_KINDS", "check_auto", "clamp_target", "parse_auto",
           "split_auto", "split_clamp"]
