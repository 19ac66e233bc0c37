"""S-blind K-Means ("K-Means(N)"): scikit-learn's KMeans behind FairKM's ``fit`` signature."""

from __future__ import annotations

import copy

from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans

from fairkm.bounds import decided_threads
from fairkm.utils._inputs import feature_names, read_fit, warn_on_fit
from fairkm.utils._param_validation import (
    FAMILY_CONSTRAINTS,
    StrOptions,
    at_least,
)
from fairkm.utils._sensitive import check_sensitive_features

from ._docstrings import fill_estimator_docstring
from ._mixin import NearestCenterMixin, SensitiveFeaturesMixin

__all__ = ["BlindKMeans"]


@fill_estimator_docstring
class BlindKMeans(NearestCenterMixin, SensitiveFeaturesMixin, BaseEstimator):
    """K-Means on the non-sensitive features only ("K-Means(N)", S-blind).

    A thin wrapper of :class:`sklearn.cluster.KMeans` whose ``fit`` accepts
    ``sensitive_features`` and ignores them, so it drops into experiment code
    written for :class:`~fairkm.FairKM`. It reads its inputs as FairKM does
    (a pandas ``sensitive_features`` is paired with ``X``'s rows by index
    label; ``fit(X, S)`` warns that S went to ``y``; ``X`` whose squared
    distances would overflow is refused), but it takes no ``sample_weight``:
    for weighted S-blind K-Means use
    ``sklearn.cluster.KMeans(...).fit(X, sample_weight=w)``.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        Initialisation, as in :class:`sklearn.cluster.KMeans`.
    n_init : "auto" or int, default="auto"
        Number of initialisations, as in :class:`sklearn.cluster.KMeans`.
    max_iter : int, default=300
        Maximum number of Lloyd iterations per initialisation.
    tol : float, default=1e-4
        Relative tolerance on the centres' movement, as in
        :class:`sklearn.cluster.KMeans`.
    %(random_state)s

    Attributes
    ----------
    kmeans_ : sklearn.cluster.KMeans
        The fitted scikit-learn estimator.
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Cluster centres.
    inertia_ : float
        Sum of squared distances of the points to their centre.
    n_iter_ : int
        Number of Lloyd iterations of the kept initialisation.
    n_threads_ : int
        The OpenMP threads scikit-learn's KMeans ran on: the count the fit
        decided (``FAIRKM_NUM_THREADS``, else the CPUs, under
        ``OMP_NUM_THREADS``). ``predict`` decides its own count the same way.
    %(fitted_features)s

    See Also
    --------
    fairkm.FairKM : Fair K-Means over many sensitive attributes.
    ZGYA : Variational Fair Clustering over one sensitive attribute.

    Examples
    --------
    >>> import numpy as np
    >>> from fairkm.cluster import BlindKMeans
    >>> X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    >>> group = np.array(["a", "a", "a", "b", "b", "b"])
    >>> model = BlindKMeans(n_clusters=2, random_state=0).fit(X, sensitive_features=group)
    >>> sorted(np.bincount(model.labels_).tolist())
    [3, 3]
    """

    _parameter_constraints = {
        **FAMILY_CONSTRAINTS,
        "init": [StrOptions({"k-means++", "random"}), callable, "array-like"],
        "n_init": [StrOptions({"auto"}), at_least(1)],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None, *, sensitive_features=None):
        """Compute K-Means clustering of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-sensitive features.
        y : Ignored
            Not used, present for API consistency. Given without
            ``sensitive_features`` it warns, as every fit of the family does:
            ``fit(X, S)`` passes the attributes as ``y``.
        sensitive_features : array-like, pandas Series or DataFrame, default=None
            Ignored by the clustering. When given it is still validated (one
            row per sample; a pandas object is paired with ``X``'s rows by
            index label), so that a mismatch in experiment code is caught, and
            a feature of ``X`` that copies an attribute warns (a
            ``UserWarning``): with it among the features the clustering is
            not blind to that attribute.

        Returns
        -------
        self : BlindKMeans
            Fitted estimator.
        """
        self._validate_params()
        inputs = read_fit(self, X, y, sensitive_features, None, self._check_X)
        X = inputs.X
        if inputs.sensitive_features is not None:
            features = check_sensitive_features(inputs.sensitive_features,
                                                n_samples=X.shape[0])
            # Nothing reads the attributes' kinds here, so only the copies among the
            # features are worth a warning; FairKM fitted beside it warns about kinds.
            warn_on_fit(X, feature_names(self, X.shape[1]), features, kinds_by_dtype=False,
                        how_to_weight="leave it out of X (BlindKMeans takes no sample_weight; "
                        "FairKM and BoundedKMeans take it as sample_weight)")
        with decided_threads():  # one thread count for the fit, as the family's
            self.kmeans_ = KMeans(
                n_clusters=self.n_clusters,
                init=self.init,
                n_init=self.n_init,
                max_iter=self.max_iter,
                tol=self.tol,
                random_state=self.random_state,
            ).fit(X)
        self.labels_ = self.kmeans_.labels_
        self.cluster_centers_ = self.kmeans_.cluster_centers_
        self.inertia_ = float(self.kmeans_.inertia_)
        self.n_iter_ = int(self.kmeans_.n_iter_)
        # scikit-learn keeps the count it decided once per fit (_openmp_effective_n_threads)
        # on the fitted KMeans; there is no public name for it.
        self.n_threads_ = int(self.kmeans_._n_threads)
        return self

    def _nearest_centers(self, X):
        with decided_threads() as count:
            # scikit-learn's predict runs on the count its fit decided (kept as _n_threads),
            # whatever the pools' limits; a copy carries this call's count instead, so a
            # FAIRKM_NUM_THREADS set since the fit is honoured (or refused) as the family's is.
            kmeans = copy.copy(self.kmeans_)
            kmeans._n_threads = count
            return kmeans.predict(X)
