"""The per-row passes of the bounded assignment, compiled: pricing every row, summing groups.

Arrays and scalars in, arrays out; no randomness. One ``prange`` per pass over
the rows (a parallel region each), the small per-cluster work inside a row.
"""

import numba
import numpy as np

from ._cache import guard_kernel_caches

__all__ = ["group_sums", "priced_pass"]


@numba.njit(cache=True, parallel=True)
def priced_pass(dist, live, types, base, z, slope, labels, best, second, regret, floor,
                at_label):
    """Price every live row: its best and second cluster, margin, least and current cost.

    IN: dist (n_samples, k), live (m,), types (n_samples,), base (n_types, k),
    z (n_numeric, n_samples), slope (n_numeric, k), labels (m,) (a cluster per
    live row, or -1). OUT: best, second (m,) int64; regret, floor, at_label
    (m,) float64 (``at_label`` is the priced cost at ``labels``, NaN for -1).
    """
    m = live.shape[0]
    k = dist.shape[1]
    n_num = z.shape[0]
    for j in numba.prange(m):
        i = live[j]
        t = types[i]
        b1, b2 = -1, -1
        v1, v2 = np.inf, np.inf
        here = np.nan
        for c in range(k):
            v = dist[i, c] + base[t, c]
            for a in range(n_num):
                v += z[a, i] * slope[a, c]
            if c == labels[j]:
                here = v
            if v < v1:
                b2, v2 = b1, v1
                b1, v1 = c, v
            elif v < v2:
                b2, v2 = c, v
        best[j] = b1
        second[j] = b2 if b2 >= 0 else b1
        regret[j] = v2 - v1 if b2 >= 0 else 0.0
        floor[j] = v1
        at_label[j] = here


@numba.njit(cache=True)
def group_sums(rows, group, weights, dist, z, g_weight, g_cost, g_z):
    """Per group of rows: total weight, weighted cost in each cluster, weighted numeric sums.

    IN: rows (m,), group (m,), weights (n_samples,), dist (n_samples, k),
    z (n_numeric, n_samples). OUT (accumulated, zeroed by the caller):
    g_weight (n_groups,), g_cost (n_groups, k), g_z (n_numeric, n_groups).
    """
    k = dist.shape[1]
    for j in range(rows.shape[0]):
        i = rows[j]
        g = group[j]
        w = weights[i]
        g_weight[g] += w
        for c in range(k):
            g_cost[g, c] += w * dist[i, c]
        for a in range(z.shape[0]):
            g_z[a, g] += w * z[a, i]


guard_kernel_caches(globals())
