"""Pricing a block of points at once, in layouts the compiler vectorises.

A point's prices need its squared distance to every centre and the linear
part ``lin`` of its fairness change per cluster (:func:`fairkm._kernels._pricing.point_terms`).
One point at a time, both are loops over the ``k`` clusters, too short to
vectorise (at ``k = 10`` they run scalar, with a loop's overhead per cluster).
Here:

* distances are computed for a block of points, two centres at a time, from
  the block's coordinates transposed (features by points), so the inner loop
  runs over the block's points (:func:`gather_block`, then :func:`all_distances`);
* ``lin`` is read from a table of each value's share of it per cluster
  (:func:`lin_table`, :func:`table_lin`): one entry added per attribute and
  cluster instead of four operations.

Both add the same terms in the same order as the point-at-a-time formulas, so
every price is bit-identical to theirs (``tests/test_blocks.py``). A kernel
that moves a point while a block is open refreshes the two clusters the move
changed: their table columns (:func:`set_lin_columns`) and their rows of the
block's distances for the points not yet visited (:func:`patch_distances`).

Only :func:`table_lin`, run for every point, is inlined into its callers; the
rest run once per block or per move, and inlining them made the sweep take
twice as long to compile for no speed. Only the sweep prices by blocks: the
mini-batch proposals and ``predict``'s kernels price one row at a time, as
blocks made them no faster (a mini-batch fit at the paper's weight on
1,000,000 rows took 5.8 s by blocks against 5.6 s; ``predict`` 72-81 ms either
way), and the nearest-centre kernel compiled 1.3 s longer by blocks.
"""

import numpy as np

from .._kernel_cache import cached_njit
from ._pricing import lin_term, numeric_lin

# Points per block: a move recomputes two rows of the block's distances for the
# rest of the block, so smaller blocks make moves cheaper and larger ones the
# loops; on 1,000,000 x 10 at k=10, 24-32 points beat 16 and 64-128 (a first
# sweep 65-69 ns per point against 70-90).
BLOCK = 32


@cached_njit(nogil=True)
def gather_block(X, rows, start, m, xt):  # IN, IN, IN, IN, OUT
    """Copy rows ``rows[start:start + m]`` of ``X`` into the columns of ``xt``."""
    for r in range(m):
        i = rows[start + r]
        for j in range(X.shape[1]):
            xt[j, r] = X[i, j]


@cached_njit(nogil=True)
def block_distances(xt, lo, m, centers, c, out):  # IN, IN, IN, IN, IN, OUT
    """``out[c, r]`` = squared distance of the block's point ``r`` to centre ``c``, ``lo <= r < m``.

    The features are added in order, as :func:`fairkm._kernels._pricing.point_terms` adds them.
    """
    for r in range(lo, m):
        out[c, r] = 0.0
    for j in range(xt.shape[0]):
        center = centers[j, c]
        for r in range(lo, m):
            diff = xt[j, r] - center
            out[c, r] += diff * diff


@cached_njit(nogil=True)
def set_lin_column(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, c,  # IN
                   table):  # OUT
    """Refresh cluster ``c``'s column of :func:`lin_table` from its statistics."""
    size = counts[c]
    for t in range(offsets.shape[0] - 1):
        w = cat_coef[t]
        g = cat_dev[t, c]
        for v in range(offsets[t], offsets[t + 1]):
            table[v, c] = lin_term(w, value_counts[v, c], size, value_prop[v], g)


@cached_njit(nogil=True)
def set_lin_columns(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, a, b,  # IN
                    table):  # OUT
    """:func:`set_lin_column` of clusters ``a`` and ``b`` (a move's two), in one pass."""
    size_a, size_b = counts[a], counts[b]
    for t in range(offsets.shape[0] - 1):
        w = cat_coef[t]
        g_a, g_b = cat_dev[t, a], cat_dev[t, b]
        for v in range(offsets[t], offsets[t + 1]):
            table[v, a] = lin_term(w, value_counts[v, a], size_a, value_prop[v], g_a)
            table[v, b] = lin_term(w, value_counts[v, b], size_b, value_prop[v], g_b)


@cached_njit(nogil=True)
def patch_distances(xt, lo, m, centers, a, b, out):  # IN, IN, IN, IN, IN, IN, IN/OUT
    """:func:`block_distances` to centres ``a`` and ``b`` (a move's two), in one pass."""
    for r in range(lo, m):
        out[a, r] = 0.0
        out[b, r] = 0.0
    for j in range(xt.shape[0]):
        center_a, center_b = centers[j, a], centers[j, b]
        for r in range(lo, m):
            diff_a = xt[j, r] - center_a
            diff_b = xt[j, r] - center_b
            out[a, r] += diff_a * diff_a
            out[b, r] += diff_b * diff_b


@cached_njit(nogil=True)
def all_distances(xt, m, centers, out):  # IN, IN, IN, OUT
    """:func:`block_distances` to every centre, two at a time (one read of the block per pair)."""
    k = centers.shape[1]
    for c in range(0, k - 1, 2):
        patch_distances(xt, 0, m, centers, c, c + 1, out)
    if k % 2:
        block_distances(xt, 0, m, centers, k - 1, out)


@cached_njit(nogil=True)
def lin_table(value_prop, offsets, cat_coef, counts, value_counts, cat_dev):
    """Each categorical value's share of ``lin`` per cluster, shape (V, k).

    ``table[v, c]`` is the attribute's coefficient times ``c_v - |C| p_v - G``:
    a point's ``lin[c]`` is the sum of its values' entries (:func:`table_lin`).
    """
    table = np.empty(value_counts.shape)
    for c in range(counts.shape[0]):
        set_lin_column(value_prop, offsets, cat_coef, counts, value_counts, cat_dev, c, table)
    return table


@cached_njit(nogil=True, inline="always")
def table_lin(table, codes, Z, num_coef, num_sums, i, lin):  # IN ..., OUT
    """Point ``i``'s ``lin`` from :func:`lin_table` and the numeric attributes' sums."""
    for c in range(lin.shape[0]):
        lin[c] = 0.0
    for t in range(codes.shape[1]):
        v = codes[i, t]
        for c in range(lin.shape[0]):
            lin[c] += table[v, c]
    numeric_lin(Z, num_coef, num_sums, i, lin)
