"""fairkm.bounds: the tightest floor of max_deviation=0, numeric bounds repeatable and fast,
no clock in any solver call, and whole rows near the integer optimum."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy.optimize import Bounds, LinearConstraint, milp
from sklearn.cluster import KMeans

from fairkm.bounds import fair_assignment
from fairkm.bounds._assign import size_windows
from fairkm.bounds._model import make_problem, sq_distances
from fairkm.bounds._relax import relax
from fairkm.cluster import BoundedKMeans
from fairkm.metrics import resolve_bounds

from .conftest import examples

# ----------------------------------------------------------------------------- NumPy references


def binary_floor_met(n, n_ones, windows, floor):
    """Whether clusters with sizes in ``windows`` can each hold a share of ones within ``floor``.

    A plain dynamic programme over the clusters on (rows so far, ones so far):
    cluster ``c`` takes ``s`` rows in ``[lo_c, hi_c]`` and ``w`` ones with
    ``|w / s - p| <= floor`` (the zeros' share then too), and the rows and the
    ones must add up to ``n`` and ``n_ones``.
    """
    p = n_ones / n
    reach = np.zeros((n + 1, n_ones + 1), bool)
    reach[0, 0] = True
    for lo, hi in zip(*windows, strict=True):
        nxt = np.zeros_like(reach)
        for s in range(int(lo), int(hi) + 1):
            for w in range(max(0, int(np.ceil((p - floor) * s - 1e-9))),
                           min(s, int(np.floor((p + floor) * s + 1e-9))) + 1):
                if w > n_ones or s > n:
                    continue
                nxt[s:, w:] |= reach[:n + 1 - s, :n_ones + 1 - w]
        reach = nxt
    return bool(reach[n, n_ones])


def largest_share_gap(labels, group):
    """Largest |share of a value in a cluster - its share in the dataset|."""
    values = np.unique(group)
    p = np.array([np.mean(group == v) for v in values])
    return max(np.abs(np.array([np.mean(group[labels == c] == v) for v in values]) - p).max()
               for c in np.unique(labels))


# ----------------------------------------------------------------------------- the floor at 0


@settings(max_examples=examples(6), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 4))
def test_floor_is_the_tightest_within_the_size_windows(seed, k):
    # One binary attribute whose count shares no factor with the rows: the exact mix is
    # impossible, and the floor is searched with sizes near the exact mix's relaxation.
    rng = np.random.default_rng(seed)
    n, n_ones = 1201, 397
    X = rng.normal(size=(n, 2)) + 3 * rng.integers(0, k, size=(n, 1))
    group = np.zeros(n, int)
    group[rng.permutation(n)[:n_ones]] = 1
    centers = KMeans(k, n_init=1, random_state=0).fit(X).cluster_centers_
    result = fair_assignment(X, centers, group, max_deviation=0.0)
    floor = float(result.check.table["bound"].iloc[0])
    assert result.satisfied and largest_share_gap(result.labels, group) <= floor + 1e-12
    bounds = resolve_bounds(group, n, max_deviation=0.0)
    problem = make_problem(X, bounds, k)
    exact = relax(problem, sq_distances(X, centers), np.arange(n), 300_000)
    windows = size_windows(np.bincount(exact.labels, minlength=k))
    assert binary_floor_met(n, n_ones, windows, floor)
    assert not binary_floor_met(n, n_ones, windows, floor / 1.03)


# ----------------------------------------------------------------------------- no clock decides


def _survey(n, seed):
    """Rows with a binary and a three-valued attribute and a numeric one that follows X."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) + 2.5 * rng.integers(0, 3, size=(n, 1))
    S = pd.DataFrame({"sex": rng.integers(0, 2, n).astype(str),
                      "language": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
                      "age": X[:, 0] + rng.normal(size=n)})
    return X, S


@pytest.mark.slow
def test_no_solver_call_is_given_a_time_limit(monkeypatch):
    import fairkm.bounds._highs as highs
    import fairkm.bounds._infeasible as infeasible
    import fairkm.bounds._model as model
    import fairkm.bounds._round as rounding

    calls = []

    def recording(solver):
        def call(*args, **kwargs):
            calls.append((solver.__name__, dict(kwargs.get("options") or {})))
            return solver(*args, **kwargs)
        return call

    for module in (model, infeasible, rounding):
        for name in ("milp", "linprog"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, recording(getattr(optimize, name)))
    # The relaxations on every row go to the HiGHS a start keeps (fairkm.bounds._highs):
    # recorded with the time limit it holds after each programme.
    solve = highs.Programmes.solve

    def relaxation(self, c, **kwargs):
        out = solve(self, c, **kwargs)
        held = self._highs.getOptionValue("time_limit")[1] if highs.can_warm_start() else None
        calls.append(("relaxation", {} if held in (None, np.inf) else {"time_limit": held}))
        return out

    monkeypatch.setattr(highs.Programmes, "solve", relaxation)
    X, S = _survey(150, 0)
    centers = KMeans(4, n_init=1, random_state=0).fit(X).cluster_centers_
    fair_assignment(X, centers, S[["sex", "language"]], max_deviation=0.0)      # type counts
    fair_assignment(X, centers, S, max_deviation=0.05, numeric_bound=0.05)       # rows' MIP
    fair_assignment(X[:60], centers, S[:60], max_deviation=0.1, numeric_bound=0.1)
    with pytest.raises(ValueError, match="tightest"):                            # the proof
        fair_assignment(X[:7], centers[:2], S[["sex"]][:7], max_deviation=0.01)
    assert {name for name, _ in calls} == {"milp", "relaxation"}
    assert not [options for _, options in calls if "time_limit" in options]


@pytest.mark.slow
def test_numeric_bounds_repeat_and_meet_every_bound():
    # The same arguments twice give the same labels, and every bound holds by a plain count.
    X, S = _survey(900, 1)
    fits = [BoundedKMeans(4, max_deviation=0.05, numeric_bound=0.05, random_state=0,
                          progress=False).fit(X, sensitive_features=S) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    labels = fits[0].labels_
    age = (S["age"] - S["age"].mean()) / S["age"].std(ddof=0)
    for c in range(4):
        assert abs(age[labels == c].mean()) <= 0.05 + 1e-9
    for column in ("sex", "language"):
        assert largest_share_gap(labels, S[column].to_numpy()) <= 0.05 + 1e-9


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(40, 160), k=st.integers(2, 4),
       cap=st.sampled_from([0.05, 0.1, 0.3]))
def test_swaps_for_numeric_means_meet_what_they_say(seed, n, k, cap):
    # From nearest-centre labels: when the swaps say every bound holds, a plain count agrees.
    from fairkm.bounds._round import swap_numeric

    X, S = _survey(n, seed)
    centers = X[np.random.default_rng(seed).permutation(n)[:k]]
    bounds = resolve_bounds(S, n, max_deviation=0.15, numeric_bound=cap)
    problem = make_problem(X, bounds, k)
    dist = sq_distances(X, centers)
    start = np.argmin(dist, axis=1)
    if np.unique(start).shape[0] < k:
        return
    live = np.arange(n)
    rounded = swap_numeric(problem, bounds, dist, live, start)
    if not rounded.met:
        return
    labels = rounded.labels
    assert np.unique(labels).shape[0] == k
    age = S["age"].to_numpy()
    z = (age - age.mean()) / age.std()
    for c in range(k):
        assert abs(z[labels == c].mean()) <= cap + 1e-9
    for column in ("sex", "language"):
        assert largest_share_gap(labels, S[column].to_numpy()) <= 0.15 + 1e-9


# ----------------------------------------------------------------------------- near the optimum


def full_optimum(X, centers, S, delta):
    """The cheapest assignment meeting additive bands, by scipy's milp on every (row, cluster).

    Written apart from fairkm: x[i, c] in {0, 1}, each row once, each cluster
    non-empty, ``|count_c(v) - p_v size_c| <= delta size_c`` for every value.
    """
    n, k = X.shape[0], centers.shape[0]
    cost = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2).reshape(-1)
    rows = [np.kron(np.eye(n), np.ones(k))]
    lower, upper = [np.ones(n)], [np.ones(n)]
    rows.append(np.kron(np.ones(n), np.eye(k)))
    lower.append(np.ones(k))
    upper.append(np.full(k, np.inf))
    for column in S.T:
        for v in np.unique(column):
            has = (column == v).astype(float)
            p = has.mean()
            for sign in (1.0, -1.0):
                rows.append(np.kron(has - p - sign * delta, np.eye(k)) * sign)
                lower.append(np.full(k, -np.inf))
                upper.append(np.zeros(k))
    res = milp(cost, integrality=np.ones(n * k), bounds=Bounds(0, 1),
               constraints=LinearConstraint(np.vstack(rows), np.concatenate(lower),
                                            np.concatenate(upper)))
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_whole_rows_near_the_integer_optimum_beyond_the_exact_cutoff(seed):
    # 360 rows x 3 clusters (beyond EXACT_PAIRS, so rounded by the local search): within
    # 0.5% of the integer optimum found by scipy's milp on the whole programme.
    X, S = _survey(360, seed)
    codes = np.stack([pd.factorize(S[c])[0] for c in ("sex", "language")], axis=1)
    centers = KMeans(3, n_init=1, random_state=seed).fit(X).cluster_centers_
    result = fair_assignment(X, centers, codes, max_deviation=0.03)
    assert result.satisfied
    optimum = full_optimum(X, centers, codes, 0.03)
    assert result.assignment_cost <= optimum * 1.005
    assert result.assignment_cost >= optimum * (1 - 1e-7)


# ----------------------------------------------------------------------------- never worse first


def test_a_loss_at_the_tightest_floor_tries_one_row_doubled(monkeypatch):
    # FairKM's repair at max_deviation=0: when the tightest floor found leaves a loss, the
    # repair runs again at one row of the smallest cluster (doubled until met) and keeps that
    # clustering when it has no loss; when both lose, the tightest floor's is kept.
    import fairkm.bounds._repair as repair

    X, S = _survey(1200, 3)
    S = S[["sex", "language"]]
    labels = KMeans(3, n_init=1, random_state=0).fit(X).labels_.astype(np.int64)
    centers = np.stack([X[labels == c].mean(axis=0) for c in range(3)])
    bounds = resolve_bounds(S, len(X), max_deviation=0.0)
    tightest = repair.as_fair_as_whole_rows(X, centers, bounds)
    doubled = repair.as_fair_as_whole_rows(X, centers, bounds, tighten=False)
    assert repair._floors(tightest) < repair._floors(doubled)  # the search tightened it

    real = repair._constrain
    for losing in ({"tightest"}, {"tightest", "doubled"}):
        seen = []

        def spy(X, labels, centers, bounds, w, max_lp_variables, steps, losing=losing,
                seen=seen):
            which = "tightest" if repair._floors(bounds) == repair._floors(tightest) else "doubled"
            seen.append(which)
            out = real(X, labels, centers, bounds, w, max_lp_variables, steps)
            if which in losing:
                out = replace(out, repair=replace(out.repair, how="least loss"))
            return out

        monkeypatch.setattr(repair, "_constrain", spy)
        result = repair.constrain(X, labels, centers, bounds)
        assert seen == ["tightest", "doubled"]
        floors = [float(result.check.table.loc[name, "bound"]) for name in ("sex", "language")]
        expected = doubled if losing == {"tightest"} else tightest
        assert floors == repair._floors(expected)
