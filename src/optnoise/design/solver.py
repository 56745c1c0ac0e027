"""HiGHS, with the settings every design shares.

The LPs and MILPs of :mod:`optnoise.design` are solved by HiGHS: the LPs through its own
binding (:mod:`highspy`, :func:`solve_lp`), the MILPs through ``scipy.optimize.milp``. This
module holds the shared settings and the one LP call: tight tolerances, a scaled objective,
a retry at default tolerances after a numerical failure, and the mapping of solver statuses
to :class:`~optnoise.errors.DesignError`.
"""

from __future__ import annotations

import math
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..errors import DesignError

#: Relative margin on e^eps used when a solution is polished, so float round-off never
#: crosses a ratio constraint.
RATIO_MARGIN = 1e-10
#: HiGHS tolerances for the design LPs.
LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
#: HiGHS's numbers for ``simplex_dual_edge_weight_strategy`` (``linprog``'s names).
EDGE_WEIGHTS = {"choose": -1, "steepest-devex": -1, "dantzig": 0, "devex": 1, "steepest": 2}
#: Relative MIP gap at which a MILP solution is called optimal.
MIP_REL_GAP = 1e-6


@contextmanager
def solver_silenced() -> Iterator[None]:
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


@dataclass(frozen=True)
class Duals:
    """The multipliers of one block of rows or of the variables' bounds, as scipy's ``linprog``
    reports them (``marginals``: the objective's derivative in each right-hand side)."""

    marginals: np.ndarray


@dataclass(frozen=True)
class LPSolution:
    """An LP's optimal vertex: ``x``, the objective ``fun`` and the multipliers of the ``<=`` rows
    (``ineqlin``), of the ``=`` rows (``eqlin``) and of the variables' lower and upper bounds, in
    the signs of :func:`scipy.optimize.linprog` (a ``<=`` row's multiplier is ``<= 0``)."""

    x: np.ndarray
    fun: float
    ineqlin: Duals
    eqlin: Duals
    lower: Duals
    upper: Duals


def lp_bounds(bounds, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``linprog``'s ``bounds`` (one ``(lo, hi)`` for every variable or one per variable, ``None``
    unbounded; ``None``: ``(0, None)``) as two arrays of length ``n``."""
    if bounds is None:
        bounds = (0.0, None)
    pairs = [tuple(bounds)] * n if bounds[0] is None or np.ndim(bounds[0]) == 0 else list(bounds)
    lo = np.array([-np.inf if b[0] is None else float(b[0]) for b in pairs], np.float64)
    hi = np.array([np.inf if b[1] is None else float(b[1]) for b in pairs], np.float64)
    return lo, hi


def csr_parts(a, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(indptr, indices, data, rows)`` of a scipy sparse matrix or a dense array (``None``: no
    rows), duplicate entries summed, without importing scipy."""
    if a is None:
        return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64), 0
    if hasattr(a, "tocsr"):
        m = a.tocsr(copy=True)
        m.sum_duplicates()
        return m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data.astype(np.float64), m.shape[0]
    d = np.atleast_2d(np.asarray(a, dtype=np.float64)).reshape(-1, n)
    rows, cols = np.nonzero(d)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=d.shape[0]))]).astype(np.int64)
    return indptr, cols.astype(np.int64), d[rows, cols], d.shape[0]


def solve_lp(
    c, a_ub, b_ub, a_eq, b_eq, bounds, time_limit: float | None,
    options: dict | None = None, scale: float | None = None,
) -> LPSolution:
    """HiGHS LP with tight tolerances and a scaled objective, in :func:`scipy.optimize.linprog`'s
    form (``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``bounds``); its objective and multipliers are
    those of the unscaled ``c``.

    Solved by HiGHS's own binding (:mod:`highspy`, imported in a few milliseconds where
    ``scipy.optimize`` takes a third of a second: a small query's start-up, issue 37) with the
    settings ``linprog(method="highs")`` passes (dual simplex, presolve on) and its check of the
    returned point (:func:`lp_status`). ``options`` are added to HiGHS's (e.g.
    ``simplex_dual_edge_weight_strategy``, by name or number; kept on the retry). The objective
    is divided by ``scale`` (default: its largest coefficient). HiGHS's dual tolerance is
    absolute, so the scale decides which cost differences it resolves: when costs span many
    orders of magnitude (``eta^2`` on a large cycle) a scale near the optimal objective resolves
    the small ones that the optimum is made of.

    If HiGHS reports a numerical failure at the tight tolerances (it can when the
    optimum has masses near the double-precision floor, e.g. MSE at n = 4096), the LP
    is solved again at HiGHS's default tolerances; the caller's certificate and repair
    then guarantee the target.

    Raises
    ------
    Infeasible
        The LP is infeasible (a :class:`~optnoise.errors.DesignError`).
    DesignError
        Time limit reached, or any other solver failure.
    """
    c = np.asarray(c, dtype=np.float64)
    scale = (float(scale) if scale else 0.0) or float(np.max(np.abs(c), initial=0.0)) or 1.0
    opts: dict = {**LP_OPTIONS, **(options or {})}
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    lp = lp_model(c / scale, a_ub, b_ub, a_eq, b_eq, bounds)
    with solver_silenced():
        status, message, got = run_lp(lp, opts)
        if status == 4:
            status, message, got = run_lp(lp, {k: v for k, v in opts.items() if k not in LP_OPTIONS})
    if status == 1:
        raise DesignError(f"solver time limit reached ({time_limit} s) before the LP was solved; no design returned")
    if status == 2:
        raise Infeasible("the design problem is infeasible: no mechanism meets these constraints")
    if status != 0 or got is None:
        raise DesignError(f"LP solver failed: {message}")
    x, fun, row_dual, lower, upper = got
    k = lp.ub_rows
    return LPSolution(x=x, fun=fun * scale, ineqlin=Duals(row_dual[:k] * scale), eqlin=Duals(row_dual[k:] * scale),
                      lower=Duals(lower * scale), upper=Duals(upper * scale))


@dataclass(frozen=True)
class LPModel:
    """An LP as HiGHS takes it: ``row_lo <= A x <= row_hi`` (``A`` row-wise, the ``<=`` rows
    first: ``ub_rows`` of them), ``col_lo <= x <= col_hi``, minimise ``c x``."""

    c: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    row_lo: np.ndarray
    row_hi: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray
    ub_rows: int


def lp_model(c: np.ndarray, a_ub, b_ub, a_eq, b_eq, bounds) -> LPModel:
    """``linprog``'s arguments as one :class:`LPModel` (the ``=`` rows below the ``<=`` rows)."""
    n = c.size
    p_ub, i_ub, d_ub, m_ub = csr_parts(a_ub, n)
    p_eq, i_eq, d_eq, m_eq = csr_parts(a_eq, n)
    b_ub = np.zeros(0) if a_ub is None else np.asarray(b_ub, dtype=np.float64).ravel()
    b_eq = np.zeros(0) if a_eq is None else np.asarray(b_eq, dtype=np.float64).ravel()
    if len(b_ub) != m_ub or len(b_eq) != m_eq:
        raise ValueError("solve_lp: the right-hand sides do not match the rows")
    col_lo, col_hi = lp_bounds(bounds, n)
    return LPModel(c=c, indptr=np.concatenate([p_ub, p_eq[1:] + p_ub[-1]]), indices=np.concatenate([i_ub, i_eq]),
                   data=np.concatenate([d_ub, d_eq]), row_lo=np.concatenate([np.full(m_ub, -np.inf), b_eq]),
                   row_hi=np.concatenate([b_ub, b_eq]), col_lo=col_lo, col_hi=col_hi, ub_rows=m_ub)


def run_lp(lp: LPModel, options: dict) -> tuple[int, str, tuple | None]:
    """Solve with HiGHS: ``(status, message, (x, objective, row duals, lower, upper) or None)``,
    the status numbered as :func:`scipy.optimize.linprog`'s (0 optimal, 1 limit, 2 infeasible,
    3 unbounded, 4 numerical trouble)."""
    import highspy

    h = highspy.Highs()
    for key, value in {"output_flag": False, "presolve": "on", "simplex_strategy": 1, **options}.items():
        if key == "simplex_dual_edge_weight_strategy" and isinstance(value, str):
            value = EDGE_WEIGHTS[value]
        elif key in ("presolve", "parallel") and isinstance(value, bool):   # linprog's booleans
            value = "on" if value else "off"
        if h.setOptionValue(key, value) == highspy.HighsStatus.kError:
            raise DesignError(f"HiGHS refused the option {key} = {value!r}")
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = lp.c.size, lp.row_hi.size
    model.col_cost_, model.col_lower_, model.col_upper_ = lp.c, lp.col_lo, lp.col_hi
    model.row_lower_, model.row_upper_ = lp.row_lo, lp.row_hi
    matrix = model.a_matrix_
    matrix.format_ = highspy.MatrixFormat.kRowwise
    matrix.num_col_, matrix.num_row_ = lp.c.size, lp.row_hi.size
    matrix.start_, matrix.index_, matrix.value_ = lp.indptr, lp.indices, lp.data
    model.a_matrix_ = matrix
    if h.passModel(model) == highspy.HighsStatus.kError:
        return 4, "HiGHS refused the model", None
    h.run()
    ms = h.getModelStatus()
    message = f"HiGHS model status: {h.modelStatusToString(ms)}"
    if ms != highspy.HighsModelStatus.kOptimal:
        return {highspy.HighsModelStatus.kTimeLimit: 1, highspy.HighsModelStatus.kIterationLimit: 1,
                highspy.HighsModelStatus.kInfeasible: 2, highspy.HighsModelStatus.kModelError: 2,
                highspy.HighsModelStatus.kUnbounded: 3}.get(ms, 4), message, None
    sol, basis = h.getSolution(), h.getBasis()
    x, row = np.array(sol.col_value, np.float64), np.array(sol.row_value, np.float64)
    col_dual = np.array(sol.col_dual, np.float64)
    status = np.array([int(s) for s in basis.col_status])
    lower = np.where(status == int(highspy.HighsBasisStatus.kLower), col_dual, 0.0)
    upper = np.where(status == int(highspy.HighsBasisStatus.kUpper), col_dual, 0.0)
    got = (x, float(h.getInfo().objective_function_value), np.array(sol.row_dual, np.float64), lower, upper)
    return lp_status(lp, x, row), message, got


def lp_status(lp: LPModel, x: np.ndarray, row: np.ndarray) -> int:
    """0 when HiGHS's optimal point meets the bounds and rows within ``linprog``'s check (an
    absolute ``sqrt(1e-9) * 10``), else 4 (numerical trouble: the caller retries)."""
    tol = math.sqrt(1e-9) * 10
    k = lp.ub_rows
    ok = (not (np.isnan(x).any() or np.isnan(row).any())
          and bool(np.all((x >= lp.col_lo - tol) & (x <= lp.col_hi + tol)))
          and bool(np.all(lp.row_hi[:k] - row[:k] >= -tol))
          and bool(np.all(np.abs(lp.row_hi[k:] - row[k:]) <= tol)))
    return 0 if ok else 4


class Infeasible(DesignError):
    """The solver proved the design problem infeasible (a caller may say why)."""


def solve_milp(c, constraints, integrality, bounds, time_limit: float | None, *, what: str = "mechanism"):
    """HiGHS MILP at the relative gap :data:`MIP_REL_GAP`; returns scipy's result (status 0).

    Raises
    ------
    Infeasible
        The MILP is infeasible (no ``what`` meets the constraints).
    DesignError
        Time limit reached (with the incumbent, the best bound and the gap, if any: nothing
        is called optimal) or any other solver failure.
    """
    from scipy.optimize import milp

    opts: dict = {"mip_rel_gap": MIP_REL_GAP}
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    with solver_silenced():
        res = milp(c, constraints=constraints, integrality=integrality, bounds=bounds, options=opts)
    if res.status == 2:
        raise Infeasible(f"the design problem is infeasible: no {what} meets these constraints")
    if res.status == 1:
        bound = getattr(res, "mip_dual_bound", None)
        if res.x is None:
            found = "" if bound is None or not math.isfinite(bound) else f" (the best bound so far is {bound:.10g})"
            raise DesignError(f"solver time limit reached ({time_limit:g} s) before any feasible design was found"
                              f"{found}; raise --time-limit, or solve a smaller problem")
        shown = "unknown" if bound is None else f"{bound:.10g}"
        raise DesignError(f"solver time limit reached ({time_limit:g} s) before optimality was proved: "
                          f"incumbent objective {res.fun:.10g}, best bound {shown}, gap {res.mip_gap:.3g}; "
                          "no design is called optimal (raise --time-limit)")
    if res.status != 0 or res.x is None:
        raise DesignError(f"MILP solver failed: {res.message}")
    return res
