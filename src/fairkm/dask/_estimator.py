"""The FairKM estimator on Dask collections: encoding passes, initialisation, rounds."""

from __future__ import annotations

import uuid

import dask
import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.cluster import kmeans_plusplus
from sklearn.utils import check_random_state

from fairkm.bounds import thread_count
from fairkm.cluster._base import BaseFairKM, FitOutcome
from fairkm.cluster._docstrings import fill_estimator_docstring
from fairkm.cluster._encoding import SensitiveEncoding
from fairkm.cluster._engine import Stats, fill_moves
from fairkm.cluster._weighting import Problem
from fairkm.utils._inputs import warn_if_sensitive_as_y
from fairkm.utils._param_validation import check_n_samples
from fairkm.utils._sensitive import NUMERIC
from fairkm.utils._threads import pool_threads

from . import _tasks as tasks
from ._collections import (
    check_same_partitions,
    gather,
    label_array,
    resolve_client,
    s_blocks,
    s_kinds,
    w_blocks,
    x_blocks,
)
from ._inputs import check_largest, weight_unit
from ._prediction import DaskPredictionMixin
from ._session import RETRIES, DaskSession

__all__ = ["FairKM"]



def _learn_encoding(client, prepared, names, kinds):
    """Learn the sensitive encoding from the partitions' summaries, computed where they are."""

    def each_partition(func, *args):
        return gather(client, [
            client.submit(tasks.on_features, part, func, *args) for part in prepared
        ], "encoding")

    return SensitiveEncoding.learn(names, kinds, each_partition)


@fill_estimator_docstring
class FairKM(ClassNamePrefixFeaturesOutMixin, DaskPredictionMixin, TransformerMixin, BaseFairKM):
    """FairKM on Dask collections partitioned across ``dask.distributed`` workers.

    Minimises the objective of :class:`fairkm.FairKM` on a dask array or
    DataFrame without gathering its rows: the rows, their labels and their
    sensitive attributes stay on the workers, and only per-cluster
    statistics travel (see Notes). Inputs are checked by the rules of
    :class:`fairkm.FairKM`, and ``predict``, ``transform`` and ``score``
    mean what they mean there.

    Parameters
    ----------
    %(n_clusters)s
    %(weight_parameters)s
    %(max_cost)s
        On Dask a budget does not mix two neighbouring clusterings (the labels
        are spread over the workers): it keeps the fairest phase within it.
    %(max_unfairness)s
    %(attribute_weights)s
    %(cluster_weighting)s
    %(numeric_sensitive)s
    %(intersections)s
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        ``"k-means++"``: scikit-learn's k-means++ seeding on ``init_size``
        rows drawn at random (all rows when there are no more), gathered to
        the client; then every row joins its nearest seed. ``"random"``: each
        partition assigns its rows a random permutation of consecutive
        cluster indices, so the clusters have equal sizes (to one), the rows
        shuffled within partitions only. An array gives initial centres.
        Empty initial clusters receive the rows farthest from their centre.
    %(init_size)s
    max_iter : int, default=1000
        Maximum number of rounds (one sweep of every partition each) per phase.
    tol : float, default=1e-4
        Stop a phase when a round lowers the objective by no more than ``tol``
        times its value.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation. The same value and the same partitioning
        give identical labels.
    %(verbose)s

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
    %(fitted_objective)s
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        Objective after initialisation and after each round, computed from the
        statistics (it can differ from ``objective_`` in the last digits).
    n_iter_ : int
        Number of rounds, every phase included.
    n_threads_ : int
        The threads the fit's tasks run their parallel kernels on, decided
        once on the client (each worker keeps to its own numba threads).
    %(fitted_weights)s
    %(fitted_fairness)s
    %(fitted_features)s

    See Also
    --------
    fairkm.FairKM : The single-machine estimator.

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
    from different rounds. Every wait on the cluster (for tasks, and for
    their results to arrive) looks for workers every second: with none for
    60 s, it raises a ``RuntimeError``, where Dask would wait for ever.

    ``n_init`` is 1: a restart costs as much as a fit.

    After fitting, :meth:`predict`, :meth:`transform` and :meth:`score` work
    block by block on a dask collection partitioned like ``X`` (not on
    in-memory arrays: fit a :class:`fairkm.FairKM` for those), with the code
    :class:`fairkm.FairKM` runs on all rows: the labels, the distances to the
    centres and the score are those it gives with the same fitted state.
    ``predict`` and ``transform`` are lazy; ``score`` computes.

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

    # ------------------------------------------------------------------ fitting

    def fit(self, X, y=None, *, sensitive_features=None, sample_weight=None, client=None):
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
        sample_weight : float, dask.array.Array or dask.dataframe.Series, default=None
            Non-negative weight of each row, partitioned like ``X``, as in
            :meth:`fairkm.FairKM.fit` (a row of weight ``w`` counts as ``w``
            rows; rows of weight 0 take no part and get their nearest centre;
            a number weighs every row alike). Only their ratios matter: the
            fit runs on the weights divided by the power of two nearest their
            geometric mean over all partitions (exact), so weights scaled by
            1e6, 1e-300 or to sum 1 give the same labels, and the fitted sums
            are reported in the weights' unit. Refused as in memory, in the
            same words: real numbers, finite and non-negative (a row is
            named within its partition), not all zero, within 100 powers of
            ten of each other, at least ``n_clusters`` rows of positive weight.
        client : distributed.Client, default=None
            The client to compute with; ``None`` uses the default client.

        Returns
        -------
        self : FairKM
            Fitted estimator.

        Raises
        ------
        ValueError
            On the inputs :meth:`fairkm.FairKM.fit` refuses, with its
            messages (``X`` whose squared distances overflow float64, bad
            weights, fewer rows than clusters), checked on each partition's
            summary.
        RuntimeError
            When there is no client, or when results lost with a worker
            cannot be recomputed (the fit must then be restarted), or when
            the cluster has had no worker for 60 s, at any stage (the error
            comes at most 61 s after the last worker went, naming the stage
            and the scheduler).

        Warns
        -----
        UserWarning
            When ``y`` is given but not ``sensitive_features`` (``fit(X, S)``
            reads S as ``y``, which is ignored), as :meth:`fairkm.FairKM.fit`
            warns; so do ``fit_predict(X, S)`` and ``fit_transform(X, S)``.
        """
        client = resolve_client(client)
        blocks, n_features, feature_names, x_lengths = x_blocks(X)
        n_parts = len(blocks)
        # The parameters are checked before the data are touched, and against the
        # data (n_clusters, the "auto" weight) once the partitions' rows are counted.
        self._validate_params()
        # One thread count for the fit, decided here (FAIRKM_NUM_THREADS, this machine's
        # quota and affinity) and applied on the workers to its tasks' parallel kernels.
        n_threads = thread_count()
        warn_if_sensitive_as_y(type(self).__name__, sensitive_features, y)
        sensitive, names, kinds = [None] * n_parts, [], []
        weight_blocks = [None] * n_parts
        if sample_weight is not None:
            weight_blocks, w_lengths = w_blocks(sample_weight, n_parts)
            check_same_partitions(n_parts, len(weight_blocks), x_lengths, w_lengths,
                                  "sample_weight")
        if sensitive_features is not None:
            sensitive, meta, s_lengths = s_blocks(sensitive_features)
            check_same_partitions(n_parts, len(sensitive), x_lengths, s_lengths)
            names, kinds = s_kinds(meta, self.numeric_sensitive, self.intersections)
        token = uuid.uuid4().hex

        positions = [j for j, kind in enumerate(kinds) if kind == NUMERIC]
        prepared = client.compute([
            dask.delayed(tasks.prepare, pure=False)(
                xb, sb, wb, positions, n_features, p, self.intersections, self.numeric_sensitive
            )
            for p, (xb, sb, wb) in enumerate(zip(blocks, sensitive, weight_blocks, strict=True))
        ])
        shapes = gather(client, client.map(tasks.shape_summary, prepared), "encoding")
        lengths = np.array([shape[0] for shape in shapes], dtype=np.int64)
        check_same_partitions(n_parts, n_parts, lengths, [shape[1] for shape in shapes])
        check_same_partitions(n_parts, n_parts, lengths, [shape[2] for shape in shapes],
                              "sample_weight")
        n_samples = int(lengths.sum())
        # The in-memory rules, in its order: the weights, X's size, then the parameters.
        unit, n_rows, weighted = 1.0, n_samples, False
        if sample_weight is not None:
            scale = weight_unit([shape[4] for shape in shapes])
            n_rows = sum(shape[4][0] for shape in shapes)
            # The fit runs on the weights divided by their unit, a power of two (exact),
            # and reports sums in the user's; weights all 1 are dropped, as in memory.
            prepared = [client.submit(tasks.scale_weights, part, scale) for part in prepared]
            weighted, unit = scale is not None, scale or 1.0
        check_largest(max(shape[3] for shape in shapes), n_features)
        checked = self._check_params_vs_input(n_samples, n_features, names)
        # Rows of weight 0 take no part: a cluster of them alone would be empty.
        check_n_samples(n_rows, self.n_clusters, " (of positive weight)")
        sums = gather(client, client.map(tasks.totals, prepared), "encoding")
        total_sq_norm = float(sum(square for square, _ in sums))
        if not np.isfinite(total_sq_norm):
            raise ValueError(
                "X is too large: its squared norms overflow float64 when summed over "
                f"{n_samples} rows; rescale X, for instance with "
                "dask_ml.preprocessing.StandardScaler."
            )
        total = float(sum(weight for _, weight in sums)) if weighted else n_samples
        cluster_exponent = checked.cluster_exponent
        policy = checked.policy.in_weight_unit(unit, total)

        encoding = (
            SensitiveEncoding.from_features(None, total) if sensitive_features is None
            else _learn_encoding(client, prepared, names, kinds)
        )
        parts = [
            client.submit(tasks.encode, prepared[p], encoding, key=f"fairkm-encode-p{p}-{token}")
            for p in range(n_parts)
        ]
        del prepared
        terms = encoding.terms(None, checked.attribute_weights, cluster_exponent=cluster_exponent)

        rng = check_random_state(self.random_state)
        seed = rng.randint(np.iinfo(np.int32).max, size=1)[0]

        def start(lam):
            labels = self._initial_labels(client, parts, lengths, seed, checked.init_centers, terms,
                                          n_features, token, n_threads)
            return DaskSession(client, parts, labels, terms, lam, n_clusters=self.n_clusters,
                               n_features=n_features, total_sq_norm=total_sq_norm,
                               verbose=self.verbose, token=token)

        fitted = policy.fit([start], Problem(encoding, checked.attribute_weights,
                                             cluster_exponent, n_rows, self.max_iter, self.tol))
        session, weighting, converged = fitted.session, fitted.weighting, fitted.converged
        if weighted:
            session.labels = [
                client.submit(tasks.relabel_weightless, parts[p], session.labels[p],
                              session.centers(), n_threads,
                              key=f"fairkm-weightless-p{p}-{token}")
                for p in range(n_parts)
            ]
        # Fitted numbers from the final labels, not from the rounds' bookkeeping.
        terms = session.terms
        flat = np.sum(gather(client, [
            client.submit(tasks.partition_statistics, parts[p], session.labels[p], terms,
                          self.n_clusters, key=f"fairkm-final-p{p}-{token}", retries=RETRIES)
            for p in range(n_parts)
        ], "the final statistics"), axis=0)
        stats = Stats.from_flat(flat, self.n_clusters, n_features, terms)
        centers = stats.cluster_centers()
        inertia = float(sum(gather(client, [
            client.submit(tasks.inertia, parts[p], session.labels[p], centers,
                          key=f"fairkm-inertia-p{p}-{token}", retries=RETRIES)
            for p in range(n_parts)
        ], "the final inertia")))
        self._set_fitted(FitOutcome(
            labels=label_array(session.labels, [int(n) for n in lengths]), stats=stats,
            terms=terms, inertia=inertia, fairness=stats.fairness(terms),
            history=session.history, n_iter=session.n_iter, converged=converged,
            unit="rounds", weighting=weighting, encoding=encoding,
            cluster_exponent=cluster_exponent, weight_unit=unit, threads=n_threads,
            row_weight=total / n_rows * unit if weighted else 1.0,
        ))
        self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def _initial_labels(self, client, parts, lengths, seed, init_centers, terms, n_features,
                        token, n_threads):
        """Return the initial label futures, one per partition (no cluster empty)."""
        k, n_parts = self.n_clusters, len(parts)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        n_samples = int(offsets[-1])
        if init_centers is None and self.init == "random":
            seeds = np.random.RandomState(seed).randint(np.iinfo(np.int32).max, size=n_parts)
            labels = [
                client.submit(tasks.random_labels, int(lengths[p]), int(offsets[p]), k,
                              seeds[p], key=f"fairkm-init-p{p}-{token}")
                for p in range(n_parts)
            ]
        else:
            centers = init_centers
            if centers is None:
                rows = self._seeding_rows(n_samples, seed)
                if rows is None:
                    rows = np.arange(n_samples)
                where = np.searchsorted(offsets, rows, side="right") - 1
                picked = [
                    client.submit(tasks.take_rows, parts[p], rows[where == p] - offsets[p])
                    for p in range(n_parts) if np.any(where == p)
                ]
                taken = gather(client, picked, "initialisation")
                sample = np.concatenate([rows_x for rows_x, _ in taken])
                sample_weight = (None if taken[0][1] is None
                                 else np.concatenate([rows_w for _, rows_w in taken]))
                with pool_threads(n_threads):
                    centers, _ = kmeans_plusplus(sample, k, random_state=seed,
                                                 sample_weight=sample_weight)
            centers = np.ascontiguousarray(centers)
            labels = [
                client.submit(tasks.nearest, parts[p], centers, n_threads,
                              key=f"fairkm-init-p{p}-{token}")
                for p in range(n_parts)
            ]
        blind = terms.empty_like()
        flat = np.sum(gather(client, [
            client.submit(tasks.partition_statistics, parts[p], labels[p], blind, k,
                          retries=RETRIES)
            for p in range(n_parts)
        ], "initialisation"), axis=0)
        counts = flat[Stats.counts_in_flat(k, n_features)]
        if np.any(counts == 0):
            if init_centers is None and self.init == "random":
                # Clusters of weight 0 are empty; the others' means are their centres.
                centers = Stats.from_flat(flat, k, n_features, blind).cluster_centers()
            labels = self._fill_empty_clusters(client, parts, labels, centers, counts, offsets)
        return labels

    def _fill_empty_clusters(self, client, parts, labels, centers, counts, offsets):
        """Give each empty cluster the row farthest from its centre, as the single-machine fit.

        Each partition offers its ``limit`` farthest rows; if the walk over
        them runs out before every empty cluster is filled, it starts again
        with more.
        """
        empty = np.flatnonzero(counts == 0)
        limit = 4 * len(empty)
        while True:
            offered = gather(client, [
                client.submit(tasks.farthest, parts[p], labels[p], centers, limit)
                for p in range(len(parts))
            ], "initialisation")
            moves = fill_moves(
                np.concatenate([o[0] for o in offered]),
                np.concatenate([o[1] + offsets[p] for p, o in enumerate(offered)]),
                np.concatenate([o[2] for o in offered]),
                counts, empty, np.concatenate([o[3] for o in offered]),
            )
            if len(moves) == len(empty) or all(len(o[0]) < limit for o in offered):
                break
            limit *= 4
        new = list(labels)
        moved = np.array(sorted(moves), dtype=np.int64)
        where = np.searchsorted(offsets, moved, side="right") - 1
        for p in np.unique(where):
            rows_p = moved[where == p]
            new[p] = client.submit(
                tasks.relabel, labels[p], rows_p - offsets[p],
                np.array([moves[int(r)] for r in rows_p], dtype=np.int64),
            )
        return new
