"""Equitable cost (fairkm.metrics.group_costs) against plain Python loops over its definition.

A row's cost is its squared distance to its cluster's centre; a group's mean
cost is the weighted mean of its rows' costs. The reference below spells that
out row by row; the property tests compare it with the library on random
data, weights (some zero), numpy and pandas inputs (rows in another order),
unused categories, and given centres.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.cluster import KMeans

from fairkm import metrics
from fairkm.metrics import clustering_objective, cost_gaps, group_costs

from .conftest import examples

TOL = {"rtol": 1e-10, "atol": 1e-12}


def reference_group_costs(X, labels, groups, weights=None, centers=None):
    """Each group's (size, total cost, mean cost), by loops over rows; groups of weight 0 absent.

    ``centers``: None for each cluster's weighted mean over its rows of
    positive weight, else a list indexed by the label.
    """
    n, d = len(labels), len(X[0])
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    if centers is None:
        centre = {}
        for c in set(labels):
            members = [i for i in range(n) if labels[i] == c and w[i] > 0]
            if members:
                total = sum(w[i] for i in members)
                centre[c] = [sum(w[i] * X[i][f] for i in members) / total for f in range(d)]
    else:
        centre = {c: list(centers[c]) for c in range(len(centers))}
    out = {}
    for g in sorted({groups[i] for i in range(n) if w[i] > 0}):
        members = [i for i in range(n) if groups[i] == g and w[i] > 0]
        size = sum(w[i] for i in members)
        cost = sum(w[i] * sum((X[i][f] - centre[labels[i]][f]) ** 2 for f in range(d))
                   for i in members)
        out[g] = (size, cost, cost / size)
    return out


def _compare(table, attribute, expected):
    got = table.loc[attribute]
    assert list(got.index) == list(expected)
    assert_allclose(got["size"], [v[0] for v in expected.values()], **TOL)
    assert_allclose(got["cost"], [v[1] for v in expected.values()], **TOL)
    assert_allclose(got["mean cost"], [v[2] for v in expected.values()], **TOL)
    means = [v[2] for v in expected.values()]
    best = min(means)
    if best > 1e-9:
        assert_allclose(got["vs best"], [m / best for m in means], **TOL)
    else:
        # A mean cost of 0 in exact arithmetic may come out as a rounding residue (a
        # weighted mean of equal values): the ratios to it are not comparable, but the
        # best group is still at 1 and its mean cost at 0.
        assert got["vs best"].min() == 1.0
        assert_allclose(got["mean cost"].min(), 0.0, atol=1e-12)


@st.composite
def problems(draw, max_n=14):
    """Integer-valued X, labels (gaps, negatives), two categorical attributes, weights."""
    n = draw(st.integers(1, max_n))
    X = np.array(draw(st.lists(st.integers(-6, 6), min_size=2 * n, max_size=2 * n)),
                 float).reshape(n, 2)
    labels = np.array(draw(st.lists(st.integers(-2, 3), min_size=n, max_size=n)))
    sex = np.array(draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n)))
    race = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    weighted = draw(st.booleans())
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.one_of(st.just(0.0), st.floats(0.01, 5)),
                                   min_size=n, max_size=n)))
        assume(w.sum() > 0)
    return X, labels, sex, race, w


@settings(max_examples=examples(80), deadline=None)
@given(problem=problems(), as_pandas=st.booleans(), seed=st.integers(0, 2**16))
def test_group_costs_equal_the_loops(problem, as_pandas, seed):
    X, labels, sex, race, w = problem
    if as_pandas:
        # X's rows under shuffled index labels; S and the weights in yet another order,
        # with an unused category: paired by label, the empty group is no group.
        index = np.random.default_rng(seed).permutation(len(labels)) + 100
        order = np.random.default_rng(seed + 1).permutation(len(labels))
        S = pd.DataFrame({"sex": pd.Categorical(sex, categories=["F", "M", "X"]),
                          "race": race}, index=index).iloc[order]
        weights = None if w is None else pd.Series(w, index=index).iloc[order]
        table = group_costs(pd.DataFrame(X, index=index), labels,
                            sensitive_features=S, sample_weight=weights)
    else:
        table = group_costs(X, labels, sensitive_features=np.column_stack([sex, race]).astype(
            object), sample_weight=w)
    names = ("sex", "race") if as_pandas else ("s0", "s1")
    for name, groups in zip(names, (sex, race), strict=True):
        # (an array of strings and integers stacks as strings)
        groups = groups.tolist() if as_pandas else [str(g) for g in groups.tolist()]
        expected = reference_group_costs(X.tolist(), labels.tolist(), groups, w)
        _compare(table, name, expected)
    # Each attribute's groups partition the rows: sizes add up to the total weight, and
    # the size-weighted mean of the mean costs is CO over it.
    total = len(labels) if w is None else w.sum()
    co = clustering_objective(X, labels, sample_weight=w)
    for name in names:
        part = table.loc[name]
        assert_allclose(part["size"].sum(), total, **TOL)
        assert_allclose((part["size"] * part["mean cost"]).sum() / total, co / total,
                        rtol=1e-10, atol=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(problem=problems(), n_centers=st.integers(4, 6),
       centre_values=st.lists(st.integers(-6, 6), min_size=12, max_size=12))
def test_given_centres_equal_the_loops(problem, n_centers, centre_values):
    X, labels, sex, race, w = problem
    labels = labels + 2  # 0..5: rows of centers
    assume(labels.max() < n_centers)
    centers = np.array(centre_values[: 2 * n_centers], float).reshape(n_centers, 2)
    table = group_costs(X, labels, sensitive_features=pd.DataFrame({"sex": sex}),
                        sample_weight=w, centers=centers)
    expected = reference_group_costs(X.tolist(), labels.tolist(), sex.tolist(), w,
                                     centers.tolist())
    _compare(table, "sex", expected)


def test_costs_add_up_to_kmeans_inertia():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    w = rng.uniform(0.5, 3.0, size=300)
    S = pd.DataFrame({"sex": rng.choice(["F", "M"], 300), "race": rng.integers(0, 4, 300)})
    model = KMeans(4, n_init=3, random_state=0).fit(X, sample_weight=w)
    table = group_costs(X, model.labels_, sensitive_features=S, sample_weight=w,
                        centers=model.cluster_centers_)
    for name in ("sex", "race"):
        part = table.loc[name]
        assert_allclose((part["size"] * part["mean cost"]).sum(), model.inertia_, rtol=1e-9)
        assert_allclose(part["size"].sum(), w.sum(), rtol=1e-12)


def test_zero_weight_groups_and_rows_are_left_out():
    X = np.array([[0.0], [4.0], [10.0], [11.0], [50.0]])
    S = ["a", "a", "b", "b", "c"]
    weighted = group_costs(X, [0, 0, 1, 1, 1], sensitive_features=S,
                           sample_weight=[1, 1, 1, 1, 0])
    dropped = group_costs(X[:4], [0, 0, 1, 1], sensitive_features=S[:4])
    assert list(weighted.loc["s0"].index) == ["a", "b"]
    pd.testing.assert_frame_equal(weighted, dropped)
    # Centres of the kept rows: a: 4 and 4 around 2; b: 0.25 and 0.25 around 10.5.
    assert weighted["mean cost"].tolist() == [4.0, 0.25]
    assert weighted["vs best"].tolist() == [16.0, 1.0]


def test_cost_gaps_name_worst_and_best():
    X = np.array([[0.0], [4.0], [10.0], [11.0]])
    gaps = cost_gaps(group_costs(X, [0, 0, 1, 1], sensitive_features=["a", "a", "b", "b"]))
    assert gaps.loc["s0"].tolist() == ["a", 2.0, 4.0, "b", 2.0, 0.25, 16.0]


def test_ratio_when_the_best_group_costs_nothing():
    X = np.array([[0.0], [0.0], [0.0], [2.0]])
    table = group_costs(X, [0, 0, 1, 1], sensitive_features=["a", "a", "b", "b"])
    assert table["vs best"].tolist() == [1.0, np.inf]
    flat = group_costs(np.zeros((4, 1)), [0, 0, 1, 1], sensitive_features=["a", "a", "b", "b"])
    assert flat["vs best"].tolist() == [1.0, 1.0]


def test_numeric_attributes_are_left_out_or_refused():
    X = np.arange(8.0).reshape(4, 2)
    S = pd.DataFrame({"sex": ["F", "M", "F", "M"], "age": [20.0, 30.0, 40.0, 50.0]})
    table = group_costs(X, [0, 0, 1, 1], sensitive_features=S)
    assert list(table.index.get_level_values("attribute").unique()) == ["sex"]
    with pytest.raises(ValueError, match="no categorical attribute.*'age'"):
        group_costs(X, [0, 0, 1, 1], sensitive_features=S[["age"]])
    as_groups = group_costs(X, [0, 0, 1, 1], sensitive_features=S[["age"]],
                            numeric_sensitive=False)
    assert len(as_groups) == 4


def test_intersections_are_groups_too():
    X = np.arange(12.0).reshape(6, 2)
    S = pd.DataFrame({"sex": list("FFMMFM"), "race": list("abab" "ab")})
    table = group_costs(X, [0, 0, 0, 1, 1, 1], sensitive_features=S,
                        intersections=[("sex", "race")])
    expected = reference_group_costs(X.tolist(), [0, 0, 0, 1, 1, 1],
                                     [f"{s} & {r}" for s, r in zip(S["sex"], S["race"],
                                                                    strict=True)])
    _compare(table, "sex & race", expected)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"X": np.zeros((3, 2))}, ValueError, "X has 3 samples but labels has 4"),
    ({"X": [[0.0], [np.nan], [1.0], [2.0]]}, ValueError, "X contains NaN"),
    ({"sensitive_features": ["a", "b", "a"]}, ValueError, "sensitive_features has 3 rows"),
    ({"sample_weight": [1.0, 2.0]}, ValueError, "sample_weight"),
    ({"sample_weight": [1.0, -1.0, 1.0, 1.0]}, ValueError, "sample_weight"),
    ({"centers": [[0.0], [np.inf]]}, ValueError, "centers"),
    ({"centers": [[0.0, 1.0], [1.0, 1.0]]}, ValueError, r"centers has shape \(2, 2\)"),
    ({"centers": [[0.0]]}, ValueError, "labels holds 1, but centers has 1 rows"),
    ({"centers": [[0.0], [1.0]], "labels": ["x", "x", "y", "y"]}, TypeError,
     "labels must be integers when centers is given"),
    ({"labels": [0, 0, None, 1]}, ValueError, "labels has a missing value"),
])
def test_bad_inputs_name_the_parameter(kwargs, error, match):
    args = {"X": [[0.0], [1.0], [2.0], [3.0]], "labels": [0, 0, 1, 1],
            "sensitive_features": ["a", "b", "a", "b"], **kwargs}
    with pytest.raises(error, match=match):
        group_costs(args.pop("X"), args.pop("labels"), **args)


def test_group_costs_is_public():
    assert "group_costs" in metrics.__all__
    assert "group_costs" in dir(metrics)


# --------------------------------------------------------------------------- in every report


def _gap(X, labels, groups, weights=None):
    """(worst group, its mean cost, ratio to the best), from the loops."""
    means = {g: v[2] for g, v in reference_group_costs(X.tolist(), list(labels), list(groups),
                                                         weights).items()}
    worst = max(means, key=lambda g: (means[g], -list(means).index(g)))
    return worst, means[worst], means[worst] / min(means.values())


def _people(n=240, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + np.repeat([[0, 0], [4, 0], [0, 4]], n // 3, axis=0)
    S = pd.DataFrame({"sex": rng.choice(["F", "M"], n, p=[0.3, 0.7]),
                      "race": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
                      "age": rng.normal(40, 10, n)})
    return X, S, rng.uniform(0.2, 3.0, n)


def test_fairness_report_adds_the_worst_group_with_x():
    X, S, w = _people()
    labels = KMeans(3, n_init=2, random_state=0).fit_predict(X)
    plain = metrics.fairness_report(labels, sensitive_features=S, sample_weight=w)
    report = metrics.fairness_report(labels, sensitive_features=S, sample_weight=w, X=X)
    pd.testing.assert_frame_equal(report[plain.columns], plain)
    for name in ("sex", "race"):
        worst, cost, ratio = _gap(X, labels, S[name], w)
        assert report.loc[name, "worst group"] == worst
        assert_allclose(report.loc[name, ["worst group cost", "cost ratio"]].astype(float),
                        [cost, ratio], rtol=1e-10)
    assert report.loc["age", "worst group"] is None
    assert report.loc[["age", "mean"], ["worst group cost", "cost ratio"]].isna().all().all()


def test_audit_reports_the_group_costs_of_every_clustering():
    from fairkm.report import audit

    X, S, w = _people()
    labels = KMeans(3, n_init=1, random_state=1).fit_predict(X)
    result = audit(labels, X, sensitive_features=S, sample_weight=w, n_init=2,
                   check_data=False)
    assert len(result.labels) == 2  # the audited clustering and S-blind K-Means
    for name, values in result.labels.items():
        for attribute in ("sex", "race"):
            worst, cost, ratio = _gap(X, values, S[attribute], w)
            row = result.costs.loc[(attribute, name)]
            assert row["worst group"] == worst
            assert_allclose([row["worst group cost"], row["cost ratio"]], [cost, ratio],
                            rtol=1e-10)
            means = reference_group_costs(X.tolist(), list(values), list(S[attribute]), w)
            assert_allclose(row["worst group size"], means[worst][0], rtol=1e-12)
            assert_allclose(result.group_costs.loc[attribute, name],
                            [v[2] for v in means.values()], rtol=1e-10)
    assert "age" not in result.costs.index.get_level_values("attribute")
    text = result.to_text()
    assert "Equitable cost per attribute" in text
    assert "age: numeric, so no groups" in text
    page = result.to_html()
    assert 'id="equitable-cost"' in page and 'id="group-costs"' in page


def test_the_headline_says_when_groups_are_served_less_alike():
    """Groups' costs that part are named in the headline, whatever the mixes say.

    Hand-made, every cluster at the dataset's mix in both clusterings: ``even``
    pairs one row of each group (each half a unit from its centre: ratio 1),
    ``apart`` puts group a's rows 2 from their centre and group b's 1 (ratio
    4 / 1). Only the equitable cost tells them apart.
    """
    from fairkm.report import audit

    X = np.array([[0.0], [1.0], [3.0], [4.0], [20.0], [21.0], [23.0], [24.0]])
    S = pd.DataFrame({"g": ["a", "b", "b", "a", "a", "b", "b", "a"]})
    even = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    apart = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    worse = audit(apart, X, sensitive_features=S, reference=even, name="apart",
                  check_data=False)
    assert_allclose(worse.costs.loc[("g", "apart"), "cost ratio"], 2.0**2 / 1.0**2, rtol=1e-12)
    assert_allclose(worse.costs.loc[("g", "reference"), "cost ratio"], 1.0, rtol=1e-12)
    assert (worse.fairness.loc[("g", ["apart", "reference"]), ["AE", "ME"]] == 0).all().all()
    sentences = dict(worse.headline())
    assert "g 4 against 1 " in sentences["costs"]
    assert "Groups served less alike than by reference" in worse.to_text()
    assert '<p class="costs">' in worse.to_html()
    # The other way round, or against itself, nothing is said.
    for labels, reference in ((even, apart), (apart, apart)):
        better = audit(labels, X, sensitive_features=S, reference=reference, check_data=False)
        assert "costs" not in dict(better.headline())


def test_audit_without_features_has_no_costs():
    from fairkm.report import audit

    _, S, _ = _people()
    result = audit(np.arange(240) % 3, sensitive_features=S, check_data=False)
    assert result.costs is None and result.group_costs is None
    assert "Equitable cost" not in result.to_text()
    assert "equitable-cost" not in result.to_html()


def test_tradeoff_has_each_fits_group_costs():
    from fairkm import FairKM
    from fairkm.tradeoff import fairness_tradeoff

    X, S, _ = _people(n=150)
    template = FairKM(n_clusters=3, random_state=0, n_init=1)
    table = fairness_tradeoff(template, X, S[["sex", "race"]], relative_weights=[0.0, 2.0])
    for weight in (0.0, 2.0):
        labels = FairKM(n_clusters=3, random_state=0, n_init=1, relative_weight=weight).fit(
            X, sensitive_features=S[["sex", "race"]]).labels_
        for attribute in ("sex", "race"):
            _, cost, ratio = _gap(X, labels, S[attribute])
            got = table.loc[table["relative_weight"] == weight]
            assert_allclose(got[f"worst group cost[{attribute}]"], cost, rtol=1e-10)
            assert_allclose(got[f"cost ratio[{attribute}]"], ratio, rtol=1e-10)


def test_cli_prints_equitable_cost(capsys, people_csv):
    from ._people import FIT, run

    status, out, err = run(capsys, "fit", people_csv, *FIT)
    assert status == 0, err
    assert "Equitable cost per attribute" in out
    assert "cost ratio" in out
