"""Kernels that move points between clusters.

The exact sweep (:func:`sweep`: one point at a time, the statistics updated
after every move), one point's move deltas (:func:`move_deltas`, what the sweep
sees), and the mini-batch kernels (:func:`propose_moves` prices a batch in
parallel against the same statistics, :func:`apply_moves` applies it,
:func:`minibatch_epoch` keeps or undoes each batch). Every move is priced by
:func:`fairkm._kernels._pricing.move_prices`; the sweep computes its distances
and linear terms by blocks of points (:mod:`fairkm._kernels._blocks`),
bit-identical to pricing one point at a time.
"""

import numba
import numpy as np

from .._kernel_cache import cached_njit
from ._blocks import (
    all_distances,
    gather_block,
    lin_table,
    patch_distances,
    set_lin_columns,
    table_lin,
)
from ._pricing import (
    best_move,
    fair_factors,
    may_leave,
    move_point,
    move_prices,
    point_base,
    point_change,
    point_terms,
    point_weight,
    set_fair_factor,
    set_size_factor,
    size_factors,
)
from ._statistics import statistics_objective


def sweep(
    X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,  # IN
    offsets, cluster_exponent, order, block,  # IN
    labels, sums, centers, counts, value_counts, cat_dev, num_sums,  # IN/OUT
):
    """Visit the points in ``order`` once, moving each to its best cluster.

    Runs the compiled sweep for unit weights or for sample weights: two
    kernels, each compiled at its first use, so that neither loop carries the
    other's code (the weighted formulas' mere presence slows the unit-weight
    loop about 2x) and a fit compiles only the one it runs.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C-contiguous
    codes : ndarray of shape (n, A), int64
        Global value index (attribute offset added) of each categorical value.
    value_prop, value_const, value_shift : ndarray of shape (V,), float64
    cat_coef : ndarray of shape (A,), float64
    Z : ndarray of shape (n, B), float64
        Centred standardised numeric sensitive values.
    num_coef : ndarray of shape (B,), float64
    weights : ndarray of shape (n,) or (0,), float64
        Sample weights; empty for unit weights.
    offsets : ndarray of shape (A + 1,), int64
        First global value index of each categorical attribute, and ``V``.
    cluster_exponent : int
        ``e``: each cluster's term is weighted by ``(|C|/n)^e`` (2, the
        paper's, 1 or 0), so its quadratic form is divided by ``|C|^p``,
        ``p = 2 - e`` (see :mod:`fairkm._kernels._pricing`).
    order : ndarray of shape (n_visits,), int64
        Points to visit, in order.
    block : int
        Points priced together (:mod:`fairkm._kernels._blocks`;
        :data:`fairkm._kernels._blocks.BLOCK` in the engine). Every block size
        gives the same moves and statistics, to the last bit.
    labels : ndarray of shape (n,), int64
    sums, centers : ndarray of shape (d, k), float64
        Per-cluster sums and means, cluster axis last.
    counts : ndarray of shape (k,), float64
    value_counts : ndarray of shape (V, k), float64
    cat_dev : ndarray of shape (A, k), float64
        ``G`` per attribute and cluster.
    num_sums : ndarray of shape (B, k), float64

    Returns
    -------
    n_moved : int
        Number of points that changed cluster. Every move lowers the
        objective; a point alone in its cluster (or carrying all of its
        weight) never leaves it, so no cluster empties. Ties go to the
        current cluster, then to the lowest index.
    """
    kernel = _weighted_sweep if weights.shape[0] else _unit_sweep
    return kernel(X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,
                  offsets, cluster_exponent, order, block, labels, sums, centers, counts,
                  value_counts, cat_dev, num_sums)


@cached_njit(nogil=True)
def _unit_sweep(
    X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,  # IN
    offsets, cluster_exponent, order, block,  # IN
    labels, sums, centers, counts, value_counts, cat_dev, num_sums,  # IN/OUT
):
    """:func:`sweep` without sample weights."""
    return _sweep(False, X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef,
                  weights, offsets, cluster_exponent, order, block, labels, sums, centers,
                  counts, value_counts, cat_dev, num_sums)


@cached_njit(nogil=True)
def _weighted_sweep(
    X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,  # IN
    offsets, cluster_exponent, order, block,  # IN
    labels, sums, centers, counts, value_counts, cat_dev, num_sums,  # IN/OUT
):
    """:func:`sweep` with sample weights."""
    return _sweep(True, X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef,
                  weights, offsets, cluster_exponent, order, block, labels, sums, centers,
                  counts, value_counts, cat_dev, num_sums)


@cached_njit(nogil=True, inline="always")
def _sweep(
    weighted,
    X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,  # IN
    offsets, cluster_exponent, order, block,  # IN
    labels, sums, centers, counts, value_counts, cat_dev, num_sums,  # IN/OUT
):
    """Run :func:`sweep`; ``weighted`` is a constant of each kernel that inlines this body."""
    k = counts.shape[0]
    dist = np.empty(k)
    lin = np.empty(k)
    costs = np.empty(k)
    grow, shrink = size_factors(counts)
    p = 2 - cluster_exponent
    quad, factors = fair_factors(value_prop, offsets, cat_coef, num_coef, counts,
                                 value_counts, num_sums, p)
    table = lin_table(value_prop, offsets, cat_coef, counts, value_counts, cat_dev)
    coords = np.empty((X.shape[1], block))
    block_dist = np.empty((k, block))
    n_moved = 0
    for start in range(0, order.shape[0], block):
        m = min(block, order.shape[0] - start)
        gather_block(X, order, start, m, coords)
        all_distances(coords, m, centers, block_dist)
        for r in range(m):
            i = order[start + r]
            a = labels[i]
            w = point_weight(weights, i)
            if not may_leave(counts, a, w):
                continue
            for c in range(k):
                dist[c] = block_dist[c, r]
            table_lin(table, codes, Z, num_coef, num_sums, i, lin)
            change = point_change(weighted, w,
                                  point_base(codes, value_const, cat_coef, Z, num_coef, i))
            move_prices(weighted, w, change, dist, lin, a, counts, grow, shrink, p, factors, costs)
            b = best_move(costs, a, X, i, w)
            if b == a:
                continue
            move_point(X, codes, Z, i, a, b, w, sums, counts, value_counts, num_sums)
            set_size_factor(counts, a, grow, shrink)
            set_size_factor(counts, b, grow, shrink)
            if p > 0:
                quad[a] += change - 2.0 * w * lin[a]
                quad[b] += change + 2.0 * w * lin[b]
                set_fair_factor(counts, quad, a, p, factors)
                set_fair_factor(counts, quad, b, p, factors)
            for j in range(X.shape[1]):
                centers[j, a] = sums[j, a] / counts[a]
                centers[j, b] = sums[j, b] / counts[b]
            for t in range(codes.shape[1]):
                v = codes[i, t]
                cat_dev[t, a] -= w * value_shift[v]
                cat_dev[t, b] += w * value_shift[v]
            set_lin_columns(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, a, b,
                            table)
            patch_distances(coords, r + 1, m, centers, a, b, block_dist)
            labels[i] = b
            n_moved += 1
    return n_moved


@cached_njit(nogil=True)
def move_deltas(
    X, codes, value_prop, value_const, cat_coef, Z, num_coef, weights, offsets,  # IN
    cluster_exponent, i, labels, centers, counts, value_counts, cat_dev, num_sums,  # IN
    out,  # OUT
):
    """Objective change of moving point ``i`` to each cluster, as :func:`sweep` sees it.

    ``out[c]`` receives the change for moving to cluster ``c``; ``out[labels[i]]``
    is 0. If point ``i`` is alone in its cluster, moves are not allowed and
    every entry is set to ``inf`` except the current cluster's.
    """
    a = labels[i]
    if not may_leave(counts, a, point_weight(weights, i)):
        out[:] = np.inf
        out[a] = 0.0
        return
    k = counts.shape[0]
    p = 2 - cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                              num_sums, p)
    dist, lin = np.empty(k), np.empty(k)
    point_terms(X, codes, value_prop, cat_coef, Z, num_coef, i, centers, counts, value_counts,
                cat_dev, num_sums, dist, lin)
    weighted, w = weights.shape[0] > 0, point_weight(weights, i)
    change = point_change(weighted, w, point_base(codes, value_const, cat_coef, Z, num_coef, i))
    move_prices(weighted, w, change, dist, lin, a, counts, grow, shrink, p, factors, out)
    gain = out[a]
    out -= gain
    out[a] = 0.0


# Points per task of the parallel proposal pass: large enough that the scratch
# buffers and the scheduling cost little per point, small enough to balance.
_PROPOSAL_CHUNK = 256


@cached_njit(nogil=True, parallel=True)
def propose_moves(
    X, codes, value_prop, value_const, cat_coef, Z, num_coef, weights, offsets,  # IN
    cluster_exponent, batch, labels, centers, counts, value_counts, cat_dev, num_sums,  # IN
    targets,  # OUT
):
    """Best cluster of each point of ``batch``, every point priced against the same statistics.

    ``targets[t]`` receives the cluster that lowers the objective most when
    point ``batch[t]`` moves there alone, by more than
    :data:`fairkm._kernels.MOVE_RTOL` of the magnitudes involved, or the
    point's own cluster when no move does (or when it is alone in its cluster).
    The points are independent, so they run in parallel and the result does not
    depend on the number of threads.
    Shapes as in :func:`sweep`.
    """
    k = counts.shape[0]
    p = 2 - cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                              num_sums, p)
    weighted = weights.shape[0] > 0
    n_batch = batch.shape[0]
    for chunk in numba.prange((n_batch + _PROPOSAL_CHUNK - 1) // _PROPOSAL_CHUNK):
        dist = np.empty(k)
        lin = np.empty(k)
        costs = np.empty(k)
        for t in range(chunk * _PROPOSAL_CHUNK, min(n_batch, (chunk + 1) * _PROPOSAL_CHUNK)):
            i = batch[t]
            a = labels[i]
            w = point_weight(weights, i)
            targets[t] = a
            if not may_leave(counts, a, w):
                continue
            point_terms(X, codes, value_prop, cat_coef, Z, num_coef, i, centers, counts,
                        value_counts, cat_dev, num_sums, dist, lin)
            change = point_change(weighted, w,
                                  point_base(codes, value_const, cat_coef, Z, num_coef, i))
            move_prices(weighted, w, change, dist, lin, a, counts, grow, shrink, p, factors,
                        costs)
            targets[t] = best_move(costs, a, X, i, w)


@cached_njit(nogil=True)
def apply_moves(
    X, codes, Z, weights, batch, targets,  # IN
    labels, sums, counts, value_counts, num_sums,  # IN/OUT
):
    """Move every point ``batch[t]`` to ``targets[t]``, updating the statistics.

    A move that would empty its cluster is skipped, so no cluster empties.
    Centres and ``G`` are left to the caller (they follow from the sums and
    counts). Returns the number of points moved.
    """
    n_moved = 0
    for t in range(batch.shape[0]):
        i = batch[t]
        a = labels[i]
        b = targets[t]
        w = point_weight(weights, i)
        if b == a or not may_leave(counts, a, w):
            continue
        move_point(X, codes, Z, i, a, b, w, sums, counts, value_counts, num_sums)
        labels[i] = b
        n_moved += 1
    return n_moved


@cached_njit(nogil=True)
def _derive(value_prop, value_shift, offsets, sums, counts, value_counts,  # IN
            centers, cat_dev):  # OUT
    """Centres (0 for an empty cluster) and ``G`` from the sums and counts."""
    k = counts.shape[0]
    for c in range(k):
        for j in range(sums.shape[0]):
            centers[j, c] = sums[j, c] / counts[c] if counts[c] > 0 else 0.0
    for t in range(cat_dev.shape[0]):
        for c in range(k):
            g = 0.0
            for v in range(offsets[t], offsets[t + 1]):
                g += value_prop[v] * (value_counts[v, c] - counts[c] * value_prop[v])
            cat_dev[t, c] = g


@cached_njit(nogil=True)
def minibatch_epoch(
    X, codes, value_prop, value_const, value_shift, cat_coef, Z, num_coef, weights,  # IN
    offsets, cluster_exponent, order, batch_size, min_batch, total_sq_norm,  # IN
    labels, sums, centers, counts, value_counts, cat_dev, num_sums,  # IN/OUT
):
    """One mini-batch epoch over ``order``: batches priced in parallel, kept if the objective fell.

    Each batch's points choose their moves against the same statistics
    (:func:`propose_moves`, one parallel region per batch); the moves are
    applied together and kept only if the objective, recomputed from the
    statistics (:func:`statistics_objective`), fell; otherwise they are undone
    and the batch halved. After a kept batch the size doubles again, up to
    ``batch_size``. The epoch stops early when the batch would shrink below
    ``min_batch`` points: there the points overshoot together, and exact
    sweeps do better.

    Returns ``(n_moved, n_kept, n_rejected, stopped)``: points moved, batches
    kept and undone, and whether the epoch stopped early.
    """
    n = order.shape[0]
    targets = np.empty(min(batch_size, n), dtype=np.int64)
    saved_sums, saved_counts = np.empty_like(sums), np.empty_like(counts)
    saved_values, saved_num = np.empty_like(value_counts), np.empty_like(num_sums)
    saved_labels = np.empty(targets.shape[0], dtype=labels.dtype)
    current = statistics_objective(value_prop, offsets, cat_coef, num_coef, cluster_exponent,
                                   total_sq_norm, sums, counts, value_counts, num_sums)
    size = batch_size
    start = n_moved = n_kept = n_rejected = 0
    while start < n:
        batch = order[start:start + size]
        m = batch.shape[0]
        chosen = targets[:m]
        propose_moves(X, codes, value_prop, value_const, cat_coef, Z, num_coef, weights,
                      offsets, cluster_exponent, batch, labels, centers, counts, value_counts,
                      cat_dev, num_sums, chosen)
        saved_sums[:] = sums
        saved_counts[:] = counts
        saved_values[:] = value_counts
        saved_num[:] = num_sums
        for t in range(m):
            saved_labels[t] = labels[batch[t]]
        moved = apply_moves(X, codes, Z, weights, batch, chosen, labels, sums, counts,
                            value_counts, num_sums)
        if moved:
            value = statistics_objective(value_prop, offsets, cat_coef, num_coef,
                                         cluster_exponent, total_sq_norm, sums, counts,
                                         value_counts, num_sums)
            if value >= current:
                sums[:] = saved_sums
                counts[:] = saved_counts
                value_counts[:] = saved_values
                num_sums[:] = saved_num
                for t in range(m):
                    labels[batch[t]] = saved_labels[t]
                n_rejected += 1
                if size > 1:
                    size //= 2
                    if size < min_batch:
                        return n_moved, n_kept, n_rejected, True
                    continue
                moved = 0  # a lone point whose move does not pay (rounding only)
            else:
                current = value
                n_kept += 1
                size = min(2 * size, batch_size)
                _derive(value_prop, value_shift, offsets, sums, counts, value_counts,
                        centers, cat_dev)
        n_moved += moved
        start += m
    return n_moved, n_kept, n_rejected, False
