"""FairKM on Dask collections partitioned across ``dask.distributed`` workers.

The rows stay on the workers; only the per-cluster statistics travel. Each
round the client sends the global statistics (sums, counts, value counts and
numeric sums per cluster: O(k (d + V)) numbers) to one task per partition. The
task runs one exact sweep of :func:`fairkm._engine.sweep` over the partition's
rows against a private copy of them, so every move is priced exactly as long
as the other partitions stand still, and returns the partition's new labels
(kept on the worker) and its exact statistics. The client then applies the
partitions' changes one at a time, in a fixed order that rotates from round
to round, and keeps a partition's change only if the objective, recomputed
from the statistics, falls (and no cluster empties); otherwise that
partition's labels stay as they were. As in :func:`fairkm._engine.run_minibatch`,
no round raises the objective.

Install with ``pip install 'fairkm[dask]'``.
"""

from __future__ import annotations

import operator
import uuid
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.random import sample_without_replacement
from sklearn.utils.validation import check_array, check_is_fitted

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, KilledWorker, get_client
    from distributed.comm import CommClosedError
    from distributed.utils import CancelledError
except ImportError as exc:
    raise ImportError(
        "fairkm.dask needs the optional dependencies: pip install 'fairkm[dask]'"
    ) from exc

from . import _kernels
from ._encoding import (
    CATEGORICAL,
    NUMERIC,
    SensitiveFeatures,
    _column_table,
    _encode_numeric,
    _resolve_numeric,
)
from ._engine import Stats, build_terms, sweep
from ._fairkm import FairKM as _LocalFairKM
from ._progress import Progress, report
from ._validation import check_int, check_no_missing

__all__ = ["FairKM"]

# What a lost worker, a cancelled future or a dead scheduler raise at a gather.
# A task's own errors (bad data) are not among them and propagate unchanged.
_LOST = (KilledWorker, CancelledError, CommClosedError)

# A task that raises (a MemoryError under memory pressure, say) is retried
# this many times; the tasks are pure, so a retry computes the same result.
# A task whose worker dies is rescheduled by Dask itself, without counting.
_RETRIES = 2


# ---------------------------------------------------------------------- worker side
#
# Every function below runs in a task on a worker. They never modify their
# arguments: a worker may hold an argument in memory for other tasks too.


def _prepare(x_block, s_block, numeric, n_features, partition):
    """Validate one partition and encode its sensitive attributes locally.

    Returns ``(X, columns, n_sensitive_rows)`` where each column is a pair
    ``(local codes, local sorted values)`` for a categorical attribute and
    ``(float values, None)`` for a numeric one.
    """
    X = check_array(
        x_block, dtype=np.float64, order="C", ensure_min_samples=0, input_name="X"
    )
    if X.shape[1] != n_features:
        raise ValueError(
            f"partition {partition} of X has {X.shape[1]} columns, expected {n_features}."
        )
    if s_block is None:
        return X, [], X.shape[0]
    names, cols, _ = _column_table(s_block)
    columns = []
    for name, col, is_numeric in zip(names, cols, numeric, strict=True):
        check_no_missing(name, col, f" of partition {partition}")
        if is_numeric:
            try:
                values = _encode_numeric(name, col)
            except ValueError as exc:
                raise ValueError(f"partition {partition} of sensitive_features: {exc}") from None
            columns.append((values, None))
        else:
            # Unlike the single-machine encoder, keep the values' dtype: a
            # categorical dtype then orders the global categories as it would.
            codes, uniques = pd.factorize(col, sort=True)
            columns.append((codes.astype(np.int64), pd.Index(uniques)))
    return X, columns, len(cols[0]) if cols else X.shape[0]


def _summary(prepared):
    """Return the small facts about a prepared partition that the client combines."""
    X, columns, n_sensitive = prepared
    parts = []
    for values, uniques in columns:
        if uniques is None:
            parts.append(float(np.sum(values)))
        else:
            parts.append((uniques, np.bincount(values, minlength=len(uniques))))
    return X.shape[0], n_sensitive, float(np.einsum("ij,ij->", X, X)), parts


def _numeric_moments(prepared, means):
    """Sum ``v - mean`` and ``(v - mean)^2`` over the partition, per numeric attribute."""
    numeric = [values for values, uniques in prepared[1] if uniques is None]
    out = np.zeros((len(numeric), 2))
    for b, values in enumerate(numeric):
        centred = values - means[b]
        out[b] = centred.sum(), np.dot(centred, centred)
    return out


def _encode(prepared, code_maps, offsets, means, scales, z_means):
    """Return the rows, global value codes and centred standardised numeric values."""
    X, columns, _ = prepared
    n = X.shape[0]
    codes = np.empty((n, len(code_maps)), dtype=np.int64)
    Z = np.empty((n, len(means)))
    a = b = 0
    for values, uniques in columns:
        if uniques is None:
            Z[:, b] = (values - means[b]) / scales[b] - z_means[b]
            b += 1
        else:
            codes[:, a] = code_maps[a][values] + offsets[a]
            a += 1
    return X, codes, Z


def _local_terms(terms, codes, Z):
    """``terms`` (the global constants) with one partition's codes and values."""
    n = codes.shape[0]
    if terms.cat_weight.shape[0] != codes.shape[1]:  # a sensitive-free engine
        codes = np.zeros((n, 0), dtype=np.int64)
    if terms.num_weight.shape[0] != Z.shape[1]:
        Z = np.zeros((n, 0))
    return replace(terms, codes=codes, Z=Z)


def _flat_statistics(X, terms, labels, k):
    """Exact sums, counts, value counts and numeric sums of the rows, as one vector."""
    stats = Stats(k, X.shape[1], terms)
    _kernels.cluster_statistics(
        X, terms.codes, terms.Z, labels,
        stats.sums, stats.counts, stats.value_counts, stats.num_sums,
    )
    return np.concatenate(
        [stats.sums.ravel(), stats.counts, stats.value_counts.ravel(), stats.num_sums.ravel()]
    )


def _partition_statistics(part, labels, terms, k):
    X, codes, Z = part
    return _flat_statistics(X, _local_terms(terms, codes, Z), labels, k)


def _take_rows(part, rows):
    return part[0][rows]


def _nearest(part, centers):
    labels = np.empty(part[0].shape[0], dtype=np.int64)
    _kernels.nearest_center(part[0], centers, labels)
    return labels


def _random_labels(n_rows, offset, k, seed):
    # Consecutive partitions continue the cycle 0, 1, ..., k-1, so the cluster
    # sizes over all partitions are those of the single-machine assignment.
    return np.random.RandomState(seed).permutation((offset + np.arange(n_rows)) % k)


def _farthest(part, labels, centers, limit):
    """Return the ``limit`` rows farthest from their centre: (distances, rows, labels)."""
    X = part[0]
    diff = X - centers[labels]
    dist = np.einsum("ij,ij->i", diff, diff)
    rows = np.lexsort((np.arange(X.shape[0]), -dist))[:limit]
    return dist[rows], rows, labels[rows]


def _relabel(labels, rows, new):
    labels = labels.copy()
    labels[rows] = new
    return labels


def _sweep_partition(part, labels, stats, terms, lam):
    """One exact sweep of the partition's rows against the global statistics.

    Returns ``(labels, statistics, n_moved)``: the new labels, the partition's
    exact statistics under them (``None`` when nothing moved) and the number
    of rows moved.
    """
    X, codes, Z = part
    local_terms = _local_terms(terms, codes, Z)
    new = labels.copy()
    n_moved = sweep(
        X, local_terms, lam, np.arange(X.shape[0], dtype=np.int64), new, stats.copy()
    )
    if n_moved == 0:
        return labels, None, 0
    return new, _flat_statistics(X, local_terms, new, stats.counts.shape[0]), n_moved


def _constant(value):
    # Small values that many tasks read travel once per worker as the result
    # of this task; as a task (not scattered data) Dask can recompute them.
    return value


def _sweep_summary(result):
    return result[1], result[2]


def _inertia(part, labels, centers):
    return _kernels.inertia(part[0], centers, labels)


def _predict_block(model, x_block, s_block):
    X = check_array(x_block, dtype=np.float64, order="C", ensure_min_samples=0, input_name="X")
    if X.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return model.predict(X, sensitive_features=s_block)


# ---------------------------------------------------------------------- client side


def _resolve_client(client):
    if client is None:
        try:
            return get_client()
        except ValueError as exc:
            raise RuntimeError(
                "fairkm.dask.FairKM needs a dask.distributed Client: start one "
                "(distributed.Client(...)) or pass client= to fit."
            ) from exc
    if not isinstance(client, Client):
        raise TypeError(f"client must be a distributed.Client or None, got {client!r}.")
    return client


def _x_blocks(X):
    """One delayed block per row partition of ``X``, its row lengths and feature names."""
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
        if np.isnan(X.shape[1]):
            raise ValueError("X must have a known number of columns.")
        X = X.rechunk({1: -1})
        lengths = None if any(np.isnan(c) for c in X.chunks[0]) else list(X.chunks[0])
        return list(X.to_delayed().ravel()), int(X.shape[1]), None, lengths
    if isinstance(X, dd.DataFrame):
        columns = list(X.columns)
        names = (
            np.asarray(columns, dtype=object)
            if columns and all(isinstance(c, str) for c in columns)
            else None
        )
        return list(X.to_delayed()), len(columns), names, None
    raise TypeError(
        "X must be a dask array or a dask DataFrame, got "
        f"{type(X).__name__}; use fairkm.FairKM for in-memory data."
    )


def _s_blocks(sensitive_features):
    """One delayed block per row partition, an empty sample (for names and dtypes), lengths."""
    s = sensitive_features
    if isinstance(s, da.Array):
        if s.ndim not in (1, 2):
            raise ValueError(
                f"sensitive_features must be 1-D or 2-D, got a dask array of shape {s.shape}."
            )
        if s.ndim == 2:
            s = s.rechunk({1: -1})
        meta = np.empty((0,) + tuple(s.shape[1:]), dtype=s.dtype)
        lengths = None if any(np.isnan(c) for c in s.chunks[0]) else list(s.chunks[0])
        return list(s.to_delayed().ravel()), meta, lengths
    if isinstance(s, (dd.DataFrame, dd.Series)):
        return list(s.to_delayed()), s._meta, None
    raise TypeError(
        "sensitive_features must be a dask DataFrame, Series or array partitioned like X, "
        f"got {type(s).__name__}."
    )


def _check_same_partitions(x_count, s_count, x_lengths, s_lengths):
    if x_count != s_count:
        raise ValueError(
            f"sensitive_features has {s_count} partitions but X has {x_count}; they must be "
            "partitioned alike (the same rows in each partition)."
        )
    if x_lengths is None or s_lengths is None:
        return
    for p, (n_x, n_s) in enumerate(zip(x_lengths, s_lengths, strict=True)):
        if n_x != n_s:
            raise ValueError(
                f"partition {p} of sensitive_features has {n_s} rows but that of X has "
                f"{n_x}; they must be partitioned alike (the same rows in each partition)."
            )


def _label_array(blocks, lengths):
    """Build a 1-D int64 dask array from one block (future or delayed) per partition."""
    labels = da.concatenate([
        da.from_delayed(block, shape=(n,), dtype=np.int64)
        for block, n in zip(blocks, lengths, strict=True) if n != 0
    ])
    if 0 in lengths:
        # concatenate drops empty blocks; keep the partitions of X.
        labels = labels.rechunk((tuple(lengths),))
    return labels


def _gather(client, futures, stage):
    """Gather results; a lost worker or cancelled future becomes a clear RuntimeError."""
    try:
        return client.gather(futures)
    except _LOST as exc:
        raise RuntimeError(
            f"fairkm.dask.FairKM lost data on the cluster during {stage} "
            f"({type(exc).__name__}: {exc}); no labels were kept from this fit, which must "
            "be restarted."
        ) from exc


class _Layout:
    """The statistics' layout in the flat vectors the partitions return, and their terms.

    ``terms_future`` is the future of ``terms`` on the cluster (``None`` if unused).
    """

    def __init__(self, k, d, terms, terms_future):
        self.k, self.d, self.terms, self.terms_future = k, d, terms, terms_future
        self.counts = slice(d * k, d * k + k)

    def stats(self, flat):
        """Return a :class:`Stats` holding ``flat`` (centres and ``G`` refreshed)."""
        stats = Stats(self.k, self.d, self.terms)
        start = 0
        for array in (stats.sums, stats.counts, stats.value_counts, stats.num_sums):
            array[...] = flat[start:start + array.size].reshape(array.shape)
            start += array.size
        if np.all(stats.counts > 0):
            stats.refresh(self.terms)
        return stats

    def objective(self, flat, lam, total_sq_norm):
        return self.stats(flat).objective(self.terms, lam, total_sq_norm)


class FairKM(ClusterMixin, BaseEstimator):
    """FairKM on Dask collections partitioned across ``dask.distributed`` workers.

    Minimises the objective of :class:`fairkm.FairKM` on a dask array or
    DataFrame without gathering its rows: the rows, their labels and their
    sensitive attributes stay on the workers, and only per-cluster
    statistics travel (see Notes).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters; every one of them is non-empty after fitting.
    fairness_weight : "auto" or float, default="auto"
        Weight of the fairness term; ``"auto"`` is ``(n_samples / n_clusters) ** 2``.
    attribute_weights : array-like of shape (n_attributes,), dict or None, default=None
        Per-attribute weights, as in :class:`fairkm.FairKM`.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which sensitive attributes are numeric, as in :class:`fairkm.FairKM`
        (``"auto"`` reads the collection's dtypes).
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        ``"k-means++"``: scikit-learn's k-means++ seeding on ``init_size``
        rows drawn at random (all rows when there are no more), gathered to
        the client; then every row joins its nearest seed. ``"random"``: each
        partition assigns its rows a random permutation of consecutive
        cluster indices, so the clusters have equal sizes (to one) as in
        :class:`fairkm.FairKM`, but the rows are shuffled within partitions
        only. An array gives initial centres. Empty initial clusters receive
        the rows farthest from their centre, as in :class:`fairkm.FairKM`.
    init_size : int or None, default=None
        Number of rows k-means++ runs on. ``None``: ``max(10_000, 100 *
        n_clusters)``. With at least as many rows as this, the seeds are those
        :class:`fairkm.FairKM` would draw with the same ``random_state``.
    max_iter : int, default=1000
        Maximum number of rounds (one sweep of every partition each).
    tol : float, default=1e-6
        Stop when a round lowers the objective by no more than ``tol`` times its value.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation. The same value and the same partitioning
        give identical labels.
    verbose : int, default=0
        Print the objective after each round when positive.

    Attributes
    ----------
    labels_ : dask.array.Array of shape (n_samples,)
        Cluster of each training row, chunked like the rows of ``X``. Its
        blocks are results held on the workers of the fitting client; compute
        it with that client (``client.compute(model.labels_)`` when it is not
        the default client).
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Mean of each cluster.
    inertia_ : float
        K-Means term, summed over the partitions.
    fairness_ : float
        Fairness term, not multiplied by ``fairness_weight_``.
    objective_ : float
        ``inertia_ + fairness_weight_ * fairness_``.
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        Objective after initialisation and after each round, computed from the
        statistics (it can differ from ``objective_`` in the last digits).
    n_iter_ : int
        Number of rounds.
    fairness_weight_, attribute_weights_, n_features_in_, feature_names_in_, \
sensitive_names_, sensitive_kinds_, sensitive_categories_, sensitive_proportions_, \
sensitive_means_, sensitive_scales_
        As in :class:`fairkm.FairKM` (``feature_names_in_`` when ``X`` is a
        dask DataFrame with string column names).

    See Also
    --------
    fairkm.FairKM : the single-machine estimator.

    Notes
    -----
    A fit makes a few passes over the partitions to encode the sensitive
    attributes (the categories and proportions, and the mean and standard
    deviation of numeric attributes, over all rows), then runs rounds. Each
    round submits one task per partition, which sweeps its rows once, in
    order, against the global statistics of the round, exactly as
    :class:`fairkm.FairKM` sweeps all rows. The client then considers the
    partitions in turn, starting with partition ``round % n_partitions``,
    and keeps a partition's new labels only if its change of the statistics,
    added to the changes kept so far, lowers the objective and empties no
    cluster. The first partition with moves is priced exactly, so it is kept
    (unless its gain is below the rounding of the objective); later ones are
    kept when they do not conflict with the earlier ones. So the objective
    never rises. With one partition a round is one exact sweep.

    Each partition returns its statistics computed exactly from its labels,
    and the client sums them in partition order every round; the fitted
    statistics and inertia come from a final pass. So nothing drifts, and
    the result depends only on the data, the partitioning and the seed, not
    on the number of workers or the order in which tasks finish.

    A fit needs the rows in the workers' memory. The statistics and the
    encoding reach the workers as results of tasks, not as scattered data,
    so everything a fit holds on the cluster can be recomputed from its
    inputs: a task whose worker dies is rerun elsewhere, and lost results are
    recomputed (the tasks are deterministic, so the labels are those of an
    uninterrupted fit). The scheduler keeps the small task descriptions of
    every round for this. When Dask cannot recompute a result, the fit
    raises a ``RuntimeError`` that names the round; it never returns labels
    from different rounds.

    ``n_init`` is 1: a restart costs as much as a fit.

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client
    >>> from fairkm.dask import FairKM
    >>> client = Client(n_workers=2)  # doctest: +SKIP
    >>> X = da.random.random((100_000, 5), chunks=(25_000, 5))  # doctest: +SKIP
    >>> groups = (da.random.random(100_000, chunks=25_000) > 0.7).astype(int)  # doctest: +SKIP
    >>> model = FairKM(4, random_state=0).fit(X, sensitive_features=groups)  # doctest: +SKIP
    >>> labels = model.labels_.compute()  # doctest: +SKIP
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        fairness_weight="auto",
        attribute_weights=None,
        numeric_sensitive="auto",
        init="k-means++",
        init_size=None,
        max_iter=1000,
        tol=1e-6,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.fairness_weight = fairness_weight
        self.attribute_weights = attribute_weights
        self.numeric_sensitive = numeric_sensitive
        self.init = init
        self.init_size = init_size
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ validation

    def _local(self, fairness_weight=None):
        """Return a single-machine FairKM with the same parameters (to reuse its checks)."""
        return _LocalFairKM(
            self.n_clusters,
            fairness_weight=self.fairness_weight if fairness_weight is None else fairness_weight,
            attribute_weights=self.attribute_weights,
            numeric_sensitive=self.numeric_sensitive,
            init=self.init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            verbose=self.verbose,
        )

    def _check_params(self, n_samples):
        _, lam = self._local()._check_params(n_samples)
        if self.init_size is not None:
            check_int("init_size", self.init_size, 1)
        return lam

    # ------------------------------------------------------------------ fitting

    def fit(self, X, y=None, *, sensitive_features=None, client=None):
        """Compute a fair clustering of a partitioned dataset.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            Non-sensitive features (numeric), partitioned by rows.
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : dask.dataframe.DataFrame, dask.dataframe.Series or \
                dask.array.Array, default=None
            One column per sensitive attribute, with the same row partitions as
            ``X`` (the same number of partitions and of rows in each). ``None``
            fits plain K-Means.
        client : distributed.Client, default=None
            The client to compute with; ``None`` uses the default client.

        Returns
        -------
        self : FairKM
            Fitted estimator.

        Raises
        ------
        RuntimeError
            When there is no client, or when results lost with a worker
            cannot be recomputed (the fit must then be restarted).
        """
        client = _resolve_client(client)
        x_blocks, n_features, feature_names, x_lengths = _x_blocks(X)
        n_parts = len(x_blocks)
        # Check the parameters before touching the data; the number of rows,
        # which the checks of n_clusters and the "auto" weight need, comes later.
        self._check_params(np.inf)
        local = self._local()
        init_centers = (
            None if isinstance(self.init, str)
            else local._check_init_centers(np.empty((0, n_features)))
        )
        s_blocks, names, kinds = [None] * n_parts, [], []
        if sensitive_features is not None:
            s_blocks, meta, s_lengths = _s_blocks(sensitive_features)
            _check_same_partitions(n_parts, len(s_blocks), x_lengths, s_lengths)
            names, _, auto = _column_table(meta)
            if not names:
                raise ValueError("sensitive_features has no columns.")
            numeric = _resolve_numeric(self.numeric_sensitive, names, auto)
            kinds = [NUMERIC if flag else CATEGORICAL for flag in numeric]
        weights = local._check_attribute_weights(names)
        token = uuid.uuid4().hex

        prepared = client.compute([
            dask.delayed(_prepare, pure=False)(
                xb, sb, [k == NUMERIC for k in kinds], n_features, p
            )
            for p, (xb, sb) in enumerate(zip(x_blocks, s_blocks, strict=True))
        ])
        summaries = _gather(client, client.map(_summary, prepared), "encoding")
        lengths = np.array([s[0] for s in summaries], dtype=np.int64)
        _check_same_partitions(n_parts, n_parts, lengths, [s[1] for s in summaries])
        n_samples = int(lengths.sum())
        lam = self._check_params(n_samples)
        total_sq_norm = float(sum(s[2] for s in summaries))

        encoding = self._encode(client, prepared, summaries, names, kinds, n_samples)
        code_maps, offsets, means, scales, z_means = encoding.pop("arguments")
        parts = [
            client.submit(_encode, prepared[p], code_maps[p], offsets, means, scales, z_means,
                          key=f"fairkm-encode-p{p}-{token}")
            for p in range(n_parts)
        ]
        del prepared
        terms = self._global_terms(encoding, kinds, weights, n_samples)
        active = terms if lam > 0 else terms.empty_like()

        rng = check_random_state(self.random_state)
        seed = rng.randint(np.iinfo(np.int32).max, size=1)[0]
        layout = _Layout(
            self.n_clusters, n_features, active,
            client.submit(_constant, active, key=f"fairkm-terms-{token}"),
        )
        labels, table = self._initial_labels(
            client, parts, lengths, seed, init_centers, layout, token
        )
        run = self._rounds(client, parts, labels, table, layout, lam, total_sq_norm, token)

        # Fitted numbers from the final labels, not from the rounds' bookkeeping.
        full = _Layout(self.n_clusters, n_features, terms, None)
        flat = np.sum(_gather(client, [
            client.submit(_partition_statistics, parts[p], run["labels"][p], terms,
                          self.n_clusters, key=f"fairkm-final-p{p}-{token}", retries=_RETRIES)
            for p in range(n_parts)
        ], "the final statistics"), axis=0)
        stats = full.stats(flat)
        centers = stats.cluster_centers()
        inertia = float(sum(_gather(client, [
            client.submit(_inertia, parts[p], run["labels"][p], centers,
                          key=f"fairkm-inertia-p{p}-{token}", retries=_RETRIES)
            for p in range(n_parts)
        ], "the final inertia")))
        fairness = stats.fairness(terms)
        if not run["converged"]:
            warnings.warn(
                f"FairKM did not converge within max_iter={self.max_iter} rounds; "
                "increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )

        self.labels_ = _label_array(run["labels"], [int(n) for n in lengths])
        self.cluster_centers_ = centers
        self.inertia_ = inertia
        self.fairness_ = float(fairness)
        self.objective_ = inertia + lam * float(fairness)
        self.objective_history_ = np.array(run["history"])
        self.n_iter_ = run["n_iter"]
        self.fairness_weight_ = lam
        self.attribute_weights_ = weights
        self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.sensitive_names_ = np.array(names, dtype=object)
        self.sensitive_kinds_ = np.array(kinds, dtype=object)
        self.sensitive_categories_ = encoding["categories"]
        self.sensitive_proportions_ = encoding["proportions"]
        self.sensitive_means_ = encoding["means"]
        self.sensitive_scales_ = encoding["scales"]
        self._fitted_stats = (
            stats.counts.copy(), stats.value_counts.copy(), stats.num_sums.copy(), n_samples,
        )
        return self

    def _encode(self, client, prepared, summaries, names, kinds, n_samples):
        """Global categories, proportions and standardisation from the partitions' summaries."""
        n_parts = len(summaries)
        categories, proportions, code_maps = [], [], [[] for _ in range(n_parts)]
        means = np.full(len(kinds), np.nan)
        scales = np.full(len(kinds), np.nan)
        numeric = [j for j, kind in enumerate(kinds) if kind == NUMERIC]
        for j, kind in enumerate(kinds):
            if kind == NUMERIC:
                categories.append(None)
                proportions.append(None)
                means[j] = sum(s[3][j] for s in summaries) / n_samples
                continue
            uniques = [s[3][j][0] for s in summaries]
            # Factorising the partitions' sorted values together sorts them as
            # factorising the whole column would.
            codes, values = pd.factorize(uniques[0].append(uniques[1:]), sort=True)
            counts = np.zeros(len(values))
            start = 0
            for p, s in enumerate(summaries):
                stop = start + len(uniques[p])
                code_maps[p].append(codes[start:stop].astype(np.int64))
                counts[codes[start:stop]] += s[3][j][1]
                start = stop
            categories.append(np.asarray(values, dtype=object))
            proportions.append(counts / n_samples)
        z_means = np.zeros(len(numeric))
        if numeric:
            moments = np.sum(_gather(client, [
                client.submit(_numeric_moments, prepared[p], means[numeric])
                for p in range(n_parts)
            ], "encoding"), axis=0)
            for b, j in enumerate(numeric):
                scale = float(np.sqrt(moments[b, 1] / n_samples))
                if not scale > 0.0 or not np.isfinite(scale):
                    raise ValueError(
                        f"numeric sensitive attribute {names[j]!r} has zero variance (every "
                        f"value is {means[j]!r}); it carries no fairness information. Drop it "
                        "or treat it as categorical."
                    )
                scales[j] = scale
                # The mean of (v - mean) / scale, subtracted so the values are
                # centred over the data as the single-machine encoder centres them.
                z_means[b] = moments[b, 0] / scale / n_samples
        sizes = [len(c) for c in categories if c is not None]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return dict(
            categories=categories,
            proportions=proportions,
            means=means,
            scales=scales,
            arguments=(code_maps, offsets, means[numeric], scales[numeric], z_means),
        )

    @staticmethod
    def _global_terms(encoding, kinds, weights, n_samples):
        """Return the kernels' per-value constants, without rows (partitions add theirs)."""
        cat = [j for j, kind in enumerate(kinds) if kind == CATEGORICAL]
        num = [j for j, kind in enumerate(kinds) if kind == NUMERIC]
        props = [encoding["proportions"][j] for j in cat]
        terms = build_terms(
            [np.zeros(0, dtype=np.int64)] * len(cat),
            [np.zeros(0)] * len(num),
            props,
            [len(p) for p in props],
            weights[cat],
            weights[num],
            n_samples,
        )
        return replace(terms, codes=np.zeros((0, len(cat)), dtype=np.int64),
                       Z=np.zeros((0, len(num))))

    def _initial_labels(self, client, parts, lengths, seed, init_centers, layout, token):
        """Return the initial label futures, one per partition, and their statistics."""
        k, n_parts = self.n_clusters, len(parts)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        n_samples = int(offsets[-1])
        if init_centers is None and self.init == "random":
            seeds = np.random.RandomState(seed).randint(np.iinfo(np.int32).max, size=n_parts)
            labels = [
                client.submit(_random_labels, int(lengths[p]), int(offsets[p]), k, seeds[p],
                              key=f"fairkm-init-p{p}-{token}")
                for p in range(n_parts)
            ]
        else:
            centers = init_centers
            if centers is None:
                size = max(10_000, 100 * k) if self.init_size is None else self.init_size
                size = min(n_samples, max(size, k))
                rows = (
                    np.arange(n_samples) if size == n_samples
                    else np.sort(sample_without_replacement(n_samples, size, random_state=seed))
                )
                where = np.searchsorted(offsets, rows, side="right") - 1
                picked = [
                    client.submit(_take_rows, parts[p], rows[where == p] - offsets[p])
                    for p in range(n_parts) if np.any(where == p)
                ]
                sample = np.concatenate(_gather(client, picked, "initialisation"))
                centers, _ = kmeans_plusplus(sample, k, random_state=seed)
            centers = np.ascontiguousarray(centers)
            labels = [
                client.submit(_nearest, parts[p], centers, key=f"fairkm-init-p{p}-{token}")
                for p in range(n_parts)
            ]
        table = self._statistics_table(client, parts, labels, layout, "initialisation")
        counts = table.sum(axis=0)[layout.counts]
        if np.any(counts == 0):
            labels = self._fill_empty_clusters(client, parts, labels, centers, counts, offsets)
            table = self._statistics_table(client, parts, labels, layout, "initialisation")
        return labels, table

    def _statistics_table(self, client, parts, labels, layout, stage):
        return np.array(_gather(client, [
            client.submit(_partition_statistics, parts[p], labels[p], layout.terms_future, layout.k,
                          retries=_RETRIES)
            for p in range(len(parts))
        ], stage))

    def _fill_empty_clusters(self, client, parts, labels, centers, counts, offsets):
        """Give each empty cluster the row farthest from its centre, as the single-machine fit.

        Each partition offers its ``limit`` farthest rows; if the walk over
        them runs out before every empty cluster is filled, it starts again
        with more.
        """
        counts = counts.copy()
        empty = np.flatnonzero(counts == 0)
        limit = 4 * len(empty)
        while True:
            offered = _gather(client, [
                client.submit(_farthest, parts[p], labels[p], centers, limit)
                for p in range(len(parts))
            ], "initialisation")
            dist = np.concatenate([o[0] for o in offered])
            rows = np.concatenate([o[1] + offsets[p] for p, o in enumerate(offered)])
            owner = np.concatenate([o[2] for o in offered])
            walk = iter(np.lexsort((rows, -dist)))
            trial, moves = counts.copy(), {}
            for e in empty:
                for i in walk:
                    if trial[owner[i]] > 1:
                        trial[owner[i]] -= 1
                        trial[e] = 1
                        moves[int(rows[i])] = e
                        break
            exhausted = all(len(o[0]) < limit for o in offered)
            if len(moves) == len(empty) or exhausted:
                break
            limit *= 4
        new = list(labels)
        moved = np.array(sorted(moves), dtype=np.int64)
        where = np.searchsorted(offsets, moved, side="right") - 1
        for p in np.unique(where):
            rows_p = moved[where == p]
            new[p] = client.submit(
                _relabel, labels[p], rows_p - offsets[p],
                np.array([moves[int(r)] for r in rows_p], dtype=np.int64),
            )
        return new

    def _rounds(self, client, parts, labels, table, layout, lam, total_sq_norm, token):
        """Run rounds until the stopping rule; return the label futures and the history."""
        n_parts = len(parts)
        labels = list(labels)
        total = table.sum(axis=0)
        objective = layout.objective(total, lam, total_sq_norm)
        history = [objective]
        for r in range(self.max_iter):
            stats = client.submit(_constant, layout.stats(total), key=f"fairkm-stats-r{r}-{token}")
            results = [
                client.submit(_sweep_partition, parts[p], labels[p], stats, layout.terms_future,
                              lam, key=f"fairkm-sweep-r{r}-p{p}-{token}", retries=_RETRIES)
                for p in range(n_parts)
            ]
            summaries = _gather(client, [
                client.submit(_sweep_summary, results[p], key=f"fairkm-moves-r{r}-p{p}-{token}")
                for p in range(n_parts)
            ], f"round {r + 1}")
            previous = objective
            n_moved = n_rejected = 0
            for p in [(r + i) % n_parts for i in range(n_parts)]:
                flat, moved = summaries[p]
                if not moved:
                    continue
                kept = table[p].copy()
                table[p] = flat
                # The candidate is summed exactly as the next round's statistics
                # will be, so the objective recorded is the one compared.
                candidate = table.sum(axis=0)
                value = (
                    layout.objective(candidate, lam, total_sq_norm)
                    if np.all(candidate[layout.counts] > 0) else np.inf
                )
                if value < objective:
                    total, objective = candidate, value
                    labels[p] = client.submit(operator.getitem, results[p], 0,
                                              key=f"fairkm-labels-r{r}-p{p}-{token}")
                    n_moved += moved
                else:
                    table[p] = kept
                    n_rejected += 1
            del results
            history.append(objective)
            report(Progress("round", r + 1, objective, n_moved, n_rejected=n_rejected,
                            n_partitions=n_parts), self.verbose)
            if n_moved == 0 or (
                self.tol > 0 and previous - objective <= self.tol * abs(previous)
            ):
                return dict(labels=labels, history=history, n_iter=r + 1, converged=True)
        return dict(labels=labels, history=history, n_iter=self.max_iter, converged=False)

    # ------------------------------------------------------------------ prediction

    def _local_estimator(self):
        """Return a single-machine FairKM carrying the fitted attributes, to predict a block."""
        model = self._local(fairness_weight=self.fairness_weight_)
        for name in (
            "cluster_centers_", "fairness_weight_", "attribute_weights_", "n_features_in_",
            "sensitive_names_", "sensitive_kinds_", "sensitive_categories_",
            "sensitive_proportions_", "sensitive_means_", "sensitive_scales_", "_fitted_stats",
        ):
            setattr(model, name, getattr(self, name))
        model._sensitive = (
            SensitiveFeatures(
                names=list(self.sensitive_names_),
                kinds=list(self.sensitive_kinds_),
                columns=[],
                categories=list(self.sensitive_categories_),
            )
            if len(self.sensitive_names_) else None
        )
        return model

    def predict(self, X, *, sensitive_features=None):
        """Assign new rows to clusters, partition by partition.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            New non-sensitive data.
        sensitive_features : dask.dataframe.DataFrame, dask.dataframe.Series or \
                dask.array.Array, default=None
            The new rows' sensitive attributes, partitioned like ``X``.
            ``None``: each row goes to its nearest centre.

        Returns
        -------
        labels : dask.array.Array of shape (n_samples,)
            Cluster of each row (lazy), chunked like the rows of ``X``.

        Notes
        -----
        Each block is predicted by :meth:`fairkm.FairKM.predict` of a
        single-machine model holding the fitted centres and statistics, so
        the labels are those :class:`fairkm.FairKM` would give: with
        ``sensitive_features``, the cluster where inserting the row alone
        raises the fitted objective least.
        """
        check_is_fitted(self)
        x_blocks, n_features, feature_names, lengths = _x_blocks(X)
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but FairKM was fitted with "
                f"{self.n_features_in_}."
            )
        fitted_names = getattr(self, "feature_names_in_", None)
        if (feature_names is not None and fitted_names is not None
                and list(feature_names) != list(fitted_names)):
            raise ValueError(
                f"X has columns {list(feature_names)}, but FairKM was fitted with "
                f"{list(fitted_names)}."
            )
        s_blocks = [None] * len(x_blocks)
        if sensitive_features is not None:
            if not len(self.sensitive_names_):
                raise ValueError(
                    "sensitive_features were given, but the model was fitted without them."
                )
            s_blocks, meta, s_lengths = _s_blocks(sensitive_features)
            _check_same_partitions(len(x_blocks), len(s_blocks), lengths, s_lengths)
            names, _, _ = _column_table(meta)
            fitted = list(self.sensitive_names_)
            if isinstance(meta, pd.DataFrame) and names != fitted:
                raise ValueError(
                    f"sensitive_features has columns {names}, but the model was fitted with "
                    f"{fitted}."
                )
            if len(names) != len(fitted):
                raise ValueError(
                    f"sensitive_features has {len(names)} attribute(s), but the model was "
                    f"fitted with {len(fitted)}."
                )
        model = dask.delayed(self._local_estimator(), pure=True)
        return _label_array(
            [dask.delayed(_predict_block, pure=True)(model, xb, sb)
             for xb, sb in zip(x_blocks, s_blocks, strict=True)],
            [np.nan] * len(x_blocks) if lengths is None else lengths,
        )

    def fit_predict(self, X, y=None, *, sensitive_features=None, client=None):
        """Fit and return the training labels.

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame
            Non-sensitive features, as in :meth:`fit`.
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : dask collection, default=None
            As in :meth:`fit`.
        client : distributed.Client, default=None
            As in :meth:`fit`.

        Returns
        -------
        labels : dask.array.Array of shape (n_samples,)
            ``labels_``.
        """
        return self.fit(X, sensitive_features=sensitive_features, client=client).labels_
