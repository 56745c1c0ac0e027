"""The Rényi-constrained convex program of the K-release designs, and its solver.

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

Symmetry: for a neighbourhood closed under negation and a cost with
``rho(eta) = rho(-eta)`` the problem is invariant under ``f -> f(-.)``; averaging a solution
with its mirror image keeps it feasible (convexity) at equal cost, so the search is
restricted to symmetric ``f`` without loss (``reduce=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..costs import Cost
from ..errors import DesignError, InvalidParameterError
from ..neighbourhood import Neighbourhood
from ..pmf import CyclicPMF, IntegerPMF
from .integer import TailedWindow, tail_cost_rows

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


__all__ = ["Pmf", "RenyiProgram", "RenyiSolution", "constraint_terms", "conversion", "cyclic_program",
           "integer_program", "log_renyi_sums", "solve_renyi_program"]
