"""A row-compressed sparse matrix in NumPy: the channel LP's model without scipy.sparse.

Why: importing ``scipy.sparse`` takes 0.12 s of CPU (it clones NumPy's namespace, testing
package included, for the array API), a quarter of a small query's whole budget (issue 37,
docs/benchmarks.md); the channel LP of a query's count cell needs a few operations on a few
hundred entries. :class:`CSR` holds exactly what :mod:`.channel_model` does with its blocks
and its substitution -- built from coordinates, products, ``A.T @ y``, row selection,
stacking -- and what :func:`.solver.solve_lp` and :func:`.bounds.lp_bound` read
(``indptr``, ``indices``, ``data``, ``shape``). Every result equals scipy's value for value:
the same canonical form (rows in order, columns sorted, duplicates summed in the order
given, explicit zeros kept, except that a product drops the entries that sum to zero, as
``csr_matmat`` does), and every sum taken in scipy's order (``tests/test_design_csr.py``
compares them). The MILP paths convert with :meth:`CSR.to_scipy` where scipy is needed anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True, eq=False)
class CSR:
    """``shape`` rows and columns; row ``i``'s entries are ``indices[indptr[i]:indptr[i+1]]``
    (sorted, distinct) with values ``data[...]``."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def coo(cls, rows: Any, cols: Any, data: Any, shape: tuple[int, int], drop_zeros: bool = False) -> CSR:
        """From coordinates: entries sorted by (row, column), duplicates summed in the order given
        (explicit zeros kept unless ``drop_zeros``)."""
        rows = np.asarray(rows, dtype=np.int64).ravel()
        cols = np.asarray(cols, dtype=np.int64).ravel()
        data = np.asarray(data, dtype=np.float64).ravel()
        order = np.lexsort((cols, rows))
        rows, cols, data = rows[order], cols[order], data[order]
        if len(rows):
            start = np.ones(len(rows), dtype=bool)
            start[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
            if not start.all():
                at = np.flatnonzero(start)   # summed one after the other, in the order given
                rows, cols, data = rows[at], cols[at], np.bincount(np.cumsum(start) - 1, weights=data)
        if drop_zeros:
            keep = data != 0
            rows, cols, data = rows[keep], cols[keep], data[keep]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=shape[0])))).astype(np.int64)
        return cls(indptr, cols, data, (int(shape[0]), int(shape[1])))

    @classmethod
    def identity(cls, n: int) -> CSR:
        at = np.arange(n, dtype=np.int64)
        return cls(np.arange(n + 1, dtype=np.int64), at, np.ones(n), (n, n))

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def rows(self) -> np.ndarray:
        """Each entry's row."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    @property
    def T(self) -> Transposed:  # noqa: N802 - as scipy and NumPy name it
        return Transposed(self)

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, CSR):   # scipy's csr_matmat: row by row, in entry order, zeros dropped
            k = np.diff(other.indptr)[self.indices]
            pick = np.repeat(other.indptr[self.indices], k) + _ranges(k)
            return CSR.coo(np.repeat(self.rows, k), other.indices[pick], np.repeat(self.data, k) * other.data[pick],
                           (self.shape[0], other.shape[1]), drop_zeros=True)
        x = np.asarray(other, dtype=np.float64)
        return np.bincount(self.rows, weights=self.data * x[self.indices], minlength=self.shape[0])

    def __abs__(self) -> CSR:
        return CSR(self.indptr, self.indices, np.abs(self.data), self.shape)

    def __getitem__(self, which: Any) -> CSR:
        """The rows ``which`` (a boolean mask or indices), in that order."""
        at = np.arange(self.shape[0])[which] if isinstance(which, slice) else np.asarray(which)
        at = np.flatnonzero(at) if at.dtype == bool else at.astype(np.int64)
        k = np.diff(self.indptr)[at]
        pick = np.repeat(self.indptr[at], k) + _ranges(k)
        indptr = np.concatenate(([0], np.cumsum(k))).astype(np.int64)
        return CSR(indptr, self.indices[pick], self.data[pick], (len(at), self.shape[1]))

    def columns(self, keep: np.ndarray) -> CSR:
        """The columns where ``keep`` (boolean) holds, in order."""
        at = keep[self.indices]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(self.rows[at], minlength=self.shape[0])))).astype(np.int64)
        return CSR(indptr, (np.cumsum(keep) - 1)[self.indices[at]], self.data[at], (self.shape[0], int(keep.sum())))

    def tocsr(self, copy: bool = False) -> CSR:
        return CSR(self.indptr.copy(), self.indices.copy(), self.data.copy(), self.shape) if copy else self

    def sum_duplicates(self) -> None:
        """Nothing to do: the form is canonical."""

    def sort_indices(self) -> None:
        """Nothing to do: the form is canonical."""

    def to_scipy(self) -> Any:
        """The same matrix as a ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as sp
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        out[self.rows, self.indices] = self.data
        return out


@dataclass(frozen=True, eq=False)
class Transposed:
    """``A.T`` for ``A.T @ y``: per column, the entries' products summed down the rows (scipy's
    ``csc_matvec`` order)."""

    of: CSR

    def __matmul__(self, y: Any) -> np.ndarray:
        a = self.of
        return np.bincount(a.indices, weights=a.data * np.asarray(y, dtype=np.float64)[a.rows], minlength=a.shape[1])


def _ranges(k: np.ndarray) -> np.ndarray:
    """``0..k[0]-1, 0..k[1]-1, ...`` concatenated."""
    total = int(k.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(k)
    return np.arange(total, dtype=np.int64) - np.repeat(ends - k, k)


def vstack(blocks: Sequence[CSR]) -> CSR:
    """The blocks' rows one under the other."""
    offsets = np.cumsum([0] + [b.nnz for b in blocks[:-1]])
    indptr = np.concatenate([[0]] + [b.indptr[1:] + o for b, o in zip(blocks, offsets)]).astype(np.int64)
    return CSR(indptr, np.concatenate([b.indices for b in blocks]), np.concatenate([b.data for b in blocks]),
               (sum(b.shape[0] for b in blocks), blocks[0].shape[1]))


__all__ = ["CSR", "Transposed", "vstack"]
