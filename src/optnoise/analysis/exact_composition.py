"""Exact composition of pairs whose privacy loss takes few values, rounded outward.

A pair ``(p, p')`` whose likelihood ratio ``p(y)/p'(y)`` takes ``m`` values ``R_1..R_m``
(with masses ``P_1..P_m`` under ``p``, and ``P_inf`` where ``p' = 0``) composes ``k``
times into a pair whose ratio takes the values ``prod_a R_a^{n_a}`` for the count vectors
``n`` (``sum_a n_a = k``) with masses ``k! / prod n_a! prod_a P_a^{n_a}`` -- a binomial
sum for ``m = 2`` (randomized response, the geometric mechanism at sensitivity 1: every
two-point loss), a multinomial one in ``C(k + m - 1, m - 1)`` terms in general, instead
of the ``|Y|^k`` outcomes. Independent items multiply their masses and ratios.

**The hockey-stick of the composed pair** depends only on the law of the loss under ``p``
(Dwork & Rothblum 2016; Kairouz, Oh & Viswanath 2015, Thm. 3.3 for randomized
response): with ``E = e^eps``,

    delta(eps) = 1 - prod_i (1 - P_inf,i)^{k_i} + sum_n P_n (1 - E / R_n)_+ .

**Why the value is never optimistic (the argument).** The right-hand side is
non-decreasing in every ``P_a``, ``P_inf`` and ``R_a`` and non-increasing in ``E``
(each term is a product of non-negative factors, each monotone). So it is evaluated with
upper bounds of the masses and ratios (:func:`loss_atoms`: exact rationals when the
pair's masses are exact; float masses rounded up by a relative ``2^-44``, far above their
round-off), a rational ``E`` below ``e^eps`` (:func:`~optnoise.analysis.exact.exp_lower`)
and every arithmetic operation rounded in the safe direction (``mpmath.libmp`` with
explicit directed rounding at 128 bits; ``mpf_pow_int`` rounds directed all the way
through). Rounding ratios *up* is also what makes merging near-equal losses safe: a pair
whose losses are all moved up (masses under ``p`` kept, the missing mass of ``p'`` put
where ``p = 0``) dominates the original under composition, since the composed loss of
each outcome can only grow and ``delta`` is ``E_p[(1 - e^(eps - L))_+]``, non-decreasing
in ``L``. States whose float loss is below ``eps`` by more than a bound on the float
error contribute exactly 0 and are skipped.

The epsilon at a delta is found in floating point and then *certified*: the value
returned is the smallest float ``eps`` at which the rigorous upper bound of ``delta(eps)``
is at most the delta asked for (bracketed from the estimate, then bisected on the floats:
:func:`~optnoise.analysis.outward.certified_from`), so it is never below the true one.

When no ratio had to be merged or rounded (:attr:`LossAtoms.exact`), the values are the
exact composed guarantee rounded outward to the last digit: ``delta`` to the next float,
``epsilon`` to the float at or just above the exact one (up to the ``2^-120`` of the
evaluation; before issue 34 the first float that passed a relative step could be ``2^-40``
above it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from .exact import exp_lower
from .outward import certified_from

#: Most distinct loss values a pair may have for the exact composition.
MAX_ATOMS = 8
#: Losses whose likelihood ratios differ by less than this (relative) are merged, upwards.
CLUSTER_TOLERANCE = 2.0 ** -30
#: Relative allowance added to float masses and ratios (their round-off is below 2^-50).
FLOAT_SLACK = Fraction(1, 2 ** 44)
#: Cells up to which a cluster's ratios are compared exactly (one exact ratio: exact atoms).
EXACT_CHECK_CELLS = 1 << 20
#: Working precision (bits) of the directed-rounding evaluation.
PREC = 128


@dataclass(frozen=True)
class LossAtoms:
    """A pair's privacy loss distribution as few atoms, each rounded up.

    ``ratios[a]`` bounds the likelihood ratio ``p/p'`` of atom ``a`` from above and
    ``masses[a]`` bounds ``p``'s mass on it from above; ``infinite`` bounds ``p``'s mass
    where ``p' = 0``. ``exact``: every value is the exact one (no merging, no allowance).
    """

    ratios: tuple[Fraction, ...]
    masses: tuple[Fraction, ...]
    infinite: Fraction
    exact: bool
    label: str = ""

    @property
    def size(self) -> int:
        return len(self.ratios)

    @property
    def log_ratios(self) -> np.ndarray:
        """Float losses ``ln R_a`` (for the search and the skip test, never for a bound)."""
        return np.array([math.log(r.numerator) - math.log(r.denominator) for r in self.ratios])

    @property
    def log_masses(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.array([math.log(m.numerator) - math.log(m.denominator) if m > 0 else -math.inf
                             for m in self.masses])


# ------------------------------------------------------------------ atoms of a pair
def loss_atoms(pair: object, max_atoms: int = MAX_ATOMS) -> LossAtoms | None:
    """The pair's loss atoms rounded up, or ``None`` when it has more than ``max_atoms``
    clusters of losses (or is of a kind without masses).

    Integer pairs (:class:`~optnoise.analysis.exact_fast.IntegerPair`) and Fraction pairs
    (:class:`~optnoise.analysis.exact.ExactPair`) give exact ratios and masses; float pairs
    (:class:`~optnoise.analysis.floating.FloatPair`) are rounded up by :data:`FLOAT_SLACK`.
    """
    from .exact import ExactPair
    from .exact_fast import IntegerPair
    from .floating import FloatPair
    from .profile import LazyPair
    if isinstance(pair, LazyPair):
        pair = pair.build()
    label = str(getattr(pair, "label", ""))
    if isinstance(pair, IntegerPair):
        return _integer_atoms(pair.p.words, pair.q.words, pair.p.floats, pair.q.floats, pair.denominator, label,
                              max_atoms)
    if isinstance(pair, ExactPair):
        return _fraction_atoms(pair.p, pair.q, label, max_atoms)
    if isinstance(pair, FloatPair):
        return _float_atoms(np.asarray(pair.p, float), np.asarray(pair.q, float), label, max_atoms)
    return None


def _clusters(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort order of the float ratio keys and the cluster id of each sorted key (keys closer
    than :data:`CLUSTER_TOLERANCE`, relative, to their neighbour share a cluster)."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    breaks = np.concatenate(([False], sk[1:] > sk[:-1] * (1.0 + CLUSTER_TOLERANCE)))
    return order, np.cumsum(breaks)


def _keyed_clusters(pf: np.ndarray, qf: np.ndarray, fin: np.ndarray, max_atoms: int):
    """``(sorted float ratio keys, sort order, cluster ids, clusters)`` of the finite cells, or
    ``None`` when a key is not a positive float or there are more than ``max_atoms`` clusters."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        keys = pf[fin] / qf[fin]
    if keys.size and not (np.all(np.isfinite(keys)) and keys.min() > 0):
        return None
    order, cid = _clusters(keys)
    count = int(cid[-1]) + 1 if keys.size else 0
    return None if count > max_atoms else (keys[order], order, cid, count)


def _int_sum(words: np.ndarray) -> int:
    """The exact sum of non-negative integer weights (``uint64`` or Python ints)."""
    if words.dtype == object:
        return int(sum(int(v) for v in words))
    w = words.astype(np.uint64)
    return (int((w >> np.uint64(32)).sum(dtype=np.uint64)) << 32) + int((w & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))


def _integer_atoms(pw: np.ndarray, qw: np.ndarray, pf: np.ndarray, qf: np.ndarray, den: int, label: str,
                   max_atoms: int) -> LossAtoms | None:
    pos = np.asarray(pw > 0, dtype=bool)
    qpos = np.asarray(qw > 0, dtype=bool)
    fin = pos & qpos
    infinite = Fraction(_int_sum(pw[pos & ~qpos]), den)
    got = _keyed_clusters(pf, qf, fin, max_atoms)
    if got is None:
        return None
    sk, order, cid, count = got
    p_f, q_f = pw[fin][order], qw[fin][order]
    check = sk.size <= EXACT_CHECK_CELLS
    ratios, masses, exact = [], [], True
    for c in range(count):
        sel = cid == c
        ps, qs = p_f[sel], q_f[sel]
        masses.append(Fraction(_int_sum(ps), den))
        if not check:
            ratios.append(Fraction(float(sk[sel].max())) * (1 + FLOAT_SLACK))
            exact = False
            continue
        p0, q0 = int(ps[0]), int(qs[0])
        po, qo = ps.astype(object), qs.astype(object)
        if bool(np.all(po * q0 == qo * p0)):
            ratios.append(Fraction(p0, q0))
            continue
        exact = False
        top = sk[sel]
        near = np.flatnonzero(top >= top.max() * (1.0 - 2.0 ** -40))
        ratios.append(max(Fraction(int(ps[i]), int(qs[i])) for i in near))
    return _ordered(ratios, masses, infinite, exact, label)


def _float_atoms(p: np.ndarray, q: np.ndarray, label: str, max_atoms: int) -> LossAtoms | None:
    pos = p > 0
    fin = pos & (q > 0)
    up = 1 + FLOAT_SLACK
    infinite = Fraction(math.fsum(p[pos & ~fin])) * up
    got = _keyed_clusters(p, q, fin, max_atoms)
    if got is None:
        return None
    sk, order, cid, count = got
    sp = p[fin][order]
    ratios, masses = [], []
    for c in range(count):
        sel = cid == c
        ratios.append(Fraction(float(sk[sel].max())) * up)
        masses.append(Fraction(math.fsum(sp[sel])) * up)
    return _ordered(ratios, masses, infinite, False, label)


def _fraction_atoms(p: Sequence[Fraction], q: Sequence[Fraction], label: str, max_atoms: int) -> LossAtoms | None:
    groups: dict[Fraction, Fraction] = {}
    infinite = Fraction(0)
    for pi, qi in zip(p, q):
        if pi == 0:
            continue
        if qi == 0:
            infinite += pi
            continue
        r = pi / qi
        groups[r] = groups.get(r, Fraction(0)) + pi
    rs = sorted(groups)
    if len(rs) <= max_atoms:
        return _ordered(rs, [groups[r] for r in rs], infinite, True, label)
    keys = np.array([float(r) for r in rs])
    if not (np.all(np.isfinite(keys)) and keys.min() > 0):
        return None
    order, cid = _clusters(keys)
    if int(cid[-1]) + 1 > max_atoms:
        return None
    ratios, masses = [], []
    for c in range(int(cid[-1]) + 1):
        members = [rs[i] for i in order[cid == c]]
        ratios.append(max(members))
        masses.append(sum((groups[r] for r in members), Fraction(0)))
    return _ordered(ratios, masses, infinite, False, label)


def _ordered(ratios: list[Fraction], masses: list[Fraction], infinite: Fraction, exact: bool,
             label: str) -> LossAtoms:
    pairs = sorted(zip(ratios, masses), key=lambda t: t[0], reverse=True)
    return LossAtoms(tuple(r for r, _ in pairs), tuple(m for _, m in pairs), infinite, exact, label)


# ------------------------------------------------------------------ the composed states
@lru_cache(maxsize=64)
def compositions(k: int, m: int) -> np.ndarray:
    """All count vectors of ``m`` non-negative integers summing to ``k`` (rows)."""
    if m == 1:
        return np.array([[k]], dtype=np.int64)
    if m == 0:
        return np.zeros((1 if k == 0 else 0, 0), dtype=np.int64)
    blocks = []
    for first in range(k + 1):
        rest = compositions(k - first, m - 1)
        blocks.append(np.hstack((np.full((rest.shape[0], 1), first, dtype=np.int64), rest)))
    return np.vstack(blocks)


def state_count(items: Sequence[tuple[LossAtoms, int]]) -> int:
    """Number of composed loss states: ``prod_i C(k_i + m_i - 1, m_i - 1)``."""
    n = 1
    for atoms, k in items:
        n *= math.comb(int(k) + atoms.size - 1, atoms.size - 1) if atoms.size else 1
    return n


@dataclass(frozen=True, eq=False)
class _Item:
    """The k-fold states of one pair: count vectors, float losses and log-masses (for the
    search), and a cache of the rounded-up masses and ratios (for the bound)."""

    atoms: LossAtoms
    k: int
    counts: np.ndarray
    loss: np.ndarray
    logp: np.ndarray

    def bounds(self, s: int, cache: dict) -> tuple:
        """``(P_n rounded up, R_n rounded up)`` of state ``s`` as raw mpmath floats."""
        got = cache.get((id(self), s))
        if got is not None:
            return got
        from mpmath import libmp
        up = libmp.round_ceiling
        n = [int(x) for x in self.counts[s]]
        coef, left = 1, self.k
        for x in n:
            coef *= math.comb(left, x)
            left -= x
        p = libmp.from_int(coef, PREC, up)
        r = libmp.fone
        for x, pa, ra in zip(n, self.atoms.masses, self.atoms.ratios):
            if x == 0:
                continue
            p = libmp.mpf_mul(p, libmp.mpf_pow_int(libmp.from_rational(pa.numerator, pa.denominator, PREC, up),
                                                   x, PREC, up), PREC, up)
            r = libmp.mpf_mul(r, libmp.mpf_pow_int(libmp.from_rational(ra.numerator, ra.denominator, PREC, up),
                                                   x, PREC, up), PREC, up)
        cache[(id(self), s)] = (p, r)
        return p, r


def _item(atoms: LossAtoms, k: int) -> _Item:
    counts = compositions(int(k), atoms.size)
    loss = counts @ atoms.log_ratios if atoms.size else np.zeros(counts.shape[0])
    log_factorial = np.array([math.lgamma(n + 1.0) for n in range(int(k) + 1)])   # (no scipy import)
    with np.errstate(invalid="ignore"):
        logp = math.lgamma(k + 1) - np.sum(log_factorial[counts], axis=1) + (
            counts @ np.where(np.isfinite(atoms.log_masses), atoms.log_masses, -1e308) if atoms.size else 0.0)
    return _Item(atoms, int(k), counts, np.asarray(loss, float), np.asarray(logp, float))


class KFold:
    """The composition of ``(atoms, count)`` items on one pair of neighbouring datasets.

    :meth:`delta_upper` is the rigorous bound at an epsilon; :meth:`epsilon_upper` the
    certified epsilon at a delta (module docstring).
    """

    def __init__(self, items: Sequence[tuple[LossAtoms, int]]) -> None:
        self.items = [_item(a, int(k)) for a, k in items]
        self.exact = all(a.exact for a, _ in items)
        loss = np.zeros(1)
        logp = np.zeros(1)
        index = np.zeros((1, 0), dtype=np.int64)
        for it in self.items:
            n = it.loss.size
            loss = (loss[:, None] + it.loss[None, :]).ravel()
            logp = (logp[:, None] + it.logp[None, :]).ravel()
            index = np.hstack((np.repeat(index, n, axis=0), np.tile(np.arange(n), index.shape[0])[:, None]))
        self.loss, self.logp, self.index = loss, logp, index
        spread = sum(it.k * float(np.max(np.abs(it.atoms.log_ratios), initial=0.0)) for it in self.items)
        self._margin = 1e-12 * (1.0 + spread)
        self._cache: dict = {}

    # ---------------------------------------------------------------- the bound
    def _infinite_upper(self):
        """``1 - prod_i (1 - P_inf,i)^{k_i}``, rounded up (raw mpmath float)."""
        from mpmath import libmp
        down, up = libmp.round_floor, libmp.round_ceiling
        keep = libmp.fone
        for it in self.items:
            inf = it.atoms.infinite
            if inf == 0:
                continue
            one_minus = libmp.mpf_sub(libmp.fone, libmp.from_rational(inf.numerator, inf.denominator, PREC, up),
                                      PREC, down)
            if libmp.mpf_le(one_minus, libmp.fzero):
                return libmp.fone
            keep = libmp.mpf_mul(keep, libmp.mpf_pow_int(one_minus, it.k, PREC, down), PREC, down)
        return libmp.mpf_sub(libmp.fone, keep, PREC, up)

    def delta_upper(self, epsilon: float) -> float:
        """A float ``>= delta(epsilon)`` of the composition (module docstring).

        Proof: docs/proofs/composed-bounds.md."""
        from mpmath import libmp
        down, up = libmp.round_floor, libmp.round_ceiling
        e = exp_lower(float(epsilon))
        e_low = libmp.from_rational(e.numerator, e.denominator, PREC, down)
        total = self._infinite_upper()
        for s in np.flatnonzero(self.loss > float(epsilon) - self._margin * (1.0 + abs(float(epsilon)))):
            p, r = libmp.fone, libmp.fone
            for it, j in zip(self.items, self.index[s]):
                pj, rj = it.bounds(int(j), self._cache)
                p = libmp.mpf_mul(p, pj, PREC, up)
                r = libmp.mpf_mul(r, rj, PREC, up)
            gap = libmp.mpf_sub(libmp.fone, libmp.mpf_div(e_low, r, PREC, down), PREC, up)
            if libmp.mpf_le(gap, libmp.fzero):
                continue
            total = libmp.mpf_add(total, libmp.mpf_mul(p, gap, PREC, up), PREC, up)
        return min(1.0, libmp.to_float(total, rnd=up))

    # ---------------------------------------------------------------- the inverse
    def _estimate(self, delta: float) -> float:
        """The epsilon at ``delta`` in floating point (a starting point, not a bound)."""
        inf = 1.0 - math.prod((1.0 - float(it.atoms.infinite)) ** it.k for it in self.items)
        if inf > delta:
            return math.inf
        order = np.argsort(-self.loss, kind="stable")
        loss, logp = self.loss[order], self.logp[order]
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            a = inf + np.cumsum(np.exp(logp))
            log_b = np.logaddexp.accumulate(logp - loss)
            g = a - np.exp(loss + log_b)     # delta at eps = loss_j with states 0..j above
        # g[j] is delta at eps = loss_j: the states before j lie above it, state j adds 0
        above = np.flatnonzero(g > delta)
        j = int(above[0]) if above.size else loss.size   # states 0..j-1 lie above the answer
        if j == 0:
            return math.inf
        num = a[j - 1] - delta
        if num <= 0:
            return max(0.0, float(loss[j])) if j < loss.size else 0.0
        return max(0.0, math.log(num) - float(log_b[j - 1]))

    def epsilon_upper(self, delta: float) -> float:
        """A float epsilon certified by :meth:`delta_upper` to give at most ``delta``
        (``inf`` when none is found)."""
        guess = self._estimate(float(delta))
        if not math.isfinite(guess):
            return math.inf
        if guess <= 0.0 and self.delta_upper(0.0) <= delta:
            return 0.0
        return certified_from(lambda e: self.delta_upper(e) <= delta, guess)


def compose_atoms(items: Sequence[tuple[LossAtoms, int]], *, epsilon: float | None = None,
                  delta: float | None = None) -> tuple[float | None, float | None]:
    """``(epsilon at delta, delta at epsilon)`` of the composition, both rounded up."""
    kf = KFold(items)
    return (None if delta is None else kf.epsilon_upper(delta),
            None if epsilon is None else kf.delta_upper(epsilon))


__all__ = ["CLUSTER_TOLERANCE", "FLOAT_SLACK", "KFold", "LossAtoms", "MAX_ATOMS", "compose_atoms",
           "compositions", "loss_atoms", "state_count"]
