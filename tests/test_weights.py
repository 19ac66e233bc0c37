"""The scale-free fairness weight, the budgets, and every attribute counting."""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.datasets import fetch_adult, make_sensitive_blobs
from fairkm.metrics import fairness_report

from . import _reference


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        1500, n_features=3, centers=4, n_values=(2, 4), numeric=1, cluster_std=2.5,
        random_state=0,
    )
    return X, sensitive


@pytest.fixture(scope="module")
def diabetes():
    """scikit-learn's diabetes data: sex categorical, age numeric, the rest features."""
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    return X, sensitive


def attribute_terms(labels, sensitive, numeric=("z0", "age")):
    """Each attribute's unweighted fairness term, from the reference (column order)."""
    out = []
    for name in sensitive.columns:
        column = sensitive[name].to_numpy()
        kind = ([], [column]) if name in numeric else ([column], [])
        problem = _reference.Problem(
            np.zeros((len(labels), 1)), kind[0], kind[1], np.ones(len(kind[0])),
            np.ones(len(kind[1])), 1.0, int(labels.max()) + 1,
        )
        out.append(_reference.fairness(problem, labels))
    return np.array(out)


def random_split_terms(sensitive, numeric=("z0", "age")):
    n = len(sensitive)
    out = []
    for name in sensitive.columns:
        if name in numeric:
            out.append(1.0 / n)
        else:
            p = sensitive[name].value_counts(normalize=True).to_numpy()
            out.append((1 - np.sum(p**2)) / (n * len(p)))
    return np.array(out)


# --------------------------------------------------------------------------- scale-free


@pytest.mark.parametrize("scale", [1e-4, 0.37, 3.0, 1e5])
def test_scaling_X_leaves_the_labels_identical(blobs, scale):
    X, sensitive = blobs
    base = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    scaled = FairKM(4, random_state=0).fit(X * scale, sensitive_features=sensitive)
    assert_array_equal(scaled.labels_, base.labels_)
    assert_allclose(scaled.fairness_weight_, base.fairness_weight_ * scale**2, rtol=1e-9)
    assert_allclose(scaled.cost_increase_, base.cost_increase_, rtol=1e-9, atol=1e-12)


def test_replicating_rows_keeps_relative_cost_and_fairness(blobs):
    """Each row r times, from the same centres: the same trade-off, unlike (n/k)^2."""
    X, sensitive = blobs
    centers = KMeans(4, n_init=1, random_state=0).fit(X).cluster_centers_
    reps = 3
    X3, S3 = np.repeat(X, reps, axis=0), sensitive.loc[sensitive.index.repeat(reps)]
    once = FairKM(4, init=centers).fit(X, sensitive_features=sensitive)
    thrice = FairKM(4, init=centers).fit(X3, sensitive_features=S3)
    assert_allclose(thrice.cost_increase_, once.cost_increase_, rtol=0.01, atol=1e-3)
    assert_allclose(thrice.unfairness_ratio_, once.unfairness_ratio_, rtol=0.01)
    assert_allclose(thrice.blind_inertia_, reps * once.blind_inertia_, rtol=1e-3)
    # The paper's heuristic puts 9 times the weight on the same trade-off.
    paper = [FairKM(4, fairness_weight="paper", init=centers).fit(*data)
             for data in ((X, sensitive), (X3, S3))]
    assert paper[1].fairness_weight_ == pytest.approx(reps**2 * paper[0].fairness_weight_)


def test_the_weights_are_measured_against_the_s_blind_clustering(blobs):
    """lambda * w_a = alpha * I0 / sum(u) * u_a / max(T0_a, random split's T_a)."""
    X, sensitive = blobs
    u = np.array([1.0, 2.0, 0.5])
    alpha = 1.7
    model = FairKM(4, relative_weight=alpha, attribute_weights=u, n_init=3,
                   random_state=0).fit(X, sensitive_features=sensitive)
    # The S-blind clustering it started from: the best of the same three starts.
    blind = FairKM(4, fairness_weight=0.0, n_init=3, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert model.blind_inertia_ == blind.inertia_
    T0 = attribute_terms(blind.labels_, sensitive)
    assert_allclose(model.blind_attribute_fairness_, T0, rtol=1e-9)
    reference = np.maximum(T0, random_split_terms(sensitive))
    assert_allclose(model.fairness_weight_ * model.attribute_weights_,
                    alpha * blind.inertia_ / u.sum() * u / reference, rtol=1e-9)
    assert_allclose(model.attribute_weights_.sum(), u.sum())
    assert model.relative_weight_ == alpha
    # The reported numbers are those of the labels.
    T = attribute_terms(model.labels_, sensitive)
    assert_allclose(model.attribute_fairness_, T, rtol=1e-9)
    assert_allclose(model.fairness_, np.dot(model.attribute_weights_, T), rtol=1e-9)
    assert_allclose(model.objective_, model.inertia_ + model.fairness_weight_ * model.fairness_)
    assert_allclose(model.cost_increase_, model.inertia_ / blind.inertia_ - 1)
    assert_allclose(model.unfairness_ratio_, np.dot(u, T / reference) / u.sum(), rtol=1e-9)
    assert model.unfairness_ratio_ < 1


def test_absolute_weights_stay_available_exactly(blobs):
    X, sensitive = blobs
    n, k = len(X), 4
    paper = FairKM(k, fairness_weight="paper", random_state=0).fit(X, sensitive_features=sensitive)
    number = FairKM(k, fairness_weight=(n / k) ** 2, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert paper.fairness_weight_ == (n / k) ** 2
    assert_array_equal(paper.labels_, number.labels_)
    assert paper.objective_ == number.objective_
    assert np.isnan(paper.blind_inertia_) and np.isnan(paper.cost_increase_)
    assert np.isnan(paper.relative_weight_) and np.isnan(paper.unfairness_ratio_)
    assert_array_equal(paper.attribute_weights_, [1.0, 1.0, 1.0])


def test_the_reported_weights_give_the_reported_objective(blobs):
    """fairness_weight_ and attribute_weights_ are the paper's lambda and w_S, exactly."""
    X, sensitive = blobs
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    problem = _reference.Problem(
        X, [sensitive["s0"].to_numpy(), sensitive["s1"].to_numpy()], [sensitive["z0"].to_numpy()],
        model.attribute_weights_[:2], model.attribute_weights_[2:], model.fairness_weight_, 4,
    )
    assert_allclose(model.objective_, _reference.objective(problem, model.labels_), rtol=1e-9)


def test_more_relative_weight_buys_more_fairness_at_more_cost(blobs):
    X, sensitive = blobs
    fits = [FairKM(4, relative_weight=alpha, random_state=0).fit(X, sensitive_features=sensitive)
            for alpha in (0.0, 0.25, 1.0, 4.0)]
    unfairness = [fit.unfairness_ratio_ for fit in fits]
    cost = [fit.cost_increase_ for fit in fits]
    assert unfairness[0] == pytest.approx(1.0) and cost[0] == 0.0
    assert np.all(np.diff(unfairness) < 0)
    assert np.all(np.diff(cost) > 0)


def test_n_init_auto_starts_ten_times_on_small_data(blobs):
    X, sensitive = blobs
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    best = FairKM(4, fairness_weight=0.0, n_init=10, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert model.blind_inertia_ == best.inertia_


# --------------------------------------------------------------------------- every attribute


def test_every_attribute_fairer_than_kmeans_on_diabetes(diabetes):
    """The small real case where the paper's default left one attribute less fair."""
    X, sensitive = diabetes
    kmeans = KMeans(5, n_init=10, random_state=0).fit(X)
    model = FairKM(5, random_state=0).fit(X, sensitive_features=sensitive)
    fair = fairness_report(model.labels_, sensitive_features=sensitive)["AE"]
    blind = fairness_report(kmeans.labels_, sensitive_features=sensitive)["AE"]
    assert (fair < blind).all(), (fair, blind)
    assert model.cost_increase_ < 0.2


@pytest.mark.parametrize("k", [5, 15])
def test_every_attribute_fairer_than_kmeans_on_adult(shared_data, k):
    adult = fetch_adult(data_home=shared_data)
    X, sensitive = adult.features.to_numpy(dtype=np.float64), adult.sensitive
    kmeans = KMeans(k, n_init=10, random_state=0).fit(X)
    model = FairKM(k, random_state=0).fit(X, sensitive_features=sensitive)
    fair = fairness_report(model.labels_, sensitive_features=sensitive)["AE"]
    blind = fairness_report(kmeans.labels_, sensitive_features=sensitive)["AE"]
    assert (fair < blind).all(), (fair, blind)


@pytest.fixture(scope="module")
def trade():
    """Attribute s1 is fair under the S-blind split and gets less fair when s0 is fixed.

    Two blobs far apart; s0 mostly follows the blob (unfair), s1 says on which
    side of its blob's centre a point lies (fair). The cheapest points to
    move across are the inner ones, all on one side of their blob.
    """
    rng = np.random.default_rng(0)
    n = 400
    blob = rng.integers(0, 2, n)
    centre = np.where(blob == 1, 5.0, -5.0)
    x = centre + rng.normal(0, 1.5, n)
    X = np.column_stack([x, rng.normal(0, 1, n)])
    sensitive = pd.DataFrame({
        "s0": np.where(rng.random(n) < 0.8, blob, 1 - blob), "s1": (x > centre).astype(int),
    })
    blind = FairKM(2, fairness_weight=0.0, n_init=10, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    return X, sensitive, fairness_report(blind.labels_, sensitive_features=sensitive)["AE"]


def test_an_attribute_that_cannot_improve_is_named_in_a_warning(trade):
    X, sensitive, blind = trade
    with pytest.warns(UserWarning, match=r"\['s1'\] ended less fair"):
        model = FairKM(2, attribute_weights=[1.0, 1e-6], random_state=0).fit(
            X, sensitive_features=sensitive
        )
    ae = fairness_report(model.labels_, sensitive_features=sensitive)["AE"]
    assert ae["s1"] > blind["s1"] and ae["s0"] < blind["s0"]


@pytest.mark.parametrize("tol", [1e-2, 5e-2])
def test_relative_weight_zero_is_the_s_blind_clustering_without_warnings(diabetes, tol):
    # A loose tol stops the S-blind phase early; weight 0 must not go on minimising
    # (and then judge the attributes against where the S-blind phase stopped).
    X, sensitive = diabetes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = FairKM(6, relative_weight=0.0, n_init=10, tol=tol, random_state=0).fit(
            X, sensitive_features=sensitive
        )
    blind = FairKM(6, fairness_weight=0.0, n_init=10, tol=tol, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert_array_equal(model.labels_, blind.labels_)
    assert model.fairness_weight_ == 0.0 and model.cost_increase_ == 0.0


def test_an_attribute_left_less_fair_gets_more_weight(trade):
    X, sensitive, blind = trade
    u = np.array([1.0, 0.01])
    model = FairKM(2, attribute_weights=u, random_state=0).fit(X, sensitive_features=sensitive)
    ae = fairness_report(model.labels_, sensitive_features=sensitive)["AE"]
    assert ae["s1"] <= blind["s1"] * (1 + 1e-9)
    # With the requested weights kept as they were, from the same S-blind start,
    # s1 would have ended less fair.
    ratio = u / np.maximum(model.blind_attribute_fairness_, random_split_terms(sensitive, ()))
    start = FairKM(2, fairness_weight=0.0, n_init=10, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    unrepaired = FairKM(
        2, fairness_weight=model.blind_inertia_ * ratio.sum() / u.sum() ** 2,
        attribute_weights=ratio * u.sum() / ratio.sum(), init=start.cluster_centers_,
    ).fit(X, sensitive_features=sensitive)
    worse = fairness_report(unrepaired.labels_, sensitive_features=sensitive)["AE"]
    assert worse["s1"] > blind["s1"]
    shares = [w[1] / w[0] for w in (model.attribute_weights_, unrepaired.attribute_weights_)]
    assert shares[0] > shares[1]


# --------------------------------------------------------------------------- budgets


@pytest.mark.parametrize("budget", [0.02, 0.10])
def test_max_cost_is_respected_and_bought_fairness(blobs, budget):
    X, sensitive = blobs
    model = FairKM(4, max_cost=budget, random_state=0).fit(X, sensitive_features=sensitive)
    assert 0 < model.cost_increase_ <= budget
    assert model.unfairness_ratio_ < 1
    # The fairest within the budget: twice its relative weight (warm, from its own
    # clustering) would cost more than the budget allows.
    more = FairKM(4, relative_weight=2 * model.relative_weight_, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert more.cost_increase_ > budget or more.unfairness_ratio_ >= model.unfairness_ratio_


def test_a_larger_budget_buys_more_fairness(blobs):
    X, sensitive = blobs
    small, large = (FairKM(4, max_cost=c, random_state=0).fit(X, sensitive_features=sensitive)
                    for c in (0.02, 0.10))
    assert large.unfairness_ratio_ < small.unfairness_ratio_
    assert large.cost_increase_ > small.cost_increase_


def test_max_unfairness_reaches_the_target_cheaply(blobs):
    X, sensitive = blobs
    model = FairKM(4, max_unfairness=0.5, random_state=0).fit(X, sensitive_features=sensitive)
    assert model.unfairness_ratio_ <= 0.5
    half = FairKM(4, relative_weight=model.relative_weight_ / 2, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert half.unfairness_ratio_ > 0.5 or half.cost_increase_ >= model.cost_increase_


def test_an_unreachable_target_warns_and_keeps_the_fairest(trade):
    X, sensitive, _ = trade
    with pytest.warns(UserWarning, match="max_unfairness=0.001 was not reached"):
        model = FairKM(2, max_unfairness=0.001, random_state=0).fit(
            X, sensitive_features=sensitive
        )
    assert model.unfairness_ratio_ > 0.001


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"relative_weight": -1.0}, ValueError, "relative_weight"),
        ({"relative_weight": "big"}, TypeError, "relative_weight"),
        ({"max_cost": 0.0}, ValueError, "max_cost"),
        ({"max_cost": "5%"}, TypeError, "max_cost"),
        ({"max_unfairness": 1.0}, ValueError, "max_unfairness"),
        ({"max_unfairness": -0.5}, ValueError, "max_unfairness"),
        ({"max_cost": 0.05, "max_unfairness": 0.5}, ValueError, "cannot both"),
        ({"max_cost": 0.05, "relative_weight": 2.0}, ValueError, "relative_weight"),
        ({"max_cost": 0.05, "fairness_weight": 1e3}, ValueError, "max_cost applies"),
        ({"relative_weight": 2.0, "fairness_weight": "paper"}, ValueError, "relative_weight"),
        ({"fairness_weight": "relative"}, ValueError, "fairness_weight"),
    ],
)
def test_invalid_weight_parameters(blobs, params, error, match):
    X, sensitive = blobs
    with pytest.raises(error, match=match):
        FairKM(4, **params).fit(X, sensitive_features=sensitive)


def test_without_sensitive_features_the_default_is_plain_kmeans(blobs):
    X, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = FairKM(4, random_state=0).fit(X)
    blind = FairKM(4, fairness_weight=0.0, n_init=10, random_state=0).fit(X)
    assert_array_equal(model.labels_, blind.labels_)
    assert model.fairness_weight_ == 0.0 and model.cost_increase_ == 0.0


def test_minibatch_engine_runs_the_same_phases(blobs):
    X, sensitive = blobs
    exact = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    mini = FairKM(4, algorithm="minibatch", batch_size=256, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert mini.blind_inertia_ == pytest.approx(exact.blind_inertia_, rel=0.01)
    assert mini.objective_ == pytest.approx(exact.objective_, rel=0.02)
    assert mini.unfairness_ratio_ < 1


def test_many_points_converge_at_the_defaults():
    """With (n/k)^2 these blobs ran into max_iter=1000; the scale-free weight converges."""
    X, sensitive, _ = make_sensitive_blobs(100_000, n_values=(2, 5), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = FairKM(5, n_init=1, random_state=0).fit(X, sensitive_features=sensitive)
    assert model.n_iter_ < 100
    assert model.unfairness_ratio_ < 1
