"""Rows paired by index label in fairkm.metrics, and weights read in any unit.

A pandas ``sensitive_features``, ``sample_weight`` or ``reference_labels``
goes with pandas labels (or ``X``) by index label, as in every fit of the
family (``fairkm.utils._inputs``): the same rows in another order give the same
measures, other labels are refused, and a default index beside other labels
is paired by position with a warning. Arrays pair by position.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from fairkm import FairKM
from fairkm.metrics import MEASURES, clustering_report, fairness_report, make_fair_clustering_scorer

FAIRNESS = {m.name: m.function for m in MEASURES.values() if m.kind == "fairness"}
QUALITY = {m.name: m.function for m in MEASURES.values() if m.kind == "quality"}


pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.one_thread


def table(n=120, seed=0):
    """Rows of a filtered table (labels 1000, 1007, ...): X, labels, S, weights, reference.

    Cluster 0 holds mostly "a" and cluster 1 mostly "b", so a wrong pairing
    of S moves every fairness measure.
    """
    rng = np.random.RandomState(seed)
    index = pd.Index(1000 + 7 * np.arange(n), name="person")
    labels = pd.Series(np.repeat([0, 1, 2], [n // 2, n // 4, n - n // 2 - n // 4]), index=index)
    shares = np.array([0.85, 0.2, 0.5])[labels.to_numpy()]
    sex = np.where(rng.uniform(size=n) < shares, "a", "b")
    S = pd.DataFrame({"sex": sex, "age": rng.normal(40 + 10 * labels.to_numpy(), 5.0)},
                     index=index)
    X = pd.DataFrame(rng.normal(size=(n, 2)) + 3.0 * labels.to_numpy()[:, None],
                     index=index, columns=["x", "y"])
    weights = pd.Series(rng.uniform(0.5, 2.0, n), index=index)
    reference = pd.Series(rng.randint(0, 3, n), index=index)
    return X, labels, S, weights, reference


def shuffled(value, seed=1):
    return value.sample(frac=1.0, random_state=seed)


# --------------------------------------------------------------------------- pairing


@pytest.mark.parametrize("name", FAIRNESS)
def test_fairness_measures_pair_by_label(name):
    _, labels, S, weights, _ = table()
    kwargs = {"multioutput": "raw_values"}
    aligned = FAIRNESS[name](labels, sensitive_features=S, sample_weight=weights, **kwargs)
    assert_array_equal(
        FAIRNESS[name](labels, sensitive_features=shuffled(S), sample_weight=shuffled(weights),
                       **kwargs),
        aligned)
    # The same shuffled rows by position are other rows' attributes: a pairing that
    # ignored the labels would not give the measures above.
    by_position = FAIRNESS[name](labels, sensitive_features=shuffled(S).to_numpy(),
                                 sample_weight=shuffled(weights).to_numpy(),
                                 numeric_sensitive=[1], **kwargs)
    assert not np.allclose(by_position, aligned, equal_nan=True)


def test_fairness_report_pairs_by_label_with_and_without_a_bound():
    _, labels, S, weights, _ = table()
    aligned = fairness_report(labels, sensitive_features=S, sample_weight=weights,
                              max_deviation=0.1)
    again = fairness_report(labels, sensitive_features=shuffled(S),
                            sample_weight=shuffled(weights, seed=2), max_deviation=0.1)
    pd.testing.assert_frame_equal(again, aligned)
    # The numbers: AE of the same rows shuffled differed (0.222 against 0.065).
    by_position = fairness_report(labels.to_numpy(), sensitive_features=shuffled(S).to_numpy(),
                                  numeric_sensitive=[1])
    assert abs(by_position.loc["s0", "AE"] - aligned.loc["sex", "AE"]) > 0.1


@pytest.mark.parametrize("name", QUALITY)
def test_quality_measures_pair_by_label(name):
    X, labels, _, weights, reference = table()
    args = {"CO": lambda lab, ref: (X, lab), "SH": lambda lab, ref: (X, lab),
            "DevC": lambda lab, ref: (X, lab, ref), "DevO": lambda lab, ref: (lab, ref)}[name]
    aligned = QUALITY[name](*args(labels, reference), sample_weight=weights)
    assert QUALITY[name](*args(shuffled(labels), shuffled(reference, seed=2)),
                         sample_weight=shuffled(weights, seed=3)) == aligned
    by_position = QUALITY[name](*args(shuffled(labels).to_numpy(),
                                      shuffled(reference, seed=2).to_numpy()),
                                sample_weight=shuffled(weights, seed=3).to_numpy())
    assert by_position != pytest.approx(aligned, rel=1e-6)


def test_clustering_report_pairs_with_X():
    X, labels, _, weights, reference = table()
    aligned = clustering_report(X, labels, reference_labels=reference, sample_weight=weights)
    again = clustering_report(X, shuffled(labels), reference_labels=shuffled(reference),
                              sample_weight=shuffled(weights))
    pd.testing.assert_series_equal(again, aligned, check_exact=True)


def test_array_labels_pair_by_position():
    # No index to pair by: a pandas S beside array labels is read in its own order.
    _, labels, S, weights, _ = table()
    mixed = shuffled(S)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about either
        got = fairness_report(labels.to_numpy(), sensitive_features=mixed,
                              sample_weight=shuffled(weights))
    pd.testing.assert_frame_equal(
        got, fairness_report(labels.to_numpy(), sensitive_features=mixed.reset_index(drop=True),
                             sample_weight=shuffled(weights).to_numpy()))


def test_a_foreign_index_is_refused():
    X, labels, S, weights, _ = table()
    with pytest.raises(ValueError, match="sensitive_features has an index that does not match "
                                         "labels'"):
        fairness_report(labels, sensitive_features=S.set_axis(S.index + 1))
    with pytest.raises(ValueError, match="sample_weight has an index that does not match X'"):
        clustering_report(X, labels, sample_weight=weights.set_axis(weights.index + 1))
    with pytest.raises(ValueError, match="labels has an index that does not match X'"):
        QUALITY["CO"](X, labels.set_axis(labels.index + 1))


def test_a_default_index_beside_filtered_labels_warns_once():
    # A report on a filtered table, with attributes made afresh: paired by position, and said.
    _, labels, S, weights, _ = table()
    fresh = S.reset_index(drop=True)
    with pytest.warns(UserWarning, match="sensitive_features has the default index 0..119 but "
                                         "labels'?s? index has other labels") as caught:
        report = fairness_report(labels, sensitive_features=fresh, max_deviation=0.1)
    assert len([w for w in caught if "default index" in str(w.message)]) == 1
    pd.testing.assert_frame_equal(report, fairness_report(labels, sensitive_features=S,
                                                          max_deviation=0.1))
    with pytest.warns(UserWarning, match="sample_weight has the default index"):
        FAIRNESS["AE"](labels, sensitive_features=S,
                       sample_weight=weights.reset_index(drop=True))


def test_a_pandas_input_of_another_length_gets_the_length_message():
    _, labels, S, weights, _ = table()
    with pytest.raises(ValueError, match="sensitive_features has 119 rows but labels has 120"):
        fairness_report(labels, sensitive_features=S.iloc[1:])
    with pytest.raises(ValueError, match="sample_weight has 119 entries but labels has 120"):
        fairness_report(labels, sensitive_features=S, sample_weight=weights.iloc[1:])


# --------------------------------------------------------------------------- weights' unit


@pytest.mark.parametrize("factor", [2.0**-30, 1e-6, 1e3, 1e307, 1e-300])
def test_weights_scaled_alike_give_the_same_fairness(factor):
    _, labels, S, weights, _ = table()
    aligned = fairness_report(labels, sensitive_features=S, sample_weight=weights)
    scaled = fairness_report(labels, sensitive_features=S, sample_weight=weights * factor)
    if np.log2(factor) == round(np.log2(factor)):
        pd.testing.assert_frame_equal(scaled, aligned, check_exact=True)
    else:
        # Weights of 1e307 would overflow their sums: read near 1, they do not.
        assert_allclose(scaled.to_numpy(float), aligned.to_numpy(float), rtol=1e-12)


@pytest.mark.parametrize("factor", [2.0**-20, 1e-6, 1e3])
def test_weights_scaled_alike_give_the_same_quality_ratios(factor):
    # SH and DevO read weights as frequencies (scaling them changes the value, as
    # their docstrings say); CO is a weighted sum, in the weights' unit, and DevC
    # compares weighted means.
    X, labels, _, weights, reference = table()
    co, devc = QUALITY["CO"], QUALITY["DevC"]
    assert co(X, labels, sample_weight=weights * factor) == pytest.approx(
        factor * co(X, labels, sample_weight=weights), rel=1e-12)
    assert devc(X, labels, reference, sample_weight=weights * factor) == pytest.approx(
        devc(X, labels, reference, sample_weight=weights), rel=1e-12)


# --------------------------------------------------------------------------- the scorer


def scorer_problem():
    X, labels, S, weights, _ = table(n=160, seed=3)
    return X, S[["sex"]], weights


def test_scorer_pairs_attributes_and_weights_with_X():
    X, S, weights = scorer_problem()
    model = FairKM(3, random_state=0).fit(X, sensitive_features=S, sample_weight=weights)
    scorer = make_fair_clustering_scorer(max_cost=0.1)
    aligned = scorer.evaluate(model, X, sensitive_features=S, sample_weight=weights)
    again = scorer.evaluate(model, X, sensitive_features=shuffled(S),
                            sample_weight=shuffled(weights, seed=4))
    assert again == aligned
    by_position = scorer.evaluate(model, X, sensitive_features=shuffled(S).to_numpy(),
                                  sample_weight=shuffled(weights, seed=4).to_numpy())
    assert by_position["unfairness"] != pytest.approx(aligned["unfairness"])


@pytest.mark.parametrize("factor", [2.0**-20, 1e-6, 1e3, 1e6])
def test_scorer_outcome_does_not_depend_on_the_weights_unit(factor):
    # The same weights in another unit (shares of a population instead of head
    # counts) fit the same model and score the same: within the budget or not alike.
    X, S, weights = scorer_problem()
    scorer = make_fair_clustering_scorer(max_cost=0.1)
    outcomes = []
    for w in (weights, weights * factor):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the data warnings, alike
            model = FairKM(3, random_state=0).fit(X, sensitive_features=S, sample_weight=w)
        outcomes.append(scorer.evaluate(model, X, sensitive_features=S, sample_weight=w))
    base, scaled = outcomes
    assert scaled["within_budget"] == base["within_budget"]
    for key in ("cost_ratio", "unfairness", "blind_unfairness", "unfairness_ratio", "score"):
        assert scaled[key] == pytest.approx(base[key], rel=1e-9), key
    assert scaled["cost"] == pytest.approx(factor * base["cost"], rel=1e-9)
