"""The guarantee asked (``max_deviation``) in fairness_report, the audit and its reports."""


import html

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm import FairKM, metrics
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import check_bounds
from fairkm.report import audit

from .conftest import examples

MEASURE_COLUMNS = [m.name for m in metrics.MEASURES.values() if m.kind == "fairness"]
BOUND_COLUMNS = ["deviation", "bound", "within bound"]

# What a bound accepts, in scikit-learn's words.
BOUND = (r"a float in the range \[0.0, 1.0\] \(a share, not a percentage: 0.05 for 5%\) or an "
         r"instance of 'dict'")


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


@settings(max_examples=examples(60))
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
    (-0.05, ValueError, rf"'max_deviation' parameter of fairness_report must be {BOUND}. "
                        r"Got -0\.05 instead"),
    (np.inf, ValueError, rf"'max_deviation' .* must be {BOUND}. Got inf instead"),
    ("0.1", TypeError, rf"'max_deviation' .* must be {BOUND}. Got '0\.1' instead"),
    ({"nope": 0.1}, ValueError, r"max_deviation names 'nope'"),
    ({"g": -1.0}, ValueError, r"max_deviation\['g'\]\" parameter of fairness_report must be a "
                              r"float in the range \[0.0, 1.0\] \(a share, not a percentage: "
                              r"0.05 for 5%\). Got -1\.0 instead"),
])
def test_bad_max_deviation(value, error, match):
    with pytest.raises(error, match=match):
        metrics.fairness_report([0, 1, 0, 1], sensitive_features=pd.DataFrame(
            {"g": list("abba")}), max_deviation=value)


def test_bad_deviation_kind():
    with pytest.raises(ValueError, match=r"'deviation_kind' parameter of fairness_report must "
                                         r"be a str among .*'additive'.*. Got 'ratio' instead"):
        metrics.fairness_report([0, 1], sensitive_features=["a", "b"], max_deviation=0.1,
                                deviation_kind="ratio")
    with pytest.raises(ValueError, match=r"max_deviation must be < 1 .*got 1\.0"):
        metrics.fairness_report([0, 1], sensitive_features=["a", "b"], max_deviation=1.0,
                                deviation_kind="multiplicative")


# --------------------------------------------------------------------------- the audit

ODD = "sex <script>&"  # an attribute name that HTML must escape
BLIND = "S-blind K-Means (best of 10)"


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(400, n_values=(2, 3), numeric=1, random_state=0)
    sensitive.columns = [ODD, "region", "age"]
    return X, sensitive


@pytest.fixture(scope="module")
def fair(blobs):
    X, sensitive = blobs
    return FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive)


def test_audit_checks_the_bound_of_both_clusterings(blobs, fair):
    X, sensitive = blobs
    report = audit(fair, X, sensitive_features=sensitive, max_deviation=0.05)
    assert list(report.bounds) == ["FairKM", BLIND]
    for name, labels in report.labels.items():
        want = check_bounds(labels, sensitive, max_deviation=0.05, numeric_sensitive=["age"])
        pd.testing.assert_frame_equal(report.bounds[name].table, want.table)
    guarantee = [text for kind, text in report.headline() if kind == "guarantee"]
    assert guarantee == [f"FairKM: {report.bounds['FairKM'].summary()}",
                         f"{BLIND}: {report.bounds[BLIND].summary()}"]
    # Neither meets so tight a bound on these blobs: the sentence says no and where.
    assert all("Every cluster within 0.05 of the dataset's mix: no, largest violation" in t
               for t in guarantee)
    text = " ".join(report.to_text().split())
    for sentence in guarantee:
        assert " ".join(sentence.split()) in text


def test_a_bound_met_says_yes_and_where_it_comes_closest(blobs, fair):
    X, sensitive = blobs
    report = audit(fair, X, sensitive_features=sensitive, max_deviation={"region": 0.9},
                   deviation_kind="multiplicative", reference=None)
    assert list(report.bounds) == ["FairKM"]
    (sentence,) = [text for kind, text in report.headline() if kind == "guarantee"]
    assert sentence.startswith(
        "FairKM: Every cluster within 0.9 of the dataset's mix (multiplicative): yes "
        "(closest to the bound: region, cluster ")
    page = report.to_html()
    assert '<p class="guarantee met">' in page
    assert 'class="guarantee missed"' not in page and 'class="missed"' not in page
    assert "<td>not bounded</td>" not in page and 'class="na">not bounded' in page


def test_html_shows_the_sentences_and_escapes_names(blobs, fair):
    X, sensitive = blobs
    report = audit(fair, X, sensitive_features=sensitive, max_deviation=0.05)
    page = report.to_html()
    assert ODD not in page and html.escape(ODD) in page
    for name, check in report.bounds.items():
        paragraph = f'<p class="guarantee missed">{html.escape(f"{name}: {check.summary()}")}</p>'
        assert paragraph in page
    table = page[page.index('id="bounds"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + 2 * 2  # the head, then (sex, region) x 2 clusterings
    assert "age" not in table  # numeric attributes are not bounded by max_deviation
    assert "no</td>" in table
    assert page.index('class="guarantee missed"') < page.index('id="verdicts"')


def test_no_bound_asked_changes_nothing(blobs, fair):
    X, sensitive = blobs
    report = audit(fair, X, sensitive_features=sensitive, reference=None)
    assert report.bounds == {}
    assert "guarantee" not in dict(report.headline())
    assert "Every cluster within" not in report.to_text()
    assert 'class="guarantee' not in report.to_html()


def test_an_estimator_with_a_bound_is_checked_against_it(blobs):
    X, sensitive = blobs
    bounded = BoundedKMeans(3, max_deviation=0.4, deviation_kind="multiplicative", max_iter=2,
                            random_state=0).fit(X, sensitive_features=sensitive)
    report = audit(bounded, X, sensitive_features=sensitive, reference=None)
    assert report.bounds["BoundedKMeans"].deviation_kind == "multiplicative"
    assert set(report.bounds["BoundedKMeans"].table["bound"].dropna()) == {0.4}
    # A bound given to the audit wins over the estimator's.
    given = audit(bounded, X, sensitive_features=sensitive, reference=None, max_deviation=0.2)
    assert given.bounds["BoundedKMeans"].deviation_kind == "additive"
    assert set(given.bounds["BoundedKMeans"].table["bound"].dropna()) == {0.2}


def test_fairkm_with_a_bound_is_checked_against_it(blobs):
    X, sensitive = blobs
    model = FairKM(n_clusters=3, max_deviation=0.3, intersections=[(ODD, "region")],
                   random_state=0).fit(X, sensitive_features=sensitive)
    report = audit(model, X, sensitive_features=sensitive, reference=None)
    check = report.bounds["FairKM"]
    assert check.deviation_kind == model.deviation_kind
    assert list(check.table.index) == [ODD, "region", "age", f"{ODD} & region"]
    pd.testing.assert_frame_equal(check.table, model.bounds_check_.table)
    assert f"{html.escape(ODD)} &amp; region" in report.to_html()


@pytest.mark.parametrize("kwargs, match", [
    ({"max_deviation": -0.1}, rf"'max_deviation' parameter of audit must be {BOUND}. Got -0\.1"),
    ({"max_deviation": 0.1, "deviation_kind": "ratio"},
     r"'deviation_kind' parameter of audit must be a str among .* Got 'ratio' instead"),
    ({"max_deviation": {"age": 0.1}}, r"max_deviation names 'age', which is numeric"),
])
def test_audit_rejects_bad_bounds(blobs, kwargs, match):
    X, sensitive = blobs
    with pytest.raises(ValueError, match=match):
        audit(np.arange(400) % 3, X, sensitive_features=sensitive, **kwargs)


def test_a_model_asked_for_zero_is_audited_against_the_bound_it_enforced(blobs):
    # 0 resolves to what whole rows allow; the audit must not read it as the exact mix
    # and report a miss.
    X, sensitive = blobs
    categorical = sensitive.drop(columns="age")
    fair = FairKM(3, random_state=0, max_deviation=0).fit(X, sensitive_features=categorical)
    assert fair.max_deviation_ > 0 and fair.bounds_check_.satisfied
    report = audit(fair, X, sensitive_features=categorical)
    assert report.bounds[report.main].satisfied
    assert set(report.bounds[report.main].table["bound"].dropna()) == {fair.max_deviation_}
    assert "was not met by every cluster" not in dict(report.headline()).get("advice", "")
    bounded = BoundedKMeans(3, max_deviation={ODD: 0}, random_state=0, progress=False).fit(
        X, sensitive_features=categorical)
    assert list(bounded.max_deviation_) == [ODD] and 0 <= bounded.max_deviation_[ODD] < 0.1
    assert audit(bounded, X, sensitive_features=categorical).bounds["BoundedKMeans"].satisfied
