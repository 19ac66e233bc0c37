"""Tests of the baselines: S-blind K-Means and ZGYA (Variational Fair Clustering)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairkm.baselines import ZGYA, BlindKMeans
from fairkm.baselines._zgya_kernels import (
    bound_step,
    fairness_cost,
    gradient_table,
    group_masses,
)

# ---------------------------------------------------------------- local helpers


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
def test_zgya_objective_does_not_rise(weight, seed, sensitive):
    X, groups = planted(seed=seed)
    model = ZGYA(n_clusters=3, fairness_weight=weight, random_state=seed)
    model.fit(X, sensitive_features=groups if sensitive else None)
    history = model.objective_history_
    assert len(history) == model.n_iter_ >= 2
    assert np.all(np.diff(history) <= 1e-9 * np.abs(history[:-1])), history


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
def test_zgya_empty_cluster_keeps_its_centre(weight):
    X, groups = planted()
    far = [1e4, 1e4]
    init = np.array([[0.0, 0.0], [1.0, 0.9], far])
    model = ZGYA(n_clusters=3, fairness_weight=weight, init=init).fit(
        X, sensitive_features=groups
    )
    assert set(np.unique(model.labels_)) == {0, 1}
    assert_array_equal(model.cluster_centers_[2], far)
    assert np.all(np.isfinite(model.soft_labels_)) and np.isfinite(model.objective_)
    assert np.all(np.isnan(model.cluster_proportions_[2]))


def test_zgya_warns_when_not_converged():
    X, groups = planted()
    with pytest.warns(ConvergenceWarning, match="within max_iter=1 outer"):
        ZGYA(n_clusters=2, max_iter=1, random_state=0).fit(X, sensitive_features=groups)


def test_zgya_warns_when_bound_updates_oscillate():
    # lambda / L too large: whole groups flip between the clusters at every update.
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=1000.0, bound_max_iter=100, random_state=0)
    with pytest.warns(ConvergenceWarning, match="stopped at bound_max_iter=100"):
        model.fit(X, sensitive_features=groups)
    assert np.all(model.n_bound_iter_ == 100)


def test_zgya_warns_when_objective_rises():
    # Distances of order 10: the KL gradient is huge where a group is nearly absent.
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=10.0, bound_max_iter=100, random_state=1)
    with pytest.warns(ConvergenceWarning, match="the objective rose in"):
        model.fit(4.0 * X, sensitive_features=groups)
    assert np.any(np.diff(model.objective_history_) > 0)


def test_zgya_fit_predict_matches_fit():
    X, groups = planted()
    model = ZGYA(n_clusters=2, fairness_weight=30.0, random_state=0)
    assert_array_equal(
        model.fit_predict(X, sensitive_features=groups),
        model.fit(X, sensitive_features=groups).labels_,
    )


# ---------------------------------------------------------------- bound update vs reference


def reference_gradient(S, codes, targets):
    n, k = S.shape
    b = np.zeros((n, k))
    for p in range(n):
        for c in range(k):
            total = 0.0
            for j, u in enumerate(targets):
                mass = sum(S[q, c] for q in range(n))
                group_mass = sum(S[q, c] for q in range(n) if codes[q] == j)
                v = 1.0 if codes[p] == j else 0.0
                total += u * (1.0 / mass - (v / group_mass if v else 0.0))
            b[p, c] = total
    return b


def reference_bound_step(S, dist, codes, targets, weight, lipschitz):
    b = reference_gradient(S, codes, targets)
    new = S * np.exp(-(dist + weight * b) / lipschitz)
    new /= new.sum(axis=1, keepdims=True)
    bound = np.sum(new * (dist + weight * b)) + lipschitz * np.sum(new * np.log(new / S))
    return new, bound


@st.composite
def bound_problems(draw):
    n = draw(st.integers(2, 9))
    k = draw(st.integers(1, 4))
    n_values = draw(st.integers(1, 3))
    codes = np.array(draw(st.lists(st.integers(0, n_values - 1), min_size=n, max_size=n)))
    weights = np.array(
        draw(st.lists(st.floats(0.05, 1.0), min_size=n * k, max_size=n * k))
    ).reshape(n, k)
    S = weights / weights.sum(axis=1, keepdims=True)
    dist = np.array(draw(st.lists(st.floats(0.0, 3.0), min_size=n * k, max_size=n * k)))
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n_values, max_size=n_values)))
    targets = raw / raw.sum() if raw.sum() > 0 else np.full(n_values, 1.0 / n_values)
    weight = draw(st.floats(0.0, 5.0))
    lipschitz = draw(st.floats(0.5, 10.0))
    return S, dist.reshape(n, k), codes.astype(np.int64), targets, weight, lipschitz


def reference_masses(S, codes, n_values):
    group_mass = np.array([[S[codes == j, c].sum() for c in range(S.shape[1])]
                           for j in range(n_values)])
    return group_mass, S.sum(axis=0)


def fairness_gradient(S, codes, targets):
    """The library's per-point gradient: its (n_values, k) table looked up by group."""
    return gradient_table(*group_masses(S, codes, len(targets)), targets)[codes]


@settings(deadline=None, max_examples=150)
@given(problem=bound_problems())
def test_bound_update_matches_reference(problem):
    S, dist, codes, targets, weight, lipschitz = problem
    n_values = len(targets)
    group_mass, mass = group_masses(S, codes, n_values)
    want_group_mass, want_mass = reference_masses(S, codes, n_values)
    assert_allclose(group_mass, want_group_mass, rtol=1e-12)
    assert_allclose(mass, want_mass, rtol=1e-12)
    assert_allclose(
        fairness_gradient(S, codes, targets),
        reference_gradient(S, codes, targets),
        rtol=1e-10,
        atol=1e-12,
    )
    log_s = np.log(S)
    table = gradient_table(group_mass, mass, targets)
    work = np.empty_like(S)
    bound = bound_step(log_s, dist, codes, table, weight, lipschitz, group_mass, mass, work)
    want, want_bound = reference_bound_step(S, dist, codes, targets, weight, lipschitz)
    assert_allclose(np.exp(log_s), want, rtol=1e-9, atol=1e-15)
    assert bound == pytest.approx(want_bound, rel=1e-9, abs=1e-9)
    # The pass also leaves the masses of the new assignments, for the next update.
    new_group_mass, new_mass = reference_masses(want, codes, n_values)
    assert_allclose(group_mass, new_group_mass, rtol=1e-9, atol=1e-15)
    assert_allclose(mass, new_mass, rtol=1e-9, atol=1e-15)


def test_gradient_is_derivative_of_kl_cost():
    rng = np.random.RandomState(0)
    n, k = 12, 3
    codes = rng.randint(0, 3, size=n)
    targets = np.bincount(codes, minlength=3) / n
    S = rng.uniform(0.1, 1.0, size=(n, k))
    grad = fairness_gradient(S, codes, targets)

    def cost(S):
        return fairness_cost(*group_masses(S, codes, 3), targets)

    step = 1e-6
    numeric = np.zeros_like(S)
    for p in range(n):
        for c in range(k):
            up, down = S.copy(), S.copy()
            up[p, c] += step
            down[p, c] -= step
            numeric[p, c] = (cost(up) - cost(down)) / (2 * step)
    assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- ZGYA input validation


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"n_clusters": 0}, ValueError, "n_clusters must be >= 1, got 0"),
        ({"n_clusters": 2.5}, TypeError, "n_clusters must be an int, got 2.5"),
        ({"fairness_weight": -1.0}, ValueError, "fairness_weight must be .* >= 0, got -1.0"),
        ({"fairness_weight": "auto"}, TypeError, "fairness_weight must be a float, got 'auto'"),
        ({"fairness_weight": np.inf}, ValueError, "fairness_weight must be a finite"),
        ({"lipschitz": 0.0}, ValueError, "lipschitz must be a finite number > 0, got 0.0"),
        ({"tol": -1e-3}, ValueError, "tol must be .* >= 0, got -0.001"),
        ({"bound_tol": -1.0}, ValueError, "bound_tol must be .* >= 0, got -1.0"),
        ({"max_iter": 0}, ValueError, "max_iter must be >= 1, got 0"),
        ({"bound_max_iter": 0}, ValueError, "bound_max_iter must be >= 1, got 0"),
        ({"n_init": 0}, ValueError, "n_init must be >= 1, got 0"),
        ({"init": "random"}, ValueError, r"init must be 'k-means\+\+' or an array, got 'random'"),
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
    with pytest.raises(ValueError, match="'n_clusters' parameter .* Got 0"):
        BlindKMeans(n_clusters=0).fit(X)
