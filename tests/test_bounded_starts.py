"""BoundedKMeans' starts, its refusals of a bound on no attribute, its bar and its predict.

Every cost and distance is recounted here in plain NumPy (scipy's 1-D
Wasserstein distance for numeric attributes), never read from the fit.
"""

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from fairkm.cluster import BoundedKMeans
from fairkm.cluster import _bounded as bounded_module
from fairkm.exceptions import BoundNotMetWarning

from .conftest import examples


def _cost(X, labels):
    """K-Means cost of ``labels``: squared distances to their clusters' means."""
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
               for c in np.unique(labels))


def _excess(labels, groups, delta):
    """Largest share of a value outside ``[p - delta, p + delta]`` over the clusters (0: met)."""
    worst = 0.0
    for column in groups.T:
        values = np.unique(column)
        p = np.array([np.mean(column == v) for v in values])
        for c in np.unique(labels):
            share = np.array([np.mean(column[labels == c] == v) for v in values])
            worst = max(worst, float(np.max(np.abs(share - p)) - delta))
    return max(worst, 0.0)


def _problem(seed, n=90, n_values=2):
    rng = np.random.RandomState(seed)
    X = np.r_[rng.normal(0, 1, (n // 3, 2)), rng.normal(4, 1, (n // 3, 2)),
              rng.normal((0, 5), 1, (n - 2 * (n // 3), 2))]
    # The groups lean to the blobs, so nearest-centre clusters break the bound.
    lean = (np.arange(n) * n_values // n + rng.randint(0, 2, n)) % n_values
    return X, lean.reshape(-1, 1)


@pytest.fixture
def recorded(monkeypatch):
    """Record every start's result (``solve``'s return value) of the fits that follow."""
    results = []
    solve = bounded_module.solve

    def recording(*args, **kwargs):
        results.append(solve(*args, **kwargs))
        return results[-1]

    monkeypatch.setattr(bounded_module, "solve", recording)
    return results


@pytest.mark.slow
@settings(max_examples=examples(12), suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), delta=st.sampled_from([0.0, 0.05, 0.15]),
       random_state=st.integers(0, 1_000))
def test_kept_is_the_cheapest_start_that_meets_the_bound(recorded, seed, delta, random_state):
    X, groups = _problem(seed)
    recorded.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundNotMetWarning)
        model = BoundedKMeans(3, max_deviation=delta, random_state=random_state,
                              progress=False).fit(X, sensitive_features=groups)
    assert len(recorded) == 4  # two FairKM starts and two K-Means ones
    floor = model.max_deviation_  # 0 resolves to what whole rows allow, the same for all
    costs = [_cost(X, r.labels) for r in recorded]
    met = [_excess(r.labels, groups, floor) <= 1e-9 for r in recorded]
    assert any(met)
    cheapest = min(c for c, ok in zip(costs, met, strict=True) if ok)
    assert _excess(model.labels_, groups, floor) <= 1e-9
    assert _cost(X, model.labels_) == pytest.approx(cheapest, rel=1e-9)
    assert model.inertia_ == pytest.approx(_cost(X, model.labels_), rel=1e-9)


@pytest.mark.slow
@settings(max_examples=examples(10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), delta=st.sampled_from([0.0, 0.05, 0.15]),
       random_state=st.integers(0, 1_000))
def test_auto_is_never_dearer_than_the_fairkm_start(seed, delta, random_state):
    X, groups = _problem(seed, n_values=3)
    fits = {}
    for n_init in ("auto", 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BoundNotMetWarning)
            fits[n_init] = BoundedKMeans(3, max_deviation=delta, n_init=n_init,
                                         random_state=random_state, progress=False).fit(
                X, sensitive_features=groups)
    floor = fits[1].max_deviation_
    assert _excess(fits["auto"].labels_, groups, floor) <= _excess(fits[1].labels_, groups,
                                                                   floor) + 1e-12
    assert _cost(X, fits["auto"].labels_) <= _cost(X, fits[1].labels_) * (1 + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("init", ["fairkm", "k-means++"])
def test_same_random_state_same_labels(init):
    X, groups = _problem(3, n=150, n_values=3)
    labels = [BoundedKMeans(4, max_deviation=0.05, init=init, random_state=7,
                            progress=False).fit(X, sensitive_features=groups).labels_
              for _ in range(2)]
    np.testing.assert_array_equal(*labels)


@pytest.mark.slow
def test_kmeans_starts_find_the_balanced_clustering_fairkm_misses():
    """Colours tied to blobs, exact balance: the K-Means starts reach the cheapest found.

    The reference is the best of 40 single K-Means starts (``init="k-means++"``,
    ``n_init=1``), each alternated to the end.
    """
    rng = np.random.RandomState(0)
    centres = np.array([[0.0, 0.0], [0.0, 8.0], [8.0, 0.0], [8.0, 8.0]])
    blob = np.repeat(np.arange(4), 60)
    X = centres[blob] + rng.normal(0, 1.5, (240, 2))
    colour = (blob < 2).astype(int)
    best = min(_cost(X, BoundedKMeans(4, max_deviation=0.0, init="k-means++", n_init=1,
                                      random_state=s, progress=False).fit(
        X, sensitive_features=colour).labels_) for s in range(40))
    model = BoundedKMeans(4, max_deviation=0.0, random_state=0, progress=False).fit(
        X, sensitive_features=colour)
    for c in range(4):
        assert np.sum(colour[model.labels_ == c]) * 2 == np.sum(model.labels_ == c)
    assert _cost(X, model.labels_) <= best * 1.005


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(("params", "columns", "words"), [
    ({"max_deviation": 0.05}, ["age"], ["max_deviation=0.05", "no categorical", "age",
                                        "numeric_bound"]),
    ({"max_deviation": {}}, ["sex", "age"], ["max_deviation={}", "['sex']"]),
    ({"max_deviation": None, "numeric_bound": 0.1}, ["sex"], ["numeric_bound=0.1",
                                                            "no numeric", "sex"]),
    ({"numeric_bound": {}}, ["sex", "age"], ["numeric_bound={}", "['age']"]),
])
def test_a_bound_on_no_attribute_is_refused(params, columns, words):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    S = pd.DataFrame({"sex": rng.choice(["f", "m"], 60), "age": rng.normal(40, 9, 60)})
    # An empty dict is refused as naming no attribute, before the attributes' kinds are read.
    with pytest.raises(ValueError, match="bounds no sensitive attribute|names no attribute,"
                       ) as info:
        BoundedKMeans(3, progress=False, **params).fit(X, sensitive_features=S[columns])
    for word in words:
        assert word in str(info.value)


def test_numeric_bound_alone_with_the_default_max_deviation_fits():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    age = pd.DataFrame({"age": rng.normal(40, 9, 60)})
    model = BoundedKMeans(3, numeric_bound=0.5, random_state=0, progress=False).fit(
        X, sensitive_features=age)
    assert model.bounds_check_.satisfied


# ------------------------------------------------------------------------------ progress bar


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_bar_shows_from_the_fit_start(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(bounded_module.sys, "stderr", terminal)
    seen = []
    start = BoundedKMeans._start

    def watched(self, kind, *args):
        seen.append((kind, terminal.getvalue()))
        return start(self, kind, *args)

    monkeypatch.setattr(BoundedKMeans, "_start", watched)
    X, groups = _problem(1)
    BoundedKMeans(3, max_deviation=0.05, random_state=0).fit(X, sensitive_features=groups)
    kinds = [kind for kind, _ in seen]
    assert kinds == ["fairkm", "fairkm", "k-means++", "k-means++"]
    # Before the first start's centres are made, the bar is already out, naming it.
    assert "BoundedKMeans" in seen[0][1] and "0/4" in seen[0][1]
    assert "start 1: FairKM's centres" in seen[0][1]
    assert "start 3: K-Means' centres" in seen[2][1] and "2/4" in seen[2][1]
    # The assignments of a start are shown beside it.
    assert "start 1: FairKM's centres, assignment 1, inertia" in seen[1][1]


def test_no_bar_without_a_terminal_or_when_asked(monkeypatch):
    for stream, progress in ((io.StringIO(), True), (_Terminal(), False)):
        monkeypatch.setattr(bounded_module.sys, "stderr", stream)
        X, groups = _problem(1)
        BoundedKMeans(3, max_deviation=0.05, random_state=0, progress=progress).fit(
            X, sensitive_features=groups)
        assert stream.getvalue() == ""


# ------------------------------------------------------------------------------ predict


def _distances(labels, S):
    """Per attribute, the (mean, worst) over clusters of each measure, in plain NumPy."""
    out = {}
    for name in S.columns:
        column = S[name].to_numpy()
        clusters = np.unique(labels)
        if S[name].dtype.kind in "fi":
            z = (column - column.mean()) / column.std()
            measures = {
                "W1": [wasserstein_distance(z[labels == c], z) for c in clusters],
                "mean gap": [abs(z[labels == c].mean()) for c in clusters],
            }
        else:
            values = np.unique(column)
            p = np.array([np.mean(column == v) for v in values])
            measures = {"TV": [0.5 * np.abs(np.array([np.mean(column[labels == c] == v)
                                                      for v in values]) - p).sum()
                               for c in clusters]}
        for measure, per_cluster in measures.items():
            out[name, measure, "mean"] = float(np.mean(per_cluster))
            out[name, measure, "worst"] = float(np.max(per_cluster))
    return out


def _new_rows(seed, n=120):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2)) * 2 + rng.choice([0.0, 5.0], n)[:, None]
    S = pd.DataFrame({"sex": np.where(X[:, 0] + rng.normal(0, 2, n) > 2.5, "f", "m"),
                      "race": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
                      "age": X[:, 1] * 3 + rng.normal(40, 5, n)})
    return X, S


@pytest.mark.slow
@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), delta=st.sampled_from([0.02, 0.1]),
       which=st.sampled_from(["all", "sex"]))
def test_predict_is_never_further_from_the_mix_than_the_nearest_centre(seed, delta, which):
    X, S = _new_rows(seed)
    bound = delta if which == "all" else {"sex": delta}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundNotMetWarning)
        model = BoundedKMeans(3, max_deviation=bound, n_init=1, random_state=0,
                              progress=False).fit(X, sensitive_features=S)
        X_new, S_new = _new_rows(seed + 1, n=90)
        warnings.simplefilter("ignore", UserWarning)
        labels = model.predict(X_new, sensitive_features=S_new)
    nearest = np.argmin(((X_new[:, None] - model.cluster_centers_[None]) ** 2).sum(axis=2),
                        axis=1)
    ours, theirs = _distances(labels, S_new), _distances(nearest, S_new)
    for key, value in ours.items():
        assert value <= theirs[key] + 1e-9, key


def test_predict_on_rows_no_assignment_can_bound_warns_and_keeps_the_nearest_centre():
    # 90 new rows hold 2 of race "c" for 3 clusters: no assignment meets 0.02 on them.
    X, S = _new_rows(348)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundNotMetWarning)
        model = BoundedKMeans(3, max_deviation=0.02, n_init=1, random_state=0,
                              progress=False).fit(X, sensitive_features=S)
    X_new, S_new = _new_rows(349, n=90)
    assert (S_new["race"] == "c").sum() < 3
    with pytest.warns(UserWarning, match=r"No assignment of these 90 rows meets .* nearest"):
        labels = model.predict(X_new, sensitive_features=S_new)
    nearest = np.argmin(((X_new[:, None] - model.cluster_centers_[None]) ** 2).sum(axis=2),
                        axis=1)
    np.testing.assert_array_equal(labels, nearest)


def test_predict_keeps_the_bounded_assignment_when_it_is_no_further():
    X, S = _new_rows(0, n=300)
    columns = ["sex", "race"]
    model = BoundedKMeans(3, max_deviation=0.05, n_init=1, random_state=0,
                          progress=False).fit(X, sensitive_features=S[columns])
    X_new, S_new = _new_rows(1, n=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labels = model.predict(X_new, sensitive_features=S_new[columns])
    assert _excess(labels, S_new[columns].to_numpy(), 0.05) <= 1e-9


@pytest.mark.slow
def test_predict_warns_and_keeps_the_nearest_centre_when_the_bound_is_further():
    # Age, reported and not bounded, ends further from the mix under the bound on sex.
    X, S = _new_rows(0, n=300)
    model = BoundedKMeans(3, max_deviation={"sex": 0.0}, n_init=1, random_state=0,
                          progress=False).fit(X, sensitive_features=S)
    X_new, S_new = _new_rows(1, n=200)
    nearest = np.argmin(((X_new[:, None] - model.cluster_centers_[None]) ** 2).sum(axis=2),
                        axis=1)
    with pytest.warns(UserWarning, match=r"\bage\b.* further from their mix"):
        labels = model.predict(X_new, sensitive_features=S_new)
    np.testing.assert_array_equal(labels, nearest)
