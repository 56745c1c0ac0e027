"""Keys found in the data (issue 36): the candidate keys of a statistic with ``keys = "from-data"``.

A histogram of units may leave its keys undeclared: ``keys = "from-data"``. Its candidate keys
are then the distinct values of its ``key`` column in the input, read before the statistics
(:func:`found_in_frame`, :func:`found_in_batches`), and the spec continues with those values as
its keys (:func:`with_found_keys`) -- so the unit rules, the aggregation and the engines are
those of declared keys. Which candidates are released is decided after the unit rules, by the
threshold of :mod:`.threshold`: a candidate that no unit's counted rows hold (a count of 0: its
rows were dropped by ``max_rows`` or ``where``) is never released, and no document lists a
candidate that did not pass (docs/proofs/key-selection.md). The candidate keys are private:
they stay out of every published part (the document, its CSV, the terminal's view); the
private audit record may name how many there were.

A count of rows, sum or mean by a found key is released with a selection of its keys
(:func:`with_selections`), beside declared ``by`` groups too: its cells are then the (group,
key) pairs, selected cell by cell.

Found values keep their type: an integer column gives integer keys, a text column text keys
(as a declared list would be written); other columns (floats, dates) are refused, naming the
key. At most :data:`MAX_FOUND` distinct values per column (the cells' memory: each candidate is
a cell per group).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

import numpy as np

from ..errors import InvalidParameterError
from .statistic import FROM_DATA, Keys, Statistic

#: A query's spec (:class:`.spec.QuerySpec`; not imported: the spec reads this module).
QuerySpec = Any
#: Most distinct values of a key column taken as candidates.
MAX_FOUND = 100_000


def wanted(spec: QuerySpec) -> tuple[str, ...]:
    """The key columns whose values are to be found (statistics with ``keys = "from-data"``)."""
    return tuple(dict.fromkeys(s.key for s in spec.statistics if s.keys_from_data and s.key))


def _values(column: str, arr: Any) -> set:
    """The distinct non-missing values of one batch's column (an Arrow array), as keys (module
    docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    arr = pc.unique(pc.drop_null(arr))
    kind = arr.type
    if pa.types.is_integer(kind):
        return {int(v) for v in arr.to_pylist()}
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return {str(v) for v in arr.to_pylist()}
    if pa.types.is_floating(kind):   # CSV integers with a missing value read as floats
        vals = arr.to_numpy(zero_copy_only=False)
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)) and np.all(np.abs(vals) < 2 ** 53):
            return {int(v) for v in vals}
    raise InvalidParameterError(f"column {column!r}", str(kind), "integers or text for keys found in the data "
                                "(keys = \"from-data\"); declare the keys of another column")


def _arrow(batch: Any, columns: tuple[str, ...]) -> Any:
    import pyarrow as pa
    if isinstance(batch, (pa.RecordBatch, pa.Table)):
        return batch
    return pa.Table.from_pandas(batch[list(columns)], preserve_index=False)


def found_in_batches(batches: Iterable[Any], spec: QuerySpec) -> dict[str, Keys]:
    """The candidate keys of every key column :func:`wanted` names, from record batches
    (Arrow batches or tables, or pandas frames) read in order; refused above :data:`MAX_FOUND`."""
    columns = wanted(spec)
    seen: dict[str, set] = {c: set() for c in columns}
    for batch in batches:
        table = _arrow(batch, columns)
        for col in columns:
            seen[col] |= _values(col, table.column(col))
            if len(seen[col]) > MAX_FOUND:
                raise InvalidParameterError(f"keys of {col!r}", f"more than {MAX_FOUND:,} distinct values",
                                            f"at most {MAX_FOUND:,} keys found in the data (declare the keys, or "
                                            "coarsen the column)")
    out = {}
    for col, vals in seen.items():
        if any(isinstance(v, int) for v in vals) and any(isinstance(v, str) for v in vals):
            raise InvalidParameterError(f"column {col!r}", "integers and text", "one type of key")
        out[col] = Keys(tuple(sorted(vals)))
    return out


def found_in_frame(frame: Any, spec: QuerySpec) -> dict[str, Keys]:
    """:func:`found_in_batches` of one pandas DataFrame."""
    return found_in_batches([frame], spec) if wanted(spec) else {}


def with_found_keys(spec: QuerySpec, found: dict[str, Keys]) -> QuerySpec:
    """The spec whose ``keys = "from-data"`` statistics hold the found values as their keys
    (still marked ``keys_from_data``: their release is thresholded), and whose statistics
    selected by one of them (:func:`with_selections`) hold them as their groups (a sum, a mean
    by the key alone) or keys (a histogram of rows; a sum or mean beside declared groups). A
    column without any value gives no candidate: the statistic then releases nothing."""
    if not wanted(spec):
        return spec
    stats = []
    for s in spec.statistics:
        if s.keys_from_data or s.selected_by is not None:
            as_groups = s.key is None   # a sum or mean by a found key alone: the key is its groups
            col = s.by if as_groups else s.key
            keys = found.get(col)  # type: ignore[arg-type]
            if keys is None:
                raise InvalidParameterError("keys", FROM_DATA, f"the values of column {col!r} read first")
            s = replace(s, groups=keys) if as_groups else replace(s, keys=keys)
        stats.append(s)
    return replace(spec, statistics=tuple(stats))


# ------------------------------------------------------------------ counts, sums and means by a found key
#: What a statistic selected by keys found in the data is named after (``NAME.keys``): its
#: selection, a histogram of units over the key, released and thresholded.
SELECTION_SUFFIX = ".keys"
#: The mechanisms a selected statistic's values may take: pure noise on the line (the
#: statistic's delta is its selection's).
PURE_MECHANISMS = ("optimal", "clamped-geometric")


def with_selections(stats: list[Statistic], *, smallest_epsilon: float) -> list[Statistic]:
    """The statistics with each count, sum or mean by a key found in the data (``key`` with
    ``keys = "from-data"``) replaced by what releases it (docs/proofs/key-selection.md, "Counts,
    sums and means by key"):

    * a count of units: kept, released as the histogram of units over the key (the same thing);
    * otherwise two statistics: its **selection** ``NAME.keys``, a histogram of units over the
      key with ``keys = "from-data"`` at ``(selection_share x epsilon, delta)`` (its keys
      released only above the exact threshold), and the statistic itself at the rest of the
      epsilon with no delta (pure), by the key as its groups (a sum, a mean) or keys (a count
      of rows: a histogram of rows), its values released for the selection's released keys
      only (:func:`selected`). With declared ``by`` groups both keep them: the selection is
      the histogram of units over (group, key) cells, thresholded cell by cell as a histogram
      ``by`` groups is, and the values are released per (group, key) -- a sum or a mean keeps a
      unit's rows in its ``max_groups`` (group, key) cells of most counted rows, the cells its
      selection counts it in (``keep_cells``, :meth:`.kinds.sum.Sum.answers`).

    Refused, naming the key: no delta or another notion than ``dp``, a mechanism other than
    pure noise on the line, an epsilon share below ``smallest_epsilon``, a statistic already
    named ``NAME.keys``.
    """
    out: list[Statistic] = []
    for s in stats:
        if not s.keys_from_data or s.kind == "histogram":
            out.append(s)
            continue
        try:
            out += _selected_pair(s, smallest_epsilon)
        except InvalidParameterError as exc:
            raise exc.renamed(f"statistics.{s.name}.{exc.parameter}") from exc
    names = [s.name for s in out]
    clash = next((n for n in names if names.count(n) > 1), None)
    if clash is not None:
        raise InvalidParameterError(f"statistics.{clash}", clash, "a name no other statistic has (a count, sum or "
                                    f"mean by a key found in the data is selected by 'NAME{SELECTION_SUFFIX}')")
    return out


def _selected_pair(s: Statistic, smallest_epsilon: float) -> list[Statistic]:
    """:func:`with_selections` of one statistic."""
    from ..target import Target, check_delta
    t = s.target
    check_delta(t.delta, positive=True, accepted="a delta > 0 with keys = \"from-data\": a key held by one unit "  # type: ignore[union-attr]
                "alone is shown with a small probability, which is this delta (e.g. 1e-6)")
    if t.notion != "dp":  # type: ignore[union-attr]
        raise InvalidParameterError("notion", t.notion, "'dp' with keys = \"from-data\"")  # type: ignore[union-attr]
    if s.mechanism not in PURE_MECHANISMS:
        raise InvalidParameterError("mechanism", s.mechanism, f"{' or '.join(PURE_MECHANISMS)} with keys = "
                                    "\"from-data\" (the values' noise is pure: the statistic's delta is its "
                                    "selection's)")
    if s.kind == "count" and s.of == "units":   # the histogram of units over the key (its kind releases it)
        counted = replace(s, selection_share=None)
        check_found(counted)
        return [counted]
    eps = float(t.epsilon)  # type: ignore[union-attr]
    chosen = eps * float(s.selection_share)  # type: ignore[arg-type]
    rest = _below(eps - chosen, eps, chosen)
    if min(chosen, rest) < smallest_epsilon:
        raise InvalidParameterError("selection_share", s.selection_share, f"a share leaving both the selection "
                                    f"and the values at least epsilon {smallest_epsilon:g} (here {chosen:g} and "
                                    f"{rest:g})")
    name = s.name + SELECTION_SUFFIX
    selection = Statistic(name, "histogram", Target(chosen, t.delta), where=s.where, key=s.key,  # type: ignore[union-attr]
                          by=s.by, groups=s.groups, keys_from_data=True, mechanism="clamped-geometric")
    values = Target(rest)
    if s.kind == "count" or s.by is not None:   # of rows: the histogram of rows; by groups: (group, key) cells
        return [selection, replace(s, target=values, keys_from_data=False, selected_by=name,
                                   keep_cells=s.kind != "count")]
    return [selection, replace(s, target=values, by=s.key, key=None, keys_from_data=False, selected_by=name)]


def check_found(stat: Statistic) -> None:
    """What keys found in the data need (refused naming the key otherwise)."""
    key = "keys"
    if stat.of != "units":
        raise InvalidParameterError(key, FROM_DATA, "declared keys for a histogram of rows (keys found in the data "
                                    "are released for a histogram of units: one key per unit)")
    from ..target import check_delta
    if stat.target is not None:
        check_delta(stat.target.delta, positive=True, accepted="a delta > 0 with keys = \"from-data\": a key held "
                    "by one unit alone is shown with a small probability, which is this delta (e.g. 1e-6)")
    if stat.target is not None and stat.target.notion != "dp":
        raise InvalidParameterError("notion", stat.target.notion, "'dp' with keys = \"from-data\"")
    if stat.unbiased:
        raise InvalidParameterError("unbiased", True, "false with keys = \"from-data\" (declare the keys for "
                                    "unbiased = true: a key released only above a threshold is not unbiased)")
    if stat.mechanism not in ("optimal", "clamped-geometric"):
        raise InvalidParameterError("mechanism", stat.mechanism, "clamped-geometric (the default) with keys = "
                                    "\"from-data\": the threshold reads the tail of noise on the line")


def kept_cells(cells: dict, released: dict) -> dict:
    """``cells`` (``key -> x``, or ``group -> key -> x`` beside declared groups) kept where
    ``released`` (the selection's values, the same shape) holds the key: every group stays,
    with only its released keys."""
    if any(isinstance(v, dict) for v in released.values()):
        return {g: {k: cells[g][k] for k in keys} for g, keys in released.items()}
    return {k: cells[k] for k in released}


def _below(rest: float, whole: float, part: float) -> float:
    """``rest`` lowered by one float step if ``part + rest`` exceeds ``whole`` exactly (the two
    shares' basic sum never above the statistic's epsilon)."""
    from fractions import Fraction
    import math
    return math.nextafter(rest, 0.0) if Fraction(part) + Fraction(rest) > Fraction(whole) else rest


def selected(items: list, docs: dict[str, dict]) -> dict[str, dict]:
    """The documents of statistics selected by keys found in the data (:func:`with_selections`):
    each one's values, intervals (and a mean's) kept for its selection's released keys only,
    the selection's document moved into its ``keys`` (``counts``: the released noisy counts of
    units of those keys, with their ``counts_intervals``, ``mechanism``, ``certificate`` and
    ``target``) -- the keys that did not pass, and how many, are in no published part.

    Proof: docs/proofs/key-selection.md
    """
    for item in items:
        stat = item.stat
        if stat.selected_by is None or stat.selected_by not in docs:
            continue
        chosen = docs.pop(stat.selected_by)
        doc = docs[stat.name]
        for field in ("values", "intervals"):
            if isinstance(doc.get(field), dict):
                doc[field] = kept_cells(doc[field], chosen["values"])
        doc["keys"] = {**chosen["keys"], "selection_share": stat.selection_share, "counts": chosen["values"], "counts_intervals": chosen["intervals"],
                       "selection": {k: chosen[k] for k in ("target", "mechanism") if k in chosen},
                       "values_released_for": "the keys whose noisy count of units passes the threshold"}
        if isinstance(doc.get("certificate"), dict) and "certificate" in chosen:   # moved with it when seeded
            doc["certificate"]["selection"] = chosen["certificate"]
    return docs


__all__ = ["FROM_DATA", "MAX_FOUND", "PURE_MECHANISMS", "SELECTION_SUFFIX", "found_in_batches", "found_in_frame",
           "check_found", "kept_cells", "selected", "wanted", "with_found_keys", "with_selections"]
