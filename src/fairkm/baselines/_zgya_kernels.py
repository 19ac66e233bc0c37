"""Array kernels of ZGYA (Variational Fair Clustering, K-Means variant).

Pure functions over arrays and scalars; nothing here imports scikit-learn or
holds state. Shapes use ``n`` samples, ``d`` features, ``k`` clusters and
``m`` values of the sensitive attribute. ``S`` is the (n, k) matrix of soft
assignments (rows on the simplex), ``codes`` the int64 group of each point
and ``targets`` the target mix ``U`` of the groups, shape (m,). The two
compiled passes of a bound update are here, with the NumPy helpers around
them (distances, masses, gradient table, fairness cost, soft means).
"""

import numba
import numpy as np

# A cluster whose soft mass 1^T S_k is at most this is treated as empty (no
# fairness term, no fairness gradient); group masses V_j^T S_k are floored at it
# before division, so gradients stay finite.
MASS_FLOOR = 1e-12

# Exponents are clipped below at this before exp(): exponentials that
# underflow into subnormal numbers are many times slower than normal ones, and
# far-away clusters drift to exponents of -1e4 and below. A clipped term is at
# most 1e-304 of its row's largest (exp(0) = 1), so the normalisers and masses
# do not change; log S keeps the exact, unclipped exponent.
_EXPONENT_FLOOR = -700.0


def squared_distances(X, x_squared_norms, centers):  # IN, IN, IN
    """Squared Euclidean distances, shape (n_samples, n_clusters), clipped at 0.

    ``X`` is (n, d), ``x_squared_norms`` (n,), ``centers`` (k, d); returns a
    new (n, k) array.
    """
    dist = X @ centers.T
    dist *= -2.0
    dist += x_squared_norms[:, None]
    dist += np.einsum("ij,ij->i", centers, centers)[None, :]
    np.maximum(dist, 0.0, out=dist)
    return dist


def group_masses(S, codes, n_values):  # IN, IN, IN
    """``(V_j^T S_k)`` as a (n_values, n_clusters) table and ``1^T S_k`` per cluster.

    ``S`` is (n, k) and ``codes`` (n,); returns two new arrays, (m, k) and (k,).
    """
    group_mass = np.zeros((n_values, S.shape[1]))
    np.add.at(group_mass, codes, S)
    return group_mass, S.sum(axis=0)


def gradient_table(group_mass, mass, targets):  # IN, IN, IN
    """Tabulate the fairness gradient ``b``, shape (n_values, n_clusters).

    ``b[p, k] = sum_j u_j (1 / 1^T S_k - v_jp / V_j^T S_k)``; only the group of
    point ``p`` has ``v_jp = 1``, so ``b[p] = table[codes[p]]``. A cluster of
    zero mass has no proportions: its column is 0. Group masses are floored
    at ``MASS_FLOOR`` so the table stays finite. ``group_mass`` is (m, k),
    ``mass`` (k,) and ``targets`` (m,); returns a new (m, k) array.
    """
    live = mass > MASS_FLOOR
    table = np.zeros_like(group_mass)
    floored = np.maximum(group_mass[:, live], MASS_FLOOR)
    table[:, live] = targets.sum() / mass[live] - targets[:, None] / floored
    return table


def fairness_cost(group_mass, mass, targets):  # IN, IN, IN
    """``sum_k KL(U || P_k)``, ``P(j|k) = V_j^T S_k / 1^T S_k``, over non-empty clusters.

    ``group_mass`` is (m, k), ``mass`` (k,) and ``targets`` (m,); returns a float.
    """
    live = mass > MASS_FLOOR
    floored = np.maximum(group_mass[:, live], MASS_FLOOR)
    present = targets > 0
    u = targets[present]
    log_p = np.log(floored[present]) - np.log(mass[live])[None, :]
    return float(np.sum(u[:, None] * (np.log(u)[:, None] - log_p)))


@numba.njit(cache=True)
def _shift_rows(
    log_s,  # IN/OUT
    dist, codes, table, fairness_weight, lipschitz,  # IN
    clipped,  # OUT
):
    """``log s_p - (a_p + lambda b_p) / L`` minus its row maximum, in place.

    ``log_s``, ``dist`` and ``clipped`` are (n, k), ``codes`` (n,) and
    ``table`` (m, k). Writes the same exponents, clipped at
    ``_EXPONENT_FLOOR``, into ``clipped``, and returns the sum of the row
    maxima.
    """
    n, k = log_s.shape
    total = 0.0
    for p in range(n):
        j = codes[p]
        row_max = -np.inf
        for c in range(k):
            log_s[p, c] -= (dist[p, c] + fairness_weight * table[j, c]) / lipschitz
            row_max = max(row_max, log_s[p, c])
        for c in range(k):
            log_s[p, c] -= row_max
            clipped[p, c] = max(log_s[p, c], _EXPONENT_FLOOR)
        total += row_max
    return total


@numba.njit(cache=True)
def _normalise_rows(
    log_s,  # IN/OUT
    scaled, codes,  # IN
    group_mass, mass,  # OUT
):
    """Normalise the rows of ``scaled`` (``exp`` of ``log_s``), and ``log_s`` with them.

    ``log_s`` and ``scaled`` are (n, k), ``codes`` (n,), ``group_mass``
    (m, k) and ``mass`` (k,). Accumulates the masses of the normalised rows
    into ``group_mass`` and ``mass`` (both overwritten) and returns the sum of
    the log normalisers.
    """
    n, k = log_s.shape
    group_mass[:] = 0.0
    mass[:] = 0.0
    total = 0.0
    for p in range(n):
        j = codes[p]
        row_sum = 0.0
        for c in range(k):
            row_sum += scaled[p, c]
        log_norm = np.log(row_sum)
        inverse = 1.0 / row_sum
        for c in range(k):
            log_s[p, c] -= log_norm
            s = scaled[p, c] * inverse
            group_mass[j, c] += s
            mass[c] += s
        total += log_norm
    return total


def bound_step(
    log_s,  # IN/OUT
    dist, codes, table, fairness_weight, lipschitz,  # IN
    group_mass, mass,  # OUT
    work,  # scratch
):
    """One update of the bound optimisation, in place.

    ``s_p <- s_p * exp(-(a_p + lambda b_p) / L) / normaliser`` for every
    point, computed in log space with each row's maximum subtracted
    (log-sum-exp), so that nothing overflows and no entry underflows to an
    unrecoverable 0 in ``log_s``. The pass that normalises also accumulates
    the masses of the new ``S`` that the next update's gradient table needs,
    so ``S`` itself is never stored. The exponentials are NumPy's, between two
    compiled passes, because its vectorised ``exp`` is several times faster
    than the scalar one a compiled loop calls.

    Parameters
    ----------
    log_s : ndarray of shape (n_samples, n_clusters)
        ``log S``; overwritten with the updated assignments.
    dist : ndarray of shape (n_samples, n_clusters)
        Unary terms ``a`` (squared distances to the centres).
    codes : ndarray of shape (n_samples,)
        Group of each point.
    table : ndarray of shape (n_values, n_clusters)
        The gradient ``b`` of the current ``S`` (:func:`gradient_table`).
    fairness_weight, lipschitz : float
        ``lambda`` and ``L``.
    group_mass : ndarray of shape (n_values, n_clusters)
        Overwritten with ``V_j^T S_k`` of the new ``S``.
    mass : ndarray of shape (n_clusters,)
        Overwritten with ``1^T S_k`` of the new ``S``.
    work : ndarray of shape (n_samples, n_clusters)
        Scratch space.

    Returns
    -------
    bound : float
        The bound at its minimiser ``S_new``,
        ``sum S_new (a + lambda b) + L sum S_new log(S_new / S)``, which
        equals ``-L sum_p log sum_k s_pk exp(-(a_pk + lambda b_pk) / L)``.
    """
    total = _shift_rows(log_s, dist, codes, table, fairness_weight, lipschitz, work)
    np.exp(work, out=work)
    total += _normalise_rows(log_s, work, codes, group_mass, mass)
    return -lipschitz * total


def soft_means(X, S, centers):  # IN, IN, IN
    """``X^T S_k / 1^T S_k`` for each cluster; an empty cluster keeps its centre.

    ``X`` is (n, d), ``S`` (n, k) and ``centers`` (k, d); returns a new
    (k, d) array.
    """
    mass = S.sum(axis=0)
    # (X^T S)^T rather than S^T X: OpenBLAS is far slower on the transposed tall operand.
    new = np.ascontiguousarray((X.T @ S).T)
    empty = mass <= MASS_FLOOR
    new[~empty] /= mass[~empty, None]
    new[empty] = centers[empty]
    return new
