"""Tests of the baselines: S-blind K-Means and ZGYA (Variational Fair Clustering)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairkm.cluster import ZGYA, BlindKMeans

# ---------------------------------------------------------------- local helpers

# What an int of the engine accepts, in scikit-learn's words.
INT1 = r"an int in the range \[1, 9223372036854775807\]"


def balance(labels, groups):
    """Smallest over non-empty clusters of min_j count_j / max_j count_j."""
    n_values = groups.max() + 1
    ratios = []
    for k in np.unique(labels):
        counts = np.bincount(groups[labels == k], minlength=n_values)
        ratios.append(counts.min() / counts.max())
    return min(ratios)


def kl_error(labels, groups, eps=1e-20):
    """Sum over non-empty clusters of KL(U || P_k), U the dataset proportions."""
    n_values = groups.max() + 1
    u = np.bincount(groups, minlength=n_values) / len(groups)
    total = 0.0
    for k in np.unique(labels):
        p = np.bincount(groups[labels == k], minlength=n_values) / np.sum(labels == k)
        total += np.sum(u * np.log(u / np.maximum(p, eps)))
    return total


def planted(n_a=200, n_b=100, seed=0):
    """Four blobs at the corners of a 1 x 0.9 rectangle: group 0 on the left, group 1 right.

    K-Means (k=2) splits left from right, so its clusters are pure; the fair
    split (bottom from top) costs a little more. The dataset balance is
    n_b / n_a. Coordinates are of order 1, as for the unit-norm rows the
    authors of ZGYA cluster.
    """
    rng = np.random.RandomState(seed)
    corners = np.array([[0.0, 0.0], [0.0, 0.9], [1.0, 0.0], [1.0, 0.9]])
    sizes = [n_a // 2, n_a - n_a // 2, n_b // 2, n_b - n_b // 2]
    X = np.concatenate(
        [rng.normal(c, 0.075, size=(m, 2)) for c, m in zip(corners, sizes, strict=True)]
    )
    groups = np.repeat([0, 1], [n_a, n_b])
    return X, groups


# ---------------------------------------------------------------- scikit-learn contract


@parametrize_with_checks([BlindKMeans(), ZGYA(), ZGYA(n_clusters=3, n_init=2, max_iter=20)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # The suite fits with y and no sensitive_features, which the family warns about
        # (a user's fit(X, S) lands there); nothing else is silenced.
        warnings.filterwarnings("ignore", message=r"\w+\.fit got y but no sensitive_features")
        check(estimator)


# ---------------------------------------------------------------- ZGYA behaviour


def test_zgya_fairness_improves_with_weight():
    X, groups = planted()
    dataset_balance = 0.5
    balances, errors = [], []
    for weight in [0.0, 3.0, 30.0, 300.0]:
        model = ZGYA(n_clusters=2, fairness_weight=weight, random_state=1)
        labels = model.fit(X, sensitive_features=groups).labels_
        balances.append(balance(labels, groups))
        errors.append(kl_error(labels, groups))
    assert balances[0] == 0.0  # K-Means: pure clusters
    assert np.all(np.diff(balances) >= 0), balances
    assert np.all(np.diff(errors) <= 1e-12), errors
    assert balances[-1] == pytest.approx(dataset_balance, abs=0.05)
    assert errors[-1] < 1e-2 < errors[0]


@pytest.mark.parametrize(
    "weight, seed, sensitive",
    [(0.0, 0, True), (3.0, 1, True), (30.0, 2, True), (300.0, 3, True), (30.0, 0, False)],
)
def test_zgya_stops_by_the_authors_rule(weight, seed, sensitive):
    # The first outer iteration from the third on whose objective changed by at most tol.
    X, groups = planted(seed=seed)
    model = ZGYA(n_clusters=3, fairness_weight=weight, tol=1e-4, random_state=seed)
    model.fit(X, sensitive_features=groups if sensitive else None)
    history = model.objective_history_
    assert len(history) == model.n_iter_ >= 3
    # Relative to the authors' energy: the KL term written as a cross-entropy, H(U) + KL.
    u = np.bincount(groups) / len(groups)
    offset = weight * 3 * -np.sum(u * np.log(u)) if sensitive else 0.0
    settled = np.abs(np.diff(history)) <= 1e-4 * np.abs(history[:-1] + offset)
    assert settled[-1] and not settled[1:-1].any(), history
    assert model.objective_ == history[-1]


def test_zgya_deterministic():
    X, groups = planted(n_a=150, n_b=150, seed=4)
    fits = [
        ZGYA(n_clusters=3, fairness_weight=30.0, n_init=3, random_state=7).fit(
            X, sensitive_features=groups
        )
        for _ in range(2)
    ]
    assert_array_equal(fits[0].labels_, fits[1].labels_)
    assert_array_equal(fits[0].soft_labels_, fits[1].soft_labels_)
    assert_array_equal(fits[0].cluster_centers_, fits[1].cluster_centers_)


def test_zgya_fitted_attributes():
    X, groups = planted()
    names = np.where(groups == 0, "f", "m")
    model = ZGYA(n_clusters=3, fairness_weight=30.0, random_state=0)
    model.fit(X, sensitive_features=pd.Series(names, name="sex"))
    assert model.sensitive_name_ == "sex"
    assert model.sensitive_categories_.tolist() == ["f", "m"]
    assert_allclose(model.target_proportions_, [2 / 3, 1 / 3])
    assert_allclose(model.soft_labels_.sum(axis=1), 1.0)
    assert_array_equal(model.labels_, np.argmax(model.soft_labels_, axis=1))
    assert_allclose(model.cluster_proportions_.sum(axis=1), 1.0)
    assert model.objective_ == model.objective_history_[-1]
    assert model.n_bound_iter_.shape == (model.n_iter_,)
    assert model.fairness_ >= 0.0
    # sum_k KL(U || P_k) with P_k computed here from the soft labels.
    S, u = model.soft_labels_, model.target_proportions_
    expected = 0.0
    for c in range(3):
        p = np.array([S[groups == j, c].sum() for j in range(2)]) / S[:, c].sum()
        assert_allclose(model.cluster_proportions_[c], p)
        expected += np.sum(u * np.log(u / p))
    assert model.fairness_ == pytest.approx(expected)
    assert model.objective_ == pytest.approx(
        np.sum(S * ((X[:, None, :] - model.cluster_centers_[None]) ** 2).sum(-1))
        + 30.0 * expected
    )


def test_zgya_without_fairness_is_lloyd():
    X, _ = planted()
    model = ZGYA(n_clusters=3, random_state=0).fit(X)
    assert_array_equal(model.labels_, model.predict(X))
    assert model.inertia_ == pytest.approx(model.objective_)
    assert np.all(model.n_bound_iter_ == 0)
    assert model.cluster_proportions_ is None and np.isnan(model.fairness_)
    centers = np.array([X[model.labels_ == k].mean(axis=0) for k in range(3)])
    assert_allclose(model.cluster_centers_, centers, atol=1e-6)


def test_zgya_target_proportions():
    X, groups = planted(n_a=150, n_b=150)
    model = ZGYA(n_clusters=2, fairness_weight=30.0, target_proportions=[0.5, 0.5])
    model.fit(X, sensitive_features=groups)
    assert_array_equal(model.target_proportions_, [0.5, 0.5])


def test_zgya_single_value_attribute_has_no_fairness_cost():
    X, _ = planted()
    model = ZGYA(n_clusters=2, fairness_weight=30.0, random_state=0)
    model.fit(X, sensitive_features=np.zeros(len(X), dtype=int))
    assert model.fairness_ == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("weight", [0.0, 30.0])
def test_zgya_reseeds_an_empty_cluster(weight):
    # No point is nearest to the far centre: the run reseeds from K-Means, as the
    # authors' code does, and ends with every cluster in use.
    X, groups = planted()
    init = np.array([[0.0, 0.0], [1.0, 0.9], [1e4, 1e4]])
    model = ZGYA(n_clusters=3, fairness_weight=weight, init=init, random_state=0).fit(
        X, sensitive_features=groups
    )
    assert model.n_reseeds_ == 1
    assert set(np.unique(model.labels_)) == {0, 1, 2}
    assert np.all(np.abs(model.cluster_centers_) < 2.0)
    assert np.all(np.isfinite(model.soft_labels_)) and np.isfinite(model.objective_)
    assert np.all(np.isfinite(model.cluster_proportions_))


def test_zgya_warns_when_not_converged():
    X, groups = planted()
    with pytest.warns(ConvergenceWarning, match="within max_iter=1 outer"):
        ZGYA(n_clusters=2, max_iter=1, random_state=0).fit(X, sensitive_features=groups)


def test_zgya_warns_when_the_bound_does_not_settle():
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=100.0, bound_max_iter=5, random_state=0)
    with pytest.warns(ConvergenceWarning, match="stopped at bound_max_iter=5"):
        model.fit(X, sensitive_features=groups)
    assert model.n_bound_iter_[-1] == 5


def test_zgya_warns_when_clusters_keep_emptying():
    # lambda / L too large: each bound optimisation sends a whole group to one cluster.
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=1000.0, random_state=0)
    with pytest.warns(ConvergenceWarning, match="clusters emptied 4 times, so after 3 reseeds"):
        model.fit(X, sensitive_features=groups)
    assert model.n_reseeds_ == 3
    assert set(np.unique(model.labels_)) == {0, 1}


def test_zgya_fit_predict_matches_fit():
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=30.0, random_state=0)
    assert_array_equal(
        model.fit_predict(X, sensitive_features=groups),
        model.fit(X, sensitive_features=groups).labels_,
    )


# ---------------------------------------------------------------- ZGYA input validation


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"n_clusters": 0}, ValueError, rf"'n_clusters' .* must be {INT1}. Got 0 instead"),
        ({"n_clusters": 2.5}, TypeError, rf"'n_clusters' .* must be {INT1}. Got 2.5 instead"),
        ({"fairness_weight": -1.0}, ValueError,
         r"'fairness_weight' .* must be a float in the range \[0.0, inf\). Got -1.0 instead"),
        ({"fairness_weight": "auto"}, TypeError,
         r"'fairness_weight' .* must be a float in the range \[0.0, inf\). Got 'auto' instead"),
        ({"fairness_weight": np.inf}, ValueError, r"'fairness_weight' .* Got inf instead"),
        ({"lipschitz": 0.0}, ValueError,
         r"'lipschitz' .* must be a float in the range \(0.0, inf\). Got 0.0 instead"),
        ({"tol": -1e-3}, ValueError, r"'tol' .* \[0.0, inf\). Got -0.001 instead"),
        ({"bound_tol": -1.0}, ValueError, r"'bound_tol' .* \[0.0, inf\). Got -1.0 instead"),
        ({"max_iter": 0}, ValueError, rf"'max_iter' .* must be {INT1}. Got 0 instead"),
        ({"bound_max_iter": 0}, ValueError,
         rf"'bound_max_iter' .* must be {INT1}. Got 0 instead"),
        ({"n_init": 0}, ValueError, rf"'n_init' .* must be {INT1}. Got 0 instead"),
        ({"init": "random"}, ValueError,
         r"'init' .* must be a str among {'k-means\+\+'} or an array-like. Got 'random'"),
        ({"init": np.zeros((3, 2))}, ValueError, r"init array must have shape .*\(2, 2\)"),
        ({"init": np.zeros((2, 2)), "n_init": 2}, ValueError, "n_init must be 1 when init"),
        ({"target_proportions": [1.0]}, ValueError, "target_proportions must have one entry"),
        ({"target_proportions": [0.7, 0.7]}, ValueError, "target_proportions must sum to 1"),
        ({"target_proportions": [1.5, -0.5]}, ValueError, "target_proportions must be .* >= 0"),
    ],
)
def test_zgya_rejects_bad_parameters(params, error, match):
    X, groups = planted()
    with pytest.raises(error, match=match):
        ZGYA(**{"n_clusters": 2, **params}).fit(X, sensitive_features=groups)


def test_zgya_rejects_several_attributes():
    X, groups = planted()
    sensitive = np.column_stack([groups, groups, 1 - groups])
    with pytest.raises(ValueError, match="supports one sensitive attribute, got 3"):
        ZGYA(n_clusters=2).fit(X, sensitive_features=sensitive)


def test_zgya_rejects_numeric_attribute():
    X, groups = planted()
    with pytest.raises(ValueError, match="categorical sensitive attribute, but 's0' is numeric"):
        ZGYA(n_clusters=2).fit(X, sensitive_features=groups.astype(float))


def test_zgya_rejects_bad_sensitive_length():
    X, groups = planted()
    with pytest.raises(ValueError, match="sensitive_features has 299 rows"):
        ZGYA(n_clusters=2).fit(X, sensitive_features=groups[:-1])


def test_zgya_rejects_targets_without_sensitive_features():
    X, _ = planted()
    with pytest.raises(ValueError, match="target_proportions was given but sensitive_features"):
        ZGYA(n_clusters=2, target_proportions=[0.5, 0.5]).fit(X)


def test_zgya_rejects_too_few_samples():
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        ZGYA(n_clusters=3).fit(np.zeros((2, 2)))


# ---------------------------------------------------------------- BlindKMeans


def test_blind_kmeans_ignores_sensitive_features():
    X, groups = planted()
    blind = BlindKMeans(n_clusters=3, random_state=0)
    with_s = blind.fit(X, sensitive_features=groups).labels_.copy()
    without = blind.fit(X).labels_
    reference = KMeans(n_clusters=3, random_state=0).fit(X)
    assert_array_equal(with_s, without)
    assert_array_equal(with_s, reference.labels_)
    assert_allclose(blind.cluster_centers_, reference.cluster_centers_)
    assert blind.inertia_ == pytest.approx(reference.inertia_)
    assert_array_equal(blind.predict(X), reference.predict(X))
    assert_array_equal(blind.fit_predict(X, sensitive_features=groups), with_s)


def test_blind_kmeans_accepts_several_and_numeric_attributes():
    X, groups = planted()
    frame = pd.DataFrame({"sex": groups, "age": np.linspace(18, 80, len(groups))})
    BlindKMeans(n_clusters=2, random_state=0).fit(X, sensitive_features=frame)


def test_blind_kmeans_rejects_bad_sensitive_length():
    X, groups = planted()
    with pytest.raises(ValueError, match="sensitive_features has 299 rows"):
        BlindKMeans(n_clusters=2).fit(X, sensitive_features=groups[:-1])


def test_blind_kmeans_rejects_bad_n_clusters():
    X, _ = planted()
    with pytest.raises(ValueError, match=r"'n_clusters' parameter of BlindKMeans must be "
                                         rf"{INT1}. Got 0 instead"):
        BlindKMeans(n_clusters=0).fit(X)


# ---------------------------------------------------------------- inputs read as FairKM reads them


BASELINES = {"ZGYA": lambda: ZGYA(n_clusters=2, fairness_weight=30.0, random_state=0),
             "BlindKMeans": lambda: BlindKMeans(n_clusters=2, random_state=0)}


def indexed(seed=0):
    """``planted`` as a DataFrame and a Series sharing a non-default index."""
    X, groups = planted(seed=seed)
    index = pd.Index(np.arange(len(X)) * 7 + 1000, name="person")
    return (pd.DataFrame(X, index=index, columns=["x", "y"]),
            pd.Series(np.where(groups == 1, "b", "a"), index=index, name="sex"))


@pytest.mark.parametrize("name", BASELINES)
def test_sensitive_features_as_y_warns(name):
    X, groups = planted()
    with pytest.warns(UserWarning, match=rf"{name}\.fit got y but no sensitive_features"):
        BASELINES[name]().fit(X, groups)


@pytest.mark.parametrize("name", BASELINES)
def test_shuffled_sensitive_features_are_paired_by_label(name):
    X, sex = indexed()
    aligned = BASELINES[name]().fit(X, sensitive_features=sex)
    shuffled = sex.sample(frac=1.0, random_state=0)
    assert not shuffled.index.equals(sex.index)
    assert_array_equal(BASELINES[name]().fit(X, sensitive_features=shuffled).labels_,
                       aligned.labels_)
    # By position the shuffled groups would be another attribute: ZGYA's fit would differ.
    if name == "ZGYA":
        by_position = BASELINES[name]().fit(X, sensitive_features=shuffled.to_numpy())
        assert not np.array_equal(by_position.labels_, aligned.labels_)


@pytest.mark.parametrize("name", BASELINES)
def test_foreign_index_is_refused_and_default_index_warns(name):
    X, sex = indexed()
    with pytest.raises(ValueError, match="sensitive_features has an index that does not match"):
        BASELINES[name]().fit(X, sensitive_features=sex.set_axis(sex.index + 1))
    # A filtered table beside a column made fresh (index 0..n-1): paired by position, with a word.
    kept = X.iloc[::2]
    fresh = sex.iloc[::2].reset_index(drop=True)
    with pytest.warns(UserWarning, match="sensitive_features has the default index 0..149"):
        BASELINES[name]().fit(kept, sensitive_features=fresh)


@pytest.mark.parametrize("name", BASELINES)
def test_overflowing_X_is_refused_as_by_fairkm(name):
    from fairkm import FairKM

    X, groups = planted()
    X[0, 0] = 1e200
    with pytest.raises(ValueError, match="X is too large") as fairkm_error:
        FairKM(n_clusters=2).fit(X, sensitive_features=groups)
    with pytest.raises(ValueError, match="X is too large") as error:
        BASELINES[name]().fit(X, sensitive_features=groups)
    assert str(error.value) == str(fairkm_error.value)


@pytest.mark.parametrize("name", BASELINES)
def test_feature_copying_the_attribute_warns(name):
    X, sex = indexed()
    X["copy"] = (sex == "b").astype(float)
    with pytest.warns(UserWarning, match="feature 'copy' .*the sensitive attribute 'sex'"):
        BASELINES[name]().fit(X, sensitive_features=sex)


def test_zgya_warns_on_many_valued_numbers_taken_as_categories():
    X, groups = planted()
    ages = pd.Series(18 + np.arange(len(X)) % 60, name="age")
    with pytest.warns(UserWarning, match="'age' holds numbers with 60 distinct values"):
        ZGYA(n_clusters=2, fairness_weight=0.0).fit(X, sensitive_features=ages)


def test_blind_kmeans_passes_on_the_duplicate_rows_warning():
    X = np.repeat([[0.0, 0.0], [1.0, 1.0]], 5, axis=0)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(2\) found smaller than "
                                                r"n_clusters \(3\)"):
        BlindKMeans(n_clusters=3, random_state=0).fit(X)


@pytest.mark.parametrize("param", ["n_clusters", "n_init", "max_iter", "bound_max_iter"])
def test_zgya_refuses_counts_beyond_int64(param):
    # 2**63 passes ">= 1" and used to fail inside NumPy or the compiled kernels.
    X, groups = planted()
    with pytest.raises(ValueError, match=rf"'{param}' parameter of ZGYA must be an int in the "
                                         rf"range \[1, {2**63 - 1}\]. Got {2**63} instead"):
        ZGYA(**{"n_clusters": 2, param: 2**63}).fit(X, sensitive_features=groups)
