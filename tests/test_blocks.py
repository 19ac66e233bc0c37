"""Pricing by blocks (``fairkm.cluster._kernels``) against pricing one point at a time.

Blocked pricing adds the same terms in the same order as the point-at-a-time
formulas (:func:`fairkm.cluster._kernels.point_terms`), so nothing may differ
in any bit: the prices, a sweep's moves and statistics for every block size
(a block of one point is priced at its visit, against the statistics every
earlier move left). The mini-batch proposals, priced one point at a time, are
checked against the same formulas.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from fairkm.cluster import _kernels

from . import _reference
from ._problems import engine, problems
from .conftest import examples

STATISTICS = ("sums", "centers", "counts", "value_counts", "cat_dev", "num_sums")


def assert_bits_equal(got, want):
    """Equal to the last bit (the sign of a zero included)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def kernel_sweep(problem, labels, order, block):
    """One sweep with ``block`` points per block; returns (moved, labels, statistics)."""
    terms, stats = engine(problem, labels)
    labels = labels.copy()
    lam = problem.fairness_weight
    moved = _kernels.sweep(problem.X, terms.kernel(lam), order, block, labels, stats.kernel())
    return moved, labels, stats


def assert_same_sweep(problem, labels, order, block):
    moved, got, stats = kernel_sweep(problem, labels, order, block)
    want_moved, want, want_stats = kernel_sweep(problem, labels, order, 1)
    assert moved == want_moved
    assert_array_equal(got, want)
    for name in STATISTICS:
        assert_bits_equal(getattr(stats, name), getattr(want_stats, name))
    return moved


@settings(max_examples=examples(200))
@given(case=problems(max_n=40), block=st.sampled_from([2, 3, 5, 8, _kernels.BLOCK]))
def test_every_block_size_sweeps_alike(case, block):
    problem, labels, order = case
    assert_same_sweep(problem, labels, order, block)


@pytest.mark.parametrize("exponent", [2, 1, 0])
@pytest.mark.parametrize("weighted", [False, True])
def test_blocks_sweep_alike_where_many_points_move(exponent, weighted):
    # Overlapping blobs from random labels: most points move in the first sweep, many of them
    # inside a block whose distances and table the earlier moves refreshed.
    from ._reference import Problem

    rng = np.random.default_rng(exponent + 3 * weighted)
    n, k = 3000, 7
    X = rng.normal(size=(n, 4)) + rng.integers(0, 3, size=(n, 1))
    categorical = [rng.integers(0, m, n) for m in (2, 5, 9)]
    numeric = [rng.normal(size=n)]
    problem = Problem(
        X=X, categorical=categorical, numeric=numeric, cat_weights=np.array([1.0, 0.5, 2.0]),
        num_weights=np.array([1.0]), fairness_weight=50.0, n_clusters=k,
        sample_weight=rng.choice([0.0, 0.5, 1.0, 2.0], n) if weighted else None,
        cluster_exponent=exponent,
    )
    labels = rng.integers(0, k, n).astype(np.int64)
    order = rng.permutation(n).astype(np.int64)
    for block in (7, _kernels.BLOCK, 200):
        assert assert_same_sweep(problem, labels, order, block) > n // 4


@settings(max_examples=examples(150))
@given(case=problems(max_n=40))
def test_block_terms_equal_point_terms(case):
    problem, labels, order = case
    terms, stats = engine(problem, labels)
    record = terms.kernel(problem.fairness_weight)
    cat_coef, num_coef = record.cat_coef, record.num_coef
    X, k, n = problem.X, problem.n_clusters, len(labels)
    coords, dist = np.empty((X.shape[1], n)), np.empty((k, n))
    _kernels.gather_block(X, order, 0, n, coords)
    _kernels.all_distances(coords, n, stats.centers, dist)
    table = np.empty(stats.value_counts.shape)
    for c in range(k):  # the sweep's start: each column set as a move refreshes it
        _kernels.set_lin_columns(terms.value_prop, terms.offsets, cat_coef, stats.counts,
                                 stats.value_counts, stats.cat_dev, c, c, table)
    want_dist, want_lin, lin = np.empty(k), np.empty(k), np.empty(k)
    for r, i in enumerate(order):
        _kernels.point_terms(X, terms.codes, terms.value_prop, cat_coef, terms.Z, num_coef, i,
                             stats.centers, stats.counts, stats.value_counts, stats.cat_dev,
                             stats.num_sums, want_dist, want_lin)
        _kernels.table_lin(table, terms.codes, terms.Z, num_coef, stats.num_sums, i, lin)
        assert_bits_equal(dist[:, r], want_dist)
        assert_bits_equal(lin, want_lin)


def point_prices(problem, terms, stats, i, a):
    """``move_prices`` from ``point_terms``: one point priced alone, the unblocked way."""
    record = terms.kernel(problem.fairness_weight)
    cat_coef, num_coef = record.cat_coef, record.num_coef
    k = problem.n_clusters
    p = 2 - terms.cluster_exponent
    grow, shrink = _kernels.size_factors(stats.counts)
    _, factors = _kernels.fair_factors(record, stats.kernel(), p)
    dist, lin, costs = np.empty(k), np.empty(k), np.empty(k)
    _kernels.point_terms(problem.X, terms.codes, terms.value_prop, cat_coef, terms.Z, num_coef,
                         i, stats.centers, stats.counts, stats.value_counts, stats.cat_dev,
                         stats.num_sums, dist, lin)
    weighted = terms.weights.shape[0] > 0
    w = _kernels.point_weight(terms.weights, i)
    base = _kernels.point_base(terms.codes, terms.value_const, cat_coef, terms.Z, num_coef, i)
    _kernels.move_prices(weighted, w, _kernels.point_change(weighted, w, base), dist, lin, a,
                         stats.counts, grow, shrink, p, factors, costs)
    return costs, w


@settings(max_examples=examples(100))
@given(case=problems(max_n=40))
def test_proposals_equal_point_at_a_time_choices(case):
    problem, labels, order = case
    terms, stats = engine(problem, labels)
    lam = problem.fairness_weight
    got = np.full(len(order), -1, dtype=np.int64)
    _kernels.propose_moves(problem.X, terms.kernel(lam), order, labels, stats.kernel(), got)
    for t, i in enumerate(order):
        a = labels[i]
        want = a
        if _kernels.may_leave(stats.counts, a, _kernels.point_weight(terms.weights, i)):
            costs, w = point_prices(problem, terms, stats, i, a)
            want = _kernels.best_move(costs, a, problem.X, i, w)
        assert got[t] == want


@pytest.mark.parametrize("exponent", [2, 1, 0])
@pytest.mark.parametrize("weighted", [False, True])
def test_sweeps_over_many_blocks_match_the_reference(exponent, weighted):
    # Three sweeps from random labels over ten blocks, against the NumPy reference: the first
    # moves most points, the later ones few; every decision here is clear by a margin far above
    # rounding.
    from ._reference import Problem

    rng = np.random.default_rng(exponent + 3 * weighted)
    n, k = 300, 5
    problem = Problem(
        X=rng.normal(size=(n, 3)) + rng.integers(0, 3, size=(n, 1)),
        categorical=[rng.integers(0, m, n) for m in (2, 5)], numeric=[rng.normal(size=n)],
        cat_weights=np.array([1.0, 0.5]), num_weights=np.array([1.0]), fairness_weight=50.0,
        n_clusters=k, sample_weight=rng.choice([0.5, 1.0, 2.0], n) if weighted else None,
        cluster_exponent=exponent,
    )
    labels = rng.integers(0, k, n).astype(np.int64)
    order = rng.permutation(n).astype(np.int64)
    for _ in range(3):
        want = _reference.sweep(problem, labels, order)
        assert want.min_gap > 1e-9 * (1.0 + want.scale)
        _, labels, _ = kernel_sweep(problem, labels, order, _kernels.BLOCK)
        assert_array_equal(labels, want.labels)
