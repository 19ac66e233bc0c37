"""The guarantee asked (``max_deviation``) in fairness_report, the audit and its reports."""


import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm import metrics

MEASURE_COLUMNS = [m.name for m in metrics.MEASURES.values() if m.kind == "fairness"]
BOUND_COLUMNS = ["deviation", "bound", "within bound"]


# --------------------------------------------------------------------------- a NumPy reference


def _ref_deviation(labels, column, weights, kind):
    """Largest deviation of any non-empty cluster's share of any value from the dataset's."""
    labels, column = np.asarray(labels), np.asarray(column)
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, float)
    values = np.unique(column)
    p = np.array([w[column == v].sum() for v in values]) / w.sum()
    worst = 0.0
    for c in np.unique(labels):
        size = w[labels == c].sum()
        if size == 0:
            continue
        for v, p_v in zip(values, p, strict=True):
            share = w[(labels == c) & (column == v)].sum() / size
            if kind == "additive":
                d = abs(share - p_v)
            elif p_v == 0:
                d = 0.0
            elif share == 0:
                d = 1.0
            else:  # the smallest delta with (1 - delta) p <= share <= p / (1 - delta)
                d = max(1 - share / p_v, 1 - p_v / share)
            worst = max(worst, d)
    return worst


@st.composite
def weighted_problems(draw):
    n = draw(st.integers(2, 24))
    labels = draw(st.lists(st.integers(-1, 4), min_size=n, max_size=n))
    a = draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    weights = draw(st.none() | st.lists(st.integers(0, 3), min_size=n, max_size=n).filter(
        lambda w: sum(w) > 0))
    return labels, pd.DataFrame({"a": a, "b": b}), weights


@settings(deadline=None, max_examples=60)
@given(problem=weighted_problems(), kind=st.sampled_from(["additive", "multiplicative"]),
       bound=st.sampled_from([0.0, 0.1, 0.3, 0.6]))
def test_deviation_matches_a_numpy_reference(problem, kind, bound):
    labels, sensitive, weights = problem
    report = metrics.fairness_report(labels, sensitive_features=sensitive,
                                     sample_weight=weights, max_deviation=bound,
                                     deviation_kind=kind)
    plain = metrics.fairness_report(labels, sensitive_features=sensitive,
                                    sample_weight=weights)
    pd.testing.assert_frame_equal(report[MEASURE_COLUMNS], plain)
    want = {name: _ref_deviation(labels, sensitive[name], weights, kind) for name in "ab"}
    for name, deviation in want.items():
        assert_allclose(report.loc[name, "deviation"], deviation, rtol=1e-9, atol=1e-12)
        assert report.loc[name, "bound"] == bound
        assert report.loc[name, "within bound"] == (deviation <= bound + 1e-9)
    assert_allclose(report.loc["mean", "deviation"], np.mean(list(want.values())))
    assert np.isnan(report.loc["mean", "bound"])
    assert report.loc["mean", "within bound"] == report.loc[["a", "b"], "within bound"].all()


def test_by_hand():
    # Dataset a=5, b=3, c=2 (0.5, 0.3, 0.2); cluster 0 (6 rows) has a=4/6, cluster 1 (4
    # rows) a=1/4, b=2/4: the largest additive deviation is |1/4 - 1/2| = 0.25.
    labels = [0] * 6 + [1] * 4
    sensitive = list("aaaabc") + list("abbc")
    report = metrics.fairness_report(labels, sensitive_features=sensitive, max_deviation=0.2)
    assert list(report.columns) == MEASURE_COLUMNS + BOUND_COLUMNS
    assert report.loc["s0", "deviation"] == pytest.approx(0.25)
    assert report.loc["s0", "bound"] == 0.2
    assert not report.loc["s0", "within bound"]
    assert report["within bound"].dtype == "boolean"
    # Multiplicative: cluster 1's a is 1/4 against 1/2, the band needs 1 - delta <= 1/2.
    mult = metrics.fairness_report(labels, sensitive_features=sensitive, max_deviation=0.5,
                                   deviation_kind="multiplicative")
    assert mult.loc["s0", "deviation"] == pytest.approx(0.5)
    assert mult.loc["s0", "within bound"]
    # MPV is Bera's violation of the band at delta: 0 exactly when the band holds.
    at_delta = metrics.fairness_report(labels, sensitive_features=sensitive, delta=0.5,
                                       max_deviation=0.5, deviation_kind="multiplicative")
    assert at_delta.loc["s0", "MPV"] == pytest.approx(0.0, abs=1e-12)


def test_default_leaves_the_report_as_it_was():
    rng = np.random.RandomState(0)
    sensitive = pd.DataFrame({"g": rng.choice(list("abc"), 40), "age": rng.normal(size=40)})
    labels = rng.randint(0, 3, 40)
    report = metrics.fairness_report(labels, sensitive_features=sensitive)
    assert list(report.columns) == MEASURE_COLUMNS
    assert (report.dtypes == np.float64).all()


def test_numeric_and_unbounded_attributes_get_nan_and_na():
    rng = np.random.RandomState(1)
    sensitive = pd.DataFrame({"g": rng.choice(list("ab"), 40), "h": rng.choice(list("xyz"), 40),
                              "age": rng.normal(size=40)})
    labels = rng.randint(0, 3, 40)
    report = metrics.fairness_report(labels, sensitive_features=sensitive,
                                     max_deviation={"g": 1.0}, intersections=[("g", "h")])
    assert list(report.index) == ["g", "h", "age", "g & h", "mean"]
    assert report.loc["g", "within bound"]
    assert report.loc["mean", "within bound"]  # every bounded row: g alone
    for name in ("h", "g & h"):  # reported, not bounded
        assert np.isnan(report.loc[name, "bound"])
        assert report.loc[name, "within bound"] is pd.NA
        assert report.loc[name, "deviation"] > 0
    assert np.isnan(report.loc["age", "deviation"])
    assert report.loc["age", "within bound"] is pd.NA
    assert report.loc["mean", "deviation"] == pytest.approx(
        report.loc[["g", "h", "g & h"], "deviation"].mean())
    intersection = pd.Series([f"{g}|{h}" for g, h in zip(sensitive["g"], sensitive["h"],
                                                             strict=True)])
    assert report.loc["g & h", "deviation"] == pytest.approx(
        _ref_deviation(labels, intersection, None, "additive"))


@pytest.mark.parametrize("value, error, match", [
    (-0.05, ValueError, r"max_deviation must be a finite number >= 0, got -0\.05"),
    (np.inf, ValueError, r"max_deviation .*got inf"),
    ("0.1", TypeError, r"max_deviation must be a float .*'0\.1'"),
    ({"nope": 0.1}, ValueError, r"max_deviation names 'nope'"),
    ({"g": -1.0}, ValueError, r"max_deviation\['g'\] .* got -1\.0"),
])
def test_bad_max_deviation(value, error, match):
    with pytest.raises(error, match=match):
        metrics.fairness_report([0, 1, 0, 1], sensitive_features=pd.DataFrame(
            {"g": list("abba")}), max_deviation=value)


def test_bad_deviation_kind():
    with pytest.raises(ValueError, match=r"deviation_kind must be .*got 'ratio'"):
        metrics.fairness_report([0, 1], sensitive_features=["a", "b"], max_deviation=0.1,
                                deviation_kind="ratio")
    with pytest.raises(ValueError, match=r"max_deviation must be < 1 .*got 1\.0"):
        metrics.fairness_report([0, 1], sensitive_features=["a", "b"], max_deviation=1.0,
                                deviation_kind="multiplicative")
