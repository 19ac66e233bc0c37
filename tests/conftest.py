"""Settings and fixtures shared by the test modules.

- Hypothesis profiles, chosen by the ``HYPOTHESIS_PROFILE`` environment
  variable: ``ci`` (the default) runs every property test's own number of
  examples; ``dev`` a tenth of them, for a quick local pass
  (``HYPOTHESIS_PROFILE=dev pytest``). Neither has a deadline: the first
  example of many tests compiles numba kernels. A test states its count under
  ``ci`` as ``@settings(max_examples=examples(150))``.
- The real datasets (``shared_data``): the folder named by ``FAIRKM_DATA``
  when it is set, else ``../shared/data`` next to the checkout.
- ``people_csv``, the small people table of :mod:`tests._people` as a CSV
  file, and ``chromium``, a headless browser's path.
- ``weight_blobs`` and ``diabetes``, the data the weight and budget tests
  share.
- A filter on the ``asyncio`` logger that drops Dask's ``AllExit`` records
  (below, :class:`_DropDaskAllExit`).
- Under pytest-xdist (the default run has two workers), a numba cache per
  worker, below.
"""

import logging
import os
import shutil
from pathlib import Path

# numba's on-disk cache is not safe for two processes compiling new signatures of one kernel
# at once: each numbers its data file from the index it read, so both can write the same file,
# and a later load may get the other signature's code. The workers compile into their own
# folders (kept between runs, under .pytest_cache/), set before anything imports numba.
if os.environ.get("PYTEST_XDIST_WORKER") and "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = str(Path(__file__).resolve().parent.parent / ".pytest_cache"
                                        / "numba" / os.environ["PYTEST_XDIST_WORKER"])

import pandas as pd
import pytest
from hypothesis import settings
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from fairkm.datasets import make_sensitive_blobs

from ._people import make_people

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("dev", max_examples=10, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class _DropDaskAllExit(logging.Filter):
    """Drop "Task exception was never retrieved" records whose exception is Dask's ``AllExit``.

    ``distributed``'s gather stops at the first lost future and leaves its other
    waits to end in ``AllExit`` unobserved; asyncio logs each one, with its
    traceback, when the garbage collector frees the task, at any later moment
    of the run. On Python 3.11 formatting that traceback parses source
    (``ast.parse``, for the carets), and a collection that falls inside another
    ``ast.parse`` (numpydoc reading a class's source, numba finding a kernel's
    first line) makes the outer one fail with "SystemError: AST constructor
    recursion depth mismatch": the AST builder keeps its depth in shared state
    (CPython gh-106905). CI failed so once, in test_docstrings, 40 modules after
    the Dask tests. The records are Dask's own bookkeeping, not this project's.
    """

    def filter(self, record):
        exception = record.exc_info[1] if record.exc_info else None
        return type(exception).__name__ != "AllExit" \
            or not type(exception).__module__.startswith("distributed")


logging.getLogger("asyncio").addFilter(_DropDaskAllExit())


def examples(n):
    """Return the number of examples a test that runs ``n`` under ``ci`` runs now.

    ``n`` under ``ci``; under another profile, as many in proportion of its
    ``max_examples`` to ``ci``'s, and at least 2.
    """
    scale = settings.default.max_examples / settings.get_profile("ci").max_examples
    return max(2, round(n * scale))


# The real datasets are never committed: ../shared/data next to the checkout, or
# wherever FAIRKM_DATA (the variable fairkm.datasets reads too) points.
SHARED_DATA = Path(__file__).parents[2] / "shared" / "data"


NO_DATA = "the real data files are not at"


@pytest.fixture(scope="session")
def shared_data():
    """The read-only folder holding ``adult/`` and ``kinematics/``; skip when it is absent."""
    folder = Path(os.environ["FAIRKM_DATA"]) if os.environ.get("FAIRKM_DATA") else SHARED_DATA
    if not (folder / "adult" / "adult.data").is_file():
        pytest.skip(f"{NO_DATA} {folder} (set FAIRKM_DATA to the folder holding adult/ and "
                    "kinematics/, or put them in ../shared/data)")
    return folder


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Fold the skips for want of the real data into one summary line.

    pytest reports a skip raised by a fixture at each test's own line, so a
    run without the data would list every such test (``-ra``, the default
    here). Placed at the fixture instead, they share a location and a reason,
    and the summary says ``SKIPPED [n] tests/conftest.py: the real data files...``
    once.
    """
    report = yield
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3 \
            and NO_DATA in str(longrepr[2]):
        report.longrepr = (__file__, None, longrepr[2])
    return report


@pytest.fixture(scope="session")
def writable_data_home(shared_data, tmp_path_factory):
    """A writable copy of the real data (the loaders cache derived files next to the data)."""
    home = tmp_path_factory.mktemp("data_home")
    for name in ("adult", "kinematics"):
        shutil.copytree(shared_data / name, home / name)
        for path in (home / name).iterdir():
            path.chmod(0o644)
        (home / name).chmod(0o755)
    return home


@pytest.fixture
def people_csv(tmp_path):
    """``make_people()`` written to ``people.csv`` in the test's folder."""
    path = tmp_path / "people.csv"
    make_people().to_csv(path, index=False)
    return path


@pytest.fixture
def chromium():
    """The path of a Chromium browser; skip when none is installed."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run does it)")


@pytest.fixture
def one_thread():
    """Run the test with one OpenMP and one numba thread.

    On a busy machine KMeans' OpenMP threads (and FairKM's numba ones) wait for
    each other at every pass: a KMeans fit of diabetes' 442 rows took 3.3 s
    with 2 threads against 0.02 s with 1 (load 5 on 2 cores). For tests that
    measure no threading; FairKM's results do not depend on its thread count.
    """
    import numba
    from threadpoolctl import threadpool_limits

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with threadpool_limits(1, user_api="openmp"):
            yield
    finally:
        numba.set_num_threads(threads)


@pytest.fixture(scope="session")
def weight_blobs():
    """Overlapping blobs with two categorical attributes and a numeric one (z0)."""
    X, sensitive, _ = make_sensitive_blobs(
        1500, n_features=3, centers=4, n_values=(2, 4), numeric=1, cluster_std=2.5,
        random_state=0,
    )
    return X, sensitive


@pytest.fixture(scope="session")
def diabetes():
    """scikit-learn's diabetes data: sex categorical, age numeric, the rest features."""
    frame = load_diabetes(scaled=False, as_frame=True).frame
    sensitive = pd.DataFrame({"sex": frame["sex"].astype(int), "age": frame["age"]})
    X = StandardScaler().fit_transform(frame.drop(columns=["sex", "age", "target"]))
    return X, sensitive

