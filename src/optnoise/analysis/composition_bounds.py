"""The candidate bounds of a composition, each a proven upper bound rounded outward.

:func:`~optnoise.analysis.composition.compose_best` computes these and reports the smallest
(its module docstring says what each is and why each is proven): ``exact`` (the
binomial/multinomial sum over few loss atoms, :mod:`~optnoise.analysis.exact_composition`),
``pld`` (the dominating PLDs, :mod:`~optnoise.analysis.dominating`), ``rdp`` (Rényi curves,
Canonne, Kamath & Steinke 2020, Prop. 12 in interval arithmetic), ``pure`` and ``basic``
(Dwork & Roth 2014, Thm. 3.16), and :func:`best_of` picks the winner.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .dense_pld import MAX_CELLS
from .dominating import DISCRETIZATION, combination_totals
from .exact_composition import MAX_ATOMS, KFold, loss_atoms, state_count
from .outward import nudge_up, rdp_delta_up, rdp_epsilon_up, renyi_allowance, sum_up
from .profile import PrivacyProfile
from .renyi import renyi_curve

#: The bounds, in the order that names the winner of a tie.
METHODS: tuple[str, ...] = ("pure", "exact", "rdp", "pld", "basic")


@dataclass(frozen=True)
class Bound:
    """One candidate bound: ``epsilon`` at the requested delta, ``delta`` at the requested
    epsilon (``None`` when not requested or when this bound says nothing). Both are proven
    upper bounds; ``exact`` says that they are the exact composed values (rounded outward),
    ``allowance`` is the numerical error added on the safe side (the ``pld`` candidate)."""

    method: str
    epsilon: float | None
    delta: float | None
    detail: str = ""
    exact: bool = False
    allowance: float | None = None

    def to_json(self) -> dict:
        out = {"method": self.method, "epsilon_dp": self.epsilon, "delta_dp": self.delta, "detail": self.detail,
               "exact": self.exact}
        if self.allowance is not None:
            out["allowance"] = self.allowance
        return out



def pld_bound(item_lds, units, counts, eps, dlt, dominated, discretization: float = DISCRETIZATION,
              dense_cells: int = MAX_CELLS) -> Bound:
    """The dominating PLDs of every combination of units, composed (numpy's FFT while the
    composition fits ``dense_cells`` grid cells, dp_accounting beyond), read with their
    numerical allowance: the worst combination's delta at ``eps`` and epsilon at ``dlt``."""
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    worst_a = 0.0
    engine = "numpy"
    for total in combination_totals(item_lds, units, counts, discretization, dense_cells):
        worst_a, engine = max(worst_a, total.allowance), total.engine
        if eps is not None:
            worst_d = max(worst_d, float(total.delta_upper(np.array([eps]))[0]))
        if dlt is not None:
            worst_e = max(worst_e, total.epsilon_upper(dlt))
    how = "dominating pairs for some mechanisms, " if any(dominated) else ""
    return Bound("pld", worst_e, worst_d,
                 f"PLD composed by {engine}, {how}pessimistic Connect-the-Dots, grid {discretization:g}, "
                 f"numerical allowance {worst_a:.2g} added", allowance=worst_a)


def exact_items(item_pairs, units, counts, dominated, max_states: int):
    """Per combination of pairs, the items ``(atoms, count)`` of the exact composition, or
    ``None`` when some pair has too many distinct losses or the states are too many."""
    if any(dominated):
        return None
    atoms: list[list] = []
    for pairs in item_pairs:
        got = [loss_atoms(p, MAX_ATOMS) for p in pairs]
        if any(a is None for a in got):
            return None
        atoms.append(got)
    combos = [[(atoms[i][unit[0]], int(counts[i])) for i, unit in enumerate(combo)]
              for combo in itertools.product(*units)]
    if sum(state_count(c) for c in combos) > max_states:
        return None
    return combos


def exact_bound(combos, eps, dlt) -> Bound:
    """The exact composition (:mod:`~optnoise.analysis.exact_composition`), worst combination."""
    worst_d = -math.inf if eps is not None else None
    worst_e = -math.inf if dlt is not None else None
    exact = True
    for items in combos:
        kf = KFold(items)
        exact = exact and kf.exact
        if eps is not None:
            worst_d = max(worst_d, kf.delta_upper(eps))
        if dlt is not None:
            worst_e = max(worst_e, kf.epsilon_upper(dlt))
    how = "exact rational masses" if exact else "masses and ratios rounded up"
    return Bound("exact", worst_e, worst_d, f"binomial/multinomial sum over the loss atoms ({how}), directed "
                 "rounding", exact=exact)


def rdp_totals(item_lds, profiles, counts, a_pos: list[float]) -> list[float]:
    """``sum_i k_i max_j D_alpha(S_i)`` at each order, each divergence with its float error
    added (:func:`~optnoise.analysis.outward.renyi_allowance`), summed exactly and rounded
    up; the sum of per-item maxima is valid for every pair combination."""
    parts: list[list] = [[] for _ in a_pos]
    for lds, prof, k in zip(item_lds, profiles, counts):
        atoms = max(ld.losses.size for ld in lds)
        lmax = max(float(np.max(np.abs(ld.losses), initial=0.0)) for ld in lds)
        for j, (alpha, value) in enumerate(zip(a_pos, renyi_curve(prof, a_pos))):
            value = float(value)
            parts[j].append(k * Fraction(nudge_up(value, 0.0, renyi_allowance(value, alpha, atoms, lmax)))
                            if math.isfinite(value) else math.inf)
    return [sum_up(p) for p in parts]


def rdp_bound(item_lds, profiles, counts, eps, dlt, orders, totals=None) -> Bound:
    a_pos = [float(a) for a in orders if float(a) > 1.0]   # orders <= 1 give no (eps, delta) bound
    if not a_pos:
        return Bound("rdp", math.inf if dlt is not None else None, 1.0 if eps is not None else None, "no order > 1")
    totals = rdp_totals(item_lds, profiles, counts, a_pos) if totals is None else totals
    out_e = out_d = None
    detail = []
    if dlt is not None:
        out_e, a = rdp_epsilon_up(a_pos, totals, dlt)
        detail.append(f"epsilon at order {a:g}")
    if eps is not None:
        out_d, a = rdp_delta_up(a_pos, totals, eps)
        detail.append(f"delta at order {a:g}")
    return Bound("rdp", out_e, out_d, "Rényi curves summed, Canonne-Kamath-Steinke Prop. 12 in interval arithmetic; "
                 + ", ".join(detail))


def up_bound(profile: PrivacyProfile, value: float, kind: str) -> float:
    """A float profile's value made an upper bound (its round-off, module
    :mod:`~optnoise.analysis.outward`); exact profiles are already rounded outward."""
    if profile.exact or not math.isfinite(value):
        return value
    if kind == "epsilon":
        return nudge_up(value, 2.0 ** -44, 2.0 ** -50)
    return min(1.0, nudge_up(value, 2.0 ** -20, 2.0 ** -48))


def certified_epsilon(profile: PrivacyProfile, delta: float) -> float:
    """``epsilon_dp(delta)`` of one release, an upper bound: exact profiles round outward; a
    float value is moved up until the (rounded-up) delta there is at most ``delta``."""
    e = profile.epsilon_dp(delta)
    if profile.exact or not math.isfinite(e):
        return e
    for step in range(12):
        if up_bound(profile, profile.delta_dp(e), "delta") <= delta:
            return e
        e = e + max(e, 1e-12) * 2.0 ** (-44 + 3 * step)
    return min(up_bound(profile, profile.epsilon_pure, "epsilon"), math.inf)


def pure_bound(profiles, counts, eps, dlt) -> Bound:
    pures = [up_bound(p, p.epsilon_pure, "epsilon") for p in profiles]
    total = sum_up(k * Fraction(e) for e, k in zip(pures, counts)) if all(math.isfinite(e) for e in pures) \
        else math.inf
    out_e = total if dlt is not None else None
    out_d = (0.0 if total <= eps else None) if eps is not None else None
    # exact for one mechanism at delta = 0 (its max loss k times), and where delta is 0
    exact = len(profiles) == 1 and profiles[0].exact and dlt in (None, 0.0) and (eps is None or out_d is not None)
    return Bound("pure", out_e, out_d, "sum of k * eps_pure, rounded up (exact for one mechanism at delta = 0)",
                 exact=exact)


def basic_bound(profiles, counts, eps, dlt) -> Bound:
    k_total = sum(counts)
    out_e = out_d = None
    if dlt is not None:
        share = math.nextafter(dlt / k_total, 0.0) if dlt > 0 else 0.0   # k_total * share <= delta
        parts = [certified_epsilon(p, share) for p in profiles]
        out_e = sum_up(k * Fraction(e) for e, k in zip(parts, counts)) if all(math.isfinite(e) for e in parts) \
            else math.inf
    if eps is not None:
        share = math.nextafter(eps / k_total, 0.0) if eps > 0 else 0.0   # k_total * share <= eps
        out_d = min(1.0, sum_up(k * Fraction(up_bound(p, p.delta_dp(share), "delta"))
                                for p, k in zip(profiles, counts)))
    return Bound("basic", out_e, out_d, "basic composition, (eps, delta) split evenly over the releases, rounded up")


def best_of(cands: list[Bound], attr: str) -> tuple[float | None, str | None, bool, list[str]]:
    """The smallest value, the bound that gave it, whether it is exact, and the candidates
    rejected because they fell below an exact value (an exact value is the truth rounded
    outward: a candidate below it is either wrong or within that rounding; the exact value
    is reported)."""
    vals = [(getattr(c, attr), METHODS.index(c.method), c.method, c.exact) for c in cands
            if getattr(c, attr) is not None]
    if not vals:
        return None, None, False, []
    exact = [v for v in vals if v[3]]
    rejected = []
    if exact:
        floor = min(v[0] for v in exact)
        rejected = [v[2] for v in vals if v[0] < floor]
        vals = [v for v in vals if v[0] >= floor]
    v, _, m, ex = min(vals)
    if math.isinf(v):   # no candidate bounds it: name none of them as the bound that gave it
        return v, "none: no bound is finite here", False, rejected
    return v, m, ex, rejected


__all__ = ["Bound", "METHODS", "basic_bound", "best_of", "certified_epsilon", "exact_bound", "exact_items",
           "pld_bound", "pure_bound", "rdp_bound", "rdp_totals", "up_bound"]
