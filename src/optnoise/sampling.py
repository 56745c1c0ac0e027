"""Quantize-and-certify, and exact sampling with injected randomness.

What is released must be exactly the distribution that was certified
(docs/architecture.md, "Exactness"). A designed mechanism has float masses;
:func:`quantize` turns it into *integer weights* and certifies *those* with the
exact (rational, outward-rounded) analysis. The samplers then draw from the integer
weights with uniform integers cut from 64-bit random words: no floats and no modulo
bias on the decision path, so a draw has exactly the certified distribution.

Three quantized forms, one per kind of mechanism:

* :class:`QuantizedCyclic` -- cyclic noise on ``{0..n}`` (or a product): weights
  summing to ``2^bits``;
* :class:`QuantizedChannel` -- each row of a channel summing to ``2^bits``;
* :class:`QuantizedInteger` -- noise on ``Z``: integer window weights and geometric
  tails whose ratio is a dyadic rational ``a / 2^m`` (rounded *up* from the float
  ratio, i.e. slower decay: more noise, never less privacy in the tails).

Randomness is always injected (:mod:`optnoise.randomness`): the operating system's
CSPRNG by default, a seeded stream marked not private on request.

Also the exact samplers of Canonne, Kamath and Steinke (2020, Algorithms 1-3) for the
discrete Laplace and discrete Gaussian on rational parameters, and an exact sampler
for Geng & Viswanath's discrete staircase.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from .analysis import Guarantee, guarantee, privacy_profile
from .analysis.exact import exp_lower
from .analysis.pairs import fraction_array
from .errors import InvalidParameterError, OptnoiseError
from .neighbourhood import InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, GeometricTail, IntegerPMF
from .randomness import RandomSource
from .target import Target

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
_CHUNK = 1 << 20


# ------------------------------------------------------------------ quantized forms
@dataclass(frozen=True, eq=False)
class QuantizedCyclic:
    """Integer weights summing to ``2^bits`` and the exact certificate of those weights.

    ``mixing`` is the weight ``lambda`` of the uniform PMF mixed in before rounding
    (``(1 - lambda) f + lambda / N``) when plain rounding could not keep the target.
    """

    weights: np.ndarray  # uint64, shape of the PMF, sums to 2^bits
    bits: int
    mixing: Fraction
    neighbourhood: Neighbourhood
    certificate: Guarantee
    target: Target | None

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    kind = "cyclic"

    @property
    def pmf(self) -> CyclicPMF:
        """The exact PMF that is sampled (masses ``w / 2^bits``)."""
        return CyclicPMF.from_weights(np.array([int(w) for w in self.weights.ravel()], dtype=object)
                                      .reshape(self.weights.shape))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.weights.shape)

    def draw(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` noise draws as flat indices (``np.unravel_index`` for vectors)."""
        return draw_indices(np.cumsum(self.weights.ravel().astype(np.uint64)), self.bits, count, source)

    def to_json(self) -> dict:
        return {"kind": self.kind, "bits": self.bits, "total_weight": f"2^{self.bits}", "mixing": str(self.mixing),
                "weights": [str(int(w)) for w in self.weights.ravel()], "shape": list(self.shape),
                "certificate": self.certificate.to_json(),
                "target": None if self.target is None else self.target.to_json()}


@dataclass(frozen=True, eq=False)
class QuantizedChannel:
    """A channel whose every row is integer weights summing to ``2^bits``, certified exactly."""

    weights: np.ndarray  # uint64 (inputs, outputs), each row sums to 2^bits
    bits: int
    mixing: Fraction
    neighbourhood: InputPairs
    certificate: Guarantee
    target: Target | None

    kind = "channel"

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    @property
    def channel(self) -> Channel:
        """The exact channel that is sampled (``P[x, y] = w[x, y] / 2^bits``)."""
        total = 1 << self.bits
        ex = np.array([[Fraction(int(w), total) for w in row] for row in self.weights], dtype=object)
        return Channel(np.array([[float(v) for v in row] for row in ex]), exact=ex)

    def draw_outputs(self, inputs: np.ndarray, source: RandomSource) -> np.ndarray:
        """One output index per input index (rows drawn by inverse CDF, exactly)."""
        inputs = np.asarray(inputs, dtype=np.int64)
        if inputs.size and (inputs.min() < 0 or inputs.max() >= self.weights.shape[0]):
            raise InvalidParameterError("inputs", int(inputs.min() if inputs.min() < 0 else inputs.max()),
                                        f"input indices in 0..{self.weights.shape[0] - 1}")
        out = np.empty(inputs.shape, dtype=np.int64)
        cum = np.cumsum(self.weights.astype(np.uint64), axis=1)
        for x in np.unique(inputs):
            where = inputs == x
            out[where] = draw_indices(cum[x], self.bits, int(where.sum()), source)
        return out

    def to_json(self) -> dict:
        return {"kind": self.kind, "bits": self.bits, "total_weight": f"2^{self.bits} per row",
                "mixing": str(self.mixing), "weights": [[str(int(w)) for w in row] for row in self.weights],
                "certificate": self.certificate.to_json(),
                "target": None if self.target is None else self.target.to_json()}


@dataclass(frozen=True, eq=False)
class QuantizedInteger:
    """Noise on ``Z``: integer window weights plus geometric tails with dyadic ratios.

    The PMF is ``p(k) = W[k] / Z`` on the window ``lo..hi`` and, beyond it,
    ``p(hi + t*period + s) = W[hi - period + s] r^t / Z`` (``t >= 1``, ``s = 1..period``;
    the mirror image on the left), ``r = a / 2^m``. With ``B`` the weight of an end
    block, ``Z = S_W + (B_left + B_right) r / (1 - r)``.
    """

    weights: np.ndarray  # int64 window weights at lo..hi
    lo: int
    left: tuple[int, int, int] | None   # (a, m, period): ratio a / 2^m
    right: tuple[int, int, int] | None
    neighbourhood: Neighbourhood
    certificate: Guarantee
    target: Target | None

    kind = "integer"

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    @property
    def hi(self) -> int:
        return self.lo + self.weights.size - 1

    @property
    def pmf(self) -> IntegerPMF:
        """The exact PMF that is sampled (window masses ``W / Z``, dyadic tail ratios)."""
        return exact_integer_pmf(self.weights, self.lo, self.left, self.right)

    def _regions(self) -> tuple[int, list[tuple[str, int]]]:
        """Integer region weights scaled by ``prod (2^m - a)``: window, right tail, left tail."""
        s_w = int(self.weights.sum())
        tails = [("right", self.right, self.weights[-self.right[2]:]) if self.right else None,
                 ("left", self.left, self.weights[:self.left[2]]) if self.left else None]
        tails = [t for t in tails if t is not None]
        # weight of a tail relative to the window: B r / (1 - r) = B a / (2^m - a)
        denominators = [(1 << t[1][1]) - t[1][0] for t in tails]
        common = math.lcm(*denominators) if denominators else 1
        regions = [("window", s_w * common)]
        for (name, (a, m, _), block), den in zip(tails, denominators):
            regions.append((name, int(block.sum()) * a * (common // den)))
        return common, regions

    def draw(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` exact draws of the noise value (integers).

        Why exact: a region (window, right tail, left tail) is chosen with a uniform
        integer below the sum ``T`` of the integer region weights (rejection from 64-bit
        words, no modulo bias); a window value by inverse CDF on a uniform integer below
        ``S_W``; in a tail, the position ``s`` in the end block by inverse CDF on the block
        weights and the number of blocks ``t >= 1`` by counting Bernoulli(``a / 2^m``)
        successes (``m``-bit uniform integers compared with ``a``) before the first
        failure, ``P(t) = (1 - r) r^(t-1)``. The product of these probabilities is
        ``W[s] r^t / Z``.
        """
        count = _check_count(count)
        out = np.empty(count, dtype=np.int64)
        _, regions = self._regions()
        bounds = np.cumsum([w for _, w in regions])
        total = int(bounds[-1])
        if total >= 1 << 63:
            raise OptnoiseError("quantized integer-line PMF too fine for 64-bit sampling")
        u = uniform_below(total, count, source)
        which = np.searchsorted(bounds, u, side="right")
        cum_w = np.cumsum(self.weights.astype(np.int64))
        for index, (name, _) in enumerate(regions):
            sel = np.flatnonzero(which == index)
            if sel.size == 0:
                continue
            if name == "window":
                v = uniform_below(int(cum_w[-1]), sel.size, source)
                out[sel] = self.lo + np.searchsorted(cum_w, v, side="right")
                continue
            a, m, period = self.right if name == "right" else self.left  # type: ignore[misc]
            block = self.weights[-period:] if name == "right" else self.weights[:period]
            cum_b = np.cumsum(block.astype(np.int64))
            s = np.searchsorted(cum_b, uniform_below(int(cum_b[-1]), sel.size, source), side="right")
            t = 1 + geometric_failures(a, m, sel.size, source)
            if name == "right":
                out[sel] = self.hi - period + 1 + s + t * period
            else:
                out[sel] = self.lo + s - t * period
        return out

    def to_json(self) -> dict:
        tail = (lambda t: None if t is None else {"ratio": f"{t[0]}/2^{t[1]}", "period": t[2]})
        return {"kind": self.kind, "window": [self.lo, self.hi], "weights": [str(int(w)) for w in self.weights],
                "left_tail": tail(self.left), "right_tail": tail(self.right),
                "certificate": self.certificate.to_json(),
                "target": None if self.target is None else self.target.to_json()}


Quantized = QuantizedCyclic | QuantizedChannel | QuantizedInteger


# ------------------------------------------------------------------ quantize + certify
def _round_to_total(q: Sequence[Fraction], total: int, keep: np.ndarray) -> list[int]:
    """Largest-remainder rounding of ``q * total`` to integers summing to ``total``.

    Values with ``keep`` (a positive mass) never round to 0: the support, hence
    every ratio that was finite, is preserved.
    """
    scaled = [x * total for x in q]
    w = [math.floor(s) for s in scaled]
    for i, k in enumerate(keep):
        if k and w[i] == 0:
            w[i] = 1
    short = total - sum(w)
    order = sorted(range(len(w)), key=lambda i: scaled[i] - w[i], reverse=short > 0)
    step = 1 if short > 0 else -1
    i = 0
    while short != 0:
        j = order[i % len(order)]
        if step > 0 or w[j] > (1 if keep[j] else 0):
            w[j] += step
            short -= step
        i += 1
    return w


def _schedule(target: Target | None, bits: int | None) -> tuple[tuple[int, Fraction], ...]:
    if bits is not None and not (isinstance(bits, int) and not isinstance(bits, bool) and 8 <= bits <= MAX_BITS):
        raise InvalidParameterError("bits", bits, f"an integer in [8, {MAX_BITS}]")
    if target is None:
        return ((bits or MAX_BITS, Fraction(0)),)
    if bits is not None:
        return tuple((bits, lam) for b, lam in QUANTIZE_SCHEDULE if b == MAX_BITS)
    return QUANTIZE_SCHEDULE


def _evaluate(profile, target: Target | None) -> Guarantee:
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


def _quantize_cyclic(pmf: CyclicPMF, nb: Neighbourhood, target: Target | None, bits: int | None) -> QuantizedCyclic:
    flat = list(fraction_array(pmf.exact, pmf.probs).ravel())
    total_mass = sum(flat)
    flat = [x / total_mass for x in flat]
    keep = pmf.probs.ravel() > 0
    tried = []
    for b, lam in _schedule(target, bits):
        q = [(1 - lam) * x + lam / len(flat) for x in flat]
        w = _round_to_total(q, 1 << b, keep | (lam > 0))
        candidate = CyclicPMF.from_weights(np.array(w, dtype=object).reshape(pmf.shape))
        profile = privacy_profile(candidate, nb, exact=True)
        if target is None or profile.meets(target):
            return QuantizedCyclic(np.array(w, dtype=np.uint64).reshape(pmf.shape), b, lam, nb,
                                   _evaluate(profile, target), target)
        tried.append(f"{b} bits/mixing {lam}: {_shortfall(profile, target)}")
    raise _failure(target, tried)  # type: ignore[arg-type]


def _quantize_channel(ch: Channel, nb: Neighbourhood | InputPairs, target: Target | None,
                      bits: int | None) -> QuantizedChannel:
    pairs = nb if isinstance(nb, InputPairs) else InputPairs.from_distances(nb, ch.n_inputs)
    ex = fraction_array(ch.exact, ch.matrix)
    rows = [[x / sum(row) for x in row] for row in ex]
    keep = ch.matrix > 0
    tried = []
    for b, lam in _schedule(target, bits):
        w = [_round_to_total([(1 - lam) * x + lam / len(r) for x in r], 1 << b, keep[i] | (lam > 0))
             for i, r in enumerate(rows)]
        weights = np.array(w, dtype=np.uint64)
        exact = np.array([[Fraction(v, 1 << b) for v in r] for r in w], dtype=object)
        candidate = Channel(np.array([[float(v) for v in r] for r in exact]), exact=exact)
        profile = privacy_profile(candidate, pairs, exact=True)
        if target is None or profile.meets(target):
            return QuantizedChannel(weights, b, lam, pairs, _evaluate(profile, target), target)
        tried.append(f"{b} bits/mixing {lam}: {_shortfall(profile, target)}")
    raise _failure(target, tried)  # type: ignore[arg-type]


def _shortfall(profile, target: Target) -> str:
    if target.pure:
        return f"epsilon_pure = {profile.epsilon_pure:.17g}"
    return f"delta_{target.notion} = {profile.delta(target.epsilon, target.notion):.6g}"


def dyadic_ratio_up(ratio: float, m: int = TAIL_BITS) -> tuple[int, int]:
    """``(a, m)`` with ``a / 2^m >= ratio + 2^-m``: a tail ratio rounded *up*.

    Rounding a geometric tail's ratio up makes the tail decay more slowly: the ratio
    between consecutive tail blocks moves away from ``e^eps``, never towards it. The
    margin of at least ``2^-m`` (far above the ``2^-53`` error of a float ratio such as
    ``exp(-eps)``) keeps a tail that was designed *at* the DP limit inside it.
    """
    a = math.floor(Fraction(ratio) * (1 << m)) + 2
    if a >= 1 << m:
        raise OptnoiseError(f"tail ratio {ratio!r} too close to 1 for {m}-bit quantization")
    return a, m


def exact_integer_pmf(weights: np.ndarray, lo: int, left: tuple[int, int, int] | None,
                      right: tuple[int, int, int] | None) -> IntegerPMF:
    """The exact IntegerPMF of window weights and dyadic tails (masses ``W / Z``)."""
    w = [int(x) for x in weights]
    z = Fraction(sum(w))
    for tail, block in ((left, w[:left[2]] if left else []), (right, w[-right[2]:] if right else [])):
        if tail is not None:
            r = Fraction(tail[0], 1 << tail[1])
            z += sum(block) * r / (1 - r)
    exact = np.array([Fraction(x) / z for x in w], dtype=object)
    as_tail = (lambda t: None if t is None else GeometricTail(t[0] / (1 << t[1]), t[2]))
    return IntegerPMF(np.array([float(x) for x in exact]), -lo, left_tail=as_tail(left), right_tail=as_tail(right),
                      exact=exact)


def _quantize_integer(pmf: IntegerPMF, nb: Neighbourhood, target: Target | None) -> QuantizedInteger:
    left = None if pmf.left_tail is None else (*dyadic_ratio_up(pmf.left_tail.ratio), pmf.left_tail.period)
    right = None if pmf.right_tail is None else (*dyadic_ratio_up(pmf.right_tail.ratio), pmf.right_tail.period)
    masses = fraction_array(pmf.exact, pmf.probs)
    total = sum(masses)
    # With tails every window cell must stay positive (a zero inside the support is an
    # infinite loss); a finite-support PMF may lose cells below the resolution at its
    # edges (they face zeros beyond the window anyway).
    keep = pmf.probs > 0 if not pmf.finite_support else np.zeros(pmf.probs.size, dtype=bool)
    w = _round_to_total([x / total for x in masses], 1 << WINDOW_BITS, keep)
    lo = pmf.lo
    if pmf.finite_support:
        nonzero = np.flatnonzero(w)
        w = w[int(nonzero[0]):int(nonzero[-1]) + 1]
        lo += int(nonzero[0])
    if target is not None and target.pure:
        w = _lift_integer(w, lo, left, right, nb.integer_shifts(), exp_lower(target.epsilon))
    weights = np.array(w, dtype=np.int64)
    candidate = exact_integer_pmf(weights, lo, left, right)
    profile = privacy_profile(candidate, nb, exact=True)
    if target is not None and not profile.meets(target):
        raise _failure(target, [f"{WINDOW_BITS}-bit window, {TAIL_BITS}-bit tail ratios: {_shortfall(profile, target)}"])
    return QuantizedInteger(weights, lo, left, right, nb, _evaluate(profile, target), target)


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

    def source(i: int) -> tuple[int, Fraction]:
        """Window index and factor of extended cell ``i`` (window index coordinates)."""
        if 0 <= i < n:
            return i, Fraction(1)
        a, m, period = right if i >= n else left  # type: ignore[misc]
        t = (i - (n - 1) + period - 1) // period if i >= n else (-i + period - 1) // period
        j = i - t * period if i >= n else i + t * period
        return j, Fraction(a, 1 << m) ** t

    cells = [(i, *source(i)) for i in range(ext_lo, ext_hi + 1)]
    by_index = {i: (j, f) for i, j, f in cells}
    for _ in range(50 * (n + 10)):
        changed = False
        for i, j, f in cells:
            for mu in shifts:
                if i + mu not in by_index:
                    continue
                j2, f2 = by_index[i + mu]
                need = Fraction(w[j]) * f / (e_low * f2)
                if w[j2] < need:
                    w[j2] = math.ceil(need)
                    changed = True
        if not changed:
            return w
    raise OptnoiseError("the integer ratio lift did not converge: the mechanism cannot meet its pure target")


# ------------------------------------------------------------------ integer draws
def _check_count(count: int) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InvalidParameterError("count", count, "a non-negative integer")
    return int(count)


def uniform_below(bound: int, count: int, source: RandomSource) -> np.ndarray:
    """``count`` uniform integers in ``[0, bound)`` for ``1 <= bound < 2^63``, exactly.

    Rejection: a 63-bit word ``u`` is kept when ``u < floor(2^63 / bound) * bound``,
    so ``u mod bound`` is uniform (every residue has the same number of preimages).
    """
    if not 1 <= bound < 1 << 63:
        raise InvalidParameterError("bound", bound, "an integer in [1, 2^63)")
    limit = np.uint64(((1 << 63) // bound) * bound)
    b = np.uint64(bound)
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        need = count - filled
        u = source.words(need + need // 16 + 16) >> np.uint64(1)
        u = u[u < limit][:need]
        out[filled:filled + u.size] = (u % b).astype(np.int64)
        filled += u.size
    return out


def geometric_failures(a: int, m: int, count: int, source: RandomSource) -> np.ndarray:
    """Successes before the first failure of Bernoulli(``a / 2^m``) trials, exactly.

    Each trial compares an ``m``-bit uniform integer (a slice of a 64-bit word) with
    ``a``; ``P(k) = (1 - r) r^k`` with ``r = a / 2^m``.
    """
    out = np.zeros(count, dtype=np.int64)
    live = np.arange(count)
    per_word = 64 // m
    while live.size:
        words = source.words(live.size)
        for slot in range(per_word):
            chunk = (words >> np.uint64(slot * m)) & np.uint64((1 << m) - 1)
            success = chunk < np.uint64(a)
            out[live[success]] += 1
            keep = success
            live, words = live[keep], words[keep]
            if not live.size:
                break
    return out


def draw_indices(cumulative: np.ndarray, bits: int, count: int, source: RandomSource) -> np.ndarray:
    """Inverse-CDF draws on integer cumulative weights ending at ``2^bits`` (exact)."""
    count = _check_count(count)
    out = np.empty(count, dtype=np.int64)
    for start in range(0, count, _CHUNK):
        stop = min(count, start + _CHUNK)
        u = source.words(stop - start) >> np.uint64(64 - bits)
        out[start:stop] = np.searchsorted(cumulative, u, side="right")
    return out


# ------------------------------------------------------------------ exact samplers on Z (CKS 2020)
def bernoulli_exp(gamma: Fraction, source: RandomSource) -> bool:
    """``Bernoulli(exp(-gamma))`` for rational ``gamma >= 0``, exactly (CKS20 Alg. 1)."""
    if gamma < 0:
        raise InvalidParameterError("gamma", gamma, "a rational >= 0")
    while gamma > 1:
        if not bernoulli_exp(Fraction(1), source):
            return False
        gamma -= 1
    k = 1
    while True:  # Bernoulli(gamma / k) until the first failure; accept if the number of successes is even
        if source.randbelow(gamma.denominator * k) >= gamma.numerator:
            break
        k += 1
    return k % 2 == 1


def discrete_laplace(t: Fraction, count: int, source: RandomSource) -> np.ndarray:
    """Two-sided geometric: ``P(k) ∝ exp(-|k| / t)`` on Z, ``t`` rational > 0 (CKS20 Alg. 2).

    The geometric mechanism with ``alpha = exp(-1/t)``; exact, rejection based.
    """
    t = Fraction(t)
    if t <= 0:
        raise InvalidParameterError("t", t, "a rational > 0")
    s, tt = t.numerator, t.denominator  # scale = s / tt
    out = np.empty(_check_count(count), dtype=np.int64)
    for i in range(out.size):
        while True:
            u = source.randbelow(s)
            if not bernoulli_exp(Fraction(u, s), source):
                continue
            v = 0
            while bernoulli_exp(Fraction(1), source):
                v += 1
            x = (u + s * v) // tt
            negative = source.randbelow(2) == 1
            if negative and x == 0:
                continue
            out[i] = -x if negative else x
            break
    return out


def discrete_gaussian(sigma2: Fraction, count: int, source: RandomSource) -> np.ndarray:
    """Discrete Gaussian ``P(k) ∝ exp(-k^2 / (2 sigma^2))`` on Z, exactly (CKS20 Alg. 3).

    ``sigma2`` is the rational variance parameter ``sigma^2 > 0``.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise InvalidParameterError("sigma2", sigma2, "a rational > 0")
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1  # floor(sigma) + 1
    out = np.empty(_check_count(count), dtype=np.int64)
    for i in range(out.size):
        while True:
            y = int(discrete_laplace(Fraction(t), 1, source)[0])
            gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
            if bernoulli_exp(gamma, source):
                out[i] = y
                break
    return out


def sample_discrete_staircase(epsilon: float, sensitivity: int, r: int, count: int,
                              source: RandomSource) -> np.ndarray:
    """Exact draws from Geng & Viswanath's discrete staircase ``P_r`` (82)-(83).

    The binary value of ``epsilon`` is an exact rational ``e``; all coin flips are
    Bernoulli(``exp(-e)``) by Canonne, Kamath & Steinke's exact algorithm. A draw is a
    magnitude ``G Delta + i`` (``G`` geometric with ratio ``b``; ``i`` uniform on
    ``0..Delta-1`` accepted with probability 1 if ``i < r`` else ``b``) and a sign,
    rejecting ``(-, 0)`` so that 0 is not counted twice.
    """
    from .target import check_epsilon
    eps = check_epsilon(epsilon, allow_zero=False)
    if isinstance(sensitivity, bool) or int(sensitivity) != sensitivity or sensitivity < 1:
        raise InvalidParameterError("sensitivity", sensitivity, "an integer >= 1")
    d = int(sensitivity)
    if isinstance(r, bool) or int(r) != r or not 1 <= r <= d:
        raise InvalidParameterError("r", r, f"an integer with 1 <= r <= sensitivity = {d}")
    e = Fraction(eps)
    out = np.empty(_check_count(count), dtype=np.int64)
    for n in range(out.size):
        while True:
            g = 0
            while bernoulli_exp(e, source):
                g += 1
            while True:
                i = source.randbelow(d)
                if i < r or bernoulli_exp(e, source):
                    break
            negative = source.randbelow(2) == 1
            magnitude = g * d + i
            if negative and magnitude == 0:
                continue
            out[n] = -magnitude if negative else magnitude
            break
    return out
