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
from .io import atomic_path, check_output  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    from .analysis.tradeoff import TradeOff
    from .design.staircase import StaircaseDesign


def save_figure(fig, path: str | os.PathLike, *, replace: bool = True) -> None:
    """Write ``fig`` as a PNG atomically and close it (``replace=False``: never over a file that
    exists by the time it is moved into place). The public ``plot_*`` functions check the
    output rule first (:func:`check_plot`)."""
    with atomic_path(path, parameter="plot", replace=replace) as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def check_plot(path: str | os.PathLike, force: bool) -> None:
    """The output rule of every ``plot_*`` function (:func:`optnoise.io.check_output`): an
    existing file is replaced only with ``force``; checked before anything is drawn."""
    check_output(path, force=force, parameter="path")


def plot_profile(profile: PrivacyProfile, path: str | os.PathLike, title: str = "", *, force: bool = False) -> None:
    """delta_DP(eps) and delta_PDP(eps) of a mechanism, with the tight pure epsilon."""
    check_plot(path, force)
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
    save_figure(fig, path, replace=force)


def plot_tradeoff(curves: "dict[str, TradeOff]", path: str | os.PathLike, *, mu: float | None = None,
                  epsilon: float | None = None, title: str = "", fpr: float | None = None,
                  target: tuple[float, float] | None = None, force: bool = False) -> None:
    """What the best attacker can do, for a reader who is not a DP expert.

    Left: how often the attacker is right when the value *was* ``x`` (true-positive rate)
    against how often it wrongly says ``x`` when the value was ``x'`` (false-positive rate),
    for each mechanism's exact curve (the envelope over its pairs), with the curve of
    Gaussian DP at ``mu`` and of pure ``epsilon``-DP for comparison and the diagonal of
    guessing. Right: the same with the false-positive rate on a log scale (attacks that are
    rarely wrong). ``fpr``: a vertical line where a comparison reads the curves; ``target``:
    an attack target ``(FPR, TPR)`` every curve must pass under, marked.
    """
    check_plot(path, force)
    from .analysis.tradeoff import dp_tradeoff, gdp_tradeoff
    lin = np.linspace(0.0, 1.0, 801)
    log = np.logspace(-5, 0, 801)
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.8))
    for ax, a, scale in ((axes[0], lin, "linear"), (axes[1], log, "log")):
        for name, curve in curves.items():
            ax.plot(a, 1.0 - curve.tradeoff(a), linewidth=2, label=f"best attacker against {name}")
        if mu is not None and math.isfinite(mu):
            ax.plot(a, 1.0 - gdp_tradeoff(mu, a), linestyle="--", color="tab:green",
                    label=f"Gaussian DP, mu = {mu:.3g} (the mechanism's)")
        if epsilon is not None and math.isfinite(epsilon):
            ax.plot(a, 1.0 - dp_tradeoff(epsilon, 0.0, a), linestyle=":", color="tab:red",
                    label=f"pure eps-DP, eps = {epsilon:.3g} (what epsilon alone allows)")
        ax.plot(a, a, color="grey", linewidth=0.8, label="guessing at random")
        if target is not None:
            ax.plot([target[0]], [target[1]], marker="X", markersize=9, color="black", linestyle="none",
                    label=f"the target: right at most {100 * target[1]:g}% of the time when wrong {100 * target[0]:g}%")
        elif fpr is not None and fpr > 0:
            ax.axvline(fpr, color="black", linestyle="-.", linewidth=0.8,
                       label=f"false-positive rate {fpr:g} (the table's column)")
        ax.set_xscale(scale)
        ax.set_xlim(a[0] if scale == "log" else 0.0, 1.0)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("false-positive rate\n(how often the attacker says x when it was x')")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("true-positive rate\n(how often the attacker says x when it was x)")
    axes[1].set_title("the same, false-positive rate on a log scale", fontsize=10)
    if len(curves) > 1:   # several mechanisms: the legend under both panels, not over a curve
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=2, frameon=False)
        fig.subplots_adjust(bottom=0.16 + 0.035 * math.ceil(len(labels) / 2), top=0.84, wspace=0.28)
    else:
        axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(title or "What an attacker who knows everything else can learn about one record", fontsize=11)
    save_figure(fig, path, replace=force)


def plot_pmf(values: np.ndarray, path: str | os.PathLike, title: str = "", offset: int = 0,
             xlabel: str = r"noise value $\eta$", *, force: bool = False) -> None:
    """Bar chart of a (1-D) PMF; ``values[i]`` is the mass at ``i - offset``."""
    check_plot(path, force)
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
    save_figure(fig, path, replace=force)


#: Markers and line styles cycled over the curves of a figure: curves that coincide stay
#: visible (a later, thinner curve with a smaller marker is drawn over an earlier one).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), "-", "--")


def curve_style(i: int) -> dict:
    """Marker, line style, size and z-order of the ``i``-th curve of a figure: each later curve
    thinner, with a smaller marker, above the earlier ones, so no curve hides another."""
    return {"marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[i % len(LINESTYLES)],
            "markersize": max(9 - 1.2 * i, 3), "linewidth": max(2.4 - 0.3 * i, 0.9), "zorder": 2 + i,
            "markerfacecolor": "none" if i % 2 == 0 else None}


def plot_compare(rows, path: str | os.PathLike, title: str = "", dual: bool = False,
                 ylabel: str = "expected cost (worst case over q)", *, released: str | None = None,
                 force: bool = False) -> None:
    """Expected cost (or, ``dual``, delta) against epsilon, one line per mechanism.

    ``released``: the released value's error the cost stands for (``sq-error`` for the noise's
    second moment ``mse``), drawn in a second panel from each row's ``released_error`` (worst
    case over q): the error a user sees, which a ranking by a noise cost does not show.
    """
    check_plot(path, force)
    both = released is not None and not dual and all(r.released_error for r in rows)
    fig, axes = plt.subplots(1, 2 if both else 1, figsize=(12 if both else 7, 4.6), squeeze=False,
                             constrained_layout=True)
    names = list(dict.fromkeys(r.mechanism for r in rows))
    panels = [(axes[0][0], (lambda r: r.delta) if dual else (lambda r: r.expected_cost), "delta" if dual else ylabel)]
    if both:
        panels.append((axes[0][1], lambda r: r.released_error["worst"],
                       f"released value's {released} (worst case over q)"))
    for ax, value, label in panels:
        for i, name in enumerate(names):
            rs = [r for r in rows if r.mechanism == name]
            ax.plot([r.epsilon for r in rs], [value(r) for r in rs], label=name, **curve_style(i))
        ax.set_xlabel("epsilon (the privacy target)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if both:
        axes[0][0].set_title("the cost the mechanisms are ranked by", fontsize=9)
        axes[0][1].set_title("the error of the released value", fontsize=9)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path, replace=force)


def plot_density(x: np.ndarray, series: dict[str, np.ndarray], path: str | os.PathLike, title: str = "",
                 xlabel: str = "noise x", ylabel: str = "density", *, force: bool = False) -> None:
    """One or more curves over the same x (e.g. a staircase pdf against Laplace)."""
    check_plot(path, force)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, y in series.items():
        ax.plot(x, y, label=label, drawstyle="steps-mid" if "staircase" in label else "default")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    save_figure(fig, path, replace=force)


def plot_staircase(result: "StaircaseDesign", path: str | os.PathLike, *, force: bool = False) -> None:
    """The staircase's pdf against Laplace, or the staircase PMF ``P_r`` against the geometric."""
    check_plot(path, force)
    from .families import staircase as st
    from .families.geometric import alpha_for_epsilon, geometric_pmf
    eps, d, cost = result.epsilon, result.sensitivity, result.cost.name
    if result.discrete:
        k = np.arange(-4 * int(d), 4 * int(d) + 1)
        geo = geometric_pmf(alpha_for_epsilon(eps, int(d)))
        plot_density(k, {f"staircase P_{result.r}": st.discrete_staircase_pmf(eps, int(d), int(result.r)).mass(k),
                         "geometric": geo.mass(k)}, path, xlabel="noise i", ylabel="mass",
                     title=f"Discrete staircase P_{result.r}, eps={eps:g}, Delta={d}, cost {cost}", force=force)
        return
    x = np.linspace(-4 * d, 4 * d, 2001)
    lam = d / eps
    plot_density(x, {f"staircase gamma={result.gamma:.4g}": st.Staircase(eps, d, result.gamma).pdf(x),
                     "Laplace": np.exp(-np.abs(x) / lam) / (2 * lam)}, path,
                 title=f"Staircase pdf, eps={eps:g}, Delta={d:g}, cost {cost}", force=force)


#: One colour per mechanism of the repeated-release figures (the same in every panel).
RELEASE_COLOURS = {"k-release": "tab:blue", "K-release design": "tab:blue", "single-release": "tab:orange",
                   "geometric": "tab:green", "discrete-gaussian": "tab:red"}


def profile_axis(ax, curves: dict[str, np.ndarray], eps: np.ndarray, k: int, epsilon: float, delta: float) -> None:
    floor = max(delta * 1e-4, 1e-14)
    for i, (name, deltas) in enumerate(curves.items()):
        # below the axis' floor a curve simply ends (a value clamped to the floor would read as a line there)
        shown = np.where(np.asarray(deltas, dtype=float) >= floor, deltas, np.nan)
        ax.semilogy(eps, shown, label=name, markevery=(i % 6, 6), **{**curve_style(i),
                                                                    "color": RELEASE_COLOURS.get(name)})
    if delta > 0:
        ax.plot([epsilon], [delta], marker="x", color="black", linestyle="none",
                label=rf"target ($\epsilon$={epsilon:g}, $\delta$={delta:g})")
    ax.axvline(epsilon, color="grey", linewidth=0.8)
    ax.set_xlabel(r"$\epsilon$")
    ax.set_ylabel(rf"$\delta(\epsilon)$ after K = {k} releases (below {floor:.0e}: not drawn)")
    ax.set_ylim(bottom=floor)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(f"Privacy profile after {k} releases", fontsize=10)


def plot_releases(comparisons, path: str | os.PathLike, title: str = "", *, force: bool = False) -> None:
    """``compare --releases``: the privacy profile after K releases of each mechanism (the
    largest K compared) and, for several K, the expected cost against K and the cost
    relative to the K-release design.

    ``comparisons`` are :class:`~optnoise.design.releases.ReleasesComparison` objects; the
    profiles are the composed bounds of :func:`~optnoise.design.releases.composed_profiles`.
    """
    check_plot(path, force)
    from .design.releases import composed_profiles, cost_table
    last = max(comparisons, key=lambda c: c.k)
    eps = np.linspace(0.0, 1.6 * last.epsilon, 65)
    curves = composed_profiles({r.mechanism: r.pmf for r in last.rows}, last.k, eps, last.neighbourhood)
    several = len(comparisons) > 1
    fig, axes = plt.subplots(1, 3 if several else 1, figsize=(17 if several else 6.4, 4.8), constrained_layout=True)
    axes = np.atleast_1d(axes)
    profile_axis(axes[0], curves, eps, last.k, last.epsilon, last.delta)
    if several:
        table = cost_table(sorted(comparisons, key=lambda c: c.k))
        ref = table["k-release"]
        top = 1.3   # the relative-cost panel shows ratios up to this; larger ones are marked at the edge
        for i, (name, costs) in enumerate((n, c) for n, c in table.items() if n != "k"):
            colour = RELEASE_COLOURS.get(name)
            ratio = costs / ref
            style = {**curve_style(i), "color": colour}
            axes[1].loglog(table["k"], costs, label=name, **style)
            axes[2].semilogx(table["k"], np.minimum(ratio, top), label=name, **style)
            for k, r in zip(table["k"], ratio):
                if r > top:
                    axes[2].annotate(f"x{r:.4g}", (k, top), textcoords="offset points", xytext=(4, -12),
                                     fontsize=8, color=colour)
        axes[1].set_ylabel(f"expected cost ({last.cost})")
        axes[1].set_title(rf"Cost against K at total ($\epsilon$={last.epsilon:g}, $\delta$={last.delta:g})",
                          fontsize=10)
        axes[2].set_ylabel("cost / cost of the K-release design")
        axes[2].set_ylim(0.98, top + 0.02)
        axes[2].set_title(f"Relative cost (capped at {top:g})", fontsize=10)
        for ax in axes[1:]:
            ax.set_xlabel("number of releases K")
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, path, replace=force)


def plot_releases_design(result, path: str | os.PathLike, title: str = "", *, force: bool = False) -> None:
    """``design --releases``: the designed PMF and its privacy profile after K releases."""
    check_plot(path, force)
    from .design.releases import composed_profiles
    from .pmf import IntegerPMF
    eps = np.linspace(0.0, 1.6 * result.epsilon, 65)
    curves = composed_profiles({"K-release design": result.pmf}, result.k, eps, result.neighbourhood)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    offset = result.pmf.offset if isinstance(result.pmf, IntegerPMF) else 0
    axes[0].bar(np.arange(result.pmf.probs.size) - offset, result.pmf.probs, color="tab:blue")
    axes[0].set_xlabel(r"noise value $\eta$")
    axes[0].set_ylabel("probability mass")
    axes[0].grid(alpha=0.3, axis="y")
    axes[0].set_title(f"Noise for {result.k} releases ({result.method})", fontsize=10)
    profile_axis(axes[1], curves, eps, result.k, result.epsilon, result.delta)
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, path, replace=force)


def _channel_axis(fig, ax, matrix: np.ndarray, title: str) -> None:
    """A channel as a heat map of ``log10 P[q, y]`` (entries below 1e-12 at the floor)."""
    P = np.asarray(matrix, dtype=float)
    im = ax.imshow(np.log10(np.maximum(P, 1e-12)), origin="lower", cmap="viridis", aspect="auto",
                   interpolation="nearest", vmin=-12, vmax=0)
    fig.colorbar(im, ax=ax, label="log10 P[q, y]")
    ax.set_xlabel("released value y")
    ax.set_ylabel("true answer q")
    ax.set_title(title, fontsize=9)


def plot_channel(matrix: np.ndarray, path: str | os.PathLike, title: str = "", *, force: bool = False) -> None:
    """Heat map of a channel ``P[q, y]`` (row ``q``: the released value's distribution)."""
    check_plot(path, force)
    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    _channel_axis(fig, ax, matrix, title or "Channel P[q, y]")
    save_figure(fig, path, replace=force)


def plot_channel_and_noise(panels, path: str | os.PathLike, title: str = "", *, force: bool = False) -> None:
    """Optimal channels beside modulo noise PMFs, one row of two plots per ``(label, matrix, pmf)``.

    Left: the channel's heat map. Right: the noise PMF as signed offsets ``-n/2..n/2`` around
    0 (``eta`` and ``eta - (n+1)`` are the same noise mod ``n + 1``), with the channel's rows for
    the smallest, the middle and the largest answer drawn against ``y - q``.
    """
    check_plot(path, force)
    fig, axes = plt.subplots(len(panels), 2, figsize=(12, 4.4 * len(panels)), squeeze=False,
                             constrained_layout=True)
    for (label, matrix, pmf), (a1, a2) in zip(panels, axes):
        P = np.asarray(matrix, dtype=float)
        f = np.asarray(pmf, dtype=float)
        size = f.size
        _channel_axis(fig, a1, P, f"optimal channel, {label}")
        order = np.roll(np.arange(size), size // 2)
        offsets = np.where(order > size // 2, order - size, order)
        a2.bar(offsets, f[order], width=1.0, color="tab:grey", alpha=0.5, label="best noise mod n+1, f(eta)")
        for q in (0, (size - 1) // 2, size - 1):
            a2.plot(np.arange(P.shape[1]) - q, P[q], marker=".", markersize=3, linewidth=1,
                    label=f"channel row q = {q}, against y - q")
        big = np.flatnonzero((f[order] > 1e-3))
        reach = max(5, int(np.max(np.abs(offsets[big]))) + 2 if big.size else 5,
                    max(int(np.max(np.abs(np.flatnonzero(P[q] > 1e-3) - q))) + 2 for q in (0, size - 1)))
        a2.set_xlim(-min(reach, size - 1), min(reach, size - 1))
        a2.set_xlabel("released value minus true answer (for the noise: eta as a signed offset, mod n+1)")
        a2.set_ylabel("probability")
        a2.set_title(label, fontsize=9)
        a2.grid(alpha=0.3)
        a2.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path, replace=force)
