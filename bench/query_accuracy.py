"""Accuracy of a released count (issue 22): error and interval width of each mechanism, one table.

Run: .venv/bin/python bench/query_accuracy.py [--quick] [--sizes 100,1400,10000] [--epsilons 0.5,1,2]
                                              [--delta 1e-6] [--alpha 0.05] [--max-optimal 10000]
     .venv/bin/python bench/query_accuracy.py --keys-from-data [bench/keys_from_data.py's options]

``--keys-from-data`` prints the other table of issue 36 instead: keys found in the data, the
number of keys kept by optnoise against PipelineDP's and OpenDP's thresholds at the same
``(eps, delta)`` and contribution bounds, with the delta each actually guarantees
(:mod:`keys_from_data`, whose options it takes).

A count of households with some property, an answer in ``{0..N}``; the unit is a household,
the change model ``replace`` (the number of households is public), so one household moves the
count by at most 1: neighbours one apart, ``q`` and ``q + 1`` (the neighbourhood optnoise's
query derives for a count of units). Every mechanism releases an integer in ``{0..N}``:

* **optimal channel** -- ``optnoise.design(Request(space="channel", cost="abs-error"))``: the
  channel on ``{0..N}`` minimising ``E|y - q|`` averaged over a uniform ``q`` (LP below a few
  hundred; beyond, ``geometric-remap`` with its dual certificate, :mod:`optnoise.design.chain`;
  above N = 2,000 the geometric noise with a remap, :mod:`optnoise.design.geometric_remap`).
  Its certificate is the exact analysis of the quantized channel that is sampled
  (``Mechanism.quantize``). Each (N, eps) runs in its own process (seconds and peak RSS).
* **optimal channel, worst case** (N <= ``--max-worst``): the same LP minimising the *largest*
  ``E|y - q|`` over ``q`` (``worst_case=True``).
* **clamped geometric** -- ``calibrate("geometric")`` on the integer line at pure ``eps`` (the
  closed form ``alpha = e^-eps``), released as ``clip(q + eta, 0, N)``.
* **clamped discrete Gaussian** -- ``calibrate("discrete-gaussian")`` at ``(eps, delta)``-DP
  (``--delta``, default 1e-6, the issue's budget delta): a *weaker* guarantee than the others'
  pure ``eps``, which only flatters it. Under pure DP a discrete Gaussian clamped to
  ``{0..N}`` needs ``sigma ~ N / 40`` (docs/ordered-domains.md: 260 at N = 10,000), so the
  pure calibration says nothing about the family.

Certificates of the clamped families: the exact analysis of the quantized noise under
neighbours one apart (``QuantizedInteger.certificate``); clamping is post-processing, which
keeps pure and ``(eps, delta)``-DP (not probabilistic DP: no PDP figure is claimed for them).
The exact certificate of the clamped *channel* (:func:`optnoise.sampling.clamp.certify_clamped`)
does not reach these domains: the quantized geometric tail extended over ``-N..N`` needs
integers of more than 2,000 bits at N = 100.

Accuracy, from the quantized weights (:mod:`optnoise.analysis.intervals`): ``E|y - q|``
per true ``q`` -- its **worst** case over ``q`` and its **average** under a uniform ``q`` --
and the ``(1 - alpha)`` interval: Neyman intervals of the channel (``neyman_intervals``, shortest
acceptance windows) and noise-quantile intervals of the additive families
(``additive_intervals``, shortest window). ``width`` is ``high - low`` of the interval, the
largest over released values (``[q - 3, q + 2]`` has width 5 and holds 6 counts); every interval
covers the true count with probability >= 1 - alpha for *every* ``q`` (``coverage``: the exact
minimum for channels, the window's exact mass for additive noise). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def up(x: float, digits: int = 4) -> str:
    """``x`` rounded *up* to ``digits`` significant digits (a privacy figure, outward)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(x))))
    return f"{math.ceil(x * scale) / scale:g}"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def channel_row(n: int, epsilon: float, alpha: float, worst_case: bool) -> dict:
    """The optimal channel for (n, eps): design, quantize + exact certificate, intervals, errors."""
    import numpy as np
    from optnoise import Neighbourhood, Target
    from optnoise.analysis.intervals import channel_abs_error, neyman_intervals
    from optnoise.design import Request, design
    t0 = time.perf_counter()
    d = design(Request(space="channel", n=n, target=Target(epsilon), neighbourhood=Neighbourhood.sd(1),
                       cost="abs-error", worst_case=worst_case))
    t1, design_mb = time.perf_counter(), peak_mb()
    q = d.mechanism.quantize()
    t2, certify_mb = time.perf_counter(), peak_mb()
    if d.mechanism.release is not None:   # n > 2,000: the geometric noise with a remap (no channel matrix)
        worst, average, widths, coverage = remap_accuracy(d, q, n, alpha)
    else:
        ci = neyman_intervals(q.weights, alpha)
        err = channel_abs_error(q.weights)
        worst, average, widths, coverage = err.worst, float(err.per_value.mean()), ci.widths(), float(ci.coverage)
    t3 = time.perf_counter()
    method = getattr(d.report.details, "method", "?")
    return {"mechanism": "optimal channel, worst case" if worst_case else "optimal channel", "how": method,
            "guarantee": f"pure eps {up(q.certificate.epsilon_pure)}", "worst": worst,
            "average": average, "width": int(widths.max()), "median_width": float(np.median(widths)),
            "coverage": coverage, "design_s": t1 - t0, "certify_s": t2 - t1, "intervals_s": t3 - t2,
            "peak_mb": peak_mb(), "peak_design_mb": design_mb, "peak_certify_mb": certify_mb}


def remap_accuracy(d, q, n: int, alpha: float):
    """``(worst, average, widths, coverage)`` of the geometric noise with a remap: the noise-window
    interval of every clamped output, widened over the outputs remapped to the same value (the
    query's rule, docs/proofs/geometric-remap.md), and ``E|y - q|`` of the design's masses (float,
    ``RemapChannelDesign.released_errors``: the quantized noise differs from them by ``2^-24``
    in the tails' ratio)."""
    import numpy as np
    from optnoise.analysis.intervals import additive_intervals
    from optnoise.sampling import integer_line_form
    ai = additive_intervals(integer_line_form(q.weights, q.lo, q.left, q.right), n, alpha)
    low_z, high_z = ai.intervals(np.arange(n + 1))
    table = d.mechanism.release.table()
    low, high = np.full(n + 1, n), np.zeros(n + 1, dtype=np.int64)
    np.minimum.at(low, table, low_z)
    np.maximum.at(high, table, high_z)
    released = np.unique(table)
    err = d.details.released_errors()["abs-error"]
    return err["worst"], err["average"], (high - low)[released], float(ai.coverage)


def family_row(family: str, n: int, epsilon: float, delta: float, alpha: float) -> dict:
    """A family calibrated on the integer line, clamped to ``0..n``."""
    import numpy as np
    from optnoise import Neighbourhood, Target
    from optnoise.analysis.intervals import additive_abs_error, additive_intervals
    from optnoise.design import Request, calibrate
    from optnoise.sampling import integer_line_form
    t0 = time.perf_counter()
    target = Target(epsilon) if family == "geometric" else Target(epsilon, delta)
    c = calibrate(family, Request(space="integer", target=target, neighbourhood=Neighbourhood.sd(1), family=family))
    q = c.mechanism.quantize()
    cert = q.certificate
    form = integer_line_form(q.weights, q.lo, q.left, q.right)
    ai = additive_intervals(form, n, alpha)
    low, high = ai.intervals(np.arange(n + 1))
    err = additive_abs_error(form, n)
    guarantee = (f"pure eps {up(cert.epsilon_pure)}" if family == "geometric"
                 else f"eps {epsilon:g}, delta {up(cert.delta_dp)}")
    return {"mechanism": f"clamped {family.replace('-', ' ')}", "how": f"{c.parameter_name} = {c.parameter:.6g}",
            "guarantee": guarantee,
            "worst": err.worst, "average": float(err.per_value.mean()), "width": int((high - low).max()),
            "median_width": float(np.median(high - low)),
            "coverage": float(ai.coverage), "seconds": time.perf_counter() - t0}


def run_channel(n: int, epsilon: float, alpha: float, worst_case: bool, timeout: float) -> dict:
    """:func:`channel_row` in its own process (its time and peak RSS alone)."""
    cmd = [sys.executable, __file__, "--case", str(n), str(epsilon), "--alpha", str(alpha)]
    cmd += ["--worst-case"] if worst_case else []
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"mechanism": "optimal channel", "skipped": f"over {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"mechanism": "optimal channel", "skipped": (proc.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def markdown(rows: list[dict], alpha: float) -> str:
    head = (f"| N | eps | mechanism | certified | E\\|y - q\\| worst | E\\|y - q\\| uniform | "
            f"{1 - alpha:.0%} width, max / median | coverage | seconds |\n|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['n']:,} | {r['eps']:g} | {r['mechanism']} | - | not run: {r['skipped']} | | | | |")
            continue
        secs = (f"{r['design_s']:.1f} + {r['certify_s']:.1f} + {r['intervals_s']:.1f}, {r['peak_mb']:.0f} MB"
                if "design_s" in r else f"{r['seconds']:.1f}")
        lines.append(f"| {r['n']:,} | {r['eps']:g} | {r['mechanism']} ({r['how']}) | {r['guarantee']} | "
                     f"{r['worst']:.4f} | {r['average']:.4f} | {r['width']} / {r['median_width']:g} | "
                     f"{r['coverage']:.4f} | {secs} |")
    return "\n".join(lines)


def main() -> None:
    if "--keys-from-data" in sys.argv[1:]:   # the keys-kept table (module docstring), its own options
        from keys_from_data import main as keys_main
        sys.argv.remove("--keys-from-data")
        keys_main()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N <= 1,400 only")
    ap.add_argument("--sizes", default="100,1400,10000")
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--delta", type=float, default=1e-6, help="the discrete Gaussian's delta")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--max-optimal", type=int, default=10_000, help="largest N for the optimal channel")
    ap.add_argument("--max-worst", type=int, default=100, help="largest N for the worst-case optimal channel (LP)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per optimal channel")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON")
    ap.add_argument("--case", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--worst-case", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(channel_row(int(args.case[0]), float(args.case[1]), args.alpha, args.worst_case)))
        return
    sizes = [int(float(s)) for s in args.sizes.split(",") if not args.quick or int(float(s)) <= 1400]
    rows = []
    for n in sizes:
        for eps in (float(e) for e in args.epsilons.split(",")):
            found = []
            if n <= args.max_optimal:
                found.append(run_channel(n, eps, args.alpha, False, args.timeout))
            if n <= args.max_worst:
                found.append(run_channel(n, eps, args.alpha, True, args.timeout))
            found += [family_row(f, n, eps, args.delta, args.alpha) for f in ("geometric", "discrete-gaussian")]
            for r in found:
                r.update(n=n, eps=eps)
                print(json.dumps(r), file=sys.stderr, flush=True)
            rows += found
    print(markdown(rows, args.alpha))
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
