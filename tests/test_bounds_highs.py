"""fairkm.bounds._highs: HiGHS kept between programmes against scipy's linprog.

* a programme solved from nothing is linprog's, to the last bit (solution,
  optimum, duals of the inequality rows, status);
* a programme that differs from the last only in its costs starts from the
  last one's basis and reaches linprog's optimum, feasibly; one whose
  constraints differ is solved from nothing;
* a programme started from a basis the caller gives (each row in its
  cheapest cluster) reaches linprog's optimum, feasibly; a basis HiGHS
  refuses, or one that does not end optimal, leaves the programme to the
  start from nothing; the caller's basis is made only for a programme solved
  afresh; the relaxation's basis (``_cheapest_basis``) is each
  row's cheapest pair and every aggregate, as a slow recount finds it;
* without scipy's binding every programme is linprog's;
* each start of a bounded K-Means fit solves its first relaxation afresh
  (from the caller's basis) and the later ones warm from the last one's, and
  the fit is reproducible.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy import sparse
from scipy.optimize import linprog

from fairkm import BoundedKMeans
from fairkm.bounds import _highs
from fairkm.bounds._highs import Programmes, can_warm_start
from fairkm.bounds._model import _build, _cheapest_basis, held_offsets, make_problem, solve_lp
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics._bound_spec import resolve_bounds

from .conftest import examples


def capped_assignment(rng, n, k, cap, costs=None):
    """Rows each assigned once over ``k`` clusters (shares in [0, 1]); the first group's
    weight in every cluster at most ``cap``: the bounded relaxation's shape, small."""
    group = rng.random(n) < 0.5
    A_eq = sparse.csr_matrix(np.kron(np.eye(n), np.ones((1, k))))
    A_ub = sparse.csr_matrix(np.kron(group[None, :].astype(float), np.eye(k)))
    return {
        "c": rng.random(n * k) if costs is None else costs,
        "A_ub": A_ub, "b_ub": np.full(k, float(cap)), "A_eq": A_eq, "b_eq": np.ones(n),
        "lower": np.zeros(n * k), "upper": np.ones(n * k),
    }


def scipy_solution(lp):
    return linprog(lp["c"], A_ub=lp["A_ub"], b_ub=lp["b_ub"], A_eq=lp["A_eq"], b_eq=lp["b_eq"],
                   bounds=np.stack([lp["lower"], lp["upper"]], 1), method="highs")


def solve(programmes, lp, basic=None):
    """Solve ``lp``; ``basic``: the mask of a basis to start from, when one is made."""
    asked = None if basic is None else lambda: basic
    return programmes.solve(lp["c"], basic=asked,
                            **{key: value for key, value in lp.items() if key != "c"})


def cheapest_columns(lp, n, k):
    """``capped_assignment``'s basis of each row in its cheapest cluster (first of ties)."""
    basic = np.zeros(n * k, dtype=bool)
    for i in range(n):
        costs = lp["c"][i * k:(i + 1) * k]
        basic[i * k + int(np.flatnonzero(costs == costs.min())[0])] = True
    return basic


def assert_feasible(lp, x, tol=1e-7):
    assert np.all(lp["A_ub"] @ x <= lp["b_ub"] + tol)
    assert np.allclose(lp["A_eq"] @ x, lp["b_eq"], atol=tol)
    assert np.all((x >= lp["lower"] - tol) & (x <= lp["upper"] + tol))


def assert_linprogs_optimum(lp, ours, theirs):
    """Our solution is feasible and reaches linprog's optimal value (and its own value is it)."""
    assert_feasible(lp, ours.x)
    assert ours.fun == pytest.approx(theirs.fun, rel=1e-9, abs=1e-9)
    assert float(lp["c"] @ ours.x) == pytest.approx(theirs.fun, rel=1e-9, abs=1e-9)


lp_shapes = st.tuples(st.integers(1, 12), st.integers(1, 4), st.integers(0, 10_000),
                      st.sampled_from([0.0, 1.0, 2.5, 100.0]))


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
@settings(max_examples=examples(60))
@given(lp_shapes)
def test_a_programme_from_nothing_is_linprogs_to_the_last_bit(shape):
    n, k, seed, cap = shape
    lp = capped_assignment(np.random.default_rng(seed), n, k, cap)
    ours, theirs = solve(Programmes(), lp), scipy_solution(lp)
    assert ours.status == theirs.status
    assert not ours.warm
    if theirs.status == 0:
        assert_array_equal(ours.x, theirs.x)
        assert ours.fun == theirs.fun
        assert_array_equal(ours.ineq_duals, theirs.ineqlin.marginals)
    else:
        assert ours.x is None and np.isnan(ours.fun)


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
@settings(max_examples=examples(60))
@given(lp_shapes, st.lists(st.integers(0, 10_000), min_size=1, max_size=4))
def test_new_costs_start_from_the_last_basis_and_reach_linprogs_optimum(shape, cost_seeds):
    n, k, seed, cap = shape
    rng = np.random.default_rng(seed)
    programmes = Programmes()
    first = capped_assignment(rng, n, k, cap)
    solved_first = solve(programmes, first)
    for cost_seed in cost_seeds:
        lp = {**first, "c": np.random.default_rng(cost_seed).normal(size=n * k)}
        ours, theirs = solve(programmes, lp), scipy_solution(lp)
        assert ours.status == theirs.status
        if theirs.status != 0:
            continue
        # The last programme ended optimal, so this one started from its basis.
        assert ours.warm == (solved_first.status == 0)
        solved_first = ours
        assert_linprogs_optimum(lp, ours, theirs)


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
def test_other_constraints_are_solved_from_nothing():
    rng = np.random.default_rng(0)
    programmes = Programmes()
    first = capped_assignment(rng, 8, 3, 2.0)
    assert not solve(programmes, first).warm
    assert solve(programmes, {**first, "c": rng.random(24)}).warm
    for changed in ({"b_ub": first["b_ub"] + 1.0}, {"upper": np.full(24, 0.9)},
                    {"A_ub": first["A_ub"] * 2.0}):
        lp = {**first, **changed}
        ours, theirs = solve(programmes, lp), scipy_solution(lp)
        assert not ours.warm
        assert_array_equal(ours.x, theirs.x)


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
def test_an_infeasible_programme_is_infeasible_warm_or_not():
    rng = np.random.default_rng(1)
    programmes = Programmes()
    # Every row in the capped group and a cap of 0 over every cluster: no assignment.
    lp = capped_assignment(rng, 5, 2, 0.0)
    lp["A_ub"] = sparse.csr_matrix(np.kron(np.ones((1, 5)), np.eye(2)))
    for _ in range(2):
        out = solve(programmes, lp)
        assert out.status == scipy_solution(lp).status == 2
        assert out.x is None
        lp = {**lp, "c": rng.random(10)}


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
@settings(max_examples=examples(60))
@given(lp_shapes)
def test_a_programme_from_the_cheapest_basis_reaches_linprogs_optimum(shape):
    n, k, seed, cap = shape
    lp = capped_assignment(np.random.default_rng(seed), n, k, cap)
    ours, theirs = solve(Programmes(), lp, cheapest_columns(lp, n, k)), scipy_solution(lp)
    assert ours.status == theirs.status
    assert not ours.warm
    if theirs.status != 0:  # (an infeasible start is confirmed from nothing)
        assert ours.x is None and not ours.given
        return
    assert ours.given
    assert_linprogs_optimum(lp, ours, theirs)


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
def test_the_callers_basis_is_made_only_for_a_programme_solved_afresh():
    rng = np.random.default_rng(4)
    lp = capped_assignment(rng, 8, 3, 2.0)
    made = []

    def basis():
        made.append(True)
        return cheapest_columns(lp, 8, 3)

    programmes = Programmes()
    rest = {key: value for key, value in lp.items() if key != "c"}
    first = programmes.solve(lp["c"], basic=basis, **rest)
    later = programmes.solve(rng.random(24), basic=basis, **rest)
    assert first.given and not first.warm
    assert later.warm and not later.given
    assert len(made) == 1


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
@pytest.mark.parametrize("seed", range(5))
def test_a_start_that_is_no_basis_still_reaches_linprogs_optimum(seed):
    # HiGHS repairs a start with too few or too many basic columns (or refuses it, and the
    # programme is solved from nothing, as linprog solves it).
    rng = np.random.default_rng(seed)
    lp = capped_assignment(rng, 8, 3, 2.0)
    theirs = scipy_solution(lp)
    too_few = cheapest_columns(lp, 8, 3)
    too_few[np.flatnonzero(too_few)[0]] = False
    for basic in (too_few, np.ones(24, dtype=bool), np.zeros(24, dtype=bool)):
        ours = solve(Programmes(), lp, basic)
        assert ours.status == theirs.status == 0
        assert_linprogs_optimum(lp, ours, theirs)
        if not ours.given:
            assert_array_equal(ours.x, theirs.x)


def blob_problem(seed, n, k, bound):
    X, S, _ = make_sensitive_blobs(n, n_features=2, centers=3, n_values=(2, 3),
                                   random_state=seed)
    problem = make_problem(X, resolve_bounds(S, n, max_deviation=bound), k)
    centres = X[np.random.default_rng(seed).choice(n, k, replace=False)]
    return problem, ((X[:, None, :] - centres[None]) ** 2).sum(-1)


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 10_000), st.integers(6, 40), st.integers(2, 4),
       st.sampled_from([0.05, 0.2, 0.5]), st.booleans())
def test_the_relaxations_basis_is_each_rows_cheapest_pair(seed, n, k, bound, tied):
    problem, dist = blob_problem(seed, n, k, bound)
    if tied:  # every row as near to each cluster: ties go to the first pair
        dist = np.ones_like(dist)
    rows = np.arange(n)
    pos, clu = np.repeat(rows, k), np.tile(np.arange(k), n)
    # Some rows lose some clusters (as the priced programmes' rows do): not all k pairs.
    keep = (np.random.default_rng(seed).random(pos.shape[0]) < 0.7) | (clu == 0)
    pos, clu = pos[keep], clu[keep]
    held = held_offsets(problem, rows[:0], rows[:0])
    prog = _build(problem, rows, problem.weights, pos, clu, dist[pos, clu], held)
    basic = _cheapest_basis(prog, pos)
    for r in range(n):  # the slow recount: the first of the row's least-cost pairs
        mine = np.flatnonzero(pos == r)
        cheapest = mine[prog.c[mine] == prog.c[mine].min()][0]
        assert np.flatnonzero(basic[:prog.n_pairs][mine]).tolist() == [
            np.flatnonzero(mine == cheapest)[0]]
    assert basic[prog.n_pairs:].all()  # the aggregates (no elastic slack here)
    # A basis: with the inequality rows' slacks, one basic column per equality row.
    assert basic.sum() == prog.A_eq.shape[0]
    ours = solve_lp(problem, rows, pos, clu, dist[pos, clu], held)
    theirs = linprog(prog.c, A_ub=prog.A_ub, b_ub=prog.b_ub, A_eq=prog.A_eq, b_eq=prog.b_eq,
                     bounds=np.stack([prog.lb, prog.ub], 1), method="highs")
    assert ours.status == theirs.status
    if theirs.status == 0:
        assert ours.fun == pytest.approx(theirs.fun, rel=1e-9, abs=1e-9)


def test_without_scipys_binding_every_programme_is_linprogs(monkeypatch):
    monkeypatch.setattr(_highs, "_core", None)
    assert not can_warm_start()
    rng = np.random.default_rng(2)
    programmes = Programmes()
    lp = capped_assignment(rng, 9, 3, 2.0)
    for _ in range(3):
        ours, theirs = solve(programmes, lp), scipy_solution(lp)
        assert not ours.warm
        assert_array_equal(ours.x, theirs.x)
        assert_array_equal(ours.ineq_duals, theirs.ineqlin.marginals)
        lp = {**lp, "c": rng.random(27)}


def test_this_scipy_lets_programmes_start_warm():
    # The speed of a bounded K-Means fit rests on it: a scipy that moved its binding of HiGHS
    # (scipy.optimize._highspy._core) leaves every programme to linprog, from nothing.
    assert can_warm_start(), "scipy.optimize._highspy._core is gone: update fairkm.bounds._highs"


@pytest.mark.skipif(not can_warm_start(), reason="this scipy has no binding of its HiGHS")
def test_each_start_warms_its_later_relaxations_and_the_fit_is_reproducible(monkeypatch):
    X, S, _ = make_sensitive_blobs(600, n_features=3, centers=4, n_values=(2, 3),
                                   random_state=0)
    seen = []
    solve_once = Programmes.solve

    def spy(self, c, **kwargs):
        out = solve_once(self, c, **kwargs)
        if not hasattr(self, "number"):  # (an id() can be reused once a start's is freed)
            self.number = len({owner for owner, _, _ in seen})
        seen.append((self.number, out.warm, out.iterations))
        return out

    monkeypatch.setattr(Programmes, "solve", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = BoundedKMeans(3, max_deviation=0.05, n_init=3, init="k-means++",
                              random_state=0).fit(X, sensitive_features=S)
    owners = list(dict.fromkeys(owner for owner, _, _ in seen))
    assert len(owners) == 3  # one HiGHS a start
    for owner in owners:
        warm = [was_warm for who, was_warm, _ in seen if who == owner]
        assert len(warm) >= 2 and not warm[0] and all(warm[1:])
    assert first.bounds_check_.satisfied
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = BoundedKMeans(3, max_deviation=0.05, n_init=3, init="k-means++",
                              random_state=0).fit(X, sensitive_features=S)
    assert_array_equal(first.labels_, again.labels_)
