"""How many threads a fit uses: quota, affinity, FAIRKM_NUM_THREADS and the idle cores."""

import itertools
import os
import warnings

import joblib
import numba
import pytest
from numpy.testing import assert_array_equal

from fairkm import FairKM
from fairkm.cluster import _engine, _threads
from fairkm.datasets import make_sensitive_blobs


def stat_line(user=0, idle=0, iowait=0, guest=0):
    """The first line of /proc/stat with these tick counts (nice, system... at 0)."""
    return f"cpu  {user} 0 0 {idle} {iowait} 0 0 0 {guest} 0\n"


def serve(monkeypatch, *lines):
    """Make the /proc/stat reader return ``lines`` one call after another."""
    readings = iter(lines)
    monkeypatch.setattr(_threads, "_read_proc_stat", lambda: next(readings))


def serve_idle(monkeypatch):
    """Make /proc/stat show every core idle, however often it is read."""
    ticks = itertools.count(1000, 1000)
    monkeypatch.setattr(_threads, "_read_proc_stat", lambda: stat_line(idle=next(ticks)))


def host(monkeypatch, *, threads=64, quota=64, affinity=64):
    """Pretend a 64-core host: numba's threads, the quota's CPUs, the affinity mask's."""
    monkeypatch.setattr(numba, "get_num_threads", lambda: threads)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the host's cores, all of them
    monkeypatch.setattr(joblib, "cpu_count", lambda: quota)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(affinity)),
                        raising=False)


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    """Each test starts without FAIRKM_NUM_THREADS, whatever the shell running pytest set."""
    monkeypatch.delenv(_threads.ENV_VAR, raising=False)


@pytest.mark.parametrize("threads, quota, affinity, expected", [
    (64, 64, 2, 2),    # a 64-core host, the process pinned to 2 of them
    (64, 3, 64, 3),    # a container's quota of 3 CPUs
    (4, 64, 64, 4),    # numba started with 4 threads
    (64, 0, 64, 1),    # at least one, whatever a count says
])
def test_usable_threads_is_the_smallest_limit(monkeypatch, threads, quota, affinity, expected):
    host(monkeypatch, threads=threads, quota=quota, affinity=affinity)
    assert _threads.usable_threads() == expected


def test_usable_threads_without_an_affinity_mask(monkeypatch):
    host(monkeypatch, quota=5)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS, Windows
    assert _threads.usable_threads() == 5


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
    assert _threads.idle_threads() == expected


def test_guest_ticks_are_not_counted_twice(monkeypatch):
    # Guest time is already part of user time: 100 busy and 100 idle ticks, so half of
    # the quota's 8 CPUs is idle; counting the guest ticks again would say a quarter.
    host(monkeypatch, quota=8)
    serve(monkeypatch, stat_line(user=1000, idle=8000, guest=500),
          stat_line(user=1100, idle=8100, guest=700))
    assert _threads.idle_cores(window=0.0) == pytest.approx(4.0)
    serve(monkeypatch, stat_line(user=1000, idle=8000, guest=500),
          stat_line(user=1100, idle=8100, guest=700))
    assert _threads.idle_threads() == 4


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
        assert _threads.idle_threads() == 3


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
    host(monkeypatch, threads=8, quota=2, affinity=2)
    monkeypatch.setenv(_threads.ENV_VAR, value)

    def not_watched():
        raise AssertionError("the idle cores were watched despite FAIRKM_NUM_THREADS")

    monkeypatch.setattr(_threads, "_read_proc_stat", not_watched)
    assert _threads.usable_threads() == expected
    assert _threads.idle_threads() == expected


def test_the_environment_variable_is_clipped_to_numbas_threads(monkeypatch):
    monkeypatch.setenv(_threads.ENV_VAR, str(numba.config.NUMBA_NUM_THREADS + 5))
    assert _threads.idle_threads() == numba.get_num_threads()


@pytest.mark.parametrize("value", ["0", "-1", "abc", "", "2.5", "4 threads"])
def test_a_bad_environment_variable_is_named(monkeypatch, value):
    monkeypatch.setenv(_threads.ENV_VAR, value)
    message = f"{_threads.ENV_VAR} must be a positive integer, got {value!r}"
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        _threads.usable_threads()
    with pytest.raises(ValueError, match=_threads.ENV_VAR):
        _threads.idle_threads()


def test_numba_threads_restores_the_count():
    before = numba.get_num_threads()
    with _threads.numba_threads(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with _threads.numba_threads(before + 10):  # never more than numba has
        assert numba.get_num_threads() == before
    assert numba.get_num_threads() == before


@pytest.fixture
def chosen(monkeypatch):
    """The thread counts the fits' sessions chose, in order."""
    seen = []

    def spy():
        seen.append(_threads.idle_threads())
        return seen[-1]

    monkeypatch.setattr(_engine, "idle_threads", spy)
    return seen


def test_minibatch_labels_do_not_depend_on_the_thread_count(monkeypatch, chosen):
    X, sensitive, _ = make_sensitive_blobs(2000, n_values=(2, 3), random_state=0)

    def fit():
        return FairKM(3, algorithm="minibatch", random_state=0).fit(
            X, sensitive_features=sensitive)

    serve_idle(monkeypatch)
    usable = _threads.usable_threads()
    if usable < 2:
        pytest.skip("one usable core: nothing to compare one thread with")
    many = fit()
    assert chosen and set(chosen) == {usable}
    assert many.n_threads_ == usable  # recorded on the fit
    chosen.clear()
    monkeypatch.setenv(_threads.ENV_VAR, "1")
    one = fit()
    assert chosen and set(chosen) == {1}
    assert one.n_threads_ == 1
    assert_array_equal(one.labels_, many.labels_)
    assert_array_equal(one.objective_history_, many.objective_history_)

    # An odd /proc/stat: the fit goes on with every usable core, quietly.
    chosen.clear()
    monkeypatch.delenv(_threads.ENV_VAR)
    monkeypatch.setattr(_threads, "_read_proc_stat", lambda: "cpu  garbage\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        odd = fit()
    assert chosen and set(chosen) == {usable}
    assert_array_equal(odd.labels_, many.labels_)


def test_a_bad_environment_variable_stops_a_minibatch_fit(monkeypatch):
    X, sensitive, _ = make_sensitive_blobs(300, n_values=(2, 3), random_state=0)
    monkeypatch.setenv(_threads.ENV_VAR, "abc")
    with pytest.raises(ValueError, match="FAIRKM_NUM_THREADS must be a positive integer"):
        FairKM(3, algorithm="minibatch", random_state=0).fit(X, sensitive_features=sensitive)


def test_exact_sweeps_record_one_thread():
    """The exact engine's sweeps are serial: the fit says so."""
    X, sensitive, _ = make_sensitive_blobs(200, n_values=(2,), random_state=0)
    model = FairKM(3, algorithm="exact", random_state=0).fit(X, sensitive_features=sensitive)
    assert model.n_threads_ == 1
