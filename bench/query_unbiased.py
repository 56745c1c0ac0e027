"""The price of ``unbiased = true`` for a count (issue 22, item 4): one table.

Run: .venv/bin/python bench/query_unbiased.py [--sizes 100,1400,10000] [--epsilons 0.5,1,2]

A count of units (neighbours one apart, pure ``eps``): the unbiased cell
(:func:`optnoise.query.mechanisms.unbiased_cell`: the two-sided geometric on the integers,
exactly symmetric) against the default bounded mechanism at the same target (the optimal
channel on ``{0..N}`` up to ``CHANNEL_MAX_N``, beyond that the clamped geometric), as the
query document reports it (:func:`optnoise.query.intervals.unbiased_price`): ``E|y - q|`` of
the unbiased release (the same for every ``q``), the bounded one's worst case over ``q`` and
its average over a uniform ``q``, the ratios, and both 95 % interval widths in the middle of
the domain. Asserts nothing; the figures are in docs/statistics.md ("Unbiased counts and sums").
"""

from __future__ import annotations

import argparse

import numpy as np

from optnoise.query.intervals import interval, unbiased_price
from optnoise.query.mechanisms import unbiased_cell
from optnoise.target import Target


def row(n: int, eps: float) -> str:
    cell = unbiased_cell("c", n, 0, 1, Target(eps))
    p = unbiased_price(cell)
    mid = np.array([n // 2])
    lo, hi, _ = interval(cell, mid, 0.05)
    blo, bhi, _ = interval(cell.bounded, mid, 0.05)  # type: ignore[arg-type]
    return (f"| {n:,} | {eps:g} | {p['expected_abs_error']:.4f} | {p['bounded_expected_abs_error']:.4f} | "
            f"{p['ratio']:.4f} | {p['bounded_average_abs_error']:.4f} | {p['average_ratio']:.4f} | "
            f"{int(hi[0] - lo[0])} / {int(bhi[0] - blo[0])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1400,10000")
    parser.add_argument("--epsilons", default="0.5,1,2")
    args = parser.parse_args()
    print("| N | eps | unbiased E\\|y-q\\| | default worst | ratio | default average | average ratio | "
          "95 % width (middle): unbiased / default |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        for eps in (float(x) for x in args.epsilons.split(",")):
            print(row(n, eps), flush=True)


if __name__ == "__main__":
    main()
