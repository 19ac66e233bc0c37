"""Sample weights in fairkm.metrics: a row of weight w counts as w rows.

The definition is checked three ways: integer weights against the rows
repeated, zero weights against the rows dropped, and any weights against plain
NumPy loops over the weighted definitions (``_metrics_reference``).
"""

import inspect
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm import metrics

from . import _metrics_reference as ref
from .conftest import examples

FAIRNESS = {m.name: m.function for m in metrics.MEASURES.values() if m.kind == "fairness"}
QUALITY = {m.name: m.function for m in metrics.MEASURES.values() if m.kind == "quality"}
# Values that are 0 in exact arithmetic may come out as rounding residues.
TOL = {"rtol": 1e-10, "atol": 1e-12}


# --------------------------------------------------------------------------- strategies


# Zero, or far enough from it that the weighted sums keep their digits.
WEIGHTS = st.one_of(st.just(0.0), st.floats(0.01, 5))


@st.composite
def weighted_problems(draw, weights=WEIGHTS, max_n=20):
    """Labels, a categorical and a numeric attribute, and weights (some zero)."""
    n = draw(st.integers(2, max_n))
    labels = draw(st.lists(st.integers(-1, 4), min_size=n, max_size=n))
    categorical = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    numeric = np.array(draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n))) / 4
    w = np.array(draw(st.lists(weights, min_size=n, max_size=n)), dtype=float)
    assume(w.sum() > 0)
    kept = numeric[w > 0]
    assume(kept.max() > kept.min())
    return np.array(labels), np.array(categorical), numeric, w


INTEGER_WEIGHTS = st.integers(0, 3)


@st.composite
def weighted_clusterings(draw, weights=WEIGHTS, max_n=10):
    """Integer-valued X (exact distances, also in scikit-learn), two clusterings, weights."""
    n = draw(st.integers(2, max_n))
    X = np.array(draw(st.lists(st.integers(-5, 5), min_size=2 * n, max_size=2 * n)), float)
    a = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    b = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(weights, min_size=n, max_size=n)), dtype=float)
    assume(w.sum() > 0)
    return X.reshape(n, 2), a, b, w


def _frame(categorical, numeric):
    return pd.DataFrame({"cat": categorical, "num": numeric})


def _silhouette_defined(labels, weights):
    keep = np.asarray(weights) > 0
    return 2 <= len(set(np.asarray(labels)[keep].tolist())) <= np.sum(weights) - 1


# --------------------------------------------------------------------------- the definition


@settings(max_examples=examples(80))
@given(problem=weighted_problems(), convention=st.sampled_from(["principled", "published"]))
def test_weighted_report_matches_reference(problem, convention):
    labels, categorical, numeric, w = problem
    report = metrics.fairness_report(labels, sensitive_features=_frame(categorical, numeric),
                                     sample_weight=w, wasserstein=convention)
    want = {
        "cat": ref.fairness(labels, categorical, w, numeric=False, wasserstein=convention),
        "num": ref.fairness(labels, numeric, w, numeric=True),
    }
    for attribute, measures in want.items():
        for measure, value in measures.items():
            assert_allclose(report.loc[attribute, measure], value, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(problem=weighted_problems(weights=INTEGER_WEIGHTS))
def test_integer_weights_repeat_rows_in_every_fairness_measure(problem):
    labels, categorical, numeric, w = problem
    S = _frame(categorical, numeric)
    rows = np.repeat(np.arange(len(labels)), w.astype(int))
    repeated = {"labels": labels[rows], "sensitive_features": S.iloc[rows]}
    got = metrics.fairness_report(labels, sensitive_features=S, sample_weight=w)
    want = metrics.fairness_report(**repeated)
    assert_allclose(got.to_numpy(), want.to_numpy(), **TOL)
    for name, func in FAIRNESS.items():
        got = func(labels, sensitive_features=S, sample_weight=w, multioutput="raw_values")
        assert_allclose(got, func(**repeated, multioutput="raw_values"), **TOL, err_msg=name)


@settings(max_examples=examples(60))
@given(problem=weighted_problems(weights=st.sampled_from([0.0, 0.5, 1.0, 2.5])))
def test_zero_weights_drop_rows_in_every_fairness_measure(problem):
    labels, categorical, numeric, w = problem
    S = _frame(categorical, numeric)
    keep = w > 0
    got = metrics.fairness_report(labels, sensitive_features=S, sample_weight=w)
    want = metrics.fairness_report(labels[keep], sensitive_features=S[keep],
                                   sample_weight=w[keep])
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@settings(max_examples=examples(60))
@given(problem=weighted_clusterings(weights=INTEGER_WEIGHTS), squared=st.booleans())
def test_integer_weights_repeat_rows_in_every_quality_measure(problem, squared):
    X, a, b, w = problem
    rows = np.repeat(np.arange(len(a)), w.astype(int))
    kw = {"reference_labels": b, "squared": squared}
    if _silhouette_defined(a, w):
        got = metrics.clustering_report(X, a, sample_weight=w, **kw)
        want = metrics.clustering_report(X[rows], a[rows], reference_labels=b[rows],
                                         squared=squared)
        assert list(got.index) == list(want.index) == ["CO", "SH", "DevC", "DevO"]
        assert_allclose(got.to_numpy(), want.to_numpy(), **TOL)
    for name in ("CO", "DevC", "DevO"):
        params = inspect.signature(QUALITY[name]).parameters
        given_ = {"X": X, "labels": a, "reference_labels": b}
        got = QUALITY[name](**{k: v for k, v in given_.items() if k in params}, sample_weight=w)
        repeated = {"X": X[rows], "labels": a[rows], "reference_labels": b[rows]}
        want = QUALITY[name](**{k: v for k, v in repeated.items() if k in params})
        assert_allclose(got, want, **TOL, err_msg=name)


@settings(max_examples=examples(60))
@given(problem=weighted_clusterings(weights=st.sampled_from([0.0, 1.0, 1.5, 3.0])))
def test_zero_weights_drop_rows_in_every_quality_measure(problem):
    X, a, b, w = problem
    keep = w > 0
    assume(_silhouette_defined(a, w))
    got = metrics.clustering_report(X, a, reference_labels=b, sample_weight=w)
    want = metrics.clustering_report(X[keep], a[keep], reference_labels=b[keep],
                                     sample_weight=w[keep])
    pd.testing.assert_series_equal(got, want, check_exact=True)


@settings(max_examples=examples(60))
@given(problem=weighted_clusterings(), squared=st.booleans())
def test_weighted_quality_matches_reference(problem, squared):
    X, a, b, w = problem
    # Non-integer coordinates: the silhouette's distances are no longer exact integers.
    X = X / 3 + 0.1
    assert_allclose(metrics.clustering_objective(X, a, sample_weight=w, squared=squared),
                    ref.objective(X, a, w, squared), rtol=1e-9, atol=1e-12)
    assert_allclose(metrics.centroid_deviation(X, a, b, sample_weight=w),
                    ref.centroid_deviation(X, a, b, w), rtol=1e-9, atol=1e-12)
    if w.sum() > 1:
        assert_allclose(metrics.object_pair_deviation(a, b, sample_weight=w),
                        ref.pair_deviation(a, b, w), rtol=1e-9, atol=1e-15)
    if _silhouette_defined(a, w):
        assert_allclose(metrics.silhouette(X, a, sample_weight=w), ref.silhouette(X, a, w),
                        rtol=1e-9, atol=1e-12)


@settings(max_examples=examples(40))
@given(problem=weighted_problems(weights=st.sampled_from([0.0, 1.0])))
def test_unit_weights_are_no_weights(problem):
    labels, categorical, numeric, w = problem
    S = _frame(categorical, numeric)
    ones = np.ones(len(labels))
    pd.testing.assert_frame_equal(
        metrics.fairness_report(labels, sensitive_features=S, sample_weight=ones),
        metrics.fairness_report(labels, sensitive_features=S), check_exact=True,
    )
    for func in FAIRNESS.values():
        assert func(labels, sensitive_features=S, sample_weight=ones) == func(
            labels, sensitive_features=S
        )
    # 0/1 weights are bit-identical to dropping the rows: the kept rows weigh 1.
    keep = w > 0
    pd.testing.assert_frame_equal(
        metrics.fairness_report(labels, sensitive_features=S, sample_weight=w),
        metrics.fairness_report(labels[keep], sensitive_features=S[keep]), check_exact=True,
    )


def test_unit_weights_are_no_weights_in_quality():
    rng = np.random.default_rng(0)
    X, a, b = rng.normal(size=(40, 3)), rng.integers(0, 4, 40), rng.integers(0, 3, 40)
    kw = {"reference_labels": b, "sample_size": 30, "random_state": 1}
    pd.testing.assert_series_equal(
        metrics.clustering_report(X, a, sample_weight=np.ones(40), **kw),
        metrics.clustering_report(X, a, **kw), check_exact=True,
    )


# --------------------------------------------------------------------------- by hand


def test_weighted_categorical_by_hand():
    # Rows (cluster, value, weight): (0, a, 3), (0, b, 1), (1, a, 1), (1, b, 3), (1, b, 0).
    # Dataset: a = 4, b = 4 of 8 -> (1/2, 1/2). Cluster 0: (3/4, 1/4); cluster 1: (1/4, 3/4).
    # Both clusters are 1/4 from the dataset in each value: ED = sqrt(2)/4, TV = 1/4 (so
    # the size-weighted AW and the per-cluster CW are both 1/4).
    # Balance: 1/3 in both. MPV: 3/4 - 0.5/0.8 = 1/8 above, 0.4 - 1/4 = 0.15 below -> 0.15.
    labels, s, w = [0, 0, 1, 1, 1], list("ababb"), [3, 1, 1, 3, 0]
    report = metrics.fairness_report(labels, sensitive_features=s, sample_weight=w)
    kl = 2 * (0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25))
    expected = [math.sqrt(2) / 4, 0.25, 0.25, math.sqrt(2) / 4, 0.25, 1 / 3, kl, 0.15]
    assert_allclose(report.loc["s0"].to_numpy(), expected, rtol=1e-12)


def test_weighted_numeric_by_hand():
    # Values 0 (weight 3) and 4 (weight 1): weighted mean 1, variance (3 + 9) / 4 = 3.
    # Cluster 0 = the 0s, cluster 1 = the 4: mean gaps 1 and 3 raw units, sizes 3 and 1.
    # AE = (3 * 1 + 1 * 3) / 4 = 3/2 raw units; ME = 3. W1 equals the mean gap here (each
    # cluster is a point mass): AW = 3/2, MW = 3. Divided by sigma = sqrt(3).
    sigma = math.sqrt(3)
    got = metrics.fairness_report([0, 1], sensitive_features=[0.0, 4.0], sample_weight=[3, 1])
    assert_allclose(got.loc["s0", ["AE", "AW", "ME", "MW"]].to_numpy(float),
                    [1.5 / sigma, 1.5 / sigma, 3 / sigma, 3 / sigma], rtol=1e-12)


def test_weighted_quality_by_hand():
    # X = 0, 1 | 10: weights 1, 3 | 2. Cluster 0's weighted mean 3/4: CO = (3/4)^2 + 3 (1/4)^2
    # = 12/16 = 3/4. SH: row 0: a = 3 * 1 / (4 - 1) = 1, b = 10 -> 9/10; row 1: a = 1 * 1 / 3,
    # b = 9 -> (9 - 1/3) / 9 = 26/27; row 2: a = 0 (its copy), b = (1 * 10 + 3 * 9) / 4 -> 1.
    # SH = (1 * 9/10 + 3 * 26/27 + 2 * 1) / 6.
    X, labels, w = [[0.0], [1.0], [10.0]], [0, 0, 1], [1, 3, 2]
    report = metrics.clustering_report(X, labels, sample_weight=w)
    assert report["CO"] == pytest.approx(0.75, rel=1e-12)
    assert report["SH"] == pytest.approx((0.9 + 3 * 26 / 27 + 2) / 6, rel=1e-12)
    # DevO against one cluster: disagreeing pairs are those across clusters, 4 * 2 = 8
    # of C(6, 2) = 15.
    assert metrics.object_pair_deviation(labels, [0, 0, 0], sample_weight=w) == pytest.approx(
        8 / 15, rel=1e-12
    )


def test_weighted_silhouette_sample_size_scores_the_drawn_rows():
    rng = np.random.default_rng(3)
    X, labels = rng.normal(size=(50, 2)), rng.integers(0, 3, 50)
    w = rng.uniform(1, 4, 50)
    rows = np.random.RandomState(7).permutation(50)[:20]
    got = metrics.silhouette(X, labels, sample_weight=w, sample_size=20, random_state=7)
    assert got == pytest.approx(ref.silhouette(X[rows], labels[rows], w[rows]), rel=1e-12)


def test_pair_deviation_needs_two_weighted_rows():
    with pytest.raises(ValueError, match="sample_weight sums to 0.5"):
        metrics.object_pair_deviation([0, 1], [0, 0], sample_weight=[0.25, 0.25])
    assert metrics.object_pair_deviation([0, 1], [5, 6], sample_weight=[0.25, 0.25]) == 0.0


def test_silhouette_counts_weighted_rows():
    # Three distinct labels on three rows: too few rows unweighted, enough with weights 2.
    X = [[0.0], [1.0], [5.0]]
    with pytest.raises(ValueError, match="n_samples - 1"):
        metrics.silhouette(X, [0, 1, 2])
    # Each cluster is a row and its copy: a = 0, so every row scores 1.
    assert metrics.silhouette(X, [0, 1, 2], sample_weight=[2, 2, 2]) == 1.0
    with pytest.raises(ValueError, match="total weight - 1 distinct labels, got 3 distinct"):
        metrics.silhouette(X, [0, 1, 2], sample_weight=[1, 1, 1.5])


# --------------------------------------------------------------------------- bad weights


def _call(name, sample_weight):
    X, labels, ref, S = [[0.0], [1.0], [5.0], [6.0]], [0, 0, 1, 1], [0, 1, 1, 1], list("abab")
    kwargs = {"sample_weight": sample_weight}
    if name == "fairness_report":
        return metrics.fairness_report(labels, sensitive_features=S, **kwargs)
    if name == "clustering_report":
        return metrics.clustering_report(X, labels, reference_labels=ref, **kwargs)
    func = metrics.MEASURES[name].function
    if name in FAIRNESS:
        return func(labels, sensitive_features=S, **kwargs)
    given_ = {"X": X, "labels": labels, "reference_labels": ref}
    params = inspect.signature(func).parameters
    return func(**{k: v for k, v in given_.items() if k in params}, **kwargs)


EVERY_ENTRY_POINT = [*metrics.MEASURES, "fairness_report", "clustering_report"]


@pytest.mark.parametrize("name", EVERY_ENTRY_POINT)
@pytest.mark.parametrize(
    ("sample_weight", "error", "match"),
    [
        ([1, 1], ValueError, "sample_weight has 2 entries but labels has 4"),
        ([1, -1, 1, 1], ValueError, "sample_weight must be finite and >= 0, got -1 at row 1"),
        ([1, 1, np.nan, 1], ValueError, "got nan at row 2"),
        ([np.inf, 1, 1, 1], ValueError, "got inf at row 0"),
        ([0, 0, 0.0, 0], ValueError, "sample_weight is zero for every row"),
        ([[1, 1], [1, 1]], ValueError, r"must be 1-D, got an array of shape \(2, 2\)"),
        (True, TypeError, "sample_weight must be a number or an array-like of shape"),
        ("1111", TypeError, "sample_weight must be a number or an array-like of shape"),
        (list("abcd"), TypeError, "sample_weight must hold real numbers, got an array of dtype"),
        ([True, False, True, True], TypeError, "dtype bool"),
        ([1, None, 1, 1], TypeError, "dtype object"),
    ],
)
def test_bad_sample_weight(name, sample_weight, error, match):
    with pytest.raises(error, match=match):
        _call(name, sample_weight)


@pytest.mark.parametrize("name", EVERY_ENTRY_POINT)
def test_a_number_as_sample_weight_weighs_every_row_alike(name):
    # As in scikit-learn's estimators: 3.0 means [3.0, 3.0, 3.0, 3.0].
    got, want = _call(name, 3.0), _call(name, [3.0] * 4)
    if isinstance(got, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    elif isinstance(got, pd.Series):
        pd.testing.assert_series_equal(got, want)
    else:
        assert got == want or (np.isnan(got) and np.isnan(want))


@pytest.mark.parametrize("name", EVERY_ENTRY_POINT)
def test_every_entry_point_takes_sample_weight(name):
    # Weights 1, 3 | 1, 1 against the rows repeated: one call per public entry point.
    got = _call(name, [1, 3, 1, 1])
    X, labels, ref, S = [[0.0], [1.0], [5.0], [6.0]], [0, 0, 1, 1], [0, 1, 1, 1], list("abab")
    rows = [0, 1, 1, 1, 2, 3]
    pick = np.asarray
    if name == "fairness_report":
        want = metrics.fairness_report(pick(labels)[rows], sensitive_features=pick(S)[rows])
    elif name == "clustering_report":
        want = metrics.clustering_report(pick(X)[rows], pick(labels)[rows],
                                         reference_labels=pick(ref)[rows])
    else:
        func = metrics.MEASURES[name].function
        given_ = {"X": pick(X)[rows], "labels": pick(labels)[rows],
                  "reference_labels": pick(ref)[rows], "sensitive_features": pick(S)[rows]}
        params = inspect.signature(func).parameters
        want = func(**{k: v for k, v in given_.items() if k in params})
    assert_allclose(np.asarray(got, float), np.asarray(want, float), **TOL)
    assert "sample_weight" in inspect.signature(
        metrics.MEASURES[name].function if name in metrics.MEASURES else getattr(metrics, name)
    ).parameters


def test_numeric_attribute_constant_on_the_weighted_rows():
    # Varies only through a row of weight zero: as if dropped, it has zero variance.
    with pytest.raises(ValueError, match="zero variance"):
        metrics.average_euclidean([0, 1, 1], sensitive_features=[1.0, 2.0, 2.0],
                                  sample_weight=[0, 1, 3])
    with pytest.raises(ValueError, match="zero variance"):
        metrics.fairness_report([0, 1, 1, 0], sensitive_features=[1.0, 2.0, 2.0, 5.0],
                                sample_weight=[0, 1, 0.5, 0])
