"""Plain references of the distances a bounded FairKM may not worsen, recounted from labels.

Every distance is written from its definition, one cluster at a time, with
no code of fairkm's. Per attribute two distances, named as
``fairkm.bounds._loss`` names them: ``"wasserstein"``, the total variation
between a cluster's shares and the dataset's (categorical) or the
1-Wasserstein distance between the cluster's and the dataset's standardised
values, the integral of the gap between their distribution functions over
every breakpoint (numeric); ``"euclidean"``, the Euclidean distance between
the shares (categorical) or the gap between the cluster's and the dataset's
mean of the standardised values (numeric). A row of weight w counts as w
rows; rows of weight 0 are left out.
"""

import numpy as np


def _cdf(values, weights, at):
    return np.array([weights[values <= x].sum() for x in at]) / weights.sum()


def _w1(z, w, inside):
    grid = np.unique(z)
    return float(np.sum(np.diff(grid) * np.abs(_cdf(z[inside], w[inside], grid[:-1])
                                               - _cdf(z, w, grid[:-1]))))


def distances(labels, column, numeric, weights=None):
    """Per cluster (sorted distinct labels of weighted rows), each distance: a dict of arrays."""
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    keep = w > 0
    labels, column, w = np.asarray(labels)[keep], np.asarray(column)[keep], w[keep]
    clusters = np.unique(labels)
    if numeric:
        column = column.astype(float)
        mean = np.average(column, weights=w)
        z = (column - mean) / np.sqrt(np.average((column - mean) ** 2, weights=w))
        return {"euclidean": np.array([abs(np.average(z[labels == c], weights=w[labels == c])
                                           - np.average(z, weights=w)) for c in clusters]),
                "wasserstein": np.array([_w1(z, w, labels == c) for c in clusters])}
    values = np.unique(column)
    p = np.array([w[column == v].sum() for v in values]) / w.sum()
    shares = np.array([[w[(labels == c) & (column == v)].sum() / w[labels == c].sum()
                        for v in values] for c in clusters])
    return {"euclidean": np.sqrt(((shares - p) ** 2).sum(axis=1)),
            "wasserstein": 0.5 * np.abs(shares - p).sum(axis=1)}


def summaries(labels, columns, numeric, weights=None):
    """Per (attribute, distance): (mean over clusters, worst cluster)."""
    out = {}
    for name, column in dict(columns).items():
        for measure, d in distances(labels, column, name in numeric, weights).items():
            out[name, measure] = (float(d.mean()), float(d.max()))
    return out


def worse(before, after, rtol=1e-9, atol=1e-9):
    """The (attribute, distance) pairs whose mean or worst cluster ``after`` ends above ``before``.

    Sorted. Above means by more than ``rtol`` times itself plus ``atol``: the
    library's tolerance is 1e-12 of each, and this plain recount rounds
    apart from it in the last bits, so a test reads the library's losses
    between this with the defaults (each such pair is one) and with
    ``rtol=0, atol=1e-13`` (no other pair is one).
    """
    return sorted(key for key, (m0, w0) in before.items()
                  if after[key][0] > m0 * (1 + rtol) + atol
                  or after[key][1] > w0 * (1 + rtol) + atol)
