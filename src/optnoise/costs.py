"""Costs of noise on the integer and real line: ``|x|``, ``x^2``, ``|x|^k`` and user callables.

A cost ``L`` maps a noise value to a non-negative number; the expected cost of a PMF
on ``Z`` is ``sum_i L(i) P(i)`` (Geng & Viswanath (78)), including the exact geometric
tails of an :class:`~optnoise.pmf.IntegerPMF`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np

from .errors import InvalidParameterError
from .pmf import IntegerPMF

@dataclass(frozen=True)
class Cost:
    """A cost function ``L(x)``.

    ``power`` is ``k`` for the moment costs ``|x|^k`` (``abs`` is 1, ``sq`` is 2), which
    have closed-form tail sums; ``None`` for a user callable (vectorised over numpy
    arrays), whose sums are evaluated numerically.
    """

    name: str
    power: float | None
    fn: Callable[[np.ndarray], np.ndarray]

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        return np.asarray(self.fn(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def power_cost(k: float) -> Cost:
    """``L(x) = |x|^k`` for ``k > 0``."""
    if not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
        raise InvalidParameterError("--cost", f"pow:{k}", "pow:K with a real K > 0")
    k = float(k)
    name = {1.0: "abs", 2.0: "sq"}.get(k, f"pow:{k:g}")
    return Cost(name, k, lambda x: np.abs(x) ** k)


def parse_cost(spec: str | Cost | Callable) -> Cost:
    """``abs``, ``sq``, ``pow:K``, a :class:`Cost` or a vectorised callable."""
    if isinstance(spec, Cost):
        return spec
    if callable(spec):
        return Cost(getattr(spec, "__name__", "callable"), None, spec)
    text = str(spec).strip()
    if text == "abs":
        return power_cost(1)
    if text == "sq":
        return power_cost(2)
    if text.startswith("pow:"):
        try:
            k = float(text[4:])
        except ValueError:
            raise InvalidParameterError("--cost", spec, "abs, sq or pow:K with a real K > 0") from None
        return power_cost(k)
    raise InvalidParameterError("--cost", spec, "abs, sq or pow:K with a real K > 0")


def shifted_power_sum(ratio: float, k: float, start: float, step: float) -> float:
    """``sum_{b>=1} ratio^b (start + b*step)^k`` for ``start + step > 0``, ``step > 0``.

    Closed form ``step^k ratio Phi(ratio, -k, 1 + start/step)`` with the Lerch
    transcendent ``Phi`` (exact up to mpmath's working precision).
    """
    if k == 0:
        return ratio / (1.0 - ratio)
    if float(k).is_integer():
        # binomial expansion with Li_{-j}(ratio) = sum_b b^j ratio^b (a rational function)
        k = int(k)
        return float(sum(math.comb(k, j) * start ** (k - j) * step ** j * _neg_polylog(j, ratio)
                         for j in range(k + 1)))
    return float(step ** k * ratio * mpmath.lerchphi(ratio, -k, 1.0 + start / step))


def _neg_polylog(j: int, z: float) -> float:
    """``Li_{-j}(z) = sum_{b>=1} b^j z^b = z A_j(z) / (1 - z)^(j+1)`` for integer ``j >= 0``,
    with the Eulerian polynomial ``A_j`` (``A_0 = 1``)."""
    if j == 0:
        return z / (1.0 - z)
    coeffs = [1]  # Eulerian numbers A(j, i), i = 0..j-1, by the usual recurrence
    for n in range(2, j + 1):
        coeffs = [(i + 1) * (coeffs[i] if i < len(coeffs) else 0) + (n - i) * (coeffs[i - 1] if i >= 1 else 0)
                  for i in range(n)]
    poly = sum(c * z ** i for i, c in enumerate(coeffs))
    return z * poly / (1.0 - z) ** (j + 1)


def lerch_nonneg(z: float, p: float, c: float) -> float:
    """``sum_{n>=0} z^n (n + c)^p`` for ``p >= 0``, ``c >= 0`` (``0^0 = 1``).

    Integer ``p``: binomial expansion over ``Li_{-j}``; otherwise mpmath's Lerch
    transcendent ``Phi(z, -p, c)``.
    """
    if float(p).is_integer():
        p = int(p)
        total = c ** p / (1.0 - z) if p > 0 or c > 0 else 1.0 / (1.0 - z)
        for j in range(1, p + 1):
            total += math.comb(p, j) * c ** (p - j) * _neg_polylog(j, z)
        return total
    if c == 0:
        return float(z * mpmath.lerchphi(z, -p, 1))
    return float(mpmath.lerchphi(z, -p, c))


def _numeric_tail_sum(cost: Cost, ratio: float, positions: np.ndarray, step: int) -> np.ndarray:
    """``sum_{b>=1} ratio^b L(x + b*step)`` for each ``x`` in ``positions`` (numerically)."""
    out = np.zeros(positions.size)
    chunk = 512
    start = 1
    while True:
        b = np.arange(start, start + chunk, dtype=np.float64)
        w = np.power(ratio, b)
        terms = cost(positions[:, None] + step * b[None, :]) * w[None, :]
        part = terms.sum(axis=1)
        out += part
        if np.all(part <= 1e-18 * np.maximum(out, 1e-300)) or w[-1] == 0.0 or start > 10 ** 7:
            return out
        start += chunk


def tail_sums(cost: Cost, ratio: float, first: np.ndarray, step: int) -> np.ndarray:
    """``sum_{b>=1} ratio^b L(x + b*step)`` for each ``x`` in ``first``.

    The tail of a block ``first`` continuing with period ``|step|`` (``step > 0`` to the
    right, ``< 0`` to the left). Moment costs use :func:`shifted_power_sum` in closed form
    when every tail point lies on the far side of 0; anything else is summed numerically.
    """
    first = np.asarray(first, dtype=np.float64)
    sign = 1.0 if step > 0 else -1.0
    if cost.power is not None and np.all(sign * (first + step) > 0):
        return np.array([shifted_power_sum(ratio, cost.power, sign * x, abs(step)) for x in first])
    return _numeric_tail_sum(cost, ratio, first, step)


def expected_cost(pmf: IntegerPMF, cost: str | Cost | Callable) -> float:
    """``sum_i L(i) P(i)`` over all of ``Z``, tails included exactly (Geng & Viswanath (78))."""
    c = parse_cost(cost)
    k = np.arange(pmf.lo, pmf.hi + 1, dtype=np.float64)
    total = float(pmf.probs @ c(k))
    if pmf.right_tail is not None:
        t = pmf.right_tail
        total += float(pmf.probs[-t.period:] @ tail_sums(c, t.ratio, k[-t.period:], t.period))
    if pmf.left_tail is not None:
        t = pmf.left_tail
        total += float(pmf.probs[:t.period] @ tail_sums(c, t.ratio, k[:t.period], -t.period))
    return total
