"""Drawing a statistic's released values and writing them in the document's shape.

Two shapes serve every kind (:mod:`.kinds`): *numbers* (a count, a histogram, a sum: each cell
released by its certified mechanism, with its interval and expected error) and *keys* (a
peak, a mode: each group's key, by answer-noise or by report-noisy-max). Cells are written
as a value, ``key -> value`` (``by_key``), or ``group -> ...`` under ``by``. Intervals and
errors are post-processing of the released values and the public mechanism.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..randomness import RandomSource
from .cells import Answers
from .intervals import expected_abs_error, interval
from .mechanisms import Cell
from .noisy_max import noisy_argmax
from .statistic import Statistic


def plain(v: Any) -> Any:
    """A NumPy scalar or array as plain JSON values."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return [plain(x) for x in v]
    return v


def shaped(stat: Statistic, grid: np.ndarray, by_key: bool) -> Any:
    """Cells (groups x keys) as the document writes them: a value, ``key -> value`` (``by_key``),
    or ``group -> ...``."""
    groups = stat.groups.labels() if stat.groups else None
    if by_key:
        keys = stat.keys.labels()  # type: ignore[union-attr]
        rows = [dict(zip(keys, [plain(v) for v in row])) for row in grid]
        return dict(zip(groups, rows)) if groups else rows[0]
    flat = [plain(v) for v in grid[:, 0]]
    return dict(zip(groups, flat)) if groups else flat[0]


def scaled(index: np.ndarray, offset: int, resolution: Fraction | None) -> np.ndarray:
    """Released indices to values in the column's units (times ``resolution`` when given)."""
    values = index.astype(np.int64) + offset
    if resolution is not None:
        return np.array([float(v * resolution) if resolution.denominator != 1 else int(v * resolution)
                         for v in values.ravel()], dtype=object).reshape(values.shape)
    return values


def draw_numbers(stat: Statistic, cell: Cell, answers: Answers, alpha: float, source: RandomSource, *,
                 by_key: bool, resolution: Fraction | None) -> dict:
    """Each cell released by ``cell``'s mechanism, with its interval and expected error."""
    idx = answers.cells - cell.offset
    released = cell.release(idx.ravel(), source).reshape(idx.shape)
    low, high, how = interval(cell, released.ravel(), alpha)
    err, err_how = expected_abs_error(cell)
    scale = 1 if resolution is None else float(resolution)
    many = bool(stat.by) or by_key
    doc = {"values" if many else "value": shaped(stat, scaled(released, cell.offset, resolution), by_key)}
    if low is not None:
        pairs = np.stack([scaled(np.asarray(low).reshape(idx.shape), cell.offset, resolution),
                          scaled(np.asarray(high).reshape(idx.shape), cell.offset, resolution)], axis=-1)
        grid = np.empty(idx.shape, dtype=object)
        for i in np.ndindex(idx.shape):
            grid[i] = [plain(pairs[i][0]), plain(pairs[i][1])]
        doc["intervals" if many else "interval"] = shaped(stat, grid, by_key)
    else:
        doc["intervals" if many else "interval"] = None
    doc["interval_method"] = how
    doc["expected_abs_error"] = None if err is None else err * scale
    doc["expected_abs_error_method"] = err_how
    return doc


def draw_keys(stat: Statistic, cell: Cell | None, answers: Answers, alpha: float, source: RandomSource, *,
              epsilon: float, sensitivity: int | None) -> dict:
    """Each group's key: by answer-noise (``cell``) or by report-noisy-max (``cell`` ``None``,
    each group at ``epsilon`` over scores moving by ``sensitivity``)."""
    keys = stat.keys.labels()  # type: ignore[union-attr]
    if cell is not None:
        released = cell.release(answers.argmax, source)  # type: ignore[arg-type]
        low, high, how = interval(cell, released, alpha)
        err, err_how = expected_abs_error(cell)
    else:
        released = np.array([noisy_argmax(row, sensitivity, epsilon, source)  # type: ignore[arg-type]
                             for row in answers.scores])  # type: ignore[union-attr]
        low = high = None
        how = "none: report-noisy-max releases a key, not a noisy answer around the truth"
        err, err_how = None, "none for report-noisy-max"
    col = np.array([[keys[int(k)]] for k in released], dtype=object)
    many = bool(stat.by)
    doc: dict[str, Any] = {"values" if many else "value": shaped(stat, col, False)}
    if low is not None:
        grid = np.empty((len(released), 1), dtype=object)
        for i in range(len(released)):
            grid[i, 0] = [keys[int(low[i])], keys[int(high[i])]]
        doc["intervals" if many else "interval"] = shaped(stat, grid, False)
    else:
        doc["intervals" if many else "interval"] = None
    doc["interval_method"] = how
    doc["expected_abs_error"] = err
    doc["expected_abs_error_method"] = err_how
    return doc


__all__ = ["draw_keys", "draw_numbers", "plain", "scaled", "shaped"]
