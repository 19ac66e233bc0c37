"""What parameters accept: scikit-learn's constraints, fairkm's shared lists, and the refusals."""

import math
from numbers import Integral

import numpy as np
import pytest
import sklearn
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils._param_validation import InvalidParameterError as SklearnInvalidParameterError

import fairkm.metrics
from fairkm import FairKM
from fairkm.exceptions import InvalidParameterError
from fairkm.utils._param_validation import (
    BOUND,
    NUMERIC_SENSITIVE,
    TOL,
    at_least,
    check_param,
    unit_interval,
)

ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=2), st.integers()),
)


def accepted(value, constraints):
    try:
        check_param("p", value, constraints, "f")
    except InvalidParameterError:
        return False
    return True


@given(value=ANYTHING, low=st.integers(-5, 5), span=st.none() | st.integers(1, 10))
def test_at_least_accepts_the_ints_in_range_and_no_more_than_int64(value, low, span):
    high = None if span is None else low + span
    top = 2**63 - 1 if high is None else high
    # scikit-learn's Interval(Integral) takes a Python bool for an int, as KMeans does.
    expected = isinstance(value, Integral) and low <= value <= top
    assert accepted(value, [at_least(low, high)]) == expected
    assert accepted(np.int64(low), [at_least(low, high)])
    assert not accepted(np.bool_(True), [at_least(0)])


@given(value=ANYTHING, low_open=st.booleans(), high_closed=st.booleans())
def test_unit_interval_opens_and_closes_its_ends(value, low_open, high_closed):
    # As scikit-learn reads a float: a Python bool or int is one too.
    number = isinstance(value, (int, float)) and math.isfinite(value)
    expected = number and ((value > 0) if low_open else (value >= 0)) and (
        (value <= 1) if high_closed else (value < 1))
    assert accepted(value, [unit_interval(low_open=low_open, high_closed=high_closed)]) == (
        expected)


def test_the_shared_lists_accept_what_they_say():
    assert accepted(0.0, TOL) and not accepted(math.inf, TOL) and not accepted(-1e-9, TOL)
    assert accepted(0.05, BOUND) and accepted({"sex": 0.1}, BOUND) and not accepted("5%", BOUND)
    assert all(accepted(v, NUMERIC_SENSITIVE) for v in ("auto", True, ["age"], [0]))
    assert not accepted("yes", NUMERIC_SENSITIVE)


def test_the_refusal_names_the_parameter_the_caller_and_the_value():
    with pytest.raises(InvalidParameterError) as refused:
        check_param("delta", 2.0, [unit_interval()], "max_proportional_violation")
    assert str(refused.value) == ("The 'delta' parameter of max_proportional_violation must be a "
                                  "float in the range [0.0, 1.0). Got 2.0 instead.")


def test_a_check_deep_inside_names_the_function_the_user_called():
    labels, groups = np.array([0, 1, 0, 1]), np.array(["a", "a", "b", "b"])
    with pytest.raises(InvalidParameterError,
                       match="The 'numeric_sensitive' parameter of fairness_report must be"):
        fairkm.metrics.fairness_report(labels, sensitive_features=groups,
                                       numeric_sensitive="yes")
    with pytest.raises(InvalidParameterError,
                       match=r"The 'tol' parameter of FairKM must be a float in the range "
                             r"\[0.0, inf\). Got inf instead."):
        FairKM(tol=math.inf).fit(np.zeros((4, 1)))


def test_the_refusal_is_scikit_learns_and_both_a_value_and_a_type_error():
    assert InvalidParameterError is SklearnInvalidParameterError
    for caught in (ValueError, TypeError):
        with pytest.raises(caught):
            check_param("tol", "small", TOL, "f")


def test_verbose_is_accepted_as_scikit_learn_accepts_it():
    for verbose in (True, False, 0, 2):
        FairKM(2, verbose=verbose, random_state=0).fit(np.arange(8.0)[:, None])
    with pytest.raises(InvalidParameterError, match="'verbose' parameter of FairKM"):
        FairKM(2, verbose=-1).fit(np.arange(8.0)[:, None])


def test_the_scikit_learn_version_is_one_whose_private_checks_are_known():
    # fairkm.utils._param_validation uses scikit-learn's private Interval, StrOptions and
    # validate_parameter_constraints; pyproject.toml bounds the versions where they were seen.
    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    assert (1, 6) <= (major, minor) < (1, 10)
