"""A bound on a clustering one already has (FairKM's): kept when met, else repaired.

The cheapest assignment under a bound (:func:`fairkm.bounds.fair_assignment`)
throws away what FairKM bought inside the band: every cluster drifts back to
the fairness-blind mix as far as the bound lets it. Here the bound constrains
the clustering instead of replacing it:

1. when the clustering meets the bound, it is returned unchanged;
2. otherwise the local search (:mod:`fairkm.bounds._search`) moves the fewest,
   cheapest rows that bring every cluster within the bound, under *guards*:
   for every attribute, neither the mean over the clusters nor the worst
   cluster of their distance from the dataset's mix (total variation for a
   categorical attribute, ``|mean(z)|`` for a numeric one) may end above the
   clustering's own;
3. where that search is stuck (the guards and the bound pull against each
   other), the linear relaxation finds the rows to move: the least K-Means
   cost to the clustering's centres with every cluster's share of every
   value within the bound and no further from the dataset's than the
   clustering had it (every numeric mean likewise); from its largest shares
   the same search restores the bound and the guards with whole rows;
4. where that fails too (tight bounds, where only some cluster sizes work),
   the cheapest assignment under the bound alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fairkm.metrics import BoundsCheck, from_codes

from ._assign import as_fair_as_whole_rows, cluster_means, solve
from ._infeasible import check_balance_reachable
from ._model import make_problem, sq_distances, types_of
from ._relax import relax
from ._search import SearchSpace, local_search, own_guard

__all__ = ["Constrained", "constrain"]


@dataclass(frozen=True)
class Constrained:
    """A clustering kept within bounds.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,), int64
    check : BoundsCheck
        The bounds measured on ``labels``.
    n_moved : int
        Rows whose cluster changed (0 when the clustering met the bounds).
    how : {"met", "repaired", "relaxed", "reassigned"}
        Unchanged; repaired by the fewest, cheapest moves (step 2 of the
        module's description); reassigned from the relaxation under the
        guards (3); or reassigned at the least cost under the bounds alone
        (4).
    guarded : bool
        Whether the guards held: no attribute's mean or worst cluster ended
        further from the dataset's mix.
    """

    labels: np.ndarray
    check: BoundsCheck
    n_moved: int
    how: str
    guarded: bool


def constrain(X, labels, centers, bounds, *, max_lp_variables=300_000):
    """Keep a clustering within ``bounds``, moving as few rows as it can (validated inputs).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    labels : ndarray of shape (n_samples,), int64
        The clustering (codes 0..n_clusters-1; rows of weight 0 are left as
        they are).
    centers : ndarray of shape (n_clusters, n_features)
        Its centres: the costs of the moves. Where every cluster has weight,
        its means under the bounds' weights replace them (the same centres
        but for the last bits, which weights scaled alike then share).
    bounds : BoundSet
    max_lp_variables : int, default=300_000
        As in :func:`fairkm.bounds.fair_assignment` (used only when the
        search cannot meet the bounds).

    Returns
    -------
    Constrained

    Raises
    ------
    InfeasibleBoundError
        When no assignment to non-empty clusters meets the bounds.
    """
    k = centers.shape[0]
    w = np.ones(labels.shape[0]) if bounds.weights is None else bounds.weights
    means, sizes = cluster_means(X, w, labels, k)
    if (sizes > 0).all():
        centers = means
    check_balance_reachable(bounds)
    if bounds.exact:
        bounds = as_fair_as_whole_rows(X, centers, bounds, max_lp_variables=max_lp_variables)
    check = from_codes(bounds, labels, k)
    if check.satisfied:
        return Constrained(labels, check, 0, "met", True)
    problem = make_problem(X, bounds, k)
    live = np.flatnonzero(problem.weights > 0)
    space = SearchSpace.build(bounds, problem, live, own_guard(bounds, labels, k))
    dist = sq_distances(X, centers)
    repaired, met = local_search(space, dist[live], labels[live], polish=False)
    how = "repaired"
    if not met:
        repaired, met = _under_cells(labels, bounds, problem, dist, live, space,
                                     max_lp_variables)
        how = "relaxed"
    if not met:
        repaired = solve(X, centers, bounds, max_iter=1,
                         max_lp_variables=max_lp_variables).labels[live]
        how = "reassigned"
    out = labels.copy()
    out[live] = repaired
    return Constrained(out, from_codes(bounds, out, k), int(np.count_nonzero(out != labels)),
                       how, met)


def _cells(bounds, labels, k):
    """Per cluster, the bands no further from the dataset's mix than ``labels`` have it.

    Each share may lie as far from the dataset's as it does now, and within
    the bound; each numeric mean as far from 0 as it is now.
    """
    w = np.ones(labels.shape[0]) if bounds.weights is None else bounds.weights
    sizes = np.maximum(np.bincount(labels, weights=w, minlength=k), 1e-300)
    cells = {}
    for a in bounds.categorical(bounded_only=False):
        n_values = len(a.categories)
        counts = np.bincount(labels * n_values + a.values, weights=w,
                             minlength=k * n_values).reshape(k, n_values)
        reach = np.abs(counts / sizes[:, None] - a.proportions)
        lower, upper = a.proportions - reach, a.proportions + reach
        if a.bounded:
            lower, upper = np.maximum(lower, a.lower), np.minimum(upper, a.upper)
        cells[a.name] = (lower, upper)
    for a in bounds.numeric(bounded_only=False):
        cells[a.name] = np.abs(np.bincount(labels, weights=w * a.values, minlength=k)) / sizes
    return cells


def _under_cells(labels, bounds, problem, dist, live, space, max_lp_variables):
    """Move the rows the relaxation under the cell bands moves; restore bound and guards.

    ``space`` holds the bound and the guards, as the repair searched them.
    """
    cells = _cells(bounds, labels, problem.n_clusters)
    cat = [(a.values, *cells[a.name]) for a in bounds.categorical(bounded_only=False)]
    num = [(a.values, cells[a.name]) for a in bounds.numeric(bounded_only=False)]
    types, table = types_of(cat, labels.shape[0])
    balance = tuple((a.balance if a.balanced else 0.0, a.present)
                    for a in bounds.categorical(bounded_only=False))
    guarded = replace(problem, cat=cat, num=num, types=types, type_table=table, balance=balance)
    relaxation = relax(guarded, dist, live, max_lp_variables)
    return local_search(space, dist[live], relaxation.labels[live], polish=False)
