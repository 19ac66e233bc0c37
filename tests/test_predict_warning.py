"""predict without sensitive features on a model fitted with them: a warning, and what it costs."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.model_selection import train_test_split

from fairkm import FairKM
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.metrics import fairness_report


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(400, n_values=(2, 3), random_state=0)
    return X, sensitive


def test_predict_without_sensitive_features_warns(blobs):
    X, sensitive = blobs
    model = FairKM(3, random_state=0).fit(X, sensitive_features=sensitive)
    names = list(model.sensitive_attributes_.names)
    with pytest.warns(UserWarning, match=re.escape(f"fitted with sensitive features {names}")):
        model.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X, sensitive_features=sensitive)


@pytest.mark.parametrize(
    "kwargs", [dict(), dict(relative_weight=0.0), dict(fairness_weight=0.0)],
    ids=["fitted without", "relative weight 0", "absolute weight 0"],
)
def test_no_warning_when_fairness_played_no_part(blobs, kwargs):
    X, sensitive = blobs
    given = None if not kwargs else sensitive
    model = FairKM(3, random_state=0, **kwargs).fit(X, sensitive_features=given)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)


@pytest.mark.slow
def test_predict_numbers_in_the_readme_hold_on_adult(shared_data):
    """The README's Adult numbers: fairness on new rows with and without their attributes."""
    adult = fetch_adult(data_home=shared_data)
    X_train, X_test, S_train, S_test = train_test_split(
        adult.features.to_numpy(), adult.sensitive, test_size=0.3, random_state=0)
    model = FairKM(5, random_state=0).fit(X_train, sensitive_features=S_train)

    def mean_cw(labels, sensitive):
        """The clusters' mean distance from the dataset's mix, averaged over the attributes."""
        return fairness_report(labels, sensitive_features=sensitive).loc["mean", "CW"]

    with pytest.warns(UserWarning, match="fitted with sensitive features"):
        blind = mean_cw(model.predict(X_test), S_test)
    fair = mean_cw(model.predict(X_test, sensitive_features=S_test), S_test)
    train = mean_cw(model.labels_, S_train)
    kmeans = mean_cw(KMeans(5, n_init=10, random_state=0).fit(X_train).predict(X_test), S_test)
    measured = np.round([train, fair, blind, kmeans], 3)
    np.testing.assert_allclose(measured, [0.025, 0.067, 0.101, 0.107], atol=0.006)
    assert train < fair < blind < kmeans
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    for number in ("0.025", "0.067", "0.101", "0.107"):
        assert number in readme
