"""Rows of weight 0 are dropped rows: they sit at their nearest centre and move no other row.

The README says a weight of zero is the same as dropping the row. So every
estimator that takes ``sample_weight`` must give the other rows the labels
of a fit without those rows, and label each zero-weight row as the nearest
of the centres it reports (recounted here with NumPy: the argmin of the
squared distances to ``cluster_centers_``). BlindKMeans and ZGYA take no
weights, so they have none to check.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from fairkm import BoundedKMeans, FairKM
from fairkm.bounds import fair_assignment

pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.one_thread


def data(n=300, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X[: n // 3] += 3.0
    S = np.c_[rng.integers(0, 2, n), rng.integers(0, 3, n)]
    w = rng.integers(1, 4, n).astype(float)
    w[rng.random(n) < 0.15] = 0.0
    return X, S, w


def nearest(X, centers):
    return np.argmin(((X[:, None, :] - centers[None]) ** 2).sum(axis=2), axis=1)


def check(X, w, labels, centers, dropped_labels):
    zero = w == 0
    assert zero.any()
    assert_array_equal(labels[zero], nearest(X[zero], centers))
    assert_array_equal(labels[~zero], dropped_labels)


@pytest.mark.parametrize("make", [
    lambda: FairKM(4, random_state=0),
    lambda: BoundedKMeans(4, max_deviation=0.05, random_state=0),
], ids=["FairKM", "BoundedKMeans"])
def test_zero_weight_rows_are_dropped_rows_at_their_nearest_centre(make):
    X, S, w = data()
    keep = w > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, sensitive_features=S, sample_weight=w)
        dropped = make().fit(X[keep], sensitive_features=S[keep], sample_weight=w[keep])
    check(X, w, model.labels_, model.cluster_centers_, dropped.labels_)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), max_iter=st.integers(1, 5))
def test_fair_assignment_leaves_zero_weight_rows_at_the_nearest_returned_centre(seed, max_iter):
    X, S, w = data(90, seed)
    if not (w == 0).any():
        w[0] = 0.0
    keep = w > 0
    centers = X[np.random.default_rng(seed).choice(np.flatnonzero(keep), 3, replace=False)]
    kwargs = dict(max_deviation=0.1, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fair_assignment(X, centers, S, sample_weight=w, **kwargs)
        dropped = fair_assignment(X[keep], centers, S[keep], sample_weight=w[keep], **kwargs)
    check(X, w, result.labels, result.centers, dropped.labels)
