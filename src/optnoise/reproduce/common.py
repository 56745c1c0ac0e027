"""Registry and output helpers for ``optnoise reproduce``."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..io import write_text_atomic


@dataclass(frozen=True)
class Item:
    """One table or figure of a paper: ``run(out_dir)`` writes a CSV and a PNG and returns a summary."""

    id: str
    paper: str
    what: str
    run: Callable[[Path], dict[str, Any]]
    slow: bool = False

    @property
    def files(self) -> tuple[str, str]:
        """The files the item writes: its numbers and its figure."""
        return f"{self.id}.csv", f"{self.id}.png"

    def to_json(self) -> dict:
        return {"id": self.id, "paper": self.paper, "what": self.what}


REGISTRY: dict[str, Item] = {}


def item(id: str, paper: str, what: str, *, slow: bool = False) -> Callable:
    """Register a reproduction function under ``id``."""
    def deco(fn: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        REGISTRY[id] = Item(id, paper, what, fn, slow)
        return fn
    return deco


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    """Write a CSV atomically (floats with full precision)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in r])
    write_text_atomic(path, buf.getvalue())
    return path


def line_plot(path: Path, x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, xlabel: str,
              ylabel: str, logy: bool = False, markers: bool = True) -> Path:
    """Lines, one per series, with a legend and a grid; each curve with its own marker, line
    style and z-order (:func:`optnoise.plots.curve_style`), so that curves that coincide stay
    visible. ``markers=False``: a marker only every tenth point (dense grids)."""
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(7, 4.3), constrained_layout=True)
    _curves(ax, x, series, markers)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path


def _curves(ax, x: Sequence[float], series: dict[str, Sequence[float]], markers: bool = True) -> None:
    """The curves of one panel, styled apart (:func:`optnoise.plots.curve_style`)."""
    from ..plots import curve_style
    every = 1 if markers else max(len(x) // 10, 1)
    for i, (label, y) in enumerate(series.items()):
        ax.plot(x, y, label=label, markevery=(i % every, every), **curve_style(i))


def panels_plot(path: Path, x: Sequence[float], panels: dict[str, dict[str, Sequence[float]]], *, title: str,
                xlabel: str, ylabel: str) -> Path:
    """Side-by-side panels (``panels[panel title] = series``) sharing the y axis, each as
    :func:`line_plot` draws one."""
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 4.3), sharey=True, constrained_layout=True)
    for ax, (name, series) in zip(np.atleast_1d(axes), panels.items()):
        _curves(ax, x, series)
        ax.set_xlabel(xlabel)
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    np.atleast_1d(axes)[0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path)
    return path


def bar_plot(path: Path, groups: dict[str, tuple[Sequence[float], Sequence[float]]], *, title: str,
             xlabel: str = r"noise value $\eta$", ylabel: str = "probability",
             ticks: Sequence[str] | None = None, values: bool = False) -> Path:
    """Grouped bars: ``groups[label] = (x, heights)``; ``ticks``: names of the categories at
    ``x = 0, 1, ...`` (a categorical axis, not numbers); ``values``: each bar's height written on it."""
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(7, 4.3), constrained_layout=True)
    k = len(groups)
    width = 0.8 / k
    for i, (label, (x, y)) in enumerate(groups.items()):
        bars = ax.bar(np.asarray(x, dtype=float) + (i - (k - 1) / 2) * width, y, width=width, label=label)
        if values:
            ax.bar_label(bars, fontsize=8)
    if ticks is not None:
        ax.set_xticks(range(len(ticks)), ticks)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path
