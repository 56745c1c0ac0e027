"""Noise designed for K releases: minimum cost subject to a K-fold composed target.

Problem. Noise ``f`` — cyclic on ``{0..n}`` (added modulo ``N = n + 1``), or on the
integer line (a window with exact geometric tails) — is released ``K`` times on the same
neighbouring datasets; the K-fold composition must be ``(eps, delta)``-DP, and the
expected cost is minimised. The exact composed guarantee is not a convex function of
``f``; Rényi divergences give a convex surrogate.

**Convexity (the statement we use).** For ``alpha > 1`` the function
``phi(x, y) = x^alpha y^(1 - alpha) = y (x / y)^alpha`` on ``x >= 0, y > 0`` (with
``phi(x, 0) = +inf`` for ``x > 0`` and ``phi(0, 0) = 0``, its closure) is the
perspective of the convex ``x -> x^alpha``, hence jointly convex and positively
homogeneous of degree 1 (Boyd & Vandenberghe, Convex Optimization, Sec. 3.2.6). For
every ordered shift ``mu`` the sum ``g_mu(f) = sum_cells phi(a_c . f, b_c . f)`` over the
cells of the pair ``(f, f(. + mu))`` is therefore convex whenever each cell's two masses
are linear in ``f`` — true on the cycle (``a_c``, ``b_c`` select one value each) and on the
integer line with fixed geometric tails (a tail cell is ``ratio^t`` times a window mass,
and a whole residue class beyond the window is one cell with weight ``1 / (1 - ratio)``,
exactly as in :mod:`optnoise.analysis.pairs`; the weight enters both masses, and
``phi`` is homogeneous). The Rényi constraint ``D_alpha(f || f(. + mu)) <= r``, i.e.
``g_mu(f) <= exp((alpha - 1) r)``, defines a convex set. The constraint is stated on
``g``, not on ``D_alpha = log(g) / (alpha - 1)``: for ``alpha > 1`` the Rényi divergence is
jointly *quasi*-convex (van Erven & Harremoës 2014, Thm. 13) but jointly convex only for
``alpha <= 1`` (their Thm. 11); its sublevel sets, which are all the design needs, are the
convex sets above.

**Solver.** A log-barrier interior-point method (Boyd & Vandenberghe, Alg. 11.1, with
Newton steps on the mass constraint, Alg. 10.2), with the analytic gradient and Hessian
of ``g`` (:func:`constraint_terms`, chained through the one-variable-per-cell maps). It
starts from a strictly feasible point — the uniform PMF on the cycle (``g = 1``); on the
line the two-sided geometric whose ratio is the tail's, chosen to use half the Rényi
budget — and every iterate stays strictly feasible, so the returned PMF meets its Rényi
constraint; the duality gap ``m / t`` of the last centring bounds its sub-optimality
(``lower``). This replaced a first version with supporting-hyperplane cuts solved by HiGHS
(Veinott 1967), which needed hundreds of LPs to reach a ``1e-6`` gap (1.6 s against 10 ms
here, n = 23).

**Budget over the orders.** The RDP -> DP conversion (Canonne, Kamath & Steinke 2020,
Prop. 12) certifies the K-fold composition at ``(eps, delta)`` if *some* order satisfies
``K D_alpha(f) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1) <= eps``. The
feasible set is a union over orders of convex sets, so the design solves one convex
program per order of a grid and keeps the cheapest (``"rdp"`` designs, certified by RDP
alone). The RDP route is conservative; the final design is certified by the exact
composition instead (:func:`optnoise.analysis.composition.compose_best`: PLD with
pessimistic rounding, exact enumeration where small): the per-release budget ``r`` of the
best orders is scaled up by bisection while the certified K-fold epsilon stays within the
target (``"calibrated"`` designs). Both certificates are reported.

**The integer line.** The tail ratio is fixed per program (it multiplies the variables,
so it cannot be a decision of a convex program): it is the ratio of the geometric that
spends half the budget, which also makes that geometric the strictly feasible start. The
window (default ``-6 sigma0 .. 6 sigma0``, with ``sigma0`` the discrete Gaussian that
certainly meets the target) is wide enough that the tails carry a negligible mass; the
returned PMF is a PMF on all of Z with exact tails (not a truncation).

Symmetry: for a neighbourhood closed under negation and a cost with
``rho(eta) = rho(-eta)`` the problem is invariant under ``f -> f(-.)``; averaging a solution
with its mirror image keeps it feasible (convexity) at equal cost, so the search is
restricted to symmetric ``f`` without loss.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from ..analysis import privacy_profile
from ..analysis.composition import Composed, compose_best, delta_curve
from ..analysis.renyi import renyi_curve
from ..costs import Cost, cost_vector, expected_cost, parse_cost
from ..errors import DesignError, InvalidParameterError
from ..families.baselines import discrete_gaussian_pmf, wrap
from ..families.geometric import geometric_pmf
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood, as_neighbourhood
from ..target import check_delta, check_epsilon, check_integer
from ..pmf import CyclicPMF, IntegerPMF
from .finite import design_finite
from .integer import TailedWindow, design_integer, tail_cost_rows
from .report import DesignResult

#: Orders at which single-order designs are tried (the RDP conversion picks one).
DESIGN_ORDERS: tuple[float, ...] = (1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0,
                                     48.0, 64.0, 96.0, 128.0, 192.0, 256.0)
Pmf = CyclicPMF | IntegerPMF


# --------------------------------------------------------------------- convex program
@dataclass(frozen=True)
class RenyiProgram:
    """``min cost . x`` s.t. ``sum_c phi(p_c, q_c) <= e^log_c`` per shift, ``mass . x = 1``, ``x > 0``.

    Each cell's masses are one variable times a coefficient: ``p_c = p_coef[s][c] *
    x[p_index[s][c]]`` and likewise ``q_c``. ``out_index`` maps the variables to the PMF's
    masses (the full cyclic PMF, or the integer window); ``start`` is a strictly feasible
    point for budgets above ``start_log_g`` (the largest ``log g`` of the start);
    ``window`` is the integer window (``None`` on the cycle).
    """

    p_index: tuple[np.ndarray, ...]
    p_coef: tuple[np.ndarray, ...]
    q_index: tuple[np.ndarray, ...]
    q_coef: tuple[np.ndarray, ...]
    cost: np.ndarray
    mass: np.ndarray
    out_index: np.ndarray
    start: np.ndarray
    window: TailedWindow | None = None

    @property
    def n_vars(self) -> int:
        return int(self.cost.size)

    @property
    def n_shifts(self) -> int:
        return len(self.p_index)

    def masses(self, x: np.ndarray) -> np.ndarray:
        """The PMF's masses (cyclic PMF or integer window) of the variables ``x``."""
        return np.asarray(x, dtype=float)[self.out_index]

    def pmf(self, x: np.ndarray) -> Pmf:
        """The PMF object of the variables ``x``."""
        f = self.masses(x)
        if self.window is None:
            return CyclicPMF(f / f.sum())
        return self.window.pmf(f)

    def cells(self, x: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
        """The pair's masses ``(p_c, q_c)`` on the cells of shift ``s``."""
        return self.p_coef[s] * x[self.p_index[s]], self.q_coef[s] * x[self.q_index[s]]


def _symmetric(shifts: set[int], negated: set[int], rho: np.ndarray, mirror: np.ndarray) -> bool:
    return shifts == negated and bool(np.allclose(rho, rho[mirror], rtol=1e-13, atol=0.0))


def cyclic_program(size: int, nb: Neighbourhood, rho: np.ndarray, *, reduce: bool = True) -> RenyiProgram:
    """The program for cyclic noise on ``size`` values: cells are the values ``eta`` with
    ``p = f(eta)``, ``q = f(eta + mu mod size)`` (Kadam et al. 2024, eqs. (7)-(8)).

    With ``reduce`` (and a symmetric neighbourhood and cost) the variables are
    ``f(0..size // 2)`` and one shift of each pair ``+-mu`` is kept (for symmetric ``f``,
    ``g_mu = g_-mu``).
    """
    shifts = [int(s[0]) for s in nb.cyclic_shifts((size,))]
    eta = np.arange(size)
    if reduce and _symmetric(set(shifts), {(-s) % size for s in shifts}, rho, (-eta) % size):
        rep = np.minimum(eta, size - eta)
        n_vars = size // 2 + 1
        kept = sorted({min(s, size - s) for s in shifts})
        cost = np.bincount(rep, weights=rho, minlength=n_vars)
        mass = np.bincount(rep, minlength=n_vars).astype(float)
    else:
        rep = eta
        n_vars = size
        kept = shifts
        cost = np.asarray(rho, dtype=float)
        mass = np.ones(size)
    ones = np.ones(size)
    p_index = tuple(rep for _ in kept)
    q_index = tuple(rep[(eta + s) % size] for s in kept)
    return RenyiProgram(p_index, tuple(ones for _ in kept), q_index, tuple(ones for _ in kept), cost, mass, rep,
                        np.full(n_vars, 1.0 / size))


def integer_program(window: TailedWindow, nb: Neighbourhood, cost: Cost, *, reduce: bool = True) -> RenyiProgram:
    """The program for noise on Z: the window ``-half..half`` with tails of ``window.ratio``
    (period ``window.period``), cells as in :mod:`optnoise.analysis.pairs` (the window
    extended by ``|mu| + period`` on each side; the outermost ``period`` cells stand for
    their residue classes, weight ``1 / (1 - ratio)``).

    The start is the two-sided geometric with ratio ``window.ratio`` per unit (period 1).
    """
    if window.period != 1:
        raise InvalidParameterError("window", window.period, "tails of period 1")
    h, ratio = window.half, window.ratio
    shifts = nb.integer_shifts()
    values = window.values
    rho = tail_cost_rows(window, cost)
    mirror = values[::-1] + h
    if reduce and _symmetric(set(shifts), {-s for s in shifts}, rho, mirror):
        var_of = np.abs(values)
        n_vars = h + 1
        kept = sorted({abs(s) for s in shifts})
    else:
        var_of = values + h
        n_vars = window.size
        kept = list(shifts)
    cost_vars = np.bincount(var_of, weights=rho, minlength=n_vars)
    mass_vars = np.bincount(var_of, weights=window.mass_row(), minlength=n_vars)

    def source(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Variable and coefficient of the mass at integers ``k`` (tails: ``ratio^t`` times
        the window's end mass)."""
        beyond = np.maximum(np.abs(k) - h, 0)
        inside = np.sign(k) * np.minimum(np.abs(k), h)
        return var_of[inside + h], ratio ** beyond

    p_index, p_coef, q_index, q_coef = [], [], [], []
    w = 1.0 / (1.0 - ratio)
    for mu in kept:
        reach = abs(mu) + 1
        eta = np.arange(-h - reach, h + reach + 1)
        weight = np.ones(eta.size)
        weight[0] = weight[-1] = w
        pi, pc = source(eta)
        qi, qc = source(eta + mu)
        p_index.append(pi)
        p_coef.append(pc * weight)
        q_index.append(qi)
        q_coef.append(qc * weight)
    start = ratio ** np.abs(values).astype(float)
    start_vars = np.zeros(n_vars)
    start_vars[var_of] = start
    start_vars /= float(mass_vars @ start_vars)
    return RenyiProgram(tuple(p_index), tuple(p_coef), tuple(q_index), tuple(q_coef), cost_vars, mass_vars,
                        var_of, start_vars, window)


def log_renyi_sums(prog: RenyiProgram, x: np.ndarray, alpha: float) -> np.ndarray:
    """``log g_mu(x) = log sum_c p_c^alpha q_c^(1 - alpha)`` for every shift (``inf`` where
    ``p_c > 0 = q_c``)."""
    out = np.empty(prog.n_shifts)
    for s in range(prog.n_shifts):
        p, q = prog.cells(np.asarray(x, dtype=float), s)
        keep = p > 0
        if np.any(keep & (q == 0)):
            out[s] = math.inf
            continue
        z = alpha * np.log(p[keep]) + (1.0 - alpha) * np.log(q[keep])
        m = float(z.max())
        out[s] = m + math.log(float(np.exp(z - m).sum()))
    return out


def constraint_terms(x: np.ndarray, y: np.ndarray, alpha: float, log_c: float, derivatives: bool = True):
    """For one shift: ``log h = log(g / c)`` and the per-cell pieces of its gradient and Hessian.

    With ``x = p_c``, ``y = q_c``, ``r = x / y``, the term ``T = x^a y^(1-a) / c`` has
    ``T_x = a r^(a-1) / c``, ``T_y = (1-a) r^a / c``, ``T_xx = a(a-1) r^(a-2) / (y c)``,
    ``T_yy = a(a-1) r^a / (y c)``, ``T_xy = -a(a-1) r^(a-1) / (y c)`` (a rank-one PSD block:
    ``phi`` is convex). Returns ``(log_h, T_x, T_y, T_xx, T_yy, T_xy)`` (``(log_h,)``
    without ``derivatives``), or ``None`` when ``h >= 1`` (outside the barrier's domain).
    """
    lx, ly = np.log(x), np.log(y)
    lr = lx - ly
    base = (alpha - 1.0) * lr - log_c                    # log(r^(a-1) / c)
    z = base + lx                                        # log of x r^(a-1) / c
    zmax = float(z.max())
    log_h = zmax + math.log(float(np.sum(np.exp(z - zmax))))
    if not log_h < 0.0:
        return None
    if not derivatives:
        return (log_h,)
    # inside the domain every x r^(a-1) / c < 1: no overflow
    t_x = alpha * np.exp(base)
    t_y = (1.0 - alpha) * np.exp(base + lr)
    k = alpha * (alpha - 1.0) * np.exp(base) / y
    return log_h, t_x, t_y, k / np.exp(lr), k * np.exp(lr), -k


def _barrier_parts(x: np.ndarray, prog: RenyiProgram, alpha: float, log_c: float, t: float,
                   derivatives: bool = True):
    """Value, gradient and Hessian of ``t cost . x - sum_s log(1 - h_s) - sum log x``."""
    if np.any(x <= 0):
        return math.inf, None, None
    n = x.size
    val = t * float(prog.cost @ x) - float(np.sum(np.log(x)))
    grad = t * prog.cost - 1.0 / x if derivatives else None
    hess = np.diag(1.0 / x ** 2) if derivatives else None
    for s in range(prog.n_shifts):
        p, q = prog.cells(x, s)
        with np.errstate(over="ignore", under="ignore"):
            term = constraint_terms(p, q, alpha, log_c, derivatives)
        if term is None:
            return math.inf, None, None
        val -= math.log(-math.expm1(term[0]))                # -log(1 - g/c), accurate near 0
        if not derivatives:
            continue
        _, t_x, t_y, t_xx, t_yy, t_xy = term
        pi, pc, qi, qc = prog.p_index[s], prog.p_coef[s], prog.q_index[s], prog.q_coef[s]
        w = 1.0 / -math.expm1(term[0])
        gh = np.bincount(pi, weights=pc * t_x, minlength=n) + np.bincount(qi, weights=qc * t_y, minlength=n)
        hh = np.zeros((n, n))
        np.add.at(hh, (pi, pi), pc * pc * t_xx)
        np.add.at(hh, (qi, qi), qc * qc * t_yy)
        np.add.at(hh, (pi, qi), pc * qc * t_xy)
        np.add.at(hh, (qi, pi), pc * qc * t_xy)
        grad += w * gh
        hess += w * hh + (w * w) * np.outer(gh, gh)
    if not derivatives:
        return val, None, None
    if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
        return math.inf, None, None
    return val, grad, hess


@dataclass(frozen=True)
class RenyiSolution:
    """A strictly feasible point of a :class:`RenyiProgram`, its cost and a certified lower
    bound on the program's optimum (the duality gap)."""

    x: np.ndarray
    upper: float
    lower: float
    iterations: int

    def masses(self, prog: RenyiProgram) -> np.ndarray:
        return prog.masses(self.x)


def solve_renyi_program(prog: RenyiProgram, alpha: float, log_c: float, *, tol: float = 1e-9,
                        max_newton: int = 500) -> RenyiSolution:
    """Minimise ``cost . x`` s.t. ``g_mu(x) <= e^log_c`` for every shift: a log-barrier method.

    Boyd & Vandenberghe, Convex Optimization, Alg. 11.1 with feasible-start Newton steps on
    ``{mass . x = 1}`` (Alg. 10.1): from the program's start (strictly feasible when
    ``log g(start) < log_c``), centre ``t cost . x - sum log(1 - g_mu/c) - sum log x`` for
    ``t = t0, 20 t0, ...``. A centred point is dual feasible with duality gap ``m / t``
    (``m`` = number of inequalities, Sec. 11.2.2), so ``cost - m/t`` is a lower bound on
    the optimum; stop when ``m/t <= tol * cost``. Every iterate is strictly feasible (the
    line search never leaves the domain), so the returned point meets the Rényi
    constraint in floating point (checked again after the final normalisation).
    """
    if not log_c > 0:
        raise DesignError("a Rényi budget <= 0 admits no noise")
    x = prog.start.copy()
    if not np.max(log_renyi_sums(prog, x, alpha)) < log_c:
        raise DesignError("the Rényi design's start is not strictly feasible (its tail ratio spends the budget)")
    m_vars = prog.n_vars
    m_ineq = m_vars + prog.n_shifts
    cost0 = float(prog.cost @ x)
    t = m_ineq / max(cost0, 1e-12)
    newton = 0
    while True:
        for _ in range(200):
            val, g, hmat = _barrier_parts(x, prog, alpha, log_c, t)
            if g is None:
                raise DesignError("the Rényi design left its constraint set (numerical failure)")
            # scaled Newton system: x = D z, D = diag(x)
            d = x
            hs = hmat * d[:, None] * d[None, :]
            gs = g * d
            a_s = prog.mass * d
            kkt = np.zeros((m_vars + 1, m_vars + 1))
            kkt[:m_vars, :m_vars] = hs
            kkt[:m_vars, m_vars] = a_s
            kkt[m_vars, :m_vars] = a_s
            rhs = np.concatenate((-gs, [0.0]))
            try:
                sol = np.linalg.solve(kkt, rhs)
            except np.linalg.LinAlgError:
                sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
            dz = sol[:m_vars]
            dec = float(-gs @ dz)                          # Newton decrement squared
            newton += 1
            if dec / 2.0 <= 1e-12 or newton > max_newton:
                break
            dx = d * dz
            step = 1.0
            neg = dx < 0
            if np.any(neg):
                step = min(1.0, 0.99 * float(np.min(-x[neg] / dx[neg])))
            while step > 1e-16:
                v_new, _, _ = _barrier_parts(x + step * dx, prog, alpha, log_c, t, derivatives=False)
                if v_new <= val - 0.25 * step * dec:
                    break
                step *= 0.5
            if step <= 1e-16:
                break
            x = x + step * dx   # Newton steps keep mass . x = 1 up to round-off
        cost = float(prog.cost @ x)
        if m_ineq / t <= tol * max(abs(cost), 1e-12) or newton > max_newton:
            break
        t *= 20.0
    y = x / float(prog.mass @ x)
    lam = 0.0
    while np.max(log_renyi_sums(prog, y, alpha)) > log_c:   # normalisation round-off: step inside
        lam = max(2.0 * lam, 1e-15)
        if lam > 1e-6:
            raise DesignError("the Rényi design left its constraint set (numerical failure)")
        y = (1.0 - lam) * x / float(prog.mass @ x) + lam * prog.start
    cost = float(prog.cost @ y)
    return RenyiSolution(y, cost, cost - m_ineq / t, newton)


def conversion(alpha: float, delta: float) -> float:
    """``log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)`` (CKS 2020 Prop. 12): the
    RDP-to-DP cost of order ``alpha`` at ``delta``."""
    return math.log1p(-1.0 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1.0)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Trial:
    """One solved single-order program: order, per-release Rényi budget, cost and (when the
    exact certificate was computed during calibration) the certified K-fold epsilon."""

    order: float
    budget: float
    expected_cost: float
    epsilon_certified: float | None
    feasible: bool | None

    def to_json(self) -> dict:
        return {"order": self.order, "budget": self.budget,
                "expected_cost": self.expected_cost, "epsilon_certified": self.epsilon_certified,
                "feasible": self.feasible}


@dataclass(frozen=True, eq=False)
class ReleasesDesign(DesignResult):
    """Result of :func:`design_releases` / :func:`design_releases_line`.

    ``composed`` is the certificate (:func:`~optnoise.analysis.composition.compose_best`
    of the K-fold composition at ``delta``); ``epsilon_pld`` and ``epsilon_rdp`` are its
    PLD and RDP candidates. ``order``/``budget`` say which Rényi constraint produced the
    PMF (``budget`` = per-release ``D_order`` bound); ``lower_bound`` is the lower bound
    of that convex program (a bound for the surrogate, not for the K-release problem).
    ``mechanism`` is the noise with its neighbourhood and no single-release target (the
    target is the K-fold composition's).
    """

    pmf: Pmf
    k: int
    epsilon: float
    delta: float
    neighbourhood: Neighbourhood
    cost: str
    expected_cost: float
    method: str
    order: float | None
    budget: float | None
    lower_bound: float | None
    composed: Composed
    epsilon_pld: float | None
    epsilon_rdp: float | None
    solve_seconds: float
    trials: tuple[Trial, ...] = field(default_factory=tuple)

    @property
    def epsilon_certified(self) -> float:
        return float(self.composed.epsilon_dp)  # type: ignore[arg-type]

    @property
    def space(self) -> str:
        return "cyclic" if isinstance(self.pmf, CyclicPMF) else "integer"

    @cached_property
    def mechanism(self) -> Mechanism:
        """The designed noise as a :class:`~optnoise.mechanism.Mechanism` (no single-release target)."""
        return Mechanism(self.pmf, self.neighbourhood, None, f"optimal noise for {self.k} releases")

    def to_json(self) -> dict:
        out = {"k": self.k, "epsilon": self.epsilon, "delta": self.delta, "space": self.space,
               "neighbourhood": self.neighbourhood.to_json(), "cost": self.cost,
               "expected_cost": self.expected_cost, "method": self.method, "order": self.order,
               "budget": self.budget, "lower_bound": self.lower_bound, "composed": self.composed.to_json(),
               "epsilon_certified": self.epsilon_certified, "epsilon_pld": self.epsilon_pld,
               "epsilon_rdp": self.epsilon_rdp, "solve_seconds": self.solve_seconds,
               "trials": [t.to_json() for t in self.trials]}
        if isinstance(self.pmf, IntegerPMF):
            out["tail_mass"] = self.pmf.tail_mass
        return {**out, **self.mechanism.to_json()}


# ------------------------------------------------------------------------------ API
def composed_epsilon(pmf: Pmf, k: int, delta: float, nb: Neighbourhood,
                     methods: Sequence[str] = ("exact", "pld", "rdp", "pure")) -> Composed:
    """The certified K-fold guarantee of a noise PMF (``compose_best`` at ``delta``)."""
    return compose_best([(privacy_profile(pmf, nb), int(k))], delta=delta, methods=methods)


def _check(k: int, epsilon: float, delta: float) -> tuple[int, float, float]:
    return (check_integer(k, parameter="k", accepted="an integer number of releases >= 1"),
            check_epsilon(epsilon, allow_zero=False), check_delta(delta))


def _check_n(n: int) -> int:
    return check_integer(n, parameter="n", accepted="an integer n >= 1 (domain {0..n})")


def _check_orders(orders: Sequence[float]) -> list[float]:
    ords = sorted(float(a) for a in orders)
    if not ords:
        raise InvalidParameterError("orders", [], "finite Rényi orders > 1")
    for a in ords:
        if not (a > 1 and math.isfinite(a)):
            raise InvalidParameterError("orders", a, "finite Rényi orders > 1")
    return ords


def _check_strategies(strategies: Sequence[str]) -> None:
    unknown = set(strategies) - {"renyi", "single-release"}
    if unknown or not strategies:
        raise InvalidParameterError("strategies", list(strategies), "'renyi' and/or 'single-release'")


def _bracket(certify: Callable[[float], tuple[bool, object]], start: float, steps: int):
    """Largest ``r`` (privacy decreasing in ``r``) passing ``certify``, by doubling/halving
    from ``start`` and then ``steps`` bisections on ``log r``; ``(r, payload)`` of the best
    passing point, or ``None`` if none passes within 40 halvings."""
    ok, payload = certify(start)
    best = (start, payload) if ok else None
    lo = hi = start
    if ok:
        for _ in range(40):
            hi = lo * 2.0
            ok, payload = certify(hi)
            if not ok:
                break
            lo, best = hi, (hi, payload)
        else:
            return best
    else:
        for _ in range(40):
            lo = hi / 2.0
            ok, payload = certify(lo)
            if ok:
                best = (lo, payload)
                break
            hi = lo
        else:
            return None
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        ok, payload = certify(mid)
        if ok:
            lo, best = mid, (mid, payload)
        else:
            hi = mid
    return best


#: Relative room left under the target when an RDP budget is spent to the full: the proven
#: composition adds the RDP value's float error and converts in interval arithmetic, so a
#: budget converting to eps exactly certifies a hair above it (10.0000000001 for 365 releases
#: at eps 10, delta 1e-6 on Z), and the design would be refused.
RDP_MARGIN = 1e-9


def _renyi_candidates(program_for: Callable[[float, float], RenyiProgram], k: int, eps: float, dlt: float,
                      nb: Neighbourhood, ords: list[float], calibrate: bool, calibration_steps: int, tol: float,
                      trials: list[Trial], reference: Callable[[], Pmf]) -> list[tuple]:
    """The ``rdp`` design (cheapest single-order program certified by RDP) and, with
    ``calibrate``, the ``calibrated`` designs (budget raised while the exact composition
    allows) at the best order and its neighbours while that lowers the cost.

    ``program_for(alpha, budget)`` builds the program of one order and budget (on the
    line its tail depends on both). Returns ``(cost, pmf, method, order, budget, lower)``.
    """
    cands: list[tuple] = []
    rdp_best: tuple[float, int, float, RenyiSolution, RenyiProgram] | None = None
    for i, a in enumerate(ords):
        r = (eps * (1.0 - RDP_MARGIN) - conversion(a, dlt)) / k
        if r <= 0:
            continue
        prog = program_for(a, r)
        sol = solve_renyi_program(prog, a, (a - 1.0) * r, tol=tol)
        trials.append(Trial(a, r, sol.upper, None, None))
        if rdp_best is None or sol.upper < rdp_best[0]:
            rdp_best = (sol.upper, i, r, sol, prog)
    if rdp_best is not None:
        _, i_best, r_best, sol, prog = rdp_best
        cands.append((sol.upper, prog.pmf(sol.x), "rdp", ords[i_best], r_best, sol.lower))
    if not calibrate:
        return cands
    ref_profile = privacy_profile(min(cands, key=lambda c: c[0])[1] if cands else reference(), nb)

    def calibrated(i: int):
        a = ords[i]

        def certify(r: float):
            prog = program_for(a, r)
            s = solve_renyi_program(prog, a, (a - 1.0) * r, tol=tol)
            pmf = prog.pmf(s.x)
            c = composed_epsilon(pmf, k, dlt, nb, methods=("exact", "pld", "pure"))
            ok = c.epsilon_dp <= eps
            trials.append(Trial(a, r, s.upper, c.epsilon_dp, ok))
            return ok, (s, pmf)
        start = float(renyi_curve(ref_profile, [a])[0])
        if not (start > 0 and math.isfinite(start)):
            start = 1.0 / k
        got = _bracket(certify, start, calibration_steps)
        return None if got is None else (got[1][0].upper, got[0], got[1])

    i0 = rdp_best[1] if rdp_best is not None else len(ords) // 2
    done: dict[int, tuple | None] = {i0: calibrated(i0)}
    for direction in (-1, 1):
        i = i0
        while 0 <= i + direction < len(ords):
            j = i + direction
            done[j] = calibrated(j)
            if done[j] is None or done[i] is None or done[j][0] >= done[i][0] * (1.0 - 1e-4):
                break
            i = j
    for i, got in done.items():
        if got is not None:
            cost_i, r_i, (s_i, pmf_i) = got
            cands.append((cost_i, pmf_i, "calibrated", ords[i], r_i, s_i.lower))
    return cands


def _result(pmf: Pmf, method: str, order, budget, lower, trials, *, k: int, eps: float, dlt: float,
            nb: Neighbourhood, cost_name: str, cost_of: Callable[[Pmf], float], t0: float) -> ReleasesDesign:
    from ..target import MEETS_TOLERANCE
    comp = composed_epsilon(pmf, k, dlt, nb, methods=("exact", "pld", "rdp", "pure"))
    # a float design meets its target within the float-profile tolerance (docs/architecture.md,
    # "Meets"); the certificate itself is proven, rounded up, and reported as it is
    if not comp.epsilon_dp <= eps * (1.0 + MEETS_TOLERANCE):
        raise DesignError(f"the design certifies eps {float(comp.epsilon_dp):.12g} > target {float(eps):.12g}; "
                          "refusing to return it")
    pld_c, rdp_c = comp.candidate("pld"), comp.candidate("rdp")
    return ReleasesDesign(pmf, k, eps, dlt, nb, cost_name, cost_of(pmf), method, order, budget, lower,
                          comp, pld_c.epsilon if pld_c else None, float(rdp_c.epsilon) if rdp_c else None,
                          time.perf_counter() - t0, tuple(trials))


def _cheapest(cands: list[tuple], strategies: Sequence[str], single: Callable[[], "ReleaseCandidate"],
              finish: Callable[..., ReleasesDesign], trials: list[Trial]) -> ReleasesDesign:
    """The cheapest candidate ``(cost, pmf, method, order, budget, lower)``, the single-release
    optimum (``single()``) included when ``strategies`` asks for it; certified by ``finish``."""
    if "single-release" in strategies:
        row = single()
        cands.append((row.expected_cost, row.pmf, "single-release", None, row.parameter, None))
    if not cands:
        raise DesignError("no Rényi order gives a positive per-release budget at this (epsilon, delta, k); "
                          "add larger orders or raise epsilon")
    _, pmf, method, order, budget, lower = min(cands, key=lambda c: c[0])
    return finish(pmf, method, order, budget, lower, trials)


def design_releases(n: int, k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                    cost: str | Sequence[float] | np.ndarray = "circular-mse",
                    orders: Sequence[float] = DESIGN_ORDERS, calibrate: bool = True,
                    strategies: Sequence[str] = ("renyi", "single-release"),
                    calibration_steps: int = 10, tol: float = 1e-9) -> ReleasesDesign:
    """Cyclic noise on ``{0..n}`` of least expected cost whose K-fold composition is ``(eps, delta)``-DP.

    Parameters
    ----------
    n:
        Largest answer; noise is added modulo ``n + 1``.
    k:
        Number of releases (same query, same neighbouring datasets, independent noise).
    epsilon, delta:
        Target of the K-fold composition (approximate DP).
    neighbourhood:
        Query distances (default SD 1, symmetric).
    cost:
        A cost name of :func:`~optnoise.costs.cost_vector` or a vector.
    orders:
        Rényi orders of the single-order convex programs (module docstring).
    calibrate:
        Loosen the Rényi budget while the exact (PLD) certificate allows, at the best
        order and its neighbours on ``orders`` while that lowers the cost.
    strategies:
        ``"renyi"``: the Rényi-constrained convex designs; ``"single-release"``: the
        single-release optimum at a per-release ``(eps1, delta1)`` calibrated for K
        releases (:func:`calibrated_single_release`). The cheapest certified one is
        returned; ``method`` says which.
    calibration_steps:
        Bisection steps on the budget per calibrated order.
    tol:
        Relative duality gap of the barrier solver.

    Returns
    -------
    ReleasesDesign
        The PMF, its cost and both certificates. At ``delta = 0`` pure DP composes
        exactly (``K eps_pure`` for one mechanism), so the design is the single-release
        optimum at ``eps / K`` (method ``"pure-split"``), which is optimal.
    """
    n = _check_n(n)
    k, eps, dlt = _check(k, epsilon, delta)
    nb = as_neighbourhood(neighbourhood)
    _check_strategies(strategies)
    size = n + 1
    cost_name = cost if isinstance(cost, str) else "user"
    rho = cost_vector(cost, (size,))
    t0 = time.perf_counter()

    def finish(pmf, method, order, budget, lower, trials):
        return _result(pmf, method, order, budget, lower, trials, k=k, eps=eps, dlt=dlt, nb=nb,
                       cost_name=cost_name, cost_of=lambda p: float(rho @ p.probs), t0=t0)

    if dlt == 0.0:
        # k-fold pure DP of one mechanism is exactly k eps_pure: the problem is the single-release one
        fd = design_finite(n, epsilon=eps / k, delta=0.0, neighbourhood=nb, cost=cost)
        return finish(fd.pmf, "pure-split", None, None, None, ())
    trials: list[Trial] = []
    cands: list[tuple] = []
    if "renyi" in strategies:
        prog = cyclic_program(size, nb, rho)
        cands += _renyi_candidates(lambda a, r: prog, k, eps, dlt, nb, _check_orders(orders), calibrate,
                                   calibration_steps, tol, trials, lambda: CyclicPMF(np.full(size, 1.0 / size)))
    return _cheapest(cands, strategies, lambda: calibrated_single_release(n, k, epsilon=eps, delta=dlt,
                                                                         neighbourhood=nb, cost=cost), finish, trials)


def _line_neighbourhood(neighbourhood: Neighbourhood | None) -> tuple[Neighbourhood, int]:
    nb = as_neighbourhood(neighbourhood)
    shifts = nb.integer_shifts()
    return nb, max(abs(s) for s in shifts)


def _sigma0(k: int, eps: float, dlt: float, d: int) -> float:
    """The discrete Gaussian's ``sigma`` that certainly meets the K-fold target: it is
    ``K D^2 / (2 sigma^2)``-zCDP (Canonne, Kamath & Steinke 2020) and Bun & Steinke 2016,
    Prop. 1.3 (``eps = rho + 2 sqrt(rho log(1/delta))``) converts."""
    lg = math.log(1.0 / dlt)
    rho_total = (math.sqrt(lg + eps) - math.sqrt(lg)) ** 2        # rho + 2 sqrt(rho lg) = eps
    return d * math.sqrt(k / (2.0 * rho_total))


def geometric_ratio_for(budget: float, alpha: float, nb: Neighbourhood) -> float:
    """The ratio ``a`` of the two-sided geometric whose order-``alpha`` Rényi divergence
    (worst shift of ``nb``) is ``budget`` (bisection on ``a``; the divergence decreases as
    ``a -> 1``): the tail of the line programs, and their strictly feasible start."""
    def d(a: float) -> float:
        return float(renyi_curve(privacy_profile(geometric_pmf(a), nb), [alpha])[0])
    lo, hi = 1e-6, 1.0 - 1e-12
    if d(lo) <= budget:
        return lo
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if d(mid) <= budget:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-13:
            break
    return hi


def design_releases_line(k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                         cost: str | Cost | Callable = "sq", half_width: int | None = None,
                         orders: Sequence[float] = DESIGN_ORDERS, calibrate: bool = True,
                         strategies: Sequence[str] = ("renyi", "single-release"),
                         calibration_steps: int = 10, tol: float = 1e-9) -> ReleasesDesign:
    """Noise on the integer line (window with exact geometric tails) of least expected cost
    whose K-fold composition is ``(eps, delta)``-DP.

    The line version of :func:`design_releases` (module docstring: the tail ratio of each
    single-order program is the geometric's that spends half its budget). Parameters as
    there, plus ``cost`` (``sq``, ``abs``, ``pow:K``, ``er``; default ``sq``) and
    ``half_width`` (window ``-L..L``; default ``6 sigma0`` with ``sigma0`` from
    :func:`_sigma0`, at least ``8`` and the largest distance). ``strategies``
    ``"single-release"`` is the pure-DP optimum on Z (:func:`~.integer.design_integer`)
    calibrated for K releases. At ``delta = 0`` the design is that optimum at ``eps / K``.
    """
    k, eps, dlt = _check(k, epsilon, delta)
    nb, dmax = _line_neighbourhood(neighbourhood)
    _check_strategies(strategies)
    c = parse_cost(cost)
    t0 = time.perf_counter()

    def finish(pmf, method, order, budget, lower, trials):
        return _result(pmf, method, order, budget, lower, trials, k=k, eps=eps, dlt=dlt, nb=nb,
                       cost_name=c.name, cost_of=lambda p: expected_cost(p, c), t0=t0)

    if dlt == 0.0:
        return finish(design_integer(eps / k, dmax, c).pmf, "pure-split", None, None, None, ())
    if half_width is None:
        half = max(8, dmax, int(math.ceil(6.0 * _sigma0(k, eps, dlt, dmax))))
    elif isinstance(half_width, bool) or int(half_width) != half_width or half_width < max(1, dmax):
        raise InvalidParameterError("half_width", half_width, f"an integer >= the largest distance {dmax}")
    else:
        half = int(half_width)
    trials: list[Trial] = []
    cands: list[tuple] = []
    if "renyi" in strategies:
        def program_for(alpha: float, budget: float) -> RenyiProgram:
            ratio = geometric_ratio_for(budget / 2.0, alpha, nb)
            return integer_program(TailedWindow(half, 1, ratio), nb, c)
        cands += _renyi_candidates(program_for, k, eps, dlt, nb, _check_orders(orders), calibrate,
                                   calibration_steps, tol, trials, lambda: geometric_pmf(0.5))
    return _cheapest(cands, strategies, lambda: calibrated_single_release_line(k, epsilon=eps, delta=dlt,
                                                                              neighbourhood=nb, cost=c), finish, trials)


# ------------------------------------------------------------------ calibrated baselines
@dataclass(frozen=True)
class ReleaseCandidate:
    """One mechanism calibrated so that its K-fold composition meets the target."""

    mechanism: str
    pmf: Pmf
    parameter: float | None
    parameter_name: str
    expected_cost: float
    composed: Composed
    note: str = ""

    @property
    def error_rate(self) -> float:
        """``P(noise != 0)``."""
        zero = self.pmf.probs[0] if isinstance(self.pmf, CyclicPMF) else self.pmf.mass(np.array([0]))[0]
        return float(1.0 - zero)

    def to_json(self) -> dict:
        out = {"mechanism": self.mechanism, "pmf": self.pmf.probs.tolist(), "parameter": self.parameter,
               "parameter_name": self.parameter_name, "expected_cost": self.expected_cost,
               "error_rate": self.error_rate, "composed": self.composed.to_json(), "note": self.note}
        if isinstance(self.pmf, IntegerPMF):
            out["offset"] = self.pmf.offset
        return out


@dataclass(frozen=True)
class ReleasesComparison:
    """Result of :func:`compare_releases`: one row per mechanism, cheapest first."""

    n: int | None
    k: int
    epsilon: float
    delta: float
    cost: str
    neighbourhood: Neighbourhood
    rows: tuple[ReleaseCandidate, ...]
    space: str = "cyclic"

    @property
    def best(self) -> str:
        return self.rows[0].mechanism

    def row(self, mechanism: str) -> ReleaseCandidate:
        return next(r for r in self.rows if r.mechanism == mechanism)

    def to_json(self) -> dict:
        return {"n": self.n, "k": self.k, "epsilon": self.epsilon, "delta": self.delta, "cost": self.cost,
                "space": self.space, "neighbourhood": self.neighbourhood.to_json(), "best": self.best,
                "rows": [r.to_json() for r in self.rows]}


def _calibrate(build: Callable[[float], Pmf], feasible_at: float, k: int, eps: float, delta: float,
               nb: Neighbourhood, *, rel_tol: float = 1e-4, max_steps: int = 40):
    """Largest parameter ``s >= feasible_at`` (privacy decreasing in ``s``) whose K-fold
    composition certifies ``(eps, delta)``; bisection on ``log s``.

    Returns ``(s, pmf, composition)`` of the best *certified* point (every returned
    mechanism is certified; monotonicity is only used to steer the search).
    """
    def check(s: float):
        pmf = build(s)
        c = composed_epsilon(pmf, k, delta, nb, methods=("exact", "pld", "rdp", "pure"))
        return c.epsilon_dp <= eps, pmf, c

    # the start is feasible in exact arithmetic; designs certified "<= eps (1 + 1e-12)" may need a nudge
    for shrink in (1.0, 1.0 - 1e-9, 1.0 - 1e-6, 0.999, 0.99, 0.5):
        ok, pmf, comp = check(feasible_at * shrink)
        if ok:
            feasible_at *= shrink
            break
    else:
        raise DesignError(f"calibration start {float(feasible_at):.12g} does not meet the target")
    best = (feasible_at, pmf, comp)
    lo, hi = feasible_at, feasible_at * 2.0
    steps = 0
    while steps < max_steps:
        ok, pmf, comp = check(hi)
        steps += 1
        if not ok:
            break
        best = (hi, pmf, comp)
        lo, hi = hi, hi * 2.0
    while hi / lo > 1.0 + rel_tol and steps < max_steps:
        mid = math.sqrt(lo * hi)
        ok, pmf, comp = check(mid)
        steps += 1
        if ok:
            lo = mid
            best = (mid, pmf, comp)
        else:
            hi = mid
    return best


def _max_distance(nb: Neighbourhood, size: int) -> int:
    return max(min(s[0], size - s[0]) for s in nb.cyclic_shifts((size,)))


def calibrated_geometric(n: int, k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                         cost: str | Sequence[float] | np.ndarray = "circular-mse") -> ReleaseCandidate:
    """Two-sided geometric wrapped onto ``{0..n}`` (``wrap``), per-unit ``eps1`` calibrated for K releases."""
    n = _check_n(n)
    k, eps, dlt = _check(k, epsilon, delta)
    nb = as_neighbourhood(neighbourhood)
    size = n + 1
    rho = cost_vector(cost, (size,))
    start = eps / (k * _max_distance(nb, size))   # pure: eps_pure <= eps1 * distance per release
    e1, pmf, comp = _calibrate(lambda e: wrap(geometric_pmf(math.exp(-e)), size), start, k, eps, dlt, nb)
    return ReleaseCandidate("geometric", pmf, e1, "epsilon per unit distance (alpha = exp(-eps1))",
                            float(rho @ pmf.probs), comp, "wrapped modulo n + 1")


def calibrated_discrete_gaussian(n: int, k: int, *, epsilon: float, delta: float,
                                 neighbourhood: Neighbourhood | None = None,
                                 cost: str | Sequence[float] | np.ndarray = "circular-mse") -> ReleaseCandidate:
    """Discrete Gaussian wrapped onto ``{0..n}``, ``sigma`` calibrated for K releases.

    Start: :func:`_sigma0` (zCDP; wrapping is post-processing) certainly meets the
    target; the search then lowers ``sigma``.
    """
    n = _check_n(n)
    k, eps, dlt = _check(k, epsilon, delta)
    if dlt == 0.0:
        raise InvalidParameterError("delta", delta, "delta > 0 for the discrete Gaussian")
    nb = as_neighbourhood(neighbourhood)
    size = n + 1
    rho = cost_vector(cost, (size,))
    sigma_cap = 8.0 * size                                        # wider is uniform to double precision
    start = 1.0 / min(_sigma0(k, eps, dlt, _max_distance(nb, size)), sigma_cap)
    inv_s, pmf, comp = _calibrate(lambda s: wrap(discrete_gaussian_pmf(1.0 / s), size), start, k, eps, dlt, nb)
    return ReleaseCandidate("discrete-gaussian", pmf, 1.0 / inv_s, "sigma", float(rho @ pmf.probs), comp,
                            "wrapped modulo n + 1")


def calibrated_single_release(n: int, k: int, *, epsilon: float, delta: float,
                              neighbourhood: Neighbourhood | None = None,
                              cost: str | Sequence[float] | np.ndarray = "circular-mse",
                              per_release_deltas: Sequence[float] | None = None) -> ReleaseCandidate:
    """The single-release optimum (:func:`design_finite`) at the per-release ``(eps1, delta1)``
    whose K-fold composition meets the target; ``eps1`` by bisection for each ``delta1``
    in ``per_release_deltas`` (default ``0`` and ``delta / K``), cheapest kept.

    ``eps1 = eps / K`` is always feasible: basic composition gives ``(eps, K delta1)``
    with ``K delta1 <= delta``.
    """
    n = _check_n(n)
    k, eps, dlt = _check(k, epsilon, delta)
    nb = as_neighbourhood(neighbourhood)
    rho = cost_vector(cost, (n + 1,))
    d1s = per_release_deltas if per_release_deltas is not None else ((0.0, dlt / k) if dlt > 0 else (0.0,))
    best: ReleaseCandidate | None = None
    for d1 in d1s:
        if not 0.0 <= d1 <= dlt / k * (1.0 + 1e-12):
            raise InvalidParameterError("per_release_deltas", d1, f"values in [0, delta / k] = [0, {dlt / k:g}]")
        e1, pmf, comp = _calibrate(
            lambda e, d1=d1: design_finite(n, epsilon=e, delta=d1, neighbourhood=nb, cost=cost).pmf,
            eps / k, k, eps, dlt, nb)
        row = ReleaseCandidate("single-release", pmf, e1, f"per-release epsilon (per-release delta {d1:g})",
                               float(rho @ pmf.probs), comp, f"design_finite at ({e1:.6g}, {d1:g}) composed {k} times")
        if best is None or row.expected_cost < best.expected_cost:
            best = row
    assert best is not None
    return best


def calibrated_geometric_line(k: int, *, epsilon: float, delta: float, neighbourhood: Neighbourhood | None = None,
                              cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The two-sided geometric on Z (exact tails), per-unit ``eps1`` calibrated for K releases."""
    k, eps, dlt = _check(k, epsilon, delta)
    nb, dmax = _line_neighbourhood(neighbourhood)
    c = parse_cost(cost)
    e1, pmf, comp = _calibrate(lambda e: geometric_pmf(math.exp(-e)), eps / (k * dmax), k, eps, dlt, nb)
    return ReleaseCandidate("geometric", pmf, e1, "epsilon per unit distance (alpha = exp(-eps1))",
                            expected_cost(pmf, c), comp, "on Z, exact tails")


def calibrated_discrete_gaussian_line(k: int, *, epsilon: float, delta: float,
                                      neighbourhood: Neighbourhood | None = None,
                                      cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The discrete Gaussian on Z, ``sigma`` calibrated for K releases.

    Certified as represented (:func:`~optnoise.families.baselines.discrete_gaussian_pmf`:
    the window ``+-40 sigma``, masses beyond it below the float range and dropped); its
    loss distributions include the edge's infinite-loss mass, so the PLD certificate is
    that of the represented (and sampled) noise.
    """
    k, eps, dlt = _check(k, epsilon, delta)
    if dlt == 0.0:
        raise InvalidParameterError("delta", delta, "delta > 0 for the discrete Gaussian")
    nb, dmax = _line_neighbourhood(neighbourhood)
    c = parse_cost(cost)
    start = 1.0 / _sigma0(k, eps, dlt, dmax)
    inv_s, pmf, comp = _calibrate(lambda s: discrete_gaussian_pmf(1.0 / s), start, k, eps, dlt, nb)
    return ReleaseCandidate("discrete-gaussian", pmf, 1.0 / inv_s, "sigma", expected_cost(pmf, c), comp,
                            "on Z, window +-40 sigma")


def calibrated_single_release_line(k: int, *, epsilon: float, delta: float,
                                   neighbourhood: Neighbourhood | None = None,
                                   cost: str | Cost | Callable = "sq") -> ReleaseCandidate:
    """The single-release pure-DP optimum on Z (:func:`~.integer.design_integer`, sensitivity =
    the largest distance) at the per-release ``eps1`` whose K-fold composition meets the
    target (``eps1 = eps / K`` always does)."""
    k, eps, dlt = _check(k, epsilon, delta)
    nb, dmax = _line_neighbourhood(neighbourhood)
    c = parse_cost(cost)
    e1, pmf, comp = _calibrate(lambda e: design_integer(e, dmax, c).pmf, eps / k, k, eps, dlt, nb)
    return ReleaseCandidate("single-release", pmf, e1, "per-release epsilon (pure)", expected_cost(pmf, c), comp,
                            f"design_integer at eps {e1:.6g} composed {k} times")


def compare_releases(n: int | None, k: int, *, epsilon: float, delta: float,
                     neighbourhood: Neighbourhood | None = None,
                     cost: str | Sequence[float] | np.ndarray | None = None, space: str = "cyclic",
                     design_options: dict | None = None) -> ReleasesComparison:
    """The K-release design against the single-release optimum composed K times and the
    geometric and discrete Gaussian calibrated for K releases, at the same target.

    ``space="cyclic"`` (noise mod ``n + 1``, default cost ``circular-mse``) or
    ``"integer"`` (noise on Z, ``n`` unused, default cost ``sq``). The ``k-release`` row is
    what :func:`design_releases` (:func:`design_releases_line`) returns: the cheapest of
    the Rényi designs and, unless ``design_options`` restricts ``strategies`` to
    ``("renyi",)``, the single-release optimum (its note says which). Every row is
    certified by :func:`~optnoise.analysis.composition.compose_best` (the K-fold
    composition meets ``(epsilon, delta)``); rows are sorted by expected cost (on a tie the
    ``k-release`` row first).
    """
    if space not in ("cyclic", "integer"):
        raise InvalidParameterError("space", space, "'cyclic' or 'integer'")
    k, eps, dlt = _check(k, epsilon, delta)
    opts = dict(design_options or {})
    strategies = tuple(opts.pop("strategies", ("renyi", "single-release")))
    _check_strategies(strategies)
    if "renyi" not in strategies:
        raise InvalidParameterError("strategies", list(strategies), "'renyi' (and optionally 'single-release')")
    if space == "cyclic":
        n = _check_n(n)  # type: ignore[arg-type]
        nb = as_neighbourhood(neighbourhood)
        cst = "circular-mse" if cost is None else cost
        cost_name = cst if isinstance(cst, str) else "user"
        d = design_releases(n, k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst, strategies=("renyi",), **opts)
        rows = [calibrated_single_release(n, k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst),
                calibrated_geometric(n, k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst)]
        if dlt > 0:
            rows.append(calibrated_discrete_gaussian(n, k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst))
    else:
        nb, _ = _line_neighbourhood(neighbourhood)
        cst = "sq" if cost is None else cost
        cost_name = parse_cost(cst).name  # type: ignore[arg-type]
        d = design_releases_line(k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst,  # type: ignore[arg-type]
                                 strategies=("renyi",), **opts)
        rows = [calibrated_single_release_line(k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst),  # type: ignore[arg-type]
                calibrated_geometric_line(k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst)]  # type: ignore[arg-type]
        if dlt > 0:
            rows.append(calibrated_discrete_gaussian_line(k, epsilon=eps, delta=dlt, neighbourhood=nb, cost=cst))  # type: ignore[arg-type]
    single = rows[0]
    if "single-release" in strategies and single.expected_cost < d.expected_cost:
        best = ReleaseCandidate("k-release", single.pmf, single.parameter, single.parameter_name,
                                single.expected_cost, single.composed,
                                "single-release optimum (cheaper here than every Rényi design, "
                                f"best {d.expected_cost:.6g})")
    else:
        best = ReleaseCandidate("k-release", d.pmf, d.order, "Rényi order constrained", d.expected_cost, d.composed,
                                f"{d.method}; per-release D_{d.order:g} <= {d.budget:.6g}" if d.order else d.method)
    rows.insert(0, best)
    rows.sort(key=lambda r: r.expected_cost)
    return ReleasesComparison(n if space == "cyclic" else None, k, eps, dlt, cost_name, nb, tuple(rows), space)


# ------------------------------------------------------------------------- plot data
def composed_profiles(mechanisms: dict[str, Pmf], k: int, epsilons: Sequence[float],
                      neighbourhood: Neighbourhood | None = None) -> dict[str, np.ndarray]:
    """``delta(eps)`` after K releases for each named PMF (for a privacy-profile plot):
    :func:`~optnoise.analysis.composition.delta_curve`."""
    nb = as_neighbourhood(neighbourhood)
    return {name: delta_curve([(privacy_profile(pmf, nb), int(k))], epsilons)[1] for name, pmf in mechanisms.items()}


def cost_table(comparisons: Sequence[ReleasesComparison]) -> dict[str, np.ndarray]:
    """Expected cost of each mechanism for each comparison's K (for a cost-vs-K plot):
    ``{"k": array, mechanism: array of costs, ...}``."""
    out: dict[str, list[float]] = {}
    for comp in comparisons:
        for r in comp.rows:
            out.setdefault(r.mechanism, []).append(r.expected_cost)
    res = {"k": np.asarray([c.k for c in comparisons])}
    res.update({m: np.asarray(v) for m, v in out.items()})
    return res


def cost_against_k(n: int | None, ks: Sequence[int], *, epsilon: float, delta: float,
                   neighbourhood: Neighbourhood | None = None,
                   cost: str | Sequence[float] | np.ndarray | None = None,
                   space: str = "cyclic") -> dict[str, np.ndarray]:
    """:func:`cost_table` of :func:`compare_releases` at each K in ``ks``."""
    return cost_table([compare_releases(n, int(k), epsilon=epsilon, delta=delta, neighbourhood=neighbourhood,
                                        cost=cost, space=space) for k in ks])


__all__ = ["DESIGN_ORDERS", "ReleaseCandidate", "ReleasesComparison", "ReleasesDesign",
           "RenyiProgram", "RenyiSolution", "Trial", "calibrated_discrete_gaussian",
           "calibrated_discrete_gaussian_line", "calibrated_geometric", "calibrated_geometric_line",
           "calibrated_single_release", "calibrated_single_release_line", "compare_releases", "composed_epsilon",
           "composed_profiles", "constraint_terms", "conversion", "cost_against_k", "cost_table", "cyclic_program",
           "design_releases", "design_releases_line", "geometric_ratio_for", "integer_program", "log_renyi_sums",
           "solve_renyi_program"]
