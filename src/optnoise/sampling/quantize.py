"""Quantize-and-certify: the integer weights that are sampled, with their exact certificate.

What is released must be exactly the distribution that was certified
(docs/architecture.md, "Exactness"; docs/release.md). A designed mechanism has float
masses; :func:`quantize` turns it into *integer weights* and certifies *those* with the
exact (rational, outward-rounded) analysis -- vectorised on the integer weights
(:func:`optnoise.analysis.exact_profile`), value for value equal to the Fraction oracle.
The draws then use the same integer weights with uniform integers cut from 64-bit random
words: no floats and no modulo bias on the decision path.

Three quantized forms (:mod:`~optnoise.sampling.quantized`), one per kind of mechanism:

* :class:`QuantizedCyclic` -- cyclic noise on ``{0..n}`` (or a product): weights summing to
  ``2^bits``, drawn by an exact integer alias table (:mod:`~optnoise.sampling.alias`) from
  :data:`~optnoise.sampling.alias.ALIAS_MIN_SUPPORT` outcomes on, else by inverse CDF;
* :class:`QuantizedChannel` -- each row of a channel summing to ``2^bits`` (a row table per
  drawn input);
* :class:`QuantizedInteger` -- noise on ``Z``: integer window weights and geometric tails
  whose ratio is a dyadic rational ``a / 2^m`` (rounded *up* from the float ratio, i.e.
  slower decay: more noise, never less privacy in the tails), drawn by
  :func:`~optnoise.sampling.integer_line.draw_window_tails`.

Randomness is always injected (:mod:`optnoise.randomness`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..analysis import Guarantee, IntegerForm, PrivacyProfile, exact_profile, guarantee
from ..analysis.exact import exp_lower
from ..errors import InvalidParameterError, OptnoiseError
from ..neighbourhood import InputPairs, Neighbourhood
from ..pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from ..target import Target
from .quantized import (Quantized, QuantizedChannel, QuantizedCyclic, QuantizedInteger, WeightTable,
                        exact_integer_pmf, integer_line_form)

#: Largest resolution: cumulative weights must fit in an unsigned 64-bit word.
MAX_BITS = 62
#: (bits, mixing weight with the uniform PMF) tried in order by :func:`quantize`.
QUANTIZE_SCHEDULE: tuple[tuple[int, Fraction], ...] = (
    (32, Fraction(0)), (48, Fraction(0)), (MAX_BITS, Fraction(0)),
    (MAX_BITS, Fraction(1, 2 ** 40)), (MAX_BITS, Fraction(1, 2 ** 30)), (MAX_BITS, Fraction(1, 2 ** 20)),
)
#: Bits of the dyadic tail ratio ``a / 2^TAIL_BITS`` of a quantized integer-line PMF.
TAIL_BITS = 24
#: Resolution of the window weights of a quantized integer-line PMF (keeps every
#: region total below 2^63 so that draws stay in 64-bit integers).
WINDOW_BITS = 36
#: A quantized PMF with tails first gets a window extended (by at most
#: :data:`MAX_EXTENSION` cells a side) until the mass beyond it is below this, so that
#: draws rarely need the geometric tails; if that fails the certificate, the PMF's own window.
TAIL_MASS = 2.0 ** -20
MAX_EXTENSION = 512


# ------------------------------------------------------------------ quantize + certify
def round_weights(probs: np.ndarray, bits: int, keep: np.ndarray | None = None) -> np.ndarray:
    """Integer weights summing exactly to ``2^bits``, close to ``probs * 2^bits / sum(probs)``.

    Vectorised and deterministic: the masses are scaled by the power of two nearest to
    ``2^bits / sum`` (exact in floats, so the floors and remainders below are exact), floored,
    every kept cell (default: ``probs > 0``) raised to at least 1; a shortfall larger than
    the number of cells (masses far from summing to 1) is spread in proportion to the
    weights, which keeps their ratios; the last units go to the cells with the largest
    remainders (or are taken from the smallest): largest-remainder rounding. This rounding
    is *not* part of any privacy argument: the exact certificate of the returned weights is.
    """
    if isinstance(bits, bool) or not isinstance(bits, int) or not (1 <= bits <= MAX_BITS):
        raise InvalidParameterError("bits", bits, f"an integer in [1, {MAX_BITS}]")
    p = np.asarray(probs, dtype=np.float64).ravel()
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise InvalidParameterError("probs", "invalid masses", "finite masses >= 0 with a positive sum")
    keep = (p > 0) if keep is None else np.asarray(keep, dtype=bool).ravel()
    total = 1 << bits
    if int(keep.sum()) > total:
        raise InvalidParameterError("bits", bits, f"at least log2 of the support size ({int(keep.sum())})")
    # sum * 2^shift lies in [2^bits / sqrt 2, 2^bits sqrt 2): every weight and sum stays below 2^63
    shift = bits - round(math.log2(float(p.sum())))
    w = np.floor(np.ldexp(p, shift)).astype(np.uint64)
    w[keep & (w == 0)] = 1
    short = total - int(w.sum(dtype=np.uint64))  # exact: the sum is below 2^64
    for _ in range(8):  # spread a large shortfall in proportion: every ratio kept up to one unit
        if abs(short) <= w.size:
            break
        # the float product can be off by hundreds of units for weights near 2^62: repeat on
        # the residual (it shrinks by about 2^-9 each time) rather than give it to every cell
        adj = np.trunc(w.astype(np.float64) * (short / float(total - short))).astype(np.int64)
        if short < 0:  # never take a kept cell below 1
            adj = np.maximum(adj, keep.astype(np.int64) - w.astype(np.int64))
        w = (w.astype(np.int64) + adj).astype(np.uint64)
        short = total - int(w.sum(dtype=np.uint64))
    # remainders against the ideal weights, so that the last units go where they are missing
    ideal = p * (float(total) / float(p.sum()))
    remainder = ideal - w.astype(np.float64)
    support = np.flatnonzero((p > 0) | keep)  # a zero mass that is not kept stays zero
    while short > 0:  # the largest remainders get one more unit
        k = min(short, support.size)
        top = support[np.argpartition(remainder[support], support.size - k)[support.size - k:]] \
            if k < w.size else support
        w[top] += np.uint64(1)
        remainder[top] -= 1.0
        short -= k
    while short < 0:  # the smallest remainders lose one (never a kept cell below 1)
        eligible = np.flatnonzero(w > keep.astype(np.uint64))
        k = min(-short, eligible.size)
        if k == 0:
            raise InvalidParameterError("bits", bits, "enough resolution for the support")
        low = eligible[np.argpartition(remainder[eligible], k - 1)[:k]]
        w[low] -= np.uint64(1)
        remainder[low] += 1.0
        short += k
    return w


def _schedule(target: Target | None, bits: int | None) -> tuple[tuple[int, Fraction], ...]:
    if bits is not None and not (isinstance(bits, int) and not isinstance(bits, bool) and 8 <= bits <= MAX_BITS):
        raise InvalidParameterError("bits", bits, f"an integer in [8, {MAX_BITS}]")
    if target is None:
        return ((bits or MAX_BITS, Fraction(0)),)
    if bits is not None:
        return tuple((bits, lam) for b, lam in QUANTIZE_SCHEDULE if b == MAX_BITS)
    return QUANTIZE_SCHEDULE


def _evaluate(profile: PrivacyProfile, target: Target | None) -> Guarantee:
    if target is None:
        return guarantee(profile)
    return guarantee(profile, epsilon=target.epsilon, delta=target.delta)


def _failure(target: Target, tried: list[str]) -> OptnoiseError:
    return OptnoiseError(f"cannot quantize the mechanism so that its exact guarantee meets {target.describe()} "
                         f"(tried {'; '.join(tried)}); check that the mechanism meets the target before quantizing")


def quantize(mechanism: CyclicPMF | IntegerPMF | Channel, neighbourhood: Neighbourhood | InputPairs, *,
             target: Target | None = None, bits: int | None = None) -> Quantized:
    """Integer weights for ``mechanism`` whose *exact* guarantee meets ``target``.

    Parameters
    ----------
    mechanism:
        The (float) mechanism to release with: cyclic noise, noise on Z or a channel.
    neighbourhood:
        The neighbourhood the target refers to.
    target:
        Without a target the weights are rounded once and their exact certificate is
        reported as it is.
    bits:
        Cyclic noise and channels: force one resolution (``8..62``); by default
        :data:`QUANTIZE_SCHEDULE` is tried in order: 32, 48, 62 bits, then 62 bits after
        mixing ``2^-40``, ``2^-30``, ``2^-20`` of the uniform distribution (mixing makes
        every likelihood ratio strictly smaller, so rounding has room).

    Raises
    ------
    OptnoiseError
        When no resolution keeps the target (for example a mechanism that does not
        meet it in the first place).

    Proof: docs/proofs/quantization-and-repair.md.
    """
    if target is not None and not isinstance(target, Target):
        raise InvalidParameterError("target", target, "a Target(epsilon, delta, notion) or None")
    if isinstance(mechanism, CyclicPMF):
        return _quantize_cyclic(mechanism, neighbourhood, target, bits)  # type: ignore[arg-type]
    if isinstance(mechanism, Channel):
        return _quantize_channel(mechanism, neighbourhood, target, bits)
    if isinstance(mechanism, IntegerPMF):
        return _quantize_integer(mechanism, neighbourhood, target)  # type: ignore[arg-type]
    raise InvalidParameterError("mechanism", type(mechanism).__name__, "CyclicPMF, IntegerPMF or Channel")


def _floats(exact: np.ndarray | None, floats: np.ndarray) -> np.ndarray:
    """The masses to round (floats; the rounding is not part of the privacy argument)."""
    if exact is None:
        return np.asarray(floats, dtype=np.float64)
    return np.array([float(v) for v in exact.ravel()], dtype=np.float64).reshape(np.shape(floats))


def _mixed_rows(m: np.ndarray, lam: Fraction) -> np.ndarray:
    """Every row of a channel mixed with the uniform row (as :func:`_mixed`, vectorised)."""
    return m / m.sum(axis=1, keepdims=True) * (1.0 - float(lam)) + float(lam) / m.shape[1]


def _mixed(f: np.ndarray, lam: Fraction) -> np.ndarray:
    if lam == 0:
        return f
    return f / f.sum() * (1.0 - float(lam)) + float(lam) / f.size


def _quantize_cyclic(pmf: CyclicPMF, nb: Neighbourhood, target: Target | None, bits: int | None) -> QuantizedCyclic:
    f = _floats(pmf.exact, pmf.probs).ravel()
    keep = f > 0
    tried = []
    for b, lam in _schedule(target, bits):
        w = round_weights(_mixed(f, lam), b, keep | (lam > 0)).reshape(pmf.shape)
        profile = exact_profile(IntegerForm("cyclic", w, 1 << b), nb)
        if target is None or profile.meets(target):
            return QuantizedCyclic(w, b, lam, nb, _evaluate(profile, target), target)
        tried.append(f"{b} bits/mixing {lam}: {_shortfall(profile, target)}")
    raise _failure(target, tried)  # type: ignore[arg-type]


#: Channels with at least this many outputs are rounded all rows at once (:func:`round_rows`).
ROW_ROUNDING_FROM = 512


def round_rows(matrix: np.ndarray, bits: int, keep: np.ndarray) -> np.ndarray:
    """Integer weights, every row summing exactly to ``2^bits``, for a large channel.

    Vectorised over the whole matrix: each row is scaled by the power of two nearest to
    ``2^bits / sum`` (exact in floats), floored, every kept cell raised to at least 1, and
    the row's shortfall (below the number of cells) is added to (or taken from) its largest
    cell, which moves that cell by less than ``n 2^-bits`` of the row's mass. A rounding,
    not part of any privacy argument: the exact certificate of the returned weights is.
    """
    M = np.asarray(matrix, dtype=np.float64)
    total = 1 << bits
    scale = np.ldexp(1.0, (bits - np.round(np.log2(M.sum(axis=1)))).astype(np.int64))  # powers of two
    w = np.empty(M.shape, dtype=np.uint64)
    for lo in range(0, M.shape[0], 256):  # scaling by a power of two is exact; floors of blocks
        block = M[lo:lo + 256] * scale[lo:lo + 256, None]
        np.floor(block, out=block)
        w[lo:lo + 256] = block
    w[keep & (w == 0)] = 1
    short = total - w.sum(axis=1, dtype=np.uint64).astype(object)  # exact: sums below 2^64
    top = np.argmax(M, axis=1)
    rows = np.arange(M.shape[0])
    fix = np.array([int(v) for v in short], dtype=np.int64)
    if np.any(np.abs(fix) > M.shape[1]) or np.any(w[rows, top].astype(np.int64) + fix < 1):
        return np.stack([round_weights(row, bits, keep[i]) for i, row in enumerate(M)])
    w[rows, top] = (w[rows, top].astype(np.int64) + fix).astype(np.uint64)
    return w


def _pure_ratio_fails(weights: np.ndarray, pairs: InputPairs, epsilon: float) -> bool:
    """A float screen: some pair's weights are clearly beyond ``e^eps`` (by more than
    ``1e-9`` relative), so the exact certificate would refuse them. Saves a certification
    of a resolution that cannot pass; the certificate still decides every accepted one."""
    limit = math.exp(epsilon) * (1.0 + 1e-9)
    if pairs.covers_all(weights.shape[0]):  # every pair: each column's largest against its least
        return bool(np.any(weights.max(axis=0).astype(np.float64) > limit * weights.min(axis=0).astype(np.float64)))
    ordered = pairs.ordered(weights.shape[0])
    pa = np.array([p[0] for p in ordered])
    pb = np.array([p[1] for p in ordered])
    step = max(1, (1 << 20) // max(1, weights.shape[1]))
    for lo in range(0, pa.size, step):  # blocks of about a million cells
        A = weights[pa[lo:lo + step]].astype(np.float64)
        B = weights[pb[lo:lo + step]].astype(np.float64)
        if np.any(A > limit * B):
            return True
    return False


def _quantize_channel(ch: Channel, nb: Neighbourhood | InputPairs, target: Target | None,
                      bits: int | None) -> QuantizedChannel:
    pairs = nb if isinstance(nb, InputPairs) else InputPairs.from_distances(nb, ch.n_inputs)
    m = _floats(ch.exact, ch.matrix)
    keep = m > 0
    large = m.shape[1] >= ROW_ROUNDING_FROM
    tried = []
    smallest = float(np.min(m, where=keep, initial=1.0))
    for b, lam in _schedule(target, bits):
        if large and lam == 0 and smallest * 2.0 ** b < 2.0 ** 20 and b < MAX_BITS:
            tried.append(f"{b} bits: the smallest mass {smallest:.3g} has fewer than 20 bits")
            continue  # rounding would move the smallest masses by more than 2^-20: try more bits
        if large:
            weights = round_rows(m if lam == 0 else _mixed_rows(m, lam), b, keep | (lam > 0))
        else:
            weights = np.stack([round_weights(_mixed(row, lam), b, keep[i] | (lam > 0)) for i, row in enumerate(m)])
        if large and target is not None and target.pure and _pure_ratio_fails(weights, pairs, target.epsilon):
            tried.append(f"{b} bits/mixing {lam}: a ratio beyond e^eps (float screen)")
            continue
        profile = exact_profile(IntegerForm("channel", weights, 1 << b), pairs)
        if target is None or profile.meets(target):
            return QuantizedChannel(weights, b, lam, pairs, _evaluate(profile, target), target)
        tried.append(f"{b} bits/mixing {lam}: {_shortfall(profile, target)}")
    raise _failure(target, tried)  # type: ignore[arg-type]


def _shortfall(profile: PrivacyProfile, target: Target) -> str:
    if target.notion == "attack":
        return "its exact trade-off curve misses the attack target"
    if target.pure:
        return f"epsilon_pure = {profile.epsilon_pure:.17g}"
    return f"delta_{target.notion} = {profile.delta(target.epsilon, target.notion):.6g}"


def dyadic_ratio_up(ratio: float, m: int = TAIL_BITS) -> tuple[int, int]:
    """``(a, m)`` with ``a / 2^m >= ratio + 2^-m``: a tail ratio rounded *up*.

    Rounding a geometric tail's ratio up makes the tail decay more slowly: the ratio
    between consecutive tail blocks moves away from ``e^eps``, never towards it. The
    margin of at least ``2^-m`` (far above the ``2^-53`` error of a float ratio such as
    ``exp(-eps)``) keeps a tail that was designed *at* the DP limit inside it.

    Proof: docs/proofs/quantization-and-repair.md.
    """
    a = math.floor(Fraction(ratio) * (1 << m)) + 2
    if a >= 1 << m:
        raise OptnoiseError(f"tail ratio {float(ratio):.17g} too close to 1 for {m}-bit quantization")
    return a, m


def _extended_window(pmf: IntegerPMF) -> tuple[int, int]:
    """The window grown into the tails until the mass beyond is below :data:`TAIL_MASS`."""
    lo, hi = pmf.lo, pmf.hi
    for tail, side in ((pmf.right_tail, 1), (pmf.left_tail, -1)):
        if tail is None:
            continue
        edge = hi if side > 0 else lo
        block = float(pmf.mass(edge - side * np.arange(tail.period)).sum())
        beyond = block * tail.ratio / (1.0 - tail.ratio)  # mass beyond the window on this side
        blocks = 0 if beyond <= TAIL_MASS else math.ceil(math.log(TAIL_MASS / beyond) / math.log(tail.ratio))
        cells = min(blocks * tail.period, MAX_EXTENSION)
        lo, hi = (lo, hi + cells) if side > 0 else (lo - cells, hi)
    return lo, hi


def _quantize_integer(pmf: IntegerPMF, nb: Neighbourhood, target: Target | None) -> QuantizedInteger:
    left = None if pmf.left_tail is None else (*dyadic_ratio_up(pmf.left_tail.ratio), pmf.left_tail.period)
    right = None if pmf.right_tail is None else (*dyadic_ratio_up(pmf.right_tail.ratio), pmf.right_tail.period)
    windows = [(pmf.lo, pmf.hi)]
    extended = None if pmf.finite_support else _extended_window(pmf)
    if extended is not None and extended != windows[0]:
        windows.insert(0, extended)
    tried = []
    for lo, hi in windows:
        masses = _floats(pmf.exact, pmf.probs) if (lo, hi) == (pmf.lo, pmf.hi) else pmf.window(lo, hi)
        # With tails every window cell must stay positive (a zero inside the support is an
        # infinite loss); a finite-support PMF may lose cells below the resolution at its
        # edges (they face zeros beyond the window anyway).
        keep = masses > 0 if not pmf.finite_support else np.zeros(masses.size, dtype=bool)
        w = round_weights(masses, WINDOW_BITS, keep).astype(np.int64)
        if pmf.finite_support:
            nonzero = np.flatnonzero(w)
            w = w[int(nonzero[0]):int(nonzero[-1]) + 1]
            lo += int(nonzero[0])
        lt, rt = left, right
        if target is not None and target.pure:
            shifts = nb.integer_shifts()
            lt = lift_margin(pmf.left_tail, w[:pmf.left_tail.period], shifts) if left else None
            rt = lift_margin(pmf.right_tail, w[-pmf.right_tail.period:], shifts) if right else None
            w = np.array(_lift_integer([int(x) for x in w], lo, lt, rt, shifts, exp_lower(target.epsilon)),
                         dtype=np.int64)
        profile = exact_profile(integer_line_form(w, lo, lt, rt), nb, space="integer")
        if target is None or profile.meets(target):
            return QuantizedInteger(w, lo, lt, rt, nb, _evaluate(profile, target), target)
        tried.append(f"window {lo}..{lo + w.size - 1} at {WINDOW_BITS} bits, {TAIL_BITS}-bit tail ratios: "
                     f"{_shortfall(profile, target)}")
    raise _failure(target, tried)  # type: ignore[arg-type]


def lift_margin(tail: GeometricTail, edge: np.ndarray, shifts: list[int]) -> tuple[int, int, int]:
    """The dyadic ratio ``(a, m, period)`` of a tail of period ``P > 1`` rounded up far enough
    for :func:`_lift_integer` to converge: by ``4 (P + max |mu|) / w_min`` relative, ``w_min``
    the smallest window weight of the edge block the tail repeats (period 1: :func:`dyadic_ratio_up`).

    Why: with ``P > 1`` the tail's cells ``p(k + P) = r p(k)`` copy ``P`` *different* window
    cells, so the lift's repairs go round a cycle of ``P`` cells, each repair rounded up to an
    integer (adding up to 1). One turn multiplies the block by ``1 / (E^P r)`` (just below 1
    when ``r`` is just above ``e^(-P eps)``) and adds up to ``P + max |mu|``: the weights grow
    until ``(P + max |mu|) / (E^P r - 1)``. With only the ``2^-24`` margin of
    :func:`dyadic_ratio_up` that is about ``10^8``, far above the weights of a window's edge
    (about ``2^16`` at :data:`TAIL_MASS`), and the lift ran for minutes before giving up (a
    per-record binary column at eps 0.05, issue 26). With the margin the fixed point is a
    quarter of the smallest edge weight: the lift converges in a few turns.

    Privacy: a ratio rounded *up* makes the tail decay more slowly, away from the DP limit
    (as :func:`dyadic_ratio_up`); the exact certificate of the result decides, not this.
    """
    if tail.period == 1:
        return (*dyadic_ratio_up(tail.ratio), 1)
    smallest = max(int(np.min(edge)), 1)
    margin = 4.0 * (tail.period + max(abs(s) for s in shifts)) / smallest
    raised = min(float(tail.ratio) * (1.0 + margin), 1.0 - 2.0 ** (2 - TAIL_BITS))
    return (*dyadic_ratio_up(max(raised, float(tail.ratio))), tail.period)


def _lift_integer(w: list[int], lo: int, left, right, shifts: list[int], e_low: Fraction) -> list[int]:
    """Smallest integer raise of the window weights meeting ``p(k) <= E p(k + mu)``.

    Used for pure targets: rounding can break a ratio that a design meets with
    equality (the geometric at ``alpha = e^-eps``). Every cell of the window extended
    by ``period + max |mu|`` on each tail side is the weight of a window cell times a
    power of the dyadic tail ratio; when ``val(k) > E val(k + mu)`` the source weight
    of ``k + mu`` is raised to the smallest integer that repairs the pair. Raising a
    weight never breaks a pair in which it is the larger side, so the iteration
    converges to the smallest feasible weights above the rounding (or fails when the
    mechanism cannot meet the target, e.g. a tail decaying faster than ``e^-eps``).
    The exact certificate, not this function, is what decides.
    """
    w = list(w)
    n = len(w)
    reach = max(abs(s) for s in shifts)
    ext_lo = -(left[2] + reach) if left else 0
    ext_hi = n - 1 + (right[2] + reach if right else 0)

    def source(i: int) -> tuple[int, int]:
        """Window index of extended cell ``i`` (window index coordinates) and its tail power
        ``t`` (negative on the left): the cell's weight is ``w[j] r^|t|``."""
        if 0 <= i < n:
            return i, 0
        period = (right if i >= n else left)[2]  # type: ignore[index]
        t = (i - (n - 1) + period - 1) // period if i >= n else (-i + period - 1) // period
        return (i - t * period, t) if i >= n else (i + t * period, -t)

    def factor(t: int) -> Fraction:
        a, m, _ = right if t > 0 else left  # type: ignore[misc]
        return Fraction(a, 1 << m) ** abs(t) if t else Fraction(1)

    cells = [(i, *source(i)) for i in range(ext_lo, ext_hi + 1)]
    by_index = {i: (j, t) for i, j, t in cells}
    # Each pair (k, k + mu) as integers: the pair holds iff w[j2] * A >= w[j] * B, with
    # B / A = r(t) / (E r(t2)) exactly (Python ints: the same test as Fractions, without their
    # gcds); the ratios depend only on the two tail powers, computed once each.
    ratios: dict[tuple[int, int], tuple[int, int]] = {}
    pairs = []
    for i, j, t in cells:
        for mu in shifts:
            if i + mu in by_index:
                j2, t2 = by_index[i + mu]
                if (t, t2) not in ratios:
                    ratio = factor(t) / (e_low * factor(t2))
                    ratios[(t, t2)] = (ratio.denominator, ratio.numerator)
                pairs.append((j, j2, *ratios[(t, t2)]))
    backward = pairs[::-1]
    for turn in range(50 * (n + 10)):
        changed = False
        for j, j2, a, b in (pairs if turn % 2 == 0 else backward):  # sweeps both ways: repairs travel both ways
            need = w[j] * b
            if w[j2] * a < need:
                w[j2] = -(-need // a)
                changed = True
        if not changed:
            return w
    raise OptnoiseError("the integer ratio lift did not converge: the mechanism cannot meet its pure target")


__all__ = ["MAX_BITS", "MAX_EXTENSION", "QUANTIZE_SCHEDULE", "Quantized", "QuantizedChannel", "QuantizedCyclic",
           "QuantizedInteger", "ROW_ROUNDING_FROM", "TAIL_BITS", "TAIL_MASS", "WINDOW_BITS", "WeightTable",
           "dyadic_ratio_up", "exact_integer_pmf", "integer_line_form", "lift_margin", "quantize", "round_rows",
           "round_weights"]
