"""Qin et al.'s discrete noises, discretised by (2) with ``Delta = 1``: ``p(k) = int_k^{k+1} f``.

Each builder returns an :class:`~optnoise.pmf.IntegerPMF` that is exact: geometric tails
where the noise has them (Laplace, staircase, exponential), a window holding all but
``< 1e-300`` of the mass for the Gaussian. :func:`table5` sets each mechanism's
(eps, delta) as printed in the paper's Table V beside the tight values from
:mod:`optnoise.analysis`, and a verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..analysis import privacy_profile
from ..errors import InvalidParameterError
from ..neighbourhood import Neighbourhood
from ..pmf import GeometricTail, IntegerPMF

#: The Gaussian window reaches this many standard deviations: mass beyond is < 1e-300.
GAUSSIAN_SIGMAS = 38.0


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise InvalidParameterError(name, value, "a real number > 0")
    return float(value)


def _integer(name: str, value: float) -> int:
    if not (isinstance(value, (int, float)) and float(value).is_integer()):
        raise InvalidParameterError(name, value, "an integer")
    return int(value)


def qin_gaussian_pmf(sigma: float, mu: float = 0.0) -> IntegerPMF:
    """Discretised Gaussian (13): ``p(k) = Phi((k+1-mu)/sigma) - Phi((k-mu)/sigma)``."""
    s = _positive("sigma", sigma)
    if not math.isfinite(mu):
        raise InvalidParameterError("mu", mu, "a finite real number")
    lo = math.floor(mu - GAUSSIAN_SIGMAS * s)
    hi = math.ceil(mu + GAUSSIAN_SIGMAS * s)
    k = np.arange(lo, hi + 1, dtype=np.float64)
    # difference of the CDF on the side of mu where it is small, in log space
    z0, z1 = (k - mu) / s, (k + 1 - mu) / s
    upper = k >= mu
    from scipy.special import log_ndtr

    big = np.where(upper, log_ndtr(-z0), log_ndtr(z1))
    small = np.where(upper, log_ndtr(-z1), log_ndtr(z0))
    probs = np.exp(big) * -np.expm1(small - big)
    return IntegerPMF(probs, offset=-lo, normalize=True)


def laplace_cdf(z: np.ndarray, lam: float, mu: float) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    return np.where(z < mu, 0.5 * np.exp((z - mu) / lam), 1.0 - 0.5 * np.exp(-(z - mu) / lam))


def qin_laplace_pmf(lam: float, mu: float = 0.0) -> IntegerPMF:
    """Discretised Laplace (the PMF before (19)), with exact geometric tails ``e^(-1/lambda)``."""
    lam = _positive("lambda", lam)
    if not math.isfinite(mu):
        raise InvalidParameterError("mu", mu, "a finite real number")
    c = math.floor(mu)
    k = np.arange(c - 1, c + 2, dtype=np.float64)
    probs = laplace_cdf(k + 1, lam, mu) - laplace_cdf(k, lam, mu)
    tail = GeometricTail(math.exp(-1.0 / lam), 1)
    return IntegerPMF(probs, offset=1 - c, left_tail=tail, right_tail=tail, normalize=True)


def qin_staircase_pmf(a: int, rho: float) -> IntegerPMF:
    """Qin's discrete staircase (20): ``(1-rho)/(2a) rho^j`` on ``[ja, (j+1)a)`` and ``[-(j+1)a, -ja)``."""
    a = _integer("a", a)
    if a < 1:
        raise InvalidParameterError("a", a, "an integer stair width >= 1")
    if not (isinstance(rho, (int, float)) and 0 < rho < 1):
        raise InvalidParameterError("rho", rho, "a number with 0 < rho < 1")
    probs = np.full(2 * a, (1.0 - rho) / (2 * a))
    tail = GeometricTail(float(rho), a)
    return IntegerPMF(probs, offset=a, left_tail=tail, right_tail=tail)


def qin_uniform_pmf(a: int, b: int) -> IntegerPMF:
    """Discrete uniform on ``a..b`` (the PMF before (22), ``Delta = 1``)."""
    a, b = _integer("a", a), _integer("b", b)
    if b < a:
        raise InvalidParameterError("b", b, f"an integer >= a = {a}")
    return IntegerPMF(np.full(b - a + 1, 1.0 / (b - a + 1)), offset=-a)


def qin_exponential_printed_total(eta: float) -> float:
    """Total mass of (23) as printed, ``sum_{k>=1} eta e^(-eta k) = eta / (e^eta - 1)``: not 1."""
    eta = _positive("eta", eta)
    return eta / math.expm1(eta)


def qin_exponential_pmf(eta: float) -> IntegerPMF:
    """(23) normalised over ``k = 1, 2, ...``: ``(1 - e^-eta) e^(-eta (k-1))`` (docs/cli.md)."""
    eta = _positive("eta", eta)
    r = math.exp(-eta)
    return IntegerPMF([1.0 - r], offset=-1, right_tail=GeometricTail(r, 1))


# ------------------------------------------------------------------ Table V
@dataclass(frozen=True)
class Table5Row:
    """One mechanism of Qin et al.'s Table V: the printed (eps, delta) and the tight values."""

    mechanism: str
    parameters: str
    paper_epsilon: float
    paper_delta: float
    tight_epsilon_pure: float
    tight_delta_at_paper_epsilon: float
    verdict: str
    note: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _verdict(paper_eps: float, paper_delta: float, tight_pure: float, tight_delta: float) -> str:
    if paper_delta == 0.0:
        if tight_pure > paper_eps * (1 + 1e-9):
            return "invalid"
        return "tight" if tight_pure >= paper_eps * (1 - 1e-9) else "valid, loose"
    if tight_delta > paper_delta * (1 + 1e-9):
        return "invalid"
    return "tight" if tight_delta >= paper_delta * (1 - 1e-9) else "valid, loose"


def table5(m: int = 1, *, sigma: float = 10.0, mu: float = 0.0, big_m: float = 30.0, lam: float = 10.0,
           a: int = 5, rho: float = 0.5, uniform: tuple[int, int] = (-10, 10), eta: float = 0.5) -> list[Table5Row]:
    """Table V's (eps, delta) for adjacency ``m`` (``Delta = 1``) against the tight analysis.

    The printed formulas: Gaussian ``eps = (m+1)(2M+1-m-2mu)/(2 sigma^2)`` (Table V; the row
    ``gaussian (14)`` takes the sup over ``m0`` in (14) instead),
    ``delta = 2 sum_{k>=M} p(k)``; Laplace ``(m+1)/lambda``; staircase
    ``ceil(m/a) ln(1/rho)``; uniform ``eps = 0``, ``delta = m/(b-a+1)``; exponential
    ``eta m``. Tight values: pure eps and delta_DP at the printed eps under the symmetric
    neighbourhood ``|Q(X) - Q(X')| <= m``.
    """
    nb = Neighbourhood.bd(m)
    rows = []
    gauss = qin_gaussian_pmf(sigma, mu)
    k = np.arange(math.ceil(big_m), gauss.hi + 1)
    entries = [
        ("gaussian", f"sigma={sigma:g}, mu={mu:g}, M={big_m:g}", gauss,
         (m + 1) * (2 * big_m + 1 - m - 2 * mu) / (2 * sigma ** 2), 2 * float(gauss.mass(k).sum()),
         "Table V takes m0 = +m in (14); the sup is at m0 = -m, so for large m this eps is too small"),
        ("gaussian (14)", f"sigma={sigma:g}, mu={mu:g}, M={big_m:g}", gauss,
         max((abs(s) + 1) * (2 * big_m + 1 - s - 2 * mu) for s in range(-m, m + 1)) / (2 * sigma ** 2),
         2 * float(gauss.mass(k).sum()),
         "(14) with the sup over m0 in [-m, m] taken (m0 = -m): a valid but loose pair"),
        ("laplace", f"lambda={lam:g}, mu=0", qin_laplace_pmf(lam), (m + 1) / lam, 0.0,
         "discretisation by (2) keeps the ratio e^(1/lambda) per step: tight eps is m/lambda, not (m+1)/lambda"),
        ("staircase", f"a={a}, rho={rho:g}", qin_staircase_pmf(a, rho), math.ceil(m / a) * math.log(1 / rho), 0.0,
         "(21) is tight; the sentence before it says c_b = rho^-c for ca < m <= (c+1)a, which is off by one"),
        ("uniform", f"a={uniform[0]}, b={uniform[1]}", qin_uniform_pmf(*uniform), 0.0,
         min(1.0, m / (uniform[1] - uniform[0] + 1)),
         "tight at every eps >= 0: the shifted supports overlap with ratio 1"),
        ("exponential", f"eta={eta:g} (normalised; printed total {qin_exponential_printed_total(eta):.4f})",
         qin_exponential_pmf(eta), eta * m, 0.0,
         "support on k >= 1 only: the output x+1 is impossible from x+m, so no finite eps holds (violates (9))"),
    ]
    for name, params, pmf, p_eps, p_delta, note in entries:
        prof = privacy_profile(pmf, nb)
        pure = prof.epsilon_pure
        tight_delta = prof.delta_dp(p_eps)
        rows.append(Table5Row(name, params, p_eps, p_delta, pure, tight_delta,
                              _verdict(p_eps, p_delta, pure, tight_delta), note))
    return rows
