"""Qin et al.: Table V, Figs. 7-10 (Wasserstein-optimal noise for Gaussian and Poisson inputs)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..design.wasserstein import design_wasserstein, input_distribution, w1_distance
from ..families.qin import qin_laplace_pmf, qin_staircase_pmf, table5
from ..pmf import IntegerPMF
from .common import bar_plot, item, line_plot, write_csv

PAPER = "Qin et al."
INPUTS = {"gaussian": "gaussian:0,10", "poisson": "poisson:5"}
EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0)


def baselines(epsilon: float, m: int) -> dict[str, IntegerPMF]:
    """The paper's comparison noises, each exactly eps-DP for adjacency ``m``.

    Laplace with the paper's calibration ``lambda = (m+1)/eps`` (19) and with the tight one
    ``lambda = m/eps``; staircases (20) with ``rho = e^(-eps / ceil(m/a))`` (21), a = 5, 20.
    """
    return {"laplace (paper, (m+1)/eps)": qin_laplace_pmf((m + 1) / epsilon),
            "laplace (tight, m/eps)": qin_laplace_pmf(m / epsilon),
            "staircase a=5": qin_staircase_pmf(5, math.exp(-epsilon / math.ceil(m / 5))),
            "staircase a=20": qin_staircase_pmf(20, math.exp(-epsilon / math.ceil(m / 20)))}


def w1_rows(spec: str, epsilon: float, m: int) -> dict[str, float]:
    """W1(X, X + noise) for the optimum, P2's solution and the baselines."""
    x = input_distribution(spec)[0]
    out = {"optimal (W1 LP)": design_wasserstein(x, epsilon, m).w1,
           "P2 (min E|noise|)": design_wasserstein(x, epsilon, m, objective="expected-abs").w1}
    out.update({k: w1_distance(x, v) for k, v in baselines(epsilon, m).items()})
    return out


@item("qin-table5", PAPER, "Table V: printed (eps, delta) of five discrete noises vs the tight values, m = 1 and 15")
def table_v(out: Path) -> dict[str, Any]:
    rows = []
    for m in (1, 15):
        for r in table5(m):
            rows.append((m, r.mechanism, r.parameters, r.paper_epsilon, r.paper_delta, r.tight_epsilon_pure,
                         r.tight_delta_at_paper_epsilon, r.verdict, r.note))
    write_csv(out / "qin-table5.csv", ["m", "mechanism", "parameters", "paper_epsilon", "paper_delta",
                                       "tight_epsilon_pure", "tight_delta_at_paper_epsilon", "verdict", "note"], rows)
    labels = [f"{r[1]} m={r[0]}" for r in rows]
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(8, 5.2), constrained_layout=True)
    y = np.arange(len(rows))
    ax.barh(y - 0.2, [max(r[4], 1e-18) for r in rows], 0.4, label="paper delta")
    ax.barh(y + 0.2, [max(r[6], 1e-18) for r in rows], 0.4, label="tight delta at the paper's eps")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("delta (a bar at 1e-18 stands for 0)")
    ax.set_title("Qin et al. Table V: printed vs tight delta (Delta = 1)", fontsize=10)
    # below the axes: inside, the legend covered the longest bars
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    save_figure(fig, out / "qin-table5.png")
    return {"files": ["qin-table5.csv", "qin-table5.png"], "verdicts": {lab: r[7] for lab, r in zip(labels, rows)}}


@item("qin-fig7", PAPER, "Fig. 7: W1-optimal noise PMFs for Gaussian(0,10) and Poisson(5) inputs, eps = 2, m = 15")
def fig7(out: Path) -> dict[str, Any]:
    rows, groups, summary = [], {}, {}
    k = np.arange(-60, 61)
    for name, spec in INPUTS.items():
        x = input_distribution(spec)[0]
        d = design_wasserstein(x, 2.0, 15)
        mass = d.pmf.mass(k)
        groups[f"{name} input (W1={d.w1:.3f})"] = (k, mass)
        rows += [(name, int(i), float(v)) for i, v in zip(k, mass)]
        summary[name] = {"w1": d.w1, "expected_abs_noise": d.expected_abs_noise}
    write_csv(out / "qin-fig7.csv", ["input", "noise", "mass"], rows)
    bar_plot(out / "qin-fig7.png", groups, title="Qin et al. Fig. 7: W1-optimal eps-DP noise, eps = 2, m = 15",
             xlabel="noise value", ylabel="mass")
    return {"files": ["qin-fig7.csv", "qin-fig7.png"], **summary}


@item("qin-fig8", PAPER, "Fig. 8: W1 vs eps (m = 15) for the optimum, P2, Laplace and staircases a = 5, 20")
def fig8(out: Path) -> dict[str, Any]:
    rows, summary = [], {}
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3))
    for ax, (name, spec) in zip(axes, INPUTS.items()):
        table = {e: w1_rows(spec, e, 15) for e in EPSILONS}
        for mech in next(iter(table.values())):
            ax.plot(EPSILONS, [table[e][mech] for e in EPSILONS], marker="o", ms=3.5, label=mech)
        for e in EPSILONS:
            rows += [(name, e, mech, v) for mech, v in table[e].items()]
        summary[name] = {str(e): table[e] for e in EPSILONS}
        ax.set_title(f"input {spec}", fontsize=10)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("W1(X, X + noise)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Qin et al. Fig. 8: Wasserstein distance vs eps, m = 15", fontsize=10)
    save_figure(fig, out / "qin-fig8.png")
    write_csv(out / "qin-fig8.csv", ["input", "epsilon", "mechanism", "w1"], rows)
    return {"files": ["qin-fig8.csv", "qin-fig8.png"], "w1": summary}


@item("qin-fig9", PAPER, "Fig. 9: W1 vs adjacency m at eps = 2, Gaussian and Poisson inputs")
def fig9(out: Path) -> dict[str, Any]:
    ms = (1, 5, 10, 15, 20, 25, 30)
    rows, series = [], {}
    for name, spec in INPUTS.items():
        for m in ms:
            for mech, v in w1_rows(spec, 2.0, m).items():
                rows.append((name, m, mech, v))
                series.setdefault(f"{name}: {mech}", []).append(v)
    write_csv(out / "qin-fig9.csv", ["input", "m", "mechanism", "w1"], rows)
    keep = {k: v for k, v in series.items() if "laplace (paper" not in k}
    line_plot(out / "qin-fig9.png", ms, keep, title="Qin et al. Fig. 9: W1 vs adjacency m, eps = 2",
              xlabel="adjacency m", ylabel="W1(X, X + noise)", logy=True)
    return {"files": ["qin-fig9.csv", "qin-fig9.png"]}


def empirical_w1(a: np.ndarray, b: np.ndarray) -> float:
    """W1 between two empirical distributions of integers (sum of |F_a - F_b|)."""
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    fa = np.cumsum(np.bincount(a - lo, minlength=hi - lo + 1)) / a.size
    fb = np.cumsum(np.bincount(b - lo, minlength=hi - lo + 1)) / b.size
    return float(np.abs(fa - fb).sum())


def _support(pmf: IntegerPMF, reach: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """Values ``-reach..reach`` and their renormalised masses, for ``rng.choice``."""
    k = np.arange(-reach, reach + 1)
    p = pmf.mass(k)
    return k, p / p.sum()


@item("qin-fig10", PAPER, "Fig. 10: statistics of the empirical W1 over 100 runs (1000 records each), seeded simulation")
def fig10(out: Path) -> dict[str, Any]:
    rng = np.random.default_rng(2024)  # a simulation, not a release: seeded on purpose
    rows, summary = [], {}
    settings = [(0.5, 15), (2.0, 15), (4.0, 15), (2.0, 5)]
    x = input_distribution(INPUTS["gaussian"])[0]
    for eps, m in settings:
        noises = {"optimal (W1 LP)": design_wasserstein(x, eps, m).pmf}
        noises.update({k: v for k, v in baselines(eps, m).items() if "paper" not in k})
        xk, xp = _support(x, reach=200)
        for mech, pmf in noises.items():
            nk, np_ = _support(pmf)
            ws = []
            for _ in range(100):
                data = rng.choice(xk, size=1000, p=xp)
                ws.append(empirical_w1(data, data + rng.choice(nk, size=1000, p=np_)))
            ws = np.array(ws)
            rows.append((eps, m, mech, ws.mean(), ws.min(), ws.max(), ws.std(ddof=1)))
            summary[f"eps={eps},m={m},{mech}"] = float(ws.mean())
    write_csv(out / "qin-fig10.csv", ["epsilon", "m", "mechanism", "mean_w1", "min_w1", "max_w1", "sd_w1"], rows)
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(9, 4.3))
    mechs = list(dict.fromkeys(r[2] for r in rows))
    for i, mech in enumerate(mechs):
        rs = [r for r in rows if r[2] == mech]
        xpos = np.arange(len(settings)) + (i - (len(mechs) - 1) / 2) * 0.18
        ax.errorbar(xpos, [r[3] for r in rs], yerr=[[r[3] - r[4] for r in rs], [r[5] - r[3] for r in rs]],
                    fmt="o", capsize=3, label=mech)
    ax.set_xticks(range(len(settings)), [f"eps={e}, m={m}" for e, m in settings])
    ax.set_ylabel("empirical W1 (mean, min-max over 100 runs)")
    ax.set_yscale("log")
    ax.set_title("Qin et al. Fig. 10: empirical W1, Gaussian(0,10) input, 1000 records per run", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, out / "qin-fig10.png")
    return {"files": ["qin-fig10.csv", "qin-fig10.png"], "mean_w1": summary}
