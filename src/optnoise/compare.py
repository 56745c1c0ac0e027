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
al. 2024 (Figs. 5-8) use this setting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .analysis import privacy_profile
from .costs import cost_vector
from .design.finite import design_finite
from .errors import InvalidParameterError
from .families import BOUNDARIES, CALIBRATED, boundary_search, build_on_domain, calibrate, calibration_of
from .neighbourhood import Neighbourhood
from .pmf import Channel, CyclicPMF
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

    def to_json(self) -> dict:
        return {"mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta,
                "expected_cost": self.expected_cost, "expected_cost_average": self.expected_cost_average,
                "error_rate": self.error_rate, "parameter": self.parameter,
                "parameter_name": self.parameter_name, "boundary": self.boundary}


def build(name: str, parameter: float, n: int, boundary: str = "modulo") -> CyclicPMF | Channel:
    """The mechanism ``name`` with its parameter, on ``{0..n}`` (the family registry's calibration)."""
    return build_on_domain(name, parameter, n, boundary)


def costs(mech: CyclicPMF | Channel, cost: str, n: int) -> tuple[float, float, float]:
    """``(worst-case expected cost over q, average over uniform q, worst error rate)``."""
    rho = cost_vector(cost, (n + 1,))
    er = cost_vector("er", (n + 1,))
    if isinstance(mech, CyclicPMF):
        c = float(rho @ mech.probs)
        return c, c, float(er @ mech.probs)
    q = np.arange(n + 1)
    eta = (q[None, :] - q[:, None]) % (n + 1)  # eta[q, y] = (y - q) mod (n+1)
    per_q = (mech.matrix * rho[eta]).sum(axis=1)
    per_q_er = (mech.matrix * er[eta]).sum(axis=1)
    return float(per_q.max()), float(per_q.mean()), float(per_q_er.max())


def _row(name: str, epsilon: float, delta: float, mech: CyclicPMF | Channel, param: float | None,
         boundary: str, cost: str, n: int) -> CompareRow:
    worst, avg, er = costs(mech, cost, n)
    return CompareRow(name, float(epsilon), float(delta), worst, avg, er, param,
                      None if param is None else calibration_of(name).parameter,
                      boundary if name in _LINE_NOISES else None)


def calibrate_to_cost(name: str, n: int, target: float, cost: str, boundary: str = "modulo") -> float:
    """The most private parameter of ``name`` whose worst-case expected cost is ``<= target``."""
    return boundary_search(calibration_of(name), n, lambda x: costs(build(name, x, n, boundary), cost, n)[0] <= target,
                           more_private_ok=False)


def _check(n: int, epsilons: Sequence[float], cost: str, mechanisms: Sequence[str], boundary: str,
           max_memory: int | None = None) -> None:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InvalidParameterError("n", n, "an integer >= 1")
    if not epsilons or any(not (e > 0 and math.isfinite(e)) for e in epsilons):
        raise InvalidParameterError("epsilons", list(epsilons), "a list of numbers > 0")
    bad = [m for m in mechanisms if m not in MECHANISMS]
    if bad or not mechanisms:
        raise InvalidParameterError("mechanisms", ",".join(bad or mechanisms), ", ".join(MECHANISMS))
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
    nb = neighbourhood or Neighbourhood((1,))
    rows = []
    for eps in epsilons:
        target = Target(eps, dlt, notion)
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, target=target, neighbourhood=nb, cost=cost, max_memory=max_memory)
                rows.append(_row(name, eps, dlt, d.pmf, None, boundary, cost, n))
            else:
                param = calibrate(name, n, target, nb, boundary)
                rows.append(_row(name, eps, dlt, build(name, param, n, boundary), param, boundary, cost, n))
            if progress:
                progress()
    return rows


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
    nb = neighbourhood or Neighbourhood((1,))
    fixed = {name: calibrate_to_cost(name, n, target_cost, cost, boundary) for name in mechanisms if name != "optimal"}
    rows = []
    for eps in epsilons:
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, epsilon=eps, neighbourhood=nb, notion=notion, cost=cost,
                                  minimize="delta", max_cost=target_cost, max_memory=max_memory)
                mech, param = d.pmf, None
            else:
                param = fixed[name]
                mech = build(name, param, n, boundary)
            dl = privacy_profile(mech, nb).delta(eps, notion)  # type: ignore[arg-type]
            rows.append(_row(name, eps, dl, mech, param, boundary, cost, n))
            if progress:
                progress()
    return rows
