"""Optimal noise for a finite domain ``{0..n}``, added modulo ``n + 1`` (Kadam et al. 2024).

Problems (all built with sparse matrices and solved by HiGHS through scipy):

* **standard DP**, ``delta = 0``: Kadam's LP (14), ``f(eta) <= e^eps f(eta + mu)``
  for every ``eta`` and every ordered shift ``mu``;
* **standard DP**, ``delta > 0``: an LP; the hockey-stick constraint
  ``sum_eta max(0, f(eta) - e^eps f(eta + mu)) <= delta`` is linearised with one
  variable ``t[mu, eta] >= f(eta) - e^eps f(eta + mu)``, ``t >= 0`` per distance and value;
* **PDP** (Kadam Def. 2, per distance): a MILP with one indicator ``u[mu, eta]``
  per distance and noise value and ``y[mu, eta] = u f(eta)``:
  ``f(eta) - e^eps f(eta + mu) <= y``, ``y <= f``, ``y >= f - (1 - u)``,
  ``y <= delta u``, ``sum_eta y[mu, .] <= delta``;
* **PDP as printed** (``formulation="paper"``): (13a)-(13h) literally, one
  indicator per noise value shared by all distances;
* **min-delta** (15): smallest ``delta`` subject to expected cost ``<= max_cost``.

Every MILP solution is *polished*: with its indicators fixed the problem is an LP,
re-solved at tight tolerances with a ``1e-10`` relative margin on ``e^eps``;
every LP solution is clipped, renormalised and, if the certificate still shows a
violation from solver tolerance, mixed with the uniform PMF by the smallest
weight that restores the target. The returned ``certificate`` is the analysis of
the returned PMF (:mod:`optnoise.analysis`), not the solver's claim.
"""

from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ..analysis import Guarantee, guarantee, privacy_profile
from ..errors import DesignError, InvalidParameterError
from ..neighbourhood import Neighbourhood
from ..pmf import CyclicPMF

CostName = Literal["er", "mse", "circular-mse", "abs", "circular-abs"]
COSTS: tuple[str, ...] = ("er", "mse", "circular-mse", "abs", "circular-abs")

#: Relative margin on e^eps used when polishing, so float round-off never crosses a constraint.
RATIO_MARGIN = 1e-10
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
MIP_REL_GAP = 1e-6


@contextmanager
def _solver_silenced():
    """Send file descriptor 1 to /dev/null while HiGHS runs.

    HiGHS's C++ code can print diagnostics straight to the process's stdout, which
    would break the CLI's promise of exactly one JSON object there.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real fd 1 (embedded interpreters)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


# ------------------------------------------------------------------ costs
def cost_vector(cost: str | Sequence[float] | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Cost ``rho[eta]`` over noise values (flattened), DESIGN.md "Costs".

    ``er``: ``[eta != 0]``; ``mse``: ``eta^2`` with ``eta`` in ``0..n`` (the paper's
    MSE, the noise second moment); ``circular-mse``: ``min(eta, n+1-eta)^2``;
    ``abs``: ``eta``; ``circular-abs``: ``min(eta, n+1-eta)``; for vector noise the
    per-coordinate costs are summed (``er``: any coordinate non-zero). A sequence is
    a user cost, one value per noise value.
    """
    grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    if isinstance(cost, str):
        if cost == "er":
            rho = np.zeros(shape)
            rho[...] = 1.0
            rho[(0,) * len(shape)] = 0.0
        elif cost in ("mse", "abs", "circular-mse", "circular-abs"):
            rho = np.zeros(shape)
            for g, s in zip(grids, shape):
                d = np.minimum(g, s - g) if cost.startswith("circular") else g
                rho = rho + (d.astype(float) ** 2 if cost.endswith("mse") else d.astype(float))
        else:
            raise InvalidParameterError("cost", cost, "one of " + ", ".join(COSTS) + " or a vector of costs")
        return rho.ravel()
    vec = np.asarray(cost, dtype=float)
    if vec.size != int(np.prod(shape)) or not np.all(np.isfinite(vec)):
        raise InvalidParameterError("cost", f"{vec.size} values", f"{int(np.prod(shape))} finite costs, one per noise value")
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


# ----------------------------------------------------------------- result
@dataclass(frozen=True)
class FiniteDesign:
    """Result of :func:`design_finite` (CLI.md keys in :meth:`to_json`)."""

    pmf: CyclicPMF
    cost: str
    expected_cost: float
    error_rate: float
    noise_second_moment: float
    squared_error_worst: float
    squared_error_average: float
    notion: str
    epsilon: float
    delta: float
    neighbourhood: Neighbourhood
    certificate: Guarantee
    method: str
    optimal: bool
    solve_seconds: float
    formulation: str = "standard"
    minimize: str = "cost"
    delta_min: float | None = None
    mip_gap: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        out = {
            "pmf": self.pmf.probs.tolist(),
            "n": self.pmf.n if isinstance(self.pmf.n, int) else list(self.pmf.n),
            "cost": self.cost,
            "expected_cost": self.expected_cost,
            "error_rate": self.error_rate,
            "noise_second_moment": self.noise_second_moment,
            "squared_error": {"worst": self.squared_error_worst, "average": self.squared_error_average},
            "guarantee": {"notion": self.notion, "epsilon": self.epsilon, "delta": self.delta,
                          "neighbourhood": self.neighbourhood.to_json()},
            "certificate": self.certificate.to_json(),
            "method": self.method,
            "optimal": self.optimal,
            "solve_seconds": self.solve_seconds,
            "formulation": self.formulation,
            "minimize": self.minimize,
            "notes": list(self.notes),
        }
        if self.mip_gap is not None:
            out["mip_gap"] = self.mip_gap
        if self.minimize == "delta":
            out["delta"] = self.delta_min
        return out


# --------------------------------------------------------- model building
@dataclass(frozen=True)
class _Shifts:
    """Partner indices: ``partner[k, eta]`` is the flat index of ``eta + mu_k``."""

    partner: np.ndarray  # (K, N)

    @property
    def k(self) -> int:
        return int(self.partner.shape[0])

    @property
    def n(self) -> int:
        return int(self.partner.shape[1])


def _shifts(shape: tuple[int, ...], nb: Neighbourhood) -> _Shifts:
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    axes = tuple(range(len(shape)))
    rows = [np.roll(idx, tuple(-s for s in shift), axis=axes).ravel() for shift in nb.cyclic_shifts(shape)]
    return _Shifts(np.array(rows))


def _ratio_block(sh: _Shifts, e: float, f_offset: int, n_cols: int) -> sp.csr_matrix:
    """Rows ``f(eta) - e f(eta + mu_k)`` for all (k, eta), as a sparse (K N x n_cols) block."""
    kn = sh.k * sh.n
    rows = np.arange(kn)
    eta = np.tile(np.arange(sh.n), sh.k)
    partner = sh.partner.ravel()
    data = np.concatenate((np.ones(kn), np.full(kn, -e)))
    r = np.concatenate((rows, rows))
    c = np.concatenate((eta, partner)) + f_offset
    return sp.csr_matrix((data, (r, c)), shape=(kn, n_cols))


def _eye_block(kn: int, offset: int, n_cols: int, scale: float = 1.0) -> sp.csr_matrix:
    return sp.csr_matrix((np.full(kn, scale), (np.arange(kn), np.arange(kn) + offset)), shape=(kn, n_cols))


def _sum_rows(k: int, n: int, offset: int, n_cols: int) -> sp.csr_matrix:
    """Row j sums the j-th block of n variables starting at offset."""
    rows = np.repeat(np.arange(k), n)
    return sp.csr_matrix((np.ones(k * n), (rows, np.arange(k * n) + offset)), shape=(k, n_cols))


def _col(n_cols: int, col: int, n_rows: int, value: float) -> sp.csr_matrix:
    return sp.csr_matrix((np.full(n_rows, value), (np.arange(n_rows), np.full(n_rows, col))), shape=(n_rows, n_cols))


def _f_eq(n: int, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(n), (np.zeros(n, int), np.arange(n))), shape=(1, n_cols))


def _cost_row(rho: np.ndarray, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((rho, (np.zeros(rho.size, int), np.arange(rho.size))), shape=(1, n_cols))


def _objective(rho: np.ndarray, n_cols: int, minimize: str, max_cost: float | None,
               blocks: list, b: list) -> np.ndarray:
    """Objective vector: the cost of ``f`` (first ``rho.size`` columns), or, for
    ``minimize="delta"``, the last column ``d`` with the row ``cost . f <= max_cost``
    appended to ``blocks``/``b`` (Kadam (15b))."""
    c = np.zeros(n_cols)
    if minimize == "delta":
        blocks.append(_cost_row(rho, n_cols))
        b.append(np.array([max_cost]))
        c[n_cols - 1] = 1.0
    else:
        c[:rho.size] = rho
    return c


def _linprog(c, a_ub, b_ub, a_eq, b_eq, bounds, time_limit):
    """HiGHS LP with tight tolerances and a scaled objective.

    If HiGHS reports a numerical failure at the tight tolerances (it can when the
    optimum has masses near the double-precision floor, e.g. MSE at n = 4096), the LP
    is solved again at HiGHS's default tolerances; the caller's certificate and
    uniform-mixing repair then guarantee the target.
    """
    scale = float(np.max(np.abs(c))) or 1.0
    opts = dict(_LP_OPTIONS)
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    with _solver_silenced():
        res = linprog(c / scale, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs",
                      options=opts)
        if res.status == 4:
            opts = {k: v for k, v in opts.items() if k == "time_limit"}
            res = linprog(c / scale, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs",
                          options=opts)
    if res.status == 0:
        res.fun = float(res.fun) * scale
    if res.status == 1:
        raise DesignError(f"solver time limit reached ({time_limit} s) before the LP was solved; no design returned")
    if res.status == 2:
        raise DesignError("the design problem is infeasible: no noise PMF meets these constraints")
    if res.status != 0:
        raise DesignError(f"LP solver failed: {res.message}")
    return res


# ---------------------------------------------------------------- solvers
def _solve_dp_lp(sh: _Shifts, rho, e, delta, minimize, max_cost, time_limit):
    """Standard (eps, delta)-DP as an LP; returns (f, objective)."""
    n, k = sh.n, sh.k
    kn = k * n
    use_t = delta > 0 or minimize == "delta"
    n_cols = n + (kn if use_t else 0) + (1 if minimize == "delta" else 0)
    d_col = n_cols - 1
    blocks = []
    b = []
    ratio = _ratio_block(sh, e, 0, n_cols)
    if use_t:
        blocks.append(ratio - _eye_block(kn, n, n_cols))
        b.append(np.zeros(kn))
        s = _sum_rows(k, n, n, n_cols)
        if minimize == "delta":
            s = s - _col(n_cols, d_col, k, 1.0)
            b.append(np.zeros(k))
        else:
            b.append(np.full(k, delta))
        blocks.append(s)
    else:
        blocks.append(ratio)
        b.append(np.zeros(kn))
    c = _objective(rho, n_cols, minimize, max_cost, blocks, b)
    bounds = [(0.0, 1.0)] * n + [(0.0, None)] * (n_cols - n)
    res = _linprog(c, sp.vstack(blocks, format="csr"), np.concatenate(b), _f_eq(n, n_cols), [1.0], bounds, time_limit)
    return res.x[:n], float(res.fun)


def _solve_pdp_milp(sh: _Shifts, rho, e, delta, minimize, max_cost, time_limit, formulation):
    """PDP as a MILP; returns (indicator pattern u, objective, relative MIP gap)."""
    n, k = sh.n, sh.k
    if formulation == "paper":
        n_ind = n
    else:
        n_ind = k * n
    # variables: f (n), y (n_ind), u (n_ind), [d]
    y0, u0 = n, n + n_ind
    n_cols = n + 2 * n_ind + (1 if minimize == "delta" else 0)
    d_col = n_cols - 1
    cons = []
    ub_delta = 1.0 if minimize == "delta" else min(delta, 1.0)
    if formulation == "paper":
        # (13c) sum y <= delta ; y - u <= 0
        s = _sum_rows(1, n, y0, n_cols)
        cons.append((s - (_col(n_cols, d_col, 1, 1.0) if minimize == "delta" else 0),
                     -np.inf, 0.0 if minimize == "delta" else delta))
        cons.append((_eye_block(n, y0, n_cols) - _eye_block(n, u0, n_cols), -np.inf, 0.0))
        # (13d) u + f - y <= 1 ; (13e) u - f + y <= 1
        f_id = _eye_block(n, 0, n_cols)
        cons.append((_eye_block(n, u0, n_cols) + f_id - _eye_block(n, y0, n_cols), -np.inf, 1.0))
        cons.append((_eye_block(n, u0, n_cols) - f_id + _eye_block(n, y0, n_cols), -np.inf, 1.0))
        ratio = _ratio_block(sh, e, 0, n_cols)
        u_rep = sp.csr_matrix((np.ones(k * n), (np.arange(k * n), np.tile(np.arange(n), k) + u0)), shape=(k * n, n_cols))
        # (13f) f - e f' - u <= 0 ; (13g) e f' - f + e u <= e
        cons.append((ratio - u_rep, -np.inf, 0.0))
        cons.append((-ratio + e * u_rep, -np.inf, e))
    else:
        kn = k * n
        ratio = _ratio_block(sh, e, 0, n_cols)
        y_id = _eye_block(kn, y0, n_cols)
        u_id = _eye_block(kn, u0, n_cols)
        f_rep = sp.csr_matrix((np.ones(kn), (np.arange(kn), np.tile(np.arange(n), k))), shape=(kn, n_cols))
        cons.append((ratio - y_id, -np.inf, 0.0))            # f - e f' <= y
        cons.append((y_id - f_rep, -np.inf, 0.0))            # y <= f
        cons.append((f_rep - y_id + u_id, -np.inf, 1.0))     # y >= f - (1 - u)
        cons.append((y_id - ub_delta * u_id, -np.inf, 0.0))  # y <= delta u
        s = _sum_rows(k, n, y0, n_cols)
        if minimize == "delta":
            cons.append((s - _col(n_cols, d_col, k, 1.0), -np.inf, 0.0))
        else:
            cons.append((s, -np.inf, delta))
    cons.append((_f_eq(n, n_cols), 1.0, 1.0))
    c = np.zeros(n_cols)
    if minimize == "delta":
        cons.append((_cost_row(rho, n_cols), -np.inf, max_cost))
        c[d_col] = 1.0
    else:
        c[:n] = rho
    integrality = np.zeros(n_cols)
    integrality[u0:u0 + n_ind] = 1
    lb = np.zeros(n_cols)
    ub = np.ones(n_cols)
    if minimize == "delta":
        ub[d_col] = 1.0
    constraints = [LinearConstraint(sp.csr_matrix(a) if not sp.issparse(a) else a.tocsr(), lo, hi) for a, lo, hi in cons]
    opts = {"mip_rel_gap": MIP_REL_GAP}
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    with _solver_silenced():
        res = milp(c, constraints=constraints, integrality=integrality, bounds=Bounds(lb, ub), options=opts)
    if res.status == 2:
        raise DesignError("the design problem is infeasible: no noise PMF meets these constraints")
    if res.status == 1:
        bound = getattr(res, "mip_dual_bound", None)
        if res.x is None:
            raise DesignError(f"solver time limit reached ({time_limit} s) with no feasible design found; "
                              f"best bound {bound}")
        raise DesignError(f"solver time limit reached ({time_limit} s) before optimality was proved: "
                          f"incumbent objective {res.fun:.10g}, best bound {bound:.10g}, gap {res.mip_gap:.3g}; "
                          "no design is called optimal (raise --time-limit)")
    if res.status != 0 or res.x is None:
        raise DesignError(f"MILP solver failed: {res.message}")
    u = np.rint(res.x[u0:u0 + n_ind]).astype(bool)
    return u, float(res.fun), float(getattr(res, "mip_gap", 0.0) or 0.0)


def _polish_pdp(sh: _Shifts, rho, e, delta, minimize, max_cost, u, formulation, time_limit):
    """LP with the indicators fixed: exact PDP feasibility at tight tolerances."""
    n, k = sh.n, sh.k
    n_cols = n + (1 if minimize == "delta" else 0)
    d_col = n_cols - 1
    e_in = e * (1.0 - RATIO_MARGIN)
    blocks, b = [], []
    ratio_in = _ratio_block(sh, e_in, 0, n_cols)
    if formulation == "paper":
        keep = np.tile(~u, k)                      # u = 0: f <= e f' for every mu
        blocks.append(ratio_in[keep])
        b.append(np.zeros(int(keep.sum())))
        viol = np.tile(u, k)                       # u = 1: f >= e f' for every mu (13g)
        if viol.any():
            blocks.append(-_ratio_block(sh, e, 0, n_cols)[viol])
            b.append(np.zeros(int(viol.sum())))
        sets = [u]
    else:
        keep = ~u
        blocks.append(ratio_in[keep])
        b.append(np.zeros(int(keep.sum())))
        sets = [u[j * n:(j + 1) * n] for j in range(k)]
    for s in sets:
        if s.any():
            row = sp.csr_matrix((np.ones(int(s.sum())), (np.zeros(int(s.sum()), int), np.nonzero(s)[0])), shape=(1, n_cols))
            if minimize == "delta":
                row = row - _col(n_cols, d_col, 1, 1.0)
                b.append(np.zeros(1))
            else:
                b.append(np.array([delta]))
            blocks.append(row)
    c = _objective(rho, n_cols, minimize, max_cost, blocks, b)
    bounds = [(0.0, 1.0)] * n + ([(0.0, 1.0)] if minimize == "delta" else [])
    res = _linprog(c, sp.vstack(blocks, format="csr"), np.concatenate(b), _f_eq(n, n_cols), [1.0], bounds, time_limit)
    return res.x[:n], float(res.fun)


def _clean(f: np.ndarray) -> np.ndarray:
    f = np.clip(f, 0.0, None)
    f[f < 1e-300] = 0.0
    return f / f.sum()


def _meets(pmf: CyclicPMF, nb: Neighbourhood, eps: float, delta: float, notion: str) -> bool:
    prof = privacy_profile(pmf, nb)
    if notion == "dp":
        return prof.delta_dp(eps) <= delta + 1e-15 and (delta > 0 or prof.epsilon_pure <= eps * (1 + 1e-12))
    return prof.delta_pdp(eps) <= delta + 1e-15


#: Smallest mass a repaired pure-DP design may hold (far above the subnormal range).
MASS_FLOOR = 1e-300


def _ratio_lift(f: np.ndarray, sh: _Shifts, e: float) -> np.ndarray:
    """Smallest ``g >= max(f, MASS_FLOOR)`` with ``g(eta) <= e g(eta + mu)`` for every shift.

    Pure-DP repair. Raising ``g(eta + mu)`` to ``g(eta) / e`` never breaks a
    constraint in which it is the smaller side, so repeated relaxation converges to
    the pointwise-smallest feasible ``g`` above ``f`` (at most one round per step of
    the neighbourhood graph's diameter). The floor matters: the exact optimum can
    need masses like ``e^(-2730)`` (n = 16384, eps = 1, BD 3), below the smallest
    double, and a zero facing a positive mass is infinite epsilon. Renormalising
    keeps every ratio; the cost moves by about ``N * MASS_FLOOR`` times the largest cost.
    """
    g = np.maximum(f, MASS_FLOOR)
    inv = np.empty_like(sh.partner)
    for k in range(sh.k):
        inv[k, sh.partner[k]] = np.arange(sh.n)   # inv[k, j]: the eta with eta + mu_k = j
    while True:
        need = (g[inv] / e).max(axis=0)
        if np.all(need <= g):
            return g / g.sum()
        g = np.maximum(g, need)


def _repair_with_uniform(f: np.ndarray, shape, nb, eps, delta, notion) -> tuple[np.ndarray, float]:
    """Smallest uniform mixing weight (doubling from 1e-12) that meets the target."""
    pmf = CyclicPMF(f.reshape(shape))
    if _meets(pmf, nb, eps, delta, notion):
        return f, 0.0
    lam = 1e-12
    while lam < 1.0:
        g = (1 - lam) * f + lam / f.size
        if _meets(CyclicPMF(g.reshape(shape)), nb, eps, delta, notion):
            return g, lam
        lam *= 2.0
    raise DesignError("the solver's design violates the privacy target and could not be repaired")


# -------------------------------------------------------------------- API
def design_finite(n: int | Sequence[int], *, epsilon: float, delta: float = 0.0,
                  neighbourhood: Neighbourhood | None = None, guarantee_notion: str = "dp",
                  cost: str | Sequence[float] | np.ndarray = "er", minimize: str = "cost",
                  max_cost: float | None = None, formulation: str = "standard",
                  time_limit: float | None = None, use_closed_form: bool = True) -> FiniteDesign:
    """Optimal noise PMF on ``{0..n}`` (or a product domain) under a privacy target.

    Parameters
    ----------
    n:
        Largest answer (domain ``{0..n}``), or a sequence for a vector query.
    epsilon:
        Target epsilon, ``> 0``.
    delta:
        Target delta, ``0 <= delta < 1`` (ignored with ``minimize="delta"``).
    neighbourhood:
        Query distances (default SD 1, symmetric). Kadam's tables use ``directed``.
    guarantee_notion:
        ``"dp"`` (approximate DP, an LP) or ``"pdp"`` (Kadam Def. 2, a MILP).
    cost:
        ``er``, ``mse``, ``circular-mse``, ``abs``, ``circular-abs`` or a vector.
    minimize:
        ``"cost"`` or ``"delta"`` (Kadam (15); needs ``max_cost``).
    formulation:
        ``"standard"`` (per-distance indicators) or ``"paper"`` (Kadam (13) as
        printed; PDP only).
    time_limit:
        Seconds for the solver; reaching it raises :class:`DesignError`.
    use_closed_form:
        Use a closed form where the tests prove it optimal (directed SD/BD, ER,
        ``delta = 0``): Kadam Lemmas 3 and 4.

    Returns
    -------
    FiniteDesign
        The PMF, its costs, the certificate and how it was obtained.
    """
    shape = _check_n(n)
    eps = _positive(epsilon, "epsilon")
    if minimize not in ("cost", "delta"):
        raise InvalidParameterError("minimize", minimize, "'cost' or 'delta'")
    if minimize == "delta":
        if max_cost is None or not math.isfinite(float(max_cost)) or float(max_cost) < 0:
            raise InvalidParameterError("max_cost", max_cost, "a cost bound >= 0 (needed with minimize='delta')")
        dlt = 0.0
    else:
        if not (0.0 <= float(delta) < 1.0):
            raise InvalidParameterError("delta", delta, "a real number with 0 <= delta < 1")
        dlt = float(delta)
    if guarantee_notion not in ("dp", "pdp"):
        raise InvalidParameterError("guarantee", guarantee_notion, "'dp' or 'pdp'")
    if formulation not in ("standard", "paper"):
        raise InvalidParameterError("formulation", formulation, "'standard' or 'paper'")
    if formulation == "paper" and guarantee_notion != "pdp":
        raise InvalidParameterError("formulation", formulation, "'paper' only with guarantee 'pdp'")
    if time_limit is not None and not float(time_limit) > 0:
        raise InvalidParameterError("time_limit", time_limit, "a number of seconds > 0")
    nb = neighbourhood if neighbourhood is not None else Neighbourhood.sd(1)
    cost_name = cost if isinstance(cost, str) else "user"
    rho = cost_vector(cost, shape)
    sh = _shifts(shape, nb)  # validates distances against the domain
    e = math.exp(eps)
    notes: list[str] = []
    t0 = time.perf_counter()
    gap = None
    delta_min = None

    closed = None
    if use_closed_form and minimize == "cost" and dlt == 0.0 and cost_name == "er" and len(shape) == 1:
        from .closed_forms import closed_form_delta0
        closed = closed_form_delta0(shape[0] - 1, eps, nb)
    if closed is not None:
        f = closed
        method, optimal = "closed-form", True
    elif guarantee_notion == "dp" or (dlt == 0.0 and minimize == "cost"):
        # at delta = 0 both notions are pure eps-DP: Kadam's LP (14)
        f, obj = _solve_dp_lp(sh, rho, e * (1 - RATIO_MARGIN), dlt * (1 - 1e-12), minimize, max_cost, time_limit)
        method, optimal = "lp", True
        if minimize == "delta":
            delta_min = obj
    else:
        u, obj, gap = _solve_pdp_milp(sh, rho, e, dlt, minimize, max_cost, time_limit, formulation)
        f, pobj = _polish_pdp(sh, rho, e, dlt, minimize, max_cost, u, formulation, time_limit)
        method, optimal = "milp", True
        if abs(pobj - obj) > 1e-6 * max(1.0, abs(obj)):
            notes.append(f"polished LP objective {pobj:.10g} differs from the MILP's {obj:.10g}")
        if minimize == "delta":
            delta_min = pobj
    f = _clean(np.asarray(f, dtype=float))
    target_delta = delta_min if minimize == "delta" else dlt
    target_delta = float(target_delta) if target_delta is not None else 0.0
    if minimize == "delta":
        target_delta = target_delta + 1e-12
    if target_delta == 0.0 and not _meets(CyclicPMF(f.reshape(shape)), nb, eps, 0.0, "dp"):
        f = _ratio_lift(f, sh, e)
        notes.append("masses below the ratio constraints (solver round-off, float underflow) lifted to the "
                     "smallest feasible values, floor 1e-300")
    if guarantee_notion == "dp" or target_delta == 0.0:
        f, lam = _repair_with_uniform(f, shape, nb, eps, target_delta, "dp")
        if lam > 0:
            notes.append(f"mixed with the uniform PMF at weight {lam:.3g} to absorb solver tolerance")
    elif not _meets(CyclicPMF(f.reshape(shape)), nb, eps, target_delta, "pdp"):
        raise DesignError("the polished PDP design does not meet the target in the certificate; "
                          "refusing to return it")
    seconds = time.perf_counter() - t0
    pmf = CyclicPMF(f.reshape(shape))
    prof = privacy_profile(pmf, nb)
    cert = guarantee(prof, eps, target_delta if target_delta > 0 else None)
    worst, avg = wrapped_squared_error(pmf.probs)
    grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    second = float(sum(np.sum(pmf.probs * g.astype(float) ** 2) for g in grids))
    if formulation == "paper":
        notes.append("Kadam (13) as printed: one indicator per noise value shared by all distances")
    return FiniteDesign(
        pmf=pmf, cost=cost_name, expected_cost=float(np.dot(rho, f)),
        error_rate=float(1.0 - pmf.probs.ravel()[0]), noise_second_moment=second,
        squared_error_worst=worst, squared_error_average=avg,
        notion=guarantee_notion, epsilon=eps, delta=dlt if minimize == "cost" else float(delta_min or 0.0),
        neighbourhood=nb, certificate=cert, method=method, optimal=optimal, solve_seconds=seconds,
        formulation=formulation, minimize=minimize, delta_min=delta_min, mip_gap=gap, notes=tuple(notes))


def _check_n(n: int | Sequence[int]) -> tuple[int, ...]:
    vals = [n] if isinstance(n, (int, np.integer)) else list(n)
    if not vals:
        raise InvalidParameterError("n", n, "an integer n >= 1 or a list of them")
    out = []
    for v in vals:
        if int(v) != v or v < 1:
            raise InvalidParameterError("n", n, "integers n >= 1 (domain {0..n})")
        out.append(int(v) + 1)
    return tuple(out)


def _positive(x: float, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(name, x, "a real number > 0") from exc
    if not (v > 0) or math.isinf(v):
        raise InvalidParameterError(name, x, "a finite real number > 0")
    return v
