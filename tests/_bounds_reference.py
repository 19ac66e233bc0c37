"""Plain references of the bounded assignment: the bands and the relaxation written apart.

The relaxation on every row, one variable per (row, cluster), every band
written on the rows, solved by scipy's HiGHS: its optimum is what fairkm's
lower bound may never exceed.
"""

import numpy as np
from scipy import sparse
from scipy.optimize import linprog


def plain_bands(S, delta, kind):
    out = []
    for col in S.T:
        _, codes = np.unique(col, return_inverse=True)
        p = np.bincount(codes) / codes.shape[0]
        lower, upper = ((p - delta, p + delta) if kind == "additive"
                        else ((1 - delta) * p, p / (1 - delta)))
        out.append((codes, lower, upper))
    return out


def plain_lp(X, centers, S, delta, kind):
    """The relaxation on every row: x[i, c] in [0, 1], every band written on the rows."""
    n, k = X.shape[0], centers.shape[0]
    d = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    A, b = [], []
    for codes, lower, upper in plain_bands(S, delta, kind):
        for v in range(lower.shape[0]):
            has = (codes == v).astype(float)
            for c in range(k):
                row = np.zeros((n, k))
                if upper[v] < 1:
                    row[:, c] = has - upper[v]
                    A.append(row.reshape(-1).copy())
                    b.append(0.0)
                if lower[v] > 0:
                    row[:, c] = lower[v] - has
                    A.append(row.reshape(-1).copy())
                    b.append(0.0)
    for c in range(k):
        row = np.zeros((n, k))
        row[:, c] = -1.0
        A.append(row.reshape(-1))
        b.append(-1.0)
    A_eq = sparse.kron(sparse.eye(n), np.ones((1, k)))
    res = linprog(d.reshape(-1), A_ub=np.array(A), b_ub=np.array(b), A_eq=A_eq,
                  b_eq=np.ones(n), bounds=(0, 1), method="highs")
    assert res.status == 0
    return res.fun
