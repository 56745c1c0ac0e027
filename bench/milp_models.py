"""Benchmark: which tightening of the per-distance PDP MILP pays off (issue 3).

Run: .venv/bin/python bench/milp_models.py [--quick] [--time-limit S]

Four models of the same problem (Kadam Def. 2 per distance, cost minimisation),
all solved by HiGHS through ``scipy.optimize.milp`` with the same options:

* ``plain``   : ``f - e f' <= u`` (big-M 1), ``y >= f - (1 - u)``, ``y >= 0``, ``sum y <= delta``;
* ``+epi``    : the ratio row through ``y``: ``f - e f' <= y``. On its own this is *not* a PDP
  model: without ``y <= delta u`` nothing forces ``u = 1`` when ``y > 0``, so it solves the
  hockey-stick (standard DP) LP instead and reports a lower, wrong optimum. Shown as a warning;
* ``+M=delta``: ``y <= delta u`` and ``y <= f`` added to ``plain`` (a violating value holds <= delta);
* ``ours``    : both, the model in ``optnoise.design.finite`` (all pairs at once);

and, for symmetric neighbourhoods (issue 14), on top of ``ours``:

* ``+pair``   : ``u[mu, eta] + u[-mu, eta + mu] <= 1``. Valid for some optimum: both
  ``f(a) > e f(b)`` and ``f(b) > e f(a)`` cannot hold, and an indicator set without a
  violation can be cleared (its ``y`` drops to 0) without breaking anything;
* ``+mirror`` : ``f(-1) <= f(1)`` (symmetric costs only). Valid for some optimum: the model
  is mirror-invariant, so the mirror of an optimum is an optimum, and one of the two meets it.
  (Averaging an optimum with its mirror is *not* valid: the PDP set is not convex.)
* ``rowgen``  : ``design_finite(..., row_generation=True)`` -- the relaxed MILP over a growing
  set of pairs, each answer polished on the full problem, stopped when the polished design is
  within the MIP gap of the relaxation's bound. Its time includes polishing.

Prints optimum, time and status per case; nothing is asserted. All models must agree where
proved optimal.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from optnoise import Neighbourhood
from optnoise.costs import cost_vector
from optnoise.design import design_finite
from optnoise.errors import DesignError
from optnoise.design.model import cyclic_shift_table, eye_block, mass_row, ratio_block, sum_rows
from optnoise.design.solver import solver_silenced


def solve(n: int, eps: float, delta: float, nb: Neighbourhood, cost: str, variant: str,
          time_limit: float) -> tuple[float, float, str]:
    sh = cyclic_shift_table((n + 1,), nb)
    size, k = sh.n, sh.k
    kn = k * size
    e = float(np.exp(eps))
    y0, u0 = size, size + kn
    n_cols = size + 2 * kn
    ratio = ratio_block(sh, e, 0, n_cols)
    y_id, u_id = eye_block(kn, y0, n_cols), eye_block(kn, u0, n_cols)
    f_rep = sp.csr_matrix((np.ones(kn), (np.arange(kn), np.tile(np.arange(size), k))), shape=(kn, n_cols))
    if variant == "rowgen":
        t0 = time.perf_counter()
        try:
            r = design_finite(n, epsilon=eps, delta=delta, neighbourhood=nb, notion="pdp", cost=cost,
                              time_limit=time_limit, row_generation=True)
            return r.expected_cost, time.perf_counter() - t0, "optimal"
        except DesignError as exc:
            return float("nan"), time.perf_counter() - t0, str(exc)[:30]
    epi = variant in ("+epi", "ours", "+pair", "+mirror")
    tight = variant in ("+M=delta", "ours", "+pair", "+mirror")
    cons = [(ratio - (y_id if epi else u_id), -np.inf, 0.0),
            (f_rep - y_id + u_id, -np.inf, 1.0),
            (sum_rows(k, size, y0, n_cols), -np.inf, delta),
            (mass_row(size, n_cols), 1.0, 1.0)]
    if tight:
        cons += [(y_id - f_rep, -np.inf, 0.0), (y_id - delta * u_id, -np.inf, 0.0)]
    if variant == "+pair":
        vecs = list(sh.vectors)
        rows, cols = [], []
        for j, v in enumerate(vecs):
            jn = vecs.index(tuple((-x) % size for x in v))
            if j < jn:   # u[j, eta] + u[jn, eta + mu_j] <= 1
                rows += [np.arange(len(rows) // 2 * size, (len(rows) // 2 + 1) * size)] * 2
                cols += [u0 + j * size + np.arange(size), u0 + jn * size + sh.partner[j]]
        cons.append((sp.csr_matrix((np.ones(sum(r.size for r in rows)), (np.concatenate(rows), np.concatenate(cols))),
                                   shape=(len(rows) // 2 * size, n_cols)), -np.inf, 1.0))
    if variant == "+mirror":
        row = sp.csr_matrix(([1.0, -1.0], ([0, 0], [size - 1, 1])), shape=(1, n_cols))   # f(-1) - f(1) <= 0
        cons.append((row, -np.inf, 0.0))
    c = np.zeros(n_cols)
    c[:size] = cost_vector(cost, (size,))
    integrality = np.zeros(n_cols)
    integrality[u0:] = 1
    t0 = time.perf_counter()
    with solver_silenced():
        res = milp(c, constraints=[LinearConstraint(a.tocsr(), lo, hi) for a, lo, hi in cons],
                   integrality=integrality, bounds=Bounds(np.zeros(n_cols), np.ones(n_cols)),
                   options={"mip_rel_gap": 1e-6, "time_limit": time_limit})
    seconds = time.perf_counter() - t0
    status = {0: "optimal", 1: "time limit"}.get(res.status, res.message[:30])
    return (float(res.fun) if res.x is not None else float("nan")), seconds, status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--symmetric", action="store_true", help="the issue-14 cases: symmetric BD 3 variants")
    args = ap.parse_args()
    cases = [(64, 1.0, 0.05, True, "er"), (256, 1.0, 0.05, True, "er"), (256, 1.0, 0.05, True, "mse"),
             (64, 0.2, 0.1, True, "mse"), (128, 0.2, 0.1, True, "mse"), (64, 0.2, 0.1, False, "mse")]
    variants: tuple[str, ...] = ("plain", "+epi", "+M=delta", "ours")
    if args.symmetric:
        cases = [(256, 1.0, 0.05, False, "er"), (256, 1.0, 0.05, False, "mse"), (1024, 1.0, 0.05, False, "mse"),
                 (1024, 1.0, 0.05, False, "er")]
        variants = ("ours", "+pair", "+mirror", "rowgen")
    if args.quick:
        cases = cases[:1] + cases[3:4] if not args.symmetric else cases[:1]
    print(f"{'case':<44} {'variant':<9} {'optimum':>12} {'seconds':>8}  status")
    for n, eps, delta, directed, cost in cases:
        nb = Neighbourhood.bd(3, directed=directed)
        name = f"n={n} eps={eps} delta={delta} BD3 {'dir' if directed else 'sym'} {cost}"
        for variant in variants:
            if variant == "+mirror" and cost == "mse":
                continue   # eta^2 on 0..n is not mirror-symmetric: the break would not be valid
            opt, sec, status = solve(n, eps, delta, nb, cost, variant, args.time_limit)
            print(f"{name:<44} {variant:<9} {opt:>12.8f} {sec:>8.2f}  {status}", flush=True)


if __name__ == "__main__":
    main()
