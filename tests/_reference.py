"""Slow, obviously correct NumPy versions of the FairKM quantities.

Nothing here is clever: the objective is recomputed from the labels with the
paper's formulas, and a sweep tries every move by recomputing the whole
objective. The library never imports this module.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class Problem:
    """A FairKM instance in plain terms: raw attribute columns, no encoding."""

    X: np.ndarray  # (n, d)
    categorical: list  # of 1-D arrays of hashable values
    numeric: list  # of 1-D float arrays
    cat_weights: np.ndarray
    num_weights: np.ndarray
    fairness_weight: float
    n_clusters: int
    # Sample weights (a row of weight w counts as w rows); None: all 1.
    sample_weight: np.ndarray | None = None
    # e: cluster C's deviations weighted by (|C|/n)^e (the paper's e = 2).
    cluster_exponent: int = 2

    def weights(self):
        return np.ones(len(self.X)) if self.sample_weight is None else self.sample_weight


def inertia(X, labels, k, weights=None):
    """Sum over clusters of (weighted) squared distances to the cluster's (weighted) mean."""
    weights = np.ones(len(X)) if weights is None else weights
    total = 0.0
    for c in range(k):
        in_c = labels == c
        w = weights[in_c]
        if w.sum() > 0:
            mean = (w[:, None] * X[in_c]).sum(axis=0) / w.sum()
            total += float(np.sum(w[:, None] * (X[in_c] - mean) ** 2))
    return total


def _weighted_standardised(col, w):
    mean = np.sum(w * col) / w.sum()
    scale = np.sqrt(np.sum(w * (col - mean) ** 2) / w.sum())
    return (col - mean) / scale


def fairness(problem, labels):
    """The fairness term sum_C (|C|/n)^e sum_S w_S dev_S(C) (paper Eqs. 7, 21, 22: e = 2).

    With sample weights, |C| and n are total weights and every share and mean
    is weighted.
    """
    weights = problem.weights()
    n = weights.sum()
    total = 0.0
    for c in range(problem.n_clusters):
        in_c = labels == c
        size = weights[in_c].sum()
        if size == 0:
            continue
        dev = 0.0
        for w, col in zip(problem.cat_weights, problem.categorical, strict=True):
            # The values rows hold with some weight (rows of weight 0 count for nothing).
            values = sorted(set(col[weights > 0].tolist()))
            sq = 0.0
            for v in values:
                fr_cluster = weights[in_c & (col == v)].sum() / size
                fr_data = weights[col == v].sum() / n
                sq += (fr_cluster - fr_data) ** 2
            dev += w * sq / len(values)
        for w, col in zip(problem.num_weights, problem.numeric, strict=True):
            z = _weighted_standardised(col, weights)
            cluster_mean = np.sum(weights[in_c] * z[in_c]) / size
            dev += w * (cluster_mean - np.sum(weights * z) / n) ** 2
        total += (size / n) ** problem.cluster_exponent * dev
    return total


def objective(problem, labels):
    """The whole FairKM objective of a labelling."""
    return inertia(
        problem.X, labels, problem.n_clusters, problem.sample_weight
    ) + problem.fairness_weight * fairness(problem, labels)


def move_deltas(problem, labels, i):
    """Objective change of moving point ``i`` to each cluster (inf where not allowed).

    A point may not leave its cluster when it is alone there or, with sample
    weights, when it carries all of the cluster's weight.
    """
    k = problem.n_clusters
    a = labels[i]
    out = np.full(k, np.inf)
    out[a] = 0.0
    weights = problem.weights()
    if weights[labels == a].sum() - weights[i] <= 1e-12 * weights[labels == a].sum():
        return out
    base = objective(problem, labels)
    for c in range(k):
        if c != a:
            moved = labels.copy()
            moved[i] = c
            out[c] = objective(problem, moved) - base
    return out


@dataclass
class SweepResult:
    labels: np.ndarray
    objective: float
    min_gap: float  # smallest gap between the best and second-best option of any visit
    scale: float  # magnitude of the objective, to judge gaps against


def sweep(problem, labels, order):
    """One round-robin pass: each visited point moves to the cluster of least objective.

    A point alone in its cluster stays; a move must lower the objective
    strictly; ties between clusters go to the lowest index.
    """
    labels = labels.copy()
    min_gap = np.inf
    scale = abs(objective(problem, labels))
    for i in order:
        deltas = move_deltas(problem, labels, i)
        finite = np.sort(deltas[np.isfinite(deltas)])
        if len(finite) > 1:
            min_gap = min(min_gap, finite[1] - finite[0])
        best = int(np.argmin(deltas))
        if deltas[best] < 0:
            labels[i] = best
    return SweepResult(labels, objective(problem, labels), min_gap, scale)


def insertion_costs(problem, labels, centers, x, cat_values, num_values):
    """Objective increase of adding a new point to each cluster of a fitted clustering.

    The dataset size, proportions and standardisation stay those of the fitted
    data (the point is priced against the fitted model, not refitted).
    """
    n = len(labels)
    k = problem.n_clusters
    e = problem.cluster_exponent

    def weighted(size, deviation):  # a cluster's deviation, weighted by (|C|/n)^e
        return 0.0 if size == 0 else (size / n) ** e * deviation

    costs = np.zeros(k)
    for c in range(k):
        in_c = labels == c
        size = int(in_c.sum())
        costs[c] = size / (size + 1) * float(np.sum((x - centers[c]) ** 2))
        for w, col, v in zip(problem.cat_weights, problem.categorical, cat_values, strict=True):
            values = sorted(set(col.tolist()))
            before = after = 0.0
            for u in values + ([v] if v not in values else []):
                count = np.sum(col[in_c] == u)
                p = np.sum(col == u) / n
                if size:
                    before += (count / size - p) ** 2
                after += ((count + (u == v)) / (size + 1) - p) ** 2
            change = weighted(size + 1, after) - weighted(size, before)
            costs[c] += problem.fairness_weight * w * change / len(values)
        for w, col, value in zip(problem.num_weights, problem.numeric, num_values, strict=True):
            z = (col - col.mean()) / col.std()
            z_new = (value - col.mean()) / col.std()
            total = z[in_c].sum() - size * z.mean()
            before = (total / size) ** 2 if size else 0.0
            after = ((total + z_new - z.mean()) / (size + 1)) ** 2
            change = weighted(size + 1, after) - weighted(size, before)
            costs[c] += problem.fairness_weight * w * change
    return costs
