"""What the Dask FairKM does with rows after ``fit``: predict, transform and score.

Each block of new rows is handled by the code :class:`fairkm.FairKM` runs on
all of them (:class:`fairkm.cluster._prediction.Predictor`, the same distances), so the
results are those of the in-memory model with the same fitted state.
``predict`` and ``transform`` are lazy, a dask array chunked like the rows;
``score`` adds up the blocks' inertias and statistics into one number.
"""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import check_is_fitted

from fairkm.cluster._docstrings import fill_estimator_docstring
from fairkm.cluster._engine import Stats

from . import _tasks as tasks
from ._collections import (
    check_same_partitions,
    default_distributed_client,
    gather,
    label_array,
    row_array,
    s_blocks,
    w_blocks,
    x_blocks,
)
from ._inputs import weight_unit

__all__ = ["DaskPredictionMixin"]


def _compute(client, delayed_blocks, stage, call):
    """Compute the blocks on ``client``, or on Dask's default scheduler when it is None.

    A default scheduler that is a distributed client is waited on as a given
    client is, within :func:`fairkm.dask._collections.gather`'s limit; a lost
    cluster's error names ``stage`` and the method to call again, ``call``.
    """
    if client is None:
        client = default_distributed_client()
    if client is None:
        return list(dask.compute(*delayed_blocks))
    return gather(client, client.compute(delayed_blocks), stage, call=call)


def _check_container(container):
    """Return ``container`` if Dask can hold :meth:`transform`'s result in it, else refuse it."""
    if container not in ("default", "pandas"):
        raise ValueError(
            f"fairkm.dask.FairKM cannot honour set_output(transform={container!r}): Dask has "
            f"no {container} collection, and the rows stay on the workers. Use "
            "set_output(transform='pandas') for a dask DataFrame or 'default' for a dask "
            "array, and convert the computed result."
        )
    return container


class DaskPredictionMixin:
    """``predict``, ``transform``, ``fit_transform`` and ``score`` of :class:`fairkm.dask.FairKM`.

    Not a ``TransformerMixin``: scikit-learn's ``set_output`` wrapper would
    turn a dask result into an in-memory one (computing every row's
    distances onto the client). So this mixin comes before
    ``TransformerMixin`` and honours the container itself, lazily.
    """

    def _new_rows(self, X):
        """Return new rows' blocks and their lengths (NaN where unknown), checked against fit."""
        check_is_fitted(self)
        blocks, n_features, feature_names, lengths = x_blocks(X)
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
        return blocks, lengths

    def _new_sensitive(self, sensitive_features, blocks, lengths):
        """Return one block of sensitive features per block of rows (None without them).

        Warns, as :meth:`fairkm.FairKM.predict` does, when the model was fitted
        with sensitive features and a positive weight but none were given.
        """
        if sensitive_features is None:
            self._warn_if_predicting_blind()
            return [None] * len(blocks)
        if not self._encoding.n_attributes:
            raise ValueError(
                "sensitive_features were given, but the model was fitted without them."
            )
        sensitive, meta, s_lengths = s_blocks(sensitive_features)
        check_same_partitions(len(blocks), len(sensitive), lengths, s_lengths)
        self._encoding.check_names(self._with_intersections(meta))
        return sensitive

    def predict(self, X, *, sensitive_features=None):
        """Assign new rows to clusters, partition by partition.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            New non-sensitive data.
        sensitive_features : dask.dataframe.DataFrame, dask.dataframe.Series or \
                dask.array.Array, default=None
            The new rows' sensitive attributes, partitioned like ``X``.
            ``None``: each row goes to its nearest centre, which ignores
            fairness.

        Returns
        -------
        labels : dask.array.Array of shape (n_samples,)
            Cluster of each row (lazy), chunked like the rows of ``X``.

        Warns
        -----
        UserWarning
            When the model was fitted with sensitive features and a positive
            ``fairness_weight_`` but ``sensitive_features`` is None, as
            :meth:`fairkm.FairKM.predict` warns.

        Notes
        -----
        Each block is predicted against the fitted centres and statistics by
        the code :class:`fairkm.FairKM` predicts with, so the labels are those
        it would give: with ``sensitive_features``, the cluster where
        inserting the row alone raises the fitted objective least.
        """
        blocks, lengths = self._new_rows(X)
        sensitive = self._new_sensitive(sensitive_features, blocks, lengths)
        predictor = dask.delayed(self._predictor(), pure=True)
        return label_array(
            [dask.delayed(tasks.predict_block, pure=True)(predictor, xb, sb, p)
             for p, (xb, sb) in enumerate(zip(blocks, sensitive, strict=True))],
            [np.nan] * len(blocks) if lengths is None else lengths,
        )

    def set_output(self, *, transform=None):
        """Set the container of :meth:`transform` and :meth:`fit_transform`'s result.

        Parameters
        ----------
        transform : {"default", "pandas"} or None, default=None
            ``"default"``: a dask array. ``"pandas"``: a dask DataFrame
            with the columns of :meth:`get_feature_names_out`, which
            ``.compute()`` makes the pandas DataFrame that
            :class:`fairkm.FairKM` gives. ``None`` keeps the current one.

        Returns
        -------
        self : FairKM
            The estimator.

        Raises
        ------
        ValueError
            For ``"polars"`` (or any other container): Dask has no
            collection of it, and the rows stay on the workers.
        """
        if transform is not None:
            _check_container(transform)
        return super().set_output(transform=transform)

    def transform(self, X):
        """Compute each row's distance to each cluster centre, partition by partition.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            New data.

        Returns
        -------
        X_new : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_clusters)
            Euclidean distances to the centres (lazy), chunked like the rows
            of ``X``: what :meth:`fairkm.FairKM.transform` gives for the same
            centres (fairness plays no part). With
            ``set_output(transform="pandas")`` (or scikit-learn's
            ``transform_output`` set so), a dask DataFrame with the columns
            of :meth:`get_feature_names_out`, partitioned like ``X``: on the
            index of ``X`` when it is a dask DataFrame, on rows numbered from
            0 when it is a dask array (numbered within each partition when
            its chunk sizes are unknown, as Dask numbers them).

        Raises
        ------
        ValueError
            When the output container asked for is not ``"default"`` or
            ``"pandas"`` (``"polars"``: Dask has no collection of it).
        """
        return self._distances(X, _check_container(_get_output_config("transform", self)["dense"]))

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, then compute each training row's distance to each centre (see :meth:`transform`).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            Non-sensitive features, partitioned by rows.
        y : Ignored
            Not used, present for API consistency.
        **fit_params : dict
            Passed to :meth:`fit` (``sensitive_features``, ``sample_weight``,
            ``client``).

        Returns
        -------
        X_new : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_clusters)
            As :meth:`transform` returns it, honouring ``set_output``; an
            output container that cannot be honoured is refused before the
            fit.
        """
        container = _check_container(_get_output_config("transform", self)["dense"])
        return self.fit(X, y, **fit_params)._distances(X, container)

    def _distances(self, X, container):
        blocks, lengths = self._new_rows(X)
        columns = [str(name) for name in self.get_feature_names_out()]
        if container == "pandas" and isinstance(X, dd.DataFrame):
            meta = pd.DataFrame(np.zeros((0, len(columns))), columns=columns,
                                index=X._meta.index)
            return X.map_partitions(tasks.transform_frame, self.cluster_centers_, columns,
                                    meta=meta)
        centers = dask.delayed(self.cluster_centers_, pure=True)
        distances = row_array(
            [dask.delayed(tasks.transform_block, pure=True)(xb, centers) for xb in blocks],
            [np.nan] * len(blocks) if lengths is None else lengths,
            dtype=np.float64, width=self.cluster_centers_.shape[0],
        )
        if container == "pandas":
            return dd.from_dask_array(distances, columns=columns)
        return distances

    @fill_estimator_docstring
    def score(self, X, y=None, *, sensitive_features=None, sample_weight=None, client=None):
        """Negative objective of ``X`` under the fitted model, as :meth:`fairkm.FairKM.score`.

        The rows are assigned by :meth:`predict`; the K-Means term uses the
        fitted centres and, when ``sensitive_features`` are given, the
        fairness term compares each predicted cluster's mix over ``X`` with
        the fitted dataset proportions (and standardisation), with ``n`` the
        number (or total weight) of the rows of ``X``. Without them only the
        K-Means term counts.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            New non-sensitive data.
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : dask.dataframe.DataFrame, dask.dataframe.Series or \
                dask.array.Array, default=None
            Sensitive attributes of ``X``, partitioned like it.
        sample_weight : float, dask.array.Array or dask.dataframe.Series, default=None
            Weight of each row of ``X``, partitioned like it, as in :meth:`fit`.
        client : distributed.Client, default=None
            The client to compute with; ``None`` computes with Dask's default
            scheduler (the default client, if there is one). A client, given
            or default, is waited on as :meth:`fit` waits: a ``RuntimeError``
            after 60 s without any worker.

        Returns
        -------
        score : float
            Minus the objective (higher is better).

        Warns
        -----
        %(warns_without_sensitive)s

        Notes
        -----
        The blocks' sums are added on the client, so the score can differ
        from :meth:`fairkm.FairKM.score` on the same rows in the last digits.
        The weights are divided by a power of two near them, as in
        :meth:`fit`, so weights scaled alike give scores scaled alike.
        """
        blocks, lengths = self._new_rows(X)
        sensitive = self._new_sensitive(sensitive_features, blocks, lengths)
        n_parts = len(blocks)
        weight_blocks, unit, scale = [None] * n_parts, 1.0, None
        if sample_weight is not None:
            weight_blocks, w_lengths = w_blocks(sample_weight, n_parts)
            check_same_partitions(n_parts, len(weight_blocks), lengths, w_lengths,
                                  "sample_weight")
            scale = weight_unit(_compute(client, [
                dask.delayed(tasks.weight_summary_of, pure=True)(wb, p)
                for p, wb in enumerate(weight_blocks)
            ], "the weights", "score"))
            unit = 1.0 if scale is None else scale
        predictor = dask.delayed(self._predictor(), pure=True)
        parts = _compute(client, [
            dask.delayed(tasks.score_block, pure=True)(predictor, xb, sb, wb, scale, p)
            for p, (xb, sb, wb) in enumerate(zip(blocks, sensitive, weight_blocks, strict=True))
        ], "the score", "score")
        total = sum(part[2] for part in parts)
        if total == 0:  # weights all zero were refused: X has no rows
            raise ValueError("X has 0 rows; score needs at least 1.")
        inertia = unit * sum(part[0] for part in parts)
        if sensitive_features is None:
            return -inertia
        flat = sum(part[1] for part in parts if part[1] is not None)
        terms = self._predictor().terms(None, n_samples=total)
        stats = Stats.from_flat(flat, self.n_clusters, self.n_features_in_, terms)
        return -(inertia + self.fairness_weight_ * stats.fairness(terms))
