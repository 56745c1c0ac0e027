"""Both methods of a peak or a mode, side by side, on synthetic data of the spec's shape; and a
quantile's joint mechanism against an even split of its budget (``quantiles`` of the document).

For each ``peak`` / ``mode`` statistic of a spec, :func:`compare` evaluates the two methods a
user may choose (without looking at the data): ``answer-noise`` (optimal cyclic noise, or
randomized response for text keys, under every shift of the key: :func:`.mechanisms.key_cell`)
and ``report-noisy-max`` (permute-and-flip over the keys' totals,
:mod:`optnoise.sampling.noisy_max`), each at the statistic's own target and with its
neighbourhood derived from the spec (:mod:`.neighbourhood`), on a few **synthetic** key
profiles of the spec's shape: its declared keys and groups, its clamp and resolution, its
``max_rows``, and a number of units (``unit.max_units`` under ``add-remove``, else ``units``,
default :data:`DEFAULT_UNITS`). **The user's data is never read**: nothing here takes a table.

Per method and profile it reports, from **exact laws** (no simulation):

* ``p_correct``: the probability that the released key is the true argmax (ties to the first
  declared key, as the query's answer);
* ``expected_distance``: the expected distance between the released and the true key, around
  the cycle of declared positions for integer keys (hours: ``min(|i - j|, K - |i - j|)``),
  0/1 for text keys.

The laws. *Answer-noise*: the released key is ``(argmax + eta) mod K`` with ``eta`` drawn from
the quantized weights that are sampled (``noise.quantize().weights / 2^bits``, the exact
rationals certified), so ``P(released = j) = w[(j - argmax) mod K] / 2^bits`` whatever the
profile. *Permute-and-flip*: :func:`optnoise.sampling.noisy_max.noisy_max_law` (elementary
symmetric polynomials, mpmath) up to :data:`LAW_MAX_KEYS` keys; above, the same law as an
integral, ``P(r) = p_r int_0^1 prod_{j != r} (1 - t p_j) dt`` (keys visited at independent
uniform times ``t_j``: ``r`` is returned iff its coin is heads and no earlier key's is; the
integrand is a polynomial of degree ``K - 1``, so Gauss-Legendre with ``ceil(K / 2)`` nodes is
exact up to floating-point rounding).

For each ``quantile`` / ``median`` (:func:`compare_quantile`): the joint exponential mechanism
that the release draws (:mod:`.kinds.quantile`) against ``even-split``, one exponential
mechanism per level at ``epsilon / m`` (the same rank utility, outputs sorted), both at the
statistic's target on synthetic units of the spec's grid (:data:`QUANTILE_PROFILES`): each
method's stated rank error (data-independent, at the spec's ``alpha``; the split's by a union
bound over its levels) and, per profile and level, the expected rank error and the expected
error in the column's units -- the split's from its exact law, the joint's by
:data:`QUANTILE_DRAWS` exact draws (seed :data:`PROFILE_SEED`: its law has no per-level closed form).

Guarantees: answer-noise carries the exact certificate of the quantized noise under every
shift (``exact: true``); report-noisy-max the theorem's (``exact: false``,
:func:`.noisy_max.guarantee`). Computing this costs no privacy: nothing of the data is used.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..randomness import SeededRandomSource
from ..target import Target
from .kinds import derive, kind_of, score_sensitivity
from .kinds.quantile import Law, law_of, ranks, sample_many, utility
from .mechanisms import Cell, cell_target, key_cell
from .noisy_max import RULE
from .noisy_max import guarantee as rnm_guarantee
from .spec import QuerySpec, Statistic, Unit, parse_query_spec

#: Units assumed under ``replace`` when no number is given (the spec does not hold one there:
#: the number of units is public but comes with the data).
DEFAULT_UNITS = 1000
#: The public seed of the ``flat`` profile's jitter (nothing random is private here).
PROFILE_SEED = 22
#: Relative jitter of the ``flat`` profile's shares (uniform in ``+-FLAT_JITTER``).
FLAT_JITTER = 0.02
#: Permute-and-flip's law by :func:`~optnoise.sampling.noisy_max.noisy_max_law` up to this many
#: keys (``O(K^3)`` mpmath steps); the integral form above.
LAW_MAX_KEYS = 64
#: The methods compared, in the order shown.
METHODS: tuple[str, ...] = ("answer-noise", "report-noisy-max")
#: Profile names and what they are (the shares of rows, or of units, each key receives).
PROFILES: dict[str, str] = {
    "flat": f"every key the same share, jittered by up to {FLAT_JITTER:.0%} (seed {PROFILE_SEED})",
    "one-peak": "one key (at 3/4 of the declared keys) with twice the share of every other",
    "two-near-tied": "two keys (at 1/3 and 3/4 of the keys) with 1.5x and 1.47x the others' share: 2 % apart",
}
DATA_NOTE = ("synthetic key totals of the spec's shape (declared keys and groups, clamp, resolution, max_rows, the "
             "number of units); the user's data is never read, so this comparison costs no privacy budget")


# ------------------------------------------------------------------ synthetic profiles
def profile_shares(k: int) -> dict[str, np.ndarray]:
    """Each profile's share of the total per key (``k`` keys; each sums to 1)."""
    rng = np.random.default_rng(PROFILE_SEED)
    flat = 1 + FLAT_JITTER * rng.uniform(-1, 1, k)
    one = np.ones(k)
    one[(3 * k) // 4] = 2.0
    two = np.ones(k)
    first, second = (3 * k) // 4, k // 3
    two[first] = 1.5
    if second != first:
        two[second] = 1.47
    return {name: w / w.sum() for name, w in (("flat", flat), ("one-peak", one), ("two-near-tied", two))}


def synthetic_scores(stat: Statistic, unit: Unit, units: int, shares: np.ndarray) -> np.ndarray:
    """The keys' integer scores in one group of ``units`` units with these shares (the kind's
    :meth:`~.kinds.base.KeyKind.synthetic_scores`)."""
    return kind_of(stat).synthetic_scores(stat, unit, units, shares)  # type: ignore[attr-defined]


# ------------------------------------------------------------------ exact laws
def key_distances(k: int, integer: bool) -> np.ndarray:
    """Distance of each shift ``0..k-1`` from no shift: circular in positions for integer keys,
    0/1 for text keys."""
    s = np.arange(k)
    return np.minimum(s, k - s) if integer else (s != 0).astype(np.int64)


def answer_noise_law(cell: Cell) -> list[Fraction]:
    """The exact law of the shift that is sampled: the quantized weights over ``2^bits``."""
    q = cell.noise.quantize()
    den = 1 << int(q.bits)
    return [Fraction(int(w), den) for w in np.asarray(q.weights).ravel()]


def permute_and_flip_law(scores: np.ndarray, epsilon: float, sensitivity: int, *,
                         max_exact_keys: int = LAW_MAX_KEYS) -> np.ndarray:
    """The exact output law of permute-and-flip over ``scores`` (module docstring): by
    :func:`~optnoise.sampling.noisy_max.noisy_max_law` up to ``max_exact_keys`` keys, else
    by the integral form with Gauss-Legendre nodes (exact for its polynomial)."""
    from ..sampling.noisy_max import FACTOR, exponent_epsilon, noisy_max_law
    s = np.asarray(scores, dtype=np.int64)
    if s.size <= max_exact_keys:
        return np.array([float(p) for p in noisy_max_law(s, epsilon, sensitivity, method=RULE)])
    eps = exponent_epsilon(epsilon, sensitivity)
    p = np.exp(-float(eps) * (s.max() - s).astype(float) / (FACTOR * sensitivity))
    nodes, weights = np.polynomial.legendre.leggauss((s.size + 1) // 2 + 1)
    t, wt = (nodes + 1) / 2, weights / 2
    factors = 1 - np.outer(t, p)                      # (nodes, keys); t < 1, so no factor is 0
    logs = np.log(factors)
    others = np.exp(logs.sum(axis=1, keepdims=True) - logs)
    return p * (wt @ others)


def summary(law: np.ndarray | list, true: int, distances: np.ndarray) -> dict:
    """``p_correct`` and ``expected_distance`` of a law over the keys for the true key."""
    k = len(law)
    shift = [(j - true) % k for j in range(k)]
    p = sum(law[j] for j in range(k) if shift[j] == 0)
    dist = sum(law[j] * int(distances[shift[j]]) for j in range(k))
    return {"p_correct": float(p), "expected_distance": float(dist)}


# ------------------------------------------------------------------ quantiles
#: Exact draws of the joint mechanism per profile (its law has no closed form per level).
QUANTILE_DRAWS = 200
#: The quantile methods compared.
QUANTILE_METHODS: tuple[str, ...] = ("joint", "even-split")
QUANTILE_PROFILES: dict[str, str] = {
    "spread": "the units' values like a normal around the grid's middle (sd: a sixth of the clamp), rounded to the grid",
    "skewed": "an exponential from the clamp's lower bound (mean: a fifth of the clamp)",
    "gap": "half the units at a quarter of the clamp, half at three quarters: every point between them is a true "
           "median (rank error 0), its value error measured from the first",
}


def quantile_profiles(points: int, units: int) -> dict[str, np.ndarray]:
    """Each profile's units per grid point (``units`` in all, largest remainders: no randomness)."""
    x = np.arange(points) / max(1, points - 1)
    shapes = {"spread": np.exp(-((x - 0.5) * 6) ** 2 / 2), "skewed": np.exp(-5 * x),
              "gap": np.isin(np.arange(points), [(points - 1) // 4, 3 * (points - 1) // 4]).astype(float)}
    out = {}
    for name, w in shapes.items():
        share = units * w / w.sum()
        counts = np.floor(share).astype(np.int64)
        counts[np.argsort(counts - share)[:units - int(counts.sum())]] += 1
        out[name] = counts
    return out


def rank_errors(law: Law, hist: np.ndarray, c: list[int]) -> list[float]:
    """Each level's rank error ``dist(q n, [L(c_j), L+(c_j)])``."""
    low, high, n = ranks(hist)
    return [float(max(q * n - int(high[cj]), int(low[cj]) - q * n, 0)) for q, cj in zip(law.levels, c)]


def truth(law: Law, hist: np.ndarray) -> list[int]:
    """Each level's true quantile: the first grid point whose ranks hold ``q n``."""
    low, high, n = ranks(hist)
    return [int(np.flatnonzero((low <= q * n) & (q * n <= high))[0]) for q in law.levels]


def single_law(law: Law, hist: np.ndarray) -> np.ndarray:
    """The exact law of one level's exponential mechanism, ``beta^U / Z`` over the grid (floats)."""
    low, high, n = ranks(hist)
    u = np.array([utility(law, low, high, n, [c]) for c in range(law.points)], dtype=float)
    w = np.exp((u.min() - u) * -np.log(float(law.beta)))
    return w / w.sum()


def compare_quantile(stat: Statistic, unit: Unit, units: int, alpha: float) -> dict:
    """The joint mechanism against an even split for one quantile or median (module docstring)."""
    derived = derive(stat, unit)
    eps = cell_target(stat.target, derived.cells).epsilon  # type: ignore[arg-type]
    joint = law_of(stat, eps, derived.distance or 1)
    m = len(joint.levels)
    singles = [law_of(replace(stat, quantiles=(q,)), eps / m, derived.distance or 1) for q in joint.levels]
    step = float(stat.resolution)
    groups = stat.groups.size if stat.groups else 1
    per_group = max(1, units // groups)
    names = [repr(float(q)) for q in joint.levels]
    profiles = {}
    for name, hist in quantile_profiles(joint.points, per_group).items():
        true = truth(joint, hist)
        draws = sample_many(joint, hist, SeededRandomSource(PROFILE_SEED), QUANTILE_DRAWS)
        ranks_j = np.array([rank_errors(joint, hist, c) for c in draws]).mean(axis=0)
        values_j = np.abs(np.array(draws) - np.array(true)).mean(axis=0) * step
        split_r, split_v = [], []
        for j, one in enumerate(singles):
            law = single_law(one, hist)
            split_r.append(float(sum(p * rank_errors(one, hist, [c])[0] for c, p in enumerate(law))))
            split_v.append(float(np.abs(np.arange(joint.points) - true[j]) @ law) * step)
        profiles[name] = {"about": QUANTILE_PROFILES[name], "units": int(hist.sum()),
                          "joint": {"expected_rank_error": dict(zip(names, ranks_j.tolist())),
                                    "expected_value_error": dict(zip(names, values_j.tolist()))},
                          "even-split": {"expected_rank_error": dict(zip(names, split_r)),
                                         "expected_value_error": dict(zip(names, split_v))}}
    return {"kind": stat.kind, "about": kind_of(stat).about(stat), "levels": names, "grid_points": joint.points,
            "groups": groups, "units_per_group": per_group, "target": stat.target.to_json(),  # type: ignore[union-attr]
            "alpha": alpha, "stated_rank_error": {"joint": float(joint.rank_error(alpha)),
                                                  "even-split": max(float(s.rank_error(alpha / m)) for s in singles)},
            "methods": {"joint": f"the joint exponential mechanism at epsilon {eps:g} per group (what is released)",
                        "even-split": f"{m} exponential mechanism(s) at epsilon {eps / m:g} each, outputs sorted"},
            "laws": f"even-split: exact; joint: the mean of {QUANTILE_DRAWS} exact draws (seed {PROFILE_SEED})",
            "profiles": profiles}


# ------------------------------------------------------------------ one statistic
def _methods(stat: Statistic, unit: Unit, designed: dict) -> tuple[dict, Cell, int, float, int]:
    """Both methods' mechanism and guarantee (no data): the answer-noise cell, the scores'
    sensitivity, the cell epsilon of report-noisy-max and the cells one unit moves.
    ``designed``: answer-noise cells already built, by keys and cell target (a spec often
    asks the same peak twice, once per method)."""
    from ..analysis.outward import sum_up
    target: Target = stat.target  # type: ignore[assignment]
    if stat.keys.size < 2:  # type: ignore[union-attr]
        raise InvalidParameterError("keys", list(stat.keys.values), "at least 2 declared keys (with one, the "  # type: ignore
                                    "answer is known without the data: nothing to compare)")
    noise_stat = replace(stat, method="answer-noise")
    derived = derive(noise_stat, unit)
    cells = derived.cells
    at = cell_target(target, cells)
    memo = (stat.keys, at.epsilon, at.delta, at.notion)
    if memo not in designed:
        designed[memo] = key_cell(stat.name, noise_stat, at)
    cell = designed[memo]
    sens = score_sensitivity(replace(stat, method="report-noisy-max"), unit)
    eps = cell_target(Target(target.epsilon), cells).epsilon
    docs = {
        "answer-noise": {"law": "the true key shifted (around the declared keys) by the quantized noise that is "
                                "sampled: the same on every profile",
                         "mechanism": cell.to_json(), "neighbourhood": derived.to_json(noise_stat),
                         "certificate": {"exact": True, "cell": cell.certificate_json(), "cells_per_unit": cells,
                                         "epsilon_pure": sum_up([cell.epsilon_pure] * cells)}},
        "report-noisy-max": {"law": f"permute-and-flip's closed form over the profile's scores at epsilon {eps:g} "
                                    f"per group, sensitivity {sens}",
                             "mechanism": {"name": "report-noisy-max", "rule": RULE, "score_sensitivity": sens},
                             "certificate": rnm_guarantee(target.epsilon, sens, cells)},
    }
    if target.delta:
        docs["report-noisy-max"]["note"] = (f"pure {target.epsilon:g}-DP (no delta with report-noisy-max): stricter "
                                            "than the statistic's target")
    return docs, cell, sens, eps, cells


def compare_statistic(stat: Statistic, unit: Unit, units: int, designed: dict | None = None) -> dict:
    """Both methods of one peak or mode on each synthetic profile (module docstring);
    ``designed``: a cache of answer-noise cells shared by the statistics of one spec."""
    k = stat.keys.size  # type: ignore[union-attr]
    groups = stat.groups.size if stat.groups else 1
    per_group = max(1, units // groups)
    docs, cell, sens, eps, cells = _methods(stat, unit, {} if designed is None else designed)
    distances = key_distances(k, stat.keys.integer)  # type: ignore[union-attr]
    noise_law = answer_noise_law(cell)
    labels = stat.keys.labels()  # type: ignore[union-attr]
    profiles = {}
    for name, shares in profile_shares(k).items():
        scores = synthetic_scores(stat, unit, per_group, shares)
        true = int(np.argmax(scores))
        released = [noise_law[(j - true) % k] for j in range(k)]
        profiles[name] = {"about": PROFILES[name], "scores": [int(x) for x in scores], "true_key": labels[true],
                          "answer-noise": summary(released, true, distances),
                          "report-noisy-max": summary(permute_and_flip_law(scores, eps, sens), true, distances)}
    kind = kind_of(stat)
    return {
        "kind": stat.kind, "about": kind.about(stat), "key": stat.key, "of": stat.value_column, "keys": k,
        "integer_keys": stat.keys.integer,  # type: ignore[union-attr]
        "groups": groups, "units_per_group": per_group, "chosen_method": stat.method,
        "target": stat.target.to_json(),  # type: ignore[union-attr]
        "scores": kind.scores_words(stat),  # type: ignore[attr-defined]
        "distance": ("circular, in declared positions (min(|i - j|, K - |i - j|))" if stat.keys.integer  # type: ignore
                     else "0 if the released key is the true one, else 1"),
        "methods": docs, "profiles": profiles,
    }


def units_for(unit: Unit, units: int | None) -> tuple[int, str]:
    """The number of units of the synthetic data and where it comes from: ``"units"`` (given),
    ``"unit.max_units"`` (the spec's bound under ``add-remove``) or ``"default"``
    (:data:`DEFAULT_UNITS`: under ``replace`` the spec holds no number of units)."""
    if units is not None and (isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units < 1):
        raise InvalidParameterError("units", units, "an integer >= 1 (units in the synthetic data)")
    if unit.change == "add-remove":
        bound = int(unit.max_units)  # type: ignore[arg-type]
        if units is not None and units > bound:
            raise InvalidParameterError("units", units, f"at most the spec's unit.max_units ({bound})")
        return (bound, "unit.max_units") if units is None else (int(units), "units")
    return (DEFAULT_UNITS, "default") if units is None else (int(units), "units")


def compare(spec: Any, *, units: int | None = None) -> dict:
    """Both methods of every peak and mode of ``spec``, on synthetic data of its shape.

    Parameters
    ----------
    spec:
        The TOML structure as a dict, or a :class:`~.spec.QuerySpec`.
    units:
        Units in the synthetic data (default: ``unit.max_units`` under ``add-remove``, else
        :data:`DEFAULT_UNITS`), spread evenly over the groups.

    Returns
    -------
    dict
        ``data`` (what was used: never the user's data), ``units``, ``units_from``, ``unit``,
        ``profiles`` (name -> description), ``statistics.NAME`` (``methods`` with each
        one's ``mechanism`` and ``certificate``; ``profiles.P`` with ``scores``, ``true_key``
        and per method ``p_correct`` and ``expected_distance``), ``skipped`` (statistics that
        are not a peak or a mode).

    Raises
    ------
    InvalidParameterError
        ``spec`` without a peak or a mode (nothing to compare), or a bad ``units``.

    >>> spec = {"unit": {"id": "household", "max_rows": 2}, "statistics": {"top": {
    ...     "kind": "mode", "key": "fuel", "keys": ["gas", "oil", "heat-pump"], "epsilon": 1.0}}}
    >>> doc = compare(spec, units=30)
    >>> sorted(doc["statistics"]["top"]["profiles"]["one-peak"])
    ['about', 'answer-noise', 'report-noisy-max', 'scores', 'true_key']
    """
    from ..version import __version__
    parsed: QuerySpec = parse_query_spec(spec)
    chosen = [s for s in parsed.statistics if kind_of(s).releases_key]
    ranked = [s for s in parsed.statistics if s.quantiles]
    if not chosen and not ranked:
        raise InvalidParameterError("spec", "no peak or mode statistic, and no quantile", "a spec with at least one "
                                    "statistic of kind 'peak', 'mode', 'quantile' or 'median' (compare shows their "
                                    "methods)")
    count, source = units_for(parsed.unit, units)
    stats: dict[str, dict] = {}
    designed: dict = {}
    for stat in chosen:
        try:
            stats[stat.name] = compare_statistic(stat, parsed.unit, count, designed)
        except InvalidParameterError as exc:
            raise exc.renamed(f"statistics.{stat.name}.{exc.parameter}") from exc
    quantiles: dict[str, dict] = {}
    for stat in ranked:
        try:
            quantiles[stat.name] = compare_quantile(stat, parsed.unit, count, parsed.alpha)
        except InvalidParameterError as exc:
            raise exc.renamed(f"statistics.{stat.name}.{exc.parameter}") from exc
    u = parsed.unit
    return {"tool": "optnoise", "version": __version__, "kind": "query-compare",
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "data": DATA_NOTE, "reads_data": False, "units": count, "units_from": source,
            "unit": {"id": u.id, "max_rows": u.rows_bound, "change": u.change, "max_units": u.max_units,
                     **u.group_json()},
            "methods": list(METHODS), "profiles": dict(PROFILES), "statistics": stats,
            "quantiles": quantiles, "quantile_methods": list(QUANTILE_METHODS),
            "skipped": [s.name for s in parsed.statistics if not kind_of(s).releases_key and not s.quantiles],
            "laws": "exact: answer-noise from the quantized weights that are sampled; permute-and-flip from its "
                    "closed-form law (no simulation)"}


def compare_file(spec: Any, output: Any = None, *, units: int | None = None, force: bool = False,
                 spec_file: Any = None) -> dict:
    """:func:`compare`, written to ``output`` (JSON) when given: under the one output rule
    (:func:`optnoise.io.check_output`, checked before any work; the spec file is never
    replaced) and atomically (:func:`optnoise.io.write_text_atomic`): on failure nothing is
    written. ``spec_file``: the spec's path, recorded with its SHA-256."""
    from ..io import check_output, dumps, write_text_atomic
    from ..publish.files import file_record
    if output is not None:
        check_output(output, force=force, reads=[spec_file] if spec_file is not None else [], parameter="output")
    doc = compare(spec, units=units)
    if spec_file is not None:
        doc["spec"] = file_record(spec_file)
    if output is not None:
        write_text_atomic(output, dumps(doc), replace=force)
    return doc


__all__ = ["DEFAULT_UNITS", "compare_file", "LAW_MAX_KEYS", "METHODS", "PROFILES", "PROFILE_SEED", "QUANTILE_DRAWS",
           "QUANTILE_METHODS", "QUANTILE_PROFILES", "answer_noise_law", "compare", "compare_quantile",
           "compare_statistic", "quantile_profiles", "rank_errors", "single_law", "truth", "key_distances", "permute_and_flip_law", "profile_shares", "summary",
           "synthetic_scores", "units_for"]
