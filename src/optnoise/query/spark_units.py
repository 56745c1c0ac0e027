"""The Spark engine's JVM path: the unit rules of every statistic on the executors.

Used by :func:`.spark.aggregate_spark` for a Parquet file whose columns have the types of
:func:`.spark_rules.eligible`. No unit's rows reach the driver, whatever the units: the
driver receives, per *branch* (:func:`branches`: the layouts -- :func:`.aggregate.layouts`,
statistics sharing ``where``, ``by`` and ``key`` -- that share ``where`` and ``by``), one row
per (group, key of each keyed layout), missing ones included: a number set by the declared
groups and keys, so its memory does not depend on the number of rows or units (issue 38).
Where every branch's rows collapse map-side (:func:`combines`) under the ``first`` rule
without ``max_rows_per_group``, the units whose first ``max_rows`` rows lie in one place are
summed first, every branch in one job (:func:`by_single`, :mod:`.spark_single`: one hash
aggregation by unit, as a plain group-by), and only the other units' rows go through the steps
below. Otherwise one job per branch (one shuffle of the rows by unit, or none when Spark's
map-side combine of step 3 pays: :func:`combines`), in four steps:

1. *Kept rows* (with an id and ``max_rows``): a first pass keeps every row; in step 4 the
   units over ``max_rows`` (their rows counted over the unit's window) are set apart -- every
   field of theirs zeroed, their ids collected (at most :data:`OVER_IDS`) -- and the same
   plan is run on their rows alone (a broadcast semi-join on the ids), ranked by
   ``row_number() over (partition by unit order by read index)`` (:func:`ranked`: the local
   engine's first-``max_rows``-rows rule); the two tables add per cell (:func:`by_unit`).
   Past :data:`OVER_IDS` such units, every row is ranked. Under the ``first`` rule without
   ``max_rows_per_group``, on a branch combined map-side (:func:`trims`), a unit of exactly
   ``max_rows + 1`` rows is not set apart: its last
   row by read index (``max_by`` on the read index in step 3) is taken out of its sums
   (:func:`set_apart`), so a file whose units are over by one row at most needs no second job.
2. *Per row* (:func:`branch_rows`): ``G``, the row's group when it is kept, passes ``where``
   and its group is declared, and per keyed layout its key ``K{i}``; its clamped, rounded
   values (the column rules of :mod:`.spark_rules`), the flags of what is not counted and of
   clamped values, its read index when its value is bad.
3. *Per (unit, G, K...)*: a hash aggregation, combined map-side -- summed over the other
   layouts' keys, the per-(unit, cell) aggregate of the local engine (counted rows, values)
   for each layout, with the counts of what was left out.
4. *Per unit* (windows over the unit's rows of step 3, :func:`branch_cells`): per layout its
   home cell (most counted rows, ties to the least cell: :func:`.cells.units_at_home`), its
   home group (most counted rows, ties to the least group: :func:`.cells.summed_cells` under
   ``by``), whether its rows lie in several cells; then per (G, K...) and layout the units at
   home (each on one row of its home cell), the rows and values of the units whose home group
   it is, and the counts. Each unit counts once, in its own partition.

The rules that choose a unit's rows and groups -- ``max_rows`` by read index or, under random
bounding, by priority; ``max_rows_per_group``; the home cell and group, or the ``max_groups``
kept ones -- are :mod:`.spark_groups`'s.

The driver (:func:`assemble`) makes each statistic's grid from its column: the units at home
for a kind that counts units (``Kind.counts_units``), else the rows or the values summed in
the home group, and ``from_cells`` (the kind's ``from_grid``) -- the kinds' rules, as
:func:`.aggregate.answers` applies them to the same per-(unit, cell) aggregate.

Without an id each row is a unit (one row, one cell): per layout the rows grouped by cell
(:func:`by_row`, one job).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from .aggregate import Aggregated, layouts
from .cells import bump
from .kinds import from_cells, kind_of
from .spark_groups import (CUT, INDEX, KEPT, PRIORITY, ROW, TOP, UNIT, SparkRules, branch_sizes, cut, dims_code,
                           ranked, rules_of, unit_windows, value_slots)
from .spec import QuerySpec, Statistic

BAD_VALUE = "OPTNOISE_BAD_VALUE"
#: Where the local engine's errors name a row (:func:`.aggregate.unit_ids`, ``_values``):
#: on Spark that number is the row's read index, turned into its data row here.
DATA_ROW = re.compile(r"at data row (\d+)")


def layout_fields(spec: QuerySpec, types: dict[str, str]) -> tuple[list[list[Statistic]], int, list[list[Any]]]:
    """The layouts, the number of value slots (the most of one layout: :func:`value_slots`)
    and per layout the per-row columns: ``cell`` and ``grp`` (null unless the row is kept and
    counted), ``ok`` (kept), ``nw`` (kept, fails ``where``), ``ud`` (kept, passes ``where``,
    an undeclared or missing key or group), and per slot ``v`` (the clamped, rounded value),
    ``cl`` (clamped) and ``b`` (the read index when the value is bad: missing or not finite)."""
    from pyspark.sql import functions as F

    from .spark_rules import INTEGER, declared_index, matches, scaled_value
    shared = layouts(spec.statistics)
    width = max(len(value_slots(group)[0]) for group in shared)
    kept = F.col(KEPT)
    zero = F.lit(0).cast("long")
    out = []
    for group in shared:
        first = group[0]
        where = F.lit(True)
        for cond in first.where:
            where = where & matches(cond)
        g, k = (declared_index(col, keys, types[col] in INTEGER) if col and keys else zero
                for col, keys in ((first.by, first.groups), (first.key, first.keys)))
        counted = kept & where & g.isNotNull() & k.isNotNull()
        fields = [F.when(counted, g * (first.keys.size if first.keys else 1) + k).alias("cell"),
                  F.when(counted, g).alias("grp"), kept.cast("long").alias("ok"),
                  (kept & ~where).cast("long").alias("nw"), (kept & where & ~counted).cast("long").alias("ud")]
        for j, stat in enumerate(value_slots(group)[0]):
            value, clamped, bad = scaled_value(stat)
            good = counted & ~bad
            fields += [F.when(good, value).otherwise(zero).alias(f"v{j}"), (good & clamped).cast("long").alias(f"cl{j}"),
                       F.when(counted & bad, F.col(ROW)).alias(f"b{j}")]
        out.append(fields)
    return shared, width, out


def per_row(rows: Any, spec: QuerySpec) -> tuple[list[Any], list[list[Statistic]], int]:
    """Per layout, one row per input row: the unit (with an id), the layout and
    :func:`layout_fields`'s columns. (One frame per layout, not one row per (input row,
    layout) through ``inline``: Spark's generator runs several times slower than the
    projections it replaces.)"""
    from pyspark.sql import functions as F
    shared, width, fields = layout_fields(spec, {f.name: f.dataType.simpleString() for f in rows.schema.fields})
    base = [F.col(UNIT)] if spec.unit.id is not None else []
    return [rows.select(*base, F.lit(i).alias("layout"), *f) for i, f in enumerate(fields)], shared, width


def _slots(width: int, values: bool = True) -> list[Any]:
    """The sums of ``nw``, ``ud``, ``cl*`` (and ``v*``) and the least ``b*``."""
    from pyspark.sql import functions as F
    return [F.sum("nw").alias("nw"), F.sum("ud").alias("ud")] + [
        agg for j in range(width) for agg in ([F.sum(f"v{j}").alias(f"v{j}")] * values +
                                              [F.sum(f"cl{j}").alias(f"cl{j}"), F.min(f"b{j}").alias(f"b{j}")])]


#: A branch of layouts is split into one branch per layout beyond this many (group, keys) combinations.
BRANCH_CELLS = 1 << 20


def branches(shared: list[list[Statistic]]) -> list[list[int]]:
    """The layouts (their indices) that share ``where`` and ``by``: one branch, one pass over
    the rows (each branch reads the rows and shuffles their aggregate by unit), its aggregate per
    (unit, group, key of each keyed layout). A branch whose combinations of group and keys
    pass :data:`BRANCH_CELLS` is split into single layouts."""
    out: dict[tuple, list[int]] = {}
    for i, group in enumerate(shared):
        out.setdefault((group[0].where, group[0].by, group[0].groups), []).append(i)
    split: list[list[int]] = []
    for ids in out.values():
        size = (shared[ids[0]][0].shape[0] + 1) * int(np.prod([shared[i][0].keys.size + 1 for i in ids
                                                                 if shared[i][0].key is not None], dtype=float))
        split += [ids] if size <= BRANCH_CELLS else [[i] for i in ids]
    return split


def branch_rows(keyed: Any, shared: list[list[Statistic]], ids: list[int], types: dict[str, str],
                rules: SparkRules = SparkRules(), read_index: bool = False) -> tuple[Any, list]:
    """One row per input row for a branch: the unit, ``G`` (the group's index when the row is
    kept, passes ``where`` and its group is declared; else null), ``K{i}`` per keyed layout
    (its key's index when ``G`` is set), ``ok`` (kept), ``w`` (kept and passes ``where``),
    ``nw`` (kept, fails ``where``) and per value slot of the branch ``v``, ``cl``, ``b`` (the
    clamped, rounded value, clamped, the read index of a bad value; where ``G`` is set); with
    ``rules`` that cut rows, :data:`.spark_groups.CUT` (and under random bounding the read
    index); with ``read_index`` each row's :data:`ROW` (:func:`trims`). And the branch's value
    slots (``(column, clamp, resolution)`` -> slot)."""
    from pyspark.sql import functions as F

    from .spark_rules import branch_keys, scaled_value
    kept = F.col(KEPT)
    where, G, keys = branch_keys(shared, ids, types, kept)
    zero = F.lit(0).cast("long")
    ok = F.col(TOP) if TOP in keyed.columns else kept
    fields = [F.col(UNIT), G.alias("G"), ok.cast("long").alias("ok"), (kept & where).cast("long").alias("w"),
              (kept & ~where).cast("long").alias("nw")] + ([F.col(INDEX)] if rules.key is not None else []) + (
              [F.col(ROW)] if read_index else [])
    fields += [K.alias(f"K{i}") for i, K in keys.items()]
    if rules.cuts:   # one layout when max_rows_per_group is set (:func:`by_unit`): its key, if any
        fields.append(cut(keyed, G, next(reversed(keys.values()), F.lit(0)), rules))
    slots: dict[tuple, int] = {}
    for i in ids:
        for stat in value_slots(shared[i])[0]:
            key = (stat.value_column, stat.clamp, stat.resolution)
            if key in slots:
                continue
            s = slots[key] = len(slots)
            value, clamped, bad = scaled_value(stat)
            good = G.isNotNull() & ~bad
            fields += [F.when(good, value).otherwise(zero).alias(f"v{s}"), (good & clamped).cast("long").alias(f"cl{s}"),
                       F.when(G.isNotNull() & bad, F.col(ROW)).alias(f"b{s}")]
    return keyed.select(*fields), slots


def branch_cells(rows: Any, shared: list[list[Statistic]], ids: list[int], slots: dict[tuple, int],
                 max_rows: int | None = None, rules: SparkRules = SparkRules(), trim: bool = False) -> Any:
    """Steps 3 and 4 (module docstring) for a branch: per (group, key of each keyed layout),
    per layout ``i`` of the branch: the units at home (``units_i``), the rows and values of the
    units whose home group holds it (``rows_i``, ``v{j}_i`` for the layout's slot ``j``), the
    counted rows (``n_i``), the rows outside their unit's group (``outside_i``), the units at
    home there with rows in several cells (``several_i``), the rows not counted that pass
    ``where`` (``ud_i``), ``cl{j}_i``, the least bad row ``b{j}_i``; and for the branch ``nw``,
    ``total``, ``kept``, the units (``nunits``: one row of each), ``noid``; with ``max_rows``,
    the units over it set apart (nothing of theirs counted) and their ids (``oids``: at most
    :data:`OVER_IDS` + 1, on the row of no group and key), with ``trim`` (``rows`` with
    :data:`ROW`: :func:`trims`) the units over by one trimmed instead. Only the windows
    the layouts' kinds read are computed. ``rules``: the kept rows and groups
    (:mod:`.spark_groups`: :data:`.spark_groups.CUT` one more dimension)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    keyed = [i for i in ids if shared[i][0].key is not None]
    dims = ["G"] + [f"K{i}" for i in keyed] + [CUT] * rules.cuts
    sums = [F.sum(c).alias(c) for c in ("ok", "w", "nw")] + [
        agg for s in range(len(slots)) for agg in (F.sum(f"v{s}").alias(f"v{s}"), F.sum(f"cl{s}").alias(f"cl{s}"),
                                                   F.min(f"b{s}").alias(f"b{s}"))] + [
        F.min(INDEX).alias("r0")] * (rules.key is not None)
    if trim:   # each (unit, cell)'s last row by read index: what a unit over by one row drops
        sums += [F.max(ROW).alias("rl")] + [F.max_by(c, F.col(ROW)).alias(f"l{c}") for c in
                                            ["w"] + [f"{c}{s}" for s in range(len(slots)) for c in ("v", "cl")]]
    t = rows.groupBy(UNIT, *dims).agg(F.count(F.lit(1)).alias("total"), *sums)
    unit = Window.partitionBy(UNIT)
    code = dims_code([F.col(d) for d in dims], branch_sizes(shared, ids) + [2] * rules.cuts)
    t = t.withColumns({"code": code, "one": code == F.min(code).over(unit), "utotal": F.sum("total").over(unit),
                       **({"ulast": F.max("rl").over(unit)} if trim else {})})
    extra = []
    if max_rows is not None:
        t = set_apart(t, dims, len(slots), max_rows, trim)
        extra = [F.slice(F.collect_list("oid"), 1, OVER_IDS + 1).alias("oids")]
    t, measures = unit_windows(t, shared, ids, dims, slots, rules)
    one = F.col("one")
    return t.groupBy(*dims).agg(*measures, F.sum("nw").alias("nw"), F.sum("total").alias("total"),
                                F.sum("ok").alias("kept"), F.sum(one.cast("long")).alias("nunits"),
                                F.max((one & F.col(UNIT).isNull()).cast("long")).alias("noid"), *extra)


def trims(max_rows: int | None, rules: SparkRules, combine: bool) -> bool:
    """Whether the first pass takes the last row out of each unit of ``max_rows + 1`` rows
    (:func:`set_apart`): under the ``first`` rule without ``max_rows_per_group`` (the rows a
    unit keeps are its first ``max_rows`` by read index), where the branch's aggregate is
    ``combine``-d map-side (:func:`combines`). Where the rows are shuffled by unit instead, a
    unit has about one row per cell and the ``max_by`` columns cost more than they save
    (docs/benchmarks.md: the demo's spec with no unit over, 20 % slower warm)."""
    return max_rows is not None and not rules.cuts and combine


def set_apart(t: Any, dims: list[str], width: int, max_rows: int, trim: bool) -> Any:
    """The first pass's per-(unit, cell) aggregate ``t`` with its units over ``max_rows`` out of
    every sum and their ids in ``oid`` (one row each), except, with ``trim``, the units of
    exactly ``max_rows + 1`` rows: from the row holding the unit's last row by read index
    (``rl == ulast``; the read index is unique), that row's counts and values (``lw``, ``lv*``,
    ``lcl*``; kept, it failed ``where`` when not ``w``; its ``b*`` when the least bad row there
    is that row, the only one) are taken out; a cell that held that row alone is no cell of the
    unit's (its dimensions null, as a row not kept). The rest of the unit's rows are its first
    ``max_rows`` (docs/proofs/spark-bounding.md)."""
    from pyspark.sql import functions as F
    has_id, total = F.col(UNIT).isNotNull(), F.col("utotal")
    big = has_id & (total > max_rows + trim)
    zeroed = ["total", "ok", "w", "nw"] + [f"{c}{s}" for s in range(width) for c in ("v", "cl")]
    bad = [f"b{s}" for s in range(width)]
    if trim:
        last = has_id & (total == max_rows + 1) & (F.col("rl") == F.col("ulast"))
        drop = last & (F.col("total") == 1)
        less = {"ok": F.lit(1), "w": F.col("lw"), "nw": 1 - F.col("lw"),
                **{f"{c}{s}": F.col(f"l{c}{s}") for s in range(width) for c in ("v", "cl")}}
        t = t.withColumns({**{c: F.when(last, F.col(c) - less[c]).otherwise(F.col(c)) for c in less},
                           **{c: F.when(~drop, F.col(c)) for c in dims},
                           **{c: F.when(~last | (F.col(c) != F.col("ulast")), F.col(c)) for c in bad}})
    return t.withColumns({"oid": F.when(big & F.col("one"), F.col(UNIT)), "one": F.col("one") & ~big,
                          **{c: F.when(~big, F.col(c)) for c in dims + bad},
                          **{c: F.when(~big, F.col(c)).otherwise(0) for c in zeroed}})


def by_layout(got: Any, shared: list[list[Statistic]], ids: list[int]) -> list[Any]:
    """A branch's table (:func:`branch_cells`) as one frame per layout, per cell, with the
    columns :func:`assemble` reads: each layout's cell from the group and its key, the other
    layouts' keys summed out."""
    import pandas as pd
    out = []
    for i in ids:
        lead = shared[i][0]
        g = got["G"]
        cell = g * lead.keys.size + got[f"K{i}"] if lead.key is not None else g
        width = len(value_slots(shared[i])[0])
        names = ["units", "rows", "n", "outside", "several", "ud"] + [f"{c}{j}" for j in range(width) for c in ("v", "cl")]
        frame = pd.DataFrame({"cell": cell, **{c: got[f"{c}_{i}"] for c in names},
                              **{f"b{j}": got[f"b{j}_{i}"] for j in range(width)},
                              **{c: got[c] for c in ("nw", "total", "kept", "nunits", "noid")}})
        agg = {c: "sum" for c in names + ["nw", "total", "kept", "nunits"]}
        agg.update({f"b{j}": "min" for j in range(width)}, noid="max")
        part = frame.groupby("cell", dropna=False, sort=False).agg(agg).reset_index()
        out.append(part.assign(layout=i))
    return out


def row_cells(rows: Any, width: int) -> Any:
    """:func:`unit_cells` without an id: each row is a unit, at its cell."""
    from pyspark.sql import functions as F
    zero = F.lit(0).cast("long")
    counted = F.when(F.col("cell").isNotNull(), F.col("ok"))
    return rows.groupBy("layout", "cell").agg(
        F.sum(counted).alias("units"), F.sum(counted).alias("rows"), *[F.sum(f"v{j}").alias(f"v{j}") for j in range(width)],
        F.sum(counted).alias("n"), zero.alias("outside"), zero.alias("several"), *_slots(width, values=False),
        F.count(F.lit(1)).alias("total"), F.sum("ok").alias("kept"), F.count(F.lit(1)).alias("nunits"),
        zero.alias("noid"))


def aggregate_jvm(raw: Any, spec: QuerySpec, key: bytes | None = None) -> Aggregated:
    """The JVM path (module docstring): one job per branch, one collect of its per-cell table
    (and, when units are over ``max_rows``, one more per branch for their ranked rows).

    Proof: docs/proofs/spark-bounding.md
    """
    from pyspark.sql import functions as F
    uid = spec.unit.id
    rules = rules_of(spec, key)
    if uid is not None:
        base = raw.withColumn(UNIT, F.col(f"`{uid}`"))
        if rules.key is not None:   # random bounding: each row's priority (computed where read)
            from .priority import spark_row_priority
            base = base.withColumn(PRIORITY, spark_row_priority(rules.key, F.col(INDEX)))
        keyed = ranked(base, spec, False)
        got = by_single(keyed, spec, rules)
        if got is None:   # not every branch combines, or too many units not single (or no id)
            got, keyed = by_unit(keyed, spec, spec.unit.rows_bound, rules=rules)
        if got is None:   # over OVER_IDS units over max_rows: every row ranked by the read index
            got, keyed = by_unit(ranked(base, spec), spec, ranked_rows=True, rules=rules)
    else:
        keyed = ranked(raw, spec)
        got = by_row(keyed, spec)
    shared = layouts(spec.statistics)
    out = Aggregated(spec, counts={s.name: {} for s in spec.statistics})
    first = got[got["layout"] == 0]
    out.rows, out.kept, out.units = (int(first[c].sum()) for c in ("total", "kept", "nunits"))
    noid = first_without_id(keyed) if bool((got["noid"] > 0).any()) else None
    refuse_bad(noid, got, shared, keyed, spec)
    return assemble(out, got, shared)


#: At most this many ids of units over ``max_rows`` reach the driver (:func:`by_unit`); more,
#: and every row is ranked instead.
OVER_IDS = 100_000


def combines(shared: list[list[Statistic]], ids: list[int], max_rows: int | None) -> bool:
    """Whether a branch's aggregate per (unit, group, keys) is left to Spark's map-side combine
    (then a shuffle of that aggregate, and another by unit for the windows): when a unit of
    ``max_rows`` rows falls in at most half as many declared (group, keys) combinations, so
    that the combine can at least halve what is shuffled. Else the rows are shuffled once, by
    unit (``repartition``), and the aggregate and the windows reuse that partitioning."""
    if max_rows is None:
        return False
    lead = shared[ids[0]][0]
    cells = lead.shape[0] * int(np.prod([shared[i][0].keys.size for i in ids if shared[i][0].key is not None]))
    return 2 * cells <= max_rows


def by_single(keyed: Any, spec: QuerySpec, rules: SparkRules) -> Any | None:
    """The per-cell frames of every layout when every branch combines (:func:`combines`) under
    the ``first`` rule without ``max_rows_per_group``: the units whose first ``max_rows`` rows
    lie in one place summed in one job for every branch (:mod:`.spark_single`), the others'
    rows alone ranked (a broadcast semi-join on their ids, one more job per branch). ``None``
    otherwise, or when a row has no id or more than :data:`OVER_IDS` units are not single (the
    caller's path: :func:`by_unit`).

    Proof: docs/proofs/spark-bounding.md (*single units*)
    """
    import pandas as pd

    from .spark_single import places, single_frames, single_table
    shared, m = layouts(spec.statistics), spec.unit.rows_bound
    split = branches(shared)
    if m is None or rules.cuts or not all(combines(shared, ids, m) for ids in split):
        return None
    packed = places(shared, split)
    if packed is None:
        return None
    got = to_frame(single_table(keyed, shared, packed, m, OVER_IDS))
    if bool((got["noid"].fillna(0) > 0).any()):
        return None
    frame, oids = single_frames(got, shared, packed)
    if len(oids) > OVER_IDS:
        return None
    if oids:
        over = ranked(keyed.join(unit_table(keyed, oids), UNIT, "left_semi"), spec)
        frame = pd.concat([frame, by_unit(over, spec, ranked_rows=True, rules=rules)[0]], ignore_index=True)
    return frame


def by_unit(keyed: Any, spec: QuerySpec, max_rows: int | None = None, ranked_rows: bool = False,
            rules: SparkRules = SparkRules()) -> tuple[Any, Any]:
    """The per-cell frames of every layout, one job per branch, and ``keyed``. With
    ``max_rows`` (the first pass: no row ranked) the units over it are set apart in each
    branch and their ids (at most :data:`OVER_IDS`) collected; their rows alone -- a
    broadcast semi-join on the ids -- are then ranked by the read index (:func:`ranked`, once)
    and aggregated per branch, and the two tables added per cell (each unit counts in one).
    ``None`` when more units are over: the caller ranks every row (``ranked_rows``: the rows
    are then partitioned by unit already). Each branch's rows are shuffled by unit unless
    Spark's combine pays (:func:`combines`). ``rules``: :mod:`.spark_groups`'s (with
    ``max_rows_per_group`` one branch per layout, its rows shuffled by unit before the rank
    of each row in its group)."""
    import pandas as pd
    shared = layouts(spec.statistics)
    types = {f.name: f.dataType.simpleString() for f in keyed.schema.fields}
    parts: list = []
    over: dict[bool, Any] = {}   # per trim (:func:`trims`), the rows of the units set apart, ranked
    split = [[i] for ids in branches(shared) for i in ids] if rules.per_group is not None else branches(shared)
    source = keyed.repartition(UNIT) if rules.per_group is not None and not ranked_rows else keyed
    for ids in split:
        combine = not ranked_rows and source is keyed and combines(shared, ids, spec.unit.rows_bound)
        trim = trims(max_rows, rules, combine)
        rows, slots = branch_rows(source, shared, ids, types, rules, read_index=trim)
        if not (ranked_rows or source is not keyed or combine):
            rows = rows.repartition(UNIT)   # the rows shuffled by unit
        got = to_frame(branch_cells(rows, shared, ids, slots, max_rows, rules, trim))
        if max_rows is not None:
            oids = [v for got_ids in got.pop("oids") if got_ids is not None for v in got_ids]
            if len(oids) > OVER_IDS:
                return None, keyed
            if oids and trim not in over:   # the units set apart: over by one too unless trimmed
                over[trim] = ranked(keyed.join(unit_table(keyed, oids), UNIT, "left_semi"), spec)
            if oids:
                rows, _ = branch_rows(over[trim], shared, ids, types, rules)
                got = pd.concat([got, to_frame(branch_cells(rows, shared, ids, slots, rules=rules))], ignore_index=True)
        parts += by_layout(got, shared, ids)
    return pd.concat(parts, ignore_index=True), keyed


def unit_table(keyed: Any, ids: list) -> Any:
    """The units ``ids`` as a broadcast table of one column, :data:`UNIT`, of ``keyed``'s type."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType
    field = next(f for f in keyed.schema.fields if f.name == UNIT)
    kind = field.dataType.simpleString()
    values = [(str(v) if kind == "string" else int(v),) for v in ids]
    return F.broadcast(keyed.sparkSession.createDataFrame(values, StructType([field])))


def by_row(keyed: Any, spec: QuerySpec) -> Any:
    """Without an id: the per-cell frames of every layout, each row a unit (one job)."""
    from pyspark.sql import functions as F
    frames, shared, width = per_row(keyed, spec)
    union = None
    for rows, group in zip(frames, shared):
        used = len(value_slots(group)[0])
        table = row_cells(rows, used).withColumns({name: F.lit(None if name[0] == "b" else 0).cast("long")
                                                   for j in range(used, width) for name in (f"v{j}", f"cl{j}", f"b{j}")})
        union = table if union is None else union.unionByName(table)
    return to_frame(union)


def assemble(out: Aggregated, got: Any, shared: list[list[Statistic]]) -> Aggregated:
    """The driver's part: each statistic's counts and exact answers from the per-cell table
    (module docstring)."""
    for i, group in enumerate(shared):
        rows = got[got["layout"] == i]
        counted = rows[rows["cell"].notna()]
        cell = counted["cell"].to_numpy(np.int64)
        slot = value_slots(group)[1]
        for stat in group:
            counts = out.counts[stat.name]
            bump(counts, "rows_not_matching_where", int(rows["nw"].sum()))
            bump(counts, "rows_undeclared_key_or_group", int(rows["ud"].sum()))
            if stat.name in slot:
                bump(counts, "values_clamped", int(rows[f"cl{slot[stat.name]}"].sum()))
            bump(counts, "rows_counted_before_unit_rules", int(counted["n"].sum()))
        for stat in group:
            counts, kind = out.counts[stat.name], kind_of(stat)
            if kind.counts_units(stat):
                what = counted["units"]
                bump(counts, "units_with_rows_in_several_cells", int(counted["several"].sum()))
            else:
                what = counted[f"v{slot[stat.name]}" if stat.name in slot else "rows"]
                if stat.by is not None:
                    bump(counts, "rows_outside_the_units_group", int(counted["outside"].sum()))
            grid = np.zeros(stat.shape, np.int64)
            np.add.at(grid.reshape(-1), cell, what.fillna(0).to_numpy(np.int64))
            out.answered[stat.name] = from_cells(stat, grid)
    return out


def first_without_id(keyed: Any) -> int:
    """The read index of the first row without an id (a job run only when there is one)."""
    from pyspark.sql import functions as F
    return int(to_frame(keyed.filter(F.col(UNIT).isNull()).agg(F.min(ROW).alias("r")))["r"].iloc[0])


def to_frame(df: Any) -> Any:
    """A small Spark result as pandas through Arrow; integer columns as pandas ``Int64``
    (nullable, exact: no float round trip); a failed job is one line (:func:`arrow`)."""
    import pandas as pd
    import pyarrow as pa

    return arrow(df).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)


def arrow(df: Any) -> Any:
    """``df.toArrow()``; a failed job (a sum beyond the long range under ANSI mode, a lost
    executor) is one line (:func:`optnoise.publish.spark.marked_failure`)."""
    from ..publish.spark import job_failure, marked_failure, quiet_failures
    try:
        with quiet_failures():
            return df.toArrow()
    except Exception as exc:   # noqa: BLE001 -- every job failure becomes one line
        info = marked_failure(exc, BAD_VALUE)
        raise (info if isinstance(info, Exception) else job_failure(exc)) from None


def refuse_bad(noid: int | None, got: Any, shared: list[list[Statistic]], keyed: Any, spec: QuerySpec) -> None:
    """Raise the local engine's error for the first row (in input order) without an id
    (``noid``: its read index) or with a bad value in a kept, counted row of a summed column
    (``b*`` of the per-cell table); nothing when none."""
    from pyspark.sql import functions as F
    found: list[tuple[int, int, str]] = []   # (row index, 0 id / 1 value, column)
    if noid is not None:
        found.append((noid, 0, spec.unit.id or ""))
    for i, group in enumerate(shared):
        rows = got[got["layout"] == i]
        for j, stat in enumerate(value_slots(group)[0]):
            bad = rows[f"b{j}"].dropna()
            if len(bad):
                found.append((int(bad.min()), 1, stat.value_column))   # type: ignore[arg-type]
    if not found:
        return
    at, kind, col = min(found)
    row = keyed.filter(F.col(ROW) <= at).count()
    if kind == 0:
        raise InvalidParameterError("unit.id", f"column '{col}': missing value at data row {row}",
                                    "an id in every row (a row without one belongs to no unit)")
    raw = keyed.filter(F.col(ROW) == at).select(f"`{col}`").toPandas()[col].iloc[0]
    raise InvalidParameterError(f"column '{col}'", f"{'missing value' if raw is None or raw != raw else repr(raw)}"
                                f" at data row {row}", "numbers in a summed column (a missing or non-numeric value "
                                                       "is not imputed)")


__all__ = ["BAD_VALUE", "BRANCH_CELLS", "DATA_ROW", "KEPT", "OVER_IDS", "ROW", "UNIT", "aggregate_jvm", "arrow",
           "assemble", "branch_cells", "branch_rows", "branches", "by_layout", "by_row", "by_single", "by_unit", "combines",
           "first_without_id", "layout_fields", "per_row", "ranked", "refuse_bad", "row_cells", "set_apart",
           "to_frame", "trims", "unit_table", "unit_windows", "value_slots"]
