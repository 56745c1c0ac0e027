"""The Spark engine's JVM path for units whose kept rows lie in one place: every branch in one job.

Used by :func:`.spark_units.by_single` where every branch's rows collapse (:func:`.spark_units.combines`)
under the ``first`` rule without ``max_rows_per_group``. A row's *place* is, for every branch
(:func:`.spark_units.branches`), its code of ``G`` and the key ``K_i`` of each keyed layout, a
missing one included (:func:`.spark_groups.dims_code`), the branches' codes packed in one long
(:func:`places`). One job, whatever the number of branches:

1. per row (:func:`single_table`): its place, whether it passes each distinct ``where``, and
   per distinct summed column (column, clamp, resolution) its clamped, rounded value, clamped
   flag and read index when bad -- whatever its group (a unit of one place is counted in
   every layout of a branch or in none);
2. per unit, a hash aggregation by the unit alone (combined map-side: one shuffle, as a plain
   group-by): its rows, the least, greatest and sum of their places, each field summed (the bad
   index: its least), and by ``max_by`` on the read index its last row's index, place and fields;
3. a unit is *single* when its first ``max_rows`` rows lie in one place: it has at most
   ``max_rows + 1`` rows, and they lie in one place, or, at ``max_rows + 1``, all but the last
   do (the last at the greatest place and the others summing to that many times the least, or
   the last at the least and the others to that many times the greatest). Its kept rows are its
   rows less the last at ``max_rows + 1`` (docs/proofs/spark-bounding.md, *single units*);
4. per branch and code (each unit once per branch through ``posexplode``): the single units'
   number, rows read and kept, and sums; the other units' ids (at most ``limit`` + 1) and
   whether some row has no id, on branch 0's rows.

The driver (:func:`single_frames`) turns each code into each layout's cell and the columns
:func:`.spark_units.assemble` reads: a single unit is at home in its one cell of each layout
that counts it (its home cell and group, or its one kept cell; no row outside, not in several
cells). The other units are the caller's (their rows alone, ranked: :func:`.spark_units.by_unit`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kinds import kind_of
from .spark_groups import KEPT, ROW, UNIT, branch_sizes, dims_code, value_slots
from .spec import Statistic

#: The bits of a row's place (every branch's code); past them the caller's path runs. The sum of
#: a unit's places then fits a long for any unit of fewer than 2^39 rows.
PLACE_BITS = 24


def places(shared: list[list[Statistic]], split: list[list[int]]) -> list[tuple[list[int], int, int]] | None:
    """Per branch its layouts, the shift and the width in bits of its code in a place;
    ``None`` when they need more than :data:`PLACE_BITS`."""
    out, shift = [], 0
    for ids in split:
        bits = max(1, (int(np.prod([s + 1 for s in branch_sizes(shared, ids)])) - 1).bit_length())
        out.append((ids, shift, bits))
        shift += bits
    return out if shift <= PLACE_BITS else None


def fields_of(shared: list[list[Statistic]]) -> tuple[list[tuple], list[Statistic]]:
    """The distinct ``where`` of the layouts (only those with a condition) and the distinct
    summed columns (one statistic per (column, clamp, resolution))."""
    wheres = list(dict.fromkeys(group[0].where for group in shared if group[0].where))
    seen: dict[tuple, Statistic] = {}
    for group in shared:
        for stat in value_slots(group)[0]:
            seen.setdefault((stat.value_column, stat.clamp, stat.resolution), stat)
    return wheres, list(seen.values())


def single_table(keyed: Any, shared: list[list[Statistic]], packed: list[tuple[list[int], int, int]],
                 max_rows: int, limit: int) -> Any:
    """Steps 1 to 4 (module docstring): the plan of the per-(branch, code) table, with columns
    ``b`` (the branch), ``c`` (its code), ``nunits``, ``total``, ``kept``, ``w{c}`` per
    distinct ``where``, ``v{s}``, ``cl{s}``, ``b{s}`` per distinct summed column, ``oids`` and
    ``noid`` (:func:`fields_of`'s order).

    Proof: docs/proofs/spark-bounding.md (*single units*)
    """
    from pyspark.sql import functions as F

    from .spark_rules import branch_keys, matches, scaled_value
    types = {f.name: f.dataType.simpleString() for f in keyed.schema.fields}
    wheres, values = fields_of(shared)
    place = F.lit(0).cast("long")
    for ids, shift, _ in packed:
        _, G, keys = branch_keys(shared, ids, types, F.col(KEPT))
        place = place + F.shiftleft(dims_code([G, *keys.values()], branch_sizes(shared, ids)), shift)
    row = [F.col(UNIT), F.col(ROW), place.alias("p")]
    for c, where in enumerate(wheres):
        hit = F.lit(True)
        for cond in where:
            hit = hit & matches(cond)
        row.append(hit.cast("long").alias(f"w{c}"))
    for s, stat in enumerate(values):
        value, clamped, bad = scaled_value(stat)
        row += [F.when(~bad, value).otherwise(F.lit(0).cast("long")).alias(f"v{s}"),
                (~bad & clamped).cast("long").alias(f"cl{s}"), F.when(bad, F.col(ROW)).alias(f"b{s}")]
    summed = [f"w{c}" for c in range(len(wheres))] + [f"{x}{s}" for s in range(len(values)) for x in ("v", "cl")]
    last = F.col(ROW)
    units = keyed.select(*row).groupBy(UNIT).agg(
        F.count(F.lit(1)).alias("total"), F.min("p").alias("p0"), F.max("p").alias("p1"), F.sum("p").alias("ps"),
        F.max(ROW).alias("rl"), F.max_by("p", last).alias("lp"), *[F.sum(c).alias(c) for c in summed],
        *[F.max_by(c, last).alias(f"l{c}") for c in summed],
        *[F.min(f"b{s}").alias(f"b{s}") for s in range(len(values))])
    return per_branch(units, packed, summed, len(values), max_rows, limit)


def per_branch(units: Any, packed: list[tuple[list[int], int, int]], summed: list[str], width: int,
               max_rows: int, limit: int) -> Any:
    """Steps 3 and 4 (module docstring) on the per-unit aggregate ``units``."""
    from pyspark.sql import functions as F
    total, p0, p1, lp = F.col("total"), F.col("p0"), F.col("p1"), F.col("lp")
    trim = total == max_rows + 1
    alone = p0 == p1
    rest = total - 1
    below = (lp == p1) & (F.col("ps") - lp == rest * p0)   # the rows but the last at the least place
    above = (lp == p0) & (F.col("ps") - lp == rest * p1)   # ... at the greatest
    single = F.col(UNIT).isNotNull() & ((alone & (total <= max_rows + 1)) | (trim & (below | above)))
    at = F.when(alone | below, p0).otherwise(p1)
    cut = trim.cast("long")
    units = units.select(
        F.col(UNIT), single.alias("single"), total.alias("total"), (total - cut).alias("kept"),
        *[(F.col(c) - cut * F.col(f"l{c}")).alias(c) for c in summed],
        *[F.when(~trim | (F.col(f"b{s}") != F.col("rl")), F.col(f"b{s}")).alias(f"b{s}") for s in range(width)],
        F.posexplode(F.array(*[F.shiftright(at, shift).bitwiseAND(F.lit((1 << bits) - 1))
                               for _, shift, bits in packed]))
        .alias("b", "c"))
    one, first = F.col("single"), F.col("b") == 0
    return units.groupBy("b", "c").agg(
        F.sum(one.cast("long")).alias("nunits"),
        *[F.sum(F.when(one, F.col(c))).alias(c) for c in ["total", "kept"] + summed],
        *[F.min(F.when(one, F.col(f"b{s}"))).alias(f"b{s}") for s in range(width)],
        F.slice(F.collect_list(F.when(first & ~one, F.col(UNIT))), 1, limit + 1).alias("oids"),
        F.max(F.when(first, F.col(UNIT).isNull().cast("long"))).alias("noid"))


def single_frames(got: Any, shared: list[list[Statistic]],
                  packed: list[tuple[list[int], int, int]]) -> tuple[Any, list]:
    """The per-(branch, code) table (:func:`single_table`, collected) as the per-layout
    frames of :func:`.spark_units.by_layout` (one row per code of the layout's branch), and
    the ids of the units that are not single."""
    import pandas as pd
    wheres, values = fields_of(shared)
    slot = {(s.value_column, s.clamp, s.resolution): j for j, s in enumerate(values)}
    oids = [v for ids in got["oids"] if ids is not None for v in ids]
    frames = []
    for b, (ids, _, _) in enumerate(packed):
        rows = got[got["b"] == b]
        code = rows["c"].to_numpy(np.int64)
        digits = []
        for size in reversed(branch_sizes(shared, ids)):   # the last dimension is the lowest digit
            digits.append(code % (size + 1) - 1)
            code = code // (size + 1)
        G, keyed = digits[-1], iter(reversed(digits[:-1]))
        kept = rows["kept"].fillna(0).to_numpy(np.int64)
        where = shared[ids[0]][0].where
        w = rows[f"w{wheres.index(where)}"].fillna(0).to_numpy(np.int64) if where else kept
        for i in ids:
            group, lead = shared[i], shared[i][0]
            K = next(keyed) if lead.key is not None else np.zeros_like(G)
            counted = (G >= 0) & (K >= 0)
            cell = pd.array(np.where(counted, G * (lead.keys.size if lead.key is not None else 1) + K, 0),
                            dtype="Int64")
            cell[~counted] = pd.NA
            homes = any(s.keep_cells or kind_of(s).counts_units(s) for s in group)   # as in unit_windows
            units = rows["nunits"].fillna(0).to_numpy(np.int64)
            frame = {"layout": i, "cell": cell, "units": np.where(counted & homes, units, 0),
                     "rows": np.where(counted, w, 0), "n": np.where(counted, w, 0), "outside": 0, "several": 0,
                     "ud": np.where(counted, 0, w), "nw": kept - w, "noid": rows["noid"].fillna(0).to_numpy(np.int64),
                     **{c: rows[c].fillna(0).to_numpy(np.int64) for c in ("total", "kept")}, "nunits": units}
            for j, stat in enumerate(value_slots(group)[0]):
                s = slot[(stat.value_column, stat.clamp, stat.resolution)]
                bad = rows[f"b{s}"].astype("Int64").to_numpy(dtype=object)
                frame.update({f"v{j}": np.where(counted, rows[f"v{s}"].fillna(0).to_numpy(np.int64), 0),
                              f"cl{j}": np.where(counted, rows[f"cl{s}"].fillna(0).to_numpy(np.int64), 0),
                              f"b{j}": pd.array(np.where(counted, bad, None), dtype="Int64")})
            frames.append(pd.DataFrame(frame, index=range(len(rows))))
    return pd.concat(frames, ignore_index=True), oids


__all__ = ["PLACE_BITS", "fields_of", "per_branch", "places", "single_frames", "single_table"]
