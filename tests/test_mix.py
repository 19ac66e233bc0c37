"""A cluster's distance from the dataset's mix (``fairkm.metrics._mix``), against a recount.

The function the engine reports ``cluster_deviation_`` with, and the bounds check
reads numeric means with, fed the per-cluster sums a fit keeps.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from fairkm.metrics._mix import cluster_deviation

from . import _metrics_reference as ref
from .conftest import examples


@st.composite
def mixes(draw):
    n = draw(st.integers(2, 40))
    k = draw(st.integers(1, 5))
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    categorical = [np.array(draw(st.lists(st.integers(0, n_values - 1), min_size=n,
                                          max_size=n)))
                   for n_values in draw(st.lists(st.integers(1, 4), max_size=3))]
    numeric = [np.array(draw(st.lists(st.floats(-100, 100), min_size=n, max_size=n)))
               for _ in range(draw(st.integers(0, 2)))]
    weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n,
                                     max_size=n)))
    if not weights.any():
        weights[0] = 1.0
    # A numeric attribute that does not vary (over the rows that count) cannot be standardised.
    numeric = [column for column in numeric if np.ptp(column[weights > 0]) > 1e-3]
    return labels, categorical, numeric, weights, k


def sums(labels, categorical, numeric, weights, k):
    """The engine's per-cluster sums: value counts (V, k), sizes, proportions, offsets, z sums."""
    total = weights.sum()
    value_counts, value_prop, offsets = [], [], [0]
    for column in categorical:
        values = np.unique(column)
        codes = np.searchsorted(values, column)
        table = np.bincount(codes * k + labels, weights=weights,
                            minlength=len(values) * k).reshape(len(values), k)
        value_counts.append(table)
        value_prop.append(np.bincount(codes, weights=weights, minlength=len(values)) / total)
        offsets.append(offsets[-1] + len(values))
    num_sums = []
    for column in numeric:
        mean = np.dot(weights, column) / total
        z = (column - mean) / np.sqrt(np.dot(weights, (column - mean) ** 2) / total)
        z = z - np.dot(weights, z) / total
        num_sums.append(np.bincount(labels, weights=weights * z, minlength=k))
    return (np.concatenate(value_counts) if value_counts else np.zeros((0, k)),
            np.bincount(labels, weights=weights, minlength=k),
            np.concatenate(value_prop) if value_prop else np.zeros(0),
            np.array(offsets, dtype=np.int64),
            np.array(num_sums).reshape(len(numeric), k))


@settings(max_examples=examples(200))
@given(case=mixes())
def test_cluster_deviation_is_the_recount(case):
    labels, categorical, numeric, weights, k = case
    got = cluster_deviation(*sums(labels, categorical, numeric, weights, k))
    want = ref.cluster_deviation(labels, categorical, numeric, weights, k)
    assert got.shape == (len(categorical) + len(numeric), k)
    assert_allclose(got, want, rtol=1e-9, atol=1e-9)
