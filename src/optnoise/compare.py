"""Mechanisms side by side on ``{0..n}``: error at a privacy target, or privacy at an error.

Every mechanism is analysed exactly under the *same* neighbourhood and notion
(:mod:`optnoise.analysis`), and calibrated by bisection on its one parameter:

* ``optimal``: :func:`optnoise.design_finite` (no parameter);
* ``geometric``: two-sided geometric ``alpha`` (Ghosh et al.), with ``boundary``;
* ``discrete-gaussian``: CKS20 ``sigma``, with ``boundary``;
* ``exponential``: utility ``-|q - k|``, ``P ∝ exp(-beta |q - k|)`` (Kadam footnote 6);
* ``rr``: the data-independent mechanism ``f(0) = 1 - rho``, ``f(eta) = rho / n``.

Costs are those of the design (:mod:`optnoise.costs`), applied to the error
``eta = (y - q) mod (n + 1)``; for a channel (clamped or truncated noise, the
exponential mechanism) the reported ``expected_cost`` is the worst case over the
true answer ``q`` (the average is ``expected_cost_average``). Figures of Kadam et
al. 2024 (Figs. 5-8) use this setting. A cost of the released value (``abs-error``,
``sq-error``) is applied to ``y - q`` itself: after wrap-around for modulo noise, as it is
for the clamped channels. Every row also reports the released value's error that the cost
stands for (``released_error``: ``mse`` is the noise's second moment, the released value's
squared error is ``sq-error``), so that a ranking by a noise cost is not taken for one by
the error a user sees.

:func:`compare_channels` is the comparison on an ordered domain (``compare --form
channel``): the optimal channel, the optimal modulo noise and the baselines as channels,
calibrated to the same target and input pairs, ranked by a cost of the released value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from .analysis import privacy_profile
from .costs import (
    RELEASED_COSTS, ReleasedCost, cost_vector, loss_matrix, released_counterpart, released_row_costs, row_costs,
)
from .design.bounds import relative_gap
from .design.channel import calibrated_baselines, design_channel
from .design.finite import design_finite
from .errors import InvalidParameterError
from .families import BOUNDARIES, CALIBRATED, boundary_search, build_on_domain, calibrate, calibration_of
from .neighbourhood import Neighbourhood, as_neighbourhood
from .pmf import Channel, CyclicPMF, channel_matrix
from .resources import array_bytes, channel_bytes, check
from .target import Target, check_delta, check_notion

MECHANISMS = ("optimal",) + CALIBRATED
#: Noises on the integer line, used on {0..n} through a boundary.
_LINE_NOISES = ("geometric", "discrete-gaussian")


@dataclass(frozen=True)
class CompareRow:
    """One mechanism at one epsilon (docs/cli.md ``compare`` row keys in :meth:`to_json`)."""

    mechanism: str
    epsilon: float
    delta: float
    expected_cost: float
    expected_cost_average: float
    error_rate: float
    parameter: float | None
    parameter_name: str | None
    boundary: str | None
    released_error: dict | None = None
    rank: int | None = None
    expected_cost_worst: float | None = None
    lower_bound: float | None = None
    gap: float | None = None

    def to_json(self) -> dict:
        out = {"mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta,
               "expected_cost": self.expected_cost, "expected_cost_average": self.expected_cost_average,
               "error_rate": self.error_rate, "parameter": self.parameter,
               "parameter_name": self.parameter_name, "boundary": self.boundary}
        extra = {"released_error": self.released_error, "rank": self.rank,
                 "expected_cost_worst": self.expected_cost_worst, "lower_bound": self.lower_bound, "gap": self.gap}
        return {**out, **{k: v for k, v in extra.items() if v is not None}}


def build(name: str, parameter: float, n: int, boundary: str = "modulo") -> CyclicPMF | Channel:
    """The mechanism ``name`` with its parameter, on ``{0..n}`` (the family registry's calibration)."""
    return build_on_domain(name, parameter, n, boundary)


def costs(mech: CyclicPMF | Channel, cost: str, n: int) -> tuple[float, float, float]:
    """``(worst-case expected cost over q, average over uniform q, worst error rate)``.

    A noise cost is applied to ``(y - q) mod (n + 1)``; a cost of the released value
    (:data:`~optnoise.costs.RELEASED_COSTS`) to ``y`` against ``q`` through the loss matrix.
    """
    er = cost_vector("er", (n + 1,))
    if cost in RELEASED_COSTS:   # O(n) for noise mod n+1 (costs.released_row_costs)
        per_q = released_row_costs(mech, cost)
        per_q_er = released_row_costs(mech, "er")
        return float(per_q.max()), float(per_q.mean()), float(per_q_er.max())
    rho = cost_vector(cost, (n + 1,))
    if isinstance(mech, CyclicPMF):
        c = float(rho @ mech.probs)
        return c, c, float(er @ mech.probs)
    q = np.arange(n + 1)
    eta = (q[None, :] - q[:, None]) % (n + 1)  # eta[q, y] = (y - q) mod (n+1)
    per_q = (mech.matrix * rho[eta]).sum(axis=1)
    per_q_er = (mech.matrix * er[eta]).sum(axis=1)
    return float(per_q.max()), float(per_q.mean()), float(per_q_er.max())


def released_error(mech: CyclicPMF | Channel, cost: str, n: int) -> dict | None:
    """The released value's error that ``cost`` stands for (``mse`` -> ``sq-error``), averaged
    over a uniform ``q`` and in the worst case: ``{"cost", "average", "worst"}``; ``None``
    when the cost has no released counterpart (``pow:K``, a user cost)."""
    name = released_counterpart(cost)
    if name is None:
        return None
    per_q = released_row_costs(mech, name)
    return {"cost": name, "average": float(per_q.mean()), "worst": float(per_q.max())}


def _row(name: str, epsilon: float, delta: float, mech: CyclicPMF | Channel, param: float | None,
         boundary: str, cost: str, n: int) -> CompareRow:
    worst, avg, er = costs(mech, cost, n)
    return CompareRow(name, float(epsilon), float(delta), worst, avg, er, param,
                      None if param is None else calibration_of(name).parameter,
                      boundary if name in _LINE_NOISES else None, released_error(mech, cost, n))


def calibrate_to_cost(name: str, n: int, target: float, cost: str, boundary: str = "modulo") -> float:
    """The most private parameter of ``name`` whose worst-case expected cost is ``<= target``."""
    return boundary_search(calibration_of(name), n, lambda x: costs(build(name, x, n, boundary), cost, n)[0] <= target,
                           more_private_ok=False)


def _check_rows(n: int, epsilons: Sequence[float], mechanisms: Sequence[str], known: Sequence[str]) -> None:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InvalidParameterError("n", n, "an integer >= 1")
    if not epsilons or any(not (e > 0 and math.isfinite(e)) for e in epsilons):
        raise InvalidParameterError("epsilons", list(epsilons), "a list of numbers > 0")
    bad = [m for m in mechanisms if m not in known]
    if bad or not mechanisms:
        raise InvalidParameterError("mechanisms", ",".join(bad or mechanisms), ", ".join(known))


def _check(n: int, epsilons: Sequence[float], cost: str, mechanisms: Sequence[str], boundary: str,
           max_memory: int | None = None) -> None:
    _check_rows(n, epsilons, mechanisms, MECHANISMS)
    if boundary not in BOUNDARIES:
        raise InvalidParameterError("boundary", boundary, ", ".join(BOUNDARIES))
    channels = "exponential" in mechanisms or (boundary != "modulo" and set(_LINE_NOISES) & set(mechanisms))
    # a channel on {0..n}: the matrix, its cost temporaries and its 2n pairs; else vectors over {0..n}
    check(channel_bytes(n + 1, n + 1, copies=10) if channels else array_bytes(n + 1, 8, copies=40),
          parameter="n", value=n, max_memory=max_memory,
          what=f"channels of {n + 1} x {n + 1} entries" if channels else f"PMFs over {n + 1} values")
    cost_vector(cost, (int(n) + 1,))


def compare(n: int, epsilons: Sequence[float], *, delta: float = 0.0, cost: str = "er",
            mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
            neighbourhood: Neighbourhood | None = None, notion: str = "dp",
            progress: Callable[[], None] | None = None, max_memory: int | None = None) -> list[CompareRow]:
    """Error of each mechanism calibrated to ``(eps, delta)`` under ``notion`` for each ``eps``
    (``max_memory``: :mod:`optnoise.resources`, checked from ``n`` before anything is built)."""
    _check(n, epsilons, cost, mechanisms, boundary, max_memory)
    dlt, notion = check_delta(delta), check_notion(notion)
    nb = as_neighbourhood(neighbourhood)
    rows = []
    for eps in epsilons:
        target = Target(eps, dlt, notion)
        at = len(rows)
        bound = None
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, target=target, neighbourhood=nb, cost=cost, max_memory=max_memory)
                rows.append(_row(name, eps, dlt, d.pmf, None, boundary, cost, n))
                bound = d.lower_bound
            else:
                param = calibrate(name, n, target, nb, boundary)
                rows.append(_row(name, eps, dlt, build(name, param, n, boundary), param, boundary, cost, n))
            if progress:
                progress()
        rows[at:] = _bounded(rows[at:], bound)
    return rows


def _noise_rows(r: CompareRow) -> bool:
    """Whether the optimal noise design's bound covers a row: every noise added modulo ``n + 1``
    meeting the target is feasible for its LP; a clamped baseline is a channel, not such a noise."""
    return r.boundary in (None, "modulo")


def _bounded(rows: list[CompareRow], bound: float | None, covers: Callable[[CompareRow], bool] = _noise_rows,
             objective: Callable[[CompareRow], float] = lambda r: r.expected_cost) -> list[CompareRow]:
    """The rows with the request's proven lower bound and each one's relative distance above
    it (``gap``), for the rows the bound covers."""
    if bound is None:
        return rows
    return [replace(r, lower_bound=bound, gap=relative_gap(objective(r), bound)) if covers(r) else r for r in rows]


def compare_at_cost(n: int, epsilons: Sequence[float], target_cost: float, *, cost: str = "er",
                    mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
                    neighbourhood: Neighbourhood | None = None, notion: str = "dp",
                    progress: Callable[[], None] | None = None, max_memory: int | None = None) -> list[CompareRow]:
    """The dual view: each mechanism at expected cost ``target_cost``; ``delta`` is its
    exact delta at each ``eps`` (the optimal design minimises delta, Kadam (15))."""
    _check(n, epsilons, cost, mechanisms, boundary, max_memory)
    notion = check_notion(notion)
    if isinstance(target_cost, bool) or not (target_cost > 0 and math.isfinite(target_cost)):
        raise InvalidParameterError("target_cost", target_cost, "a number > 0")
    nb = as_neighbourhood(neighbourhood)
    fixed = {name: calibrate_to_cost(name, n, target_cost, cost, boundary) for name in mechanisms if name != "optimal"}
    rows: list[CompareRow] = []
    for eps in epsilons:
        at = len(rows)
        bound = None
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, epsilon=eps, neighbourhood=nb, notion=notion, cost=cost,
                                  minimize="delta", max_cost=target_cost, max_memory=max_memory)
                mech, param = d.pmf, None
                bound = d.lower_bound
            else:
                param = fixed[name]
                mech = build(name, param, n, boundary)
            dl = privacy_profile(mech, nb).delta(eps, notion)  # type: ignore[arg-type]
            rows.append(_row(name, eps, dl, mech, param, boundary, cost, n))
            if progress:
                progress()
        rows[at:] = _bounded(rows[at:], bound, objective=lambda r: r.delta)   # the bound is on delta at this cost
    return rows


# ------------------------------------------------------------------------ ordered domains
#: Mechanisms of :func:`compare_channels`: the two optimal designs and the baselines as channels.
CHANNEL_MECHANISMS: tuple[str, ...] = ("optimal-channel", "optimal-modulo-noise", "clamped-geometric",
                                       "clamped-discrete-gaussian", "randomized-response", "exponential")
#: The default of ``compare --form channel`` (issue 15): all but the exponential mechanism.
CHANNEL_DEFAULT: tuple[str, ...] = CHANNEL_MECHANISMS[:-1]


def _ranked(rows: list[CompareRow]) -> list[CompareRow]:
    """``rank`` 1 for the lowest ``expected_cost`` at each epsilon (ties share a rank)."""
    out = []
    for eps in dict.fromkeys(r.epsilon for r in rows):
        group = [r for r in rows if r.epsilon == eps]
        out += [replace(r, rank=1 + sum(o.expected_cost < r.expected_cost * (1 - 1e-9) for o in group))
                for r in group]
    return out


def compare_channels(n: int, epsilons: Sequence[float], *, delta: float = 0.0, notion: str = "dp",
                     cost: ReleasedCost | str = "abs-error", pairs=None,
                     mechanisms: Sequence[str] = CHANNEL_DEFAULT,
                     progress: Callable[[], None] | None = None) -> list[CompareRow]:
    """Mechanisms on the ordered domain ``{0..n}`` (outputs stay in it), as channels.

    The optimal channel (:func:`~optnoise.design.channel.design_channel`), the optimal noise
    mod ``n + 1`` for the same cost (:func:`~optnoise.design.channel.optimal_modulo_noise`,
    protecting every difference of the pairs) and the baselines of
    :data:`~optnoise.design.channel.BASELINE_FAMILIES`, each calibrated to the same target on
    the same input ``pairs`` (default: neighbours one apart; ``"all"`` per record), ranked (``rank``) by
    ``expected_cost``: the cost of the released value, averaged over the prior or in the
    worst case over ``q`` (``cost.worst_case``). ``expected_cost_average`` is the prior
    average, ``expected_cost_worst`` the worst case, ``error_rate`` the worst ``P(y != q)``.
    """
    _check_rows(n, epsilons, mechanisms, CHANNEL_MECHANISMS)
    objective = cost if isinstance(cost, ReleasedCost) else ReleasedCost(cost)
    objective.weights(int(n) + 1)
    dlt, notion = check_delta(delta), check_notion(notion)
    L = objective.matrix(n)
    er = loss_matrix("er", n)
    rows = []
    bounds: dict[float, float | None] = {}
    for eps in epsilons:
        target = Target(eps, dlt, notion)
        found: dict[str, tuple[np.ndarray, float | None, str | None, str | None]] = {}
        if "optimal-channel" in mechanisms:
            best = design_channel(n, target=target, pairs=pairs, cost=objective)
            found["optimal-channel"] = (np.asarray(best.matrix), None, None, None)
            bounds[float(eps)] = best.lower_bound
            if progress:
                progress()
        for b in calibrated_baselines(n, target=target, pairs=pairs, cost=objective,
                                      names=[m for m in mechanisms if m != "optimal-channel"]):
            found[b.name] = (b.matrix, b.parameter, b.parameter_name, b.boundary)
            if progress:
                progress()
        for name in mechanisms:
            M, param, pname, bnd = found[name]
            per_q = row_costs(M, L)
            avg = float(objective.weights(n + 1) @ per_q)
            rows.append(CompareRow(name, float(eps), dlt, float(per_q.max()) if objective.worst_case else avg, avg,
                                   float(row_costs(M, er).max()), param, pname, bnd,
                                   {"cost": objective.name, "average": avg, "worst": float(per_q.max())},
                                   expected_cost_worst=float(per_q.max())))
    out = []
    for eps in dict.fromkeys(r.epsilon for r in rows):   # every channel meets the target on the pairs
        out += _bounded([r for r in rows if r.epsilon == eps], bounds.get(eps), lambda r: True)
    return _ranked(out)
