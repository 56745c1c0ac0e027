"""The PDP channel MILP: solved whole, or by row generation over (pair, output) cells, with its
indicators polished into a feasible channel by an LP (:mod:`.channel_model` writes the models)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError
from .channel_model import ChannelProblem, build_model, circulant_model, reduction, solve_model_lp, solve_model_milp
from .solver import MIP_REL_GAP, RATIO_MARGIN, Infeasible


@dataclass(frozen=True)
class PDPSolution:
    """A PDP channel: the polished full variables and objective, the MIP gap, the model size,
    the method, the proven (MILP) lower bound, and the row-generation rounds and kept cells."""

    x: np.ndarray
    objective: float
    gap: float
    n_rows: int
    n_cols: int
    method: str
    bound: float | None
    rounds: int = 1
    cells: int = 0


def solve_pdp(pb: ChannelProblem) -> PDPSolution:
    """The PDP channel: the MILP, then the LP with the indicators fixed (tight tolerances,
    margins on e and delta). Models with more than :data:`PDP_ROW_GENERATION_MIN_CELLS`
    (pair, output) cells are solved by row generation (:func:`pdp_row_generation`)."""
    kind = reduction(pb, False)
    pairs = circulant_model(pb).pairs if kind == "circulant" else pb.pairs
    if len(pairs) * pb.size > PDP_ROW_GENERATION_MIN_CELLS:
        return pdp_row_generation(pb, len(pairs))
    model = build_model(pb, milp_model=True)
    lay = model.layout
    x, obj, gap, n_rows, best_bound = solve_model_milp(model, pb.time_limit)
    # the indicators of the problem the model was built for (one pair per distance if circulant)
    u = np.rint(x[lay.off_u:lay.off_z]).astype(bool).reshape(lay.n_pairs, pb.size)
    x2, obj2, _ = solve_model_lp(build_model(pb, pdp_pattern=u), pb.time_limit)
    # the polished LP's optimum <= the MILP's incumbent (the incumbent is feasible for it)
    return PDPSolution(np.asarray(x2), obj2, gap, n_rows, model.n_cols, model.method, best_bound,
                       1, lay.n_pairs * pb.size)


#: Above this many (pair, output) cells the PDP MILP is solved by row generation (the full
#: MILP has one binary per cell).
PDP_ROW_GENERATION_MIN_CELLS = 150


def _first_cells(n_pairs: int, size: int, pa: np.ndarray, pb_: np.ndarray) -> np.ndarray:
    """The cells kept in the first round: each pair's outputs at its own two answers."""
    cells = np.zeros((n_pairs, size), dtype=bool)
    k = np.arange(n_pairs)
    cells[k, pa] = True
    cells[k, pb_] = True
    return cells


def pdp_row_generation(pb: ChannelProblem, n_pairs: int) -> PDPSolution:
    """The PDP channel MILP over a growing set of (pair, output) cells.

    Exactness (no convexity needed; docs/proofs/row-generation.md, Claim 3): leaving cells out
    relaxes the MILP -- a left-out cell may have ``P[a, y] > e P[b, y]`` without its mass
    counting towards delta -- so the relaxed MILP's best bound ``L`` bounds the full optimum
    from below. The relaxed solution's indicators, extended by its violations on the left-out
    cells, are polished on the *full* problem (the LP over every cell with the indicators
    fixed: :func:`build_model` with ``pdp_pattern``), giving a feasible channel of cost ``U``.
    When ``U - L <= MIP_REL_GAP |U|`` it is within the gap the full MILP is solved to;
    otherwise the violated cells are added (then the cells around them: same pair, outputs
    within a radius 1, 2, 4, ...) and the MILP solved again -- the full MILP at the latest.
    The first round keeps each pair's cells at its own two answers.
    """
    size = pb.size
    pairs = circulant_model(pb).pairs if reduction(pb, False) == "circulant" else pb.pairs
    pa, pb_ = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    e = math.exp(pb.epsilon) * (1.0 - RATIO_MARGIN)
    cells = _first_cells(n_pairs, size, pa, pb_)
    deadline = None if pb.time_limit is None else time.perf_counter() + pb.time_limit
    radius, rounds = 0, 0
    while True:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            raise DesignError(f"solver time limit reached ({pb.time_limit} s) before optimality was proved (row "
                              f"generation, {rounds} MILPs); no design is called optimal (raise --time-limit)")
        model = build_model(pb, milp_model=True, cells=cells)
        x, obj, gap, n_rows, best = solve_model_milp(model, left)
        rounds += 1
        lay = model.layout
        P = x[:lay.n_p].reshape(size, size)
        violated = P[pa] > e * P[pb_]
        pattern = np.rint(x[lay.off_u:lay.off_z]).astype(bool).reshape(n_pairs, size) & cells
        pattern |= violated & ~cells
        bound = obj if best is None else best
        try:
            x2, obj2, _ = solve_model_lp(build_model(pb, pdp_pattern=pattern), left)
        except Infeasible:
            x2, obj2 = None, math.inf
        if x2 is None and cells.all():
            raise DesignError("the PDP channel MILP's indicators could not be polished into a feasible channel")
        if x2 is not None and (obj2 - bound <= MIP_REL_GAP * abs(obj2) + 1e-12 or cells.all()):
            return PDPSolution(np.asarray(x2), obj2, max(0.0, obj2 - bound) / max(abs(obj2), 1e-300), n_rows,
                               model.n_cols, model.method + "-row-generation", bound, rounds, int(cells.sum()))
        grow = violated & ~cells
        if not grow.any():
            cells[:] = True     # nothing left to add around: the next MILP is the full one
            continue
        k, y = np.nonzero(grow)
        for shift in range(-radius, radius + 1):
            cells[k, np.clip(y + shift, 0, size - 1)] = True
        radius = max(1, 2 * radius)


__all__ = ["PDP_ROW_GENERATION_MIN_CELLS", "PDPSolution", "pdp_row_generation", "solve_pdp"]
