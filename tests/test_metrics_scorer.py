"""make_fair_clustering_scorer: the fairest clustering within a K-Means cost budget."""

import numpy as np
import pandas as pd
import pytest
import sklearn
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairkm import FairKM
from fairkm.metrics import MEASURES, make_fair_clustering_scorer

from . import _metrics_reference as ref
from .conftest import examples

FAIRNESS = [m.name for m in MEASURES.values() if m.kind == "fairness"]
OVER_BUDGET = 1e6


pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.one_thread


class Fixed(ClusterMixin, BaseEstimator):
    """Returns the labels it was made with; records the sensitive features predict got."""

    def __init__(self, labels=None, n_clusters=2):
        self.labels = labels
        self.n_clusters = n_clusters

    def fit(self, X, y=None):
        return self

    def predict(self, X, *, sensitive_features=None):
        self.seen_ = sensitive_features
        return np.asarray(self.labels)


class Centres(ClusterMixin, BaseEstimator):
    """Nearest of fixed centres; no n_clusters parameter, no sensitive_features in predict."""

    def __init__(self, centres=None):
        self.centres = centres

    def fit(self, X, y=None):
        self.cluster_centers_ = np.asarray(self.centres, dtype=float)
        return self

    def predict(self, X):
        return cdist(np.asarray(X, dtype=float), self.cluster_centers_).argmin(axis=1)


def ref_score(X, labels, S, weights, *, max_cost, measure, n_clusters, n_init, random_state):
    """The score by its definition, on plain NumPy references of CO and the measures."""
    blind = KMeans(n_clusters, n_init=n_init, random_state=random_state).fit(
        X, sample_weight=weights
    ).labels_
    w = np.ones(len(labels)) if weights is None else weights
    cost, blind_cost = ref.objective(X, labels, w, True), ref.objective(X, blind, w, True)
    m = ref.fairness(labels, S, w, numeric=False)[measure]
    m_blind = ref.fairness(blind, S, w, numeric=False)[measure]

    def ratio(a, b):
        return (1.0 if a == 0 else np.inf) if b == 0 else a / b

    r = ratio(m_blind, m) if MEASURES[measure].higher_is_better else ratio(m, m_blind)
    excess = ratio(cost, blind_cost) - 1 - max_cost
    if excess <= 0:
        return -min(r, OVER_BUDGET)
    return -(OVER_BUDGET + 1 + min(excess, OVER_BUDGET))


@st.composite
def scored(draw):
    n = draw(st.integers(8, 24))
    X = np.array(draw(st.lists(st.integers(-6, 6), min_size=2 * n, max_size=2 * n)), float)
    X = X.reshape(n, 2)
    k = draw(st.integers(2, 3))
    assume(len(np.unique(X, axis=0)) > k + 1)
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    S = np.array(draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)))
    weights = draw(st.one_of(st.none(), st.lists(st.sampled_from([1.0, 2.0, 0.5]),
                                                 min_size=n, max_size=n).map(np.array)))
    return X, labels, S, weights, k


@settings(max_examples=examples(40))
@given(problem=scored(), measure=st.sampled_from(FAIRNESS),
       max_cost=st.sampled_from([0.0, 0.1, 0.5, 1.0]))
def test_score_matches_its_definition(problem, measure, max_cost):
    X, labels, S, weights, k = problem
    scorer = make_fair_clustering_scorer(max_cost, measure=measure, n_init=2, random_state=0)
    got = scorer.evaluate(Fixed(labels, k), X, sensitive_features=S, sample_weight=weights)
    want = ref_score(X, labels, S, weights, max_cost=max_cost, measure=measure,
                     n_clusters=k, n_init=2, random_state=0)
    assert_allclose(got["score"], want, rtol=1e-9)
    assert scorer(Fixed(labels, k), X, sensitive_features=S, sample_weight=weights) == got["score"]
    # Within the budget every score is at least -1e6; over it, below -(1e6 + 1).
    if got["within_budget"]:
        assert -OVER_BUDGET <= got["score"] <= 0
        assert got["cost_ratio"] <= 1 + max_cost
    else:
        assert got["score"] < -(OVER_BUDGET + 1)


def _blobs():
    """Three tight blobs of 4 rows, 10 apart, each one cluster of K-Means.

    Groups: a a a b | b b b a | a a b b, so K-Means' clusters have a-shares 3/4, 1/4
    and 1/2 against 1/2 overall: AE = (4 sqrt(2)/4 + 4 sqrt(2)/4 + 0) / 12 = sqrt(2)/6.
    """
    rng = np.random.RandomState(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X = np.repeat(centres, 4, axis=0) + rng.uniform(-0.5, 0.5, size=(12, 2))
    S = np.array(list("aaab" "bbba" "aabb"))
    return X, S, centres


def test_over_budget_never_beats_within_budget():
    X, S, centres = _blobs()
    blind = np.repeat([0, 1, 2], 4)
    scorer = make_fair_clustering_scorer(max_cost=0.5, n_init=10)
    blind_eval = scorer.evaluate(Fixed(blind, 3), X, sensitive_features=S)
    assert blind_eval["blind_unfairness"] == pytest.approx(np.sqrt(2) / 6, rel=1e-12)
    assert blind_eval["within_budget"] and blind_eval["score"] == -1.0
    # Swapping rows 0 (a) and 4 (b) between the first two blobs makes every cluster
    # half a, half b: perfectly fair, but two rows now sit 10 away from their cluster.
    fair = blind.copy()
    fair[[0, 4]] = [1, 0]
    fair_eval = scorer.evaluate(Fixed(fair, 3), X, sensitive_features=S)
    assert fair_eval["unfairness"] == 0 and fair_eval["unfairness_ratio"] == 0
    assert fair_eval["cost_ratio"] > 10 and not fair_eval["within_budget"]
    assert fair_eval["score"] < -OVER_BUDGET < blind_eval["score"]
    # A budget that covers its cost makes it the best possible score, 0: the same rows with
    # the blobs 20 times closer, where the swap costs under +100% (a budget is a share, <= 1).
    centred = X - np.repeat(centres, 4, axis=0) + np.repeat(centres / 20, 4, axis=0)
    near = scorer.evaluate(Fixed(fair, 3), centred, sensitive_features=S)
    assert 1 < near["cost_ratio"] < 2
    wide = make_fair_clustering_scorer(max_cost=near["cost_ratio"] - 1 + 1e-9, n_init=10)
    assert wide(Fixed(fair, 3), centred, sensitive_features=S) == 0
    # Over the budget, the nearer the budget the higher.
    tighter = make_fair_clustering_scorer(max_cost=0.1, n_init=10)
    assert tighter(Fixed(fair, 3), X, sensitive_features=S) == pytest.approx(
        fair_eval["score"] - 0.4, rel=1e-12
    )


def test_higher_is_better_measure_inverts_the_ratio():
    X, S, _ = _blobs()
    # Swapping rows 0 (a) and 5 (b) between the first two blobs:
    labels = np.repeat([0, 1, 2], 4)
    labels[[0, 5]] = [1, 0]
    # Cluster 0 = rows 5, 1, 2, 3: b a a b -> 1; cluster 1 = rows 4, 0, 6, 7: b a b a -> 1;
    # cluster 2: a a b b -> 1. K-Means' blobs: 1/3, 1/3, 1. Balance 1 against 1/3.
    got = make_fair_clustering_scorer(1.0, measure="balance").evaluate(
        Fixed(labels, 3), X, sensitive_features=S
    )
    assert got["unfairness"] == 1 and got["blind_unfairness"] == pytest.approx(1 / 3)
    assert got["unfairness_ratio"] == pytest.approx(1 / 3)
    # Two rows swapped between tight blobs cost over 100 times K-Means' term: beyond any
    # budget a share can give (max_cost is at most 1), so the score ranks by the excess
    # (test_score_matches_its_definition checks that formula).
    assert not got["within_budget"] and got["score"] < -1


def test_pipeline_scores_what_reaches_the_last_step():
    X, S, centres = _blobs()
    X = X * [1.0, 100.0] + 7
    pipe = make_pipeline(StandardScaler(), Centres(StandardScaler().fit(X).transform(
        centres * [1.0, 100.0] + 7))).fit(X)
    scorer = make_fair_clustering_scorer(0.05, n_init=10)
    Xt = pipe[0].transform(X)
    assert scorer.evaluate(pipe, X, sensitive_features=S) == scorer.evaluate(
        pipe[-1], Xt, sensitive_features=S
    )
    # The number of clusters comes from cluster_centers_ when there is no n_clusters.
    assert scorer(pipe, X, sensitive_features=S) == -1.0


def test_predict_gets_the_sensitive_features_when_it_takes_them():
    X, S, _ = _blobs()
    est = Fixed(np.repeat([0, 1, 2], 4), 3)
    make_fair_clustering_scorer(n_init=2)(est, X, sensitive_features=S)
    assert est.seen_ is S


def test_sample_weight_counts_rows():
    # Integer weights: the same score as the rows repeated (K-Means finds the blobs in both).
    X, S, centres = _blobs()
    est = Centres(centres).fit(X)
    w = np.array([1, 2, 3, 1] * 3)
    rows = np.repeat(np.arange(12), w)
    est.cluster_centers_ = centres + [[0.4, 0.0], [0.0, 0.0], [0.0, 0.0]]
    scorer = make_fair_clustering_scorer(0.05, n_init=10)
    got = scorer.evaluate(est, X, sensitive_features=S, sample_weight=w)
    want = scorer.evaluate(est, X[rows], sensitive_features=S[rows])
    for key in ("cost", "blind_cost", "unfairness", "blind_unfairness", "score"):
        assert_allclose(got[key], want[key], rtol=1e-10, err_msg=key)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"max_cost": -0.1}, ValueError, "max_cost"),
        ({"max_cost": "5%"}, TypeError, "max_cost"),
        ({"max_cost": np.inf}, ValueError,
         r"'max_cost' parameter of make_fair_clustering_scorer must be a float in the range "
         r"\[0.0, 1.0\] \(a share, not a percentage: 0.05 for 5%\). Got inf instead"),
        ({"measure": "CO"}, ValueError, r"'measure' .* must be a str among {.*'AE'.*}. Got 'CO'"),
        ({"n_init": 0}, ValueError, "n_init"),
        ({"n_init": 1.5}, TypeError, "n_init"),
        ({"sensitive_features": ["a", "b"]}, TypeError,
         r"'sensitive_features' .* must be None, an instance of 'pandas.Series' or an "
         r"instance of 'pandas.DataFrame'. Got \['a', 'b'\] instead"),
    ],
)
def test_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_fair_clustering_scorer(**kwargs)


def test_estimator_without_predict_or_cluster_count():
    X, S, _ = _blobs()
    scorer = make_fair_clustering_scorer()
    with pytest.raises(TypeError, match="with a predict method"):
        scorer(KMeans(3).fit(X).transform, X, sensitive_features=S)
    with pytest.raises(TypeError, match="needs the number of clusters"):
        scorer(Fixed(np.repeat([0, 1, 2], 4), n_clusters=None), X, sensitive_features=S)


# --------------------------------------------------------------------------- routing


def test_routing_requests():
    scorer = make_fair_clustering_scorer()
    routing = scorer.get_metadata_routing()
    assert routing.consumes("score", ["sensitive_features", "sample_weight", "groups"]) == {
        "sensitive_features", "sample_weight"
    }
    assert scorer.set_score_request(sample_weight=False) is scorer
    assert scorer.get_metadata_routing().consumes(
        "score", ["sensitive_features", "sample_weight"]
    ) == {"sensitive_features"}
    scorer.set_score_request(sensitive_features="groups_of_people")
    assert scorer.get_metadata_routing().consumes("score", ["groups_of_people"]) == {
        "groups_of_people"
    }
    with pytest.raises(ValueError, match="sensitive_features"):
        scorer.set_score_request(sensitive_features=3)


def _diabetes():
    data = load_diabetes(scaled=False, as_frame=True).frame
    S = pd.DataFrame({"sex": data["sex"].astype(int), "age": data["age"].astype(float)})
    X = data.drop(columns=["age", "sex", "target"])
    return X, S


def test_cross_validate_routes_the_test_rows():
    X, S = _diabetes()
    X = X.to_numpy()
    scorer = make_fair_clustering_scorer(0.5, n_init=2)
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        result = cross_validate(KMeans(3, n_init=2, random_state=1), X, scoring=scorer, cv=cv,
                                params={"sensitive_features": S}, return_estimator=True)
    for (_, test), model, score in zip(cv.split(X), result["estimator"], result["test_score"],
                                       strict=True):
        assert score == scorer(model, X[test], sensitive_features=S.iloc[test])


@pytest.mark.parametrize("weigh_score", [True, False])
def test_cross_validate_routes_the_weights(weigh_score):
    X, S = _diabetes()
    X = X.to_numpy()
    w = np.random.default_rng(0).integers(1, 4, len(X)).astype(float)
    scorer = make_fair_clustering_scorer(0.5, n_init=2).set_score_request(
        sample_weight=weigh_score
    )
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        model = KMeans(3, n_init=2, random_state=1).set_fit_request(sample_weight=True)
        result = cross_validate(model, X, scoring=scorer, cv=cv, return_estimator=True,
                                params={"sensitive_features": S, "sample_weight": w})
    for (_, test), model, score in zip(cv.split(X), result["estimator"], result["test_score"],
                                       strict=True):
        weights = w[test] if weigh_score else None
        assert score == scorer(model, X[test], sensitive_features=S.iloc[test],
                               sample_weight=weights)
        assert score != scorer(model, X[test], sensitive_features=S.iloc[test],
                               sample_weight=None if weigh_score else w[test])


def test_routing_off_looks_rows_up_by_index():
    X, S = _diabetes()
    X.index = X.index * 3 + 5  # any unique index, shared by X and S
    S.index = X.index
    cv = KFold(3, shuffle=True, random_state=0)
    bound = make_fair_clustering_scorer(0.5, n_init=2, sensitive_features=S.sample(frac=1.0))
    result = cross_validate(KMeans(3, n_init=2, random_state=1), X, scoring=bound, cv=cv,
                            return_estimator=True)
    for (_, test), model, score in zip(cv.split(X), result["estimator"], result["test_score"],
                                       strict=True):
        assert score == bound(model, X.iloc[test], sensitive_features=S.iloc[test])
    unbound = make_fair_clustering_scorer(0.5, n_init=2)
    with pytest.raises(ValueError, match="got no sensitive_features. Turn metadata routing"):
        cross_validate(KMeans(3, n_init=2), X, scoring=unbound, cv=cv, error_score="raise")
    with pytest.raises(TypeError, match="X must be a pandas DataFrame"):
        bound(KMeans(3, n_init=2).fit(X.to_numpy()), X.to_numpy())
    with pytest.raises(ValueError, match="no row for X's index"):
        bound(KMeans(3, n_init=2).fit(X), X.set_axis(X.index + 1))


GRID = {"fairkm__n_clusters": [3, 4, 5], "fairkm__relative_weight": [0, 0.5, 1, 2]}


def _check_choice(search, scorer, X, S):
    """The search's choice is within the budget and fairer than S-blind K-Means."""
    results = pd.DataFrame(search.cv_results_)
    best = results.iloc[search.best_index_]
    splits = [c for c in results.columns if c.startswith("split") and c.endswith("_test_score")]
    # Every split of the chosen setting within the budget, and fairer than K-Means on average.
    assert (best[splits] >= -OVER_BUDGET).all()
    assert best["mean_test_score"] > -1
    assert search.best_params_["fairkm__relative_weight"] > 0
    # A setting over the budget on some split ranks below every setting within it on all.
    within = (results[splits] >= -OVER_BUDGET).all(axis=1)
    assert within.any() and not within.all()
    assert results.loc[within, "rank_test_score"].max() < results.loc[
        ~within, "rank_test_score"].min()
    # The refitted choice, scored on every row, tells the same story.
    final = scorer.evaluate(search.best_estimator_, X, sensitive_features=S)
    assert final["within_budget"] and final["unfairness_ratio"] < 1


def test_grid_search_with_routing_picks_a_fair_setting_within_budget():
    # Scored on the rows it was fitted on (one split, train = test = every row): FairKM
    # and K-Means are both in-sample.
    X, S = _diabetes()
    X = X.to_numpy()
    scorer = make_fair_clustering_scorer(max_cost=0.1, n_init=10, measure="AE", random_state=0)
    everything = np.arange(len(X))
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(make_pipeline(StandardScaler(), FairKM(random_state=0)), GRID,
                              scoring=scorer, cv=[(everything, everything)], error_score="raise")
        search.fit(X, sensitive_features=S)
    _check_choice(search, scorer, X, S)


@pytest.mark.slow
def test_grid_search_cross_validated_on_diabetes():
    # Held-out rows: FairKM predicts rows it was not fitted on while K-Means is fitted on
    # them, so the cost ratios run higher than in-sample, hence a wider budget.
    X, S = _diabetes()
    X = X.to_numpy()
    scorer = make_fair_clustering_scorer(max_cost=0.25, n_init=10, measure="AE", random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(make_pipeline(StandardScaler(), FairKM(random_state=0)), GRID,
                              scoring=scorer, error_score="raise")
        search.fit(X, sensitive_features=S)
    _check_choice(search, scorer, X, S)


@pytest.mark.slow
def test_grid_search_on_adult(shared_data):
    # The example: Adult's five attributes, a 5% budget, scored in-sample.
    from fairkm.datasets import fetch_adult

    adult = fetch_adult(data_home=shared_data)
    X, S = adult.features.to_numpy(dtype=np.float64), adult.sensitive
    scorer = make_fair_clustering_scorer(max_cost=0.05, n_init=10, measure="AE", random_state=0)
    grid = {"fairkm__n_clusters": [5, 10], "fairkm__relative_weight": [0, 0.25, 0.5, 1, 2]}
    everything = np.arange(len(X))
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(make_pipeline(StandardScaler(), FairKM(random_state=0)), grid,
                              scoring=scorer, cv=[(everything, everything)],
                              error_score="raise")
        search.fit(X, sensitive_features=S)
    _check_choice(search, scorer, X, S)
