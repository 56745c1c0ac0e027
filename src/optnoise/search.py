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
from typing import Callable, Generic, Iterable, Literal, TypeVar

import math

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
             ok_side: Literal["upper", "lower"], iterations: int = ITERATIONS, tolerance: float = 0.0) -> float:
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
    tolerance:
        Stop once the bracket is narrower than this (``0``: run every step).

    Raises
    ------
    SearchError
        When ``ok`` fails at the end of the interval where it should hold.
    """
    return search(ok, lower, upper, ok_side=ok_side, iterations=iterations, tolerance=tolerance).value


def search(ok: Callable[[float], bool], lower: float, upper: float, *,
           ok_side: Literal["upper", "lower"], iterations: int = ITERATIONS, tolerance: float = 0.0) -> SearchResult:
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
        if abs(good - bad) < tolerance:
            break
    return SearchResult(good, calls)


T = TypeVar("T")

#: Retreats of :func:`largest_passing` by halving: ``start / 2, start / 4, ...`` (40 times).
HALVINGS: tuple[float, ...] = tuple(2.0 ** -i for i in range(1, 41))


@dataclass(frozen=True)
class Passing(Generic[T]):
    """The best passing point of a search, the payload its check returned there, and how many
    checks the search made."""

    value: float
    payload: T
    evaluations: int


def largest_passing(check: Callable[[float], tuple[bool, T]], start: float, *,
                    retreat: Iterable[float] = HALVINGS, regrow: bool = False, doublings: int | None = 40,
                    bisections: int | None = None, rel_tol: float = 0.0,
                    budget: int | None = None) -> Passing[T] | None:
    """The largest ``x > 0`` passing a check that passes on ``(0, x*]``, with the payload of the
    best passing point (the variant of :func:`boundary` whose checks are costly and produce
    something worth keeping: a calibrated mechanism with its certificate).

    From ``start``: if it fails, retreat to ``start * r`` for ``r`` in ``retreat`` until one
    passes (``None`` when none does); from a passing point, double while the check passes
    (at most ``doublings`` times; after a retreat only with ``regrow``, else the last failing
    point bounds the bracket); then bisect on ``log x`` (geometric means) ``bisections``
    times, or until ``hi / lo <= 1 + rel_tol``. ``budget`` caps the checks made after the
    first passing point. Every returned point passed its check: monotonicity only steers.
    """
    count = 1
    ok, payload = check(start)
    best: Passing[T] | None = Passing(start, payload, count) if ok else None
    lo = hi = start
    grow = ok
    if not ok:
        for r in retreat:
            lo = start * r
            count += 1
            ok, payload = check(lo)
            if ok:
                best = Passing(lo, payload, count)
                break
            hi = lo
        else:
            return None
        grow = regrow
        if regrow:
            hi = lo
    spent = 0

    def left() -> bool:
        return budget is None or spent < budget

    if grow:
        steps = 0
        while left() and (doublings is None or steps < doublings):
            hi = lo * 2.0
            count, spent, steps = count + 1, spent + 1, steps + 1
            ok, payload = check(hi)
            if not ok:
                break
            lo, best = hi, Passing(hi, payload, count)
        else:
            return best
    steps = 0
    while left() and (bisections is None or steps < bisections) and hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        count, spent, steps = count + 1, spent + 1, steps + 1
        ok, payload = check(mid)
        if ok:
            lo, best = mid, Passing(mid, payload, count)
        else:
            hi = mid
    return best


def first_passing(ok: Callable[[float], bool], start: float, limit: float, *,
                  cap: bool = False) -> tuple[float, float] | None:
    """The first point of ``start, 2 start, 4 start, ...`` below ``limit`` where ``ok`` holds,
    with the point before it (``0`` for ``start``): ``(last failing, first passing)``, or
    ``None``. With ``cap`` the sequence ends at ``limit`` itself (checked) instead of below it.
    For checks that hold from some unknown small weight on (a mixing weight repairing a design).
    """
    before, x = 0.0, start
    while x < limit or (cap and x == limit):
        if ok(x):
            return before, x
        if cap and x >= limit:
            return None
        before, x = x, min(limit, 2.0 * x) if cap else 2.0 * x
    return None
