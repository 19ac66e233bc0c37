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

from ._model import _types
from ._search_kernels import TOL, cluster_excess, search

__all__ = ["Guard", "SearchSpace", "local_search"]


@dataclass(frozen=True)
class Guard:
    """Caps per cluster, beyond the bounds, that a repair may not exceed.

    Attributes
    ----------
    tv : dict of str to ndarray of shape (n_clusters,)
        Per categorical attribute, the largest total-variation distance of
        each cluster's mix from the dataset's.
    mean : dict of str to ndarray of shape (n_clusters,)
        Per numeric attribute, the largest ``|mean_C(z)|`` of each cluster
        (``z`` standardised over the dataset).
    """

    tv: dict = field(default_factory=dict)
    mean: dict = field(default_factory=dict)


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
    z_cap: np.ndarray
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
        cats = [a for a in bounds.categorical(bounded_only=False)
                if a.bounded or a.name in guard.tv]
        nums = [a for a in bounds.numeric(bounded_only=False)
                if a.bounded or a.name in guard.mean]
        sizes = [len(a.categories) for a in cats]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        n_values = int(offsets[-1])
        lower, upper = np.full((k, n_values), -1.0), np.full((k, n_values), 2.0)
        prop = np.zeros(n_values)
        tv_cap = np.full((k, len(cats)), np.inf)
        codes = np.zeros((live.shape[0], len(cats)), dtype=np.int64)
        for j, a in enumerate(cats):
            span = slice(offsets[j], offsets[j + 1])
            if a.bounded:
                lower[:, span], upper[:, span] = a.lower, a.upper
            prop[span] = a.proportions
            if a.name in guard.tv:
                tv_cap[:, j] = guard.tv[a.name]
            codes[:, j] = a.values[live] + offsets[j]
        z = np.zeros((live.shape[0], len(nums)))
        z_cap = np.full((k, len(nums)), np.inf)
        for j, a in enumerate(nums):
            z[:, j] = a.values[live]
            if a.bounded:
                z_cap[:, j] = a.delta
            if a.name in guard.mean:
                z_cap[:, j] = np.minimum(z_cap[:, j], guard.mean[a.name])
        types, table = _types([(codes[:, j] - offsets[j], np.zeros(s), None)
                               for j, s in enumerate(sizes)], live.shape[0])
        weights = np.ascontiguousarray(problem.weights[live])
        return cls(weights, types, table.shape[0], codes, np.ascontiguousarray(z), lower,
                   upper, prop, offsets, tv_cap, z_cap, problem.w_min,
                   bool(np.all(weights == 1.0)) and not nums)

    def excess(self, labels):
        """Per cluster, the weight outside its bands and caps for ``labels`` (live rows)."""
        k = self.lower.shape[0]
        size = np.bincount(labels, weights=self.weights, minlength=k)
        cnt = np.zeros((k, self.lower.shape[1]))
        for j in range(self.codes.shape[1]):
            np.add.at(cnt, (labels, self.codes[:, j]), self.weights)
        zsum = np.zeros((k, self.z.shape[1]))
        np.add.at(zsum, labels, self.weights[:, None] * self.z)
        return np.array([cluster_excess(c, size, cnt, zsum, self.lower, self.upper, self.prop,
                                        self.offsets, self.tv_cap, self.z_cap)
                         for c in range(k)])


def local_search(space, dist, labels, *, polish=True, max_steps=None):
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

    Returns
    -------
    labels : ndarray of shape (m,), int64
    met : bool
        Whether every band and cap holds (up to the share tolerance 1e-9).
    """
    labels = np.array(labels, dtype=np.int64)
    if max_steps is None:
        max_steps = 20 * labels.shape[0] + 1000
    search(np.ascontiguousarray(dist, dtype=np.float64), space.weights, space.types,
           space.n_types, space.codes, space.z, space.lower, space.upper, space.prop,
           space.offsets, space.tv_cap, space.z_cap, space.w_min, space.unit, labels, polish,
           max_steps)
    return labels, bool(space.excess(labels).max() <= TOL * space.w_min)
