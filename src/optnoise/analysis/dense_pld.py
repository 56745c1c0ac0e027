"""Privacy loss distributions on a loss grid, composed with numpy's FFT, values rounded up.

What :mod:`dp_accounting`'s PLDs do for the composition bounds (the ``pld`` candidate of
:func:`optnoise.analysis.composition.compose_best`, :func:`~optnoise.analysis.composition.delta_curve`),
without importing it (its package imports SciPy's signal, stats and optimize packages:
about 1.3 s of CPU, most of a query's fixed cost, docs/benchmarks.md): a PLD is a vector of
masses at the grid losses ``(low + j) h`` plus a mass at ``+inf``; ``k`` releases of one
are ``ifft(fft(x)^k)``, two PLDs compose by one FFT convolution, and ``delta(eps) =
P_inf + sum_j P_j (1 - e^(eps - L_j))_+`` is read at every epsilon. Nothing is truncated.

**Why every value is an upper bound (the argument).** A :class:`DensePLD` carries
``error``, a bound on the l1 distance of its float masses (the ``+inf`` mass included) from
those of an exact *dominating* PLD (for a unit, the pessimistic Connect-the-Dots PMF of
:func:`optnoise.analysis.dominating.dominating_pld`, whose masses are within the error
:func:`~optnoise.analysis.dominating.ctd_unit` states). Composition is bilinear on
measures over the extended losses (``+inf`` absorbs), so for exact ``a*, b*`` and floats
``a, b`` with ``|a - a*|_1 <= e_a``, ``|b - b*|_1 <= e_b``:
``|a (x) b - a* (x) b*|_1 <= e_a |b|_1 + e_b |a*|_1 <= e_a (1 + e_b) + e_b`` (and for the
k-th power ``k e (1 + e)^(k - 1)``); the FFTs add at most
:func:`~optnoise.analysis.outward.fft_power_error` and
:func:`~optnoise.analysis.outward.fft_convolve_error` (Higham 2002, Thm. 24.2, for vectors
of l2 norm at most 1; scaled here by the norm bound ``(1 + e)``; a self-composition of few
nonzero cells by sparse convolutions adds the bound of :func:`_sparse_power`), the ``+inf`` mass is
computed by the same bilinear formula (``(s + i)^k - s^k`` with ``s`` the finite mass) within
``4 (k + 4) u max(1, s + i)^k`` of its value (exactly 0 when ``i = 0``). ``delta(eps)`` is a sum of masses times weights in ``[0, 1]``,
so the delta read from the float PLD is within the final ``error`` of the exact dominating
PLD's, plus the evaluation's own round-off
(:func:`~optnoise.analysis.outward.evaluation_error`); both are added and the sum rounded up
(:func:`~optnoise.analysis.outward.nudge_up`). Grid losses are floats ``fl(j h)``: a
composed loss is the sum of its units' float losses, which differs from ``fl(J h)`` by at
most ``u (k max|L| + |J h|)``; every loss ``L`` is moved up by twice that plus the roundings
of ``L + slack`` and of ``eps - L`` (``u (3 |L| + |eps|)`` together: ``2u (k max|L| + 3|L| +
|eps| + 1)`` in all) before its weight is taken, which can only raise delta (the weight
``(1 - e^(eps - L))_+`` is non-decreasing in ``L``). (Before issue 34 the slack was
``8u (|L| + k max|L| + 1)(1 + |eps|)``, also valid, but 25 times wider at ``eps = 7``:
enough to move a certified epsilon by ``3e-10`` relative where ``delta`` is flat.) Negative FFT outputs are clamped to 0,
which only moves a mass towards its exact, non-negative value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .outward import U, evaluation_error, fft_convolve_error, fft_power_error, nudge_up, certified_from

#: Most grid cells a composed dense PLD may have (beyond: the caller uses dp_accounting).
MAX_CELLS = 1 << 21


@dataclass(frozen=True, eq=False)
class DensePLD:
    """Masses at the grid losses ``(low + j) h`` and at ``+inf``, within ``error`` (l1) of an
    exact dominating PLD's; ``releases`` single releases composed; ``max_loss`` bounds the
    absolute grid loss of every single release in it (for the losses' float error)."""

    low: int
    masses: np.ndarray
    infinity: float
    error: float
    step: float
    releases: int = 1
    max_loss: float = 0.0

    @property
    def cells(self) -> int:
        return int(self.masses.size)

    @property
    def finite_mass(self) -> float:
        return math.fsum(self.masses.tolist())


def from_grid(indices: np.ndarray, masses: np.ndarray, infinity: float, error: float, step: float) -> DensePLD:
    """A single-release PLD from masses at the grid indices ``indices`` (ascending, distinct)."""
    idx = np.asarray(indices, dtype=np.int64)
    low = int(idx.min())
    dense = np.zeros(int(idx.max()) - low + 1)
    dense[idx - low] = np.asarray(masses, dtype=float)
    top = float(np.max(np.abs(idx), initial=0)) * step
    return DensePLD(low, dense, float(infinity), float(error), float(step), 1, top)


def composed_cells(cells: list[int], counts: list[int]) -> int:
    """Cells of the composition of PLDs of ``cells[i]`` cells, each released ``counts[i]`` times."""
    return 1 + sum(int(k) * (int(c) - 1) for c, k in zip(cells, counts))


def _fft_size(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def self_compose(pld: DensePLD, k: int) -> DensePLD:
    """``k`` releases of ``pld``: ``ifft(fft(x)^k)``, or, for a PLD with few nonzero cells (a
    pair with few distinct losses: the geometric, randomized response), ``k - 1`` sparse
    convolutions (:func:`_sparse_power`); the error as in the module docstring."""
    k = int(k)
    if k == 1:
        return pld
    n = k * (pld.cells - 1) + 1
    sparse = _sparse_power(pld.masses, k, n)
    if sparse is not None:
        out, power_error = sparse
    else:
        size = _fft_size(n)
        out = np.maximum(0.0, np.fft.irfft(np.fft.rfft(pld.masses, size) ** k, size)[:n])
        power_error = fft_power_error(pld.cells, k)
    s, i, e = pld.finite_mass, pld.infinity, pld.error
    infinity = max(0.0, (s + i) ** k - s ** k)
    norm = (1.0 + e) ** k
    rounding = 4 * (k + 4) * U * max(1.0, s + i) ** k if i > 0 else 0.0   # i = 0: exactly 0
    error = k * e * (1.0 + e) ** (k - 1) + power_error * norm + rounding
    return DensePLD(pld.low * k, out, infinity, nudge_up(error, 4 * U), pld.step, pld.releases * k, pld.max_loss)


#: Most products the sparse self-composition may form (beyond: the FFT).
SPARSE_WORK = 2_000_000


def _sparse_power(masses: np.ndarray, k: int, n: int) -> tuple[np.ndarray, float] | None:
    """The ``k``-th convolution power of ``masses`` by ``k - 1`` sparse convolutions with its
    nonzero cells, and a bound on its l1 error relative to the total mass, or ``None`` when
    that would take more than :data:`SPARSE_WORK` products.

    Each step forms every product of a current cell and a nonzero cell (``m`` of them) and sums
    those landing on one index: at most ``m`` non-negative terms, so each output is within
    ``(m + 1) u`` relative of its exact value from the current floats; over ``k - 1`` steps the
    relative error of every mass is at most ``(1 + (m + 1) u)^k - 1 <= k (m + 2) u`` (for
    ``k (m + 2) u < 1e-3``), and since all terms are non-negative the l1 error is that times the
    total mass. Products that underflow lose at most ``2^-1074`` each: ``work 2^-1074`` more.
    Returned with a factor 4 of margin (the same bound as the small-support path of
    :func:`~optnoise.analysis.outward.fft_power_error`).
    """
    nz = np.flatnonzero(masses > 0)
    m = int(nz.size)
    if m == 0 or m > 64:
        return None
    support = min(n, math.comb(k + m - 1, m - 1) if m <= 8 else n)
    work = k * m * support
    if work > SPARSE_WORK or k * (m + 2) * U > 1e-3:
        return None
    vals = masses[nz]
    cur_i, cur_v = nz.astype(np.int64), vals
    for _ in range(k - 1):
        idx = (cur_i[:, None] + nz[None, :]).ravel()
        prod = (cur_v[:, None] * vals[None, :]).ravel()
        cur_i, inverse = np.unique(idx, return_inverse=True)
        cur_v = np.bincount(inverse, weights=prod)
    out = np.zeros(n)
    out[cur_i] = cur_v
    return out, 4 * k * (m + 2) * U + work * 2.0 ** -1070


def compose(a: DensePLD, b: DensePLD) -> DensePLD:
    """Both PLDs released once each (one FFT convolution; the error as in the module docstring)."""
    if a.step != b.step:
        raise ValueError("compose: PLDs on different grids")
    n = a.cells + b.cells - 1
    size = _fft_size(n)
    out = np.maximum(0.0, np.fft.irfft(np.fft.rfft(a.masses, size) * np.fft.rfft(b.masses, size), size)[:n])
    sa, sb = a.finite_mass, b.finite_mass
    infinity = a.infinity * (sb + b.infinity) + sa * b.infinity
    rounding = 16 * U * (1.0 + a.error) * (1.0 + b.error) if a.infinity or b.infinity else 0.0
    error = (a.error * (1.0 + b.error) + b.error + fft_convolve_error(n) * (1.0 + a.error) * (1.0 + b.error)
             + rounding)
    return DensePLD(a.low + b.low, out, infinity, nudge_up(error, 4 * U), a.step, a.releases + b.releases,
                    max(a.max_loss, b.max_loss))


def delta_upper(pld: DensePLD, epsilons: np.ndarray) -> np.ndarray:
    """Upper bounds on ``delta(eps)`` of the exact dominating PLD at every epsilon (module
    docstring), capped at 1.

    Proof: docs/proofs/composed-bounds.md."""
    eps = np.asarray(epsilons, dtype=float)
    read = _reader(pld)
    out = np.empty(eps.shape)
    for n, e in enumerate(eps.ravel()):
        out.flat[n] = read(float(e))
    return out


def _reader(pld: DensePLD):
    """``delta_upper`` at one epsilon, the grid's losses and their slack computed once; each
    read visits only the cells whose loss may lie above the epsilon (the rest weigh 0)."""
    losses = (pld.low + np.arange(pld.cells)) * pld.step
    slack = 2 * U * (3 * np.abs(losses) + pld.releases * pld.max_loss + 1.0)
    widest = float(slack.max(initial=0.0))
    allowance = pld.error + evaluation_error(pld.cells)

    def read(e: float) -> float:
        # cells below e - 2 (widest slack + 2u|e|) have up <= e (weight 0): skipped
        start = int(np.searchsorted(losses, e - 2 * (widest + 2 * U * abs(e)), side="right"))
        up = losses[start:] + (slack[start:] + 2 * U * abs(e))   # ascending, as the losses are
        first = start + int(np.searchsorted(up, e, side="right"))
        masses, up = pld.masses[first:], up[first - start:]
        if masses.size > 4096:   # a sparse composition: weigh the nonzero cells only
            keep = np.flatnonzero(masses)
            masses, up = masses[keep], up[keep]
        with np.errstate(over="ignore"):
            weights = -np.expm1(e - up)
        value = pld.infinity + float(np.dot(masses, weights))
        return min(1.0, nudge_up(value, 4 * U, allowance)) if math.isfinite(value) else 1.0

    return read


def epsilon_upper(pld: DensePLD, delta: float) -> float:
    """An epsilon ``>= 0`` whose :func:`delta_upper` is at most ``delta`` (``inf`` when none is):
    a float estimate on the grid, then the smallest float that :func:`delta_upper` certifies
    (:func:`~optnoise.analysis.outward.certified_from`), so it is never below the exact
    dominating PLD's epsilon.

    The estimate: with the positive grid losses ``L_j`` ascending, ``delta`` on
    ``[L_(j-1), L_j)`` is ``A_j - e^eps B_j`` with ``A_j = P_inf + sum_(i >= j) P_i`` and
    ``B_j = sum_(i >= j) P_i e^-L_i``; the first segment whose end value is at most ``delta``
    is solved for ``eps``.
    """
    top = float((pld.low + pld.cells) * pld.step) + 1.0
    read = _reader(pld)
    if read(max(top, 0.0)) > delta:
        return math.inf
    losses = (pld.low + np.arange(pld.cells)) * pld.step
    pos = losses > 0
    lp, mp = losses[pos], pld.masses[pos]
    a = pld.infinity + np.concatenate((np.cumsum(mp[::-1])[::-1], [0.0]))
    b = np.concatenate((np.cumsum((mp * np.exp(-lp))[::-1])[::-1], [0.0]))
    want = delta - pld.error - evaluation_error(pld.cells)   # what the float PLD may give
    with np.errstate(over="ignore", invalid="ignore"):
        ends = a[1:] - np.exp(lp) * b[1:]            # delta at eps = L_j
    j = int(np.searchsorted(-ends, -want, side="left")) if lp.size else 0   # first end <= want
    guess = 0.0
    if j < lp.size and b[j] > 0 and a[j] > want:
        guess = max(0.0, math.log((a[j] - want) / b[j]))
    return certified_from(lambda e: read(e) <= delta, guess, max(top, 0.0))


__all__ = ["DensePLD", "MAX_CELLS", "SPARSE_WORK", "compose", "composed_cells", "delta_upper", "epsilon_upper", "from_grid",
           "self_compose"]
