"""What every estimator taking ``sensitive_features`` shares with scikit-learn.

``FairKM`` (in memory and on Dask), ``BoundedKMeans``, ``ZGYA`` and
``BlindKMeans`` all read the sensitive attributes beside ``X``. Without a
request, scikit-learn's metadata routing refuses to pass them through a
``Pipeline`` or ``cross_validate``; and ``fit_predict``/``fit_transform`` are
scikit-learn's own (``ClusterMixin``, ``TransformerMixin``), which forward any
keyword to ``fit``, so no estimator redefines them. Each declares what its
parameters accept in ``_parameter_constraints`` and checks them with
:meth:`SensitiveFeaturesMixin._validate_params` as ``fit`` starts (see
``_params.py``), so a refusal reads the same across the family.
"""

from __future__ import annotations

import inspect

from sklearn.base import ClusterMixin

from ._params import validate_params

__all__ = ["SensitiveFeaturesMixin"]

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

    # What each constructor parameter accepts (see _params.py); every subclass declares all.
    _parameter_constraints: dict = {}

    def _validate_params(self):
        """Check every constructor parameter against ``_parameter_constraints``."""
        validate_params(self)
