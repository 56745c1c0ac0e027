"""The trade-off curve after repeated releases: exact where it fits, else a dominating bound.

The pair of a ``K``-fold release is the product pair (the data are fixed, so the same pair
in every release; different mechanisms: every combination of their pairs, as
:mod:`~optnoise.analysis.composition` argues).

``"exact composition"``: the privacy loss distributions (:class:`~optnoise.analysis.tradeoff.Groups`:
outputs grouped by exact likelihood ratio) are convolved exactly -- ratios multiply, masses
multiply, binary exponentiation -- while the number of groups stays below :data:`MAX_STATES`
and the work below :data:`MAX_WORK`; a pair with two groups (randomized response, the
geometric at distance 1) is raised to any power in closed form (binomial). Every vertex of
the composed curve is then rational and every readout exact, rounded up.

``"dominating"`` otherwise: the composed ``delta(eps)`` upper bound of the pairs' (or each
mechanism's dominating pair's) PLDs, :func:`optnoise.analysis.dominating.combination_totals`
(numpy's FFT while they fit, dp_accounting beyond; their numerical allowance added, the
pure line at ``sum k eps_pure`` rounded up), at a grid of epsilons; each ``(eps, delta)`` is a line below
the true curve (``T >= 1 - delta - e^eps alpha``, and for a symmetric neighbourhood ``T >=
e^-eps (1 - delta - alpha)``: Dong, Roth & Su 2022, Prop. 2.5), so their upper envelope is a
lower bound of ``T``: the error is on the safe side by construction (a coarser grid only
loosens it) and its accuracy is that of the ``delta`` bound (pessimistic Connect-the-Dots:
docs/repeated-releases.md). The lines' slopes are rounded up and their intercepts down; the
envelope's vertices are then computed in floats (within a few ulps). A pair with an output
impossible under ``x'`` keeps it in every composition: its ``mu`` is infinite (issue 34: the
float ``1 - delta`` of a mass near ``1e-300`` had read as 1, and ``mu`` as 3.18 for the
discrete Gaussian's window composed 10 times).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..errors import InvalidParameterError
from .outward import U
from .profile import PrivacyProfile
from .tradeoff import Groups, PairCurve, TradeOff, curve_from_groups, groups_of, is_symmetric, tradeoff_of

#: Largest number of likelihood-ratio groups an exact composition may hold.
MAX_STATES = 20_000
#: Largest number of products of groups an exact composition may form in all (each
#: counted ``1 + bits / 2048`` times, for the size of its integers).
MAX_WORK = 300_000
#: Largest number of pair combinations composed exactly (different mechanisms).
MAX_COMBINATIONS = 256
#: Epsilons of the grid of the dominating composition.
GRID_POINTS = 96
_INF = math.inf


class _TooLarge(Exception):
    """An exact composition would exceed :data:`MAX_STATES` groups."""


def _log_ratio(p: int, q: int) -> float:
    if q == 0:
        return math.inf
    if p == 0:
        return -math.inf
    return math.log(p) - math.log(q)  # math.log is accurate for integers of any size


def _multiply(a: Groups, b: Groups, cap: int, budget: list[int]) -> Groups:
    """The product pair's groups: ratios multiply, masses multiply, denominators too.

    An output impossible under ``x'`` in one factor (ratio infinite) makes the product
    impossible under ``x'`` unless the other factor's output is impossible under ``x``
    (ratio 0); that product has mass 0 under both and is dropped. Products are sorted by
    float log-ratio (within ``1e-12`` relative of the exact value); runs closer than
    ``1e-9`` are grouped and ordered by exact cross-multiplication, so the groups and
    their order are exact.
    """
    bits = (max(a.p + a.q).bit_length() + max(b.p + b.q).bit_length()) / 2048
    budget[0] -= int(len(a.p) * len(b.p) * (1 + bits))
    if budget[0] < 0:
        raise _TooLarge
    la = np.array([_log_ratio(p, q) for p, q in zip(a.p, a.q)])
    lb = np.array([_log_ratio(p, q) for p, q in zip(b.p, b.q)])
    with np.errstate(invalid="ignore"):
        keys = (la[:, None] + lb[None, :]).ravel()  # inf + -inf: nan, dropped
    i_a, i_b = np.divmod(np.arange(keys.size), len(b.p))
    keep = ~np.isnan(keys)
    order = np.flatnonzero(keep)[np.argsort(-keys[keep], kind="stable")]
    ks = keys[order]
    ps: list[int] = []
    qs: list[int] = []
    run: list[tuple[int, int]] = []

    def flush() -> None:
        if len(run) == 1:
            ps.append(run[0][0])
            qs.append(run[0][1])
        else:  # a run of close float keys: grouped and ordered by exact ratio
            classes: dict = {}
            for p, q in run:
                cell = classes.setdefault(_INF if q == 0 else Fraction(p, q), [0, 0])
                cell[0] += p
                cell[1] += q
            for key in sorted(classes, reverse=True):
                ps.append(classes[key][0])
                qs.append(classes[key][1])
        if len(ps) > cap:
            raise _TooLarge

    for n, k in enumerate(order):
        x, y = int(i_a[k]), int(i_b[k])
        cell = (a.p[x] * b.p[y], a.q[x] * b.q[y])
        if run and not _near(ks[n - 1], ks[n]):
            flush()
            run = []
        run.append(cell)
    if run:
        flush()
    return Groups(tuple(ps), tuple(qs), a.denominator * b.denominator)


def _near(u: float, v: float) -> bool:
    """Whether two float log-ratios may stand for equal or misordered exact ratios."""
    if math.isinf(u) or math.isinf(v):
        return u == v
    return abs(u - v) <= 1e-9 * (1.0 + abs(u))


def _binomial_power(g: Groups, k: int) -> Groups:
    """``k``-fold product of a pair with two finite groups (ratios ``r_1 > r_2``), in closed
    form: ``k - j`` outputs of the first group and ``j`` of the second have ratio
    ``r_1^(k-j) r_2^j`` (decreasing in ``j``, all distinct) and masses ``C(k, j) P_1^(k-j) P_2^j``
    and ``C(k, j) Q_1^(k-j) Q_2^j`` over ``D^k`` -- randomized response, the geometric at
    distance 1."""
    (p1, p2), (q1, q2) = g.p, g.q
    ps, qs = [], []
    for j in range(k + 1):
        c = math.comb(k, j)
        ps.append(c * p1 ** (k - j) * p2 ** j)
        qs.append(c * q1 ** (k - j) * q2 ** j)
    return Groups(tuple(ps), tuple(qs), g.denominator ** k)


def _power(g: Groups, k: int, cap: int, budget: list[int]) -> Groups:
    if len(g.p) == 2 and all(g.p) and all(g.q):
        if k + 1 > cap:
            raise _TooLarge
        return _binomial_power(g, k)
    result = None
    base = g
    while k:
        if k & 1:
            result = base if result is None else _multiply(result, base, cap, budget)
        k >>= 1
        if k:
            base = _multiply(base, base, cap, budget)
    return result  # type: ignore[return-value]


def _distinct(curves: Sequence[PairCurve]) -> list[tuple[Groups, str]]:
    """Each pair's groups once (pairs with equal groups have equal curves)."""
    seen: dict = {}
    for c in curves:
        g = groups_of(c)
        seen.setdefault(g.key, (g, c.label))
    return list(seen.values())


def compose_tradeoff(items: Sequence[tuple[PrivacyProfile, int]], *, max_states: int = MAX_STATES,
                     max_combinations: int = MAX_COMBINATIONS, grid_points: int = GRID_POINTS,
                     mixed: Sequence[bool] | None = None) -> TradeOff:
    """The trade-off curve after releasing each item's mechanism ``count`` times.

    Exact (``method="exact composition"``) when every combination of the items' distinct
    pairs composes within ``max_states`` groups (the exact binary values of float masses
    are composed exactly too); otherwise the dominating lower bound (``"dominating"``) from
    the composed PLDs' proven ``delta(eps)`` (module docstring).
    ``mixed``: per item, whether its releases may each see a different pair (columns of a
    record sharing a mechanism, :func:`optnoise.analysis.composition.compose_best`); such an
    item with several distinct pairs is composed as its dominating pair (the dominating bound).
    """
    if not items:
        raise InvalidParameterError("items", [], "at least one (profile, count) pair")
    for _, k in items:
        if isinstance(k, bool) or int(k) != k or k < 1:
            raise InvalidParameterError("count", k, "an integer count >= 1")
    symmetric = all(is_symmetric(p.neighbourhood) for p, _ in items)
    flags = [False] * len(items) if mixed is None else [bool(m) for m in mixed]
    if len(flags) != len(items):
        raise InvalidParameterError("mixed", list(flags), f"one flag per item ({len(items)})")
    several = [f and k > 1 and len(p.pairs) > 1 for f, (p, k) in zip(flags, items)]
    try:
        if any(several):
            raise _TooLarge
        curves = _compose_exact(items, max_states, max_combinations)
        return TradeOff(curves, symmetric, "exact composition")
    except _TooLarge:
        return _compose_dominating(items, symmetric, grid_points, dominate=several)


def _compose_exact(items, max_states: int, max_combinations: int) -> tuple[PairCurve, ...]:
    units = []
    budget = [MAX_WORK]  # products of groups over the whole composition
    for prof, k in items:
        distinct = _distinct(tradeoff_of(prof, exact=True).curves)
        units.append([(_power(g, int(k), max_states, budget), label) for g, label in distinct])
    if math.prod(len(u) for u in units) > max_combinations:
        raise _TooLarge
    curves = []
    for combo in itertools.product(*units):
        total: Groups = combo[0][0]
        for g, _ in combo[1:]:
            total = _multiply(total, g, max_states, budget)
        label = " & ".join(label for _, label in combo)
        curves.append(curve_from_groups(total, label))
    return tuple(curves)


def _compose_dominating(items, symmetric: bool, grid_points: int, max_units: int = 8,
                        dominate: Sequence[bool] | None = None) -> TradeOff:
    """Lines below the composed curve from composed ``delta(eps)`` upper bounds.

    Each item's pairs are taken one by one when there are few (at most ``max_units``
    combinations over the items; a pair composed with itself is much tighter than the
    dominating pair of several composed), otherwise as one dominating pair
    (:func:`optnoise.analysis.dominating.dominating_pld`: pessimistic, dominating all of the
    item's pairs). Each combination's PLDs are self-composed and composed (dominating pairs
    compose: Zhu, Dong & Wang 2022, Thm. 10), evaluated on a coarse grid of epsilons and
    again where ``delta`` is between ``1e-15`` and 1, capped at 1 and by the pure bound
    (``delta = 0`` from ``sum k eps_pure``); the lines of each give one curve below the
    curves of the pairs it covers.
    """
    per_item = []
    for prof, _ in items:
        lds = [pair.loss_distribution() for pair in prof.pairs]
        keys = [groups_of(c).key for c in tradeoff_of(prof, exact=True).curves] if prof.exact else range(len(lds))
        distinct = list({k: ld for k, ld in zip(keys, lds)}.values())
        per_item.append(distinct)
    forced = dominate or [False] * len(per_item)   # mixed items: their dominating pair only
    if math.prod(1 if f else len(d) for d, f in zip(per_item, forced)) > max_units:
        per_item = [[tuple(d)] for d in per_item]
    else:
        per_item = [[tuple(d)] if f else [(ld,) for ld in d] for d, f in zip(per_item, forced)]
    curves = []
    for combo in itertools.product(*per_item):
        curves.append(_dominating_curve([(unit, k) for unit, (_, k) in zip(combo, items)],
                                        [p for p, _ in items], symmetric, grid_points))
    return TradeOff(tuple(curves), symmetric, "dominating")


def _dominating_curve(units, profiles, symmetric: bool, grid_points: int) -> PairCurve:
    from .composition_bounds import pure_bound, rdp_bound, rdp_totals
    from .dominating import combination_totals
    from .renyi import DEFAULT_ORDERS
    item_lds = [list(lds) for lds, _ in units]
    counts = [int(k) for _, k in units]
    total = next(iter(combination_totals(item_lds, [[tuple(range(len(lds)))] for lds in item_lds], counts)))
    pure = float(pure_bound(list(profiles), counts, None, 0.0).epsilon)   # sum k eps_pure, rounded up
    top = min(pure, 700.0) if math.isfinite(pure) else 60.0
    orders = [float(a) for a in DEFAULT_ORDERS if float(a) > 1.0]
    every = [[pair.loss_distribution() for pair in prof.pairs] for prof in profiles]
    renyi = rdp_totals(every, profiles, counts, orders)   # over every pair of each profile: valid here

    def deltas(eps: np.ndarray) -> np.ndarray:
        """Proven upper bounds: the PLD's (its allowance added), the RDP bound where it is
        smaller (the allowance dominates where delta is tiny), 0 beyond the pure epsilon."""
        rdp = np.array([rdp_bound(item_lds, profiles, counts, float(e), None, orders, renyi).delta for e in eps])
        return np.where(eps >= pure, 0.0, np.minimum(total.delta_upper(eps), rdp))

    coarse = np.linspace(0.0, top, max(grid_points // 4, 8))  # each evaluation walks the whole PLD
    d0 = deltas(coarse)
    # refined where delta falls: above 1e-15 and above twice its floor at the top (the allowance,
    # or the mass of outputs impossible under x', where it stops falling)
    inner = np.flatnonzero((d0 > max(1e-15, 2 * float(d0[-1]))) & (d0 < 1.0))
    lo = coarse[max(int(inner[0]) - 1, 0)] if inner.size else 0.0
    hi = coarse[min(int(inner[-1]) + 1, coarse.size - 1)] if inner.size else top
    fine = np.linspace(lo, hi, grid_points - coarse.size)
    eps = np.concatenate((coarse, fine))
    d = np.concatenate((d0, deltas(fine)))
    # each line below the curve: 1 - d - e^eps alpha with e^eps rounded up and 1 - d down, and
    # g (1 - d - alpha) with g <= e^-eps (exp within 4 ulps): a line through (1 - d, 0), so the
    # curve of a pair without impossible outputs still reaches T = 0 at alpha = 1 only
    keep = _one_minus_down(d)
    slopes, intercepts = np.exp(eps) * (1 + 8 * U), keep
    if symmetric:
        g = np.exp(-eps) * (1 - 8 * U)
        slopes, intercepts = np.concatenate((slopes, g)), np.concatenate((intercepts, g * keep))
    if math.isfinite(pure) and pure > 700.0:  # e^pure overflows: the line through (0, 1) as steep as a float allows
        slopes, intercepts = np.append(slopes, np.finfo(float).max), np.append(intercepts, 1.0)
    fpr, t = _upper_envelope(slopes, np.maximum(intercepts, 0.0))
    label = " & ".join(f"{k} release(s) of mechanism {i + 1}" for i, (_, k) in enumerate(units))
    ratio = math.exp(pure) if pure < 700 else None
    # the tails (1 - fpr, T) keep T's own accuracy where 1 - T rounds to 1; an output impossible
    # under x' (pure infinite) makes the curve's mu infinite (PairCurve.mu_terms)
    return PairCurve(fpr, np.maximum(1.0 - t, fpr), None, label, ratio, not math.isfinite(pure), (1.0 - fpr, t))


def _one_minus_down(d: np.ndarray) -> np.ndarray:
    """``1 - d`` rounded down, for ``0 <= d <= 1`` (Fast2Sum: ``1 - d = s + t`` exactly; ``s``
    is one float too high when ``t < 0``)."""
    s = 1.0 - d
    t = -d - (s - 1.0)
    return np.where(t < 0, np.nextafter(s, -1.0), s)


def _upper_envelope(slopes: np.ndarray, intercepts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices on ``[0, 1]`` of ``max(0, max_i c_i - s_i alpha)`` (convex, non-increasing,
    piecewise linear), by the upper hull of the lines (the zero line included)."""
    slopes = np.append(np.asarray(slopes, float), 0.0)
    intercepts = np.append(np.asarray(intercepts, float), 0.0)
    order = np.lexsort((-intercepts, -slopes))  # steepest first; equal slopes: highest first
    hull: list[tuple[float, float]] = []
    for i in order:
        s, c = float(slopes[i]), float(intercepts[i])
        if hull and hull[-1][0] == s:
            continue
        while len(hull) >= 2:
            (s1, c1), (s2, c2) = hull[-2], hull[-1]
            # the middle line never wins if the new one overtakes the first before it does
            if (c1 - c) * (s1 - s2) <= (c1 - c2) * (s1 - s):
                hull.pop()
            else:
                break
        hull.append((s, c))
    xs = [0.0]
    for (s1, c1), (s2, c2) in zip(hull, hull[1:]):
        x = (c1 - c2) / (s1 - s2)
        if 0.0 < x < 1.0 and x > xs[-1]:
            xs.append(x)
    xs.append(1.0)
    x = np.array(xs)
    # the envelope's value at each vertex, over every line (a vertex computed a rounding away
    # from where a line meets zero must not read 0 when another line is still above it)
    s_h, c_h = np.array([h[0] for h in hull]), np.array([h[1] for h in hull])
    return x, np.maximum(np.max(c_h[None, :] - s_h[None, :] * x[:, None], axis=1), 0.0)


__all__ = ["GRID_POINTS", "MAX_COMBINATIONS", "MAX_STATES", "MAX_WORK", "compose_tradeoff"]
