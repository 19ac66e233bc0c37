"""Quiet phases: where no single move pays, a phase is skipped, and nothing else changes.

A sweep that moves nothing also reports how far the fairness coefficients can
grow before one move of one point starts to pay
(:func:`fairkm.cluster._kernels.quiet_factor`). A session then skips a phase
at a larger weight below that point (``Session._is_quiet``): what the skipped
sweep would have found, no move. Checked here against real sweeps at those
weights, and whole fits against fits that never skip.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from fairkm import FairKM
from fairkm.bounds import decided_threads
from fairkm.cluster import _engine, _kernels
from fairkm.datasets import make_sensitive_blobs

from ._problems import engine, problems
from .conftest import examples


def sweep_at(problem, terms, stats, labels, order, lam):
    """A sweep of copies at weight ``lam``: (moved, quiet factor, labels)."""
    labels, stats, quiet = labels.copy(), stats.copy(), np.empty(1)
    moved = _kernels.sweep(problem.X, terms.kernel(lam), order, _kernels.BLOCK, labels,
                           stats.kernel(), quiet)
    return moved, quiet[0], labels


def settled(problem, labels, order, lam):
    """Statistics and labels after sweeping at ``lam`` until a sweep moves nothing, or None."""
    terms, stats = engine(problem, labels)
    labels = labels.copy()
    for _ in range(50):
        if _kernels.sweep(problem.X, terms.kernel(lam), order, _kernels.BLOCK, labels,
                          stats.kernel(), np.empty(1)) == 0:
            return terms, stats, labels
    return None


@settings(max_examples=examples(200))
@given(case=problems(max_n=30), where=st.floats(0.0, 1.0))
def test_below_the_quiet_factor_a_sweep_moves_nothing(case, where):
    problem, labels, order = case
    lam = problem.fairness_weight
    if lam == 0:
        return
    done = settled(problem, labels, order, lam)
    if done is None:
        return
    terms, stats, labels = done
    moved, factor, _ = sweep_at(problem, terms, stats, labels, order, lam)
    assert moved == 0
    assert not np.isnan(factor)
    high = min(factor, 1e6) * (1.0 - _engine.QUIET_MARGIN)
    if high <= 1.0:
        return
    scale = 1.0 + where * (high - 1.0)
    moved, _, got = sweep_at(problem, terms, stats, labels, order, lam * scale)
    assert moved == 0
    assert_array_equal(got, labels)


def test_the_quiet_factor_is_where_a_move_starts_to_pay():
    # Two tight blobs, each of one group: the S-blind clustering is segregated, and a
    # weight large enough moves points across. Below the factor nothing moves, a little
    # above it something does.
    rng = np.random.default_rng(0)
    from ._reference import Problem

    X = np.concatenate([rng.normal(0, 1, (40, 2)), rng.normal(6, 1, (40, 2))])
    group = np.repeat([0, 1], 40)
    problem = Problem(X=X, categorical=[group], numeric=[], cat_weights=np.array([1.0]),
                      num_weights=np.zeros(0), fairness_weight=1.0, n_clusters=2,
                      sample_weight=None, cluster_exponent=2)
    labels, order = group.astype(np.int64), np.arange(80, dtype=np.int64)
    terms, stats, labels = settled(problem, labels, order, 1.0)
    _, factor, _ = sweep_at(problem, terms, stats, labels, order, 1.0)
    assert 1.0 < factor < np.inf
    assert sweep_at(problem, terms, stats, labels, order, factor * 0.999)[0] == 0
    assert sweep_at(problem, terms, stats, labels, order, factor * 1.01)[0] > 0


def fit_twice(monkeypatch, X, S, **params):
    """The same fit with quiet phases skipped and never skipped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skipping = FairKM(**params).fit(X, sensitive_features=S)
        with monkeypatch.context() as patch:
            patch.setattr(_engine.Session, "_is_quiet", lambda self: False)
            every = FairKM(**params).fit(X, sensitive_features=S)
    return skipping, every


@pytest.mark.parametrize("params", [
    dict(n_clusters=4, random_state=0),
    dict(n_clusters=3, random_state=1, relative_weight=4.0),
    dict(n_clusters=4, random_state=2, cluster_weighting="equal"),
    dict(n_clusters=4, random_state=3, max_cost=0.02),
])
def test_a_fit_that_skips_quiet_phases_ends_where_one_that_does_not(monkeypatch, params):
    # Separated blobs with attributes independent of them: the fair rungs move nothing.
    X, S, _ = make_sensitive_blobs(600, n_features=3, centers=4, n_values=(2, 3), numeric=1,
                                   cluster_std=0.3, random_state=5)
    skipping, every = fit_twice(monkeypatch, X, S, **params)
    assert_array_equal(skipping.labels_, every.labels_)
    assert skipping.objective_ == every.objective_
    assert skipping.fairness_weight_ == every.fairness_weight_
    assert skipping.n_iter_ < every.n_iter_


def test_an_adult_fit_ends_where_one_that_never_skips_does(monkeypatch, shared_data):
    from fairkm.datasets import fetch_adult

    adult = fetch_adult(data_home=shared_data, preprocess="paper")
    X = np.ascontiguousarray(adult.features, dtype=np.float64)[:3000]
    S = adult.sensitive.iloc[:3000]
    skipping, every = fit_twice(monkeypatch, X, S, n_clusters=5, random_state=0)
    assert_array_equal(skipping.labels_, every.labels_)
    assert skipping.objective_ == every.objective_


def test_a_skipped_mini_batch_phase_draws_the_order_its_epoch_would_have(monkeypatch):
    # A mini-batch phase at a quiet state would run one epoch that moves nothing, and that
    # epoch draws its visiting order from the fit's generator: the skip draws it too, so the
    # phases after it visit the rows in the same orders.
    from ._reference import Problem

    X, S, blob = make_sensitive_blobs(400, n_features=2, centers=3, n_values=(2, 3),
                                      cluster_std=0.3, random_state=7)
    problem = Problem(X=X, categorical=[S[c].to_numpy() for c in S], numeric=[],
                      cat_weights=np.ones(S.shape[1]), num_weights=np.zeros(0),
                      fairness_weight=10.0, n_clusters=3, sample_weight=None,
                      cluster_exponent=2)
    labels = np.asarray(blob, dtype=np.int64)

    def phases(skip):
        terms, _ = engine(problem, labels)
        rng = np.random.default_rng(0)
        session = _engine.Session(X, terms, 10.0, labels.copy(), n_clusters=3, verbose=False,
                                  algorithm="minibatch", batch_size=64, rng=rng)
        # As a fit runs its sessions: numba's threads decided (and so started) first. A
        # cached epoch kernel run in a process whose threads never started crashes.
        with monkeypatch.context() as patch, decided_threads():
            if not skip:
                patch.setattr(_engine.Session, "_is_quiet", lambda self: False)
            assert session.exact(100, 0.0)  # its last sweep moved nothing: quiet measured
            done = session.n_iter
            session.set_weights(10.0, problem.cat_weights, problem.num_weights)
            assert session.minimise(100, 1e-4)
        return session.labels, rng.bit_generator.state, session.n_iter - done

    skipped, state, passes = phases(skip=True)
    ran, ran_state, ran_passes = phases(skip=False)
    assert_array_equal(skipped, ran)
    assert state == ran_state
    assert (passes, ran_passes) == (0, 1)
