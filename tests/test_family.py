"""The estimators that take sensitive_features share scikit-learn's contract.

Each of them, inside a routed Pipeline, receives sensitive_features without a
set_*_request call, in fit, fit_predict and (where it takes them) predict, and
gives the labels a direct fit on the transformed data gives. fairkm.dask's
FairKM has the same test in test_dask.py (it needs a cluster).
"""

import inspect

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.baselines import ZGYA, BlindKMeans
from fairkm.bounds import BoundedKMeans
from fairkm.datasets import make_sensitive_blobs

ESTIMATORS = {
    "FairKM": lambda: FairKM(3, random_state=0),
    "BlindKMeans": lambda: BlindKMeans(3, random_state=0),
    "ZGYA": lambda: ZGYA(3, random_state=0),
    "BoundedKMeans": lambda: BoundedKMeans(3, max_deviation=0.2, random_state=0),
}


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        300, n_features=3, centers=3, n_values=(2,), cluster_std=2.0, random_state=0
    )
    # ZGYA takes one categorical attribute: every estimator gets the same one.
    return X, sensitive.iloc[:, 0]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_routed_pipeline_passes_sensitive_features(blobs, name):
    X, sensitive = blobs
    scaled = StandardScaler().fit_transform(X)
    direct = ESTIMATORS[name]().fit(scaled, sensitive_features=sensitive)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(), ESTIMATORS[name]())
        assert_array_equal(pipe.fit(X, sensitive_features=sensitive)[-1].labels_,
                           direct.labels_)
        assert_array_equal(pipe.fit_predict(X, sensitive_features=sensitive), direct.labels_)
        takes = inspect.signature(type(direct).predict).parameters
        if "sensitive_features" in takes:
            assert_array_equal(pipe.predict(X, sensitive_features=sensitive),
                               direct.predict(scaled, sensitive_features=sensitive))
        else:
            # Routing never hands predict an argument it would refuse: the
            # pipeline says nobody takes it.
            with pytest.raises(TypeError, match="not routed to any object"):
                pipe.predict(X, sensitive_features=sensitive)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_fit_predict_is_scikit_learns_and_forwards_every_keyword(blobs, name):
    X, sensitive = blobs
    model = ESTIMATORS[name]()
    assert type(model).fit_predict is sklearn.base.ClusterMixin.fit_predict
    assert_array_equal(model.fit_predict(X, sensitive_features=sensitive),
                       ESTIMATORS[name]().fit(X, sensitive_features=sensitive).labels_)


def test_fit_transform_is_fit_then_transform(blobs):
    X, sensitive = blobs
    weights = np.linspace(0.5, 2.0, len(X))
    distances = FairKM(3, random_state=0).fit_transform(
        X, sensitive_features=sensitive, sample_weight=weights)
    model = FairKM(3, random_state=0).fit(X, sensitive_features=sensitive, sample_weight=weights)
    assert_array_equal(distances, model.transform(X))


def test_requests_follow_the_signatures():
    for make in ESTIMATORS.values():
        model = make()
        routing = model.get_metadata_routing()
        for method in ("fit", "predict", "score"):
            function = getattr(type(model), method, None)
            takes = function is not None and (
                "sensitive_features" in inspect.signature(function).parameters)
            requested = getattr(routing, method).requests.get("sensitive_features")
            assert requested is (True if takes else None), (type(model).__name__, method)
