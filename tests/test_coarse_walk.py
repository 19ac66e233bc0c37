"""The coarse-to-fine walk: a relative weight's ladder climbed on a sample, then every row.

The sample's sizes are lowered here (``SAMPLE_ROWS`` and the rest, patched)
so that the path the library takes above 400,000 rows runs on a few thousand.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm import FairKM
from fairkm.cluster import _walk, _weighting
from fairkm.cluster._engine import Session, Stats
from fairkm.cluster._fairkm import _sample_rows
from fairkm.datasets import make_sensitive_blobs
from fairkm.utils._progress import listening

from ._problems import engine, problems

# ---------------------------------------------------------------------------------------------
# A plain NumPy recount of a sample's fairness term, priced against the whole data's mix.


def _full_data_targets(problem):
    """Per attribute, the whole data's shares of its values (weighted), and standardised z."""
    weights = problem.weights()
    shares = []
    for col in problem.categorical:
        values = sorted(set(col[weights > 0].tolist()))
        shares.append({v: weights[col == v].sum() / weights.sum() for v in values})
    zs = []
    for col in problem.numeric:
        mean = np.sum(weights * col) / weights.sum()
        scale = np.sqrt(np.sum(weights * (col - mean) ** 2) / weights.sum())
        zs.append((col - mean) / scale)
    return shares, zs


def _cluster_term(problem, shares, zs, rows, weights, n):
    """``(|C|/n)^e`` times a cluster's weighted deviation from the whole data's mix."""
    size = weights.sum()
    if size == 0:
        return 0.0
    dev = 0.0
    for w, col, share in zip(problem.cat_weights, problem.categorical, shares, strict=True):
        dev += w * sum((weights[col[rows] == v].sum() / size - p) ** 2
                       for v, p in share.items()) / len(share)
    for w, z in zip(problem.num_weights, zs, strict=True):
        dev += w * (np.sum(weights * z[rows]) / size) ** 2
    return (size / n) ** problem.cluster_exponent * dev


def sample_fairness(problem, rows, labels):
    """The fairness term of ``rows`` clustered by ``labels``, the rows' total weight being n."""
    shares, zs = _full_data_targets(problem)
    weights = problem.weights()[rows]
    return sum(
        _cluster_term(problem, shares, zs, rows[labels == c], weights[labels == c], weights.sum())
        for c in range(problem.n_clusters)
    )


def insertion_costs(problem, rows, labels, x, i):
    """Price of inserting whole-data row ``i`` (weight 1) into each cluster of the sample."""
    shares, zs = _full_data_targets(problem)
    weights = problem.weights()[rows]
    n = weights.sum()
    costs = np.empty(problem.n_clusters)
    for c in range(problem.n_clusters):
        members, w = rows[labels == c], weights[labels == c]
        size = w.sum()
        centre = (w[:, None] * x[members]).sum(axis=0) / size
        before = _cluster_term(problem, shares, zs, members, w, n)
        after = _cluster_term(problem, shares, zs, np.append(members, i), np.append(w, 1.0), n)
        costs[c] = (size / (size + 1) * float(np.sum((x[i] - centre) ** 2))
                    + problem.fairness_weight * (after - before))
    return costs


@st.composite
def sampled_problems(draw):
    """A small problem (unit-weight rows or not), its labels and a sample of its rows."""
    problem, labels, _ = draw(problems(max_n=14))
    weights = problem.weights()
    positive = np.flatnonzero(weights > 0)
    assume(positive.size >= problem.n_clusters)
    chosen = draw(st.lists(st.sampled_from(positive.tolist()), min_size=problem.n_clusters,
                           max_size=positive.size, unique=True))
    return problem, labels, np.array(sorted(chosen), dtype=np.int64)


@settings(max_examples=60, deadline=None)
@given(sampled_problems())
def test_a_samples_fairness_term_is_priced_against_the_whole_datas_mix(case):
    problem, labels, rows = case
    terms, _ = engine(problem, labels)
    sample = terms.of_rows(rows)
    stats = Stats(problem.n_clusters, problem.X.shape[1], sample)
    stats.recompute(np.ascontiguousarray(problem.X[rows]), sample, labels[rows])
    # The attribute weights as set_weights sets them (of_rows only rescales them).
    sample = sample.reweighted(problem.cat_weights, problem.num_weights)
    expected = sample_fairness(problem, rows, labels[rows])
    assert_allclose(stats.fairness(sample), expected, rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(sampled_problems())
def test_every_row_starts_in_the_cluster_cheapest_to_insert_it_into_the_samples(case):
    problem, labels, rows = case
    assume(np.unique(labels[rows]).size == problem.n_clusters)
    terms, _ = engine(problem, labels)
    whole = Session(problem.X, terms, 0.0, labels.copy(), n_clusters=problem.n_clusters,
                    verbose=0)
    sample = whole.sample(rows)
    sample.set_weights(problem.fairness_weight, problem.cat_weights, problem.num_weights)
    got = whole.cheapest_labels(sample)
    assert np.all(np.bincount(got, weights=problem.weights(), minlength=problem.n_clusters) > 0)
    costs = np.array([insertion_costs(problem, rows, labels[rows], problem.X, i)
                      for i in range(len(problem.X))])
    cheapest = np.argmin(costs, axis=1)
    # Where the cheapest clusters already hold every cluster, no row was moved to fill one;
    # rows whose two cheapest clusters tie within rounding may go either way.
    assume(np.all(np.bincount(cheapest, weights=problem.weights(),
                              minlength=problem.n_clusters) > 0))
    ordered = np.sort(costs, axis=1)
    clear = (ordered[:, 1] - ordered[:, 0] if problem.n_clusters > 1
             else np.ones(len(costs))) > 1e-9 * (1.0 + np.abs(costs).max())
    assert_array_equal(got[clear], cheapest[clear])


def test_the_sample_is_drawn_from_rows_of_positive_weight_in_data_order():
    weights = np.tile([1.0, 0.0, 2.5, 0.0], 50)
    rows = _sample_rows(weights, 200, 60, seed=3)
    assert rows.size == 60 and np.unique(rows).size == 60
    assert np.all(np.diff(rows) > 0)
    assert np.all(weights[rows] > 0)
    assert_array_equal(rows, _sample_rows(weights, 200, 60, seed=3))
    assert not np.array_equal(rows, _sample_rows(weights, 200, 60, seed=4))
    unit = _sample_rows(None, 200, 200, seed=0)
    assert_array_equal(unit, np.arange(200))


def test_the_sample_size_rule():
    rows, above = _walk.SAMPLE_ROWS, _walk.COARSE_ABOVE
    assert _walk.coarse_sample_size(above * rows - 1, 10) == 0
    assert _walk.coarse_sample_size(above * rows, 10) == rows
    too_many = rows // _walk.SAMPLE_PER_CLUSTER + 1
    assert _walk.coarse_sample_size(10 * above * rows, too_many) == 0


# ---------------------------------------------------------------------------------------------
# Whole fits on the coarse path, its sizes lowered.


@pytest.fixture
def coarse_sizes(monkeypatch):
    """Walk on a 4,000-row sample from 16,000 rows (clusters of 200 sample rows or more)."""
    monkeypatch.setattr(_walk, "SAMPLE_ROWS", 4000)
    monkeypatch.setattr(_walk, "COARSE_ABOVE", 4)
    monkeypatch.setattr(_walk, "SAMPLE_PER_CLUSTER", 200)
    return monkeypatch


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(16000, n_features=3, centers=6, n_values=(2, 4),
                                           numeric=1, cluster_std=2.5, random_state=0)
    return X, sensitive


def fit(X, sensitive, sample_weight=None, **params):
    kinds = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with listening(lambda progress: kinds.append(progress.kind)):
            model = FairKM(6, random_state=0, **params).fit(
                X, sensitive_features=sensitive, sample_weight=sample_weight)
    return model, kinds


def mix_distances(labels, sensitive, k=6):
    """Each categorical attribute's (mean, worst) total-variation distance over the clusters."""
    out = []
    for name in ("s0", "s1"):
        values, codes = np.unique(sensitive[name].to_numpy(), return_inverse=True)
        table = np.zeros((k, values.size))
        np.add.at(table, (labels, codes), 1.0)
        mix = table.sum(axis=0) / table.sum()
        distance = 0.5 * np.abs(table / table.sum(axis=1, keepdims=True) - mix).sum(axis=1)
        out.append((distance.mean(), distance.max()))
    return np.array(out)


def test_a_relative_weight_on_many_rows_walks_a_sample_first(coarse_sizes, blobs):
    X, sensitive = blobs
    model, kinds = fit(X, sensitive, relative_weight=1.0, n_init=1)
    assert "sample sweep" in kinds
    # n_iter_ and objective_history_ count the passes over every row, not the sample's.
    assert model.n_iter_ == kinds.count("sweep")
    assert len(model.objective_history_) == model.n_iter_ + 1
    assert model.relative_weight_ == 1.0
    again, _ = fit(X, sensitive, relative_weight=1.0, n_init=1)
    assert_array_equal(again.labels_, model.labels_)
    # The mini-batch engine's epochs take the rows from the sample's clustering as sweeps do.
    minibatch, kinds = fit(X, sensitive, relative_weight=1.0, n_init=1, algorithm="minibatch")
    assert "sample sweep" in kinds and "epoch" in kinds
    assert minibatch.n_iter_ == kinds.count("epoch") + kinds.count("sweep")
    # Fewer rows, an absolute weight: every row walks (a budget: see below).
    for rows, params in ((slice(0, 15999), {"relative_weight": 1.0}),
                         (slice(None), {"fairness_weight": 1e3})):
        _, kinds = fit(X[rows], sensitive.iloc[rows], **params)
        assert "sample sweep" not in kinds, params


@pytest.mark.parametrize("relative_weight", [0.5, 1.0])
def test_the_coarse_walk_keeps_the_frontier_of_the_walk_on_every_row(coarse_sizes, blobs,
                                                                      relative_weight):
    """The product's rule for a faster walk: cost at most 0.5% and each attribute's mean and
    worst distance from the mix at most 1% above the walk on every row, at the same weight."""
    X, sensitive = blobs
    coarse, kinds = fit(X, sensitive, relative_weight=relative_weight)
    assert "sample sweep" in kinds
    whole, kinds = fit(X, sensitive, relative_weight=relative_weight, coarse_walk=False)
    assert "sample sweep" not in kinds
    assert coarse.inertia_ <= 1.005 * whole.inertia_
    assert np.all(mix_distances(coarse.labels_, sensitive)
                  <= 1.01 * mix_distances(whole.labels_, sensitive))
    # Not the same clustering: the test compares two walks, not one twice.
    assert not np.array_equal(coarse.labels_, whole.labels_)


@pytest.mark.parametrize("relative_weight", [1.01, 4.0])
def test_above_the_default_weight_every_row_walks_as_before(coarse_sizes, blobs,
                                                            relative_weight):
    X, sensitive = blobs
    model, kinds = fit(X, sensitive, relative_weight=relative_weight, n_init=1)
    assert "sample sweep" not in kinds
    whole, _ = fit(X, sensitive, relative_weight=relative_weight, n_init=1, coarse_walk=False)
    assert_array_equal(model.labels_, whole.labels_)
    assert model.n_iter_ == whole.n_iter_


def test_scaling_the_sample_weights_changes_no_label_on_the_coarse_path(coarse_sizes, blobs):
    X, sensitive = blobs
    # Rows of weight 0 would take the rows below the sample's threshold (they are not rows
    # of the fit); _sample_rows' test shows none is drawn.
    weights = np.random.default_rng(0).choice([0.5, 1.0, 2.0, 3.0], size=len(X))
    base, kinds = fit(X, sensitive, weights, relative_weight=1.0)
    assert "sample sweep" in kinds
    for scale in (1e-6, 1e6):
        scaled, _ = fit(X, sensitive, weights * scale, relative_weight=1.0)
        assert_array_equal(scaled.labels_, base.labels_)


def test_a_budget_on_many_rows_does_not_claim_a_relative_weight_refits_it(coarse_sizes,
                                                                          blobs):
    X, sensitive = blobs
    model, kinds = fit(X, sensitive, max_cost=0.05, n_init=1)
    # The S-blind phase starts on the sample; the budget then walks every row.
    first = kinds.index("sweep")
    assert "sample sweep" in kinds[:first] and "sample sweep" not in kinds[first:]
    assert len(kinds) - first == model.n_iter_
    assert model.cost_increase_ <= 0.05
    # A fit at relative_weight_ would walk a sample first, so it would not retrace the budget.
    assert model.refit_params_ == {}
    small, _ = fit(X, sensitive, max_cost=0.05, n_init=1, coarse_walk=False)
    assert small.refit_params_ == {"max_cost": None, "relative_weight": small.relative_weight_}


class _RowsAt(_walk.Walker):
    """A walker whose rows cost ``cost[step]`` over S-blind at each step: it records its moves."""

    def __init__(self, cost):
        self.cost, self.moves, self.step = cost, [], 0.0

    def point(self, step):
        return _walk.Point(step, ("labels at", step), self.cost[step], 0.0)

    def go(self, step, *, labels=None, minimise=True, passes=None):
        self.moves.append(("phase", step))
        self.step = step

    def settle(self, point):
        self.moves.append(("back", point.step))
        self.step = point.step

    def walk(self, keep):
        """The rows' own ladder: here, the highest step whose rows' cost keeps the rule."""
        self.moves.append(("walk",))
        kept = max(step for step in self.cost if keep(self.point(step)))
        return _walk.Walk(self.point(0.0), self.point(kept))


def _sample_walk(costs, low, high):
    """A sample's walk: its trials at ``costs`` (step -> cost), kept up to ``low``."""
    trials = [(_walk.Point(step, None, cost, 0.0), step <= low) for step, cost in costs.items()]
    points = {point.step: point for point, _ in trials}
    return _walk.Walk(points[1.0], points[low], None if high is None else points[high], trials)


@pytest.mark.parametrize("sample_high, rows_cost, moves, final", [
    # The rows keep the sample's step (4 x 1.045 <= 4.5), and the sample's price of the step
    # refused above, less its error at the kept step, is more than EDGE (0.5%) above the rule
    # (4.36 x (1.06 - 0.005) / 1.005 > 4.5): nothing more.
    (0.06, {4.0: 0.045}, [], 4.0),
    # The rows break the rule at the kept step (4 x 1.13 > 4.5): they try the step halfway to
    # the one kept below and keep it by their own cost (2.83 x 1.06 <= 4.5) ...
    (0.06, {4.0: 0.13, math.sqrt(8.0): 0.06}, [("phase", math.sqrt(8.0))], math.sqrt(8.0)),
    # ... or break it there too (2.83 x 1.6 > 4.5): down to the step kept below, kept there ...
    (0.06, {4.0: 0.13, math.sqrt(8.0): 0.6}, [("phase", math.sqrt(8.0)), ("phase", 2.0)], 2.0),
    # ... or broken there too (2 x 2.3 > 4.5): the rows walk the ladder themselves.
    (0.06, {2.0: 1.3, 4.0: 0.13, math.sqrt(8.0): 0.6},
     [("phase", math.sqrt(8.0)), ("phase", 2.0), ("walk",), ("back", 1.0)], 1.0),
    # The sample's cost at 4 was 0.025 above the rows': 0.025 less at the step above is within
    # EDGE of the rule (4.36 x 1.035 / 1.005 <= 4.5), so the rows try it, and keep it by their
    # own cost (4.36 x 1.03 <= 4.5) ...
    (0.06, {4.0: 0.015, 4.36: 0.03}, [("phase", 4.36)], 4.36),
    # ... or refuse it by their own cost (4.36 x 1.04 > 4.5): back to the kept clustering.
    (0.06, {4.0: 0.015, 4.36: 0.04}, [("phase", 4.36), ("back", 4.0)], 4.0),
    # The sample refused the step above by 0.09% (4.36 x 1.033 = 4.504), its cost exact at 4:
    # within EDGE, the rows try it and keep it (4.36 x 1.032 <= 4.5).
    (0.033, {4.0: 0.04, 4.36: 0.032}, [("phase", 4.36)], 4.36),
])
def test_the_rows_take_the_samples_last_verdicts_again_at_the_rules_edge(sample_high, rows_cost,
                                                                        moves, final):
    alpha = 4.5
    # The sample kept 4 (4 x 1.04 = 4.16) and refused 4.36.
    walk = _sample_walk({1.0: 0.01, 2.0: 0.02, 4.0: 0.04, 4.36: sample_high}, low=4.0,
                        high=4.36)
    assert walk.high.relative_weight > alpha
    rows = _RowsAt({0.0: 0.0, 1.0: 0.01, 2.0: 0.02, **rows_cost})
    rows.step = 4.0  # refine left the rows minimised at the sample's kept step
    rows._verdict_on_the_rows(walk, walk.trials[1][0], lambda p: p.relative_weight <= alpha)
    assert rows.moves == moves
    assert rows.step == final
    assert rows.point(final).relative_weight <= alpha  # by the rows' own cost


def test_the_rows_take_no_second_verdict_above_the_ladders_top():
    walk = _sample_walk({1.0: 0.01, 2.0: 0.02}, low=2.0, high=None)
    rows = _RowsAt({1.0: 0.01, 2.0: 0.02})
    rows._verdict_on_the_rows(walk, walk.trials[0][0], lambda p: p.relative_weight <= 4.0)
    assert rows.moves == []


def test_rows_that_break_the_rule_at_the_samples_first_kept_step_walk_the_ladder():
    walk = _sample_walk({1.0: 0.01, 2.0: 0.9}, low=1.0, high=2.0)
    rows = _RowsAt({0.0: 0.0, 1.0: 0.3, 2.0: 0.9})
    rows.step = 1.0
    rows._verdict_on_the_rows(walk, walk.low, lambda p: p.relative_weight <= 1.2)
    assert rows.moves == [("walk",), ("back", 0.0)]


@pytest.mark.parametrize("relative_weight", [0.5, 1.0, 8.0])
def test_the_coarse_walk_ends_where_the_rows_own_cost_keeps_the_rule(coarse_sizes, blobs,
                                                                     relative_weight):
    X, sensitive = blobs
    # The verdicts are the same code at every weight the coarse walk serves; weight 8 on
    # these blobs is where one reverses the sample's, so the walk serves it here.
    coarse_sizes.setattr(_weighting, "COARSE_UP_TO", 8.0)
    ends = []
    verdict = _walk.Walker._verdict_on_the_rows

    def spy(self, walk, start, keep):
        verdict(self, walk, start, keep)
        ends.append((self.step, self.session.inertia / self.reference.inertia - 1.0))

    coarse_sizes.setattr(_walk.Walker, "_verdict_on_the_rows", spy)
    model, kinds = fit(X, sensitive, relative_weight=relative_weight, n_init=1)
    assert "sample sweep" in kinds and ends
    for step, cost in ends:
        assert step * (1.0 + cost) <= relative_weight
    # Where the last walk ended is the fit's clustering (no repair after it here).
    assert model.cost_increase_ == pytest.approx(ends[-1][1], rel=1e-9, abs=1e-12)


def test_a_sample_missing_a_cluster_walks_every_row(coarse_sizes, blobs):
    """Two far rows make a cluster of their own, which the sample is unlikely to hold."""
    X, sensitive = blobs
    X = X.copy()
    X[:2] += 1e3
    model, kinds = fit(X, sensitive, relative_weight=1.0)
    assert np.bincount(model.labels_).min() == 2
    assert "sample sweep" not in kinds
    whole, _ = fit(X, sensitive, relative_weight=1.0, coarse_walk=False)
    assert_array_equal(model.labels_, whole.labels_)


def test_a_sample_the_fairness_term_cannot_move_leaves_the_walk_to_every_row(coarse_sizes):
    """Separated blobs and attributes drawn at random: no phase of the sample moves a row."""
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=20.0, size=(6, 3))
    X = centres[rng.integers(0, 6, 16000)] + rng.normal(size=(16000, 3))
    sensitive = pd.DataFrame({"s": rng.integers(0, 2, 16000)})
    model, kinds = fit(X, sensitive, relative_weight=1.0, n_init=1)
    assert "sample sweep" in kinds
    whole, _ = fit(X, sensitive, relative_weight=1.0, n_init=1, coarse_walk=False)
    assert_array_equal(model.labels_, whole.labels_)
    # The same passes over the rows: no sweep was spent starting from the sample's clustering.
    assert model.n_iter_ == whole.n_iter_


def test_verbose_names_the_samples_sweeps(coarse_sizes, blobs, capsys):
    X, sensitive = blobs
    fit(X, sensitive, relative_weight=1.0, verbose=1)
    out = capsys.readouterr().out
    assert "FairKM sample sweep 1:" in out
    assert "FairKM sweep 1:" in out


def test_the_s_blind_phase_started_on_the_sample_ends_in_a_k_means_local_optimum(coarse_sizes,
                                                                                   blobs):
    X, sensitive = blobs
    model, kinds = fit(X, sensitive, relative_weight=0.0, tol=0.0, n_init=1)
    first = kinds.index("sweep")
    assert first > 0 and set(kinds[:first]) == {"sample sweep"}
    assert "sample sweep" not in kinds[first:]
    # The history starts at the rows' labels from the sample's clustering, and never rises.
    history = model.objective_history_
    assert len(history) == model.n_iter_ + 1
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    # No single row's move lowers the K-Means cost (Hartigan's test, recounted with NumPy).
    labels = model.labels_
    sizes = np.bincount(labels, minlength=6).astype(float)
    centres = np.stack([X[labels == c].mean(axis=0) for c in range(6)])
    distances = ((X[:, None, :] - centres[None]) ** 2).sum(axis=2)
    own = distances[np.arange(len(X)), labels]
    leave = sizes[labels] / (sizes[labels] - 1.0) * own
    join = sizes / (sizes + 1.0) * distances
    join[np.arange(len(X)), labels] = np.inf
    assert np.all(join.min(axis=1) >= leave * (1.0 - 1e-9))


def test_coarse_walk_false_walks_every_row_as_before(coarse_sizes, blobs):
    """The option gives the clustering of the walk on every row: the sample's rule switched off."""
    X, sensitive = blobs
    off, kinds = fit(X, sensitive, relative_weight=1.0, coarse_walk=False)
    assert "sample sweep" not in kinds
    coarse_sizes.setattr(_walk, "COARSE_ABOVE", 10**12)
    below, _ = fit(X, sensitive, relative_weight=1.0)
    assert_array_equal(off.labels_, below.labels_)
    assert off.n_iter_ == below.n_iter_


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_coarse_walk_must_be_a_bool(blobs, value):
    X, sensitive = blobs
    with pytest.raises((ValueError, TypeError), match="coarse_walk"):
        FairKM(2, coarse_walk=value).fit(X[:50], sensitive_features=sensitive.iloc[:50])
