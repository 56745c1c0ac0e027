"""Benchmark: which tightening of the per-distance PDP MILP pays off (issue 3).

Run: .venv/bin/python bench/milp_models.py [--quick] [--time-limit S]

Four models of the same problem (Kadam Def. 2 per distance, cost minimisation),
all solved by HiGHS through ``scipy.optimize.milp`` with the same options:

* ``plain``   : ``f - e f' <= u`` (big-M 1), ``y >= f - (1 - u)``, ``y >= 0``, ``sum y <= delta``;
* ``+epi``    : the ratio row through ``y``: ``f - e f' <= y``. On its own this is *not* a PDP
  model: without ``y <= delta u`` nothing forces ``u = 1`` when ``y > 0``, so it solves the
  hockey-stick (standard DP) LP instead and reports a lower, wrong optimum. Shown as a warning;
* ``+M=delta``: ``y <= delta u`` and ``y <= f`` added to ``plain`` (a violating value holds <= delta);
* ``ours``    : both, the model in ``optnoise.design.finite``.

Prints optimum, time and status per case; nothing is asserted. ``plain``, ``+M=delta`` and
``ours`` must agree where proved optimal.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from optnoise import Neighbourhood
from optnoise.costs import cost_vector
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
    epi = variant in ("+epi", "ours")
    tight = variant in ("+M=delta", "ours")
    cons = [(ratio - (y_id if epi else u_id), -np.inf, 0.0),
            (f_rep - y_id + u_id, -np.inf, 1.0),
            (sum_rows(k, size, y0, n_cols), -np.inf, delta),
            (mass_row(size, n_cols), 1.0, 1.0)]
    if tight:
        cons += [(y_id - f_rep, -np.inf, 0.0), (y_id - delta * u_id, -np.inf, 0.0)]
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
    args = ap.parse_args()
    cases = [(64, 1.0, 0.05, True, "er"), (256, 1.0, 0.05, True, "er"), (256, 1.0, 0.05, True, "mse"),
             (64, 0.2, 0.1, True, "mse"), (128, 0.2, 0.1, True, "mse"), (64, 0.2, 0.1, False, "mse")]
    if args.quick:
        cases = cases[:1] + cases[3:4]
    print(f"{'case':<44} {'variant':<9} {'optimum':>12} {'seconds':>8}  status")
    for n, eps, delta, directed, cost in cases:
        nb = Neighbourhood.bd(3, directed=directed)
        name = f"n={n} eps={eps} delta={delta} BD3 {'dir' if directed else 'sym'} {cost}"
        for variant in ("plain", "+epi", "+M=delta", "ours"):
            opt, sec, status = solve(n, eps, delta, nb, cost, variant, args.time_limit)
            print(f"{name:<44} {variant:<9} {opt:>12.8f} {sec:>8.2f}  {status}", flush=True)


if __name__ == "__main__":
    main()
