"""Kadam et al. (2024): Table 1 and Figs. 5-14 (finite domain, noise added mod n+1)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis import privacy_profile
from ..compare import compare, compare_at_cost
from ..design import Request, SolverOptions, design
from ..design.closed_forms import lemma3_sd
from ..families.baselines import clamp_channel, discrete_gaussian_pmf, wrap
from ..families.geometric import geometric_pmf
from ..neighbourhood import InputPairs, Neighbourhood
from ..target import Target
from .common import bar_plot, item, line_plot, panels_plot, write_csv

PAPER = "Kadam et al. 2024"
#: Table 1 as printed (n = 8, directed BD 3, eps = 1.5).
TABLE1 = {
    0.0: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1212: [0.5432, 0.1212, 0.1212, 0.1212, 0.0270, 0.0270, 0.0270, 0.0060, 0.0060],
    0.1238: [0.5548, 0.1238, 0.1238, 0.1238, 0.0276, 0.0276, 0.0062, 0.0062, 0.0062],
    0.1522: [0.5575, 0.1244, 0.1244, 0.1244, 0.0278, 0.0278, 0.0062, 0.0062, 0.0014],
}
EPS_GRID = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0)
BD3 = Neighbourhood.bd(3, directed=True)


def _design(n: int | tuple[int, ...], target: Target, neighbourhood: Neighbourhood | None = None, *,
            cost: str = "er", formulation: str = "standard", closed_form: bool = True) -> Any:
    """The optimal noise mod n+1 for a request of the paper's (its solver's own result)."""
    return design(Request(space="cyclic", n=n, target=target, neighbourhood=neighbourhood, cost=cost,
                          formulation=formulation, solver=SolverOptions(closed_form=closed_form))).details


@item("kadam-table1", PAPER, "Table 1 / Fig. 10b: optimal PMF, n = 8, directed BD 3, eps = 1.5, four deltas (PDP, MILP (13))")
def table1(out: Path) -> dict[str, Any]:
    rows, groups, worst = [], {}, 0.0
    eta = np.arange(9)
    for delta, paper in TABLE1.items():
        d = _design(8, Target(1.5, delta, "pdp"), BD3, formulation="paper", closed_form=False)
        f = d.pmf.probs
        rows += [(delta, int(i), float(f[i]), paper[i]) for i in eta]
        worst = max(worst, float(np.max(np.abs(f[:6] - np.array(paper[:6])))), abs(f[6:].sum() - sum(paper[6:])))
        groups[f"delta={delta}"] = (eta, f)
    write_csv(out / "kadam-table1.csv", ["delta", "eta", "ours", "paper"], rows)
    bar_plot(out / "kadam-table1.png", groups,
             title="Kadam et al. Table 1: optimal PMF, n = 8, directed BD 3, eps = 1.5, PDP (paper's MILP)")
    return {"files": ["kadam-table1.csv", "kadam-table1.png"], "max_abs_diff": worst, "printed_precision": 1e-4}


def _compare_item(out: Path, name: str, title: str, n: int, delta: float, cost: str, mechanisms, notion: str,
                  target: float | None = None) -> dict[str, Any]:
    if target is None:
        rows = compare(n, EPS_GRID, delta=delta, cost=cost, mechanisms=mechanisms, notion=notion)
        key, ylabel = "expected_cost", f"expected {cost}"
    else:
        rows = compare_at_cost(n, EPS_GRID, target, cost=cost, mechanisms=mechanisms, notion=notion)
        key, ylabel = "delta", "delta"
    write_csv(out / f"{name}.csv", ["mechanism", "epsilon", "delta", "expected_cost", "error_rate", "parameter"],
              [(r.mechanism, r.epsilon, r.delta, r.expected_cost, r.error_rate,
                "" if r.parameter is None else r.parameter) for r in rows])
    series = {m: [getattr(r, key) for r in rows if r.mechanism == m] for m in mechanisms}
    line_plot(out / f"{name}.png", EPS_GRID, series, title=title, xlabel="epsilon", ylabel=ylabel,
              logy=target is None)
    at1 = {m: getattr(next(r for r in rows if r.mechanism == m and r.epsilon == 1.0), key) for m in mechanisms}
    return {"files": [f"{name}.csv", f"{name}.png"], f"{key}_at_eps_1": at1}


@item("kadam-fig5a", PAPER, "Fig. 5a: MSE vs eps at delta = 0.3, n = 8 (PDP, SD 1 symmetric): optimal vs baselines")
def fig5a(out: Path) -> dict[str, Any]:
    return _compare_item(out, "kadam-fig5a", "Kadam et al. Fig. 5a: noise second moment vs eps, n = 8, delta = 0.3 (PDP)",
                         8, 0.3, "mse", ("optimal", "geometric", "discrete-gaussian", "exponential"), "pdp")


@item("kadam-fig5b", PAPER, "Fig. 5b: error rate vs eps at delta = 0.5, n = 7 (PDP, SD 1 symmetric)")
def fig5b(out: Path) -> dict[str, Any]:
    return _compare_item(out, "kadam-fig5b", "Kadam et al. Fig. 5b: error rate vs eps, n = 7, delta = 0.5 (PDP)",
                         7, 0.5, "er", ("optimal", "geometric", "rr", "exponential"), "pdp")


@item("kadam-fig6", PAPER, "Fig. 6: clamping changes the (eps, delta) curve, n = 8, alpha = 0.7, sigma^2 = 3.38")
def fig6(out: Path) -> dict[str, Any]:
    eps = np.linspace(0.0, 2.5, 51)
    nb = Neighbourhood.sd(1)
    mechs = {"geometric (line)": geometric_pmf(0.7), "discrete Gaussian (line)": discrete_gaussian_pmf(math.sqrt(3.38))}
    series = {}
    for name, pmf in mechs.items():
        series[name] = privacy_profile(pmf, nb).curve(eps)[1]
        ch = clamp_channel(pmf, 8)
        series[name.replace("line", "clamped to 0..8")] = privacy_profile(
            ch, InputPairs.from_distances(nb, 9)).curve(eps)[1]
    write_csv(out / "kadam-fig6.csv", ["epsilon", *series], [(e, *[series[k][i] for k in series]) for i, e in enumerate(eps)])
    line_plot(out / "kadam-fig6.png", eps, series, title="Kadam et al. Fig. 6: delta_DP(eps) on the line vs clamped (eq. 56)",
              xlabel="epsilon", ylabel="delta (hockey-stick)", markers=False)
    return {"files": ["kadam-fig6.csv", "kadam-fig6.png"]}


@item("kadam-fig7a", PAPER, "Fig. 7a: delta vs eps at fixed noise second moment 0.6101, n = 8 (PDP)")
def fig7a(out: Path) -> dict[str, Any]:
    return _compare_item(out, "kadam-fig7a", "Kadam et al. Fig. 7a: delta vs eps at MSE = 0.6101, n = 8 (PDP)",
                         8, 0.0, "mse", ("optimal", "geometric", "discrete-gaussian", "exponential"), "pdp", target=0.6101)


@item("kadam-fig7b", PAPER, "Fig. 7b: delta vs eps at fixed error rate 0.3, n = 7 (PDP)")
def fig7b(out: Path) -> dict[str, Any]:
    return _compare_item(out, "kadam-fig7b", "Kadam et al. Fig. 7b: delta vs eps at ER = 0.3, n = 7 (PDP)",
                         7, 0.0, "er", ("optimal", "geometric", "rr", "exponential"), "pdp", target=0.3)


@item("kadam-fig8", PAPER, "Fig. 8: optimal PMF vs wrapped geometric (alpha = 0.7) and discrete Gaussian (sigma^2 = 3.38), n = 8, eps = 1")
def fig8(out: Path) -> dict[str, Any]:
    eta = np.arange(9)
    opt = _design(8, Target(1.0), cost="mse").pmf.probs
    geo = wrap(geometric_pmf(0.7), 9).probs
    gau = wrap(discrete_gaussian_pmf(math.sqrt(3.38)), 9).probs
    write_csv(out / "kadam-fig8.csv", ["eta", "optimal", "geometric", "discrete_gaussian"],
              [(int(i), opt[i], geo[i], gau[i]) for i in eta])
    bar_plot(out / "kadam-fig8.png", {"optimal (MSE, eps=1)": (eta, opt), "geometric alpha=0.7": (eta, geo),
                                      "discrete Gaussian sigma^2=3.38": (eta, gau)},
             title="Kadam et al. Fig. 8: PMFs on {0..8}, noise added mod 9")
    return {"files": ["kadam-fig8.csv", "kadam-fig8.png"], "optimal_f0": float(opt[0]), "geometric_f0": float(geo[0])}


@item("kadam-fig9", PAPER, "Fig. 9: optimal PMF for SD, n = 7, eps = 0.75, mu = 3 (a) and mu = 2 (b); Lemma 3 closed form")
def fig9(out: Path) -> dict[str, Any]:
    eta = np.arange(8)
    rows, groups, gap = [], {}, 0.0
    for mu in (3, 2):
        lp = _design(7, Target(0.75), Neighbourhood.sd(mu, directed=True), closed_form=False).pmf.probs
        cf = lemma3_sd(7, mu, 0.75)
        gap = max(gap, float(np.max(np.abs(lp - cf))))
        rows += [(mu, int(i), lp[i], cf[i]) for i in eta]
        groups[f"mu={mu}, directed (LP)"] = (eta, lp)
    write_csv(out / "kadam-fig9.csv", ["mu", "eta", "lp", "lemma3"], rows)
    bar_plot(out / "kadam-fig9.png", groups, title="Kadam et al. Fig. 9: directed single distance (only +mu, not -mu), "
                                                   "n = 7, eps = 0.75, delta = 0")
    return {"files": ["kadam-fig9.csv", "kadam-fig9.png"], "max_abs_diff_lp_vs_lemma3": gap}


@item("kadam-fig11", PAPER, "Fig. 11: error rate vs mu_bar (BD, directed, PDP), n = 9: delta = 0.2 (left), eps = 2 (right)")
def fig11(out: Path) -> dict[str, Any]:
    mus = list(range(1, 9))
    rows, left, right = [], {}, {}
    for eps in (0.5, 1.0, 2.0):
        for mu in mus:
            d = _design(9, Target(eps, 0.2, "pdp"), Neighbourhood.bd(mu, directed=True))
            rows.append(("delta=0.2", eps, 0.2, mu, d.error_rate))
            left.setdefault(f"eps={eps}, delta=0.2", []).append(d.error_rate)
    for delta in (0.0, 0.1, 0.3):
        for mu in mus:
            d = _design(9, Target(2.0, delta, "pdp"), Neighbourhood.bd(mu, directed=True))
            rows.append(("eps=2", 2.0, delta, mu, d.error_rate))
            right.setdefault(f"eps=2, delta={delta}", []).append(d.error_rate)
    write_csv(out / "kadam-fig11.csv", ["panel", "epsilon", "delta", "mu_bar", "error_rate"], rows)
    panels_plot(out / "kadam-fig11.png", mus, {"delta = 0.2, three epsilons": left, "eps = 2, three deltas": right},
                title="Kadam et al. Fig. 11: optimal error rate vs mu_bar, n = 9 (directed BD, PDP)",
                xlabel="mu_bar (the largest distance)", ylabel="optimal error rate")
    return {"files": ["kadam-fig11.csv", "kadam-fig11.png"]}


@item("kadam-fig12", PAPER, "Fig. 12: error rate vs delta, n = 9, SD 3 (a) and BD 3 (b), directed PDP, eps = 1")
def fig12(out: Path) -> dict[str, Any]:
    deltas = np.round(np.linspace(0.0, 0.6, 25), 4)
    rows, series = [], {}
    for label, nb in (("SD 3", Neighbourhood.sd(3, directed=True)), ("BD 3", BD3)):
        for delta in deltas:
            d = _design(9, Target(1.0, float(delta), "pdp"), nb)
            rows.append((label, float(delta), d.error_rate))
            series.setdefault(label, []).append(d.error_rate)
    write_csv(out / "kadam-fig12.csv", ["neighbourhood", "delta", "error_rate"], rows)
    line_plot(out / "kadam-fig12.png", deltas, series, xlabel="delta", ylabel="optimal error rate",
              title="Kadam et al. Fig. 12: flat and linear regions of rho*(delta), n = 9, eps = 1 (directed, PDP)")
    return {"files": ["kadam-fig12.csv", "kadam-fig12.png"]}


@item("kadam-fig13", PAPER, "Fig. 13: joint PMFs for 2-D queries: (a) n = 4, eps = 3, BD 2 x 2; (b) n = 6, eps = 3, {1,3} x {2,5}")
def fig13(out: Path) -> dict[str, Any]:
    import textwrap

    import matplotlib.pyplot as plt

    from ..neighbourhood import parse_distances
    from ..plots import save_figure
    cases = {"a": ((4, 4), Neighbourhood(tuple((i, j) for i in range(3) for j in range(3) if (i, j) != (0, 0)), True)),
             "b": ((6, 6), Neighbourhood(parse_distances("1,2;1,5;3,2;3,5"), True))}
    rows = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True)
    for ax, (name, (n, nb)) in zip(axes, cases.items()):
        f = _design(n, Target(3.0), nb).pmf.probs
        rows += [(name, i, j, f[i, j]) for i in range(f.shape[0]) for j in range(f.shape[1])]
        im = ax.imshow(f, cmap="viridis", origin="lower")
        ax.set_xlabel("eta_2")
        ax.set_ylabel("eta_1")
        ax.set_title(textwrap.fill(f"({name}) n = {n}, eps = 3, distances {nb.describe()}", 58), fontsize=8)
        fig.colorbar(im, ax=ax)
    fig.suptitle("Kadam et al. Fig. 13: optimal joint noise PMFs (error rate, delta = 0, directed)", fontsize=10)
    save_figure(fig, out / "kadam-fig13.png")
    write_csv(out / "kadam-fig13.csv", ["panel", "eta1", "eta2", "mass"], rows)
    return {"files": ["kadam-fig13.csv", "kadam-fig13.png"]}


@item("kadam-fig14", PAPER, "Fig. 14 (method only): optimal PMF for the peak hour of synthetic meter data (private AMI data not available)")
def fig14(out: Path) -> dict[str, Any]:
    from ..datasets import HOURS, meter_peak_hours
    hours = meter_peak_hours()
    eta = np.arange(HOURS)
    groups = {}
    rows = []
    for eps in (0.5, 1.0, 2.0):
        f = _design(HOURS - 1, Target(eps), Neighbourhood.sd(1), cost="circular-mse").pmf.probs
        groups[f"eps={eps}"] = (eta, f)
        rows += [(eps, int(i), f[i]) for i in eta]
    write_csv(out / "kadam-fig14.csv", ["epsilon", "eta", "mass"], rows)
    bar_plot(out / "kadam-fig14.png", groups,
             title=f"Kadam et al. Fig. 14 method on synthetic meter data ({hours.size} households, SD 1, circular MSE)")
    return {"files": ["kadam-fig14.csv", "kadam-fig14.png"], "note": "synthetic data: the paper's AMI data are private"}
