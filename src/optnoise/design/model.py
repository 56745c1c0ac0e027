"""Sparse building blocks of the finite-domain design models (Kadam et al. 2024, (13)-(15)).

Two kinds of builders:

* **blocks** (:func:`ratio_block`, :func:`eye_block`, ...) for the MILPs: variables are laid
  out in blocks (the PMF ``f`` first, then hockey-stick epigraph variables or PDP indicators
  at given column offsets); each builder returns a ``scipy.sparse`` CSR matrix with
  ``n_cols`` columns, assembled with ``sp.vstack``. Public so that ``bench/milp_models.py``
  can assemble alternative models from the same pieces;
* **the DP LP in one piece** (:func:`dp_lp`): the standard-DP LP (pure or hockey-stick,
  cost or min-delta objective) over any subset of its ratio rows and over mirror orbits,
  built once as flat int32 index arrays -- no per-block matrices, no ``vstack``; its memory
  is a few arrays of length ``n |M|``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..neighbourhood import Neighbourhood


@dataclass(frozen=True)
class Shifts:
    """Partner indices: ``partner[k, eta]`` is the flat index of ``eta + mu_k``.

    ``vectors`` are the shifts ``mu_k`` themselves (reduced modulo the domain), when known.
    """

    partner: np.ndarray  # (K, N)
    vectors: tuple[tuple[int, ...], ...] = ()

    @property
    def k(self) -> int:
        return int(self.partner.shape[0])

    @property
    def n(self) -> int:
        return int(self.partner.shape[1])


def cyclic_shift_table(shape: tuple[int, ...], nb: Neighbourhood) -> Shifts:
    """The partner table of every ordered shift of ``nb`` on the cyclic domain ``shape``."""
    size = int(np.prod(shape))
    idx = np.arange(size, dtype=np.int32 if size < 2 ** 31 else np.int64).reshape(shape)
    axes = tuple(range(len(shape)))
    shifts = nb.cyclic_shifts(shape)
    rows = [np.roll(idx, tuple(-s for s in shift), axis=axes).ravel() for shift in shifts]
    return Shifts(np.array(rows), tuple(shifts))


def ratio_block(sh: Shifts, e: float, f_offset: int, n_cols: int) -> sp.csr_matrix:
    """Rows ``f(eta) - e f(eta + mu_k)`` for all (k, eta), as a sparse (K N x n_cols) block."""
    kn = sh.k * sh.n
    rows = np.arange(kn)
    eta = np.tile(np.arange(sh.n), sh.k)
    partner = sh.partner.ravel()
    data = np.concatenate((np.ones(kn), np.full(kn, -e)))
    r = np.concatenate((rows, rows))
    c = np.concatenate((eta, partner)) + f_offset
    return sp.csr_matrix((data, (r, c)), shape=(kn, n_cols))


def eye_block(kn: int, offset: int, n_cols: int, scale: float = 1.0) -> sp.csr_matrix:
    """``scale`` times the identity on the ``kn`` variables starting at ``offset``."""
    return sp.csr_matrix((np.full(kn, scale), (np.arange(kn), np.arange(kn) + offset)), shape=(kn, n_cols))


def sum_rows(k: int, n: int, offset: int, n_cols: int) -> sp.csr_matrix:
    """Row j sums the j-th block of n variables starting at offset."""
    rows = np.repeat(np.arange(k), n)
    return sp.csr_matrix((np.ones(k * n), (rows, np.arange(k * n) + offset)), shape=(k, n_cols))


def column(n_cols: int, col: int, n_rows: int, value: float) -> sp.csr_matrix:
    """``n_rows`` rows holding ``value`` in column ``col`` (e.g. the ``-d`` of min-delta rows)."""
    return sp.csr_matrix((np.full(n_rows, value), (np.arange(n_rows), np.full(n_rows, col))), shape=(n_rows, n_cols))


def mass_row(n: int, n_cols: int) -> sp.csr_matrix:
    """The row ``sum f`` over the first ``n`` columns (total mass)."""
    return sp.csr_matrix((np.ones(n), (np.zeros(n, int), np.arange(n))), shape=(1, n_cols))


def cost_row(rho: np.ndarray, n_cols: int) -> sp.csr_matrix:
    """The row ``rho . f`` (expected cost)."""
    return sp.csr_matrix((rho, (np.zeros(rho.size, int), np.arange(rho.size))), shape=(1, n_cols))


# ------------------------------------------------------------ mirror orbits
@dataclass(frozen=True)
class Orbits:
    """A partition of the noise values into classes whose masses the LP keeps equal.

    ``orbit[eta]`` is the class of ``eta`` (``0..size-1``), ``weight[o]`` the number of
    values in class ``o`` and ``shifts`` the rows of the shift table that the LP keeps.
    :func:`identity_orbits` is no reduction; :func:`mirror_orbits` pairs ``eta`` with
    ``-eta``.
    """

    orbit: np.ndarray
    weight: np.ndarray
    shifts: np.ndarray

    @property
    def size(self) -> int:
        return int(self.weight.size)

    @property
    def reduced(self) -> bool:
        return self.size < self.orbit.size


def identity_orbits(sh: Shifts) -> Orbits:
    """Every value its own class, every shift kept."""
    n = sh.n
    return Orbits(np.arange(n, dtype=sh.partner.dtype), np.ones(n), np.arange(sh.k))


def mirror_index(shape: tuple[int, ...]) -> np.ndarray:
    """Flat index of ``-eta`` (modulo each axis) for every flat ``eta``."""
    grids = np.indices(shape, dtype=np.int64 if int(np.prod(shape)) >= 2 ** 31 else np.int32)
    return np.ravel_multi_index(tuple((-g) % s for g, s in zip(grids, shape)), shape).ravel().astype(grids.dtype)


def mirror_orbits(shape: tuple[int, ...], sh: Shifts, rho: np.ndarray) -> Orbits | None:
    """The mirror reduction ``f(eta) = f(-eta)``, or ``None`` where it could lose optimality.

    It applies when the shift set is closed under negation (a symmetric neighbourhood, or a
    directed one that happens to be) and the cost is mirror-symmetric *exactly*,
    ``rho(eta) == rho(-eta)``; then it loses nothing. One shift of each pair ``{mu, -mu}`` is kept (both when ``mu = -mu``): the rows of ``-mu`` at ``-eta`` are those
    of ``mu`` at ``eta`` once ``f`` is symmetric.

    Proof: docs/proofs/mirror-reduction.md.
    """
    vecs = [tuple(v) for v in sh.vectors]
    if not vecs:
        return None
    neg = [tuple((-x) % s for x, s in zip(v, shape)) for v in vecs]
    if set(neg) != set(vecs):
        return None
    mir = mirror_index(shape)
    if not np.array_equal(rho, rho[mir]):
        return None
    rep = np.minimum(np.arange(mir.size, dtype=mir.dtype), mir)
    reps, orbit = np.unique(rep, return_inverse=True)
    keep = np.array([j for j, (v, m) in enumerate(zip(vecs, neg)) if v <= m])
    return Orbits(orbit.astype(mir.dtype).ravel(), np.bincount(orbit.ravel()).astype(float), keep)


# --------------------------------------------------------- the DP LP at once
@dataclass(frozen=True)
class DPModel:
    """The standard-DP LP in the form HiGHS takes: ``min c.x``, ``A_ub x <= b_ub``,
    ``A_eq x = 1`` (total mass), ``0 <= x <= upper``.

    Columns: one mass variable per *active* class (``columns[v]`` is its class), then one
    hockey-stick variable ``t`` per kept ratio row (with ``delta > 0`` or min-delta), then
    ``d`` (min-delta). The mass of a class is spread evenly over its values.
    """

    c: np.ndarray
    a_ub: sp.csr_array
    b_ub: np.ndarray
    a_eq: sp.csr_array
    upper: np.ndarray
    columns: np.ndarray

    def pmf(self, x: np.ndarray, orbits: Orbits) -> np.ndarray:
        """The PMF ``f`` over all values from a solution ``x`` (inactive classes hold 0)."""
        g = np.zeros(orbits.size)
        g[self.columns] = x[:self.columns.size]
        return g[orbits.orbit]


def dp_lp(sh: Shifts, orbits: Orbits, rho: np.ndarray, e: float, *, rows: np.ndarray,
          active: np.ndarray, hockey: bool, delta: float, max_cost: float | None) -> DPModel:
    """The standard-DP LP (Kadam (14); hockey-stick rows for ``delta > 0``; (15) for min-delta).

    Parameters
    ----------
    sh, orbits:
        The shift table and the classes of values kept equal (:func:`identity_orbits`,
        :func:`mirror_orbits`).
    rho:
        Cost of every value (flat).
    e:
        The ratio bound ``e^eps`` (with any margin already applied).
    rows:
        Flat indices ``j * N + eta`` of the ratio rows ``f(eta) - e f(eta + mu_j) [- t] <= 0``
        to keep, ``j`` among ``orbits.shifts``, in increasing order. All of them give the
        full LP; a subset gives a relaxation (see :func:`optnoise.design.finite.design_finite`).
    active:
        Sorted classes that get a mass variable; every class met by a kept row must be
        active. The others hold mass 0.
    hockey:
        ``t`` variables and the rows ``sum_eta t[mu, eta] <= delta`` (or ``<= d``).
    delta, max_cost:
        ``max_cost`` not ``None`` means min-delta: minimise ``d`` subject to
        ``rho . f <= max_cost``; ``delta`` is then unused.

    Rows and columns come in the order of the block models (ratio rows shift-major, then
    one hockey row per kept shift, then the cost row): with every row and no mirror it is
    the matrix the block builders assemble, so HiGHS sees the same problem.
    """
    m = int(rows.size)
    idx_t = np.int32 if (3 * m + 4 * active.size + 8) < 2 ** 31 else np.int64
    n_f = int(active.size)
    min_delta = max_cost is not None
    n_cols = n_f + (m if hockey else 0) + (1 if min_delta else 0)
    j, indptr, cols, vals = _ratio_csr(sh, orbits, e, rows, active, hockey, idx_t)
    w = orbits.weight[active]
    class_cost = rho_of(orbits, rho)[active] * w
    extra_cols, extra_vals, b_extra = _sum_rows(orbits.shifts, j, n_f, n_cols, hockey, delta, max_cost, class_cost,
                                                idx_t)
    if extra_cols:
        nnz = int(indptr[-1])
        indptr = np.concatenate((indptr, nnz + np.cumsum([c.size for c in extra_cols])))
        cols = np.concatenate([cols, *extra_cols])
        vals = np.concatenate([vals, *extra_vals])
    n_rows = m + len(extra_cols)
    a_ub = sp.csr_array((vals, cols, indptr.astype(idx_t) if indptr[-1] < 2 ** 31 else indptr),
                        shape=(n_rows, n_cols))
    b_ub = np.concatenate((np.zeros(m), np.asarray(b_extra, dtype=float)))
    a_eq = sp.csr_array((w, np.arange(n_f, dtype=idx_t), np.array([0, n_f], dtype=idx_t)), shape=(1, n_cols))
    c = np.zeros(n_cols)
    if min_delta:
        c[-1] = 1.0
    else:
        c[:n_f] = class_cost
    upper = np.full(n_cols, np.inf)
    upper[:n_f] = 1.0 / w
    return DPModel(c, a_ub, b_ub, a_eq, upper, active)


def _ratio_csr(sh: Shifts, orbits: Orbits, e: float, rows: np.ndarray, active: np.ndarray, hockey: bool,
               idx_t: type) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ratio rows ``f(eta) - e f(eta + mu_j) [- t] <= 0`` in CSR form: ``(j, indptr, cols,
    vals)``, with one entry ``1 - e`` where both values are in one class."""
    m, n_f = int(rows.size), int(active.size)
    col_of = np.full(orbits.size, -1, dtype=idx_t)
    col_of[active] = np.arange(n_f, dtype=idx_t)
    j, eta = np.divmod(rows, sh.n)
    a = col_of[orbits.orbit[eta]]
    b = col_of[orbits.orbit[sh.partner[j, eta]]]
    if m and (a.min() < 0 or b.min() < 0):
        raise ValueError("a kept ratio row meets an inactive class")
    same = a == b                     # f(eta) and f(eta + mu) in one class: one entry 1 - e
    per_row = np.where(same, 1, 2) + (1 if hockey else 0)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(per_row, out=indptr[1:])
    cols = np.empty(int(indptr[-1]), dtype=idx_t)
    vals = np.empty(int(indptr[-1]))
    start = indptr[:-1]
    cols[start] = a
    vals[start] = np.where(same, 1.0 - e, 1.0)
    two = start[~same] + 1
    cols[two] = b[~same]
    vals[two] = -e
    if hockey:
        last = indptr[1:] - 1
        cols[last] = n_f + np.arange(m, dtype=idx_t)
        vals[last] = -1.0
    return j, indptr, cols, vals


def _sum_rows(kept: np.ndarray, j: np.ndarray, n_f: int, n_cols: int, hockey: bool, delta: float,
              max_cost: float | None, class_cost: np.ndarray, idx_t: type) -> tuple[list, list, list]:
    """The rows after the ratio rows: one ``sum_eta t[mu, eta] <= delta`` (or ``<= d``) per kept
    shift, then (min-delta) the cost row ``rho . f <= max_cost``; ``(cols, vals, bounds)``."""
    extra_cols, extra_vals, b_extra = [], [], []
    min_delta = max_cost is not None
    if hockey:
        # one row per kept shift: sum of its t's (rows are shift-major, so t's are contiguous)
        bounds = np.searchsorted(j, kept, side="left"), np.searchsorted(j, kept, side="right")
        for lo, hi in zip(*bounds):
            c_row = n_f + np.arange(lo, hi, dtype=idx_t)
            v_row = np.ones(hi - lo)
            if min_delta:
                c_row = np.append(c_row, idx_t(n_cols - 1))
                v_row = np.append(v_row, -1.0)
            extra_cols.append(c_row)
            extra_vals.append(v_row)
            b_extra.append(0.0 if min_delta else delta)
    if min_delta:
        extra_cols.append(np.arange(n_f, dtype=idx_t))
        extra_vals.append(class_cost)
        b_extra.append(float(max_cost))  # type: ignore[arg-type]
    return extra_cols, extra_vals, b_extra


def rho_of(orbits: Orbits, rho: np.ndarray) -> np.ndarray:
    """The cost of each class (constant on a class whenever classes are used)."""
    out = np.empty(orbits.size)
    out[orbits.orbit] = rho
    return out


# --------------------------------------------- the per-distance PDP MILP at once
@dataclass(frozen=True)
class PDPModel:
    """The per-distance PDP MILP over a set of (shift, value) pairs, for ``scipy.optimize.milp``:
    ``lo <= a x <= hi``, ``0 <= x <= 1``, ``x[integrality == 1]`` binary.

    Columns: one mass per active value (``columns``), then ``y`` and ``u`` per kept pair,
    then ``d`` (min-delta).
    """

    c: np.ndarray
    a: sp.csr_array
    lo: np.ndarray
    hi: np.ndarray
    integrality: np.ndarray
    columns: np.ndarray
    pairs: int

    def pmf(self, x: np.ndarray, size: int) -> np.ndarray:
        f = np.zeros(size)
        f[self.columns] = x[:self.columns.size]
        return f

    def indicators(self, x: np.ndarray) -> np.ndarray:
        u0 = self.columns.size + self.pairs
        return np.rint(x[u0:u0 + self.pairs]).astype(bool)


def pdp_milp(sh: Shifts, rho: np.ndarray, e: float, *, rows: np.ndarray, active: np.ndarray, delta: float,
             max_cost: float | None) -> PDPModel:
    """Per-distance PDP (Kadam Def. 2) with one indicator per kept pair ``p = (mu_j, eta)``:
    ``f(eta) - e f(eta + mu_j) <= y_p``, ``y_p <= f(eta)``, ``y_p >= f(eta) - (1 - u_p)``,
    ``y_p <= delta u_p``, ``sum_{p of mu_j} y_p <= delta`` (``<= d`` for min-delta), total mass 1.

    ``rows`` are flat pair indices ``j * N + eta`` in increasing order (all of them: the full
    model, in the row order of the block model); every value met by a kept pair must be in
    the sorted ``active``, the others hold mass 0. A subset of pairs is a relaxation: a pair
    left out may violate for free.
    """
    n = sh.n
    m = int(rows.size)
    n_f = int(active.size)
    min_delta = max_cost is not None
    col_of = np.full(n, -1, dtype=np.int64)
    col_of[active] = np.arange(n_f)
    j, eta = np.divmod(rows, n)
    a_col = col_of[eta]
    b_col = col_of[sh.partner[j, eta]]
    if m and (a_col.min() < 0 or b_col.min() < 0):
        raise ValueError("a kept pair meets an inactive value")
    y = n_f + np.arange(m)
    u = n_f + m + np.arange(m)
    n_cols = n_f + 2 * m + (1 if min_delta else 0)
    ub_delta = 1.0 if min_delta else min(delta, 1.0)
    r = np.arange(m)
    ones = np.ones(m)
    # four blocks of m rows: ratio through y, y <= f, y >= f - (1 - u), y <= delta u
    rr = [r, r, r, m + r, m + r, 2 * m + r, 2 * m + r, 2 * m + r, 3 * m + r, 3 * m + r]
    cc = [a_col, b_col, y, y, a_col, a_col, y, u, y, u]
    vv = [ones, np.full(m, -e), -ones, ones, -ones, ones, -ones, ones, ones, np.full(m, -ub_delta)]
    lo = [np.full(4 * m, -np.inf)]
    hi = [np.zeros(m), np.zeros(m), np.ones(m), np.zeros(m)]
    row = 4 * m
    for jj in range(sh.k):                                # one hockey row per shift
        sel = np.flatnonzero(j == jj)
        rr.append(np.full(sel.size, row))
        cc.append(y[sel])
        vv.append(np.ones(sel.size))
        if min_delta:
            rr.append(np.array([row]))
            cc.append(np.array([n_cols - 1]))
            vv.append(np.array([-1.0]))
        lo.append(np.array([-np.inf]))
        hi.append(np.array([0.0 if min_delta else delta]))
        row += 1
    rr.append(np.full(n_f, row))                          # total mass
    cc.append(np.arange(n_f))
    vv.append(np.ones(n_f))
    lo.append(np.array([1.0]))
    hi.append(np.array([1.0]))
    row += 1
    c = np.zeros(n_cols)
    if min_delta:
        rr.append(np.full(n_f, row))
        cc.append(np.arange(n_f))
        vv.append(rho[active])
        lo.append(np.array([-np.inf]))
        hi.append(np.array([float(max_cost)]))
        row += 1
        c[-1] = 1.0
    else:
        c[:n_f] = rho[active]
    a = sp.csr_array((np.concatenate(vv), (np.concatenate(rr), np.concatenate(cc))), shape=(row, n_cols))
    integrality = np.zeros(n_cols)
    integrality[n_f + m:n_f + 2 * m] = 1
    return PDPModel(c, a, np.concatenate(lo), np.concatenate(hi), integrality, active, m)
