"""fairkm.report.audit with sample_weight: a row of weight w counts as w rows, in every number.

The independent references: the same audit of the rows repeated by their integer weights
(the unweighted code path), scikit-learn's KMeans fitted with the weights, hand-computed
weighted sums, and the metrics' own weighted measures.
"""

import dataclasses
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans

from fairkm import FairKM
from fairkm.cli._parser import build_parser
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import DataWarning
from fairkm.metrics import fairness_report
from fairkm.report import audit
from fairkm.report._charts import weighted_percentiles

BLIND = "S-blind K-Means (best of 10)"


@pytest.fixture(scope="module")
def data():
    X, sensitive, _ = make_sensitive_blobs(200, n_features=3, centers=3, n_values=(2, 4),
                                           numeric=1, random_state=1)
    sensitive.columns = ["sex", "region", "age"]
    rng = np.random.default_rng(3)
    weights = rng.integers(1, 5, size=200).astype(np.float64)
    weights[rng.choice(200, 15, replace=False)] = 0.0  # rows that count for nothing
    labels = rng.integers(0, 3, size=200)
    reference = rng.integers(0, 3, size=200)
    profile = pd.DataFrame({"x0": X[:, 0], "colour": rng.choice(["red", "blue", "green"], 200)})
    return X, sensitive, weights, labels, reference, profile


def _repeated(data):
    """The same rows, each repeated as many times as its (integer) weight."""
    X, sensitive, weights, labels, reference, profile = data
    rows = np.repeat(np.arange(len(weights)), weights.astype(int))
    return (X[rows], sensitive.iloc[rows].reset_index(drop=True), labels[rows],
            reference[rows], profile.iloc[rows].reset_index(drop=True))


def test_weighted_audit_equals_the_audit_of_the_repeated_rows(data):
    X, sensitive, weights, labels, reference, profile = data
    kwargs = {"numeric_sensitive": ["age"], "name": "fair", "max_deviation": 0.1}
    weighted = audit(labels, X, sensitive_features=sensitive, sample_weight=weights,
                     reference=reference, profile=profile, **kwargs)
    rX, rS, rlabels, rreference, rprofile = _repeated(data)
    repeated = audit(rlabels, rX, sensitive_features=rS, reference=rreference,
                     profile=rprofile, **kwargs)
    assert weighted.weighted and not repeated.weighted
    assert_allclose(weighted.fairness.to_numpy(), repeated.fairness.to_numpy(), rtol=1e-10,
                    atol=1e-12)
    # CO, the silhouette, DevC and DevO: the smallest weight is 1, so as repeated rows
    # (scikit-learn's unweighted silhouette expands distances: about 1e-8 apart).
    exact = ["CO", "DevC", "DevO"]
    assert_allclose(weighted.quality[exact].to_numpy(), repeated.quality[exact].to_numpy(),
                    rtol=1e-9)
    assert_allclose(weighted.quality["SH"], repeated.quality["SH"], rtol=0, atol=1e-8)
    assert_array_equal(weighted.verdicts["verdict"], repeated.verdicts["verdict"])
    columns = ["cluster", "size", "share", "distance", "small", "detail"]
    pd.testing.assert_frame_equal(weighted.worst[columns], repeated.worst[columns],
                                  check_dtype=False)
    for name in ("fair", "reference"):
        ours, theirs = weighted.clusters[name], repeated.clusters[name]
        shown = ["size", "share", "RMS distance to centre", "centre distance to data mean",
                 "x0", "colour"]
        pd.testing.assert_frame_equal(ours[shown], theirs[shown], check_dtype=False)
        # rows of positive weight: a row of weight 0 counts as no row
        counted = (labels if name == "fair" else reference)[weights > 0]
        assert_array_equal(ours["rows"], np.bincount(counted))
        bounds = weighted.bounds[name].table
        assert_allclose(bounds["deviation"], repeated.bounds[name].table["deviation"])
        assert list(bounds["satisfied"]) == list(repeated.bounds[name].table["satisfied"])
    assert weighted.met_bound == pytest.approx(repeated.met_bound)


def test_the_measures_are_the_metrics_weighted_measures(data):
    X, sensitive, weights, labels, reference, _ = data
    report = audit(labels, X, sensitive_features=sensitive, numeric_sensitive=["age"],
                   sample_weight=weights, reference=reference, name="fair")
    expected = fairness_report(labels, sensitive_features=sensitive,
                               numeric_sensitive=["age"], sample_weight=weights)
    assert_allclose(report.fairness.xs("fair", level="clustering").to_numpy(),
                    expected.to_numpy(), rtol=1e-12)
    unweighted = fairness_report(labels, sensitive_features=sensitive,
                                 numeric_sensitive=["age"])
    assert not np.allclose(expected["CW"], unweighted["CW"])  # the weights matter here
    # CO by hand: every row's weighted squared distance to its cluster's weighted mean.
    co = sum(
        weights[labels == c] @ ((X[labels == c] - np.average(
            X[labels == c], axis=0, weights=weights[labels == c])) ** 2).sum(axis=1)
        for c in range(3)
    )
    assert report.quality.loc["fair", "CO"] == pytest.approx(co, rel=1e-12)


def test_the_kmeans_reference_is_fitted_with_the_weights(data):
    _, sensitive, _, _, _, _ = data
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))  # no blobs: where the weight lies moves the centres
    weights = np.where(X[:, 0] > 1.0, 40.0, 1.0)
    labels = np.arange(200) % 3
    report = audit(labels, X, sensitive_features=sensitive, sample_weight=weights)
    blind = KMeans(3, n_init=10, random_state=0).fit(X, sample_weight=weights)
    # The smallest positive weight is 1: the reference is fitted on these very weights.
    assert_array_equal(report.labels[BLIND], blind.labels_)
    unweighted = KMeans(3, n_init=10, random_state=0).fit(X).labels_
    assert not np.array_equal(blind.labels_, unweighted)
    assert "fitted with the same weights" in dict(report.facts)["reference"]


@pytest.mark.parametrize("scale", [1e6, 1e-6, "sum to 1"])
def test_weights_scaled_alike_give_the_same_audit(data, scale):
    X, sensitive, weights, labels, _, _ = data
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive,
                                                     sample_weight=weights)
    factor = 1.0 / weights.sum() if scale == "sum to 1" else scale
    kwargs = {"sensitive_features": sensitive, "max_deviation": 0.05}
    audits = [audit(model, X, sample_weight=weights, **kwargs),
              audit(model, X, sample_weight=weights * factor, **kwargs),
              audit(labels, X, sample_weight=weights, name="mine", **kwargs),
              audit(labels, X, sample_weight=weights * factor, name="mine", **kwargs)]
    for base, scaled in (audits[:2], audits[2:]):
        assert_array_equal(base.labels[BLIND], scaled.labels[BLIND])
        assert_allclose(base.fairness.to_numpy(), scaled.fairness.to_numpy(), rtol=1e-9)
        quality = ["SH", "DevC", "DevO"]
        assert_allclose(base.quality[quality].to_numpy(), scaled.quality[quality].to_numpy(),
                        rtol=1e-9)
        # The K-Means objective is a total: it scales with the weights, its ratio does not.
        assert_allclose(scaled.quality["CO"], base.quality["CO"] * factor, rtol=1e-9)
        assert_array_equal(base.verdicts["verdict"], scaled.verdicts["verdict"])
        assert_allclose(base.worst["distance"], scaled.worst["distance"], rtol=1e-9)
        assert_allclose(base.worst["share"], scaled.worst["share"], rtol=1e-9)
        assert base.met_bound == pytest.approx(scaled.met_bound, rel=1e-9)
        ours, theirs = dict(base.headline()), dict(scaled.headline())
        assert list(ours) == list(theirs)
        assert ours.get("advice") == theirs.get("advice")
        assert [s for k, s in base.headline() if k in ("summary", "alert", "unchanged")] == [
            s for k, s in scaled.headline() if k in ("summary", "alert", "unchanged")]
        percent = re.compile(r"[+-]\d+\.\d%")
        assert percent.findall(ours["cost"]) == percent.findall(theirs["cost"])
    assert audits[2].headline()[-1][0] == "advice"  # random labels: there is advice to compare


def test_unit_or_equal_weights_are_the_unweighted_audit(data):
    X, sensitive, _, labels, reference, _ = data
    plain = audit(labels, X, sensitive_features=sensitive, reference=reference)
    ones = audit(labels, X, sensitive_features=sensitive, reference=reference,
                 sample_weight=np.ones(200))
    sevens = audit(labels, X, sensitive_features=sensitive, reference=reference,
                   sample_weight=7.0)
    assert not ones.weighted and ones.to_text() == plain.to_text()
    assert sevens.weighted
    assert_allclose(sevens.fairness.to_numpy(), plain.fairness.to_numpy(), rtol=1e-12)
    assert_allclose(sevens.quality[["SH", "DevC", "DevO"]].to_numpy(),
                    plain.quality[["SH", "DevC", "DevO"]].to_numpy(), rtol=1e-12)
    assert_allclose(sevens.quality["CO"], 7 * plain.quality["CO"], rtol=1e-12)


def test_the_report_says_it_is_weighted(data):
    X, sensitive, weights, labels, _, _ = data
    report = audit(labels, X, sensitive_features=sensitive, sample_weight=weights)
    fact = dict(report.facts)["weights"]
    assert fact.startswith(f"weighted by sample_weight (total {weights.sum():,.0f}, 200 rows, "
                           "15 of weight 0 left out)")
    text = report.to_text()
    assert f"Cluster sizes (total weight; the rows weigh {weights.sum():,.0f} in all" in text
    kinds = dict(report.headline())
    assert kinds["cost"].startswith("Price of fairness: the weighted K-Means objective")
    assert "weighted by the rows' weights" in report.headline()[1][1]
    assert "of the weight" in text  # the least fair clusters' shares
    page = report.to_html()
    assert "weighted by sample_weight" in page and "total weight of each cluster" in page
    plain = audit(labels, X, sensitive_features=sensitive)
    assert "weights" not in dict(plain.facts) and "weighted" not in plain.to_text()


def test_a_callers_weights_fact_is_kept(data):
    X, sensitive, weights, labels, _, _ = data
    report = audit(labels, X, sensitive_features=sensitive, sample_weight=weights,
                   facts=[("weights", "column 'perwt'")])
    assert [v for k, v in report.facts if k == "weights"] == ["column 'perwt'"]


def test_a_cluster_of_weight_zero_is_no_cluster(data):
    # A label held only by rows of weight 0 is no cluster: the audit is that of the data
    # with those rows dropped (a row of weight 0 counts as no row, as in fairkm.metrics),
    # down to the K-Means reference's number of clusters and every size and chart.
    X, sensitive, _, _, _, profile = data
    labels = np.arange(200) % 3
    weights = 1.0 + np.arange(200) % 2
    ghost = np.arange(200) % 10 == 0
    labels[ghost], weights[ghost] = 3, 0.0
    report = audit(labels, X, sensitive_features=sensitive, sample_weight=weights,
                   profile=profile)
    keep = ~ghost
    dropped = audit(labels[keep], X[keep], sensitive_features=sensitive[keep],
                    sample_weight=weights[keep], profile=profile[keep])
    assert len(np.unique(report.labels[BLIND])) == 3
    for name in ("clustering", BLIND):
        assert 3 not in report.clusters[name].index
        assert_array_equal(report.labels[name], dropped.labels[name])
        pd.testing.assert_frame_equal(report.clusters[name], dropped.clusters[name])
    for table in ("fairness", "quality", "worst", "verdicts", "costs", "group_costs"):
        pd.testing.assert_frame_equal(getattr(report, table), getattr(dropped, table))
    assert report.headline() == dropped.headline()
    assert dict(report.facts)["weights"].startswith(
        "weighted by sample_weight (total 280, 200 rows, 20 of weight 0 left out)")
    fact = re.compile(r"weighted by sample_weight \(total [^)]*\)")
    assert fact.sub("", report.to_text()) == fact.sub("", dropped.to_text())
    assert fact.sub("", report.to_html()) == fact.sub("", dropped.to_html())


def test_a_label_of_weight_zero_is_dropped_from_a_given_reference(data):
    X, sensitive, weights, labels, reference, _ = data
    report = audit(labels, X, sensitive_features=sensitive, sample_weight=weights,
                   reference=np.where(weights == 0, 9, reference))
    assert 9 not in report.clusters["reference"].index
    with pytest.raises(ValueError, match=r"reference must have one label per row \(200\)"):
        audit(labels, X, sensitive_features=sensitive, sample_weight=weights,
              reference=reference[:-1])


@pytest.mark.parametrize(("weights", "error", "match"), [
    (-np.ones(200), ValueError, "sample_weight must be finite and >= 0, got -1.0 at row 0"),
    (np.ones(3), ValueError, "sample_weight has 3 entries but labels has 200"),
    (np.array(["1"] * 200), TypeError, "sample_weight must hold real numbers"),
    (np.zeros(200), ValueError, "sample_weight is zero for every row"),
])
def test_bad_weights_are_refused_naming_sample_weight(data, weights, error, match):
    X, sensitive, _, labels, _, _ = data
    with pytest.raises(error, match=match):
        audit(labels, X, sensitive_features=sensitive, sample_weight=weights)


def test_the_cost_of_fairness_compares_the_fits_own_pair():
    """Issue 31: a weighted fit audited without its weights printed 'fairness cost -100.0%'."""
    X, sensitive, _ = make_sensitive_blobs(400, n_values=(2, 3), random_state=0)
    weights = np.random.default_rng(0).integers(500, 1500, 400).astype(np.float64)
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=sensitive,
                                                     sample_weight=weights)
    worse = np.random.default_rng(1).integers(0, 3, 400)  # a reference far from tight
    for given in (None, weights):
        with warnings.catch_warnings():
            # (audited without its weights it warns: test_a_weighted_fit_audited_without...)
            warnings.simplefilter("ignore", DataWarning)
            report = audit(model, X, sensitive_features=sensitive, reference=worse,
                           sample_weight=given)
        cost = dict(report.headline())["cost"]
        assert "LOWER than" in cost
        expected = model.inertia_ / model.blind_clustering_.inertia - 1
        assert f"fairness cost {expected:+.1%}" in cost
        assert "-100.0%" not in cost and "-99." not in cost


def test_the_budget_advice_stays_within_what_the_command_line_takes(data):
    """Advice to double a budget of 60% names 100%, the largest FairKM and the CLI accept."""
    X, sensitive, _, labels, _, _ = data
    blind = KMeans(3, n_init=1, random_state=0).fit(X).labels_
    # K-Means' clusters against random ones: less fair, so there is advice.
    report = audit(blind, X, sensitive_features=sensitive, reference=labels)
    assert report.headline()[-1][0] == "advice"
    settings = {"estimator": "FairKM", "max_cost": 0.6, "fairness_weight": "auto",
                "n_clusters": 3, "cluster_weighting_": "equal", "max_deviation": None}
    paragraph = dict(dataclasses.replace(report, settings=settings).headline())["advice"]
    assert "max_cost=1," in paragraph
    FairKM(max_cost=1.0)._validate_params()
    option = re.search(r"--max-cost (\S+?)\)", paragraph).group(1)
    assert option == "100%"
    args = build_parser().parse_args(["fit", "x.csv", "--sensitive", "s", "--max-cost", option])
    assert args.max_cost == 1.0


def test_weight_like_feature_columns_are_warned_about():
    X, sensitive, _ = make_sensitive_blobs(100, n_values=(2,), random_state=0)
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(
        PERWT=np.arange(100) % 7 + 1.0, weight_kg=60.0 + np.arange(100) % 30,
        n=-(np.arange(100) % 3.0))  # negative: not a count
    with pytest.warns(DataWarning) as caught:
        audit(np.arange(100) % 2, frame, sensitive_features=sensitive)
    notes = [str(w.message) for w in caught if "row weight or count" in str(w.message)]
    assert len(notes) == 1
    assert notes[0].startswith("feature column 'PERWT' is named like a row weight or count")
    assert "sample_weight=X['PERWT']" in notes[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        audit(np.arange(100) % 2, frame[["a", "b"]], sensitive_features=sensitive)


def test_weighted_percentiles_are_those_of_the_repeated_values():
    rng = np.random.default_rng(0)
    values, weights = rng.normal(size=50), rng.integers(1, 6, 50).astype(np.float64)
    q = [5, 25, 50, 75, 95]
    repeated = np.repeat(values, weights.astype(int))
    assert_array_equal(weighted_percentiles(values, weights, q),
                       np.percentile(repeated, q, method="inverted_cdf"))
    assert_array_equal(weighted_percentiles(values, weights * 1e-6, q),
                       weighted_percentiles(values, weights, q))


@pytest.mark.parametrize("bounded", [False, True])
def test_a_weighted_fit_audited_without_its_weights_warns(bounded):
    from fairkm import BoundedKMeans

    # Small, so that the weighted bounded fit is quick (BoundedKMeans' weighted fits are slow).
    X, S, _ = make_sensitive_blobs(60, n_features=2, centers=3, n_values=(2,), random_state=1)
    weights = np.random.default_rng(3).integers(1, 4, size=60).astype(np.float64)
    estimator = (BoundedKMeans(3, max_deviation=0.3, random_state=0) if bounded
                 else FairKM(3, random_state=0))
    model = estimator.fit(X, sensitive_features=S, sample_weight=weights)
    with pytest.warns(DataWarning, match="fitted with sample_weight.*Pass the fit's weights"):
        audit(model, X, sensitive_features=S, n_init=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        audit(model, X, sensitive_features=S, n_init=1, sample_weight=weights)
        # Labels alone carry no fit to compare with.
        audit(model.labels_, X, sensitive_features=S, n_init=1)
        # Equal weights are no weights: the audit without them is the same audit.
        equal = estimator.fit(X, sensitive_features=S, sample_weight=np.full(60, 3.0))
        audit(equal, X, sensitive_features=S, n_init=1)
