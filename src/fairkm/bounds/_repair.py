"""A bound on a clustering one already has (FairKM's): kept when met, else repaired.

The cheapest assignment under a bound (:func:`fairkm.bounds.fair_assignment`)
throws away what FairKM bought inside the band: every cluster drifts back to
the fairness-blind mix as far as the bound lets it. Here the bound constrains
the clustering instead of replacing it, and the repair may not leave any
attribute's mean or worst cluster further from the dataset's mix than the
clustering had it, by either distance the reports measure
(:mod:`fairkm.bounds._loss`: Euclidean and Wasserstein; a *loss* is one that
ends above its own):

1. when the clustering meets the bound, it is returned unchanged;
2. otherwise the local search (:mod:`fairkm.bounds._search`) moves the fewest,
   cheapest rows that bring every cluster within the bound, under *guards*:
   for every attribute, neither the mean over the clusters nor the worst
   cluster of its distance from the dataset's mix (total variation for a
   categorical attribute, ``|mean(z)|`` for a numeric one) may end above the
   clustering's own;
3. where that search is stuck or leaves a loss, the linear relaxation finds
   the rows to move: the least K-Means cost to the clustering's centres with
   every cluster's share of every value within the bound and no further from
   the dataset's than the clustering had it (every numeric mean likewise);
   from its largest shares the same search restores the bound and the guards
   with whole rows;
4. where that too is stuck or leaves a loss, a harder search: a numeric
   attribute's Wasserstein distance is guarded through threshold attributes
   (is the value at most each of its quantiles; :func:`with_thresholds`,
   first 4 bins then 16), then every cluster's every share (and numeric mean)
   is capped at its own distance (*cells*, which cap both distances of every
   cluster); each from FairKM's labels, the relaxation's and the cheapest
   assignment under the bound alone. The cheapest clustering that meets the
   bound with no loss is kept;
5. where none does, of the clusterings found that meet the bound (the
   cheapest assignment under it among them), the one of least loss, its
   losses recorded (:class:`fairkm.bounds._loss.BoundRepair`).

``max_deviation=0`` is first resolved to the tightest floor found that whole
rows meet (:func:`fairkm.bounds.as_fair_as_whole_rows`); where steps 1-4 find
nothing there without a loss, they run again at the floor of one row of the
smallest cluster (doubled until met), and its clustering is kept if it has no
loss. No step has a time limit: the integer programmes stop at node limits.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fairkm.exceptions import BoundNotMetWarning
from fairkm.metrics import BoundsCheck, from_codes
from fairkm.utils import _call_site
from fairkm.utils._progress import Steps
from fairkm.utils._sums import weighted_sum

from ._assign import as_fair_as_whole_rows, cluster_means, solve
from ._infeasible import check_balance_reachable
from ._loss import BoundRepair, loss_size, losses, standing, with_thresholds
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
    how : {"met", "repaired", "relaxed", "searched", "least loss"}
        Unchanged; repaired by the fewest, cheapest moves (step 2 of the
        module's description); from the relaxation under the guards (3); by
        the harder search (4); or the clustering of least loss (5).
    guarded : bool
        Whether no attribute's mean or worst cluster ended further from the
        dataset's mix, by either distance the reports measure (no loss).
    repair : BoundRepair
        What the repair did, its distances before and after, and its losses.
    """

    labels: np.ndarray
    check: BoundsCheck
    n_moved: int
    how: str
    guarded: bool
    repair: BoundRepair


def constrain(X, labels, centers, bounds, *, max_lp_variables=100_000, verbose=0):
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
    max_lp_variables : int, default=100_000
        As in :func:`fairkm.bounds.fair_assignment` (used only when the
        search cannot meet the bounds).
    verbose : int or bool, default=0
        Print each step (FairKM's ``verbose``); listeners
        (:func:`fairkm.utils._progress.listening`) hear every step either way.

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
    steps = Steps("repair", verbose)
    if not bounds.exact:
        return _constrain(X, labels, centers, bounds, w, max_lp_variables, steps)
    tightest = as_fair_as_whole_rows(X, centers, bounds, max_lp_variables=max_lp_variables)
    steps("found the tightest bound whole rows meet")
    result = _constrain(X, labels, centers, tightest, w, max_lp_variables, steps)
    if result.repair.how != "least loss":
        return result
    # The tightest floor whole rows meet can cost an attribute what a floor of one row of the
    # smallest cluster (doubled until met) does not: never worse than FairKM comes first.
    doubled = as_fair_as_whole_rows(X, centers, bounds, max_lp_variables=max_lp_variables,
                                    tighten=False)
    steps("found the bound of one row of the smallest cluster")
    if _floors(doubled) == _floors(tightest):
        return result
    looser = _constrain(X, labels, centers, doubled, w, max_lp_variables, steps)
    return result if looser.repair.how == "least loss" else looser


def _floors(bounds):
    """Return the bound of each categorical attribute (the floors of those asked at 0)."""
    return [a.delta for a in bounds.categorical()]


def _constrain(X, labels, centers, bounds, w, max_lp_variables, steps):
    """:func:`constrain` within ``bounds`` resolved (no floor left to find)."""
    k = centers.shape[0]
    check = from_codes(bounds, labels, k)
    before = standing(bounds, labels)
    if check.satisfied:
        steps("the clustering meets the bound: kept as it is")
        return Constrained(labels, check, 0, "met", True, BoundRepair("met", 0, before, before))
    problem = make_problem(X, bounds, k)
    live = np.flatnonzero(problem.weights > 0)
    dist = sq_distances(X, centers)
    trials = _Trials(X, w, labels, bounds, before, live, k, steps)
    space = SearchSpace.build(bounds, problem, live, own_guard(bounds, labels, k))
    trials.search("repaired", space, dist, labels[live])
    if trials.done():
        return trials.best()
    relaxation = _under_cells(labels, bounds, problem, dist, live, max_lp_variables)
    steps("solved the linear relaxation under the guards")
    trials.search("relaxed", space, dist, relaxation)
    if trials.done():
        return trials.best()
    cheapest = solve(X, centers, bounds, max_iter=1, max_lp_variables=max_lp_variables,
                     warn=False).labels
    starts = (labels[live], relaxation, cheapest[live])
    trials.search("searched", space, dist, cheapest[live])
    for guarded, cells in _harder(bounds):
        if not trials.done():
            space = SearchSpace.build(guarded, problem, live, own_guard(guarded, labels, k))
            if cells:
                space = _within_cells(space, guarded, labels, k)
            for start in starts:
                trials.search("searched", space, dist, start)
    trials.add("least loss", cheapest)
    return trials.best()


def _harder(bounds):
    """Return the guarded bound sets of step 4, each with whether to cap every cell, in order."""
    if not bounds.numeric(bounded_only=False):
        return [(bounds, True)]
    finer = [with_thresholds(bounds, 4), with_thresholds(bounds, 16)]
    return [(b, False) for b in finer] + [(b, True) for b in finer]


def _within_cells(space, bounds, labels, k):
    """``space`` with every cluster's shares and numeric means capped at their own distance.

    The guarded attributes of ``space`` are those of ``bounds`` (every one,
    as :func:`own_guard` caps them), in its order.
    """
    cells = _cells(bounds, labels, k)
    lower, upper, z_cap = space.lower.copy(), space.upper.copy(), space.z_cap.copy()
    for j, a in enumerate(bounds.categorical(bounded_only=False)):
        span = slice(space.offsets[j], space.offsets[j + 1])
        lower[:, span], upper[:, span] = cells[a.name]
    for j, a in enumerate(bounds.numeric(bounded_only=False)):
        z_cap[:, j] = np.minimum(z_cap[:, j], cells[a.name])
    return replace(space, lower=lower, upper=upper, z_cap=z_cap)


class _Trials:
    """The clusterings tried, kept when they meet the bound, and the best of them."""

    def __init__(self, X, weights, labels, bounds, before, live, k, steps):
        self.X, self.weights, self.labels, self.bounds = X, weights, labels, bounds
        self.before, self.live = before, live
        self.k, self.steps = k, steps
        self.kept = []

    def search(self, how, space, dist, start):
        """Add the guarded search's repair from ``start`` (labels of the live rows)."""
        repaired, _ = local_search(space, dist[self.live], start, polish=False)
        out = self.labels.copy()
        out[self.live] = repaired
        self.add(how, out)

    def add(self, how, out):
        """Keep ``out`` (labels of every row) if it meets the bound: its loss and its cost."""
        k = self.k
        check = from_codes(self.bounds, out, k)
        n_moved = int(np.count_nonzero(out != self.labels))
        if not check.satisfied and how != "least loss":
            self.steps(f"tried a clustering ({how}): misses the bound", n_moved=n_moved)
            return
        after = standing(self.bounds, out)
        loss = losses(self.before, after)
        means, _ = cluster_means(self.X, self.weights, out, k)
        diff = self.X - means[out]
        cost = weighted_sum(np.einsum("ij,ij->i", diff, diff), self.weights)
        self.steps(f"tried a clustering ({how}): "
                   + ("misses the bound" if not check.satisfied else
                      "meets the bound, " + ("with a loss" if loss else "no loss")),
                   cost, n_moved)
        key = (not check.satisfied, loss_size(loss), cost, len(self.kept))
        self.kept.append((key, how, out, check, after, loss))

    def done(self):
        """Whether a clustering meeting the bound with no loss was found."""
        return any(not loss and check.satisfied for _, _, _, check, _, loss in self.kept)

    def best(self):
        """Return the clustering kept: the cheapest with no loss, else the least loss."""
        _, how, out, check, after, loss = min(self.kept, key=lambda kept: kept[0])
        if not check.satisfied:
            _call_site.warn(
                f"The bounded clustering leaves a violation of {check.violation:.3g} (bounds "
                f"as asked: {check.summary()}). An integral assignment meeting them may "
                "exist: the integer programmes stop at a node limit.", BoundNotMetWarning)
        how = "least loss" if loss else how
        n_moved = int(np.count_nonzero(out != self.labels))
        return Constrained(out, check, n_moved, how, not loss,
                           BoundRepair(how, n_moved, self.before, after, loss))


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


def _under_cells(labels, bounds, problem, dist, live, max_lp_variables):
    """Return the live rows' labels of the relaxation under the cell bands (largest shares)."""
    cells = _cells(bounds, labels, problem.n_clusters)
    cat = [(a.values, *cells[a.name]) for a in bounds.categorical(bounded_only=False)]
    num = [(a.values, cells[a.name]) for a in bounds.numeric(bounded_only=False)]
    types, table = types_of(cat, labels.shape[0])
    balance = tuple((a.balance if a.balanced else 0.0, a.present)
                    for a in bounds.categorical(bounded_only=False))
    guarded = replace(problem, cat=cat, num=num, types=types, type_table=table, balance=balance)
    return relax(guarded, dist, live, max_lp_variables).labels[live]
