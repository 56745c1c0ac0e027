"""The statistics of a table, released under one budget: plan, certify, compose, draw, document.

Flow (one way): the spec (:mod:`.spec`) -> the bounded aggregate and exact answers
(:mod:`.aggregate`) -> each statistic's derived neighbourhood (:mod:`.neighbourhood`) -> its
cells' certified mechanisms (:mod:`.mechanisms`, through ``Request``/``design``) -> the unit's
total (basic and PLD composition of every cell a unit can move, by the accountant ``release``
uses too: :mod:`optnoise.publish.accountant`), refused above the budget *before* any noise
is drawn -> the draws -> intervals and errors (post-processing, :mod:`.intervals`) -> the
document (keys: docs/statistics.md).

Under ``replace`` the number of units is public (the papers' model): the domains of counts
and sums are sized from it, so the mechanisms are designed once the data have been
aggregated (and before any noise is drawn); under ``add-remove`` from ``max_units``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, Iterable

import numpy as np

from ..errors import InvalidParameterError
from ..publish.accountant import Accountant, Parts
from ..publish.document import Wording, describe_input, header, provenance, seeded_document, split_audit
from ..publish.document import statement as document_statement
from ..randomness import RandomSource, random_source
from ..seeded import warn_not_private
from .aggregate import Aggregated, aggregate, answers, bounding_key
from .autobound import bound_parts, bound_words, chosen_in_batches, has_auto
from .cells import Answers
from .found import found_in_frame, with_found_keys
from .intervals import unbiased_price
from .kinds import cell_domain, cell_for, derive, kind_of, score_sensitivity, together
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
    #: The statistic's other certified parts (:meth:`~.kinds.base.Kind.parts_for`: a mean's count).
    extra: tuple[Cell, ...] = ()
    #: The number of units of the table: public under ``replace``; under ``add-remove`` private,
    #: read only by a kind that draws it through a noisy count (never written).
    all_units: int = 0
    #: The groups (or keys) one unit is kept in at most (``unit.max_groups``, default 1).
    groups_per_unit: int = 1
    #: The selection of a statistic by a key found in the data (``stat.selected_by``): its
    #: planned histogram of units (:func:`.found.with_selections`).
    companion: Any = None

    def profile(self):
        """The exact profile of one of the cells (what the total composes ``len(parts)`` times)."""
        return self.parts[0].composition_profile()

    def distinct(self) -> list[tuple[Any, int]]:
        """The statistic's parts, each distinct one once with the number of times one unit moves it."""
        found: dict[int, list] = {}
        for p in self.parts:
            found.setdefault(id(p), [p, 0])[1] += 1
        return [(p, k) for p, k in found.values()]

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
            if getattr(self.cell, "per_cell", False):   # each cell its own part: every combination of their pairs
                return [replace(self.cell) for _ in range(self.derived.cells)] + list(self.extra)
            return [self.cell] * self.derived.cells + list(self.extra)
        eps = cell_target(self.stat.target, self.derived.cells).epsilon  # type: ignore[arg-type]
        part = TheoremPart(self.stat.name, dominating_rr(eps), eps)
        return [part] * self.derived.cells


def plan(spec: QuerySpec, agg: Aggregated, progress: Callable[[int, int], None] | None = None) -> list[Planned]:
    """Derive, design and certify every statistic (no noise drawn); ``progress(done, total)``
    after each statistic (the command line says where a long run is)."""
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
            several = kind_of(stat).parts_for(stat, unit, agg.units)
            if several is not None:
                out.append(Planned(stat, derived, exact, several[0], None, public, tuple(several[1:]), agg.units))
                if progress is not None:
                    progress(len(out), len(spec.statistics))
                continue
            offset, n = cell_domain(stat, unit, agg.units)
            key = (*cell_key(stat, derived, n, offset), unit.groups_bound)
            if key not in built:
                built[key] = cell_for(stat, derived, n, offset, unit.groups_bound)
            cell = built[key]
            bounded = None if cell.bounded is None else replace(cell.bounded, name=stat.name)
            out.append(Planned(stat, derived, exact, replace(cell, name=stat.name, bounded=bounded), None, public,
                               all_units=agg.units, groups_per_unit=unit.groups_bound))
        except InvalidParameterError as exc:
            if exc.parameter.startswith("unit."):
                raise
            raise exc.renamed(f"statistics.{stat.name}.{exc.parameter}") from exc
        if progress is not None:
            progress(len(out), len(spec.statistics))
    named = {item.stat.name: item for item in out}
    return [item if item.stat.selected_by is None else replace(item, companion=named[item.stat.selected_by])
            for item in out]


def cell_key(stat: Statistic, derived: Derived, n: int, offset: int) -> tuple:
    """What a cell's mechanism is built from: the kind's :meth:`~.kinds.base.Kind.design_key`
    (the fields its mechanism reads), the derived neighbourhood and the domain. Statistics with
    equal keys get one mechanism, designed and certified once (the same object is sampled and
    certified for each): 300 sums of different columns with the same clamp, resolution and
    target share one design (issue 34)."""
    return kind_of(stat).design_key(stat), derived, n, offset


#: The unit's accountant (:class:`optnoise.publish.accountant.Accountant`, the one place a
#: total is composed): ``total.cells``, the pld bound ``"one cell"``, the attack readout
#: bounded from the composed privacy profile (fast on large channels), the pure-sum shortcut.
ACCOUNTANT = Accountant(counted="cells", single="one cell", readout="profile", pure_shortcut=True,
                        whose="the unit's total", parts="the statistics'")


def unit_total(planned: list[Planned], spec: QuerySpec) -> dict:
    """The unit's total over every statistic, refused above the budget (:data:`ACCOUNTANT`).

    ``basic`` sums the cells' certified targets (rounded up); ``pld`` composes the exact
    profiles of every cell one unit can move, each statistic's cell once with its count, so
    that a mechanism moved twice is profiled once; ``attack`` bounds the best attacker from
    the composed privacy profile; every bound moved by the shifts (:func:`accounted`).
    """
    parts, shifts = accounted(planned, spec)
    items, mixed = moved_items(parts)
    out = ACCOUNTANT.total(Parts(items, [ed for _, k, ed in parts for _ in range(k)], mixed=mixed,
                                 shifts=[(e, d) for e, d, _ in shifts]),
                           spec.budget, lambda worst: spec.unit.subject())
    if "selection" in out and (spec.bounds or any(a != "selection" for _, _, a in shifts)):   # the shifts by kind
        out.pop("selection")
        out.update(shift_sums(shifts))
    return out


def moved_items(parts: list[tuple[Any, int, tuple[float, float]]]) -> tuple[list[tuple[Any, int]], list[bool]]:
    """The ``(profile, count)`` items of the parts one unit moves, and whether each is *mixed*.

    A statistic's ``k`` cells are not ``k`` releases of one value: one unit moves each by its
    own pair -- a histogram under ``replace`` one cell down and another up, a channel's cells at
    different true values. An item of ``k > 1`` cells whose pairs' loss distributions are not all
    equal, bit for bit (:func:`~optnoise.analysis.dominating.one_loss`), is therefore composed
    as mixed (its dominating pair, :func:`~optnoise.analysis.composition.compose_best`), valid
    for every mix of its pairs; an item with one distinct
    pair (symmetric noise on the line: the ``+1`` and ``-1`` moves are mirror images, with one
    loss distribution) is the same pair in every cell, and keeps its exact self-composition.

    Proof: docs/proofs/composed-bounds.md ("The cells of one statistic")
    """
    from ..analysis.dominating import one_loss
    items = [(p.composition_profile(), k) for p, k, _ in parts]
    return items, [k > 1 and not one_loss(prof) for prof, k in items]


def shift_sums(shifts: list[tuple[float, float, str]]) -> dict:
    """The total's shifts by what they are: ``selection`` (keys found in the data),
    ``composed_statistics`` (:func:`unbounded_parts`) and ``declared_targets`` (statistics with a delta, composed by their
    declared targets: docs/proofs/private-bounds.md), each ``epsilon`` and ``delta`` summed and
    rounded up, absent when there is none."""
    from ..analysis.outward import sum_up
    out = {}
    for about, key, words in (("selection", "selection", None),
                              ("declared target", "declared_targets", "statistics with a delta, composed by their "
                               "declared targets (a bound chosen privately: docs/proofs/private-bounds.md)"),
                              ("composed statistic", "composed_statistics", "statistics whose cells hold their "
                               "selection (discrete Gaussian), each by its certified composed (epsilon, delta), "
                               "added to the rest (basic composition: docs/proofs/key-selection.md)")):
        these = [(e, d) for e, d, a in shifts if a == about]
        if these:
            out[key] = {"epsilon": sum_up(e for e, _ in these), "delta": sum_up(d for _, d in these),
                        "statistics": len(these), **({"about": words} if words else {})}
    return out


def accounted(planned: list[Planned], spec: QuerySpec, *, ledger: bool = False) -> tuple[list[tuple[Any, int, tuple[float, float]]],
                                                                  list[tuple[float, float, str]]]:
    """What the unit's total composes -- and a ledger records (:func:`charge`): each distinct
    part (with ``mechanism`` and ``composition_profile()``), the times one unit moves it and its
    ``(epsilon, delta)``; and each shift ``(epsilon, delta, about)`` added on top: a selection
    of keys found in the data (:func:`selections`).

    With a bound chosen privately (:mod:`.autobound`): the histograms' cells (exact profile,
    moved once under add-remove, twice under replace), then each statistic by what holds
    *whatever bound was chosen* -- its declared target: a pure one by binary randomized
    response certified at no less than its epsilon (it dominates every mechanism with that
    pure epsilon), one with a delta as a shift (basic composition with the rest). The exact
    profiles of the chosen bound's mechanisms are not composed: they depend on the histogram's
    output (adaptive composition). A selection of keys found in the data adds its threshold's
    shift; its cells, pure (the geometric) or not (the truncated), are composed as a pure
    statistic or by the declared target (its mechanism and threshold read no chosen bound).

    ``ledger``: the shifts a ledger adds, which composes each part's noise alone (a selection
    composed inside its cells' profile is then a shift too).

    Proof: docs/proofs/private-bounds.md, docs/proofs/key-selection.md
    """
    if not spec.bounds:
        return unbounded_parts(planned, ledger=ledger)
    parts: list[tuple[Any, int, tuple[float, float]]] = [(cell, moved, ed) for cell, moved, ed in bound_parts(spec)]
    shifts = []
    for item in planned:
        t = item.stat.target
        chosen = kind_of(item.stat).selection(item)   # keys found in the data: a mechanism no bound shapes
        if t.pure or (chosen is not None and all(p.epsilon_delta[1] == 0 for p in item.parts)):
            parts.append((TheoremPart(item.stat.name, dominating_rr(t.epsilon), t.epsilon), 1, (t.epsilon, 0.0)))
        else:
            shifts.append((t.epsilon, t.delta, "declared target"))
        if chosen is not None:
            shifts.append((chosen.epsilon_shift, chosen.delta, "selection"))
    return parts, shifts


def in_cells_point(item: Planned) -> tuple[float, float] | None:
    """A statistic whose selection is inside its cells' profile (:mod:`.found_gaussian`): its
    certified composed ``(epsilon, delta)`` -- the composition of its cells' exact profiles,
    every combination of their pairs; ``None`` for any other statistic."""
    if item.l1_epsilon is not None or not getattr(item.cell, "per_cell", False):
        return None
    point = item.cell.design["composed"]   # type: ignore[union-attr]
    return float(point["epsilon"]), float(point["delta"])


def unbounded_parts(planned: list[Planned], *, ledger: bool = False) -> tuple[list[tuple[Any, int, tuple[float, float]]],
                                                                              list[tuple[float, float, str]]]:
    """:func:`accounted` without a bound chosen privately: every statistic's distinct parts and
    its selection's shift -- except a statistic whose selection is inside its cells' profile
    composed beside anything else: its cells' pairs (four each) would multiply the combinations
    the composition enumerates past its cap, and the dominating pairs that replace them carry the
    selection's infinite-loss mass in every release, so it enters as a shift of its certified
    composed point ``(epsilon, delta)`` (basic composition with the rest: valid for any two
    mechanisms). Where such statistics are all there is, the first keeps its cells (its total is
    its certificate); the others are points.

    Proof: docs/proofs/key-selection.md ("The selection inside the cells' profile")
    """
    points = [in_cells_point(item) for item in planned]
    keep = next((i for i, pt in enumerate(points) if pt is not None), None) \
        if all(pt is not None for pt in points) else None
    parts: list[tuple[Any, int, tuple[float, float]]] = []
    shifts: list[tuple[float, float, str]] = []
    for i, (item, point) in enumerate(zip(planned, points)):
        if point is not None and i != keep:
            shifts.append((*point, "composed statistic"))
            parts += [(p, 1, p.epsilon_delta) for p in item.extra]
            continue
        parts += [(p, k, p.epsilon_delta) for p, k in item.distinct()]
        shifts += [(e, d, "selection") for e, d in selections([item], ledger=ledger)]
    return parts, shifts


def selections(planned: list[Planned], *, ledger: bool = False) -> list[tuple[float, float]]:
    """What each statistic with keys found in the data adds to the unit's total: its
    threshold's ``(epsilon, delta)``; nothing (``(0, 0)``) for a selection inside its cells'
    profile (``in_cells``: the total composes it with the cells), except for a ``ledger``,
    which composes the noise alone (docs/proofs/key-selection.md)."""
    out = []
    for item in planned:
        found = kind_of(item.stat).selection(item)
        if found is not None:
            inside = getattr(found, "in_cells", False) and not ledger
            out.append((0.0, 0.0) if inside else (found.epsilon_shift, found.delta))
    return out


# ------------------------------------------------------------------ the document
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
        if item.extra:
            doc["certificate"].update(
                parts={p.name: p.certificate_json() for p in item.extra}, cells_per_unit=len(item.parts),
                epsilon_pure=_up_sum([p.epsilon_pure for p in item.parts]),
                composition="basic composition over the statistic's parts (each certified exactly under its own "
                            "derived distances), rounded up; the unit's total composes every part")
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
        doc["accuracy"] = noisy_max_accuracy(item, agg)
    if item.cell is not None and item.cell.space == "line":
        doc["unbiased"] = unbiased_price(item.cell, float(kind.resolution(stat) or 1))
    doc["bounding"] = agg.counts[stat.name]
    doc.update(kind.notes(stat))
    return kind.document(item, doc)


def _up_sum(values: list[float]) -> float:
    from ..analysis.outward import sum_up
    return sum_up(values)


def build_document(spec: QuerySpec, agg: Aggregated, source: RandomSource, *, engine: str,
                   input_info: dict | None = None) -> dict:
    """Plan, certify, compose (refused above the budget), then draw and write the publishable
    document (:func:`build_documents` also gives the private audit record)."""
    return build_documents(spec, agg, source, engine=engine, input_info=input_info)[0]


def build_documents(spec: QuerySpec, agg: Aggregated, source: RandomSource, *, engine: str,
                    input_info: dict | None = None,
                    before_draw: Callable[[list[Planned], dict], None] | None = None,
                    progress: Callable[[int, int], None] | None = None) -> tuple[dict, dict]:
    """``(document, audit)``: the publishable document and the private audit record
    (:func:`optnoise.publish.document.split_audit`): the bounding counts, the input's hash and
    rows and the warnings go to the audit record; the number of units stays in the document
    only under ``replace``, where it is public. ``before_draw(planned, total)`` runs once every
    statistic is certified and the unit's total composed, before any noise is drawn (a ledger
    records the spend there, or refuses it)."""
    doc = _document(spec, agg, source, engine=engine, input_info=input_info, before_draw=before_draw,
                    progress=progress)
    private = [("bounding",), ("input", "sha256"), ("input", "rows")] + \
        [("statistics", name, "bounding") for name in doc["statistics"]]
    doc, audit = split_audit(doc, private, kept_warnings(spec, agg))
    return (doc if source.private else seeded(doc)), audit


def noisy_max_accuracy(item: Planned, agg: Aggregated) -> dict:
    """How often report-noisy-max names the true key, from exact laws on synthetic key totals of
    the statistic's shape (:func:`.compare.compare_statistic`, ``query --compare``): public, it
    reads no data -- its units are the public number (``replace``) or ``max_units``."""
    from .compare import compare_statistic
    unit = agg.spec.unit
    units = item.units if item.units is not None else int(unit.max_units)  # type: ignore[arg-type]
    try:
        found = compare_statistic(item.stat, unit, max(1, units))
    except InvalidParameterError:   # e.g. one declared key: its answer is known without the data
        return {"p_correct": None, "about": "no comparison for this statistic's shape (fewer than 2 keys)"}
    return {"p_correct": {name: p["report-noisy-max"]["p_correct"] for name, p in found["profiles"].items()},
            "about": "the probability that report-noisy-max names the true key, on synthetic key totals of this "
                     "statistic's shape for each profile of query --compare (exact laws): not computed from the data"}


def kept_warnings(spec: QuerySpec, agg: Aggregated) -> list[str]:
    """The statistics that keep no rows, or drop most of their rows as undeclared (the rule
    "drop, don't refuse" stays: declared keys are the public domain): said on stderr and in
    the audit record, never in the document (the counts are not protected)."""
    out = []
    for stat in spec.statistics:
        counts = agg.counts.get(stat.name, {})
        kept, undeclared = counts.get("rows_counted_before_unit_rules", 0), counts.get("rows_undeclared_key_or_group", 0)
        if agg.rows and not kept:
            out.append(f"statistics.{stat.name} keeps no rows (of {agg.rows}): its released values are noise around 0")
        elif undeclared > kept:
            out.append(f"statistics.{stat.name} drops most of its rows as undeclared keys or groups ({undeclared} "
                       f"dropped, {kept} kept): check its declared keys")
    return out


def _document(spec: QuerySpec, agg: Aggregated, source: RandomSource, *, engine: str,
              input_info: dict | None = None, before_draw: Callable[[list[Planned], dict], None] | None = None,
              progress: Callable[[int, int], None] | None = None) -> dict:
    """The whole document before the audit's fields are moved out."""
    planned = plan(spec, agg, progress)
    total = unit_total(planned, spec)
    if before_draw is not None:
        before_draw(planned, total)
    stats = {item.stat.name: _statistic_doc(item, spec.alpha, source, agg) for item in planned}
    stats = together(planned, stats, source)   # post-processing across statistics (tables that add up)
    doc: dict[str, Any] = {
        **header(),
        "unit": {**spec.unit.to_json(agg.units), "not_protected": NOT_PROTECTED},
        "private": bool(source.private),
        "alpha": spec.alpha,
        "input": describe_input(input_info, agg.rows),
        "bounding": agg.bounding(),
        "statistics": stats,
        "total": total,
        "post_processing": "intervals, expected errors and any mean are computed from the released values and the "
                           "public mechanisms: they cost no budget",
        **provenance(source, engine),
    }
    if spec.bounds:
        doc["bounds"] = {b.key: b.to_json() for b in spec.bounds}
    doc["statement"] = statement(doc) + bound_words(spec)
    return doc


#: What the unit does not protect, in words (document ``unit.not_protected``).
NOT_PROTECTED = ("the number of units (under replace, where it is public); the declared keys and groups (keys found in "
                 "the data are protected: only those whose noisy count passes the threshold are shown); the counts of "
                 "rows dropped and values clamped by the bounds are not in this document (the private audit record)")


def seeded(doc: dict) -> dict:
    """A seeded (not private) document: certificates and the total under ``only_if_unseeded``
    (:func:`optnoise.publish.document.seeded_document`)."""
    return seeded_document(doc, "statistics", [("certificate",)])


#: How a query states the unit's total in words (:func:`optnoise.publish.document.statement`).
WORDING = Wording(
    pure="{who}: any change of its rows changes the probability of any set of released results by at most a factor "
         "e^{eps} (pure {eps}-DP, adding the statistics' guarantees)",
    approximate="{who}: {eps}-DP with delta {delta} (adding the statistics' guarantees)",
    tight="; composed tightly: {eps}-DP with delta {delta}")


def statement(doc: dict) -> str:
    """What one unit is guaranteed, in words (numbers rounded up)."""
    who = (f"each {doc['unit']['id'] or 'row'} (the privacy unit: {doc['unit']['protects']}) is protected across all "
           f"{len(doc['statistics'])} statistics together")
    return document_statement(doc["total"], who, WORDING)


def query(frame: Any, spec: Any, *, seed: int | None = None, source: RandomSource | None = None,
          with_audit: bool = False, ledger: Any = None) -> Any:
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
    with_audit:
        Also return the private audit record (:func:`build_documents`).
    ledger:
        A :class:`~optnoise.publish.ledger.Ledger` of the frame's dataset: the run's spend is
        recorded before any noise is drawn (refused above the ledger's lifetime budget) and
        marked delivered when the document is made.

    Returns
    -------
    dict, or (dict, dict) with ``with_audit``
        The publishable document: ``unit``, ``private``, ``statistics.NAME`` (``kind``,
        ``value`` or ``values``, ``interval``/``intervals``, ``expected_abs_error``,
        ``mechanism``, ``neighbourhood``, ``certificate``), ``total`` (``basic``, ``pld``),
        ``statement``, ``audit``; and the private audit record (bounding counts, the input's
        rows, warnings), never to be published.

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
    if ledger is not None:
        ledger.check(dataset=ledger.dataset, unit=ledger_unit(parsed))
    runs: list = []

    def record(planned: list[Planned], total: dict) -> None:
        if ledger is not None:
            runs.append(charge(ledger, parsed, planned))

    parsed = with_found_keys(parsed, found_in_frame(data, parsed))
    parsed = chosen_in_batches([data], parsed, src)   # max_rows = "auto": the histogram first
    agg = aggregate([data], parsed, key=bounding_key(parsed, src))
    doc, audit = build_documents(parsed, agg, src, engine="python", before_draw=record)
    if runs:
        delivered(ledger, runs[0], audit)
    return (doc, audit) if with_audit else doc


def ledger_unit(spec: QuerySpec) -> str:
    """The unit a ledger records a query's spends for: the id column (``row`` without one),
    with its change when it is not the default ``replace``."""
    name = spec.unit.id or "row"
    return name if spec.unit.change == "replace" else f"{name} ({spec.unit.change})"


def charge(book: Any, spec: QuerySpec, planned: list[Planned], spec_sha256: str | None = None) -> Any:
    """Record the run's spend in the ledger (:meth:`optnoise.publish.ledger.Ledger.reserve`:
    refused above its lifetime budget) once every statistic is certified, before any draw."""
    from ..publish.spend import Part, Spend
    found, shifts = accounted(planned, spec, ledger=True)
    _, mixed = moved_items(found)     # a statistic's cells each moved by its own pair, as the document composes them
    parts = [Part(p.mechanism, count, epsilon_delta, mixed=m) for (p, count, epsilon_delta), m in zip(found, mixed)]
    return book.reserve(Spend(parts, book.dataset, ledger_unit(spec), spec_sha256=spec_sha256,
                              statistics=[s.name for s in spec.statistics], shifts=shifts))


def delivered(book: Any, run: Any, audit: dict) -> None:
    """Mark the run delivered (its outputs in place) and note it in the audit record."""
    book.delivered(run.run_id)
    audit["ledger"] = {"path": str(book.path), "run_id": run.run_id, "total": run.total}


def aggregate_batches(batches: Iterable[Any], spec: QuerySpec) -> Aggregated:
    """:func:`.aggregate.aggregate` (the local engine's entry)."""
    return aggregate(batches, spec)


__all__ = ["ACCOUNTANT", "Planned", "TheoremPart", "WORDING", "build_document", "build_documents", "cell_key", "charge", "delivered", "accounted", "kept_warnings", "ledger_unit", "moved_items", "plan", "query", "seeded",
           "statement", "unit_total"]
