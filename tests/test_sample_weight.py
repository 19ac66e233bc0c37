"""Sample weights: a row of weight w counts as w rows, in every engine."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm import FairKM
from fairkm.cluster import _kernels
from fairkm.datasets import make_sensitive_blobs

from . import _reference
from ._problems import EXPONENT_OF_WEIGHTING, engine, problems
from .conftest import examples


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        600, n_features=3, centers=4, n_values=(2, 3), numeric=1, cluster_std=2.0,
        random_state=0,
    )
    return X, sensitive


def repeated(problem, counts):
    """The problem with each row repeated ``counts`` times, without weights."""
    return _reference.Problem(
        np.repeat(problem.X, counts, axis=0),
        [np.repeat(col, counts) for col in problem.categorical],
        [np.repeat(col, counts) for col in problem.numeric],
        problem.cat_weights, problem.num_weights, problem.fairness_weight, problem.n_clusters,
        cluster_exponent=problem.cluster_exponent,
    )


@settings(max_examples=examples(150))
@given(case=problems(weighted=False), data=st.data())
def test_integer_weights_price_a_labelling_as_repeated_rows(case, data):
    """The weighted objective, in the engine and the reference, is that of the repeated rows."""
    problem, labels, _ = case
    n = len(labels)
    counts = np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    for col in problem.numeric:  # the repeated column must not be constant either
        assert np.repeat(col, counts).std() > 0
    weighted = _reference.Problem(
        problem.X, problem.categorical, problem.numeric, problem.cat_weights,
        problem.num_weights, problem.fairness_weight, problem.n_clusters,
        sample_weight=counts.astype(float), cluster_exponent=problem.cluster_exponent,
    )
    want = _reference.objective(repeated(problem, counts), np.repeat(labels, counts))
    assert_allclose(_reference.objective(weighted, labels), want, rtol=1e-9, atol=1e-9)
    terms, stats = engine(weighted, labels)
    got = _kernels.inertia(problem.X, stats.cluster_centers(), terms.weights, labels)
    got += problem.fairness_weight * stats.fairness(terms)
    assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_zero_weights_equal_dropping_the_rows(blobs):
    X, sensitive = blobs
    weights = np.where(np.arange(len(X)) % 5 == 0, 0.0, 1.0)
    kept = weights > 0
    for params in ({}, {"fairness_weight": 1e5}, {"max_cost": 0.05}):
        weighted = FairKM(4, random_state=0, **params).fit(
            X, sensitive_features=sensitive, sample_weight=weights
        )
        dropped = FairKM(4, random_state=0, **params).fit(
            X[kept], sensitive_features=sensitive[kept]
        )
        assert_array_equal(weighted.labels_[kept], dropped.labels_)
        assert_allclose(weighted.objective_, dropped.objective_, rtol=1e-12)
        assert_allclose(weighted.cluster_centers_, dropped.cluster_centers_, rtol=1e-12)
        # The rows of weight 0 go to their nearest centre.
        gone = np.flatnonzero(~kept)
        distances = ((X[gone, None, :] - weighted.cluster_centers_[None]) ** 2).sum(axis=2)
        assert_array_equal(weighted.labels_[gone], distances.argmin(axis=1))


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_weights_scaled_alike_give_the_same_labels(blobs, scale):
    X, sensitive = blobs
    plain = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    scaled = FairKM(4, random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=np.full(len(X), scale)
    )
    assert_array_equal(scaled.labels_, plain.labels_)
    assert_allclose(scaled.inertia_, scale * plain.inertia_, rtol=1e-12)
    assert_allclose(scaled.cost_increase_, plain.cost_increase_, rtol=1e-9)
    assert_allclose(scaled.unfairness_ratio_, plain.unfairness_ratio_, rtol=1e-9)


def test_the_papers_weight_counts_the_rows_the_weights_stand_for(blobs):
    """fairness_weight="paper" is (n / k)^2 with n the rows a weighted row stands for."""
    X, sensitive = blobs
    counts = np.arange(len(X)) % 3 + 1
    model = FairKM(4, fairness_weight="paper", random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=counts)
    # The expanded data's lambda, (sum of counts / k)^2, in the paper's formula.
    assert_allclose(model.fairness_weight_, (counts.sum() / 4) ** 2, rtol=1e-12)
    expanded = FairKM(4, fairness_weight="paper", random_state=0).fit(
        np.repeat(X, counts, axis=0), sensitive_features=sensitive.loc[
            sensitive.index.repeat(counts)])
    assert model.fairness_weight_ == pytest.approx(expanded.fairness_weight_, rel=1e-12)


def test_weights_move_the_clustering(blobs):
    """Heavy rows pull the centres: the weighted fit is not the unweighted one."""
    X, sensitive = blobs
    weights = np.where(X[:, 0] > np.median(X[:, 0]), 10.0, 1.0)
    model = FairKM(4, fairness_weight=0.0, random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=weights
    )
    for c in range(4):
        members = model.labels_ == c
        assert_allclose(model.cluster_centers_[c],
                        np.average(X[members], axis=0, weights=weights[members]))
    assert_allclose(model.inertia_, _reference.inertia(X, model.labels_, 4, weights),
                    rtol=1e-10)
    # The dataset's mix is the weighted one.
    codes = sensitive["s0"].to_numpy()
    share = weights[codes == model.sensitive_attributes_.categories[0][0]].sum() / weights.sum()
    assert_allclose(model.sensitive_attributes_.proportions[0][0], share)


def test_score_with_integer_weights_is_the_score_of_repeated_rows(blobs):
    X, sensitive = blobs
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    counts = np.arange(len(X)) % 3 + 1
    X_rep, S_rep = np.repeat(X, counts, axis=0), sensitive.loc[sensitive.index.repeat(counts)]
    assert_allclose(
        model.score(X, sensitive_features=sensitive, sample_weight=counts.astype(float)),
        model.score(X_rep, sensitive_features=S_rep), rtol=1e-10,
    )
    blind = FairKM(4, random_state=0).fit(X)  # without sensitive features: the K-Means term
    assert_allclose(blind.score(X, sample_weight=counts), blind.score(X_rep), rtol=1e-10)


def test_every_engine_takes_weights(blobs):
    X, sensitive = blobs
    weights = np.random.default_rng(0).uniform(0.5, 3.0, len(X))
    exact = FairKM(4, algorithm="exact", random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=weights
    )
    mini = FairKM(4, algorithm="minibatch", batch_size=64, random_state=0).fit(
        X, sensitive_features=sensitive, sample_weight=weights
    )
    for model in (exact, mini):
        problem = _reference.Problem(
            X, [sensitive[c].to_numpy() for c in ("s0", "s1")], [sensitive["z0"].to_numpy()],
            model.attribute_weights_[:2], model.attribute_weights_[2:],
            model.fairness_weight_, 4, sample_weight=weights,
            cluster_exponent=EXPONENT_OF_WEIGHTING[model.cluster_weighting_],
        )
        assert_allclose(model.objective_, _reference.objective(problem, model.labels_),
                        rtol=1e-9)
    assert mini.objective_ == pytest.approx(exact.objective_, rel=0.02)


@pytest.mark.parametrize(
    ("sample_weight", "error", "match"),
    [
        (-np.ones(600), ValueError, r"sample_weight must be finite and >= 0, got -1.0 at row 0"),
        (np.r_[np.ones(599), np.nan], ValueError, "sample_weight must be finite"),
        (np.ones(5), ValueError, "sample_weight has 5 entries but X has 600"),
        (np.zeros(600), ValueError, "sample_weight is zero for every row"),
        (["a"] * 600, TypeError, "sample_weight must hold real numbers, got an array of dtype <U1"),
    ],
)
def test_invalid_sample_weight(blobs, sample_weight, error, match):
    X, sensitive = blobs
    with pytest.raises(error, match=match):
        FairKM(4).fit(X, sensitive_features=sensitive, sample_weight=sample_weight)


def test_dask_takes_weights_chunked_like_X(blobs):
    pytest.importorskip("distributed")
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from fairkm.dask import FairKM as DaskFairKM

    X, sensitive = blobs
    weights = np.where(np.arange(len(X)) % 7 == 0, 0.0, 1.0 + np.arange(len(X)) % 3)
    centers = X[[0, 150, 300, 450]]
    local = FairKM(4, init=centers).fit(X, sensitive_features=sensitive, sample_weight=weights)
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        model = DaskFairKM(4, init=centers).fit(
            da.from_array(X, chunks=(200, 3)),
            sensitive_features=dd.from_pandas(sensitive, npartitions=3),
            sample_weight=da.from_array(weights, chunks=200), client=client,
        )
        labels = model.labels_.compute()
    assert model.objective_ == pytest.approx(local.objective_, rel=0.01)
    assert_allclose(model.sensitive_attributes_.proportions[0],
                    local.sensitive_attributes_.proportions[0])
    assert_allclose(model.blind_clustering_.inertia, local.blind_clustering_.inertia, rtol=0.01)
    problem = _reference.Problem(
        X, [sensitive[c].to_numpy() for c in ("s0", "s1")], [sensitive["z0"].to_numpy()],
        model.attribute_weights_[:2], model.attribute_weights_[2:], model.fairness_weight_, 4,
        sample_weight=weights, cluster_exponent=EXPONENT_OF_WEIGHTING[model.cluster_weighting_],
    )
    assert_allclose(model.objective_, _reference.objective(problem, labels), rtol=1e-9)
    gone = np.flatnonzero(weights == 0)
    distances = ((X[gone, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    assert_array_equal(labels[gone], distances.argmin(axis=1))
