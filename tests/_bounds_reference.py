"""Plain references of the bounded assignment: the bands and the relaxation written apart.

The relaxation on every row, one variable per (row, cluster), every band
written on the rows, solved by scipy's HiGHS: its optimum is what fairkm's
lower bound may never exceed. A cluster's balance (its smallest count of a
value the dataset holds over its largest) and a balance target's shortfall
counted row by row.
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


def plain_balance(labels, column, k, weights=None):
    """Per cluster 0..k-1, its balance of ``column``: least count over largest (NaN if empty).

    Counts are weighted; only values of positive total weight count.
    """
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    values = [v for v in np.unique(column) if w[column == v].sum() > 0]
    out = np.full(k, np.nan)
    for c in range(k):
        mine = labels == c
        if w[mine].sum() <= 0:
            continue
        counts = [w[mine & (column == v)].sum() for v in values]
        out[c] = min(counts) / max(counts)
    return out


def plain_shortfall(labels, column, k, target, weights=None):
    """Per cluster, ``target`` times its largest count less its least (when positive)."""
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    values = [v for v in np.unique(column) if w[column == v].sum() > 0]
    out = np.zeros(k)
    for c in range(k):
        counts = [w[(labels == c) & (column == v)].sum() for v in values]
        out[c] = max(target * max(counts) - min(counts), 0.0)
    return out


def plain_lp(X, centers, S, delta, kind, min_balance=None):
    """The relaxation on every row: x[i, c] in [0, 1], every band written on the rows.

    ``delta`` None writes no band; ``min_balance`` (a target for every
    column) writes, per cluster and ordered pair of values, ``b n_u <= n_v``.
    """
    n, k = X.shape[0], centers.shape[0]
    d = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    A, b = [], []
    if min_balance is not None:
        for col in S.T:
            values = np.unique(col)
            for v in values:
                for u in values:
                    if u == v:
                        continue
                    for c in range(k):
                        row = np.zeros((n, k))
                        row[:, c] = min_balance * (col == u) - (col == v)
                        A.append(row.reshape(-1))
                        b.append(0.0)
    for codes, lower, upper in ([] if delta is None else plain_bands(S, delta, kind)):
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
