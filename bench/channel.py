"""Benchmark: the channel LP/MILP of ``optnoise.design.channel`` (issue 15, "Scale").

Run: .venv/bin/python bench/channel.py [--quick] [--runs R] [--time-limit S] [--only CASE ...]
     .venv/bin/python bench/channel.py --example [--figure PATH]   (docs/ordered-domains.md's tables)
     .venv/bin/python bench/channel.py --scale [CASE ...] --previous OLD/src [--certify]   (issue 23: this
         revision, the previous one and a plain scipy linprog side by side: seconds, peak RSS, gap to the bound)
     .venv/bin/python bench/channel.py --blocks [N ...] --previous OLD/src --max-n-previous 1000   (issue 37:
         the per-record command at N, both revisions one after the other, then sample --mechanism)
     .venv/bin/python bench/channel.py --sd1 [N ...] --previous OLD/src --max-n-previous 10000   (issue 37:
         the same with neighbours one apart, --sd 1)

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


# ------------------------------------------------------------------ issue 23: scale, against baselines
#: name -> (n, pairs, delta, cost); each run by this revision, the previous one (--previous) and a
#: plain scipy linprog of the same LP (one variable per entry of P), where each fits --max-seconds.
SCALE: dict[str, tuple] = {
    "sd1-pure-n100": (100, "sd1", 0.0, "abs-error"),
    "sd1-pure-n400": (400, "sd1", 0.0, "abs-error"),
    "sd1-pure-n1000": (1000, "sd1", 0.0, "abs-error"),
    "sd1-pure-n10000": (10_000, "sd1", 0.0, "abs-error"),
    "sd1-delta-n100": (100, "sd1", 1e-3, "abs-error"),
    "sd1-delta-n400": (400, "sd1", 1e-3, "abs-error"),
    "sd1-delta-n1000": (1000, "sd1", 1e-3, "abs-error"),
    "record-pure-n40": (40, "record", 0.0, "abs-error"),
    "record-pure-n100": (100, "record", 0.0, "abs-error"),
    "record-pure-n400": (400, "record", 0.0, "abs-error"),
    "record-pure-n1000": (1000, "record", 0.0, "abs-error"),
    "record-delta-n20": (20, "record", 1e-3, "abs-error"),
    "record-delta-n30": (30, "record", 1e-3, "abs-error"),
    "record-delta-n40": (40, "record", 1e-3, "abs-error"),
    # from n = 25 the pure optimum mixed with delta on the answer (design/record_mix.py)
    "record-delta-n100": (100, "record", 1e-3, "abs-error"),
    "record-delta-n400": (400, "record", 1e-3, "abs-error"),
    "record-delta-n1000": (1000, "record", 1e-3, "abs-error"),
    # the PDP MILP (delta 0.05, neighbours one apart): row generation against the full MILP of the
    # previous revision (which refuses n > 12; this one n > 16); no plain linprog (a MILP), PDP_TIME_LIMIT s each
    "sd1-pdp-n10": (10, "sd1", 0.05, "abs-error", "pdp"),
    "sd1-pdp-n12": (12, "sd1", 0.05, "abs-error", "pdp"),
    "sd1-pdp-n16": (16, "sd1", 0.05, "abs-error", "pdp"),
    "sd1-pdp-n20": (20, "sd1", 0.05, "abs-error", "pdp"),
}
#: Seconds allowed to one PDP MILP design in --scale.
PDP_TIME_LIMIT = 300.0

#: The plain linprog per record (every ordered pair x every output a row) stops far earlier.
MAX_N_PLAIN_RECORD = 40


def plain_linprog(n: int, delta: float, cost: str, epsilon: float = 1.0, kind: str = "sd1") -> float:
    """The channel LP written plainly (P[q, y] and, with delta, t[pair, y]; no reduction) and
    solved by scipy.optimize.linprog (HiGHS, default options): the baseline any user could write."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from optnoise.costs import loss_matrix
    size = n + 1
    pairs = [(q, q + 1) for q in range(n)] + [(q + 1, q) for q in range(n)] if kind == "sd1" else \
        [(a, b) for a in range(size) for b in range(size) if a != b]
    K, nP = len(pairs), size * size
    nt = K * size if delta > 0 else 0
    a = np.repeat([p[0] for p in pairs], size)
    b = np.repeat([p[1] for p in pairs], size)
    y = np.tile(np.arange(size), K)
    r = np.arange(K * size)
    rows, cols, vals = [r, r], [a * size + y, b * size + y], [np.ones(K * size), np.full(K * size, -np.exp(epsilon))]
    if delta > 0:
        rows += [r, K * size + np.repeat(np.arange(K), size)]
        cols += [nP + r, nP + r]
        vals += [-np.ones(K * size), np.ones(K * size)]
    n_ub = K * size + (K if delta > 0 else 0)
    A_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_ub, nP + nt))
    b_ub = np.concatenate([np.zeros(K * size), np.full(K if delta > 0 else 0, delta)])
    A_eq = sp.csr_matrix((np.ones(nP), (np.repeat(np.arange(size), size), np.arange(nP))), shape=(size, nP + nt))
    c = np.concatenate([(loss_matrix(cost, n) / size).ravel(), np.zeros(nt)])
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(size), bounds=(0, None), method="highs")
    return float(res.fun)


def scale_case(name: str, who: str, certify: bool) -> dict:
    """One (case, solver) in this process: seconds, peak RSS, cost (and the bound, this revision)."""
    n, kind, delta, cost, *rest = SCALE[name]
    notion = rest[0] if rest else "dp"
    t0 = time.perf_counter()
    out: dict = {"case": name, "who": who}
    if who == "plain":
        out["cost"] = plain_linprog(n, delta, cost, kind=kind)
    else:
        from optnoise.design.channel import design_channel, pairs_from_distances
        d = design_channel(n, epsilon=1.0, delta=delta, pairs=pairs_from_distances(n, [1]) if kind == "sd1" else "all",
                           cost=cost, notion=notion, time_limit=PDP_TIME_LIMIT if notion == "pdp" else None)
        out.update(cost=d.expected_cost, method=d.method, bound=getattr(d, "lower_bound", None))
        if certify:
            t1 = time.perf_counter()
            q = d.mechanism.quantize()
            out.update(certify_seconds=time.perf_counter() - t1, bits=q.bits)
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def scale(names: list[str], previous: str | None, max_n_previous: int, max_n_plain: int, certify: bool) -> None:
    """Side by side in one run: this revision, the previous revision (``previous``: its ``src``
    directory, imported in a subprocess) and the plain linprog; the gap of each cost to this
    revision's proven bound."""
    import os
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    print(f"{'case':<18} {'solver':<10} {'method':<16} {'seconds':>9} {'peak MB':>8} {'cost':>14} {'gap to bound':>13}"
          f" {'certify s':>9}")
    for name in names:
        n, kind = SCALE[name][0], SCALE[name][1]
        bound = None
        for who in ("this", "previous", "plain"):
            plain_limit = -1 if SCALE[name][4:] == ("pdp",) else \
                max_n_plain if kind == "sd1" else min(max_n_plain, MAX_N_PLAIN_RECORD)
            if (who == "previous" and (previous is None or n > max_n_previous)) or (who == "plain" and n > plain_limit):
                continue
            env = dict(os.environ)
            if who == "previous":
                env["PYTHONPATH"] = previous  # type: ignore[assignment]
            cmd = [sys.executable, __file__, "--scale-case", name, "--who", who] + (["--certify"] if certify else [])
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if proc.returncode != 0:
                print(f"{name:<18} {who:<10} failed after {time.perf_counter() - t0:.0f} s: "
                      f"{(proc.stderr.strip().splitlines() or ['?'])[-1][:100]}", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            bound = r.get("bound") if who == "this" else bound
            gap = "-" if bound is None else f"{(r['cost'] - bound) / r['cost']:.2e}"
            cert = f"{r['certify_seconds']:.2f}" if "certify_seconds" in r else "-"
            print(f"{name:<18} {who:<10} {r.get('method', 'linprog'):<16} {r['seconds']:>9.2f} {r['peak_mb']:>8.0f} "
                  f"{r['cost']:>14.10f} {gap:>13} {cert:>9}", flush=True)


def _clamped_pure_epsilon(sigma: float, n: int) -> float:
    """Pure epsilon of the clamped discrete Gaussian on {0..n}, neighbours one apart, in O(n):
    inside, rows q and q+1 compare p(k) with p(k-1) (every k from -n+1 to n-1 occurs); at the
    ends, the clamped tails P(Z <= -q) and P(Z >= n - q). A screen for the bisection only."""
    import math

    import numpy as np

    from optnoise.families.baselines import discrete_gaussian_pmf
    pmf = discrete_gaussian_pmf(sigma)
    k = np.arange(-n - 1, n + 2)
    with np.errstate(divide="ignore", invalid="ignore"):   # beyond the family's window: log 0, a nan step
        logp = np.log(pmf.mass(k))
        inner = np.max(np.abs(np.diff(logp)[1:-1]))
        cdf = np.cumsum(pmf.mass(np.arange(-n - 1, 1)))          # P(Z <= j), j = -n-1..0
        tails = np.max(np.abs(np.diff(np.log(cdf))))
    return float(max(inner, tails)) if np.isfinite(inner) and np.isfinite(tails) else math.inf


def households(n: int = 10_000, epsilon: float = 1.0) -> None:
    """docs/ordered-domains.md, "A count over 10,000 households": the optimal channel and the two
    clamped baselines meeting pure ``epsilon``-DP with neighbours one apart, each with its
    distance above the optimal channel's proven lower bound (E|y - q|, uniform q). The clamped
    geometric is post-processing of the geometric at alpha = e^-eps; the clamped discrete
    Gaussian's sigma is bisected on an O(n) screen and confirmed by the one "meets" rule."""
    from optnoise import Target
    from optnoise.costs import named_row_costs
    from optnoise.design.chain import MIXING
    from optnoise.design.channel import channel_screen, design_channel, pairs_from_distances
    from optnoise.families import calibration_of
    from optnoise.search import boundary

    t0 = time.perf_counter()
    d = design_channel(n, epsilon=epsilon, cost="abs-error")
    print(f"optimal channel ({d.method}): E|y-q| = {d.expected_cost:.6f}, lower bound {d.lower_bound:.6f}, "
          f"gap {d.gap:.2e}, {time.perf_counter() - t0:.1f} s")
    screen = channel_screen(pairs_from_distances(n, [1]), Target(epsilon))
    sigma = boundary(lambda s: _clamped_pure_epsilon(s, n) <= epsilon * (1 - 1e-9), 1.0, 10.0 * n ** 0.5,
                     ok_side="upper", iterations=60)
    # the geometric at alpha = e^-eps meets eps with equality: 1e-9 above it leaves room for float round-off
    for name, family, param in (("clamped-geometric", "geometric", __import__("math").exp(-epsilon) * (1 + 1e-9)),
                                ("clamped-discrete-gaussian", "discrete-gaussian", sigma)):
        t0 = time.perf_counter()
        M = calibration_of(family).build(param, n, "clamp").matrix
        mixed = not screen(M)
        if mixed:   # masses below the float range read as 0 beside positive ones: mix as the design does
            M = M * (1 - MIXING) + MIXING / (n + 1)
        if not screen(M):
            print(f"{name}: parameter {param:.6g} does not meet the target")
            continue
        cost = float(named_row_costs(M, "abs-error").mean())
        how = f", mixed with the uniform channel at {MIXING:.3g}" if mixed else ""
        print(f"{name} (parameter {param:.6g}{how}, meets pure eps = {epsilon:g}): E|y-q| = {cost:.6f}, "
              f"{100 * (cost - d.lower_bound) / cost:.3g}% above the bound, {time.perf_counter() - t0:.1f} s")
        del M


# ------------------------------------------------------------------ issue 37: per record at N = 10,000
BLOCK_SIZES = (1000, 3000, 10000)


def _timed(cmd: list[str], src: str) -> tuple[float, float, str]:
    """``(wall seconds, peak MB, stdout)`` of one command under ``/usr/bin/time``, ``src`` first on
    ``PYTHONPATH``."""
    import os
    env = {**os.environ, "PYTHONPATH": src}
    proc = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", *cmd], capture_output=True, text=True, env=env,
                          check=False)
    line = [x for x in proc.stderr.splitlines() if x.startswith("TIME ")]
    if proc.returncode != 0 or not line:
        return float("nan"), float("nan"), proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    _, sec, kb = line[-1].split()
    return float(sec), float(kb) / 1024, proc.stdout


def _draw_rate(path: str, answer: int) -> str:
    """Load the file, quantize (exact certificate) and time 1e6 draws of one answer (CSPRNG)."""
    code = (f"import time; from optnoise.mechanism import load_mechanism; m = load_mechanism({path!r}); "
            f"q = m.quantize(); m.sample(1000, answer={answer}); t = time.perf_counter(); "
            f"m.sample(1000000, answer={answer}); print(1e6 / (time.perf_counter() - t))")
    return code


def blocks(sizes: list[int], previous: str | None, max_n_previous: int, workdir: str,
           unit: tuple[str, ...] = ("--per-record",)) -> None:
    """The whole command ``design --form channel --n N --epsilon 1 --per-record --cost abs-error
    --output F --json`` (design, exact certificate, file; ``unit``: ``--sd 1`` for neighbours one
    apart), this revision and the previous one one after the other at each N; then ``sample
    --mechanism F`` of 1e6 draws and the draw rate."""
    import os
    from pathlib import Path
    here = str(Path(__file__).resolve().parents[1] / "src")
    cli = str(Path(sys.executable).parent / "optnoise")
    print(f"load average {os.getloadavg()}")
    print(f"{'N':>6} {'who':<9} {'seconds':>8} {'peak MB':>8} {'file KB':>8} {'gap':>9} {'eps (exact)':>13}")
    for n in sizes:
        for who, src in (("this", here), ("previous", previous)):
            if src is None or (who == "previous" and n > max_n_previous):
                continue
            path = os.path.join(workdir, f"{'-'.join(x.strip('-') for x in unit)}-{who}-{n}.json")
            sec, mb, text = _timed([cli, "design", "--form", "channel", "--n", str(n), "--epsilon", "1",
                                    *unit, "--cost", "abs-error", "--output", path, "--force", "--json"], src)
            if sec != sec:
                print(f"{n:>6} {who:<9} failed: {text}")
                continue
            r = json.loads(text)
            size = os.path.getsize(path) / 1024
            print(f"{n:>6} {who:<9} {sec:>8.2f} {mb:>8.0f} {size:>8.0f} {r['gap']:>9.2e} "
                  f"{r['certificate']['epsilon_pure']:>13.10f}", flush=True)
        path = os.path.join(workdir, f"{'-'.join(x.strip('-') for x in unit)}-this-{n}.json")
        sec, mb, _ = _timed([cli, "sample", "--mechanism", path, "--count", "1000000", "--answer", str(n // 2),
                             "--output", os.path.join(workdir, "draws.npy"), "--force"], here)
        _, _, rate = _timed([sys.executable, "-c", _draw_rate(path, n // 2)], here)
        print(f"{n:>6} sample --count 1000000: {sec:.2f} s, {mb:.0f} MB (whole command); "
              f"{float(rate):.3g} draws/s after loading; load average {os.getloadavg()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--households", action="store_true", help="docs/ordered-domains.md's count over 10,000 households")
    ap.add_argument("--scale", nargs="*", help="issue 23: these SCALE cases (all when none) against the previous "
                                               "revision and a plain linprog")
    ap.add_argument("--previous", help="with --scale: the previous revision's src directory")
    ap.add_argument("--max-n-previous", type=int, default=400)
    ap.add_argument("--max-n-plain", type=int, default=400)
    ap.add_argument("--certify", action="store_true", help="with --scale: also quantize and certify exactly")
    ap.add_argument("--blocks", nargs="*", type=int, help="issue 37: the per-record command at these N (default "
                                                             "1000 3000 10000) against --previous")
    ap.add_argument("--sd1", nargs="*", type=int, help="issue 37: the same with neighbours one apart (--sd 1) at "
                                                          "these N (default 1000 3000 10000)")
    ap.add_argument("--workdir", default="/tmp", help="with --blocks or --sd1: where the mechanism files go")
    ap.add_argument("--scale-case", help=argparse.SUPPRESS)
    ap.add_argument("--who", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="*", help="run these cases only")
    ap.add_argument("--example", action="store_true", help="print the worked example's tables")
    ap.add_argument("--figure", help="with --example: write the channel/noise figure here (PNG)")
    args = ap.parse_args()
    if args.households:
        households()
        return
    if args.blocks is not None:
        blocks(args.blocks or list(BLOCK_SIZES), args.previous, args.max_n_previous, args.workdir)
        return
    if args.sd1 is not None:
        blocks(args.sd1 or list(BLOCK_SIZES), args.previous, args.max_n_previous, args.workdir, ("--sd", "1"))
        return
    if args.scale_case:
        print(json.dumps(scale_case(args.scale_case, args.who, args.certify)))
        return
    if args.scale is not None:
        scale(args.scale or list(SCALE), args.previous, args.max_n_previous, args.max_n_plain, args.certify)
        return
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
