"""One edge for the whole family: every member reads X, S and weights by the same rules.

In the spirit of scikit-learn's ``check_estimator``: each case below runs
against every estimator (and every function) it applies to, so a new member
cannot read its inputs its own way. The rules themselves live in
``fairkm.utils._inputs``; ``fairkm.dask.FairKM`` runs the same cases in test_dask.py
(it needs a cluster). Each case names the outside report it comes from.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from fairkm import FairKM
from fairkm.bounds import fair_assignment
from fairkm.cluster import ZGYA, BlindKMeans, BoundedKMeans
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import DataWarning, InvalidParameterError
from fairkm.metrics import check_bounds, fairness_report, make_fair_clustering_scorer
from fairkm.report import audit

K = 3

# name -> (make an estimator, takes sample_weight, reads the attributes' kinds)
ESTIMATORS = {
    "FairKM": (lambda **kw: FairKM(K, random_state=0, **kw), True),
    "BoundedKMeans": (lambda **kw: BoundedKMeans(K, max_deviation=0.2, random_state=0, **kw),
                      True),
    "ZGYA": (lambda **kw: ZGYA(K, random_state=0, **kw), False),
    "BlindKMeans": (lambda **kw: BlindKMeans(K, random_state=0, **kw), False),
}
WEIGHTED = [name for name, (_, weighted) in ESTIMATORS.items() if weighted]


def make(name, **params):
    return ESTIMATORS[name][0](**params)


@pytest.fixture(scope="module")
def data():
    """A filtered frame: X's index labels are not 0..n-1; one categorical attribute (ZGYA's)."""
    X, S, _ = make_sensitive_blobs(240, n_features=3, centers=3, n_values=(2,),
                                   cluster_std=2.0, random_state=0)
    index = pd.Index(np.arange(len(X)) * 3 + 5)
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=index)
    sensitive = S.iloc[:, 0].set_axis(index)
    weights = pd.Series(1.0 + np.arange(len(X)) % 4, index=index)
    return frame, sensitive, weights


def fit_quietly(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.fit(*args, **kwargs)


def shuffled(value, seed=1):
    return value.sample(frac=1.0, random_state=seed)


# ----------------------------------------------------------------------------- estimators


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("method", ["fit", "fit_predict"])
def test_attributes_passed_as_y_warn(data, name, method):
    """fit(X, S) and fit_predict(X, S) read S as y (found silent in four members)."""
    X, S, _ = data
    with pytest.warns(UserWarning, match=rf"{name}.fit got y but no sensitive_features"):
        getattr(make(name), method)(X, S)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_attributes_are_paired_with_x_by_label(data, name):
    """The same rows shuffled pair by label (found paired by position: AE 0.222 vs 0.065)."""
    X, S, _ = data
    aligned = fit_quietly(make(name), X, sensitive_features=S)
    by_label = fit_quietly(make(name), X, sensitive_features=shuffled(S))
    assert_array_equal(by_label.labels_, aligned.labels_)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_other_labels_are_refused_and_a_fresh_index_warns(data, name):
    """Labels that are not X's are refused; a 0..n-1 index beside other labels warns."""
    X, S, _ = data
    with pytest.raises(ValueError, match="sensitive_features has an index that does not match"):
        make(name).fit(X, sensitive_features=S.set_axis(S.index + 1))
    with pytest.warns(UserWarning, match="default index 0..239 but X's index has other labels"):
        by_position = make(name).fit(X, sensitive_features=S.reset_index(drop=True))
    # Paired by position, which here is right (both were made in the same order).
    assert_array_equal(by_position.labels_,
                       fit_quietly(make(name), X, sensitive_features=S).labels_)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_x_as_a_list_beside_a_frame_of_attributes(data, name):
    """X as a list beside S as a pandas object pairs by position (list.index crashed)."""
    X, S, _ = data
    plain = fit_quietly(make(name), X.to_numpy(), sensitive_features=S.to_numpy())
    listed = fit_quietly(make(name), X.to_numpy().tolist(), sensitive_features=S.to_frame())
    assert_array_equal(listed.labels_, plain.labels_)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_x_too_large_for_float64_is_refused(data, name):
    """1e200 in X overflows squared distances (BlindKMeans gave inertia inf, one cluster)."""
    X, S, _ = data
    with pytest.raises(ValueError, match="X is too large: its squared distances overflow"):
        make(name).fit(X * 1e200, sensitive_features=S)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_integers_beyond_int64_are_refused_by_name(name):
    """Huge ints passed the checks and crashed later (numba TypingError, OverflowError)."""
    with pytest.raises(InvalidParameterError,
                       match=r"'max_iter' parameter of \w+ must be an int in the range "
                             r"\[1, 9223372036854775807\]. Got 9223372036854775808 instead"):
        make(name, max_iter=2**63).fit(np.zeros((5, 1)) + np.arange(5)[:, None])


@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_feature_copying_an_attribute_is_named(data, name):
    """Caught by FairKM only."""
    X, S, _ = data
    copied = X.assign(copy=pd.factorize(S)[0] * 2.0)
    with pytest.warns(DataWarning, match="feature 'copy' encodes the sensitive attribute"):
        make(name).fit(copied, sensitive_features=S)


@pytest.mark.parametrize("name", ["FairKM", "BoundedKMeans", "ZGYA"])
def test_a_many_valued_integer_attribute_warns(data, name):
    """An integer attribute with 67 values was silently 67 categories in FairKM.fit."""
    X, S, _ = data
    ages = pd.Series(20 + np.arange(len(X)) % 40, index=X.index, name="age")
    with pytest.warns(DataWarning, match="'age' holds numbers with 40 distinct values"):
        make(name).fit(X, sensitive_features=ages)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_more_clusters_than_distinct_rows_warn(name):
    """k above the distinct rows gave duplicate centres silently (scikit-learn warns)."""
    X = np.repeat(np.array([[0.0], [1.0]]), 10, axis=0)
    S = np.arange(20) % 2
    with warnings.catch_warnings():
        # ZGYA and BoundedKMeans may add their own words; the shared one must be there.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.filterwarnings("ignore", "ZGYA: clusters emptied", ConvergenceWarning)
        with pytest.warns(ConvergenceWarning, match="distinct clusters"):
            make(name).fit(X, sensitive_features=S)


def test_warnings_point_at_the_users_call(data):
    """Warnings carried hard-coded stack depths, right only while the call chain kept its depth."""
    X, S, _ = data
    copied = X.assign(copy=pd.factorize(S)[0] * 2.0)
    ages = pd.Series(20 + np.arange(len(X)) % 40, name="age")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FairKM(K, random_state=0).fit(copied, sensitive_features=S)
        FairKM(K, random_state=0).fit(X, S)
        audit(np.arange(len(X)) % 2, sensitive_features=ages)
        FairKM(4, random_state=0).fit(np.repeat([[0.0], [1.0]], 10, axis=0),
                                      sensitive_features=np.arange(20) % 2)
        # A default index beside X's labels: paired by position, from any depth.
        FairKM(K, random_state=0).fit(X, sensitive_features=S.reset_index(drop=True))
        fairness_report(pd.Series(np.arange(len(X)) % 2, index=X.index),
                        sensitive_features=S.reset_index(drop=True))
    for what in ("encodes the sensitive attribute",  # DataWarning from FairKM.fit
                 "'age' holds numbers",  # DataWarning from audit
                 "FairKM.fit got y but no sensitive_features",
                 "found 2 distinct clusters"):
        assert [w.filename for w in caught if what in str(w.message)] == [__file__], what
    paired = [w.filename for w in caught if "has the default index" in str(w.message)]
    assert paired == [__file__, __file__]


@pytest.mark.parametrize("name", WEIGHTED)
def test_weights_are_paired_with_x_by_label(data, name):
    """A pandas sample_weight reordered was taken by position (47% of labels changed)."""
    X, S, w = data
    aligned = fit_quietly(make(name), X, sensitive_features=S, sample_weight=w)
    by_label = fit_quietly(make(name), X, sensitive_features=S, sample_weight=shuffled(w))
    assert_array_equal(by_label.labels_, aligned.labels_)


@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize("factor", [1e6, 1e-6, "sum to 1"])
def test_weights_scaled_alike_give_the_same_labels_and_predictions(data, name, factor):
    """The bounded paths relabelled 9-81 rows when weights were rescaled."""
    X, S, w = data
    scaled = w / w.sum() if factor == "sum to 1" else w * factor
    plain = fit_quietly(make(name), X, sensitive_features=S, sample_weight=w)
    other = fit_quietly(make(name), X, sensitive_features=S, sample_weight=scaled)
    assert_array_equal(other.labels_, plain.labels_)
    assert_allclose(other.inertia_, plain.inertia_ * float(scaled.iloc[0] / w.iloc[0]),
                    rtol=1e-9)
    assert_array_equal(other.predict(X, sensitive_features=S),
                       plain.predict(X, sensitive_features=S))


@pytest.mark.parametrize("name", WEIGHTED)
def test_too_few_rows_of_positive_weight_are_refused(data, name):
    """BoundedKMeans raised a raw HiGHS RuntimeError."""
    X, S, _ = data
    weights = np.zeros(len(X))
    weights[:K - 1] = 1.0
    with pytest.raises(ValueError, match=rf"n_samples={K - 1} \(of positive weight\) should be"):
        make(name).fit(X, sensitive_features=S, sample_weight=weights)


def test_set_output_applies_to_transform(data):
    """set_output(transform="pandas") was ignored by transform (not by fit_transform)."""
    X, S, _ = data
    model = fit_quietly(FairKM(K, random_state=0).set_output(transform="pandas"), X,
                        sensitive_features=S)
    out = model.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [f"fairkm{j}" for j in range(K)]
    assert out.index.equals(X.index)
    assert_allclose(out.to_numpy(), np.linalg.norm(
        X.to_numpy()[:, None, :] - model.cluster_centers_[None], axis=2))


# ----------------------------------------------------------------------------- functions


def _labels(data):
    X, S, _ = data
    return pd.Series(fit_quietly(FairKM(K, random_state=0), X, sensitive_features=S).labels_,
                     index=X.index)


FUNCTIONS = {
    "fairness_report": lambda X, labels, S, w: fairness_report(
        labels, sensitive_features=S, sample_weight=w).select_dtypes("number").to_numpy(),
    "check_bounds": lambda X, labels, S, w: check_bounds(
        labels, S, max_deviation=0.05, sample_weight=w).table["deviation"].to_numpy(),
    "fair_assignment": lambda X, labels, S, w: fair_assignment(
        X, X.to_numpy()[:K], S, max_deviation=0.1, sample_weight=w).labels,
    "audit": lambda X, labels, S, w: audit(
        labels, X, sensitive_features=S, sample_weight=w, n_init=1,
        check_data=False).fairness.select_dtypes("number").to_numpy(),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_pair_attributes_and_weights_by_label(data, name):
    """fairness_report and fair_assignment paired shuffled pandas inputs by position."""
    X, S, w = data
    labels = _labels(data)
    aligned = FUNCTIONS[name](X, labels, S, w)
    by_label = FUNCTIONS[name](X, labels, shuffled(S), shuffled(w, seed=2))
    assert_allclose(by_label, aligned)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_read_only_the_weights_ratios(data, name):
    X, S, w = data
    labels = _labels(data)
    assert_allclose(FUNCTIONS[name](X, labels, S, w / w.sum()), FUNCTIONS[name](X, labels, S, w),
                    rtol=1e-9)


def test_the_scorer_reads_only_the_weights_ratios(data):
    """A model scored "within budget" or "out of budget" by the weights' unit."""
    X, S, w = data
    model = fit_quietly(FairKM(K, random_state=0), X, sensitive_features=S, sample_weight=w)
    scorer = make_fair_clustering_scorer(0.05, n_init=2)
    scores = [scorer(model, X, sensitive_features=S, sample_weight=w * f)
              for f in (1.0, 1e-6, 1e6, 1.0 / w.sum())]
    assert_allclose(scores, scores[0], rtol=1e-9)
