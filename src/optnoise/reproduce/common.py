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
    """Lines, one per series, with a legend and a grid."""
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(7, 4.3))
    for label, y in series.items():
        ax.plot(x, y, marker="o" if markers else None, ms=3.5, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path


def bar_plot(path: Path, groups: dict[str, tuple[Sequence[float], Sequence[float]]], *, title: str,
             xlabel: str = r"noise value $\eta$", ylabel: str = "probability") -> Path:
    """Grouped bars: ``groups[label] = (x, heights)``."""
    import matplotlib.pyplot as plt

    from ..plots import save_figure
    fig, ax = plt.subplots(figsize=(7, 4.3))
    k = len(groups)
    width = 0.8 / k
    for i, (label, (x, y)) in enumerate(groups.items()):
        ax.bar(np.asarray(x, dtype=float) + (i - (k - 1) / 2) * width, y, width=width, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path
