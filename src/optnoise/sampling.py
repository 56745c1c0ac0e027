"""Quantize-and-certify, and exact sampling with unpredictable randomness.

What is released must be exactly the distribution that was certified
(DESIGN.md "Exactness"). A designed PMF has float masses; :func:`quantize` turns
it into integer weights summing to ``2^bits`` and certifies *those* weights with
the exact (rational, outward-rounded) analysis of :mod:`optnoise.exact`. The
sampler then draws ``bits``-bit uniform integers and inverts the cumulative
weights: no floats, no modulo bias, so the draw has exactly the certified PMF.

Randomness is always injected (:class:`RandomSource`). The default is
:class:`SystemRandomSource` (``os.urandom``, the operating system's CSPRNG); a
:class:`SeededRandomSource` exists for reproducible tests and is marked
``private = False`` wherever it is reported.

Also exact samplers for the infinite-support families used with noise on the
integer line: the discrete Laplace (two-sided geometric) and discrete Gaussian
of Canonne, Kamath and Steinke (2020), Algorithms 1-3, on rational parameters.
"""

from __future__ import annotations

import math
import os
import secrets
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol, Sequence

import numpy as np

from .analysis import Guarantee, guarantee
from .errors import InvalidParameterError, OptnoiseError
from .exact import _fractions, exact_profile
from .neighbourhood import Neighbourhood
from .pmf import CyclicPMF

#: Largest resolution: cumulative weights must fit in an unsigned 64-bit word.
MAX_BITS = 62
#: (bits, mixing weight with the uniform PMF) tried in order by :func:`quantize`.
QUANTIZE_SCHEDULE: tuple[tuple[int, Fraction], ...] = (
    (32, Fraction(0)), (48, Fraction(0)), (MAX_BITS, Fraction(0)),
    (MAX_BITS, Fraction(1, 2 ** 40)), (MAX_BITS, Fraction(1, 2 ** 30)), (MAX_BITS, Fraction(1, 2 ** 20)),
)
_CHUNK = 1 << 20


# ------------------------------------------------------------------ randomness
class RandomSource(Protocol):
    """Where random bits come from. ``private`` says whether they are unpredictable."""

    private: bool
    description: str

    def words(self, count: int) -> np.ndarray:
        """``count`` independent uniform 64-bit words (``uint64``)."""

    def randbelow(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` (exact, any size)."""


@dataclass(frozen=True)
class SystemRandomSource:
    """The operating system's CSPRNG (``os.urandom`` / ``secrets``): the default."""

    private: bool = True
    description: str = "os.urandom (operating-system CSPRNG)"

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * count), dtype="<u8").astype(np.uint64)

    def randbelow(self, bound: int) -> int:
        return secrets.randbelow(bound)


@dataclass(frozen=True)
class SeededRandomSource:
    """A seeded PCG64 stream: reproducible, **not private** (an attacker who knows
    or guesses the seed can subtract the noise)."""

    seed: int
    private: bool = False
    _gen: np.random.Generator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise InvalidParameterError("seed", self.seed, "a non-negative integer")
        object.__setattr__(self, "_gen", np.random.Generator(np.random.PCG64(int(self.seed))))

    @property
    def description(self) -> str:
        return f"numpy PCG64 seeded with {self.seed} (NOT private)"

    def words(self, count: int) -> np.ndarray:
        return self._gen.bit_generator.random_raw(count).astype(np.uint64)

    def randbelow(self, bound: int) -> int:
        if bound <= 0:
            raise InvalidParameterError("bound", bound, "a positive integer")
        bits = bound.bit_length()
        while True:  # rejection: exact, no modulo bias
            words = -(-bits // 64)
            value = 0
            for w in self.words(words):
                value = (value << 64) | int(w)
            value >>= 64 * words - bits
            if value < bound:
                return value


def random_source(seed: int | None = None) -> RandomSource:
    """The CSPRNG, or a seeded (not private) stream when ``seed`` is given."""
    return SystemRandomSource() if seed is None else SeededRandomSource(seed)


# ------------------------------------------------------------------ quantize + certify
@dataclass(frozen=True)
class QuantizedPMF:
    """Integer weights summing to ``2^bits`` and the exact certificate of those weights.

    ``mixing`` is the weight ``lambda`` of the uniform PMF mixed in before rounding
    (``(1 - lambda) f + lambda / N``) when plain rounding could not keep the target.
    """

    weights: np.ndarray  # uint64, shape of the PMF, sums to 2^bits
    bits: int
    mixing: Fraction
    neighbourhood: Neighbourhood
    certificate: Guarantee
    target: dict | None

    def __post_init__(self) -> None:
        self.weights.setflags(write=False)

    @property
    def pmf(self) -> CyclicPMF:
        """The exact PMF that is sampled (masses ``w / 2^bits``)."""
        return CyclicPMF.from_weights(np.array([int(w) for w in self.weights.ravel()], dtype=object)
                                      .reshape(self.weights.shape))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.weights.shape)

    def to_json(self) -> dict:
        return {
            "bits": self.bits,
            "total_weight": f"2^{self.bits}",
            "mixing": str(self.mixing),
            "weights": [str(int(w)) for w in self.weights.ravel()],
            "shape": list(self.shape),
            "certificate": self.certificate.to_json(),
            "target": self.target,
        }


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


def _meets(cert: Guarantee, notion: str, delta: float) -> bool:
    value = cert.delta_dp if notion == "dp" else cert.delta_pdp
    return value is not None and value <= delta


def quantize(pmf: CyclicPMF, neighbourhood: Neighbourhood, *, epsilon: float | None = None, delta: float = 0.0,
             notion: str = "dp", bits: int | None = None) -> QuantizedPMF:
    """Integer weights for ``pmf`` whose *exact* guarantee meets the target.

    Parameters
    ----------
    pmf:
        The (float) PMF to release with.
    neighbourhood:
        The neighbourhood the target refers to.
    epsilon, delta, notion:
        The target ``(epsilon, delta)`` under ``"dp"`` or ``"pdp"``. Without
        ``epsilon`` there is no target: the weights are rounded at ``bits`` (default
        :data:`MAX_BITS`) and their exact certificate is reported as it is.
    bits:
        Force one resolution (``8..62``); by default :data:`QUANTIZE_SCHEDULE` is
        tried in order: 32, 48, 62 bits, then 62 bits after mixing ``2^-40``,
        ``2^-30``, ``2^-20`` of the uniform PMF (mixing makes every likelihood
        ratio strictly smaller, so rounding has room).

    Raises
    ------
    OptnoiseError
        When no resolution keeps the target (for example a PMF that does not meet
        it in the first place).
    """
    if notion not in ("dp", "pdp"):
        raise InvalidParameterError("notion", notion, "'dp' or 'pdp'")
    if bits is not None and not (isinstance(bits, int) and 8 <= bits <= MAX_BITS):
        raise InvalidParameterError("bits", bits, f"an integer in [8, {MAX_BITS}]")
    flat = list(_fractions(pmf.exact, pmf.probs).ravel())
    total_mass = sum(flat)
    flat = [x / total_mass for x in flat]
    keep = pmf.probs.ravel() > 0
    n_values = len(flat)
    if epsilon is None:
        schedule: tuple[tuple[int, Fraction], ...] = ((bits or MAX_BITS, Fraction(0)),)
    elif bits is not None:
        schedule = tuple((bits, lam) for b, lam in QUANTIZE_SCHEDULE if b == MAX_BITS)
    else:
        schedule = QUANTIZE_SCHEDULE
    tried = []
    for b, lam in schedule:
        q = [(1 - lam) * x + lam / n_values for x in flat]
        w = _round_to_total(q, 1 << b, keep | (lam > 0))
        weights = np.array(w, dtype=np.uint64).reshape(pmf.shape)
        candidate = CyclicPMF.from_weights(np.array(w, dtype=object).reshape(pmf.shape))
        profile = exact_profile(candidate, neighbourhood)
        cert = guarantee(profile, epsilon=epsilon, delta=delta if epsilon is not None else None)
        if epsilon is None or _meets(cert, notion, delta):
            target = None if epsilon is None else {"notion": notion, "epsilon": epsilon, "delta": delta}
            return QuantizedPMF(weights, b, lam, neighbourhood, cert, target)
        tried.append(f"{b} bits/mixing {lam}: delta_{notion} = {cert.delta_dp if notion == 'dp' else cert.delta_pdp}")
    raise OptnoiseError(f"cannot quantize the PMF so that its exact guarantee meets ({epsilon}, {delta})-{notion.upper()}"
                        f" (tried {'; '.join(tried)}); check that the PMF meets the target before quantizing")


# ------------------------------------------------------------------ sampling
def sample_quantized(q: QuantizedPMF, count: int, source: RandomSource) -> np.ndarray:
    """``count`` draws of the noise value (flat index; use ``np.unravel_index`` for
    vectors), exactly distributed as ``weights / 2^bits``.

    Each draw takes one 64-bit word, keeps its top ``bits`` bits (a uniform integer
    in ``[0, 2^bits)``) and finds its interval in the cumulative weights.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InvalidParameterError("count", count, "a non-negative integer")
    return draw_indices(np.cumsum(q.weights.ravel().astype(np.uint64)), q.bits, int(count), source)


def draw_indices(cumulative: np.ndarray, bits: int, count: int, source: RandomSource) -> np.ndarray:
    """Inverse-CDF draws on integer cumulative weights ending at ``2^bits`` (exact)."""
    out = np.empty(count, dtype=np.int64)
    for start in range(0, count, _CHUNK):
        stop = min(count, start + _CHUNK)
        u = source.words(stop - start) >> np.uint64(64 - bits)
        out[start:stop] = np.searchsorted(cumulative, u, side="right")
    return out


def add_noise_cyclic(values: np.ndarray, q: QuantizedPMF, source: RandomSource) -> np.ndarray:
    """Release ``(values + noise) mod (n + 1)`` for 1-D domain indices ``values``."""
    if len(q.shape) != 1:
        raise InvalidParameterError("mechanism", f"shape {q.shape}", "a scalar-query mechanism for a column release")
    size = q.shape[0]
    noise = sample_quantized(q, len(values), source)
    return (np.asarray(values, dtype=np.int64) + noise) % size


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
    out = np.empty(int(count), dtype=np.int64)
    for i in range(int(count)):
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
    out = np.empty(int(count), dtype=np.int64)
    for i in range(int(count)):
        while True:
            y = int(discrete_laplace(Fraction(t), 1, source)[0])
            gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
            if bernoulli_exp(gamma, source):
                out[i] = y
                break
    return out
