"""The local search of the bounded assignment, compiled: repair a labelling, then polish it.

Arrays and scalars in, labels changed in place; no randomness, so the same
input gives the same labels.

The state is every cluster's size, per value count and per numeric attribute
sum (all in weight). The *excess* is how much weight lies outside the bands
and caps:

* per cluster, for each value, the count above ``upper * size`` or below
  ``lower * size``, times ``hard``; for each attribute with a balance target
  ``b``, ``b`` times its largest count of a value present in the dataset
  (``prop > 0``) less its smallest, times ``hard``; for each attribute with a cap on a
  cluster's total-variation distance from the dataset's mix,
  ``sum_v |count_v - p_v size| - 2 cap size``; for each numeric attribute,
  ``|sum w z| - cap size`` (each when positive);
* per attribute with a cap on the mean over the clusters of that distance
  (or of ``|mean z|``), how far the mean lies above it, times the mean
  cluster size (so that it reads in rows too).

Every band and cap is widened by ``TOL`` (a share), the tolerance of
:func:`fairkm.metrics.check_bounds`.

Rows of one *type* (one combination of the categorical values) are
interchangeable for the bands when every weight is 1 and there is no numeric
attribute ("unit" problems); then a move is a type's, not a row's. For each
(type, from-cluster, to-cluster) the rows cheapest to move are kept in a short
sorted list (its first still-valid entry is the *head*); heads are the only
rows the search moves. On unit problems the cost of moving one row of a type
from ``a`` to ``b`` is the shortest path over the type's heads (a row of the
type goes ``a -> c``, another ``c -> b``: the counts change only at ``a`` and
``b``), and, when polishing, a negative cycle of one type (a cheaper
assignment with the same counts) is cancelled at once.

1. **Repair** (while any excess is left): the single move that removes the
   most excess per unit of cost; if none removes any, the best swap of two
   rows between two clusters; if none, the best pair of moves sharing a
   cluster.
2. **Polish** (optional, once no excess is left): the move, swap or pair of
   moves (an improving move that breaks a band, and a second move that
   restores it) that lowers the cost most without creating excess; until
   none does.

A first bounded fit compiles this module (most of its 25 s of CPU, docs/install.md), so it
avoids what numba compiles at more cost than the lines that use it: a slice assignment of an
array and ``transpose`` with axes (both compile an error message with string formatting),
reductions along an axis, ``np.sort`` of integers (a second sort beside the merge sort used
here). Loops and ``.T`` do the same work.
"""

import numba
import numpy as np

from ._cache import guard_kernel_caches

__all__ = ["TOL", "cluster_excess", "overall_excess", "search"]

TOL = 1e-9
_LIST = 16          # rows kept per (type, from, to) list
_PAIRS = 64         # first moves tried in a pair of moves
_PAIR_CACHE = True  # unit problems: pairs weighed from the clusters' excess kept (see search)
_COUNT_CHANGED = True  # unit problems: each step counts afresh only the clusters that changed
_TABLED = 64        # unit problems: the largest attribute whose swaps' terms are kept
_KEPT_TABLES = 1 << 22  # entries at most in the swap tables kept across steps (32 MB)


@numba.njit(cache=True)
def _penalty(count, size, lower, upper):
    return (max(count - (upper + TOL) * size, 0.0)
            + max((lower - TOL) * size - count, 0.0))


@numba.njit(cache=True)
def cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap, balance, z_cap, hard,
                   measures):
    """Cluster ``c``'s own excess (O(values + numeric)); its distances go to ``measures``.

    ``balance`` (k, A): each attribute's balance target in each cluster (0:
    none).

    ``measures`` (A + B,) receives the cluster's total-variation distance of
    each categorical attribute, then ``|mean z|`` of each numeric one (0 for
    an empty cluster).
    """
    s = size[c]
    inv = 1.0 / s if s > 0.0 else 0.0
    total = 0.0
    n_cat = offsets.shape[0] - 1
    for a in range(n_cat):
        tv = 0.0
        least, most = np.inf, 0.0
        for v in range(offsets[a], offsets[a + 1]):
            x = cnt[c, v]
            total += hard * _penalty(x, s, lower[c, v], upper[c, v])
            tv += abs(x - prop[v] * s)
            if prop[v] > 0.0:
                least = min(least, x)
                most = max(most, x)
        if balance[c, a] > 0.0:
            total += hard * max((balance[c, a] - TOL) * most - least, 0.0)
        if tv_cap[c, a] < np.inf:
            total += max(tv - 2.0 * (tv_cap[c, a] + TOL) * s, 0.0)
        measures[a] = 0.5 * tv * inv
    for b in range(zsum.shape[1]):
        total += max(abs(zsum[c, b]) - (z_cap[c, b] + TOL) * s, 0.0)
        measures[n_cat + b] = abs(zsum[c, b]) * inv
    return total


@numba.njit(cache=True)
def overall_excess(msum, mean_cap, mean_scale):
    """Excess of the means over the clusters above their caps, in rows."""
    total = 0.0
    for j in range(msum.shape[0]):
        if mean_cap[j] < np.inf:
            total += max(msum[j] - mean_cap[j] - TOL, 0.0)
    return mean_scale * total


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


@numba.njit(cache=True)
def _keep(i, a, b, codes, z, size, cnt, zsum, kept):  # IN ..., OUT: kept
    """Keep the entries of the state that moving row ``i`` between ``a`` and ``b`` changes.

    A step weighed is shifted into the state and :func:`_put_back` after: shifting
    it back instead adds and takes away the same amounts, which need not give the
    same bits (numeric values, fractional weights), and the state would drift with
    every step weighed.
    """
    kept[0], kept[1] = size[a], size[b]
    n = 2
    for q in range(codes.shape[1]):
        kept[n], kept[n + 1] = cnt[a, codes[i, q]], cnt[b, codes[i, q]]
        n += 2
    for q in range(z.shape[1]):
        kept[n], kept[n + 1] = zsum[a, q], zsum[b, q]
        n += 2


@numba.njit(cache=True)
def _put_back(i, a, b, codes, z, size, cnt, zsum, kept):  # IN ..., OUT: size, cnt, zsum
    """Put back the entries :func:`_keep` kept, to the bit."""
    size[a], size[b] = kept[0], kept[1]
    n = 2
    for q in range(codes.shape[1]):
        cnt[a, codes[i, q]], cnt[b, codes[i, q]] = kept[n], kept[n + 1]
        n += 2
    for q in range(z.shape[1]):
        zsum[a, q], zsum[b, q] = kept[n], kept[n + 1]
        n += 2


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


# ---------------------------------------------------------------------------- unit problems
#
# On unit problems a cluster's excess is a sum over its categorical attributes,
# and a row's move changes one value's count per attribute (and the size by one),
# a swap of two rows two values' counts (the size not at all). So per cluster and
# attribute the search keeps the sums of the band penalties and of
# |count - prop * size| at the sizes one less, the same and one more, and the
# held values of the three largest and three smallest counts: the excess after a
# move or a swap is then O(1) per attribute, where a recount is O(values).


@numba.njit(cache=True)
def _rank(slots, row, v, sign):
    """Insert value ``v`` in ``slots`` (-1: empty), kept in decreasing ``sign * row``."""
    key = sign * row[v]
    j = slots.shape[0]
    while j > 0 and (slots[j - 1] < 0 or sign * row[slots[j - 1]] < key):
        j -= 1
    if j == slots.shape[0]:
        return
    for q in range(slots.shape[0] - 1, j, -1):
        slots[q] = slots[q - 1]
    slots[j] = v


@numba.njit(cache=True)
def _unit_parts(size, cnt, lower, upper, prop, offsets, refresh, pen, dev, top, bottom):
    """Per cluster and attribute, what :func:`_after` reads (OUT: the last four).

    Only the clusters ``refresh`` marks are counted; the others' entries are left.

    ``pen`` and ``dev`` (k, A, 3): the sums over the attribute's values of the
    band penalties and of ``|count - prop * s|`` at ``s`` = size - 1, size and
    size + 1; ``top`` and ``bottom`` (k, A, 3): the held values (``prop > 0``)
    of the largest and of the smallest counts, in order (-1: none).
    """
    for c in range(size.shape[0]):
        if not refresh[c]:
            continue
        for a in range(offsets.shape[0] - 1):
            for d in range(3):
                s = size[c] + (d - 1)
                p_sum, t_sum = 0.0, 0.0
                for v in range(offsets[a], offsets[a + 1]):
                    p_sum += _penalty(cnt[c, v], s, lower[c, v], upper[c, v])
                    t_sum += abs(cnt[c, v] - prop[v] * s)
                pen[c, a, d] = p_sum
                dev[c, a, d] = t_sum
            top[c, a, :] = -1
            bottom[c, a, :] = -1
            for v in range(offsets[a], offsets[a + 1]):
                if prop[v] > 0.0:
                    _rank(top[c, a], cnt[c], v, 1.0)
                    _rank(bottom[c, a], cnt[c], v, -1.0)


@numba.njit(cache=True, inline="always")
def _extreme(slots, row, sign, u, v, prop):
    """Return the largest (``sign`` 1) or smallest (-1) held count after a change.

    One row of value ``u`` has gone and one of ``v`` has come (-1: none;
    ``u != v``); ``slots`` are the held values of the three largest counts
    times ``sign`` (:func:`_unit_parts`), so one of them is the largest of the
    unchanged values.
    """
    best = -np.inf
    for q in range(slots.shape[0]):
        w = slots[q]
        if w >= 0 and w != u and w != v:
            best = sign * row[w]
            break
    if u >= 0 and prop[u] > 0.0:
        best = max(best, sign * (row[u] - 1.0))
    if v >= 0 and prop[v] > 0.0:
        best = max(best, sign * (row[v] + 1.0))
    return sign * best


@numba.njit(cache=True, inline="always")
def _after(c, a, u, v, d, size, cnt, bands, hard, parts):
    """Cluster ``c``'s excess from attribute ``a``, and its total-variation distance.

    After one row of value ``u`` left and one of value ``v`` came (-1: none;
    ``u != v``) and the size changed by ``d - 1``, as :func:`cluster_excess`
    counts them. ``bands`` = (lower, upper, prop, tv_cap, balance, mean_cap);
    ``parts`` = (pen, dev, top, bottom, here) (:func:`_unit_refresh`).
    """
    lower, upper, prop, tv_cap, balance, _ = bands
    pen, dev, top, bottom, _ = parts
    s = size[c] + (d - 1)
    p_sum, t_sum = pen[c, a, d], dev[c, a, d]
    if u >= 0:
        x = cnt[c, u]
        p_sum += (_penalty(x - 1.0, s, lower[c, u], upper[c, u])
                  - _penalty(x, s, lower[c, u], upper[c, u]))
        t_sum += abs(x - 1.0 - prop[u] * s) - abs(x - prop[u] * s)
    if v >= 0:
        x = cnt[c, v]
        p_sum += (_penalty(x + 1.0, s, lower[c, v], upper[c, v])
                  - _penalty(x, s, lower[c, v], upper[c, v]))
        t_sum += abs(x + 1.0 - prop[v] * s) - abs(x - prop[v] * s)
    total = hard * p_sum
    if balance[c, a] > 0.0:
        most = _extreme(top[c, a], cnt[c], 1.0, u, v, prop)
        least = _extreme(bottom[c, a], cnt[c], -1.0, u, v, prop)
        total += hard * max((balance[c, a] - TOL) * most - least, 0.0)
    if tv_cap[c, a] < np.inf:
        total += max(t_sum - 2.0 * (tv_cap[c, a] + TOL) * s, 0.0)
    inv = 1.0 / s if s > 0.0 else 0.0
    return total, 0.5 * t_sum * inv


@numba.njit(cache=True, inline="always")
def _swap_term(q, u, v, a, b, size, cnt, meas, msum, bands, hard, mean_scale, parts):
    """Excess removed at attribute ``q`` by a swap of a value-``u`` and a value-``v`` row.

    The row of value ``u`` goes ``a -> b``, the one of ``v`` ``b -> a``
    (``u != v``): the two clusters' excess and the mean's over the clusters.
    """
    mean_cap = bands[5]
    here = parts[4]
    ea, ma = _after(a, q, u, v, 1, size, cnt, bands, hard, parts)
    eb, mb = _after(b, q, v, u, 1, size, cnt, bands, hard, parts)
    g = here[a, q] + here[b, q] - ea - eb
    if mean_cap[q] < np.inf:
        mq = msum[q] - meas[a, q] - meas[b, q] + ma + mb
        g += mean_scale * (max(msum[q] - mean_cap[q] - TOL, 0.0)
                           - max(mq - mean_cap[q] - TOL, 0.0))
    return g


@numba.njit(cache=True)
def _swap_terms(q, u, v_first, v_stop, a, b, out, at, size, cnt, meas, msum, bands, hard,
                mean_scale, parts):  # IN ..., OUT: out[at:at + v_stop - v_first]
    """:func:`_swap_term` of value ``u`` against each value ``v_first <= v < v_stop`` (0 at ``u``).

    Written to ``out[at + v - v_first]``. The swap table holds these terms
    for pairs of values of each tabled attribute: attribute ``q``'s block is
    ``table[cells[q]:cells[q] + n * n]`` (n its number of values; ``cells[q]``
    -1: no block), entry ``i * n + j`` for its ``i``-th value going ``a -> b``
    and its ``j``-th ``b -> a``. A swap of a first row of value ``u`` reads
    only row ``u``: the search fills the rows of its first rows' values, when
    first read (a pair of clusters' scan reads a few values of each attribute;
    at k=15 on Adult, filling every row was 33 of the 39 s of search). The
    untabled attributes' terms come one at a time (:func:`_untabled_gain`):
    the swap term is compiled here alone (about 2 s of a first bounded fit
    each copy).
    """
    for v in range(v_first, v_stop):
        out[at + v - v_first] = 0.0 if v == u else _swap_term(q, u, v, a, b, size, cnt, meas,
                                                              msum, bands, hard, mean_scale,
                                                              parts)


@numba.njit(cache=True)
def _bump_versions(size, cnt, seen_size, seen_cnt, version):  # IN, IN, IN/OUT ...
    """Count a change of every cluster whose size or counts differ from those last seen."""
    for c in range(size.shape[0]):
        same = size[c] == seen_size[c]
        for v in range(cnt.shape[1]):
            if cnt[c, v] != seen_cnt[c, v]:
                same = False
        if not same:
            version[c] += 1
            seen_size[c] = size[c]
            for v in range(cnt.shape[1]):
                seen_cnt[c, v] = cnt[c, v]


@numba.njit(cache=True)
def _stale_slot(a, b, version, built):  # IN ..., IN/OUT: built
    """Return the row of clusters ``a`` and ``b``'s kept swap table, and whether it is stale.

    Without caps on a mean over the clusters, a table (:func:`_swap_terms`)
    depends on its two clusters' sizes and counts alone: its rows are filled
    again only when ``a``'s or ``b``'s ``version`` (the search counts each
    cluster's changes, :func:`_bump_versions`) differs from the ones it was
    filled at (``built``, updated here).
    """
    slot = a * version.shape[0] + b
    if built[slot, 0] == version[a] and built[slot, 1] == version[b]:
        return slot, False
    built[slot, 0], built[slot, 1] = version[a], version[b]
    return slot, True


@numba.njit(cache=True)
def _stale_row(slot, u, stamp, row_stamp):  # IN ..., IN/OUT: row_stamp
    """Return whether row ``u`` of swap table ``slot`` must be filled, and mark it filled.

    A row holds what it should when ``row_stamp[slot, u]`` equals
    ``stamp[slot]``; a table found stale gets a new stamp, so every row of it
    is filled again when next read (:func:`_swap_terms`).
    """
    if row_stamp[slot, u] == stamp[slot]:
        return False
    row_stamp[slot, u] = stamp[slot]
    return True


@numba.njit(cache=True, inline="always")
def _swap_gain(codes1, r1, codes2, r2, offsets, cells, table):
    """Return the excess a swap of two rows removes at the tabled attributes (unit problems).

    The row of values ``codes1[r1]`` goes ``a -> b``, the one of values
    ``codes2[r2]`` ``b -> a``; ``table`` is :func:`_swap_terms`'s for ``a``
    and ``b``. Plain arrays only: the scan calls this for every pair of types
    it weighs, and each array unpacked from a tuple costs a reference count.
    """
    gain = 0.0
    for q in range(codes1.shape[1]):
        if cells[q] >= 0:
            n = offsets[q + 1] - offsets[q]
            gain += table[cells[q] + (codes1[r1, q] - offsets[q]) * n
                          + (codes2[r2, q] - offsets[q])]
    return gain


@numba.njit(cache=True)
def _untabled_gain(codes1, r1, codes2, r2, a, b, cells, size, cnt, meas, msum, bands, hard,
                   mean_scale, parts, term):
    """:func:`_swap_gain` at the attributes without a block (more than ``_TABLED`` values).

    ``term`` is scratch, of length 1.
    """
    gain = 0.0
    for q in range(codes1.shape[1]):
        u, v = codes1[r1, q], codes2[r2, q]
        if cells[q] < 0 and u != v:
            _swap_terms(q, u, v, v + 1, a, b, term, np.int64(0), size, cnt, meas, msum, bands,
                        hard, mean_scale, parts)
            gain += term[0]
    return gain


# Positions of a pair's second rows, 63 to a word of bits (an int64's, sign bit unused).
_BITS = 63


@numba.njit(cache=True)
def _swap_floor(ex_tol, excess_a, excess_b, overall, size_a, size_b):
    """Return a term below which a swap between ``a`` and ``b`` cannot qualify when polishing.

    A swap's gain is the sum of its attributes' terms (:func:`_swap_term`),
    each at most that attribute's excess now at ``a`` and ``b`` and over the
    clusters, which add up to ``excess_a + excess_b + overall``: one term
    below ``-(ex_tol + excess_a + excess_b + overall)`` leaves more than
    ``ex_tol`` of excess whatever the others. Twice that, less a margin for
    the sums' rounding.
    """
    return -2.0 * (ex_tol + excess_a + excess_b + overall) - 1e-9 * (size_a + size_b)


@numba.njit(cache=True)
def _value_bits(codes2, n2, cells, vbits):  # IN ..., OUT: vbits
    """For each value of each tabled attribute, the bits of the second rows holding it.

    ``vbits[v, w]`` bit ``r`` is set when the row at position ``w * _BITS + r``
    (of ``codes2[:n2]``) holds value ``v``; the words past ``n2``'s are left alone.
    """
    n_words = (n2 + _BITS - 1) // _BITS
    vbits[:, :n_words] = 0
    for p2 in range(n2):
        w, bit = p2 // _BITS, p2 % _BITS
        for q in range(codes2.shape[1]):
            if cells[q] >= 0:
                vbits[codes2[p2, q], w] |= np.int64(1) << bit


@numba.njit(cache=True)
def _cheap_prefix(cost2, n_cheap, c1, bound):
    """Return how many second rows pair with a first row of cost ``c1`` under ``bound``.

    ``cost2`` ascends, so the rows with ``c1 + cost2[p2] < bound`` (the swap
    scan's test) are a prefix, no longer than ``n_cheap``: the previous first
    row's, whose cost was no larger and bound no smaller (a scan's first rows
    ascend in cost and its bound only falls). Walked down from there: over a
    scan, as many steps as second rows.
    """
    while n_cheap > 0 and not c1 + cost2[n_cheap - 1] < bound:
        n_cheap -= 1
    return n_cheap


@numba.njit(cache=True)
def _swap_partners(tcodes, t1, n2, offsets, cells, table, floor_term, vbits,  # IN
                   held, held_words, acc, partners):  # IN/OUT, IN/OUT, OUT, OUT
    """Positions, in order, of the second rows whose swap with a row of ``t1`` may keep the bands.

    Of the first ``n2`` second rows, a position is left out when, at some
    tabled attribute, the swap's term (``table``, :func:`_swap_terms`) is
    below ``floor_term`` (see the caller for why such a swap cannot qualify).
    Returns how many positions were written to ``partners``.

    ``held[u]`` caches, for a first row of value ``u``, the bits of the second
    rows whose value keeps the term at least ``floor_term``, over its first
    ``held_words[u]`` words (0: not yet; -1: every value does, nothing to
    screen): the first rows of one scan share their values, so each value's
    bits are gathered once a scan instead of once a row. The caller sets
    ``held_words`` to 0 when ``table``, ``floor_term`` or ``vbits`` change.
    """
    if n2 == 0:
        return 0
    n_words = (n2 + _BITS - 1) // _BITS
    for w in range(n_words):
        acc[w] = (np.int64(1) << _BITS) - 1
    tail = n2 - (n_words - 1) * _BITS
    acc[n_words - 1] = (np.int64(1) << tail) - 1
    for q in range(cells.shape[0]):
        if cells[q] < 0:
            continue
        u = tcodes[t1, q]
        if 0 <= held_words[u] < n_words:
            n = offsets[q + 1] - offsets[q]
            row = cells[q] + (u - offsets[q]) * n
            held_words[u] = -1
            for j in range(n):
                if table[row + j] < floor_term:
                    held_words[u] = n_words
                    break
            if held_words[u] > 0:
                for w in range(n_words):
                    bits = np.int64(0)
                    for j in range(n):
                        if table[row + j] >= floor_term:
                            bits |= vbits[offsets[q] + j, w]
                    held[u, w] = bits
        if held_words[u] < 0:
            continue
        for w in range(n_words):
            acc[w] &= held[u, w]
    count = 0
    for w in range(n_words):
        word = acc[w]
        if word == 0:
            continue
        for bit in range(_BITS):
            if (word >> bit) & 1:
                partners[count] = w * _BITS + bit
                count += 1
    return count


@numba.njit(cache=True)
def _unit_refresh(tcodes, size, cnt, offsets, bands, hard, refresh,  # IN
                  parts, rm, add, rm_meas, add_meas):  # OUT
    """Count the excess by attribute, and every cluster's with a row less or more (unit).

    Fills ``parts`` (:func:`_unit_parts`; the last, ``here`` (k, A), each
    cluster's excess from each attribute), and each cluster's excess and
    distances without and with one more row of each type (``rm``, ``add``
    (n_types, k); ``rm_meas``, ``add_meas`` (n_types, k, A)), summed over the
    attributes from per-value tables. Only for the clusters ``refresh`` marks
    (each cluster's entries depend on its own size and counts alone).
    """
    lower, upper, prop = bands[0], bands[1], bands[2]
    pen, dev, top, bottom, here = parts
    _unit_parts(size, cnt, lower, upper, prop, offsets, refresh, pen, dev, top, bottom)
    k, n_attr = here.shape
    n_values = cnt.shape[1]
    # per cluster and value: the excess of the value's attribute, and its distance, with one
    # row of the value less (size - 1) or more (size + 1)
    out_e, out_m = np.empty((k, n_values)), np.empty((k, n_values))
    in_e, in_m = np.empty((k, n_values)), np.empty((k, n_values))
    for c in range(k):
        if not refresh[c]:
            continue
        for q in range(n_attr):
            here[c, q] = _after(c, q, -1, -1, 1, size, cnt, bands, hard, parts)[0]
            for v in range(offsets[q], offsets[q + 1]):
                out_e[c, v], out_m[c, v] = _after(c, q, v, -1, 0, size, cnt, bands, hard, parts)
                in_e[c, v], in_m[c, v] = _after(c, q, -1, v, 2, size, cnt, bands, hard, parts)
    for t in range(tcodes.shape[0]):
        for c in range(k):
            if not refresh[c]:
                continue
            out, into = 0.0, 0.0
            for q in range(n_attr):
                v = tcodes[t, q]
                out += out_e[c, v]
                into += in_e[c, v]
                rm_meas[t, c, q] = out_m[c, v]
                add_meas[t, c, q] = in_m[c, v]
            rm[t, c] = out
            add[t, c] = into

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
def _paths(t, heads, dist, weights, D, nxt, chains, eps):
    """Cheapest way to move one row of type ``t`` between each pair of clusters.

    Direct moves of the heads, or (``chains``) shortest paths over them
    (Floyd-Warshall); a path is taken only where it is cheaper by more than
    ``eps``, so that cycles of cost 0 (identical rows swapped) cannot make
    the paths circular. Return a cluster on a cycle cheaper than ``-eps``, or
    -1.
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
                if through < D[t, a, b] - eps:
                    D[t, a, b] = through
                    nxt[t, a, b] = nxt[t, a, c]
            if D[t, a, a] < -eps:
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
def _column_sums(a, out):  # IN: a (n, J), OUT: out (J,)
    """``out = a.sum(axis=0)``: the same additions in the same order.

    Numba's reductions along an axis take about a second to compile.
    """
    out[:] = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += a[i, j]


@numba.njit(cache=True)
def _cheapest_first(costs):
    """Return the indices of the finite ``costs``, cheapest first (ties: lowest index first).

    A stable merge sort of the finite entries alone: a quicksort of the whole
    column (mostly ``inf`` with many types: a type holds rows in few clusters)
    slows down on the ties, to seconds a step at 10,000 types.
    """
    finite = np.empty(costs.shape[0], dtype=np.int64)
    n = 0
    for t in range(costs.shape[0]):
        if costs[t] < np.inf:
            finite[n] = t
            n += 1
    finite = finite[:n]
    return finite[np.argsort(costs[finite], kind="mergesort")]


@numba.njit(cache=True, inline="always")
def _before(costs, x, y):
    """Whether ``x`` precedes ``y`` in :func:`_cheapest_first`'s order (cheaper, or lower)."""
    return costs[x] < costs[y] or (costs[x] == costs[y] and x < y)


@numba.njit(cache=True)
def _reorder(costs, order, n, changed, stale, n_changed, out):
    """Bring ``order[:n]`` (:func:`_cheapest_first` of ``costs`` before some changed) up to date.

    ``changed[:n_changed]`` are those indices, ascending, and ``stale`` marks
    them. The others keep their costs, so they keep their order: the changed
    ones with a finite cost are sorted (stably by cost) and merged in.
    Writes the order to ``order`` and returns its length: :func:`_cheapest_first`'s,
    without sorting every index again. ``out`` is scratch, of ``costs``' length.
    """
    new = np.empty(n_changed, dtype=np.int64)
    m = 0
    for q in range(n_changed):
        if costs[changed[q]] < np.inf:
            new[m] = changed[q]
            m += 1
    new = new[:m]
    new = new[np.argsort(costs[new], kind="mergesort")]
    i = j = r = 0
    while i < n or j < m:
        if i < n and stale[order[i]]:
            i += 1
            continue
        if j >= m or (i < n and _before(costs, order[i], new[j])):
            out[r] = order[i]
            i += 1
        else:
            out[r] = new[j]
            j += 1
        r += 1
    for q in range(r):
        order[q] = out[q]
    return r


@numba.njit(cache=True)
def _evaluate(clusters, n_aff, E, meas, msum, overall, size, cnt, zsum, lower, upper, prop,
              offsets, tv_cap, balance, z_cap, hard, mean_cap, mean_scale, scratch, excess):
    """Excess removed by the change already applied to the state at ``clusters[:n_aff]``.

    Returns (gain, excess left at those clusters plus the overall excess).
    ``scratch`` (4, J) and ``excess`` (4,) receive the clusters' distances and excess.
    """
    for q in range(n_aff):
        excess[q] = cluster_excess(clusters[q], size, cnt, zsum, lower, upper, prop, offsets,
                                   tv_cap, balance, z_cap, hard, scratch[q])
    return _summed(clusters, n_aff, E, meas, msum, overall, mean_cap, mean_scale, excess, scratch)


@numba.njit(cache=True)
def _summed(clusters, n_aff, E, meas, msum, overall, mean_cap, mean_scale, excess, measures):
    """Return :func:`_evaluate`'s gain and excess left from the clusters' new excess."""
    old, new = overall, 0.0
    J = msum.shape[0]
    for q in range(n_aff):
        old += E[clusters[q]]
        new += excess[q]
    total = 0.0
    for j in range(J):
        if mean_cap[j] < np.inf:
            m = msum[j]
            for q in range(n_aff):
                m += measures[q, j] - meas[clusters[q], j]
            total += max(m - mean_cap[j] - TOL, 0.0)
    new_overall = mean_scale * total
    left = new + new_overall
    return old - left, left


@numba.njit(cache=True)
def _score(repair, gain, left, dcost, ex_tol):
    """Return a step's score, lower is better; inf when it does not qualify.

    Repairing: the cost per unit of excess it removes (it must remove some).
    Polishing: its cost change (it must leave no excess).
    """
    if repair:
        return dcost / gain if gain > ex_tol else np.inf
    return dcost if left <= ex_tol else np.inf


@numba.njit(cache=True)
def _gain_cap(excess, size):
    """Return a bound on the excess a step can remove when ``excess`` is all it can reach.

    A step's gain is the excess it reaches (its clusters' and the overall)
    less what it leaves there, which is never negative: at most ``excess``,
    up to the rounding of sums that :func:`_evaluate` and the swap tables
    add in other orders. The margin, a billionth of it and of ``size`` (the
    weight of the clusters involved), is far above that rounding.
    """
    return excess * (1.0 + 1e-9) + 1e-9 * size


@numba.njit(cache=True)
def _scores_no_less(dcost, gain_cap, best):
    """Whether, repairing, every step of cost ``dcost`` or more scores ``best`` or worse.

    A repair step's score is its cost per unit of excess removed
    (:func:`_score`); with a gain of at most ``gain_cap`` (:func:`_gain_cap`)
    a step of cost ``dcost >= 0`` scores at least ``dcost / gain_cap``. The
    scans weigh costs in ascending order, so they stop there: a step replaces
    the best only when it scores strictly less.
    """
    return dcost >= 0.0 and dcost >= best * gain_cap


@numba.njit(cache=True)
def _affected(a, b, x, y, clusters):
    """Write the distinct clusters among a, b, x, y (-1: none) to ``clusters``; count them."""
    n = 0
    for c in (a, b, x, y):
        if c < 0:
            continue
        seen = False
        for q in range(n):
            if clusters[q] == c:
                seen = True
        if not seen:
            clusters[n] = c
            n += 1
    return n


@numba.njit(cache=True)
def search(dist, weights, types, n_types, codes, z, lower, upper, prop, offsets, tv_cap, balance,
           z_cap, mean_cap, w_min, unit, labels, polish, max_steps, hard):
    """Repair ``labels`` until no excess is left, then (``polish``) lower their cost.

    IN: dist (m, k) cost of each row per cluster (per unit of weight);
    weights (m,); types (m,) in [0, n_types); codes (m, A) global value index
    of each categorical attribute; z (m, B) numeric values; lower, upper (k, V)
    share bands; prop (V,) the dataset's shares; offsets (A + 1,) first value
    of each attribute; tv_cap (k, A) and z_cap (k, B) caps per cluster,
    balance (k, A) balance targets per cluster (0: none), and
    mean_cap (A + B,) caps on the sum over the clusters of the same distances
    (inf: none); w_min the least weight a cluster keeps; unit whether every
    weight is 1 and B = 0; max_steps; hard the weight of the share bands'
    excess against the caps'. OUT: labels (m,) changed in place.

    Returns (the excess left, in weight; the number of steps taken).
    """
    m, k = dist.shape
    n_values = lower.shape[1]
    J = mean_cap.shape[0]
    size, cnt, zsum = _state(labels, weights, codes, z, k, n_values)
    total_weight = 0.0
    for i in range(m):
        total_weight += weights[i]
    mean_scale = total_weight / k
    # Constants handed to other kernels are typed, not literal: numba compiles a callee once per
    # literal value beside its calls with run-time values (tests/test_cold_start.py).
    no_cluster, two, direct_only = np.int64(-1), np.int64(2), np.bool_(False)
    E = np.empty(k)
    meas = np.zeros((k, J))
    for c in range(k):
        E[c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap, balance,
                              z_cap, hard, meas[c])
    msum = np.empty(J)
    _column_sums(meas, msum)
    overall = overall_excess(msum, mean_cap, mean_scale)
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
    n_attr = codes.shape[1]
    tcodes = np.zeros((n_types, n_attr), dtype=np.int64)  # each type's values
    for t in range(n_types):
        if first[t] < first[t + 1]:
            for q in range(n_attr):
                tcodes[t, q] = codes[members[first[t]], q]
    rows = np.empty((n_types, k, k, _LIST), dtype=np.int64)
    cost = np.empty((n_types, k, k, _LIST))
    count = np.zeros((n_types, k, k), dtype=np.int64)
    for t in range(n_types):
        _fill(t, no_cluster, first, members, labels, dist, weights, rows, cost, count)
    # Indexed [type, from, to] but stored type-last: each step's scans run over the types of
    # one pair of clusters, and read them in sequence. (``.T``, not ``transpose(2, 0, 1)``:
    # numba compiles the axes' permutation with string formatting, seconds of a first fit.)
    heads = np.full((k, k, n_types), -1, dtype=np.int64).T
    D = np.empty((k, k, n_types)).T
    nxt = np.empty((n_types, k, k), dtype=np.int64)
    dirty = np.ones(n_types, dtype=np.bool_)
    # The swap scan's orders of the types by cost, per (from, to), kept across steps: a step
    # changes the costs of the few types whose rows moved (``changed``, marked ``stale``),
    # and re-sorting every order each step was a third of the search at many types.
    orders = np.empty((k, k, n_types), dtype=np.int64)
    n_order = np.zeros((k, k), dtype=np.int64)
    ordered = False
    stale = np.zeros(n_types, dtype=np.bool_)
    changed = np.empty(n_types, dtype=np.int64)
    n_changed = np.int64(0)  # typed, not literal: see the constants above
    scratch_order = np.empty(n_types, dtype=np.int64)
    # Gains below these are rounding: the search stops rather than cycle on them.
    scale = 0.0
    for i in range(m):
        scale += weights[i] * dist[i, labels[i]]
    eps = 1e-12 * max(scale, 1e-300)
    ex_tol = 1e-9 * w_min
    floor = w_min * (1.0 - 1e-12)
    # unit problems: a cluster's excess and distances without / with one row of each type
    rm = np.empty((k, n_types)).T
    add = np.empty((k, n_types)).T
    rm_meas = np.zeros((J, k, n_types)).T
    add_meas = np.zeros((J, k, n_types)).T
    # unit problems: the parts of the excess by attribute, and a table of the swaps' terms
    # for the attributes of at most _TABLED values
    bands = (lower, upper, prop, tv_cap, balance, mean_cap)
    parts = (np.empty((k, n_attr, 3)), np.empty((k, n_attr, 3)),
             np.empty((k, n_attr, 3), dtype=np.int64), np.empty((k, n_attr, 3), dtype=np.int64),
             np.empty((k, n_attr)))
    cells = np.full(n_attr, -1, dtype=np.int64)
    n_cells = 0
    for q in range(n_attr):
        n = offsets[q + 1] - offsets[q]
        if n <= _TABLED:
            cells[q] = n_cells
            n_cells += n * n
    # Polishing a unit problem without caps on a mean over the clusters: each pair's swap table
    # is kept across steps and built again when one of its clusters changed (_stale_slot).
    no_mean_cap = True
    for j in range(J):
        no_mean_cap = no_mean_cap and mean_cap[j] == np.inf
    keep_tables = unit and no_mean_cap and k * k * n_cells <= _KEPT_TABLES
    tables = np.empty((k * k if keep_tables else 1, n_cells))
    # A table's rows are filled when first read (_swap_terms, _stale_row).
    stamp = np.zeros(tables.shape[0], dtype=np.int64)
    row_stamp = np.full((tables.shape[0], n_values), -1, dtype=np.int64)
    built = np.full((k * k, 2), -1, dtype=np.int64)
    version = np.zeros(k, dtype=np.int64)
    seen_size, seen_cnt = size.copy(), cnt.copy()
    table = tables[0]
    untabled = False
    for q in range(n_attr):
        untabled = untabled or cells[q] < 0
    term = np.empty(1)  # _untabled_gain's scratch
    # polishing a unit problem: the swap scan's partners, screened by value (_swap_partners)
    vbits = np.zeros((n_values, (n_types + _BITS - 1) // _BITS), dtype=np.int64)
    held = np.zeros_like(vbits)
    held_words = np.zeros(n_values, dtype=np.int64)
    acc = np.empty((n_types + _BITS - 1) // _BITS, dtype=np.int64)
    partners = np.empty(n_types, dtype=np.int64)
    scratch = np.zeros((4, J))
    aff = np.empty(4, dtype=np.int64)
    # the entries of the state a weighed step changes, put back after (_keep)
    kept_i = np.empty(2 + 2 * (n_attr + z.shape[1]))
    kept_j = np.empty_like(kept_i)
    excess = np.empty(4)
    # unit problems: the size and counts _unit_refresh last counted each cluster at (NaN: never)
    counted_size, counted_cnt = np.full(k, np.nan), np.full((k, n_values), np.nan)
    refresh = np.ones(k, dtype=np.bool_)
    # Unit problems: every row of a type alike, a pair's clusters' excess depends only on the
    # types that reach each, so it is counted once, when first needed, and kept: the first
    # move's other cluster once per first move (first_*), the cluster both moves touch once
    # per first move, type and way (both_*, by first_id), the second move's other cluster
    # once per step, type and way (second_*, by step): the same values, summed as _evaluate
    # sums them.
    cache_pairs = _PAIR_CACHE and unit and 2 * k * n_types * (J + 1) <= _KEPT_TABLES
    n_kept = n_types if cache_pairs else 0
    first_ex, first_meas = np.empty(2), np.zeros((2, J))
    first_at = np.full(2, -1, dtype=np.int64)
    both_ex, both_meas = np.empty((2, 2, n_kept)), np.zeros((2, 2, n_kept, J))
    both_at = np.full((2, 2, n_kept), -1, dtype=np.int64)
    second_ex, second_meas = np.empty((2, k, n_kept)), np.zeros((2, k, n_kept, J))
    second_at = np.full((2, k, n_kept), -1, dtype=np.int64)
    first_id = 0
    pair_t = np.empty(_PAIRS, dtype=np.int64)
    pair_a = np.empty(_PAIRS, dtype=np.int64)
    pair_b = np.empty(_PAIRS, dtype=np.int64)
    pair_v = np.empty(_PAIRS)
    steps = 0
    while steps < max_steps:
        steps += 1
        # heads and paths of the types whose rows moved; negative cycles cancelled
        for t in range(n_types):
            while dirty[t]:
                if not stale[t]:
                    stale[t] = True
                    changed[n_changed] = t
                    n_changed += 1
                for a in range(k):
                    for b in range(k):
                        if a != b:
                            heads[t, a, b] = _head(t, a, b, first, members, labels, dist,
                                                   weights, rows, cost, count)
                c0 = _paths(t, heads, dist, weights, D, nxt, unit, eps)
                dirty[t] = False
                if c0 < 0:
                    break
                n_seq = 0
                if polish:
                    seq, n_seq = _cycle(t, c0, heads, nxt, dist, weights, k, eps)
                if n_seq == 0:
                    # paths through a negative cycle are not paths: direct moves only
                    _paths(t, heads, dist, weights, D, nxt, direct_only, eps)
                    break
                for q in range(n_seq):
                    a, b = seq[q], seq[(q + 1) % n_seq]
                    _relabel(heads[t, a, b], a, b, labels, weights, codes, z, dist, types,
                             size, cnt, zsum, rows, cost, count)
                dirty[t] = True
        repair = E.sum() + overall > ex_tol
        if not repair and not polish:
            break
        if unit:
            # Only the clusters whose size or counts changed since the last count (the
            # step's moves, a cancelled cycle): the others' entries are as they were.
            for c in range(k):
                stale_c = counted_size[c] != size[c]
                for v in range(n_values):
                    stale_c = stale_c or counted_cnt[c, v] != cnt[c, v]
                refresh[c] = stale_c or not _COUNT_CHANGED
                if refresh[c]:
                    counted_size[c] = size[c]
                    for v in range(n_values):
                        counted_cnt[c, v] = cnt[c, v]
            _unit_refresh(tcodes, size, cnt, offsets, bands, hard, refresh, parts, rm, add,
                          rm_meas, add_meas)
        best, kind = np.inf, 0
        bt = ba = bb = bt2 = bx = by = no_cluster
        n_pairs = 0
        # single moves: one row of type t from a to b (along its path)
        for a in range(k):
            for b in range(k):
                if a == b or (repair and overall <= ex_tol and E[a] <= ex_tol
                              and E[b] <= ex_tol):
                    continue
                for t in range(n_types):
                    dcost = D[t, a, b]
                    if dcost == np.inf:
                        continue
                    i = heads[t, a, b]
                    if size[a] - weights[i] < floor:
                        continue
                    if not repair and dcost >= -eps:
                        continue
                    if unit:
                        left = rm[t, a] + add[t, b]
                        tot = 0.0
                        for j in range(J):
                            if mean_cap[j] < np.inf:
                                mj = (msum[j] - meas[a, j] - meas[b, j] + rm_meas[t, a, j]
                                      + add_meas[t, b, j])
                                tot += max(mj - mean_cap[j] - TOL, 0.0)
                        left += mean_scale * tot
                        gain = E[a] + E[b] + overall - left
                    else:
                        _keep(i, a, b, codes, z, size, cnt, zsum, kept_i)
                        _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                        aff[0], aff[1] = a, b
                        gain, left = _evaluate(aff, two, E, meas, msum, overall, size, cnt, zsum,
                                               lower, upper, prop, offsets, tv_cap, balance, z_cap,
                                               hard, mean_cap, mean_scale, scratch, excess)
                        _put_back(i, a, b, codes, z, size, cnt, zsum, kept_i)
                    score = _score(repair, gain, left, dcost, ex_tol)
                    if score < best:
                        best, kind, bt, ba, bb = score, 1, t, a, b
                    # first moves of pairs: when polishing, improving moves that break a
                    # band; when repairing, the moves that remove the most excess
                    value = dcost if not repair else -gain
                    if repair or left > ex_tol:
                        if n_pairs < _PAIRS or value < pair_v[n_pairs - 1]:
                            j = n_pairs if n_pairs < _PAIRS else _PAIRS - 1
                            while j > 0 and pair_v[j - 1] > value:
                                pair_t[j], pair_a[j] = pair_t[j - 1], pair_a[j - 1]
                                pair_b[j], pair_v[j] = pair_b[j - 1], pair_v[j - 1]
                                j -= 1
                            pair_t[j], pair_a[j], pair_b[j], pair_v[j] = t, a, b, value
                            n_pairs = min(n_pairs + 1, _PAIRS)
        # swaps: a row of t1 a -> b and one of t2 b -> a; when repairing, only if no single
        # move helps; when polishing, the cheapest combinations first, while they gain
        if not repair or kind == 0:
            if keep_tables:
                _bump_versions(size, cnt, seen_size, seen_cnt, version)
            # many changed (the first scan: all): sorting afresh is the cheaper
            afresh = not ordered or 8 * n_changed > n_types
            if not afresh:
                # Ascending, for _reorder: sorted as floats (exact below 2**53) by the one sort
                # numba compiles here (np.sort of the integers compiles another, a second), and
                # copied back by a loop (a slice assignment compiles its error message, another).
                ascending = changed[np.argsort(changed[:n_changed].astype(np.float64),
                                               kind="mergesort")]
                for q in range(n_changed):
                    changed[q] = ascending[q]
            for a in range(k):
                for b in range(k):
                    if a == b:
                        continue
                    if afresh:
                        fresh = _cheapest_first(D[:, a, b])
                        n_order[a, b] = fresh.shape[0]
                        for p in range(fresh.shape[0]):
                            orders[a, b, p] = fresh[p]
                    else:
                        n_order[a, b] = _reorder(D[:, a, b], orders[a, b], n_order[a, b],
                                                 changed, stale, n_changed, scratch_order)
            ordered = True
            for q in range(n_changed):
                stale[changed[q]] = False
            n_changed = np.int64(0)
            for a in range(k):
                for b in range(a + 1, k):
                    if repair and overall <= ex_tol and E[a] <= ex_tol and E[b] <= ex_tol:
                        continue
                    order1 = orders[a, b, :n_order[a, b]]
                    order2 = orders[b, a, :n_order[b, a]]
                    n2 = order2.shape[0]
                    if n2 == 0:
                        continue
                    # the second rows' costs and values in scan order: read in sequence
                    cost2 = np.empty(n2)
                    codes2 = np.empty((n2, n_attr), dtype=np.int64)
                    for p2 in range(n2):
                        cost2[p2] = D[order2[p2], b, a]
                        for q in range(n_attr):
                            codes2[p2, q] = tcodes[order2[p2], q]
                    # Polishing a unit problem, only the second rows whose values keep every
                    # tabled term at least _swap_floor are weighed: at many types most pairs
                    # break a band, and weighing them all was nearly all of a step.
                    screened = unit and not repair
                    if screened and (size[a] < floor or size[b] < floor):
                        continue  # no swap between a and b qualifies
                    # unit problems: the swaps' terms from the table of a and b, kept across
                    # steps when polishing, else afresh (slot 0: no pair's, a != b)
                    tabled = unit and size[a] >= floor and size[b] >= floor
                    slot = np.int64(0)
                    if tabled:
                        stale_table = True
                        if screened and keep_tables:
                            slot, stale_table = _stale_slot(a, b, version, built)
                        if stale_table:
                            stamp[slot] += 1
                        table = tables[slot]
                    if screened:
                        _value_bits(codes2, n2, cells, vbits)
                        floor_term = _swap_floor(ex_tol, E[a], E[b], overall, size[a],
                                                 size[b])
                        held_words[:] = 0
                    n_cheap = n2
                    # Repairing, a swap between a and b removes at most their excess and the
                    # overall: the scan stops at the cost no such swap can make the best.
                    cap_ab = _gain_cap(E[a] + E[b] + overall, size[a] + size[b])
                    for p1 in range(order1.shape[0]):
                        t1 = order1[p1]
                        c1 = D[t1, a, b]
                        if not repair and c1 + cost2[0] >= min(best, -eps):
                            break
                        if repair and _scores_no_less(c1 + cost2[0], cap_ab, best):
                            break
                        i = heads[t1, a, b]
                        if tabled:
                            for q in range(n_attr):
                                u = tcodes[t1, q]
                                if cells[q] >= 0 and _stale_row(slot, u, stamp, row_stamp):
                                    n = offsets[q + 1] - offsets[q]
                                    _swap_terms(q, u, offsets[q], offsets[q + 1], a, b, table,
                                                cells[q] + (u - offsets[q]) * n, size, cnt,
                                                meas, msum, bands, hard, mean_scale, parts)
                        n_scan = n2
                        if screened:
                            # The scan stops at the first partner too costly to pair with t1:
                            # only the rows before it are screened (a prefix: cost2 ascends).
                            n_cheap = _cheap_prefix(cost2, n_cheap, c1, min(best, -eps))
                            n_scan = _swap_partners(tcodes, t1, n_cheap, offsets, cells, table,
                                                    floor_term, vbits, held, held_words, acc,
                                                    partners)
                        for p_scan in range(n_scan):
                            p2 = partners[p_scan] if screened else p_scan
                            c2 = cost2[p2]
                            if not repair and c1 + c2 >= min(best, -eps):
                                break
                            if repair and _scores_no_less(c1 + c2, cap_ab, best):
                                break
                            t2 = order2[p2]
                            if t2 == t1:
                                continue
                            gain, left = -np.inf, np.inf
                            if unit:
                                # the sizes stay: the counts change at two values an attribute
                                if tabled:
                                    gain = _swap_gain(tcodes, t1, codes2, p2, offsets, cells,
                                                      table)
                                    if untabled:
                                        gain += _untabled_gain(tcodes, t1, codes2, p2, a, b,
                                                               cells, size, cnt, meas, msum,
                                                               bands, hard, mean_scale, parts,
                                                               term)
                                    left = E[a] + E[b] + overall - gain
                            else:
                                j = heads[t2, b, a]
                                _keep(i, a, b, codes, z, size, cnt, zsum, kept_i)
                                _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                                _keep(j, b, a, codes, z, size, cnt, zsum, kept_j)
                                _shift(j, b, a, weights, codes, z, size, cnt, zsum)
                                if size[a] >= floor and size[b] >= floor:
                                    aff[0], aff[1] = a, b
                                    gain, left = _evaluate(aff, two, E, meas, msum, overall, size,
                                                           cnt, zsum, lower, upper, prop, offsets,
                                                           tv_cap, balance, z_cap, hard,
                                                           mean_cap, mean_scale, scratch,
                                                           excess)
                                _put_back(j, b, a, codes, z, size, cnt, zsum, kept_j)
                                _put_back(i, a, b, codes, z, size, cnt, zsum, kept_i)
                            score = _score(repair, gain, left, c1 + c2, ex_tol)
                            if score < best:
                                best, kind = score, 2
                                bt, ba, bb, bt2, bx, by = t1, a, b, t2, b, a
        # pairs of moves sharing a cluster, when nothing simpler helps
        if kind == 0:
            cap_all = _gain_cap(E.sum() + overall, size.sum())
            for q in range(n_pairs):
                t1, a, b = pair_t[q], pair_a[q], pair_b[q]
                c1 = D[t1, a, b]
                i = heads[t1, a, b]
                _keep(i, a, b, codes, z, size, cnt, zsum, kept_i)
                _shift(i, a, b, weights, codes, z, size, cnt, zsum)
                first_id += 1
                # Polishing, a cluster the first move leaves in excess keeps that excess
                # unless the second move touches it: the pair's excess left is a sum of
                # non-negative excesses, that cluster's among them, and must be <= ex_tol.
                # (The excess of a and b after the first move alone is also the pairs' kept
                # first_ex: counted here once when polishing, else when a pair first needs it.)
                keep_a = keep_b = False
                if not repair:
                    for side in range(2):
                        first_ex[side] = cluster_excess(
                            a if side == 0 else b, size, cnt, zsum, lower, upper, prop, offsets,
                            tv_cap, balance, z_cap, hard, first_meas[side])
                        first_at[side] = first_id
                    keep_a, keep_b = first_ex[0] > ex_tol, first_ex[1] > ex_tol
                for x in range(k):
                    for y in range(k):
                        if x == y or not (x == a or x == b or y == a or y == b):
                            continue
                        if x == b and y == a:
                            continue  # a swap, tried above
                        if (keep_a and a != x and a != y) or (keep_b and b != x and b != y):
                            continue
                        for t2 in range(n_types):
                            c2 = D[t2, x, y]
                            if t2 == t1 or c2 == np.inf:
                                continue
                            if not repair and c1 + c2 >= min(best, -eps):
                                continue
                            if repair and _scores_no_less(c1 + c2, cap_all, best):
                                continue
                            j = heads[t2, x, y]
                            if size[x] - weights[j] < floor:
                                continue
                            n_aff = _affected(a, b, x, y, aff)
                            if cache_pairs and not (x == a and y == b):
                                # the cluster both moves touch (d, the row leaving it when
                                # x == d), the other first-move one and the second's other (c)
                                if x == a or x == b:
                                    d, d_way, c, c_way = x, 0, y, 1
                                else:
                                    d, d_way, c, c_way = y, 1, x, 0
                                role = 0 if d == a else 1
                                if first_at[1 - role] != first_id:  # after the first move only
                                    first_ex[1 - role] = cluster_excess(
                                        b if role == 0 else a, size, cnt, zsum, lower, upper,
                                        prop, offsets, tv_cap, balance, z_cap, hard,
                                        first_meas[1 - role])
                                    first_at[1 - role] = first_id
                                fresh_d = both_at[role, d_way, t2] != first_id
                                fresh_c = second_at[c_way, c, t2] != steps
                                if fresh_d or fresh_c:
                                    _keep(j, x, y, codes, z, size, cnt, zsum, kept_j)
                                    _shift(j, x, y, weights, codes, z, size, cnt, zsum)
                                    if fresh_d:
                                        both_ex[role, d_way, t2] = cluster_excess(
                                            d, size, cnt, zsum, lower, upper, prop, offsets,
                                            tv_cap, balance, z_cap, hard,
                                            both_meas[role, d_way, t2])
                                        both_at[role, d_way, t2] = first_id
                                    if fresh_c:
                                        second_ex[c_way, c, t2] = cluster_excess(
                                            c, size, cnt, zsum, lower, upper, prop, offsets,
                                            tv_cap, balance, z_cap, hard,
                                            second_meas[c_way, c, t2])
                                        second_at[c_way, c, t2] = steps
                                    _put_back(j, x, y, codes, z, size, cnt, zsum, kept_j)
                                for qq in range(n_aff):
                                    cl = aff[qq]
                                    if cl == d:
                                        excess[qq] = both_ex[role, d_way, t2]
                                        kept_meas = both_meas[role, d_way, t2]
                                    elif cl == c:
                                        excess[qq] = second_ex[c_way, c, t2]
                                        kept_meas = second_meas[c_way, c, t2]
                                    else:
                                        excess[qq] = first_ex[1 - role]
                                        kept_meas = first_meas[1 - role]
                                    for jj in range(J):
                                        scratch[qq, jj] = kept_meas[jj]
                                gain, left = _summed(aff, n_aff, E, meas, msum, overall,
                                                     mean_cap, mean_scale, excess, scratch)
                            else:
                                _keep(j, x, y, codes, z, size, cnt, zsum, kept_j)
                                _shift(j, x, y, weights, codes, z, size, cnt, zsum)
                                gain, left = _evaluate(aff, n_aff, E, meas, msum, overall, size,
                                                       cnt, zsum, lower, upper, prop, offsets,
                                                       tv_cap, balance, z_cap, hard, mean_cap,
                                                       mean_scale, scratch, excess)
                                _put_back(j, x, y, codes, z, size, cnt, zsum, kept_j)
                            score = _score(repair, gain, left, c1 + c2, ex_tol)
                            if score < best:
                                best, kind = score, 3
                                bt, ba, bb, bt2, bx, by = t1, a, b, t2, x, y
                _put_back(i, a, b, codes, z, size, cnt, zsum, kept_i)
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
            E[c] = cluster_excess(c, size, cnt, zsum, lower, upper, prop, offsets, tv_cap, balance,
                                  z_cap, hard, meas[c])
        _column_sums(meas, msum)
        overall = overall_excess(msum, mean_cap, mean_scale)
    return E.sum() + overall, steps


guard_kernel_caches(globals())
