"""The channel model's sparse matrix in NumPy (:mod:`optnoise.design.csr`) equals scipy.sparse
value for value on every operation the model and its bound use (random matrices; sums of
duplicates exact where scipy's order of summing them is its sort's, which is not stable)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from optnoise.design.csr import CSR, vstack


def _same(a: CSR, b) -> None:
    b = b.tocsr()
    b.sum_duplicates()
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)


def _coords(rng, m: int, n: int, nnz: int, unique: bool, values: list[float]):
    r, c = rng.integers(0, m, nnz), rng.integers(0, n, nnz)
    if unique:   # distinct coordinates, in a random order
        _, at = np.unique(r * n + c, return_index=True)
        at = rng.permutation(at)
        r, c = r[at], c[at]
    return r, c, rng.choice(values, len(r))


@pytest.mark.parametrize("seed", range(40))
def test_csr_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        m, n, p = (int(v) for v in rng.integers(1, 9, 3))
        nnz = int(rng.integers(0, 30))
        unique = bool(rng.random() < 0.5)
        # rounding values where every coordinate is distinct; with duplicates, values whose sums are exact
        values = [0.0, 1.0, -1.0, 0.3, 0.7, 1e-17] if unique else [0.0, 1.0, -1.0, 0.5, 2.5, 0.25]
        r, c, d = _coords(rng, m, n, nnz, unique, values)
        a, a_sp = CSR.coo(r, c, d, (m, n)), sp.csr_matrix((d, (r, c)), shape=(m, n))
        _same(a, a_sp)   # explicit zeros kept, as scipy keeps them
        r2, c2, d2 = _coords(rng, n, p, nnz, unique, values)
        b, b_sp = CSR.coo(r2, c2, d2, (n, p)), sp.csr_matrix((d2, (r2, c2)), shape=(n, p))
        _same(a @ b, a_sp @ b_sp)   # summed in scipy's order, zero sums dropped
        x, y = rng.normal(size=n), rng.normal(size=m)
        assert np.array_equal(a @ x, a_sp @ x)
        assert np.array_equal(a.T @ y, sp.csc_matrix(a_sp).T @ y)   # as lp_bound computes it
        assert np.array_equal(abs(a).T @ np.abs(y), abs(sp.csc_matrix(a_sp)).T @ np.abs(y))
        mask = rng.random(m) < 0.5
        _same(a[mask], a_sp[mask])
        _same(a[slice(None)], a_sp)
        keep = rng.random(n) < 0.6
        _same(a.columns(keep), a_sp[:, keep])
        _same(vstack([a, a[mask]]), sp.vstack([a_sp, a_sp[mask]], format="csr"))
        _same(CSR.coo(r, c, d, (m, n)).to_scipy(), a_sp)
        assert np.array_equal(a.toarray(), a_sp.toarray())
    _same(CSR.identity(4), sp.identity(4, format="csr"))
