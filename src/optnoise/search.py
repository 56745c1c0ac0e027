"""One monotone search: the boundary of a monotone predicate on an interval.

Every calibration in optnoise (the least-noisy parameter of a family meeting a
target, the most private one under a cost bound, a per-release budget meeting a
composed target) is the same question: given a predicate ``ok(x)`` that is
monotone in ``x`` on ``[lower, upper]``, where is its boundary? This mirrors
dp_accounting's ``common.inverse_monotone_function``.

>>> boundary(lambda x: x * x >= 2.0, 0.0, 2.0, ok_side="upper")   # smallest x with x^2 >= 2
1.4142135623730951
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from .errors import OptnoiseError

#: Bisection steps: 60 halvings take any bracket of doubles below its ulp-scale width.
ITERATIONS = 60


class SearchError(OptnoiseError):
    """No point of the searched interval satisfies the predicate."""


@dataclass(frozen=True)
class SearchResult:
    """The boundary found and how many predicate evaluations it took."""

    value: float
    evaluations: int


def boundary(ok: Callable[[float], bool], lower: float, upper: float, *,
             ok_side: Literal["upper", "lower"], iterations: int = ITERATIONS) -> float:
    """The extreme point of ``[lower, upper]`` where the monotone predicate ``ok`` holds.

    Parameters
    ----------
    ok:
        Monotone predicate: with ``ok_side="upper"`` it holds on ``[x*, upper]`` and the
        result is (an upper bracket of) the smallest such ``x*``; with ``ok_side="lower"``
        it holds on ``[lower, x*]`` and the result is the largest such point.
    lower, upper:
        The interval; the result always satisfies ``ok`` (it is never outside the
        ok-side bracket), so a calibrated mechanism never misses its target.
    iterations:
        Bisection steps after checking the end points.

    Raises
    ------
    SearchError
        When ``ok`` fails at the end of the interval where it should hold.
    """
    return search(ok, lower, upper, ok_side=ok_side, iterations=iterations).value


def search(ok: Callable[[float], bool], lower: float, upper: float, *,
           ok_side: Literal["upper", "lower"], iterations: int = ITERATIONS) -> SearchResult:
    """:func:`boundary` with the number of predicate evaluations."""
    if ok_side not in ("upper", "lower"):
        raise ValueError(f"ok_side must be 'upper' or 'lower', not {ok_side!r}")
    good, bad = (upper, lower) if ok_side == "upper" else (lower, upper)
    calls = 1
    if not ok(good):
        raise SearchError("no value in the searched range meets the requirement")
    calls += 1
    if ok(bad):
        return SearchResult(bad, calls)
    for _ in range(iterations):
        mid = 0.5 * (good + bad)
        if mid in (good, bad):
            break
        calls += 1
        if ok(mid):
            good = mid
        else:
            bad = mid
    return SearchResult(good, calls)
