"""Benchmark: the channel LP/MILP of ``optnoise.design.channel`` (issue 15, "Scale").

Run: .venv/bin/python bench/channel.py [--quick] [--runs R] [--time-limit S] [--only CASE ...]
     .venv/bin/python bench/channel.py --example [--figure PATH]   (docs/ordered-domains.md's tables)

Each case runs in its own subprocess (so the peak resident memory printed is that case's),
``--runs`` times (median seconds of a full ``design_channel`` call: model building, solving,
cleaning, the privacy check and any repair); the cases of one size run one after the other
in one invocation, so that a case and its baseline (the same model without the lossless
reductions, ``-noreduce``; the noise LP of ``design_finite`` at the same n, ``noise-``) see the
same machine load. Columns: variables and rows *after* the reductions the design uses
(``lp-mirror``: mirror symmetry; ``lp-complete-graph``: per-column minimum substitution;
``lp-circulant``: first row only), the cost, median seconds, peak RSS of the process and its
RSS after the imports (``base MB``: the interpreter with numpy/scipy). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

# name -> (n, pairs, delta, notion, cost, worst, exploit, constraints)
CASES: dict[str, tuple] = {
    "noise-sd1-pure-n100": (100, "noise", 0.0, "dp", "abs-error", False, True, ()),
    "sd1-pure-n100": (100, "sd1", 0.0, "dp", "abs-error", False, True, ()),
    "sd1-pure-n100-noreduce": (100, "sd1", 0.0, "dp", "abs-error", False, False, ()),
    "sd1-pure-n100-sq": (100, "sd1", 0.0, "dp", "sq-error", False, True, ()),
    "sd1-pure-n100-worst": (100, "sd1", 0.0, "dp", "sq-error", True, True, ()),
    "sd1-pure-n100-circulant-worst": (100, "sd1", 0.0, "dp", "sq-error", True, True, ("circulant",)),
    "sd1-pure-n100-circulant-worst-noreduce": (100, "sd1", 0.0, "dp", "sq-error", True, False, ("circulant",)),
    "sd1-pure-n100-monotone": (100, "sd1", 0.0, "dp", "abs-error", False, True, ("row-monotone", "column-monotone")),
    "sd1-pure-n200": (200, "sd1", 0.0, "dp", "abs-error", False, True, ()),
    "sd1-pure-n400": (400, "sd1", 0.0, "dp", "abs-error", False, True, ()),
    "all-pure-n100": (100, "all", 0.0, "dp", "abs-error", False, True, ()),
    "all-pure-n100-worst": (100, "all", 0.0, "dp", "sq-error", True, True, ()),
    "all-pure-n100-noreduce": (100, "all", 0.0, "dp", "abs-error", False, False, ()),
    "all-pure-n200": (200, "all", 0.0, "dp", "abs-error", False, True, ()),
    "all-pure-n400": (400, "all", 0.0, "dp", "abs-error", False, True, ()),
    "sd1-delta-n100": (100, "sd1", 1e-3, "dp", "abs-error", False, True, ()),
    "sd1-delta-n100-worst": (100, "sd1", 1e-3, "dp", "sq-error", True, True, ()),
    "all-delta-n20": (20, "all", 1e-3, "dp", "abs-error", False, True, ()),
    "all-delta-n40": (40, "all", 1e-3, "dp", "abs-error", False, True, ()),
    "all-delta-n60": (60, "all", 1e-3, "dp", "abs-error", False, True, ()),
    "sd1-pdp-n6": (6, "sd1", 0.05, "pdp", "abs-error", False, True, ()),
    "sd1-pdp-n10": (10, "sd1", 0.05, "pdp", "abs-error", False, True, ()),
    "sd1-pdp-n12": (12, "sd1", 0.05, "pdp", "abs-error", False, True, ()),
    "all-pdp-n8": (8, "all", 0.05, "pdp", "abs-error", False, True, ()),
    "all-pdp-n12": (12, "all", 0.05, "pdp", "abs-error", False, True, ()),
}
QUICK = ["noise-sd1-pure-n100", "sd1-pure-n100", "sd1-pure-n100-noreduce", "sd1-pure-n100-sq", "all-pure-n100",
         "sd1-delta-n100", "sd1-pure-n100-circulant-worst", "all-delta-n20", "sd1-pdp-n6"]
#: run once only (minutes each)
ONCE = {"all-pure-n100-noreduce", "all-pure-n400", "sd1-pdp-n12", "all-pdp-n12", "all-delta-n60",
        "sd1-pure-n100-circulant-worst-noreduce"}


def run_case(name: str, runs: int, time_limit: float) -> dict:
    from optnoise import Neighbourhood
    from optnoise.design import design_finite
    from optnoise.design.channel import all_pairs, design_channel, pairs_from_distances

    n, kind, delta, notion, cost, worst, exploit, cons = CASES[name]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times = []
    out: dict = {"case": name}
    for _ in range(1 if name in ONCE else runs):
        t0 = time.perf_counter()
        try:
            if kind == "noise":
                d = design_finite(n, epsilon=1.0, delta=delta, notion=notion, neighbourhood=Neighbourhood.sd(1),
                                  cost=cost, time_limit=time_limit)
                stats = {"method": "noise " + d.method, "variables": n + 1, "rows": 2 * (n + 1)}
            else:
                pairs = pairs_from_distances(n, [1]) if kind == "sd1" else all_pairs(n)
                d = design_channel(n, epsilon=1.0, delta=delta, notion=notion, pairs=pairs, cost=cost,
                                   worst_case=worst, constraints=cons, exploit_structure=exploit,
                                   time_limit=time_limit)
                stats = {"method": d.method, "variables": d.n_variables, "rows": d.n_constraints}
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
            out.update(status=f"{type(exc).__name__}: {str(exc)[:90]}", seconds=time.perf_counter() - t0)
            break
        times.append(time.perf_counter() - t0)
        out.update(status="optimal", cost=d.expected_cost, **stats)
    if times:
        out["seconds"] = statistics.median(times)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["import_mb"] = base
    return out


def example(n: int = 100, epsilon: float = 1.0, figure: str | None = None) -> None:
    """Ages 0..n at epsilon: the error of each mechanism under three objectives, per record
    (all pairs) and for one-year neighbours (SD 1, symmetric). Modulo noises are scored by
    their released value's error *after* wrap-around; ``figure`` draws the optimal channel
    (one-year neighbours, uniform |y - q|) beside the best modulo noise for the same cost."""
    from optnoise import Neighbourhood, Target
    from optnoise.costs import ReleasedCost
    from optnoise.design import design_finite
    from optnoise.design.channel import (
        all_pairs, calibrated_baselines, design_channel, optimal_modulo_noise, pairs_from_distances,
    )

    objectives = [ReleasedCost("abs-error"), ReleasedCost("sq-error"), ReleasedCost("sq-error", worst_case=True)]
    heads = ["uniform |y-q|", "uniform (y-q)^2", "worst q (y-q)^2"]
    target = Target(epsilon)
    panels: list = []
    for unit in ("per record (all pairs)", "one-year neighbours (SD 1)"):
        per_record = unit.startswith("per record")
        pairs = all_pairs(n) if per_record else pairs_from_distances(n, [1])
        nb = Neighbourhood(tuple(range(1, n + 1))) if per_record else Neighbourhood.sd(1)
        rows: dict[str, list[str]] = {}
        params: dict[str, str] = {}
        seconds: dict[str, float] = {}
        for objective in objectives:
            t0 = time.perf_counter()
            d = design_channel(n, target=target, pairs=pairs, cost=objective)
            seconds["optimal channel"] = seconds.get("optimal channel", 0.0) + time.perf_counter() - t0
            rows.setdefault("optimal channel", []).append(f"{d.expected_cost:.4f}")
            for label, name in (("noise mod n+1 designed for the circular cost", "circular"),
                                ("noise mod n+1 designed for the paper's noise cost", "noise")):
                cost = {("abs-error", "circular"): "circular-abs", ("sq-error", "circular"): "circular-mse",
                        ("abs-error", "noise"): "abs",
                        ("sq-error", "noise"): "noise-second-moment"}[(objective.name, name)]
                fd = design_finite(n, target=target, neighbourhood=nb, cost=cost)
                rows.setdefault(label, []).append(f"{objective.of_channel(fd.pmf):.4f}")
            fd = optimal_modulo_noise(n, target=target, neighbourhood=nb, cost=objective)
            rows.setdefault("best noise mod n+1 for this cost", []).append(f"{fd.expected_cost:.4f}")
            for b in calibrated_baselines(n, target=target, pairs=pairs, cost=objective,
                                          names=("clamped-geometric", "clamped-discrete-gaussian",
                                                 "randomized-response", "exponential")):
                rows.setdefault(b.name, []).append(f"{b.cost:.4f}")
                params[b.name] = f"{b.parameter_name} = {b.parameter:.6g}"
            if objective.name == "abs-error" and not objective.worst_case:
                panels.append((unit, d.matrix, fd.pmf.probs))
        print(f"\n## ages 0..{n}, epsilon {epsilon:g}, {unit}\n")
        print("| mechanism | " + " | ".join(heads) + " |")
        print("|---" * (len(heads) + 1) + "|")
        for label, vals in rows.items():
            extra = f" ({params[label]})" if label in params else ""
            print(f"| {label}{extra} | " + " | ".join(vals) + " |")
        print(f"\n(the three optimal channels took {seconds['optimal channel']:.2f} s together)")
    if figure:
        from optnoise.plots import plot_channel_and_noise
        plot_channel_and_noise(panels, figure, title=f"ages 0..{n}, pure eps = {epsilon:g}: the channel and the "
                                                     "noise mod n+1 that minimise E|y - q| (uniform q)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="*", help="run these cases only")
    ap.add_argument("--example", action="store_true", help="print the worked example's tables")
    ap.add_argument("--figure", help="with --example: write the channel/noise figure here (PNG)")
    args = ap.parse_args()
    if args.example:
        example(figure=args.figure)
        return
    if args.case:
        print(json.dumps(run_case(args.case, args.runs, args.time_limit)))
        return
    names = args.only or (QUICK if args.quick else list(CASES))
    print(f"{'case':<40} {'method':<20} {'vars':>8} {'rows':>9} {'cost':>12} {'seconds':>9} {'peak MB':>8} "
          f"{'base MB':>8}  status")
    for name in names:
        proc = subprocess.run([sys.executable, __file__, "--case", name, "--runs", str(args.runs),
                               "--time-limit", str(args.time_limit)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"{name:<40} crashed: {proc.stderr.strip().splitlines()[-1] if proc.stderr else proc.returncode}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        cost = f"{r['cost']:.8g}" if "cost" in r else "-"
        print(f"{name:<40} {r.get('method', '-'):<20} {r.get('variables', 0):>8} {r.get('rows', 0):>9} {cost:>12} "
              f"{r.get('seconds', float('nan')):>9.3f} {r['peak_mb']:>8.0f} {r['import_mb']:>8.0f}  {r['status']}",
              flush=True)


if __name__ == "__main__":
    main()
