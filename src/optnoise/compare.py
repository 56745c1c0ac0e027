"""Mechanisms side by side on ``{0..n}``: error at a privacy target, or privacy at an error.

Every mechanism is analysed exactly under the *same* neighbourhood and notion
(:mod:`optnoise.analysis`), and calibrated by bisection on its one parameter:

* ``optimal``: :func:`optnoise.design_finite` (no parameter);
* ``geometric``: two-sided geometric ``alpha`` (Ghosh et al.), with ``boundary``;
* ``discrete-gaussian``: CKS20 ``sigma``, with ``boundary``;
* ``exponential``: utility ``-|q - k|``, ``P ∝ exp(-beta |q - k|)`` (Kadam footnote 6);
* ``rr``: the data-independent mechanism ``f(0) = 1 - rho``, ``f(eta) = rho / n``.

Costs are those of the design (DESIGN.md "Costs"), applied to the error
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
from .design.finite import cost_vector, design_finite
from .errors import InvalidParameterError, OptnoiseError
from .families.baselines import BOUNDARIES, data_independent_pmf, discrete_gaussian_pmf, exponential_channel, on_domain
from .families.geometric import geometric_pmf
from .neighbourhood import Neighbourhood
from .pmf import Channel, CyclicPMF

MECHANISMS = ("optimal", "geometric", "discrete-gaussian", "exponential", "rr")
#: Noises on the integer line, used on {0..n} through a boundary.
_LINE_NOISES = ("geometric", "discrete-gaussian")
_ITER = 60


@dataclass(frozen=True)
class CompareRow:
    """One mechanism at one epsilon (CLI.md ``compare`` row keys in :meth:`to_json`)."""

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


# name -> (parameter name, bracket (lo, hi), more private when the parameter grows?)
_FAMILIES: dict[str, tuple[str, tuple[float, float], bool]] = {
    "geometric": ("alpha", (1e-9, 1.0 - 1e-12), True),
    "discrete-gaussian": ("sigma", (0.02, 1e4), True),
    "exponential": ("beta", (0.0, 60.0), False),
    "rr": ("rho", (0.0, None), True),  # hi = n / (n + 1): the uniform PMF
}


def build(name: str, parameter: float, n: int, boundary: str = "modulo") -> CyclicPMF | Channel:
    """The mechanism ``name`` with its parameter, on ``{0..n}``."""
    if name == "geometric":
        return on_domain(geometric_pmf(parameter), n, boundary)
    if name == "discrete-gaussian":
        return on_domain(discrete_gaussian_pmf(parameter), n, boundary)
    if name == "exponential":
        return exponential_channel(n, parameter)
    if name == "rr":
        return data_independent_pmf(n, parameter)
    raise InvalidParameterError("--mechanisms", name, ", ".join(MECHANISMS))


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
                      None if param is None else _FAMILIES[name][0],
                      boundary if name in _LINE_NOISES else None)


def _meets(mech, nb: Neighbourhood, epsilon: float, delta: float, notion: str) -> bool:
    """Strict: a bisection needs no slack, so a calibrated baseline never exceeds the target."""
    prof = privacy_profile(mech, nb)
    if delta == 0:
        return prof.epsilon_pure <= epsilon
    got = prof.delta_dp(epsilon) if notion == "dp" else prof.delta_pdp(epsilon)
    return got <= delta


def _bisect(ok: Callable[[float], bool], lo: float, hi: float, increasing: bool) -> float:
    """The boundary parameter: smallest ``ok`` one if ``increasing`` else the largest."""
    good, bad = (hi, lo) if increasing else (lo, hi)
    if not ok(good):
        raise OptnoiseError("no parameter in the searched range meets the target")
    if ok(bad):
        return bad
    for _ in range(_ITER):
        mid = 0.5 * (good + bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def calibrate(name: str, n: int, epsilon: float, delta: float, nb: Neighbourhood, notion: str = "dp",
              boundary: str = "modulo") -> float:
    """The least-noisy parameter of ``name`` whose exact guarantee meets ``(epsilon, delta)``."""
    pname, (lo, hi), increasing = _FAMILIES[name]
    hi = n / (n + 1) if hi is None else hi
    return _bisect(lambda x: _meets(build(name, x, n, boundary), nb, epsilon, delta, notion), lo, hi, increasing)


def calibrate_to_cost(name: str, n: int, target: float, cost: str, boundary: str = "modulo") -> float:
    """The most private parameter of ``name`` whose worst-case expected cost is ``<= target``."""
    pname, (lo, hi), increasing = _FAMILIES[name]
    hi = n / (n + 1) if hi is None else hi
    # more private = more noise = more cost: search the other way
    return _bisect(lambda x: costs(build(name, x, n, boundary), cost, n)[0] <= target, lo, hi, not increasing)


def _check(n: int, epsilons: Sequence[float], delta: float, cost: str, mechanisms: Sequence[str],
           boundary: str, notion: str) -> None:
    if int(n) != n or n < 1:
        raise InvalidParameterError("--n", n, "an integer >= 1")
    if not epsilons or any(not (e > 0 and math.isfinite(e)) for e in epsilons):
        raise InvalidParameterError("--epsilons", list(epsilons), "a list of numbers > 0")
    if not 0 <= delta < 1:
        raise InvalidParameterError("--delta", delta, "0 <= delta < 1")
    bad = [m for m in mechanisms if m not in MECHANISMS]
    if bad or not mechanisms:
        raise InvalidParameterError("--mechanisms", ",".join(bad or mechanisms), ", ".join(MECHANISMS))
    if boundary not in BOUNDARIES:
        raise InvalidParameterError("--boundary", boundary, ", ".join(BOUNDARIES))
    if notion not in ("dp", "pdp"):
        raise InvalidParameterError("--guarantee", notion, "dp or pdp")
    cost_vector(cost, (int(n) + 1,))


def compare(n: int, epsilons: Sequence[float], *, delta: float = 0.0, cost: str = "er",
            mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
            neighbourhood: Neighbourhood | None = None, notion: str = "dp",
            progress: Callable[[], None] | None = None) -> list[CompareRow]:
    """Error of each mechanism calibrated to ``(eps, delta)`` for each ``eps``."""
    _check(n, epsilons, delta, cost, mechanisms, boundary, notion)
    nb = neighbourhood or Neighbourhood((1,))
    rows = []
    for eps in epsilons:
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, epsilon=eps, delta=delta, neighbourhood=nb, guarantee_notion=notion, cost=cost)
                rows.append(_row(name, eps, delta, d.pmf, None, boundary, cost, n))
            else:
                param = calibrate(name, n, eps, delta, nb, notion, boundary)
                rows.append(_row(name, eps, delta, build(name, param, n, boundary), param, boundary, cost, n))
            if progress:
                progress()
    return rows


def compare_at_cost(n: int, epsilons: Sequence[float], target_cost: float, *, cost: str = "er",
                    mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
                    neighbourhood: Neighbourhood | None = None, notion: str = "dp",
                    progress: Callable[[], None] | None = None) -> list[CompareRow]:
    """The dual view: each mechanism at expected cost ``target_cost``; ``delta`` is its
    exact delta at each ``eps`` (the optimal design minimises delta, Kadam (15))."""
    _check(n, epsilons, 0.0, cost, mechanisms, boundary, notion)
    if not target_cost > 0:
        raise InvalidParameterError("--target-cost", target_cost, "a number > 0")
    nb = neighbourhood or Neighbourhood((1,))
    fixed = {name: calibrate_to_cost(name, n, target_cost, cost, boundary) for name in mechanisms if name != "optimal"}
    rows = []
    for eps in epsilons:
        for name in mechanisms:
            if name == "optimal":
                d = design_finite(n, epsilon=eps, neighbourhood=nb, guarantee_notion=notion, cost=cost,
                                  minimize="delta", max_cost=target_cost)
                mech, param = d.pmf, None
            else:
                param = fixed[name]
                mech = build(name, param, n, boundary)
            prof = privacy_profile(mech, nb)
            dl = prof.delta_dp(eps) if notion == "dp" else prof.delta_pdp(eps)
            rows.append(_row(name, eps, dl, mech, param, boundary, cost, n))
            if progress:
                progress()
    return rows
