"""Plain NumPy references of the weighted measures of fairkm.metrics.

Loops over the definitions, one cluster (or one pair of rows) at a time; rows
of weight zero are dropped first. Unit weights give the unweighted measures.
"""

import itertools
import math

import numpy as np
from scipy.stats import wasserstein_distance


def positive(*arrays, weights):
    keep = np.asarray(weights) > 0
    return [np.asarray(a)[keep] for a in arrays] + [np.asarray(weights, float)[keep]]


def fairness(labels, column, weights, *, numeric, wasserstein="principled", eps=1e-20,
              delta=0.2):
    """Every fairness measure of one attribute, by loops over weighted sums."""
    labels, column, w = positive(labels, column, weights=weights)
    clusters = sorted(set(labels.tolist()))
    total = w.sum()
    sizes, ed, wd = [], [], []
    group = {"balance": math.nan, "KL": math.nan, "MPV": math.nan}
    if numeric:
        mean = np.sum(w * column) / total
        z = (column - mean) / math.sqrt(np.sum(w * (column - mean) ** 2) / total)
        overall = np.sum(w * z) / total
        for c in clusters:
            m = labels == c
            sizes.append(w[m].sum())
            ed.append(abs(np.sum(w[m] * z[m]) / w[m].sum() - overall))
            wd.append(wasserstein_distance(z[m], z, u_weights=w[m], v_weights=w))
    else:
        values = sorted(set(column.tolist()))
        r = np.array([w[column == v].sum() for v in values]) / total
        balances, kl, violation = [], 0.0, 0.0
        for c in clusters:
            m = labels == c
            counts = np.array([w[m & (column == v)].sum() for v in values])
            p = counts / counts.sum()
            sizes.append(counts.sum())
            ed.append(math.sqrt(sum((p - r) ** 2)))
            wd.append(wasserstein_distance(p, r) if wasserstein == "published"
                      else 0.5 * sum(abs(p - r)))
            balances.append(counts.min() / counts.max())
            for p_s, r_s in zip(p, r, strict=True):
                floor = max(float(p_s), eps)
                kl += math.inf if floor == 0 else r_s * math.log(r_s / floor)
                violation = max(violation, p_s - r_s / (1 - delta), r_s * (1 - delta) - p_s)
        group = {"balance": min(balances), "KL": kl, "MPV": violation}
    sizes = np.array(sizes)
    return {
        "AE": float(np.dot(sizes, ed) / sizes.sum()),
        "AW": float(np.dot(sizes, wd) / sizes.sum()),
        "CW": float(np.mean(wd)),
        "ME": max(ed),
        "MW": max(wd),
        **group,
    }


def centroids(X, labels, w):
    return [np.sum(w[labels == c, None] * X[labels == c], axis=0) / w[labels == c].sum()
            for c in sorted(set(labels.tolist()))]


def objective(X, labels, weights, squared):
    X, labels, w = positive(X, labels, weights=weights)
    total = 0.0
    for c, mu in zip(sorted(set(labels.tolist())), centroids(X, labels, w), strict=True):
        m = labels == c
        dist = np.linalg.norm(X[m] - mu, axis=1)
        total += np.sum(w[m] * (dist**2 if squared else dist))
    return total


def centroid_deviation(X, a, b, weights):
    X, a, b, w = positive(X, a, b, weights=weights)
    ca, cb = centroids(X, a, w), centroids(X, b, w)
    small, large = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
    best = math.inf
    for chosen in itertools.permutations(range(len(large)), len(small)):
        total = sum(np.linalg.norm(small[i] - large[j]) for i, j in enumerate(chosen))
        for j in set(range(len(large))) - set(chosen):
            total += min(np.linalg.norm(large[j] - s) for s in small)
        best = min(best, total)
    return best


def pair_deviation(a, b, weights):
    """Pairs of distinct rows weigh w_p w_q; the pairs among a row's copies always agree."""
    a, b, w = positive(a, b, weights=weights)
    disagree = sum(w[p] * w[q] for p, q in itertools.combinations(range(len(a)), 2)
                   if (a[p] == a[q]) != (b[p] == b[q]))
    n = w.sum()
    return 0.0 if disagree == 0 else disagree / (n * (n - 1) / 2)


def silhouette(X, labels, weights):
    """The weighted silhouette of silhouette()'s Notes, row by row."""
    X, labels, w = positive(X, labels, weights=weights)
    clusters = sorted(set(labels.tolist()))
    scores = []
    for i in range(len(labels)):
        d = np.sqrt(((X - X[i]) ** 2).sum(axis=1))
        own = labels == labels[i]
        if w[own].sum() <= 1:
            scores.append(0.0)
            continue
        a = np.sum(w[own] * d[own]) / (w[own].sum() - 1)
        b = min(np.sum(w[labels == c] * d[labels == c]) / w[labels == c].sum()
                for c in clusters if c != labels[i])
        scores.append(0.0 if max(a, b) == 0 else (b - a) / max(a, b))
    return float(np.dot(w, scores) / w.sum())


def cluster_deviation(labels, categorical, numeric, weights, n_clusters):
    """Per attribute (categorical first) and cluster: the distance of its mix from the dataset's.

    Total variation, half the L1 distance of the value proportions, for a
    categorical column; the gap of the cluster's mean of the standardised
    values from the dataset's for a numeric one; NaN for a cluster of no
    weight. Row by row over plain sums, weights included.
    """
    w = np.asarray(weights, float)
    total = w.sum()
    out = np.full((len(categorical) + len(numeric), n_clusters), np.nan)
    for c in range(n_clusters):
        m = labels == c
        size = w[m].sum()
        if size == 0:
            continue
        for a, column in enumerate(categorical):
            values = sorted(set(column.tolist()))
            out[a, c] = 0.5 * sum(abs(w[m & (column == v)].sum() / size
                                      - w[column == v].sum() / total) for v in values)
        for b, column in enumerate(numeric):
            mean = np.sum(w * column) / total
            z = (column - mean) / math.sqrt(np.sum(w * (column - mean) ** 2) / total)
            out[len(categorical) + b, c] = abs(np.sum(w[m] * z[m]) / size - np.sum(w * z) / total)
    return out
