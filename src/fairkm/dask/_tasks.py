"""The work of one partition, run in a task on a Dask worker.

Every function here runs on a worker and never modifies its arguments: a
worker may hold an argument in memory for other tasks too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_array

from fairkm.bounds import numba_threads
from fairkm.cluster import _kernels
from fairkm.cluster._engine import statistics_of, sweep
from fairkm.utils._sensitive import check_sensitive_features, with_intersections
from fairkm.utils._validation import check_weight_values

__all__ = [
    "check_weights",
    "constant",
    "encode",
    "farthest",
    "inertia",
    "nearest",
    "on_features",
    "paired_block",
    "partition_statistics",
    "predict_block",
    "prepare",
    "random_labels",
    "relabel",
    "relabel_weightless",
    "scale_weights",
    "score_block",
    "shape_summary",
    "sweep_partition",
    "sweep_summary",
    "take_rows",
    "totals",
    "transform_block",
    "transform_frame",
    "weight_summary",
    "weight_summary_of",
]


def _rows(x_block):
    return check_array(x_block, dtype=np.float64, order="C", ensure_min_samples=0,
                       input_name="X")


def check_weights(w_block, n_rows, partition):
    """Return one partition's sample weights as float64, checked as ``fairkm.FairKM.fit`` does.

    The rules of :func:`fairkm.utils._validation.check_sample_weight` for one
    partition: real numbers, 1-D, finite and non-negative (a number stands for
    that weight on each of the ``n_rows`` rows). That some weight is positive
    is a rule over all partitions, checked on their :func:`weight_summary`.
    """
    if np.ndim(w_block) == 0:
        w_block = np.full(n_rows, w_block)
    return check_weight_values(np.asarray(w_block), where=f" of partition {partition}")


def weight_summary(weights):
    """Return what the weights' unit and refusals need of one partition.

    ``(n_positive, smallest positive, largest positive, sum of log2 of the
    positive ones, whether all are 1)``, for
    :func:`fairkm.dask._inputs.weight_unit`.
    """
    positive = weights[weights > 0]
    if positive.size == 0:
        return 0, np.inf, 0.0, 0.0, bool(np.all(weights == 1.0))
    return (int(positive.size), float(positive.min()), float(positive.max()),
            float(np.sum(np.log2(positive))), bool(np.all(weights == 1.0)))


def weight_summary_of(w_block, partition):
    """Check one partition's weights and return their :func:`weight_summary`.

    A number stands for itself on every row: one row of it has the
    partition's extremes and mean (and, over all partitions, their unit).
    """
    return weight_summary(check_weights(w_block, 1, partition))


def paired_block(block, index, partition, name):
    """Return one partition of ``name`` in the row order of the same partition of ``X``.

    Rows are paired by label within each partition, as
    :func:`fairkm.utils._inputs.paired` pairs them in memory: the same labels
    in another order are reordered. A partition holding other labels is
    refused (Dask pairs collections partition by partition), except one
    whose index is a plain range (``dd.from_pandas`` of a table with a fresh
    index, or ``reset_index``), which pairs by position, as it always has
    (a warning raised on a worker would not reach the caller). ``X`` without
    labels (a dask array) pairs by position.
    """
    if index is None or not isinstance(block, (pd.DataFrame, pd.Series)):
        return block
    own = block.index
    if own.equals(index) or len(own) != len(index):  # (a length is checked after)
        return block
    if own.is_unique and index.is_unique and own.isin(index).all():
        return block.reindex(index)
    if isinstance(own, pd.RangeIndex) and own.step == 1:
        return block
    head = ", ".join(repr(v) for v in list(own[:3]))
    raise ValueError(
        f"partition {partition} of {name} holds other index labels than partition "
        f"{partition} of X ({head}, ... against "
        f"{', '.join(repr(v) for v in list(index[:3]))}, ...): Dask pairs rows by label "
        f"within each partition, so each partition of {name} must hold the labels of X's. "
        f"Take X and {name} from one dask DataFrame (df[features], df[attributes]), or "
        "give both the same sorted index (set_index) and the same divisions."
    )


def prepare(x_block, s_block, w_block, numeric, n_features, partition, intersections,
            numeric_sensitive):
    """Validate one partition; return its rows, sensitive features and weights (or None).

    ``numeric`` lists the positions of the numeric attributes, as the whole
    collection's dtypes (or the estimator's ``numeric_sensitive``) decided,
    intersections included. The sensitive features and weights are paired
    with ``X``'s rows by label (:func:`paired_block`).
    """
    index = x_block.index if isinstance(x_block, pd.DataFrame) else None
    s_block = paired_block(s_block, index, partition, "sensitive_features")
    w_block = paired_block(w_block, index, partition, "sample_weight")
    X = _rows(x_block)
    if X.shape[1] != n_features:
        raise ValueError(
            f"partition {partition} of X has {X.shape[1]} columns, expected {n_features}."
        )
    weights = None if w_block is None else check_weights(w_block, X.shape[0], partition)
    if s_block is None:
        return X, None, weights
    s_block = with_intersections(s_block, intersections, numeric=numeric_sensitive)
    features = check_sensitive_features(
        s_block, numeric=numeric or False, allow_empty=True, where=f" of partition {partition}"
    )
    return X, features, weights


def shape_summary(prepared):
    """Return the partition's row counts, its largest ``|x|`` and its weights' summary.

    The counts are those of ``X``, of the sensitive features and of the
    weights; the summary is :func:`weight_summary`'s (None without weights).
    """
    X, features, weights = prepared
    n = X.shape[0]
    n_sensitive = n if features is None else features.n_samples
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    if weights is None:
        return n, n_sensitive, n, largest, None
    return n, n_sensitive, weights.shape[0], largest, weight_summary(weights)


def scale_weights(prepared, unit):
    """Divide the partition's weights by the fit's unit, a power of two (exact).

    ``unit`` None drops weights that are all 1 over all partitions: the fit
    then takes the unweighted code paths, as :meth:`fairkm.FairKM.fit` does.
    """
    X, features, weights = prepared
    return X, features, None if unit is None else weights / unit


def totals(prepared):
    """Return the partition's ``sum w ||x||^2`` and its total weight (its rows without weights)."""
    X, _, weights = prepared
    if weights is None:
        return float(np.einsum("ij,ij->", X, X)), float(X.shape[0])
    return float(np.einsum("i,ij,ij->", weights, X, X)), float(weights.sum())


def on_features(prepared, func, *args):
    """Apply one of :mod:`fairkm.cluster._encoding`'s partition summaries to the partition."""
    return func(prepared[1], prepared[2], *args)


def encode(prepared, encoding):
    """Return the rows, their global value codes, centred standardised numeric values, weights.

    Weights are of shape (0,) for unit weights.
    """
    X, features, weights = prepared
    weights = np.zeros(0) if weights is None else weights
    if features is None:
        return (X, np.zeros((X.shape[0], 0), dtype=np.int64), np.zeros((X.shape[0], 0)),
                weights)
    codes, Z = encoding.rows(features)
    return X, codes, Z, weights


def partition_statistics(part, labels, terms, k):
    """Exact statistics of the partition's rows under ``labels``, as one flat vector."""
    X, codes, Z, weights = part
    return statistics_of(X, terms.with_rows(codes, Z, weights), labels, k).flat()


def take_rows(part, rows):
    """Return the rows (and their weights, or None) k-means++ seeds on."""
    weights = part[3]
    return part[0][rows], (weights[rows] if weights.shape[0] else None)


def nearest(part, centers, n_threads):
    """Each row's nearest centre, on the fit's ``n_threads`` (at most the worker's)."""
    labels = np.empty(part[0].shape[0], dtype=np.int64)
    with numba_threads(n_threads):
        _kernels.nearest_center(part[0], centers, labels)
    return labels


def random_labels(n_rows, offset, k, seed):
    # Consecutive partitions continue the cycle 0, 1, ..., k-1, so the cluster
    # sizes over all partitions are those of the single-machine assignment.
    return np.random.RandomState(seed).permutation((offset + np.arange(n_rows)) % k)


def farthest(part, labels, centers, limit):
    """Return the ``limit`` rows of positive weight farthest from their centre.

    As ``(distances, rows, labels, weights)``.
    """
    X, weights = part[0], part[3]
    weights = np.ones(X.shape[0]) if weights.shape[0] == 0 else weights
    diff = X - centers[labels]
    dist = np.einsum("ij,ij->i", diff, diff)
    candidates = np.flatnonzero(weights > 0)
    rows = candidates[np.lexsort((candidates, -dist[candidates]))[:limit]]
    return dist[rows], rows, labels[rows], weights[rows]


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
    X, codes, Z, weights = part
    local_terms = terms.with_rows(codes, Z, weights)
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
    return _kernels.inertia(part[0], centers, part[3], labels)


def relabel_weightless(part, labels, centers, n_threads):
    """Give the rows of weight 0 (which took no part in the fit) their nearest centre.

    On the fit's ``n_threads`` (at most the worker's).
    """
    X, weights = part[0], part[3]
    zero = np.flatnonzero(weights == 0) if weights.shape[0] else np.zeros(0, dtype=np.int64)
    if zero.size == 0:
        return labels
    nearest_labels = np.empty(zero.size, dtype=np.int64)
    with numba_threads(n_threads):
        _kernels.nearest_center(np.ascontiguousarray(X[zero]), centers, nearest_labels)
    labels = labels.copy()
    labels[zero] = nearest_labels
    return labels


def predict_block(predictor, x_block, s_block, partition):
    """Labels of one block of new rows (as ``Predictor.predict`` gives them)."""
    index = x_block.index if isinstance(x_block, pd.DataFrame) else None
    s_block = paired_block(s_block, index, partition, "sensitive_features")
    X = _rows(x_block)
    if X.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return predictor.predict(X, s_block)


def transform_block(x_block, centers):
    """Euclidean distances of one block's rows to the centres, as ``fairkm.FairKM.transform``."""
    X = _rows(x_block)
    if X.shape[0] == 0:
        return np.zeros((0, centers.shape[0]))
    return euclidean_distances(X, centers)


def transform_frame(x_block, centers, columns):
    """:func:`transform_block` of a DataFrame block, as a DataFrame on its index."""
    return pd.DataFrame(transform_block(x_block, centers), index=x_block.index, columns=columns)


def score_block(predictor, x_block, s_block, w_block, unit, partition):
    """One block's share of :meth:`fairkm.FairKM.score`: ``(inertia, statistics, weight)``.

    The rows are labelled as :func:`predict_block` labels them; their weights
    are divided by ``unit`` (a power of two), and the inertia and the total
    weight are in that unit. The statistics are flat (see
    :meth:`fairkm.cluster._engine.Stats.flat`; None without sensitive features or
    rows) and add up over the blocks.
    """
    index = x_block.index if isinstance(x_block, pd.DataFrame) else None
    s_block = paired_block(s_block, index, partition, "sensitive_features")
    w_block = paired_block(w_block, index, partition, "sample_weight")
    X = _rows(x_block)
    weights = None
    if w_block is not None:
        weights = check_weights(w_block, X.shape[0], partition)
        if weights.shape[0] != X.shape[0]:
            raise ValueError(
                f"partition {partition} of sample_weight has {weights.shape[0]} rows but that "
                f"of X has {X.shape[0]}; they must be partitioned alike (the same rows in "
                "each partition)."
            )
        weights = None if unit is None else weights / unit
    if X.shape[0] == 0:
        return 0.0, None, 0.0
    features = None if s_block is None else predictor.read(s_block, X.shape[0])
    labels = predictor.labels(X, features)
    inertia_ = _kernels.inertia(X, predictor.centers, np.zeros(0) if weights is None
                                else weights, labels)
    total = float(X.shape[0]) if weights is None else float(weights.sum())
    if features is None:
        return inertia_, None, total
    # The statistics add up whatever n is: the fairness term is priced on the client.
    terms = predictor.terms(features, sample_weight=weights)
    return inertia_, statistics_of(X, terms, labels, predictor.centers.shape[0]).flat(), total
