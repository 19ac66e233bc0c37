"""Pricing one point's move: the helpers every kernel of the engine shares.

Squared distances, the K-Means size factors, the per-cluster fairness factors,
the price of moving one point to each cluster (:func:`point_terms` and
:func:`move_prices`, or their blocked forms in :mod:`fairkm._kernels._blocks`), the choice
of its best move (:func:`best_move`) and the update of the statistics when it is
made (:func:`move_point`). The sweep, the mini-batch kernels, the statistics and
the prediction kernels of this package all price moves with them; the helpers
marked ``inline="always"`` are compiled into each caller. Shapes and names as in
the package docstring (:mod:`fairkm._kernels`).

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

import numpy as np

from .._kernel_cache import cached_njit

# A move is taken only when it lowers the objective by more than this fraction
# of the magnitudes involved: rounding cannot then make a point flip back and
# forth between two clusters whose costs are equal in exact arithmetic.
MOVE_RTOL = 1e-12
# ... and by more than this fraction of the point's weighted squared norm: the
# rounding of a squared distance is of the order of eps^2 ||x||^2 when the point
# sits on a centre (identical points), below which the relative rule above,
# whose magnitudes are then themselves rounding, cannot tell a gain from noise.
MOVE_ATOL = 1e-28


@cached_njit(nogil=True, inline="always")
def squared_norm(X, i):
    """``||X[i]||^2``."""
    s = 0.0
    for j in range(X.shape[1]):
        s += X[i, j] * X[i, j]
    return s


@cached_njit(nogil=True, inline="always")
def squared_distance(X, i, centers, c):
    """``||X[i] - centers[c]||^2``, centres one per row."""
    s = 0.0
    for j in range(X.shape[1]):
        t = X[i, j] - centers[c, j]
        s += t * t
    return s


@cached_njit(nogil=True)
def set_size_factor(counts, c, grow, shrink):  # IN, IN, OUT, OUT
    """Set cluster ``c``'s K-Means factors: ``|C|/(|C|+1)`` to join, ``|C|/(|C|-1)`` to leave.

    They change only when a point moves, so a sweep keeps them instead of
    dividing for every point and cluster.
    """
    n = counts[c]
    grow[c] = n / (n + 1.0)
    shrink[c] = n / (n - 1.0) if n > 1.0 else 0.0


@cached_njit(nogil=True)
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


@cached_njit(nogil=True, inline="always")
def power(size, p):
    """``size ** p`` for ``p`` in {0, 1, 2}, by multiplication."""
    if p == 0:
        return 1.0
    if p == 1:
        return size
    return size * size


@cached_njit(nogil=True, inline="always")
def _growth(size, w, p):
    """``(size + w) ** p - size ** p`` for ``p`` in {1, 2}, without cancellation."""
    if p == 1:
        return w
    return w * (2.0 * size + w)


@cached_njit(nogil=True)
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


@cached_njit(nogil=True)
def cluster_quad(value_prop, offsets, cat_coef, num_coef, counts, value_counts, num_sums):
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


@cached_njit(nogil=True)
def fair_factors(value_prop, offsets, cat_coef, num_coef, counts, value_counts, num_sums, p):
    """``Q_C`` per cluster and the clusters' :func:`set_fair_factor` (zeros for ``p = 0``)."""
    k = counts.shape[0]
    factors = np.zeros((N_FACTORS, k))
    if p == 0:
        return np.zeros(k), factors
    quad = cluster_quad(value_prop, offsets, cat_coef, num_coef, counts, value_counts,
                        num_sums)
    for c in range(k):
        set_fair_factor(counts, quad, c, p, factors)
    return quad, factors


@cached_njit(nogil=True, inline="always")
def point_base(codes, value_const, cat_coef, Z, num_coef, i):
    """Return the unit change of ``Q`` alike for every cluster point ``i`` joins or leaves."""
    base = 0.0
    for t in range(codes.shape[1]):
        base += cat_coef[t] * value_const[codes[i, t]]
    for t in range(Z.shape[1]):
        base += num_coef[t] * Z[i, t] * Z[i, t]
    return base


@cached_njit(nogil=True, inline="always")
def lin_term(coef, count, size, prop, dev):
    """Return a categorical value's term of ``lin``: ``coef (c_v - |C| p_v - G)``.

    The one expression :func:`point_terms` and the blocks' table
    (:func:`fairkm._kernels._blocks.lin_table`) both evaluate, so that their
    ``lin`` agree to the last bit.
    """
    return coef * (count - size * prop - dev)


@cached_njit(nogil=True, inline="always")
def numeric_lin(Z, num_coef, num_sums, i, lin):  # IN ..., IN/OUT
    """Add the numeric attributes' part of ``lin`` (after the categorical part, in that order)."""
    for t in range(Z.shape[1]):
        w = num_coef[t] * Z[i, t]
        for c in range(num_sums.shape[1]):
            lin[c] += w * num_sums[t, c]


@cached_njit(nogil=True, inline="always")
def point_terms(
    X, codes, value_prop, cat_coef, Z, num_coef,  # IN
    i, centers, counts, value_counts, cat_dev, num_sums,  # IN
    dist, lin,  # OUT
):
    """Point ``i``'s squared distance to each centre and the linear part ``lin`` of its price.

    Term by term, one point at a time; :mod:`fairkm._kernels._blocks` computes
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


@cached_njit(nogil=True, inline="always")
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


@cached_njit(nogil=True, inline="always")
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


@cached_njit(nogil=True, inline="always")
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


@cached_njit(nogil=True, inline="always")
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


@cached_njit(nogil=True, inline="always")
def point_weight(weights, i):
    """Point ``i``'s weight (1 for unit weights)."""
    return 1.0 if weights.shape[0] == 0 else weights[i]


@cached_njit(nogil=True, inline="always")
def may_leave(counts, a, w):
    """Whether a point of weight ``w`` may leave cluster ``a``: never its last weight.

    For unit weights this is ``counts[a] > 1``: a point alone never leaves.
    """
    return counts[a] - w > 1e-12 * counts[a]


@cached_njit(nogil=True, inline="always")
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


@cached_njit(nogil=True)
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
