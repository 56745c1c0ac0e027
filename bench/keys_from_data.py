"""Keys found in the data (issue 36): keys kept by optnoise against PipelineDP's and OpenDP's thresholds.

Run: .venv/bin/python bench/keys_from_data.py [--seeds 5] [--epsilons 0.5,1,2] [--delta 1e-6]
                                              [--units 20000] [--keys 5000] [--zipf 1.1] [--groups 1,3]
                                              [--peers /tmp/peers]
(or ``bench/query_accuracy.py --keys-from-data`` with the same options). The peers are not
dependencies of optnoise: install them apart, ``pip install --target /tmp/peers pipeline-dp
opendp``; ``--peers`` is appended to ``sys.path`` (after the venv's packages). A peer that
does not import is left out, named.

**Data** (per seed): ``--units`` units; each holds ``g`` keys drawn with replacement from a
Zipf law over ``--keys`` possible keys (``P[k] ~ k^-zipf``), duplicates merged (a unit holds
at most ``g`` distinct keys). Change model **add-remove** (the peers' neighbourhood: one unit
added or removed), contribution bounds ``max_partitions_contributed = g`` (optnoise:
``unit.max_groups = g``, ``max_rows = g``) and ``max_contributions_per_partition = 1`` (a
histogram of units counts a unit once in each of its keys; optnoise's ``max_rows_per_group``
is not set: without ``by`` it caps the rows of the unit's one group, which would leave one
key per unit): each key's answer is its count of units, and the keys are not declared.

**Methods**, each at the same ``(eps, delta)`` and bounds:

* **optnoise**: ``optnoise.query`` with ``keys = "from-data"``: noisy counts of units,
  released iff at least the threshold ``tau`` designed from the quantized noise's exact tail
  (query/threshold.py, query/truncated.py, query/found_gaussian.py), or at ``tau - 1`` with the
  boundary probability ``q`` the rest of the delta allows (shown beside the threshold). The
  cells are the geometric (pure, the selection's delta a shift), the truncated geometric, or the
  discrete Gaussian with the selection composed in the cells' profile, whichever has the lowest
  ``tau - q`` (the document's ``mechanism`` names it). The statistic is asked for at ``eps -
  ln(1/(1 - delta))``, which bounds the selection's epsilon shift ``m ln(1/(1-p))`` (docs/proofs/
  key-selection.md), so that its *total* is at most ``eps`` at ``delta``: ``total.basic`` for the
  geometric designs, ``total.pld`` (the composition, read at ``delta``) for the Gaussian one,
  whose basic sum of the cells' own points is above ``eps`` (the column "eps" shows the bound
  that meets it).
* **PipelineDP, default** (``TRUNCATED_GEOMETRIC`` partition selection, its optimal
  keys-only selection, Desfontaines et al. 2022), run through ``DPEngine.aggregate`` with
  ``PRIVACY_ID_COUNT`` as its users run it: its ``NaiveBudgetAccountant`` gives the selection
  ``(eps/2, delta)`` and the Laplace count ``(eps/2, 0)``.
* **PipelineDP, keys only** (``select_partitions`` at the whole ``(eps, delta)``): releases
  the keys and *no* counts -- not the same release, shown as the bound of what any selection
  keeps.
* **PipelineDP, Laplace / Gaussian thresholding** (``post_aggregation_thresholding = True``):
  the noisy count thresholded, the whole ``(eps, delta)`` (Gaussian: half the delta for the
  noise, half for the threshold).
* **OpenDP** ``make_laplace_threshold`` (discrete Laplace on the integer counts, scale ``g /
  eps``, ``d_in = (g, g, 1)`` in its L0-L1-Linf metric), threshold the least integer whose
  *reported* delta (its privacy map) is at most ``delta``, as a user calibrates it; and the
  same mechanism with the threshold raised until its *exact* delta is at most ``delta``.

**Delta actually guaranteed**: a key held by one unit alone shows with probability ``p``;
over the ``g`` keys one unit can create the selection's delta is ``1 - (1 - p)^g``. optnoise
prints it from the quantized law (exact, rounded up). For OpenDP it is recomputed here from
its discrete Laplace, ``p = P[1 + Z >= t] = a^(t-1) / (1 + a)``, ``a = e^(-1/scale)``
(:func:`threshold_delta`, 50 digits, rounded up): its map reports ``P[Z >= t]``, the mass at
the threshold left out (opendp/opendp issue 2922, open in 0.16). For PipelineDP it is
``1 - (1 - P_keep(1))^g`` from its own ``probability_of_keep(1)`` -- its design's continuous
law; the sampled noise (discretised by a granularity) is not modelled.

**Figures**: keys kept (sampled: mean +- sd over seeds; each peer draws from its own
unseeded source) and expected (``sum_k P[keep | c_k]``, from each method's law: exact tail
for optnoise, ``probability_of_keep`` for PipelineDP, the discrete Laplace for OpenDP); the
kept keys' share of unit-key pairs (``sum`` of their counts over all pairs); the ratio of
optnoise's expected keys to each peer's. Asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: A public upper bound on the number of units (optnoise's add-remove count domain).
MAX_UNITS = 1_000_000


def up(x: float, digits: int = 3) -> str:
    """``x`` rounded *up* to ``digits`` significant digits (a privacy figure, outward)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(x))))
    return f"{math.ceil(x * scale) / scale:g}"


def threshold_delta(scale: float, threshold: int, groups: int) -> float:
    """The exact delta of releasing a key iff ``c + Z >= threshold`` with ``Z`` the discrete
    Laplace of ``scale`` (``P[Z = z] ~ e^(-|z| / scale)``, OpenDP's noise on integer counts):
    ``1 - (1 - p)^groups`` with ``p = P[1 + Z >= threshold]``, computed to 50 digits and
    rounded up (``1 + 1e-12`` relative)."""
    import mpmath
    with mpmath.workdps(50):
        a = mpmath.exp(-1 / mpmath.mpf(scale))
        k = threshold - 1                      # p = P[Z >= k]
        p = a ** k / (1 + a) if k >= 1 else 1 - a ** (1 - k) / (1 + a)
        return min(1.0, float((1 - (1 - p) ** groups) * (1 + mpmath.mpf("1e-12"))))


def laplace_tail(scale: float, k: int) -> float:
    """``P[Z >= k]`` of the discrete Laplace of ``scale`` (floats: an expected count, not a
    privacy figure)."""
    a = math.exp(-1 / scale)
    return a ** k / (1 + a) if k >= 1 else 1 - a ** (1 - k) / (1 + a)


def units_and_keys(seed: int, units: int, keys: int, zipf: float, groups: int):
    """The data (module docstring): a DataFrame of (unit, key) rows, one per distinct pair,
    and each key's count of units."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    law = np.arange(1, keys + 1, dtype=float) ** -zipf
    drawn = rng.choice(keys, size=(units, groups), p=law / law.sum())
    frame = pd.DataFrame({"unit": np.repeat(np.arange(units), groups), "key": drawn.ravel()}).drop_duplicates()
    frame = frame.reset_index(drop=True)
    return frame, frame["key"].value_counts().to_numpy()


def spread(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def optnoise_run(frame, counts, eps: float, delta: float, groups: int, seed: int) -> dict:
    """optnoise's release of the keys found in ``frame``, its threshold and total, and the
    expected number of keys kept (the quantized noise's exact tail, memoised per count)."""
    import optnoise
    from optnoise import Target
    from optnoise.query.mechanisms import count_cell
    from fractions import Fraction
    from optnoise.query.threshold import release_probability
    from optnoise.query.truncated import truncated_noise
    unit = {"id": "unit", "max_rows": groups, "change": "add-remove", "max_units": MAX_UNITS}
    if groups > 1:   # no max_rows_per_group: a histogram of units counts a unit once per key anyway, and
        unit.update(max_groups=groups)   # without ``by`` it would cap the rows of the unit's one group
    asked = eps - (-math.log1p(-delta)) * (1 + 1e-6)   # room for the selection's epsilon shift
    spec = {"unit": unit, "statistics": {"keys": {"kind": "histogram", "key": "key", "keys": "from-data",
                                                  "epsilon": asked, "delta": delta}}}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # seeded: labelled not private, as it should be
        doc = optnoise.query(frame, spec, seed=seed)
    seconds = time.perf_counter() - t0
    stat = doc["statistics"]["keys"]
    values = stat["values"]
    whole = doc["only_if_unseeded"]["total"]
    # the bound that meets the target: basic (pure cells plus the selection's shift), or the PLD
    # composition where the selection is inside the cells' profile (its basic sum is above eps)
    total = whole["basic"] if whole["basic"]["epsilon"] <= eps else whole["pld"]
    mech, tau = stat["mechanism"], stat["keys"]["threshold"]
    cell_target = stat["target"] if "same_as" in mech["cell_target"] else mech["cell_target"]
    cell = Target(cell_target["epsilon"], cell_target["delta"])
    if mech.get("method") == "truncated":
        noise = truncated_noise(mech["half_width"], cell.epsilon, cell).quantize()
    elif mech.get("method") == "discrete-gaussian-found":
        from optnoise.query.found_gaussian import gaussian_noise
        noise = gaussian_noise(mech["sigma"]).quantize()
    else:
        lo, hi = mech["domain"]
        noise = count_cell("keys", hi - lo, lo, 1, Target(cell.epsilon), "clamped-geometric", gap=False).noise.quantize()
    numerator, bits = stat["keys"]["boundary_probability_exact"].split("/2^")   # the document's q = a / 2^k
    q = Fraction(int(numerator), 2 ** int(bits))
    keep = {int(c): float(release_probability(noise, int(c), tau, q)) for c in set(counts.tolist())}
    probs = [keep[int(c)] for c in counts]
    by_key = frame["key"].value_counts()
    shown = [int(k) for k in values]
    shown_tau = f"{tau} (q {float(q):.3f} at {tau - 1})" if q else str(tau)
    return {"method": "optnoise", "threshold": shown_tau, "kept": len(values),
            "share": float(by_key.loc[shown].sum() / by_key.sum()) if shown else 0.0,
            "expected": float(sum(probs)), "expected_share": float(sum(p * c for p, c in zip(probs, counts)) / counts.sum()),
            "epsilon": total["epsilon"], "reported_delta": total["delta"], "exact_delta": total["delta"],
            "counts": "yes", "noise": mech["name"], "seconds": seconds}


def pipeline_runs(frame, counts, eps: float, delta: float, groups: int) -> list[dict]:
    """PipelineDP's strategies (module docstring), each run through its ``DPEngine``."""
    import pipeline_dp
    from pipeline_dp.partition_selection import create_partition_selection_strategy
    rows = list(zip(frame["unit"].tolist(), frame["key"].tolist()))
    by_key = frame["key"].value_counts()
    ex = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                    value_extractor=lambda r: 0)
    pss, nk = pipeline_dp.PartitionSelectionStrategy, pipeline_dp.NoiseKind
    cases = [("PipelineDP default (truncated geometric, eps/2 + Laplace count eps/2)", pss.TRUNCATED_GEOMETRIC,
              nk.LAPLACE, False, eps / 2),
             ("PipelineDP keys only (truncated geometric, no counts)", pss.TRUNCATED_GEOMETRIC, None, False, eps),
             ("PipelineDP Laplace thresholding", pss.LAPLACE_THRESHOLDING, nk.LAPLACE, True, eps),
             ("PipelineDP Gaussian thresholding", pss.GAUSSIAN_THRESHOLDING, nk.GAUSSIAN, True, eps)]
    out = []
    for name, strategy, noise, post, sel_eps in cases:
        t0 = time.perf_counter()
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=eps, total_delta=delta)
        engine = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
        if noise is None:
            res = engine.select_partitions(rows, pipeline_dp.SelectPartitionsParams(max_partitions_contributed=groups,
                                                                                    partition_selection_strategy=strategy),
                                           ex)
        else:
            params = pipeline_dp.AggregateParams(noise_kind=noise, metrics=[pipeline_dp.Metrics.PRIVACY_ID_COUNT],
                                                 max_partitions_contributed=groups, max_contributions_per_partition=1,
                                                 partition_selection_strategy=strategy, post_aggregation_thresholding=post)
            res = engine.aggregate(rows, params, ex)
        acc.compute_budgets()
        shown = [r if noise is None else r[0] for r in res]
        seconds = time.perf_counter() - t0
        law = create_partition_selection_strategy(strategy, sel_eps, delta, groups)
        keep = {int(c): law.probability_of_keep(int(c)) for c in set(counts.tolist())}
        probs = [keep[int(c)] for c in counts]
        one = law.probability_of_keep(1)
        threshold = getattr(law, "threshold", None)
        out.append({"method": name, "threshold": f"{threshold:.2f}" if threshold is not None else "(randomised)",
                    "kept": len(shown), "share": float(by_key.loc[shown].sum() / by_key.sum()) if shown else 0.0,
                    "expected": float(sum(probs)),
                    "expected_share": float(sum(p * c for p, c in zip(probs, counts)) / counts.sum()),
                    "epsilon": eps, "reported_delta": delta,
                    "exact_delta": -math.expm1(groups * math.log1p(-one)) + (delta / 2 if noise == nk.GAUSSIAN else 0.0),
                    "counts": "no" if noise is None else "yes", "seconds": seconds})
    return out


def opendp_calibration(eps: float, delta: float, groups: int) -> tuple[float, int, int]:
    """OpenDP's scale (``g / eps``), the least threshold whose *reported* delta is at most
    ``delta``, and the least whose *exact* delta (:func:`threshold_delta`) is."""
    import opendp.prelude as dp
    dp.enable_features("contrib")
    scale = groups / eps
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i32))
    met = dp.l01inf_distance(dp.absolute_distance(T=dp.i32))

    def reported(t: int) -> float:
        return dp.m.make_laplace_threshold(dom, met, scale=scale, threshold=t).map((groups, groups, 1))[1]

    def least(ok) -> int:
        lo, hi = 1, 2
        while not ok(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return lo if ok(lo) else hi

    return scale, least(lambda t: reported(t) <= delta), least(lambda t: threshold_delta(scale, t, groups) <= delta)


def opendp_runs(frame, counts, eps: float, delta: float, groups: int, calibration: tuple[float, int, int]) -> list[dict]:
    """OpenDP's thresholded Laplace at its reported-delta threshold and at the exact one."""
    import opendp.prelude as dp
    dp.enable_features("contrib")
    scale, t_reported, t_exact = calibration
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i32))
    met = dp.l01inf_distance(dp.absolute_distance(T=dp.i32))
    by_key = frame["key"].value_counts()
    answers = {str(k): int(c) for k, c in by_key.items()}
    out = []
    for name, t in (("OpenDP laplace threshold (reported delta)", t_reported),
                    ("OpenDP laplace threshold (exact delta)", t_exact)):
        t0 = time.perf_counter()
        meas = dp.m.make_laplace_threshold(dom, met, scale=scale, threshold=t)
        eps_map, reported = meas.map((groups, groups, 1))
        shown = [int(k) for k in meas(answers)]
        seconds = time.perf_counter() - t0
        probs = [laplace_tail(scale, t - int(c)) for c in counts]
        out.append({"method": name, "threshold": str(t), "kept": len(shown),
                    "share": float(by_key.loc[shown].sum() / by_key.sum()) if shown else 0.0,
                    "expected": float(sum(probs)),
                    "expected_share": float(sum(p * c for p, c in zip(probs, counts)) / counts.sum()),
                    "epsilon": eps_map, "reported_delta": reported, "exact_delta": threshold_delta(scale, t, groups),
                    "counts": "yes", "seconds": seconds})
    return out


def peers_available(path: str | None) -> dict[str, str]:
    """Which peers import (``name -> version``), with ``path`` appended to ``sys.path``; a
    peer that does not import is named on stderr."""
    if path and path not in sys.path:
        sys.path.append(path)
    found = {}
    for name in ("pipeline_dp", "opendp"):
        try:
            mod = __import__(name)
            from importlib.metadata import version
            found[name] = version(name.replace("_", "-"))
            del mod
        except Exception as exc:   # reported and left out, never silently
            print(f"{name}: not available ({type(exc).__name__}: {exc}); left out", file=sys.stderr)
    return found


def setting_rows(args, eps: float, groups: int, peers: dict[str, str]) -> list[dict]:
    """Every method over the seeds at one (eps, g): per method the seeds' figures, summarised."""
    per: dict[str, list[dict]] = {}
    calibration = opendp_calibration(eps, args.delta, groups) if "opendp" in peers else None
    for seed in range(args.seeds):
        frame, counts = units_and_keys(seed, args.units, args.keys, args.zipf, groups)
        rows = [optnoise_run(frame, counts, eps, args.delta, groups, seed)]
        if "pipeline_dp" in peers:
            rows += pipeline_runs(frame, counts, eps, args.delta, groups)
        if calibration is not None:
            rows += opendp_runs(frame, counts, eps, args.delta, groups, calibration)
        for r in rows:
            r.update(candidates=len(counts), seed=seed)
            per.setdefault(r["method"], []).append(r)
        ours = rows[0]["expected"]
        for r in rows:
            r["ratio"] = ours / r["expected"] if r["expected"] else math.inf
    summary = []
    for method, rs in per.items():
        s = {"method": method, "eps_target": eps, "groups": groups, "seeds": len(rs)}
        for key in ("kept", "share", "expected", "expected_share", "ratio", "candidates", "seconds"):
            s[key] = spread([float(r[key]) for r in rs])
        for key in ("threshold", "counts", "epsilon", "reported_delta", "exact_delta"):
            s[key] = rs[0][key]
        summary.append(s)
    return summary


def markdown(rows: list[dict]) -> str:
    head = ("| g | eps | method | threshold | counts released | keys kept (sampled) | keys kept (expected) | "
            "share of unit-key pairs kept | optnoise / method (expected keys) | eps | delta reported | "
            "delta exact |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['groups']} | {r['eps_target']:g} | {r['method']} | {r['threshold']} | {r['counts']} | "
                     f"{r['kept'][0]:.1f} +- {r['kept'][1]:.1f} | {r['expected'][0]:.1f} +- {r['expected'][1]:.1f} | "
                     f"{r['expected_share'][0]:.4f} | {r['ratio'][0]:.3f} +- {r['ratio'][1]:.3f} | "
                     f"{up(r['epsilon'], 7)} | {up(r['reported_delta'], 6)} | {up(r['exact_delta'], 6)} |")
    return "\n".join(lines)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--units", type=int, default=20_000)
    ap.add_argument("--keys", type=int, default=5_000)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--groups", default="1,3", help="keys per unit (max_groups, max_partitions_contributed)")
    ap.add_argument("--peers", default="/tmp/peers", help="where the peers are installed (appended to sys.path)")


def run(args: argparse.Namespace) -> list[dict]:
    """Every setting; prints the table and returns the summaries."""
    peers = peers_available(args.peers)
    print(f"peers: {peers}; units {args.units:,}, keys {args.keys:,}, zipf {args.zipf:g}, delta {args.delta:g}, "
          f"seeds {args.seeds}; load {os.getloadavg()}", flush=True)
    rows = []
    for groups in (int(g) for g in args.groups.split(",")):
        for eps in (float(e) for e in args.epsilons.split(",")):
            found = setting_rows(args, eps, groups, peers)
            print(f"g {groups} eps {eps:g}: done (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
            rows += found
    print(markdown(rows))
    print(f"load after: {os.getloadavg()}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    run(ap.parse_args())


if __name__ == "__main__":
    main()
