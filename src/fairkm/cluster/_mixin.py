"""What every estimator taking ``sensitive_features`` shares with scikit-learn.

``FairKM`` (in memory and on Dask), ``BoundedKMeans``, ``ZGYA`` and
``BlindKMeans`` all read the sensitive attributes beside ``X``. Without a
request, scikit-learn's metadata routing refuses to pass them through a
``Pipeline`` or ``cross_validate``. ``fit_predict`` passes ``y`` on to ``fit`` (scikit-learn's
drops it), so ``fit_predict(X, S)`` warns that S was read as ``y`` as
``fit(X, S)`` does; ``fit_transform`` is scikit-learn's own, which passes it. Each declares
what its parameters accept in scikit-learn's ``_parameter_constraints`` (see
``fairkm.utils._param_validation``) and checks them with scikit-learn's
``_validate_params`` as ``fit`` starts, so a refusal reads the same across the family.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import ClusterMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._docstrings import fill_estimator_docstring

__all__ = ["NearestCenterMixin", "SensitiveFeaturesMixin"]

# The methods whose ``sensitive_features`` a routed meta-estimator passes on by default.
ROUTED_METHODS = ("fit", "predict", "score")


class SensitiveFeaturesMixin(ClusterMixin):
    """Request ``sensitive_features`` by default in every method that takes them.

    A subclass whose ``fit``, ``predict`` or ``score`` has a
    ``sensitive_features`` parameter requests it for that method, so a routed
    ``Pipeline``, ``cross_validate`` or ``GridSearchCV`` passes it on without
    ``set_*_request`` calls (they are what these estimators are for). Methods
    without the parameter request nothing: routing never hands them an argument
    they would refuse. ``sample_weight``, as everywhere in scikit-learn, must
    be requested (``set_fit_request(sample_weight=True)``).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in ROUTED_METHODS:
            function = getattr(cls, method, None)
            if inspect.isfunction(function) and (
                "sensitive_features" in inspect.signature(function).parameters
            ):
                # scikit-learn reads every class attribute whose name contains
                # "__metadata_request__<method>", along the MRO.
                setattr(cls, f"_{cls.__name__}__metadata_request__{method}",
                        {"sensitive_features": True})

    def fit_predict(self, X, y=None, **kwargs):
        """Fit the clustering on ``X`` and return the cluster of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to cluster.
        y : Ignored
            Not used, present for API consistency (given without
            ``sensitive_features``, it warns that the attributes were passed
            in its place).
        **kwargs : dict
            ``sensitive_features``, ``sample_weight`` and whatever else
            ``fit`` takes.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of each row.
        """
        return self.fit(X, y, **kwargs).labels_


class NearestCenterMixin:
    """``predict`` for an estimator whose new rows go to their nearest centre (BlindKMeans, ZGYA).

    Subclasses say how in ``_nearest_centers(X)``, given ``X`` validated.
    """

    def _check_X(self, X, reset=True):
        return validate_data(self, X, dtype=np.float64, order="C", reset=reset)

    @fill_estimator_docstring
    def predict(self, X):
        """Assign each sample of ``X`` to its nearest centre.

        Parameters
        ----------
        %(X_new)s

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Index of the nearest centre (the lowest on ties).

        Notes
        -----
        Prediction ignores fairness: the fairness term is a property of a
        whole clustering, not of a single new point.
        """
        check_is_fitted(self)
        return self._nearest_centers(self._check_X(X, reset=False))
