"""One run of the Dask engine: label futures on the workers, statistics on the client.

Each round sweeps every partition once against the round's statistics and
keeps a partition's new labels only if its change of the statistics, added to
those kept so far, lowers the objective and empties no cluster (the Notes of
:class:`fairkm.dask.FairKM`).
"""

from __future__ import annotations

import operator

import numpy as np

from fairkm.cluster._engine import Stats, stopping_rule_met
from fairkm.utils._progress import Progress, report

from . import _tasks as tasks
from ._collections import gather

__all__ = ["DaskSession"]

# A task that raises (a MemoryError under memory pressure, say) is retried
# this many times; the tasks are pure, so a retry computes the same result.
# A task whose worker dies is rescheduled by Dask itself, without counting.
RETRIES = 2


class DaskSession:
    """Rounds of the Dask engine from given labels (a :class:`fairkm.cluster._walk.Session`).

    The rows stay on the workers, so it does not mix two clusterings row by
    row (``can_blend`` is False).

    Parameters
    ----------
    client : distributed.Client
    parts : list of Future
        Per partition, ``(X, codes, Z)`` on a worker.
    labels : list of Future
        Per partition, the initial labels.
    terms : Terms
        The constants of the objective, without rows.
    lam : float
        ``fairness_weight``; with 0 the moves ignore the sensitive attributes.
    """

    can_blend = False

    def __init__(self, client, parts, labels, terms, lam, *, n_clusters, n_features,
                 total_sq_norm, verbose, token):
        self.client, self.parts, self.labels = client, parts, list(labels)
        self.k, self.d, self.total_sq_norm = n_clusters, n_features, total_sq_norm
        self.verbose, self.token = verbose, token
        self.n_iter = 0
        self._version = 0
        self._weigh(terms, lam)
        self.history = [self.objective]

    # ------------------------------------------------------------------ statistics

    def statistics_table(self, terms, stage, labels=None):
        """Each partition's exact statistics under ``labels``: one flat row per partition."""
        labels = self.labels if labels is None else labels
        return np.array(gather(self.client, [
            self.client.submit(tasks.partition_statistics, part, part_labels, terms, self.k,
                               retries=RETRIES)
            for part, part_labels in zip(self.parts, labels, strict=True)
        ], stage))

    def _weigh(self, terms, lam):
        self.terms, self.lam = terms, lam
        self.active = terms if lam > 0 else terms.empty_like()
        self._version += 1
        # The terms travel once per worker as a task's result, which Dask can recompute.
        self.on_cluster = self.client.submit(
            tasks.constant, self.active, key=f"fairkm-terms-v{self._version}-{self.token}"
        )
        self.table = self.statistics_table(self.on_cluster, "initialisation")
        self._evaluate()

    def _value(self, flat, lam):
        if not np.all(flat[Stats.counts_in_flat(self.k, self.d)] > 0):
            return np.inf
        stats = Stats.from_flat(flat, self.k, self.d, self.active)
        return stats.objective(self.active, lam, self.total_sq_norm)

    def _evaluate(self):
        self.total = self.table.sum(axis=0)
        self.objective = self._value(self.total, self.lam)
        self.inertia = self._value(self.total, 0.0)

    def _full_statistics(self):
        """Statistics with every attribute's counts (the moves may have ignored them)."""
        table = self.table if self.active is self.terms else self.statistics_table(
            self.terms, "the attribute statistics"
        )
        return Stats.from_flat(table.sum(axis=0), self.k, self.d, self.terms)

    def centers(self):
        """Return the current centres, shape (k, d)."""
        return Stats.from_flat(self.total, self.k, self.d, self.active).cluster_centers()

    def attribute_fairness(self):
        """Each attribute's unweighted fairness term, categorical ones first."""
        return self._full_statistics().attribute_fairness(self.terms)

    def cluster_deviation(self):
        """Each cluster's distance from the dataset's mix, per attribute (categorical first)."""
        return self._full_statistics().cluster_deviation(self.terms)

    def counts(self):
        """Each cluster's size (total weight)."""
        return self.total[Stats.counts_in_flat(self.k, self.d)].copy()

    # ------------------------------------------------------------------ phases

    def set_weights(self, lam, cat_w, num_w):
        """Minimise ``inertia + lam * fairness`` with these attribute weights from now on."""
        self._weigh(self.terms.reweighted(cat_w, num_w), lam)

    def snapshot(self):
        """Return what :meth:`restore` needs to come back to the current labels."""
        return list(self.labels)

    def restore(self, snapshot):
        """Come back to the labels of a :meth:`snapshot` (under the current weights)."""
        self.labels = list(snapshot)
        self.table = self.statistics_table(self.on_cluster, "initialisation")
        self._evaluate()

    def minimise(self, max_iter, tol):
        """Run rounds until the stopping rule; return whether it was met within ``max_iter``."""
        client, token, n_parts = self.client, self.token, len(self.parts)
        for _ in range(max_iter):
            r = self.n_iter
            stats = client.submit(
                tasks.constant, Stats.from_flat(self.total, self.k, self.d, self.active),
                key=f"fairkm-stats-r{r}-{token}",
            )
            results = [
                client.submit(tasks.sweep_partition, self.parts[p], self.labels[p], stats,
                              self.on_cluster, self.lam, key=f"fairkm-sweep-r{r}-p{p}-{token}",
                              retries=RETRIES)
                for p in range(n_parts)
            ]
            summaries = gather(client, [
                client.submit(tasks.sweep_summary, results[p],
                              key=f"fairkm-moves-r{r}-p{p}-{token}")
                for p in range(n_parts)
            ], f"round {r + 1}")
            previous = self.objective
            n_moved = n_rejected = 0
            for p in [(r + i) % n_parts for i in range(n_parts)]:
                flat, moved = summaries[p]
                if not moved:
                    continue
                kept = self.table[p].copy()
                self.table[p] = flat
                # The candidate is summed exactly as the next round's statistics
                # will be, so the objective recorded is the one compared.
                candidate = self.table.sum(axis=0)
                value = self._value(candidate, self.lam)
                if value < self.objective:
                    self.total, self.objective = candidate, value
                    self.labels[p] = client.submit(operator.getitem, results[p], 0,
                                                   key=f"fairkm-labels-r{r}-p{p}-{token}")
                    n_moved += moved
                else:
                    self.table[p] = kept
                    n_rejected += 1
            del results
            self.inertia = self._value(self.total, 0.0)
            self.n_iter += 1
            self.history.append(self.objective)
            report(Progress("round", self.n_iter, self.objective, n_moved,
                            n_rejected=n_rejected, n_partitions=n_parts), self.verbose)
            if stopping_rule_met(previous, self.objective, n_moved, tol):
                return True
        return False
