"""The weights' unit: one rule (``fairkm.utils._validation.weight_unit``) and its variants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairkm.dask._inputs import weight_unit as dask_weight_unit
from fairkm.dask._tasks import weight_summary
from fairkm.metrics._bound_spec import solver_weights
from fairkm.utils._inputs import as_frequencies, read_weights
from fairkm.utils._validation import GEOMETRIC_MEAN, LIGHTEST, MEDIAN, weight_unit

from .conftest import examples

weights_st = st.lists(
    st.one_of(st.just(0.0), st.floats(1e-30, 1e30)), min_size=1, max_size=40,
).filter(lambda w: any(v > 0 for v in w)).map(np.array)


def reference_unit(weights, at):
    """The unit by its definition, one weight at a time."""
    positive = sorted(float(w) for w in weights if w > 0)
    if at == GEOMETRIC_MEAN:
        return 2.0 ** round(math.fsum(math.log2(w) for w in positive) / len(positive))
    if at == LIGHTEST:
        return positive[0]
    return positive[(len(positive) - 1) // 2]


@settings(max_examples=examples(200))
@given(weights=weights_st, at=st.sampled_from([GEOMETRIC_MEAN, LIGHTEST, MEDIAN]))
def test_each_variant_is_its_definition(weights, at):
    unit = weight_unit(weights, at)
    expected = reference_unit(weights, at)
    if at == GEOMETRIC_MEAN:
        # The mean of the logarithms may differ in its last bit, so may its rounding at .5.
        assert unit in (expected, expected / 2, expected * 2)
        assert math.log2(unit).is_integer()
    else:
        assert unit == expected


@settings(max_examples=examples(100))
@given(weights=weights_st, power=st.integers(-40, 40))
def test_weights_scaled_by_a_power_of_two_read_alike(weights, power):
    scaled = weights * 2.0**power
    for at in (GEOMETRIC_MEAN, LIGHTEST, MEDIAN):
        np.testing.assert_array_equal(scaled / weight_unit(scaled, at),
                                      weights / weight_unit(weights, at))


def test_the_callers_read_the_rule():
    weights = np.array([0.0, 3.0, 5.0, 12.0, 7.0])
    assert read_weights(weights, 5)[1] == weight_unit(weights) == 8.0  # 2^round(log2(1260) / 4)
    np.testing.assert_array_equal(as_frequencies(weights), weights / 3.0)
    near_one, unit = solver_weights(weights)
    assert unit == 5.0 == weight_unit(weights, MEDIAN)
    np.testing.assert_allclose(near_one, weights / 5.0, rtol=2.0**-31)  # ratios to 32 bits
    assert weight_unit(None) == 1.0 and as_frequencies(None) is None


def test_dask_reads_the_rule_from_the_partitions_summaries():
    weights = np.array([0.0, 3.0, 5.0, 12.0, 7.0, 0.5])
    parts = [weights[:2], weights[2:2], weights[2:]]
    assert dask_weight_unit([weight_summary(p) for p in parts]) == weight_unit(weights)
    assert dask_weight_unit([weight_summary(np.ones(3))]) is None


@pytest.mark.parametrize("at", [GEOMETRIC_MEAN, LIGHTEST, MEDIAN])
@pytest.mark.parametrize(("weights", "match"), [
    (np.zeros(3), "zero for every row"),
    (np.array([1e-200, 1.0, 1e200]), "spans more than 100 powers of ten"),
])
def test_every_variant_refuses_alike(at, weights, match):
    with pytest.raises(ValueError, match=match):
        weight_unit(weights, at)
    with pytest.raises(ValueError, match=match):
        dask_weight_unit([weight_summary(weights)])
