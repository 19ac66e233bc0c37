"""How many threads a call's parallel kernels may use on a machine others share.

One decision per call (a ``fit``, a ``predict``, a ``score``, a
:func:`fairkm.bounds.fair_assignment`), as scikit-learn asks
``_openmp_effective_n_threads()`` once per fit: :func:`decide_threads` gives
the count, and :func:`fairkm.bounds.decided_threads` runs the call under it, so
every parallel numba kernel the call runs (the engine's, ``predict``'s, the
bounds') uses it. Plain Python: the numba side lives with the kernels.

The count is at most the smallest of numba's threads (the ``ceiling`` the
caller passes, ``numba.get_num_threads()``), the CPUs the container's quota
allows (``joblib.cpu_count()``, as scikit-learn reads it) and the CPUs of the
process's affinity mask. On a large host, a container limited to two CPUs
then runs two threads, not one per host core that the quota would throttle.

A parallel region waits for its slowest thread. When other processes keep the
cores busy, one of the threads is descheduled for a time slice at every
region, and a phase of many regions (a mini-batch epoch has one per batch)
runs slower on two threads than on one. So a fit that will run mini-batch
epochs (``watch_idle``) watches /proc/stat briefly (Linux) and lowers the
count to the usable cores that were idle; watching takes a few tens of
milliseconds, so other calls, which run a few regions, do not. Where
/proc/stat is missing or unreadable, the count is not lowered. The results
never depend on the number of threads, so this changes only the time.

The environment variable ``FAIRKM_NUM_THREADS`` (a positive integer) sets the
count instead: it is used as given, but never above the ceiling, and the idle
cores are not watched. Any other value raises a ``ValueError`` naming the
variable and the value when a call reads it.

scikit-learn's OpenMP loops (``KMeans``) and the BLAS under NumPy and SciPy
keep thread pools of their own, sized to every core. :func:`pool_threads` runs
a block with those pools at the decided count, so a call that reaches them
(a fit's seeding, :func:`fairkm.report.audit`'s reference ``KMeans``, a
scorer's) does not start more threads than the call decided; a pool already
held lower (``threadpoolctl.threadpool_limits`` around the call) stays lower.
:func:`decided_pool_threads` decides and applies the count in one step for
callers that run no numba kernel.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time

import joblib
from threadpoolctl import ThreadpoolController

__all__ = ["ENV_VAR", "decide_threads", "decided_pool_threads", "idle_cores", "pool_threads",
           "serial_blas"]

ENV_VAR = "FAIRKM_NUM_THREADS"

# How long to watch the cores: long enough for the kernel's tick counts to move
# (a tick is usually 10 ms), short against a phase that is worth running in parallel.
_WINDOW = 0.05

# The first line of /proc/stat counts user, nice, system, idle, iowait, irq, softirq,
# steal, guest and guest_nice ticks. Guest time is already counted in user and nice,
# so the total stops at steal; kernels before 2.6.11 had fewer columns.
_TICK_COLUMNS = 8
_IDLE, _IOWAIT = 3, 4


def _read_proc_stat():
    """Return the first line of /proc/stat, or None where it cannot be read."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return stat.readline()
    except (OSError, ValueError):  # missing (not Linux), unreadable, or not ASCII
        return None


def _cpu_ticks():
    """Return ``(idle, total)`` ticks of all cores since boot, or None if unknown."""
    line = _read_proc_stat()
    fields = line.split() if line else []
    if len(fields) <= _IDLE + 1 or fields[0] != "cpu":
        return None
    try:
        ticks = [int(f) for f in fields[1:_TICK_COLUMNS + 1]]
    except ValueError:
        return None
    if min(ticks) < 0:
        return None
    idle = ticks[_IDLE] + (ticks[_IOWAIT] if len(ticks) > _IOWAIT else 0)
    return idle, sum(ticks)


def _usable_cores():
    """Return how many CPUs this process may run on at once (at least one).

    ``joblib.cpu_count()`` honours the container's CPU quota; the affinity
    mask (``taskset``, a batch scheduler's CPU set) is taken as well.
    """
    counts = [joblib.cpu_count()]
    if hasattr(os, "sched_getaffinity"):
        counts.append(len(os.sched_getaffinity(0)))
    return max(1, min(counts))


def _threads_from_env():
    """Return the count ``FAIRKM_NUM_THREADS`` asks for, or None where it is not set."""
    value = os.environ.get(ENV_VAR)
    if value is None:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(
            f"The environment variable {ENV_VAR} must be a positive integer, got {value!r}."
        )
    return count


def idle_cores(window=_WINDOW):
    """Return how many usable cores were idle over the next ``window`` seconds.

    The share of idle ticks over the whole host is applied to the CPUs this
    process may use. The calling process sleeps meanwhile, so the busy cores
    are other work's. Returns None where /proc/stat gives no sensible reading
    (not Linux, an odd file, counters that went backwards).
    """
    before = _cpu_ticks()
    if before is None:
        return None
    time.sleep(window)
    after = _cpu_ticks()
    if after is None:
        return None
    idle, total = after[0] - before[0], after[1] - before[1]
    if total <= 0 or not 0 <= idle <= total:
        return None
    return idle / total * _usable_cores()


def decide_threads(ceiling, *, watch_idle=False):
    """Return how many threads a call's parallel kernels should use (at least one).

    ``FAIRKM_NUM_THREADS`` where set, else the CPUs the process may run on,
    lowered with ``watch_idle`` to the usable cores that are idle; never more
    than ``ceiling`` (numba's threads).

    Raises
    ------
    ValueError
        If ``FAIRKM_NUM_THREADS`` is set to anything but a positive integer.
    """
    wanted = _threads_from_env()
    threads = max(1, min(ceiling, _usable_cores() if wanted is None else wanted))
    if threads <= 1 or wanted is not None or not watch_idle:
        return threads
    idle = idle_cores()
    return threads if idle is None else max(1, min(threads, int(idle + 0.5)))


@functools.lru_cache(maxsize=1)
def _controller(n_modules):
    """Return a ThreadpoolController of the libraries loaded with ``n_modules`` modules."""
    return ThreadpoolController()


def _pools():
    """Return the ThreadpoolController of the process's OpenMP and BLAS libraries.

    Finding the libraries takes milliseconds (threadpoolctl walks the loaded
    shared objects); changing a limit through a controller takes microseconds.
    So one is kept until the process imports another module: scikit-learn's
    OpenMP, SciPy's BLAS and numba's OpenMP are loaded by the import of an
    extension module, often in the middle of the first fit, not by ``import
    fairkm``.
    """
    return _controller(len(sys.modules))


@contextlib.contextmanager
def pool_threads(count):
    """Run the block with each OpenMP and BLAS pool at ``count`` threads at most; yield it.

    A pool already below ``count`` keeps its size; every pool gets its size
    back afterwards.
    """
    controller = _pools()
    count = max(1, int(count))
    limits = {lib.filepath: min(count, lib.num_threads) for lib in controller.lib_controllers
              if lib.num_threads is not None}
    with controller.limit(limits=limits):
        yield count


@contextlib.contextmanager
def serial_blas():
    """Run the block with every BLAS pool at one thread (each gets its size back afterwards).

    For a loop of small BLAS calls between parallel numba kernels (SciPy's
    L-BFGS-B on a few hundred multipliers beside a kernel over every row): the
    calls are too small to gain from threads, and OpenBLAS's threads spin for a
    while after each call, taking the cores from the kernel's threads (on two
    cores the kernel ran 1.6-2.2x as long). Their sums, split between the threads,
    also made the last bits depend on the thread count.
    """
    with _pools().limit(limits=1, user_api="blas"):
        yield


# Up to this many rows a reference KMeans (the audit's, a scorer's, the trade-off's) runs on
# one thread unless FAIRKM_NUM_THREADS says otherwise: its parallel gain there is small, while
# beside busy processes each of its many short parallel regions waits for a descheduled
# thread (an audit of 959 rows took 7x longer on two threads). A count that depends on the
# rows, never on the load, keeps the reference the same to the bit on any load:
# scikit-learn's sums, and so its last bits, depend on the thread count.
SERIAL_ROWS = 50_000


@contextlib.contextmanager
def decided_pool_threads(*, n_rows=None):
    """Decide a call's thread count and run the block with the pools at it; yield the count.

    For calls that run scikit-learn or BLAS but no numba kernel (an audit's or
    a scorer's reference ``KMeans``, a silhouette): the count is that of
    :func:`decide_threads` with the usable CPUs as the ceiling, and 1 for a
    reference of at most ``SERIAL_ROWS`` rows (``n_rows``) when
    ``FAIRKM_NUM_THREADS`` is not set. The load never decides it.

    Raises
    ------
    ValueError
        If ``FAIRKM_NUM_THREADS`` is set to anything but a positive integer.
    """
    count = decide_threads(_usable_cores())
    if n_rows is not None and n_rows <= SERIAL_ROWS and _threads_from_env() is None:
        count = 1
    with pool_threads(count) as used:
        yield used
