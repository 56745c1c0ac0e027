"""The statistics of a table, released under one budget: plan, certify, compose, draw, document.

Flow (one way): the spec (:mod:`.spec`) -> the bounded aggregate and exact answers
(:mod:`.aggregate`) -> each statistic's derived neighbourhood (:mod:`.neighbourhood`) -> its
cells' certified mechanisms (:mod:`.mechanisms`, through ``Request``/``design``) -> the unit's
total (basic and PLD composition of every cell a unit can move, the functions ``release``
uses: :func:`optnoise.table.plan.record_total`), refused above the budget *before* any noise
is drawn -> the draws -> intervals and errors (post-processing, :mod:`.intervals`) -> the
document (keys: docs/statistics.md).

Under ``replace`` the number of units is public (the papers' model): the domains of counts
and sums are sized from it, so the mechanisms are designed once the data have been
aggregated (and before any noise is drawn); under ``add-remove`` from ``max_units``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Iterable

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import RandomSource, random_source
from ..seeded import warn_not_private, withhold
from ..table.manifest import round_up
from ..table.plan import attack_within, over_budget, within
from .aggregate import Aggregated, aggregate, answers
from .cells import Answers
from .intervals import unbiased_price
from .kinds import cell_domain, cell_for, derive, kind_of, score_sensitivity
from .mechanisms import Cell, cell_target, dominating_rr
from .neighbourhood import Derived
from .noisy_max import guarantee as rnm_guarantee
from .spec import QuerySpec, parse_query_spec
from .statistic import Statistic


@dataclass(frozen=True, eq=False)
class TheoremPart:
    """A report-noisy-max release in the unit's total: binary randomized response certified at
    no less than its theorem's epsilon stands in for it (see :class:`~.mechanisms.Cell`)."""

    name: str
    mechanism: Any
    epsilon: float

    @property
    def epsilon_delta(self) -> tuple[float, float]:
        return self.epsilon, 0.0

    def composition_profile(self):
        from ..analysis import IntegerForm, exact_profile
        q = self.mechanism.quantize()
        return exact_profile(IntegerForm(self.mechanism.kind, q.weights, 1 << q.bits), q.neighbourhood)


@dataclass(frozen=True, eq=False)
class Planned:
    """A statistic with its derived neighbourhood, exact answers and mechanism."""

    stat: Statistic
    derived: Derived
    answers: Answers
    cell: Cell | None          # None for report-noisy-max
    sensitivity: int | None = None
    #: The number of units, where it is public (``replace``); ``None`` under ``add-remove``.
    units: int | None = None

    def profile(self):
        """The exact profile of one of the cells (what the total composes ``len(parts)`` times)."""
        return self.parts[0].composition_profile()

    @cached_property
    def l1_epsilon(self) -> float | None:
        """Under the L1 plan (``derived.l1``): the statistic's proven pure epsilon, ``l1`` times
        the cell's certificate at distance 1, multiplied exactly and rounded up (the chaining
        argument: :mod:`.neighbourhood`); ``None`` otherwise."""
        if self.derived.l1 is None or self.cell is None:
            return None
        from fractions import Fraction

        from ..analysis.outward import sum_up
        return sum_up([Fraction(self.cell.epsilon_pure) * self.derived.l1])

    @cached_property
    def parts(self) -> list:
        """What one unit can move, for the unit's total: the cell once per cell it moves (under
        the L1 plan, binary randomized response at the statistic's pure epsilon, once)."""
        if self.l1_epsilon is not None:
            return [TheoremPart(self.stat.name, dominating_rr(self.l1_epsilon), self.l1_epsilon)]
        if self.cell is not None:
            return [self.cell] * self.derived.cells
        eps = cell_target(self.stat.target, self.derived.cells).epsilon  # type: ignore[arg-type]
        part = TheoremPart(self.stat.name, dominating_rr(eps), eps)
        return [part] * self.derived.cells


def plan(spec: QuerySpec, agg: Aggregated) -> list[Planned]:
    """Derive, design and certify every statistic (no noise drawn)."""
    unit = spec.unit
    if unit.change == "add-remove" and agg.units > int(unit.max_units):  # type: ignore[arg-type]
        raise InvalidParameterError("unit.max_units", unit.max_units, f"a public bound at least the number of units "
                                    f"in the data ({agg.units})")
    if unit.change == "replace" and agg.units == 0:
        raise InvalidParameterError("input", "no rows", "a table with at least one row (under replace the number of "
                                    "units, here 0, is public: there is nothing to release)")
    out = []
    built: dict[tuple, Cell] = {}
    public = agg.units if unit.change == "replace" else None
    for stat in spec.statistics:
        derived = derive(stat, unit)
        exact = answers(agg, stat)
        try:
            if stat.method == "report-noisy-max":
                out.append(Planned(stat, derived, exact, None, score_sensitivity(stat, unit), public))
                continue
            offset, n = cell_domain(stat, unit, agg.units)
            key = cell_key(stat, derived, n, offset)
            if key not in built:
                built[key] = cell_for(stat, derived, n, offset)
            cell = built[key]
            bounded = None if cell.bounded is None else replace(cell.bounded, name=stat.name)
            out.append(Planned(stat, derived, exact, replace(cell, name=stat.name, bounded=bounded), None, public))
        except InvalidParameterError as exc:
            if exc.parameter.startswith("unit."):
                raise
            raise exc.renamed(f"statistics.{stat.name}.{exc.parameter}") from exc
    return out


def cell_key(stat: Statistic, derived: Derived, n: int, offset: int) -> tuple:
    """What :func:`~.mechanisms.cell_for` may build a cell from: the statistic but for its
    name and ``where`` (which only select rows), its derived neighbourhood and its domain.
    Statistics with equal keys get one mechanism, designed and certified once (the same
    object is sampled and certified for both); any field a later mechanism reads is in the
    key by construction."""
    return replace(stat, name="", where=()), derived, n, offset


def unit_total(planned: list[Planned], spec: QuerySpec) -> dict:
    """The unit's total over every statistic, refused above the budget.

    As ``release`` composes a record (:func:`optnoise.table.plan.record_total`, whose keys
    these are): ``basic`` sums the cells' certified targets (rounded up); ``pld`` composes the
    exact profiles of every cell one unit can move
    (:func:`optnoise.analysis.composition.compose_sequence`), each distinct cell once with
    its count, so that a mechanism moved twice is profiled once.
    """
    from ..analysis.composition import compose_sequence
    from ..analysis.outward import sum_up
    budget = spec.budget
    attack_target = budget if budget is not None and budget.notion == "attack" else None
    if attack_target is not None:   # checked on the attack readout below
        budget = None
    parts = [p for item in planned for p in item.parts]
    eps = [p.epsilon_delta for p in parts]
    basic = {"epsilon": sum_up(e for e, _ in eps), "delta": min(1.0, sum_up(d for _, d in eps))}
    delta = budget.delta if budget is not None else 1e-6
    items = [(item.profile(), len(item.parts)) for item in planned]
    shortcut = None if len(items) == 1 and items[0][1] == 1 else pure_total(items, delta, budget)
    if len(items) == 1 and items[0][1] == 1:
        prof = items[0][0]
        pld = {"epsilon": min(prof.epsilon_dp(delta), prof.epsilon_pure), "delta": delta, "bound": "one cell"}
        if budget is not None:
            pld["delta_at_budget_epsilon"] = prof.delta_dp(budget.epsilon)
    elif shortcut is not None:
        pld = shortcut
    else:
        composed = compose_sequence(items, epsilon=None if budget is None else budget.epsilon, delta=delta)
        pld = {"epsilon": composed.epsilon_dp, "delta": delta, "bound": composed.bound.get("epsilon_dp")}
        if budget is not None:
            pld["delta_at_budget_epsilon"] = composed.delta_dp
    total: dict[str, Any] = {"cells": len(parts), "basic": basic, "pld": pld,
                             "budget": None if budget is None else {"epsilon": budget.epsilon,
                                                                    "delta": budget.delta}}
    if budget is not None:
        total["within_budget"] = within(basic, pld, budget)
        if not total["within_budget"]:
            raise over_budget(total, budget)
    extra = () if attack_target is None or attack_target.max_tpr is None else (attack_target.at_fpr,)
    total["attack"] = total_attack(items, total, spec.unit, extra)
    if attack_target is not None:
        total["budget"] = attack_target.to_json()
        total["within_budget"] = attack_within(total["attack"], attack_target)
        if not total["within_budget"]:
            raise over_budget(total, attack_target)
    return total


#: Epsilons of the grid at which the composed privacy profile is read for the attack bound.
ATTACK_GRID = 16


def total_attack(items: list[tuple[Any, int]], total: dict, unit: Any, fprs: tuple[float, ...] = ()) -> dict:
    """The unit's total in attack terms (``total.attack``, the shape of the release manifest's):
    a proven upper bound on the best attacker's TPR at each FPR, fast.

    The release manifest's readout (:func:`optnoise.table.manifest.record_attack`) composes
    the exact trade-off curves of every pair, which takes minutes on channels of a thousand
    outputs. Here the attacker is bounded from ``(epsilon, delta)`` guarantees alone
    (:func:`optnoise.analysis.tradeoff.profile_readout`: every proven point is a line below
    the trade-off curve, so the best line over any set of points is a proven bound): the
    composed privacy profile ``delta(eps)`` of every cell one unit moves
    (:func:`optnoise.analysis.composition.delta_curve`: each statistic's pairs as one
    dominating pair, PLD-composed with numpy's FFT and a proven allowance
    (:mod:`optnoise.analysis.dense_pld`, no dp_accounting import), and the pure bound; each
    an upper bound; RDP, which helps
    only at deltas far below what an FPR of 0.001 reads, is left out) at :data:`ATTACK_GRID` epsilons from 0 to the pure sum (or twice the total's
    epsilon), the total's own ``basic`` and ``pld`` points, and the pure sum
    ``sum k eps_pure``. For a pure total the pure line alone gives the closed form
    ``min(e^eps FPR, 1 - e^-eps (1 - FPR))``; with the profile it is never looser.
    The second family of lines needs the pairs closed under swapping: the derived
    neighbourhoods are (a neighbouring table's neighbour is the table itself), and it is
    checked (:func:`~optnoise.analysis.tradeoff.swap_closed`).
    """
    import math
    from fractions import Fraction

    from ..analysis.composition import delta_curve
    from ..analysis.outward import sum_up
    from ..analysis.tradeoff import DEFAULT_FPRS, profile_readout, swap_closed
    from ..table.manifest import WORDS_FPR
    pures = [prof.epsilon_pure for prof, _ in items]
    pure = sum_up(k * Fraction(e) for e, (_, k) in zip(pures, items)) if all(map(math.isfinite, pures)) else math.inf
    basic, pld = total["basic"], total["pld"]
    points = [(basic["epsilon"], basic["delta"])]
    if pld.get("epsilon") is not None:
        points.append((pld["epsilon"], pld["delta"]))
    top = pure if math.isfinite(pure) else 2 * max(e for e, _ in points)
    grid = np.linspace(0.0, min(top, 50.0), ATTACK_GRID)
    # each item's pairs as one dominating pair, no RDP: valid bounds, for the cost of one PLD
    eps, deltas = delta_curve(items, grid, orders=(), max_combinations=1)
    points += list(zip(eps.tolist(), deltas.tolist()))
    symmetric = all(swap_closed(prof.neighbourhood) for prof, _ in items)
    readout = profile_readout(points, pure=pure, symmetric=symmetric, fprs=sorted({*DEFAULT_FPRS, WORDS_FPR, *fprs}))
    who = f"a {unit.id}'s rows" if unit.id else "a row"
    if unit.change == "add-remove":
        words = {"subject": who, "verb": "were", "qualifier": " (A: in the table, B: left out)"}
    else:
        words = {"subject": who, "verb": "were", "qualifier": ", for any two sets of rows A and B"}
    out = readout.to_json(**words)
    out["how"] = (f"a proven upper bound, not the exact curve: the best of the lines TPR <= e^eps FPR + delta(eps)"
                  f"{' and TPR <= 1 - e^-eps (1 - delta(eps) - FPR)' if symmetric else ''} over the composed "
                  f"privacy profile at {ATTACK_GRID} epsilons, the total's basic and pld points and the pure sum; "
                  "posterior and mu from the pure sum alone; rounded up")
    return out


#: The PLD, RDP and basic bounds are skipped when they could lower the pure sum by at most
#: this fraction of it (:func:`pure_total`).
PURE_GAP = 1e-3


def pure_total(items: list[tuple[Any, int]], delta: float, budget: Any) -> dict | None:
    """The unit's ``pld`` entry from the pure sum alone, when no other bound can beat it by
    more than :data:`PURE_GAP` of it; else ``None`` (compose as usual).

    Why it is sound and what it gives up. Every part is pure: ``eps_i = epsilon_pure`` is
    finite (exact profiles, rounded outward). The pure sum ``S = sum k_i eps_i`` (rounded up)
    bounds the composition's ``epsilon`` at every ``delta``, and at any ``epsilon >= S`` its
    delta is exactly 0: the reported numbers stay proven bounds whatever is skipped. What the
    skipped bounds (PLD, RDP, basic) could report instead is an upper bound on the true
    ``epsilon(delta)`` of a composition that includes, for each item, any one of its pairs
    in all of its ``k_i`` releases (they take the worst pair combination, or a dominating
    pair). Take for each item the pair of largest loss ``L_i`` with the most ``P``-mass
    ``p_i`` there: the composed loss is ``L = sum k_i L_i`` with probability
    ``P = prod p_i^k_i``, so ``delta(e) >= P (1 - exp(e - L))`` and every such bound is at
    least ``lb = L + ln(1 - delta / P)``. When ``S - lb <= PURE_GAP * S`` they are skipped
    and the entry says by how much at most they could have lowered ``S`` (``skipped``).
    Skipped too when a budget's epsilon is below ``S`` (then the tighter bounds may decide).

    Proof: docs/proofs/pure-sum-shortcut.md
    """
    import math
    from fractions import Fraction

    from ..analysis.outward import sum_up
    pures = [prof.epsilon_pure for prof, _ in items]
    if not all(math.isfinite(e) for e in pures):
        return None
    total = sum_up(k * Fraction(e) for e, (_, k) in zip(pures, items))
    if budget is not None and total > budget.epsilon:
        return None
    top, log_mass = 0.0, 0.0
    for prof, k in items:
        best = max(((ld.losses[0], float(ld.p_mass[ld.losses >= ld.losses[0]].sum()))
                    for ld in (pair.loss_distribution() for pair in prof.pairs) if len(ld.losses)),
                   key=lambda lp: (lp[0], lp[1]), default=(0.0, 0.0))
        if best[1] <= 0:
            return None
        top, log_mass = top + k * float(best[0]), log_mass + k * math.log(best[1])
    ratio = delta / math.exp(log_mass)
    if ratio >= 1:
        return None
    gap = total - (top + math.log1p(-ratio))
    if gap > PURE_GAP * total:
        return None
    pld: dict[str, Any] = {"epsilon": total, "delta": delta, "bound": "pure",
                           "skipped": {"methods": ["pld", "rdp", "basic"], "could_lower_by_at_most": sum_up([gap, 1e-12]),
                                       "why": "every part is pure: the sum of the parts' pure epsilons bounds the total "
                                              "at every delta; the other bounds cannot go below the loss of the "
                                              "worst pairs' combination, which has probability P >> delta"}}
    if budget is not None:
        pld["delta_at_budget_epsilon"] = 0.0
    return pld


# ------------------------------------------------------------------ the document
UNIT_PROTECTS = {
    "replace": "one unit (all rows sharing its id, each row without one): all its rows replaced by any other rows, "
               "the number of units public",
    "add-remove": "one unit (all rows sharing its id, each row without one) added or removed",
}


def _statistic_doc(item: Planned, alpha: float, source: RandomSource, agg: Aggregated) -> dict:
    stat = item.stat
    kind = kind_of(stat)
    body = kind.body(item, alpha, source)
    target = stat.target
    doc: dict[str, Any] = {"kind": stat.kind, **body,
                           "target": target.to_json() if target else None,
                           "neighbourhood": item.derived.to_json(stat)}
    if item.cell is not None:
        cell = item.cell
        doc["mechanism"] = cell.to_json()
        if cell.epsilon_delta == (target.epsilon, target.delta):   # one meaning, one place: the target's
            doc["mechanism"]["cell_target"] = {"same_as": "target"}
        cert = cell.certificate_json()
        doc["certificate"] = {"exact": True, "cell": cert, "cells_per_unit": item.derived.cells,
                              "epsilon_pure": _up_sum([cell.epsilon_pure] * item.derived.cells),
                              "composition": "basic composition over the cells one unit moves, of the cell's "
                                             "certificate under its derived distances, rounded up"}
        if item.l1_epsilon is not None:
            doc["certificate"].update(
                epsilon_pure=item.l1_epsilon, l1=item.derived.l1,
                composition=f"L1 plan: one unit moves the cells by at most {item.derived.l1} in all; each cell's "
                            "noise is certified pure at distance 1 (eps1), so a cell moved by s is |s| eps1-DP "
                            "(chaining) and the independent cells together eps1 x (sum of |s|) <= "
                            f"{item.derived.l1} eps1, multiplied exactly and rounded up")
    else:
        doc["mechanism"] = {"name": "report-noisy-max", "rule": "permute-and-flip",
                            "score_sensitivity": item.sensitivity}
        doc["certificate"] = rnm_guarantee(target.epsilon, item.sensitivity, item.derived.cells)  # type: ignore
    if item.cell is not None and item.cell.space == "line":
        doc["unbiased"] = unbiased_price(item.cell, float(kind.resolution(stat) or 1))
    doc["bounding"] = agg.counts[stat.name]
    doc.update(kind.notes(stat))
    return doc


def _up_sum(values: list[float]) -> float:
    from ..analysis.outward import sum_up
    return sum_up(values)


def build_document(spec: QuerySpec, agg: Aggregated, source: RandomSource, *, engine: str,
                   input_info: dict | None = None) -> dict:
    """Plan, certify, compose (refused above the budget), then draw and write the document."""
    from ..version import __version__
    planned = plan(spec, agg)
    total = unit_total(planned, spec)
    stats = {item.stat.name: _statistic_doc(item, spec.alpha, source, agg) for item in planned}
    u = spec.unit
    doc: dict[str, Any] = {
        "tool": "optnoise", "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "unit": {"id": u.id, "max_rows": u.rows_bound, "change": u.change, "max_units": u.max_units,
                 "units": agg.units if u.change == "replace" else None, "protects": UNIT_PROTECTS[u.change],
                 "not_protected": "the number of units (under replace); the counts of dropped and clamped rows "
                                  "under 'bounding'; the declared keys and groups"},
        "private": bool(source.private),
        "alpha": spec.alpha,
        "input": {**(input_info or {}), "rows": agg.rows},
        "bounding": agg.bounding(),
        "statistics": stats,
        "total": total,
        "post_processing": "intervals, expected errors and any mean are computed from the released values and the "
                           "public mechanisms: they cost no budget",
        "randomness": {"source": source.description, "private": bool(source.private)},
        "engine": engine,
    }
    doc["statement"] = statement(doc)
    return doc if source.private else seeded(doc)


def seeded(doc: dict) -> dict:
    """A seeded (not private) document: certificates and the total under ``only_if_unseeded``."""
    names = list(doc["statistics"])
    claims = [("total",)] + [("statistics", n, "certificate") for n in names]
    return withhold(doc, claims, replace=[("unit", "protects"), ("statement",)])


def statement(doc: dict) -> str:
    """What one unit is guaranteed, in words (numbers rounded up)."""
    total = doc["total"]
    b, p = total["basic"], total["pld"]
    eps, delta = round_up(b["epsilon"]), round_up(b["delta"], 3)
    who = (f"each {doc['unit']['id'] or 'row'} (the privacy unit: {doc['unit']['protects']}) is protected across all "
           f"{len(doc['statistics'])} statistics together")
    if not b["delta"]:
        text = f"{who}: any change of its rows changes the probability of any set of released results by at most a " \
               f"factor e^{eps} (pure {eps}-DP, adding the statistics' guarantees)"
    else:
        text = f"{who}: {eps}-DP with delta {delta} (adding the statistics' guarantees)"
    if p["epsilon"] is not None and p["epsilon"] < b["epsilon"] * (1 - 1e-3):
        text += f"; composed tightly: {round_up(p['epsilon'])}-DP with delta {round_up(p['delta'], 3)}"
    if "attack" in total:
        text += f". In attack terms: {total['attack']['in_words']}"
    return text


def query(frame: Any, spec: Any, *, seed: int | None = None, source: RandomSource | None = None) -> dict:
    """Release the statistics of a pandas DataFrame as ``spec`` says.

    Parameters
    ----------
    frame:
        The table (one row per record; the unit's ``id`` column groups rows into units).
    spec:
        The TOML structure as a dict (docs/statistics.md) or a :class:`~.spec.QuerySpec`.
    seed, source:
        Randomness: the operating system's CSPRNG by default; a seed gives a reproducible,
        **not private** document (``"private": false``; certificates and total under
        ``only_if_unseeded``; a :class:`~optnoise.seeded.NotPrivateWarning`).

    Returns
    -------
    dict
        The document: ``unit``, ``private``, ``statistics.NAME`` (``kind``, ``value`` or
        ``values``, ``interval``/``intervals``, ``expected_abs_error``, ``mechanism``,
        ``neighbourhood``, ``certificate``), ``total`` (``basic``, ``pld``), ``statement``.

    >>> import pandas as pd, optnoise
    >>> frame = pd.DataFrame({"household": [1, 1, 2, 3], "hour": [18, 19, 7, 18]})
    >>> spec = {"unit": {"id": "household", "max_rows": 2},
    ...         "statistics": {"evening": {"kind": "count", "where": {"hour": {"lower": 17}}, "epsilon": 1.0}}}
    >>> doc = optnoise.query(frame, spec)
    >>> doc["statistics"]["evening"]["value"] in range(0, 4), doc["total"]["basic"]["epsilon"]
    (True, 1.0)
    """
    import pandas as pd
    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError("frame", type(frame).__name__, "a pandas DataFrame")
    parsed = parse_query_spec(spec)
    names = [str(c) for c in frame.columns]
    missing = [c for c in parsed.columns if c not in names]
    if missing:
        raise InvalidParameterError("spec", f"column '{missing[0]}'", f"columns of the frame: {', '.join(names)}")
    src = source if source is not None else random_source(seed)
    warn_not_private(src, "query")
    data = frame.set_axis(names, axis=1)[list(parsed.columns)]
    return build_document(parsed, aggregate([data], parsed), src, engine="python")


def aggregate_batches(batches: Iterable[Any], spec: QuerySpec) -> Aggregated:
    """:func:`.aggregate.aggregate` (the local engine's entry)."""
    return aggregate(batches, spec)


__all__ = ["Planned", "TheoremPart", "build_document", "cell_key", "plan", "query", "seeded", "statement",
           "total_attack", "unit_total"]
