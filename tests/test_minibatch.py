"""The mini-batch engine: its kernels against the NumPy reference, and its guarantees."""

import numba
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm import FairKM
from fairkm.cluster import _kernels
from fairkm.cluster._encoding import SensitiveEncoding
from fairkm.cluster._engine import MIN_BATCH, Stats, minibatch_epoch
from fairkm.datasets import make_sensitive_blobs
from fairkm.utils._sensitive import check_sensitive_features

from . import _reference
from ._problems import assert_fit_ends_in_a_local_optimum, engine, problems
from .conftest import examples


def propose(X, terms, lam, batch, labels, stats, targets):
    """Each batch point's best lone move against frozen statistics, into ``targets``."""
    _kernels.propose_moves(X, terms.kernel(lam), batch, labels, stats.kernel(), targets)


def apply(X, terms, batch, targets, labels, stats):
    """Apply the moves, then derive centres and G; return the number moved."""
    n_moved = _kernels.apply_moves(X, terms.kernel(0.0), batch, targets, labels, stats.kernel())
    stats.refresh(terms)
    return n_moved


def reference_proposal(problem, labels, i, tolerance):
    """The best single move of point ``i`` alone, or None where rounding could decide it.

    A move must lower the objective strictly and ties go to the lowest index,
    so a decision is clear when the best option beats the next by more than
    ``tolerance`` (the point's own cluster counts as an option of change 0).
    """
    deltas = _reference.move_deltas(problem, labels, i)
    options = np.sort(deltas[np.isfinite(deltas)])
    if len(options) > 1 and options[1] - options[0] <= tolerance:
        return None
    return int(np.argmin(deltas))


@settings(max_examples=examples(150))
@given(case=problems(), data=st.data())
def test_proposals_match_reference(case, data):
    problem, labels, order = case
    size = data.draw(st.integers(1, len(order)))
    batch = order[:size]
    terms, stats = engine(problem, labels)
    got = np.full(size, -1, dtype=np.int64)
    propose(problem.X, terms, problem.fairness_weight, batch, labels, stats, got)
    tolerance = 1e-9 * (1.0 + abs(_reference.objective(problem, labels)))
    wanted = [reference_proposal(problem, labels, i, tolerance) for i in batch]
    clear = [t for t, want in enumerate(wanted) if want is not None]
    assume(clear)
    assert [got[t] for t in clear] == [wanted[t] for t in clear]


@settings(max_examples=examples(150))
@given(case=problems(max_n=30), data=st.data())
def test_applied_moves_keep_exact_statistics(case, data):
    problem, labels, order = case
    k = problem.n_clusters
    size = data.draw(st.integers(1, len(order)))
    batch = order[:size]
    targets = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=size, max_size=size)))
    terms, stats = engine(problem, labels)
    got = labels.copy()
    n_moved = apply(problem.X, terms, batch, targets, got, stats)
    changed = np.flatnonzero(got != labels)
    assert n_moved == changed.size
    # Only batch points move, each to its target; no cluster empties.
    assert set(changed) <= set(batch)
    target_of = dict(zip(batch.tolist(), targets.tolist(), strict=True))
    assert all(got[i] == target_of[i] for i in changed)
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


@settings(max_examples=examples(150))
@given(case=problems(max_n=30))
def test_objective_from_statistics_equals_reference(case):
    problem, labels, _ = case
    terms, stats = engine(problem, labels)
    total_sq_norm = terms.total_sq_norm(problem.X)
    want = _reference.objective(problem, labels)
    got = stats.objective(terms, problem.fairness_weight, total_sq_norm)
    assert_allclose(got, want, rtol=1e-9, atol=1e-9 * (1.0 + total_sq_norm))


@settings(max_examples=examples(60))
@given(case=problems(max_n=14), batch_size=st.sampled_from([1, 2, 5, 64]))
def test_minibatch_fit_ends_in_a_local_optimum(case, batch_size):
    assert_fit_ends_in_a_local_optimum(case[0], algorithm="minibatch", batch_size=batch_size)


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(
        3000, n_features=4, centers=6, n_values=(2, 3, 5), random_state=0
    )
    return X, sensitive


def test_whole_batches_that_overshoot_are_undone(blobs):
    """One batch of every point, with a weight that makes simultaneous moves overshoot."""
    X, sensitive = blobs
    common = dict(n_clusters=6, fairness_weight=1e7, max_iter=300, random_state=0)
    blind = FairKM(**{**common, "fairness_weight": 0.0}).fit(X, sensitive_features=sensitive)

    # From the blind clustering, applying every point's best lone move at once
    # raises the objective: the moves all chase the same imbalance.
    sens = check_sensitive_features(sensitive, n_samples=X.shape[0])
    terms = SensitiveEncoding.from_features(sens, X.shape[0]).terms(sens, np.ones(3))
    labels = blind.labels_.copy()
    stats = Stats(6, X.shape[1], terms)
    stats.recompute(X, terms, labels)
    total_sq_norm = float(np.sum(X**2))
    before = stats.objective(terms, 1e7, total_sq_norm)
    everyone = np.arange(X.shape[0], dtype=np.int64)
    targets = np.empty_like(everyone)
    propose(X, terms, 1e7, everyone, labels, stats, targets)
    assert apply(X, terms, everyone, targets, labels, stats) > 0
    assert stats.objective(terms, 1e7, total_sq_norm) > before

    exact = FairKM(**common).fit(X, sensitive_features=sensitive)
    mini = FairKM(**common, algorithm="minibatch", batch_size=X.shape[0])
    mini.fit(X, sensitive_features=sensitive)
    history = mini.objective_history_
    assert np.all(np.diff(history) <= 1e-9 * np.abs(history[:-1]))
    assert mini.objective_ <= 1.01 * exact.objective_
    assert mini.fairness_ < blind.fairness_


def test_an_epoch_never_raises_the_objective_and_stops_where_batches_overshoot(blobs):
    X, sensitive = blobs
    blind = FairKM(6, fairness_weight=0.0, random_state=0).fit(X, sensitive_features=sensitive)
    sens = check_sensitive_features(sensitive, n_samples=X.shape[0])
    terms = SensitiveEncoding.from_features(sens, X.shape[0]).terms(sens, np.ones(3))
    total_sq_norm = terms.total_sq_norm(X)
    order = np.random.default_rng(0).permutation(X.shape[0])
    for lam, batch_size in ((1e7, X.shape[0]), (3e6, 256)):
        labels = blind.labels_.copy()
        stats = Stats(6, X.shape[1], terms)
        stats.recompute(X, terms, labels)
        before = stats.objective(terms, lam, total_sq_norm)
        n_moved, n_kept, n_rejected, stopped = minibatch_epoch(
            X, terms, lam, order, labels, stats, batch_size, min(MIN_BATCH, batch_size),
            total_sq_norm)
        assert n_moved == np.sum(labels != blind.labels_)
        # The statistics the epoch kept are those of its labels.
        exact = Stats(6, X.shape[1], terms)
        exact.recompute(X, terms, labels)
        for name in ("sums", "counts", "value_counts", "num_sums", "centers", "cat_dev"):
            assert_allclose(getattr(stats, name), getattr(exact, name), rtol=1e-9, atol=1e-9)
        assert exact.objective(terms, lam, total_sq_norm) <= before
        if lam == 1e7:
            # Everyone's lone move at once overshoots: the epoch halves the batch
            # below MIN_BATCH and hands over to exact sweeps.
            assert stopped and n_rejected >= 1
        else:
            assert not stopped and n_kept >= 1 and n_moved > 0


def test_minibatch_is_close_to_exact_from_the_same_start(blobs):
    X, sensitive = blobs
    # From these centres no attribute ends less fair than S-blind (no warning).
    centers = X[np.random.RandomState(2).choice(X.shape[0], 6, replace=False)]
    common = dict(n_clusters=6, init=centers, random_state=0)
    exact = FairKM(**common).fit(X, sensitive_features=sensitive)
    mini = FairKM(**common, algorithm="minibatch", batch_size=256)
    mini.fit(X, sensitive_features=sensitive)
    assert abs(mini.objective_ - exact.objective_) <= 0.01 * exact.objective_


def test_minibatch_is_deterministic_whatever_the_threads(blobs):
    X, sensitive = blobs
    params = dict(n_clusters=6, algorithm="minibatch", batch_size=128, random_state=3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = FairKM(**params).fit(X, sensitive_features=sensitive)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = FairKM(**params).fit(X, sensitive_features=sensitive)
    finally:
        numba.set_num_threads(before)
    assert_array_equal(one.labels_, many.labels_)
    assert_array_equal(one.objective_history_, many.objective_history_)
    other = FairKM(**{**params, "random_state": 4}).fit(X, sensitive_features=sensitive)
    assert one.n_iter_ >= 1 and other.n_iter_ >= 1


def test_verbose_names_epochs_then_sweeps(blobs, capsys):
    X, sensitive = blobs
    FairKM(6, fairness_weight="paper", algorithm="minibatch", batch_size=256, verbose=1,
           random_state=0).fit(X, sensitive_features=sensitive)
    lines = capsys.readouterr().out.splitlines()
    kinds = [line.split()[1] for line in lines]
    assert kinds[0] == "epoch"
    # Exact sweeps only follow the epochs, never precede them.
    assert kinds == sorted(kinds)
    assert len(lines) >= 1
