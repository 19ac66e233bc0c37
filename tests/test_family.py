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
from fairkm.cluster import ZGYA, BlindKMeans, BoundedKMeans
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import InvalidParameterError

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
def test_fit_predict_forwards_y_and_every_keyword(blobs, name):
    X, sensitive = blobs
    model = ESTIMATORS[name]()
    assert_array_equal(model.fit_predict(X, sensitive_features=sensitive),
                       ESTIMATORS[name]().fit(X, sensitive_features=sensitive).labels_)
    # scikit-learn's fit_predict drops y: the attributes passed in its place went unnoticed.
    with pytest.warns(UserWarning, match=rf"{name}.fit got y but no sensitive_features"):
        ESTIMATORS[name]().fit_predict(X, sensitive)


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


# --------------------------------------------------------------------------- parameters


def family():
    """Every estimator class of the family, the Dask one where dask is installed."""
    classes = [FairKM, BlindKMeans, ZGYA, BoundedKMeans]
    try:
        from fairkm.dask import FairKM as DaskFairKM
    except ImportError:
        return classes
    return [*classes, DaskFairKM]


@pytest.mark.parametrize("cls", family(), ids=lambda cls: cls.__module__ + "." + cls.__name__)
def test_every_parameter_is_declared_and_every_default_is_accepted(cls):
    model = cls()
    assert set(cls._parameter_constraints) == set(model.get_params(deep=False))
    model._validate_params()  # the defaults


# A value wrong for each parameter the family shares, and the one message every member
# must give for it (scikit-learn's words, the class named): the parameter, what it accepts,
# and the value received.
SHARED_REFUSALS = {
    "n_clusters": (0, "must be an int in the range [1, 9223372036854775807]. Got 0 instead."),
    "max_iter": (2.5, "must be an int in the range [1, 9223372036854775807]. Got 2.5 instead."),
    "tol": (-1.0, "must be a float in the range [0.0, inf). Got -1.0 instead."),
    "random_state": ("seed", "must be an int in the range [0, 4294967295], an instance of "
                             "'numpy.random.mtrand.RandomState' or None. Got 'seed' instead."),
}


@pytest.mark.parametrize("parameter", SHARED_REFUSALS)
@pytest.mark.parametrize("cls", family(), ids=lambda cls: cls.__module__ + "." + cls.__name__)
def test_a_shared_parameter_is_refused_in_the_same_words_by_every_member(cls, parameter):
    value, message = SHARED_REFUSALS[parameter]
    with pytest.raises(InvalidParameterError) as refused:
        cls(**{parameter: value})._validate_params()
    assert str(refused.value) == f"The {parameter!r} parameter of {cls.__name__} {message}"


@pytest.mark.parametrize("make", [FairKM, ZGYA, BlindKMeans, BoundedKMeans])
def test_fit_refuses_a_bad_parameter_before_reading_the_data(make):
    # The data are refused too (a string X), so only a check run first can name the parameter.
    with pytest.raises(InvalidParameterError,
                       match=r"'n_clusters' parameter of \w+ must be an int .* Got 0 instead"):
        make(n_clusters=0).fit("not data", sensitive_features=None)


def test_init_centres_are_checked_in_the_same_words(blobs):
    X, sensitive = blobs
    centres = X[:3]
    for make in (FairKM, ZGYA, BoundedKMeans):
        with pytest.raises(ValueError, match=r"^n_init must be 1 when init is an array of "
                                             r"centres, got 2\.$"):
            make(3, init=centres, n_init=2).fit(X, sensitive_features=sensitive)
    for make in (FairKM, ZGYA, BoundedKMeans):
        with pytest.raises(ValueError, match=r"^init array must have shape \(n_clusters, "
                                             r"n_features\)=\(3, 3\), got \(2, 3\)\.$"):
            make(3, init=centres[:2]).fit(X, sensitive_features=sensitive)
