"""What a design gives back: one :class:`Design` -- the mechanism and its report.

Every problem a :class:`~optnoise.design.request.Request` can ask (the finite LP/MILP, the
optimal modulo noise, the channel LP/MILP, the K-release designs, randomized response, a
calibrated family) comes back as the same shape: ``design.mechanism`` (a
:class:`~optnoise.mechanism.Mechanism` with its neighbourhood and target) and
``design.report`` (:class:`DesignReport`), whose two privacy figures are named apart so
that nobody takes one for the other:

* ``report.analysis`` -- the tight *float* analysis of the designed masses at the target;
* ``report.certificate`` -- the *exact* certificate (rational arithmetic, rounded outward)
  of the quantized weights that :meth:`~optnoise.mechanism.Mechanism.sample` and
  ``release`` draw from: what is sampled is what is certified.

The solver's own account (the finite design's ``mip_gap``, the channel's repair, the K-fold
composition...) stays in ``report.details`` with the keys of docs/cli.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..analysis import Guarantee, guarantee
from ..mechanism import Mechanism
from ..target import Target

#: Keys of the design file kept at the top level for one version beside ``report`` (docs/cli.md).
DEPRECATED_KEYS: tuple[str, ...] = ("guarantee",)
#: Keys of the solvers' reports that the mechanism's own JSON holds (written once, by it).
MECHANISM_KEYS: tuple[str, ...] = ("pmf", "channel", "channel_shape", "blocks", "neighbourhood", "shape", "offset",
                                   "release", "exact")


class ProvenBound:
    """Mixin for a result with an ``expected_cost`` and a proven ``lower_bound`` (or ``None``)
    on the optimum of its request (:mod:`optnoise.design.bounds`)."""

    expected_cost: float
    lower_bound: float | None

    @property
    def gap(self) -> float | None:
        """Relative gap between ``expected_cost`` and the proven ``lower_bound`` (None without one)."""
        from .bounds import relative_gap
        return None if self.lower_bound is None else relative_gap(self.expected_cost, self.lower_bound)

    @property
    def optimal(self) -> bool:
        """Whether the proven gap is below :data:`~optnoise.design.bounds.GAP_TOLERANCE`."""
        from .bounds import GAP_TOLERANCE
        gap = self.gap
        return gap is not None and gap <= GAP_TOLERANCE


class DesignResult:
    """Mixin for the solvers' own results that hold a ``mechanism`` (with a target).

    ``analysis`` is the tight *float* analysis of the designed masses at the target;
    ``certificate`` the *exact* certificate of the quantized weights that are sampled.
    """

    mechanism: Mechanism

    @cached_property
    def analysis(self) -> Guarantee:
        """Float analysis of the designed masses at the target's epsilon (and delta)."""
        return analysis_of(self.mechanism)

    @property
    def certificate(self) -> Guarantee:
        """Exact certificate of the quantized weights that are sampled (rational, outward rounded)."""
        return self.mechanism.quantize().certificate

    def certify(self) -> Guarantee:
        """The same as :attr:`certificate` (deprecated name, kept for one version: a mechanism's
        :meth:`~optnoise.mechanism.Mechanism.certify` is the exact profile of its float masses,
        not of the quantized weights)."""
        return self.certificate

    def report_json(self) -> dict:
        """The solver's report keys (docs/cli.md), without the mechanism's."""
        raise NotImplementedError

    def privacy_json(self) -> dict:
        """``certificate``: the exact certificate of the quantized weights (the float analysis is
        in a design file's ``report``)."""
        return {"certificate": self.certificate.to_json()}

    def solver_json(self, neighbourhood: dict, **extra: Any) -> dict:
        """The keys of a solver that proves a lower bound on its optimum
        (:mod:`optnoise.design.bounds`), in the file's order: the deprecated ``guarantee`` (the
        target and ``neighbourhood``), ``certificate``, ``method``, ``optimal``,
        ``lower_bound``, ``gap``, ``gap_tolerance``, ``extra``, ``solve_seconds``."""
        from .bounds import GAP_TOLERANCE
        me: Any = self
        return {"guarantee": {"notion": me.notion, "epsilon": me.epsilon, "delta": me.delta,
                              "neighbourhood": neighbourhood},
                **self.privacy_json(), "method": me.method, "optimal": me.optimal, "lower_bound": me.lower_bound,
                "gap": me.gap, "gap_tolerance": GAP_TOLERANCE, **extra, "solve_seconds": me.solve_seconds}

    def to_json(self) -> dict:
        """The report keys and the mechanism's schema keys (a mechanism file)."""
        return {**self.report_json(), **self.mechanism.to_json()}


class OfTarget:
    """Mixin for solvers' results that hold the ``target`` they were solved for."""

    target: Target

    @property
    def epsilon(self) -> float:
        return self.target.epsilon

    @property
    def delta(self) -> float:
        return self.target.delta

    @property
    def notion(self) -> str:
        return self.target.notion


def analysis_of(mechanism: Mechanism) -> Guarantee:
    """The float analysis of a mechanism at its target (or without one)."""
    t = mechanism.target
    if t is None:
        return guarantee(mechanism.privacy)
    return guarantee(mechanism.privacy, t.epsilon, None if t.pure else t.delta)


def _detail(name: str, default: Any, doc: str) -> property:
    """A report field read from the solver's own result."""
    return property(lambda self: getattr(self.details, name, default), doc=doc)


@dataclass(frozen=True, eq=False)
class DesignReport:
    """What was minimised and how, the float analysis and the exact certificate.

    Attributes
    ----------
    request:
        The :class:`~optnoise.design.request.Request` answered.
    mechanism:
        The designed mechanism (the same object as :attr:`Design.mechanism`).
    details:
        The solver's own result (docs/cli.md keys of each ``design`` form): a
        :class:`~optnoise.design.finite.FiniteDesign`, a
        :class:`~optnoise.design.channel.ChannelDesign`...
    ``cost``, ``expected_cost``, ``method`` (``"lp"``, ``"milp"``, ``"lp-mirror"``,
    ``"closed-form"``, ``"calibrated"``...), ``optimal``, ``solve_seconds`` and ``notes`` are
    read from the solver's result, and so are ``lower_bound`` and ``gap`` (a proven lower bound
    of the optimal cost and the gap to it, ``None`` where none is known); ``analysis`` and
    ``certificate`` from the mechanism.
    """

    request: Any
    mechanism: Mechanism
    details: Any

    @property
    def problem(self) -> str:
        """Which problem answered the request (:attr:`~optnoise.design.request.Request.problem`)."""
        return self.request.problem

    cost = _detail("cost", None, "The objective's cost (its name, ``\"user\"`` for a vector or a matrix).")
    expected_cost = _detail("expected_cost", None, "The objective on the returned mechanism.")
    method = _detail("method", None, "How the answer was found (``lp``, ``milp``, ``closed-form``, ``calibrated``...).")
    optimal = _detail("optimal", None, "Whether it is proven optimal (``None``: not a question here).")
    solve_seconds = _detail("solve_seconds", None, "Seconds the solver took.")
    notes = _detail("notes", (), "What to know about the answer, in words.")

    @property
    def lower_bound(self) -> float | None:
        """A proven lower bound of the optimal cost, where the solver gives one (the K-release
        design's is over every noise whose K-fold composition meets the target: its convex
        surrogate's own bound is ``surrogate_lower_bound``, not this)."""
        return getattr(self.details, "lower_bound", None)

    @property
    def gap(self) -> float | None:
        """The relative gap of ``expected_cost`` above :attr:`lower_bound` (``None`` without one)."""
        return None if self.lower_bound is None else getattr(self.details, "gap", None)

    @property
    def analysis(self) -> Guarantee:
        """Float analysis of the designed masses at the target (the solver's result keeps it)."""
        return self.details.analysis

    @property
    def certificate(self) -> Guarantee:
        """Exact certificate of the quantized weights that are sampled (computed on first use,
        then kept by the mechanism)."""
        return self.mechanism.quantize().certificate

    def keys(self) -> dict:
        """Keys the request adds to the solver's report: for noise mod ``n + 1``, what its cost
        measured and the released value's error after wrap-around (worst and average over q);
        for a channel, who is protected (``unit``, in words)."""
        from ..costs import describe_cost, released_errors
        if self.problem == "channel":
            r = self.request
            return {"unit": "every pair of answers (per record)" if r.unit == "record" else r.neighbours.describe()}
        if self.problem not in ("finite", "modulo"):
            return {}
        pmf = self.mechanism.pmf
        out: dict[str, Any] = {"form": "noise", "cost_meaning": describe_cost(self.cost or "user")}
        if pmf.probs.ndim == 1:  # type: ignore[union-attr]
            prior = self.request.prior
            out["released_error"] = released_errors(pmf, prior)  # type: ignore[arg-type]
            out["prior"] = "uniform" if prior is None else self.request.loss[2].tolist()
            out["worst_case"] = self.request.loss_worst
        return out

    def to_json(self, own: dict | None = None) -> dict:
        """The report's keys; the two privacy figures without the evaluation point and the
        neighbourhood, which the mechanism's ``target`` and ``neighbourhood`` state once.
        ``own``: the solver's keys with :meth:`keys`, when already computed."""
        own = dict({**self.details.report_json(), **self.keys()} if own is None else own)
        for key in DEPRECATED_KEYS + MECHANISM_KEYS:
            own.pop(key, None)
        own.update({"problem": self.problem, "cost": self.cost, "expected_cost": self.expected_cost,
                    "method": self.method, "optimal": self.optimal, "solve_seconds": self.solve_seconds,
                    "notes": list(self.notes or ()), "analysis": self.analysis.to_json(point=False),
                    "certificate": self.certificate.to_json(point=False),
                    "lower_bound": self.lower_bound, "gap": self.gap})
        return own


@dataclass(frozen=True, eq=False)
class Design:
    """The answer to a :class:`~optnoise.design.request.Request`: ``mechanism`` and ``report``.

    ``to_json()`` is the design file (docs/cli.md, "design"): the mechanism's schema keys,
    the report under ``report`` (the float analysis in ``report.analysis``, the exact certificate
    of the quantized weights in ``report.certificate``), and -- for one version -- the solver's
    keys also at the top level, where ``certificate`` is the exact certificate (the float
    analysis has no top-level copy).
    """

    mechanism: Mechanism
    report: DesignReport

    @property
    def details(self) -> Any:
        """The solver's own result (what the ``design_*`` functions return)."""
        return self.report.details

    def to_json(self) -> dict:
        """A large dense channel is summarised (``Mechanism.to_json(summary=True)``); the file
        ``Mechanism.save`` writes lists it."""
        own = {**self.details.report_json(), **self.report.keys()}
        return {**own, "report": self.report.to_json(own), **self.mechanism.to_json(summary=True)}


__all__ = ["DEPRECATED_KEYS", "Design", "DesignReport", "DesignResult", "MECHANISM_KEYS", "OfTarget", "analysis_of"]
