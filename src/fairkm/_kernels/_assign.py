"""Labels of rows against fixed centres or fitted statistics; nothing moves.

:func:`nearest_center` (initial labels from the seeds, rows of weight 0,
``predict`` without sensitive features) and :func:`cheapest_insertion`
(``predict`` with them: each row priced alone against the fitted statistics).
Rows are independent, so both run in parallel and their labels do not depend
on the number of threads.
"""

import numba
import numpy as np

from .._kernel_cache import cached_njit
from ._blocks import BLOCK, all_distances, copy_block, lin_table, table_lin
from ._pricing import fair_factors, move_prices, point_base, size_factors

# Rows per parallel task (priced by blocks of BLOCK): the task's buffers are
# allocated once for all its blocks.
_TASK = 256


@cached_njit(nogil=True, parallel=True)
def nearest_center(X, centers, labels):  # IN, IN, OUT
    """Index of the nearest centre of each row (ties to the lowest index); centres one per row."""
    k = centers.shape[0]
    by_feature = np.ascontiguousarray(centers.T)  # the blocks' layout (d, k)
    n = X.shape[0]
    for task in numba.prange((n + _TASK - 1) // _TASK):
        coords = np.empty((X.shape[1], BLOCK))
        block_dist = np.empty((k, BLOCK))
        for start in range(task * _TASK, min(n, (task + 1) * _TASK), BLOCK):
            m = min(BLOCK, n - start)
            copy_block(X, start, m, coords)
            all_distances(coords, m, by_feature, block_dist)
            for r in range(m):
                best = 0
                for c in range(1, k):
                    if block_dist[c, r] < block_dist[best, r]:
                        best = c
                labels[start + r] = best


@cached_njit(nogil=True, parallel=True)
def cheapest_insertion(
    X, codes, value_prop, value_const, cat_coef, Z, num_coef, offsets, cluster_exponent,  # IN
    centers, counts, value_counts, cat_dev, num_sums,  # IN
    labels,  # OUT
):
    """Cluster where inserting each row alone raises the fitted objective least.

    Each row is priced against the same fitted statistics (shapes as in
    :func:`fairkm._kernels.sweep`), independently of the other rows; ties to
    the lowest index.
    """
    k = counts.shape[0]
    p = 2 - cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                              num_sums, p)
    table = lin_table(value_prop, offsets, cat_coef, counts, value_counts, cat_dev)
    n = X.shape[0]
    for task in numba.prange((n + _TASK - 1) // _TASK):
        dist = np.empty(k)
        lin = np.empty(k)
        costs = np.empty(k)
        coords = np.empty((X.shape[1], BLOCK))
        block_dist = np.empty((k, BLOCK))
        for start in range(task * _TASK, min(n, (task + 1) * _TASK), BLOCK):
            m = min(BLOCK, n - start)
            copy_block(X, start, m, coords)
            all_distances(coords, m, centers, block_dist)
            for r in range(m):
                i = start + r
                for c in range(k):
                    dist[c] = block_dist[c, r]
                table_lin(table, codes, Z, num_coef, num_sums, i, lin)
                move_prices(False, 1.0, point_base(codes, value_const, cat_coef, Z, num_coef, i),
                            dist, lin, -1, counts, grow, shrink, p, factors, costs)
                best = 0
                for c in range(1, k):
                    if costs[c] < costs[best]:
                        best = c
                labels[i] = best
