"""Sums over rows whose last bits do not follow the BLAS's thread count (``fairkm.utils._sums``).

``np.dot`` of long vectors and ``weights @ X`` split their rows between the BLAS's
threads; the bounded assignment decides by such sums and the audit reports them,
so they are NumPy's one-thread loops instead: checked against exact sums, and
against themselves on one BLAS thread and two where ``np.dot`` itself differs.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from threadpoolctl import threadpool_limits

from fairkm.utils._sums import group_totals, weighted_row_sum, weighted_sum

from .conftest import examples

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=examples(100))
@given(data=st.data(), n=st.integers(1, 300), d=st.integers(1, 4))
def test_the_sums_are_the_exact_sums_rounded_about_once(data, n, d):
    weights = data.draw(arrays(np.float64, n, elements=st.floats(0, 1e3)))
    X = data.draw(arrays(np.float64, (n, d), elements=finite))
    products = weights[:, None] * X
    scale = np.abs(products).sum(axis=0) + 1e-300
    want = np.array([math.fsum(products[:, j]) for j in range(d)])
    assert np.all(np.abs(weighted_row_sum(X, weights) - want) <= 1e-12 * scale)
    assert abs(weighted_sum(X[:, 0], weights) - want[0]) <= 1e-12 * scale[0]


@settings(max_examples=examples(100))
@given(data=st.data(), n=st.integers(1, 200))
def test_rows_of_weight_0_change_not_even_the_rounding(data, n):
    values = data.draw(arrays(np.float64, n, elements=finite))
    weights = data.draw(arrays(np.float64, n, elements=st.floats(0, 1e3)))
    kept = weights > 0
    assert np.float64(weighted_sum(values, weights)).tobytes() == np.float64(
        weighted_sum(values[kept], weights[kept])).tobytes()
    assert weighted_sum(values) == float(np.sum(values))


@settings(max_examples=examples(100))
@given(data=st.data(), n=st.integers(0, 300), n_groups=st.integers(1, 6),
       m=st.sampled_from([None, 0, 1, 3]))
def test_group_totals_have_the_bits_of_add_at(data, n, n_groups, m):
    # np.add.at adds each group's rows one by one in row order: the plain reference. Values
    # spread over many magnitudes, so that another order of the additions shows in the bits.
    groups = data.draw(arrays(np.int64, n, elements=st.integers(0, n_groups - 1)))
    spread = st.one_of(finite, st.floats(-1e-6, 1e-6), st.just(-0.0))
    if m is None:
        values = data.draw(arrays(np.float64, n, elements=spread))
        want = np.zeros(n_groups)
    else:
        values = data.draw(arrays(np.float64, (n, m), elements=spread))
        want = np.zeros((n_groups, m))
    np.add.at(want, groups, values)
    got = group_totals(groups, values, n_groups)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    counts = np.zeros(n_groups, dtype=np.int64)
    np.add.at(counts, groups, 1)
    assert np.array_equal(group_totals(groups, None, n_groups), counts)


def test_the_sums_are_the_same_on_one_blas_thread_or_two():
    rng = np.random.default_rng(0)
    n = 1_000_000
    X, weights = rng.normal(size=(n, 3)), rng.random(n)
    got, dots = {}, {}
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            got[threads] = (weighted_row_sum(X, weights), weighted_sum(X[:, 0], weights))
            dots[threads] = (weights @ X, float(np.dot(weights, X[:, 0])))
    if all(np.array_equal(a, b) for a, b in zip(dots[1], dots[2], strict=True)):
        pytest.skip("the BLAS gives the same sums on one thread and two here: nothing to show")
    for a, b in zip(got[1], got[2], strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
