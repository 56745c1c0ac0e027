"""Histograms that add up (issue 36, item 4): per-cell error and intervals, one table.

Run: .venv/bin/python bench/consistent_tables.py [--units 1000] [--cells 10,50,200] [--epsilons 1,0.2]
                                                 [--alpha 0.05] [--reps 200] [--seed 36]
     .venv/bin/python bench/consistent_tables.py --levels demo,sparse [--epsilons 1,3] [--reps 200]

A histogram of ``N`` units under ``replace`` over ``m`` cells (the declared keys and the
outside cell; ``N`` public), Zipf shares (exponent 1.1; the outside cell 2 %). One unit moves
two cells by one, so every method below gives each cell pure ``epsilon / 2`` and has the same
guarantee: pure ``epsilon``-DP for the histogram (the accountant's two parts). Methods, side by
side on the same true table:

* **independent** -- optnoise's default cell (the optimal channel on ``{0..N}`` for absolute
  error), each cell on its own: the cells do not add up;
* **consistent** -- ``consistent = true``: the same cells projected onto ``sum = N`` inside the
  simultaneous intervals (:mod:`optnoise.query.consistent`);
* **consistent, clamped geometric** -- the same with ``mechanism = "clamped-geometric"``;
* **TopDown way** -- two-sided geometric noise on the integers (unclamped, the same certified
  law as optnoise's geometric), non-negative least squares onto ``sum = N`` (``clip(y - tau, 0)``),
  then rounding to integers summing to ``N`` (floors, the remainder to the largest fractional
  parts): the Census TopDown's post-processing, which states no intervals.

Columns: mean ``|released - true|`` over cells and repetitions (``mae``), over the half of the
cells with the smallest true counts (``mae small``), the largest per-cell mean (``mae worst
cell``); the marginal ``1 - alpha`` interval's mean width and its empirical coverage (over cells
and repetitions); the simultaneous intervals' mean width and the share of repetitions where every cell is
covered at once. The intervals of the consistent rows are each cell's own (from its
independent release) and the boxes at ``alpha / m``; coverage is proven (docs/proofs/
consistent-tables.md), the empirical figure only shows it. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def truth(units: int, cells: int) -> np.ndarray:
    """Zipf shares over ``cells - 1`` keys and 2 % outside, rounded to sum exactly ``units``."""
    shares = 1 / np.arange(1, cells) ** 1.1
    shares = np.append(0.98 * shares / shares.sum(), 0.02) * units
    q = np.floor(shares).astype(np.int64)
    q[np.argsort(-(shares - q))[: units - int(q.sum())]] += 1
    return q


def topdown(y: np.ndarray, total: int) -> np.ndarray:
    """Non-negative least squares onto ``sum = total`` (``clip(y - tau, 0)``), then rounding
    that keeps the sum (largest fractional parts up)."""
    lo, hi = float(y.min()) - total - 1, float(y.max()) + 1
    for _ in range(100):                         # bisection on tau: sum clip(y - tau, 0) = total
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.clip(y - mid, 0, None).sum() > total else (lo, mid)
    x = np.clip(y - (lo + hi) / 2, 0, None)
    x *= total / x.sum()
    z = np.floor(x).astype(np.int64)
    z[np.argsort(-(x - z), kind="stable")[: total - int(z.sum())]] += 1
    return z


def measure(name: str, q: np.ndarray, released: np.ndarray, marginal, boxes) -> dict:
    err = np.abs(released - q)
    small = np.argsort(q, kind="stable")[: q.size // 2]
    row = {"method": name, "mae": err.mean(), "mae_small": err[:, small].mean(), "mae_worst": err.mean(0).max()}
    for key, iv in (("marginal", marginal), ("simultaneous", boxes)):
        if iv is None:
            row[key] = None
            continue
        low, high = iv
        inside = (low <= q) & (q <= high)
        row[key] = {"width": float((high - low).mean()), "coverage": float(inside.mean()) if key == "marginal"
                    else float(inside.all(1).mean())}
    return row


def run(units: int, cells: int, epsilon: float, alpha: float, reps: int, seed: int) -> list[dict]:
    from optnoise.neighbourhood import Neighbourhood
    from optnoise.query.consistent import fitted
    from optnoise.query.intervals import interval
    from optnoise.query.mechanisms import count_cell, family_designs
    from optnoise.randomness import SeededRandomSource
    from optnoise.target import Target

    q = truth(units, cells)
    target = Target(epsilon / 2)
    source = SeededRandomSource(seed)
    rows = []
    for name, choice in (("optimal channel", "optimal"), ("clamped geometric", "clamped-geometric")):
        cell = count_cell("h", units, 0, 1, target, choice)
        y = cell.release(np.tile(q, reps), source)
        marginal = [np.asarray(v).reshape(reps, cells) for v in interval(cell, y, alpha)[:2]]
        boxes = [np.asarray(v).reshape(reps, cells) for v in interval(cell, y, Fraction(str(alpha)) / cells)[:2]]
        y = y.reshape(reps, cells)
        if choice == "optimal":
            rows.append(measure("independent (optimal channel)", q, y, marginal, None))
        z = np.array([fitted(y[r], boxes[0][r], boxes[1][r], units, source)[0] for r in range(reps)])
        rows.append(measure(f"consistent ({name})", q, z, marginal, boxes))
    noise = family_designs(target, Neighbourhood.bd(1), ("geometric",), None)[0][3]
    y = np.asarray(noise.apply(np.tile(q, reps), source=source), dtype=np.int64).reshape(reps, cells)
    z = np.array([topdown(y[r].astype(float), units) for r in range(reps)])
    rows.append(measure("TopDown way (geometric, NNLS, rounding)", q, z, None, None))
    return rows


def table(rows: list[dict]) -> str:
    out = ["| method | mae | mae small | mae worst cell | marginal width / coverage | simultaneous width / "
           "all-at-once coverage |", "|---|---|---|---|---|---|"]
    for r in rows:
        iv = ["none" if r[k] is None else f"{r[k]['width']:.1f} / {r[k]['coverage']:.3f}"
              for k in ("marginal", "simultaneous")]
        out.append(f"| {r['method']} | {r['mae']:.2f} | {r['mae_small']:.2f} | {r['mae_worst']:.2f} | {iv[0]} | "
                   f"{iv[1]} |")
    return "\n".join(out)


# ------------------------------------------------------------------ hierarchies (--levels)
def level_truth(name: str) -> tuple[list[np.ndarray], int]:
    """Three levels' true grids (top 1 x K, middle P x K, bottom P x C x K: ``C`` children per
    parent) and the number of units. ``demo``: the demo's households (``meter_readings``),
    peak hour per circuit, circuits 1-4, 5-8, 9-12 on three feeders; ``sparse``: 2,000 units,
    4 regions x 5 districts x 24 keys, Zipf district sizes (exponent 1.1) times the demo's hour
    profile, 2 % of units outside (one random cell per unit)."""
    from optnoise.datasets import meter_peak_hours, meter_readings
    if name == "demo":
        r = meter_readings().drop_duplicates("household")
        bottom = np.zeros((3, 4, 24), np.int64)
        np.add.at(bottom, ((r["circuit"].to_numpy() - 1) // 4, (r["circuit"].to_numpy() - 1) % 4,
                           r["peak_hour"].to_numpy()), 1)
        units = len(r)
    else:
        rng = np.random.default_rng(36)
        units = 2000
        size = rng.permutation(1 / np.arange(1, 21) ** 1.1)
        hour = np.bincount(meter_peak_hours(20_000, 36), minlength=24) / 20_000
        p = (size[:, None] / size.sum()) * hour[None, :]
        inside = int(units * 0.98)
        bottom = np.bincount(rng.choice(p.size, inside, p=p.ravel()), minlength=p.size).reshape(4, 5, 24)
    middle = bottom.sum(1)
    return [middle.sum(0, keepdims=True), middle, bottom], units


def nnls_round(y: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """TopDown's step on the last axis of ``y`` (blocks x children): non-negative least squares
    onto each block's ``totals`` (``clip(y - tau, 0)``), then rounding that keeps each sum (the
    largest fractional parts up); vectorised over the blocks."""
    y, t = y.astype(float), totals.astype(float)[..., None]
    lo, hi = y.min(-1, keepdims=True) - t - 1, y.max(-1, keepdims=True) + 1
    for _ in range(60):
        mid = (lo + hi) / 2
        over = np.clip(y - mid, 0, None).sum(-1, keepdims=True) > t
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    x = np.clip(y - (lo + hi) / 2, 0, None)
    s = x.sum(-1, keepdims=True)
    x = np.where(s > 0, x * t / np.where(s > 0, s, 1), 0.0)
    z = np.floor(x).astype(np.int64)
    short = (totals - z.sum(-1)).astype(np.int64)
    rank = np.argsort(np.argsort(-(x - z), axis=-1, kind="stable"), axis=-1)
    return z + (rank < short[..., None])


def run_levels(name: str, epsilon: float, alpha: float, reps: int, seed: int) -> list[dict]:
    """Three levels, each a statistic at ``epsilon / 3`` (each cell pure ``epsilon / 6``): the
    consistent release (``within`` ties, as :func:`optnoise.query.consistent.add_up` releases them:
    the simultaneous intervals narrowed bottom up, :func:`~optnoise.query.consistent.narrow`, the
    top projected into them, each level onto the one above, :func:`~optnoise.query.consistent.add_up_within`) and
    the TopDown way (geometric noise, :func:`nnls_round` top down), side by side; and each level's
    independent cells."""
    from optnoise.neighbourhood import Neighbourhood
    from optnoise.query.consistent import add_up_within, fitted, narrow
    from optnoise.query.intervals import interval
    from optnoise.query.mechanisms import count_cell, family_designs
    from optnoise.randomness import SeededRandomSource
    from optnoise.target import Target

    grids, units = level_truth(name)
    parents, children, keys = grids[2].shape
    truth = [np.append(g.ravel(), units - int(g.sum())) for g in grids]    # bottom flattened parent-major
    target = Target(epsilon / 6)
    source = SeededRandomSource(seed)
    cell = count_cell("h", units, 0, 1, target)
    y, boxes, marg = [], [], []
    for t in truth:
        draw = cell.release(np.tile(t, reps), source)
        y.append(draw.reshape(reps, t.size))
        boxes.append([np.asarray(v).reshape(reps, t.size)
                      for v in interval(cell, draw, Fraction(str(alpha)) / t.size)[:2]])
        marg.append([np.asarray(v).reshape(reps, t.size) for v in interval(cell, draw, alpha)[:2]])
    home = np.repeat(np.arange(parents), children)
    released = [np.zeros((reps, t.size - 1), np.int64) for t in truth]
    inside = np.zeros(reps, bool)
    for r in range(reps):                 # as add_up releases within ties: narrowed bottom up, then top down
        box = [(b[0][r], b[1][r]) for b in boxes]
        box[1] = narrow(*box[1], *box[2], home) or box[1]
        box[0] = narrow(*box[0], *box[1], np.zeros(parents, np.int64)) or box[0]
        top, ok0 = fitted(y[0][r], *box[0], units, source)
        mid, ok1 = add_up_within(*(a[:-1].reshape(parents, keys) for a in (y[1][r], *box[1])),
                                 top[:-1].reshape(1, keys), np.zeros(parents, np.int64), source)
        low, ok2 = add_up_within(*(a[:-1].reshape(parents * children, keys) for a in (y[2][r], *box[2])),
                                 mid, home, source)
        released[0][r], released[1][r], released[2][r] = top[:-1], mid.ravel(), low.ravel()
        inside[r] = all(((b[0][r] <= v) & (v <= b[1][r])).all()
                        for b, v in zip(boxes, (top, np.append(mid, top[-1]), np.append(low, top[-1]))))
    noise = family_designs(target, Neighbourhood.bd(1), ("geometric",), None)[0][3]
    g = [np.asarray(noise.apply(np.tile(t, reps), source=source), np.int64).reshape(reps, t.size) for t in truth]
    td_top = nnls_round(g[0], np.full(reps, units))[:, :-1]
    td_mid = nnls_round(g[1][:, :-1].reshape(reps, parents, keys).transpose(0, 2, 1), td_top).transpose(0, 2, 1)
    td_low = nnls_round(g[2][:, :-1].reshape(reps, parents, children, keys).transpose(0, 1, 3, 2), td_mid)
    td = [td_top, td_mid.reshape(reps, -1), td_low.transpose(0, 1, 3, 2).reshape(reps, -1)]
    rows = []
    covered = np.ones(reps, bool)
    for level, t in enumerate(truth):
        q = t[:-1]
        small = q <= np.median(q)
        err, err_td, err_ind = (np.abs(v - q) for v in (released[level], td[level], y[level][:, :-1]))
        in_box = ((boxes[level][0] <= t) & (t <= boxes[level][1])).all(1)
        covered &= in_box
        lo, hi = (m[:, :-1] for m in marg[level])
        rows.append({"level": ("top", "middle", "bottom")[level], "cells": q.size, "mae": err.mean(),
                     "mae_small": err[:, small].mean(), "td": err_td.mean(), "td_small": err_td[:, small].mean(),
                     "independent": err_ind.mean(), "marginal": float(((lo <= q) & (q <= hi)).mean()),
                     "box": float(in_box.mean())})
    rows[-1]["all_levels"] = float(covered.mean())
    rows[-1]["inside_all"] = float(inside.mean())
    rows[-1]["outside_on_e"] = int((covered & ~inside).sum())
    return rows


def levels_table(rows: list[dict]) -> str:
    out = ["| level | cells | independent mae | consistent mae (small) | TopDown way mae (small) | consistent / "
           "TopDown | marginal coverage | simultaneous coverage |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['level']} | {r['cells']} | {r['independent']:.2f} | {r['mae']:.2f} ({r['mae_small']:.2f}) "
                   f"| {r['td']:.2f} ({r['td_small']:.2f}) | {r['mae'] / r['td']:.2f} | {r['marginal']:.3f} | "
                   f"{r['box']:.3f} |")
    last = rows[-1]
    return "\n".join(out) + (f"\n\nall three levels' simultaneous intervals at once: {last['all_levels']:.3f}; "
                             f"every released value inside its simultaneous interval: {last['inside_all']:.3f} "
                             f"({last['outside_on_e']} releases with every truth inside and some value outside)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=1000)
    ap.add_argument("--cells", default="10,50,200")
    ap.add_argument("--epsilons", default="1,0.2")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--levels", default=None, help="demo,sparse: three-level hierarchies instead (the demo's "
                                                   "households by feeder and circuit; a sparse one)")
    a = ap.parse_args()
    import warnings
    warnings.filterwarnings("ignore", message=".*not private.*")
    for eps in (float(e) for e in a.epsilons.split(",")):
        for name in (a.levels.split(",") if a.levels else []):
            start = time.perf_counter()
            rows = run_levels(name, eps, a.alpha, a.reps, a.seed)
            print(f"\n{name}: three levels, epsilon = {eps:g} in all (each level {eps / 3:g}, each cell "
                  f"{eps / 6:g}), alpha = {a.alpha}, {a.reps} repetitions, seed {a.seed}; "
                  f"{time.perf_counter() - start:.1f} s, load average {os.getloadavg()[0]:.2f}\n")
            print(levels_table(rows))
        for cells in (() if a.levels else (int(c) for c in a.cells.split(","))):
            start = time.perf_counter()
            rows = run(a.units, cells, eps, a.alpha, a.reps, a.seed)
            print(f"\nN = {a.units}, m = {cells} cells (outside included), epsilon = {eps:g} (each cell "
                  f"{eps / 2:g}), alpha = {a.alpha}, {a.reps} repetitions, seed {a.seed}; "
                  f"{time.perf_counter() - start:.1f} s, load average {os.getloadavg()[0]:.2f}\n")
            print(table(rows))


if __name__ == "__main__":
    main()
