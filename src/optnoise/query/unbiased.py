"""Unbiased releases of counts and sums: exactly symmetric integer noise on the whole line.

``unbiased = true`` (docs/statistics.md) asks for ``E[released | true] = true`` for every
true value. No channel with outputs inside the domain ``{0..n}`` does that under a useful
target (docs/proofs/unbiased-counts.md: at ``q = 0`` unbiasedness forces the output 0, and
pure DP, PDP, or ``delta < 1 / n`` then forces the neighbours too), so an unbiased release
leaves the domain: ``q + eta`` on the integers, with ``eta`` *exactly* symmetric about 0.

Symmetric by construction, not by luck: the quantized weights of a symmetric design (the
two-sided geometric, the discrete Gaussian) are rounded to integers by largest remainders,
which can give one of two mirrored cells one unit more (and a pure target's repair can
raise one side). :func:`symmetric_noise` replaces the weights ``W`` by ``W + reversed(W)``
when they are not palindromic (the tails have the same dyadic ratio on both sides), which is
the exact law of the equal mixture of ``eta`` and ``-eta``; the result is certified again,
exactly, on the very weights that are sampled (:class:`SymmetricLine`).

Why unbiased, exactly: with ``p(k) = p(-k)`` for every ``k`` and ``E|eta| < infinity``
(geometric tails), ``E[eta] = sum_k k p(k) = 0``, so ``E[q + eta] = q``. The test
(tests/test_query_unbiased.py) sums ``y P(y | q)`` in rationals, tails by their closed form.

Proof: docs/proofs/unbiased-counts.md
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..analysis import exact_profile, guarantee
from ..errors import DesignError
from ..mechanism import Mechanism
from ..sampling.quantize import QuantizedInteger, exact_integer_pmf, integer_line_form
from ..target import Target


@dataclass(frozen=True, eq=False)
class SymmetricLine(Mechanism):
    """Integer-line noise whose sampled form is the given exactly symmetric
    :class:`~optnoise.sampling.quantize.QuantizedInteger` (``quantized``); ``pmf`` is that
    form's exact law, so the analysis of the mechanism and the draws are of the same weights.
    """

    quantized: QuantizedInteger | None = None

    def quantize(self, bits: int | None = None) -> QuantizedInteger:  # type: ignore[override]
        """The symmetric quantized form (certified when it was made); ``bits`` is not offered."""
        if bits is not None:
            raise DesignError("a symmetric unbiased noise is quantized once, at its own resolution")
        return self.quantized  # type: ignore[return-value]


def is_symmetric(q: QuantizedInteger) -> bool:
    """Whether the quantized noise is exactly symmetric about 0 (palindromic window centred
    on 0, the same tail on both sides)."""
    w = np.asarray(q.weights)
    return q.lo == -q.hi and q.left == q.right and bool((w == w[::-1]).all())


def mirrored(q: QuantizedInteger) -> tuple[np.ndarray, int]:
    """Window weights of the equal mixture of ``eta`` and ``-eta``: ``W + reversed(W)`` on a
    window centred on 0 (a shorter side padded with zeros, only for finite support)."""
    w = np.asarray(q.weights, dtype=np.int64)
    lo, hi = q.lo, q.hi
    if q.left != q.right:
        raise DesignError(f"the noise's tails differ ({q.left} left, {q.right} right): not symmetric")
    if lo != -hi:
        if q.left is not None:
            raise DesignError(f"the noise's window {lo}..{hi} is not centred on 0")
        reach = max(-lo, hi)
        w = np.concatenate([np.zeros(lo + reach, dtype=np.int64), w, np.zeros(reach - hi, dtype=np.int64)])
        lo = -reach
    if int(w.max()) >= 1 << 61:
        raise DesignError("the noise's weights are too large to mirror in 64-bit integers")
    return w + w[::-1], lo


def symmetric_noise(mechanism: Mechanism, target: Target | None) -> SymmetricLine:
    """The noise of ``mechanism`` (integer line, symmetric design) with exactly symmetric
    quantized weights, certified exactly under its neighbourhood (module docstring).

    Why the certificate stands: the returned weights are the ones drawn
    (:meth:`SymmetricLine.quantize`), and their exact profile is computed here on them
    (:func:`optnoise.analysis.exact_profile`, as :func:`optnoise.sampling.quantize` does); a
    target they miss is refused (:class:`DesignError`), never rounded away. (They meet it
    whenever ``eta`` does under a neighbourhood of distances ``+-1..+-d``: ``-eta`` then has
    the same profile, and a mixture of two (eps, delta)-DP mechanisms is (eps, delta)-DP.)
    """
    q = mechanism.quantize()
    nb = q.neighbourhood
    if not is_symmetric(q):
        w, lo = mirrored(q)
        profile = exact_profile(integer_line_form(w, lo, q.left, q.right), nb, space="integer")
        if target is not None and not profile.meets(target):
            raise DesignError(f"the mirrored noise misses {target.describe()}")
        cert = guarantee(profile) if target is None else guarantee(profile, epsilon=target.epsilon,
                                                                   delta=target.delta)
        q = QuantizedInteger(w, lo, q.left, q.right, nb, cert, target)
    pmf = exact_integer_pmf(q.weights, q.lo, q.left, q.right)
    return SymmetricLine(pmf, nb, target, f"unbiased {mechanism.name}", quantized=q)


def exact_mean(q: QuantizedInteger) -> Fraction:
    """``E[eta]`` of the quantized noise in rationals, the tails by their closed form:
    beyond the window the cell ``c + t P`` (``c`` in the end block of ``P`` cells, ``t >= 1``)
    has mass ``W[c] r^t / Z``, and ``sum_{t>=1} (c + t P) r^t = c r / (1 - r) + P r / (1 - r)^2``
    (mirror image on the left: ``c - t P``)."""
    w = [int(x) for x in q.weights]
    lo, hi = q.lo, q.hi
    num, mass = Fraction(sum((lo + i) * x for i, x in enumerate(w))), Fraction(sum(w))
    for side, tail in ((1, q.right), (-1, q.left)):
        if tail is None:
            continue
        a, m, period = tail
        r = Fraction(a, 1 << m)
        block = w[-period:] if side > 0 else w[:period]
        cells = range(hi - period + 1, hi + 1) if side > 0 else range(lo, lo + period)
        for c, x in zip(cells, block):
            mass += x * r / (1 - r)
            num += x * (c * r / (1 - r) + side * period * r / (1 - r) ** 2)
    return num / mass


__all__ = ["SymmetricLine", "exact_mean", "is_symmetric", "mirrored", "symmetric_noise"]
