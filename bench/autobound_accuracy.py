"""Bounds chosen privately (issue 36 item 5): the chosen ``max_rows`` before and after the
noise floor, on the same noisy histograms.

Run: .venv/bin/python bench/autobound_accuracy.py [--seeds 20] [--epsilon 0.1]

For 800, 8,000 and 200,000 units, rows per unit either uniform on 1..5 (the 0.99 point: 5,
grid point 8) or ``ceil(lognormal(1, 1))`` (a long tail: the 0.99 point near 28, grid point
32), under add-remove (``max_units`` = 2 x the units) and replace: the histogram of
:mod:`optnoise.query.autobound` at ``bound_epsilon`` on the grid 1..1024 is released with
each seed, and both rules read the same released counts:

* before: the smallest grid point whose noisy cumulative count reaches 0.99 of the noisy
  total (add-remove) or of the public number of units (replace);
* after: :func:`~optnoise.query.autobound.choose_bound` with the noise floor.

Prints one Markdown row per case: the right grid point (the smallest covering 0.99 of the
units), each rule's chosen bounds as ``value x runs`` and the least share of units covered.
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections import Counter
from fractions import Fraction

import numpy as np

from optnoise.query.auto_spec import AutoRows
from optnoise.query.autobound import choose_bound, grid_histogram, histogram_cell, noise_floor
from optnoise.randomness import random_source

COVERAGE = 0.99


def before(noisy: np.ndarray, grid: tuple[int, ...], total: int | None) -> int:
    """The rule before the floor: the noisy cumulative count against 0.99 of the total."""
    cum = np.cumsum(noisy)
    need = Fraction(COVERAGE) * int(cum[-1] if total is None else total)
    return next((int(g) for g, c in zip(grid[:-1], cum[:-1]) if c >= need), int(grid[-1]))


def rows_of(kind: str, units: int, rng: np.random.Generator) -> np.ndarray:
    """Rows per unit: uniform on 1..5, or the ceiling of a lognormal(1, 1)."""
    if kind == "1..5":
        return rng.integers(1, 6, units).astype(float)
    return np.ceil(rng.lognormal(1.0, 1.0, units))


def shown(chosen: list[int], rows: np.ndarray) -> str:
    """``value x runs`` by value, and the least share of units the chosen bounds cover."""
    spread = ", ".join(f"{v} x{n}" for v, n in sorted(Counter(chosen).items()))
    return f"{spread} | {min(float(np.mean(rows <= c)) for c in chosen):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=0.1)
    args = ap.parse_args()
    warnings.simplefilter("ignore")   # seeded draws warn that they are not private
    request = AutoRows(args.epsilon, COVERAGE)
    rng = np.random.default_rng(0)
    print("| change | units | rows | right | before: chosen | covered | after: chosen | covered |")
    print("|---|---|---|---|---|---|---|---|")
    for change in ("add-remove", "replace"):
        for units in (800, 8_000, 200_000):
            for kind in ("1..5", "lognormal"):
                rows = rows_of(kind, units, rng)
                counts = grid_histogram(rows, request.grid)
                right = next(g for g in request.grid if np.mean(rows <= g) >= COVERAGE)
                cell, _ = histogram_cell(request, change, units if change == "replace" else 2 * units)
                floor = noise_floor(cell, len(request.grid))
                total = units if change == "replace" else None
                old, new = [], []
                for seed in range(args.seeds):
                    noisy = cell.release(counts, random_source(seed)) + cell.offset
                    old.append(before(noisy, request.grid, total))
                    new.append(choose_bound(noisy, request.grid, COVERAGE, total, floor)[0])
                print(f"| {change} | {units:,} | {kind} | {right} | {shown(old, rows)} | {shown(new, rows)} |",
                      flush=True)
    print(f"bound_epsilon {args.epsilon}, {args.seeds} seeds; load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
