"""The compiled engine against the plain NumPy reference in ``_reference.py``."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm.cluster import _kernels
from fairkm.cluster._engine import sweep
from fairkm.cluster._kernels import _STATISTICS_CHUNK

from . import _reference
from ._problems import assert_fit_ends_in_a_local_optimum, engine, problems
from .conftest import examples


def kernel_objective(problem, terms, stats, labels):
    inertia = _kernels.inertia(problem.X, stats.cluster_centers(), terms.weights, labels)
    return inertia + problem.fairness_weight * stats.fairness(terms)


@settings(max_examples=examples(150))
@given(case=problems(), data=st.data())
def test_move_deltas_equal_reference_objective_differences(case, data):
    problem, labels, _ = case
    terms, stats = engine(problem, labels)
    i = data.draw(st.integers(0, len(labels) - 1))
    lam = problem.fairness_weight
    got = np.empty(problem.n_clusters)
    _kernels.move_deltas(problem.X, terms.kernel(lam), i, labels, stats.kernel(), got)
    want = _reference.move_deltas(problem, labels, i)
    assert_array_equal(np.isfinite(got), np.isfinite(want))
    scale = 1.0 + abs(_reference.objective(problem, labels))
    finite = np.isfinite(want)
    assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9 * scale)


@settings(max_examples=examples(150))
@given(case=problems())
def test_objective_equals_reference(case):
    problem, labels, _ = case
    terms, stats = engine(problem, labels)
    assert_allclose(
        _kernels.inertia(problem.X, stats.cluster_centers(), terms.weights, labels),
        _reference.inertia(problem.X, labels, problem.n_clusters, problem.sample_weight),
        rtol=1e-10, atol=1e-10,
    )
    assert_allclose(
        stats.fairness(terms), _reference.fairness(problem, labels), rtol=1e-9, atol=1e-12
    )


@settings(max_examples=examples(150))
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


@settings(max_examples=examples(150))
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
    # Counts are total weights (the number of points without sample weights).
    weights = problem.weights()
    assert_allclose(stats.counts, np.bincount(got, weights=weights, minlength=k), rtol=1e-12)
    assert np.all(stats.counts > 0)
    incremental = (stats.sums.copy(), stats.value_counts.copy(), stats.cat_dev.copy(),
                   stats.num_sums.copy(), stats.centers.copy())
    stats.recompute(problem.X, terms, got)
    exact = (stats.sums, stats.value_counts, stats.cat_dev, stats.num_sums, stats.centers)
    for inc, ex in zip(incremental, exact, strict=True):
        assert_allclose(inc, ex, rtol=1e-9, atol=1e-9)
    for c in range(k):
        # Attributes occupy disjoint ranges of global value indices.
        in_c = got == c
        recount = np.bincount(terms.codes[in_c].ravel(), minlength=terms.n_values,
                              weights=np.repeat(weights[in_c], terms.codes.shape[1]))
        assert_allclose(recount, stats.value_counts[:, c], rtol=1e-12, atol=1e-12)
    after = kernel_objective(problem, terms, stats, got)
    assert after <= before + 1e-9 * (1.0 + abs(before))
    assert_allclose(after, _reference.objective(problem, got), rtol=1e-9, atol=1e-9)


@settings(max_examples=examples(60))
@given(case=problems(max_n=14))
def test_fit_ends_in_a_local_optimum(case):
    assert_fit_ends_in_a_local_optimum(case[0])


@pytest.mark.parametrize("weighted", [False, True])
def test_statistics_of_many_chunks_equal_the_reference(weighted):
    """Over several chunks of rows, the statistics are a plain recount's."""
    rng = np.random.default_rng(0)
    n = 2 * _STATISTICS_CHUNK + 1234  # three chunks
    X = rng.normal(size=(n, 3))
    frame = pd.DataFrame({"g": rng.integers(0, 4, n), "z": rng.normal(size=n)})
    weights = rng.uniform(0.5, 2.0, n) if weighted else None
    problem = _reference.Problem(X, [frame["g"].to_numpy()], [frame["z"].to_numpy()],
                                 np.ones(1), np.ones(1), 1e4, 3, sample_weight=weights)
    labels = rng.integers(0, 3, n)
    terms, stats = engine(problem, labels)
    w = np.ones(n) if weights is None else weights
    assert_allclose(stats.counts, np.bincount(labels, weights=w, minlength=3), rtol=1e-12)
    for c in range(3):
        assert_allclose(stats.sums[:, c], (w[labels == c, None] * X[labels == c]).sum(axis=0),
                        rtol=1e-10)
    assert_allclose(
        _kernels.inertia(X, stats.cluster_centers(), terms.weights, labels),
        _reference.inertia(X, labels, 3, weights), rtol=1e-10,
    )


def _in_order(values):
    """Sum the rows of ``values`` one after another from 0 (``np.cumsum`` adds in order)."""
    if values.shape[0] == 0:
        return np.zeros(values.shape[1:])
    return np.cumsum(values, axis=0)[-1]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [1, 4])
def test_statistics_are_chunked_row_by_row_sums_to_the_bit(weighted, k):
    """Each chunk's rows added in order, then the chunks' partials in order: the same bits.

    The order the recount promises (``cluster_statistics``'s docstring), which
    the golden outputs and every "same bits" comparison rest on; cluster 0 of
    the ``k=4`` draw is left empty.
    """
    rng = np.random.default_rng(1)
    n = 2 * _STATISTICS_CHUNK + 777
    X = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-3, 4, size=(n, 1))
    frame = pd.DataFrame({"g": rng.integers(0, 5, n), "h": rng.integers(0, 2, n),
                          "z": rng.normal(size=n)})
    weights = rng.uniform(0.1, 3.0, n) if weighted else None
    problem = _reference.Problem(X, [frame["g"].to_numpy(), frame["h"].to_numpy()],
                                 [frame["z"].to_numpy()], np.ones(2), np.ones(1), 1e4, k,
                                 sample_weight=weights)
    labels = rng.integers(min(1, k - 1), k, n)
    terms, stats = engine(problem, labels)
    w = np.ones(n) if weights is None else weights
    # The rows as the kernel sees them: global value codes and standardised numeric values.
    one_hot = np.zeros((n, terms.n_values))
    np.put_along_axis(one_hot, terms.codes, 1.0, axis=1)
    columns = {"sums": (w[:, None] * X, stats.sums), "counts": (w[:, None], stats.counts[None]),
               "value_counts": (w[:, None] * one_hot, stats.value_counts),
               "num_sums": (w[:, None] * terms.Z, stats.num_sums)}
    for name, (rows, got) in columns.items():
        expected = np.zeros((rows.shape[1], k))
        for start in range(0, n, _STATISTICS_CHUNK):
            chunk = slice(start, start + _STATISTICS_CHUNK)
            for c in range(k):
                expected[:, c] += _in_order(rows[chunk][labels[chunk] == c])
        assert_array_equal(got, expected, err_msg=name)


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


def term_by_term_nearest(X, centers):
    """Each row's nearest centre, the squares added feature by feature (ties to the lowest)."""
    labels = []
    for x in X:
        dist = []
        for center in centers:
            total = 0.0
            for value, coordinate in zip(x, center, strict=True):
                diff = value - coordinate
                total += diff * diff
            dist.append(total)
        labels.append(int(np.argmin(dist)))
    return np.array(labels)


@settings(max_examples=examples(100))
@given(case=problems(max_n=80, weighted=False), data=st.data())
def test_nearest_center_is_the_term_by_term_nearest(case, data):
    problem, _, _ = case
    X = problem.X
    # Centres at data points (quarter steps): exact ties between centres occur.
    rows = data.draw(st.lists(st.integers(0, len(X) - 1), min_size=1, max_size=6))
    centers = np.ascontiguousarray(X[rows])
    got = np.full(len(X), -1, dtype=np.int64)
    _kernels.nearest_center(X, centers, got)
    assert_array_equal(got, term_by_term_nearest(X, centers))


def test_nearest_center_over_many_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5))
    centers = np.ascontiguousarray(X[:9] + 0.1)
    got = np.full(len(X), -1, dtype=np.int64)
    _kernels.nearest_center(X, centers, got)
    assert_array_equal(got, term_by_term_nearest(X, centers))
