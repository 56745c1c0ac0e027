"""The width of a mean's and a variance's interval (issue 35): optnoise's construction against
the naive one, side by side on the same table and the same draws.

* **optnoise**: the parts centred at the middle of the unit's range, the budget split by
  ``moment_shares`` (``sqrt`` of the parts' error weights), ``alpha`` split by ``alpha_split``
  (proportional to the weights, scaled up by the product rule), the box's exact range
  (docs/proofs/mean-interval.md);
* **naive**: the plain (uncentred) sum and sum of squares, the budget split evenly among the
  parts, each part's interval at ``alpha / k`` (the union bound), the same exact range over
  the box -- the union of the parts' intervals, as a user combining released intervals does.

Both are valid (coverage >= 1 - alpha for every table, by the same argument); the table shows
the median width and the empirical coverage over the draws. Add-remove, ``max_rows = 1``,
clamp ``[0, 10]``, ``max_units = 2 N``, alpha 0.05. Usage: ``python bench/moments_intervals.py
[--draws 300] [--n 1000 10000]``.
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import numpy as np

import warnings

from optnoise.query.intervals import alpha_split, interval, ratio_interval, variance_interval
from optnoise.query.kinds.mean import moment_shares, split_target
from optnoise.query.mechanisms import count_cell
from optnoise.randomness import SeededRandomSource
from optnoise.target import Target


def parts(kind: str, centred: bool, n_max: int, low: int, high: int) -> list[tuple[str, int, int, int, float]]:
    """``(name, offset, n, distance, weight)`` per part (add-remove)."""
    c = (low + high) // 2 if centred else 0
    h = max(c - low, high - c)
    d_s = max(c - low, high - c)
    out = [("sum", n_max * (low - c), n_max * (high - low), d_s, (1.0 if kind == "mean" else 2.0 * h) * d_s)]
    if kind == "variance":
        sq = max((low - c) ** 2, (high - c) ** 2)
        out.append(("squares", 0, n_max * sq, sq, float(sq)))
    out.append(("count", 0, n_max, 1, float(h if kind == "mean" else h * h)))
    return out


def run(kind: str, values: np.ndarray, n_max: int, eps: float, alpha: float, draws: int, optimised: bool) -> dict:
    low, high = 0, 10
    c = (low + high) // 2 if optimised else 0
    spec = parts(kind, optimised, n_max, low, high)
    shares = moment_shares([w for *_, w in spec]) if optimised else [1 / len(spec)] * len(spec)
    alphas = alpha_split(alpha, shares) if optimised else [alpha / len(spec)] * len(spec)
    targets = split_target(Target(eps), shares)
    v = values.astype(np.int64) - c
    truths = {"sum": int(v.sum()), "squares": int((v * v).sum()), "count": len(v)}
    src = SeededRandomSource(1)
    boxes = []
    for (name, offset, n, dist, _), t, a in zip(spec, targets, alphas):
        cell = count_cell(name, n, offset, dist, t)
        released = cell.release(np.full(draws, truths[name] - offset, np.int64), src)
        lo, hi, _ = interval(cell, released, a)
        boxes.append((np.asarray(lo) + offset, np.asarray(hi) + offset))
    n = len(values)
    total, squares = int(values.sum()), int((values.astype(np.int64) ** 2).sum())
    truth = Fraction(total, n) if kind == "mean" else Fraction(squares, n) - Fraction(total, n) ** 2
    widths, hits = [], 0
    for i in range(draws):
        box = [(int(lo[i]), int(hi[i])) for lo, hi in boxes]
        if kind == "mean":
            lo, hi = ratio_interval(box[0], box[1], (low - c, high - c))
            lo, hi = lo + c, hi + c
        else:
            lo, hi = variance_interval(box[1], box[0], box[2], Fraction((high - low) ** 2, 4))
        widths.append(float(hi - lo))
        hits += lo <= truth <= hi
    return {"median_width": float(np.median(widths)), "coverage": hits / draws}


def main() -> None:
    warnings.filterwarnings("ignore", message=".*not private.*")
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    rng = np.random.default_rng(5)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| kind | N | eps | naive width | optnoise width | ratio | coverage naive / optnoise | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.n:
        values = rng.binomial(10, 0.3, n)   # integer values in the clamp [0, 10]
        for kind in ("mean", "variance"):
            for eps in (0.5, 1.0, 2.0):
                t = time.time()
                naive = run(kind, values, 2 * n, eps, 0.05, args.draws, False)
                ours = run(kind, values, 2 * n, eps, 0.05, args.draws, True)
                print(f"| {kind} | {n:,} | {eps:g} | {naive['median_width']:.4g} | {ours['median_width']:.4g} | "
                      f"{ours['median_width'] / naive['median_width']:.3f} | {naive['coverage']:.3f} / "
                      f"{ours['coverage']:.3f} | {time.time() - t:.1f} |", flush=True)


if __name__ == "__main__":
    main()
