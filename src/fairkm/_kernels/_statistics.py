"""Per-cluster statistics, inertia and objective, recomputed from scratch.

:func:`cluster_statistics` counts the statistics from the labels,
:func:`inertia` sums the squared distances to the centres, and
:func:`statistics_objective` evaluates the objective from the statistics alone
(what the mini-batch epoch compares). The passes over rows add them in chunks
of :data:`_STATISTICS_CHUNK`, the chunks' partial results in order.
"""

import numpy as np

from .._kernel_cache import cached_njit
from ._pricing import cluster_quad, power, squared_distance

# Rows per chunk of the statistics and inertia passes: each chunk is summed
# row by row into its own partial result, and the partials are added in chunk
# order. The passes are serial: a pass costs a few nanoseconds per row, less
# than a thread rendezvous is worth on a shared machine.
_STATISTICS_CHUNK = 65536


@cached_njit(nogil=True)
def _accumulate(X, codes, Z, weights, labels, start, stop, sums, counts, value_counts,
                num_sums):
    """Add rows ``start`` to ``stop`` to their clusters' sums and counts, row by row."""
    if weights.shape[0] == 0:
        for i in range(start, stop):
            c = labels[i]
            counts[c] += 1.0
            for j in range(X.shape[1]):
                sums[j, c] += X[i, j]
            for t in range(codes.shape[1]):
                value_counts[codes[i, t], c] += 1.0
            for t in range(Z.shape[1]):
                num_sums[t, c] += Z[i, t]
        return
    for i in range(start, stop):
        c = labels[i]
        w = weights[i]
        counts[c] += w
        for j in range(X.shape[1]):
            sums[j, c] += w * X[i, j]
        for t in range(codes.shape[1]):
            value_counts[codes[i, t], c] += w
        for t in range(Z.shape[1]):
            num_sums[t, c] += w * Z[i, t]


@cached_njit(nogil=True)
def cluster_statistics(
    X, codes, Z, weights, labels,  # IN
    sums, counts, value_counts, num_sums,  # OUT
):
    """Per-cluster sums, counts, value counts and numeric sums, exactly from ``labels``.

    The output arrays are overwritten; shapes as in
    :func:`fairkm._kernels.sweep` (cluster axis last). Rows are summed in
    chunks of :data:`_STATISTICS_CHUNK`, the chunks' partial sums added in order.
    """
    sums[:] = 0.0
    counts[:] = 0.0
    value_counts[:] = 0.0
    num_sums[:] = 0.0
    part_sums, part_counts = np.zeros_like(sums), np.zeros_like(counts)
    part_values, part_num = np.zeros_like(value_counts), np.zeros_like(num_sums)
    n = X.shape[0]
    for start in range(0, n, _STATISTICS_CHUNK):
        _accumulate(X, codes, Z, weights, labels, start, min(n, start + _STATISTICS_CHUNK),
                    part_sums, part_counts, part_values, part_num)
        sums += part_sums
        counts += part_counts
        value_counts += part_values
        num_sums += part_num
        part_sums[:] = 0.0
        part_counts[:] = 0.0
        part_values[:] = 0.0
        part_num[:] = 0.0


@cached_njit(nogil=True)
def inertia(X, centers, weights, labels):
    """Sum of (weighted) squared distances of the points to their cluster's centre.

    Rows are summed in chunks of :data:`_STATISTICS_CHUNK`, the chunks' sums
    added in order.
    """
    n = X.shape[0]
    total = 0.0
    for start in range(0, n, _STATISTICS_CHUNK):
        part = 0.0
        for i in range(start, min(n, start + _STATISTICS_CHUNK)):
            dist = squared_distance(X, i, centers, labels[i])
            part += dist if weights.shape[0] == 0 else weights[i] * dist
        total += part
    return total


@cached_njit(nogil=True)
def statistics_objective(value_prop, offsets, cat_coef, num_coef, cluster_exponent,  # IN
                         total_sq_norm, sums, counts, value_counts, num_sums):  # IN
    """Compute the objective from the statistics alone, in O(k (d + V)).

    ``total_sq_norm - sum_C ||sum_C||^2 / |C|`` plus every cluster's fairness
    term (``Q_C / |C|^p``, ``p = 2 - e``, the coefficients including ``fairness_weight``).
    """
    quad = cluster_quad(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                        num_sums)
    p = 2 - cluster_exponent
    value = total_sq_norm
    for c in range(counts.shape[0]):
        if counts[c] > 0:
            explained = 0.0
            for j in range(sums.shape[0]):
                explained += sums[j, c] * sums[j, c]
            value += quad[c] / power(counts[c], p) - explained / counts[c]
    return value
