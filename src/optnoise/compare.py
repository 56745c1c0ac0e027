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
from .costs import (RELEASED_COSTS, ReleasedCost, cost_vector, loss_matrix, released_counterpart, released_row_costs,
                    row_costs)
from .design import Request, calibrate, design
from .design.bounds import relative_gap
from .design.calibrate import CalibratedDesign
from .design.channel import calibrated_baselines, channel_screen
from .design.channel_model import ordered_pairs
from .design.exponential import calibrate_exponential
from .design.request import check_n
from .errors import InvalidParameterError
from .families import BOUNDARIES, CALIBRATED, boundary_search, build_on_domain, calibration_of
from .neighbourhood import InputPairs, Neighbourhood
from .pmf import Channel, CyclicPMF, channel_matrix
from .resources import array_bytes, channel_bytes, check
from .target import Target, check_epsilons

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
    attack: dict | None = None

    def to_json(self) -> dict:
        out = {"mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta,
               "expected_cost": self.expected_cost, "expected_cost_average": self.expected_cost_average,
               "error_rate": self.error_rate, "parameter": self.parameter,
               "parameter_name": self.parameter_name, "boundary": self.boundary}
        extra = {"released_error": self.released_error, "rank": self.rank,
                 "expected_cost_worst": self.expected_cost_worst, "lower_bound": self.lower_bound, "gap": self.gap,
                 "attack": self.attack}
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


def _check_mechanisms(mechanisms: Sequence[str], known: Sequence[str]) -> list[str]:
    names = list(mechanisms)
    bad = [m for m in names if m not in known]
    if bad or not names:
        raise InvalidParameterError("mechanisms", ",".join(bad or names), ", ".join(known))
    return names


def _check(request: Request, mechanisms: Sequence[str], boundary: str) -> None:
    """The mechanisms and boundary of a comparison on ``{0..n}``, and its memory from ``n``."""
    _check_mechanisms(mechanisms, MECHANISMS)
    if boundary not in BOUNDARIES:
        raise InvalidParameterError("boundary", boundary, ", ".join(BOUNDARIES))
    n = request.largest
    channels = "exponential" in mechanisms or (boundary != "modulo" and set(_LINE_NOISES) & set(mechanisms))
    # a channel on {0..n}: the matrix, its cost temporaries and its 2n pairs; else vectors over {0..n}
    check(channel_bytes(n + 1, n + 1, copies=10) if channels else array_bytes(n + 1, 8, copies=40),
          parameter="n", value=request.n, max_memory=request.max_memory,
          what=f"channels of {n + 1} x {n + 1} entries" if channels else f"PMFs over {n + 1} values")
    request.loss  # noqa: B018 - the cost on the domain


def _calibrated(name: str, request: Request, boundary: str) -> CalibratedDesign:
    """Family ``name`` calibrated to the request's target on ``{0..n}``: a channel when line noise
    is clamped or truncated (and for the exponential mechanism), else cyclic noise."""
    line, nb = name in _LINE_NOISES, request.neighbours
    space = "channel" if name == "exponential" or (line and boundary != "modulo") else "cyclic"
    r = Request(space=space, n=request.n, target=request.target, neighbourhood=nb, family=name,
                boundary=boundary if line else None)
    got = calibrate_exponential(r) if name == "exponential" else None   # closed form; else on a channel's screen
    screen = channel_screen(InputPairs.from_distances(nb, request.size).pairs, request.target) \
        if space == "channel" and isinstance(nb, Neighbourhood) and request.target.notion != "attack" else None  # type: ignore[union-attr]
    return got if got is not None else calibrate(name, r, screen=screen)


def _request(n: int, epsilons: Sequence[float], delta: float, notion: str, cost: str,
             neighbourhood: Neighbourhood | None, max_memory: int | None) -> Request:
    """The request of a comparison on ``{0..n}`` at its first epsilon (each row replaces it)."""
    eps = check_epsilons(epsilons)
    return Request(space="cyclic", n=n, target=Target(eps[0], delta, notion), neighbourhood=neighbourhood, cost=cost,
                   max_memory=max_memory)


def at_target(request: Request, epsilons: Sequence[float], *, mechanisms: Sequence[str] = MECHANISMS,
              boundary: str = "modulo", progress: Callable[[], None] | None = None,
              reps: list | None = None) -> list[CompareRow]:
    """Error of each mechanism calibrated to the request's target, at each epsilon: the optimal
    design (:func:`optnoise.design.design`) and each family (:func:`optnoise.design.calibrate`).
    ``reps``: a list each row's mechanism is appended to (for :func:`with_attack`)."""
    _check(request, mechanisms, boundary)
    t, n, cost = request.target, request.largest, request.cost_name
    rows: list[CompareRow] = []
    for eps in check_epsilons(epsilons):
        r = request.replace(target=Target(eps, t.delta, t.notion))  # type: ignore[union-attr]
        at, bound = len(rows), None
        for name in mechanisms:
            if name == "optimal":
                d = design(r)
                rows.append(_row(name, eps, r.target.delta, d.mechanism.pmf, None, boundary, cost, n))  # type: ignore[union-attr, arg-type]
                bound, rep = d.report.lower_bound, d.mechanism.pmf
            else:
                c = _calibrated(name, r, boundary)
                rows.append(_row(name, eps, r.target.delta, c.representation, c.parameter, boundary, cost, n))  # type: ignore[union-attr, arg-type]
                rep = c.representation
            if reps is not None:
                reps.append(rep)
            if progress:
                progress()
        rows[at:] = _bounded(rows[at:], bound)
    return rows


def at_attack_target(request: Request, *, mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
                     progress: Callable[[], None] | None = None) -> tuple[list[CompareRow], list]:
    """Each mechanism meeting the request's *attack* target (docs/attacks.md): the optimal
    design over the target's ``(epsilon, delta)`` members (:func:`optnoise.design.design`) and
    each family calibrated on its exact trade-off curve. A row's ``epsilon``/``delta`` are the
    member the optimal design was made for, or the family's exact pure epsilon (delta 0).
    Returns the rows and each row's mechanism (for the attack readout)."""
    _check(request, mechanisms, boundary)
    n, cost = request.largest, request.cost_name
    rows: list[CompareRow] = []
    reps: list = []
    bound = None
    for name in mechanisms:
        if name == "optimal":
            d = design(request)
            m = d.report.details.found.member   # the (epsilon, delta) member it was made for
            rep, param, eps, delta, bound = d.mechanism.pmf, None, m.epsilon, m.delta, d.report.lower_bound
        else:
            c = _calibrated(name, request, boundary)
            rep, param, delta = c.representation, c.parameter, 0.0
            eps = privacy_profile(rep, request.neighbours).epsilon_pure  # type: ignore[arg-type]
        rows.append(_row(name, eps, delta, rep, param, boundary, cost, n))  # type: ignore[arg-type]
        reps.append(rep)
        if progress:
            progress()
    return _bounded(rows, bound, _member_rows(request)), reps


def _member_rows(request: Request) -> Callable[[CompareRow], bool]:
    """The rows an attack design's bound covers: it is proven over the target's ``(epsilon,
    delta)`` members only (:mod:`optnoise.design.attack`), so it covers the optimal row and a
    family whose pure epsilon is at most the pure member's (it meets that member); a family
    meeting the target only on its exact curve may lie outside every member, and gets no gap."""
    from .design.attack import pure_member, symmetric_neighbours
    top = pure_member(request.target, symmetric_neighbours(request.neighbours))  # type: ignore[arg-type]
    return lambda r: r.mechanism == "optimal" or (r.boundary in (None, "modulo") and r.delta == 0 and r.epsilon <= top)


def with_attack(rows: Sequence[CompareRow], reps: Sequence, neighbours: Neighbourhood | InputPairs,
                fpr: float) -> tuple[list[CompareRow], list]:
    """Each row with the best attacker's exact TPR at ``fpr`` (rounded up) and Gaussian-DP mu on
    its mechanism's exact trade-off curve (:func:`optnoise.analysis.tradeoff.tradeoff`), under
    the comparison's neighbourhood; and the curves, labelled, for a figure."""
    from .analysis.tradeoff import check_fpr, tradeoff
    a = check_fpr(fpr)
    out, curves = [], []
    for row, rep in zip(rows, reps):
        curve = tradeoff(rep, neighbours, exact=True)
        tpr, _ = curve.tpr(a)
        mu, _ = curve.mu_gdp()
        out.append(replace(row, attack={"fpr": a, "tpr": tpr, "mu_gdp": mu, "method": curve.method}))
        curves.append((row, curve))
    return out, curves


def at_cost(request: Request, epsilons: Sequence[float], target_cost: float, *, mechanisms: Sequence[str] = MECHANISMS,
            boundary: str = "modulo", progress: Callable[[], None] | None = None,
            reps: list | None = None) -> list[CompareRow]:
    """The dual view: each mechanism at expected cost ``target_cost``; ``delta`` is its exact delta
    at each ``eps`` (the optimal design minimises delta, Kadam (15))."""
    _check(request, mechanisms, boundary)
    if isinstance(target_cost, bool) or not (target_cost > 0 and math.isfinite(target_cost)):
        raise InvalidParameterError("target_cost", target_cost, "a number > 0")
    n, cost, notion, nb = request.largest, request.cost_name, request.target.notion, request.neighbours  # type: ignore[union-attr]
    fixed = {name: calibrate_to_cost(name, n, target_cost, cost, boundary) for name in mechanisms if name != "optimal"}
    rows: list[CompareRow] = []
    for eps in check_epsilons(epsilons):
        at, bound = len(rows), None
        for name in mechanisms:
            if name == "optimal":
                r = request.replace(target=Target(eps, 0.0, notion), minimize="delta", max_cost=target_cost)
                d = design(r)
                mech, param, bound = d.mechanism.pmf, None, d.report.lower_bound
            else:
                param = fixed[name]
                mech = build(name, param, n, boundary)
            dl = privacy_profile(mech, nb).delta(eps, notion)  # type: ignore[arg-type]
            rows.append(_row(name, eps, dl, mech, param, boundary, cost, n))  # type: ignore[arg-type]
            if reps is not None:
                reps.append(mech)
            if progress:
                progress()
        rows[at:] = _bounded(rows[at:], bound, objective=lambda r: r.delta)   # the bound is on delta at this cost
    return rows


def compare(n: int, epsilons: Sequence[float], *, delta: float = 0.0, cost: str = "er",
            mechanisms: Sequence[str] = MECHANISMS, boundary: str = "modulo",
            neighbourhood: Neighbourhood | None = None, notion: str = "dp",
            progress: Callable[[], None] | None = None, max_memory: int | None = None) -> list[CompareRow]:
    """Error of each mechanism calibrated to ``(eps, delta)`` under ``notion`` for each ``eps``
    (``max_memory``: :mod:`optnoise.resources`, checked from ``n`` before anything is built):
    :func:`at_target` of the request on ``{0..n}``."""
    request = _request(n, epsilons, delta, notion, cost, neighbourhood, max_memory)
    return at_target(request, epsilons, mechanisms=mechanisms, boundary=boundary, progress=progress)


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
    """:func:`at_cost` of the request on ``{0..n}``."""
    request = _request(n, epsilons, 0.0, notion, cost, neighbourhood, max_memory)
    return at_cost(request, epsilons, target_cost, mechanisms=mechanisms, boundary=boundary, progress=progress)


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


def channel_rows(request: Request, epsilons: Sequence[float], *, mechanisms: Sequence[str] = CHANNEL_DEFAULT,
                 progress: Callable[[], None] | None = None, reps: list | None = None) -> list[CompareRow]:
    """Mechanisms on the ordered domain ``{0..n}`` (outputs stay in it), as channels, for a
    request with ``space="channel"``: the optimal channel (:func:`optnoise.design.design`), the
    optimal noise mod ``n + 1`` for the same cost (protecting every difference of the pairs)
    and the baselines of :data:`~optnoise.design.channel.BASELINE_FAMILIES`, each calibrated to
    the same target on the same input pairs, ranked (``rank``) by ``expected_cost``: the cost
    of the released value, averaged over the prior or in the worst case over ``q``.
    ``expected_cost_average`` is the prior average, ``expected_cost_worst`` the worst case,
    ``error_rate`` the worst ``P(y != q)``."""
    from .design.large_channel import large_request
    names = _check_mechanisms(mechanisms, CHANNEL_MECHANISMS)
    if large_request(request):
        return _large_channel_rows(request, epsilons, tuple(names), progress)
    n, t = request.largest, request.target
    check(channel_bytes(n + 1, n + 1, copies=10), parameter="n", value=n, max_memory=request.max_memory,
          what=f"channels of {n + 1} x {n + 1} entries")
    objective = request.cost if isinstance(request.cost, ReleasedCost) else ReleasedCost(request.cost or "abs-error")
    L, weights, er = objective.matrix(n), objective.weights(n + 1), loss_matrix("er", n)
    rows = []
    bounds: dict[float, float | None] = {}
    for eps in check_epsilons(epsilons):
        r = request.replace(target=Target(eps, t.delta, t.notion))  # type: ignore[union-attr]
        found: dict[str, tuple[np.ndarray, float | None, str | None, str | None]] = {}
        if "optimal-channel" in names:
            best = design(r)
            found["optimal-channel"] = (np.asarray(best.details.matrix), None, None, None)
            bounds[float(eps)] = best.report.lower_bound
            if progress:
                progress()
        for b in calibrated_baselines(n, target=r.target, pairs=r.neighbours, cost=objective,  # type: ignore[arg-type]
                                      names=[m for m in names if m != "optimal-channel"]):
            found[b.name] = (b.matrix, b.parameter, b.parameter_name, b.boundary)
            if progress:
                progress()
        for name in names:
            M, param, pname, bnd = found[name]
            per_q = row_costs(M, L)
            avg = float(weights @ per_q)
            rows.append(CompareRow(name, float(eps), r.target.delta, float(per_q.max()) if objective.worst_case  # type: ignore[union-attr]
                                   else avg, avg, float(row_costs(M, er).max()), param, pname, bnd,
                                   {"cost": objective.name, "average": avg, "worst": float(per_q.max())},
                                   expected_cost_worst=float(per_q.max())))
            if reps is not None:
                reps.append(Channel(M))
    out = []
    for eps in dict.fromkeys(r.epsilon for r in rows):   # every channel meets the target on the pairs
        out += _bounded([r for r in rows if r.epsilon == eps], bounds.get(eps), lambda r: True)
    return _ranked(out)


def _large_channel_rows(request: Request, epsilons: Sequence[float], names: tuple[str, ...],
                        progress: Callable[[], None] | None) -> list[CompareRow]:
    """:func:`channel_rows` beyond :data:`~optnoise.design.large_channel.LARGE_FROM`: the design
    (the clamped geometric) and the calibrated clamped geometric, scored in ``O(n)``, each with
    its distance above the block relaxation's proven bound; the default mechanisms narrow to
    :data:`~optnoise.design.large_channel.LARGE_MECHANISMS`."""
    from .design.large_channel import LARGE_MECHANISMS, large_rows
    t = request.target
    rows: list[CompareRow] = []
    for eps in check_epsilons(epsilons):
        r = request.replace(target=Target(eps, t.delta, t.notion))  # type: ignore[union-attr]
        d, got = large_rows(r, LARGE_MECHANISMS if names == CHANNEL_DEFAULT else names)
        for g in got:
            cost = g.worst if d.worst_case else g.average
            rows.append(CompareRow(g.name, float(eps), 0.0, cost, g.average, g.error_rate, g.parameter, g.parameter_name,
                                   "clamp", {"cost": d.cost, "average": g.average, "worst": g.worst},
                                   expected_cost_worst=g.worst))
            if progress:
                progress()
        rows[-len(got):] = _bounded(rows[-len(got):], d.lower_bound, lambda row: True)
    return _ranked(rows)


def compare_channels(n: int, epsilons: Sequence[float], *, delta: float = 0.0, notion: str = "dp",
                     cost: ReleasedCost | str = "abs-error", pairs=None,
                     mechanisms: Sequence[str] = CHANNEL_DEFAULT,
                     progress: Callable[[], None] | None = None) -> list[CompareRow]:
    """:func:`channel_rows` on ``{0..n}`` with input ``pairs`` (default: neighbours one apart;
    ``"all"`` per record)."""
    objective = cost if isinstance(cost, ReleasedCost) else ReleasedCost(cost)
    eps = check_epsilons(epsilons)
    record = isinstance(pairs, str) and pairs == "all"
    size = check_n(n)[0]
    nb = None if record else InputPairs(ordered_pairs(pairs, size), directed=True)
    request = Request(space="channel", n=n, target=Target(eps[0], delta, notion), neighbourhood=nb,
                      unit="record" if record else None, cost=objective)
    return channel_rows(request, eps, mechanisms=mechanisms, progress=progress)


# ------------------------------------------------------------------------ one call
@dataclass(frozen=True, eq=False)
class Comparison:
    """A comparison's rows and what they were made for (docs/cli.md ``compare`` keys in
    :meth:`to_json`): ``form`` ``"noise"`` (:func:`at_target`, or :func:`at_cost` with a
    ``target_cost``), ``"channel"`` (:func:`channel_rows`) or ``"releases"`` (one
    :class:`~optnoise.design.releases.ReleasesComparison` per K)."""

    request: Request
    form: str
    rows: tuple
    boundary: str = "modulo"
    target_cost: float | None = None
    ks: tuple[int, ...] = ()
    curves: tuple = ()
    attack_fpr: float | None = None

    @property
    def ranked_by(self) -> str:
        """The cost the rows are ranked by, in words."""
        from .costs import describe_cost
        if self.form == "channel":
            objective = self.request.cost
            return describe_cost(objective) + ("" if objective.worst_case  # type: ignore[union-attr]
                                               else " (expected_cost: averaged over the prior on q)")
        return describe_cost(self.request.cost_name) + " (expected_cost: worst case over q)"

    def to_json(self) -> dict:
        r, notion = self.request, self.request.target.notion  # type: ignore[union-attr]
        if self.form == "releases":
            first = self.rows[0]
            t = r.target
            return {"n": r.n, "cost": first.cost, "space": r.space, "neighbourhood": r.neighbours.to_json(),
                    "epsilon": t.epsilon, "delta": t.delta, "releases": list(self.ks),  # type: ignore[union-attr]
                    "best": {str(c.k): c.best for c in self.rows},
                    "rows": [{"k": c.k, "epsilon": c.epsilon, "delta": c.delta, **row.to_json()}
                             for c in self.rows for row in c.rows]}
        if self.form == "channel":
            objective, record = r.cost, r.unit == "record"
            return {"n": r.n, "form": "channel", "cost": objective.name,  # type: ignore[union-attr]
                    "prior": objective.to_json()["prior"], "worst_case": objective.worst_case,  # type: ignore[union-attr]
                    "guarantee": notion, "notion": notion, "unit": self.unit,
                    "neighbourhood": {"pairs": "all", "directed": False} if record else r.neighbours.to_json(),
                    "ranked_by": self.ranked_by, "rows": [row.to_json() for row in self.rows]}
        out = {"n": r.n, "cost": r.cost_name, "boundary": self.boundary, "guarantee": notion, "notion": notion,
               "neighbourhood": r.neighbours.to_json(), "target_cost": self.target_cost,
               "rows": [row.to_json() for row in self.rows], "form": "noise", "ranked_by": self.ranked_by}
        if notion == "attack":
            out["target"] = r.target.to_json()  # type: ignore[union-attr]
        return out

    @property
    def unit(self) -> str:
        """Who is protected, in words."""
        return "every pair of answers (per record)" if self.request.unit == "record" else \
            self.request.neighbours.describe()


def comparison(request: Request, epsilons: Sequence[float] | None, *, mechanisms: Sequence[str] | None = None,
               boundary: str = "modulo", target_cost: float | None = None, releases: Sequence[int] | None = None,
               progress: Callable[[], None] | None = None, attack_fpr: float | None = None) -> Comparison:
    """One comparison for one request (``optnoise compare``): the mechanisms as channels for a
    ``space="channel"`` request; the K-release design against the baselines for each K of
    ``releases`` (one epsilon: the target after K releases); else the noises on ``{0..n}`` at
    each epsilon (or at ``target_cost``), or at the request's attack target (``epsilons``
    ``None``: :func:`at_attack_target`). Mechanisms default to every one the form has.
    ``attack_fpr``: each row also says the best attacker's exact TPR at that FPR (and mu) on
    its mechanism's trade-off curve, and the comparison keeps the curves (:func:`with_attack`);
    an attack target's rows always do, at its ``at_fpr`` unless ``attack_fpr`` is given."""
    attack_target = request.target.notion == "attack"  # type: ignore[union-attr]
    if attack_target:
        _check_attack_target(request, epsilons, releases, target_cost)
        attack_fpr = attack_fpr if attack_fpr is not None else (request.target.at_fpr  # type: ignore[union-attr]
                                                                if request.target.max_tpr is not None else 0.05)  # type: ignore[union-attr]
    reps: list | None = [] if attack_fpr is not None else None
    if request.space == "channel":
        for name, given in (("releases", releases is not None), ("boundary", boundary != "modulo"),
                            ("target_cost", target_cost is not None)):
            if given:
                raise InvalidParameterError(name, "given", "not with a channel (outputs stay in {0..n}; the line "
                                            "noises are clamped)")
        rows = channel_rows(request, epsilons, mechanisms=mechanisms or CHANNEL_DEFAULT,  # type: ignore[arg-type]
                            progress=progress, reps=reps)
        return _attack_readout(Comparison(request, "channel", tuple(rows)), reps, attack_fpr)
    if releases is not None:
        if attack_fpr is not None:
            raise InvalidParameterError("attack_fpr", "given", "not with releases (the attacker after K releases: "
                                        "verify --attack --compose K on a mechanism file)")
        return _releases(request, epsilons, mechanisms, boundary, target_cost, releases, progress)  # type: ignore[arg-type]
    if request.space != "cyclic":
        raise InvalidParameterError("space", request.space, "cyclic (integer only with releases)")
    names = mechanisms or MECHANISMS
    if attack_target:
        rows, reps = at_attack_target(request, mechanisms=names, boundary=boundary, progress=progress)
    elif target_cost is None:
        rows = at_target(request, epsilons, mechanisms=names, boundary=boundary, progress=progress,  # type: ignore[arg-type]
                         reps=reps)
    else:
        rows = at_cost(request, epsilons, target_cost, mechanisms=names, boundary=boundary, progress=progress,  # type: ignore[arg-type]
                       reps=reps)
    return _attack_readout(Comparison(request, "noise", tuple(rows), boundary, target_cost), reps, attack_fpr)


def _check_attack_target(request: Request, epsilons: Sequence[float] | None, releases: Sequence[int] | None,
                         target_cost: float | None) -> None:
    """What an attack target's comparison refuses: epsilons beside it, releases, a fixed cost."""
    for name, value, why in (("epsilons", epsilons, "no epsilons beside an attack target (it is the target)"),
                             ("releases", releases, "an epsilon target with releases (the attacker after K "
                                                    "releases: verify --attack --compose K)"),
                             ("target_cost", target_cost, "an epsilon target with a fixed cost")):
        if value is not None:
            raise InvalidParameterError(name, value, why)
    if request.space == "channel":
        t = request.target
        name = "max_tpr" if t.max_tpr is not None else "max_mu"  # type: ignore[union-attr]
        raise InvalidParameterError(name, getattr(t, name), "an (epsilon, delta) target for the channel form (its "
                                    "calibrated baselines take one; compare --form channel --attack reads each "
                                    "channel's attacker); the optimal channel for an attack target: optnoise design "
                                    "--form channel with the attack flags")


def _attack_readout(c: Comparison, reps: list | None, fpr: float | None) -> Comparison:
    """The comparison with each row's exact attacker readout at ``fpr`` and the curves (none
    without ``fpr``)."""
    if fpr is None or reps is None:
        return c
    rows, curves = with_attack(c.rows, reps, c.request.neighbours, fpr)
    return replace(c, rows=tuple(rows), curves=tuple(curves), attack_fpr=fpr)


def _releases(request: Request, epsilons: Sequence[float], mechanisms: Sequence[str] | None, boundary: str,
              target_cost: float | None, releases: Sequence[int], progress: Callable[[], None] | None) -> Comparison:
    """For each K: :func:`optnoise.design.releases.releases_comparison` at the one target."""
    from .design.releases import releases_comparison
    given = {"mechanisms": mechanisms is not None, "boundary": boundary != "modulo",
             "target_cost": target_cost is not None, "notion": request.target.notion != "dp"}  # type: ignore[union-attr]
    for name, bad in given.items():
        if bad:
            raise InvalidParameterError(name, "given", "not with releases (its mechanisms are fixed; approximate DP "
                                        "at a fixed target)")
    eps = check_epsilons(epsilons)
    if len(eps) != 1:
        raise InvalidParameterError("epsilons", ",".join(f"{e:g}" for e in eps),
                                    "one epsilon with releases (the target after K releases)")
    ks = [int(k) for k in releases]
    if not ks or any(isinstance(k, bool) or k < 1 for k in releases):
        raise InvalidParameterError("releases", list(releases), "integers K >= 1")
    out = []
    for k in ks:
        out.append(releases_comparison(request.replace(releases=k)))
        if progress:
            progress()
    return Comparison(request, "releases", tuple(out), ks=tuple(ks))


__all__ = ["CHANNEL_DEFAULT", "CHANNEL_MECHANISMS", "MECHANISMS", "CompareRow", "Comparison", "at_attack_target",
           "at_cost", "at_target", "with_attack",
           "build", "calibrate_to_cost", "channel_rows", "compare", "compare_at_cost", "compare_channels",
           "comparison", "costs", "released_error"]
