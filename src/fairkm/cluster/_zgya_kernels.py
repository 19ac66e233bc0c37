"""Array kernels of ZGYA (Variational Fair Clustering, K-Means variant).

Pure functions over arrays and scalars; nothing here imports scikit-learn or
holds state. Shapes use ``n`` rows, ``d`` features, ``k`` clusters and ``m``
values of the sensitive attribute; ``codes`` is the int64 group of each row
and ``targets`` the target mix ``U`` of the groups, shape (m,).

**Rows.** The fit works on the distinct (features, group) rows of the data,
each with its multiplicity as a weight (:func:`distinct_rows`): equal rows get
equal assignments at every step, so each is updated once. The rows are
sorted by group and then by weight, and cut into *segments*, runs of rows with
one group and one weight and at most ``_CHUNK`` rows (:func:`segments`).

**Layout.** The soft assignments are kept transposed, as ``S`` of shape
(k, n) whose columns lie on the simplex, so that the bound update runs over
contiguous rows of ``S`` one cluster at a time.

**Bound update.** ``s_p <- s_p * exp(-(a_p + lambda b_p) / L) / z_p``. The
gradient ``b_p`` depends on the point only through its group (``b_p =
table[codes[p]]``), so the factor splits into a per-point part ``exp(-a_p /
L)``, fixed while the centres are (:func:`bound_factors`), and a per-group part
``exp(-lambda table / L)`` of shape (m, k). An update is then a few products
per entry and no exponential. Like the authors' code it works on ``S`` itself
rather than on its logarithm.

**One thread.** Every pass runs on the calling thread, so results do not
depend on numba's thread count, and a fit cannot stall on other work: a
parallel pass is a rendezvous of the threads, and when the CPU is shared a
thread waiting for a core holds up the others for a scheduler time slice
(milliseconds). A fit makes thousands of bound updates, most of a millisecond
or less, and each parallel one paid that wait; larger passes, whose wait would
be small beside them, stream more than the caches hold and gained nothing from
a second thread (``benchmarks/bench_baselines.py --threads-under-load``
measures both).
"""

import numba
import numpy as np

from fairkm.bounds import guard_kernel_caches

# Group masses V_j^T S_k are floored at this inside the KL, as in the authors'
# released code (fairness_term_V_j: np.maximum(., 1e-20)). A cluster whose soft
# mass 1^T S_k is at most this is empty: no fairness term (their floor gives it
# none either) and no fairness force (their gradient divides by the mass and
# turns to inf/NaN there, after which their run reseeds; ours reseeds too).
KL_FLOOR = 1e-20

# Group masses are floored at this in the fairness gradient, as in the
# authors' released code (compute_b_j: np.maximum(., 1e-15)).
GRADIENT_FLOOR = 1e-15

# Updated entries of S below this become 0: an entry that decays geometrically
# would otherwise end as a subnormal number, whose arithmetic is many times
# slower. In the authors' code it underflows to 0 a few updates later.
_FLUSH = 1e-290

# A column whose products sum to less than this is redone from logarithms. Above
# it, a product that underflows (below 2.3e-308) stands for an entry below
# 2.3e-292 of its column, which the flush would zero anyway; so both ways give
# the same entries, and no column is ever divided by 0.
_TINY = 1e-16

# The running product of the normalisers is folded into a logarithm whenever it
# falls below this, so only a few logarithms are taken per segment.
_FOLD = 1e-200

# Most rows per segment. Each segment's masses are summed on their own and then
# added in segment order, so this fixes the order of the sums (and their last bits).
_CHUNK = 512


# ---------------------------------------------------------------- rows and segments


def distinct_rows(X, codes):  # IN, IN
    """Find the distinct (features, group) rows, sorted by group and then by weight.

    ``X`` is (n, d) and ``codes`` (n,). Returns ``rows`` (r,), the index of
    one occurrence of each distinct row in ``X``, its ``weights`` (r,), the
    number of occurrences as float64, and ``inverse`` (n,), the position of
    each row of ``X`` among the distinct ones.
    """
    keyed = np.column_stack([codes.astype(np.float64), X])
    _, first, inverse, counts = np.unique(
        keyed, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    order = np.lexsort((first, counts, codes[first]))
    position = np.empty_like(order)
    position[order] = np.arange(order.shape[0])
    return first[order], counts[order].astype(np.float64), position[inverse]


def segments(codes, weights):  # IN, IN
    """Cut rows sorted by (group, weight) into runs of one group and weight.

    Returns ``(starts, stops)``, int64 arrays of the segments' row ranges;
    no segment has more than ``_CHUNK`` rows.
    """
    n = codes.shape[0]
    change = np.flatnonzero((np.diff(codes) != 0) | (np.diff(weights) != 0)) + 1
    bounds = np.concatenate([[0], change, [n]])
    starts, stops = [], []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        cuts = np.arange(start, stop, _CHUNK)
        starts.append(cuts)
        stops.append(np.minimum(cuts + _CHUNK, stop))
    return np.concatenate(starts).astype(np.int64), np.concatenate(stops).astype(np.int64)


# ---------------------------------------------------------------- NumPy helpers


@numba.njit(cache=True)
def center_distances(X, centers):  # IN, IN
    """Squared Euclidean distances of the rows to the centres, shape (n_clusters, n).

    ``X`` is (n, d) and ``centers`` (k, d); returns a new (k, n) array. No
    BLAS call, whose threads would stall under load like a parallel pass.
    """
    n, d = X.shape
    k = centers.shape[0]
    dist = np.empty((k, n))
    for p in range(n):
        for c in range(k):
            total = 0.0
            for f in range(d):
                diff = X[p, f] - centers[c, f]
                total += diff * diff
            dist[c, p] = total
    return dist


def softmax_columns(dist):  # IN
    """``softmax(-dist)`` over the cluster axis 0, each column's minimum subtracted.

    ``dist`` is (k, n); returns a new (k, n) array whose columns sum to 1.
    """
    S = dist - dist.min(axis=0)
    np.negative(S, out=S)
    np.exp(S, out=S)
    S /= S.sum(axis=0)
    return S


def bound_factors(dist, lipschitz):  # IN, IN
    """Compute the per-point factors ``exp(-(a_kp - min_k a_kp) / L)`` of a bound update.

    ``dist`` is (k, n). Returns the (k, n) factors (each column's largest is
    1) and the (n,) column minima ``min_k a_kp``.
    """
    col_min = dist.min(axis=0)
    factors = dist - col_min
    factors *= -1.0 / lipschitz
    np.exp(factors, out=factors)
    return factors, col_min


@numba.njit(cache=True)
def group_masses(S, codes, weights, n_values):  # IN, IN, IN, IN
    """``(V_j^T S_k)`` as a (n_values, n_clusters) table and ``1^T S_k`` per cluster.

    ``S`` is (k, n), ``codes`` and ``weights`` (n,); rows count with their
    weights. Returns two new arrays, (m, k) and (k,).
    """
    k, n = S.shape
    group_mass = np.zeros((n_values, k))
    for p in range(n):
        j = codes[p]
        w = weights[p]
        for c in range(k):
            group_mass[j, c] += w * S[c, p]
    mass = np.zeros(k)
    for c in range(k):
        for j in range(n_values):
            mass[c] += group_mass[j, c]
    return group_mass, mass


@numba.njit(cache=True)
def weighted_sum(S, dist, weights):  # IN, IN, IN
    """``sum_kp w_p s_kp a_kp`` for ``S`` and ``dist`` of shape (k, n), ``weights`` (n,)."""
    k, n = S.shape
    total = 0.0
    for p in range(n):
        row = 0.0
        for c in range(k):
            row += S[c, p] * dist[c, p]
        total += weights[p] * row
    return total


@numba.njit(cache=True)
def gradient_table(group_mass, mass, targets):  # IN, IN, IN
    """Tabulate the fairness gradient ``b``, shape (n_values, n_clusters).

    ``b[p, k] = sum_j u_j (1 / 1^T S_k - v_jp / V_j^T S_k)``; only the group of
    point ``p`` has ``v_jp = 1``, so ``b[p] = table[codes[p]]``. An empty
    cluster (mass at most ``KL_FLOOR``) has no proportions: its column is 0.
    Group masses are floored at ``GRADIENT_FLOOR``. ``group_mass`` is (m, k),
    ``mass`` (k,) and ``targets`` (m,); returns a new (m, k) array.
    """
    m, k = group_mass.shape
    total = targets.sum()
    table = np.zeros((m, k))
    for c in range(k):
        if mass[c] > KL_FLOOR:
            for j in range(m):
                table[j, c] = total / mass[c] - targets[j] / max(group_mass[j, c], GRADIENT_FLOOR)
    return table


def fairness_cost(group_mass, mass, targets):  # IN, IN, IN
    """``sum_k KL(U || P_k)``, ``P(j|k) = V_j^T S_k / 1^T S_k``, over non-empty clusters.

    A cluster is non-empty when its mass exceeds ``KL_FLOOR``; group masses
    are floored at ``KL_FLOOR``, so a group missing from a cluster costs
    ``u_j log(u_j 1^T S_k / 1e-20)`` rather than nothing. ``group_mass`` is
    (m, k), ``mass`` (k,) and ``targets`` (m,); returns a float.
    """
    live = mass > KL_FLOOR
    floored = np.maximum(group_mass[:, live], KL_FLOOR)
    present = targets > 0
    u = targets[present]
    log_p = np.log(floored[present]) - np.log(mass[live])[None, :]
    return float(np.sum(u[:, None] * (np.log(u)[:, None] - log_p)))


def one_hot(labels, weights, n_clusters):  # IN, IN, IN
    """Hard assignments as a (n_clusters, n) array holding each row's weight at its label."""
    S = np.zeros((n_clusters, labels.shape[0]))
    S[labels, np.arange(labels.shape[0])] = weights
    return S


@numba.njit(cache=True)
def weighted_means(X, labels, weights, centers):  # IN, IN, IN, IN
    """Weighted mean of the rows of each label, shape (n_clusters, n_features).

    ``X`` is (n, d), ``labels`` and ``weights`` (n,), ``centers`` (k, d); a
    label without rows keeps its centre. Returns a new (k, d) array.
    """
    n, d = X.shape
    k = centers.shape[0]
    sums = np.zeros((k, d))
    mass = np.zeros(k)
    for p in range(n):
        c = labels[p]
        w = weights[p]
        mass[c] += w
        for f in range(d):
            sums[c, f] += w * X[p, f]
    for c in range(k):
        if mass[c] > 0.0:
            for f in range(d):
                sums[c, f] /= mass[c]
        else:
            sums[c] = centers[c]
    return sums


# ---------------------------------------------------------------- the bound update


@numba.njit(cache=True)
def _redo_column(S, dist, col_min, table, j, scale, inv_lipschitz, p):  # IN/OUT S
    """Update column ``p`` of ``S`` from logarithms; return its ``log z_p``.

    The exponents ``-(a_kp - min_k a_kp) / L - lambda b_jk / L`` are taken
    unscaled, relative to the largest over the clusters the column holds, so
    that a cluster it does not hold cannot swamp them.
    """
    k = S.shape[0]
    top = -np.inf
    for c in range(k):
        if S[c, p] > 0.0:
            e = np.log(S[c, p]) - (dist[c, p] - col_min[p]) * inv_lipschitz - scale * table[j, c]
            top = max(top, e)
    total = 0.0
    for c in range(k):
        if S[c, p] > 0.0:
            e = np.log(S[c, p]) - (dist[c, p] - col_min[p]) * inv_lipschitz - scale * table[j, c]
            S[c, p] = np.exp(e - top)
            total += S[c, p]
    for c in range(k):
        S[c, p] /= total
    return top + np.log(total)


@numba.njit(cache=True)
def _update_pass(
    S,  # IN/OUT
    factors, dist, col_min, codes, starts, stops, gfactors, table, scale, inv_lipschitz,  # IN
    scratch,  # scratch, (n,)
    part_mass, part_log,  # OUT, one row per segment
):
    """Update every column of ``S``; per segment, its unweighted masses and ``sum log z_p``.

    ``part_log[seg]`` holds the sum of ``log z_p`` over the columns updated by
    products (relative to the scaled factors), the sum over the columns redone
    from logarithms (unscaled), and the number of the former.

    The loops run over slices of one cluster's row of ``S``, so that they
    compile to vector instructions.
    """
    k = S.shape[0]
    for seg in range(starts.shape[0]):
        a, b = starts[seg], stops[seg]
        j = codes[a]
        z = scratch[a:b]
        for p in range(z.shape[0]):
            z[p] = 0.0
        # Four clusters at a time: a quarter of the loads and stores of z.
        c = 0
        while c + 4 <= k:
            g0, g1 = gfactors[j, c], gfactors[j, c + 1]
            g2, g3 = gfactors[j, c + 2], gfactors[j, c + 3]
            r0, r1, r2, r3 = S[c, a:b], S[c + 1, a:b], S[c + 2, a:b], S[c + 3, a:b]
            f0, f1 = factors[c, a:b], factors[c + 1, a:b]
            f2, f3 = factors[c + 2, a:b], factors[c + 3, a:b]
            for p in range(z.shape[0]):
                z[p] += ((r0[p] * f0[p] * g0 + r1[p] * f1[p] * g1)
                         + (r2[p] * f2[p] * g2 + r3[p] * f3[p] * g3))
            c += 4
        while c < k:
            g = gfactors[j, c]
            row, factor = S[c, a:b], factors[c, a:b]
            for p in range(z.shape[0]):
                z[p] += row[p] * factor[p] * g
            c += 1
        # Two running products of the normalisers, folded into logarithms.
        product0 = product1 = 1.0
        logs = redone = 0.0
        n_redone = 0
        for p in range(z.shape[0]):
            if z[p] < _TINY:
                # Redone from logarithms and final: marked to be left alone below.
                redone += _redo_column(S, dist, col_min, table, j, scale, inv_lipschitz, a + p)
                n_redone += 1
                z[p] = -1.0
            elif p % 2 == 0:
                product0 *= z[p]
            else:
                product1 *= z[p]
            if product0 < _FOLD:
                logs += np.log(product0)
                product0 = 1.0
            if product1 < _FOLD:
                logs += np.log(product1)
                product1 = 1.0
        part_log[seg, 0] = logs + np.log(product0) + np.log(product1)
        part_log[seg, 1] = redone
        part_log[seg, 2] = b - a - n_redone
        for p in range(z.shape[0]):
            z[p] = 1.0 / z[p]
        for c in range(k):
            g = gfactors[j, c]
            row, factor = S[c, a:b], factors[c, a:b]
            for p in range(z.shape[0]):
                s = row[p] * factor[p] * g * z[p] if z[p] > 0.0 else row[p]
                row[p] = s if s >= _FLUSH else 0.0
            # Four running sums in a fixed order: fast, and always the same bits.
            s0 = s1 = s2 = s3 = 0.0
            p = 0
            while p + 4 <= z.shape[0]:
                s0 += row[p]
                s1 += row[p + 1]
                s2 += row[p + 2]
                s3 += row[p + 3]
                p += 4
            while p < z.shape[0]:
                s0 += row[p]
                p += 1
            part_mass[seg, c] = (s0 + s1) + (s2 + s3)


@numba.njit(cache=True)
def bound_step(
    S,  # IN/OUT
    factors, dist, col_min, codes, weights, starts, stops, table, fairness_weight,
    lipschitz,  # IN
    group_mass, mass,  # OUT
    scratch, part_mass, part_log,  # scratch
):
    """One update of the bound optimisation, in place.

    ``s_p <- s_p * exp(-(a_p + lambda b_p) / L) / z_p`` for every column
    ``p``, with ``b_p = table[codes[p]]``. The exponential is the product of
    the point's ``factors`` and its group's factors, both scaled so that
    their largest is 1, so nothing overflows; a column whose products nearly
    underflow is redone from logarithms. Entries below 1e-290 become 0 (as
    they would by underflow a few updates later). The pass also accumulates
    the masses of the new ``S`` that the next update's gradient table needs.

    Parameters
    ----------
    S : ndarray of shape (n_clusters, n_rows)
        Soft assignments (columns on the simplex); overwritten.
    factors : ndarray of shape (n_clusters, n_rows)
        :func:`bound_factors` of ``dist``.
    dist : ndarray of shape (n_clusters, n_rows)
        Unary terms ``a`` (squared distances to the centres).
    col_min : ndarray of shape (n_rows,)
        ``min_k a_kp`` per row.
    codes, weights : ndarray of shape (n_rows,)
        Group and weight of each row (sorted by group, then weight).
    starts, stops : ndarray of shape (n_segments,)
        :func:`segments` of the rows.
    table : ndarray of shape (n_values, n_clusters)
        The gradient ``b`` of the current ``S`` (:func:`gradient_table`).
    fairness_weight, lipschitz : float
        ``lambda`` and ``L``.
    group_mass : ndarray of shape (n_values, n_clusters)
        Overwritten with the weighted ``V_j^T S_k`` of the new ``S``.
    mass : ndarray of shape (n_clusters,)
        Overwritten with the weighted ``1^T S_k`` of the new ``S``.
    scratch : ndarray of shape (n_rows,)
    part_mass : ndarray of shape (n_segments, n_clusters)
    part_log : ndarray of shape (n_segments, 3)

    Returns
    -------
    bound : float
        The bound at its minimiser ``S_new``,
        ``sum S_new (a + lambda b) + L sum S_new log(S_new / S)`` (weighted),
        which equals ``-L sum_p w_p log sum_k s_kp exp(-(a_kp + lambda b_kp) / L)``.
    """
    m, k = table.shape
    inv_lipschitz = 1.0 / lipschitz
    scale = fairness_weight * inv_lipschitz
    gfactors = np.empty((m, k))
    log_gscale = np.empty(m)
    for j in range(m):
        low = table[j, 0]
        for c in range(1, k):
            low = min(low, table[j, c])
        log_gscale[j] = -scale * low
        for c in range(k):
            gfactors[j, c] = np.exp(-scale * (table[j, c] - low))
    _update_pass(
        S, factors, dist, col_min, codes, starts, stops, gfactors, table, scale, inv_lipschitz,
        scratch, part_mass, part_log,
    )
    group_mass[:] = 0.0
    log_z = 0.0
    for seg in range(starts.shape[0]):
        a = starts[seg]
        j = codes[a]
        w = weights[a]
        for c in range(k):
            group_mass[j, c] += w * part_mass[seg, c]
        # log z_p with the group factors' scalings added back; the rows' minima below.
        log_z += w * (part_log[seg, 0] + part_log[seg, 2] * log_gscale[j] + part_log[seg, 1])
    for c in range(k):
        total = 0.0
        for j in range(m):
            total += group_mass[j, c]
        mass[c] = total
    shift = 0.0
    for p in range(col_min.shape[0]):
        shift += weights[p] * col_min[p]
    return -lipschitz * log_z + shift


@numba.njit(cache=True)
def optimise_bound(
    S,  # IN/OUT
    factors, dist, col_min, codes, weights, starts, stops, targets, fairness_weight,
    lipschitz, bound_tol, bound_max_iter,  # IN
    group_mass, mass,  # IN/OUT: the masses of S on entry, of the result on exit
):
    """Bound updates of ``S`` for fixed centres until the bound settles.

    Repeats :func:`bound_step` (arguments as there; ``group_mass`` and
    ``mass`` must hold the masses of ``S`` on entry) until the bound changes
    by at most ``bound_tol`` times its previous value, from the third update
    on, or ``bound_max_iter`` updates. Returns the number of updates.
    """
    k, n = S.shape
    n_segments = starts.shape[0]
    scratch = np.empty(n)
    part_mass = np.empty((n_segments, k))
    part_log = np.empty((n_segments, 3))
    previous = np.nan
    for step in range(1, bound_max_iter + 1):
        table = gradient_table(group_mass, mass, targets)
        bound = bound_step(
            S, factors, dist, col_min, codes, weights, starts, stops, table,
            fairness_weight, lipschitz, group_mass, mass, scratch, part_mass, part_log,
        )
        if step >= 3 and abs(bound - previous) <= bound_tol * abs(previous):
            return step
        previous = bound
    return bound_max_iter


guard_kernel_caches(globals())
