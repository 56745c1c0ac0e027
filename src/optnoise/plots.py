"""Figures (matplotlib, Agg backend), written atomically."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .analysis import PrivacyProfile  # noqa: E402
from .io import atomic_path  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    from .design.staircase import StaircaseDesign


def save_figure(fig, path: str | os.PathLike) -> None:
    """Write ``fig`` as a PNG atomically and close it."""
    with atomic_path(path, parameter="plot") as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def plot_profile(profile: PrivacyProfile, path: str | os.PathLike, title: str = "") -> None:
    """delta_DP(eps) and delta_PDP(eps) of a mechanism, with the tight pure epsilon."""
    top = profile.epsilon_pure if math.isfinite(profile.epsilon_pure) else 5.0
    eps = np.linspace(0.0, max(1.15 * top, 0.05), 240)
    _, d_dp = profile.curve(eps, "dp")
    _, d_pdp = profile.curve(eps, "pdp")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(eps, d_dp, label=r"$\delta_{DP}(\epsilon)$ (hockey-stick)")
    ax.step(eps, d_pdp, where="post", label=r"$\delta_{PDP}(\epsilon)$ (Kadam Def. 2)", linestyle="--")
    if math.isfinite(profile.epsilon_pure):
        ax.axvline(profile.epsilon_pure, color="grey", linewidth=0.8,
                   label=rf"pure $\epsilon$ = {profile.epsilon_pure:.4g}")
    ax.set_xlabel(r"$\epsilon$")
    ax.set_ylabel(r"$\delta$")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title or "Privacy profile")
    save_figure(fig, path)


def plot_pmf(values: np.ndarray, path: str | os.PathLike, title: str = "", offset: int = 0,
             xlabel: str = r"noise value $\eta$") -> None:
    """Bar chart of a (1-D) PMF; ``values[i]`` is the mass at ``i - offset``."""
    v = np.asarray(values, dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    if v.ndim == 1:
        ax.bar(np.arange(v.size) - offset, v, color="tab:blue")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("probability mass")
    else:
        im = ax.imshow(v, origin="lower", cmap="viridis")
        fig.colorbar(im, ax=ax, label="probability mass")
        ax.set_xlabel(r"$\eta_2$")
        ax.set_ylabel(r"$\eta_1$")
    ax.set_title(title or "Noise PMF")
    ax.grid(alpha=0.3, axis="y")
    save_figure(fig, path)


def plot_compare(rows, path: str | os.PathLike, title: str = "", dual: bool = False) -> None:
    """Expected cost (or, ``dual``, delta) against epsilon, one line per mechanism."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    names = list(dict.fromkeys(r.mechanism for r in rows))
    for name in names:
        rs = [r for r in rows if r.mechanism == name]
        ax.plot([r.epsilon for r in rs], [r.delta if dual else r.expected_cost for r in rs], marker="o", label=name)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("delta" if dual else "expected cost (worst case over q)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def plot_density(x: np.ndarray, series: dict[str, np.ndarray], path: str | os.PathLike, title: str = "",
                 xlabel: str = "noise x", ylabel: str = "density") -> None:
    """One or more curves over the same x (e.g. a staircase pdf against Laplace)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, y in series.items():
        ax.plot(x, y, label=label, drawstyle="steps-mid" if "staircase" in label else "default")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    save_figure(fig, path)


def plot_staircase(result: "StaircaseDesign", path: str | os.PathLike) -> None:
    """The staircase's pdf against Laplace, or the staircase PMF ``P_r`` against the geometric."""
    from .families import staircase as st
    from .families.geometric import alpha_for_epsilon, geometric_pmf
    eps, d, cost = result.epsilon, result.sensitivity, result.cost.name
    if result.discrete:
        k = np.arange(-4 * int(d), 4 * int(d) + 1)
        geo = geometric_pmf(alpha_for_epsilon(eps, int(d)))
        plot_density(k, {f"staircase P_{result.r}": st.discrete_staircase_pmf(eps, int(d), int(result.r)).mass(k),
                         "geometric": geo.mass(k)}, path, xlabel="noise i", ylabel="mass",
                     title=f"Discrete staircase P_{result.r}, eps={eps:g}, Delta={d}, cost {cost}")
        return
    x = np.linspace(-4 * d, 4 * d, 2001)
    lam = d / eps
    plot_density(x, {f"staircase gamma={result.gamma:.4g}": st.Staircase(eps, d, result.gamma).pdf(x),
                     "Laplace": np.exp(-np.abs(x) / lam) / (2 * lam)}, path,
                 title=f"Staircase pdf, eps={eps:g}, Delta={d:g}, cost {cost}")
