"""The work of each sampler per value drawn: random words and rounds (issue 25, item 5).

Run: .venv/bin/python bench/sampler_work.py [--draws N] [--seed S] [--speed]

Each sampler draws ``N`` single values from an instrumented source
(:class:`optnoise.sampling.work.CountingSource`); the table gives, for the values grouped by
magnitude, how many draws fell there and the fewest / mean / most 64-bit words and the most
rounds (calls to the source) a draw took. A sampler whose words do not change across the
groups does the same work for every value. ``--speed`` adds the throughput of the default
integer-line draw (fixed work) against the loop sampler it replaces, side by side, in
draws per second (wall clock; the load average is printed). docs/sampling-and-time.md holds a
run of this script.
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import numpy as np

import optnoise
from optnoise import Channel, CyclicPMF
from optnoise.randomness import SeededRandomSource
from optnoise.sampling import integer_line as z
from optnoise.sampling.fixed_work import draw_window_tails_fixed, fixed_tails
from optnoise.sampling.inversion import draw_inversion, laplace_table
from optnoise.sampling.work import work_by_value

GROUPS = ((0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 10**9))


def samplers():
    rng = np.random.default_rng(1)
    cyc24 = optnoise.additive(CyclicPMF(rng.dirichlet(np.ones(24)))).quantize()
    cyc5 = optnoise.additive(CyclicPMF(rng.dirichlet(np.ones(5)))).quantize()
    chan = optnoise.channel(Channel(rng.dirichlet(np.ones(6), size=6))).quantize()
    geo = optnoise.geometric(epsilon=0.3).quantize()
    wt = z.window_tails_table(np.array([1, 2, 3, 2, 1]), -2, left=z.Tail(1, 1, 1), right=z.Tail(3, 2, 2))
    ft = fixed_tails(wt)
    lap = laplace_table(Fraction(3))
    inputs = iter(np.random.default_rng(2).integers(0, 6, 10**7))
    return {
        "alias (cyclic, 24 values)": (lambda s: cyc24.draw(1, s)[0], True),
        "inverse CDF (cyclic, 5 values)": (lambda s: cyc5.draw(1, s)[0], True),
        "channel rows (stacked alias, 6x6)": (lambda s: chan.draw_outputs(np.array([next(inputs)]), s)[0], True),
        "window + tails, fixed work (geometric eps 0.3)": (lambda s: geo.draw(1, s)[0], True),
        "window + tails, fixed work (heavy tails)": (lambda s: draw_window_tails_fixed(ft, 1, s)[0], True),
        "window + tails, loop (heavy tails; before)": (lambda s: z.draw_window_tails(wt, 1, s)[0], False),
        "discrete Laplace t=3, inversion table": (lambda s: draw_inversion(lap, 1, s)[0], False),
        "discrete Laplace t=3, CKS rejection": (lambda s: z.discrete_laplace_cks(Fraction(3), 1, s)[0], False),
        "discrete Gaussian s2=4, CKS rejection": (lambda s: z.discrete_gaussian_cks(Fraction(4), 1, s)[0], False),
        "discrete staircase eps=1 D=3, rejection": (lambda s: z.discrete_staircase_rejection(Fraction(1), 3, 1, 1, s)[0],
                                                    False),
    }


def table(draws: int, seed: int) -> None:
    print(f"{'sampler':48s} {'|value|':>8s} {'draws':>7s} {'words min/mean/max':>20s} {'rounds max':>10s}")
    for name, (draw, default) in samplers().items():
        work = work_by_value(draw, draws, SeededRandomSource(seed))
        for lo, hi in GROUPS:
            rows = [v for x, v in work.by_value.items() if lo <= abs(x) <= hi]
            if not rows:
                continue
            n = sum(r[0] for r in rows)
            mean = sum(r[3] * r[0] for r in rows) / n
            shown = f"{lo}-{hi}" if hi < 10**9 else f">={lo}"
            print(f"{name:48s} {shown:>8s} {n:7d} {min(r[1] for r in rows):>6d} / {mean:5.2f} / "
                  f"{max(r[2] for r in rows):<5d} {max(r[4] for r in rows):10d}")
        print(f"{'':48s} {'all':>8s} {draws:7d} fixed: {work.fixed}  {'(release path)' if default else ''}")


def speed(draws: int) -> None:
    geo = optnoise.geometric(epsilon=0.3).quantize()
    wt = z.window_tails_table(geo.weights, geo.lo, left=z.Tail(*geo.left), right=z.Tail(*geo.right))
    ft = fixed_tails(wt)
    for name, fn in (("loop sampler (before)", lambda: z.draw_window_tails(wt, draws, SeededRandomSource(1))),
                     ("fixed work (default)", lambda: draw_window_tails_fixed(ft, draws, SeededRandomSource(1)))):
        fn()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        print(f"{name:28s} {draws / min(times) / 1e6:8.2f} M draws/s (best of 5, {draws} draws)")
    print(f"load average: {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--speed", action="store_true")
    args = ap.parse_args()
    table(args.draws, args.seed)
    if args.speed:
        speed(1_000_000)


if __name__ == "__main__":
    main()
