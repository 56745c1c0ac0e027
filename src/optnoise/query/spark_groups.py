"""The unit rules of the Spark engine's JVM path that choose rows and groups (:mod:`.spark_units`
runs the rest): the first ``max_rows`` rows, or under ``bounding = "random"`` those of smallest
priority; ``max_rows_per_group``; and the kept cells and groups of each unit -- its home, or
its ``max_groups`` of most counted rows, or of smallest priority -- the cells, not the groups, for
a statistic that keeps cells (issue 36; the local engine's
rules: :mod:`.units`, :mod:`.cells`; docs/proofs/spark-bounding.md).

**Ranks.** ``row_number() over (partition by unit order by ...)``: by the read index
(:data:`ROW`) under ``first``; by the row's priority then the read index under random
bounding (:func:`.priority.spark_row_priority` of :data:`INDEX`, each row's number in the input
as the local engine counts it). Random bounding keeps every row for the counts (as the local
engine, which counts what it reads before it knows which rows a unit keeps) and marks the kept
ones in :data:`TOP`.

**Rows not kept but counted** (:data:`CUT`, a dimension of the per-(unit, cell) aggregate, 1 on
such rows): the rows past a group's ``max_rows_per_group`` (:func:`cut`: the first ``r`` of the
unit's counted rows of the group, by read index or priority, among the kept rows), and under
random bounding the rows past the unit's ``max_rows``. They add to the counts of what the rules
read (counted rows, clamped values, bad values) and to no cell.

**Kept cells and groups** (:func:`unit_windows`): with one group and the ``first`` rule, the
argmax of the counted rows with ties to the least cell (``max`` of ``struct(rows, -cell)``);
otherwise ``dense_rank() over (partition by unit order by (not counted, -rows, cell))`` (or
``(not counted, priority, cell)``, the priority :func:`.priority.spark_group_priority` of the
unit's least read index and the cell) at most ``max_groups``: the local engine's
:func:`.cells.top_cells` on the same aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .aggregate import carriers
from .kinds import kind_of
from .spec import QuerySpec, Statistic

ROW, UNIT, KEPT = "__optnoise_row", "__optnoise_unit", "__optnoise_kept"
#: Each row's read index (1, 2, ...: the local engine's row number), under random bounding.
INDEX = "__optnoise_index"
#: Under random bounding: among the unit's ``max_rows`` rows of smallest priority.
TOP = "__optnoise_top"
#: Under random bounding: the row's priority (a signed long, :func:`.priority.spark_row_priority`).
PRIORITY = "__optnoise_priority"
#: The dimension of the counted rows that no cell counts (module docstring).
CUT = "X"


def value_slots(group: list[Statistic]) -> tuple[list[Statistic], dict[str, int]]:
    """A layout's summed columns, one per distinct (column, clamp, resolution) -- two peaks of
    the same column by two methods share one -- and each summing statistic's slot."""
    first: dict[tuple, int] = {}
    chosen: list[Statistic] = []
    slot: dict[str, int] = {}
    for stat in carriers(group):
        if stat.value_column:
            key = (stat.value_column, stat.clamp, stat.resolution)
            if key not in first:
                first[key] = len(chosen)
                chosen.append(stat)
            slot[stat.name] = first[key]
    return chosen, slot


@dataclass(frozen=True)
class SparkRules:
    """The unit's rules of rows and groups on Spark: ``groups`` (``max_groups``, default 1),
    ``per_group`` (``max_rows_per_group``), and the key of random bounding (``None``: first)."""

    groups: int = 1
    per_group: int | None = None
    key: bytes | None = None

    @property
    def cuts(self) -> bool:
        """Whether some counted rows are counted in no cell (:data:`CUT`)."""
        return self.per_group is not None or self.key is not None

    @property
    def ranks_groups(self) -> bool:
        """Whether the kept cells and groups need a rank (not the one home of most rows)."""
        return self.groups > 1 or self.key is not None


def rules_of(spec: QuerySpec, key: bytes | None) -> SparkRules:
    """The :class:`SparkRules` of a spec (``key``: random bounding's, ``None`` under first)."""
    unit = spec.unit
    random = unit.bounding == "random" and unit.id is not None
    return SparkRules(unit.groups_bound, unit.max_rows_per_group, key if random else None)


def ranked(keyed: Any, spec: QuerySpec, rank: bool = True) -> Any:
    """``keyed`` with :data:`KEPT`: among its unit's first ``max_rows`` rows by the read index
    (a window partitioned by unit), or every row when there is no id, no ``max_rows`` or no
    ``rank`` (the first pass: the units over ``max_rows`` set apart by its result,
    :func:`.spark_units.by_unit`). Without ``rank`` nothing is shuffled. Under random bounding
    (``keyed`` has :data:`PRIORITY`) every row is kept for the counts and :data:`TOP` marks the
    ``max_rows`` of smallest priority."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    m = spec.unit.rows_bound
    random = PRIORITY in keyed.columns
    if spec.unit.id is None or m is None or not rank:
        keyed = keyed.withColumn(KEPT, F.lit(True))
        return keyed.withColumn(TOP, F.lit(True)) if random else keyed
    if not random:
        return keyed.withColumn(KEPT, F.row_number().over(Window.partitionBy(UNIT).orderBy(ROW)) <= m)
    top = F.row_number().over(Window.partitionBy(UNIT).orderBy(PRIORITY, ROW)) <= m
    return keyed.withColumns({KEPT: F.lit(True), TOP: top})


def branch_sizes(shared: list[list[Statistic]], ids: list[int]) -> list[int]:
    """The sizes of a branch's dimensions (:func:`.spark_rules.branch_keys`): the groups, then
    each keyed layout's keys."""
    return [shared[ids[0]][0].shape[0]] + [shared[i][0].keys.size for i in ids if shared[i][0].key is not None]


def dims_code(dims: list[Any], sizes: list[int]) -> Any:
    """The code of a combination of dimensions (columns, each an index below its size or
    null): mixed radix, digit ``d + 1`` of base ``size + 1``, 0 for null; a long, never null,
    below the product of ``size + 1``."""
    from pyspark.sql import functions as F
    code = F.lit(0).cast("long")
    for d, size in zip(dims, sizes):
        code = code * (size + 1) + F.coalesce(d + 1, F.lit(0).cast("long"))
    return code


def cut(keyed: Any, G: Any, K: Any, rules: SparkRules) -> Any:
    """:data:`CUT` of a row (module docstring) whose group is ``G`` (null: not counted) and key
    ``K`` (null: undeclared; read with ``max_rows_per_group`` only, when the branch is one
    layout: else a row past ``max_rows`` is cut whatever its keys)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    counted = G.isNotNull() & (K.isNotNull() if rules.per_group is not None else F.lit(True))
    top = F.col(TOP) if TOP in keyed.columns else F.lit(True)
    out = ~top
    if rules.per_group is not None:
        order = [PRIORITY, ROW] if rules.key is not None else [ROW]
        rank = F.row_number().over(Window.partitionBy(UNIT, G, counted, top).orderBy(*order))
        out = out | (rank > rules.per_group)
    return F.when(counted & out, 1).otherwise(0).cast("long").alias(CUT)


def rank_of(rows: Any, code: Any, live: Any, rules: SparkRules) -> Any:
    """The rank of a row's cell (or group) ``code`` among its unit's: the ``live`` ones (counted
    and not cut) first, by (most ``rows``, least code) or (least priority, least code); a cell
    is kept when live and ranked at most ``max_groups``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from .priority import spark_group_priority
    by = spark_group_priority(rules.key, F.col("ufirst"), code) if rules.key is not None else -rows
    return F.dense_rank().over(Window.partitionBy(UNIT).orderBy((~live).cast("int"), by, code))


def unit_windows(t: Any, shared: list[list[Statistic]], ids: list[int], dims: list[str],
                 slots: dict[tuple, int], rules: SparkRules = SparkRules()) -> tuple[Any, list[Any]]:
    """Step 4's windows over each unit's rows of ``t`` (the aggregate per (unit, ``dims``),
    :func:`.spark_units.branch_cells`) in three projections -- the counted rows per cell and
    per group, then the kept cells and groups, then each kept cell's row -- and the final
    aggregation's measures. A cell (or group) that is already a row of ``t`` needs no window
    for its count."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    unit, G, w = Window.partitionBy(UNIT), F.col("G"), F.col("w")
    levels: list[dict] = [{}, {}, {}]
    if rules.key is not None:
        levels[0]["ufirst"] = F.min("r0").over(unit)
    measures: list = []
    for i in ids:
        group, lead = shared[i], shared[i][0]
        counted = G.isNotNull() & (F.col(f"K{i}").isNotNull() if lead.key is not None else F.lit(True))
        live = counted & (F.col(CUT) == 0) if rules.cuts else counted
        cell = G * lead.keys.size + F.col(f"K{i}") if lead.key is not None else G
        cells = ["G"] + ([f"K{i}"] if lead.key is not None else [])
        paired = any(s.keep_cells for s in group)   # rows kept in the unit's kept cells
        homes = paired or any(kind_of(s).counts_units(s) for s in group)
        grouped = lead.by is not None and not paired and not all(kind_of(s).counts_units(s) for s in group)
        n, lw = F.when(counted, w), F.when(live, w)
        if homes:
            levels[0][f"crows{i}"] = lw if cells == dims else F.sum(lw).over(Window.partitionBy(UNIT, *cells))
            if rules.ranks_groups:
                levels[1][f"crank{i}"] = rank_of(F.col(f"crows{i}"), cell, live, rules)
                levels[2][f"hrow{i}"] = F.min(F.when(live, F.col("code"))).over(Window.partitionBy(UNIT, *cells))
            else:
                levels[1][f"home{i}"] = -F.max(F.when(live, F.struct(F.col(f"crows{i}").alias("a"),
                                                                     (-cell).alias("b")))).over(unit)["b"]
                # the unit once, on one row of its home cell (the other keyed layouts split a cell in rows)
                levels[2][f"hrow{i}"] = F.min(F.when(live & (cell == F.col(f"home{i}")), F.col("code"))).over(unit)
            levels[1].update({f"lo{i}": F.min(F.when(live, cell)).over(unit),
                              f"hi{i}": F.max(F.when(live, cell)).over(unit)})
        if grouped:
            levels[0][f"grows{i}"] = lw if dims == ["G"] else F.sum(lw).over(Window.partitionBy(UNIT, "G"))
            if rules.ranks_groups:
                levels[1][f"grank{i}"] = rank_of(F.col(f"grows{i}"), G, live, rules)
            else:
                levels[1][f"hgrp{i}"] = -F.max(F.when(live, F.struct(F.col(f"grows{i}").alias("a"),
                                                                     (-G).alias("b")))).over(unit)["b"]
        kept = None
        if paired:   # the layout of a statistic that keeps cells (:func:`.aggregate.layouts`: alone)
            kept = F.col(f"crank{i}") <= rules.groups if rules.ranks_groups else cell == F.col(f"home{i}")
        measures += _measures(i, group, slots, counted, live, homes, grouped, rules, kept)
    for level in levels:
        t = t.withColumns(level) if level else t
    return t, measures


def _measures(i: int, group: list[Statistic], slots: dict[tuple, int], counted: Any, live: Any, homes: bool,
              grouped: bool, rules: SparkRules, kept: Any = None) -> list[Any]:
    """The final aggregation's measures of layout ``i`` (:func:`.spark_units.branch_cells`);
    ``kept``: whether a row's cell is one of its unit's kept cells, for a layout whose unit
    keeps cells (``Statistic.keep_cells``), else ``None``."""
    from pyspark.sql import functions as F
    w, code = F.col("w"), F.col("code")
    if not homes:
        at_home = several = F.lit(False)
    elif rules.ranks_groups:   # once per kept cell; several cells: once, at the first kept cell
        at_home = live & (F.col(f"crank{i}") <= rules.groups) & (code == F.col(f"hrow{i}"))
        several = at_home & (F.col(f"crank{i}") == 1) & (F.col(f"lo{i}") != F.col(f"hi{i}"))
    else:
        at_home = code == F.col(f"hrow{i}")
        several = at_home & (F.col(f"lo{i}") != F.col(f"hi{i}"))
    if kept is not None:
        in_group = live & kept
    elif not grouped:
        in_group = live
    else:
        in_group = live & ((F.col(f"grank{i}") <= rules.groups) if rules.ranks_groups else
                           (F.col("G") == F.col(f"hgrp{i}")))
    out = [F.sum(at_home.cast("long")).alias(f"units_{i}"), F.sum(F.when(in_group, w)).alias(f"rows_{i}"),
           F.sum(F.when(counted, w)).alias(f"n_{i}"), F.sum(F.when(live & ~in_group, w)).alias(f"outside_{i}"),
           F.sum(several.cast("long")).alias(f"several_{i}"), F.sum(F.when(~counted, w)).alias(f"ud_{i}")]
    for j, stat in enumerate(value_slots(group)[0]):
        s = slots[(stat.value_column, stat.clamp, stat.resolution)]
        out += [F.sum(F.when(in_group, F.col(f"v{s}"))).alias(f"v{j}_{i}"),
                F.sum(F.when(counted, F.col(f"cl{s}"))).alias(f"cl{j}_{i}"),
                F.min(F.when(counted, F.col(f"b{s}"))).alias(f"b{j}_{i}")]
    return out


__all__ = ["CUT", "INDEX", "KEPT", "PRIORITY", "ROW", "SparkRules", "TOP", "UNIT", "branch_sizes", "cut",
           "dims_code", "rank_of", "ranked", "rules_of", "unit_windows", "value_slots"]
