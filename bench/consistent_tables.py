"""Histograms that add up (issue 36, item 4): per-cell error and intervals, one table.

Run: .venv/bin/python bench/consistent_tables.py [--units 1000] [--cells 10,50,200] [--epsilons 1,0.2]
                                                 [--alpha 0.05] [--reps 200] [--seed 36]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=1000)
    ap.add_argument("--cells", default="10,50,200")
    ap.add_argument("--epsilons", default="1,0.2")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=36)
    a = ap.parse_args()
    import warnings
    warnings.filterwarnings("ignore", message=".*not private.*")
    for eps in (float(e) for e in a.epsilons.split(",")):
        for cells in (int(c) for c in a.cells.split(",")):
            start = time.perf_counter()
            rows = run(a.units, cells, eps, a.alpha, a.reps, a.seed)
            print(f"\nN = {a.units}, m = {cells} cells (outside included), epsilon = {eps:g} (each cell "
                  f"{eps / 2:g}), alpha = {a.alpha}, {a.reps} repetitions, seed {a.seed}; "
                  f"{time.perf_counter() - start:.1f} s, load average {os.getloadavg()[0]:.2f}\n")
            print(table(rows))


if __name__ == "__main__":
    main()
