"""The local search of the bounded assignment, compiled: repair a labelling, then polish it.

Arrays and scalars in, labels changed in place; no randomness, so the same
input gives the same labels.

The state is every cluster's size, per value count and per numeric attribute
sum (all in weight). A cluster's *excess* is how much weight lies outside its
bands: for each value, the count above ``upper * size`` or below ``lower *
size``; for each attribute with a cap on its total-variation distance, the
distance's excess (``sum_v |count_v - p_v size| - 2 cap size``); for each
numeric attribute, ``|sum w z| - cap * size`` when positive. Every band is
widened by ``TOL`` (a share), the tolerance of :func:`fairkm.bounds.check_bounds`.

Rows of one *type* (one combination of the categorical values) are
interchangeable for the bands when every weight is 1 and there is no numeric
attribute ("unit" problems); then a move is a type's, not a row's. For each
(type, from-cluster, to-cluster) the rows cheapest to move are kept in a short
sorted list (its first still-valid entry is the *head*); heads are the only
rows the search moves. On unit problems the cost of moving one row of a type
from ``a`` to ``b`` is the shortest path over the type's heads (a row of the
type goes ``a -> c``, another ``c -> b``: the counts change only at ``a`` and
``b``), and a negative cycle of one type is a cheaper assignment with the same
counts, cancelled at once.

1. **Repair** (while any excess is left): the single move, or swap of two rows
   between two clusters, that lowers the total excess at the least cost per
   unit of excess removed.
2. **Polish** (optional, once no excess is left): the move, swap or pair of
   moves (an improving move that breaks a band, and a second move that
   restores it) that lowers the cost most without creating excess; until
   none does.
"""

import numba
import numpy as np

__all__ = ["TOL", "excess_of", "search"]

TOL = 1e-9
_LIST = 16          # rows kept per (type, from, to) list
_TEMPTING = 64      # improving moves tried as the first half of a pair of moves


@numba.njit(cache=True)
def _penalty(count, size, lower, upper):
    return (max(count - (upper + TOL) * size, 0.0)
            + max((lower - TOL) * size - count, 0.0))


@numba.njit(cache=True)
def cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap, z_cap):
    """Weight outside cluster ``c``'s bands, from the state arrays (O(values + numeric))."""
    s = size[c]
    total = 0.0
    for a in range(offsets.shape[0] - 1):
        tv = 0.0
        for v in range(offsets[a], offsets[a + 1]):
            x = cnt[c, v]
            total += _penalty(x, s, lower[c, v], upper[c, v])
            tv += abs(x - prop[v] * s)
        if tv_cap[c, a] < np.inf:
            total += max(tv - 2.0 * (tv_cap[c, a] + TOL) * s, 0.0)
    for b in range(zsum.shape[1]):
        total += max(abs(zsum[c, b]) - (z_cap[c, b] + TOL) * s, 0.0)
    return total


@numba.njit(cache=True)
def _shift(i, a, b, weights, codes, z, size, cnt, zsum):
    """Move row ``i``'s weight from cluster ``a`` to ``b`` in the state (not its label)."""
    w = weights[i]
    size[a] -= w
    size[b] += w
    for q in range(codes.shape[1]):
        cnt[a, codes[i, q]] -= w
        cnt[b, codes[i, q]] += w
    for q in range(z.shape[1]):
        zsum[a, q] -= w * z[i, q]
        zsum[b, q] += w * z[i, q]


def excess_of(labels, weights, codes, z, lower, upper, prop, offsets, tv_cap, z_cap):
    """Return each cluster's excess for ``labels`` (the state built from scratch)."""
    k, n_values = lower.shape
    size, cnt, zsum = _state(labels, weights, codes, z, k, n_values)
    return np.array([cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap,
                                    z_cap) for c in range(k)])


@numba.njit(cache=True)
def _state(labels, weights, codes, z, k, n_values):
    size = np.zeros(k)
    cnt = np.zeros((k, n_values))
    zsum = np.zeros((k, z.shape[1]))
    for i in range(labels.shape[0]):
        c = labels[i]
        w = weights[i]
        size[c] += w
        for q in range(codes.shape[1]):
            cnt[c, codes[i, q]] += w
        for q in range(z.shape[1]):
            zsum[c, q] += w * z[i, q]
    return size, cnt, zsum


# ---------------------------------------------------------------------------- candidate lists


@numba.njit(cache=True)
def _insert(rows, cost, count, t, a, b, i, value):
    """Insert row ``i`` (moving ``a -> b`` costs ``value``) in the sorted list of (t, a, b)."""
    n = count[t, a, b]
    size = rows.shape[3]
    if n == size and value >= cost[t, a, b, n - 1]:
        return
    j = n if n < size else size - 1
    while j > 0 and cost[t, a, b, j - 1] > value:
        rows[t, a, b, j] = rows[t, a, b, j - 1]
        cost[t, a, b, j] = cost[t, a, b, j - 1]
        j -= 1
    rows[t, a, b, j] = i
    cost[t, a, b, j] = value
    if n < size:
        count[t, a, b] = n + 1


@numba.njit(cache=True)
def _fill(t, only, first, members, labels, dist, weights, rows, cost, count):
    """(Re)build the lists of type ``t`` (from cluster ``only``; every cluster if -1)."""
    k = dist.shape[1]
    for a in range(k):
        if only < 0 or a == only:
            for b in range(k):
                count[t, a, b] = 0
    for j in range(first[t], first[t + 1]):
        i = members[j]
        a = labels[i]
        if only >= 0 and a != only:
            continue
        for b in range(k):
            if b != a:
                _insert(rows, cost, count, t, a, b, i, weights[i] * (dist[i, b] - dist[i, a]))


@numba.njit(cache=True)
def _head(t, a, b, first, members, labels, dist, weights, rows, cost, count):
    """Return the cheapest row of type ``t`` in ``a`` to move to ``b`` (-1: none)."""
    for attempt in range(2):
        n = count[t, a, b]
        j = 0
        while j < n and labels[rows[t, a, b, j]] != a:
            j += 1
        if j:
            for q in range(j, n):
                rows[t, a, b, q - j] = rows[t, a, b, q]
                cost[t, a, b, q - j] = cost[t, a, b, q]
            count[t, a, b] = n - j
        if count[t, a, b]:
            return rows[t, a, b, 0]
        if attempt or not j:
            return -1
        # every listed row has left: the rows not listed are the next cheapest
        _fill(t, a, first, members, labels, dist, weights, rows, cost, count)
    return -1


@numba.njit(cache=True)
def _paths(t, heads, dist, weights, D, nxt, chains):
    """Cheapest way to move one row of type ``t`` between each pair of clusters.

    Direct moves of the heads, or (``chains``) shortest paths over them
    (Floyd-Warshall). Return a cluster on a negative cycle, or -1.
    """
    k = dist.shape[1]
    for a in range(k):
        for b in range(k):
            nxt[t, a, b] = -1
            D[t, a, b] = np.inf
            if a == b:
                D[t, a, b] = 0.0
                continue
            i = heads[t, a, b]
            if i >= 0:
                D[t, a, b] = weights[i] * (dist[i, b] - dist[i, a])
                nxt[t, a, b] = b
    if not chains:
        return -1
    for c in range(k):
        for a in range(k):
            if D[t, a, c] == np.inf:
                continue
            for b in range(k):
                through = D[t, a, c] + D[t, c, b]
                if through < D[t, a, b]:
                    D[t, a, b] = through
                    nxt[t, a, b] = nxt[t, a, c]
            if D[t, a, a] < 0.0:
                return a
    return -1


@numba.njit(cache=True)
def _relabel(i, a, b, labels, weights, codes, z, dist, types, size, cnt, zsum,
             rows, cost, count):
    labels[i] = b
    _shift(i, a, b, weights, codes, z, size, cnt, zsum)
    t = types[i]
    for c in range(dist.shape[1]):
        if c != b:
            _insert(rows, cost, count, t, b, c, i, weights[i] * (dist[i, c] - dist[i, b]))


@numba.njit(cache=True)
def _cycle(t, c0, heads, nxt, dist, weights, k, eps):
    """Rows and clusters of the negative cycle of type ``t`` through ``c0`` (n = 0: none)."""
    seq = np.empty(k + 1, dtype=np.int64)
    seq[0] = c0
    n = 1
    a = nxt[t, c0, c0]
    while a >= 0 and a != c0 and n <= k:
        seq[n] = a
        n += 1
        a = nxt[t, a, c0]
    if a != c0 or n < 2:
        return seq, 0
    total = 0.0
    for q in range(n):
        i = heads[t, seq[q], seq[(q + 1) % n]]
        if i < 0:
            return seq, 0
        total += weights[i] * (dist[i, seq[(q + 1) % n]] - dist[i, seq[q]])
    return seq, n if total < -eps else 0


# ---------------------------------------------------------------------------- the search


@numba.njit(cache=True)
def search(dist, weights, types, n_types, codes, z, lower, upper, prop, offsets, tv_cap,
           z_cap, w_min, unit, labels, polish, max_steps):
    """Repair ``labels`` until no cluster has excess, then (``polish``) lower their cost.

    IN: dist (m, k) cost of each row per cluster (per unit of weight);
    weights (m,); types (m,) in [0, n_types); codes (m, A) global value index
    of each categorical attribute; z (m, B) numeric values; lower, upper (k, V)
    share bands; prop (V,) the dataset's shares; offsets (A + 1,) first value
    of each attribute; tv_cap (k, A) and z_cap (k, B) caps (inf: none); w_min
    the least weight a cluster keeps; unit whether every weight is 1 and B = 0;
    max_steps. OUT: labels (m,) changed in place.

    Returns (the excess left, in weight; the number of steps taken).
    """
    m, k = dist.shape
    n_values = lower.shape[1]
    size, cnt, zsum = _state(labels, weights, codes, z, k, n_values)
    E = np.empty(k)
    for c in range(k):
        E[c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap, z_cap)
    first = np.zeros(n_types + 1, dtype=np.int64)
    for i in range(m):
        first[types[i] + 1] += 1
    for t in range(n_types):
        first[t + 1] += first[t]
    members = np.empty(m, dtype=np.int64)
    fill = first[:-1].copy()
    for i in range(m):
        members[fill[types[i]]] = i
        fill[types[i]] += 1
    rows = np.empty((n_types, k, k, _LIST), dtype=np.int64)
    cost = np.empty((n_types, k, k, _LIST))
    count = np.zeros((n_types, k, k), dtype=np.int64)
    for t in range(n_types):
        _fill(t, -1, first, members, labels, dist, weights, rows, cost, count)
    heads = np.full((n_types, k, k), -1, dtype=np.int64)
    D = np.empty((n_types, k, k))
    nxt = np.empty((n_types, k, k), dtype=np.int64)
    dirty = np.ones(n_types, dtype=np.bool_)
    # Gains below this are rounding: the search stops rather than cycle on them.
    scale = 0.0
    for i in range(m):
        scale += weights[i] * dist[i, labels[i]]
    eps = 1e-12 * max(scale, 1e-300)
    ex_tol = 1e-9 * w_min
    rm = np.empty((n_types, k))   # excess of a cluster without one row of the type
    add = np.empty((n_types, k))  # ... with one more
    tempt_t = np.empty(_TEMPTING, dtype=np.int64)
    tempt_a = np.empty(_TEMPTING, dtype=np.int64)
    tempt_b = np.empty(_TEMPTING, dtype=np.int64)
    tempt_c = np.empty(_TEMPTING)
    steps = 0
    while steps < max_steps:
        steps += 1
        # heads and paths of the types whose rows moved; negative cycles cancelled
        for t in range(n_types):
            while dirty[t]:
                for a in range(k):
                    for b in range(k):
                        if a != b:
                            heads[t, a, b] = _head(t, a, b, first, members, labels, dist,
                                                   weights, rows, cost, count)
                c0 = _paths(t, heads, dist, weights, D, nxt, unit)
                dirty[t] = False
                if c0 < 0:
                    break
                seq, n_seq = _cycle(t, c0, heads, nxt, dist, weights, k, eps)
                if n_seq == 0:
                    break
                for q in range(n_seq):
                    a, b = seq[q], seq[(q + 1) % n_seq]
                    _relabel(heads[t, a, b], a, b, labels, weights, codes, z, dist, types,
                             size, cnt, zsum, rows, cost, count)
                dirty[t] = True
        total = E.sum()
        repair = total > ex_tol
        if not repair and not polish:
            break
        if unit:
            for t in range(n_types):
                r = members[first[t]]
                for c in range(k):
                    size[c] -= 1.0
                    for q in range(codes.shape[1]):
                        cnt[c, codes[r, q]] -= 1.0
                    rm[t, c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop,
                                              offsets, tv_cap, z_cap)
                    size[c] += 2.0
                    for q in range(codes.shape[1]):
                        cnt[c, codes[r, q]] += 2.0
                    add[t, c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop,
                                               offsets, tv_cap, z_cap)
                    size[c] -= 1.0
                    for q in range(codes.shape[1]):
                        cnt[c, codes[r, q]] -= 1.0
        best = np.inf
        kind = 0
        bt, ba, bb, bt2, bx, by = -1, -1, -1, -1, -1, -1
        n_tempt = 0
        for a in range(k):
            for b in range(k):
                if a == b or (repair and E[a] <= ex_tol and E[b] <= ex_tol):
                    continue
                for t in range(n_types):
                    dcost = D[t, a, b]
                    if dcost == np.inf:
                        continue
                    i = heads[t, a, b]
                    if size[a] - weights[i] < w_min * (1.0 - 1e-12):
                        continue
                    if not repair and dcost >= -eps:
                        continue
                    if unit:
                        ea, eb = rm[t, a], add[t, b]
                    else:
                        _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                        ea = cluster_excess(a, size, cnt, zsum, lower, upper, prop, offsets,
                                            tv_cap, z_cap)
                        eb = cluster_excess(b, size, cnt, zsum, lower, upper, prop, offsets,
                                            tv_cap, z_cap)
                        _shift(i, b, a, weights, codes, z, size, cnt, zsum)
                    gain = E[a] + E[b] - ea - eb
                    if repair:
                        if gain > ex_tol and dcost / gain < best:
                            best, kind, bt, ba, bb = dcost / gain, 1, t, a, b
                    elif gain >= -ex_tol and ea <= ex_tol and eb <= ex_tol:
                        if dcost < best:
                            best, kind, bt, ba, bb = dcost, 1, t, a, b
                    elif n_tempt < _TEMPTING or dcost < tempt_c[n_tempt - 1]:
                        # an improving move that breaks a band: kept, cheapest first
                        j = n_tempt if n_tempt < _TEMPTING else _TEMPTING - 1
                        while j > 0 and tempt_c[j - 1] > dcost:
                            tempt_t[j], tempt_a[j] = tempt_t[j - 1], tempt_a[j - 1]
                            tempt_b[j], tempt_c[j] = tempt_b[j - 1], tempt_c[j - 1]
                            j -= 1
                        tempt_t[j], tempt_a[j], tempt_b[j], tempt_c[j] = t, a, b, dcost
                        n_tempt = min(n_tempt + 1, _TEMPTING)
        # swaps: a row of t1 a -> b and a row of t2 b -> a
        for a in range(k):
            for b in range(a + 1, k):
                if repair and E[a] <= ex_tol and E[b] <= ex_tol:
                    continue
                for t1 in range(n_types):
                    c1 = D[t1, a, b]
                    if c1 == np.inf:
                        continue
                    i = heads[t1, a, b]
                    for t2 in range(n_types):
                        c2 = D[t2, b, a]
                        if t2 == t1 or c2 == np.inf:
                            continue
                        if not repair and c1 + c2 >= min(best, -eps):
                            continue
                        j = heads[t2, b, a]
                        _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                        _shift(j, b, a, weights, codes, z, size, cnt, zsum)
                        if size[a] >= w_min * (1.0 - 1e-12) and (
                                size[b] >= w_min * (1.0 - 1e-12)):
                            ea = cluster_excess(a, size, cnt, zsum, lower, upper, prop,
                                                offsets, tv_cap, z_cap)
                            eb = cluster_excess(b, size, cnt, zsum, lower, upper, prop,
                                                offsets, tv_cap, z_cap)
                        else:
                            ea, eb = np.inf, np.inf
                        _shift(j, a, b, weights, codes, z, size, cnt, zsum)
                        _shift(i, b, a, weights, codes, z, size, cnt, zsum)
                        gain = E[a] + E[b] - ea - eb
                        if repair:
                            if gain > ex_tol and (c1 + c2) / gain < best:
                                best, kind = (c1 + c2) / gain, 2
                                bt, ba, bb, bt2, bx, by = t1, a, b, t2, b, a
                        elif ea <= ex_tol and eb <= ex_tol and c1 + c2 < best:
                            best, kind = c1 + c2, 2
                            bt, ba, bb, bt2, bx, by = t1, a, b, t2, b, a
        # pairs of moves: a tempting move, and a move touching its clusters that
        # removes the excess it made
        if not repair and kind == 0:
            for q in range(n_tempt):
                t1, a, b, c1 = tempt_t[q], tempt_a[q], tempt_b[q], tempt_c[q]
                i = heads[t1, a, b]
                _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                for x in range(k):
                    for y in range(k):
                        if x == y or not (x == a or x == b or y == a or y == b):
                            continue
                        for t2 in range(n_types):
                            c2 = D[t2, x, y]
                            if t2 == t1 or c2 == np.inf or c1 + c2 >= min(best, -eps):
                                continue
                            j = heads[t2, x, y]
                            if size[x] - weights[j] < w_min * (1.0 - 1e-12):
                                continue
                            _shift(j, x, y, weights, codes, z, size, cnt, zsum)
                            ok = True
                            for c in (a, b, x, y):
                                if cluster_excess(c, size, cnt, zsum, lower, upper, prop,
                                                  offsets, tv_cap, z_cap) > ex_tol:
                                    ok = False
                                    break
                            _shift(j, y, x, weights, codes, z, size, cnt, zsum)
                            if ok:
                                best, kind = c1 + c2, 3
                                bt, ba, bb, bt2, bx, by = t1, a, b, t2, x, y
                _shift(i, b, a, weights, codes, z, size, cnt, zsum)
        if kind == 0:
            break
        # apply: each part moves one row of its type along its path
        for part in range(1 if kind == 1 else 2):
            t = bt if part == 0 else bt2
            a = ba if part == 0 else bx
            dst = bb if part == 0 else by
            moved = 0
            while a != dst and moved < k:
                b = nxt[t, a, dst]
                _relabel(heads[t, a, b], a, b, labels, weights, codes, z, dist, types, size,
                         cnt, zsum, rows, cost, count)
                a = b
                moved += 1
            dirty[t] = True
        for c in range(k):
            E[c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap,
                                  z_cap)
    return E.sum(), steps
