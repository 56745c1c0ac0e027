"""Accuracy of released quantiles (issue 35, item 1): rank error of optnoise's joint exponential
mechanism against OpenDP's and diffprivlib's quantiles, on the same data under the same guarantee.

Run: .venv/bin/python bench/quantile_accuracy.py [--sizes 1000,10000] [--epsilons 0.5,1,2]
                                                 [--repeats 30] [--alpha 0.05] [--deps DIR] [--quick]

Data: ``N`` units (one value each), gamma(2, 3) kWh rounded to 0.1 and clamped to [0, 40]: the
public grid 0, 0.1, ..., 40 (401 points), seed 0. Levels: the median, and the quartiles
(0.25, 0.5, 0.75). The guarantee: pure ``eps``-DP for one unit replaced (``N`` public), the
whole set of levels together. Methods:

* **optnoise** -- the ``quantile`` kind's joint exponential mechanism (Gillenwater, Joseph &
  Kulesza 2021) over the grid, sampled exactly (:mod:`optnoise.query.kinds.quantile`), the
  operating system's CSPRNG; one draw per release, all levels at ``eps``;
* **OpenDP** -- ``make_private_quantile`` over the same grid as candidates, a sized input
  domain under the symmetric distance with ``d_in = 2`` (one unit replaced), its scale found by
  ``binary_search_param`` for ``eps / m`` per level (OpenDP has no joint quantiles: an even split);
* **diffprivlib** -- ``tools.quantile(x, levels, epsilon=eps, bounds=(0, 40))`` (it splits
  ``eps`` evenly over the levels; continuous outputs between data points);
* **float EM** -- a stand-in written here: the exponential mechanism at ``eps / m`` per level on
  the grid with the rank utility ``-dist(q n, [L(c), L+(c)])`` (sensitivity 1), float
  weights drawn by numpy (what a library without an exact sampler does).

OpenDP and diffprivlib are not dependencies of optnoise: ``--deps DIR`` adds a folder where
they were installed (``pip install --target DIR opendp diffprivlib scikit-learn==1.5.2 ...``);
a method whose library is missing is left out and said so. The rank error of a released value
``v`` for level ``q`` is ``dist(q N, [#{x < v}, #{x <= v}])`` (0 when some unit at ``v`` has rank
``q N``: ties included). Reported per (N, eps, levels, method): the mean over releases of the
largest rank error over the levels, its 95th percentile, the mean of the largest distance in kWh
from the true quantile value, and for optnoise its stated bound (the
data-independent rank error at ``1 - alpha``) with the share of releases within it, and the
seconds per release (optnoise: the draw; ``prepare_seconds``: the chain's exact sums, once per
group and epsilon). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
warnings.filterwarnings("ignore")
LEVELS = {"median": [0.5], "quartiles": [0.25, 0.5, 0.75]}
UPPER, STEP = 40, 0.1


def data(n: int) -> np.ndarray:
    """The units' values in tenths (grid indices 0..400), seed 0."""
    x = np.random.default_rng(0).gamma(2, 3, n)
    return np.clip(np.rint(x / STEP), 0, round(UPPER / STEP)).astype(np.int64)


def rank_errors(x: np.ndarray, values_tenths: list[float], levels: list[float]) -> list[float]:
    """Each level's rank error (module docstring); ``x`` sorted."""
    n = len(x)
    out = []
    for v, q in zip(values_tenths, levels):
        lo, hi = np.searchsorted(x, v - 1e-9, "left"), np.searchsorted(x, v + 1e-9, "right")
        out.append(max(q * n - hi, lo - q * n, 0.0))
    return out


def value_errors(x: np.ndarray, values_tenths: list[float], levels: list[float]) -> list[float]:
    """Each level's distance in kWh from the true quantile (the first grid point whose ranks hold
    ``q N``); ``x`` sorted."""
    n, out = len(x), []
    for v, q in zip(values_tenths, levels):
        points = np.arange(x[-1] + 1)
        low, high = np.searchsorted(x, points, "left"), np.searchsorted(x, points, "right")
        true = int(np.flatnonzero((low <= q * n) & (q * n <= high))[0])
        out.append(abs(v - true) * STEP)
    return out


def optnoise_method(x: np.ndarray, levels: list[float], eps: float, alpha: float):
    from optnoise.query.kinds.quantile import Chain, law_of
    from optnoise.query.spec import parse_query_spec
    from optnoise.randomness import SystemRandomSource
    spec = {"unit": {"id": "u"}, "statistics": {"q": {"kind": "quantile", "column": "v", "quantiles": levels,
                                                      "clamp": {"lower": 0, "upper": UPPER}, "resolution": STEP,
                                                      "epsilon": eps}}}
    law = law_of(parse_query_spec(spec).statistics[0], eps, 1)
    hist = np.bincount(x, minlength=law.points)
    source = SystemRandomSource()
    chain = Chain.of(law, hist)    # prepared once per (data, eps): part of each release's cost below
    return (lambda: [float(c) for c in chain.draw(source)]), float(law.rank_error(alpha)), chain


def float_em(x: np.ndarray, levels: list[float], eps: float):
    rng = np.random.default_rng()
    g = round(UPPER / STEP) + 1
    hist = np.bincount(x, minlength=g)
    low, high, n = np.cumsum(hist) - hist, np.cumsum(hist), len(x)
    probs = []
    for q in levels:
        u = -np.maximum(np.maximum(low - q * n, q * n - high), 0)
        w = np.exp(eps / len(levels) * (u - u.max()) / 2)
        probs.append(w / w.sum())
    return lambda: sorted(float(rng.choice(g, p=p)) for p in probs)


def opendp_method(levels: list[float], eps: float, n: int):
    import opendp.prelude as dp
    dp.enable_features("contrib")
    cands = [round(i * STEP, 1) for i in range(round(UPPER / STEP) + 1)]
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)
    meas = []
    for q in levels:
        def make(scale, q=q):
            return dp.m.make_private_quantile(domain, dp.symmetric_distance(), dp.max_divergence(), cands, q, scale)
        scale = dp.binary_search_param(make, d_in=2, d_out=eps / len(levels))
        meas.append(make(scale))
    return lambda xs: sorted(m(xs) / STEP for m in meas)


def diffprivlib_method(levels: list[float], eps: float):
    from diffprivlib.tools import quantile
    return lambda xs: sorted(float(v) / STEP for v in np.atleast_1d(
        quantile(xs, levels, epsilon=eps, bounds=(0, UPPER))))


def run_one(n: int, eps: float, name: str, repeats: int, alpha: float) -> list[dict]:
    x = np.sort(data(n))
    xs = [float(v) * STEP for v in x]
    levels = LEVELS[name]
    rows = []
    methods: dict = {}
    t0 = time.perf_counter()
    draw, bound, _ = optnoise_method(x, levels, eps, alpha)
    prep = time.perf_counter() - t0
    methods["optnoise (joint, exact)"] = (draw, bound)
    methods["float EM stand-in (even split)"] = (float_em(x, levels, eps), None)
    try:
        f = opendp_method(levels, eps, n)
        methods["OpenDP make_private_quantile (even split)"] = ((lambda: f(xs)), None)
    except ImportError:
        print("# OpenDP not installed: left out (--deps DIR)", file=sys.stderr)
    try:
        f2 = diffprivlib_method(levels, eps)
        methods["diffprivlib quantile (even split)"] = ((lambda: f2(np.array(xs))), None)
    except ImportError:
        print("# diffprivlib not installed: left out (--deps DIR)", file=sys.stderr)
    for method, (draw, bound) in methods.items():
        t0 = time.perf_counter()
        drawn = [draw() for _ in range(repeats)]
        secs = (time.perf_counter() - t0) / repeats
        worst = [max(rank_errors(x, d, levels)) for d in drawn]
        kwh = [max(value_errors(x, d, levels)) for d in drawn]
        rows.append({"N": n, "eps": eps, "levels": name, "method": method, "mean_max_rank_error": float(np.mean(worst)),
                     "p95_max_rank_error": float(np.percentile(worst, 95)), "stated_bound": bound,
                     "mean_max_value_error_kwh": float(np.mean(kwh)),
                     "within_bound": None if bound is None else float(np.mean([w <= bound for w in worst])),
                     "seconds_per_release": secs, "prepare_seconds": prep if method.startswith("optnoise") else None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--deps", default=None, help="a folder holding opendp and diffprivlib (appended to sys.path)")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.deps:
        sys.path.append(a.deps)
    sizes = [1000] if a.quick else [int(s) for s in a.sizes.split(",")]
    epsilons = [1.0] if a.quick else [float(e) for e in a.epsilons.split(",")]
    print(f"# load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    out = []
    for n in sizes:
        for eps in epsilons:
            for name in LEVELS:
                for row in run_one(n, eps, name, 5 if a.quick else a.repeats, a.alpha):
                    out.append(row)
                    print(json.dumps(row), flush=True)
    print("| N | eps | levels | method | mean max rank error | p95 | mean max kWh error | stated bound (within) | "
          "s/release |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in out:
        bound = "" if r["stated_bound"] is None else f"{r['stated_bound']:.1f} ({r['within_bound']:.0%})"
        print(f"| {r['N']} | {r['eps']:g} | {r['levels']} | {r['method']} | {r['mean_max_rank_error']:.2f} | "
              f"{r['p95_max_rank_error']:.1f} | {r['mean_max_value_error_kwh']:.3f} | {bound} | {r['seconds_per_release']:.4f} |")
    print(f"# load average {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
