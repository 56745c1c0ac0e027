"""Checks and repair of a solved channel: what HiGHS returns, made to meet the target exactly.

Every returned matrix is clipped to ``>= 0`` and renormalised (rows sum to 1 within
``1e-12``), and the float analysis of its :class:`~optnoise.mechanism.Mechanism` must meet the
target by the one rule (:meth:`~optnoise.analysis.PrivacyProfile.meets`). HiGHS's
feasibility tolerance is absolute (1e-10), so an entry the optimum holds near zero can come
back as 0 beside a neighbour at 1e-10: an infinite ratio. Such a violation is removed (pure
DP) by lifting the entries below their neighbours' ratio and renormalising
(:func:`lift_repair`), or else by mixing with a reference channel (the uniform channel, or a
strictly feasible design when ``unbiased`` is asked for) by the smallest weight found that
restores the target (:func:`mix_repair`). Proof: docs/proofs/quantization-and-repair.md.

Also here: the vectorised screen of a channel against a target (:func:`channel_screen`), the
structural constraints' violations (:func:`constraint_violations`), and the diagnosis of an
infeasible set of constraints (:func:`diagnose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..analysis import privacy_profile
from ..analysis.floating import RATIO_TOLERANCE
from ..errors import DesignError, InvalidParameterError
from ..neighbourhood import InputPairs
from ..pmf import Channel
from ..search import boundary, first_passing
from ..target import Target
from .channel_model import ChannelProblem, build_model, solve_model_lp
from .channel_pdp import solve_pdp
from .request import CONSTRAINTS
from .solver import Infeasible


#: Absolute tolerance within which every structural constraint holds on a returned matrix
#: (probabilities; for ``unbiased`` the tolerance is on the row mean, times ``max(1, n)``).
CONSTRAINT_TOLERANCE = 1e-9



# ============================================================== checks and repair
def clean_channel(x: np.ndarray, size: int) -> np.ndarray:
    """Clip to ``>= 0``, flush subnormals, renormalise rows (sums within ~1e-15 of 1)."""
    P = np.clip(np.asarray(x[: size * size], float).reshape(size, size), 0.0, None)
    P[P < 1e-300] = 0.0
    return P / P.sum(axis=1, keepdims=True)



def meets_on_pairs(P: np.ndarray, pairs: Sequence[tuple[int, int]], target: Target) -> bool:
    """The one rule: the float analysis of ``Channel(P)`` under the directed pairs meets ``target``."""
    return privacy_profile(Channel(P), InputPairs(tuple(pairs), directed=True)).meets(target)



def channel_screen(pairs: Sequence[tuple[int, int]] | InputPairs, target: Target,
                   n_inputs: int | None = None) -> Callable[[np.ndarray | Channel], bool]:
    """A vectorised twin of :meth:`~optnoise.analysis.PrivacyProfile.meets` for channels.

    The same formulas as :class:`~optnoise.analysis.floating.FloatPair` (largest log ratio;
    hockey-stick; PDP mass with the ratio tolerance) judged by the same rule
    (:meth:`~optnoise.target.Target.admits`, float values), on all pairs at once (in blocks of about a
    million entries), instead of one pair object per ordered pair: per record at ``n = 100``
    (10,100 pairs) a check takes milliseconds instead of half a second. For searches only
    (calibration, repair weights); results are confirmed by the rule itself.
    """
    if isinstance(pairs, InputPairs):
        if n_inputs is None:
            raise InvalidParameterError("n_inputs", None, "the number of inputs, to expand InputPairs")
        pairs = pairs.ordered(n_inputs)
    pa = np.array([p[0] for p in pairs], dtype=np.int64)
    pb = np.array([p[1] for p in pairs], dtype=np.int64)
    eps, dlt, notion = target.epsilon, target.delta, target.notion
    e = math.exp(eps)

    def worst(P: np.ndarray, lo: int, hi: int) -> float:
        A, B = P[pa[lo:hi]], P[pb[lo:hi]]
        pos = A > 0
        if dlt == 0:
            if np.any(pos & (B == 0)):
                return math.inf
            with np.errstate(divide="ignore"):
                return float(np.max(np.log(A[pos] / B[pos]), initial=0.0))
        if notion == "dp":
            excess = np.where(B == 0, A, A - e * B)
            return float(np.max(np.sum(np.where(excess > 0, excess, 0.0), axis=1)))
        viol = pos & ((A > e * B * (1.0 + RATIO_TOLERANCE)) | (B == 0))
        return float(np.max(np.sum(np.where(viol, A, 0.0), axis=1)))

    def ok(P: np.ndarray | Channel) -> bool:
        M = P.matrix if isinstance(P, Channel) else np.asarray(P, float)
        step = max(1, (1 << 20) // max(1, M.shape[1]))
        # worst() is the largest log ratio (pure) or the largest delta of the notion: the rule itself
        return all(target.admits(v, v, exact=False) for v in (worst(M, lo, lo + step)
                                                              for lo in range(0, pa.size, step)))

    return ok



def lift_repair(P: np.ndarray, pa: np.ndarray, pb: np.ndarray, epsilon: float,
                 fast_ok: Callable[[np.ndarray], bool], rounds: int = 20) -> np.ndarray | None:
    """Pure DP: lift entries that sit below their neighbours' ``P[a, y] / e`` (solver tolerance
    is absolute, so an entry the exact optimum holds at ``1e-12`` can come back as 0 beside a
    neighbour at ``1e-10``: an infinite ratio), then renormalise the rows; repeat until the
    fast check passes. Returns ``None`` if it does not within ``rounds``.

    Lifting ``G[b, y]`` to ``max(G[b, y], G[a, y] / e'')`` over every pair until nothing
    changes gives the pointwise-smallest ``G >= P`` meeting the ratios at ``e'' =
    e^eps (1 - 5e-10)``: raising ``G[b, y]`` only helps the constraints in which it is the
    smaller side and can break only those in which it is the larger one, which the next sweep
    repairs by raising that neighbour; every value stays below its column's maximum, so the
    sweeps stop (within the graph's diameter). Renormalising row ``a`` by ``1 + tau_a`` (the
    mass it gained, ~1e-10) moves each ratio by a factor within ``1 +- tau``, which the margin
    ``e'' < e`` absorbs; the next round fixes any rest. Unlike mixing with the uniform
    channel, it moves only the mass the solver's tolerance misplaced, so the cost barely changes.

    Proof: docs/proofs/quantization-and-repair.md.
    """
    e2 = math.exp(epsilon) * (1.0 - 5e-10)
    G = P.copy()
    for _ in range(rounds):
        while True:
            need = np.zeros_like(G)
            np.maximum.at(need, pb, G[pa] / e2)
            lifted = np.maximum(G, need)
            if np.array_equal(lifted, G):
                break
            G = lifted
        G = G / G.sum(axis=1, keepdims=True)
        if fast_ok(G):
            return G
    return None



def mix_repair(P: np.ndarray, reference: Callable[[], np.ndarray], fast_ok: Callable[[np.ndarray], bool],
                ok: Callable[[np.ndarray], bool]) -> tuple[np.ndarray, float]:
    """Smallest weight ``lam`` found with ``ok((1 - lam) P + lam R)``.

    For DP the feasible channels form a convex set (pure DP: linear rows; approximate DP:
    the hockey-stick divergence is jointly convex), so with a reference ``R`` that meets the
    target with slack the good weights form an interval ``[lam*, 1]``: ``lam*`` is bracketed
    by doubling from ``1e-12`` and narrowed by bisection on the fast check, then confirmed
    (doubling again if needed) by the authoritative ``ok``. Linear structural constraints
    hold for the mixture when they hold for ``P`` and ``R``. The caller has checked that
    ``P`` itself fails ``ok``.

    Proof: docs/proofs/quantization-and-repair.md.
    """
    R = reference()

    def mix(lam: float) -> np.ndarray:
        G = (1.0 - lam) * P + lam * R
        return G / G.sum(axis=1, keepdims=True)

    screened = first_passing(lambda lam: fast_ok(mix(lam)), 1e-12, 1.0, cap=True)
    hi = 1.0
    if screened is not None:
        lo, hi = screened
        hi = max(boundary(lambda lam: fast_ok(mix(lam)), lo, hi, ok_side="upper", iterations=20), 1e-12)
    confirmed = first_passing(lambda lam: ok(mix(lam)), hi, 1.0, cap=True)
    if confirmed is None:
        raise DesignError("the solver's channel violates the privacy target and could not be repaired")
    return mix(confirmed[1]), confirmed[1]



def constraint_violations(P: np.ndarray, constraints: Iterable[str]) -> dict[str, float]:
    """Largest violation of each structural constraint on ``P`` (0 when it holds exactly).

    Differences of probabilities, except ``unbiased``: ``max_q |sum_y y P[q, y] - q|``.
    """
    P = np.asarray(P, float)
    size = P.shape[0]
    out: dict[str, float] = {}
    for name in constraints:
        if name == "row-monotone":
            v = 0.0
            for q in range(size):
                right = np.diff(P[q, q:])        # must be <= 0
                left = -np.diff(P[q, : q + 1])   # P[q, y-1] - P[q, y] <= 0
                v = max(v, float(np.max(right, initial=0.0)), float(np.max(left, initial=0.0)))
        elif name == "column-monotone":
            v = constraint_violations(P.T, ["row-monotone"])["row-monotone"]
        elif name == "fair":
            d = np.diag(P)
            v = float(d.max() - d.min())
        elif name == "weak-honest":
            v = float(np.max(P - np.diag(P)[:, None]))
        elif name == "unbiased":
            v = float(np.max(np.abs(P @ np.arange(size) - np.arange(size))))
        elif name == "circulant":
            q = np.arange(size)
            circ = P[0, (q[None, :] - q[:, None]) % size]
            v = float(np.max(np.abs(P - circ)))
        else:
            raise InvalidParameterError("constraints", name, "any of " + ", ".join(CONSTRAINTS))
        out[name] = max(v, 0.0)
    return out



def reference_channel(pb: ChannelProblem) -> np.ndarray:
    """A channel meeting the target with slack and every structural constraint: the same
    design at half the delta (or half the epsilon when delta = 0)."""
    half = pb.replace(epsilon=pb.epsilon / (2 if pb.delta == 0 else 1), delta=pb.delta / 2)
    try:
        if pb.notion == "pdp" and pb.delta > 0:
            x = solve_pdp(half).x
        else:
            x = solve_model_lp(build_model(half), pb.time_limit)[0]
    except Infeasible:
        raise DesignError("the solver's channel violates the privacy target within solver tolerance, and no "
                          "strictly feasible channel with these constraints exists to repair it") from None
    return clean_channel(x, pb.size)



def feasible(pb: ChannelProblem, cons: tuple[str, ...]) -> bool:
    trial = pb.replace(worst=False, constraints=cons)
    try:
        if pb.notion == "pdp" and pb.delta > 0:
            solve_pdp(trial)
        else:
            solve_model_lp(build_model(trial), pb.time_limit)
    except Infeasible:
        return False
    return True



def diagnose(pb: ChannelProblem) -> str:
    """Name the structural constraint(s) that make the design infeasible.

    The uniform channel meets every privacy target and every constraint except
    ``unbiased``, so infeasibility always involves ``unbiased``. Try ``unbiased`` alone,
    then with each other constraint.
    """
    target = f"{pb.target.describe()}, {len(pb.pairs)} ordered pairs"
    if "unbiased" in pb.constraints and not feasible(pb, ("unbiased",)):
        n = pb.size - 1
        pairs = set(pb.pairs)
        why = ""
        if pb.delta == 0:
            why = (": an unbiased channel with outputs in {0..n} must release 0 for answer 0 and n for answer "
                   "n with probability 1, and a deterministic row has infinite epsilon against any neighbour "
                   "whose row differs")
        elif (0, n) in pairs or (n, 0) in pairs:
            why = (": rows 0 and n of an unbiased channel on {0..n} are point masses at 0 and n, and they are "
                   "neighbours here (delta_DP = 1)")
        elif ((1, 0) in pairs or (n - 1, n) in pairs) and pb.delta < 1.0 / n:
            why = (f": row 0 is the point mass at 0, so the pair (1, 0) needs P[1, 0] >= 1 - delta and the mean "
                   f"of row 1 is at most n delta = {n * pb.delta:g} < 1")
        return f"infeasible design: constraint 'unbiased' cannot hold under {target}{why}"
    others = [c for c in pb.constraints if c != "unbiased"]
    culprits = [c for c in others if not feasible(pb, tuple(sorted({"unbiased", c})))]
    if culprits:
        return (f"infeasible design: constraint 'unbiased' together with {', '.join(repr(c) for c in culprits)} "
                f"cannot hold under {target} (each alone can)")
    return (f"infeasible design: the constraints {', '.join(repr(c) for c in pb.constraints)} cannot all hold "
            f"under {target} (every pair of them can)")
