import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.stats import wasserstein_distance
from sklearn.metrics import rand_score, silhouette_score

from fairkm import metrics

from . import _metrics_reference as ref
from .conftest import examples

FAIRNESS_FUNCTIONS = {
    m.name: m.function for m in metrics.MEASURES.values() if m.kind == "fairness"
}

# --------------------------------------------------------------------------- hand-computed cases

# Ten points, one attribute with values a/b/c; dataset counts a=5, b=3, c=2, so the
# dataset mix is r = (1/2, 3/10, 1/5).
#   cluster 0 (6 points): a=4, b=1, c=1 -> p0 = (2/3, 1/6, 1/6)
#   cluster 1 (4 points): a=1, b=2, c=1 -> p1 = (1/4, 1/2, 1/4)
HAND_LABELS = [0] * 6 + [1] * 4
HAND_S = list("aaaabc") + list("abbc")


def _hand_expected():
    # p0 - r = (5, -4, -1) / 30 and p1 - r = (-5, 4, 1) / 20, with 25 + 16 + 1 = 42, so the
    # cluster distances are ed0 = sqrt(42) / 30 and ed1 = sqrt(42) / 20 (= ME), and
    # AE = (6 ed0 + 4 ed1) / 10 = (sqrt(42)/5 + sqrt(42)/5) / 10 = sqrt(42) / 25.
    # TV: (5 + 4 + 1) / 60 = 1/6 and (5 + 4 + 1) / 40 = 1/4; AW = (6/6 + 4/4) / 10, and
    # CW, each cluster counting once, (1/6 + 1/4) / 2 = 5/24.
    # KL: sum over clusters of sum_s r_s ln(r_s / p_s); the ratios r_s / p_s are
    # (1/2)/(2/3) = 3/4, (3/10)/(1/6) = 9/5, (1/5)/(1/6) = 6/5 in cluster 0 and
    # (1/2)/(1/4) = 2, (3/10)/(1/2) = 3/5, (1/5)/(1/4) = 4/5 in cluster 1.
    kl0 = 0.5 * math.log(3 / 4) + 0.3 * math.log(9 / 5) + 0.2 * math.log(6 / 5)
    kl1 = 0.5 * math.log(2) + 0.3 * math.log(3 / 5) + 0.2 * math.log(4 / 5)
    # Balance: min/max counts are 1/4 in cluster 0 and 1/2 in cluster 1.
    # MPV, delta = 0.2: alpha = r / 0.8 = (0.625, 0.375, 0.25), beta = 0.8 r = (0.4, 0.24, 0.16).
    #   cluster 0: a 2/3 - 0.625 = 1/24; b 0.24 - 1/6 = 11/150; c inside the band.
    #   cluster 1: a 0.4 - 0.25 = 0.15; b 0.5 - 0.375 = 0.125; c exactly at alpha -> 0.
    return {
        "AE": math.sqrt(42) / 25,
        "AW": 0.2,
        "CW": 5 / 24,
        "ME": math.sqrt(42) / 20,
        "MW": 0.25,
        "balance": 0.25,
        "KL": kl0 + kl1,
        "MPV": 0.15,
    }


@pytest.mark.parametrize("measure", list(FAIRNESS_FUNCTIONS))
def test_categorical_measures_by_hand(measure):
    got = FAIRNESS_FUNCTIONS[measure](HAND_LABELS, sensitive_features=HAND_S)
    assert got == pytest.approx(_hand_expected()[measure], rel=1e-12)


def test_published_wasserstein_by_hand():
    # Sorted p0 = (1/6, 1/6, 2/3) against sorted r = (1/5, 3/10, 1/2):
    # (1/30 + 4/30 + 5/30) / 3 = 1/9. Sorted p1 = (1/4, 1/4, 1/2): (1/20 + 1/20 + 0) / 3 = 1/30.
    # AW = (6/9 + 4/30) / 10 = (10/15 + 2/15) / 10 = 0.08; MW = 1/9.
    kw = {"sensitive_features": HAND_S, "wasserstein": "published"}
    assert metrics.average_wasserstein(HAND_LABELS, **kw) == pytest.approx(0.08, rel=1e-12)
    assert metrics.max_wasserstein(HAND_LABELS, **kw) == pytest.approx(1 / 9, rel=1e-12)
    assert metrics.published_wasserstein([2 / 3, 1 / 6, 1 / 6], [0.5, 0.3, 0.2]) == pytest.approx(
        1 / 9, rel=1e-12
    )


def test_fairness_report_by_hand():
    report = metrics.fairness_report(HAND_LABELS, sensitive_features=HAND_S)
    assert list(report.columns) == ["AE", "AW", "CW", "ME", "MW", "balance", "KL", "MPV"]
    assert list(report.index) == ["s0", "mean"]
    expected = _hand_expected()
    for column in report.columns:
        assert report.loc["s0", column] == pytest.approx(expected[column], rel=1e-12)
        assert report.loc["mean", column] == pytest.approx(expected[column], rel=1e-12)


def test_missing_value_in_cluster_kl_balance_violation():
    # r = (1/2, 1/2); cluster 0 = (a, a) -> p0 = (1, 0); cluster 1 = (b, b) -> p1 = (0, 1).
    labels, s = [0, 0, 1, 1], ["a", "a", "b", "b"]
    # Exact KL: 0.5 ln(0.5 / 0) is infinite.
    assert metrics.kl_fairness_error(labels, sensitive_features=s, eps=0.0) == math.inf
    # Floored at 1e-20, each cluster gives 0.5 ln(0.5) + 0.5 ln(0.5 / 1e-20), and the two
    # clusters sum to ln(0.5) + ln(0.5e20) = ln(0.25e20).
    assert metrics.kl_fairness_error(labels, sensitive_features=s) == pytest.approx(
        math.log(0.25e20), rel=1e-12
    )
    assert metrics.balance(labels, sensitive_features=s) == 0.0
    # Bounds at delta = 0.2: [0.4, 0.625]; the missing value is 0.4 below the lower bound,
    # the other 1 - 0.625 = 0.375 above the upper one.
    assert metrics.max_proportional_violation(labels, sensitive_features=s) == pytest.approx(0.4)
    # delta = 0: the largest |p - r| = 1/2.
    assert metrics.max_proportional_violation(
        labels, sensitive_features=s, delta=0.0
    ) == pytest.approx(0.5)


def test_single_valued_attribute():
    # One observed value: every cluster matches the dataset exactly; min/max of one count is 1.
    report = metrics.fairness_report([0, 1, 1], sensitive_features=["x", "x", "x"])
    assert report.loc["s0"].tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_numeric_attribute_by_hand():
    # Values 1..6: mean 3.5, population variance 35/12. Cluster 0 = {1, 2, 3, 4} (mean 2.5),
    # cluster 1 = {5, 6} (mean 5.5). Euclidean: |2.5 - 3.5| = 1 and |5.5 - 3.5| = 2 raw units,
    # so AE = (4 * 1 + 2 * 2) / 6 = 4/3 and ME = 2, divided by sigma.
    # W1 of cluster 0 against the data: the CDF gaps on [1,2), ..., [5,6) are
    # 1/4-1/6, 2/4-2/6, 3/4-3/6, 1-4/6, 1-5/6 = 1/12 + 2/12 + 3/12 + 4/12 + 2/12 = 1.
    # Cluster 1: gaps 1/6 + 2/6 + 3/6 + 4/6 on [1,5), then |1/2 - 5/6| = 1/3 on [5,6): 2.
    # So AW = 4/3 and MW = 2 as well, and CW = (1 + 2) / 2, divided by sigma.
    sigma = math.sqrt(35 / 12)
    labels = [0, 0, 0, 0, 1, 1]
    s = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    expected = {"AE": 4 / 3 / sigma, "ME": 2 / sigma, "AW": 4 / 3 / sigma, "MW": 2 / sigma,
                "CW": 1.5 / sigma}
    for measure, value in expected.items():
        got = FAIRNESS_FUNCTIONS[measure](labels, sensitive_features=s)
        assert got == pytest.approx(value, rel=1e-12)
    report = metrics.fairness_report(labels, sensitive_features=s)
    assert report.loc["mean", "AE"] == pytest.approx(4 / 3 / sigma, rel=1e-12)
    assert report[["balance", "KL", "MPV"]].isna().all().all()
    # The published convention only changes categorical attributes.
    assert metrics.average_wasserstein(
        labels, sensitive_features=s, wasserstein="published"
    ) == pytest.approx(4 / 3 / sigma, rel=1e-12)


def test_numeric_attribute_can_be_forced_categorical():
    # The same floats as categories: six distinct values, each cluster misses some of them.
    s = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert metrics.balance([0, 0, 0, 0, 1, 1], sensitive_features=s, numeric_sensitive=False) == 0


def test_mixed_attributes_report_and_multioutput():
    labels = [0] * 6 + [1] * 4
    df = pd.DataFrame({"group": HAND_S, "age": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0]})
    report = metrics.fairness_report(labels, sensitive_features=df)
    assert list(report.index) == ["group", "age", "mean"]
    assert np.isnan(report.loc["age", ["balance", "KL", "MPV"]].astype(float)).all()
    # The mean of a group-only measure runs over the categorical attributes.
    assert report.loc["mean", "balance"] == pytest.approx(0.25)
    assert report.loc["mean", "AE"] == pytest.approx(report.loc[["group", "age"], "AE"].mean())
    for measure, func in FAIRNESS_FUNCTIONS.items():
        raw = func(labels, sensitive_features=df, multioutput="raw_values")
        assert_allclose(raw, report.loc[["group", "age"], measure].to_numpy(), rtol=1e-12)
        assert func(labels, sensitive_features=df) == pytest.approx(report.loc["mean", measure])


def test_empty_clusters_and_arbitrary_label_values_are_ignored():
    # Labels from, say, a 15-cluster model in which only clusters 2 and 11 are used, or
    # string labels: the same two clusters as HAND_LABELS.
    base = metrics.fairness_report(HAND_LABELS, sensitive_features=HAND_S)
    for labels in ([11] * 6 + [2] * 4, ["x"] * 6 + ["y"] * 4, np.array([-1] * 6 + [9] * 4)):
        report = metrics.fairness_report(labels, sensitive_features=HAND_S)
        pd.testing.assert_frame_equal(report, base)


def test_clustering_objective_by_hand():
    # Cluster 0: (0,0), (2,0), centroid (1,0): distances 1, 1.
    # Cluster 1: (0,10), (6,18), centroid (3,14): offsets (-3,-4), (3,4): distances 5, 5.
    # Squared: 1 + 1 + 25 + 25 = 52; unsquared: 1 + 1 + 5 + 5 = 12.
    X = [[0, 0], [2, 0], [0, 10], [6, 18]]
    labels = [5, 5, 3, 3]
    assert metrics.clustering_objective(X, labels) == pytest.approx(52.0)
    assert metrics.clustering_objective(X, labels, squared=False) == pytest.approx(12.0)


def test_silhouette_by_hand():
    # 1-D points 0, 1 | 10, 11. Point 0: a = 1, b = (10 + 11)/2 = 10.5, s = 9.5/10.5.
    # Point 1: a = 1, b = (9 + 10)/2 = 9.5, s = 8.5/9.5. Points 10 and 11 mirror these.
    X = [[0.0], [1.0], [10.0], [11.0]]
    expected = (9.5 / 10.5 + 8.5 / 9.5) / 2
    assert metrics.silhouette(X, ["p", "p", "q", "q"]) == pytest.approx(expected, rel=1e-12)


def test_silhouette_delegates_sampling_to_sklearn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    labels = rng.integers(0, 3, 60)
    got = metrics.silhouette(X, labels, sample_size=30, random_state=4)
    assert got == silhouette_score(X, labels, sample_size=30, random_state=4)
    # A singleton cluster scores 0 without warnings.
    X5, labels5 = [[0.0], [1.0], [10.0], [11.0], [20.0]], [0, 0, 1, 1, 2]
    assert metrics.silhouette(X5, labels5) == pytest.approx(silhouette_score(X5, labels5))


def test_object_pair_deviation_by_hand():
    # a = 0 0 1 1, b = 0 1 1 1. Pairs: (1,2) same/diff, (2,3) diff/same, (2,4) diff/same
    # disagree; (1,3), (1,4) diff/diff and (3,4) same/same agree: 3 of 6 pairs.
    assert metrics.object_pair_deviation([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    assert metrics.object_pair_deviation([3], ["z"]) == 0.0


def test_centroid_deviation_by_hand():
    # X = 0, 2, 10, 12. a = 0 0 1 1 -> centroids 1, 11; b = 0 1 1 1 -> centroids 0 and
    # (2 + 10 + 12) / 3 = 8. Matching 1 <-> 0 and 11 <-> 8 costs 1 + 3 = 4; the other
    # matching costs 7 + 11 = 18.
    X = [[0.0], [2.0], [10.0], [12.0]]
    assert metrics.centroid_deviation(X, [0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(4.0)


def test_centroid_deviation_unequal_cluster_counts_by_hand():
    # X = 0, 1, 5, 6, 20. a = 0 0 1 1 2 -> centroids 0.5, 5.5, 20; b = 0 0 0 0 1 -> 3, 20.
    # Best: 20 <-> 20 (0), one of 0.5/5.5 <-> 3 (2.5); the leftover one adds its distance
    # to the nearest b centroid, 3 (2.5). Total 5, in either order.
    X = [[0.0], [1.0], [5.0], [6.0], [20.0]]
    a, b = [0, 0, 1, 1, 2], [0, 0, 0, 0, 1]
    assert metrics.centroid_deviation(X, a, b) == pytest.approx(5.0)
    assert metrics.centroid_deviation(X, b, a) == pytest.approx(5.0)


def test_clustering_report():
    X = [[0.0], [2.0], [10.0], [12.0]]
    report = metrics.clustering_report(X, [0, 0, 1, 1])
    assert list(report.index) == ["CO", "SH"]
    # CO: four unit distances, squared 4. SH: point 0 a = 2, b = 11 -> 9/11; point 2: a = 2,
    # b = 9 -> 7/9; the other two mirror them.
    assert report["CO"] == pytest.approx(4.0)
    assert report["SH"] == pytest.approx((9 / 11 + 7 / 9) / 2)
    full = metrics.clustering_report(X, [0, 0, 1, 1], reference_labels=[0, 1, 1, 1], squared=False)
    assert list(full.index) == ["CO", "SH", "DevC", "DevO"]
    assert full["CO"] == pytest.approx(4.0)
    assert full["DevC"] == pytest.approx(4.0)  # see test_centroid_deviation_by_hand
    assert full["DevO"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("labels", "sample_weight"),
    [([0, 0, 0, 0], None), ([0, 1, 2, 3], None), ([0, 0, 1, 1], [0, 0, 1, 1])],
    ids=["one cluster", "a row per cluster", "one cluster of positive weight"],
)
def test_clustering_report_gives_nan_silhouette_where_it_is_undefined(labels, sample_weight):
    X = [[0.0], [2.0], [10.0], [12.0]]
    report = metrics.clustering_report(X, labels, sample_weight=sample_weight)
    assert np.isnan(report["SH"])
    assert report["CO"] == metrics.clustering_objective(X, labels, sample_weight=sample_weight)
    with pytest.raises(ValueError, match="silhouette needs between 2"):
        metrics.silhouette(X, labels, sample_weight=sample_weight)


# --------------------------------------------------------------------------- slow references


def _ref_fairness(labels, column, **options):
    """Every measure for one attribute: the weighted reference loops with unit weights."""
    return ref.fairness(labels, column, np.ones(len(labels)), **options)


def _ref_pair_deviation(a, b):
    n = len(a)
    pairs = list(itertools.combinations(range(n), 2))
    disagree = sum((a[i] == a[j]) != (b[i] == b[j]) for i, j in pairs)
    return disagree / len(pairs) if pairs else 0.0


def _ref_centroids(X, labels):
    labels = np.asarray(labels)
    return [X[labels == c].mean(axis=0) for c in sorted(set(labels.tolist()))]


def _ref_centroid_deviation(X, a, b):
    """Try every way to match the smaller set of centroids into the larger one."""
    ca, cb = _ref_centroids(X, a), _ref_centroids(X, b)
    small, large = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
    best = math.inf
    for chosen in itertools.permutations(range(len(large)), len(small)):
        total = sum(np.linalg.norm(small[i] - large[j]) for i, j in enumerate(chosen))
        for j in set(range(len(large))) - set(chosen):
            total += min(np.linalg.norm(large[j] - s) for s in small)
        best = min(best, total)
    return best


def _ref_objective(X, labels, squared):
    labels = np.asarray(labels)
    total = 0.0
    for c in set(labels.tolist()):
        member = X[labels == c]
        dist = np.linalg.norm(member - member.mean(axis=0), axis=1)
        total += np.sum(dist**2) if squared else np.sum(dist)
    return total


# --------------------------------------------------------------------------- strategies


@st.composite
def labelled(draw, max_n=24):
    n = draw(st.integers(1, max_n))
    labels = draw(st.lists(st.integers(-1, 5), min_size=n, max_size=n))
    return n, labels


@st.composite
def fairness_problems(draw):
    n, labels = draw(labelled())
    categorical = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    numeric = draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n))
    # Coarse grid values so that ties occur; a quarter step keeps them exact in binary.
    numeric = np.array(numeric, dtype=np.float64) / 4
    assume(numeric.std() > 0)
    return labels, categorical, numeric


@st.composite
def two_clusterings(draw):
    n, a = draw(labelled(max_n=16))
    b = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    X = np.array(draw(st.lists(st.integers(-5, 5), min_size=2 * n, max_size=2 * n)), float)
    return X.reshape(n, 2), a, b


def _relabel(labels, seed):
    """Rename clusters by a random bijection onto strings."""
    values = sorted(set(labels))
    rng = np.random.default_rng(seed)
    names = {v: f"c{i}" for v, i in zip(values, rng.permutation(len(values)), strict=True)}
    return [names[v] for v in labels]


# --------------------------------------------------------------------------- properties


@settings(max_examples=examples(80))
@given(problem=fairness_problems(), convention=st.sampled_from(["principled", "published"]))
def test_report_matches_reference(problem, convention):
    labels, categorical, numeric = problem
    df = pd.DataFrame({"cat": categorical, "num": numeric})
    report = metrics.fairness_report(labels, sensitive_features=df, wasserstein=convention)
    want_cat = _ref_fairness(labels, categorical, numeric=False, wasserstein=convention)
    want_num = _ref_fairness(labels, numeric, numeric=True)
    for measure in report.columns:
        assert_allclose(report.loc["cat", measure], want_cat[measure], rtol=1e-9, atol=1e-12)
        assert_allclose(report.loc["num", measure], want_num[measure], rtol=1e-9, atol=1e-12)


@settings(max_examples=examples(40))
@given(problem=fairness_problems(), eps=st.sampled_from([0.0, 1e-20, 1e-3]))
def test_kl_eps_matches_reference(problem, eps):
    labels, categorical, _ = problem
    got = metrics.kl_fairness_error(labels, sensitive_features=categorical, eps=eps)
    assert_allclose(got, _ref_fairness(labels, categorical, numeric=False, eps=eps)["KL"])


@st.composite
def exact_mix(draw):
    """Clusters that are copies of one block of rows, so each has the dataset's mix."""
    block_size = draw(st.integers(1, 6))
    n_clusters = draw(st.integers(1, 4))
    block_cat = draw(st.lists(st.integers(0, 3), min_size=block_size, max_size=block_size))
    block_num = draw(st.lists(st.integers(-3, 3), min_size=block_size, max_size=block_size))
    perm = draw(st.permutations(range(block_size * n_clusters)))
    cat = np.tile(block_cat, n_clusters)[perm]
    num = np.tile(np.array(block_num, float), n_clusters)[perm]
    labels = np.repeat(np.arange(n_clusters) * 3, block_size)[perm]
    return labels, cat, num, block_cat


@settings(max_examples=examples(60))
@given(case=exact_mix())
def test_zero_deviation_when_every_cluster_has_the_dataset_mix(case):
    labels, cat, num, block_cat = case
    report = metrics.fairness_report(labels, sensitive_features=pd.DataFrame({"cat": cat}))
    assert_allclose(report.loc["cat", ["AE", "AW", "ME", "MW", "KL", "MPV"]], 0.0, atol=1e-12)
    counts = np.unique(block_cat, return_counts=True)[1]
    assert report.loc["cat", "balance"] == pytest.approx(counts.min() / counts.max())
    if num.std() > 0:
        numeric = metrics.fairness_report(labels, sensitive_features=num)
        assert_allclose(numeric.loc["s0", ["AE", "AW", "ME", "MW"]], 0.0, atol=1e-12)


@settings(max_examples=examples(60))
@given(problem=fairness_problems(), seed=st.integers(0, 2**16))
def test_fairness_invariant_to_label_renaming(problem, seed):
    labels, categorical, numeric = problem
    df = pd.DataFrame({"cat": categorical, "num": numeric})
    base = metrics.fairness_report(labels, sensitive_features=df)
    renamed = metrics.fairness_report(_relabel(labels, seed), sensitive_features=df)
    pd.testing.assert_frame_equal(base, renamed)


@settings(max_examples=examples(80))
@given(problem=two_clusterings())
def test_pair_deviation_properties(problem):
    _, a, b = problem
    got = metrics.object_pair_deviation(a, b)
    assert got == pytest.approx(_ref_pair_deviation(a, b), abs=1e-15)
    assert got == pytest.approx(1 - rand_score(a, b), abs=1e-12)
    assert metrics.object_pair_deviation(b, a) == got
    assert metrics.object_pair_deviation(a, a) == 0.0
    assert metrics.object_pair_deviation(_relabel(a, 1), b) == got


def test_pair_deviation_with_many_clusters_uses_sparse_counts():
    # k1 * k2 far above n exercises the branch that counts only occupied cells.
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 5000, 3000), rng.integers(0, 5000, 3000)
    assert metrics.object_pair_deviation(a, b) == pytest.approx(1 - rand_score(a, b), abs=1e-12)


@settings(max_examples=examples(60))
@given(problem=two_clusterings())
def test_centroid_deviation_properties(problem):
    X, a, b = problem
    got = metrics.centroid_deviation(X, a, b)
    assert got == pytest.approx(_ref_centroid_deviation(X, a, b), rel=1e-9, abs=1e-9)
    assert metrics.centroid_deviation(X, b, a) == pytest.approx(got, rel=1e-9, abs=1e-9)
    assert metrics.centroid_deviation(X, a, _relabel(a, 2)) == 0.0
    assert metrics.centroid_deviation(X, _relabel(a, 3), b) == pytest.approx(got, abs=1e-9)


@settings(max_examples=examples(60))
@given(problem=two_clusterings(), squared=st.booleans())
def test_clustering_objective_matches_reference(problem, squared):
    X, a, _ = problem
    got = metrics.clustering_objective(X, a, squared=squared)
    assert got == pytest.approx(_ref_objective(X, a, squared), rel=1e-9, abs=1e-9)
    assert metrics.clustering_objective(X, _relabel(a, 4), squared=squared) == pytest.approx(got)


@settings(max_examples=examples(60))
@given(
    p=st.lists(st.floats(0, 1), min_size=1, max_size=8),
    data=st.data(),
)
def test_published_wasserstein_matches_scipy(p, data):
    q = data.draw(st.lists(st.floats(0, 1), min_size=len(p), max_size=len(p)))
    got = metrics.published_wasserstein(p, q)
    assert got == pytest.approx(wasserstein_distance(p, q), rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- bad input


def test_fairness_length_mismatch():
    with pytest.raises(ValueError, match="sensitive_features has 3 rows but labels has 4"):
        metrics.average_euclidean([0, 0, 1, 1], sensitive_features=["a", "b", "a"])


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        ([0.0, np.nan, 1.0], "labels contains NaN"),
        (np.array([0, None, 1], dtype=object), "labels has a missing value"),
        ([[0, 1], [1, 0], [0, 0]], "labels must be 1-D"),
        ([], "0 sample"),
    ],
)
def test_bad_labels(labels, match):
    with pytest.raises(ValueError, match=match):
        metrics.fairness_report(labels, sensitive_features=["a", "b", "a"])


def test_bad_X():
    with pytest.raises(ValueError, match="X contains NaN"):
        metrics.clustering_objective([[0.0], [np.nan]], [0, 1])
    with pytest.raises(ValueError, match="X has 3 samples but labels has 2 entries"):
        metrics.clustering_report([[0.0], [1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match="Expected 2D array"):
        metrics.clustering_objective([0.0, 1.0], [0, 1])


def test_reference_length_mismatch():
    with pytest.raises(ValueError, match="reference_labels has 2 entries but labels has 3"):
        metrics.object_pair_deviation([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="reference_labels contains NaN"):
        metrics.centroid_deviation([[0.0], [1.0]], [0, 1], [0.0, np.nan])


@pytest.mark.parametrize("labels", [[0, 0, 0, 0], [0, 1, 2, 3]])
def test_silhouette_needs_two_to_n_minus_one_clusters(labels):
    X = [[0.0], [1.0], [2.0], [3.0]]
    with pytest.raises(ValueError, match="silhouette needs between 2 and n_samples - 1"):
        metrics.silhouette(X, labels)


def test_bad_options():
    kw = {"sensitive_features": HAND_S}
    with pytest.raises(ValueError, match=r"'multioutput' parameter of average_euclidean must be "
                                         r"a str among .*'raw_values'.*. Got 'mean' instead"):
        metrics.average_euclidean(HAND_LABELS, multioutput="mean", **kw)
    message = (r"'wasserstein' parameter of max_wasserstein must be a str among "
               r"{'p[a-z]+', 'p[a-z]+'}. Got 'x' instead")
    with pytest.raises(ValueError, match=message):
        metrics.max_wasserstein(HAND_LABELS, wasserstein="x", **kw)
    with pytest.raises(ValueError, match="'wasserstein' parameter of fairness_report must be"):
        metrics.fairness_report(HAND_LABELS, wasserstein=None, **kw)
    with pytest.raises(ValueError, match="eps"):
        metrics.kl_fairness_error(HAND_LABELS, eps=-1.0, **kw)
    with pytest.raises(TypeError, match="eps"):
        metrics.fairness_report(HAND_LABELS, eps="tiny", **kw)
    with pytest.raises(ValueError, match="delta"):
        metrics.max_proportional_violation(HAND_LABELS, delta=1.0, **kw)
    with pytest.raises(ValueError, match="sample_size"):
        metrics.silhouette([[0.0], [1.0], [5.0]], [0, 0, 1], sample_size=1)
    with pytest.raises(ValueError, match="'numeric_sensitive' parameter of fairness_report must"):
        metrics.fairness_report(HAND_LABELS, numeric_sensitive="yes", **kw)


def test_group_measures_need_a_categorical_attribute():
    s = np.array([1.0, 2.0, 3.0, 4.0])
    for func in (metrics.balance, metrics.kl_fairness_error, metrics.max_proportional_violation):
        with pytest.raises(ValueError, match="defined for categorical sensitive attributes only"):
            func([0, 0, 1, 1], sensitive_features=s)


def test_report_rejects_attribute_named_mean():
    df = pd.DataFrame({"mean": ["a", "b", "a", "b"]})
    with pytest.raises(ValueError, match="named 'mean'"):
        metrics.fairness_report([0, 0, 1, 1], sensitive_features=df)


def test_zero_variance_numeric_attribute():
    with pytest.raises(ValueError, match="zero variance"):
        metrics.average_wasserstein([0, 1], sensitive_features=[2.0, 2.0])


def test_published_wasserstein_shapes():
    with pytest.raises(ValueError, match="same length"):
        metrics.published_wasserstein([0.5, 0.5], [1.0])
