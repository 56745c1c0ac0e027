"""Float privacy analysis of a cyclic PMF that streams over its pairs.

:class:`~optnoise.analysis.floating.FloatPair` holds two arrays of ``n`` floats per ordered
pair, so a bounded-difference neighbourhood ``BD mu_bar`` on ``n = 1e7`` would hold
``2 mu_bar`` rolled copies of the PMF at once. Here the pair ``(f, f(. + mu mod N))`` is never
materialised: it is the two aligned views ``f[:N-mu]`` / ``f[mu:]`` and
``f[N-mu:]`` / ``f[:mu]``, walked in cache-sized blocks, and every quantity of the
profile is accumulated in the same walk (docs/architecture.md, "Two notions"):

* ``eps_pure = max ln p/p'`` (Qin et al., Theorem 1), ``inf`` when ``p > 0 = p'``;
* ``delta_DP(eps) = sum max(0, p - e^eps p')`` (hockey stick; Holohan et al.);
* ``delta_PDP(eps) = sum p [p > e^eps p' (1 + tol)]`` (Kadam et al., Def. 2), with the
  relative tolerance of :data:`optnoise.analysis.RATIO_TOLERANCE`, as float mode does;
* the inverses ``eps_DP(delta)``, ``eps_PDP(delta)``. The profile needs only their
  maximum over pairs, and a pair can raise the running maximum ``eps_b`` only if
  ``delta_DP(eps_b) > delta`` (resp. the mass above the loss ``eps_b`` exceeds
  ``delta``) for that pair: both tests are accumulated in the same walk, and only
  a pair that passes one has its inverse computed, from the cells with ``p > p'``
  (the only cells the inverse maps look at) by quickselect on their losses in
  O(n) expected time instead of float mode's sort, with float mode's formulas.
  Pairs are visited in decreasing circular distance, usually worst first.

Memory: ``f`` plus a few block buffers, and the cells with ``p > p'`` of a pair
whose inverse is computed: O(n) whatever the number of pairs. Values agree with
float mode (:class:`~optnoise.analysis.floating.FloatPair`) up to summation order (the
tests ask 1e-12 relative). :func:`optnoise.analysis.privacy_profile` uses it for large
one-dimensional cyclic PMFs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..target import check_delta, check_epsilon
from .floating import RATIO_TOLERANCE, PairMaxima

#: Elements per block (four float64 buffers of this size stay in the L2 cache).
BLOCK = 1 << 15


def _segments(f: np.ndarray, shift: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``p = f`` and ``p' = f(. + shift mod N)`` as aligned views, in index order of ``p``."""
    n = f.size
    m = shift % n
    segs = [(f[:n - m], f[m:])]
    if m:
        segs.append((f[n - m:], f[:m]))
    return segs


@dataclass
class _Buffers:
    t: np.ndarray
    u: np.ndarray
    d: np.ndarray
    mask: np.ndarray

    @classmethod
    def make(cls, size: int) -> "_Buffers":
        return cls(np.empty(size), np.empty(size), np.empty(size), np.empty(size, dtype=bool))


def _walk(segs, bufs: _Buffers, e: float | None, e_tol: float | None, e_check: float | None,
          r_check: float | None, block: int) -> tuple[float, float, float, float, float, bool]:
    """One pass over a pair: max ratio, delta_DP, delta_PDP, the two inverse tests, and
    whether some ratio overflowed or faced ``p' = 0`` (max ratio ``inf``)."""
    mx = 0.0
    dp = pdp = cdp = cpdp = 0.0
    for p_all, q_all in segs:
        for s in range(0, p_all.size, block):
            p = p_all[s:s + block]
            q = q_all[s:s + block]
            k = p.size
            t, u, d, mask = bufs.t[:k], bufs.u[:k], bufs.d[:k], bufs.mask[:k]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                np.divide(p, q, out=t)
                top = float(t.max())
                if top != top:  # a 0/0 cell (nan): ignore it
                    np.copyto(t, 0.0, where=np.isnan(t))
                    top = float(t.max())
                if top > mx:
                    mx = top
                if e is not None:
                    np.multiply(q, e, out=u)
                    np.subtract(p, u, out=d)
                    np.maximum(d, 0.0, out=d)
                    dp += float(d.sum())
                    np.multiply(u, e_tol, out=u)
                    np.greater(p, u, out=mask)
                    np.multiply(p, mask, out=d)
                    pdp += float(d.sum())
                if e_check is not None:
                    np.multiply(q, e_check, out=u)
                    np.subtract(p, u, out=d)
                    np.maximum(d, 0.0, out=d)
                    cdp += float(d.sum())
                if r_check is not None:
                    np.greater(t, r_check, out=mask)
                    np.multiply(p, mask, out=d)
                    cpdp += float(d.sum())
    return mx, dp, pdp, cdp, cpdp, math.isinf(mx)


def _infinite_mass(segs) -> float:
    return float(sum(np.add.reduce(p, where=(q == 0)) for p, q in segs))


def _pure_from_overflow(segs) -> float:
    """``eps_pure`` when some ratio is ``inf``: ``inf`` if ``p > 0 = p'``, else the
    largest ``ln p - ln p'`` (float mode's fallback for overflowing ratios)."""
    if any(bool(np.any((p > 0) & (q == 0))) for p, q in segs):
        return math.inf
    best = -math.inf
    with np.errstate(divide="ignore", over="ignore"):
        for p, q in segs:
            over = np.isinf(p / q)
            if over.any():
                best = max(best, float(np.max(np.log(p[over]) - np.log(q[over]))))
    return best


@dataclass(frozen=True)
class _Candidates:
    """Cells of one pair whose likelihood ratio may exceed the answer: ``p > p' c``
    (``c <= 1`` a lower bound on the answer's ratio, 1 for a first pair), as sort keys
    ``key`` (the ratio ``p/p'``, or float mode's loss ``ln p/p'`` when some ratio overflows:
    ``loss_keys``), their masses, and the mass of ``p`` where ``p' = 0``."""

    key: np.ndarray
    p: np.ndarray
    q: np.ndarray
    infinite: float
    loss_keys: bool

    def to_loss(self, k: float) -> float:
        if self.loss_keys:
            return k
        return math.log(k) if k > 0 else (0.0 if k == 0 else -math.inf)

    def product(self, k: float, b: float) -> float:
        """``e^loss * b`` for a key, as float mode forms it (``exp(l + ln b)``) with loss keys."""
        if b <= 0:
            return 0.0
        return math.exp(k + math.log(b)) if self.loss_keys else k * b


def _above_mask(p: np.ndarray, q: np.ndarray, ratio: float, u: np.ndarray, block: int) -> np.ndarray:
    """``p > ratio * q`` computed block by block (no full-size float temporary)."""
    out = np.empty(p.size, dtype=bool)
    for s in range(0, p.size, block):
        k = min(block, p.size - s)
        np.multiply(q[s:s + k], ratio, out=u[:k])
        np.greater(p[s:s + k], u[:k], out=out[s:s + k])
    return out


def _candidates(segs, min_ratio: float = 1.0, bufs: _Buffers | None = None, block: int = BLOCK) -> _Candidates:
    if bufs is None:
        bufs = _Buffers.make(block)
    masks = [_above_mask(p, q, min_ratio, bufs.u, bufs.u.size) for p, q in segs]
    total = sum(int(np.count_nonzero(m)) for m in masks)
    p = np.empty(total)
    q = np.empty(total)
    at = 0
    for (ps, qs), m in zip(segs, masks):
        k = int(np.count_nonzero(m))
        np.compress(m, ps, out=p[at:at + k])
        np.compress(m, qs, out=q[at:at + k])
        at += k
    finite = q > 0
    inf_mass = float(np.sum(p[~finite]))
    if not finite.all():
        p, q = p[finite], q[finite]
    with np.errstate(over="ignore"):
        key = p / q
    if np.isinf(key).any():  # overflowing ratios: float mode's losses (ln p - ln q there)
        with np.errstate(divide="ignore"):
            key = np.log(key)
            bad = ~np.isfinite(key)
            key[bad] = np.log(p[bad]) - np.log(q[bad])
        pos = key > 0
        return _Candidates(key[pos], p[pos], q[pos], inf_mass, True)
    return _Candidates(key, p, q, inf_mass, False)


def _pivot(rng: np.random.Generator, key: np.ndarray) -> float:
    """Median of three random keys (any pivot is correct; this one splits well)."""
    k = rng.integers(0, key.size, 3)
    return float(np.median(key[k]))


def _epsilon_dp(c: _Candidates, delta: float, start: float | None = None, full: bool = True) -> float:
    """Float mode's ``eps_DP(delta)`` of one pair by selection instead of sorting.

    Float mode sorts the distinct losses ``l_1 > l_2 > ...``, finds the first ``j`` with
    ``g(l_j) = a_j - e^(l_j) b_j > delta`` (``a_j, b_j``: masses above ``l_j``) and returns
    ``ln((a_j - delta) / b_j)`` clamped to ``[l_j, l_(j-1)]``. ``g(l) > delta`` is monotone in
    ``l``, so ``l_j`` is found by quickselect on the keys (three-way partition around a
    pivot, recurse on one side, carrying the masses known to lie above); the sums over
    ``{loss > l_j}`` and the clamp bounds come out of the same partitions (ratios are
    compared instead of their logarithms: the same order). ``start`` is a first pivot
    key (the running maximum over pairs, which this pair's answer exceeds; the candidates
    may then omit the cells below it, ``full = False``). A pivot that is not a key of this
    pair only moves the clamp bounds within the segment that holds the answer.
    """
    if c.infinite > delta:
        return math.inf
    if full and c.infinite + float(np.sum(c.p)) - float(np.sum(c.q)) <= delta:
        return 0.0
    rng = np.random.default_rng(0x5EED)
    key, p, q = c.key, c.p, c.q
    a, b = c.infinite, 0.0
    lower, upper = (0.0 if c.loss_keys else 1.0), math.inf
    v = start
    while key.size:
        if v is None:
            v = _pivot(rng, key)
        above = key > v
        ka, pa, qa = key[above], p[above], q[above]
        av = a + float(pa.sum())
        bv = b + float(qa.sum())
        if av - c.product(v, bv) > delta:   # l_j >= v: drop everything at or below v
            lower = max(lower, v)
            key, p, q = ka, pa, qa
        else:                                 # l_j < v: everything at or above v is above l_j
            at = key == v
            a = av + float(p[at].sum())
            b = bv + float(q[at].sum())
            upper = min(upper, v)
            below = key < v
            key, p, q = key[below], p[below], q[below]
        v = None
    lo, hi = c.to_loss(lower), c.to_loss(upper) if upper < math.inf else math.inf
    if b <= 0:
        return lo
    eps = math.log((a - delta) / b)
    return min(max(eps, lo), hi)


def _epsilon_pdp(c: _Candidates, delta: float, start: float | None = None, full: bool = True) -> float:
    """Float mode's ``eps_PDP(delta)``: the smallest loss ``l`` with mass above ``l`` at most
    ``delta`` (0 if the mass above 0 already is), by quickselect on the keys (``start``:
    an optional first pivot key, not necessarily a key of this pair)."""
    if c.infinite > delta:
        return math.inf
    if full and c.infinite + float(np.sum(c.p)) <= delta:
        return 0.0
    rng = np.random.default_rng(0x5EED)
    key, p = c.key, c.p
    a = c.infinite
    best = math.inf
    v, is_key = start, False
    while key.size:
        if v is None:
            v, is_key = _pivot(rng, key), True
        above = key > v
        ka, pa = key[above], p[above]
        av = a + float(pa.sum())
        if av <= delta:
            at = key == v
            if is_key or at.any():
                best = v
            elif ka.size:
                best = min(best, float(ka.min()))
            a = av + float(p[at].sum())
            keep = key < v
            key, p = key[keep], p[keep]
        else:
            key, p = ka, pa
        v = None
    return c.to_loss(best) if best < math.inf else math.inf


def _excess_and_mass(segs, bufs: _Buffers, ratios: list[float], block: int) -> tuple[list[float], list[float]]:
    """``g(r) = sum max(p - r p', 0)`` and ``sum_{p > r p'} p`` for a few ratios ``r``, one walk."""
    g = [0.0] * len(ratios)
    mass = [0.0] * len(ratios)
    for p_all, q_all in segs:
        for s in range(0, p_all.size, block):
            p = p_all[s:s + block]
            q = q_all[s:s + block]
            k = p.size
            u, d, mask = bufs.u[:k], bufs.d[:k], bufs.mask[:k]
            for i, r in enumerate(ratios):
                np.multiply(q, r, out=u)
                np.greater(p, u, out=mask)
                np.subtract(p, u, out=d)
                np.maximum(d, 0.0, out=d)
                g[i] += float(d.sum())
                np.multiply(p, mask, out=d)
                mass[i] += float(d.sum())
    return g, mass


def _floor_from_sample(segs, bufs: _Buffers, delta: float, block: int) -> tuple[float, float]:
    """Ratios below this pair's eps_DP and eps_PDP answers (1.0 when none is proven).

    A sample of the pair's ratios proposes a few thresholds (upper quantiles); one walk
    computes the excess ``g`` and the mass above each, and a threshold ``r`` is kept for DP
    when ``g(r) > delta`` (then ``e^eps_DP > r``: ``g`` is non-increasing) and for PDP when
    the mass above ``r`` exceeds ``delta`` (then the PDP answer exceeds ``r``). The sample
    only affects the speed; the bounds are checked on all cells.
    """
    rng = np.random.default_rng(0x5EED)
    n = sum(p.size for p, _ in segs)
    idx = np.sort(rng.integers(0, n, 4096))
    ps, qs = [], []
    offset = 0
    for p, q in segs:
        sel = idx[(idx >= offset) & (idx < offset + p.size)] - offset
        ps.append(p[sel])
        qs.append(q[sel])
        offset += p.size
    ps_, qs_ = np.concatenate(ps), np.concatenate(qs)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = ps_ / qs_
    r = r[np.isfinite(r) & (r > 1.0)]
    if r.size < 8:
        return 1.0, 1.0
    props = sorted({float(np.quantile(r, x)) for x in (0.999, 0.99, 0.9, 0.5)}, reverse=True)
    g, mass = _excess_and_mass(segs, bufs, props, block)
    dp_floor = next((v for v, gv in zip(props, g) if gv > delta), 1.0)
    pdp_floor = next((v for v, mv in zip(props, mass) if mv > delta), 1.0)
    return dp_floor, pdp_floor


def _check_shifts(shifts: Iterable[int], n: int) -> list[int]:
    out = []
    for s in shifts:
        if isinstance(s, tuple):
            if len(s) != 1:
                raise InvalidParameterError("shifts", s, "integer shifts (one-dimensional PMF)")
            s = s[0]
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise InvalidParameterError("shifts", s, "integer shifts")
        out.append(int(s))
    if not out:
        raise InvalidParameterError("shifts", [], "at least one shift")
    # worst pairs first (usually the largest circular distance): fewer inverses to compute
    return sorted(out, key=lambda s: -min(s % n, (-s) % n))


@dataclass
class _Running:
    """The maxima over the pairs walked so far, and the pair (``mu=...``) that holds each."""

    delta: float | None
    pure: float = 0.0
    dp_max: float = -math.inf
    pdp_max: float = -math.inf
    edp: float = 0.0       # (read only with a delta)
    epdp: float = 0.0
    worst: dict[str, str] = field(default_factory=dict)
    first: bool = True

    def checks(self) -> tuple[float | None, float | None]:
        """``e^eps_DP`` and ``e^eps_PDP`` so far, where finite below ``e^700`` (else ``None``):
        the walk counts each pair's mass beyond them, which says whether the pair can raise them."""
        e_check = r_check = None
        if self.delta is not None:
            if not math.isinf(self.edp):
                e_check = math.exp(self.edp) if self.edp < 700 else None
            if not math.isinf(self.epdp):
                r_check = math.exp(self.epdp) if self.epdp < 700 else None
        return e_check, r_check

    def pair(self, label: str, pure: float, e: float | None, dp: float, pdp: float) -> None:
        """One pair's pure epsilon and (at ``e``) deltas into the maxima."""
        if pure > self.pure or self.first:
            self.pure = max(self.pure, pure)
            self.worst["epsilon_pure"] = label
        if e is not None:
            if dp > self.dp_max:
                self.dp_max, self.worst["delta_dp"] = dp, label
            if pdp > self.pdp_max:
                self.pdp_max, self.worst["delta_pdp"] = pdp, label


def _inverse_maxima(run: _Running, delta: float, label: str, segs, bufs: _Buffers, block: int, checks: tuple,
                    masses: tuple) -> None:
    """One pair's ``epsilon_dp`` and ``epsilon_pdp`` at ``delta`` into the maxima, computed only
    where the pair can raise them: its mass beyond the running ratios (``masses``, counted at
    ``checks``) exceeds delta, or it is the first pair."""
    edp, epdp, first = run.edp, run.epdp, run.first
    (e_check, r_check), (cdp, cpdp) = checks, masses
    need_dp = not math.isinf(edp) and (e_check is None or cdp > delta or first)
    need_pdp = not math.isinf(epdp) and (r_check is None or cpdp > delta or first)
    if not (need_dp or need_pdp):
        return
    # lower bounds on this pair's answers (ratios): the running maxima, which the
    # pair exceeds, or for the first pair bounds proven from a sample
    if first:
        dp_floor, pdp_floor = _floor_from_sample(segs, bufs, delta, block)
    else:
        dp_floor, pdp_floor = math.exp(edp) * (1 - 1e-9), math.exp(epdp) * (1 - 1e-9)
    floor_ratio = max(1.0, min(dp_floor if need_dp else math.inf, pdp_floor if need_pdp else math.inf))
    cand = _candidates(segs, floor_ratio, bufs)
    full = floor_ratio <= 1.0
    for name, need, running, inverse in (("epsilon_dp", need_dp, edp, _epsilon_dp),
                                         ("epsilon_pdp", need_pdp, epdp, _epsilon_pdp)):
        if not need:
            continue
        start = None if first else (running if cand.loss_keys else math.exp(running))
        v = inverse(cand, delta, start, full)
        if v > running or first:
            run.worst[name] = label
            if name == "epsilon_dp":
                run.edp = max(run.edp, v)
            else:
                run.epdp = max(run.epdp, v)


def cyclic_summary(f: np.ndarray, shifts: Sequence[int], *, epsilon: float | None = None,
                   delta: float | None = None, ratio_tolerance: float = RATIO_TOLERANCE,
                   block: int = BLOCK) -> PairMaxima:
    """Float profile of the cyclic PMF ``f`` under the ordered ``shifts``, streamed.

    Parameters
    ----------
    f:
        Masses of a one-dimensional cyclic PMF (length ``N = n + 1``).
    shifts:
        Ordered query distances ``mu`` (pairs ``(f, f(. + mu mod N))``), e.g.
        ``Neighbourhood.cyclic_shifts``.
    epsilon, delta:
        Evaluate ``delta_DP``/``delta_PDP`` at ``epsilon`` and the inverse maps at ``delta``.
    """
    arr = np.ascontiguousarray(np.asarray(f, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError("f", f"shape {arr.shape}", "a non-empty one-dimensional PMF")
    order = _check_shifts(shifts, arr.size)
    eps = None if epsilon is None else check_epsilon(epsilon, allow_inf=True, accepted="a real number >= 0")
    if delta is not None:
        check_delta(delta)
    e = None if eps is None else (math.exp(eps) if eps < 700 else math.inf)
    e_pass = None if e is not None and math.isinf(e) else e
    e_tol = 1.0 + ratio_tolerance
    bufs = _Buffers.make(min(block, arr.size))
    run = _Running(delta)
    for shift in order:
        label = f"mu={shift}"
        segs = _segments(arr, shift)
        checks = run.checks()
        mx, dp, pdp, cdp, cpdp, over = _walk(segs, bufs, e_pass, e_tol, *checks, block)
        pair_pure = _pure_from_overflow(segs) if over else (math.log(mx) if mx > 0 else -math.inf)
        if e is not None and math.isinf(e):
            dp = pdp = _infinite_mass(segs)
        run.pair(label, max(0.0, pair_pure), e, dp, pdp)
        if delta is not None:
            _inverse_maxima(run, delta, label, segs, bufs, block, checks, (cdp, cpdp))
        run.first = False
    return PairMaxima(
        epsilon_pure=run.pure, delta_dp=None if e is None else run.dp_max,
        delta_pdp=None if e is None else run.pdp_max, epsilon_dp=None if delta is None else run.edp,
        epsilon_pdp=None if delta is None else run.epdp, pairs=len(order), worst=run.worst)
