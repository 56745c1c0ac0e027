"""Holohan et al.: Example 2 (sufficient sets) and Theorems 4, 5/9, 10 as tables."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ..analysis import privacy_profile, subset_check_counts
from ..families.rr import hamming_channel, hamming_exponential_k_max, hamming_neighbours, rr_error_bounds, rr_optimal_p
from ..neighbourhood import InputPairs
from ..pmf import Channel
from ..search import boundary
from .common import bar_plot, item, line_plot, write_csv

PAPER = "Holohan et al."


@item("holohan-example2", PAPER, "Example 2: subset checks with and without sufficient sets (D = {0,1,2}, n = 2, l1 utility)")
def example2(out: Path) -> dict[str, Any]:
    dbs = list(itertools.product(range(3), repeat=2))
    a = np.array(dbs)
    w = np.exp(-np.abs(a[:, None, :] - a[None, :, :]).sum(axis=2))
    matrix = w / w.sum(axis=1, keepdims=True)
    counts = subset_check_counts(matrix, hamming_neighbours(dbs))
    sizes = sorted(set(counts.set_sizes))
    rows = [("ordered neighbour pairs", counts.pairs, 36),
            ("checks without sufficient sets", counts.without, 18360),
            ("checks with sufficient sets", counts.with_sufficient_sets, 1092)]
    rows += [(f"pairs with |S| = {s}", counts.set_sizes.count(s), {3: 21, 6: 15}.get(s, "")) for s in sizes]
    write_csv(out / "holohan-example2.csv", ["quantity", "ours", "paper"], rows)
    bar_plot(out / "holohan-example2.png", {"ours": ([0, 1], [counts.without, counts.with_sufficient_sets]),
                                            "paper": ([0, 1], [18360, 1092])},
             title="Holohan et al. Example 2: subset checks, D = {0,1,2}^2, l1 utility",
             xlabel="which subsets are checked", ylabel="number of subset checks",
             ticks=["all subsets", "sufficient sets only"], values=True)
    return {"files": ["holohan-example2.csv", "holohan-example2.png"], "with_sufficient_sets": counts.with_sufficient_sets,
            "without": counts.without, "paper_with": 1092}


def _max_k_by_analysis(m: int, n: int, eps: float, delta: float) -> float:
    """Largest k with the Hamming exponential mechanism (eps, delta)-DP: the monotone search
    (smaller k is more private) on the tight analysis."""
    def private(k: float) -> bool:
        matrix, dbs = hamming_channel(m, n, k)
        prof = privacy_profile(Channel(matrix), InputPairs(tuple(hamming_neighbours(dbs)), directed=True))
        return prof.delta_dp(eps) <= delta

    return boundary(private, 0.0, 20.0, ok_side="lower")


def _lp_best_error(k: int, eps: float, delta: float) -> float:
    """Smallest worst-case error P(output != input) over all k x k channels that are (eps, delta)-DP (LP)."""
    n = k * k
    # variables P[i, j]; slack s[i, i', S] is replaced by the hockey-stick on each pair with auxiliary t
    rows, b = [], []
    nt = k * k * (k - 1)
    idx = 0
    for i in range(k):
        for i2 in range(k):
            if i == i2:
                continue
            # sum_j t_{i,i2,j} <= delta, t >= P[i,j] - e^eps P[i2,j], t >= 0
            for j in range(k):
                r = np.zeros(n + 1 + nt)
                r[i * k + j] = 1
                r[i2 * k + j] = -math.exp(eps)
                r[n + 1 + idx * k + j] = -1
                rows.append(r)
                b.append(0.0)
            r = np.zeros(n + 1 + nt)
            r[n + 1 + idx * k: n + 1 + (idx + 1) * k] = 1
            rows.append(r)
            b.append(delta)
            idx += 1
    for i in range(k):  # error of row i <= z
        r = np.zeros(n + 1 + nt)
        r[i * k: (i + 1) * k] = 1
        r[i * k + i] = 0
        r[n] = -1
        rows.append(r)
        b.append(0.0)
    a_eq = np.zeros((k, n + 1 + nt))
    for i in range(k):
        a_eq[i, i * k: (i + 1) * k] = 1
    c = np.zeros(n + 1 + nt)
    c[n] = 1
    res = linprog(c, A_ub=np.array(rows), b_ub=b, A_eq=a_eq, b_eq=np.ones(k), bounds=[(0, None)] * (n + 1 + nt),
                  method="highs")
    return float(res.fun)


@item("holohan-theorems", PAPER, "Theorems 4, 9 and 10: DP condition of the Hamming mechanism, error bounds, optimal RR")
def theorems(out: Path) -> dict[str, Any]:
    rows = []
    for m, n, eps, delta in ((1, 2, 1.0, 0.0), (1, 2, 1.0, 0.1), (2, 2, 0.5, 0.05), (2, 1, 2.0, 0.2)):
        rows.append(("thm4 k_max", f"m={m},n={n},eps={eps},delta={delta}", hamming_exponential_k_max(m, eps, delta),
                     _max_k_by_analysis(m, n, eps, delta)))
    for k, eps, delta in ((2, 1.0, 0.0), (3, 0.5, 0.1), (4, 1.0, 0.05), (5, 2.0, 0.2)):
        p = rr_optimal_p(k, eps, delta)
        lo, hi = rr_error_bounds(k, eps, delta)
        rows.append(("thm10 error of optimal RR", f"k={k},eps={eps},delta={delta}", (k - 1) * p,
                     _lp_best_error(k, eps, delta)))
        rows.append(("thm9 error bounds (lower, upper)", f"k={k},eps={eps},delta={delta}", lo, hi))
    write_csv(out / "holohan-theorems.csv", ["theorem", "setting", "closed_form", "independent"], rows)
    eps = np.linspace(0.05, 4, 80)
    line_plot(out / "holohan-theorems.png", eps,
              {f"k={k}, delta={d}": [(k - 1) * rr_optimal_p(k, e, d) for e in eps] for k, d in ((2, 0), (4, 0), (4, 0.1))},
              title="Holohan et al. Theorem 10: error of the optimal (eps, delta) randomized response",
              xlabel="epsilon", ylabel="P(output != input)", markers=False)
    gap = max(abs(r[2] - r[3]) for r in rows if not r[0].startswith("thm9"))
    return {"files": ["holohan-theorems.csv", "holohan-theorems.png"], "max_gap_closed_form_vs_independent": gap}
