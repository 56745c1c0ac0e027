"""``quantile`` (and ``median``, its level 0.5): quantiles of the units' values over a declared,
public grid, per declared group (``by``), by the joint exponential mechanism (Gillenwater,
Joseph & Kulesza 2021) sampled exactly.

**A unit's value.** Its total of the clamped, rounded ``column`` over its counted rows (as a
sum or a mean adds them; under ``by`` its rows in its home group, the others dropped and
counted), clamped again to ``clamp``: a point of the grid ``lower, lower + resolution, ...,
upper`` (``G`` points, public). A unit with no counted row takes no part (its group's data
is the units that have one). The answers are the units per grid point (groups x ``G``): what
partitions add up, locally and on Spark (its Python path: :attr:`~.base.Kind.per_unit`).

**What one unit moves.** One point of one group's data: under ``add-remove`` it appears or
disappears, under ``replace`` it moves (or appears, or disappears: a unit may have no
counted row) -- in its one group, or in two under ``by`` (two cells, as for a sum). Every
rank count ``#{x < c}`` moves by at most ``unit.distance(0, 1) = 1``.

**The mechanism** (docs/proofs/quantile.md). For levels ``q_1 < ... < q_m`` (``D`` the
least common denominator, ``g_j = q_j - q_(j-1)`` with ``q_0 = 0``, ``q_(m+1) = 1``), an
output is a non-decreasing sequence ``c_1 <= ... <= c_m`` of grid points. With ``L(c) = #{x <
c}`` and ``L+(c) = #{x <= c}`` among the group's ``n`` points, its utility is the least
total variation ``U(c) = D min sum_(j=1)^(m+1) |e_j - e_(j-1)|`` over ``e_0 = e_(m+1) = 0`` and
``e_j in [L(c_j) - q_j n, L+(c_j) - q_j n]`` (the gap counts of GJK21, with points tied at an
output split between its two sides): ``U >= 0``, ``U = 0`` at the true quantiles, every
quantile's rank error is at most ``U / (2D)``, and one unit moves ``U`` by at most
``Delta = 2 D`` (times the unit's distance). The output is drawn with probability
``beta^U(c) / Z``, ``beta = a / 2^64`` the least such rational ``>= e^(-eps / (2 Delta))``
(checked exactly), so the privacy ratio is ``<= beta^(-2 Delta) <= e^eps`` (pure ``eps``-DP
per group, by the exponential mechanism's theorem). It is drawn exactly by rejection: a
proposal from a chain of integer weights ``x_t >= 2^64 beta^t`` on the pairwise relaxation
``U' <= U`` of the utility (summed exactly, Python integers), accepted with probability
``beta^U 2^(64 (m+1)) / prod x`` by one comparison of integers -- no float in what is drawn.

**Accuracy** (from the law, data-independent): ``P(U >= tau) <= |C| beta^tau`` (``|C| =
C(G + m - 1, m)`` outputs, ``Z >= 1``), so with probability ``>= 1 - alpha`` every released
quantile's rank error is at most ``(tau_alpha - 1) / (2D)`` ranks. No value interval: a rank
bound says nothing of values (a gap in the data), and an interval would cost budget.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ...target import Target
from ..cells import ONE, Answers, GroupRules, bump, in_kept
from ..mechanisms import Cell, cell_target, dominating_rr
from ..statistic import Statistic, number
from .base import Kind, Planned, UnitRules, read_groups, read_values

#: Bits of the base's denominator (``beta = a / 2^BASE_BITS``) and of the proposal's weights.
BASE_BITS = 64
#: At most this many grid points (``(upper - lower) / resolution + 1``) ...
MAX_POINTS = 2_001
#: ... and levels x points^2 (the proposal's exact sums: 1.5 s at the limit, 7 levels on 2,001 points).
MAX_WORK = 30_000_000
#: At most this many levels, each with at most this denominator (``D`` is their lcm).
MAX_LEVELS, MAX_DENOMINATOR = 99, 10_000
#: The proposal's weight table has one entry per utility value until it reaches 1.
MAX_TABLE = 4_000_000
#: What the document says of intervals.
NO_INTERVAL = ("none: a rank bound does not bound values (the data may have a gap around the quantile), and an "
               "interval of values for the true quantile would need more released values, hence budget")
UNIT_VALUE = ("each unit's total of the clamped, rounded column over its counted rows (its home group's under by), "
              "clamped to the clamp: one point of the grid; units with no counted row take no part")


# ------------------------------------------------------------------ the spec
def read_levels(value: Any, key: str = "quantiles") -> tuple[Fraction, ...]:
    """Distinct levels strictly between 0 and 1 (the decimals written, exactly), increasing."""
    accepted = (f"a list of 1 to {MAX_LEVELS} distinct levels strictly between 0 and 1, e.g. [0.25, 0.5, 0.75] "
                f"(each with a denominator up to {MAX_DENOMINATOR}: at most 4 decimals)")
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_LEVELS:
        raise InvalidParameterError(key, value, accepted)
    levels = [Fraction(str(number(v, key))) for v in value]
    if any(not 0 < q < 1 or q.denominator > MAX_DENOMINATOR for q in levels) or len(set(levels)) < len(levels):
        raise InvalidParameterError(key, list(value), accepted)
    return tuple(sorted(levels))


def grid_points(stat: Statistic) -> int:
    """``G``: the grid's points, clamp lower to upper by the resolution."""
    lo, hi = stat.scaled_clamp
    return hi - lo + 1


def check_size(points: int, levels: int) -> None:
    """The memory and time guard of the grid (before any data is read)."""
    if points > MAX_POINTS or levels * points * points > MAX_WORK:
        raise InvalidParameterError("resolution", f"{points} grid points for {levels} level(s)",
                                    f"a coarser resolution or a narrower clamp: at most {MAX_POINTS} grid points "
                                    f"and levels x points^2 <= {MAX_WORK:,} (the exact sampler's sums)")


# ------------------------------------------------------------------ the mechanism's constants
@dataclass(frozen=True)
class Law:
    """The constants of one group's joint exponential mechanism: levels, ``D``, the
    utility's sensitivity ``Delta`` (scaled by ``D``), ``beta = a / 2^BASE_BITS``, ``G``."""

    levels: tuple[Fraction, ...]
    scale: int
    sensitivity: int
    a: int
    points: int
    epsilon: float

    @property
    def beta(self) -> Fraction:
        return Fraction(self.a, 1 << BASE_BITS)

    def outputs(self) -> int:
        """``|C|``: the non-decreasing sequences of ``m`` grid points."""
        return math.comb(self.points + len(self.levels) - 1, len(self.levels))

    def tau(self, alpha: float) -> int:
        """A ``tau`` with ``|C| beta^tau <= alpha``: ``ceil(U / L)`` of an upper bound ``U`` of
        ``ln(|C| / alpha)`` and a lower bound ``L`` of ``ln(1 / beta)`` (outward-rounded
        logarithms, the quotient exact), so ``tau ln(1 / beta) >= ln(|C| / alpha)``.

        Proof: docs/proofs/quantile.md
        """
        from ...analysis.exact import log_up
        upper = Fraction(log_up(Fraction(self.outputs()) / Fraction(alpha)))
        lower = -Fraction(log_up(self.beta))
        return max(0, math.ceil(upper / lower))

    def rank_error(self, alpha: float) -> Fraction:
        """Every quantile's rank error is at most this with probability ``>= 1 - alpha``."""
        return Fraction(max(0, self.tau(alpha) - 1), 2 * self.scale)


def law_of(stat: Statistic, epsilon: float, distance: int) -> Law:
    """The mechanism's constants at a group's ``epsilon`` (``distance``: how far one unit moves
    a rank count, from the unit's rule).

    Proof: docs/proofs/quantile.md
    """
    from ...analysis.exact import exp_lower
    levels = stat.quantiles
    scale = math.lcm(*(q.denominator for q in levels))
    delta = 2 * scale * max(1, int(distance))
    import mpmath
    with mpmath.workdps(60):
        a = int(mpmath.ceil(mpmath.ldexp(mpmath.exp(-mpmath.mpf(epsilon) / (2 * delta)), BASE_BITS)))
    bound = exp_lower(epsilon)          # (2^s / a)^(2 Delta) <= bound <= e^eps: beta^(-2 Delta) <= e^eps
    while Fraction(1 << BASE_BITS, a) ** (2 * delta) > bound:
        a += 1
    return Law(levels, scale, delta, a, grid_points(stat), epsilon)


def table_length(law: Law) -> int:
    """Entries of the proposal's weight table until it reaches 1 (an estimate, for the guard)."""
    return int(BASE_BITS * math.log(2) / -math.log(law.a / 2.0 ** BASE_BITS)) + 2


def weight_table(law: Law) -> np.ndarray:
    """``x_t >= 2^B beta^t`` for ``t = 0, 1, ...`` until 1, the last entry standing for every
    larger ``t`` (Python integers in an object array). An upper bound by induction on
    ``y_t = ceil(y_(t-1) a / 2^B) >= 2^(B+E) beta^t`` (``E = B`` guard bits, so that the rounding
    stalls only below ``1 / (1 - beta) < 2^E``), ``x_t = ceil(y_t / 2^E)``."""
    out, y, a, e = [1 << BASE_BITS], 1 << (2 * BASE_BITS), law.a, BASE_BITS
    while out[-1] > 1:
        y = -((-y * a) >> BASE_BITS)
        out.append(-((-y) >> e))
    return np.array(out, dtype=object)


# ------------------------------------------------------------------ the utility
def ranks(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``L(c) = #{x < c}``, ``L+(c) = #{x <= c}`` and ``n`` from the units per grid point."""
    upto = np.cumsum(hist, dtype=np.int64)
    return upto - hist, upto, int(upto[-1]) if len(upto) else 0


def gap_distance(target: int | np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``dist(target, [lo, hi])``, elementwise."""
    return np.maximum(np.maximum(lo - target, target - hi), 0)


def utility(law: Law, low: np.ndarray, high: np.ndarray, n: int, c: list[int]) -> int:
    """``U(c)`` (scaled by ``D``): the least total variation of a walk from 0 to 0 through the
    boxes ``[D L(c_j) - D q_j n, D L+(c_j) - D q_j n]``, by the lazy walk (moving only to the
    nearest end of the next box is optimal on a line).

    Proof: docs/proofs/quantile.md
    """
    pos = total = 0
    for q, cj in zip(law.levels, c):
        shift = int(q * law.scale) * n
        lo, hi = law.scale * int(low[cj]) - shift, law.scale * int(high[cj]) - shift
        nxt = min(max(pos, lo), hi)
        total, pos = total + abs(nxt - pos), nxt
    return total + abs(pos)


def pair_terms(law: Law, low: np.ndarray, high: np.ndarray, n: int, j: int, row: int | None = None) -> np.ndarray:
    """The relaxation's term ``t_j(c, c')`` for ``c = c_(j-1)`` (every ``c``, or only ``row``) and
    ``c' = c_j`` (``j = 2..m``): the distance between consecutive boxes,
    ``dist(D g_j n, [D(L(c') - L+(c)), D(L+(c') - L(c))])``."""
    gap = int((law.levels[j - 1] - law.levels[j - 2]) * law.scale) * n
    s = law.scale
    if row is None:
        return gap_distance(gap, s * (low[None, :] - high[:, None]), s * (high[None, :] - low[:, None]))
    return gap_distance(gap, s * (low - high[row]), s * (high - low[row]))


def end_terms(law: Law, low: np.ndarray, high: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first term ``dist(0, box_1)`` and the last ``dist(0, box_m)`` (scaled)."""
    s = law.scale
    first = gap_distance(int(law.levels[0] * s) * n, s * low, s * high)
    last = gap_distance(int(law.levels[-1] * s) * n, s * low, s * high)
    return first, last


# ------------------------------------------------------------------ the exact sampler
def _weights(table: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """``x_t`` of each term as Python integers (an object array), ``t`` past the table at 1."""
    return table[np.minimum(terms, len(table) - 1)]


def completions(law: Law, table: np.ndarray, low: np.ndarray, high: np.ndarray, n: int) -> list[np.ndarray]:
    """``Z_j(c)``: the proposal's weight of every completion from ``c_j = c``, ``j = 1..m``
    (exact integer sums, backwards)."""
    m, g = len(law.levels), law.points
    _, last = end_terms(law, low, high, n)
    z = [np.empty(0, dtype=object)] * m
    z[m - 1] = _weights(table, last)
    upper = np.triu(np.ones((g, g), dtype=bool))
    for j in range(m, 1, -1):
        w = _weights(table, pair_terms(law, low, high, n, j))
        w[~upper] = 0
        z[j - 2] = w.dot(z[j - 1])
    return z


def _pick(weights: np.ndarray, source: RandomSource) -> int:
    """An index drawn with probability proportional to non-negative integer ``weights``."""
    cum = list(itertools.accumulate(weights.tolist()))
    return bisect.bisect_right(cum, source.randbelow(cum[-1]))


@dataclass(frozen=True, eq=False)
class Chain:
    """One group's proposal, prepared once: the ranks, the weight table, the end terms and the
    completions ``Z_j``."""

    law: Law
    low: np.ndarray
    high: np.ndarray
    n: int
    table: np.ndarray
    first: np.ndarray
    last: np.ndarray
    z: list

    @classmethod
    def of(cls, law: Law, hist: np.ndarray, table: np.ndarray | None = None) -> "Chain":
        low, high, n = ranks(np.asarray(hist, dtype=np.int64))
        table = weight_table(law) if table is None else table
        first, last = end_terms(law, low, high, n)
        return cls(law, low, high, n, table, first, last, completions(law, table, low, high, n))

    def draw(self, source: RandomSource) -> list[int]:
        """One draw of the joint exponential mechanism: the grid indices ``c_1 <= ... <= c_m``,
        exactly (module docstring).

        Proof: docs/proofs/quantile.md
        """
        law, table, m = self.law, self.table, len(self.law.levels)
        start = _weights(table, self.first) * self.z[0]
        while True:
            c = [_pick(start, source)]
            proposal = int(_weights(table, self.first[c[0]]))
            for j in range(2, m + 1):
                w = _weights(table, pair_terms(law, self.low, self.high, self.n, j, row=c[-1]))
                w[:c[-1]] = 0
                c.append(_pick(w * self.z[j - 1], source))
                proposal *= int(w[c[-1]])
            proposal *= int(_weights(table, self.last[c[-1]]))
            u = utility(law, self.low, self.high, self.n, c)
            # accept with probability beta^U 2^(B(m+1)) / proposal (<= 1: U >= U', x_t >= 2^B beta^t)
            if source.randbelow(proposal << (BASE_BITS * u)) < law.a ** u << (BASE_BITS * (m + 1)):
                return c


def joint_draw(law: Law, hist: np.ndarray, source: RandomSource, table: np.ndarray | None = None) -> list[int]:
    """One draw for a group's units per grid point (:meth:`Chain.draw`).

    Proof: docs/proofs/quantile.md
    """
    return Chain.of(law, hist, table).draw(source)


def sample_many(law: Law, hist: np.ndarray, source: RandomSource, count: int) -> list[list[int]]:
    """``count`` independent draws for one group, the chain prepared once (tests, ``--compare``)."""
    chain = Chain.of(law, hist)
    return [chain.draw(source) for _ in range(count)]


def release_groups(law: Law, grid: np.ndarray, source: RandomSource) -> list[list[int]]:
    """One draw per group (row of ``grid``), the weight table built once."""
    table = weight_table(law)
    return [joint_draw(law, row, source, table) for row in grid]


# ------------------------------------------------------------------ the kind
class Quantile(Kind):
    name = "quantile"
    order = 6
    keys = ("column", "clamp", "resolution", "quantiles", "by", "groups")
    per_unit = True

    def levels(self, t: Mapping[str, Any]) -> tuple[Fraction, ...]:
        if "quantiles" not in t:
            raise InvalidParameterError("quantiles", None, "the levels to release, e.g. quantiles = [0.25, 0.5, 0.75]")
        return read_levels(t["quantiles"])

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        fields = {**read_groups(t), **read_values(t, "column"), "quantiles": self.levels(t)}
        lo, hi = fields["clamp"]
        check_size(int((hi - lo) / fields["resolution"]) + 1, len(fields["quantiles"]))
        return fields

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        if stat.mechanism != "optimal":
            raise InvalidParameterError("mechanism", stat.mechanism, f"no mechanism for a {self.name} (it is released "
                                        "by the joint exponential mechanism): leave mechanism out")
        eps = cell_target(stat.target, self.cells(stat, unit)).epsilon if stat.target else None  # type: ignore
        if eps is not None and table_length(law_of(stat, eps, 1)) > MAX_TABLE:
            raise InvalidParameterError("epsilon", stat.target.epsilon,  # type: ignore[union-attr]
                                        f"a larger epsilon or levels with fewer decimals for this {self.name} (the "
                                        f"exact sampler's weight table would pass {MAX_TABLE:,} entries)")

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return 0, 1   # one point of one group's data: each rank count moves by 0 or 1

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        return Answers(unit_points(stat, part, counts, rules))

    def from_grid(self, stat: Statistic, grid: np.ndarray) -> Answers:
        return Answers(grid)

    def mechanism(self, stat: Statistic, target: Target, distance: int | None, n: int, offset: int,
                  keys_per_unit: int = 1) -> Cell:
        """The group's part in the unit's total: randomized response certified at no less than
        the theorem's pure epsilon stands in for it (as for report-noisy-max); what is drawn is
        :func:`joint_draw`."""
        stand = dominating_rr(target.epsilon)
        return Cell(stat.name, stand, "quantile", n, offset, "joint exponential mechanism over the grid",
                    standin=stand, target=Target(target.epsilon))

    def design_key(self, stat: Statistic) -> tuple:
        return self.name, stat.target

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        stat = item.stat
        law = law_of(stat, cell_target(stat.target, item.derived.cells).epsilon,  # type: ignore[arg-type]
                     item.derived.distance or 1)
        drawn = release_groups(law, item.answers.cells, source)
        lo, _ = stat.scaled_clamp
        names = [level_name(q) for q in law.levels]
        rows = [dict(zip(names, (grid_value(stat, lo + c) for c in cs))) for cs in drawn]
        many = stat.by is not None
        err = law.rank_error(alpha)
        return {"values" if many else "value": dict(zip(stat.groups.labels(), rows)) if many else rows[0],  # type: ignore
                "intervals" if many else "interval": None, "interval_method": NO_INTERVAL,
                "expected_abs_error": None,
                "expected_abs_error_method": "none in the column's units (a rank bound, see accuracy)",
                "accuracy": accuracy(law, alpha, err), "unit_value": UNIT_VALUE, "grid": grid_json(stat)}

    def document(self, item: Planned, doc: dict) -> dict:
        stat, derived = item.stat, item.derived
        law = law_of(stat, cell_target(stat.target, derived.cells).epsilon, derived.distance or 1)  # type: ignore
        groups = "one group" if derived.cells == 1 else f"{derived.cells} groups"
        moved = {**doc["neighbourhood"], "utility_distance": law.sensitivity,
                 "in_words": f"one unit ({derived.change}) is one point of one group's data (its value on the grid): "
                             f"it changes {groups}' data by one point, so each rank count by at most "
                             f"{derived.distance} and the utility by at most {law.sensitivity}; derived from the query "
                             "and the unit, not from the data"}
        return {**doc, "neighbourhood": moved, "mechanism": mechanism_json(law),
                "certificate": certificate_json(law, derived.cells, stat.target.epsilon)}  # type: ignore[union-attr]

    def csv_rows(self, entry: Mapping[str, Any]) -> list[tuple]:
        """``(group, level, value, None)``: the level stands in the key's column."""
        if "value" in entry:
            return [("", k, v, None) for k, v in entry["value"].items()]
        return [(g, k, v, None) for g, row in entry["values"].items() for k, v in row.items()]

    def about(self, stat: Statistic) -> str:
        return f"quantiles {', '.join(level_name(q) for q in stat.quantiles)} of {stat.column} per unit"


class Median(Quantile):
    """``median``: the quantile of level 0.5 (no ``quantiles`` key)."""

    name = "median"
    order = 7
    keys = ("column", "clamp", "resolution", "by", "groups")

    def levels(self, t: Mapping[str, Any]) -> tuple[Fraction, ...]:
        return (Fraction(1, 2),)


# ------------------------------------------------------------------ answers and the document
def unit_points(stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> np.ndarray:
    """Units per grid point (groups x ``G``): each unit's total in each of its kept groups
    (its home group, the group of most of its counted rows, ties to the first declared; or
    its ``unit.max_groups`` groups, :func:`..cells.top_cells`; its rows elsewhere dropped and
    counted), clamped to the clamp (counted when it is)."""
    groups, points = stat.shape
    out = np.zeros((groups, points), np.int64)
    unit, group = part["unit"].to_numpy(np.int64), part["group"].to_numpy(np.int64)
    rows, value = part["rows"].to_numpy(np.int64), part["value"].to_numpy(np.int64)
    if len(unit) == 0:
        return out
    if stat.by is not None:
        keep = in_kept(unit, group, rows, rules)
        bump(counts, "rows_outside_the_units_group", int(rows[~keep].sum()))
        unit, group, value = unit[keep], group[keep], value[keep]
    pairs, inverse = np.unique(unit * groups + group, return_inverse=True)   # one point per (unit, kept group)
    total = np.zeros(len(pairs), np.int64)
    np.add.at(total, inverse.reshape(-1), value)
    at = pairs % groups
    lo, hi = stat.scaled_clamp
    bump(counts, "unit_values_clamped", int(((total < lo) | (total > hi)).sum()))
    np.add.at(out, (at, np.clip(total, lo, hi) - lo), 1)
    return out


def level_name(q: Fraction) -> str:
    """A level as the document's key: its decimal (``0.25``)."""
    return repr(float(q))


def grid_value(stat: Statistic, index: int) -> Any:
    """A grid point in the column's units (an integer where the resolution makes it one)."""
    v = index * stat.resolution
    return int(v) if v.denominator == 1 else float(v)


def grid_json(stat: Statistic) -> dict:
    lo, hi = stat.clamp  # type: ignore[misc]
    return {"lower": grid_value(stat, int(lo / stat.resolution)), "upper": grid_value(stat, int(hi / stat.resolution)),
            "resolution": float(stat.resolution), "points": grid_points(stat)}


def accuracy(law: Law, alpha: float, err: Fraction) -> dict:
    from ...analysis.outward import sum_up
    ranks_up = sum_up([err])
    return {"alpha": alpha, "rank_error": ranks_up, "all_levels_at_once": True,
            "statement": f"with probability >= {1 - alpha:g}, every released quantile lies within {ranks_up:g} ranks "
                         "of its level (its rank error: the distance from q n to the ranks of the units at the released "
                         "point), whatever the data: from the mechanism's law, P(U >= tau) <= |C| beta^tau",
            "outputs": law.outputs(), "tau": law.tau(alpha),
            "grid_units": "none without the data: a rank bound says nothing of values (a gap in the data)"}


def mechanism_json(law: Law) -> dict:
    return {"name": "joint exponential mechanism", "paper": "Gillenwater, Joseph & Kulesza 2021 (ICML), JointExp",
            "levels": [level_name(q) for q in law.levels], "candidates": f"non-decreasing sequences of the {law.points} "
            "grid points (public)", "utility": "minus the least total variation of the rank errors through the "
            "outputs' rank intervals (the gap counts' distances to their shares, ties split), scaled by "
            f"D = {law.scale}", "utility_sensitivity": law.sensitivity,
            "base": {"beta": f"{law.a} / 2^{BASE_BITS}", "rule": "the least a with (2^64 / a)^(2 Delta) <= a rational "
                     "lower bound of e^epsilon, checked exactly"},
            "sampler": "exact: rejection from a chain of integer weights x_t >= 2^64 beta^t (exact sums), accepted by "
                       "one integer comparison; the injected random source; no float in what is drawn"}


def certificate_json(law: Law, cells: int, epsilon: float) -> dict:
    return {"exact": False, "epsilon_pure": epsilon, "delta": 0.0, "cells_per_unit": cells,
            "per_group": {"epsilon": law.epsilon, "utility_sensitivity": law.sensitivity,
                          "theorem": "the exponential mechanism (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10) "
                                     "with base beta >= e^(-eps/(2 Delta)): every output's probability ratio between "
                                     "neighbours is at most beta^(-2 Delta) <= e^eps",
                          "exact_parts": "the base's bound (rational arithmetic), the utility's sensitivity (proven "
                                         "for every table), the sampled law (exactly beta^U / Z)"},
            "composition": "basic composition over the groups one unit moves",
            "proof": "docs/proofs/quantile.md",
            "note": "a guarantee by theorem for the sampler drawn exactly; not an exact certificate of a designed "
                    "mechanism"}


KIND = Quantile()
