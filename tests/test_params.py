"""The declared parameter constraints (fairkm.utils._param_validation) against plain predicates."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairkm.exceptions import InvalidParameterError
from fairkm.utils._param_validation import (
    ArrayLike,
    Hidden,
    Instance,
    Integer,
    Options,
    Real,
    check_param,
)

ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=2), st.integers()),
)


def accepted(value, constraints):
    try:
        check_param("p", value, constraints)
    except InvalidParameterError:
        return False
    return True


@given(value=ANYTHING, low=st.integers(-5, 5), span=st.none() | st.integers(0, 10))
def test_integer_accepts_exactly_the_ints_in_range(value, low, span):
    high = None if span is None else low + span
    # Without a high, the engine's int64 is the limit.
    top = 2**63 - 1 if high is None else high
    expected = (type(value) is int and low <= value <= top)
    assert accepted(value, [Integer(low, high)]) == expected
    assert accepted(np.int64(low), [Integer(low, high)])
    assert not accepted(np.bool_(True), [Integer(0)])


@given(value=ANYTHING, low=st.floats(-5, 5), high=st.none() | st.floats(5, 10),
       low_open=st.booleans())
def test_real_accepts_exactly_the_finite_numbers_in_range(value, low, high, low_open):
    number = type(value) in (int, float)
    expected = (number and math.isfinite(value)
                and (value > low if low_open else value >= low)
                and (high is None or value < high))
    assert accepted(value, [Real(low, high, low_open)]) == expected


@given(value=ANYTHING)
def test_a_list_of_constraints_accepts_what_any_one_accepts(value):
    constraints = [None, Options("auto", "paper"), Integer(1), ArrayLike()]
    expected = (value is None or value in ("auto", "paper")
                or (type(value) is int and 1 <= value <= 2**63 - 1) or isinstance(value, list))
    assert accepted(value, constraints) == expected


def test_the_message_names_the_parameter_what_it_accepts_and_the_value():
    with pytest.raises(InvalidParameterError) as refused:
        check_param("fairness_weight", "big", [Options("auto", "paper"), Real()])
    assert str(refused.value) == ("fairness_weight must be 'auto', 'paper' or a finite float "
                                  ">= 0, got 'big'.")
    with pytest.raises(InvalidParameterError) as refused:
        check_param("max_unfairness", 1.0, [None, Real(0.0, 1.0, low_open=True)])
    assert str(refused.value) == "max_unfairness must be None or a float in (0, 1), got 1.0."
    # An array is shown by its shape, a long value briefly.
    with pytest.raises(InvalidParameterError, match=r"got an array of shape \(1000, 3\)\.$"):
        check_param("init", np.zeros((1000, 3)), [Options("k-means++")])
    with pytest.raises(InvalidParameterError) as refused:
        check_param("n_clusters", list(range(1000)), [Integer(1)])
    assert len(str(refused.value)) < 100


def test_a_hidden_option_is_accepted_but_not_offered():
    constraints = [Options("additive", "multiplicative"), Hidden(Options("deprecated"))]
    check_param("kind", "deprecated", constraints)
    with pytest.raises(InvalidParameterError) as refused:
        check_param("kind", "ratio", constraints)
    assert "deprecated" not in str(refused.value)


def test_a_bool_is_neither_an_int_nor_a_float_but_is_a_bool():
    for value in (True, np.bool_(False)):
        assert not accepted(value, [Integer(0)])
        assert not accepted(value, [Real()])
        assert accepted(value, [Instance(bool, "a bool")])
    assert not accepted(1, [Instance(bool, "a bool")])


def test_the_refusal_is_both_a_value_error_and_a_type_error():
    # Code catching either, as scikit-learn's own refusal allows, keeps working.
    for caught in (ValueError, TypeError):
        with pytest.raises(caught):
            check_param("tol", "small", [Real()])
