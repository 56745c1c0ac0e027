"""Sparse building blocks of the finite-domain design models (Kadam et al. 2024, (13)-(15)).

Variables are laid out in blocks: the PMF ``f`` first, then auxiliary blocks (hockey-stick
epigraph variables, PDP indicators) at given column offsets. Each builder returns a
``scipy.sparse`` CSR matrix with ``n_cols`` columns, so models are assembled with
``sp.vstack``. Public so that ``bench/milp_models.py`` can assemble alternative models
from the same pieces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..neighbourhood import Neighbourhood


@dataclass(frozen=True)
class Shifts:
    """Partner indices: ``partner[k, eta]`` is the flat index of ``eta + mu_k``."""

    partner: np.ndarray  # (K, N)

    @property
    def k(self) -> int:
        return int(self.partner.shape[0])

    @property
    def n(self) -> int:
        return int(self.partner.shape[1])


def cyclic_shift_table(shape: tuple[int, ...], nb: Neighbourhood) -> Shifts:
    """The partner table of every ordered shift of ``nb`` on the cyclic domain ``shape``."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    axes = tuple(range(len(shape)))
    rows = [np.roll(idx, tuple(-s for s in shift), axis=axes).ravel() for shift in nb.cyclic_shifts(shape)]
    return Shifts(np.array(rows))


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
