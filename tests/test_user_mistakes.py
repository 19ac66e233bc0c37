"""Mistakes new users made, each caught: a warning or an error that says what to do."""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.bounds import fair_assignment
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import DataWarning


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(600, n_values=(2, 3), numeric=1, random_state=0)
    return X, sensitive


def quietly(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.fit(*args, **kwargs)


@pytest.mark.parametrize("scale", [1e-300, 1e-6, 1 / 2000, 3.0, 1e6, 1e155, 1e300])
def test_weights_scaled_alike_give_the_same_clustering_and_numbers(blobs, scale):
    """Only the weights' ratios matter: any common scale, even near float64's limits."""
    X, sensitive = blobs
    weights = 1.0 + np.arange(len(X)) % 3
    plain = quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive,
                    sample_weight=weights)
    scaled = quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive,
                     sample_weight=weights * scale)
    assert_array_equal(scaled.labels_, plain.labels_)
    for name in ("cost_increase_", "unfairness_ratio_", "attribute_fairness_",
                 "cluster_deviation_", "relative_weight_"):
        assert_allclose(getattr(scaled, name), getattr(plain, name), rtol=1e-9, atol=1e-12)
    for name in ("inertia_", "objective_", "fairness_weight_"):
        assert_allclose(getattr(scaled, name), scale * getattr(plain, name), rtol=1e-9)
    assert_allclose(scaled.blind_clustering_.inertia, scale * plain.blind_clustering_.inertia,
                    rtol=1e-9)
    # The K-Means score of the same labels scales alike.
    with pytest.warns(UserWarning, match="none were given"):
        scores = (scaled.score(X, sample_weight=weights * scale),
                  plain.score(X, sample_weight=weights))
    assert_allclose(scores[0], scale * scores[1], rtol=1e-9)
    # New rows are priced as rows of the fit's mean weight: the same predictions at any scale.
    new_rows, new_sensitive, _ = make_sensitive_blobs(300, n_values=(2, 3), numeric=1,
                                                      random_state=1)
    assert_array_equal(scaled.predict(new_rows, sensitive_features=new_sensitive),
                       plain.predict(new_rows, sensitive_features=new_sensitive))
    assert_allclose(scaled.score(new_rows, sensitive_features=new_sensitive,
                                 sample_weight=np.full(300, scale)),
                    scale * plain.score(new_rows, sensitive_features=new_sensitive),
                    rtol=1e-9)


def test_new_rows_weigh_as_a_row_of_the_fits_mean_weight(blobs):
    """Weights normalised to sum 1 once made every new row outweigh the whole dataset."""
    X, sensitive = blobs
    weights = 1.0 + np.arange(len(X)) % 3
    unit = quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive,
                   sample_weight=weights / weights.mean())
    normalised = quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive,
                         sample_weight=weights / weights.sum())
    new_rows, new_sensitive, _ = make_sensitive_blobs(300, n_values=(2, 3), numeric=1,
                                                      random_state=1)
    wanted = unit.predict(new_rows, sensitive_features=new_sensitive)
    assert_array_equal(normalised.predict(new_rows, sensitive_features=new_sensitive), wanted)
    # Weights of mean 1 price a new row as weight 1, as an unweighted model does: the
    # prediction is the fitted model's with a new row of weight 1 (the kernel's own rule).
    assert unit._row_weight == pytest.approx(1.0, rel=1e-12)
    assert normalised._row_weight == pytest.approx(1.0 / len(X), rel=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-155, 3.7, 1e155, 1e300])
def test_bounded_assignment_reads_weights_by_their_ratios_alone(blobs, scale):
    """Weights near float64's limits once failed in HiGHS (1e155) or broke the bound (1e-300)."""
    X, sensitive = blobs
    centers = X[:3]
    for weights in (np.ones(len(X)), 1.0 + np.arange(len(X)) % 3):
        plain = fair_assignment(X, centers, sensitive, max_deviation=0.05,
                                sample_weight=weights)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scaled = fair_assignment(X, centers, sensitive, max_deviation=0.05,
                                     sample_weight=weights * scale)
        assert scaled.satisfied
        assert_array_equal(scaled.labels, plain.labels)
        for name in ("inertia", "assignment_cost", "lower_bound", "nearest_cost"):
            assert_allclose(getattr(scaled, name), scale * getattr(plain, name), rtol=1e-9)
    # A power of two is exact: the same programme, to the bit.
    exact = fair_assignment(X, centers, sensitive, max_deviation=0.05,
                            sample_weight=weights * 2.0**-990)
    assert exact.assignment_cost == plain.assignment_cost * 2.0**-990


def test_sensitive_features_passed_as_y_are_named_in_a_warning(blobs):
    X, sensitive = blobs
    with pytest.warns(UserWarning, match=r"got y but no sensitive_features.*ignores the sensitive"):
        model = FairKM(3, random_state=0).fit(X, sensitive)
    assert model.fairness_weight_ == 0.0
    quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive)  # the right call


@pytest.mark.parametrize(("column", "words"), [
    (lambda s: (s["s1"] == s["s1"].iloc[0]).astype(float), "is the indicator of 's1' = "),
    (lambda s: pd.factorize(s["s0"])[0] * 2.0, "encodes the sensitive attribute 's0'"),
    (lambda s: 3.0 * s["z0"] - 1.0, "is a copy of the numeric sensitive attribute 'z0'"),
])
def test_a_feature_that_copies_a_sensitive_attribute_is_named(blobs, column, words):
    X, sensitive = blobs
    X_with = np.c_[X, column(sensitive)]
    with pytest.warns(DataWarning, match=f"feature 'x{X.shape[1]}' {words}") as caught:
        FairKM(3, random_state=0).fit(X_with, sensitive_features=sensitive)
    assert len(caught) == 1
    # The features as a user would name them.
    frame = pd.DataFrame(X_with, columns=[f"f{j}" for j in range(X_with.shape[1])])
    with pytest.warns(DataWarning, match=f"feature 'f{X.shape[1]}'"):
        FairKM(3, random_state=0).fit(frame, sensitive_features=sensitive)


def test_diabetes_sex_left_among_the_features_is_named():
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int)})
    X = pd.DataFrame(StandardScaler().fit_transform(frame.drop(columns=["target"])),
                     columns=frame.columns.drop("target"))
    with pytest.warns(DataWarning, match="feature 'sex' encodes the sensitive attribute 'sex'"):
        FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)


def test_ordinary_features_are_not_flagged(blobs):
    X, sensitive = blobs
    rounded = np.c_[X, np.round(X[:, 0])]  # few levels, but not a sensitive attribute
    quietly(FairKM(3, random_state=0), rounded, sensitive_features=sensitive)


def test_a_two_valued_float_attribute_is_named_at_fit():
    frame = load_diabetes(scaled=False, as_frame=True).frame
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    with pytest.warns(DataWarning, match=r"'sex' is treated as numeric but has only 2 values"):
        model = FairKM(4, random_state=0).fit(X, sensitive_features=frame[["sex"]])
    assert list(model.sensitive_attributes_.kinds) == ["numeric"]
    quietly(FairKM(4, random_state=0), X, sensitive_features=frame[["sex"]].astype(int))


def test_sensitive_features_are_matched_to_X_by_label(blobs):
    """A reordered frame is aligned on X's index, in fit, predict and score."""
    X, sensitive = blobs
    index = pd.Index(np.arange(len(X)) * 7 + 3)
    frame = pd.DataFrame(X, index=index)
    shuffled = sensitive.set_index(index).sample(frac=1.0, random_state=0)
    assert not shuffled.index.equals(index)
    aligned = quietly(FairKM(3, random_state=0), frame, sensitive_features=shuffled)
    plain = quietly(FairKM(3, random_state=0), X, sensitive_features=sensitive)
    assert_array_equal(aligned.labels_, plain.labels_)
    assert_array_equal(aligned.predict(frame, sensitive_features=shuffled),
                       plain.predict(X, sensitive_features=sensitive))
    assert aligned.score(frame, sensitive_features=shuffled) == pytest.approx(
        plain.score(X, sensitive_features=sensitive))
    # Other labels cannot be matched: refused, not paired by position.
    with pytest.raises(ValueError, match="index that does not match X's"):
        FairKM(3).fit(frame, sensitive_features=sensitive.set_index(index + 1))
    # A fresh column (index 0..n-1) beside a filtered frame goes by position, with a word.
    with pytest.warns(UserWarning, match=r"default index 0..599 but X's index has other la"):
        by_position = FairKM(3, random_state=0).fit(frame, sensitive_features=sensitive)
    assert_array_equal(by_position.labels_, plain.labels_)
