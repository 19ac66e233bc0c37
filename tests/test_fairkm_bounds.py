"""FairKM(max_deviation=...): FairKM's clustering kept when it meets the bound, else repaired.

The references are plain NumPy: the shares of every value in every cluster,
the K-Means cost of the labels and the paper's fairness term
(``tests/_reference.py``).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm import FairKM
from fairkm.bounds import _repair, fair_assignment
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import BoundNotMetWarning, FairnessLossWarning, InfeasibleBoundError
from fairkm.metrics import check_bounds
from fairkm.metrics._bound_spec import resolve_bounds

from . import _reference
from ._never_worse_reference import summaries, worse
from .conftest import examples


def largest_excess(labels, columns, weights, kind, delta):
    """Largest distance of any cluster's share of any value outside its band (0: all within)."""
    worst = 0.0
    for col in columns:
        for v in np.unique(col[weights > 0]):
            p = weights[col == v].sum() / weights.sum()
            lower, upper = (p - delta, p + delta) if kind == "additive" else (
                (1 - delta) * p, p / (1 - delta))
            for c in np.unique(labels[weights > 0]):
                in_c = labels == c
                share = weights[in_c & (col == v)].sum() / weights[in_c].sum()
                worst = max(worst, lower - share, share - upper)
    return worst


@st.composite
def bounded_problems(draw):
    k = draw(st.integers(2, 3))
    n = draw(st.integers(4 * k, 30))
    X = np.array(draw(st.lists(st.lists(st.integers(-20, 20), min_size=2, max_size=2),
                               min_size=n, max_size=n)), dtype=np.float64) / 4.0
    n_cat = draw(st.integers(1, 2))
    columns = [np.array(draw(st.lists(st.integers(0, draw(st.integers(1, 2))),
                                      min_size=n, max_size=n))) for _ in range(n_cat)]
    weights = None
    if draw(st.booleans()):
        weights = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n,
                                         max_size=n)))
    kind = draw(st.sampled_from(["additive", "multiplicative"]))
    delta = draw(st.sampled_from([0.1, 0.25, 0.4] if kind == "additive" else [0.3, 0.6]))
    return X, columns, weights, kind, delta, k


# Drawn rows may repeat (all alike, even): the fit says so, rightly.
@pytest.mark.filterwarnings("ignore:FairKM found .* distinct clusters:"
                            "sklearn.exceptions.ConvergenceWarning")
@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(problem=bounded_problems())
def test_fitted_clustering_meets_the_bound_and_describes_itself(problem):
    X, columns, weights, kind, delta, k = problem
    S = pd.DataFrame({f"c{j}": col for j, col in enumerate(columns)})
    params = dict(n_clusters=k, fairness_weight=10.0, n_init=1, random_state=0)
    model = FairKM(**params, max_deviation=delta, deviation_kind=kind)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BoundNotMetWarning)
            # tests/test_never_worse.py checks what it says
            warnings.simplefilter("ignore", FairnessLossWarning)
            model.fit(X, sensitive_features=S, sample_weight=weights)
    except InfeasibleBoundError:
        assume(False)
    w = np.ones(X.shape[0]) if weights is None else weights
    # The bound holds up to the violation reported, measured independently.
    assert_allclose(model.violation_, max(largest_excess(model.labels_, columns, w, kind,
                                                         delta), 0.0), atol=1e-12)
    assert model.bounds_check_.satisfied == (model.violation_ <= 1e-9)
    # Every cluster is used; centres, cost and fairness are those of the bounded labels.
    assert np.unique(model.labels_).shape[0] == k
    means = np.array([np.average(X[model.labels_ == c], axis=0, weights=w[model.labels_ == c])
                      for c in range(k)])
    assert_allclose(model.cluster_centers_, means, atol=1e-10)
    assert_allclose(model.inertia_, _reference.inertia(X, model.labels_, k, w), rtol=1e-9,
                    atol=1e-9)
    problem_ref = _reference.Problem(X=X, categorical=columns, numeric=[],
                                     cat_weights=np.ones(len(columns)), num_weights=np.ones(0),
                                     fairness_weight=10.0, n_clusters=k, sample_weight=weights)
    assert_allclose(model.fairness_, _reference.fairness(problem_ref, model.labels_),
                    rtol=1e-9, atol=1e-12)
    assert_allclose(model.objective_, model.inertia_ + 10.0 * model.fairness_, rtol=1e-12)
    # FairKM's own clustering, unchanged when it meets the bound; the rows moved are counted.
    plain = FairKM(**params).fit(X, sensitive_features=S, sample_weight=weights)
    if largest_excess(plain.labels_, columns, w, kind, delta) <= 1e-9:
        np.testing.assert_array_equal(model.labels_, plain.labels_)
    assert model.n_moved_by_bound_ == np.count_nonzero(model.labels_ != plain.labels_)
    assert model.max_deviation_ == delta


def blobs(n=600):
    X, S, _ = make_sensitive_blobs(n, n_values=(2, 3), random_state=0)
    return X, S


def test_the_bound_tightens_the_worst_cluster_and_leaves_no_bound_unbounded():
    X, S = blobs()
    plain = FairKM(4, random_state=0).fit(X, sensitive_features=S)
    assert plain.bounds_check_ is None and np.isnan(plain.violation_)
    bounded = FairKM(4, random_state=0, max_deviation=0.05).fit(X, sensitive_features=S)
    w = np.ones(len(X))
    cols = [S[c].to_numpy() for c in S]
    assert largest_excess(plain.labels_, cols, w, "additive", 0.05) > 0
    assert largest_excess(bounded.labels_, cols, w, "additive", 0.05) <= 1e-9
    assert bounded.bounds_check_.satisfied and bounded.violation_ == 0
    assert "within 0.05 of the dataset's mix: yes" in bounded.bounds_check_.summary()
    # The price is counted against the same S-blind reference.
    assert bounded.blind_clustering_.inertia == plain.blind_clustering_.inertia
    assert bounded.cost_increase_ >= plain.cost_increase_
    # Same random_state, same labels.
    again = FairKM(4, random_state=0, max_deviation=0.05).fit(X, sensitive_features=S)
    np.testing.assert_array_equal(again.labels_, bounded.labels_)


def test_a_dict_bounds_only_the_named_attribute():
    X, S = blobs()
    model = FairKM(4, random_state=0, max_deviation={"s1": 0.04}).fit(X, sensitive_features=S)
    table = model.bounds_check_.table
    assert np.isnan(table.loc["s0", "bound"]) and table.loc["s1", "bound"] == 0.04
    assert largest_excess(model.labels_, [S["s1"].to_numpy()], np.ones(len(X)), "additive",
                          0.04) <= 1e-9


def test_infeasible_bound_names_the_tightest_one():
    X = np.arange(6.0)[:, None]
    S = np.array(["a", "a", "a", "b", "b", "b"])
    # Four non-empty clusters each half "a" give or take 0.1 need at least 8 rows.
    with pytest.raises(InfeasibleBoundError, match="tightest"):
        FairKM(4, fairness_weight=0.0, random_state=0, max_deviation=0.1).fit(
            X, sensitive_features=S)


@pytest.mark.parametrize(
    ("params", "fit_sensitive", "error", "match"),
    [
        ({"max_deviation": 0.1}, False, ValueError,
         r"max_deviation=0\.1 .*no sensitive_features"),
        ({"max_deviation": -0.1}, True, ValueError, r"max_deviation.*-0\.1"),
        ({"max_deviation": "0.1"}, True, TypeError,
         r"'max_deviation' parameter of FairKM must be None, a float in the range \[0.0, 1.0\] "
         r"\(a share, not a percentage: 0.05 for 5%\) or an instance of 'dict'. Got '0\.1' "
         r"instead"),
        ({"max_deviation": {"nope": 0.1}}, True, ValueError, "names 'nope'"),
        ({"max_deviation": 1.0, "deviation_kind": "multiplicative"}, True, ValueError,
         r"must be < 1 with deviation_kind='multiplicative'"),
        ({"deviation_kind": "relative"}, True, ValueError,
         r"'deviation_kind' parameter of FairKM must be a str among {'[a-z]+', '[a-z]+'}. "
         r"Got 'relative' instead"),
    ],
)
def test_bad_bounds_are_refused_before_fitting(params, fit_sensitive, error, match):
    X, S = blobs(60)
    with pytest.raises(error, match=match):
        FairKM(3, **params).fit(X, sensitive_features=S if fit_sensitive else None)


def test_only_numeric_attributes_cannot_be_bounded():
    X, S = blobs(60)
    numeric = pd.DataFrame({"age": np.linspace(0, 1, 60)})
    with pytest.raises(ValueError, match="bounds categorical attributes, and there is none"):
        FairKM(3, max_deviation=0.1).fit(X, sensitive_features=numeric)


def test_a_bound_on_the_wrong_kind_says_what_bounds_it():
    X, S = blobs(60)
    S = S.assign(age=np.linspace(20.0, 60.0, 60))
    with pytest.raises(ValueError, match="max_deviation names 'age', which is numeric; it "
                                         "bounds the shares of a categorical attribute's"):
        FairKM(3, max_deviation={"age": 0.1}).fit(X, sensitive_features=S)
    with pytest.raises(ValueError, match="numeric_bound names 's0', which is categorical"):
        check_bounds(np.arange(60) % 3, S, max_deviation=None, numeric_bound={"s0": 0.1})


def test_fit_with_a_bound_reads_the_sensitive_features_and_weights_once(monkeypatch):
    """The bounds are built on the columns and weights the fit has read, not read again."""
    import fairkm.utils._sensitive as columns

    X, S, _ = make_sensitive_blobs(300, n_values=(2, 3), random_state=0)
    real, reads = columns.read_columns, []

    def counted(*args, **kwargs):
        reads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(columns, "read_columns", counted)
    # The weights too: every module that took check_sample_weight counts into one list.
    import sys

    from fairkm.utils import _validation

    real_weights, weight_reads = _validation.check_sample_weight, []

    def counted_weights(*args, **kwargs):
        weight_reads.append(args)
        return real_weights(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("fairkm") and getattr(module, "check_sample_weight",
                                                 None) is real_weights:
            monkeypatch.setattr(module, "check_sample_weight", counted_weights)
    weights = np.linspace(0.5, 2.0, len(X))
    model = FairKM(3, max_deviation=0.1, random_state=0).fit(X, sensitive_features=S,
                                                             sample_weight=weights)
    assert len(reads) == 1
    assert len(weight_reads) == 1
    assert model.bounds_check_.satisfied
    monkeypatch.undo()
    # The bounds are those a separate reading of the raw columns gives.
    apart = check_bounds(model.labels_, S, max_deviation=0.1, sample_weight=weights)
    pd.testing.assert_frame_equal(apart.table, model.bounds_check_.table)


def plain_tv(labels, column):
    """Per cluster, the total-variation distance of its mix of ``column`` from the dataset's."""
    values = np.unique(column)
    p = np.array([np.mean(column == v) for v in values])
    return np.array([0.5 * np.abs(np.array([np.mean(column[labels == c] == v) for v in values])
                                  - p).sum() for c in np.unique(labels)])


@pytest.mark.parametrize("delta", [0.2, 0.1, 0.05, 0.02])
def test_a_bound_never_leaves_an_attribute_less_fair_than_fairkm_left_it(delta):
    X, S, _ = make_sensitive_blobs(1500, n_values=(2, 3, 4), numeric=1, random_state=3)
    plain = FairKM(5, random_state=0).fit(X, sensitive_features=S)
    model = FairKM(5, random_state=0, max_deviation=delta).fit(X, sensitive_features=S)
    cats = [c for c in S if c.startswith("s")]
    w = np.ones(len(X))
    assert largest_excess(model.labels_, [S[c].to_numpy() for c in cats], w, "additive",
                          delta) <= 1e-9
    if largest_excess(plain.labels_, [S[c].to_numpy() for c in cats], w, "additive",
                      delta) <= 1e-9:
        np.testing.assert_array_equal(model.labels_, plain.labels_)
        assert model.n_moved_by_bound_ == 0
        return
    assert model.n_moved_by_bound_ > 0
    for c in cats:
        before, after = plain_tv(plain.labels_, S[c].to_numpy()), plain_tv(model.labels_,
                                                                          S[c].to_numpy())
        assert after.mean() <= before.mean() + 1e-9
        assert after.max() <= before.max() + 1e-9
    # The numeric attribute (standardised) likewise.
    z = S["z0"].to_numpy()
    z = (z - z.mean()) / z.std()
    before = np.array([abs(z[plain.labels_ == c].mean()) for c in range(5)])
    after = np.array([abs(z[model.labels_ == c].mean()) for c in range(5)])
    assert after.mean() <= before.mean() + 1e-9 and after.max() <= before.max() + 1e-9


def test_zero_asks_for_the_exact_mix_as_far_as_whole_rows_allow():
    X, S = blobs(1200)
    model = FairKM(3, random_state=0, max_deviation=0).fit(X, sensitive_features=S)
    check = model.bounds_check_
    assert check.satisfied and "exact mix as far as whole rows allow" in check.note
    sizes = np.bincount(model.labels_)
    assert 0 < model.max_deviation_ <= 1.5 / sizes.min()
    assert check.table["deviation"].max() <= model.max_deviation_ + 1e-12
    mixed = FairKM(3, random_state=0, max_deviation={"s0": 0, "s1": 0.2}).fit(
        X, sensitive_features=S)
    assert mixed.max_deviation_["s1"] == 0.2 and 0 < mixed.max_deviation_["s0"] < 0.01


def _stuck_problem():
    X, S, _ = make_sensitive_blobs(900, n_values=(2, 3), random_state=5)
    plain = FairKM(4, random_state=0).fit(X, sensitive_features=S)
    bounds = resolve_bounds(S, len(X), max_deviation=0.03)
    return X, S, plain, bounds


def test_where_the_repair_is_stuck_the_relaxation_picks_the_rows(monkeypatch):
    X, S, plain, bounds = _stuck_problem()
    real = _repair.local_search
    calls = []

    def stuck_first(space, dist, labels, **kwargs):
        calls.append(kwargs.get("polish", True))
        if len(calls) == 1:  # the repair from FairKM's labels gets nowhere
            return np.asarray(labels).copy(), False
        return real(space, dist, labels, **kwargs)

    monkeypatch.setattr(_repair, "local_search", stuck_first)
    out = _repair.constrain(X, plain.labels_.astype(np.int64), plain.cluster_centers_,
                               bounds)
    assert out.how == "relaxed" and out.guarded and out.check.satisfied
    cols = [S[c].to_numpy() for c in S]
    assert largest_excess(out.labels, cols, np.ones(len(X)), "additive", 0.03) <= 1e-9
    for column in cols:
        before, after = plain_tv(plain.labels_, column), plain_tv(out.labels, column)
        assert after.mean() <= before.mean() + 1e-9 and after.max() <= before.max() + 1e-9


def test_when_every_search_is_stuck_the_cheapest_assignment_under_the_bound_is_kept(monkeypatch):
    X, S, plain, bounds = _stuck_problem()
    monkeypatch.setattr(_repair, "local_search",
                        lambda space, dist, labels, **kw: (np.asarray(labels).copy(), False))
    monkeypatch.setattr(_repair, "_under_cells",
                        lambda labels, bounds, problem, dist, live, *rest: labels[live].copy())
    out = _repair.constrain(X, plain.labels_.astype(np.int64), plain.cluster_centers_,
                               bounds)
    assert out.check.satisfied
    cheapest = fair_assignment(X, plain.cluster_centers_, S, max_deviation=0.03)
    np.testing.assert_array_equal(out.labels, cheapest.labels)
    assert out.n_moved == np.count_nonzero(out.labels != plain.labels_)
    # Said as it is: a loss names "least loss", none the search that found it.
    lost = worse(summaries(plain.labels_, S, ()), summaries(out.labels, S, ()))
    assert out.guarded == (not lost) and out.how == ("least loss" if lost else "searched")
    assert sorted({(item.attribute, item.measure) for item in out.repair.loss}) == lost
