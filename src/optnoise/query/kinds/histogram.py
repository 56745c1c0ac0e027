"""``histogram``: units (``of = "units"``, default) or rows (``of = "rows"``) per declared key,
optionally per declared group (``by``).

A histogram of units counts a unit once, at the (group, key) of most of its counted rows,
so one unit moves two cells by one under ``replace`` (one under ``add-remove``). A histogram
of rows holds a unit's ``m = max_rows`` rows over at most ``min(m, K)`` keys of its one group:
``add-remove`` moves those cells, ``replace`` the old group's and the new group's
(``2 min(m, K)``; one group: ``min(2m, K)``), each by at most ``m`` -- and by at most ``m``
(``2m``) in all, the *L1 plan* (docs/proofs/l1-chaining.md).

``consistent = true`` (a histogram of units under ``replace``, not unbiased): the cells and an
*outside* cell (units with no counted row) are released by the same certified cells and
projected onto the public number of units, so that they add up; a histogram ``by`` groups
adds up, key by key, to the overall consistent histogram of the same key, or to the one its
``within`` names (a hierarchy of any depth: :mod:`..hierarchy`, :mod:`..consistent`,
docs/proofs/consistent-tables.md)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...errors import InvalidParameterError
from ...randomness import RandomSource
from ...target import Target
from ..cells import ONE, Answers, GroupRules, summed_cells, units_at_home
from ..mechanisms import Cell, count_cell
from ..found import check_found
from ..found_gaussian import FoundCell
from ..hierarchy import read_within
from ..statistic import FROM_DATA, Statistic, column
from ..threshold import Threshold, randomised_threshold, smallest_threshold
from ..truncated import truncated_cell
from .base import Kind, Planned, UnitRules, group_rows, groups_of, read_groups, read_keys, read_of, rows_of


#: Keys one unit holds in a histogram of units: its one home cell.
KEYS_PER_UNIT = 1


class Histogram(Kind):
    name = "histogram"
    order = 1
    keys = ("key", "keys", "by", "groups", "of", "consistent", "within")
    unbiased = True
    by_key = True

    def read(self, t: Mapping[str, Any]) -> dict[str, Any]:
        consistent = t.get("consistent", False)
        if not isinstance(consistent, bool):
            raise InvalidParameterError("consistent", consistent, "true or false (written without quotes)")
        if t.get("keys") == FROM_DATA:   # found before the statistics are computed (:mod:`..found`)
            keys = {"key": column(t.get("key"), "key"), "keys": None, "keys_from_data": True}
        else:
            keys = read_keys(t)
        return {**read_of(t), **keys, **read_groups(t), "consistent": consistent, **read_within(t)}

    def check(self, stat: Statistic, unit: UnitRules) -> None:
        """``consistent = true`` needs a public total: a histogram of units under ``replace``,
        not unbiased (the projection would bring the bias back). Keys found in the data: a
        histogram of units (one key per unit), with a delta for the selection, noise on the
        line (the threshold reads its tail), not unbiased."""
        if stat.keys_from_data:
            check_found(stat)
        few = getattr(unit, "max_rows_per_group", None)
        if stat.by is None and stat.of == "units" and few is not None and few < groups_of(unit):
            raise InvalidParameterError("unit.max_rows_per_group", few, f"at least unit.max_groups ({groups_of(unit)}) "
                                        "for a histogram of units with no `by` (its one group is the whole unit: "
                                        f"{few} row(s) reach at most {few} key(s), while the noise pays for "
                                        f"{groups_of(unit)}); lower max_groups instead")
        if not stat.consistent:
            return
        if unit.change != "replace":
            raise InvalidParameterError("consistent", True, f"false under change = '{unit.change}' (the number of "
                                        "units is not public there, so the cells have no public total to add up to; "
                                        "consistent = true needs change = 'replace')")
        if stat.of != "units":
            raise InvalidParameterError("consistent", True, "false for a histogram of rows (its total, the number of "
                                        "rows kept, is not public; consistent = true needs of = 'units')")
        if groups_of(unit) > 1:
            raise InvalidParameterError("consistent", True, "false with unit.max_groups above 1 (a unit counted in "
                                        "several cells: the cells' total is not the public number of units)")
        if stat.unbiased:
            raise InvalidParameterError("consistent", True, "false with unbiased = true (adding up to the total is "
                                        "a projection that brings the bias back: choose one)")

    def rows_needed(self, stat: Statistic) -> str | None:
        return "a histogram of rows" if stat.of == "rows" else None

    def contribution(self, stat: Statistic, unit: UnitRules) -> tuple[int, int]:
        return (0, int(group_rows(unit))) if stat.of == "rows" else (0, 1)   # type: ignore[arg-type]

    def cells(self, stat: Statistic, unit: UnitRules) -> int:
        """A histogram of units: a unit counts in at most ``g = max_groups`` cells, so it moves
        ``2g`` cells by one under ``replace`` (``g`` under ``add-remove``); of rows:
        :func:`rows_histogram_cells`.

        Proof: docs/proofs/derived-neighbourhoods.md
        """
        if stat.of != "rows":
            return 2 * groups_of(unit) if unit.change == "replace" else groups_of(unit)
        return rows_histogram_cells(stat, unit)

    def l1(self, stat: Statistic, unit: UnitRules) -> int | None:
        """A unit's at most ``m`` rows move the cells by ``m`` in all (``2m`` under ``replace``);
        not for ``clamped-discrete-gaussian`` (the plan needs pure noise).

        Proof: docs/proofs/l1-chaining.md
        """
        if stat.of != "rows" or stat.mechanism == "clamped-discrete-gaussian":
            return None
        m = min(rows_of(unit), held_groups(stat, unit) * int(group_rows(unit)))   # type: ignore[arg-type]
        return 2 * m if unit.change == "replace" else m

    def answers(self, stat: Statistic, part: Any, counts: dict[str, int], rules: GroupRules = ONE) -> Answers:
        if stat.of == "rows":
            return Answers(summed_cells(stat, part, counts, part["rows"].to_numpy(np.int64), rules))
        return Answers(units_at_home(stat, part, counts, rules))

    def counts_units(self, stat: Statistic) -> bool:
        return stat.of == "units"

    def mechanism(self, stat: Statistic, target: Target, distance: int | None, n: int, offset: int,
                  keys_per_unit: int = 1) -> Cell:
        """Keys found in the data: the clamped geometric at the cell's epsilon (pure: the
        statistic's delta is the selection's), or the truncated geometric at the cell's
        ``(epsilon, delta)`` (no selection delta) where its threshold is smaller than the
        geometric's over the ``keys_per_unit`` keys one unit can create (:mod:`..truncated`);
        then (``mechanism = "optimal"``, the default) the discrete Gaussian with the selection
        composed in the cells (:mod:`..found_gaussian`) where its effective threshold ``tau - q``
        is lower still -- a choice made from ``(epsilon, delta)``, the cells one unit moves
        (``k``: the statistic's epsilon over the cell's) and ``keys_per_unit`` alone, not for a
        consistent table (its proof covers the geometric designs); else as every count."""
        if not stat.keys_from_data:
            return super().mechanism(stat, target, distance, n, offset)
        geometric = count_cell(stat.name, n, offset, int(distance), Target(target.epsilon),  # type: ignore[arg-type]
                               "clamped-geometric")
        truncated = truncated_cell(stat.name, n, offset, target) if int(distance) == 1 else None  # type: ignore[arg-type]
        noise = geometric.noise.quantize()
        chosen: Cell = geometric
        if truncated is not None and truncated.design["half_width"] + 2 < smallest_threshold(  # type: ignore[union-attr]
                noise, keys_per_unit, stat.target.delta).tau:  # type: ignore[union-attr]
            chosen = truncated
        if stat.mechanism != "optimal" or int(distance) != 1 or stat.consistent:  # type: ignore[arg-type]
            return chosen   # (tables that add up keep the geometric designs their proof covers)
        return gaussian_or(chosen, stat, n, offset, keys_per_unit, round(stat.target.epsilon / target.epsilon))  # type: ignore

    def design_key(self, stat: Statistic) -> tuple:
        return (*super().design_key(stat), stat.keys_from_data, stat.keys_from_data and stat.consistent)

    def selection(self, item: Planned) -> Threshold | None:
        """The threshold of keys found in the data: with the truncated geometric on ``[-T, T]``,
        ``T + 2`` (a key held by one unit alone never shows: nothing added); with the geometric,
        the least whose delta, over the ``g = max_groups`` keys one unit can hold (one by
        default), is the statistic's delta, with the largest boundary probability that still
        meets it (:func:`..threshold.randomised_threshold`); ``None`` for declared keys.

        Proof: docs/proofs/key-selection.md
        """
        if not item.stat.keys_from_data:
            return None
        keys = int(getattr(item, "groups_per_unit", KEYS_PER_UNIT))
        cell = item.cell
        if isinstance(cell, FoundCell):   # the selection is inside the cells' profile
            return cell.threshold
        if cell.design.get("method") == "truncated":  # type: ignore[union-attr]
            return Threshold(cell.design["half_width"] + 2, Fraction(0), keys, 0.0, 0.0)  # type: ignore[union-attr]
        return randomised_threshold(cell.noise.quantize(), keys, item.stat.target.delta,  # type: ignore[union-attr]
                                    lowest=cell.offset)  # type: ignore[union-attr]

    def body(self, item: Planned, alpha: float, source: RandomSource) -> dict:
        """The released cells; ``consistent``: projected onto the public number of units, with
        the outside cell and the simultaneous intervals (:func:`..consistent.body`); keys found
        in the data: only the cells whose noisy count passes the threshold (:func:`found_body`);
        both: the released cells, the outside cell and the other keys (:func:`..consistent_found.body`).

        Proof: docs/proofs/consistent-tables.md
        """
        if item.stat.keys_from_data:
            doc = super().body(item, alpha, source)
            doc = found_body(item, doc, self.selection(item), source)  # type: ignore[arg-type]
            if not item.stat.consistent:
                return doc
            from ..consistent_found import body as with_other_keys
            cells, units = item.answers.cells, int(item.units)  # type: ignore[arg-type]
            return with_other_keys(item.stat, item.cell, doc, cells, units, alpha, source)  # type: ignore[arg-type]
        if not item.stat.consistent:
            return super().body(item, alpha, source)
        from ..consistent import body
        return body(item.stat, item.cell, item.answers.cells, int(item.units), alpha, source)  # type: ignore[arg-type]

    def together(self, items: list[Planned], docs: dict[str, dict], source: RandomSource) -> dict[str, dict]:
        """Consistent histograms ``by`` groups made to add up to their overall histogram
        (:func:`..consistent.add_up`); a histogram of rows by a key found in the data (a count of
        rows) kept for its selection's released keys (:func:`..found.selected`)."""
        from ..found import selected
        docs = selected(items, docs)
        if not any(item.stat.consistent for item in items):
            return docs
        from ..consistent import add_up
        return add_up([item.stat for item in items], docs, source)

    def document(self, item: Planned, doc: dict) -> dict:
        """Keys found in the data with the selection inside the cells' profile
        (:class:`..found_gaussian.FoundCell`): the certificate states the composition that
        meets the target (``composed``), beside the basic sum of the cells' own points, which
        does not (module :mod:`..found_gaussian`).

        Proof: docs/proofs/key-selection.md
        """
        cell = item.cell
        if isinstance(cell, FoundCell) and "certificate" in doc:
            e1, d1 = cell.epsilon_delta
            doc["certificate"].update(
                composed=cell.design["composed"], cell_point={"epsilon": e1, "delta": d1},
                composition="the target is met by `composed`: the cells one unit moves composed over every "
                            "combination of their pairs (noise and selection), read at the statistic's delta; the "
                            f"basic sum of each cell's own point (epsilon {e1:.6g} at delta {d1:.3g}) is a looser "
                            "true bound, above the target's epsilon")
        return doc

    def about(self, stat: Statistic) -> str:
        return f"histogram of {stat.of} over {stat.key}" + (" (consistent)" if stat.consistent else "")


def gaussian_or(chosen: Cell, stat: Statistic, n: int, offset: int, keys_per_unit: int, cells: int) -> Cell:
    """The discrete-Gaussian cell of keys found in the data (:func:`..found_gaussian.gaussian_cell`,
    at the statistic's whole target over ``cells >= keys_per_unit`` cells) where its effective
    threshold ``tau - q`` is below ``chosen``'s (the geometric's least threshold and boundary
    over ``keys_per_unit`` keys, or the truncated design's ``T + 2``); it is designed only where
    the continuous Gaussian's predicted ``sigma`` is at least ``MIN_SIGMA`` and its threshold is below :data:`..found_gaussian.TRY_BELOW`
    times ``chosen``'s (a guide: the certified designs decide). A tie keeps ``chosen``.

    Proof: docs/proofs/key-selection.md
    """
    from ..found_gaussian import MIN_SIGMA, TRY_BELOW, gaussian_cell, predicted_sigma, predicted_threshold
    target = stat.target
    cells = max(int(cells), int(keys_per_unit))
    if predicted_sigma(target.epsilon, target.delta, cells) < MIN_SIGMA:  # type: ignore[union-attr]
        return chosen
    if chosen.design.get("method") == "truncated":
        before = float(chosen.design["half_width"] + 2)
    else:
        rule = randomised_threshold(chosen.noise.quantize(), keys_per_unit, target.delta, lowest=offset)  # type: ignore
        before = float(rule.tau - rule.boundary)
    if predicted_threshold(target.epsilon, target.delta, cells) >= TRY_BELOW * before:  # type: ignore[union-attr]
        return chosen
    found = gaussian_cell(stat.name, n, offset, target, cells, keys_per_unit)  # type: ignore[arg-type]
    if found is None or not found.threshold.tau - found.threshold.boundary < before:  # type: ignore[union-attr]
        return chosen
    return found


def found_body(item: Planned, doc: dict, threshold: Threshold, source: RandomSource) -> dict:
    """The released cells of keys found in the data: ``doc`` holds every candidate drawn (a
    number's body); only the cells whose true count is at least 1 and whose released count
    passes the threshold (:meth:`..threshold.Threshold.keeps`) are kept -- the keys that did not
    pass, and how many, are in no published part. The boundary's coins are uniform 64-bit words
    of ``source``, one per candidate at the boundary count, drawn in the order of the groups and
    keys (both engines draw the same ones for the same seed).

    Proof: docs/proofs/key-selection.md
    """
    counts = item.answers.cells
    keys = item.stat.keys.labels()  # type: ignore[union-attr]
    grouped = item.stat.groups is not None
    names = item.stat.groups.labels() if grouped else [None]  # type: ignore[union-attr]

    def passes(value: Any) -> bool:
        at_boundary = threshold.boundary and value == threshold.tau - 1
        return threshold.keeps(value, int(source.words(1)[0]) if at_boundary else None)

    def kept(values: dict, ivs: dict | None, row: int) -> tuple[dict, dict | None]:
        keep = [k for j, k in enumerate(keys) if counts[row, j] >= 1 and passes(values[k])]
        return {k: values[k] for k in keep}, None if ivs is None else {k: ivs[k] for k in keep}

    ivs = doc.get("intervals")
    if grouped:
        pairs = {g: kept(doc["values"][g], None if ivs is None else ivs[g], i) for i, g in enumerate(names)}
        doc["values"] = {g: v for g, (v, _) in pairs.items()}
        doc["intervals"] = None if ivs is None else {g: iv for g, (_, iv) in pairs.items()}
    else:
        doc["values"], doc["intervals"] = kept(doc["values"], ivs, 0)
    doc["keys"] = {"found_in_data": True, **threshold.to_json(),
                   "interval_coverage": "each interval covers its key's true count with the stated probability before "
                                        "the selection; for a key whose count is near the threshold, given that it was "
                                        "released, its coverage may be lower (its noise was more likely positive)"}
    return doc


def held_groups(stat: Statistic, unit: UnitRules) -> int:
    """The groups a unit's rows lie in at most: ``min(g, groups)`` (one without ``by``)."""
    return min(groups_of(unit), stat.groups.size if stat.groups else 1)


def rows_histogram_cells(stat: Statistic, unit: UnitRules) -> int:
    """Cells one unit moves in a histogram of rows (module docstring): its at most ``m`` rows
    in each of at most ``h = min(g, groups)`` groups, each group's over at most ``min(m, K)``
    keys (``m``: the rows a unit keeps in one group); with keys found in the data, over ``m``
    (``K`` is then the data's and must not decide the noise).

    Proof: docs/proofs/derived-neighbourhoods.md
    """
    m = int(group_rows(unit))
    # keys found in the data: their number K is the data's, so it must not shape the noise (a
    # unit's own rows could add a candidate key): bound as if K were unlimited
    found = stat.keys_from_data or getattr(stat, "selected_by", None) is not None
    keys = None if found else stat.keys.size  # type: ignore[union-attr]
    groups = stat.groups.size if stat.groups else 1
    one = min(rows_of(unit), held_groups(stat, unit) * (m if keys is None else min(m, keys)))   # a row per cell
    if unit.change != "replace":
        return one
    if groups > 1:
        return 2 * one
    return 2 * m if keys is None else min(2 * m, keys)


KIND = Histogram()
