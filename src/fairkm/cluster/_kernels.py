"""Pricing one point's move: the helpers every kernel of the engine shares.

Squared distances, the K-Means size factors, the per-cluster fairness factors,
the price of moving one point to each cluster (:func:`point_terms` and
:func:`move_prices`, or their blocked forms in :mod:`fairkm.cluster._kernels`), the choice
of its best move (:func:`best_move`) and the update of the statistics when it is
made (:func:`move_point`). The sweep, the mini-batch kernels, the statistics and
the prediction kernels of this module all price moves with them; the helpers
marked ``inline="always"`` are compiled into each caller.

The kernels take two records (named tuples, :mod:`fairkm.cluster._terms`):
``terms`` (:class:`~fairkm.cluster._terms.KernelTerms`, IN: the rows' codes,
numeric values and weights, the per-value constants and the per-attribute
coefficients with ``fairness_weight`` folded in) and ``stats``
(:class:`~fairkm.cluster._terms.KernelStats`, the per-cluster statistics, IN
or IN/OUT). Shapes and names as in :func:`sweep`. A kernel takes its arrays out
of the records once, at its top, and hands arrays to the helpers that run per
point, so the loops read arrays as before the records.

Notation for the fairness statistics (see the paper, Eqs. 7 and 21, and
``shared/paper/NOTES.md``). For a categorical attribute ``a`` with dataset
proportions ``p_v`` over its ``m_a`` values, the cluster's weighted deviation is

    (|C|/n)^2 * dev_a(C) = sum_v (c_v - |C| p_v)^2 / (n^2 m_a),

where ``c_v`` counts the cluster's points with value ``v``. Expanding the
square, inserting one point of value ``v`` changes the sum by

    2 (c_v - |C| p_v) - 2 G + (1 - 2 p_v + P2_a),

and removing it by ``-2 (c_v - |C| p_v) + 2 G + (1 - 2 p_v + P2_a)``, with
``G = sum_v p_v (c_v - |C| p_v)`` and ``P2_a = sum_v p_v^2``. So a cluster keeps
one scalar ``G`` per attribute and every candidate move costs O(1) per
attribute whatever the number of values. ``value_const`` holds
``1 - 2 p_v + P2_a`` and ``value_shift`` holds ``p_v - P2_a`` (the change of
``G`` when a point of value ``v`` joins). A numeric attribute with centred,
standardised values ``e`` contributes ``E^2 / n^2`` with ``E`` the cluster's sum
of ``e``; inserting changes it by ``2 E e + e^2`` and removing by
``-2 E e + e^2``. The per-attribute coefficients ``cat_coef`` and ``num_coef``
already include ``fairness_weight * w_a / n^2`` (and ``1 / m_a``).

Cluster weighting: the paper weighs cluster ``C`` by ``(|C|/n)^2``; more
generally by ``(|C|/n)^e`` with ``e`` in {2, 1, 0}, so the term of ``C`` is
``Q_C / (n^e |C|^p)`` with ``p = 2 - e`` and ``Q_C`` the
quadratic form above (``sum_v (c_v - |C| p_v)^2 / m_a`` per categorical
attribute, ``E^2`` per numeric one, weighted). ``Q_C`` changes by exactly the
amounts above when a point moves, so with ``F_C = Q_C / |C|^p`` the change of
the term when ``Q_C`` changes by ``dQ`` and ``|C|`` becomes ``|C'|`` is

    (dQ - F_C (|C'|^p - |C|^p)) / |C'|^p,

free of cancellation, with ``|C'|^p - |C|^p`` written out (``w`` for ``p = 1``,
``w (2 |C| + w)`` for ``p = 2``). A sweep keeps ``Q_C`` per cluster and
refreshes the per-cluster factors of the two clusters a move touches, so a
move still costs O(1) per attribute and cluster. ``p = 0`` (the paper's)
runs the formulas above unchanged.

Sample weights: a point of weight ``w`` counts as ``w`` points. Counts become
summed weights, sums weighted sums, ``n`` the total weight, and the move of a
point of weight ``w`` changes the squares above by ``w^2`` times the constant
part and ``w`` times the linear part; the K-Means factors become
``|C| / (|C| + w)`` and ``|C| / (|C| - w)``, times ``w``. ``weights`` is an
array of shape (n,), or of shape (0,) for unit weights (then every product
by a weight is skipped, so results are those of the unweighted formulas).
"""

import numba
import numpy as np

from fairkm.bounds import guard_kernel_caches

# A move is taken only when it lowers the objective by more than this fraction
# of the magnitudes involved: rounding cannot then make a point flip back and
# forth between two clusters whose costs are equal in exact arithmetic.
MOVE_RTOL = 1e-12
# ... and by more than this fraction of the point's weighted squared norm: the
# rounding of a squared distance is of the order of eps^2 ||x||^2 when the point
# sits on a centre (identical points), below which the relative rule above,
# whose magnitudes are then themselves rounding, cannot tell a gain from noise.
MOVE_ATOL = 1e-28


@numba.njit(cache=True, nogil=True, inline="always")
def squared_norm(X, i):
    """``||X[i]||^2``."""
    s = 0.0
    for j in range(X.shape[1]):
        s += X[i, j] * X[i, j]
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def squared_distance(X, i, centers, c):
    """``||X[i] - centers[c]||^2``, centres one per row."""
    s = 0.0
    for j in range(X.shape[1]):
        t = X[i, j] - centers[c, j]
        s += t * t
    return s


@numba.njit(cache=True, nogil=True)
def set_size_factor(counts, c, grow, shrink):  # IN, IN, OUT, OUT
    """Set cluster ``c``'s K-Means factors: ``|C|/(|C|+1)`` to join, ``|C|/(|C|-1)`` to leave.

    They change only when a point moves, so a sweep keeps them instead of
    dividing for every point and cluster.
    """
    n = counts[c]
    grow[c] = n / (n + 1.0)
    shrink[c] = n / (n - 1.0) if n > 1.0 else 0.0


@numba.njit(cache=True, nogil=True)
def size_factors(counts):
    k = counts.shape[0]
    grow = np.empty(k)
    shrink = np.empty(k)
    for c in range(k):
        set_size_factor(counts, c, grow, shrink)
    return grow, shrink


# Rows of the per-cluster fairness factors kept by a sweep when ``p > 0``
# (see the module docstring): ``F_C``, then for a unit point joining and
# leaving, ``1 / |C'|^p`` and ``|C'|^p - |C|^p`` (sign: the term's growth).
_F, _JOIN_INV, _JOIN_GROWTH, _LEAVE_INV, _LEAVE_SHRINK = 0, 1, 2, 3, 4
N_FACTORS = 5


@numba.njit(cache=True, nogil=True, inline="always")
def power(size, p):
    """``size ** p`` for ``p`` in {0, 1, 2}, by multiplication."""
    if p == 0:
        return 1.0
    if p == 1:
        return size
    return size * size


@numba.njit(cache=True, nogil=True, inline="always")
def _growth(size, w, p):
    """``(size + w) ** p - size ** p`` for ``p`` in {1, 2}, without cancellation."""
    if p == 1:
        return w
    return w * (2.0 * size + w)


@numba.njit(cache=True, nogil=True)
def set_fair_factor(counts, quad, c, p, factors):  # IN, IN, IN, IN, OUT
    """Set cluster ``c``'s fairness factors from its size and ``Q_C`` (``p > 0``)."""
    n = counts[c]
    factors[_F, c] = quad[c] / power(n, p) if n > 0.0 else 0.0
    factors[_JOIN_INV, c] = 1.0 / power(n + 1.0, p)
    factors[_JOIN_GROWTH, c] = _growth(n, 1.0, p)
    if n > 1.0:
        factors[_LEAVE_INV, c] = 1.0 / power(n - 1.0, p)
        factors[_LEAVE_SHRINK, c] = _growth(n - 1.0, 1.0, p)
    else:
        factors[_LEAVE_INV, c] = 0.0
        factors[_LEAVE_SHRINK, c] = 0.0


@numba.njit(cache=True, nogil=True)
def cluster_quad(value_prop, offsets, cat_coef, num_coef, counts, value_counts, num_sums):  # IN
    """``Q_C`` per cluster: the weighted fairness term of each cluster times ``|C|^p``.

    Each attribute's ``sum_v (c_v - |C| p_v)^2`` (categorical, values
    ``offsets[t]`` to ``offsets[t + 1]``) or ``E^2`` (numeric) times its coefficient.
    """
    k = counts.shape[0]
    quad = np.zeros(k)
    for t in range(cat_coef.shape[0]):
        for v in range(offsets[t], offsets[t + 1]):
            p = value_prop[v]
            for c in range(k):
                e = value_counts[v, c] - counts[c] * p
                quad[c] += cat_coef[t] * e * e
    for t in range(num_coef.shape[0]):
        for c in range(k):
            quad[c] += num_coef[t] * num_sums[t, c] * num_sums[t, c]
    return quad


@numba.njit(cache=True, nogil=True)
def fair_factors(terms, stats, p):  # IN, IN, IN
    """``Q_C`` per cluster and the clusters' :func:`set_fair_factor` (zeros for ``p = 0``)."""
    counts = stats.counts
    k = counts.shape[0]
    factors = np.zeros((N_FACTORS, k))
    if p == 0:
        return np.zeros(k), factors
    quad = cluster_quad(terms.value_prop, terms.offsets, terms.cat_coef, terms.num_coef,
                        counts, stats.value_counts, stats.num_sums)
    for c in range(k):
        set_fair_factor(counts, quad, c, p, factors)
    return quad, factors


@numba.njit(cache=True, nogil=True, inline="always")
def point_base(codes, value_const, cat_coef, Z, num_coef, i):
    """Return the unit change of ``Q`` alike for every cluster point ``i`` joins or leaves."""
    base = 0.0
    for t in range(codes.shape[1]):
        base += cat_coef[t] * value_const[codes[i, t]]
    for t in range(Z.shape[1]):
        base += num_coef[t] * Z[i, t] * Z[i, t]
    return base


@numba.njit(cache=True, nogil=True, inline="always")
def lin_term(coef, count, size, prop, dev):
    """Return a categorical value's term of ``lin``: ``coef (c_v - |C| p_v - G)``.

    The one expression :func:`point_terms` and the blocks' table
    (:func:`fairkm.cluster._kernels.set_lin_columns`) both evaluate, so that their
    ``lin`` agree to the last bit.
    """
    return coef * (count - size * prop - dev)


@numba.njit(cache=True, nogil=True, inline="always")
def numeric_lin(Z, num_coef, num_sums, i, lin):  # IN ..., IN/OUT
    """Add the numeric attributes' part of ``lin`` (after the categorical part, in that order)."""
    for t in range(Z.shape[1]):
        w = num_coef[t] * Z[i, t]
        for c in range(num_sums.shape[1]):
            lin[c] += w * num_sums[t, c]


@numba.njit(cache=True, nogil=True, inline="always")
def point_terms(
    X, codes, value_prop, cat_coef, Z, num_coef,  # IN
    i, centers, counts, value_counts, cat_dev, num_sums,  # IN
    dist, lin,  # OUT
):
    """Point ``i``'s squared distance to each centre and the linear part ``lin`` of its price.

    Term by term, one point at a time; :mod:`fairkm.cluster._kernels` computes
    the same terms, added in the same order, for a block of points at once.
    """
    k = counts.shape[0]
    for c in range(k):
        dist[c] = 0.0
        lin[c] = 0.0
    for j in range(X.shape[1]):
        x = X[i, j]
        for c in range(k):
            diff = x - centers[j, c]
            dist[c] += diff * diff
    for t in range(codes.shape[1]):
        v = codes[i, t]
        w = cat_coef[t]
        pv = value_prop[v]
        for c in range(k):
            lin[c] += lin_term(w, value_counts[v, c], counts[c], pv, cat_dev[t, c])
    numeric_lin(Z, num_coef, num_sums, i, lin)


@numba.njit(cache=True, nogil=True, inline="always")
def point_change(weighted, w, base):
    """Return ``w^2 base``, the change of ``Q`` alike for every cluster.

    Inserting a point of weight ``w`` changes a cluster's ``Q`` by that plus
    ``2 w lin[c]``, removing it by that minus ``2 w lin[a]`` (``base``:
    :func:`point_base`).
    """
    if not weighted:
        return base
    if w == 0.0:
        return 0.0
    return w * w * base


@numba.njit(cache=True, nogil=True, inline="always")
def _join_price(weighted, p, w, size, grow, dist, change, lin, f, growth, inv):
    """Objective increase of inserting a point into a cluster of ``size`` (:func:`move_prices`)."""
    if not weighted:
        if p == 0:
            return grow * dist + change + 2.0 * lin
        return grow * dist + (change + 2.0 * lin - f * growth) * inv
    if w == 0.0:  # a point of weight 0 changes nothing, wherever it goes
        return 0.0
    if p == 0:
        return w * size / (size + w) * dist + change + 2.0 * w * lin
    return w * size / (size + w) * dist + (
        change + 2.0 * w * lin - f * _growth(size, w, p)
    ) / power(size + w, p)


@numba.njit(cache=True, nogil=True, inline="always")
def _leave_price(weighted, p, w, size, shrink, dist, change, lin, f, shrinkage, inv):
    """Objective decrease of removing a point from its cluster of ``size`` (:func:`move_prices`)."""
    if not weighted:
        if p == 0:
            return shrink * dist - (change - 2.0 * lin)
        return shrink * dist - (change - 2.0 * lin + f * shrinkage) * inv
    if w == 0.0:
        return 0.0
    if p == 0:
        return w * size / (size - w) * dist - (change - 2.0 * w * lin)
    return w * size / (size - w) * dist - (
        change - 2.0 * w * lin + f * _growth(size - w, w, p)
    ) / power(size - w, p)


@numba.njit(cache=True, nogil=True, inline="always")
def move_prices(
    weighted, w, change, dist, lin, a, counts, grow, shrink, p, factors,  # IN
    costs,  # OUT
):
    """Prices of the moves of a point of weight ``w`` out of its cluster ``a``.

    Given the change of ``Q`` common to every cluster (:func:`point_change`),
    the squared distances ``dist`` and the linear part ``lin``
    (:func:`point_terms`): ``costs[a]`` receives the objective
    decrease of removing the point from ``a`` (``counts[a] > w``); ``costs[c]``
    for every other ``c`` the objective increase of then inserting it into
    ``c``. Moving to ``c`` changes the objective by ``costs[c] - costs[a]``.
    With ``a = -1`` (a new point) every entry is an insertion cost. ``p`` is
    the power of the cluster size dividing each cluster's term (0 for the
    paper's weighting) and ``factors`` the clusters' :func:`set_fair_factor`.
    ``weighted`` is whether the fit has sample weights (with unit weights
    ``w`` is 1 and the cheaper unit formulas run); a kernel that passes it as
    a constant compiles a loop without the other case.

    The branches live in scalar helpers and nothing is returned: an inlined
    helper that takes arrays and branches or returns costs reference counting
    per array and point (a sweep ran 2.4x slower so).
    """
    for c in range(costs.shape[0]):
        costs[c] = _join_price(weighted, p, w, counts[c], grow[c], dist[c], change, lin[c],
                               factors[_F, c], factors[_JOIN_GROWTH, c], factors[_JOIN_INV, c])
    if a >= 0:
        costs[a] = _leave_price(weighted, p, w, counts[a], shrink[a], dist[a], change, lin[a],
                                factors[_F, a], factors[_LEAVE_SHRINK, a], factors[_LEAVE_INV, a])


@numba.njit(cache=True, nogil=True, inline="always")
def point_weight(weights, i):
    """Point ``i``'s weight (1 for unit weights)."""
    return 1.0 if weights.shape[0] == 0 else weights[i]


@numba.njit(cache=True, nogil=True, inline="always")
def may_leave(counts, a, w):
    """Whether a point of weight ``w`` may leave cluster ``a``: never its last weight.

    For unit weights this is ``counts[a] > 1``: a point alone never leaves.
    """
    return counts[a] - w > 1e-12 * counts[a]


@numba.njit(cache=True, nogil=True, inline="always")
def best_move(costs, a, X, i, w):
    """Pick the cluster point ``i`` (of weight ``w``, in cluster ``a``) moves to.

    Given :func:`move_prices`: the cluster of the largest decrease, ties to
    the lowest index; ``a`` itself when no move lowers the objective by more
    than :data:`MOVE_RTOL` of the magnitudes involved plus :data:`MOVE_ATOL`
    of the point's weighted squared norm (what rounding can explain).
    """
    gain = costs[a]
    best = a
    best_cost = gain
    for c in range(costs.shape[0]):
        if c != a and costs[c] < best_cost:
            best = c
            best_cost = costs[c]
    if best == a:
        return a
    floor = MOVE_RTOL * (abs(gain) + abs(best_cost))
    floor += MOVE_ATOL * w * squared_norm(X, i)
    if gain - best_cost <= floor:
        return a
    return best


@numba.njit(cache=True, nogil=True)
def move_point(X, codes, Z, i, a, b, w, sums, counts, value_counts, num_sums):
    """Move point ``i`` (of weight ``w``) from cluster ``a`` to ``b`` in the sums and counts."""
    counts[a] -= w
    counts[b] += w
    for j in range(X.shape[1]):
        sums[j, a] -= w * X[i, j]
        sums[j, b] += w * X[i, j]
    for t in range(codes.shape[1]):
        v = codes[i, t]
        value_counts[v, a] -= w
        value_counts[v, b] += w
    for t in range(Z.shape[1]):
        num_sums[t, a] -= w * Z[i, t]
        num_sums[t, b] += w * Z[i, t]


# -------------------- pricing a block of points at once
#
# Pricing a block of points at once, in layouts the compiler vectorises.
#
# A point's prices need its squared distance to every centre and the linear
# part ``lin`` of its fairness change per cluster (:func:`fairkm.cluster._kernels.point_terms`).
# One point at a time, both are loops over the ``k`` clusters, too short to
# vectorise (at ``k = 10`` they run scalar, with a loop's overhead per cluster).
# Here:
#
# * distances are computed for a block of points, two centres at a time, from
#   the block's coordinates transposed (features by points), so the inner loop
#   runs over the block's points (:func:`gather_block`, then :func:`all_distances`);
# * ``lin`` is read from a table of each value's share of it per cluster
#   (:func:`set_lin_columns`, :func:`table_lin`): one entry added per attribute and
#   cluster instead of four operations.
#
# Both add the same terms in the same order as the point-at-a-time formulas, so
# every price is bit-identical to theirs (``tests/test_blocks.py``). A kernel
# that moves a point while a block is open refreshes the two clusters the move
# changed: their table columns (:func:`set_lin_columns`) and their rows of the
# block's distances (:func:`patch_distances`), all of the block's points: the
# loops then start at a constant 0, and numba's code for them runs twice as fast
# as for a start known only at run time (400,000 x 10, k=10, one thread: the
# blocks' distances 59-64 against 116-118 ns per point), so refreshing the whole
# block costs less than refreshing the points not yet visited did (a first sweep
# 137-149 against 159-161 ns per point; the rows of points already visited are
# never read again).
#
# Only :func:`table_lin`, run for every point, is inlined into its callers; the
# rest run once per block or per move, and inlining them made the sweep take
# twice as long to compile for no speed. Only the sweep prices by blocks: the
# mini-batch proposals and ``predict``'s kernels price one row at a time, as
# blocks made them no faster (a mini-batch fit at the paper's weight on
# 1,000,000 rows took 5.8 s by blocks against 5.6 s; ``predict`` 72-81 ms either
# way), and the nearest-centre kernel compiled 1.3 s longer by blocks.


# Points per block: a move recomputes two rows of the block's distances for the
# rest of the block, so smaller blocks make moves cheaper and larger ones the
# loops; on 1,000,000 x 10 at k=10, 24-32 points beat 16 and 64-128 (a first
# sweep 65-69 ns per point against 70-90).
BLOCK = 32


@numba.njit(cache=True, nogil=True)
def gather_block(X, rows, start, m, xt):  # IN, IN, IN, IN, OUT
    """Copy rows ``rows[start:start + m]`` of ``X`` into the columns of ``xt``."""
    for r in range(m):
        i = rows[start + r]
        for j in range(X.shape[1]):
            xt[j, r] = X[i, j]


@numba.njit(cache=True, nogil=True)
def block_distances(xt, m, centers, c, out):  # IN, IN, IN, IN, OUT
    """``out[c, r]`` = squared distance of the block's point ``r`` to centre ``c``, ``r < m``.

    The features are added in order, as :func:`fairkm.cluster._kernels.point_terms` adds them.
    """
    for r in range(m):
        out[c, r] = 0.0
    for j in range(xt.shape[0]):
        center = centers[j, c]
        for r in range(m):
            diff = xt[j, r] - center
            out[c, r] += diff * diff


@numba.njit(cache=True, nogil=True)
def set_lin_columns(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, a, b,  # IN
                    table):  # OUT
    """Refresh the columns of clusters ``a`` and ``b`` (a move's two) of the lin table.

    ``table[v, c]``, shape (V, k), is categorical value ``v``'s share of ``lin``
    in cluster ``c``: the attribute's coefficient times ``c_v - |C| p_v - G``;
    a point's ``lin[c]`` is the sum of its values' entries (:func:`table_lin`).
    With ``a == b`` one column is set (twice).
    """
    size_a, size_b = counts[a], counts[b]
    for t in range(offsets.shape[0] - 1):
        w = cat_coef[t]
        g_a, g_b = cat_dev[t, a], cat_dev[t, b]
        for v in range(offsets[t], offsets[t + 1]):
            table[v, a] = lin_term(w, value_counts[v, a], size_a, value_prop[v], g_a)
            table[v, b] = lin_term(w, value_counts[v, b], size_b, value_prop[v], g_b)


@numba.njit(cache=True, nogil=True)
def patch_distances(xt, m, centers, a, b, out):  # IN, IN, IN, IN, IN, IN/OUT
    """:func:`block_distances` to centres ``a`` and ``b`` (a move's two), in one pass."""
    for r in range(m):
        out[a, r] = 0.0
        out[b, r] = 0.0
    for j in range(xt.shape[0]):
        center_a, center_b = centers[j, a], centers[j, b]
        for r in range(m):
            diff_a = xt[j, r] - center_a
            diff_b = xt[j, r] - center_b
            out[a, r] += diff_a * diff_a
            out[b, r] += diff_b * diff_b


@numba.njit(cache=True, nogil=True)
def all_distances(xt, m, centers, out):  # IN, IN, IN, OUT
    """:func:`block_distances` to every centre, two at a time (one read of the block per pair)."""
    k = centers.shape[1]
    for c in range(0, k - 1, 2):
        patch_distances(xt, m, centers, c, c + 1, out)
    if k % 2:
        block_distances(xt, m, centers, k - 1, out)


@numba.njit(cache=True, nogil=True, inline="always")
def table_lin(table, codes, Z, num_coef, num_sums, i, lin):  # IN ..., OUT
    """Point ``i``'s ``lin`` from the lin table (:func:`set_lin_columns`) and the numeric sums."""
    for c in range(lin.shape[0]):
        lin[c] = 0.0
    for t in range(codes.shape[1]):
        v = codes[i, t]
        for c in range(lin.shape[0]):
            lin[c] += table[v, c]
    numeric_lin(Z, num_coef, num_sums, i, lin)


# -------------------- statistics, inertia and objective recomputed
#
# Per-cluster statistics, inertia and objective, recomputed from scratch.
#
# :func:`cluster_statistics` counts the statistics from the labels,
# :func:`inertia` sums the squared distances to the centres, and
# :func:`statistics_objective` evaluates the objective from the statistics alone
# (what the mini-batch epoch compares). The passes over rows add them in chunks
# of :data:`_STATISTICS_CHUNK`, the chunks' partial results in order.


# Rows per chunk of the statistics and inertia passes: each chunk is summed
# row by row into its own partial result, and the partials are added in chunk
# order. The passes are serial: a pass costs a few nanoseconds per row, less
# than a thread rendezvous is worth on a shared machine.
_STATISTICS_CHUNK = 65536


@numba.njit(cache=True, nogil=True)
def _accumulate(X, codes, Z, weights, labels, start, stop,  # IN
                sums, counts, value_counts, num_sums):  # IN/OUT, cluster axis first
    """Add rows ``start`` to ``stop`` to their clusters' sums and counts, row by row.

    The partials are held cluster by cluster (``sums`` (k, d), ``value_counts``
    (k, V), ``num_sums`` (k, B)), so a row's additions land next to each other
    (a pass took 6.2 ms against 8.2 ms before on 1,000,000 x 10, k=10, five
    attributes, one thread).
    """
    if weights.shape[0] == 0:
        for i in range(start, stop):
            c = labels[i]
            counts[c] += 1.0
            for j in range(X.shape[1]):
                sums[c, j] += X[i, j]
            for t in range(codes.shape[1]):
                value_counts[c, codes[i, t]] += 1.0
            for t in range(Z.shape[1]):
                num_sums[c, t] += Z[i, t]
        return
    for i in range(start, stop):
        c = labels[i]
        w = weights[i]
        counts[c] += w
        for j in range(X.shape[1]):
            sums[c, j] += w * X[i, j]
        for t in range(codes.shape[1]):
            value_counts[c, codes[i, t]] += w
        for t in range(Z.shape[1]):
            num_sums[c, t] += w * Z[i, t]


@numba.njit(cache=True, nogil=True)
def cluster_statistics(X, terms, labels,  # IN
                       stats):  # OUT: sums, counts, value_counts, num_sums
    """Per-cluster sums, counts, value counts and numeric sums, exactly from ``labels``.

    Those arrays of ``stats`` are overwritten (the centres and ``G`` are
    left alone); ``terms`` gives the rows' codes, numeric values and weights
    (its coefficients are not read). Rows are summed in chunks of
    :data:`_STATISTICS_CHUNK`, the chunks' partial sums added in order.
    """
    codes, Z, weights = terms.codes, terms.Z, terms.weights
    sums, counts, value_counts, num_sums = (stats.sums, stats.counts, stats.value_counts,
                                            stats.num_sums)
    sums[:] = 0.0
    counts[:] = 0.0
    value_counts[:] = 0.0
    num_sums[:] = 0.0
    k = counts.shape[0]
    part_sums, part_counts = np.zeros((k, sums.shape[0])), np.zeros(k)
    part_values = np.zeros((k, value_counts.shape[0]))
    part_num = np.zeros((k, num_sums.shape[0]))
    n = X.shape[0]
    for start in range(0, n, _STATISTICS_CHUNK):
        _accumulate(X, codes, Z, weights, labels, start, min(n, start + _STATISTICS_CHUNK),
                    part_sums, part_counts, part_values, part_num)
        sums += part_sums.T
        counts += part_counts
        value_counts += part_values.T
        num_sums += part_num.T
        part_sums[:] = 0.0
        part_counts[:] = 0.0
        part_values[:] = 0.0
        part_num[:] = 0.0


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def statistics_objective(terms, total_sq_norm, stats):  # IN, IN, IN
    """Compute the objective from the statistics alone, in O(k (d + V)).

    ``total_sq_norm - sum_C ||sum_C||^2 / |C|`` plus every cluster's fairness
    term (``Q_C / |C|^p``, ``p = 2 - e``, the coefficients including ``fairness_weight``).
    """
    sums, counts = stats.sums, stats.counts
    quad = cluster_quad(terms.value_prop, terms.offsets, terms.cat_coef, terms.num_coef, counts,
                        stats.value_counts, stats.num_sums)
    p = 2 - terms.cluster_exponent
    value = total_sq_norm
    for c in range(counts.shape[0]):
        if counts[c] > 0:
            explained = 0.0
            for j in range(sums.shape[0]):
                explained += sums[j, c] * sums[j, c]
            value += quad[c] / power(counts[c], p) - explained / counts[c]
    return value


# -------------------- kernels that move points
#
# Kernels that move points between clusters.
#
# The exact sweep (:func:`sweep`: one point at a time, the statistics updated
# after every move), one point's move deltas (:func:`move_deltas`, what the sweep
# sees), and the mini-batch kernels (:func:`propose_moves` prices a batch in
# parallel against the same statistics, :func:`apply_moves` applies it,
# :func:`minibatch_epoch` keeps or undoes each batch). Every move is priced by
# :func:`fairkm.cluster._kernels.move_prices`; the sweep computes its distances
# and linear terms by blocks of points (:mod:`fairkm.cluster._kernels`),
# bit-identical to pricing one point at a time.


def sweep(X, terms, order, block,  # IN
          labels, stats,  # IN/OUT
          quiet=None):  # OUT
    """Visit the points in ``order`` once, moving each to its best cluster.

    Runs the compiled sweep with ``weights`` None for unit weights or the
    sample weights: two signatures of one kernel, each compiled at its first
    use, so that neither loop carries the other's code (the weighted formulas'
    mere presence slows the unit-weight loop about 2x) and a fit compiles only
    the one it runs. The kernel is compiled on its own, not inlined into one
    wrapper per case: numba copies an inlined body statement by statement,
    which took 1.3 of a first fit's 9-11 seconds of compilation.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C-contiguous
    terms : fairkm.cluster._terms.KernelTerms
        The rows' terms and the fit's constants, ``fairness_weight`` folded
        into the coefficients (:meth:`fairkm.cluster._terms.Terms.kernel`):
        ``codes`` (n, A) int64, the global value index (attribute offset
        added) of each categorical value; ``Z`` (n, B), centred standardised
        numeric values; ``weights`` (n,), or (0,) for unit weights;
        ``value_prop``, ``value_const``, ``value_shift`` (V,); ``offsets``
        (A + 1,) int64, the first global value index of each categorical
        attribute, and ``V``; ``cat_coef`` (A,) and ``num_coef`` (B,);
        ``cluster_exponent``, the ``e`` of each cluster's weight
        ``(|C|/n)^e`` (2, the paper's, 1 or 0), so that its quadratic form is
        divided by ``|C|^p``, ``p = 2 - e`` (see :mod:`fairkm.cluster._kernels`).
    order : ndarray of shape (n_visits,), int64
        Points to visit, in order.
    block : int
        Points priced together (:mod:`fairkm.cluster._kernels`;
        :data:`fairkm.cluster._kernels.BLOCK` in the engine). Every block size
        gives the same moves and statistics, to the last bit.
    labels : ndarray of shape (n,), int64
    stats : fairkm.cluster._terms.KernelStats
        The per-cluster statistics, cluster axis last, updated in place
        (:meth:`fairkm.cluster._engine.Stats.kernel`): ``sums`` and
        ``centers`` (d, k), ``counts`` (k,), ``value_counts`` (V, k),
        ``cat_dev`` (A, k), ``G`` per attribute and cluster, and ``num_sums``
        (B, k).

    quiet : ndarray of shape (1,) or (0,), optional
        Of shape (1,): receives, when no point moved, the factor by which
        the fairness coefficients can grow before one move of one point pays
        (:func:`quiet_factor`; ``inf`` when none ever does). Of shape (0,)
        (the default): not measured, as a sweep at weight 0 needs.

    Returns
    -------
    n_moved : int
        Number of points that changed cluster. Every move lowers the
        objective; a point alone in its cluster (or carrying all of its
        weight) never leaves it, so no cluster empties. Ties go to the
        current cluster, then to the lowest index.
    """
    quiet = np.empty(0) if quiet is None else quiet
    weights = terms.weights if terms.weights.shape[0] else None
    return _sweep(X, terms, order, block, labels, stats, quiet, weights)


@numba.njit(cache=True, nogil=True, inline="always")
def quiet_factor(join_distance, leave_distance, join, leave, factor):
    """Lower ``factor`` to where one move, of prices ``join`` and ``leave``, starts to pay.

    The move's price is ``join - leave = D + F`` (:func:`move_prices`), with
    ``D = join_distance - leave_distance`` its K-Means part and ``F`` its
    fairness part, proportional to the fairness coefficients. With them
    multiplied by ``s``, the price is ``D + s F``: a move that does not pay
    now starts to pay at ``s = D / -F`` when ``F < 0``, and never when
    ``F >= 0``. ``D`` is shrunk by :data:`MOVE_RTOL` of the prices'
    magnitude, so rounding cannot make the factor too large.
    """
    distance = join_distance - leave_distance
    fairness = (join - leave) - distance
    if fairness < 0.0:
        margin = MOVE_RTOL * (abs(join) + abs(leave))
        return min(factor, (distance - margin) / -fairness)
    return factor


@numba.njit(cache=True, nogil=True)
def _sweep(X, terms, order, block,  # IN
           labels, stats, quiet,  # IN/OUT, OUT
           weights):  # IN
    """Run :func:`sweep`; ``weights`` is ``terms.weights``, or None for unit weights."""
    weighted = weights is not None
    codes, Z = terms.codes, terms.Z
    value_prop, value_const, value_shift = terms.value_prop, terms.value_const, terms.value_shift
    offsets, cat_coef, num_coef = terms.offsets, terms.cat_coef, terms.num_coef
    sums, centers, counts = stats.sums, stats.centers, stats.counts
    value_counts, cat_dev, num_sums = stats.value_counts, stats.cat_dev, stats.num_sums
    k = counts.shape[0]
    dist = np.empty(k)
    lin = np.empty(k)
    costs = np.empty(k)
    p = 2 - terms.cluster_exponent
    # The per-cluster factors and the lin table, from the helpers each move refreshes them
    # with: no kernel compiled for the start alone (a first fit compiles four fewer).
    grow, shrink = np.empty(k), np.empty(k)
    quad = np.zeros(k)
    if p > 0:
        quad = cluster_quad(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                            num_sums)
    factors = np.zeros((N_FACTORS, k))
    table = np.empty(value_counts.shape)
    for c in range(k):
        set_size_factor(counts, c, grow, shrink)
        if p > 0:
            set_fair_factor(counts, quad, c, p, factors)
        set_lin_columns(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, c, c, table)
    coords = np.empty((X.shape[1], block))
    block_dist = np.empty((k, block))
    n_moved = 0
    measure = quiet.shape[0] > 0
    factor = np.inf  # quiet_factor over the points that did not move, while none has
    for start in range(0, order.shape[0], block):
        m = min(block, order.shape[0] - start)
        gather_block(X, order, start, m, coords)
        all_distances(coords, m, centers, block_dist)
        for r in range(m):
            i = order[start + r]
            a = labels[i]
            w = 1.0 if weights is None else weights[i]
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
                if n_moved == 0 and measure:
                    # Cluster a itself adds nothing: its "move" has a price of 0 and a
                    # K-Means part of at most 0, so a fairness part of at least 0.
                    if weighted:
                        leave = w * counts[a] / (counts[a] - w) * dist[a]
                        for c in range(k):
                            factor = quiet_factor(w * counts[c] / (counts[c] + w) * dist[c],
                                                  leave, costs[c], costs[a], factor)
                    else:
                        leave = shrink[a] * dist[a]
                        for c in range(k):
                            factor = quiet_factor(grow[c] * dist[c], leave, costs[c], costs[a],
                                                  factor)
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
            patch_distances(coords, m, centers, a, b, block_dist)
            labels[i] = b
            n_moved += 1
    if measure:
        quiet[0] = factor
    return n_moved


@numba.njit(cache=True, nogil=True)
def move_deltas(X, terms, i, labels, stats,  # IN
                out):  # OUT
    """Objective change of moving point ``i`` to each cluster, as :func:`sweep` sees it.

    ``out[c]`` receives the change for moving to cluster ``c``; ``out[labels[i]]``
    is 0. If point ``i`` is alone in its cluster, moves are not allowed and
    every entry is set to ``inf`` except the current cluster's.
    """
    codes, Z, weights = terms.codes, terms.Z, terms.weights
    cat_coef, num_coef = terms.cat_coef, terms.num_coef
    counts = stats.counts
    a = labels[i]
    if not may_leave(counts, a, point_weight(weights, i)):
        out[:] = np.inf
        out[a] = 0.0
        return
    k = counts.shape[0]
    p = 2 - terms.cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(terms, stats, p)
    dist, lin = np.empty(k), np.empty(k)
    point_terms(X, codes, terms.value_prop, cat_coef, Z, num_coef, i, stats.centers, counts,
                stats.value_counts, stats.cat_dev, stats.num_sums, dist, lin)
    weighted, w = weights.shape[0] > 0, point_weight(weights, i)
    change = point_change(weighted, w,
                          point_base(codes, terms.value_const, cat_coef, Z, num_coef, i))
    move_prices(weighted, w, change, dist, lin, a, counts, grow, shrink, p, factors, out)
    gain = out[a]
    out -= gain
    out[a] = 0.0


# Points per task of the parallel proposal pass: large enough that the scratch
# buffers and the scheduling cost little per point, small enough to balance.
_PROPOSAL_CHUNK = 256


@numba.njit(cache=True, nogil=True, parallel=True)
def propose_moves(X, terms, batch, labels, stats,  # IN
                  targets):  # OUT
    """Best cluster of each point of ``batch``, every point priced against the same statistics.

    ``targets[t]`` receives the cluster that lowers the objective most when
    point ``batch[t]`` moves there alone, by more than
    :data:`fairkm.cluster._kernels.MOVE_RTOL` of the magnitudes involved, or the
    point's own cluster when no move does (or when it is alone in its cluster).
    The points are independent, so they run in parallel and the result does not
    depend on the number of threads.
    Records as in :func:`sweep`.
    """
    # The parallel loop reads arrays, not the records.
    codes, Z, weights = terms.codes, terms.Z, terms.weights
    value_prop, value_const = terms.value_prop, terms.value_const
    cat_coef, num_coef = terms.cat_coef, terms.num_coef
    centers, counts = stats.centers, stats.counts
    value_counts, cat_dev, num_sums = stats.value_counts, stats.cat_dev, stats.num_sums
    k = counts.shape[0]
    p = 2 - terms.cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(terms, stats, p)
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


@numba.njit(cache=True, nogil=True)
def apply_moves(X, terms, batch, targets,  # IN
                labels, stats):  # IN/OUT: labels, sums, counts, value_counts, num_sums
    """Move every point ``batch[t]`` to ``targets[t]``, updating the statistics.

    A move that would empty its cluster is skipped, so no cluster empties.
    Centres and ``G`` are left to the caller (they follow from the sums and
    counts). Returns the number of points moved.
    """
    codes, Z, weights = terms.codes, terms.Z, terms.weights
    sums, counts = stats.sums, stats.counts
    value_counts, num_sums = stats.value_counts, stats.num_sums
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


@numba.njit(cache=True, nogil=True)
def _derive(terms,  # IN
            stats):  # IN: sums, counts, value_counts; OUT: centers, cat_dev
    """Centres (0 for an empty cluster) and ``G`` from the sums and counts."""
    value_prop, offsets = terms.value_prop, terms.offsets
    sums, counts, value_counts = stats.sums, stats.counts, stats.value_counts
    centers, cat_dev = stats.centers, stats.cat_dev
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


@numba.njit(cache=True, nogil=True)
def minibatch_epoch(X, terms, order, batch_size, min_batch, total_sq_norm,  # IN
                    labels, stats):  # IN/OUT
    """One mini-batch epoch over ``order``: batches priced in parallel, kept if the objective fell.

    Each batch's points choose their moves against the same statistics
    (:func:`propose_moves`, one parallel region per batch); the moves are
    applied together and kept only if the objective, recomputed from the
    statistics (:func:`statistics_objective`), fell; otherwise they are undone
    and the batch halved. After a kept batch the size doubles again, up to
    ``batch_size``. The epoch stops early when the batch would shrink below
    ``min_batch`` points: there the points overshoot together, and exact
    sweeps do better. Records as in :func:`sweep`.

    Returns ``(n_moved, n_kept, n_rejected, stopped)``: points moved, batches
    kept and undone, and whether the epoch stopped early.
    """
    sums, counts = stats.sums, stats.counts
    value_counts, num_sums = stats.value_counts, stats.num_sums
    n = order.shape[0]
    targets = np.empty(min(batch_size, n), dtype=np.int64)
    saved_sums, saved_counts = np.empty_like(sums), np.empty_like(counts)
    saved_values, saved_num = np.empty_like(value_counts), np.empty_like(num_sums)
    saved_labels = np.empty(targets.shape[0], dtype=labels.dtype)
    current = statistics_objective(terms, total_sq_norm, stats)
    size = batch_size
    start = n_moved = n_kept = n_rejected = 0
    while start < n:
        batch = order[start:start + size]
        m = batch.shape[0]
        chosen = targets[:m]
        propose_moves(X, terms, batch, labels, stats, chosen)
        saved_sums[:] = sums
        saved_counts[:] = counts
        saved_values[:] = value_counts
        saved_num[:] = num_sums
        for t in range(m):
            saved_labels[t] = labels[batch[t]]
        moved = apply_moves(X, terms, batch, chosen, labels, stats)
        if moved:
            value = statistics_objective(terms, total_sq_norm, stats)
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
                _derive(terms, stats)
        n_moved += moved
        start += m
    return n_moved, n_kept, n_rejected, False


# -------------------- labels against fixed centres or fitted statistics
#
# Labels of rows against fixed centres or fitted statistics; nothing moves.
#
# :func:`nearest_center` (initial labels from the seeds, rows of weight 0,
# ``predict`` without sensitive features) and :func:`cheapest_insertion`
# (``predict`` with them: each row priced alone against the fitted statistics).
# Rows are independent, so both run in parallel and their labels do not depend
# on the number of threads.


@numba.njit(cache=True, nogil=True, parallel=True)
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


@numba.njit(cache=True, nogil=True, parallel=True)
def cheapest_insertion(X, terms, stats,  # IN
                       labels):  # OUT
    """Cluster where inserting each row alone raises the fitted objective least.

    Each row is priced against the same fitted statistics (records as in
    :func:`fairkm.cluster._kernels.sweep`; the rows' weights are not read),
    independently of the other rows; ties to the lowest index.
    """
    # The parallel loop reads arrays, not the records.
    codes, Z = terms.codes, terms.Z
    value_prop, value_const = terms.value_prop, terms.value_const
    cat_coef, num_coef = terms.cat_coef, terms.num_coef
    centers, counts = stats.centers, stats.counts
    value_counts, cat_dev, num_sums = stats.value_counts, stats.cat_dev, stats.num_sums
    k = counts.shape[0]
    p = 2 - terms.cluster_exponent
    grow, shrink = size_factors(counts)
    _, factors = fair_factors(terms, stats, p)
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


guard_kernel_caches(globals())
