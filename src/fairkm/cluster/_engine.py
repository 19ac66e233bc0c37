"""The FairKM engines: per-cluster statistics and the loops that lower the objective.

A :class:`Session` runs one initialisation in phases with one of two engines,
which share the statistics and the kernels of :mod:`fairkm.cluster._kernels`, reading
the rows' terms (:class:`fairkm.cluster._terms.Terms`, built by the encoding):

* exact sweeps visit the points one at a time in data order, each move priced
  against statistics that already include every earlier move (the paper's
  algorithm);
* mini-batch epochs price a batch of points in parallel against frozen
  statistics, apply their moves together, and keep them only if the
  objective, recomputed exactly from the statistics, fell; otherwise the
  batch is halved and retried. Where batches overshoot, and at the end,
  exact sweeps take over.

:mod:`fairkm.dask` runs exact sweeps per partition with the same safeguard.
"""

from __future__ import annotations

import numpy as np

from fairkm.metrics import cluster_deviation, excess
from fairkm.utils._progress import Progress, report

from . import _kernels
from ._terms import KernelStats

# A mini-batch phase hands over to exact sweeps when its batches overshoot: when
# an epoch would halve a batch below this many points, or undoes more than this
# share of its batches (the points then chase the same imbalances together).
MIN_BATCH = 1024
MAX_UNDONE = 0.25

# Rows per block of the mini-batch visiting order (see _block_order).
_ORDER_BLOCK = 256
# A phase is skipped as quiet only below the weight where a move starts to pay by this
# fraction of it, on top of the rounding margin the sweep already took.
QUIET_MARGIN = 1e-9


class Stats:
    """Per-cluster sufficient statistics, cluster axis last (the sweep's inner loops run on it)."""

    def __init__(self, k, d, terms):
        self.sums = np.zeros((d, k))
        self.centers = np.zeros((d, k))
        self.counts = np.zeros(k)
        self.value_counts = np.zeros((terms.n_values, k))
        self.cat_dev = np.zeros((terms.codes.shape[1], k))
        self.num_sums = np.zeros((terms.Z.shape[1], k))

    def kernel(self):
        """Return the kernels' :class:`~fairkm.cluster._terms.KernelStats` of these arrays."""
        return KernelStats(self.sums, self.centers, self.counts, self.value_counts, self.cat_dev,
                           self.num_sums)

    def _excess(self, terms):
        """Per value and cluster, the count minus the count the dataset's mix would give."""
        return excess(self.value_counts, self.counts, terms.value_prop)

    def recompute(self, X, terms, labels):
        """Recompute every statistic exactly from ``labels`` (no drift across sweeps)."""
        _kernels.cluster_statistics(X, terms.kernel(0.0), labels, self.kernel())
        self.refresh(terms)


    def refresh(self, terms):
        """Derive the centres (0 for an empty cluster) and ``G`` from the sums and counts."""
        np.divide(self.sums, self.counts, out=self.centers, where=self.counts > 0)
        self.set_cat_dev(terms)

    def set_cat_dev(self, terms):
        """Derive ``G = sum_v p_v (c_v - |C| p_v)`` per attribute and cluster from the counts."""
        if terms.codes.shape[1]:
            self.cat_dev[:] = np.add.reduceat(
                terms.value_prop[:, None] * self._excess(terms), terms.offsets[:-1], axis=0
            )

    def _quadratic(self, terms):
        """Each attribute's ``Q`` per cluster over ``|C|^p``: (A, k) categorical, (B, k) numeric.

        ``Q`` is ``sum_v (c_v - |C| p_v)^2`` or ``E^2``; with the paper's
        weighting (``p = 0``) nothing is divided, so its fits are unchanged.
        """
        cat = np.zeros((0, self.counts.shape[0]))
        if terms.codes.shape[1]:
            excess = self._excess(terms)
            cat = np.add.reduceat(excess * excess, terms.offsets[:-1], axis=0)
        num = self.num_sums**2
        p = 2 - terms.cluster_exponent  # as in fairkm.cluster._kernels
        if p:
            inv = np.zeros_like(self.counts)
            np.divide(1.0, self.counts**p, out=inv, where=self.counts > 0)
            cat, num = cat * inv, num * inv
        return cat, num

    def fairness(self, terms):
        """Fairness term (without ``fairness_weight``) of the current clustering."""
        total = 0.0
        cat, num = self._quadratic(terms)
        if terms.codes.shape[1]:
            total += float(np.sum(cat * terms.cat_weight[:, None]))
        if terms.Z.shape[1]:
            total += float(np.sum(num * terms.num_weight[:, None]))
        return total

    def attribute_fairness(self, terms):
        """Each attribute's fairness term with weight 1, categorical ones first.

        ``sum_C (|C|/n)^e dev_a(C)`` (paper Eqs. 7 and 21 for ``e = 2``),
        shape (A + B,).
        """
        cat, num = self._quadratic(terms)
        cat = cat.sum(axis=1) / terms.n_norm * terms.inv_ne
        return np.concatenate([cat, num.sum(axis=1) * terms.inv_ne])

    def cluster_deviation(self, terms):
        """Each cluster's distance from the dataset's mix, per attribute, shape (A + B, k).

        Total variation for a categorical attribute, the standardised mean's
        gap for a numeric one, categorical attributes first, NaN for an empty
        cluster (:func:`fairkm.metrics._mix.cluster_deviation`). What a user
        reads per cluster in a report's stacked bars.
        """
        return cluster_deviation(self.value_counts, self.counts, terms.value_prop,
                                 terms.offsets, self.num_sums)

    def objective(self, terms, lam, total_sq_norm):
        """Compute the objective from the statistics alone, in O(k (d + V)).

        The K-Means term is ``sum_i ||x_i||^2 - sum_C ||sum_C||^2 / |C|``;
        ``total_sq_norm`` is the constant first part. Rounding makes it
        differ from the point-by-point sum in the last digits only, and
        identically for two labellings of the same data, so it can compare
        them (:func:`fairkm.cluster._kernels.statistics_objective`, what the
        mini-batch epochs compare).
        """
        return _kernels.statistics_objective(terms.kernel(lam), total_sq_norm, self.kernel())

    def copy(self):
        """Return an independent copy."""
        new = object.__new__(Stats)
        for name, value in vars(self).items():
            setattr(new, name, value.copy())
        return new

    def cluster_centers(self):
        """Centres as scikit-learn lays them out, shape (k, d), C-contiguous."""
        return np.ascontiguousarray(self.centers.T)

    # The sums, counts, value counts and numeric sums, flattened into one
    # vector in this order: what one Dask partition sends the client, where
    # partitions' vectors add up to the whole data's.
    _SUMMED = ("sums", "counts", "value_counts", "num_sums")

    def flat(self):
        """Return the additive statistics as one vector (see :meth:`from_flat`)."""
        return np.concatenate([getattr(self, name).ravel() for name in self._SUMMED])

    @classmethod
    def from_flat(cls, flat, k, d, terms):
        """Rebuild statistics from :meth:`flat`'s vector (centres and ``G`` derived)."""
        stats = cls(k, d, terms)
        start = 0
        for name in cls._SUMMED:
            array = getattr(stats, name)
            array[...] = flat[start:start + array.size].reshape(array.shape)
            start += array.size
        stats.refresh(terms)
        return stats

    @staticmethod
    def counts_in_flat(k, d):
        """Return where the cluster counts sit in :meth:`flat`'s vector."""
        return slice(d * k, d * k + k)


def statistics_of(X, terms, labels, k):
    """Exact statistics of ``labels`` (centres and ``G`` not derived: see :meth:`Stats.refresh`)."""
    stats = Stats(k, X.shape[1], terms)
    _kernels.cluster_statistics(X, terms.kernel(0.0), labels, stats.kernel())
    return stats


def stopping_rule_met(previous, objective, n_moved, tol):
    """Whether a pass that took the objective from ``previous`` to ``objective`` ends a run.

    A run ends when a pass moves no point (a local optimum for single-point
    moves) or lowers the objective by no more than ``tol`` times its value.
    """
    return n_moved == 0 or (tol > 0 and previous - objective <= tol * abs(previous))


def fill_moves(distances, rows, owners, counts, empty, weights=None):
    """Choose the rows that go to the empty clusters, one each.

    The candidates (``rows``, with their ``distances`` to their centre, their
    ``owners``' clusters and their sample ``weights``, default 1) are taken
    farthest first, ties to the lowest row, skipping rows of weight 0 and
    rows whose cluster would empty. ``counts`` are the clusters' weights.
    Returns a dict row -> empty cluster; fewer entries than ``empty`` when
    the candidates run out.
    """
    counts = np.array(counts, dtype=np.float64)
    weights = np.ones(len(rows)) if weights is None else weights
    moves = {}
    walk = iter(np.lexsort((rows, -distances)))
    for cluster in empty:
        for i in walk:
            if weights[i] > 0 and counts[owners[i]] > weights[i]:
                counts[owners[i]] -= weights[i]
                counts[cluster] = weights[i]
                moves[int(rows[i])] = int(cluster)
                break
    return moves


def fill_empty_clusters(X, labels, centers, weights=None):
    """Give every empty cluster (of weight 0) the row farthest from its centre.

    Modifies ``labels``.
    """
    counts = np.bincount(labels, weights=weights, minlength=centers.shape[0])
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        diff = X - centers[labels]
        distances = np.einsum("ij,ij->i", diff, diff)
        for row, cluster in fill_moves(
            distances, np.arange(X.shape[0]), labels, counts, empty, weights
        ).items():
            labels[row] = cluster


def sweep(X, terms, lam, order, labels, stats, quiet=None):
    """One exact sweep over the points in ``order``; returns the number moved.

    ``quiet``: see :func:`fairkm.cluster._kernels.sweep`.
    """
    return _kernels.sweep(X, terms.kernel(lam), order, _kernels.BLOCK, labels, stats.kernel(),
                          quiet)


def minibatch_epoch(X, terms, lam, order, labels, stats, batch_size, min_batch,
                    total_sq_norm):
    """One mini-batch epoch (:func:`fairkm.cluster._kernels.minibatch_epoch`) on ``stats``.

    Returns ``(n_moved, n_kept, n_rejected, stopped)``.
    """
    return _kernels.minibatch_epoch(X, terms.kernel(lam), order, batch_size, min_batch,
                                    total_sq_norm, labels, stats.kernel())


class Session:
    """One run of the engine from given labels: the labels, exact statistics and history.

    A session minimises the objective in phases (:meth:`exact`,
    :meth:`minibatch`), possibly under different weights
    (:meth:`set_weights`): the scale-free weight first reaches the S-blind
    clustering, then continues from it with the fairness term.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    terms : fairkm.cluster._terms.Terms
        The rows' terms, with the attribute weights of the objective.
    lam : float
        ``fairness_weight``; with 0 the moves ignore the sensitive attributes.
    labels : ndarray of shape (n,)
        Initial labels, modified in place.
    """

    can_blend = True  # see fairkm.cluster._walk.Session

    def __init__(self, X, terms, lam, labels, *, n_clusters, verbose, algorithm="exact",
                 batch_size=None, rng=None, sweep_name="sweep"):
        self.X, self.labels, self.verbose = X, labels, verbose
        self.sweep_name = sweep_name  # what its progress reports call a sweep
        self.k = n_clusters
        self.algorithm, self.batch_size, self.rng = algorithm, batch_size, rng
        self.n_iter = 0
        self._order = None  # the exact sweeps' visiting order (data order), made once
        self._quiet = None  # where no single move pays at the labels (see _is_quiet)
        self._weigh(terms, lam)
        self.history = [self.objective]

    def _weigh(self, terms, lam):
        at_rest = hasattr(self, "stats")
        self.terms, self.lam = terms, lam
        self.active = terms if lam > 0 else terms.empty_like()
        d = self.X.shape[1]
        self.active_stats = Stats(self.k, d, self.active) if lam <= 0 else None
        if not at_rest:
            self.stats = Stats(self.k, d, terms)
            self.inertia, self.fairness, self.objective = self.evaluate()
            return
        # Between phases the statistics are those of the labels, exactly: every pass that
        # moved a point was evaluated (_step_done). They and the inertia do not depend on
        # the attribute weights, so only the fairness term is weighed again: the same bits
        # as evaluating, without two passes over the data.
        self._derive_active_stats()
        self.fairness = self.stats.fairness(terms)
        self.objective = self.inertia + lam * self.fairness

    def set_weights(self, lam, cat_w, num_w):
        """Minimise ``inertia + lam * fairness`` with these attribute weights from now on."""
        self._weigh(self.terms.reweighted(cat_w, num_w), lam)

    def _derive_active_stats(self):
        """Set the moves' statistics: the statistics, or without attributes sums and counts."""
        if self.active_stats is None:
            self.active_stats = self.stats
        elif self.active_stats is not self.stats:
            self.active_stats.sums[:] = self.stats.sums
            self.active_stats.counts[:] = self.stats.counts
            self.active_stats.refresh(self.active)

    def evaluate(self):
        """Recompute the statistics exactly from the labels; return the objective's terms."""
        self._quiet = None  # the labels may have changed
        self.stats.recompute(self.X, self.terms, self.labels)
        self._derive_active_stats()
        inertia = _kernels.inertia(
            self.X, self.stats.cluster_centers(), self.terms.weights, self.labels
        )
        fairness = self.stats.fairness(self.terms)
        return inertia, fairness, inertia + self.lam * fairness

    def snapshot(self):
        """Return what :meth:`restore` needs to come back to the current labels.

        The labels in the smallest unsigned integer type that holds every
        cluster (one byte a row up to 256 clusters): a walk keeps a snapshot
        per trial, which in the engine's int64 came to most of a fit's peak
        memory.
        """
        return self.labels.astype(np.min_scalar_type(self.k - 1))

    def restore(self, snapshot):
        """Come back to the labels of a :meth:`snapshot` (under the current weights)."""
        if np.array_equal(self.labels, snapshot):
            return  # at rest on these labels: the statistics and objective are theirs already
        self.labels[:] = snapshot
        self.inertia, self.fairness, self.objective = self.evaluate()

    def sample(self, rows):
        """Return an exact session over ``rows`` (sorted), S-blind, from their labels here.

        Its clusters are priced against the dataset's mix (see
        :meth:`fairkm.cluster._terms.Terms.of_rows`); its sweeps report as "sample sweep".
        None when a cluster holds none of the rows.
        """
        labels = self.labels[rows]
        if not np.bincount(labels, minlength=self.k).all():
            return None
        return Session(np.ascontiguousarray(self.X[rows]), self.terms.of_rows(rows), 0.0,
                       labels, n_clusters=self.k, verbose=self.verbose,
                       sweep_name="sample sweep")

    def cheapest_labels(self, other):
        """Each row's cluster where inserting it alone into ``other``'s clustering costs least.

        ``other`` is a session over other rows of the same data (a sample),
        priced under its own weights; every cluster is given a row
        (:func:`fill_empty_clusters`). Returns a snapshot (see :meth:`snapshot`).
        """
        labels = np.empty(self.X.shape[0], dtype=np.int64)
        active = other.active.with_rows(self.terms.codes, self.terms.Z, self.terms.weights)
        _kernels.cheapest_insertion(self.X, active.kernel(other.lam), other.active_stats.kernel(),
                                    labels)
        weights = self.terms.weights if self.terms.weights.shape[0] else None
        fill_empty_clusters(self.X, labels, other.stats.cluster_centers(), weights)
        return labels.astype(np.min_scalar_type(self.k - 1))

    def initialise(self, snapshot):
        """Start again from a :meth:`snapshot`'s labels, before any pass (the history's first)."""
        self.restore(snapshot)
        self.history = [self.objective]

    def blend_order(self, start, end):
        """Rows on which two snapshots differ, the cheapest move first.

        A row's price is the rise of its squared distance to its cluster's
        centre, from its ``start`` cluster's to its ``end`` cluster's, both
        centres those of the ``start`` clustering (the session is left there).
        """
        self.restore(start)
        centers = self.stats.cluster_centers()
        rows = np.flatnonzero(start != end)
        to_end = self.X[rows] - centers[end[rows]]
        to_start = self.X[rows] - centers[start[rows]]
        rise = np.einsum("ij,ij->i", to_end, to_end) - np.einsum("ij,ij->i", to_start, to_start)
        return rows[np.argsort(rise, kind="stable")]

    def blend(self, start, end, rows):
        """Labels of ``start`` with ``rows`` moved to their ``end`` cluster, or None.

        None when a cluster would be left without weight (not a clustering).
        """
        labels = start.copy()
        labels[rows] = end[rows]
        weights = self.terms.weights if self.terms.weights.shape[0] else None
        sizes = np.bincount(labels, weights=weights, minlength=self.k)
        return labels if (sizes > 0).all() else None

    def attribute_fairness(self):
        """Each attribute's unweighted fairness term, categorical ones first."""
        return self.stats.attribute_fairness(self.terms)

    def cluster_deviation(self):
        """Each cluster's distance from the dataset's mix, per attribute (categorical first)."""
        return self.stats.cluster_deviation(self.terms)

    def counts(self):
        """Each cluster's size (total weight)."""
        return self.stats.counts.copy()

    def _step_done(self, kind, n_moved, tol, n_rejected=0):
        """Record one pass over the data; return True when it meets the stopping rule."""
        self.n_iter += 1
        previous = self.objective
        if n_moved or kind == "epoch":
            self.inertia, self.fairness, self.objective = self.evaluate()
        # else: a sweep that moved nothing left the labels and the statistics as the last
        # evaluation computed them, so evaluating again would give the same bits.
        self.history.append(self.objective)
        report(Progress(kind, self.n_iter, self.objective, n_moved, self.inertia,
                        self.fairness, n_rejected=n_rejected), self.verbose)
        return stopping_rule_met(previous, self.objective, n_moved, tol)

    def exact(self, max_iter, tol, *, passes_done=0):
        """Exact sweeps in data order until the stopping rule; return whether it was met.

        At most ``max_iter`` passes in this phase, ``passes_done`` of which
        were already spent (by mini-batch epochs).
        """
        if self._order is None:
            self._order = np.arange(self.X.shape[0], dtype=np.int64)
        start = self.n_iter - passes_done
        quiet = np.empty(1 if self.lam > 0 else 0)  # measured where it can serve
        while self.n_iter - start < max_iter:
            n_moved = sweep(self.X, self.active, self.lam, self._order, self.labels,
                            self.active_stats, quiet)
            if n_moved == 0 and self.lam > 0:
                self._quiet = (self.terms.cat_weight, self.terms.num_weight, self.lam,
                               self.lam * quiet[0])
            if self._step_done(self.sweep_name, n_moved, tol):
                return True
        return False

    def _is_quiet(self):
        """Whether no single move pays at the labels under the current weights.

        True when a sweep at these labels moved nothing under the same
        attribute weights and a ``fairness_weight`` at most the current one,
        and the prices it saw put the weight at which a move starts to pay
        above the current one (:func:`fairkm.cluster._kernels.quiet_factor`):
        a sweep now would move nothing either, so a phase here is skipped
        (a walk's rungs on data its fairness term cannot move).
        """
        if self._quiet is None:
            return False
        cat_weight, num_weight, low, high = self._quiet
        return (low <= self.lam <= high * (1.0 - QUIET_MARGIN)
                and np.array_equal(cat_weight, self.terms.cat_weight)
                and np.array_equal(num_weight, self.terms.num_weight))

    def minibatch(self, max_iter, tol, *, batch_size, rng):
        """Run mini-batch epochs, then exact sweeps, until the stopping rule.

        Each epoch visits the points in a random order of blocks of
        consecutive rows (:func:`_block_order`), ``batch_size`` at a time
        (:func:`fairkm.cluster._kernels.minibatch_epoch`). Where batches overshoot
        (an epoch would halve them below :data:`MIN_BATCH` points, or undoes
        more than :data:`MAX_UNDONE` of them), or once an epoch meets the
        stopping rule, exact sweeps finish the phase, unless the epoch moved
        and undid nothing (every point's best lone move was priced against the
        same statistics and none paid: a local optimum already); epochs and
        sweeps both count towards ``max_iter``. Returns whether the stopping rule was met
        within ``max_iter`` passes. An epoch has one parallel region per batch, run on the
        threads the fit decided (:func:`fairkm.bounds.decided_threads`, idle cores watched).
        """
        X, active, lam = self.X, self.active, self.lam
        total_sq_norm = active.total_sq_norm(X)
        min_batch = min(MIN_BATCH, batch_size)
        start_iter = self.n_iter
        while self.n_iter - start_iter < max_iter:
            n_moved, n_kept, n_rejected, stopped = minibatch_epoch(
                X, active, lam, _block_order(X.shape[0], rng), self.labels,
                self.active_stats, batch_size, min_batch, total_sq_norm,
            )
            crowded = stopped or n_rejected > MAX_UNDONE * (n_kept + n_rejected)
            if self._step_done("epoch", n_moved, tol, n_rejected=n_rejected) or crowded:
                if n_moved == 0 and n_rejected == 0:
                    # Every point priced its best lone move against the same statistics and
                    # none paid: a local optimum for single-point moves already.
                    return True
                return self.exact(max_iter, tol, passes_done=self.n_iter - start_iter)
        return False

    def minimise(self, max_iter, tol):
        """Lower the objective with the session's engine until the stopping rule.

        Returns whether the rule was met within ``max_iter`` passes.
        """
        if self._is_quiet():
            if self.algorithm == "minibatch":
                # The visiting order its one epoch would have drawn: later phases then draw
                # the orders they draw without the skip, and end on the same labels.
                _block_order(self.X.shape[0], self.rng)
            return True
        if self.algorithm == "minibatch":
            return self.minibatch(max_iter, tol, batch_size=self.batch_size, rng=self.rng)
        return self.exact(max_iter, tol)


def _block_order(n, rng):
    """Draw a random visiting order that keeps blocks of consecutive rows together.

    The blocks are shuffled, so a batch mixes rows from all over the data
    (sorted or grouped data does not put one group in one batch), while each
    block is read from memory in order: a fully random order costs a cache
    miss per row once the data no longer fit in cache.
    """
    n_blocks = -(-n // _ORDER_BLOCK)
    starts = rng.permutation(n_blocks).astype(np.int64) * _ORDER_BLOCK
    order = (starts[:, None] + np.arange(_ORDER_BLOCK, dtype=np.int64)).ravel()
    return order[order < n]
