"""Wasserstein-optimal eps-DP noise on Z (Qin et al., Section IV-C), solved exactly as an LP.

For an input ``X`` with PMF ``p_x`` on ``xlo..xhi`` and noise ``theta`` (independent),

    W1(X, X + theta) = sum_k |F_X(k) - F_{X+theta}(k)|.

Outside ``[xlo, xhi)`` the sign of each term is known (``F_X`` is 0 or 1), so those terms
sum to the linear function ``E max(0, xlo - X - theta) + E max(0, X + theta - xhi)``;
inside, ``F_{X+theta}(k) - F_X(k) = sum_j p(j) (F_X(k - j) - F_X(k))`` is affine in the
noise PMF and its absolute value gets an epigraph variable. The result is an LP with
``xhi - xlo`` epigraph variables -- the exact problem P1, not a relaxation.

The paper solves instead P2, whose objective ``sum_k |p_x^T M_k| p_theta`` bounds W1 from
above. Its coefficient of ``p(j)`` is ``sum_k |F_X(k) - F_X(k - j)| = |j|`` for every input
(a CDF is monotone), so **P2 is min E|theta|**, whatever the input: Geng & Viswanath's
discrete staircase ``P_r*`` for ``|x|`` with sensitivity ``m`` (Theorem 13). See
docs/paper-notes.md.

The noise lives on a window ``-L..L`` with exact geometric-staircase tails of period
``m`` and ratio ``e^-eps`` (:mod:`optnoise.design.integer`); the default window
``L >= xhi - xlo`` makes every tail coefficient linear in the window's end blocks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..costs import expected_cost, power_cost
from ..errors import InvalidParameterError
from ..mechanism import Mechanism
from ..pmf import IntegerPMF
from ..resources import array_bytes, check, tailed_lp_bytes
from ..specs import parse_spec
from ..target import check_sensitivity
from .integer import (TailedWindow, check_line_epsilon, check_window, finish, line_mechanism, solve_tailed_lp,
                      tail_cost_rows)
from .report import DesignResult

#: Input mass dropped on each side when an infinite input (Gaussian, Poisson) is cut to a window.
INPUT_TAIL = 1e-15
OBJECTIVES = ("w1", "expected-abs")


def _trim(probs: np.ndarray, offset: int) -> tuple[IntegerPMF, float]:
    """Cut an input PMF to the shortest window holding all but ``INPUT_TAIL`` per side."""
    c = np.cumsum(probs)
    lo = int(np.searchsorted(c, INPUT_TAIL, side="right"))
    hi = int(np.searchsorted(c, c[-1] - INPUT_TAIL, side="left"))
    kept = probs[lo:hi + 1]
    dropped = float(probs.sum() - kept.sum())
    return IntegerPMF(kept, offset=offset - lo, normalize=True), dropped


def input_distribution(spec: str, *, max_memory: int | None = None) -> tuple[IntegerPMF, float, str]:
    """``gaussian:MU,SIGMA`` (discretised by Qin's (2)), ``poisson:LAMBDA`` or ``pmf-file:PATH``.

    Returns the input PMF (finite support), the mass dropped when cutting an infinite
    input (at most ``2e-15``) and a description. ``max_memory`` bounds the support built
    before it is cut (:mod:`optnoise.resources`).
    """
    from ..families.qin import qin_gaussian_pmf

    accepted = "gaussian:MU,SIGMA, poisson:LAMBDA or pmf-file:PATH"
    parsed = parse_spec(str(spec), parameter="input", split=not str(spec).startswith("pmf-file:"))
    if parsed.name == "gaussian":
        parsed.count(2, 2, parameter="input", accepted=accepted)
        mu = parsed.number(0, parameter="input", accepted=accepted)
        sigma = parsed.number(1, parameter="input", accepted=accepted)
        if not sigma > 0:
            raise InvalidParameterError("input", spec, "gaussian:MU,SIGMA with SIGMA > 0")
        check(array_bytes(80 * sigma + 2, 8, copies=12), parameter="input", value=spec, max_memory=max_memory,
              what=f"a Gaussian input over {80 * sigma + 2:.3g} integers")
        g = qin_gaussian_pmf(sigma, mu)
        pmf, dropped = _trim(g.probs, g.offset)
        return pmf, dropped, f"discretised Gaussian mu={mu:g}, sigma={sigma:g}"
    if parsed.name == "poisson":
        parsed.count(1, 1, parameter="input", accepted=accepted)
        lam = parsed.number(0, parameter="input", accepted=accepted)
        if not lam > 0:
            raise InvalidParameterError("input", spec, "poisson:LAMBDA with LAMBDA > 0")
        support = lam + 40.0 * math.sqrt(lam) + 40.0
        check(array_bytes(support, 8, copies=12), parameter="input", value=spec, max_memory=max_memory,
              what=f"a Poisson input over {support:.3g} integers")
        k = np.arange(0, int(math.ceil(support)))
        from scipy.stats import poisson

        pmf, dropped = _trim(poisson.pmf(k, lam), 0)
        return pmf, dropped, f"Poisson lambda={lam:g}"
    if parsed.name == "pmf-file":
        from ..io import read_pmf_file

        parsed.count(1, 1, parameter="input", accepted=accepted)
        path = parsed.params[0]
        data = read_pmf_file(Path(path), parameter="input", max_memory=max_memory)
        offset = data["offset"] if data["offset"] is not None else 0
        return IntegerPMF(data["pmf"], offset=offset), 0.0, f"PMF from {path} (pmf[i] at i - {offset})"
    raise InvalidParameterError("input", spec, accepted)


def w1_distance(x: IntegerPMF, noise: IntegerPMF, *, tail_tol: float = 1e-18) -> float:
    """``W1(X, X + theta) = sum_k |F_X(k) - F_{X+theta}(k)|`` by direct convolution.

    Independent of the LP: the noise is expanded over a window wide enough that its
    mass beyond is below ``tail_tol`` (tails included), then convolved with ``p_x``.
    """
    if not x.finite_support:
        raise InvalidParameterError("input", "with tails", "a finite-support input PMF")
    lo, hi = noise.lo, noise.hi
    for tail, side in ((noise.left_tail, -1), (noise.right_tail, 1)):
        if tail is not None:
            extra = tail.period * int(math.ceil(math.log(tail_tol) / math.log(tail.ratio)) + 1)
            lo, hi = (lo - extra, hi) if side < 0 else (lo, hi + extra)
    conv = np.convolve(x.probs, noise.window(lo, hi))  # support x.lo + lo .. x.hi + hi
    start = min(x.lo, x.lo + lo)
    size = max(x.hi, x.hi + hi) - start + 1
    fx = np.zeros(size)
    fx[x.lo - start: x.hi - start + 1] = x.probs
    out = np.zeros(size)
    out[x.lo + lo - start: x.lo + lo - start + conv.size] = conv
    return float(np.abs(np.cumsum(fx) - np.cumsum(out)).sum())


@dataclass(frozen=True, eq=False)
class WassersteinDesign(DesignResult):
    """Result of :func:`design_wasserstein`: the mechanism and the report (docs/cli.md keys)."""

    pmf: IntegerPMF
    objective: str
    w1: float
    expected_abs_noise: float
    epsilon: float
    sensitivity: int
    epsilon_certified: float
    input_description: str
    input_dropped_mass: float
    solve_seconds: float

    @cached_property
    def mechanism(self) -> Mechanism:
        """The noise on Z with its neighbourhood (BD ``sensitivity``) and pure target."""
        return line_mechanism(self.pmf, self.epsilon, self.sensitivity, f"{self.objective}-optimal noise")



    def to_json(self) -> dict:
        return {**self.mechanism.to_json(), "w1": self.w1, "expected_abs_noise": self.expected_abs_noise,
                "tail_mass": self.pmf.tail_mass,
                "tail": {"period": self.sensitivity, "ratio": math.exp(-self.epsilon)},
                "objective": self.objective, "epsilon": self.epsilon, "sensitivity": self.sensitivity,
                "epsilon_pure": self.epsilon_certified, "input": self.input_description,
                "input_dropped_mass": self.input_dropped_mass, "solve_seconds": self.solve_seconds}


def _w1_rows(x: IntegerPMF, window: TailedWindow) -> tuple[np.ndarray, sp.csr_matrix]:
    """Linear coefficients and the affine rows ``D_k`` of W1 over the window masses."""
    xs = np.arange(x.lo, x.hi + 1)
    px = x.probs
    mean = float(px @ xs)
    j = window.values
    # linear part: E max(0, xlo - X - j) + E max(0, X + j - xhi), tails in closed form
    lin = (np.maximum(0, x.lo - xs[None, :] - j[:, None]) + np.maximum(0, xs[None, :] + j[:, None] - x.hi)) @ px
    m, rho = window.period, window.ratio
    f, s1 = rho / (1 - rho), rho / (1 - rho) ** 2
    s = np.arange(1, m + 1)
    lin[-m:] += (mean - x.hi + window.half - m + s) * f + m * s1
    lin[:m] += ((x.lo - mean + window.half - m + s) * f + m * s1)[::-1]
    # middle rows: D_k = sum_j p(j) (F_X(k-j) - F_X(k)) for k = xlo .. xhi-1
    cdf = np.cumsum(px)
    k = np.arange(x.lo, x.hi)
    fk = cdf[:-1]
    y = k[:, None] - j[None, :]
    f_shift = np.where(y < x.lo, 0.0, np.where(y >= x.hi, 1.0, cdf[np.clip(y - x.lo, 0, px.size - 1)]))
    rows = f_shift - fk[:, None]
    left_mass, right_mass = window.tail_masses()
    rows = rows + np.outer(-fk, right_mass) + np.outer(1.0 - fk, left_mass)
    return lin, sp.csr_matrix(rows)


def design_wasserstein(x: IntegerPMF, epsilon: float, sensitivity: int, *, objective: str = "w1",
                       half_width: int | None = None, input_description: str = "user PMF",
                       input_dropped_mass: float = 0.0, time_limit: float | None = None,
                       max_memory: int | None = None) -> WassersteinDesign:
    """eps-DP noise on Z (adjacency ``m`` = ``sensitivity``) minimising W1 or, for P2, ``E|theta|``.

    Parameters
    ----------
    x:
        Input PMF with finite support (cut infinite inputs with :func:`input_distribution`).
    epsilon, sensitivity:
        ``p(k - m0) <= e^eps p(k)`` for ``|m0| <= m`` (Qin et al. (27), Theorem 1).
    objective:
        ``w1`` (exact, problem P1) or ``expected-abs`` (the paper's P2).
    half_width:
        Noise window ``-L..L``; default ``max(xhi - xlo, 4 m)``; must be ``>= xhi - xlo``.
    max_memory:
        Bytes the LP may take (:mod:`optnoise.resources`): refused from the window, the
        sensitivity and the input's span before it is built.
    """
    eps = check_line_epsilon(epsilon)
    m = check_sensitivity(sensitivity)
    if objective not in OBJECTIVES:
        raise InvalidParameterError("objective", objective, "w1 or expected-abs")
    if not x.finite_support:
        raise InvalidParameterError("x", "a PMF with tails", "an input with finite support")
    span = x.hi - x.lo
    half = check_window(max(span, 4 * m) if half_width is None else half_width, m)
    if half < span:
        raise InvalidParameterError("half_width", half, f"a half-width >= the input's span {span}")
    n = 2.0 * half + 1
    if objective == "w1":  # the epigraph: 2 span rows over the window, dense, and their build
        estimate = tailed_lp_bytes(n, m, extra_rows=2.0 * span, extra_nonzeros=2.0 * span * n) + 48.0 * span * n
    else:
        estimate = tailed_lp_bytes(n, m, symmetric=True)
    # the size comes from the window: given, or set by the sensitivity (4 m) or the input's span
    culprit = ("half_width", half_width) if half_width is not None else \
        ("sensitivity", m) if 4 * m >= span else ("x", input_description)
    check(estimate, parameter=culprit[0], value=culprit[1], max_memory=max_memory,
          what=f"the LP over a window of {int(n)} masses (sensitivity {m}, input span {span})")
    window = TailedWindow(half, m, math.exp(-eps))
    t0 = time.perf_counter()
    if objective == "w1":
        lin, rows = _w1_rows(x, window)
        n_k = rows.shape[0]
        eye = sp.identity(n_k, format="csr")
        extra = (sp.vstack([sp.hstack([rows, -eye]), sp.hstack([-rows, -eye])], format="csr"), np.zeros(2 * n_k))
        obj = np.concatenate([lin, np.ones(n_k)])
        p = solve_tailed_lp(window, eps, obj, extra_ub=extra, n_extra=n_k, time_limit=time_limit)
    else:
        p = solve_tailed_lp(window, eps, tail_cost_rows(window, power_cost(1)), time_limit=time_limit,
                            symmetric=True)
    pmf, certified = finish(p, window, eps)
    seconds = time.perf_counter() - t0
    return WassersteinDesign(pmf, objective, w1_distance(x, pmf), expected_cost(pmf, power_cost(1)), eps, m,
                             certified, input_description, input_dropped_mass, seconds)
