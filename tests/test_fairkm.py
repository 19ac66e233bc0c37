"""Behaviour of the FairKM estimator: API, fairness, predictions and input errors."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError

import fairkm.cluster._fairkm
from fairkm import FairKM
from fairkm.datasets import make_sensitive_blobs
from fairkm.utils._progress import listening

from . import _reference
from ._problems import WEIGHTING_OF_EXPONENT
from .conftest import examples

# What an int of the engine accepts, in scikit-learn's words.
INT1 = r"an int in the range \[1, 9223372036854775807\]"


def mean_euclidean_unfairness(labels, sensitive):
    """Cluster-size-weighted distance between cluster and dataset mixes, averaged over attributes.

    Independent of the fitted objective (no squares, no (|C|/n)^2 weights,
    no attribute weights), so it judges the clustering from outside.
    """
    scores = []
    for name in sensitive.columns:
        table = pd.crosstab(labels, sensitive[name]).to_numpy(dtype=float)
        sizes = table.sum(axis=1)
        dataset = table.sum(axis=0) / table.sum()
        dist = np.linalg.norm(table / sizes[:, None] - dataset, axis=1)
        scores.append(np.sum(sizes * dist) / sizes.sum())
    return float(np.mean(scores))


@pytest.fixture(scope="module")
def planted():
    """Four overlapping blobs; each attribute is a function of the blob."""
    X, _, y = make_sensitive_blobs(
        600, n_features=2, centers=4, cluster_std=2.5, random_state=3
    )
    sensitive = pd.DataFrame({"sex": y % 2, "group": y})
    return X, sensitive, y


def test_fairness_improves_as_the_weight_grows(planted):
    X, sensitive, _ = planted
    scores = []
    for weight in [0.0, 1e5, 1e6, 1e7]:
        model = FairKM(4, fairness_weight=weight, random_state=0).fit(
            X, sensitive_features=sensitive
        )
        scores.append(mean_euclidean_unfairness(model.labels_, sensitive))
    # Clusters equal to the blobs would score (sqrt(0.5) + sqrt(0.75)) / 2 = 0.79 (pure
    # in both attributes); K-Means' clusters are mostly the blobs.
    assert scores[0] > 0.6
    assert scores[-1] < 0.1 * scores[0]
    assert all(later <= earlier + 1e-3 for earlier, later in zip(scores, scores[1:], strict=False))


def test_zero_weight_from_kmeans_centres_is_never_worse_than_kmeans():
    X, sensitive, _ = make_sensitive_blobs(
        2000, n_features=3, centers=5, cluster_std=3.0, random_state=1
    )
    km = KMeans(5, n_init=1, random_state=0).fit(X)
    model = FairKM(5, fairness_weight=0.0, init=km.cluster_centers_).fit(
        X, sensitive_features=sensitive
    )
    assert model.inertia_ <= km.inertia_ * (1 + 1e-12)
    blind = FairKM(5, init=km.cluster_centers_).fit(X)
    assert_array_equal(blind.labels_, model.labels_)


def test_fitted_attributes(planted):
    X, sensitive, _ = planted
    frame = sensitive.assign(age=np.linspace(20, 70, len(sensitive)))
    model = FairKM(4, fairness_weight="paper", random_state=0).fit(
        pd.DataFrame(X, columns=["a", "b"]), sensitive_features=frame
    )
    assert model.fairness_weight_ == (600 / 4) ** 2
    assert_array_equal(model.feature_names_in_, ["a", "b"])
    assert model.n_features_in_ == 2
    assert_array_equal(model.sensitive_attributes_.names, ["sex", "group", "age"])
    assert_array_equal(model.sensitive_attributes_.kinds, ["categorical", "categorical", "numeric"])
    assert_array_equal(model.sensitive_attributes_.categories[0], [0, 1])
    assert model.sensitive_attributes_.categories[2] is None
    assert_allclose(model.sensitive_attributes_.proportions[1],
                    np.bincount(sensitive["group"]) / 600)
    assert_allclose(model.sensitive_attributes_.means[2], 45.0)
    assert np.isnan(model.sensitive_attributes_.means[0])
    assert_array_equal(model.attribute_weights_, [1.0, 1.0, 1.0])
    assert model.cluster_centers_.shape == (4, 2)
    for c in range(4):
        assert_allclose(model.cluster_centers_[c], X[model.labels_ == c].mean(axis=0))
    assert_allclose(model.objective_, model.inertia_ + model.fairness_weight_ * model.fairness_)
    assert model.objective_history_.shape == (model.n_iter_ + 1,)
    assert model.objective_history_[-1] == model.objective_
    assert np.all(np.diff(model.objective_history_) <= 0)


def test_fit_objective_matches_reference(planted):
    X, sensitive, _ = planted
    frame = sensitive.assign(age=np.sin(np.arange(len(sensitive))))
    model = FairKM(4, fairness_weight=1e4, attribute_weights={"group": 2.0},
                   random_state=0).fit(X, sensitive_features=frame)
    problem = _reference.Problem(
        X, [frame["sex"].to_numpy(), frame["group"].to_numpy()], [frame["age"].to_numpy()],
        np.array([1.0, 2.0]), np.array([1.0]), 1e4, 4,
    )
    assert_allclose(model.inertia_, _reference.inertia(X, model.labels_, 4), rtol=1e-10)
    assert_allclose(model.fairness_, _reference.fairness(problem, model.labels_), rtol=1e-9)


def test_same_seed_same_labels_and_restarts_keep_the_best(planted):
    X, sensitive, _ = planted
    runs = [FairKM(4, fairness_weight="paper", init="random", n_init=3, random_state=7)
            .fit(X, sensitive_features=sensitive) for _ in range(2)]
    assert_array_equal(runs[0].labels_, runs[1].labels_)
    singles = [
        FairKM(4, fairness_weight="paper", init="random", n_init=1, random_state=seed)
        .fit(X, sensitive_features=sensitive)
        for seed in np.random.RandomState(7).randint(np.iinfo(np.int32).max, size=3)
    ]
    assert_allclose(runs[0].objective_, min(m.objective_ for m in singles))


def test_auto_n_init_depends_on_init(planted, monkeypatch):
    X, sensitive, _ = planted
    calls = []
    original = FairKM._initial_labels

    def counting(self, *args):
        calls.append(self.init if isinstance(self.init, str) else "array")
        return original(self, *args)

    monkeypatch.setattr(FairKM, "_initial_labels", counting)
    FairKM(4, fairness_weight="paper", init="random", random_state=0).fit(X)
    FairKM(4, fairness_weight="paper", init="k-means++", random_state=0).fit(X)
    FairKM(4, fairness_weight="paper", init=X[:4]).fit(X)
    assert calls.count("random") == 10
    assert calls.count("k-means++") == 1
    assert calls.count("array") == 1


def test_no_cluster_is_ever_empty():
    # Three distinct points, many duplicates: k-means++ seeds coincide.
    X = np.repeat(np.array([[0.0], [1.0], [5.0]]), [10, 1, 1], axis=0)
    for init in ["k-means++", "random", np.zeros((5, 1))]:
        # Three distinct rows and five clusters: the fit says some centres coincide.
        with pytest.warns(ConvergenceWarning, match="3 distinct clusters, fewer than n_clus"):
            model = FairKM(5, init=init, random_state=0).fit(X,
                                                             sensitive_features=np.arange(12) % 2)
        assert_array_equal(np.sort(np.unique(model.labels_)), np.arange(5))


def test_blind_fit_equals_zero_weight_fit(planted):
    X, sensitive, _ = planted
    blind = FairKM(4, random_state=0).fit(X)
    zero = FairKM(4, fairness_weight=0, random_state=0).fit(X, sensitive_features=sensitive)
    assert_array_equal(blind.labels_, zero.labels_)
    assert blind.fairness_ == 0.0
    assert zero.fairness_ > 0.0


def test_single_valued_attribute_contributes_nothing(planted):
    X, sensitive, _ = planted
    base = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    with_constant = FairKM(4, random_state=0).fit(
        X, sensitive_features=sensitive.assign(country="x")
    )
    assert_array_equal(base.labels_, with_constant.labels_)
    assert_allclose(base.fairness_, with_constant.fairness_)


def test_zero_attribute_weight_drops_the_attribute(planted):
    X, sensitive, _ = planted
    only_sex = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive[["sex"]])
    weighted = FairKM(4, attribute_weights=[1.0, 0.0], random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert_array_equal(only_sex.labels_, weighted.labels_)
    by_name = FairKM(4, attribute_weights={"group": 0.0}, random_state=0).fit(
        X, sensitive_features=sensitive
    )
    assert_array_equal(by_name.labels_, weighted.labels_)


def test_numeric_rule_and_override():
    X = np.random.RandomState(0).rand(6, 2)  # no feature copies an attribute
    frame = pd.DataFrame({"f": [1.0, 2, 3, 4, 5, 6], "i": [1, 2, 1, 2, 1, 2]})
    assert_array_equal(
        FairKM(2, random_state=0).fit(X, sensitive_features=frame).sensitive_attributes_.kinds,
        ["numeric", "categorical"],
    )
    for override in [["f", "i"], [0, 1], True]:
        model = FairKM(2, numeric_sensitive=override, random_state=0)
        assert_array_equal(model.fit(X, sensitive_features=frame).sensitive_attributes_.kinds,
                           ["numeric", "numeric"])
    model = FairKM(2, numeric_sensitive=False, random_state=0).fit(X, sensitive_features=frame)
    assert_array_equal(model.sensitive_attributes_.kinds, ["categorical", "categorical"])
    # Arrays follow their dtype; a 1-D float array is one numeric attribute.
    model = FairKM(2, random_state=0).fit(X, sensitive_features=np.array([0.5, 1, 2, 3, 4, 9]))
    assert_array_equal(model.sensitive_attributes_.kinds, ["numeric"])
    model = FairKM(2, random_state=0).fit(X, sensitive_features=np.array([[1, 2]] * 6))
    assert_array_equal(model.sensitive_attributes_.kinds, ["categorical", "categorical"])


def test_numeric_attribute_units_do_not_matter(planted):
    X, _, y = planted
    age = y * 10.0 + np.random.RandomState(0).rand(len(y))
    years = FairKM(4, random_state=0).fit(X, sensitive_features=age)
    months = FairKM(4, random_state=0).fit(X, sensitive_features=age * 12 + 100)
    assert_array_equal(years.labels_, months.labels_)


def test_predict_without_sensitive_features_is_nearest_centre(planted):
    X, sensitive, _ = planted
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    dist = ((X[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    with pytest.warns(UserWarning, match="fitted with sensitive features"):
        assert_array_equal(model.predict(X), dist.argmin(axis=1))


@settings(max_examples=examples(40))
@given(seed=st.integers(0, 10_000), weight=st.sampled_from([0.0, 10.0, 1e3, 1e5]),
       exponent=st.sampled_from([2, 1, 0]))
def test_predict_with_sensitive_features_is_cheapest_insertion(seed, weight, exponent):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(30, 2))
    frame = pd.DataFrame({"g": rng.randint(3, size=30), "z": rng.normal(size=30)})
    model = FairKM(3, fairness_weight=weight, random_state=0,
                   cluster_weighting=WEIGHTING_OF_EXPONENT[exponent]).fit(
        X, sensitive_features=frame)
    new_X = rng.normal(size=(6, 2))
    # Value 3 of "g" was never seen in fit.
    new_frame = pd.DataFrame({"g": [0, 1, 2, 3, 1, 0], "z": rng.normal(size=6) * 2})
    got = model.predict(new_X, sensitive_features=new_frame)
    problem = _reference.Problem(
        X, [frame["g"].to_numpy()], [frame["z"].to_numpy()], np.ones(1), np.ones(1), weight, 3,
        cluster_exponent=exponent,
    )
    for row in range(6):
        costs = _reference.insertion_costs(
            problem, model.labels_, model.cluster_centers_, new_X[row],
            [new_frame["g"][row]], [new_frame["z"][row]],
        )
        order = np.sort(costs)
        if order[1] - order[0] > 1e-9 * (1 + abs(order[0])):
            assert got[row] == np.argmin(costs)


def test_score_reads_new_rows_once(planted, monkeypatch):
    """score predicts and measures on one reading of X and of the sensitive features."""
    from fairkm.cluster._encoding import SensitiveEncoding

    X, sensitive, _ = planted
    model = FairKM(4, random_state=0).fit(X, sensitive_features=sensitive)
    expected = model.score(X, sensitive_features=sensitive)
    real, reads = SensitiveEncoding.check, []

    def counted(self, *args, **kwargs):
        reads.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SensitiveEncoding, "check", counted)
    assert model.score(X, sensitive_features=sensitive) == expected
    assert len(reads) == 1


def test_fit_predict_and_score(planted):
    X, sensitive, _ = planted
    model = FairKM(4, fairness_weight="paper", random_state=0)
    labels = model.fit_predict(X, sensitive_features=sensitive)
    assert_array_equal(labels, model.labels_)
    with pytest.warns(UserWarning, match="fitted with sensitive features"):
        nearest = model.predict(X)
        assert_allclose(
            model.score(X), -np.sum((X - model.cluster_centers_[nearest]) ** 2)
        )
    # When inserting each training point reproduces labels_, the score is -objective_.
    if np.array_equal(model.predict(X, sensitive_features=sensitive), model.labels_):
        assert_allclose(model.score(X, sensitive_features=sensitive), -model.objective_,
                        rtol=1e-9)
    half = slice(0, 300)
    predicted = model.predict(X[half], sensitive_features=sensitive[half])
    problem = _reference.Problem(
        X[half], [sensitive["sex"].to_numpy()[half], sensitive["group"].to_numpy()[half]], [],
        np.ones(2), np.zeros(0), model.fairness_weight_, 4,
    )
    # Fairness of the half against the fitted (whole-data) proportions, which here are
    # uniform over 2 and 4 values; the half's own mix differs from them.
    n = 300
    fairness = 0.0
    for c in range(4):
        members = predicted == c
        for col, values in ((problem.categorical[0], 2), (problem.categorical[1], 4)):
            counts = np.bincount(col[members], minlength=values)
            props = model.sensitive_attributes_.proportions[0 if values == 2 else 1]
            fairness += np.sum((counts - members.sum() * props) ** 2) / (n**2 * values)
    inertia = np.sum((X[half] - model.cluster_centers_[predicted]) ** 2)
    assert_allclose(
        model.score(X[half], sensitive_features=sensitive[half]),
        -(inertia + model.fairness_weight_ * fairness),
        rtol=1e-9,
    )


def test_verbose_prints_each_sweep(planted, capsys):
    X, sensitive, _ = planted
    model = FairKM(4, fairness_weight="paper", random_state=0, verbose=1).fit(
        X, sensitive_features=sensitive
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if "sweep" in line]
    assert len(lines) == model.n_iter_


def test_max_iter_warns():
    X, sensitive, _ = make_sensitive_blobs(500, centers=3, cluster_std=3.0, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        FairKM(3, max_iter=1, tol=0.0, init="random", random_state=0).fit(
            X, sensitive_features=sensitive
        )


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        FairKM().predict(np.zeros((2, 2)))


X_SMALL = np.arange(20, dtype=float).reshape(10, 2)
S_SMALL = np.array(["a", "b"] * 5)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"fairness_weight": -1.0}, ValueError, "fairness_weight.*-1.0"),
        ({"fairness_weight": np.inf}, ValueError, "fairness_weight.*inf"),
        ({"fairness_weight": np.nan}, ValueError, "fairness_weight.*nan"),
        ({"fairness_weight": "big"}, ValueError, "fairness_weight.*'big'"),
        ({"fairness_weight": None}, TypeError, "fairness_weight.*None"),
        ({"n_clusters": 11}, ValueError, "n_samples=10 should be >= n_clusters=11"),
        ({"n_clusters": 0}, ValueError, rf"'n_clusters' parameter of FairKM must be {INT1}. Got 0"),
        ({"n_clusters": 2.5}, TypeError, rf"'n_clusters' .* must be {INT1}. Got 2.5 instead"),
        ({"max_iter": 0}, ValueError, rf"'max_iter' .* must be {INT1}. Got 0 instead"),
        ({"tol": -1e-3}, ValueError,
         r"'tol' .* must be a float in the range \[0.0, inf\). Got -0.001 instead"),
        ({"algorithm": "lloyd"}, ValueError,
         r"'algorithm' .* must be a str among {'[a-z]+', '[a-z]+', '[a-z]+'}. Got 'lloyd'"),
        ({"algorithm": None}, ValueError, r"'algorithm' .* must be a str among .* Got None"),
        ({"batch_size": 0}, ValueError, rf"'batch_size' .* must be {INT1}. Got 0 instead"),
        ({"batch_size": 1.5}, TypeError, rf"'batch_size' .* must be {INT1}. Got 1.5 instead"),
        ({"init": "kmeans"}, ValueError,
         r"'init' .* must be a str among {'[a-z+-]+', '[a-z+-]+'} or an array-like. Got 'kmeans'"),
        ({"init": np.zeros((3, 2))}, ValueError, r"init array must have shape .*\(3, 2\)"),
        ({"init": np.zeros((2, 2)), "n_init": 3}, ValueError, "n_init must be 1"),
        ({"n_init": 0}, ValueError, rf"'n_init' .* among {{'auto'}} or {INT1}. Got 0 instead"),
        ({"n_init": "many"}, ValueError, r"'n_init' .* must be a str among {'auto'} or an int"),
        ({"attribute_weights": [1.0, 2.0]}, ValueError, r"attribute_weights.*\(1\).*\(2,\)"),
        ({"attribute_weights": [-1.0]}, ValueError, r"attribute_weights must be finite and >= 0"),
        ({"attribute_weights": {"sex": 1.0}}, ValueError, "attribute_weights names \\['sex'\\]"),
        ({"attribute_weights": ["x"]}, TypeError, "attribute_weights must be numbers"),
        ({"numeric_sensitive": ["age"]}, ValueError, "numeric_sensitive names 'age'"),
        ({"numeric_sensitive": [3]}, ValueError, "numeric_sensitive position 3 is out of range"),
        ({"numeric_sensitive": "yes"}, ValueError,
         r"'numeric_sensitive' parameter of FairKM must be a str among {'auto'}, an instance of "
         r"'bool' or an instance of 'numpy.bool' or an array-like. Got 'yes' instead"),
    ],
)
def test_invalid_parameters(params, error, match):
    with pytest.raises(error, match=match):
        params = {"n_clusters": 2, "random_state": 0, **params}
        FairKM(**params).fit(X_SMALL, sensitive_features=S_SMALL)


@pytest.mark.parametrize(
    "X, sensitive, match",
    [
        (np.where(X_SMALL == 3, np.nan, X_SMALL), S_SMALL, "NaN"),
        (np.where(X_SMALL == 3, np.inf, X_SMALL), S_SMALL, "infinity"),
        (X_SMALL, S_SMALL[:9], "sensitive_features has 9 rows but X has 10 samples"),
        (X_SMALL, np.array([1.0] * 9 + [np.nan]), "'s0' has a missing value .* row 9"),
        (X_SMALL, np.array([1.0] * 9 + [np.inf]), "'s0' is numeric but row 9 holds inf"),
        (X_SMALL, pd.Series(["a"] * 9 + [None], name="sex"), "'sex' has a missing value"),
        (X_SMALL, np.full(10, 3.0), "'s0' has zero variance"),
        (X_SMALL, np.zeros((10, 2, 2)), "must be 1-D or 2-D"),
        (X_SMALL, np.zeros((10, 0)), "no columns"),
    ],
)
def test_invalid_data(X, sensitive, match):
    with pytest.raises(ValueError, match=match):
        FairKM(2, random_state=0).fit(X, sensitive_features=sensitive)


def test_invalid_sensitive_type():
    with pytest.raises(TypeError, match="sensitive_features must be a 1-D or 2-D array-like"):
        FairKM(2).fit(X_SMALL, sensitive_features="sex")


def test_predict_input_errors():
    frame = pd.DataFrame({"sex": S_SMALL, "age": np.arange(10.0) ** 2})
    model = FairKM(2, random_state=0).fit(X_SMALL, sensitive_features=frame)
    with pytest.raises(ValueError, match="fitted with \\['sex', 'age'\\]"):
        model.predict(X_SMALL, sensitive_features=frame[["age", "sex"]])
    with pytest.raises(ValueError, match="has 1 attribute\\(s\\), but the model was fitted with 2"):
        model.predict(X_SMALL, sensitive_features=S_SMALL)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(np.zeros((2, 3)))
    blind = FairKM(2, random_state=0).fit(X_SMALL)
    with pytest.raises(ValueError, match="fitted without them"):
        blind.predict(X_SMALL, sensitive_features=S_SMALL)


def test_auto_algorithm_is_exact_on_small_data_and_minibatch_on_large(planted, monkeypatch):
    X, sensitive, _ = planted
    fits = {algorithm: FairKM(4, algorithm=algorithm, random_state=0).fit(
        X, sensitive_features=sensitive) for algorithm in ("auto", "exact", "minibatch")}
    assert_array_equal(fits["auto"].labels_, fits["exact"].labels_)
    # Above the threshold (lowered here to the planted data's size) the mini-batch engine runs;
    # an absolute weight's threshold and the scale-free weight's are apart.
    def passes(**params):
        kinds = []
        with listening(lambda progress: kinds.append(progress.kind)):
            FairKM(4, random_state=0, **params).fit(X, sensitive_features=sensitive)
        return set(kinds)

    monkeypatch.setitem(fairkm.cluster._fairkm._EXACT_UP_TO, "absolute", len(X) - 1)
    assert passes(fairness_weight=50.0) == {"epoch", "sweep"}
    assert passes() == {"sweep"}
    monkeypatch.setitem(fairkm.cluster._fairkm._EXACT_UP_TO, "walk", len(X) - 1)
    large = FairKM(4, algorithm="auto", random_state=0).fit(X, sensitive_features=sensitive)
    assert_array_equal(large.labels_, fits["minibatch"].labels_)
