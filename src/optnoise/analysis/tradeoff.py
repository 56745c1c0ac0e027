"""What the best attacker can learn: the exact trade-off curve of a mechanism (f-DP).

**The attacker.** One ordered neighbouring pair ``(p, p')`` of output distributions: the
record's value is ``x`` (outputs drawn from ``p``) or ``x'`` (from ``p'``). An attacker who
knows everything else sees one output and says "x" or "x'". Its *false-positive rate*
(FPR, ``alpha``) is the probability of saying "x" when the value was ``x'``; its
*true-positive rate* (TPR) the probability of saying "x" when it was ``x``. The trade-off
function of the pair (Dong, Roth & Su 2022, Def. 2.1, with ``P = p'``, ``Q = p``) is
``T(alpha) = 1 - TPR*(alpha)``, the smallest type II error of any (randomised) test at
type I error ``alpha``.

**The exact curve of a discrete pair** (Neyman-Pearson lemma, DRS Sec. 2.1). The most
powerful test says "x" on the outputs of largest likelihood ratio ``p(y) / p'(y)`` first
and randomises on the one output where the FPR budget runs out. Sort the outputs by
decreasing ratio (outputs with ``p' = 0 < p`` first, ratio infinite; outputs with
``p = 0 < p'`` last); the ROC curve ``TPR*(alpha)`` is the piecewise linear, concave curve
through the vertices ``(F_j, S_j)``, ``F_j`` and ``S_j`` the masses of ``p'`` and ``p`` on the
first ``j`` outputs, from ``(0, 0)`` to ``(1, 1)``. With integer weights over a denominator
``D`` every vertex is a pair of integers over ``D``: rational breakpoints, computed exactly.

**The mechanism's curve** is the pointwise *lower envelope* ``T(alpha) = min over ordered
pairs of T_pair(alpha)`` (the *upper* envelope of the ROC curves): for the pair the data
actually present, no test does better than its own curve, and the worst pair at each
``alpha`` attains the envelope. It is the tight guarantee, and it is not convex in general.
Its convex hull is what the ``(epsilon, delta)`` profile says: by Prop. 2.12 of DRS
``delta(eps) = sup_alpha 1 - e^eps alpha - T(alpha)`` is the convex conjugate of ``T``,
which sees only the hull (``max over pairs`` of each pair's ``delta`` is the conjugate of
the envelope and of its hull alike). The hull is valid but weaker (it lets the attacker
mix tests of *different* pairs, which the fixed data do not allow). For a symmetric
neighbourhood the ordered pairs come in swapped couples, ``T_(p',p) = T_(p,p')^-1``, so the
envelope is symmetric; for a directed one its symmetric version (the attacker may also
test ``x'`` against ``x``) is ``min(T, T^-1)``.

**Readouts** (all maxima over the ordered pairs):

* ``tpr_at_fpr``: ``1 - T(alpha)`` at given FPRs;
* ``advantage``: ``max_alpha TPR - FPR``, the total variation distance, ``= delta_DP(0)``;
* ``mu_gdp``: the smallest ``mu`` with ``T >= G_mu``, ``G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)``
  (DRS Def. 2.7). ``G_mu`` is convex and ``T_pair`` linear between vertices, so
  ``G_mu - T_pair`` is convex there and largest at a vertex: ``T_pair >= G_mu`` iff it holds
  at every vertex, i.e. ``mu >= Phi^-1(S_j) - Phi^-1(F_j)`` for all ``j``. So
  ``mu_gdp = max_j Phi^-1(S_j) - Phi^-1(F_j)`` (infinite with a vertex ``(0, S > 0)`` or
  ``(F < 1, 1)``);
* ``posterior``: with prior odds ``pi : 1`` for ``x`` against ``x'``, the largest posterior
  probability of ``x`` over the outputs, ``pi r / (1 + pi r)`` with ``r`` the largest
  likelihood ratio (1 when an output is impossible under ``x'``).

**Exact mode** works on integer weights (:mod:`~optnoise.analysis.pairs`, the one pair
builder); outputs are sorted by float keys and every run of keys within ``8 * TAU`` of each
other (:data:`~optnoise.analysis.exact_fast.TAU`: the keys are within ``3 * 2^-53`` of the
ratios) is sorted again by exact rational comparison, so the order, hence every vertex,
is exact. Readouts are rationals rounded *up* to a float (the attacker's power is never
understated); ``Phi^-1`` is evaluated at 300 bits (Newton's method on ``ln Phi``,
converged far below ``2^-250``), a margin of ``1e-60`` is added and the result rounded up.
**Float mode** is vectorised numpy on float masses (as the float profile).

**Composition** of ``K`` releases: :mod:`~optnoise.analysis.tradeoff_composition`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, IntegerPMF
from ..target import check_odds
from .exact import float_up
from .exact_fast import TAU, IntegerPair, Weights
from .floating import FloatPair
from .pairs import common_denominator, default_neighbourhood, integer_form, integer_form_fits, pair_builders
from .readout import (
    DEFAULT_FPRS, PROBIT_MARGIN, AttackReadout, attack_words, check_fpr, dp_tradeoff, gdp_delta, gdp_tradeoff,
    parse_odds, percent_up, probit, profile_readout, pure_epsilon_for_mu,
)

if TYPE_CHECKING:
    from ..target import Target

#: The false-positive rates reported by default.
_INF = math.inf  # the likelihood ratio of an output impossible under x'


# ------------------------------------------------------------------ one pair
@dataclass(frozen=True, eq=False)
class PairCurve:
    """The ROC curve of one ordered pair: vertices ``(fpr[j], tpr[j])``, from ``(0, 0)`` to
    ``(1, 1)``, in order of decreasing likelihood ratio.

    Exact (``denominator`` given): ``fpr`` and ``tpr`` are integer arrays (``uint64`` or
    Python ints) and the vertices are ``fpr / denominator``, ``tpr / denominator``. Float:
    float arrays. ``top_ratio`` is the largest finite likelihood ratio (``None`` if no
    output has both masses positive); ``infinite``: some output has ``p > 0 = p'``. Float
    curves may carry ``tails``, ``(1 - fpr, 1 - tpr)`` summed from the other end (accurate
    where ``tpr`` is within rounding of 1).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    denominator: int | None
    label: str = ""
    top_ratio: Fraction | float | None = None
    infinite: bool = False
    tails: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def exact(self) -> bool:
        return self.denominator is not None

    def _value(self, v) -> Fraction | float:
        return Fraction(int(v), self.denominator) if self.exact else float(v)  # type: ignore[arg-type]

    def tpr_at(self, alpha: float | Fraction) -> Fraction | float:
        """The most powerful test's TPR at FPR ``alpha`` (a rational in exact mode)."""
        if self.exact:
            a = Fraction(alpha) * self.denominator
            j = int(np.searchsorted(self.fpr, math.floor(a), side="right"))   # fpr[j-1] <= a < fpr[j]
            lo_f, lo_t = int(self.fpr[j - 1]), int(self.tpr[j - 1])
            if j == self.fpr.size or lo_f == a:
                return Fraction(lo_t, self.denominator)
            hi_f, hi_t = int(self.fpr[j]), int(self.tpr[j])
            return (lo_t + (a - lo_f) * Fraction(hi_t - lo_t, hi_f - lo_f)) / self.denominator
        f, t = self.points()
        return float(np.interp(float(alpha), f, t))

    def advantage(self) -> Fraction | float:
        """``max_alpha TPR - FPR`` (total variation distance of the pair)."""
        if self.exact:
            gap = self.tpr.astype(object) - self.fpr.astype(object)
            return Fraction(int(max(gap)), self.denominator)  # type: ignore[arg-type]
        return float(np.max(self.tpr - self.fpr))

    def delta(self, e: float | Fraction) -> Fraction | float:
        """``sup_alpha 1 - e alpha - T(alpha) = max_j S_j - e F_j`` (DRS Prop. 2.12): the
        hockey-stick ``delta`` of the pair at ``e^eps = e``, from the curve alone."""
        if self.exact:
            e = Fraction(e)
            vals = self.tpr.astype(object) * e.denominator - self.fpr.astype(object) * e.numerator
            return Fraction(int(max(vals)), e.denominator * self.denominator)  # type: ignore[arg-type]
        return float(np.max(self.tpr - float(e) * self.fpr))

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """Float vertices with increasing FPR (one vertex per FPR: the highest TPR)."""
        if self.exact:
            f, t = _float_ratio(self.fpr, self.denominator), _float_ratio(self.tpr, self.denominator)  # type: ignore
        else:
            f, t = np.asarray(self.fpr, float), np.asarray(self.tpr, float)
        last = np.append(f[1:] != f[:-1], True)
        return f[last], t[last]

    def posterior(self, odds: Fraction | float) -> Fraction | float:
        """Largest posterior probability of ``x`` with prior odds ``odds : 1``."""
        if self.infinite:
            return Fraction(1) if self.exact else 1.0
        if self.top_ratio is None:
            return Fraction(odds) / (1 + Fraction(odds)) if self.exact else float(odds) / (1.0 + float(odds))
        r = self.top_ratio
        return odds * r / (1 + odds * r)  # type: ignore[operator]

    def mu_terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(estimate, j, kind)`` of the vertices' ``Phi^-1(S_j) - Phi^-1(F_j)`` in floats;
        ``None`` when the curve admits no finite ``mu`` (module docstring): also whenever an
        output is impossible under ``x'`` (``infinite``), whose vertex ``(0, S > 0)`` a float
        curve may not show (a dominating curve's ``1 - delta`` rounds to 1 for a tiny mass)."""
        if self.infinite:
            return None
        if self.exact:
            # rates are masses over the pair's own totals (exactly 1 for weights over their
            # sum, as sampled; the exact binary values of float masses may miss 1 by an ulp)
            top_f, top_t = int(self.fpr[-1]), int(self.tpr[-1])
            f, t = self.fpr, self.tpr
            if np.any(((f == 0) & (t > 0)).astype(bool)) or np.any(((t >= top_t) & (f < top_f)).astype(bool)):
                return None
            idx = np.flatnonzero(((f > 0) & (f < top_f)).astype(bool))
            zt, wide_t = _probit_estimates(t[idx], top_t)
            zf, wide_f = _probit_estimates(f[idx], top_f)
            return zt - zf, idx, (wide_t | wide_f).astype(np.float64)
        from scipy.special import ndtri
        f, t = np.asarray(self.fpr, float), np.asarray(self.tpr, float)
        ft, tt = self.tails if self.tails is not None else (1.0 - f, 1.0 - t)
        if np.any((f <= 0) & (t > 0)) or np.any((tt <= 0) & (ft > 0)):
            return None
        idx = np.flatnonzero((f > 0) & (ft > 0))

        def probit(x: np.ndarray, tail: np.ndarray) -> np.ndarray:
            return np.where(x <= 0.5, ndtri(x), -ndtri(tail))

        return probit(t[idx], tt[idx]) - probit(f[idx], ft[idx]), idx, np.zeros(idx.size)

    def mu_exact(self, j: int) -> Fraction:
        """``Phi^-1(S_j) - Phi^-1(F_j)`` at :data:`PROBIT_BITS` bits, as a rational (rates over
        the pair's totals, as :meth:`mu_terms`)."""
        return (probit(Fraction(int(self.tpr[j]), int(self.tpr[-1])))
                - probit(Fraction(int(self.fpr[j]), int(self.fpr[-1]))))


def _float_ratio(num: np.ndarray, den: int) -> np.ndarray:
    """Correctly rounded floats of ``num / den`` (Python integer division per element when
    the integers are beyond ``uint64`` or the denominator beyond a float)."""
    if num.dtype != object and den < 1 << 53:
        return num.astype(np.float64) / float(den)
    return np.array([int(v) / den for v in num], dtype=np.float64)


def _probit_estimates(num: np.ndarray, den: int) -> tuple[np.ndarray, np.ndarray]:
    """Float estimates of ``Phi^-1(num / den)`` (both tails accurate: ``1 - x`` is formed
    exactly) and where they came from the tail's asymptote instead (the float of ``x`` or
    ``1 - x`` below ``1e-300``): ``z^2 = 2L - ln(2L) - ln(2 pi)``, ``L = -ln x``, within
    ``1e-2`` there. The exact values are computed for every estimate near the maximum."""
    from scipy.special import ndtri
    if num.dtype != object and den < 1 << 53:
        low = num.astype(np.float64) / float(den)
        high = (np.uint64(den) - num.astype(np.uint64)).astype(np.float64) / float(den)
    else:
        ints = [int(v) for v in num]
        low = np.array([n / den for n in ints], dtype=np.float64)
        high = np.array([(den - n) / den for n in ints], dtype=np.float64)
    lower = low <= 0.5
    small = np.where(lower, low, high)
    z = np.where(lower, 1.0, -1.0) * ndtri(np.maximum(small, 1e-300))
    wide = small < 1e-300
    for i in np.flatnonzero(wide):
        n = int(num[i]) if lower[i] else den - int(num[i])
        big_l = math.log(den) - math.log(n)
        z[i] = (-1.0 if lower[i] else 1.0) * math.sqrt(max(2 * big_l - math.log(2 * big_l) - math.log(2 * math.pi),
                                                             0.0))
    return z, wide


# ------------------------------------------------------------------ building pair curves
def _ordered(keys: np.ndarray, exact_ratio) -> np.ndarray:
    """Indices by decreasing likelihood ratio: float keys, then every run of keys within
    ``8 TAU`` of its neighbour sorted again by ``exact_ratio(i)`` (module docstring)."""
    order = np.argsort(-keys, kind="stable")
    if exact_ratio is None:
        return order
    ks = keys[order]
    finite = np.isfinite(ks) & (ks > 0)
    close = finite[:-1] & finite[1:] & (ks[:-1] <= ks[1:] * (1.0 + 8 * TAU))
    if not close.any():
        return order
    edges = np.diff(np.concatenate(([0], close.astype(np.int8), [0])))
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
        run = order[start:stop + 1]
        order[start:stop + 1] = sorted(run, key=exact_ratio, reverse=True)
    return order


def curve_from_weights(p: np.ndarray, q: np.ndarray, denominator: int, label: str = "") -> PairCurve:
    """The exact ROC curve of the pair ``(p / D, q / D)`` with integer weights ``p``, ``q``.

    Outputs of equal ratio are collinear on the curve, so their order does not matter; only
    the exact order of *different* ratios does, which :func:`_ordered` guarantees.
    """
    pw, pf = _words(p)
    qw, qf = _words(q)
    pos = (pw > 0).astype(bool) | (qw > 0).astype(bool)
    pw, qw, pf, qf = pw[pos], qw[pos], pf[pos], qf[pos]
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = pf / qf
    order = _ordered(keys, lambda i: Fraction(int(pw[i]), int(qw[i])) if qw[i] else _INF)
    pw, qw = pw[order], qw[order]
    big = pw.dtype == object or qw.dtype == object or denominator >= 1 << 62
    zero = np.zeros(1, dtype=object if big else np.uint64)
    tpr = np.concatenate((zero, np.cumsum(pw.astype(object) if big else pw, dtype=object if big else np.uint64)))
    fpr = np.concatenate((zero, np.cumsum(qw.astype(object) if big else qw, dtype=object if big else np.uint64)))
    return _closed(fpr, tpr, denominator, label, pw, qw)


def _words(w: np.ndarray | Weights) -> tuple[np.ndarray, np.ndarray]:
    """Integer weights and their floats (correctly rounded; Weights carry both)."""
    if isinstance(w, Weights):
        return w.words, w.floats
    arr = np.asarray(w)
    return arr, (np.array([float(v) for v in arr]) if arr.dtype == object else arr.astype(np.float64))


def _closed(fpr: np.ndarray, tpr: np.ndarray, denominator: int, label: str, pw, qw) -> PairCurve:
    """The curve of sorted cells, with its top ratio. It ends at the pair's totals (1 for
    masses that sum to 1; the exact binary values of float masses may miss 1 by an ulp)."""
    infinite = bool(len(pw)) and int(qw[0]) == 0 and int(pw[0]) > 0   # sorted: impossible-under-x' outputs first
    top = None
    for i in range(len(pw)):
        if int(qw[i]) > 0:
            top = Fraction(int(pw[i]), int(qw[i])) if int(pw[i]) > 0 else None
            break
    return PairCurve(fpr, tpr, denominator, label, top, infinite)


def curve_from_floats(p: np.ndarray, q: np.ndarray, label: str = "") -> PairCurve:
    """The ROC curve of a float pair, vectorised."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    pos = (p > 0) | (q > 0)
    p, q = p[pos], q[pos]
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = p / q
    order = np.argsort(-keys, kind="stable")
    p, q = p[order], q[order]
    tpr = np.minimum(np.concatenate(([0.0], np.cumsum(p))), 1.0)
    fpr = np.minimum(np.concatenate(([0.0], np.cumsum(q))), 1.0)
    tail_t = np.concatenate((np.cumsum(p[::-1])[::-1], [0.0]))  # the masses beyond each vertex
    tail_f = np.concatenate((np.cumsum(q[::-1])[::-1], [0.0]))
    if fpr[-1] < 1.0 or tpr[-1] < 1.0:
        fpr, tpr = np.append(fpr, 1.0), np.append(tpr, 1.0)
        tail_f, tail_t = np.append(tail_f, 0.0), np.append(tail_t, 0.0)
    finite = np.flatnonzero((q > 0) & (p > 0))
    top = float(p[finite[0]] / q[finite[0]]) if finite.size else None
    return PairCurve(fpr, tpr, None, label, top, bool(p.size and q[0] == 0 and p[0] > 0), (tail_f, tail_t))


def curve_from_groups(groups: "Groups", label: str = "") -> PairCurve:
    """The exact ROC curve of a pair given as likelihood-ratio groups (sorted by decreasing
    ratio: :class:`Groups`)."""
    pw = np.array(groups.p, dtype=object)
    qw = np.array(groups.q, dtype=object)
    zero = np.zeros(1, dtype=object)
    return _closed(np.concatenate((zero, np.cumsum(qw))) if qw.size else zero,
                   np.concatenate((zero, np.cumsum(pw))) if pw.size else zero, groups.denominator, label, pw, qw)


@dataclass(frozen=True, eq=False)
class Groups:
    """A pair's privacy loss distribution, exactly: integer masses ``p[i] / denominator``
    (under ``x``) and ``q[i] / denominator`` (under ``x'``) of the outputs of likelihood
    ratio ``p[i] / q[i]``, one entry per distinct ratio, in decreasing order of ratio
    (``q = 0``: ratio infinite, first; ``p = 0``: ratio 0, last)."""

    p: tuple[int, ...]
    q: tuple[int, ...]
    denominator: int

    @property
    def key(self) -> tuple:
        return (self.denominator, self.p, self.q)


def groups_of(curve: PairCurve) -> Groups:
    """The pair's :class:`Groups` from its exact curve (the segments between vertices,
    consecutive segments of equal slope merged)."""
    if not curve.exact:
        raise InvalidParameterError("curve", curve.label, "an exact curve")
    f, t = curve.fpr.astype(object), curve.tpr.astype(object)
    ps: list[int] = []
    qs: list[int] = []
    for k in range(1, f.size):
        dp, dq = int(t[k] - t[k - 1]), int(f[k] - f[k - 1])
        if dp == 0 and dq == 0:
            continue
        if ps and ps[-1] * dq == dp * qs[-1]:  # the same ratio (infinite and zero ratios included)
            ps[-1] += dp
            qs[-1] += dq
        else:
            ps.append(dp)
            qs.append(dq)
    return Groups(tuple(ps), tuple(qs), int(curve.denominator))  # type: ignore[arg-type]


def _pair_curve(pair, exact: bool) -> PairCurve:
    """The curve of one pair in any of the library's pair forms (:class:`PairMasses`, the
    profile's pairs: integer, Fraction, float or lazy)."""
    build = getattr(pair, "build", None)
    if build is not None:  # a LazyPair
        return _pair_curve(build(), exact)
    label = getattr(pair, "label", "")
    if isinstance(pair, IntegerPair):
        return curve_from_weights(pair.p, pair.q, pair.denominator, label)
    den = getattr(pair, "denominator", None)
    if den is not None:
        return curve_from_weights(pair.p, pair.q, den, label)
    p, q = pair.p, pair.q
    is_fraction = len(p) > 0 and isinstance(p[0], Fraction)
    if not exact and not is_fraction:
        return curve_from_floats(np.asarray(p, float), np.asarray(q, float), label)
    if isinstance(pair, FloatPair):  # it keeps the outputs with p > 0 only: the rest is p' on ratio 0
        missing = max(0.0, 1.0 - math.fsum(np.asarray(q, float)))
        if missing > 1e-12:
            p, q = np.append(np.asarray(p, float), 0.0), np.append(np.asarray(q, float), missing)
    if is_fraction:
        arr = np.empty(2 * len(p), dtype=object)
        arr[:] = list(p) + list(q)
        got = common_denominator(arr, np.zeros(arr.shape))
    else:
        got = common_denominator(None, np.concatenate((np.asarray(p, float), np.asarray(q, float))))
    if got is not None:
        w, d = got
        return curve_from_weights(w[:len(p)], w[len(p):], d, label)
    cells = [(Fraction(pi), Fraction(qi)) for pi, qi in zip(p, q) if pi or qi]  # beyond 2^1000 bits: Fractions
    den = math.lcm(*{v.denominator for c in cells for v in c})
    cells.sort(key=lambda c: _INF if c[1] == 0 else c[0] / c[1], reverse=True)
    return curve_from_groups(Groups(tuple(int(a * den) for a, _ in cells), tuple(int(b * den) for _, b in cells),
                                    den), label)


@dataclass(frozen=True, eq=False)
class TradeOff:
    """The trade-off curve of a mechanism: the envelope of its pairs' curves.

    ``symmetric``: the neighbourhood is closed under swapping (the envelope is then
    symmetric). ``method``: ``"exact"``, ``"float"``, ``"exact composition"`` or
    ``"dominating"`` (:class:`AttackReadout`). ``pure_ratio`` is ``e^eps_pure`` as the
    largest likelihood ratio when known exactly (compositions keep the posterior exact).
    """

    curves: tuple[PairCurve, ...]
    symmetric: bool = True
    method: str = "float"

    def __post_init__(self) -> None:
        if not self.curves:
            raise InvalidParameterError("curves", (), "at least one neighbouring pair")

    @property
    def exact(self) -> bool:
        return self.method in ("exact", "exact composition")

    def _up(self, value: Fraction | float) -> float:
        return float_up(value) if isinstance(value, Fraction) else float(value)

    def tpr(self, alpha: float) -> tuple[float, str]:
        """The largest TPR at FPR ``alpha`` over the pairs (rounded up) and a pair attaining it."""
        a = check_fpr(alpha)
        best = max(self.curves, key=lambda c: c.tpr_at(Fraction(a) if c.exact else a))
        return self._up(best.tpr_at(Fraction(a) if best.exact else a)), best.label

    def advantage(self) -> tuple[float, str]:
        best = max(self.curves, key=lambda c: c.advantage())
        return self._up(best.advantage()), best.label

    def posterior(self, prior_odds: float = 1.0) -> tuple[float, str]:
        odds = check_odds(prior_odds)
        best = max(self.curves, key=lambda c: c.posterior(Fraction(odds) if c.exact else odds))
        return self._up(best.posterior(Fraction(odds) if best.exact else odds)), best.label

    def mu_gdp(self) -> tuple[float, str]:
        """The smallest ``mu`` with ``T >= G_mu`` (module docstring), rounded up when exact."""
        terms = []
        for c in self.curves:
            got = c.mu_terms()
            if got is None:
                return math.inf, c.label
            terms.append(got)
        est = [float(np.max(z)) if z.size else -math.inf for z, _, _ in terms]
        if not self.exact:
            k = int(np.argmax(est))
            return max(0.0, est[k]), self.curves[k].label
        top = max(est)
        best, label = Fraction(0), self.curves[0].label
        # estimates are within ~1e-12 of the values, or 1e-2 where they are asymptotic
        asymptotic = any(bool(np.any(w > 0)) for _, _, w in terms)
        slack = 0.1 if asymptotic else 1e-9 * (1.0 + abs(top))
        for c, (z, idx, _) in zip(self.curves, terms):
            for j in idx[z >= top - slack]:
                v = c.mu_exact(int(j))
                if v > best:
                    best, label = v, c.label
        return (float_up(best + PROBIT_MARGIN) if best > 0 else 0.0), label

    def readout(self, fprs: Iterable[float] = DEFAULT_FPRS, prior_odds: float = 1.0) -> AttackReadout:
        """All readouts at once (:class:`AttackReadout`)."""
        tprs, worst = {}, {}
        for a in fprs:
            a = check_fpr(a)
            tprs[a], worst[f"tpr_at_fpr {a:g}"] = self.tpr(a)
        adv, worst["advantage"] = self.advantage()
        mu, worst["mu_gdp"] = self.mu_gdp()
        post, worst["posterior"] = self.posterior(prior_odds)
        return AttackReadout(tprs, adv, mu, post, check_odds(prior_odds), self.exact, self.method, worst)

    def tradeoff(self, alphas: np.ndarray) -> np.ndarray:
        """``T(alpha)`` of the envelope at many FPRs (floats, vectorised; for plots)."""
        a = np.asarray(alphas, float)
        best = np.zeros(a.shape)
        for c in self.curves:
            f, t = c.points()
            best = np.maximum(best, np.interp(a, f, t))
        return 1.0 - best

    def meets(self, target: "Target") -> bool:
        """Whether the curve meets an attack target (``target.notion == "attack"``), by the
        one rule :meth:`optnoise.target.Target.admits` (float curves get its tolerance)."""
        if target.notion != "attack":
            raise InvalidParameterError("target", target.describe(), "an attack target (notion 'attack')")
        tpr = None if target.max_tpr is None else self.tpr(target.at_fpr)[0]  # type: ignore[arg-type]
        mu = None if target.max_mu is None else self.mu_gdp()[0]
        return target.admits_attack(tpr=tpr, mu=mu, exact=self.exact)


def is_symmetric(nb: Neighbourhood | InputPairs | None) -> bool:
    """Whether a neighbourhood is closed under swapping (its ordered pairs come in couples)."""
    return nb is not None and not nb.directed


def swap_closed(nb: Neighbourhood | InputPairs | None) -> bool:
    """Whether a neighbourhood's ordered pairs are closed under swapping: symmetric, or
    directed input pairs that list every pair both ways (as the query's derived channels do)."""
    if is_symmetric(nb):
        return True
    if isinstance(nb, InputPairs):
        pairs = set(nb.pairs)
        return all((b, a) in pairs for a, b in pairs)
    return False
def tradeoff(mechanism: CyclicPMF | IntegerPMF | Channel, neighbourhood: Neighbourhood | InputPairs | None = None,
             *, exact: bool = False, max_memory: int | None = None) -> TradeOff:
    """The trade-off curve of a mechanism under a neighbourhood (module docstring).

    Parameters
    ----------
    mechanism:
        Cyclic noise, noise on Z (window and exact tails) or a channel.
    neighbourhood:
        As for :func:`optnoise.analysis.privacy_profile` (default SD 1).
    exact:
        Rational vertices from the one pair builder's integer weights (the mechanism's exact
        masses), readouts rounded up; otherwise float, vectorised.
    max_memory:
        Bytes one pair may take (:mod:`optnoise.resources`).
    """
    nb = default_neighbourhood(mechanism, neighbourhood)
    if exact:
        form = integer_form(mechanism)
        if form is not None and integer_form_fits(form, nb):
            pair_builders(mechanism, nb, max_memory=max_memory)  # the size check (floats: one pair at a time)
            builders, nb = pair_builders(form, nb)
        else:
            builders, nb = pair_builders(mechanism, nb, exact=True, max_memory=max_memory)
    else:
        builders, nb = pair_builders(mechanism, nb, max_memory=max_memory)
    curves = tuple(_pair_curve(build(), exact) for _, build in builders)
    return TradeOff(curves, is_symmetric(nb), "exact" if exact else "float")


def tradeoff_of(profile, *, exact: bool | None = None) -> TradeOff:
    """The trade-off curve of the pairs of a privacy profile (exact when the profile is,
    or with ``exact=True`` on the exact binary values of float masses). ``profile`` is a
    :class:`~optnoise.analysis.profile.PrivacyProfile` (anything with ``pairs``, ``exact``
    and ``neighbourhood``; not imported here: the profile's ``meets`` imports this module)."""
    ex = profile.exact if exact is None else exact
    curves = tuple(_pair_curve(pair, ex) for pair in profile.pairs)
    return TradeOff(curves, is_symmetric(profile.neighbourhood), "exact" if ex else "float")



__all__ = ["AttackReadout", "DEFAULT_FPRS", "Groups", "PairCurve", "TradeOff", "attack_words", "check_fpr", "check_odds",
           "curve_from_floats", "curve_from_groups", "curve_from_weights", "dp_tradeoff", "gdp_delta", "gdp_tradeoff",
           "groups_of", "is_symmetric", "parse_odds", "percent_up", "profile_readout", "pure_epsilon_for_mu",
           "swap_closed", "tradeoff", "tradeoff_of"]
