"""What a fit allocates beside the data: no copy of X, compact snapshots of the labels.

A fit's peak allocations are measured with ``tracemalloc`` (NumPy's allocations are
traced) in a fresh process, so that nothing else this test run holds is counted.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_array_equal

from fairkm.cluster._encoding import SensitiveEncoding
from fairkm.cluster._engine import Session
from fairkm.utils._sensitive import check_sensitive_features
from fairkm.utils._validation import check_no_overflow

SRC = Path(__file__).resolve().parent.parent / "src"

# Wide rows (d=50) and four small attributes: X is most of the data, so a copy of X shows
# as a peak of at least X's size, while what the fit needs of its own (labels, codes,
# k-means++'s distances to its candidates) stays well below it.
_PEAK_OF_A_FIT = """
import json, tracemalloc, warnings
import numpy as np
from fairkm import FairKM
from fairkm.utils._inputs import read_fit

rng = np.random.default_rng(0)
n, d, k = 40_000, 50, 8
X = rng.normal(size=(n, d)) + rng.integers(0, k, n)[:, None] * 2.0
S = np.stack([rng.integers(0, m, n) for m in (2, 3, 5, 7)], axis=1)
warnings.simplefilter("ignore")
FairKM(k, random_state=0).fit(X[:2000], sensitive_features=S[:2000])  # compiled untraced
estimator = FairKM(k)
tracemalloc.start()
inputs = read_fit(estimator, X, None, S, None, estimator._check_X)
read_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
tracemalloc.start()
FairKM(k, random_state=0).fit(X, sensitive_features=S)
fit_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps(dict(x_bytes=X.nbytes, read_peak=read_peak, fit_peak=fit_peak,
                      shares=bool(np.shares_memory(inputs.X, X)))))
"""


@pytest.fixture(scope="module")
def peaks():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", _PEAK_OF_A_FIT], check=True,
                         capture_output=True, text=True, env=env, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_reading_float64_c_contiguous_x_copies_nothing(peaks):
    """The fit reads the user's X itself: validation and the overflow check copy nothing.

    The overflow check took ``np.abs(X)``, a full copy of X, at the start of every fit.
    """
    assert peaks["shares"]
    assert peaks["read_peak"] < 0.05 * peaks["x_bytes"]


def test_a_fit_allocates_well_under_a_copy_of_x(peaks):
    """A default fit's peak allocations stay under 0.6 X (a copy of X alone would be 1.0)."""
    assert peaks["fit_peak"] < 0.6 * peaks["x_bytes"]


def _refused(X):
    try:
        check_no_overflow(X)
    except ValueError:
        return True
    return False


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
              elements=st.one_of(st.floats(-1e160, 1e160),
                                 st.sampled_from([1e150, -1e150, 1e151, -1e151, 0.0, -0.0]))))
def test_overflow_check_matches_the_largest_absolute_value(X):
    """Refused exactly when ``max |x|^2 * d`` overflows, ``max |x|`` as ``np.abs`` finds it."""
    largest = np.max(np.abs(X))
    with np.errstate(over="ignore"):
        square = float(largest * largest * X.shape[1])
    assert _refused(X) == (not np.isfinite(square) or square > 1e300)


@pytest.mark.parametrize("k", [3, 300])
def test_walk_snapshots_are_compact_and_restore_the_labels(k):
    """A snapshot holds the labels in the smallest unsigned type; restoring gives them back."""
    rng = np.random.default_rng(1)
    n = 4 * k
    X = rng.normal(size=(n, 2))
    S = rng.integers(0, 3, n)
    features = check_sensitive_features(S, n_samples=n)
    encoding = SensitiveEncoding.from_features(features, n, None)
    terms = encoding.terms(features, np.ones(1), n_rows=n, cluster_exponent=0)
    labels = np.arange(n, dtype=np.int64) % k
    session = Session(X, terms, 0.5, labels.copy(), n_clusters=k, verbose=0)
    snapshot = session.snapshot()
    assert snapshot.dtype == (np.uint8 if k <= 256 else np.uint16)
    assert_array_equal(snapshot, labels)
    objective = session.objective
    session.labels[:] = rng.integers(0, k, n)
    session.restore(snapshot)
    assert session.labels.dtype == np.int64
    assert_array_equal(session.labels, labels)
    assert session.objective == objective
