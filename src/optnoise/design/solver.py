"""HiGHS through scipy, with the settings every design shares.

The LPs and MILPs of :mod:`optnoise.design` are solved by HiGHS (``scipy.optimize.linprog``
and ``milp``). This module holds the shared settings and the one LP call: tight
tolerances, a scaled objective, a retry at default tolerances after a numerical
failure, and the mapping of solver statuses to :class:`~optnoise.errors.DesignError`.
"""

from __future__ import annotations

import math
import os
import sys
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from ..errors import DesignError

#: Relative margin on e^eps used when a solution is polished, so float round-off never
#: crosses a ratio constraint.
RATIO_MARGIN = 1e-10
#: HiGHS tolerances for the design LPs.
LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
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


def solve_lp(
    c, a_ub, b_ub, a_eq, b_eq, bounds, time_limit: float | None,
    options: dict | None = None, scale: float | None = None,
):
    """HiGHS LP with tight tolerances and a scaled objective; returns scipy's result, whose
    objective and dual values (``marginals``) are those of the unscaled ``c``.

    ``options`` are added to HiGHS's (e.g. ``simplex_dual_edge_weight_strategy``; kept on
    the retry). The objective is divided by ``scale`` (default: its largest coefficient).
    HiGHS's dual tolerance is absolute, so the scale decides which cost differences it
    resolves: when costs span many orders of magnitude (``eta^2`` on a large cycle) a scale
    near the optimal objective resolves the small ones that the optimum is made of.

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
    from scipy.optimize import linprog

    scale = (float(scale) if scale else 0.0) or float(np.max(np.abs(c))) or 1.0
    opts: dict = {**LP_OPTIONS, **(options or {})}
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    with solver_silenced():
        res = linprog(c / scale, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs",
                      options=opts)
        if res.status == 4:
            opts = {k: v for k, v in opts.items() if k not in LP_OPTIONS}
            res = linprog(c / scale, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs",
                          options=opts)
    if res.status == 0:
        res.fun = float(res.fun) * scale
        for part in ("ineqlin", "eqlin", "lower", "upper"):  # duals of the unscaled objective
            got = getattr(res, part, None)
            if got is not None and getattr(got, "marginals", None) is not None:
                got.marginals = np.asarray(got.marginals, dtype=np.float64) * scale
    if res.status == 1:
        raise DesignError(f"solver time limit reached ({time_limit} s) before the LP was solved; no design returned")
    if res.status == 2:
        raise Infeasible("the design problem is infeasible: no mechanism meets these constraints")
    if res.status != 0:
        raise DesignError(f"LP solver failed: {res.message}")
    return res


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
