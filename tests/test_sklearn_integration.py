"""FairKM in scikit-learn's machinery: metadata routing, transform, set_output, sparse input,
intersectional groups."""

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import fairness_report
from fairkm.utils._sensitive import with_intersections


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        600, n_features=3, centers=4, n_values=(2, 3), cluster_std=2.0, random_state=0
    )
    return X, sensitive


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


# --------------------------------------------------------------------------- routing


def test_routed_pipeline_passes_sensitive_features_everywhere(blobs, routing):
    X, sensitive = blobs
    pipe = make_pipeline(StandardScaler(), FairKM(3, random_state=0))
    labels = pipe.fit_predict(X, sensitive_features=sensitive)
    direct = FairKM(3, random_state=0).fit(
        StandardScaler().fit_transform(X), sensitive_features=sensitive
    )
    assert_array_equal(labels, direct.labels_)
    pipe.fit(X, sensitive_features=sensitive)
    assert_array_equal(pipe[-1].labels_, direct.labels_)
    scaled = pipe[0].transform(X)
    assert_array_equal(pipe.predict(X, sensitive_features=sensitive),
                       direct.predict(scaled, sensitive_features=sensitive))
    assert pipe.score(X, sensitive_features=sensitive) == pytest.approx(
        direct.score(scaled, sensitive_features=sensitive)
    )
    # Without them, the nearest centre (and a warning that fairness is ignored).
    with pytest.warns(UserWarning, match="none were given"):
        assert_array_equal(pipe.predict(X), direct.predict(scaled))


def test_routed_cross_validate_and_grid_search(blobs, routing):
    X, sensitive = blobs
    pipe = make_pipeline(StandardScaler(), FairKM(3, random_state=0))
    scores = cross_validate(pipe, X, params={"sensitive_features": sensitive}, cv=3)
    assert np.all(np.isfinite(scores["test_score"]))
    search = GridSearchCV(pipe, {"fairkm__n_clusters": [2, 3, 4]}, cv=3).fit(
        X, sensitive_features=sensitive
    )
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # The routed scores price fairness too: they differ from the K-Means term alone.
    plain = GridSearchCV(make_pipeline(StandardScaler(), FairKM(3, random_state=0)),
                         {"fairkm__n_clusters": [2, 3, 4]}, cv=3).fit(X)
    assert np.all(search.cv_results_["mean_test_score"] < plain.cv_results_["mean_test_score"])


def test_sample_weight_is_routed_when_requested(blobs, routing):
    X, sensitive = blobs
    weights = np.where(np.arange(len(X)) % 4 == 0, 0.0, 1.0)
    model = FairKM(3, random_state=0).set_fit_request(sample_weight=True)
    # Every step that could take sample_weight says whether it does.
    pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), model)
    pipe.fit(X, sensitive_features=sensitive, sample_weight=weights)
    direct = FairKM(3, random_state=0).fit(
        StandardScaler().fit_transform(X), sensitive_features=sensitive, sample_weight=weights
    )
    assert_array_equal(pipe[-1].labels_, direct.labels_)


def test_grid_search_without_routing_scores_every_setting(blobs):
    """The K-Means way: no NaN scores (Pipeline.score passes sample_weight on)."""
    X, _ = blobs
    search = GridSearchCV(make_pipeline(StandardScaler(), FairKM(3, random_state=0)),
                          {"fairkm__n_clusters": [2, 3, 4]}, cv=3, error_score="raise").fit(X)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_score_on_rows_that_leave_a_cluster_empty_does_not_warn(blobs):
    X, sensitive = blobs
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    one = model.labels_ == model.labels_[0]
    # filterwarnings=error: a 0/0 in the centres would fail here.
    score = model.score(X[one], sensitive_features=sensitive[one])
    assert np.isfinite(score)


# --------------------------------------------------------------------------- transform


def test_transform_gives_distances_to_the_centres(blobs):
    X, sensitive = blobs
    model = FairKM(4, random_state=0)
    distances = model.fit_transform(X, sensitive_features=sensitive)
    want = np.sqrt(((X[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2))
    assert_allclose(distances, want, rtol=1e-12)
    assert_allclose(model.transform(X[:10]), want[:10], rtol=1e-12)
    assert_array_equal(model.get_feature_names_out(), [f"fairkm{c}" for c in range(4)])


def test_set_output_pandas(blobs):
    X, sensitive = blobs
    model = FairKM(4, random_state=0).set_output(transform="pandas")
    frame = model.fit_transform(pd.DataFrame(X, columns=["a", "b", "c"]),
                                sensitive_features=sensitive)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [f"fairkm{c}" for c in range(4)]


# --------------------------------------------------------------------------- sparse X


def test_sparse_X_is_refused_with_the_cost_of_densifying(blobs):
    X, sensitive = blobs
    with pytest.raises(TypeError, match=r"sparse 600 x 3 matrix.*1.44e-05 GB.*TruncatedSVD"):
        FairKM(4).fit(sparse.csr_matrix(X), sensitive_features=sensitive)
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    with pytest.raises(TypeError, match="needs dense X"):
        model.predict(sparse.csr_matrix(X), sensitive_features=sensitive)


# --------------------------------------------------------------------------- intersections


def test_intersections_are_extra_attributes(blobs):
    X, sensitive = blobs
    model = FairKM(4, intersections=[("s0", "s1")], attribute_weights={"s0 & s1": 2.0},
                   random_state=0).fit(X, sensitive_features=sensitive)
    assert list(model.sensitive_attributes_.names) == ["s0", "s1", "s0 & s1"]
    combined = with_intersections(sensitive, [("s0", "s1")])["s0 & s1"]
    assert_array_equal(model.sensitive_attributes_.categories[2], np.unique(combined))
    same = FairKM(4, attribute_weights=[1.0, 1.0, 2.0], random_state=0).fit(
        X, sensitive_features=sensitive.assign(**{"s0 & s1": combined})
    )
    assert_array_equal(model.labels_, same.labels_)
    # predict takes the raw attributes and forms the combinations itself.
    assert_array_equal(model.predict(X, sensitive_features=sensitive),
                       same.predict(X, sensitive_features=sensitive.assign(**{"s0 & s1":
                                                                                combined})))
    # The combined groups end fairer than without the intersection.
    plain = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    frame = pd.DataFrame({"both": combined})
    ae = [fairness_report(m.labels_, sensitive_features=frame).loc["both", "AE"]
          for m in (model, plain)]
    assert ae[0] < ae[1]


@pytest.mark.parametrize(
    ("intersections", "match"),
    [
        ([("s0", "nope")], "names \\['nope'\\]"),
        ([("s0",)], "two or more"),
        ([("s0", "s0")], "twice"),
        ("s0", "'intersections' parameter of FairKM must be None or an array-like. Got 's0'"),
    ],
)
def test_invalid_intersections(blobs, intersections, match):
    X, sensitive = blobs
    with pytest.raises((ValueError, TypeError), match=match):
        FairKM(4, intersections=intersections).fit(X, sensitive_features=sensitive)


def test_numeric_attributes_cannot_be_intersected():
    X, sensitive, _ = make_sensitive_blobs(200, n_values=(2,), numeric=1, random_state=0)
    with pytest.raises(ValueError, match=r"numeric attributes \['z0'\]"):
        FairKM(3, intersections=[("s0", "z0")]).fit(X, sensitive_features=sensitive)
