"""Benchmark: the block relaxation's proven bound (issue 23, item 3) against the chain design.

Run: .venv/bin/python bench/block_bound.py [--eps 0.5,1,2] [--small 10000] [--large 1000000] [--block 2048]

For each epsilon (abs-error, uniform prior, pure DP, neighbours one apart), each case in its
own subprocess (its peak RSS is its own), one after the other so they see the same load:

* ``chain``: :func:`optnoise.design.chain.solve_chain` at ``--small`` (the O(n^2) optimum and
  its dual certificate: the reference bound);
* ``block-small``: :func:`optnoise.design.block_bound.block_lower_bound` at ``--small``
  (must be <= the chain's bound);
* ``large``: ``design`` of the channel request at ``--large`` (the clamped geometric, its
  O(n) cost, the windowed chain certificate's bound: ``gap``; the block bound: ``block_gap``).

Nothing is asserted; the figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def run_case(kind: str, n: int, eps: float, block: int) -> dict:
    t0 = time.perf_counter()
    if kind == "chain":
        from optnoise.design.chain import solve_chain
        s = solve_chain(n, eps)
        out = {"cost": s.cost, "bound": s.bound.value, "gap": s.gap}
    elif kind == "block-small":
        from optnoise.design.block_bound import block_lower_bound
        b = block_lower_bound(n, eps, block=block)
        out = {"bound": b.value}
    else:
        from optnoise import Neighbourhood, Target
        from optnoise.design import Request, design
        d = design(Request(space="channel", n=n, target=Target(eps), neighbourhood=Neighbourhood.sd(1),
                           cost="abs-error"))
        out = {"cost": d.report.expected_cost, "bound": d.report.lower_bound, "gap": d.report.gap,
               "method": d.report.method, "block_bound": d.details.block.value, "window": d.details.window,
               "block_gap": (d.report.expected_cost - d.details.block.value) / d.report.expected_cost}
    out.update(kind=kind, n=n, eps=eps, seconds=time.perf_counter() - t0,
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", default="0.5,1,2")
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--large", type=int, default=1_000_000)
    ap.add_argument("--block", type=int, default=2048)
    ap.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.case:
        kind, n, eps, block = a.case
        print(json.dumps(run_case(kind, int(n), float(eps), int(block))))
        return
    with open("/proc/loadavg") as f:
        print("load average:", f.read().split()[:3])
    for eps in (float(e) for e in a.eps.split(",")):
        rows = {}
        for kind, n in (("chain", a.small), ("block-small", a.small), ("large", a.large)):
            got = subprocess.run([sys.executable, __file__, "--case", kind, str(n), str(eps), str(a.block)],
                                 capture_output=True, text=True, check=True)
            rows[kind] = json.loads(got.stdout.strip().splitlines()[-1])
            print(json.dumps(rows[kind]), flush=True)
        c, b = rows["chain"], rows["block-small"]
        print(f"eps={eps}: n={a.small}: block bound {b['bound']:.10g} <= chain bound {c['bound']:.10g}: "
              f"{b['bound'] <= c['bound']}; block gap to the chain optimum {(c['cost'] - b['bound']) / c['cost']:.3g}; "
              f"time {b['seconds']:.2f} s vs {c['seconds']:.2f} s; n={a.large}: gap {rows['large']['gap']:.3g}",
              flush=True)


if __name__ == "__main__":
    main()
