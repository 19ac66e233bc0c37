"""What a fitted FairKM does with new rows: the :class:`Predictor`, and predict, transform, score.

New rows are priced against the fitted statistics by a :class:`Predictor`,
which both estimators build (``BaseFairKM._predictor``) and which the Dask
estimator ships to its workers. :class:`PredictionMixin` is the in-memory
estimator's ``predict``, ``transform`` and ``score``: one reading of ``X`` and
of the sensitive features serves both the labels and the score. ``fit``
validates ``X`` with the same :meth:`PredictionMixin._check_X`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.base import TransformerMixin
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_is_fitted, validate_data

from fairkm.bounds import decided_threads, losses, standing_of
from fairkm.utils._inputs import paired, read_weights, row_index
from fairkm.utils._sensitive import with_intersections

from . import _kernels
from ._docstrings import fill_estimator_docstring
from ._engine import Stats

__all__ = ["PredictionMixin", "Predictor"]


@dataclass(frozen=True)
class Predictor:
    """What prediction needs of a fitted model: centres, encoding, weights and statistics.

    Small and free of rows, so it can travel to Dask workers.
    """

    centers: np.ndarray  # (k, d)
    encoding: object  # SensitiveEncoding
    attribute_weights: np.ndarray
    fairness_weight: float
    intersections: object  # the estimator's intersections
    cluster_exponent: int  # e of the fitted fairness term
    counts: np.ndarray  # (k,)
    value_counts: np.ndarray  # (V, k)
    num_sums: np.ndarray  # (B, k)

    def read(self, sensitive_features, n_rows):
        """Read new rows' sensitive features against the fitted attributes (names and kinds)."""
        if self.encoding.n_attributes == 0:
            raise ValueError(
                "sensitive_features were given, but the model was fitted without them."
            )
        # The fit checked the intersected attributes are categorical.
        sensitive_features = with_intersections(sensitive_features, self.intersections,
                                                numeric=False)
        return self.encoding.check(sensitive_features, n_samples=n_rows)

    def terms(self, features, n_samples=None, sample_weight=None):
        """Return kernel terms for rows read by :meth:`read`, priced as in the fit."""
        return self.encoding.terms(
            features, self.attribute_weights, n_samples=n_samples, unseen_slot=True,
            sample_weight=sample_weight, cluster_exponent=self.cluster_exponent,
        )

    def _fitted_statistics(self, terms):
        """Return the fitted statistics, with a zero count in each attribute's unseen-value slot."""
        k, d = self.centers.shape
        stats = Stats(k, d, terms)
        stats.centers[:] = self.centers.T
        stats.counts[:] = self.counts
        # Insert a zero row after each attribute's block of fitted values.
        stats.value_counts[:] = np.insert(
            self.value_counts, self.encoding.value_offsets()[1:], 0.0, axis=0
        )
        stats.num_sums[:] = self.num_sums
        stats.set_cat_dev(terms)
        return stats

    def predict(self, X, sensitive_features=None):
        """Labels of the rows of ``X`` (a validated float64 C-contiguous array).

        Without sensitive features, the nearest centre; with them, the cluster
        where inserting the row alone raises the fitted objective least.
        """
        if sensitive_features is None:
            return self.labels(X, None)
        return self.labels(X, self.read(sensitive_features, X.shape[0]))

    def labels(self, X, features):
        """:meth:`predict` for sensitive features already read (None: the nearest centre).

        The call decides its thread count once (:func:`fairkm.bounds.decided_threads`)
        for its parallel kernel.
        """
        labels = np.empty(X.shape[0], dtype=np.int64)
        with decided_threads():
            if features is None:
                _kernels.nearest_center(X, self.centers, labels)
                return labels
            terms = self.terms(features)
            stats = self._fitted_statistics(terms)
            _kernels.cheapest_insertion(X, terms.kernel(self.fairness_weight), stats.kernel(),
                                        labels)
        return labels



class PredictionMixin(TransformerMixin):
    """``predict``, ``transform`` and ``score`` of :class:`fairkm.FairKM` on in-memory rows.

    A ``TransformerMixin`` itself: scikit-learn wraps for ``set_output`` only
    the ``transform`` a class defines, so it is this class's that gets wrapped.
    """

    def _check_X(self, X, reset=True):
        """Validate ``X`` as dense float64, refusing sparse input with the cost of densifying."""
        if sparse.issparse(X):
            n, d = X.shape
            raise TypeError(
                f"FairKM needs dense X: it keeps dense centres and prices every move over all "
                f"{d} features. X is a sparse {n} x {d} matrix; as a dense array "
                f"(X.toarray()) it takes {n * d * 8 / 1e9:.3g} GB. For high-dimensional sparse "
                "data such as text, reduce it first (for instance to a few hundred dimensions "
                "with sklearn.decomposition.TruncatedSVD), then cluster."
            )
        return validate_data(self, X, dtype=np.float64, order="C", reset=reset)

    @fill_estimator_docstring
    def predict(self, X, *, sensitive_features=None):
        """Assign new points to clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New non-sensitive data.
        sensitive_features : array-like, Series or DataFrame, default=None
            The new points' sensitive attributes, with the fitted attributes in
            the fitted order. ``None``: each point goes to its nearest centre,
            which ignores fairness (see Notes).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of each point.

        Warns
        -----
        %(warns_without_sensitive)s

        Notes
        -----
        With ``sensitive_features``, each point goes to the cluster where
        inserting it alone into the fitted clustering raises the fitted
        objective least (same ``fairness_weight_``, dataset proportions and
        standardisation as in ``fit``); points are priced independently, so
        the result does not depend on their order. A categorical value never
        seen in ``fit`` counts as a value of dataset proportion 0.

        A model fitted with ``max_deviation`` compares the result with each
        point at its nearest centre: where that leaves some attribute's mean
        over the clusters or worst cluster further from the new rows' mix (by
        a distance the reports measure, Euclidean or Wasserstein; see
        ``bound_repair_``), the nearest centres are returned instead. Its
        clusters sit near the dataset's mix, where pricing each point alone
        sends every point of one kind to the one cluster short of it. The
        labels then depend on the batch as a whole (never on its order).

        Without ``sensitive_features`` new points go to their nearest centre,
        as K-Means would put them, and most of the fairness is lost (the
        README's Quickstart measures it on Adult). A model fitted with
        sensitive features (and a positive weight) therefore warns when they
        are missing.
        """
        return self._labels(*self._read_new(X, sensitive_features))

    def _read_new(self, X, sensitive_features):
        """Validate new rows once: ``(predictor, X, their sensitive features read or None)``."""
        check_is_fitted(self)
        sensitive_features = paired(sensitive_features, row_index(X), name="sensitive_features")
        X = self._check_X(X, reset=False)
        predictor = self._predictor()
        features = (None if sensitive_features is None
                    else predictor.read(sensitive_features, X.shape[0]))
        return predictor, X, features

    def _labels(self, predictor, X, features):
        """Predict on validated ``X`` and sensitive features already read (or None)."""
        if features is None:
            self._warn_if_predicting_blind()
            return predictor.labels(X, features)
        labels = predictor.labels(X, features)
        if getattr(self, "bound_repair_", None) is None:
            return labels
        # A bounded model's clusters sit close to the mix, where pricing each row alone sends
        # every row of a kind to the one cluster short of it: never further from the mix
        # than nearest-centre assignment.
        nearest = predictor.labels(X, None)
        if losses(standing_of(nearest, features), standing_of(labels, features)):
            return nearest
        return labels

    @fill_estimator_docstring
    def transform(self, X):
        """Compute each point's distance to each cluster centre, as :class:`sklearn.cluster.KMeans`.

        Parameters
        ----------
        %(X_new)s

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_clusters)
            Euclidean distances to the centres (the space in which the
            K-Means term is measured; fairness plays no part).
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        with decided_threads():  # BLAS on the call's thread count
            return euclidean_distances(X, self.cluster_centers_)

    def score(self, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Negative objective of ``X`` under the fitted model.

        The points are assigned by :meth:`predict`; the K-Means term uses the
        fitted centres and, when ``sensitive_features`` are given, the
        fairness term compares each predicted cluster's mix over ``X`` with the
        fitted dataset proportions (and standardisation), with ``n`` the
        number (or total weight) of the rows of ``X``. Without them only the
        K-Means term counts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New non-sensitive data.
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : array-like, Series or DataFrame, default=None
            Sensitive attributes of ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row of ``X``, as in :meth:`fit`.

        Returns
        -------
        score : float
            Minus the objective (higher is better).

        Notes
        -----
        The score of :class:`sklearn.cluster.KMeans`, minus the K-Means term,
        ignores fairness; so does this one without ``sensitive_features``, and
        with them it depends on ``fairness_weight_``. To choose settings by
        fairness within a price, use a fairness-aware scorer
        (:mod:`fairkm.metrics`).
        """
        index = row_index(X)
        predictor, X, features = self._read_new(X, sensitive_features)
        labels = self._labels(predictor, X, features)
        # Weights brought near 1 by a power of two (exact), as in fit.
        weights, scale = read_weights(sample_weight, X.shape[0], index)
        weights = None if weights is None else weights / scale
        unit = np.zeros(0) if weights is None else weights
        inertia = scale * _kernels.inertia(X, self.cluster_centers_, unit, labels)
        if features is None:
            return -inertia
        total = X.shape[0] if weights is None else float(weights.sum())
        terms = predictor.terms(features, n_samples=total, sample_weight=weights)
        stats = Stats(self.n_clusters, X.shape[1], terms)
        stats.recompute(X, terms, labels)
        return -(inertia + self.fairness_weight_ * stats.fairness(terms))
