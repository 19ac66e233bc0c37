"""Running a call's parallel numba kernels on the count it decided.

The count comes from :func:`fairkm.utils._threads.decide_threads` (numba-free:
``FAIRKM_NUM_THREADS``, the CPU quota and affinity, the idle cores); here it is
applied to numba, whose thread count is a setting of the calling thread, and
to scikit-learn's OpenMP and the BLAS pools (:func:`fairkm.utils._threads.pool_threads`),
so a fit's scikit-learn calls (its seeding, a ``KMeans`` start) run on it too. This
package is the lowest that runs numba kernels (the bounds' own), so the
estimators of :mod:`fairkm.cluster` and :mod:`fairkm.dask` take the context
from here too.
"""

from __future__ import annotations

import contextlib

import numba

from fairkm.utils._threads import decide_threads, pool_threads

__all__ = ["decided_threads", "numba_threads", "thread_count"]


def thread_count(*, watch_idle=False):
    """Decide a call's thread count: :func:`~fairkm.utils._threads.decide_threads` under numba's.

    Raises
    ------
    ValueError
        If ``FAIRKM_NUM_THREADS`` is set to anything but a positive integer.
    """
    return decide_threads(numba.get_num_threads(), watch_idle=watch_idle)


@contextlib.contextmanager
def numba_threads(count):
    """Run the block with ``count`` of numba's threads, at most its current count; yield it.

    The calling thread's setting only, restored afterwards.
    """
    before = numba.get_num_threads()
    used = max(1, min(count, before))
    numba.set_num_threads(used)
    try:
        yield used
    finally:
        numba.set_num_threads(before)


@contextlib.contextmanager
def decided_threads(*, watch_idle=False):
    """Decide a call's thread count once and run the block with it; yield the count.

    numba's kernels and the OpenMP and BLAS pools (scikit-learn's ``KMeans``,
    ``kmeans_plusplus``, NumPy's matrix products) all run on it.

    ``watch_idle``: lower the count to the idle cores (a fit that runs
    mini-batch epochs, many parallel regions; see
    :mod:`fairkm.utils._threads`).

    Raises
    ------
    ValueError
        If ``FAIRKM_NUM_THREADS`` is set to anything but a positive integer.
    """
    with numba_threads(thread_count(watch_idle=watch_idle)) as used, pool_threads(used):
        yield used
