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
from ._pricing import (
    fair_factors,
    move_prices,
    point_base,
    point_terms,
    size_factors,
    squared_distance,
)


@cached_njit(nogil=True, parallel=True)
def nearest_center(X, centers, labels):  # IN, IN, OUT
    """Index of the nearest centre of each row (ties to the lowest index)."""
    k = centers.shape[0]
    for i in numba.prange(X.shape[0]):
        best = 0
        best_d = squared_distance(X, i, centers, 0)
        for c in range(1, k):
            dist = squared_distance(X, i, centers, c)
            if dist < best_d:
                best = c
                best_d = dist
        labels[i] = best


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
    for i in numba.prange(X.shape[0]):
        dist = np.empty(k)
        lin = np.empty(k)
        costs = np.empty(k)
        point_terms(X, codes, value_prop, cat_coef, Z, num_coef, i, centers, counts, value_counts,
                    cat_dev, num_sums, dist, lin)
        # A new point is priced alone, with weight 1.
        move_prices(False, 1.0, point_base(codes, value_const, cat_coef, Z, num_coef, i), dist,
                    lin, -1, counts, grow, shrink, p, factors, costs)
        best = 0
        for c in range(1, k):
            if costs[c] < costs[best]:
                best = c
        labels[i] = best
