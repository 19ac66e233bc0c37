"""The compiled engine against the plain NumPy reference in ``_reference.py``."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm import FairKM, _kernels
from fairkm._encoding import check_sensitive_features
from fairkm._engine import Stats, sweep

from . import _reference


@st.composite
def problems(draw, max_n=18):
    """Small FairKM instances with every cluster non-empty in the starting labels."""
    k = draw(st.integers(1, 4))
    n = draw(st.integers(max(k, 2), max_n))
    d = draw(st.integers(1, 3))
    rows = draw(st.lists(
        st.lists(st.integers(-20, 20), min_size=d, max_size=d), min_size=n, max_size=n
    ))
    # Quarter steps make exact ties between candidate moves possible, as in real data.
    X = np.array(rows, dtype=np.float64) / 4.0
    n_cat = draw(st.integers(0, 3))
    categorical = [
        np.array(draw(st.lists(st.integers(0, draw(st.integers(0, 4))), min_size=n, max_size=n)))
        for _ in range(n_cat)
    ]
    n_num = draw(st.integers(0, 2))
    numeric = []
    for _ in range(n_num):
        col = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), float)
        assume(col.std() > 0)
        numeric.append(col)
    weights = draw(st.lists(
        st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_cat + n_num, max_size=n_cat + n_num
    ))
    lam = draw(st.sampled_from([0.0, 0.3, 10.0, 1e3, (n / k) ** 2]))
    labels = np.array(draw(st.permutations(np.arange(n) % k)), dtype=np.int64)
    order = np.array(draw(st.permutations(np.arange(n))), dtype=np.int64)
    problem = _reference.Problem(
        X=X,
        categorical=categorical,
        numeric=numeric,
        cat_weights=np.array(weights[:n_cat]),
        num_weights=np.array(weights[n_cat:]),
        fairness_weight=lam,
        n_clusters=k,
    )
    return problem, labels, order


def sensitive_frame(problem):
    """The problem's sensitive attributes as a DataFrame: ints categorical, floats numeric."""
    columns = {f"c{j}": col for j, col in enumerate(problem.categorical)}
    columns.update({f"z{j}": col for j, col in enumerate(problem.numeric)})
    return pd.DataFrame(columns) if columns else None


def engine(problem, labels):
    """The estimator's kernel inputs for ``problem`` and statistics of ``labels``."""
    frame = sensitive_frame(problem)
    weights = np.concatenate([problem.cat_weights, problem.num_weights])
    est = FairKM(problem.n_clusters, attribute_weights=weights if len(weights) else None)
    n = problem.X.shape[0]
    sens = None if frame is None else check_sensitive_features(frame, n_samples=n)
    terms = est._encode_fit_sensitive(sens, n, est._check_attribute_weights(
        [] if sens is None else sens.names
    ))
    stats = Stats(problem.n_clusters, problem.X.shape[1], terms)
    stats.recompute(problem.X, terms, labels)
    return terms, stats


def kernel_objective(problem, terms, stats, labels):
    inertia = _kernels.inertia(problem.X, stats.cluster_centers(), labels)
    return inertia + problem.fairness_weight * stats.fairness(terms)


@settings(deadline=None, max_examples=150)
@given(case=problems(), data=st.data())
def test_move_deltas_equal_reference_objective_differences(case, data):
    problem, labels, _ = case
    terms, stats = engine(problem, labels)
    i = data.draw(st.integers(0, len(labels) - 1))
    lam = problem.fairness_weight
    got = np.empty(problem.n_clusters)
    _kernels.move_deltas(
        problem.X, terms.codes, terms.value_prop, terms.value_const, lam * terms.cat_weight,
        terms.Z, lam * terms.num_weight, i, labels, stats.centers, stats.counts,
        stats.value_counts, stats.cat_dev, stats.num_sums, got,
    )
    want = _reference.move_deltas(problem, labels, i)
    assert_array_equal(np.isfinite(got), np.isfinite(want))
    scale = 1.0 + abs(_reference.objective(problem, labels))
    finite = np.isfinite(want)
    assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9 * scale)


@settings(deadline=None, max_examples=150)
@given(case=problems())
def test_objective_equals_reference(case):
    problem, labels, _ = case
    terms, stats = engine(problem, labels)
    assert_allclose(
        _kernels.inertia(problem.X, stats.cluster_centers(), labels),
        _reference.inertia(problem.X, labels, problem.n_clusters),
        rtol=1e-10, atol=1e-10,
    )
    assert_allclose(
        stats.fairness(terms), _reference.fairness(problem, labels), rtol=1e-9, atol=1e-12
    )


@settings(deadline=None, max_examples=150)
@given(case=problems())
def test_sweep_matches_reference(case):
    problem, labels, order = case
    want = _reference.sweep(problem, labels, order)
    assume(want.min_gap > 1e-9 * (1.0 + want.scale))
    terms, stats = engine(problem, labels)
    got = labels.copy()
    sweep(problem.X, terms, problem.fairness_weight, order, got, stats)
    assert_array_equal(got, want.labels)
    stats.recompute(problem.X, terms, got)
    assert_allclose(
        kernel_objective(problem, terms, stats, got), want.objective,
        rtol=1e-9, atol=1e-9,
    )


@settings(deadline=None, max_examples=150)
@given(case=problems(max_n=40))
def test_sweep_invariants(case):
    problem, labels, order = case
    terms, stats = engine(problem, labels)
    before = kernel_objective(problem, terms, stats, labels)
    got = labels.copy()
    n_moved = sweep(problem.X, terms, problem.fairness_weight, order, got, stats)
    assert n_moved == np.sum(got != labels)
    # The incrementally maintained statistics equal an exact recount of the labels.
    k = problem.n_clusters
    assert_array_equal(stats.counts, np.bincount(got, minlength=k))
    assert np.all(stats.counts >= 1)
    incremental = (stats.sums.copy(), stats.value_counts.copy(), stats.cat_dev.copy(),
                   stats.num_sums.copy(), stats.centers.copy())
    stats.recompute(problem.X, terms, got)
    exact = (stats.sums, stats.value_counts, stats.cat_dev, stats.num_sums, stats.centers)
    for inc, ex in zip(incremental, exact, strict=True):
        assert_allclose(inc, ex, rtol=1e-9, atol=1e-9)
    for c in range(k):
        # Attributes occupy disjoint ranges of global value indices.
        recount = np.bincount(terms.codes[got == c].ravel(), minlength=terms.n_values)
        assert_array_equal(recount, stats.value_counts[:, c])
    after = kernel_objective(problem, terms, stats, got)
    assert after <= before + 1e-9 * (1.0 + abs(before))
    assert_allclose(after, _reference.objective(problem, got), rtol=1e-9, atol=1e-9)


def assert_fit_ends_in_a_local_optimum(problem, **params):
    """Fit ``problem`` to ``tol=0`` and check the result against the reference."""
    frame = sensitive_frame(problem)
    weights = np.concatenate([problem.cat_weights, problem.num_weights])
    est = FairKM(
        problem.n_clusters,
        fairness_weight=problem.fairness_weight,
        attribute_weights=weights if len(weights) else None,
        tol=0.0,
        max_iter=500,
        random_state=0,
        **params,
    ).fit(problem.X, sensitive_features=frame)
    scale = 1.0 + abs(est.objective_)
    assert_allclose(est.objective_, _reference.objective(problem, est.labels_),
                    rtol=1e-9, atol=1e-9)
    assert np.all(np.diff(est.objective_history_) <= 1e-9 * scale)
    assert np.all(np.bincount(est.labels_, minlength=problem.n_clusters) >= 1)
    for i in range(len(est.labels_)):
        deltas = _reference.move_deltas(problem, est.labels_, i)
        assert deltas.min() >= -1e-9 * scale


@settings(deadline=None, max_examples=60)
@given(case=problems(max_n=14))
def test_fit_ends_in_a_local_optimum(case):
    assert_fit_ends_in_a_local_optimum(case[0])


def test_statistics_with_no_sensitive_attribute():
    X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    labels = np.array([0, 1, 0])
    problem = _reference.Problem(X, [], [], np.zeros(0), np.zeros(0), 0.0, 2)
    terms, stats = engine(problem, labels)
    assert_array_equal(stats.cluster_centers(), [[2.0, 3.0], [2.0, 3.0]])
    assert stats.fairness(terms) == 0.0


@pytest.mark.parametrize("k", [1, 3])
def test_nearest_center_breaks_ties_to_lowest_index(k):
    X = np.array([[1.0], [2.0], [-7.0]])
    centers = np.zeros((k, 1))  # identical centres
    labels = np.full(3, -1, dtype=np.int64)
    _kernels.nearest_center(X, centers, labels)
    assert_array_equal(labels, [0, 0, 0])
