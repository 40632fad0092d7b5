#!/usr/bin/env python3
"""Reference CG results from SciPy for tests/test_sparse.cpp (kept with the tests; its output,
scipy_ref.txt, is committed so `make test` needs no SciPy).

The matrices are built here independently of Kyoyu's generators (Kronecker sums for the Poisson operators,
scipy.io.mmread for the real s1rmq4m1); b = A * ones, x0 = 0, SciPy's cg to rtol 1e-8.
Run: /usr/bin/python3 tests/sparse/scipy_ref.py [path/to/s1rmq4m1.mtx] > tests/sparse/scipy_ref.txt
Columns: spec n nnz iterations max|x-1| ||x||_2 (the scipy version is in the header line)."""
import sys

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def poisson(m, points):
    one = sp.identity(m, format="csr")
    if points == 7:
        t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m), format="csr")
        return (sp.kron(sp.kron(t, one), one) + sp.kron(sp.kron(one, t), one) + sp.kron(sp.kron(one, one), t)).tocsr()
    # 27 points: 26 on the diagonal, -1 for each of the up to 26 neighbours = 27 * I - (B x B x B), B tridiagonal ones
    b = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(m, m), format="csr")
    return (27.0 * sp.identity(m ** 3, format="csr") - sp.kron(sp.kron(b, b), b)).tocsr()


def solve(name, a):
    n = a.shape[0]
    b = a @ np.ones(n)
    count = [0]

    def cb(_):
        count[0] += 1

    kw = {"rtol": 1e-8} if tuple(int(v) for v in scipy.__version__.split(".")[:2]) >= (1, 12) else {"tol": 1e-8}
    x, info = sla.cg(a, b, x0=np.zeros(n), atol=0.0, maxiter=100000, callback=cb, **kw)
    assert info == 0, (name, info)
    print(f"{name} {n} {a.nnz} {count[0]} {np.max(np.abs(x - 1.0)):.6e} {np.linalg.norm(x):.12e}")


def main():
    print(f"# scipy {scipy.__version__}: spec n nnz iterations max|x-1| ||x||_2")
    for m in (10, 14):
        solve(f"poisson7:{m}", poisson(m, 7))
    solve("poisson27:9", poisson(9, 27))
    mtx = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/matrices/s1rmq4m1.mtx"
    a = scipy.io.mmread(mtx).tocsr()
    solve("s1rmq4m1", a)


if __name__ == "__main__":
    main()
