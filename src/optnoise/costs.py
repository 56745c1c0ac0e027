"""One cost vocabulary: what a noise value costs, on the cycle ``{0..n}`` and on ``Z``.

A cost is a function ``L`` of the noise value; the expected cost of a PMF is linear in
it (Kadam et al. 2024 (13a); Geng & Viswanath (78)). Names (docs/architecture.md, "Costs"):

=====================  ==============================================================
``er``                 error rate, ``[x != 0]`` (any coordinate non-zero for vectors)
``abs``                ``|x|``; on the cycle ``x`` in ``0..n``
``sq``                 ``x^2``; on the cycle ``x`` in ``0..n``: Kadam et al.'s "MSE", the
                       noise second moment -- aliases ``mse`` and ``noise-second-moment``
``pow:K``              ``|x|^K`` for real ``K > 0``
``circular-mse``       ``min(x, n+1-x)^2`` (cycle only)
``circular-abs``       ``min(x, n+1-x)`` (cycle only)
a callable             a vectorised user function ``L(x)``
a vector               (cycle only) one cost per noise value, :func:`cost_vector`
=====================  ==============================================================

For vector noise on a product of cycles the per-coordinate costs are summed. The
reported name is the one the caller used (``mse`` stays ``mse``).

>>> cost_vector("circular-mse", (5,)).tolist()
[0.0, 1.0, 4.0, 4.0, 1.0]
>>> parse_cost("pow:3").power
3.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .errors import InvalidParameterError
from .pmf import IntegerPMF
from .specs import parse_spec

#: Named costs of the finite-domain design (docs/cli.md ``design --cost``).
FINITE_COSTS: tuple[str, ...] = ("er", "mse", "noise-second-moment", "circular-mse", "abs", "circular-abs",
                                 "sq", "pow:K")
#: Named costs on the integer and real line (docs/cli.md ``staircase --cost``).
LINE_COSTS: tuple[str, ...] = ("abs", "sq", "pow:K", "er", "mse")
_ACCEPTED = "er, abs, sq (alias mse, noise-second-moment), pow:K with a real K > 0, circular-mse, circular-abs"


@dataclass(frozen=True)
class Cost:
    """A cost function ``L(x)`` of the noise value.

    ``power`` is ``k`` for the moment costs ``|x|^k`` (``abs`` is 1, ``sq`` is 2), which
    have closed-form tail sums; ``None`` otherwise. ``circular`` costs measure the
    distance around the cycle and exist only on a finite cyclic domain.
    """

    name: str
    power: float | None
    fn: Callable[[np.ndarray], np.ndarray]
    circular: bool = False

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        if self.circular:
            raise InvalidParameterError("cost", self.name, "a cost on the integer line (" + ", ".join(LINE_COSTS) + ")")
        return np.asarray(self.fn(np.asarray(x, dtype=np.float64)), dtype=np.float64)

    def on_cycle(self, x: np.ndarray, size: int) -> np.ndarray:
        """The cost of noise values ``x`` in ``0..size-1`` on a cycle of ``size`` values."""
        x = np.asarray(x, dtype=np.float64)
        if self.circular:
            x = np.minimum(x, size - x)
        return np.asarray(self.fn(x), dtype=np.float64)


def power_cost(k: float, name: str | None = None) -> Cost:
    """``L(x) = |x|^k`` for ``k > 0``."""
    if isinstance(k, bool) or not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
        raise InvalidParameterError("cost", f"pow:{k}", "pow:K with a real K > 0")
    k = float(k)
    default = {1.0: "abs", 2.0: "sq"}.get(k, f"pow:{k:g}")
    return Cost(name or default, k, lambda x: np.abs(x) ** k)


def _error_rate(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x) != 0).astype(np.float64)


_NAMED: dict[str, Callable[[], Cost]] = {
    "er": lambda: Cost("er", None, _error_rate),
    "abs": lambda: power_cost(1),
    "sq": lambda: power_cost(2),
    "mse": lambda: power_cost(2, "mse"),
    "noise-second-moment": lambda: power_cost(2, "noise-second-moment"),
    "circular-abs": lambda: Cost("circular-abs", 1.0, np.abs, circular=True),
    "circular-mse": lambda: Cost("circular-mse", 2.0, np.square, circular=True),
}


def parse_cost(spec: str | Cost | Callable) -> Cost:
    """A :class:`Cost` from a name (table above), ``pow:K``, a :class:`Cost` or a callable."""
    if isinstance(spec, Cost):
        return spec
    if callable(spec):
        return Cost(getattr(spec, "__name__", "callable"), None, spec)
    if not isinstance(spec, str):
        raise InvalidParameterError("cost", spec, _ACCEPTED)
    text = spec.strip()
    if text in _NAMED:
        return _NAMED[text]()
    parsed = parse_spec(text, parameter="cost")
    if parsed.name == "pow":
        parsed.count(1, 1, parameter="cost", accepted="pow:K with a real K > 0")
        return power_cost(parsed.number(0, parameter="cost", accepted="pow:K with a real K > 0"))
    raise InvalidParameterError("cost", spec, _ACCEPTED)


def cost_vector(cost: str | Cost | Callable | Sequence[float] | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Cost ``rho[eta]`` of every noise value of a cyclic domain (flattened, C order).

    ``shape`` is ``(n1 + 1, n2 + 1, ...)``. Named costs act per coordinate on the
    representatives ``0..n_i`` (circular ones on the distance around the cycle) and are
    summed over coordinates; ``er`` is 1 unless every coordinate is 0. A sequence is a
    user cost, one finite value per noise value.
    """
    if isinstance(cost, (str, Cost)) or callable(cost):
        c = parse_cost(cost)  # type: ignore[arg-type]
        grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
        if c.name == "er":
            rho = np.ones(shape)
            rho[(0,) * len(shape)] = 0.0
            return rho.ravel()
        rho = np.zeros(shape)
        for g, s in zip(grids, shape):
            rho = rho + c.on_cycle(g, s)
        return rho.ravel()
    vec = np.asarray(cost, dtype=float)
    size = int(np.prod(shape))
    if vec.size != size or not np.all(np.isfinite(vec)):
        raise InvalidParameterError("cost", f"{vec.size} values", f"{size} finite costs, one per noise value")
    return vec.ravel()


def wrapped_squared_error(probs: np.ndarray) -> tuple[float, float]:
    """Squared error of the *released* value ``(q + eta) mod (n+1)`` as an integer.

    Returns ``(worst over q, average over uniform q)``. For ``q + eta > n`` the
    error is ``eta - (n + 1)``, not ``eta``. Vector noise: per-coordinate errors
    are summed (computed on the marginals).
    """
    f = np.asarray(probs, dtype=float)
    worst = avg = 0.0
    for axis in range(f.ndim):
        m = f.sum(axis=tuple(a for a in range(f.ndim) if a != axis))
        size = m.size
        eta = np.arange(size, dtype=float)
        m2 = float(np.dot(m, eta ** 2))
        # E_q = m2 - sum_{eta > n - q} m(eta) (2 eta N - N^2)
        gain = m * (2 * eta * size - size ** 2)
        suffix = np.concatenate((np.cumsum(gain[::-1])[::-1], [0.0]))  # suffix[j] = sum_{eta >= j}
        q = np.arange(size)
        e_q = m2 - suffix[size - q]
        worst += float(e_q.max())
        avg += float(e_q.mean())
    return worst, avg


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
    import mpmath

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
    import mpmath

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
    if c.name == "er":
        return float(1.0 - pmf.mass(np.array([0]))[0])
    k = np.arange(pmf.lo, pmf.hi + 1, dtype=np.float64)
    total = float(pmf.probs @ c(k))
    if pmf.right_tail is not None:
        t = pmf.right_tail
        total += float(pmf.probs[-t.period:] @ tail_sums(c, t.ratio, k[-t.period:], t.period))
    if pmf.left_tail is not None:
        t = pmf.left_tail
        total += float(pmf.probs[:t.period] @ tail_sums(c, t.ratio, k[:t.period], -t.period))
    return total
