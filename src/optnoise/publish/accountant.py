"""The one accountant: a unit's total over every part one unit can move, under one budget.

A *part* is what one unit can move in a publication -- a privatized column of a release
(:mod:`optnoise.table`), a cell of a statistic (:mod:`optnoise.query`). The publisher hands
the accountant its :class:`Parts`: the ``(profile, count)`` items to compose (the exact
profiles of the quantized mechanisms, each distinct one once with its count), whether an
item's releases may each see a different pair (``mixed``), and every part's certified
``(epsilon, delta)``. The :class:`Accountant` composes them -- this module is the only place
a unit's total is composed -- into the total a document writes:

* ``basic``: the sum of the parts' epsilons and deltas (basic composition), rounded up;
* ``pld``: the composition of the items (:func:`optnoise.analysis.composition.compose_sequence`:
  the best of the exact sum, the PLDs, RDP and the pure bound, each proven and rounded
  outward), epsilon at the budget's delta (or 1e-6) and, with a budget, delta at its
  epsilon; one part is its own tight profile; with the pure-sum shortcut (``pure_shortcut``),
  the pure sum alone when no other bound can beat it by more than :data:`PURE_GAP`
  (:func:`pure_total`);
* ``attack``: the unit's total in attack terms, by the exact trade-off composition of every
  pair (``readout="exact"``, :func:`exact_attack`) or the proven bound from the composed
  privacy profile (``readout="profile"``, :func:`profile_attack`: fast on large channels);
* ``budget`` and ``within_budget``: a budget in epsilon terms is met by either bound
  (:func:`within`), one in attack terms by the readout (:func:`attack_within`); a total
  above its budget is refused (:meth:`Accountant.over_budget`) before any noise is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..target import MEETS_TOLERANCE, Target
from .document import WORDS_FPR

#: Who is attacked, in words (:func:`~optnoise.analysis.tradeoff.attack_words`'s keywords),
#: given the pair the readout names at the budget's FPR.
Subject = Callable[[str], dict]


@dataclass(frozen=True)
class Parts:
    """What one unit can move: the ``(profile, count)`` items composed, whether each item's
    releases may each see a different pair (``mixed``, :func:`~optnoise.analysis.composition.compose_best`;
    ``None``: none may), and every part's certified ``(epsilon, delta)`` (basic composition)."""

    items: Sequence[tuple[Any, int]]
    epsilon_deltas: Sequence[tuple[float, float]]
    mixed: Sequence[bool] | None = None
    #: ``(epsilon, delta)`` added on top of the composed items by parts whose release is the
    #: items' with a rare extra event -- keys found in the data (:func:`shifted`).
    shifts: Sequence[tuple[float, float]] = ()

    @property
    def single(self) -> bool:
        """One part alone: nothing to compose."""
        return len(self.items) == 1 and self.items[0][1] == 1


# ------------------------------------------------------------------ parts that share a mechanism
#: From this many parts on, the parts that share a mechanism are composed as one item of their
#: count (its dominating pair self-composed: time and memory grow with the number of
#: *distinct* mechanisms); below, every part is its own item (every combination of the parts'
#: pairs, tighter when they are few).
GROUP_FROM = 9


def shared(parts: Sequence[Any]) -> list[list[Any]]:
    """The parts grouped by the mechanism they release (the same object, ``part.mechanism``),
    in first-seen order."""
    groups: dict[int, list[Any]] = {}
    for p in parts:
        groups.setdefault(id(p.mechanism), []).append(p)
    return list(groups.values())


def composition_items(parts: Sequence[Any], profile_of: Callable[[Any], Any]) -> tuple[list[tuple[Any, int]], list[bool]]:
    """The ``(profile, count)`` items of parts and whether each is ``mixed`` (its parts each
    change by their own pair: :func:`optnoise.analysis.composition.compose_best`).
    ``profile_of(part)`` is computed once per distinct mechanism."""
    groups = shared(parts)
    profiles = [profile_of(g[0]) for g in groups]
    if len(parts) < GROUP_FROM:
        by_id = {id(g[0].mechanism): prof for g, prof in zip(groups, profiles)}
        return [(by_id[id(p.mechanism)], 1) for p in parts], [False] * len(parts)
    return [(prof, len(g)) for prof, g in zip(profiles, groups)], [len(g) > 1 for g in groups]


# ------------------------------------------------------------------ the accountant
@dataclass(frozen=True)
class Accountant:
    """How a publisher's total is composed and named.

    ``counted``: the key of the number of parts (``"columns"``, ``"cells"``); ``single``: the
    ``pld`` bound of one part alone (``"one column"``); ``readout``: ``"exact"`` or
    ``"profile"`` (module docstring); ``pure_shortcut``: the pure sum alone where it cannot be
    beaten (:func:`pure_total`); ``whose``, ``parts``: the words of a refusal (``"the
    record's total"``, ``"the columns'"``).
    """

    counted: str
    single: str
    readout: str
    pure_shortcut: bool
    whose: str
    parts: str

    def total(self, parts: Parts, budget: Target | None, subject: Subject, *, attack: bool = True) -> dict:
        """The unit's total over ``parts`` under ``budget``, refused above it. ``attack``:
        also the readout in attack terms (always with a budget in attack terms; a publisher
        may add it later with :meth:`with_attack`)."""
        by_attack = budget is not None and budget.notion == "attack"
        out = self.composed(parts, None if by_attack else budget)
        if budget is not None and not by_attack and not out["within_budget"]:
            raise self.over_budget(out, budget)
        if attack or by_attack:
            out = self.with_attack(out, parts, subject, budget if by_attack else None)
        return out

    def composed(self, parts: Parts, budget: Target | None, *, at_delta: float | None = None) -> dict:
        """``basic`` and ``pld`` (module docstring), the budget (in epsilon terms) and whether
        the total is within it; with ``parts.shifts``, both shifted (:func:`shifted`).
        ``at_delta``: where ``pld`` reads epsilon (default: the budget's delta, or 1e-6)."""
        if parts.shifts:
            return shifted(self, parts, budget)
        from ..analysis.outward import sum_up
        eps = list(parts.epsilon_deltas)
        basic = {"epsilon": sum_up(e for e, _ in eps), "delta": min(1.0, sum_up(d for _, d in eps))}
        delta = at_delta if at_delta is not None else budget.delta if budget is not None else 1e-6
        items = list(parts.items)
        shortcut = pure_total(items, delta, budget) if self.pure_shortcut and not parts.single else None
        if parts.single:  # nothing to compose: the part's own tight profile (and no dp_accounting import)
            prof = items[0][0]
            pld = {"epsilon": min(prof.epsilon_dp(delta), prof.epsilon_pure), "delta": delta, "bound": self.single}
            if budget is not None:
                pld["delta_at_budget_epsilon"] = prof.delta_dp(budget.epsilon)
        elif shortcut is not None:
            pld = shortcut
        else:
            from ..analysis.composition import compose_sequence
            mixed = None if parts.mixed is None else list(parts.mixed)
            composed = compose_sequence(items, epsilon=None if budget is None else budget.epsilon, delta=delta,
                                        mixed=mixed)
            pld = {"epsilon": composed.epsilon_dp, "delta": delta, "bound": composed.bound.get("epsilon_dp")}
            if budget is not None:
                pld["delta_at_budget_epsilon"] = composed.delta_dp
        out: dict[str, Any] = {self.counted: len(eps), "basic": basic, "pld": pld,
                               "budget": None if budget is None else {"epsilon": budget.epsilon,
                                                                      "delta": budget.delta}}
        if budget is not None:
            out["within_budget"] = within(basic, pld, budget)
        return out

    def with_attack(self, total: dict, parts: Parts, subject: Subject, budget: Target | None = None) -> dict:
        """``total`` with its ``attack`` readout; with a budget in attack terms, the budget and
        whether the readout meets it (refused when it does not)."""
        fprs = sorted({*_default_fprs(), WORDS_FPR, *((budget.at_fpr,) if budget is not None and
                                                     budget.max_tpr is not None else ())})
        at = budget.at_fpr if budget is not None and budget.max_tpr is not None else WORDS_FPR
        if self.readout == "exact" and not parts.shifts:
            attack = exact_attack(parts, fprs, subject, at)
        else:
            attack = profile_attack(list(parts.items), total, fprs, subject, parts.shifts)
        out = {**total, "attack": attack}
        if budget is not None:
            out["budget"] = budget.to_json()
            out["within_budget"] = attack_within(attack, budget)
            if not out["within_budget"]:
                raise self.over_budget(out, budget)
        return out

    def over_budget(self, total: dict, budget: Target) -> InvalidParameterError:
        """The refusal of a total above its budget, with the total's numbers."""
        if budget.notion == "attack":
            a = total["attack"]
            got = ([f"TPR {a['tpr_at_fpr'][f'{budget.at_fpr:g}']:.6g} at FPR {budget.at_fpr:g}"]
                   if budget.max_tpr is not None else []) + \
                ([f"mu {a['mu_gdp']:.6g}"] if budget.max_mu is not None else [])
            return InvalidParameterError("budget", budget.describe(), f"a budget {self.whose} meets: its best "
                                         f"attacker ({a['method']}) reaches {', '.join(got)} (lower {self.parts} "
                                         "targets or raise the budget)")
        b, p = total["basic"], total["pld"]
        pld = "none finite" if p.get("epsilon") is None else f"{p['epsilon']:.7g}"
        return InvalidParameterError(
            "budget", f"eps {budget.epsilon:g}, delta {budget.delta:g}",
            f"a budget at least {self.whose}: basic eps {b['epsilon']:.7g}, delta {b['delta']:.3g}; "
            f"PLD eps {pld} at delta {budget.delta:g} (lower {self.parts} epsilons or raise the budget)")


def shifted(accountant: Accountant, parts: Parts, budget: Target | None) -> dict:
    """The total of parts with shifts: each shift ``(e_s, d_s)`` says the release is
    ``(epsilon + e_s, delta + d_s)``-DP whenever the items are ``(epsilon, delta)``-DP
    (docs/proofs/key-selection.md), so the items are composed as usual and every bound is
    moved by the sums ``E``, ``D`` of the shifts, rounded up: ``basic`` adds them; ``pld``
    reads the items' epsilon at ``delta - D`` (none when ``D`` exceeds the delta, or when it takes
    the whole delta and the items are not pure) and adds
    ``E``, and their delta at ``budget.epsilon - E`` plus ``D``. ``delta`` is the budget's, or
    without one the larger of 1e-6 and the basic total's delta.

    Proof: docs/proofs/key-selection.md
    """
    from ..analysis.outward import sum_up
    e_s, d_s = sum_up(e for e, _ in parts.shifts), sum_up(d for _, d in parts.shifts)
    # no budget: ``pld`` at 1e-6, or at the basic total's delta where the shifts reach 1e-6 (a
    # selection designed to use its whole delta), so that it is stated whenever ``basic`` is
    delta = budget.delta if budget is not None else max(1e-6, min(1.0, sum_up([d_s, *(d for _, d in
                                                                                 parts.epsilon_deltas)])))
    inner = Parts(parts.items, parts.epsilon_deltas, parts.mixed)
    # the items' delta at the budget's epsilon less the shift (a budget below the shift: none)
    inner_budget = None if budget is None or budget.epsilon <= e_s else Target(budget.epsilon - e_s, delta)
    out = accountant.composed(inner, inner_budget, at_delta=delta - d_s if delta >= d_s else delta)
    pld = dict(out["pld"])
    if delta >= d_s and pld["epsilon"] is not None and math.isfinite(pld["epsilon"]):   # at delta - D = 0: pure
        pld["epsilon"], pld["delta"] = sum_up([pld["epsilon"], e_s]), delta
    else:
        pld = {"epsilon": None, "delta": delta, "bound": "none: the selection's delta takes the whole delta" if d_s > 0
               else "none: no bound is finite here"}
    if budget is not None:
        at = out["pld"].get("delta_at_budget_epsilon")
        pld["delta_at_budget_epsilon"] = None if at is None else min(1.0, sum_up([at, d_s]))
    basic = {"epsilon": sum_up([out["basic"]["epsilon"], e_s]), "delta": min(1.0, sum_up([out["basic"]["delta"], d_s]))}
    total: dict[str, Any] = {**out, "basic": basic, "pld": pld,
                             "selection": {"epsilon": e_s, "delta": d_s, "statistics": len(parts.shifts)},
                             "budget": None if budget is None else {"epsilon": budget.epsilon, "delta": budget.delta}}
    total.pop("within_budget", None)
    if budget is not None:
        total["within_budget"] = within(basic, pld, budget)
    return total


def _default_fprs() -> tuple[float, ...]:
    from ..analysis.tradeoff import DEFAULT_FPRS
    return DEFAULT_FPRS


def within(basic: dict, pld: dict, budget: Target) -> bool:
    """Whether either bound meets the budget (basic: both sums; PLD: epsilon at the budget's delta)."""
    slack = 1.0 + MEETS_TOLERANCE   # float sums of the parts' float targets
    by_basic = basic["epsilon"] <= budget.epsilon * slack and basic["delta"] <= budget.delta * slack
    return by_basic or (pld["epsilon"] is not None and pld["epsilon"] <= budget.epsilon * slack)


def attack_within(attack: dict, budget: Target) -> bool:
    """Whether an attack readout (the keys of ``total.attack``: ``tpr_at_fpr``, ``mu_gdp``)
    meets a budget in attack terms (``max_tpr`` at ``at_fpr``, ``max_mu``), by
    :meth:`~optnoise.target.Target.admits_attack` with no tolerance: the readout is itself
    a proven upper bound on the attacker, so a pass is proven."""
    tpr = attack["tpr_at_fpr"][f"{budget.at_fpr:g}"] if budget.max_tpr is not None else None
    mu = attack["mu_gdp"] if budget.max_mu is not None else None
    return budget.admits_attack(tpr=tpr, mu=mu, exact=True)


# ------------------------------------------------------------------ the attack readouts
def exact_attack(parts: Parts, fprs: Sequence[float], subject: Subject, at: float = WORDS_FPR) -> dict:
    """The total in attack terms from the exact trade-off curve of the parts' *quantized*
    mechanisms, composed over every combination of their neighbouring pairs
    (:func:`optnoise.analysis.tradeoff_composition.compose_tradeoff`; ``method`` says whether
    exactly or from the dominating lower bound), and the sentence that says it (``subject``
    of the pair named at FPR ``at``)."""
    from ..analysis.tradeoff_composition import compose_tradeoff
    readout = compose_tradeoff(list(parts.items), mixed=None if parts.mixed is None else list(parts.mixed)
                               ).readout(list(fprs))
    return readout.to_json(**subject(readout.worst_pair.get(f"tpr_at_fpr {at:g}", "")))


#: Epsilons of the grid at which the composed privacy profile is read for the attack bound.
ATTACK_GRID = 16


def profile_attack(items: list[tuple[Any, int]], total: dict, fprs: Sequence[float], subject: Subject,
                   shifts: Sequence[tuple[float, float]] = ()) -> dict:
    """The total in attack terms (``total.attack``, the shape of :func:`exact_attack`'s): a
    proven upper bound on the best attacker's TPR at each FPR, fast.

    The exact readout composes the trade-off curves of every pair, which takes minutes on
    channels of a thousand outputs. Here the attacker is bounded from ``(epsilon, delta)``
    guarantees alone (:func:`optnoise.analysis.tradeoff.profile_readout`: every proven point
    is a line below the trade-off curve, so the best line over any set of points is a proven
    bound): the composed privacy profile ``delta(eps)`` of every part
    (:func:`optnoise.analysis.composition.delta_curve`: each item's pairs as one dominating
    pair, PLD-composed with numpy's FFT and a proven allowance
    (:mod:`optnoise.analysis.dense_pld`, no dp_accounting import), and the pure bound; each an
    upper bound; RDP, which helps only at deltas far below what an FPR of 0.001 reads, is
    left out) at :data:`ATTACK_GRID` epsilons from 0 to the pure sum (or twice the total's
    epsilon), the total's own ``basic`` and ``pld`` points, and the pure sum
    ``sum k eps_pure``. For a pure total the pure line alone gives the closed form
    ``min(e^eps FPR, 1 - e^-eps (1 - FPR))``; with the profile it is never looser. The second
    family of lines needs the pairs closed under swapping; it is checked
    (:func:`~optnoise.analysis.tradeoff.swap_closed`). With ``shifts`` (keys found in the
    data, :func:`shifted`) every point of the items' profile is moved by their sums and the
    pure sum is not a bound (the selection has no pure epsilon).
    """
    from ..analysis.composition import delta_curve
    from ..analysis.outward import sum_up
    from ..analysis.tradeoff import profile_readout, swap_closed
    pures = [prof.epsilon_pure for prof, _ in items]
    pure = sum_up(k * Fraction(e) for e, (_, k) in zip(pures, items)) if all(map(math.isfinite, pures)) else math.inf
    basic, pld = total["basic"], total["pld"]
    points = [(basic["epsilon"], basic["delta"])]
    if pld.get("epsilon") is not None:
        points.append((pld["epsilon"], pld["delta"]))
    top = pure if math.isfinite(pure) else 2 * max(e for e, _ in points)
    grid = np.linspace(0.0, min(top, 50.0), ATTACK_GRID)
    # each item's pairs as one dominating pair, no RDP: valid bounds, for the cost of one PLD
    eps, deltas = delta_curve(items, grid, orders=(), max_combinations=1)
    e_s, d_s = sum_up(e for e, _ in shifts), sum_up(d for _, d in shifts)   # (0, 0) without shifts
    points += [(e, d) if not shifts else (sum_up([e, e_s]), min(1.0, sum_up([d, d_s])))
               for e, d in zip(eps.tolist(), deltas.tolist())]
    if shifts:   # the total's own points are shifted already (:func:`shifted`); no pure line
        pure = math.inf
    symmetric = all(swap_closed(prof.neighbourhood) for prof, _ in items)
    readout = profile_readout(points, pure=pure, symmetric=symmetric, fprs=list(fprs))
    out = readout.to_json(**subject(""))
    out["how"] = (f"a proven upper bound, not the exact curve: the best of the lines TPR <= e^eps FPR + delta(eps)"
                  f"{' and TPR <= 1 - e^-eps (1 - delta(eps) - FPR)' if symmetric else ''} over the composed "
                  f"privacy profile at {ATTACK_GRID} epsilons, the total's basic and pld points and the pure sum; "
                  "posterior and mu from the pure sum alone; rounded up")
    return out


# ------------------------------------------------------------------ the pure-sum shortcut
#: The PLD, RDP and basic bounds are skipped when they could lower the pure sum by at most
#: this fraction of it (:func:`pure_total`).
PURE_GAP = 1e-3


def pure_total(items: list[tuple[Any, int]], delta: float, budget: Any) -> dict | None:
    """The total's ``pld`` entry from the pure sum alone, when no other bound can beat it by
    more than :data:`PURE_GAP` of it; else ``None`` (compose as usual).

    Why it is sound and what it gives up. Every part is pure: ``eps_i = epsilon_pure`` is
    finite (exact profiles, rounded outward). The pure sum ``S = sum k_i eps_i`` (rounded up)
    bounds the composition's ``epsilon`` at every ``delta``, and at any ``epsilon >= S`` its
    delta is exactly 0: the reported numbers stay proven bounds whatever is skipped. What the
    skipped bounds (PLD, RDP, basic) could report instead is an upper bound on the true
    ``epsilon(delta)`` of a composition that includes, for each item, any one of its pairs
    in all of its ``k_i`` releases (they take the worst pair combination, or a dominating
    pair). Take for each item the pair of largest loss ``L_i`` with the most ``P``-mass
    ``p_i`` there: the composed loss is ``L = sum k_i L_i`` with probability
    ``P = prod p_i^k_i``, so ``delta(e) >= P (1 - exp(e - L))`` and every such bound is at
    least ``lb = L + ln(1 - delta / P)``. When ``S - lb <= PURE_GAP * S`` they are skipped
    and the entry says by how much at most they could have lowered ``S`` (``skipped``).
    Skipped too when a budget's epsilon is below ``S`` (then the tighter bounds may decide).

    Proof: docs/proofs/pure-sum-shortcut.md
    """
    from ..analysis.outward import sum_up
    pures = [prof.epsilon_pure for prof, _ in items]
    if not all(math.isfinite(e) for e in pures):
        return None
    total = sum_up(k * Fraction(e) for e, (_, k) in zip(pures, items))
    if budget is not None and total > budget.epsilon:
        return None
    top, log_mass = 0.0, 0.0
    for prof, k in items:
        best = max(((ld.losses[0], float(ld.p_mass[ld.losses >= ld.losses[0]].sum()))
                    for ld in (pair.loss_distribution() for pair in prof.pairs) if len(ld.losses)),
                   key=lambda lp: (lp[0], lp[1]), default=(0.0, 0.0))
        if best[1] <= 0:
            return None
        top, log_mass = top + k * float(best[0]), log_mass + k * math.log(best[1])
    if delta > 0 and math.log(delta) >= log_mass:   # delta >= P, in logs: P may be below the float range
        return None
    ratio = math.exp(math.log(delta) - log_mass) if delta > 0 else 0.0
    gap = total - (top + math.log1p(-ratio))
    if gap > PURE_GAP * total:
        return None
    pld: dict[str, Any] = {"epsilon": total, "delta": delta, "bound": "pure",
                           "skipped": {"methods": ["pld", "rdp", "basic"], "could_lower_by_at_most": sum_up([gap, 1e-12]),
                                       "why": "every part is pure: the sum of the parts' pure epsilons bounds the total "
                                              "at every delta; the other bounds cannot go below the loss of the "
                                              "worst pairs' combination, which has probability P >> delta"}}
    if budget is not None:
        pld["delta_at_budget_epsilon"] = 0.0
    return pld


__all__ = ["ATTACK_GRID", "Accountant", "GROUP_FROM", "PURE_GAP", "Parts", "Subject", "attack_within",
           "composition_items", "exact_attack", "profile_attack", "pure_total", "shared", "within"]
