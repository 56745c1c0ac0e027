"""One cost vocabulary: what a noise value costs, on the cycle ``{0..n}`` and on ``Z``.

A cost is a function ``L`` of the noise value; the expected cost of a PMF is linear in
it (Kadam et al. 2024 (13a); Geng & Viswanath (78)). Names (docs/architecture.md, "Costs"):

=====================  ==============================================================
``er``                 error rate, ``[x != 0]`` (any coordinate non-zero for vectors)
``abs``                ``|x|``; on the cycle ``x`` in ``0..n``
``sq``                 ``x^2``; on the cycle ``x`` in ``0..n``: Kadam et al.'s "MSE", the
                       noise second moment -- aliases ``mse`` and ``noise-second-moment``
``pow:K``              ``|x|^K`` for real ``K > 0``
``circular-mse``       ``min(x, n+1-x)^2`` (cycle only)
``circular-abs``       ``min(x, n+1-x)`` (cycle only)
a callable             a vectorised user function ``L(x)``
a vector               (cycle only) one cost per noise value, :func:`cost_vector`
=====================  ==============================================================

For vector noise on a product of cycles the per-coordinate costs are summed. The
reported name is the one the caller used (``mse`` stays ``mse``).

**Costs of the released value** (issue 15): on a finite ordered domain ``{0..n}`` a user
feels the error of the released value ``y`` against the true answer ``q``, a loss matrix
``L[q, y]`` (:func:`loss_matrix`):

=====================  ==============================================================
``er``                 ``[y != q]`` (for modulo noise the same as the noise cost ``er``)
``abs-error``          ``|y - q|``; for modulo noise *after* wrap-around
``sq-error``           ``(y - q)^2``; for modulo noise after wrap-around
``circular-abs``       distance from ``y`` to ``q`` around the cycle (= the noise cost)
``circular-mse``       its square (= the noise cost)
=====================  ==============================================================

averaged over a prior on ``q`` (uniform by default) or in the worst case over ``q``
(:class:`ReleasedCost`). The prior-averaged error of modulo noise is linear in its PMF
(:func:`modulo_cost_vector`), so ``abs-error`` and ``sq-error`` are also noise costs of
:func:`cost_vector` (uniform prior).

>>> cost_vector("circular-mse", (5,)).tolist()
[0.0, 1.0, 4.0, 4.0, 1.0]
>>> parse_cost("pow:3").power
3.0
>>> loss_matrix("abs-error", 2).tolist()
[[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]
>>> cost_vector("abs-error", (3,)).round(4).tolist()    # eta = 1: errors 1, 1, 2 (q = 2 wraps to 0)
[0.0, 1.3333, 1.3333]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .errors import InvalidParameterError
from .pmf import Channel, CyclicPMF, IntegerPMF, channel_matrix
from .specs import parse_spec

#: Named costs of the finite-domain design (docs/cli.md ``design --cost``).
FINITE_COSTS: tuple[str, ...] = ("er", "mse", "noise-second-moment", "circular-mse", "abs", "circular-abs",
                                 "sq", "pow:K")
#: Named costs on the integer and real line (docs/cli.md ``staircase --cost``).
LINE_COSTS: tuple[str, ...] = ("abs", "sq", "pow:K", "er", "mse")
_ACCEPTED = "er, abs, sq (alias mse, noise-second-moment), pow:K with a real K > 0, circular-mse, circular-abs"


@dataclass(frozen=True)
class Cost:
    """A cost function ``L(x)`` of the noise value.

    ``power`` is ``k`` for the moment costs ``|x|^k`` (``abs`` is 1, ``sq`` is 2), which
    have closed-form tail sums; ``None`` otherwise. ``circular`` costs measure the
    distance around the cycle and exist only on a finite cyclic domain.
    """

    name: str
    power: float | None
    fn: Callable[[np.ndarray], np.ndarray]
    circular: bool = False

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        if self.circular:
            raise InvalidParameterError("cost", self.name, "a cost on the integer line (" + ", ".join(LINE_COSTS) + ")")
        return np.asarray(self.fn(np.asarray(x, dtype=np.float64)), dtype=np.float64)

    def on_cycle(self, x: np.ndarray, size: int) -> np.ndarray:
        """The cost of noise values ``x`` in ``0..size-1`` on a cycle of ``size`` values."""
        x = np.asarray(x, dtype=np.float64)
        if self.circular:
            x = np.minimum(x, size - x)
        return np.asarray(self.fn(x), dtype=np.float64)


def power_cost(k: float, name: str | None = None) -> Cost:
    """``L(x) = |x|^k`` for ``k > 0``."""
    if isinstance(k, bool) or not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
        raise InvalidParameterError("cost", f"pow:{k}", "pow:K with a real K > 0")
    k = float(k)
    default = {1.0: "abs", 2.0: "sq"}.get(k, f"pow:{k:g}")
    return Cost(name or default, k, lambda x: np.abs(x) ** k)


def _error_rate(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x) != 0).astype(np.float64)


_NAMED: dict[str, Callable[[], Cost]] = {
    "er": lambda: Cost("er", None, _error_rate),
    "abs": lambda: power_cost(1),
    "sq": lambda: power_cost(2),
    "mse": lambda: power_cost(2, "mse"),
    "noise-second-moment": lambda: power_cost(2, "noise-second-moment"),
    "circular-abs": lambda: Cost("circular-abs", 1.0, np.abs, circular=True),
    "circular-mse": lambda: Cost("circular-mse", 2.0, np.square, circular=True),
}


def parse_cost(spec: str | Cost | Callable) -> Cost:
    """A :class:`Cost` from a name (table above), ``pow:K``, a :class:`Cost` or a callable."""
    if isinstance(spec, Cost):
        return spec
    if callable(spec):
        return Cost(getattr(spec, "__name__", "callable"), None, spec)
    if not isinstance(spec, str):
        raise InvalidParameterError("cost", spec, _ACCEPTED)
    text = spec.strip()
    if text in _NAMED:
        return _NAMED[text]()
    parsed = parse_spec(text, parameter="cost")
    if parsed.name == "pow":
        parsed.count(1, 1, parameter="cost", accepted="pow:K with a real K > 0")
        return power_cost(parsed.number(0, parameter="cost", accepted="pow:K with a real K > 0"))
    raise InvalidParameterError("cost", spec, _ACCEPTED)


def cost_vector(cost: str | Cost | Callable | Sequence[float] | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Cost ``rho[eta]`` of every noise value of a cyclic domain (flattened, C order).

    ``shape`` is ``(n1 + 1, n2 + 1, ...)``. Named costs act per coordinate on the
    representatives ``0..n_i`` (circular ones on the distance around the cycle) and are
    summed over coordinates; ``er`` is 1 unless every coordinate is 0. ``abs-error`` and
    ``sq-error`` (or a :class:`ReleasedCost` averaged over a prior) are the released value's
    error after wrap-around, :func:`released_noise_vector`. A sequence is a user cost, one
    finite value per noise value.
    """
    if isinstance(cost, ReleasedCost) or (isinstance(cost, str) and cost.strip() in ("abs-error", "sq-error")):
        return released_noise_vector(cost if isinstance(cost, ReleasedCost) else ReleasedCost(cost.strip()), shape)
    if isinstance(cost, (str, Cost)) or callable(cost):
        c = parse_cost(cost)  # type: ignore[arg-type]
        grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
        if c.name == "er":
            rho = np.ones(shape)
            rho[(0,) * len(shape)] = 0.0
            return rho.ravel()
        rho = np.zeros(shape)
        for g, s in zip(grids, shape):
            rho = rho + c.on_cycle(g, s)
        return rho.ravel()
    vec = np.asarray(cost, dtype=float)
    size = int(np.prod(shape))
    if vec.size != size or not np.all(np.isfinite(vec)):
        raise InvalidParameterError("cost", f"{vec.size} values", f"{size} finite costs, one per noise value")
    return vec.ravel()


def wrapped_squared_error(probs: np.ndarray) -> tuple[float, float]:
    """Squared error of the *released* value ``(q + eta) mod (n+1)`` as an integer.

    Returns ``(worst over q, average over uniform q)``. For ``q + eta > n`` the
    error is ``eta - (n + 1)``, not ``eta``. Vector noise: per-coordinate errors
    are summed (computed on the marginals).
    """
    f = np.asarray(probs, dtype=float)
    worst = avg = 0.0
    for axis in range(f.ndim):
        m = f.sum(axis=tuple(a for a in range(f.ndim) if a != axis))
        size = m.size
        eta = np.arange(size, dtype=float)
        m2 = float(np.dot(m, eta ** 2))
        # E_q = m2 - sum_{eta > n - q} m(eta) (2 eta N - N^2)
        gain = m * (2 * eta * size - size ** 2)
        suffix = np.concatenate((np.cumsum(gain[::-1])[::-1], [0.0]))  # suffix[j] = sum_{eta >= j}
        q = np.arange(size)
        e_q = m2 - suffix[size - q]
        worst += float(e_q.max())
        avg += float(e_q.mean())
    return worst, avg


def shifted_power_sum(ratio: float, k: float, start: float, step: float) -> float:
    """``sum_{b>=1} ratio^b (start + b*step)^k`` for ``start + step > 0``, ``step > 0``.

    Closed form ``step^k ratio Phi(ratio, -k, 1 + start/step)`` with the Lerch
    transcendent ``Phi`` (exact up to mpmath's working precision).
    """
    if k == 0:
        return ratio / (1.0 - ratio)
    if float(k).is_integer():
        # binomial expansion with Li_{-j}(ratio) = sum_b b^j ratio^b (a rational function)
        k = int(k)
        return float(sum(math.comb(k, j) * start ** (k - j) * step ** j * _neg_polylog(j, ratio)
                         for j in range(k + 1)))
    import mpmath

    return float(step ** k * ratio * mpmath.lerchphi(ratio, -k, 1.0 + start / step))


def _neg_polylog(j: int, z: float) -> float:
    """``Li_{-j}(z) = sum_{b>=1} b^j z^b = z A_j(z) / (1 - z)^(j+1)`` for integer ``j >= 0``,
    with the Eulerian polynomial ``A_j`` (``A_0 = 1``)."""
    if j == 0:
        return z / (1.0 - z)
    coeffs = [1]  # Eulerian numbers A(j, i), i = 0..j-1, by the usual recurrence
    for n in range(2, j + 1):
        coeffs = [(i + 1) * (coeffs[i] if i < len(coeffs) else 0) + (n - i) * (coeffs[i - 1] if i >= 1 else 0)
                  for i in range(n)]
    poly = sum(c * z ** i for i, c in enumerate(coeffs))
    return z * poly / (1.0 - z) ** (j + 1)


def lerch_nonneg(z: float, p: float, c: float) -> float:
    """``sum_{n>=0} z^n (n + c)^p`` for ``p >= 0``, ``c >= 0`` (``0^0 = 1``).

    Integer ``p``: binomial expansion over ``Li_{-j}``; otherwise mpmath's Lerch
    transcendent ``Phi(z, -p, c)``.
    """
    if float(p).is_integer():
        p = int(p)
        total = c ** p / (1.0 - z) if p > 0 or c > 0 else 1.0 / (1.0 - z)
        for j in range(1, p + 1):
            total += math.comb(p, j) * c ** (p - j) * _neg_polylog(j, z)
        return total
    import mpmath

    if c == 0:
        return float(z * mpmath.lerchphi(z, -p, 1))
    return float(mpmath.lerchphi(z, -p, c))


def _numeric_tail_sum(cost: Cost, ratio: float, positions: np.ndarray, step: int) -> np.ndarray:
    """``sum_{b>=1} ratio^b L(x + b*step)`` for each ``x`` in ``positions`` (numerically)."""
    out = np.zeros(positions.size)
    chunk = 512
    start = 1
    while True:
        b = np.arange(start, start + chunk, dtype=np.float64)
        w = np.power(ratio, b)
        terms = cost(positions[:, None] + step * b[None, :]) * w[None, :]
        part = terms.sum(axis=1)
        out += part
        if np.all(part <= 1e-18 * np.maximum(out, 1e-300)) or w[-1] == 0.0 or start > 10 ** 7:
            return out
        start += chunk


def tail_sums(cost: Cost, ratio: float, first: np.ndarray, step: int) -> np.ndarray:
    """``sum_{b>=1} ratio^b L(x + b*step)`` for each ``x`` in ``first``.

    The tail of a block ``first`` continuing with period ``|step|`` (``step > 0`` to the
    right, ``< 0`` to the left). Moment costs use :func:`shifted_power_sum` in closed form
    when every tail point lies on the far side of 0; anything else is summed numerically.
    """
    first = np.asarray(first, dtype=np.float64)
    sign = 1.0 if step > 0 else -1.0
    if cost.power is not None and np.all(sign * (first + step) > 0):
        return np.array([shifted_power_sum(ratio, cost.power, sign * x, abs(step)) for x in first])
    return _numeric_tail_sum(cost, ratio, first, step)


def expected_cost(pmf: IntegerPMF, cost: str | Cost | Callable) -> float:
    """``sum_i L(i) P(i)`` over all of ``Z``, tails included exactly (Geng & Viswanath (78))."""
    c = parse_cost(cost)
    if c.name == "er":
        return float(1.0 - pmf.mass(np.array([0]))[0])
    k = np.arange(pmf.lo, pmf.hi + 1, dtype=np.float64)
    total = float(pmf.probs @ c(k))
    if pmf.right_tail is not None:
        t = pmf.right_tail
        total += float(pmf.probs[-t.period:] @ tail_sums(c, t.ratio, k[-t.period:], t.period))
    if pmf.left_tail is not None:
        t = pmf.left_tail
        total += float(pmf.probs[:t.period] @ tail_sums(c, t.ratio, k[:t.period], -t.period))
    return total


# ============================================================ costs of the released value
#: Costs of the released value ``y`` against the true answer ``q`` on ``{0..n}``.
RELEASED_COSTS: tuple[str, ...] = ("er", "abs-error", "sq-error", "circular-abs", "circular-mse")
_RELEASED_ACCEPTED = ("a cost of the released value: er, abs-error, sq-error, circular-abs or circular-mse "
                      "(mse is the noise's second moment, not an error of the released value: use sq-error)")
#: name -> (power of the distance, 0 for the error rate; whether the distance goes around the cycle)
_RELEASED: dict[str, tuple[int, bool]] = {"er": (0, False), "abs-error": (1, False), "sq-error": (2, False),
                                          "circular-abs": (1, True), "circular-mse": (2, True)}

#: What each cost measures, in words (reports and tables say which cost they rank by).
_MEANINGS: dict[str, str] = {
    "er": "error rate P(y != q) of the released value (for additive noise: P(noise != 0))",
    "abs-error": "absolute error |y - q| of the released value (for noise mod n+1: after wrap-around)",
    "sq-error": "squared error (y - q)^2 of the released value (for noise mod n+1: after wrap-around)",
    "circular-abs": "distance from the released value to the true answer around the cycle",
    "circular-mse": "squared distance from the released value to the true answer around the cycle",
    "abs": "first moment of the noise, sum |eta| f(eta) with eta in 0..n; not the released value's error "
           "(that is abs-error)",
    "sq": "noise second moment, sum eta^2 f(eta) with eta in 0..n (Kadam et al.'s 'MSE'); not the squared error "
          "of the released value (that is sq-error)",
}
_MEANINGS["mse"] = _MEANINGS["noise-second-moment"] = _MEANINGS["sq"]


def describe_cost(cost: str | Cost | object) -> str:
    """What a cost measures, in words: ``"name: meaning"`` (noise or released-value cost)."""
    name = cost if isinstance(cost, str) else cost.name if isinstance(cost, (Cost, ReleasedCost)) else "user"
    if isinstance(cost, ReleasedCost):
        return f"{cost.label}: {_MEANINGS[cost.name]}"
    if name in _MEANINGS:
        return f"{name}: {_MEANINGS[name]}"
    if isinstance(name, str) and name.startswith("pow:"):
        return (f"{name}: moment sum |eta|^K f(eta) of the noise with eta in 0..n on the cycle; not a "
                "released-value error")
    return f"{name}: a user cost, one value per noise value"


def released_counterpart(cost: str) -> str | None:
    """The released-value cost that a noise cost is mistaken for: ``mse`` -> ``sq-error``,
    ``abs`` -> ``abs-error``; released costs are their own; ``None`` for ``pow:K`` and users'."""
    name = cost.strip() if isinstance(cost, str) else ""
    if name in _RELEASED:
        return name
    return {"abs": "abs-error", "sq": "sq-error", "mse": "sq-error", "noise-second-moment": "sq-error"}.get(name)


def _check_size(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError("n", n, "an integer n >= 1 (domain {0..n})")
    return int(n) + 1


def loss_matrix(cost: str, n: int, *, cyclic: bool = False) -> np.ndarray:
    """The loss ``L[q, y]`` of releasing ``y`` when the true answer is ``q``, on ``{0..n}``.

    ``d = |y - q|``, or the distance around the cycle ``min(d, n + 1 - d)`` for the
    ``circular-*`` costs or with ``cyclic=True``. ``er``: ``[d != 0]``; ``abs-error``,
    ``circular-abs``: ``d``; ``sq-error``, ``circular-mse``: ``d^2``. Applied to the channel
    of noise added modulo ``n + 1`` the plain (non-cyclic) losses are the error of the
    released value *after* wrap-around: what a user of an ordered domain sees.
    """
    return loss_rows(cost, n, np.arange(_check_size(n)), cyclic=cyclic)


def loss_rows(cost: str, n: int, rows: np.ndarray, *, cyclic: bool = False) -> np.ndarray:
    """Rows ``L[rows, :]`` of :func:`loss_matrix` (one row per true answer in ``rows``), built
    without the rest: large domains are processed in blocks. The named losses are symmetric,
    so these are also the columns ``L[:, rows]`` transposed."""
    size = _check_size(n)
    if not isinstance(cost, str) or cost.strip() not in _RELEASED:
        raise InvalidParameterError("cost", cost, _RELEASED_ACCEPTED)
    power, circular = _RELEASED[cost.strip()]
    d = np.abs(np.arange(size)[None, :] - np.asarray(rows, dtype=np.int64).reshape(-1)[:, None])
    if circular or cyclic:
        d = np.minimum(d, size - d)
    return (d != 0).astype(float) if power == 0 else d.astype(float) ** power


def check_prior(prior: Sequence[float] | np.ndarray | None, size: int) -> np.ndarray:
    """A prior over the ``size`` answers ``0..size-1``, normalised; ``None`` is uniform.

    Raises
    ------
    InvalidParameterError
        (parameter ``prior``) a wrong length, a negative or non-finite weight, or a zero sum.
    """
    if prior is None:
        return np.full(size, 1.0 / size)
    try:
        w = np.asarray(prior, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError("prior", prior, f"{size} weights >= 0") from exc
    if w.shape != (size,):
        raise InvalidParameterError("prior", f"{w.size} weights", f"{size} weights, one per answer 0..{size - 1}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise InvalidParameterError("prior", prior, "finite weights >= 0 with a positive sum")
    return w / w.sum()


def row_costs(P: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``r[q] = sum_y P[q, y] L[q, y]``: the expected loss given the true answer ``q``."""
    return np.einsum("qy,qy->q", np.asarray(P, float), np.asarray(L, float))


def _matrix(P: np.ndarray | Channel | CyclicPMF) -> np.ndarray:
    return channel_matrix(P) if isinstance(P, (Channel, CyclicPMF)) else np.asarray(P, float)


def named_row_costs(P: np.ndarray, cost: str, rows: int = 256) -> np.ndarray:
    """``row_costs(P, loss_matrix(cost, n))`` for a named released-value cost, ``rows`` rows
    of the loss at a time (a large channel never holds the whole ``(n+1)^2`` loss)."""
    P = np.asarray(P, dtype=np.float64)
    n = P.shape[0] - 1
    return np.concatenate([np.einsum("ij,ij->i", P[lo:lo + rows], loss_rows(cost, n, np.arange(lo, min(n + 1, lo + rows))))
                           for lo in range(0, n + 1, rows)])


def channel_cost(P: np.ndarray | Channel | CyclicPMF, L: np.ndarray,
                 prior: Sequence[float] | np.ndarray | None = None, worst_case: bool = False) -> float:
    """Expected loss of a channel (or of modulo noise, through its channel) under ``L``.

    ``sum_q prior[q] sum_y P[q, y] L[q, y]`` (uniform prior by default), or with
    ``worst_case=True`` the largest row cost ``max_q sum_y P[q, y] L[q, y]`` (the prior is
    then ignored).
    """
    m = _matrix(P)
    L = np.asarray(L, float)
    if m.ndim != 2 or m.shape != L.shape:
        raise InvalidParameterError("L", f"shape {L.shape}", f"a loss matrix of the channel's shape {m.shape}")
    r = row_costs(m, L)
    if worst_case:
        return float(r.max())
    return float(check_prior(prior, m.shape[0]) @ r)


def modulo_cost_vector(L: np.ndarray, prior: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """Cost per noise value of modulo noise: ``rho[eta] = sum_q pi(q) L[q, (q + eta) mod (n+1)]``.

    The channel of a cyclic PMF ``f`` is ``P[q, y] = f((y - q) mod (n+1))``, so its
    prior-averaged loss ``sum_q pi(q) sum_y f((y - q) mod (n+1)) L[q, y]`` is ``rho . f``:
    linear in ``f``, and a noise design with the cost vector ``rho`` minimises the released
    value's error exactly. Not for the worst case over ``q`` (a maximum of ``n + 1`` linear
    forms, which no single cost vector captures unless ``L`` is circular).
    """
    L = np.asarray(L, float)
    size = L.shape[0]
    pi = check_prior(prior, size)
    q = np.arange(size)
    idx = (q[:, None] + q[None, :]) % size  # idx[q, eta] = (q + eta) mod size
    return pi @ L[q[:, None], idx]


@dataclass(frozen=True, eq=False)
class ReleasedCost:
    """A cost of the released value: a loss of :data:`RELEASED_COSTS`, averaged over a
    prior on the true answer (``None``: uniform) or in the worst case over it.

    >>> ReleasedCost("sq-error", worst_case=True).label
    'sq-error (worst case over q)'
    """

    name: str
    prior: np.ndarray | None = None
    worst_case: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name.strip() not in _RELEASED:
            raise InvalidParameterError("cost", self.name, _RELEASED_ACCEPTED)
        object.__setattr__(self, "name", self.name.strip())
        if self.prior is not None:
            w = np.asarray(self.prior, dtype=float)
            if w.ndim != 1:
                raise InvalidParameterError("prior", f"shape {w.shape}", "a list of weights, one per answer")
            object.__setattr__(self, "prior", check_prior(w, w.size))
        object.__setattr__(self, "worst_case", bool(self.worst_case))

    @property
    def label(self) -> str:
        """The name with how it is aggregated over the true answer."""
        how = "worst case over q" if self.worst_case else "uniform prior" if self.prior is None else "prior"
        return f"{self.name} ({how})"

    def weights(self, size: int) -> np.ndarray:
        """The prior over ``size`` answers (checked against the domain)."""
        return check_prior(self.prior, size)

    def matrix(self, n: int) -> np.ndarray:
        """``L[q, y]`` on ``{0..n}`` (:func:`loss_matrix`)."""
        return loss_matrix(self.name, n)

    def of_channel(self, P: np.ndarray | Channel | CyclicPMF) -> float:
        """The cost of a channel, or of a scalar cyclic PMF through its channel."""
        m = _matrix(P)
        return channel_cost(m, self.matrix(m.shape[0] - 1), self.weights(m.shape[0]), self.worst_case)

    def to_json(self) -> dict:
        """``{"cost", "prior", "worst_case"}`` (``prior``: the weights, or ``"uniform"``)."""
        return {"cost": self.name, "prior": "uniform" if self.prior is None else self.prior.tolist(),
                "worst_case": self.worst_case}


def released_noise_vector(cost: ReleasedCost, shape: tuple[int, ...]) -> np.ndarray:
    """:func:`modulo_cost_vector` of a released-value cost, for noise on a cycle ``shape``.

    A product of cycles (vector noise) takes the per-coordinate errors summed, under a
    uniform prior (``er`` stays: any coordinate wrong); the worst case over ``q`` is not a
    cost vector (use a channel design with the constraint ``circulant``).
    """
    if cost.worst_case:
        raise InvalidParameterError("worst_case", True, "the prior-averaged error (the worst case over q is not "
                                                        "linear in the noise PMF: design it as a channel with the "
                                                        "constraint 'circulant')")
    if len(shape) == 1:
        return modulo_cost_vector(cost.matrix(shape[0] - 1), cost.weights(shape[0]))
    if cost.prior is not None:
        raise InvalidParameterError("prior", "given", "no prior for a vector query (uniform only)")
    if cost.name == "er":
        return cost_vector("er", shape)
    grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    rho = np.zeros(shape)
    for g, s in zip(grids, shape):
        rho = rho + modulo_cost_vector(loss_matrix(cost.name, s - 1))[g]
    return rho.ravel()


def released_errors(P: np.ndarray | Channel | CyclicPMF,
                    prior: Sequence[float] | np.ndarray | None = None) -> dict[str, dict[str, float]]:
    """``er``, ``abs-error`` and ``sq-error`` of the released value, averaged over the prior
    (uniform by default) and in the worst case over the true answer: ``{cost: {"average",
    "worst"}}``. Modulo noise (a scalar cyclic PMF) is scored through its channel, i.e.
    after wrap-around."""
    size = P.size if isinstance(P, CyclicPMF) else _matrix(P).shape[0]
    pi = check_prior(prior, size)
    rows = {name: released_row_costs(P, name) for name in ("er", "abs-error", "sq-error")}
    return {name: {"average": float(pi @ r), "worst": float(r.max())} for name, r in rows.items()}


def released_row_costs(P: np.ndarray | Channel | CyclicPMF, cost: str) -> np.ndarray:
    """``r[q]``: the expected loss of a named released-value cost for each true answer ``q``.

    Noise mod ``n + 1`` (a scalar :class:`CyclicPMF`) in ``O(n)``: a circular loss is the same
    for every ``q`` (its channel is circulant and the loss depends on ``(y - q) mod (n+1)``
    only), so one dot product, repeated -- every row exactly equal, which keeps a calibration
    on the worst row stable; a plain loss by :func:`modulo_row_costs`. A channel row by row
    (:func:`named_row_costs`).
    """
    if cost not in _RELEASED:
        raise InvalidParameterError("cost", cost, _RELEASED_ACCEPTED)
    power, circular = _RELEASED[cost]
    if isinstance(P, CyclicPMF) and P.probs.ndim == 1:   # O(n), not the n x n channel
        if circular:
            return np.full(P.size, float(loss_rows(cost, P.size - 1, np.array([0]))[0] @ P.probs))
        return modulo_row_costs(P.probs, power)
    return named_row_costs(_matrix(P), cost)


def modulo_row_costs(f: np.ndarray, power: int) -> np.ndarray:
    """``r[q]``: the expected loss ``|y - q|^power`` (``power = 0``: ``[y != q]``) of
    ``y = (q + eta) mod N`` for noise PMF ``f`` on ``{0..N-1}``, every ``q``, in ``O(N)``.

    ``y - q`` is ``eta`` when ``q + eta < N`` and ``eta - N`` otherwise, so with
    ``m = N - q``: ``r[q] = sum_{eta < m} f(eta) eta^p + sum_{eta >= m} f(eta) (N - eta)^p``,
    a prefix sum plus a suffix sum. Equals :func:`row_costs` of the channel with
    :func:`loss_matrix` (the tests compare them).
    """
    f = np.asarray(f, float)
    size = f.size
    eta = np.arange(size, dtype=float)
    near = (eta != 0).astype(float) if power == 0 else eta ** power
    far = np.ones(size) if power == 0 else (size - eta) ** power
    prefix = np.concatenate(([0.0], np.cumsum(f * near)))            # prefix[m] = sum_{eta < m}
    suffix = np.concatenate((np.cumsum((f * far)[::-1])[::-1], [0.0]))  # suffix[m] = sum_{eta >= m}
    m = size - np.arange(size)
    return prefix[m] + suffix[m]
