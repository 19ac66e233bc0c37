"""How many of numba's threads a parallel phase should use on a machine others share.

A parallel region waits for its slowest thread. When other processes keep the
cores busy, one of the threads is descheduled for a time slice at every
region, and a phase of many regions (a mini-batch epoch has one per batch)
runs slower on two threads than on one. So before such a phase the engine
looks at how busy the cores are and uses only the ones that are idle. The
results never depend on the number of threads, so this changes only the time.
Watching the cores takes a few tens of milliseconds, so a fit does it once.
"""

from __future__ import annotations

import contextlib
import time

import numba

__all__ = ["idle_threads", "numba_threads"]

# How long to watch the cores: long enough for the kernel's tick counts to move
# (a tick is usually 10 ms), short against a phase that is worth running in parallel.
_WINDOW = 0.05


def _cpu_ticks():
    """Return ``(idle, total)`` ticks of all cores from /proc/stat (Linux), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return idle, sum(ticks)


def idle_cores(window=_WINDOW):
    """Return how many cores were idle over the next ``window`` seconds (None if unknown).

    The calling process sleeps meanwhile, so the busy cores are other work's.
    """
    before = _cpu_ticks()
    if before is None:
        return None
    time.sleep(window)
    after = _cpu_ticks()
    total = after[1] - before[1]
    if total <= 0:
        return None
    from os import cpu_count

    return (after[0] - before[0]) / total * (cpu_count() or 1)


def idle_threads():
    """Return how many of numba's threads to use: the idle cores, at least one."""
    threads = numba.get_num_threads()
    if threads <= 1:
        return threads
    idle = idle_cores()
    return threads if idle is None else max(1, min(threads, int(idle + 0.5)))


@contextlib.contextmanager
def numba_threads(count):
    """Run the block with ``count`` of numba's threads (the calling thread's setting only)."""
    before = numba.get_num_threads()
    numba.set_num_threads(min(count, before))
    try:
        yield
    finally:
        numba.set_num_threads(before)
