"""How many threads a call uses: one decision per fit (and per predict), applied to every kernel.

The decision (``fairkm.utils._threads``): the CPU quota, the affinity mask,
FAIRKM_NUM_THREADS and, before mini-batch epochs, the idle cores. Its use
(``fairkm.bounds.decided_threads``): every estimator records it in
``n_threads_``, and every parallel kernel a fit, ``predict``, ``score`` or
``fair_assignment`` runs sees it as numba's thread count.
"""

import ast
import itertools
import os
import warnings
from pathlib import Path

import joblib
import numba
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from fairkm import FairKM
from fairkm.bounds import _dual, _relax, decided_threads, fair_assignment, numba_threads
from fairkm.bounds import thread_count as numba_thread_count
from fairkm.cluster import ZGYA, BlindKMeans, BoundedKMeans, _kernels
from fairkm.datasets import make_sensitive_blobs
from fairkm.exceptions import BoundNotMetWarning
from fairkm.utils import _threads

SRC = Path(__file__).resolve().parents[1] / "src" / "fairkm"


def stat_line(user=0, idle=0, iowait=0, guest=0):
    """The first line of /proc/stat with these tick counts (nice, system... at 0)."""
    return f"cpu  {user} 0 0 {idle} {iowait} 0 0 0 {guest} 0\n"


def serve(monkeypatch, *lines):
    """Make the /proc/stat reader return ``lines`` one call after another."""
    readings = iter(lines)
    monkeypatch.setattr(_threads, "_read_proc_stat", lambda: next(readings))


def serve_idle(monkeypatch):
    """Make /proc/stat show every core idle, however often it is read; count the reads."""
    ticks = itertools.count(1000, 1000)
    reads = []

    def read():
        reads.append(1)
        return stat_line(idle=next(ticks))

    monkeypatch.setattr(_threads, "_read_proc_stat", read)
    return reads


def host(monkeypatch, *, quota=64, affinity=64):
    """Pretend a 64-core host: the quota's CPUs, the affinity mask's."""
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the host's cores, all of them
    monkeypatch.setattr(joblib, "cpu_count", lambda: quota)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(affinity)),
                        raising=False)


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    """Each test starts without FAIRKM_NUM_THREADS, whatever the shell running pytest set."""
    monkeypatch.delenv(_threads.ENV_VAR, raising=False)


# ------------------------------------------------------------------------ the decision


@pytest.mark.parametrize("ceiling, quota, affinity, expected", [
    (64, 64, 2, 2),    # a 64-core host, the process pinned to 2 of them
    (64, 3, 64, 3),    # a container's quota of 3 CPUs
    (4, 64, 64, 4),    # numba started with 4 threads
    (64, 0, 64, 1),    # at least one, whatever a count says
])
def test_the_count_is_the_smallest_limit(monkeypatch, ceiling, quota, affinity, expected):
    host(monkeypatch, quota=quota, affinity=affinity)
    assert _threads.decide_threads(ceiling) == expected


def test_the_count_without_an_affinity_mask(monkeypatch):
    host(monkeypatch, quota=5)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS, Windows
    assert _threads.decide_threads(64) == 5


def test_idle_cores_are_watched_only_when_asked(monkeypatch):
    host(monkeypatch, affinity=2)

    def not_watched():
        raise AssertionError("the idle cores were watched")

    monkeypatch.setattr(_threads, "_read_proc_stat", not_watched)
    assert _threads.decide_threads(64) == 2
    serve(monkeypatch, stat_line(user=1000, idle=8000), stat_line(user=1200, idle=8000))
    assert _threads.decide_threads(64, watch_idle=True) == 1


@pytest.mark.parametrize("after, expected", [
    # Half the ticks idle on a 64-core host, 2 of them usable: one core idle, not 32.
    (stat_line(user=1100, idle=8100), 1),
    (stat_line(user=1000, idle=8200), 2),  # every tick idle: both usable cores
    (stat_line(user=1200, idle=8000), 1),  # none idle: still one thread
    # iowait counts as idle (the core waits for nobody's work); 100 of 200 ticks.
    (stat_line(user=1100, idle=8050, iowait=50), 1),
])
def test_the_idle_share_applies_to_the_usable_cores(monkeypatch, after, expected):
    host(monkeypatch, affinity=2)
    serve(monkeypatch, stat_line(user=1000, idle=8000), after)
    assert _threads.decide_threads(64, watch_idle=True) == expected


def test_guest_ticks_are_not_counted_twice(monkeypatch):
    # Guest time is already part of user time: 100 busy and 100 idle ticks, so half of
    # the quota's 8 CPUs is idle; counting the guest ticks again would say a quarter.
    host(monkeypatch, quota=8)
    serve(monkeypatch, stat_line(user=1000, idle=8000, guest=500),
          stat_line(user=1100, idle=8100, guest=700))
    assert _threads.idle_cores(window=0.0) == pytest.approx(4.0)
    serve(monkeypatch, stat_line(user=1000, idle=8000, guest=500),
          stat_line(user=1100, idle=8100, guest=700))
    assert _threads.decide_threads(64, watch_idle=True) == 4


GOOD = stat_line(user=1000, idle=8000)


@pytest.mark.parametrize("first, second", [
    (None, None),                          # no /proc/stat (not Linux), or unreadable
    ("", ""),                              # an empty file
    ("cpu  1 2 3\n", "cpu  1 2 3\n"),      # too few columns for the idle ticks
    ("cpu  a b c d e\n", "cpu  a b c d e\n"),
    ("\x00\x7fgarbage\n", "\x00\x7fgarbage\n"),
    ("intr 1 2 3 4 5 6 7\n", "intr 2 3 4 5 6 7 8\n"),  # not the line of all cores
    ("cpu  1 2 -3 4 5\n", "cpu  1 2 -3 9 5\n"),
    (GOOD, None),                          # readable once, then not
    (GOOD, "cpu  1 2 x 4 5\n"),
    (GOOD, stat_line(user=900, idle=8000)),   # the ticks went backwards
    (GOOD, stat_line(user=2500, idle=7000)),  # the idle ticks went backwards
    (GOOD, GOOD),                          # no tick in the window
])
def test_an_odd_proc_stat_falls_back_to_the_usable_cores(monkeypatch, first, second):
    host(monkeypatch, quota=3)
    serve(monkeypatch, first, second)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _threads.decide_threads(64, watch_idle=True) == 3


@pytest.mark.parametrize("error", [PermissionError("denied"),
                                   UnicodeDecodeError("ascii", b"\xff", 0, 1, "not ascii")])
def test_an_unreadable_proc_stat_reads_as_none(monkeypatch, error):
    def refuse(*args, **kwargs):
        raise error

    # The module-level name shadows the builtin for _threads alone.
    monkeypatch.setattr(_threads, "open", refuse, raising=False)
    assert _threads._read_proc_stat() is None
    assert _threads._cpu_ticks() is None


def test_the_real_proc_stat():
    ticks = _threads._cpu_ticks()
    if os.path.exists("/proc/stat"):
        idle, total = ticks
        assert 0 <= idle <= total
    else:
        assert ticks is None
    # The real measurement: a share of the usable cores, the calling process asleep.
    idle = _threads.idle_cores()
    assert idle is None or 0 <= idle <= _threads._usable_cores() + 1e-9


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), (" 7 ", 7), ("100", 8)])
def test_the_environment_variable_sets_the_count(monkeypatch, value, expected):
    # Above the quota and the affinity mask as asked, but never above numba's 8 threads.
    host(monkeypatch, quota=2, affinity=2)
    monkeypatch.setenv(_threads.ENV_VAR, value)

    def not_watched():
        raise AssertionError("the idle cores were watched despite FAIRKM_NUM_THREADS")

    monkeypatch.setattr(_threads, "_read_proc_stat", not_watched)
    assert _threads.decide_threads(8) == expected
    assert _threads.decide_threads(8, watch_idle=True) == expected


def test_the_environment_variable_is_clipped_to_numbas_threads(monkeypatch):
    monkeypatch.setenv(_threads.ENV_VAR, str(numba.config.NUMBA_NUM_THREADS + 5))
    assert numba_thread_count() == numba.get_num_threads()
    with decided_threads() as used:
        assert used == numba.get_num_threads()


@pytest.mark.parametrize("value", ["0", "-1", "abc", "", "2.5", "4 threads"])
def test_a_bad_environment_variable_is_named(monkeypatch, value):
    monkeypatch.setenv(_threads.ENV_VAR, value)
    message = f"{_threads.ENV_VAR} must be a positive integer, got {value!r}"
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        _threads.decide_threads(8)
    with pytest.raises(ValueError, match=_threads.ENV_VAR):
        _threads.decide_threads(8, watch_idle=True)


def test_numba_threads_restores_the_count():
    before = numba.get_num_threads()
    with numba_threads(1) as used:
        assert used == numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with numba_threads(before + 10) as used:  # never more than numba has
        assert used == numba.get_num_threads() == before
    assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError), numba_threads(1):
        raise RuntimeError  # restored on the way out of an error too
    assert numba.get_num_threads() == before


# ------------------------------------------------------------- every kernel, every call


def parallel_kernels():
    """The names of every ``parallel=True`` kernel of fairkm, read from the source."""
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(
                        k.arg == "parallel" and getattr(k.value, "value", None) is True
                        for k in d.keywords) for d in node.decorator_list):
                found.add(node.name)
    return found


# Where each parallel kernel is called from Python, as the callers look it up (propose_moves
# runs inside the compiled minibatch_epoch, one parallel region per batch).
CALLED_AS = {
    "nearest_center": (_kernels, "nearest_center"),
    "cheapest_insertion": (_kernels, "cheapest_insertion"),
    "propose_moves": (_kernels, "minibatch_epoch"),
    "priced_pass": (_relax, "priced_pass"),
    "_soft": (_dual, "_soft"),
}


def test_every_parallel_kernel_is_watched_here():
    assert parallel_kernels() == set(CALLED_AS)


@pytest.fixture
def seen(monkeypatch):
    """numba's thread count at each call of a parallel kernel: ``{kernel: {counts}}``."""
    counts = {}

    def spy_on(kernel, original):
        def spy(*args):
            counts.setdefault(kernel, set()).add(numba.get_num_threads())
            return original(*args)
        return spy

    for kernel, (module, name) in CALLED_AS.items():
        monkeypatch.setattr(module, name, spy_on(kernel, getattr(module, name)))
    return counts


@pytest.fixture(scope="module")
def blobs():
    X, sensitive, _ = make_sensitive_blobs(1500, n_features=3, centers=3, n_values=(2, 3),
                                           cluster_std=2.0, random_state=0)
    return X, sensitive


def every_call(X, sensitive):
    """Run every fit, predict, score and fair_assignment that has parallel kernels; their models.

    The bounded assignments solve their relaxations by prices (``max_lp_variables`` below
    rows x clusters), whose passes are parallel, as is the dual where the prices do not
    certify the relaxation.
    """
    first = sensitive.iloc[:, 0]
    minibatch = FairKM(3, algorithm="minibatch", batch_size=256, max_deviation=0.05,
                       random_state=0).fit(X, sensitive_features=sensitive)
    exact = FairKM(3, random_state=0).fit(X, sensitive_features=sensitive)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # predict without the features: warned
        exact.predict(X)
    exact.predict(X, sensitive_features=sensitive)
    exact.score(X, sensitive_features=sensitive)
    bounded = BoundedKMeans(3, max_deviation=0.05, max_lp_variables=600, random_state=0).fit(
        X, sensitive_features=sensitive)
    bounded.predict(X, sensitive_features=sensitive)
    fair_assignment(X, exact.cluster_centers_, sensitive, max_deviation=0.02,
                    max_lp_variables=600)
    zgya = ZGYA(3, random_state=0).fit(X, sensitive_features=first)
    zgya.predict(X)
    blind = BlindKMeans(3, random_state=0).fit(X, sensitive_features=first)
    return {"FairKM minibatch": minibatch, "FairKM": exact, "BoundedKMeans": bounded,
            "ZGYA": zgya, "BlindKMeans": blind}


def test_every_parallel_kernel_runs_on_the_calls_count(monkeypatch, seen, blobs):
    if numba.get_num_threads() < 2:
        pytest.skip("numba has one thread: nothing to tell one count from another")
    before = numba.get_num_threads()
    monkeypatch.setenv(_threads.ENV_VAR, "1")
    models = every_call(*blobs)
    assert seen == {kernel: {1} for kernel in CALLED_AS}  # every one ran, on one thread
    assert numba.get_num_threads() == before  # every call put numba's count back
    for name, model in models.items():
        if name != "BlindKMeans":  # scikit-learn's own threads
            assert model.n_threads_ == 1, name


@pytest.mark.slow
def test_without_the_variable_every_kernel_runs_on_the_usable_threads(monkeypatch, seen, blobs):
    reads = serve_idle(monkeypatch)  # every core idle: the count is the usable threads
    usable = numba_thread_count()
    models = every_call(*blobs)
    assert seen == {kernel: {usable} for kernel in CALLED_AS}
    assert reads, "the mini-batch fit watched no idle core"
    for model in models.values():
        assert isinstance(model.n_threads_, int) and model.n_threads_ >= 1
        if not isinstance(model, BlindKMeans):
            assert model.n_threads_ == usable


def test_only_a_minibatch_fit_watches_the_idle_cores(monkeypatch, blobs):
    X, sensitive = blobs
    reads = serve_idle(monkeypatch)
    FairKM(3, algorithm="exact", random_state=0).fit(X, sensitive_features=sensitive)
    BoundedKMeans(3, max_deviation=0.1, random_state=0).fit(X, sensitive_features=sensitive)
    assert reads == []
    FairKM(3, algorithm="minibatch", batch_size=256, random_state=0).fit(
        X, sensitive_features=sensitive)
    assert len(reads) == 2  # once per fit: before and after the watching window


def test_minibatch_labels_do_not_depend_on_the_thread_count(monkeypatch, blobs):
    X, sensitive = blobs

    def fit():
        return FairKM(3, algorithm="minibatch", batch_size=256, random_state=0).fit(
            X, sensitive_features=sensitive)

    serve_idle(monkeypatch)
    usable = numba_thread_count()
    if usable < 2:
        pytest.skip("one usable core: nothing to compare one thread with")
    many = fit()
    assert many.n_threads_ == usable
    monkeypatch.setenv(_threads.ENV_VAR, "1")
    one = fit()
    assert one.n_threads_ == 1
    assert_array_equal(one.labels_, many.labels_)
    assert_array_equal(one.objective_history_, many.objective_history_)

    # An odd /proc/stat: the fit goes on with every usable core, quietly.
    monkeypatch.delenv(_threads.ENV_VAR)
    monkeypatch.setattr(_threads, "_read_proc_stat", lambda: "cpu  garbage\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        odd = fit()
    assert odd.n_threads_ == usable
    assert_array_equal(odd.labels_, many.labels_)


def test_a_bounded_assignment_does_not_depend_on_the_thread_count(monkeypatch):
    # Large enough that its sums reach the BLAS's threaded paths (a vector of more than
    # 10,000 rows) and the relaxation raises its bound by L-BFGS-B: on the code before the
    # BLAS was kept to one thread there, the bound, the cost and the gap changed in their
    # last bits between one and two threads.
    if numba_thread_count() < 2:
        pytest.skip("one usable core: nothing to compare one thread with")
    X, S, _ = make_sensitive_blobs(30_000, n_features=10, centers=8, n_values=(2, 5, 3),
                                   cluster_std=2.0, random_state=0)
    centers = X[np.random.default_rng(0).choice(X.shape[0], 10, replace=False)]

    def assign():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BoundNotMetWarning)
            return fair_assignment(X, centers, S, max_deviation=0.05)

    many = assign()
    assert not many.exact and not many.certified  # the bound was raised by the Lagrangian
    monkeypatch.setenv(_threads.ENV_VAR, "1")
    one = assign()
    assert_array_equal(one.labels, many.labels)
    for name in ("assignment_cost", "lower_bound", "lp_cost", "nearest_cost", "gap",
                 "violation"):
        assert np.float64(getattr(one, name)).tobytes() == np.float64(
            getattr(many, name)).tobytes(), name


FITS = {
    "FairKM": lambda X, S: FairKM(3, random_state=0).fit(X, sensitive_features=S),
    "FairKM minibatch": lambda X, S: FairKM(3, algorithm="minibatch", random_state=0).fit(
        X, sensitive_features=S),
    "BoundedKMeans": lambda X, S: BoundedKMeans(3, max_deviation=0.2, random_state=0).fit(
        X, sensitive_features=S),
    "ZGYA": lambda X, S: ZGYA(3, random_state=0).fit(X, sensitive_features=S.iloc[:, 0]),
    "BlindKMeans": lambda X, S: BlindKMeans(3, random_state=0).fit(X, sensitive_features=S),
}
PREDICTS = {
    "FairKM": lambda model, X, S: model.predict(X, sensitive_features=S),
    "FairKM score": lambda model, X, S: model.score(X, sensitive_features=S),
    "BoundedKMeans": lambda model, X, S: model.predict(X, sensitive_features=S),
    "ZGYA": lambda model, X, S: model.predict(X),
    "BlindKMeans": lambda model, X, S: model.predict(X),
}


@pytest.mark.parametrize("name", FITS)
def test_a_bad_environment_variable_stops_a_fit(monkeypatch, blobs, name):
    X, sensitive = blobs
    monkeypatch.setenv(_threads.ENV_VAR, "abc")
    with pytest.raises(ValueError, match="FAIRKM_NUM_THREADS must be a positive integer, "
                                         "got 'abc'"):
        FITS[name](X[:300], sensitive.iloc[:300])


@pytest.fixture(scope="module")
def fitted(blobs):
    """Each of FITS fitted once on 300 rows, on first use (a bounded fit takes seconds)."""
    X, sensitive = blobs
    models = {}

    def model(name):
        if name not in models:
            models[name] = FITS[name](X[:300], sensitive.iloc[:300])
        return models[name]

    return model


@pytest.mark.parametrize("value", ["0", "-1", "abc"])
@pytest.mark.parametrize("name", PREDICTS)
def test_a_bad_environment_variable_stops_a_predict(monkeypatch, blobs, fitted, name, value):
    X, sensitive = blobs
    model = fitted(name.split()[0])
    monkeypatch.setenv(_threads.ENV_VAR, value)
    with pytest.raises(ValueError, match="FAIRKM_NUM_THREADS must be a positive integer, "
                                         f"got '{value}'"):
        PREDICTS[name](model, X[:50], sensitive.iloc[:50])


def test_blind_kmeans_predict_runs_on_the_calls_count(monkeypatch, blobs):
    """scikit-learn's predict keeps its fit's count; BlindKMeans.predict decides its own."""
    import sklearn.cluster._kmeans as sklearn_kmeans

    X, sensitive = blobs
    model = BlindKMeans(3, random_state=0).fit(X[:300])
    expected = model.predict(X[:50])
    counts = []
    labels_of = sklearn_kmeans._labels_inertia_threadpool_limit

    def spy(*args, n_threads, **kwargs):
        counts.append(n_threads)
        return labels_of(*args, n_threads=n_threads, **kwargs)

    monkeypatch.setattr(sklearn_kmeans, "_labels_inertia_threadpool_limit", spy)
    for value in ("1", "2"):
        monkeypatch.setenv(_threads.ENV_VAR, value)
        assert_array_equal(model.predict(X[:50]), expected)
    assert counts == [1, min(2, numba.get_num_threads())]
    assert model.kmeans_._n_threads == model.n_threads_  # the fitted model is left alone


def test_a_bad_environment_variable_stops_fair_assignment(monkeypatch, blobs):
    X, sensitive = blobs
    monkeypatch.setenv(_threads.ENV_VAR, "-2")
    with pytest.raises(ValueError, match="FAIRKM_NUM_THREADS"):
        fair_assignment(X[:100], X[:3], sensitive.iloc[:100], max_deviation=0.2)


def test_the_dask_tasks_run_on_the_fits_count(monkeypatch):
    pytest.importorskip("distributed")
    from fairkm.dask import _tasks

    if numba.get_num_threads() < 2:
        pytest.skip("numba has one thread: nothing to tell one count from another")
    counts = []
    original = _kernels.nearest_center

    def spy(*args):
        counts.append(numba.get_num_threads())
        return original(*args)

    monkeypatch.setattr(_kernels, "nearest_center", spy)
    X = np.arange(12.0).reshape(6, 2)
    part = (X, np.zeros((6, 0), np.int64), np.zeros((6, 0)), np.array([0.0, 1, 1, 0, 1, 1]))
    centers = X[:2].copy()
    _tasks.nearest(part, centers, 1)
    _tasks.relabel_weightless(part, np.zeros(6, np.int64), centers, 1)
    assert counts == [1, 1]
