"""Optimal eps-DP noise on the integer line by linear programming (Geng & Viswanath, Section VI).

The variables are the masses on a window ``-L..L``. Beyond the window the PMF is
continued by exact *geometric-staircase tails*: ``p(L + t) = e^-eps p(L + t - Delta)``
(and the mirror image on the left), the fastest decay eps-DP allows, so the tail's mass
and cost are linear in the window's last block of ``Delta`` masses. This is not a
truncation: the returned PMF is a PMF on all of ``Z`` and its guarantee is exact.

Numerics: masses far from the centre are as small as ``e^(-eps L / Delta)``, far below
HiGHS's tolerances, which would zero them and break the ratio constraints. The LP is
therefore solved for ``q = p / s`` with ``s_i = e^(-eps |i| / Delta)``, which makes every
variable and every DP row O(1); the answer is then lifted to restore the ratio
constraints exactly (``lift_ratios``) and renormalised.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..analysis import privacy_profile
from ..costs import Cost, expected_cost, parse_cost, tail_sums
from ..errors import DesignError, InvalidParameterError
from ..mechanism import Mechanism
from ..neighbourhood import Neighbourhood
from ..pmf import GeometricTail, IntegerPMF
from ..resources import check, tailed_lp_bytes
from ..target import Target, check_epsilon, check_sensitivity
from .line_bound import line_lower_bound
from .report import DesignResult, ProvenBound
from .solver import RATIO_MARGIN, solve_lp

#: Smallest column scale: masses far below it are resolved by :func:`lift_ratios`.
SCALE_FLOOR = 1e-12
#: Masses below this are trimmed from the window (the tails then carry them exactly).
UNDERFLOW = 1e-250


@dataclass(frozen=True)
class TailedWindow:
    """A window ``-half..half`` of variables with geometric-staircase tails.

    ``expand`` is a sparse matrix mapping the window's masses to the masses on the
    extended range ``-half-period .. half+period`` (the tail's first block is ``ratio``
    times the window's last block), which is all the DP rows need: any pair of points
    at distance ``<= period`` in a tail is a block-shifted copy of such a pair.
    """

    half: int
    period: int
    ratio: float

    @property
    def size(self) -> int:
        return 2 * self.half + 1

    @property
    def values(self) -> np.ndarray:
        return np.arange(-self.half, self.half + 1)

    def expand(self) -> sp.csr_matrix:
        n, m = self.size, self.period
        rows = [np.arange(n)]
        cols = [np.arange(n)]
        data = [np.ones(n)]
        # right tail: point half + s (s = 1..m) = ratio * p(half - m + s)
        rows.append(n + m + np.arange(m))
        cols.append(n - m + np.arange(m))
        data.append(np.full(m, self.ratio))
        # left tail: point -half - s = ratio * p(-half + m - s); extended index m - s
        rows.append(np.arange(m))
        cols.append(np.arange(m))
        data.append(np.full(m, self.ratio))
        r = np.concatenate(rows)
        r[: n] += m  # window rows sit after the left extension
        return sp.csr_matrix((np.concatenate(data), (r, np.concatenate(cols))), shape=(n + 2 * m, n))

    def mass_row(self) -> np.ndarray:
        """Coefficients of the total mass (window plus both tails)."""
        left, right = self.tail_masses()
        return 1.0 + left + right

    def tail_masses(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows giving the left and right tail masses."""
        f = self.ratio / (1.0 - self.ratio)
        left = np.zeros(self.size)
        right = np.zeros(self.size)
        left[: self.period] = f
        right[-self.period:] = f
        return left, right

    def pmf(self, probs: np.ndarray) -> IntegerPMF:
        tail = GeometricTail(self.ratio, self.period)
        return IntegerPMF(probs, offset=self.half, left_tail=tail, right_tail=tail, normalize=True)


def dp_rows(window: TailedWindow, factor: float, *, symmetric: bool = False) -> sp.csr_matrix:
    """Rows ``p(i) - factor * p(j) <= 0`` for all ``0 < |i - j| <= period`` on the extension.

    With ``symmetric`` only pairs with ``i + j >= 0`` are kept: for a PMF with
    ``p(-i) = p(i)`` the others are mirror images of these.
    """
    ext = window.expand()
    n_ext = ext.shape[0]
    m = window.period
    ii, jj = [], []
    for d in range(1, m + 1):
        a = np.arange(0, n_ext - d)
        ii += [a, a + d]
        jj += [a + d, a]
    i = np.concatenate(ii)
    j = np.concatenate(jj)
    if symmetric:
        keep = (i + j) >= 2 * (window.half + m)
        i, j = i[keep], j[keep]
    k = i.size
    sel = sp.csr_matrix((np.concatenate([np.ones(k), np.full(k, -factor)]),
                         (np.concatenate([np.arange(k), np.arange(k)]), np.concatenate([i, j]))), shape=(k, n_ext))
    rows = (sel @ ext).tocsr()
    rows.eliminate_zeros()
    # A pair (i, i + period) across the window's end maps both points to one variable:
    # its row is (1 - factor * ratio) p <= 0, exactly 0 <= 0 in real arithmetic but
    # +-1 ulp in floating point, which row normalisation would blow up into p <= 0.
    nnz = np.diff(rows.indptr)
    single = nnz == 1
    trivial = np.zeros(rows.shape[0], dtype=bool)
    trivial[single] = rows.data[rows.indptr[:-1][single]] <= 1e-12
    return rows[~trivial]


def symmetric_map(window: TailedWindow) -> sp.csr_matrix:
    """``p = S q`` with ``q`` the masses at ``0..half`` and ``p(-i) = p(i)``."""
    n, h = window.size, window.half
    return sp.csr_matrix((np.ones(n), (np.arange(n), np.abs(np.arange(n) - h))), shape=(n, h + 1))


def lift_ratios(p: np.ndarray, window: TailedWindow, epsilon: float) -> np.ndarray:
    """Smallest pointwise increase of ``p`` meeting every ratio constraint with margin.

    Enforces ``p(i) >= e^-eps (1 + margin) p(j)`` for ``|i - j| <= period`` and the tail
    condition (each end block non-increasing outwards), by iterating to the fixpoint.
    The LP's answer violates these by round-off only, so the lift moves masses by about
    the solver tolerance.
    """
    c = math.exp(-epsilon) * (1.0 + RATIO_MARGIN)
    m = window.period
    q = np.maximum(p, 0.0)
    for _ in range(10_000):
        old = q.copy()
        for d in range(1, m + 1):
            np.maximum(q[:-d], c * q[d:], out=q[:-d])
            np.maximum(q[d:], c * q[:-d], out=q[d:])
        q[-m:] = np.maximum.accumulate(q[-m:][::-1])[::-1]
        q[:m] = np.maximum.accumulate(q[:m])
        if np.array_equal(q, old):
            return q
    raise DesignError("the ratio lift did not converge; the LP answer is far from eps-DP")


def tail_cost_rows(window: TailedWindow, cost: Cost) -> np.ndarray:
    """Cost coefficients of the window masses, tails included exactly."""
    x = window.values.astype(np.float64)
    c = cost(x).astype(np.float64)
    m, rho = window.period, window.ratio
    c[-m:] += tail_sums(cost, rho, x[-m:], m)
    c[:m] += tail_sums(cost, rho, x[:m], -m)
    return c


def finish(p: np.ndarray, window: TailedWindow, epsilon: float) -> tuple[IntegerPMF, float]:
    """Lift an LP answer to exact eps-DP, trim masses near double underflow, normalise, certify.

    Returns the PMF and its tight pure epsilon for sensitivity ``period`` (the
    certificate); raises :class:`DesignError` if that exceeds ``epsilon``.

    Far from the centre the masses of a wide window can fall below ``1e-300`` and
    underflow to 0, which would make the ratio constraints infinite. The window is cut
    where the masses drop below ``UNDERFLOW``; the cut PMF continues with the same
    geometric-staircase tails and is lifted again, which changes the cost by less
    than ``1e-240``.
    """
    p = lift_ratios(p, window, epsilon)
    if p.min() < UNDERFLOW:
        centre = window.half
        ok = p >= UNDERFLOW
        half = 0
        while half < window.half and ok[centre - half - 1] and ok[centre + half + 1]:
            half += 1
        half = max(half, window.period)
        window = TailedWindow(half, window.period, window.ratio)
        p = lift_ratios(p[centre - half: centre + half + 1], window, epsilon)
    pmf = window.pmf(p / float(window.mass_row() @ p))
    profile = privacy_profile(pmf, Neighbourhood.sensitivity(window.period))
    certified = profile.epsilon_pure
    if not profile.meets(Target(epsilon)):
        raise DesignError(f"the LP answer certifies eps = {float(certified):.12g} > target {float(epsilon):.12g}; widen the window")
    return pmf, certified


def line_mechanism(pmf: IntegerPMF, epsilon: float, sensitivity: int, name: str) -> Mechanism:
    """A pure epsilon-DP noise on Z for sensitivity ``Delta`` as a mechanism (BD ``Delta``, symmetric)."""
    return Mechanism(pmf, Neighbourhood.sensitivity(sensitivity), Target(epsilon), name)


@dataclass(frozen=True, eq=False)
class IntegerDesign(ProvenBound, DesignResult):
    """Result of :func:`design_integer`: the mechanism and the design's report.

    ``epsilon_certified`` is the tight float analysis of the returned PMF; :meth:`certify`
    the exact certificate of the quantized weights that :attr:`mechanism` samples.
    ``lower_bound`` is a proven lower bound on the optimum over *all* eps-DP noise on ``Z``
    (not only the window: :mod:`optnoise.design.line_bound`), ``None`` for a cost not known
    to be monotone in ``|x|``; ``gap`` the relative distance of ``expected_cost`` from it.
    """

    pmf: IntegerPMF
    expected_cost: float
    epsilon: float
    sensitivity: int
    cost: str
    epsilon_certified: float
    solve_seconds: float
    lower_bound: float | None = None
    bound_method: str | None = None

    @cached_property
    def mechanism(self) -> Mechanism:
        """The designed noise on Z with its neighbourhood (BD ``sensitivity``) and pure target."""
        return line_mechanism(self.pmf, self.epsilon, self.sensitivity, "optimal noise on Z")



    def to_json(self) -> dict:
        return {"tail_mass": self.pmf.tail_mass,
                "tail": {"period": self.sensitivity, "ratio": math.exp(-self.epsilon)},
                "expected_cost": self.expected_cost, "epsilon": self.epsilon, "sensitivity": self.sensitivity,
                "cost": self.cost, "epsilon_pure": self.epsilon_certified, "solve_seconds": self.solve_seconds,
                "lower_bound": self.lower_bound, "bound_method": self.bound_method, "gap": self.gap,
                "optimal": self.optimal, **self.mechanism.to_json()}


def check_window(half_width: int, sensitivity: int) -> int:
    """A window half-width: an integer ``>= sensitivity``."""
    if isinstance(half_width, bool) or int(half_width) != half_width or half_width < sensitivity:
        raise InvalidParameterError("half_width", half_width, f"an integer half-width >= the sensitivity {sensitivity}")
    return int(half_width)


def solve_tailed_lp(window: TailedWindow, epsilon: float, objective: np.ndarray,
                    extra_ub: tuple[sp.spmatrix, np.ndarray] | None = None, n_extra: int = 0,
                    time_limit: float | None = None, symmetric: bool = False) -> np.ndarray:
    """Minimise ``objective @ p (+ extra variables)`` over eps-DP PMFs with tails; return ``p``.

    ``extra_ub`` holds rows ``[A_p, A_t] @ [p, t] <= b`` over the window masses and
    ``n_extra`` auxiliary variables (used by the Wasserstein epigraph). With
    ``symmetric`` the PMF is restricted to ``p(-i) = p(i)``, which loses nothing when
    the objective is symmetric (average an optimum with its mirror image: the problem
    is convex) and halves the LP. The masses are rescaled as described in the module
    docstring.
    """
    n = window.size
    vmap = symmetric_map(window) if symmetric else sp.identity(n, format="csr")
    nv = vmap.shape[1]
    values = np.arange(nv) if symmetric else window.values
    # the scale follows the fastest decay DP allows, floored so that the mass row keeps
    # coefficients HiGHS does not drop (below ~1e-9 they are treated as zero)
    s = np.maximum(np.exp(-epsilon * np.abs(values) / window.period), SCALE_FLOOR)
    scale = sp.block_diag([vmap @ sp.diags(s), sp.identity(n_extra)], format="csr") if n_extra else vmap @ sp.diags(s)
    dp = dp_rows(window, math.exp(epsilon), symmetric=symmetric)  # tails saturate e^eps exactly: no margin
    blocks = [sp.hstack([dp, sp.csr_matrix((dp.shape[0], n_extra))]) if n_extra else dp]
    rhs = [np.zeros(dp.shape[0])]
    if extra_ub is not None:
        blocks.append(sp.csr_matrix(extra_ub[0]))
        rhs.append(extra_ub[1])
    a_ub = (sp.vstack(blocks, format="csr") @ scale).tocsr()
    # row-normalise: every row's largest coefficient becomes 1
    row_max = np.maximum(abs(a_ub).max(axis=1).toarray().ravel(), 1e-300)
    a_ub = (sp.diags(1.0 / row_max) @ a_ub).tocsr()
    b_ub = np.concatenate(rhs) / row_max
    mass = np.concatenate([window.mass_row(), np.zeros(n_extra)])
    a_eq = sp.csr_matrix((scale.T @ mass)[None, :])
    c = scale.T @ np.asarray(objective, dtype=np.float64)
    bounds = [(0, None)] * nv + [(None, None)] * n_extra
    res = solve_lp(c, a_ub, b_ub, a_eq, [1.0], bounds, time_limit)
    return vmap @ (res.x[:nv] * s)


#: Epsilon range of the integer-line LPs. Above, masses ``e^(-eps |i| / Delta)`` leave the
#: double range within a few steps and the lifted answer no longer certifies (eps = 80 fails
#: with sensitivity 1; the optimal noise is 0 except with probability below e^-50 anyway).
#: Below, ``e^eps - 1`` nears the LP's tolerances and the answer certifies a few ulps above
#: the target (eps = 3e-5 fails with sensitivity 3).
LINE_EPSILON_MIN, LINE_EPSILON_MAX = 1e-4, 50.0


def check_line_epsilon(epsilon: float) -> float:
    """An epsilon for the integer-line LPs, in ``[LINE_EPSILON_MIN, LINE_EPSILON_MAX]``."""
    return check_epsilon(epsilon, allow_zero=False, within=(LINE_EPSILON_MIN, LINE_EPSILON_MAX),
                         accepted=f"a real number from {LINE_EPSILON_MIN:g} to {LINE_EPSILON_MAX:g} for the "
                         "integer-line LP (beyond, its masses leave the double range; below, e^eps - 1 nears the "
                         "solver's tolerances)")


def design_integer(epsilon: float, sensitivity: int = 1, cost: str | Cost | Callable = "abs", *,
                   half_width: int | None = None, time_limit: float | None = None,
                   max_memory: int | None = None) -> IntegerDesign:
    """Minimum-cost eps-DP noise on ``Z`` for integer sensitivity ``Delta`` (problem (78)).

    Solves the LP over the window with exact staircase tails; for a symmetric cost that
    is increasing in ``|x|`` (Property 3) its optimum equals ``min_r`` of the cost of
    ``P_r`` (Theorem 13), which the tests check. Any cost vector works, including
    asymmetric ones, for which no closed form exists.

    Parameters
    ----------
    epsilon, sensitivity:
        The target: ``p(i) <= e^eps p(i + d)`` for ``|d| <= Delta``.
    cost:
        ``abs``, ``sq``, ``pow:K`` or a vectorised callable ``L(x)``.
    half_width:
        Window ``-L..L``; default ``max(4 Delta, 8)``.
    max_memory:
        Bytes the LP may take (:mod:`optnoise.resources`): about ``2 Delta (2L + 1)`` DP rows,
        refused before they are built.
    """
    eps = check_line_epsilon(epsilon)
    d = check_sensitivity(sensitivity)
    c = parse_cost(cost)
    half = check_window(max(4 * d, 8) if half_width is None else half_width, d)
    check(tailed_lp_bytes(2 * half + 1, d), parameter="sensitivity" if half_width is None else "half_width",
          value=d if half_width is None else half_width, max_memory=max_memory,
          what=f"the LP over a window of {2 * half + 1} masses with sensitivity {d}")
    window = TailedWindow(half, d, math.exp(-eps))
    t0 = time.perf_counter()
    objective = tail_cost_rows(window, c)
    symmetric = bool(np.allclose(objective, objective[::-1], rtol=1e-13, atol=0.0))
    p = solve_tailed_lp(window, eps, objective, time_limit=time_limit, symmetric=symmetric)
    pmf, certified = finish(p, window, eps)
    bound = line_lower_bound(half, d, eps, c, time_limit)
    seconds = time.perf_counter() - t0
    return IntegerDesign(pmf, expected_cost(pmf, c), eps, d, c.name, certified, seconds,
                         None if bound is None or not math.isfinite(bound.value) else bound.value,
                         None if bound is None else f"{bound.method} over noise on all of Z (outward rounded, "
                                                    f"at e^eps; window half-width {half})")
