"""What is asked: one :class:`Request`, validated once, in one place.

A privacy request says what a mechanism must do, not how to find it:

* **the space** of the released value: ``"cyclic"`` (noise added modulo ``n + 1`` on
  ``{0..n}``, or on a product of cycles when ``n`` is a tuple: a vector query),
  ``"integer"`` (noise on the integer line), ``"channel"`` (any row-stochastic ``P[q, y]``
  on ``{0..n}``: outputs stay in an ordered domain), ``"categories"`` (``n + 1`` unordered
  categories: randomized response);
* **the target** (:class:`~optnoise.target.Target`: ``epsilon``, ``delta``, the notion);
* **who must be protected**: a ``neighbourhood`` (query distances, or input pairs of a
  channel), *or* a privacy ``unit`` (``"record"``: any value may become any other;
  docs/architecture.md, "Privacy unit of a release");
* **the cost** minimised (a noise cost, or a cost of the released value with a ``prior`` or
  in the ``worst_case``), the number of ``releases`` K, structural ``constraints``;
* optionally a ``family`` to calibrate instead of an optimum to find, and how its
  line noise meets the domain (``boundary``);
* **how to solve it** (``formulation``, ``time_limit``, ``max_memory`` and the expert
  knobs of :class:`SolverOptions`).

Every rule that ties fields together is written once, here, as a field rule
(``constraints`` only on a channel, ``releases`` only under approximate DP...), and every
error names the Python field; the command line maps fields to its flags
(:mod:`optnoise.cli.errors`). :func:`optnoise.design.design` answers a request.

>>> from optnoise import Neighbourhood, Target
>>> r = Request(space="cyclic", n=23, target=Target(1.0), neighbourhood=Neighbourhood.sd(1), cost="circular-mse")
>>> r.problem, r.shape, r.neighbours.describe()
('finite', (24,), '{1} (symmetric)')
>>> Request(space="channel", n=4, target=Target(1.0), unit="record").neighbours.describe()
'20 ordered input pairs'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ..costs import Cost, ReleasedCost, check_prior, cost_vector, loss_matrix, parse_cost
from ..errors import InvalidParameterError
from ..neighbourhood import InputPairs, Neighbourhood, as_neighbourhood
from ..resources import check, distances_bytes
from ..target import Target, check_epsilon, check_integer

SPACES: tuple[str, ...] = ("cyclic", "integer", "channel", "categories")
UNITS: tuple[str, ...] = ("record", "value")
#: How line noise meets ``{0..n}`` (:data:`optnoise.families.baselines.BOUNDARIES`); on the
#: integer line only ``"clamp"`` (the output clamped to ``0..n``, post-processing).
BOUNDARIES: tuple[str, ...] = ("modulo", "clamp", "truncate")
MINIMIZE: tuple[str, ...] = ("cost", "delta")
FORMULATIONS: tuple[str, ...] = ("standard", "paper")
STRATEGIES: tuple[str, ...] = ("renyi", "single-release")
#: Structural constraints (Cormode, Kulkarni & Srivastava 2018, and ``circulant``).
#:
#: * ``row-monotone``: in row ``q``, ``P[q, y]`` is non-increasing as ``y`` moves away from
#:   ``q`` on either side (no "spikes" away from the truth);
#: * ``column-monotone``: in column ``y``, ``P[q, y]`` is non-increasing as ``q`` moves away
#:   from ``y`` on either side;
#: * ``fair``: ``P[q, q]`` is the same for every ``q`` (every answer reported correctly with
#:   the same probability);
#: * ``weak-honest``: ``P[q, q] >= P[q, y]`` for every ``y`` (the truth is a most likely output);
#: * ``unbiased``: ``sum_y y P[q, y] = q`` for every ``q``;
#: * ``circulant``: ``P[q, y]`` depends only on ``(y - q) mod (n + 1)``: exactly the channels
#:   of noise added modulo ``n + 1`` (Kadam et al.), so this gives the optimal modulo noise
#:   for any objective, including the worst case over ``q``.
#:
#: These are the definitions of optnoise's issue 15. Cormode et al.'s full text could not be
#: read while this was written; from memory it calls ``P[q, q] >= P[q, y]`` *row honesty* and
#: uses *weak honesty* for the weaker ``P[q, q] >= 1 / (n + 1)``: check before citing.
CONSTRAINTS: tuple[str, ...] = ("row-monotone", "column-monotone", "fair", "weak-honest", "unbiased", "circulant")
#: Orders at which the single-order Rényi designs for K releases are tried.
DESIGN_ORDERS: tuple[float, ...] = (1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0,
                                    48.0, 64.0, 96.0, 128.0, 192.0, 256.0)
#: Epsilon range of the finite LP/MILP: a larger target is designed at the largest (and says so);
#: a smaller one is refused (``e^eps - 1`` must exceed the solver's margins, 1e-10).
SOLVER_EPSILON_MIN, SOLVER_EPSILON_MAX = 1e-9, 20.0
#: Largest channel model written (coefficients of the constraint matrix, about 24 bytes each
#: while it is assembled, and HiGHS keeps its own copy): 5e7 is about 2.5 GB. The LPs that fit
#: take minutes already (docs/benchmarks.md, "Channels"); larger ones are refused up front.
MAX_NONZEROS = 50_000_000

#: The notions of a target each problem designs for (a pure target is met alike under either):
#: the one place a new notion of :mod:`optnoise.target` is admitted to a design. An ``attack``
#: target is designed as the cheapest of its ``(epsilon, delta)`` members
#: (:func:`optnoise.design.attack.design_attack`, called by :func:`optnoise.design.design`).
NOTIONS_OF: dict[str, tuple[str, ...]] = {
    "finite": ("dp", "pdp", "attack"), "modulo": ("dp", "pdp", "attack"), "channel": ("dp", "pdp", "attack"),
    "rr": ("dp", "pdp", "attack"), "calibrated": ("dp", "pdp", "attack"), "releases": ("dp",),
}

_N_ACCEPTED = "an integer n >= 1 (domain {0..n})"


@dataclass(frozen=True)
class SolverOptions:
    """Expert knobs of the solvers; the defaults are what every front door uses.

    Attributes
    ----------
    row_generation:
        Finite designs: solve over a growing subset of the rows (``True``), all at once
        (``False``), or by size (``None``; :func:`optnoise.design.finite.design_finite`).
    closed_form:
        Finite designs: use Kadam et al.'s Lemmas 3 and 4 where they are proven optimal.
    exploit_structure:
        Channels: the lossless reductions (``False`` writes the plain model, for cross-checks).
    orders, calibrate, strategies, calibration_steps, tol, half_width:
        K releases: the Rényi orders tried, whether the budget is calibrated by exact
        composition, which designs compete, bisection steps, the barrier's duality gap, and
        the integer line's window (:mod:`optnoise.design.releases`).
    """

    row_generation: bool | None = None
    closed_form: bool = True
    exploit_structure: bool = True
    orders: tuple[float, ...] = DESIGN_ORDERS
    calibrate: bool = True
    strategies: tuple[str, ...] = STRATEGIES
    calibration_steps: int = 10
    tol: float = 1e-9
    half_width: int | None = None

    def __post_init__(self) -> None:
        if self.row_generation not in (None, True, False):
            raise InvalidParameterError("row_generation", self.row_generation, "True, False or None (by size)")
        ords = sorted(_float(a, "orders", "finite Rényi orders > 1") for a in self.orders)
        if not ords or any(not (a > 1 and math.isfinite(a)) for a in ords):
            raise InvalidParameterError("orders", list(self.orders), "finite Rényi orders > 1")
        object.__setattr__(self, "orders", tuple(ords))
        strategies = tuple(self.strategies)
        if not strategies or set(strategies) - set(STRATEGIES):
            raise InvalidParameterError("strategies", list(strategies), "'renyi' and/or 'single-release'")
        object.__setattr__(self, "strategies", strategies)


def _float(value: object, parameter: str, accepted: str) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(parameter, value, accepted) from exc


def _integer(value: object, parameter: str, accepted: str, least: int = 1) -> int:
    """An integral number ``>= least`` (:func:`~optnoise.target.check_integer`: not a bool nor text)."""
    return check_integer(value, parameter=parameter, minimum=least, accepted=accepted)


def check_n(n: object, *, vector: bool = False) -> tuple[int, ...]:
    """The domain of ``n``: ``(n + 1,)``, or one size per coordinate of a vector ``n``."""
    if n is None:
        raise InvalidParameterError("n", None, _N_ACCEPTED + (", or a list of them" if vector else ""))
    if isinstance(n, (int, float, np.integer, np.floating)) or isinstance(n, bool):
        return (_integer(n, "n", _N_ACCEPTED) + 1,)
    if not vector:
        raise InvalidParameterError("n", n, _N_ACCEPTED)
    values = list(n)  # type: ignore[call-overload]
    if not values:
        raise InvalidParameterError("n", n, "an integer n >= 1 or a list of them")
    return tuple(_integer(v, "n", "integers n >= 1 (domain {0..n})") + 1 for v in values)


def unit_neighbourhood(space: str, n: int, *, ordered: bool = False,
                       max_memory: int | None = None) -> Neighbourhood | InputPairs:
    """The per-record neighbourhood of a mechanism on ``{0..n}``: every distance.

    Cyclic noise and categories: ``Neighbourhood.bd(n)`` (modulo ``n + 1``, every non-zero
    shift); noise on the integer line for a column spanning ``n + 1`` values: ``bd(n)``;
    a channel: every pair of inputs (``ordered``: as the channel LP lists them, both
    directions, ``(a, b)`` for every ``a`` then every ``b``). The memory they take is
    refused up front, naming ``n`` (:mod:`optnoise.resources`).
    """
    if space == "channel":
        check(distances_bytes(n * (n + 1)), parameter="n", value=n, what=f"the {n * (n + 1)} pairs of {n + 1} inputs",
              max_memory=max_memory)
        return InputPairs.complete(n + 1, directed=ordered)
    check(distances_bytes(n), parameter="n", value=n, what=f"a neighbourhood of {n} distances", max_memory=max_memory)
    return Neighbourhood.bd(n)


#: Above this ``n`` a per-record pure channel for ``abs-error`` or ``sq-error`` is designed as
#: block randomized response (:attr:`Request.record_blocks`), where the dense LP stops.
RECORD_BLOCKS_FROM = 100


@dataclass(frozen=True, eq=False)
class Request:
    """A privacy request: what a mechanism must guarantee and minimise (module docstring).

    Parameters
    ----------
    space:
        ``"cyclic"`` (default), ``"integer"``, ``"channel"`` or ``"categories"``.
    n:
        The domain ``{0..n}`` (a tuple for a vector query on the cycle; ``n + 1`` categories;
        on the integer line only with ``unit="record"`` or ``boundary="clamp"``: the span of
        the column's values).
    target:
        The :class:`~optnoise.target.Target` (for ``releases > 1``: after K releases; for
        ``minimize="delta"``: its epsilon).
    neighbourhood:
        Query distances (a :class:`~optnoise.neighbourhood.Neighbourhood`, or a list like ``[1, 2]``; for a channel they
        become the pairs ``q - q'`` in ``M``, without wrap-around) or input pairs of a channel
        (:class:`~optnoise.neighbourhood.InputPairs`, expanded by their own rule). Default:
        distance 1 (categories: any category may become any other).
    unit:
        ``"record"`` instead of a neighbourhood: every value may become any other.
        ``"value"``: the neighbourhood given (or the default).
    cost:
        A noise cost (:func:`optnoise.costs.cost_vector`: ``er``, ``mse``, ``circular-mse``,
        ``abs``, ``pow:K``... or one value per noise value) or a cost of the released value
        (:data:`optnoise.costs.RELEASED_COSTS`, a :class:`~optnoise.costs.ReleasedCost`, or an
        ``(n+1) x (n+1)`` loss matrix). Default: ``er`` on the cycle, ``abs-error`` for a
        channel, ``sq`` on the integer line.
    prior, worst_case:
        A released-value cost averaged over this prior on the true answer (default uniform),
        or in the worst case over it.
    releases:
        ``K``: the K-fold composition must meet the target (approximate DP).
    constraints:
        Structural constraints of a channel (:data:`CONSTRAINTS`).
    family, boundary:
        Calibrate this registered family (``optnoise families``) to the target instead of
        designing an optimum; ``boundary`` says how its line noise meets ``{0..n}``
        (:data:`BOUNDARIES`; on the integer line ``"clamp"`` clamps the output).
    minimize, max_cost:
        ``"delta"``: the smallest delta at expected cost ``<= max_cost`` (Kadam (15)).
    formulation:
        ``"paper"``: Kadam et al.'s MILP (13) as printed (PDP only).
    time_limit, max_memory:
        Seconds for the solver (reaching it is an error); bytes a model may take.
    max_seconds:
        Seconds a computation may be *estimated* to take before it starts (a channel LP,
        composing many releases): beyond it the request is refused at once
        (:class:`~optnoise.errors.TimeLimitError`; ``None``:
        :data:`optnoise.resources.DEFAULT_SECONDS`).
    solver:
        :class:`SolverOptions`.
    """

    space: str = "cyclic"
    n: int | tuple[int, ...] | None = None
    target: Target | None = None
    neighbourhood: Neighbourhood | InputPairs | None = None
    unit: str | None = None
    cost: Any = None
    prior: Sequence[float] | np.ndarray | None = None
    worst_case: bool = False
    releases: int = 1
    constraints: tuple[str, ...] = ()
    family: str | None = None
    boundary: str | None = None
    minimize: str = "cost"
    max_cost: float | None = None
    formulation: str = "standard"
    time_limit: float | None = None
    max_memory: int | None = None
    solver: SolverOptions = field(default_factory=SolverOptions)
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.neighbourhood is not None and not isinstance(self.neighbourhood, InputPairs):
            object.__setattr__(self, "neighbourhood", as_neighbourhood(self.neighbourhood))  # distances -> Neighbourhood
        _check_fields(self)
        _check_objective(self)
        _check_solving(self)
        _check_cost(self)
        if not self.record_blocks:   # a block design lists no pair (n (n + 1) of them per record)
            self.neighbours  # noqa: B018 - resolved (and checked against the domain) once, here

    @cached_property
    def record_blocks(self) -> bool:
        """Whether the per-record block design answers (:mod:`optnoise.design.block_design`):
        a channel per record, pure DP, ``n > RECORD_BLOCKS_FROM``, a prior-averaged
        ``abs-error`` or ``sq-error``, no structural constraint. Its pairs (every pair of
        answers) are never listed: :attr:`neighbours` is resolved only when asked."""
        t, cost = self.target, self.cost if self.cost is not None else "abs-error"
        name = cost.name if isinstance(cost, ReleasedCost) and not cost.worst_case else \
            cost.strip() if isinstance(cost, str) else None
        return (self.unit == "record" and self.space == "channel" and self.solver.exploit_structure
                and t is not None and t.notion != "attack" and t.delta == 0 and not self.constraints
                and not self.worst_case and isinstance(self.n, int) and self.n > RECORD_BLOCKS_FROM
                and self.releases == 1 and self.family is None and name in ("abs-error", "sq-error"))

    # ------------------------------------------------------------------ derived, once
    @cached_property
    def shape(self) -> tuple[int, ...]:
        """Sizes of the domain's coordinates (``(n + 1,)`` for a scalar ``n``); ``()`` on the
        integer line without ``n``."""
        if self.space == "integer" and self.n is None:
            return ()
        return check_n(self.n, vector=self.space == "cyclic")

    @property
    def size(self) -> int:
        """Number of values of the domain (``n + 1`` for a scalar ``n``)."""
        return int(np.prod(self.shape)) if self.shape else 0

    @property
    def largest(self) -> int:
        """``n`` of a scalar domain."""
        return self.shape[0] - 1

    @cached_property
    def problem(self) -> str:
        """Which problem answers the request: ``"calibrated"`` (a family), ``"rr"``
        (categories), ``"releases"`` (K > 1, or noise on the integer line: the design for K
        releases), ``"channel"``, ``"modulo"`` (noise mod n+1 for a released-value cost) or
        ``"finite"`` (noise mod n+1 for a noise cost)."""
        if self.family is not None:
            return "calibrated"
        if self.space == "categories":
            return "rr"
        if self.releases > 1 or self.space == "integer":
            return "releases"
        if self.space == "channel":
            return "channel"
        return "modulo" if self.released_cost else "finite"

    @property
    def released_cost(self) -> bool:
        """Whether the objective is a cost of the released value over a prior or in the worst
        case (a :class:`~optnoise.costs.ReleasedCost`, a loss matrix, or a ``prior`` or
        ``worst_case`` given). A released-value cost *name* alone on the cycle is averaged
        over a uniform answer, which is linear in the noise: a noise cost
        (:func:`~optnoise.costs.cost_vector`)."""
        c = self.cost
        return (self.prior is not None or self.worst_case or isinstance(c, ReleasedCost)
                or (np.ndim(c) == 2 and not isinstance(c, (str, Cost))))

    @property
    def _pairs_free(self) -> bool:
        """Whether a per-record channel is solved without a row per pair and output: pure DP (the
        per-column reduction), or ``(eps, delta)``-DP by the pure design mixed
        (:mod:`optnoise.design.record_mix`: no constraints, a prior-averaged cost)."""
        t = self.target
        return t.delta == 0 or (t.notion == "dp" and self.solver.exploit_structure and not self.constraints  # type: ignore[union-attr]
                                and not self.loss_worst)

    @cached_property
    def neighbours(self) -> Neighbourhood | InputPairs:
        """Who is protected: the neighbourhood given, or the unit's, or the default --
        checked against the domain. A channel's are always its ordered input pairs."""
        if self.unit == "record":
            if self.space == "channel" and self.problem == "channel" and \
                    4 * self.size ** 2 * (1 if self._pairs_free else self.size) > MAX_NONZEROS:
                raise InvalidParameterError("n", self.n, f"a smaller domain for a per-record channel: its model would "
                                            f"have more than {MAX_NONZEROS:.0e} coefficients")
            nb = unit_neighbourhood(self.space, self.largest, ordered=self.space == "channel",
                                    max_memory=self.max_memory)
        elif self.neighbourhood is not None:
            nb = self.neighbourhood
        elif self.space == "categories":
            nb = unit_neighbourhood(self.space, self.largest, max_memory=self.max_memory)
        else:
            nb = Neighbourhood.sd(1)
        if self.space == "channel":
            if isinstance(nb, Neighbourhood):
                nb = InputPairs.from_distances(nb, self.size)
            return InputPairs(tuple(nb.ordered(self.size)), directed=True)
        if isinstance(nb, InputPairs):
            if self.problem != "modulo":
                raise InvalidParameterError("neighbourhood", nb.describe(), "query distances (a Neighbourhood); input "
                                            "pairs only for a channel or the modulo noise of a released-value cost")
            nb.ordered(self.size)
            return nb
        if self.space == "integer":
            nb.integer_shifts()
        else:
            nb.cyclic_shifts(self.shape)
        return nb

    @cached_property
    def loss(self) -> tuple[str, np.ndarray | None, np.ndarray | None]:
        """``(cost name, cost vector or loss matrix, prior)`` of the objective: a noise cost's
        vector ``rho`` (cyclic), a released-value cost's ``L[q, y]`` with its normalised prior
        (modulo noise, channels); the integer line and calibrations have no array here.

        Built when a solver first asks, after it has refused a model too large for
        ``max_memory``: the cost's kind was checked when the request was made."""
        kind = self.problem
        if kind in ("modulo", "channel"):
            name, L, prior, _ = released_objective(self.cost if self.cost is not None else "abs-error", self.prior,
                                                   self.worst_case, self.size)
            return name, L, prior
        if kind in ("finite",) or (kind == "releases" and self.space == "cyclic"):
            cost = self.cost if self.cost is not None else ("er" if kind == "finite" else "circular-mse")
            name = cost if isinstance(cost, str) else cost.name if isinstance(cost, Cost) else "user"
            rho = cost_vector(cost, self.shape)
            if not np.all(np.isfinite(rho)):
                raise InvalidParameterError("cost", name, "a cost with finite values on the domain")
            return name, rho, None
        if kind == "releases":
            return parse_cost(self.cost if self.cost is not None else "sq").name, None, None
        return ("er" if kind == "rr" else "none"), None, None

    @property
    def cost_name(self) -> str:
        """The name of the objective's cost (``"user"`` for a vector or a matrix)."""
        return self.loss[0]

    def replace(self, **changes: Any) -> "Request":
        """The same request with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The request in words and numbers (what a design file records of what was asked)."""
        out: dict[str, Any] = {"space": self.space, "n": self.n if not isinstance(self.n, tuple) else list(self.n),
                               "target": self.target.to_json() if self.target else None,
                               "neighbourhood": self.neighbours.to_json(), "unit": self.unit,
                               "cost": self.cost_name, "releases": self.releases}
        if self.problem in ("modulo", "channel"):
            out["prior"] = "uniform" if self.prior is None else np.asarray(self.loss[2]).tolist()
            out["worst_case"] = bool(self.loss_worst)
        extra = {"constraints": list(self.constraints), "family": self.family, "boundary": self.boundary,
                 "minimize": self.minimize if self.minimize != "cost" else None, "max_cost": self.max_cost}
        return {**out, **{k: v for k, v in extra.items() if v}}

    @property
    def loss_worst(self) -> bool:
        """Whether the objective is the worst case over the true answer."""
        return bool(self.worst_case or (isinstance(self.cost, ReleasedCost) and self.cost.worst_case))


# ---------------------------------------------------------------------- field rules
def _check_fields(r: Request) -> None:
    """The fields one by one, and which space takes which."""
    if r.space not in SPACES:
        raise InvalidParameterError("space", r.space, "'cyclic', 'integer', 'channel' or 'categories'")
    if not isinstance(r.target, Target):
        raise InvalidParameterError("target", r.target, "a Target(epsilon, delta, notion)")
    if r.space == "integer" and r.n is not None and r.unit != "record" and r.boundary != "clamp":
        raise InvalidParameterError("n", r.n, "no n for noise on the integer line, except with unit='record' or "
                                    "boundary='clamp' (the span of the values)")
    if r.space == "integer" and r.n is None and (r.unit == "record" or r.boundary == "clamp"):
        raise InvalidParameterError("n", None, "the span of the values (upper - lower) with unit='record' or "
                                    "boundary='clamp' on the integer line")
    r.shape  # noqa: B018 - checks n
    if len(r.shape) > 1 and (r.releases != 1 or r.family is not None or r.released_cost):
        raise InvalidParameterError("n", list(r.shape), "one integer n for K releases, a family or a released-value "
                                    "cost (vector queries: noise costs)")
    if len(r.shape) > 1 and r.neighbourhood is None and r.unit is None:
        raise InvalidParameterError("neighbourhood", None, "vector distances like ((1, 0), (0, 1)) for a vector query")
    if r.unit is not None and r.unit not in UNITS:
        raise InvalidParameterError("unit", r.unit, "'record' (any value may become any other) or 'value'")
    if r.unit == "record" and r.neighbourhood is not None:
        raise InvalidParameterError("unit", r.unit, "either unit='record' or a neighbourhood, not both")
    if r.neighbourhood is not None and not isinstance(r.neighbourhood, (Neighbourhood, InputPairs)):
        raise InvalidParameterError("neighbourhood", r.neighbourhood, "a Neighbourhood or InputPairs")
    _integer(r.releases, "releases", "an integer number of releases K >= 1")
    constraints = tuple(dict.fromkeys(r.constraints))
    for c in constraints:
        if c not in CONSTRAINTS:
            raise InvalidParameterError("constraints", c, "any of " + ", ".join(CONSTRAINTS))
    object.__setattr__(r, "constraints", constraints)
    if constraints and r.space != "channel":
        raise InvalidParameterError("constraints", ",".join(constraints), "constraints only on a channel "
                                    "(space='channel')")
    if r.family is not None:
        _check_family(r)
    elif r.boundary is not None:
        raise InvalidParameterError("boundary", r.boundary, "a boundary only with a family to calibrate")


def _check_family(r: Request) -> None:
    if not isinstance(r.family, str) or not r.family.strip() or ":" in r.family:
        raise InvalidParameterError("family", r.family, "the name of a calibrated family (geometric, "
                                    "discrete-gaussian, exponential, rr)")
    if r.boundary is not None and r.boundary not in BOUNDARIES:
        raise InvalidParameterError("boundary", r.boundary, ", ".join(BOUNDARIES))
    if r.space == "integer" and r.boundary not in (None, "clamp"):
        raise InvalidParameterError("boundary", r.boundary, "'clamp' (or none) on the integer line")
    if r.releases != 1 or r.cost is not None or r.constraints or r.minimize != "cost":
        raise InvalidParameterError("family", r.family, "a family is calibrated to one release's target: no "
                                    "releases, cost, constraints or minimize")


def _check_objective(r: Request) -> None:
    """What is minimised, and what each objective allows."""
    notions = NOTIONS_OF[r.problem]
    if r.target.notion not in notions:  # type: ignore[union-attr]
        where = "K releases (approximate DP, minimum cost)" if r.problem == "releases" else f"a {r.problem} design"
        raise InvalidParameterError("notion", r.target.notion,  # type: ignore[union-attr]
                                    " or ".join(repr(x) for x in notions) + f" for {where}")
    if r.minimize not in MINIMIZE:
        raise InvalidParameterError("minimize", r.minimize, "'cost' or 'delta'")
    if r.minimize == "delta":
        if r.problem != "finite":
            raise InvalidParameterError("minimize", r.minimize, "'delta' only for noise mod n+1 and a noise cost, "
                                        "one release")
        if r.max_cost is None or isinstance(r.max_cost, bool) or not math.isfinite(_float(r.max_cost, "max_cost", "")) \
                or float(r.max_cost) < 0:
            raise InvalidParameterError("max_cost", r.max_cost, "a cost bound >= 0 (needed with minimize='delta')")
        if not r.target.pure:  # type: ignore[union-attr]
            raise InvalidParameterError("delta", r.target.delta,  # type: ignore[union-attr]
                                        "no delta with minimize='delta' (delta is the objective)")
    elif r.max_cost is not None:
        raise InvalidParameterError("max_cost", r.max_cost, "only with minimize='delta'")
    if r.space == "categories" and r.cost is not None:
        raise InvalidParameterError("cost", r.cost, "no cost for categories (randomized response is optimal)")
    if (r.prior is not None or r.worst_case) and r.problem not in ("modulo", "channel"):
        raise InvalidParameterError("prior" if r.prior is not None else "worst_case", "given",
                                    "a prior or the worst case only for a released-value cost, one release")
    if r.problem == "releases":
        if r.space not in ("cyclic", "integer"):
            raise InvalidParameterError("releases", r.releases, "K releases of noise on the cycle or the integer line")
        if r.unit is not None:
            raise InvalidParameterError("unit", r.unit, "a neighbourhood (no unit) with releases > 1")


def _check_cost(r: Request) -> None:
    """The cost's kind, without building its arrays (``n`` may be too large for them)."""
    kind, cost = r.problem, r.cost
    if cost is None or kind in ("calibrated", "rr"):
        return
    if kind in ("modulo", "channel"):
        if isinstance(cost, ReleasedCost):
            if r.prior is not None or r.worst_case:
                raise InvalidParameterError("prior", "given", "prior/worst_case inside the ReleasedCost, not beside it")
            cost.weights(r.size)
        elif isinstance(cost, str):
            ReleasedCost(cost)   # a name of a released-value cost
        elif np.shape(cost) != (r.size, r.size) or not np.all(np.isfinite(np.asarray(cost, dtype=float))):
            raise InvalidParameterError("cost", f"shape {np.shape(cost)}", f"a released-value cost name or a finite "
                                        f"{r.size} x {r.size} loss matrix")
        if r.prior is not None:
            check_prior(r.prior, r.size)
        return
    if isinstance(cost, ReleasedCost) or (isinstance(cost, str) and cost.strip() in ("abs-error", "sq-error")):
        if r.space != "cyclic":
            raise InvalidParameterError("cost", cost, "a noise cost on the integer line (sq, abs, pow:K, er)")
        return
    if isinstance(cost, (str, Cost)) or callable(cost):
        parse_cost(cost)
    elif r.space == "cyclic" and np.size(cost) != r.size:
        raise InvalidParameterError("cost", f"{np.size(cost)} values", f"{r.size} finite costs, one per noise value")


def _check_solving(r: Request) -> None:
    """How it may be solved."""
    if r.formulation not in FORMULATIONS:
        raise InvalidParameterError("formulation", r.formulation, "'standard' or 'paper'")
    if r.formulation == "paper" and (r.target.notion != "pdp" or r.problem != "finite"):  # type: ignore[union-attr]
        raise InvalidParameterError("formulation", r.formulation, "'paper' only with notion 'pdp' (noise mod n+1)")
    if r.time_limit is not None:
        if isinstance(r.time_limit, bool) or not _float(r.time_limit, "time_limit", "a number of seconds > 0") > 0:
            raise InvalidParameterError("time_limit", r.time_limit, "a number of seconds > 0")
        if r.problem == "releases":
            raise InvalidParameterError("time_limit", r.time_limit, "no time limit with releases > 1")
    if r.max_seconds is not None:
        from ..resources import parse_seconds
        parse_seconds(r.max_seconds)   # a number of seconds > 0 (or "5m")
    if not isinstance(r.solver, SolverOptions):
        raise InvalidParameterError("solver", r.solver, "a SolverOptions")
    if r.problem == "finite" and r.target.notion != "attack":  # type: ignore[union-attr]  # (members: eps >= 1e-6)
        check_epsilon(r.target.epsilon, within=(SOLVER_EPSILON_MIN, math.inf),  # type: ignore[union-attr]
                      accepted=f"a real number >= {SOLVER_EPSILON_MIN:g} for a solver design (below, e^eps - 1 is "
                               "within the solver's tolerances)")
    if r.solver.half_width is not None and r.space != "integer":
        raise InvalidParameterError("half_width", r.solver.half_width, "a window only on the integer line")


def released_objective(cost: Any, prior: Any, worst_case: bool, size: int) -> tuple[str, np.ndarray, np.ndarray, bool]:
    """``(name, L, prior, worst_case)`` of a named released-value cost, a
    :class:`~optnoise.costs.ReleasedCost` (with its own prior and worst case) or a loss matrix."""
    if isinstance(cost, ReleasedCost):
        if prior is not None or worst_case:
            raise InvalidParameterError("prior", "given", "prior/worst_case inside the ReleasedCost, not beside it")
        return cost.name, cost.matrix(size - 1), cost.weights(size), cost.worst_case
    if isinstance(cost, str):
        return cost.strip(), loss_matrix(cost, size - 1), check_prior(prior, size), bool(worst_case)
    L = np.asarray(cost, dtype=float)
    if L.shape != (size, size) or not np.all(np.isfinite(L)):
        raise InvalidParameterError("cost", f"shape {L.shape}", f"a released-value cost name or a finite {size} x "
                                                                f"{size} loss matrix")
    return "user", L, check_prior(prior, size), bool(worst_case)


__all__ = ["BOUNDARIES", "CONSTRAINTS", "DESIGN_ORDERS", "FORMULATIONS", "MINIMIZE", "NOTIONS_OF", "Request",
           "SOLVER_EPSILON_MAX",
           "MAX_NONZEROS", "SOLVER_EPSILON_MIN", "SPACES", "STRATEGIES", "SolverOptions", "UNITS", "check_n",
           "released_objective", "unit_neighbourhood"]
