"""The work of one partition, run in a task on a Dask worker.

Every function here runs on a worker and never modifies its arguments: a
worker may hold an argument in memory for other tasks too.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array

from .. import _kernels
from .._encoding import check_sensitive_features
from .._engine import statistics_of, sweep

__all__ = [
    "constant",
    "encode",
    "farthest",
    "inertia",
    "nearest",
    "on_features",
    "partition_statistics",
    "predict_block",
    "prepare",
    "random_labels",
    "relabel",
    "shape_summary",
    "sweep_partition",
    "sweep_summary",
    "take_rows",
]


def prepare(x_block, s_block, numeric, n_features, partition):
    """Validate one partition; return its rows and its sensitive features (or None).

    ``numeric`` lists the positions of the numeric attributes, as the whole
    collection's dtypes (or the estimator's ``numeric_sensitive``) decided.
    """
    X = check_array(
        x_block, dtype=np.float64, order="C", ensure_min_samples=0, input_name="X"
    )
    if X.shape[1] != n_features:
        raise ValueError(
            f"partition {partition} of X has {X.shape[1]} columns, expected {n_features}."
        )
    if s_block is None:
        return X, None
    features = check_sensitive_features(
        s_block, numeric=numeric or False, allow_empty=True, where=f" of partition {partition}"
    )
    return X, features


def shape_summary(prepared):
    """Return the partition's rows, its rows of sensitive features and the sum of ``||x||^2``."""
    X, features = prepared
    n_sensitive = X.shape[0] if features is None else features.n_samples
    return X.shape[0], n_sensitive, float(np.einsum("ij,ij->", X, X))


def on_features(prepared, func, *args):
    """Apply one of :mod:`fairkm._encoding`'s partition summaries to the partition."""
    return func(prepared[1], *args)


def encode(prepared, encoding):
    """Return the rows, their global value codes and centred standardised numeric values."""
    X, features = prepared
    if features is None:
        return X, np.zeros((X.shape[0], 0), dtype=np.int64), np.zeros((X.shape[0], 0))
    codes, Z = encoding.rows(features)
    return X, codes, Z


def partition_statistics(part, labels, terms, k):
    """Exact statistics of the partition's rows under ``labels``, as one flat vector."""
    X, codes, Z = part
    return statistics_of(X, terms.with_rows(codes, Z), labels, k).flat()


def take_rows(part, rows):
    return part[0][rows]


def nearest(part, centers):
    labels = np.empty(part[0].shape[0], dtype=np.int64)
    _kernels.nearest_center(part[0], centers, labels)
    return labels


def random_labels(n_rows, offset, k, seed):
    # Consecutive partitions continue the cycle 0, 1, ..., k-1, so the cluster
    # sizes over all partitions are those of the single-machine assignment.
    return np.random.RandomState(seed).permutation((offset + np.arange(n_rows)) % k)


def farthest(part, labels, centers, limit):
    """Return the ``limit`` rows farthest from their centre: (distances, rows, labels)."""
    X = part[0]
    diff = X - centers[labels]
    dist = np.einsum("ij,ij->i", diff, diff)
    rows = np.lexsort((np.arange(X.shape[0]), -dist))[:limit]
    return dist[rows], rows, labels[rows]


def relabel(labels, rows, new):
    labels = labels.copy()
    labels[rows] = new
    return labels


def sweep_partition(part, labels, stats, terms, lam):
    """One exact sweep of the partition's rows against the global statistics.

    Returns ``(labels, statistics, n_moved)``: the new labels, the partition's
    exact statistics under them, flat (``None`` when nothing moved), and the
    number of rows moved.
    """
    X, codes, Z = part
    local_terms = terms.with_rows(codes, Z)
    new = labels.copy()
    n_moved = sweep(
        X, local_terms, lam, np.arange(X.shape[0], dtype=np.int64), new, stats.copy()
    )
    if n_moved == 0:
        return labels, None, 0
    return new, statistics_of(X, local_terms, new, stats.counts.shape[0]).flat(), n_moved


def constant(value):
    # Small values that many tasks read travel once per worker as the result
    # of this task; as a task (not scattered data) Dask can recompute them.
    return value


def sweep_summary(result):
    return result[1], result[2]


def inertia(part, labels, centers):
    return _kernels.inertia(part[0], centers, labels)


def predict_block(predictor, x_block, s_block):
    """Labels of one block of new rows (see :meth:`fairkm._base.Predictor.predict`)."""
    X = check_array(x_block, dtype=np.float64, order="C", ensure_min_samples=0, input_name="X")
    if X.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return predictor.predict(X, s_block)
