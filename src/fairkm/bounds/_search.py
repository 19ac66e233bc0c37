"""Whole rows that meet the bounds, by local search: repair a labelling, then polish its cost.

The linear relaxation's solution (:mod:`fairkm.bounds._relax`) leaves a few
rows split and the bands that bind without slack; assigning each row to its
largest share breaks those bands by a few rows. The local search
(:mod:`fairkm.bounds._search_kernels`) repairs that labelling with the moves
and swaps that remove the most excess for the least cost, then lowers the
cost while every band holds. It takes milliseconds where an integer programme
takes seconds, and the relaxation's lower bound still certifies the result.

The same search repairs a clustering someone already has (FairKM's) with the
fewest, cheapest moves, under *guards*: caps on each cluster's distance from
the dataset's mix that the repair may not exceed (:class:`Guard`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairkm.utils._sums import group_totals

from ._model import types_of
from ._search_kernels import TOL, cluster_excess, overall_excess, search

__all__ = ["Guard", "SearchSpace", "cluster_distances", "local_search", "own_guard"]


@dataclass(frozen=True)
class Guard:
    """Caps a repair may not exceed, per attribute: its worst cluster and its mean.

    The distance of a cluster from the dataset's mix is the total-variation
    distance for a categorical attribute and ``|mean_C(z)|`` for a numeric
    one (``z`` standardised over the dataset).

    Attributes
    ----------
    worst : dict of str to float
        Per attribute, the largest distance any cluster may have.
    mean : dict of str to float
        Per attribute, the largest mean of the distances over the clusters
        (each counted once).
    """

    worst: dict = field(default_factory=dict)
    mean: dict = field(default_factory=dict)


def own_guard(bounds, labels, n_clusters):
    """Return a clustering's own worst and mean distance from the dataset's mix, as caps.

    Parameters
    ----------
    bounds : BoundSet
        Every attribute (bounded or not) is capped.
    labels : ndarray of shape (n_samples,), int64
        Cluster codes 0..n_clusters-1, every cluster non-empty.
    n_clusters : int

    Returns
    -------
    Guard
    """
    distances = cluster_distances(bounds, labels, n_clusters)
    return Guard({name: float(d.max()) for name, d in distances.items()},
                 {name: float(d.mean()) for name, d in distances.items()})


def cluster_distances(bounds, labels, n_clusters):
    """Per attribute, each cluster's distance from the dataset's mix (0 for an empty cluster).

    Total variation for a categorical attribute, ``|mean(z)|`` for a numeric
    one, under the bound set's weights.

    Returns
    -------
    dict of str to ndarray of shape (n_clusters,)
    """
    w = np.ones(labels.shape[0]) if bounds.weights is None else bounds.weights
    sizes = np.bincount(labels, weights=w, minlength=n_clusters)
    safe = np.maximum(sizes, 1e-300)
    out = {}
    for a in bounds.categorical(bounded_only=False):
        n_values = len(a.categories)
        counts = np.bincount(labels * n_values + a.values, weights=w,
                             minlength=n_clusters * n_values).reshape(n_clusters, n_values)
        out[a.name] = np.where(sizes > 0, 0.5 * np.abs(
            counts / safe[:, None] - a.proportions[None, :]).sum(axis=1), 0.0)
    for a in bounds.numeric(bounded_only=False):
        out[a.name] = np.abs(np.bincount(labels, weights=w * a.values,
                                         minlength=n_clusters)) / safe
    return out


@dataclass(frozen=True)
class SearchSpace:
    """The arrays the compiled search reads, for the live rows of one problem."""

    weights: np.ndarray
    types: np.ndarray
    n_types: int
    codes: np.ndarray
    z: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    prop: np.ndarray
    offsets: np.ndarray
    tv_cap: np.ndarray
    balance: np.ndarray
    z_cap: np.ndarray
    mean_cap: np.ndarray
    w_min: float
    unit: bool

    @classmethod
    def build(cls, bounds, problem, live, guard=None):
        """Arrays for the bounded attributes of ``bounds`` and those ``guard`` caps.

        Parameters
        ----------
        bounds : BoundSet
        problem : Problem
            The same bounds as arrays (its weights are the ones used).
        live : ndarray of shape (m,), int64
            The rows to assign.
        guard : Guard or None
        """
        guard = guard or Guard()
        k = problem.n_clusters
        guarded = set(guard.worst) | set(guard.mean)
        cats = [a for a in bounds.categorical(bounded_only=False)
                if a.bounded or a.name in guarded]
        nums = [a for a in bounds.numeric(bounded_only=False)
                if a.bounded or a.name in guarded]
        # caps on the sum over the clusters: the mean's cap times their number
        mean_cap = np.array([k * guard.mean.get(a.name, np.inf) for a in cats + nums])
        sizes = [len(a.categories) for a in cats]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        n_values = int(offsets[-1])
        lower, upper = np.full((k, n_values), -1.0), np.full((k, n_values), 2.0)
        prop = np.zeros(n_values)
        tv_cap = np.full((k, len(cats)), np.inf)
        balance = np.zeros((k, len(cats)))
        codes = np.zeros((live.shape[0], len(cats)), dtype=np.int64)
        for j, a in enumerate(cats):
            span = slice(offsets[j], offsets[j + 1])
            if a.bounded:
                lower[:, span], upper[:, span] = a.lower, a.upper
            prop[span] = a.proportions
            tv_cap[:, j] = guard.worst.get(a.name, np.inf)
            if a.balanced:
                balance[:, j] = a.balance
            codes[:, j] = a.values[live] + offsets[j]
        z = np.zeros((live.shape[0], len(nums)))
        z_cap = np.full((k, len(nums)), np.inf)
        for j, a in enumerate(nums):
            z[:, j] = a.values[live]
            if a.bounded:
                z_cap[:, j] = a.delta
            z_cap[:, j] = np.minimum(z_cap[:, j], guard.worst.get(a.name, np.inf))
        types, table = types_of([(codes[:, j] - offsets[j], np.zeros(s), None)
                               for j, s in enumerate(sizes)], live.shape[0])
        weights = np.ascontiguousarray(problem.weights[live])
        return cls(weights, types, table.shape[0], codes, np.ascontiguousarray(z), lower,
                   upper, prop, offsets, tv_cap, balance, z_cap, mean_cap, problem.w_min,
                   bool(np.all(weights == 1.0)) and not nums)

    def excess(self, labels):
        """Return the weight outside the bands and caps for ``labels`` (live rows)."""
        k = self.lower.shape[0]
        size = np.bincount(labels, weights=self.weights, minlength=k)
        n_values = self.lower.shape[1]
        # Each value is one attribute's, so the attributes' counts fill disjoint cells.
        cnt = np.zeros(k * n_values)
        for j in range(self.codes.shape[1]):
            cnt += group_totals(labels * n_values + self.codes[:, j], self.weights, k * n_values)
        cnt = cnt.reshape(k, n_values)
        zsum = group_totals(labels, self.weights[:, None] * self.z, k)
        measures = np.zeros((k, self.mean_cap.shape[0]))
        own = sum(cluster_excess(c, size, cnt, zsum, self.lower, self.upper, self.prop,
                                 self.offsets, self.tv_cap, self.balance, self.z_cap, 1.0,
                                 measures[c])
                  for c in range(k))
        return own + overall_excess(measures.sum(axis=0), self.mean_cap,
                                    self.weights.sum() / k)


def _fill_empty(labels, dist, weights):
    """Give each empty cluster the row cheapest to move there (the search keeps them non-empty).

    A relaxation keeps every cluster non-empty with fractions of rows, so its
    largest shares can leave one empty; the row comes from a cluster of
    more than one row.
    """
    k = dist.shape[1]
    counts = np.bincount(labels, minlength=k)
    for c in np.flatnonzero(counts == 0):
        movable = np.flatnonzero(counts[labels] > 1)
        i = movable[np.argmin(weights[movable] * (dist[movable, c]
                                                  - dist[movable, labels[movable]]))]
        counts[labels[i]] -= 1
        labels[i] = c
        counts[c] = 1
    return labels


def local_search(space, dist, labels, *, polish=True, max_steps=None, hard=1.0):
    """Repair ``labels`` (of the live rows) until every band holds, then lower their cost.

    Parameters
    ----------
    space : SearchSpace
    dist : ndarray of shape (m, n_clusters)
        Each live row's cost per cluster (per unit of weight).
    labels : ndarray of shape (m,), int64
        The labelling to start from; every cluster holds at least ``w_min``.
    polish : bool, default=True
        Lower the cost once every band holds (False: stop as soon as they
        hold, the fewest moves).
    max_steps : int or None
        Steps at most (each one move, swap or pair of moves); 20 per row by
        default.
    hard : float, default=1.0
        How much more the share bands' excess counts than the caps' (large:
        no move trades a band for a cap).

    Returns
    -------
    labels : ndarray of shape (m,), int64
    met : bool
        Whether every band and cap holds (up to the share tolerance 1e-9).
    """
    labels = _fill_empty(np.array(labels, dtype=np.int64), dist, space.weights)
    if max_steps is None:
        max_steps = 20 * labels.shape[0] + 1000
    search(np.ascontiguousarray(dist, dtype=np.float64), space.weights, space.types,
           space.n_types, space.codes, space.z, space.lower, space.upper, space.prop,
           space.offsets, space.tv_cap, space.balance, space.z_cap, space.mean_cap, space.w_min,
           space.unit, labels, polish, max_steps, hard)
    return labels, bool(space.excess(labels) <= TOL * space.w_min)
