"""fairkm.bounds' solver pieces against plain references: type counts, prices, the certificate.

* the relaxation solved by prices (rows near a tie alone, the rest in blocks)
  equals the plain programme on every row (scipy's HiGHS, written here apart);
* its lower bound never exceeds that optimum, nor the cost of any
  assignment meeting the bounds;
* counting and type counts decide feasibility as enumeration does, and the
  least excess in rows is the enumerated one; whether k allowed cluster sizes
  add up to n is what a plain dynamic programme says;
* moving rows to given type counts is the cheapest assignment with them;
* the compiled passes equal NumPy.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from fairkm.bounds import _relax, _round, fair_assignment
from fairkm.bounds._infeasible import _sums_to, counting_reason, least_excess_rows, type_counts
from fairkm.bounds._kernels import group_sums, priced_pass
from fairkm.bounds._model import Prices, make_problem, solve_lp, sq_distances
from fairkm.bounds._relax import relax
from fairkm.bounds._round import move_to_counts
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import BoundNotMetWarning, InfeasibleBoundError
from fairkm.metrics._bound_spec import resolve_bounds

from ._bounds_reference import plain_bands, plain_lp
from .conftest import examples

# ----------------------------------------------------------------------------- references


def excess_rows(labels, S, delta, kind, k):
    """Largest count of a value outside its band, in rows, over the clusters."""
    worst = 0.0
    for codes, lower, upper in plain_bands(S, delta, kind):
        for c in range(k):
            size = np.sum(labels == c)
            count = np.bincount(codes[labels == c], minlength=lower.shape[0])
            worst = max(worst, float(np.max(count - upper * size)),
                        float(np.max(lower * size - count)))
    return worst


def enumerate_all(n, k):
    for labels in itertools.product(range(k), repeat=n):
        labels = np.array(labels)
        if np.unique(labels).shape[0] == k:
            yield labels


@st.composite
def count_problems(draw):
    n = draw(st.integers(3, 7))
    k = draw(st.integers(2, 3))
    n_attr = draw(st.integers(1, 2))
    S = np.array([[draw(st.integers(0, 2 - a)) for a in range(n_attr)] for _ in range(n)])
    kind = draw(st.sampled_from(["additive", "multiplicative"]))
    delta = draw(st.sampled_from([0.0, 0.05, 0.15, 0.3]))
    return S, k, kind, delta


def _problem(S, k, kind, delta, X=None):
    X = np.zeros((S.shape[0], 1)) if X is None else X
    bounds = resolve_bounds(S, S.shape[0], max_deviation=delta, deviation_kind=kind)
    return make_problem(X, bounds, k), bounds


# ----------------------------------------------------------------------------- counts


@settings(max_examples=examples(80), suppress_health_check=[HealthCheck.too_slow])
@given(problem=count_problems())
def test_counting_and_type_counts_decide_as_enumeration(problem):
    S, k, kind, delta = problem
    n = S.shape[0]
    if kind == "multiplicative" and delta == 0.0:
        delta = 0.05
    prob, _ = _problem(S, k, kind, delta)
    live = np.arange(n)
    excesses = [excess_rows(labels, S, delta, kind, k) for labels in enumerate_all(n, k)]
    feasible = min(excesses) <= 1e-9 * n
    if counting_reason(prob, live) is not None:
        assert not feasible
    counts = type_counts(prob, live)
    assert counts is not None
    assert (counts is not False) == feasible
    if feasible:
        assert_array_equal(counts.sum(axis=1), np.bincount(prob.types, minlength=prob.n_types))
        # Near given counts: feasible counts that move the fewest rows from them.
        start = np.arange(n) % k
        near = np.zeros((prob.n_types, k), dtype=np.int64)
        np.add.at(near, (prob.types, start), 1)
        closest = type_counts(prob, live, near=near)
        assert_array_equal(closest.sum(axis=1), counts.sum(axis=1))
        least_moved = min(
            np.abs(np.bincount(prob.types * k + labels, minlength=prob.n_types * k)
                   - near.reshape(-1)).sum()
            for labels in map(np.array, enumerate_all(n, k))
            if excess_rows(labels, S, delta, kind, k) <= 1e-9 * n)
        assert np.abs(closest - near).sum() == least_moved
    # The least excess any assignment leaves, in rows.
    least, proven = least_excess_rows(prob, live)
    assert proven
    assert least == pytest.approx(max(min(excesses), 0.0), abs=1e-6)


def test_a_tight_bound_on_600_rows_is_proved_by_counting():
    X, S, _ = make_sensitive_blobs(600, n_values=(2, 3), random_state=0)
    for k in (2, 4):
        with pytest.raises(InfeasibleBoundError, match="holds at least 600 rows") as info:
            fair_assignment(X, X[:k], S, max_deviation=1e-4)
        assert info.value.excess_rows > 0
        assert fair_assignment(X, X[:k], S, max_deviation=info.value.tightest).satisfied


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 7), k=st.integers(2, 3))
def test_moving_rows_to_type_counts_is_the_cheapest_way(seed, n, k):
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 2, size=(n, 1))
    X = rng.integers(0, 8, size=(n, 2)) / 2.0
    prob, _ = _problem(S, k, "additive", 1.0, X)
    dist = sq_distances(X, X[:k] + 0.01 * np.arange(k)[:, None])
    start = rng.integers(0, k, n)
    target_labels = rng.integers(0, k, n)
    target = np.zeros((prob.n_types, k), dtype=np.int64)
    np.add.at(target, (prob.types, target_labels), 1)
    moved = move_to_counts(prob, dist, np.arange(n), start, target)
    got = np.zeros_like(target)
    np.add.at(got, (prob.types, moved), 1)
    assert_array_equal(got, target)
    best = min(dist[np.arange(n), labels].sum()
               for labels in itertools.product(range(k), repeat=n)
               if np.array_equal(np.bincount(prob.types * k + np.array(labels),
                                             minlength=prob.n_types * k),
                                 target.reshape(-1)))
    assert dist[np.arange(n), moved].sum() == pytest.approx(best)


@settings(max_examples=examples(30), suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 60), k=st.integers(2, 5))
def test_moving_many_rows_as_a_transportation_problem_costs_what_the_assignment_does(
        seed, n, k):
    """A large type's movable rows are placed by a programme over rows x clusters, not places."""
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 2, size=(n, 1))
    X = rng.normal(size=(n, 2))
    prob, _ = _problem(S, k, "additive", 1.0, X)
    dist = sq_distances(X, rng.normal(size=(k, 2)))
    start = rng.integers(0, k, n)
    target = np.zeros((prob.n_types, k), dtype=np.int64)
    np.add.at(target, (prob.types, rng.integers(0, k, n)), 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_round, "_WHOLE_TYPE", 0)  # every type through its movable rows
        by_places = move_to_counts(prob, dist, np.arange(n), start, target)
        patch.setattr(_round, "_SLOTS_AT_ONCE", 0)
        by_programme = move_to_counts(prob, dist, np.arange(n), start, target)
    for labels in (by_places, by_programme):
        got = np.zeros_like(target)
        np.add.at(got, (prob.types, labels), 1)
        assert_array_equal(got, target)
    rows = np.arange(n)
    assert dist[rows, by_programme].sum() == pytest.approx(dist[rows, by_places].sum(),
                                                           rel=1e-9, abs=1e-9)


# ----------------------------------------------------------------------------- prices


@st.composite
def priced_problems(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(40, 120))
    k = draw(st.integers(2, 4))
    X = rng.normal(size=(n, 2)) + 3 * rng.integers(0, k, size=(n, 1))
    S = np.stack([(X[:, 0] // 3 + rng.integers(0, 2, n)).astype(int) % 2,
                  rng.integers(0, 3, n)], 1)
    kind = draw(st.sampled_from(["additive", "multiplicative"]))
    delta = draw(st.sampled_from([0.05, 0.2]))
    return X, S, k, kind, delta


@pytest.mark.slow
@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(problem=priced_problems(), free=st.integers(1, 30))
def test_relaxation_by_prices_equals_the_programme_on_every_row(problem, free):
    X, S, k, kind, delta = problem
    n = X.shape[0]
    centers = X[:k] + 1e-3 * np.arange(k)[:, None]
    prob, _ = _problem(S, k, kind, delta, X)
    dist = sq_distances(X, centers)
    live = np.arange(n)
    optimum = plain_lp(X, centers, S, delta, kind)
    scale = max(optimum, 1.0)
    # Every row at once, then by prices with a programme of a few rows.
    whole = relax(prob, dist, live, n * k)
    assert whole.exact and whole.certified
    assert_allclose(whole.value, optimum, rtol=1e-6, atol=1e-6 * scale)
    # Below every row at once, with room for a few free rows and a block per type and
    # cluster pair.
    budget = min(k * free + prob.n_types * k * k, n * k - 1)
    priced = relax(prob, dist, live, budget)
    assert not priced.exact
    # The lower bound is one, whatever the outcome; certified, it is the optimum.
    assert priced.bound <= optimum + 1e-6 * scale
    if priced.rounds:
        assert priced.value >= optimum - 1e-6 * scale
    else:  # the blocks did not fit: no programme, the relaxation's cost unknown
        assert np.isnan(priced.value) and not priced.certified
    if priced.certified:
        assert_allclose(priced.bound, optimum, rtol=1e-5, atol=1e-6 * scale)


@settings(max_examples=examples(40))
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 5))
def test_coarser_blocks_are_unions_of_finer_ones(seed, k):
    """Each level of blocks (fewer margin bins, then one per type and best cluster) merges
    whole blocks of the level before; every block holds one type, best and second cluster."""
    rng = np.random.default_rng(seed)
    n = 300
    S = np.stack([rng.integers(0, 2, n), rng.integers(0, 3, n)], 1)
    prob, _ = _problem(S, k, "additive", 0.1)
    rows = rng.permutation(n)[:200]
    best = rng.integers(0, k, 200)
    second = (best + rng.integers(1, k, 200)) % k
    regret = rng.exponential(size=200) * 10.0 ** rng.integers(-3, 3, 200)
    finer = None
    for bins in _relax._BINS:
        group = _relax._groups(prob, rows, best, second, regret, 0.01, bins)
        assert_array_equal(np.unique(group), np.arange(group.max() + 1))
        key = np.stack([prob.types[rows], best] + ([second] if bins else []), 1)
        assert all(np.unique(key[group == g], axis=0).shape[0] == 1
                   for g in range(group.max() + 1))
        if finer is not None:
            assert all(np.unique(group[finer == g]).shape[0] == 1
                       for g in range(finer.max() + 1))
            assert group.max() <= finer.max()
        finer = group


# Found by hypothesis: with a budget of 104 pairs the first coarse programme was infeasible
# (every row of a value with a lower band was free and kept from a cluster), and relax raised
# instead of pricing by the Lagrangian.
_INFEASIBLE_X = np.array([
    [0.85116335, 0.21366526], [4.60419717, 5.59064739], [6.24570587, 4.91582574],
    [2.01039849, -1.0072306], [1.59100503, 3.7502997], [-0.0505973, 0.35742252],
    [9.82976335, 10.25330741], [3.97890913, 4.92698758], [8.94873373, 8.78275452],
    [8.76458958, 8.39496012], [9.29006296, 9.57145313], [-0.8245101, 0.21063376],
    [2.48699648, 2.82156166], [6.99865222, 5.85155405], [2.49686942, 2.99246844],
    [7.6866389, 7.90396543], [5.48227795, 6.98895443], [0.10591057, 0.34079403],
    [0.05369374, -0.87621602], [7.86479418, 7.50198696], [-0.11432676, 1.29989414],
    [10.54987977, 9.15947186], [9.97667019, 8.86283117], [7.69247207, 9.87319658],
    [5.67905476, 6.29754783], [-1.08981425, -0.59096413], [1.38387236, 0.68368097],
    [3.11555937, 2.76801091], [2.91850024, 2.89683247], [0.41095044, 0.29027051],
    [6.07793558, 6.21104213], [5.87410743, 5.36708914], [-0.07848113, -0.35180623],
    [5.73704819, 4.75121841], [6.79725904, 6.83950612], [7.6733414, 8.35908152],
    [6.91851708, 7.17659698], [4.14914789, 2.44732006], [10.16174004, 8.10222999],
    [8.93014666, 8.33317543],
])
_INFEASIBLE_S = np.array([
    [1, 0], [1, 2], [1, 1], [1, 2], [1, 0], [1, 2], [1, 0], [1, 1], [1, 1], [1, 2],
    [0, 0], [0, 0], [0, 0], [0, 0], [1, 2], [1, 2], [1, 2], [1, 0], [1, 2], [0, 2],
    [0, 2], [0, 0], [0, 2], [1, 0], [0, 1], [1, 0], [1, 0], [1, 2], [0, 0], [0, 0],
    [1, 1], [1, 1], [1, 0], [1, 1], [1, 1], [0, 2], [1, 1], [0, 2], [1, 2], [1, 1],
])


@pytest.mark.slow
@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(problem=priced_problems(), budget=st.integers(1, 200))
@example(problem=(_INFEASIBLE_X, _INFEASIBLE_S, 4, "additive", 0.05), budget=104)
def test_no_programme_by_prices_exceeds_its_budget(problem, budget):
    """``max_pairs`` caps each programme: its pairs of free rows and of blocks together.

    When no programme fits (more blocks than the budget), the prices come from the
    Lagrangian alone: the bound still holds, each row goes to its cheapest priced cluster
    and the relaxation's cost is unknown (nan).
    """
    X, S, k, kind, delta = problem
    n = X.shape[0]
    budget = min(budget, n * k - 1)
    centers = X[:k] + 1e-3 * np.arange(k)[:, None]
    prob, _ = _problem(S, k, kind, delta, X)
    dist = sq_distances(X, centers)
    live = np.arange(n)
    sizes = []

    solved = []

    def counting(problem, rows, pos, *args, **kwargs):
        sizes.append(pos.shape[0])
        outcome = solve_lp(problem, rows, pos, *args, **kwargs)
        solved.append(outcome.x is not None)
        return outcome

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_relax, "solve_lp", counting)
        priced = relax(prob, dist, live, budget)
    # rounds: the programmes solved (one too restricted to meet the bands is not)
    assert sum(solved) == priced.rounds
    assert all(size <= budget for size in sizes)
    optimum = plain_lp(X, centers, S, delta, kind)
    assert priced.bound <= optimum + 1e-6 * max(optimum, 1.0)
    if not priced.rounds:
        assert np.isnan(priced.value) and not priced.certified
        cheapest = np.argmin(dist + priced.prices.of(prob, live), axis=1)
        assert_array_equal(priced.labels, cheapest)


# Found by hypothesis: with a budget of 30 pairs no programme runs, and each row's cheapest
# priced cluster met every band while leaving two of the four clusters empty; the shortcut for
# an integral relaxation took those labels (the lower bound, which keeps every cluster, was
# then above their cost). S: each row's two codes.
_EMPTYING_X = np.array([
    [8.61031007, 8.69518416], [0.13509315, -0.95961183], [9.27065101, 11.93060332],
    [-0.92473724, -2.36497655], [2.05274277, 1.43538183], [3.84841489, 5.28216314],
    [9.64734463, 8.59396231], [3.40843525, 3.35794594], [7.24795581, 9.38884964],
    [7.88338707, 8.21420351], [5.01731182, 5.49648172], [-0.02367526, 1.87943038],
    [6.35420984, 6.30226305], [8.74000733, 9.74199494], [2.02893288, 3.16291198],
    [7.7186217, 7.43952066], [7.95955635, 8.37697364], [7.9071423, 10.03549942],
    [4.42640922, 5.3037456], [4.81869449, 5.49992539], [5.37760717, 6.26681966], [4.0927711,
    4.12269093], [0.29584605, 0.8337404], [4.69199472, 6.89375741], [9.30321358,
    8.83324603], [7.93986334, 9.15796407], [2.68143842, 3.01000874], [3.73098273,
    3.42114974], [2.64927881, 3.35144651], [5.82052264, 6.04823691], [4.60238698,
    2.16461871], [1.00170928, -0.83416188], [9.23796544, 8.64565151], [6.66761346,
    5.43911522], [1.60645301, 3.51481841], [3.29973948, 3.64699997], [6.92700343,
    3.25973226], [0.58306755, -0.44905338], [6.1941547, 6.57452465], [-0.18877655,
    -0.39830849]])
_EMPTYING_S = np.array([int(c) for c in ("0112121011101111110102020202110010020001"
                                          "0102100011121210111101010112111101011211")])
_EMPTYING_S = _EMPTYING_S.reshape(-1, 2)


@pytest.mark.slow
@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(problem=priced_problems())
@example(problem=(_EMPTYING_X, _EMPTYING_S, 4, "additive", 0.05))
def test_the_certificate_bounds_the_cost_from_below(problem):
    X, S, k, kind, delta = problem
    centers = X[:k] + 1e-3 * np.arange(k)[:, None]
    for max_lp_variables in (X.shape[0] * k, 30):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BoundNotMetWarning)
                result = fair_assignment(X, centers, S, max_deviation=delta,
                                         deviation_kind=kind,
                                         max_lp_variables=max_lp_variables)
        except InfeasibleBoundError:
            return
        optimum = plain_lp(X, centers, S, delta, kind)
        tol = 1e-6 * max(optimum, 1.0)
        assert result.lower_bound <= optimum + tol
        assert result.lower_bound <= result.assignment_cost + tol
        d = ((X - centers[result.labels]) ** 2).sum()
        assert_allclose(result.assignment_cost, d, rtol=1e-10)
        assert result.gap == pytest.approx(max(0.0, d / result.lower_bound - 1.0))
        nearest = ((X[:, None] - centers[None]) ** 2).sum(2).min(axis=1).sum()
        assert_allclose(result.nearest_cost, nearest, rtol=1e-10)
        if result.satisfied:
            assert excess_rows(result.labels, S, delta, kind, k) <= 1e-9 * X.shape[0]


@settings(max_examples=examples(30))
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 5), n_num=st.integers(0, 2))
def test_compiled_passes_equal_numpy(seed, k, n_num):
    rng = np.random.default_rng(seed)
    n, n_types = 50, 4
    dist = rng.random((n, k))
    types = rng.integers(0, n_types, n)
    base = rng.normal(size=(n_types, k))
    z = rng.normal(size=(n_num, n))
    slope = rng.normal(size=(n_num, k))
    live = np.sort(rng.choice(n, 30, replace=False))
    labels = rng.integers(-1, k, 30)
    out = [np.empty(30, np.int64), np.empty(30, np.int64), np.empty(30), np.empty(30),
           np.empty(30)]
    priced_pass(dist, live, types, base, z, slope, labels, *out)
    priced = dist[live] + base[types[live]] + (z[:, live].T @ slope if n_num else 0.0)
    order = np.argsort(priced, axis=1, kind="stable")
    assert_array_equal(out[0], order[:, 0])
    assert_allclose(out[3], priced.min(axis=1))
    if k > 1:
        assert_array_equal(out[1], order[:, 1])
        assert_allclose(out[2], np.sort(priced, axis=1)[:, 1] - priced.min(axis=1))
    here = np.where(labels >= 0, priced[np.arange(30), np.maximum(labels, 0)], np.nan)
    assert_allclose(out[4], here)
    group = rng.integers(0, 6, 30)
    w = rng.random(n)
    g_weight, g_cost, g_z = np.zeros(6), np.zeros((6, k)), np.zeros((n_num, 6))
    group_sums(live, group, w, dist, z, g_weight, g_cost, g_z)
    assert_allclose(g_weight, np.bincount(group, weights=w[live], minlength=6))
    for c in range(k):
        assert_allclose(g_cost[:, c], np.bincount(group, weights=w[live] * dist[live, c],
                                                  minlength=6))
    for a in range(n_num):
        assert_allclose(g_z[a], np.bincount(group, weights=w[live] * z[a, live], minlength=6))


def test_prices_of_rows_follow_types_and_numeric_slopes():
    X = np.zeros((4, 1))
    S = pd.DataFrame({"g": [0, 1, 0, 1], "age": [1.0, -1.0, 2.0, -2.0]})
    bounds = resolve_bounds(S, 4, max_deviation=0.1, numeric_bound=0.5)
    prob = make_problem(X, bounds, 2)
    prices = Prices(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, -0.5]]), 0.0)
    z = prob.num[0][0]
    want = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]) + np.outer(z, [0.5, -0.5])
    assert_allclose(prices.of(prob, np.arange(4)), want)


def plain_sums_to(possible, k, n):
    """Whether n is a sum of exactly k allowed sizes: the totals of j sizes, for j = 1..k."""
    allowed = [s for s in range(n + 1) if possible[s]]
    totals = {0}
    for _ in range(k):
        totals = {t + s for t in totals for s in allowed if t + s <= n}
    return n in totals


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(possible=st.lists(st.booleans(), min_size=1, max_size=40), k=st.integers(1, 5),
       data=st.data())
def test_sizes_add_up_as_a_plain_programme_says(possible, k, data):
    n = data.draw(st.integers(0, len(possible) - 1))
    possible = np.array(possible)
    assert _sums_to(possible, k, n) == plain_sums_to(possible, k, n)
