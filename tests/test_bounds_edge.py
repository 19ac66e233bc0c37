"""fairkm.bounds reads its inputs as the rest of the family does (issue 31).

BoundedKMeans, fair_assignment and check_bounds pair pandas inputs by index
label, warn about the sensitive attributes passed as ``y`` and about the data
as FairKM does, refuse fewer rows of positive weight than clusters in words,
give the same labels for weights scaled alike (their costs in the user's
unit), call a weighted size a total weight, and print nothing.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from fairkm import FairKM
from fairkm.bounds import fair_assignment
from fairkm.bounds._quiet import quiet_stdout
from fairkm.cluster import BoundedKMeans
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import DataWarning, InfeasibleBoundError
from fairkm.metrics import check_bounds
from fairkm.metrics._bound_spec import resolve_bounds


def weighted_deviation(labels, column, weights):
    """The largest |share_C(v) - share_X(v)| over clusters and values, in plain NumPy."""
    worst = 0.0
    for v in np.unique(column):
        p = weights[column == v].sum() / weights.sum()
        for c in np.unique(labels):
            inside = labels == c
            worst = max(worst, abs(weights[inside & (column == v)].sum()
                                   / weights[inside].sum() - p))
    return worst


def weighted_inertia(X, labels, weights):
    """Sum of weighted squared distances to the clusters' weighted means."""
    total = 0.0
    for c in np.unique(labels):
        inside = labels == c
        mean = np.average(X[inside], axis=0, weights=weights[inside])
        total += float(np.dot(weights[inside], ((X[inside] - mean) ** 2).sum(axis=1)))
    return total


@pytest.fixture(scope="module")
def survey():
    """60 rows, two attributes, integer survey-like weights from 1 to 29."""
    X, S, _ = make_sensitive_blobs(60, n_features=2, centers=3, n_values=(2, 3),
                                   cluster_std=1.0, random_state=0)
    weights = np.random.RandomState(0).randint(1, 30, len(X)).astype(float)
    return X, S, weights


SCALINGS = {"x1e6": 1e6, "x1e-6": 1e-6, "sum to 1": None}


def scaled(weights, factor):
    """The weights times ``factor`` (None: divided by their sum), and the factor."""
    if factor is None:
        return weights / weights.sum(), 1.0 / weights.sum()
    return weights * factor, factor


# ------------------------------------------------------------------------------ S passed as y


def test_sensitive_features_as_y_warn_and_are_ignored(survey):
    X, S, _ = survey
    column = S["s0"]
    with pytest.warns(UserWarning, match=r"BoundedKMeans.fit got y but no sensitive_features"):
        model = BoundedKMeans(3, max_deviation=0.0, random_state=0, progress=False).fit(
            X, column)
    # The fit ran without the attribute: nothing was bounded, so none is reported met.
    assert model.max_deviation_ is None
    assert weighted_deviation(model.labels_, column.to_numpy(), np.ones(len(X))) > 0.05


# ------------------------------------------------------------------------------ pairing


def shuffled_inputs(X, S, weights):
    """X under other labels, and S and the weights as Series in another row order."""
    index = pd.Index(np.arange(len(X)) * 7 + 3)
    frame = pd.DataFrame(X, index=index, columns=["f0", "f1"])
    order = np.random.RandomState(1).permutation(len(X))
    return (frame, S.set_index(index).iloc[order],
            pd.Series(weights, index=index).iloc[order])


def test_bounded_kmeans_pairs_pandas_inputs_by_label(survey):
    X, S, weights = survey
    frame, S_shuffled, w_shuffled = shuffled_inputs(X, S, weights)
    params = dict(n_clusters=3, max_deviation=0.05, random_state=0, progress=False)
    plain = BoundedKMeans(**params).fit(X, sensitive_features=S, sample_weight=weights)
    paired = BoundedKMeans(**params).fit(frame, sensitive_features=S_shuffled,
                                         sample_weight=w_shuffled)
    assert_array_equal(paired.labels_, plain.labels_)
    assert weighted_deviation(paired.labels_, S["s0"].to_numpy(), weights) <= 0.05 + 1e-9
    assert_array_equal(paired.predict(frame, sensitive_features=S_shuffled),
                       plain.predict(X, sensitive_features=S))
    with pytest.raises(ValueError, match="index that does not match X's"):
        BoundedKMeans(**params).fit(frame, sensitive_features=S.set_index(frame.index + 1))
    with pytest.raises(ValueError, match="sample_weight has an index that does not match"):
        BoundedKMeans(**params).fit(frame, sensitive_features=S_shuffled,
                                    sample_weight=w_shuffled.set_axis(frame.index + 1))


def test_fair_assignment_pairs_pandas_inputs_by_label(survey):
    X, S, weights = survey
    frame, S_shuffled, w_shuffled = shuffled_inputs(X, S, weights)
    centers = X[[0, 1, 2]]
    plain = fair_assignment(X, centers, S, max_deviation=0.05, sample_weight=weights)
    paired = fair_assignment(frame, centers, S_shuffled, max_deviation=0.05,
                             sample_weight=w_shuffled)
    assert_array_equal(paired.labels, plain.labels)
    # Certified against the weights of each row, measured apart.
    assert paired.satisfied
    for column in S:
        assert weighted_deviation(paired.labels, S[column].to_numpy(), weights) <= 0.05 + 1e-9
    # A fresh column (index 0..n-1) beside X's other labels goes by position, with a word.
    with pytest.warns(UserWarning, match=r"sample_weight has the default index 0..59"):
        fair_assignment(frame, centers, S.set_index(frame.index), max_deviation=0.05,
                        sample_weight=pd.Series(weights))


def test_check_bounds_pairs_with_the_labels_index(survey):
    X, S, weights = survey
    labels = np.arange(len(X)) % 3
    frame, S_shuffled, w_shuffled = shuffled_inputs(X, S, weights)
    plain = check_bounds(labels, S, max_deviation=0.05, sample_weight=weights)
    paired = check_bounds(pd.Series(labels, index=frame.index), S_shuffled,
                          max_deviation=0.05, sample_weight=w_shuffled)
    pd.testing.assert_frame_equal(paired.table, plain.table)
    assert_allclose(paired.table.loc["s0", "deviation"],
                    weighted_deviation(labels, S["s0"].to_numpy(), weights), rtol=1e-8)
    with pytest.raises(ValueError, match="index that does not match labels"):
        check_bounds(pd.Series(labels, index=frame.index + 1), S_shuffled, max_deviation=0.05)


# ------------------------------------------------------------------------------ rows of weight 0


@pytest.mark.parametrize("init", ["fairkm", "k-means++"])
def test_fewer_rows_of_positive_weight_than_clusters_are_refused_in_words(survey, init):
    X, S, _ = survey
    weights = np.zeros(len(X))
    weights[:2] = 1.0
    message = r"n_samples=2 \(of positive weight\) should be >= n_clusters=3\."
    with pytest.raises(ValueError, match=message):
        BoundedKMeans(3, init=init, progress=False).fit(X, sensitive_features=S,
                                                        sample_weight=weights)
    with pytest.raises(ValueError, match=message):
        fair_assignment(X, X[:3], S, max_deviation=0.1, sample_weight=weights)


# ------------------------------------------------------------------------------ weight scale


def _bounded_kmeans(init, bound):
    def fit(X, S, weights):
        model = BoundedKMeans(3, max_deviation=bound, init=init, random_state=0,
                              progress=False).fit(X, sensitive_features=S, sample_weight=weights)
        return model.labels_, {"inertia_": model.inertia_, "lp_cost_": model.lp_cost_,
                               "lower_bound_": model.lower_bound_,
                               "cost_history_": np.array(model.cost_history_)}
    return fit


def _fair_assignment(bound):
    def fit(X, S, weights):
        result = fair_assignment(X, X[[0, 1, 2]], S, max_deviation=bound,
                                 sample_weight=weights, max_iter=3)
        return result.labels, {"inertia": result.inertia, "lp_cost": result.lp_cost,
                               "lower_bound": result.lower_bound,
                               "assignment_cost": result.assignment_cost,
                               "nearest_cost": result.nearest_cost,
                               "cost_history": np.array(result.cost_history)}
    return fit


def _fairkm(bound):
    def fit(X, S, weights):
        model = FairKM(3, max_deviation=bound, random_state=0).fit(
            X, sensitive_features=S, sample_weight=weights)
        return model.labels_, {"inertia_": model.inertia_}
    return fit


FITS = {
    "BoundedKMeans fairkm 0.05": _bounded_kmeans("fairkm", 0.05),
    "BoundedKMeans fairkm 0": _bounded_kmeans("fairkm", 0.0),
    "BoundedKMeans k-means++ 0.05": _bounded_kmeans("k-means++", 0.05),
    "BoundedKMeans k-means++ 0": _bounded_kmeans("k-means++", 0.0),
    "fair_assignment 0.05": _fair_assignment(0.05),
    "fair_assignment 0": _fair_assignment(0.0),
    "FairKM 0.02": _fairkm(0.02),
    "FairKM 0": _fairkm(0.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", FITS)
def test_weights_scaled_alike_give_the_same_labels_and_costs_in_their_unit(survey, name):
    X, S, weights = survey
    labels, costs = FITS[name](X, S, weights)
    # The cost is the weighted inertia of the labels, in the weights' own unit.
    assert_allclose(costs.get("inertia_", costs.get("inertia")),
                    weighted_inertia(X, labels, weights), rtol=1e-9)
    for how in SCALINGS.values():
        other, factor = scaled(weights, how)
        got_labels, got_costs = FITS[name](X, S, other)
        assert_array_equal(got_labels, labels)
        for key, value in costs.items():
            assert_allclose(got_costs[key], factor * value, rtol=1e-12, err_msg=key)


def test_an_assignment_on_a_knife_edge_keeps_its_labels_when_weights_are_rescaled():
    # Found by search: from these centres the integer programme has near-ties, and while
    # the bounds divided the weights by a power of two only (1e6 and 1e-6 are none), each
    # rescaling below moved 6 to 16 of the 60 rows.
    X, S, _ = make_sensitive_blobs(60, n_features=2, centers=3, n_values=(2, 3),
                                   cluster_std=2.0, random_state=42)
    weights = np.random.RandomState(42).randint(1, 30, len(X)).astype(float)
    centers = X[[41, 10, 4]]
    base = fair_assignment(X, centers, S, max_deviation=0.02, sample_weight=weights)
    for how in SCALINGS.values():
        other, factor = scaled(weights, how)
        result = fair_assignment(X, centers, S, max_deviation=0.02, sample_weight=other)
        assert_array_equal(result.labels, base.labels)
        assert_allclose(result.inertia, factor * base.inertia, rtol=1e-12)
        assert_allclose(result.lower_bound, factor * base.lower_bound, rtol=1e-12)


@pytest.mark.parametrize("how", SCALINGS)
def test_the_bounds_read_weights_scaled_alike_to_the_bit(survey, how):
    X, S, weights = survey
    base = resolve_bounds(S, len(X), max_deviation=0.05, sample_weight=weights)
    other, factor = scaled(weights, SCALINGS[how])
    got = resolve_bounds(S, len(X), max_deviation=0.05, sample_weight=other)
    assert_array_equal(got.weights, base.weights)
    for a, b in zip(got.attributes, base.attributes, strict=True):
        assert_array_equal(a.proportions, b.proportions)
        assert_array_equal(a.lower, b.lower)
    assert_allclose(got.unit, factor * base.unit, rtol=1e-15)
    # A typical row weighs 1, and every weight is read to 32 significant bits.
    assert np.median(base.weights) == 1.0
    assert_allclose(base.weights * base.unit, weights, rtol=2.0 ** -32, atol=0)


# ------------------------------------------------------------------------------ sizes in words


def test_a_weighted_size_is_a_total_weight_not_rows(survey):
    X, S, weights = survey
    labels = np.arange(len(X)) % 3
    weighted = check_bounds(labels, S, max_deviation=0.05, sample_weight=weights / 1000.0)
    summary = weighted.summary()
    assert "total weight 0." in summary and "rows" not in summary
    # The size reported is the cluster's weight in the user's unit.
    cluster = weighted.table.loc["s0", "cluster"]
    assert_allclose(weighted.table.loc["s0", "cluster_size"],
                    weights[labels == cluster].sum() / 1000.0, rtol=1e-9)
    plain = check_bounds(labels, S, max_deviation=0.05).summary()
    assert "(20 rows)" in plain and "total weight" not in plain
    # max_deviation=0 resolved to a floor: one row of the least weight, for weights.
    zero = fair_assignment(X, X[[0, 1, 2]], S, max_deviation=0.0, sample_weight=weights)
    assert re.search(r"within (one row|\d+ rows) \(of the least weight\) of the smallest cl",
                     zero.check.note)


def test_a_weighted_infeasible_bound_speaks_of_weights():
    # 'a' weighs 3 of 7: no split of these rows into two clusters comes within 0.07 of it
    # in both (1 + 1 against 2 + 3 is the closest: 0.5 and 0.4).
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    S = np.array(["a", "a", "b", "b"])
    with pytest.raises(InfeasibleBoundError, match="made of whole rows' weights"):
        fair_assignment(X, [[0.0], [3.0]], S, max_deviation=0.01,
                        sample_weight=[1.0, 2.0, 1.0, 3.0])
    with pytest.raises(InfeasibleBoundError, match="multiples of 1/its size"):
        fair_assignment(np.r_[X, [[4.0]]], [[0.0], [3.0]], np.r_[S, ["a"]], max_deviation=0.01)


# ------------------------------------------------------------------------------ data warnings


@pytest.mark.parametrize("init", ["fairkm", "k-means++"])
def test_a_feature_copying_an_attribute_is_named_once(survey, init):
    X, S, _ = survey
    copied = np.c_[X, pd.factorize(S["s0"])[0] * 2.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BoundedKMeans(3, max_deviation=0.1, init=init, random_state=0, progress=False).fit(
            copied, sensitive_features=S)
    named = [w for w in caught if issubclass(w.category, DataWarning)]
    assert len(named) == 1
    assert "feature 'x2' encodes the sensitive attribute 's0'" in str(named[0].message)


def test_a_many_valued_number_taken_as_categories_is_named(survey):
    X, S, _ = survey
    ages = pd.Series(np.arange(len(X)) % 40 + 20, name="age")
    with pytest.warns(DataWarning, match="'age' holds numbers with 40 distinct values"):
        BoundedKMeans(3, max_deviation=0.5, random_state=0, progress=False).fit(
            X, sensitive_features=ages)


@pytest.mark.parametrize("init", ["fairkm", "k-means++"])
def test_fewer_distinct_rows_than_clusters_warn_once(init):
    X = np.repeat([[0.0, 0.0], [5.0, 5.0]], 6, axis=0)
    S = np.tile([0, 1], 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BoundedKMeans(3, max_deviation=0.5, init=init, random_state=0, progress=False).fit(
            X, sensitive_features=S)
    duplicates = [w for w in caught if issubclass(w.category, ConvergenceWarning)
                  and "distinct clusters" in str(w.message)]
    assert len(duplicates) == 1
    assert str(duplicates[0].message).startswith("BoundedKMeans found 2 distinct clusters")


# ------------------------------------------------------------------------------ nothing printed


def highs_repair_case():
    """A weighted problem on which scipy 1.17's HiGHS prints its repair line (found by search)."""
    X, S, _ = make_sensitive_blobs(80, n_features=2, centers=3, n_values=(2, 3),
                                   cluster_std=2.0, random_state=26)
    weights = np.random.RandomState(26).gamma(1.0, 2.0, size=80)
    return X, S, weights, X[[16, 9, 69]]


def test_a_weighted_fit_prints_nothing(capfd):
    X, S, weights, centers = highs_repair_case()
    fair_assignment(X, centers, S, max_deviation=0.05, sample_weight=weights)
    BoundedKMeans(3, max_deviation=0.05, init=centers, max_iter=2, progress=False).fit(
        X, sensitive_features=S, sample_weight=weights)
    out, _ = capfd.readouterr()
    assert out == ""


def test_quiet_stdout_hides_what_native_code_writes_and_nothing_after(capfd):
    import os

    print("before", flush=True)
    with quiet_stdout(), quiet_stdout():  # nested, as programmes within programmes
        os.write(1, b"from native code\n")
    os.write(1, b"after\n")
    out, _ = capfd.readouterr()
    assert out == "before\nafter\n"


@pytest.mark.parametrize("call, match", [
    (lambda X, S, G: fair_assignment(X, X[:3], S, max_deviation=0.05),
     r"max_deviation=0.05, numeric_bound=None and min_balance=None bound no sensitive "
     r"attribute \(their kinds: \{'age': 'numeric'\}\)"),
    (lambda X, S, G: fair_assignment(X, X[:3], G, max_deviation=None),
     r"max_deviation=None, numeric_bound=None and min_balance=None bound no"),
    (lambda X, S, G: fair_assignment(X, X[:3], G, max_deviation={}),
     r"max_deviation=\{\} names no attribute, so it would bound nothing: .* some of \['g'\]"),
    (lambda X, S, G: fair_assignment(X, X[:3], G, max_deviation=None, min_balance={}),
     r"min_balance=\{\} names no attribute"),
    (lambda X, S, G: fair_assignment(X, X[:3], S, max_deviation=None, numeric_bound={}),
     r"numeric_bound=\{\} names no attribute, .* some of \['age'\]"),
    (lambda X, S, G: BoundedKMeans(3, max_deviation={}).fit(X, sensitive_features=G),
     r"max_deviation=\{\} names no attribute"),
    (lambda X, S, G: FairKM(3, max_deviation={}).fit(X, sensitive_features=G),
     r"max_deviation=\{\} names no attribute"),
])
def test_a_bound_on_nothing_is_refused_by_name(call, match):
    # Every entry point refuses a bound that would bound no attribute, instead of fitting
    # without one.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    S = pd.DataFrame({"age": rng.normal(size=60)})
    G = pd.DataFrame({"g": rng.integers(0, 2, 60)})
    with pytest.raises(ValueError, match=match):
        call(X, S, G)
