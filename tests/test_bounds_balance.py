"""Balance targets (``min_balance``) against plain references.

* ``check_bounds`` reports each cluster's balance as a plain count does, and a
  target is met exactly when every cluster's plain balance reaches it;
* for a binary attribute, balance ``>= b`` is the share band
  ``[b / (1 + b), 1 / (1 + b)]``: the solver's excess is zero for the same
  labellings, and the relaxations have the same optimum;
* the relaxation with a target (at once and by prices) costs what the plain
  programme, written row by row, costs; its lower bound never exceeds it;
* the whole-row solvers' excess equals the plain shortfall; type counts and
  fits that say they meet a target do (recounted plainly);
* bad targets raise errors naming ``min_balance``.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.utils._param_validation import InvalidParameterError

from fairkm import BoundedKMeans, FairKM
from fairkm.bounds import fair_assignment
from fairkm.bounds._infeasible import type_counts
from fairkm.bounds._model import Problem, excess, held_offsets, make_problem, solve_lp, types_of
from fairkm.bounds._relax import lower_bound, relax
from fairkm.exceptions import InfeasibleBoundError
from fairkm.metrics import check_bounds
from fairkm.metrics._bound_spec import resolve_bounds

from ._bounds_reference import plain_balance, plain_lp, plain_shortfall
from .conftest import examples


@st.composite
def labellings(draw, n_values=None):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(8, 60))
    k = draw(st.integers(2, 4))
    v = draw(st.integers(2, 5)) if n_values is None else n_values
    column = rng.integers(0, v, n)
    labels = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    weights = rng.integers(1, 4, n).astype(float) if draw(st.booleans()) else None
    return labels, column, k, weights


@settings(max_examples=examples(80), suppress_health_check=[HealthCheck.too_slow])
@given(case=labellings(), target=st.floats(0.0, 1.0))
def test_check_bounds_reports_each_clusters_plain_balance(case, target):
    labels, column, k, weights = case
    check = check_bounds(labels, column, min_balance=target, sample_weight=weights)
    plain = plain_balance(labels, column, k, weights)
    # The bounds read weights to 32 significant bits.
    assert_allclose(check.balances["s0"].to_numpy(), plain, rtol=1e-8)
    row = check.table.loc["s0"]
    assert row["balance"] == pytest.approx(plain.min(), rel=1e-8)
    assert row["min_balance"] == target
    if abs(plain.min() - target) > 1e-8:
        assert check.satisfied == (plain.min() >= target)


@settings(max_examples=examples(80), suppress_health_check=[HealthCheck.too_slow])
@given(case=labellings(), target=st.floats(0.0, 1.0))
def test_the_solvers_excess_is_the_plain_shortfall(case, target):
    labels, column, k, weights = case
    bounds = resolve_bounds(column, len(labels), max_deviation=None, min_balance=target,
                            sample_weight=weights)
    problem = make_problem(np.zeros((len(labels), 1)), bounds, k)
    rows = np.arange(len(labels))
    # Half the rows held elsewhere: the offsets count as the free rows do.
    half = len(labels) // 2
    held = held_offsets(problem, rows[half:], labels[half:])
    w = problem.weights
    expected = plain_shortfall(labels, column, k, target, w) if target > 0 else np.zeros(k)
    assert_allclose(excess(problem, rows, labels), expected, rtol=1e-9, atol=1e-9)
    assert_allclose(excess(problem, rows[:half], labels[:half], held), expected, rtol=1e-9,
                    atol=1e-9)


def _band_problem(problem, b):
    """The same problem with the binary band [b / (1 + b), 1 / (1 + b)] and no target."""
    codes = problem.cat[0][0]
    lower, upper = np.full(2, b / (1 + b)), np.full(2, 1 / (1 + b))
    types, table = types_of([(codes, lower, upper)], codes.shape[0])
    return Problem(problem.X, problem.weights, problem.unit, [(codes, lower, upper)], [], types,
                   table, problem.n_clusters, problem.w_min)


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(case=labellings(n_values=2), target=st.floats(0.05, 0.95))
def test_a_binary_target_is_the_share_band(case, target):
    labels, column, k, weights = case
    shares = np.bincount(column, weights=weights, minlength=2)
    if shares.min() == 0:
        return
    bounds = resolve_bounds(column, len(labels), max_deviation=None, min_balance=target,
                            sample_weight=weights)
    rng = np.random.default_rng(len(labels))
    X = rng.normal(size=(len(labels), 2))
    problem = make_problem(X, bounds, k)
    band = _band_problem(problem, target)
    rows = np.arange(len(labels))
    balance = plain_balance(labels, column, k, problem.weights)
    if np.all(np.isnan(balance) | (np.abs(balance - target) > 1e-6)):
        assert (excess(problem, rows, labels).max() <= 1e-9) == (
            excess(band, rows, labels).max() <= 1e-9)
    if target > shares.min() / shares.max():
        return  # no clustering meets it (refused before any programme)
    dist = ((X[:, None, :] - X[None, :k]) ** 2).sum(axis=2)
    pos, clu = np.repeat(rows, k), np.tile(np.arange(k), len(labels))
    empty = held_offsets(problem, rows[:0], rows[:0])
    ours = solve_lp(problem, rows, pos, clu, dist[pos, clu], empty)
    banded = solve_lp(band, rows, pos, clu, dist[pos, clu], held_offsets(band, rows[:0],
                                                                          rows[:0]))
    assert ours.fun == pytest.approx(banded.fun, rel=1e-6, abs=1e-9)


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4), n_values=st.integers(2, 4),
       share=st.floats(0.2, 1.0), by_prices=st.booleans())
def test_the_relaxation_costs_what_the_plain_programme_costs(seed, k, n_values, share,
                                                             by_prices):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.normal(size=(n, 2))
    column = rng.integers(0, n_values, n)
    counts = np.bincount(column, minlength=n_values)
    if counts.min() == 0:
        return
    target = share * counts.min() / counts.max()
    bounds = resolve_bounds(column, n, max_deviation=None, min_balance=target)
    problem = make_problem(X, bounds, k)
    centers = X[:k]
    dist = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    live = np.arange(n)
    relaxation = relax(problem, dist, live, 8 if by_prices else 10_000)
    plain = plain_lp(X, centers, column[:, None], None, "additive", min_balance=target)
    assert relaxation.bound <= plain * (1 + 1e-7) + 1e-9
    assert lower_bound(problem, dist, live, relaxation.prices) <= plain * (1 + 1e-7) + 1e-9
    if relaxation.certified:
        assert relaxation.value == pytest.approx(plain, rel=1e-6, abs=1e-9)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4), share=st.floats(0.3, 1.0))
def test_type_counts_that_meet_a_target_do(seed, k, share):
    rng = np.random.default_rng(seed)
    n = 60
    S = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n)})
    counts = np.bincount(S["a"], minlength=3)
    if counts.min() < k:
        return
    target = share * counts.min() / counts.max()
    bounds = resolve_bounds(S, n, max_deviation={"b": 0.3}, min_balance={"a": target})
    problem = make_problem(np.zeros((n, 1)), bounds, k)
    found = type_counts(problem, np.arange(n))
    if found is None or found is False:
        return
    per_value = np.zeros((3, k))
    np.add.at(per_value, problem.type_table[:, 0], found)
    assert np.all(per_value.min(axis=0) >= target * per_value.max(axis=0) - 1e-9)


@pytest.mark.parametrize("n_values", [2, 5])
def test_fits_with_a_target_meet_it_recounted(n_values):
    rng = np.random.default_rng(n_values)
    n, k = 600, 4
    X = rng.normal(size=(n, 2)) + 4 * rng.integers(0, 2, size=(n, 1))
    # The groups follow the blobs, so nearest centres are far from balanced.
    p = np.where(X[:, 0] > 2, 0.8, 0.2)
    group = np.where(rng.random(n) < p, 0, 1 + rng.integers(0, n_values - 1, n))
    S = pd.DataFrame({"g": group, "h": rng.integers(0, 2, n)})
    counts = np.bincount(group)
    target = 0.8 * counts.min() / counts.max()
    fits = [
        fair_assignment(X, X[:k], S, max_deviation=None, min_balance={"g": target},
                        max_iter=3).labels,
        BoundedKMeans(k, min_balance={"g": target}, random_state=0, progress=False).fit(
            X, sensitive_features=S).labels_,
        FairKM(k, min_balance={"g": target}, random_state=0).fit(
            X, sensitive_features=S).labels_,
    ]
    for labels in fits:
        assert np.nanmin(plain_balance(labels, group, k)) >= target - 1e-12
        assert np.bincount(labels, minlength=k).min() >= 1


def test_a_target_and_a_band_hold_together():
    rng = np.random.default_rng(7)
    n, k = 500, 3
    X = rng.normal(size=(n, 2))
    S = pd.DataFrame({"g": rng.integers(0, 3, n), "h": rng.integers(0, 2, n)})
    model = BoundedKMeans(k, max_deviation={"h": 0.05}, min_balance={"g": 0.5},
                          random_state=0, progress=False).fit(X, sensitive_features=S)
    assert model.bounds_check_.satisfied
    assert np.nanmin(plain_balance(model.labels_, S["g"].to_numpy(), k)) >= 0.5
    check = check_bounds(model.labels_, S, max_deviation={"h": 0.05}, min_balance={"g": 0.5})
    assert check.satisfied
    assert model.max_deviation_ == {"h": 0.05}


def test_bounded_kmeans_takes_a_target_alone_and_the_default_band_otherwise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    S = pd.DataFrame({"g": rng.integers(0, 2, 200)})
    alone = BoundedKMeans(2, min_balance=0.5, random_state=0, progress=False).fit(
        X, sensitive_features=S)
    assert np.isnan(alone.bounds_check_.table.loc["g", "bound"])
    assert alone.max_deviation_ is None
    default = BoundedKMeans(2, random_state=0, progress=False).fit(X, sensitive_features=S)
    assert default.bounds_check_.table.loc["g", "bound"] == 0.05
    assert np.isnan(default.bounds_check_.table.loc["g", "min_balance"])


@pytest.mark.parametrize("value, error", [
    (1.5, InvalidParameterError), (-0.1, InvalidParameterError), ("high", InvalidParameterError),
    ({"nope": 0.3}, ValueError), ({"z": 0.3}, ValueError), ({"g": 2.0}, InvalidParameterError),
])
def test_bad_targets_name_the_parameter(value, error):
    S = pd.DataFrame({"g": [0, 1, 0, 1], "z": [0.1, 0.5, 0.2, 0.9]})
    with pytest.raises(error, match="min_balance"):
        check_bounds([0, 0, 1, 1], S, min_balance=value)
    X = np.arange(8.0).reshape(4, 2)
    for model in (BoundedKMeans(2, min_balance=value, progress=False),
                  FairKM(2, min_balance=value)):
        with pytest.raises(error, match="min_balance"):
            model.fit(X, sensitive_features=S)


def test_a_target_above_the_datasets_own_balance_is_refused():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    group = np.r_[np.zeros(60, int), np.ones(30, int)]  # the dataset's balance: 0.5
    with pytest.raises(InfeasibleBoundError, match=r"min_balance=0\.6.*0\.5"):
        fair_assignment(X, X[:3], group, max_deviation=None, min_balance=0.6)
    with pytest.raises(InfeasibleBoundError, match="min_balance"):
        FairKM(3, min_balance=0.6, random_state=0).fit(X, sensitive_features=group)
    labels = fair_assignment(X, X[:3], group, max_deviation=None, min_balance=0.5).labels
    assert np.nanmin(plain_balance(labels, group, 3)) >= 0.5


def test_a_target_without_sensitive_features_or_categorical_ones_is_refused():
    X = np.arange(20.0).reshape(10, 2)
    with pytest.raises(ValueError, match="min_balance=0.4"):
        FairKM(2, min_balance=0.4).fit(X)
    numeric = np.linspace(0, 1, 10)
    with pytest.raises(ValueError, match="min_balance=0.4"):
        FairKM(2, min_balance=0.4, numeric_sensitive=True).fit(X, sensitive_features=numeric)
    with pytest.raises(ValueError, match="min_balance=0.4"):
        fair_assignment(X, X[:2], numeric, max_deviation=None, min_balance=0.4)


def test_the_audit_checks_a_models_target_and_says_so():
    from fairkm.report import audit

    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 2))
    S = pd.DataFrame({"g": rng.integers(0, 3, n), "h": rng.integers(0, 2, n)})
    model = BoundedKMeans(3, min_balance={"g": 0.6}, random_state=0, progress=False).fit(
        X, sensitive_features=S)
    report = audit(model, X, sensitive_features=S)
    check = report.bounds["BoundedKMeans"]
    assert check.table.loc["g", "min_balance"] == 0.6
    assert check.table.loc["g", "balance"] == pytest.approx(
        np.nanmin(plain_balance(model.labels_, S["g"].to_numpy(), 3)), rel=1e-12)
    assert "balance at least 0.6: yes" in check.summary()
    assert "balance ≥ 0.6" in report.to_html()
