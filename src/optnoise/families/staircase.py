"""The staircase mechanism (Geng & Viswanath 2016): continuous (37)-(38) and discrete (82)-(83).

Notation: ``b = e^-eps``, sensitivity ``Delta``. The continuous staircase has density
``a(gamma)`` on ``[0, gamma Delta)``, ``b a(gamma)`` on ``[gamma Delta, Delta)``, decays by
``b`` per interval of length ``Delta`` and is symmetric. The discrete staircase ``P_r`` has
mass ``a(r)`` on ``0..r-1``, ``b a(r)`` on ``r..Delta-1``, the same decay and symmetry.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..costs import Cost, expected_cost, lerch_nonneg, parse_cost, tail_sums
from ..errors import InvalidParameterError
from ..pmf import GeometricTail, IntegerPMF
from ..randomness import RandomSource
from ..target import check_epsilon, check_sensitivity


#: Epsilon range: the staircase decays by ``b = e^-eps``, a normal double up to ``eps = 708``;
#: its formulas divide by ``1 - b``, which carries a relative error of ``1e-16 / eps``.
EPSILON_MIN, EPSILON_MAX = 1e-9, 700.0


def check_eps(epsilon: float) -> float:
    """The epsilon of a staircase: a real number in ``[EPSILON_MIN, EPSILON_MAX]`` (the one home
    of the staircase's checks, with :func:`check_r` and :class:`Staircase`'s ``gamma``)."""
    return check_epsilon(epsilon, allow_zero=False, within=(EPSILON_MIN, EPSILON_MAX),
                         accepted=f"a real number from {EPSILON_MIN:g} to {EPSILON_MAX:g} (the staircase decays by "
                                  "b = e^-eps per step: 1 - b must be resolved in double precision and b must stay a "
                                  "normal double)")

@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    """48-point Gauss-Legendre nodes and weights on [-1, 1], computed on first use (numpy's
    polynomial package costs 11 ms at start-up)."""
    return np.polynomial.legendre.leggauss(48)


def _uniforms(count: int, source: RandomSource) -> np.ndarray:
    """Uniforms in ``(0, 1]`` with 53 random bits each."""
    words = source.words(count) >> np.uint64(11)
    return (words.astype(np.float64) + 1.0) * 2.0 ** -53


# ------------------------------------------------------------------ continuous staircase
@dataclass(frozen=True)
class Staircase:
    """Continuous staircase distribution ``f_gamma`` (Geng & Viswanath (37)-(38)).

    It is ``epsilon``-DP for sensitivity ``Delta`` for every ``gamma`` in ``[0, 1]`` (39).
    """

    epsilon: float
    sensitivity: float = 1.0
    gamma: float = 0.5

    def __post_init__(self) -> None:
        check_eps(self.epsilon)
        check_sensitivity(self.sensitivity, integer=False)
        if not (isinstance(self.gamma, (int, float)) and 0.0 <= self.gamma <= 1.0):
            raise InvalidParameterError("gamma", self.gamma, "a number in [0, 1]")

    @property
    def b(self) -> float:
        return math.exp(-self.epsilon)

    @property
    def a(self) -> float:
        """Normalising constant (38)."""
        b, g = self.b, self.gamma
        return (1.0 - b) / (2.0 * self.sensitivity * (g + b * (1.0 - g)))

    def pdf(self, x: np.ndarray | float) -> np.ndarray:
        """Density (37)."""
        ax = np.abs(np.asarray(x, dtype=np.float64)) / self.sensitivity
        k = np.floor(ax)
        inner = np.where(ax - k < self.gamma, 1.0, self.b)
        return self.a * np.power(self.b, k) * inner

    def _half_cdf(self, ax: np.ndarray) -> np.ndarray:
        """``P(0 <= X <= x)`` for ``x >= 0``."""
        d, b, g = self.sensitivity, self.b, self.gamma
        t = ax / d
        k = np.floor(t)
        frac = t - k
        bk = np.power(b, k)
        inside = np.minimum(frac, g) + b * np.maximum(frac - g, 0.0)
        return (1.0 - bk) / 2.0 + self.a * d * bk * inside

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """Distribution function ``P(X <= x)``."""
        x = np.asarray(x, dtype=np.float64)
        half = self._half_cdf(np.abs(x))
        return np.where(x >= 0, 0.5 + half, 0.5 - half)

    def quantile(self, u: np.ndarray | float) -> np.ndarray:
        """Inverse of :meth:`cdf` for ``u`` in ``(0, 1)``."""
        u = np.asarray(u, dtype=np.float64)
        if np.any((u <= 0) | (u >= 1)):
            raise InvalidParameterError("u", "outside (0, 1)", "probabilities strictly between 0 and 1")
        v = np.abs(u - 0.5)  # mass between 0 and |x|
        d, b, g, a = self.sensitivity, self.b, self.gamma, self.a
        k = np.floor(np.log1p(-2.0 * v) / math.log(b))
        bk = np.power(b, k)
        rest = np.maximum(v - (1.0 - bk) / 2.0, 0.0)
        first = a * d * g * bk
        t = np.where(rest < first, rest / (a * bk), g * d + (rest - first) / (a * b * bk))
        return np.sign(u - 0.5) * (k * d + np.minimum(t, d))

    def moment_abs(self, k: float) -> float:
        """``E|X|^k`` in closed form: ``2 a (1-b) Delta^(k+1) Phi(b, -(k+1), gamma) / (k+1)``.

        From (37) the sums over the two sub-intervals of each step telescope, leaving the
        Lerch transcendent ``Phi(b, s, gamma) = sum_n b^n (n + gamma)^-s``.
        """
        if not (isinstance(k, (int, float)) and k >= 0):
            raise InvalidParameterError("k", k, "a real number >= 0")
        if k == 0:
            return 1.0
        b, g, d = self.b, self.gamma, self.sensitivity
        phi = lerch_nonneg(b, k + 1, g)
        return float(2 * self.a * (1 - b) * d ** (k + 1) * phi / (k + 1))

    @property
    def mean(self) -> float:
        return 0.0

    @property
    def variance(self) -> float:
        return self.moment_abs(2)

    def expected_cost(self, cost: str | Cost | Callable) -> float:
        """``int L(x) f_gamma(x) dx`` (42); closed form for ``|x|^k``, quadrature otherwise."""
        c = parse_cost(cost)
        if c.power is not None:
            return self.moment_abs(c.power)
        return _staircase_integral(self, c)

    def sample(self, count: int, source: RandomSource) -> np.ndarray:
        """Algorithm 1: ``X = S((1-B)(G + gamma U) + B(G + gamma + (1-gamma)U)) Delta``.

        Floating-point output: for simulation and analysis. For releases use the
        discrete staircase on integers (:func:`sample_discrete_staircase`), which is exact.
        """
        if int(count) != count or count < 0:
            raise InvalidParameterError("count", count, "an integer >= 0")
        b, g = self.b, self.gamma
        s = np.where(source.words(count) >> np.uint64(63), 1.0, -1.0)
        geo = np.floor(np.log(_uniforms(count, source)) / math.log(b))
        u = 1.0 - _uniforms(count, source)  # uniform in [0, 1)
        p_b0 = g / (g + (1.0 - g) * b)
        big = _uniforms(count, source) > p_b0
        x = np.where(big, geo + g + (1.0 - g) * u, geo + g * u)
        return s * x * self.sensitivity


def _staircase_integral(st: Staircase, cost: Cost) -> float:
    """``2 sum_k a b^k [int_{k D}^{(k+g) D} L + b int_{(k+g) D}^{(k+1) D} L]`` by Gauss-Legendre."""
    d, b, g, a = st.sensitivity, st.b, st.gamma, st.a
    n_blocks = int(min(10 ** 6, math.ceil(60.0 / st.epsilon) + 8))
    total = 0.0
    for lo_frac, hi_frac, height in ((0.0, g, 1.0), (g, 1.0, b)):
        width = (hi_frac - lo_frac) * d
        if width <= 0:
            continue
        for start in range(0, n_blocks, 4096):
            k = np.arange(start, min(n_blocks, start + 4096), dtype=np.float64)
            mid = (k + (lo_frac + hi_frac) / 2.0) * d
            nodes, weights = _gauss_legendre()
            x = mid[:, None] + width / 2.0 * nodes[None, :]
            block = (cost(x) @ weights) * width / 2.0
            total += float(np.sum(np.power(b, k) * block)) * height
    return 2.0 * a * total


def gamma_star_abs(epsilon: float) -> float:
    """Optimal ``gamma`` for ``L(x) = |x|``: ``1 / (1 + e^(eps/2))`` (43)."""
    return 1.0 / (1.0 + math.exp(check_eps(epsilon) / 2.0))


def gamma_star_sq(epsilon: float) -> float:
    """Optimal ``gamma`` for ``L(x) = x^2`` (50), evaluated without cancellation.

    (50) reads ``-b/(1-b) + (b - 2b^2 + 2b^4 - b^5)^(1/3) / (2^(1/3) (1-b)^2)``; its two
    terms are each about ``1/eps`` and cancel to about ``1/2`` as ``eps -> 0``
    (at ``eps = 1e-4`` (50) as printed loses 3 digits, at ``1e-5`` it turns negative).
    With ``b - 2b^2 + 2b^4 - b^5 = b (1-b)^3 (1+b)`` it is
    ``gamma* = ((b (1+b) / 2)^(1/3) - b) / (1 - b)``, and with
    ``b e^D = (b (1+b)/2)^(1/3)``, ``D = ln((1+b)/2)/3 + 2 eps/3``:
    ``gamma* = b expm1(D) / (1 - b)``, every factor accurate for small ``eps``
    (``1 - b = -expm1(-eps)``, ``(1+b)/2 = 1 + expm1(-eps)/2``).
    """
    eps = check_eps(epsilon)
    if eps < 1.0:
        big_d = math.log1p(math.expm1(-eps) / 2.0) / 3.0 + 2.0 * eps / 3.0
        return math.exp(-eps) * math.expm1(big_d) / -math.expm1(-eps)
    b = math.exp(-eps)  # b <= 1/e: the cube root exceeds b by a factor >= 1.3, no cancellation
    return (math.exp((math.log1p(b) - math.log(2.0) - eps) / 3.0) - b) / (1.0 - b)


def cost_star_abs(epsilon: float, sensitivity: float = 1.0) -> float:
    """Minimum ``E|X|``: ``Delta e^(eps/2) / (e^eps - 1) = Delta e^(-eps/2) / (1 - e^-eps)`` (44)."""
    e = check_eps(epsilon)
    return check_sensitivity(sensitivity, integer=False) * math.exp(-e / 2) / -math.expm1(-e)


def cost_star_sq(epsilon: float, sensitivity: float = 1.0) -> float:
    """Minimum ``E X^2``: ``Delta^2 (2^(-2/3) b^(2/3) (1+b)^(2/3) + b) / (1-b)^2`` (51)."""
    b = math.exp(-check_eps(epsilon))
    d = check_sensitivity(sensitivity, integer=False)
    return d ** 2 * (2 ** (-2 / 3) * b ** (2 / 3) * (1 + b) ** (2 / 3) + b) / (1 - b) ** 2


def gamma_heuristic(epsilon: float) -> float:
    """Geng & Viswanath's cost-independent choice ``e^-eps / 2`` (62)."""
    return math.exp(-check_eps(epsilon)) / 2.0


def gamma_star_numeric(epsilon: float, cost: str | Cost | Callable, sensitivity: float = 1.0) -> float:
    """``argmin_{gamma in [0,1]} E_gamma L(X)`` (Theorem 4) by grid search and Brent refinement."""
    c = parse_cost(cost)

    def value(g: float) -> float:
        return Staircase(epsilon, sensitivity, float(g)).expected_cost(c)

    grid = np.linspace(0.0, 1.0, 41)
    vals = [value(g) for g in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(value, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return float(res.x) if res.fun <= vals[i] else float(grid[i])


def gamma_star(epsilon: float, cost: str | Cost | Callable = "abs", sensitivity: float = 1.0) -> float:
    """Optimal ``gamma``: (43) for ``abs``, (50) for ``sq``, numeric for any other cost."""
    c = parse_cost(cost)
    if c.power == 1.0:
        return gamma_star_abs(epsilon)
    if c.power == 2.0:
        return gamma_star_sq(epsilon)
    return gamma_star_numeric(epsilon, c, sensitivity)


# ------------------------------------------------------------------ Laplace baseline
def laplace_cost(epsilon: float, cost: str | Cost | Callable = "abs", sensitivity: float = 1.0) -> float:
    """Cost of Laplace noise with scale ``Delta/eps`` (45): ``E|X|^k = lambda^k Gamma(k+1)``,
    so ``Delta/eps`` for ``|x|`` (46) and ``2 Delta^2/eps^2`` for ``x^2`` (52)."""
    lam = check_sensitivity(sensitivity, integer=False) / check_eps(epsilon)
    c = parse_cost(cost)
    if c.power is not None:
        return lam ** c.power * math.gamma(c.power + 1.0)
    # int_0^inf L(x) e^{-x/lam} / lam dx with the substitution x = lam t, Gauss-Laguerre.
    t, w = np.polynomial.laguerre.laggauss(80)
    return float(w @ c(lam * t))


# ------------------------------------------------------------------ discrete staircase
def a_r(epsilon: float, sensitivity: int, r: int) -> float:
    """Normalising constant (83): ``(1-b) / (2r + 2b(Delta - r) - (1-b))``."""
    b = math.exp(-epsilon)
    return (1.0 - b) / (2 * r + 2 * b * (sensitivity - r) - (1.0 - b))


def check_r(r: int, sensitivity: int) -> int:
    if not (isinstance(r, (int, np.integer)) or (isinstance(r, float) and r.is_integer())) or not 1 <= r <= sensitivity:
        raise InvalidParameterError("r", r, f"an integer with 1 <= r <= Delta = {sensitivity}")
    return int(r)


def discrete_staircase_pmf(epsilon: float, sensitivity: int, r: int, *, blocks: int = 0) -> IntegerPMF:
    """``P_r`` (82)-(83) on ``Z`` with exact tails of period ``Delta`` and ratio ``e^-eps``.

    The window covers ``-(blocks+1) Delta + 1 .. (blocks+1) Delta - 1``; beyond it the
    tails continue ``P_r(i + Delta) = e^-eps P_r(i)`` exactly. For ``Delta = 1`` this is
    the geometric mechanism (Theorem 12).
    """
    eps = check_eps(epsilon)
    d = check_sensitivity(sensitivity, integer=True)
    r = check_r(r, d)
    if int(blocks) != blocks or blocks < 0:
        raise InvalidParameterError("blocks", blocks, "an integer >= 0")
    b = math.exp(-eps)
    half = (blocks + 1) * d - 1
    i = np.abs(np.arange(-half, half + 1))
    probs = a_r(eps, d, r) * np.power(b, i // d) * np.where(i % d < r, 1.0, b)
    tail = GeometricTail(b, d)
    return IntegerPMF(probs, offset=half, left_tail=tail, right_tail=tail)


def discrete_staircase_cost(epsilon: float, sensitivity: int, r: int, cost: str | Cost | Callable = "abs") -> float:
    """``sum_i L(i) P_r(i)`` over ``Z`` (exact tails)."""
    return expected_cost(discrete_staircase_pmf(epsilon, sensitivity, r), cost)


@dataclass(frozen=True)
class DiscreteStaircaseChoice:
    """The best ``P_r`` for a cost (Theorem 13), with every member's cost."""

    r: int
    expected_cost: float
    costs: tuple[float, ...]  # costs[r-1] is the cost of P_r


def r_star(epsilon: float, sensitivity: int, cost: str | Cost | Callable = "abs") -> DiscreteStaircaseChoice:
    """``r* = argmin_{1<=r<=Delta} sum_i L(i) P_r(i)`` (84); ``r = 1`` for ``Delta = 1`` (Theorem 12).

    Every member's cost at once, in ``O(Delta)``: with ``V_j = sum_{k>=0} b^k (L(kD + j) +
    L(-kD - j))`` (``L(0)`` once) the cost of ``P_r`` (82) is
    ``a(r) (sum_{j<r} V_j + b sum_{j>=r} V_j)``, prefix sums over ``j`` (the tails
    ``sum_{k>=1}`` by :func:`~optnoise.costs.tail_sums`, in closed form for ``|x|^K``).
    """
    eps = check_eps(epsilon)
    d = check_sensitivity(sensitivity, integer=True)
    c = parse_cost(cost)
    b = math.exp(-eps)
    j = np.arange(d, dtype=np.float64)
    v = c(j) + tail_sums(c, b, j, d) + c(-j) + tail_sums(c, b, -j, -d)
    v[0] -= float(c(np.zeros(1))[0])
    inner = np.concatenate(([0.0], np.cumsum(v)))[1:]          # sum_{j < r} V_j for r = 1..D
    r_all = np.arange(1, d + 1, dtype=np.float64)
    a = (1.0 - b) / (2 * r_all + 2 * b * (d - r_all) - (1.0 - b))
    costs = tuple(float(x) for x in a * (inner + b * (inner[-1] - inner)))
    r = int(np.argmin(costs)) + 1
    return DiscreteStaircaseChoice(r, costs[r - 1], costs)


def geometric_cost(epsilon: float, sensitivity: int, cost: str | Cost | Callable = "abs") -> float:
    """Cost of the geometric mechanism ``alpha = e^(-eps/Delta)`` (eps-DP for sensitivity Delta)."""
    from .geometric import alpha_for_epsilon, geometric_pmf

    return expected_cost(geometric_pmf(alpha_for_epsilon(epsilon, sensitivity)), cost)
