"""Geng & Viswanath (2016): Fig. 3 (gain over Laplace), Fig. 4 (gamma* for x^2), Fig. 5 and Theorem 13."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..design.integer import design_integer
from ..families.staircase import (
    cost_star_abs,
    cost_star_sq,
    discrete_staircase_pmf,
    gamma_heuristic,
    gamma_star_abs,
    gamma_star_numeric,
    gamma_star_sq,
    laplace_cost,
    r_star,
)
from .common import bar_plot, item, line_plot, write_csv

PAPER = "Geng & Viswanath 2016"


def gain_rows(epsilons: np.ndarray) -> list[tuple[float, float, float]]:
    """``(eps, V_Lap/V_opt for |x|, V_Lap/V_opt for x^2)`` from (44), (46), (51), (52)."""
    return [(float(e), laplace_cost(e, "abs") / cost_star_abs(e), laplace_cost(e, "sq") / cost_star_sq(e))
            for e in epsilons]


@item("geng-fig3", PAPER, "Fig. 3: multiplicative gain of the staircase over Laplace, |x| and x^2, eps in (0, 20]")
def fig3(out: Path) -> dict[str, Any]:
    eps = np.round(np.concatenate([np.linspace(0.1, 10, 100), np.linspace(10.2, 20, 50)]), 6)
    rows = gain_rows(eps)
    write_csv(out / "geng-fig3.csv", ["epsilon", "gain_abs", "gain_sq"], rows)
    line_plot(out / "geng-fig3.png", eps, {"|x| (noise magnitude)": [r[1] for r in rows],
                                           "x^2 (noise power)": [r[2] for r in rows]},
              title="Geng & Viswanath Fig. 3: V_Lap / V_opt, Delta = 1", xlabel="epsilon",
              ylabel="gain over Laplace", logy=True, markers=False)
    at10 = gain_rows(np.array([10.0]))[0]
    return {"files": ["geng-fig3.csv", "geng-fig3.png"], "gain_abs_eps10": at10[1], "gain_sq_eps10": at10[2],
            "paper": "about 15-fold (|x|) and 23-fold (x^2) at eps = 10"}


@item("geng-fig4", PAPER, "Fig. 4: optimal gamma* for x^2 (50) vs eps, with gamma* for |x| (43) and the heuristic e^-eps/2")
def fig4(out: Path) -> dict[str, Any]:
    eps = np.round(np.linspace(0.1, 10, 100), 6)
    rows = [(float(e), gamma_star_sq(e), gamma_star_abs(e), gamma_heuristic(e)) for e in eps]
    check = [(e, abs(gamma_star_numeric(e, "sq") - gamma_star_sq(e))) for e in (0.5, 2.0, 8.0)]
    write_csv(out / "geng-fig4.csv", ["epsilon", "gamma_star_sq", "gamma_star_abs", "gamma_heuristic"], rows)
    line_plot(out / "geng-fig4.png", eps, {"gamma* for x^2 (50)": [r[1] for r in rows],
                                           "gamma* for |x| (43)": [r[2] for r in rows],
                                           "heuristic e^-eps/2 (62)": [r[3] for r in rows]},
              title="Geng & Viswanath Fig. 4: optimal gamma", xlabel="epsilon", ylabel="gamma", markers=False)
    return {"files": ["geng-fig4.csv", "geng-fig4.png"], "max_abs_diff_closed_form_vs_numeric": max(c[1] for c in check)}


@item("geng-theorem13", PAPER, "Fig. 5 / Theorem 13: P_r* vs the integer-line LP, Delta in {2,5,10}, eps in {0.5,1,2,5}")
def theorem13(out: Path) -> dict[str, Any]:
    rows = []
    for d in (2, 5, 10):
        for e in (0.5, 1.0, 2.0, 5.0):
            for cost in ("abs", "sq"):
                best = r_star(e, d, cost)
                lp = design_integer(e, d, cost)
                rows.append((d, e, cost, best.r, best.expected_cost, lp.expected_cost,
                             abs(lp.expected_cost - best.expected_cost) / best.expected_cost))
    write_csv(out / "geng-theorem13.csv", ["sensitivity", "epsilon", "cost", "r_star", "staircase_cost", "lp_cost",
                                           "relative_gap"], rows)
    k = np.arange(-15, 16)
    r = r_star(1.0, 5, "abs").r
    bar_plot(out / "geng-theorem13.png", {f"P_{r} (r* for |x|)": (k, discrete_staircase_pmf(1.0, 5, r).mass(k)),
                                          "LP optimum": (k, design_integer(1.0, 5, "abs").pmf.mass(k))},
             title="Geng & Viswanath Fig. 5: discrete staircase P_r*, eps = 1, Delta = 5, cost |x|",
             xlabel="noise i", ylabel="mass")
    return {"files": ["geng-theorem13.csv", "geng-theorem13.png"], "max_relative_gap": max(x[-1] for x in rows)}
