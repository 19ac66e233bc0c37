"""scikit-learn's and BLAS's thread pools run on the count a call decided.

A reference ``KMeans`` (the audit's, the CLI's, the scorer's), a fit's
scikit-learn seeding and ``transform``'s distances run OpenMP and BLAS pools
of their own, sized to every core unless told. Each test holds the pools at 3
threads from outside and sets ``FAIRKM_NUM_THREADS=1``: a call that applies
its decision shows 1 thread in every pool inside scikit-learn, one that does
not shows 3 (on any machine, however many cores it has).
"""

import numpy as np
import pytest
import sklearn.cluster
from threadpoolctl import threadpool_info, threadpool_limits

import fairkm.cluster._prediction
import fairkm.metrics._quality
from fairkm import FairKM
from fairkm.bounds import decided_threads
from fairkm.cluster import BlindKMeans, BoundedKMeans
from fairkm.datasets import make_sensitive_blobs
from fairkm.metrics import make_fair_clustering_scorer
from fairkm.report import audit
from fairkm.utils import _threads
from fairkm.utils._threads import decided_pool_threads, pool_threads

from ._people import FIT, run

OUTSIDE = 3  # the pools' size around each call, above what the calls decide


def pool_sizes():
    """``{user_api: sorted thread counts}`` of the process's OpenMP and BLAS pools now."""
    sizes = {}
    for lib in threadpool_info():
        sizes.setdefault(lib["user_api"], set()).add(lib["num_threads"])
    return {api: sorted(counts) for api, counts in sizes.items()}


@pytest.fixture
def one_thread(monkeypatch):
    """Ask for one thread; hold every pool at OUTSIDE threads around the test."""
    monkeypatch.setenv("FAIRKM_NUM_THREADS", "1")
    with threadpool_limits(limits=OUTSIDE):
        yield


@pytest.fixture
def kmeans_pools(monkeypatch):
    """Record the pools' sizes at the start of every ``KMeans.fit``."""
    seen = []
    fit = sklearn.cluster.KMeans.fit

    def spy(self, *args, **kwargs):
        seen.append(pool_sizes())
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(sklearn.cluster.KMeans, "fit", spy)
    return seen


def spy_on(monkeypatch, module, name):
    """Record the pools' sizes at every call of ``module.name``."""
    seen = []
    function = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(pool_sizes())
        return function(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def assert_one_thread(seen):
    assert seen, "the scikit-learn call was not made"
    for sizes in seen:
        assert set(sizes) >= {"openmp", "blas"}
        assert all(counts == [1] for counts in sizes.values()), sizes


@pytest.fixture(scope="module")
def blobs():
    X, S, _ = make_sensitive_blobs(300, n_values=(2, 3), random_state=0)
    return X, S


def test_the_pools_are_the_size_held_outside(one_thread):
    # What the other tests rely on: the outside limit reaches every pool.
    assert all(counts == [OUTSIDE] for counts in pool_sizes().values())


def test_pool_threads_lowers_and_restores_every_pool():
    with threadpool_limits(limits=OUTSIDE):
        with pool_threads(2) as used:
            assert used == 2
            assert all(counts == [2] for counts in pool_sizes().values())
        assert all(counts == [OUTSIDE] for counts in pool_sizes().values())


def test_pool_threads_never_raises_a_pool():
    # A pool the caller held lower stays lower (the experiments hold BLAS at one).
    with threadpool_limits(limits=OUTSIDE), threadpool_limits(limits=1, user_api="blas"):
        with pool_threads(2):
            sizes = pool_sizes()
        assert sizes["blas"] == [1] and sizes["openmp"] == [2]


def test_decided_pool_threads_uses_the_decision(monkeypatch):
    monkeypatch.setattr(_threads, "decide_threads", lambda ceiling, watch_idle=False: 2)
    with threadpool_limits(limits=OUTSIDE), decided_pool_threads() as used:
        assert used == 2
        assert all(counts == [2] for counts in pool_sizes().values())


@pytest.mark.parametrize(("n_rows", "env", "expected"), [
    (None, None, 2), (1_000, None, 1), (_threads.SERIAL_ROWS, None, 1),
    (_threads.SERIAL_ROWS + 1, None, 2), (1_000, "2", 2), (10**6, "1", 1)])
def test_a_small_reference_runs_on_one_thread_unless_told(monkeypatch, n_rows, env, expected):
    monkeypatch.setattr(_threads, "_usable_cores", lambda: 2)
    if env is None:
        monkeypatch.delenv(_threads.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(_threads.ENV_VAR, env)
    with decided_pool_threads(n_rows=n_rows) as used:
        assert used == expected


@pytest.mark.parametrize("n_rows", [1_000, 10**6])
def test_the_load_never_decides_a_references_threads(monkeypatch, n_rows):
    # scikit-learn's KMeans ends in other last bits on another thread count: the count may
    # depend on the rows and the machine, never on how busy it is.
    monkeypatch.setattr(_threads, "_usable_cores", lambda: 2)
    monkeypatch.delenv(_threads.ENV_VAR, raising=False)
    used = []
    for idle in (0.0, 0.4, 2.0, None):
        monkeypatch.setattr(_threads, "idle_cores", lambda idle=idle: idle)
        with decided_pool_threads(n_rows=n_rows) as count:
            used.append(count)
    assert len(set(used)) == 1


def test_decided_threads_applies_the_count_to_the_pools(one_thread):
    with decided_threads() as used:
        assert used == 1
        assert_one_thread([pool_sizes()])


def test_the_audits_reference_kmeans(one_thread, kmeans_pools, blobs):
    X, S = blobs
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=S)
    report = audit(model, X, sensitive_features=S, n_init=2)
    assert report.reference.startswith("S-blind")
    assert_one_thread(kmeans_pools)


def test_the_audits_silhouettes(one_thread, monkeypatch, blobs):
    X, S = blobs
    seen = spy_on(monkeypatch, fairkm.metrics._quality, "silhouette_score")
    labels = np.arange(X.shape[0]) % 3
    audit(labels, X, sensitive_features=S, reference=None)
    assert_one_thread(seen)


def test_the_scorers_reference_kmeans(one_thread, kmeans_pools, blobs):
    X, S = blobs
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=S)
    scorer = make_fair_clustering_scorer(n_init=2)
    scorer(model, X, sensitive_features=S)
    assert_one_thread(kmeans_pools)


def test_the_clis_reference_kmeans(one_thread, kmeans_pools, capsys, people_csv):
    status, _, err = run(capsys, "tradeoff", people_csv, *FIT, "--fairness-weights", "0,1",
                         "--quiet")
    assert status == 0, err
    assert_one_thread(kmeans_pools)


def test_blind_kmeans(one_thread, kmeans_pools, blobs):
    X, S = blobs
    BlindKMeans(n_clusters=3, n_init=2, random_state=0).fit(X)
    assert_one_thread(kmeans_pools)


def test_bounded_kmeans_starts(one_thread, kmeans_pools, blobs):
    X, S = blobs
    BoundedKMeans(n_clusters=3, init="k-means++", n_init=2, max_deviation=0.2,
                  random_state=0).fit(X, sensitive_features=S)
    assert_one_thread(kmeans_pools)


def test_fairkm_seeding(one_thread, monkeypatch, blobs):
    X, S = blobs
    seen = spy_on(monkeypatch, fairkm.cluster._fairkm, "kmeans_plusplus")
    FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=S)
    assert_one_thread(seen)


def test_transform(one_thread, monkeypatch, blobs):
    X, S = blobs
    model = FairKM(n_clusters=3, random_state=0).fit(X, sensitive_features=S)
    seen = spy_on(monkeypatch, fairkm.cluster._prediction, "euclidean_distances")
    distances = model.transform(X)
    assert distances.shape == (X.shape[0], 3)
    assert_one_thread(seen)
