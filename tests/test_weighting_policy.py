"""How much fairness counts, as objects that know what they need; warnings point at the user."""

import warnings

import numpy as np
import pandas as pd
import pytest

from fairkm import FairKM
from fairkm.cluster._weighting import (
    AbsoluteWeight,
    CostBudget,
    PaperWeight,
    RelativeWeight,
    UnfairnessTarget,
)
from fairkm.utils._call_site import warn


@pytest.mark.parametrize(("params", "policy"), [
    ({}, RelativeWeight(1.0)),
    ({"relative_weight": 4}, RelativeWeight(4.0)),
    ({"max_cost": 0.05}, CostBudget(0.05)),
    ({"max_unfairness": 0.5}, UnfairnessTarget(0.5)),
    ({"fairness_weight": 3}, AbsoluteWeight(3.0)),
    ({"fairness_weight": "paper"}, PaperWeight((100 / 4) ** 2, 4)),
])
def test_the_parameters_resolve_to_one_policy(params, policy):
    assert FairKM(4, **params)._policy(100) == policy


def test_each_policy_knows_what_it_needs():
    # Only an absolute weight is fitted without the S-blind reference, and keeps the paper's
    # cluster weighting with "auto"; only a cost budget limits the cost.
    assert [p.walks for p in (AbsoluteWeight(1.0), RelativeWeight(1.0), CostBudget(0.1),
                              UnfairnessTarget(0.5))] == [False, True, True, True]
    assert AbsoluteWeight(1.0).cluster_exponent("auto") == 2
    assert RelativeWeight(1.0).cluster_exponent("auto") == 0
    assert CostBudget(0.1).cluster_exponent("size") == 1
    assert CostBudget(0.1).cost_limit == 1.1
    assert RelativeWeight(1.0).cost_limit is None and AbsoluteWeight(1.0).cost_limit is None


def test_an_absolute_weight_follows_the_weights_unit():
    # The K-Means term is in the weights' unit: lambda is divided by it; the paper's
    # (n / k)^2 counts the rows the weights stand for; a relative weight reads only ratios.
    assert AbsoluteWeight(8.0).in_weight_unit(4.0, 10.0) == AbsoluteWeight(2.0)
    assert PaperWeight.of(100, 4).in_weight_unit(1.0, 100).weight == (100 / 4) ** 2
    assert PaperWeight.of(100, 4).in_weight_unit(2.0, 50.0).weight == (50.0 / 4) ** 2 * 2.0
    assert RelativeWeight(2.0).in_weight_unit(4.0, 10.0) == RelativeWeight(2.0)
    with pytest.raises(ValueError, match="fairness_weight='paper' overflows float64"):
        PaperWeight.of(10, 2).in_weight_unit(2.0**1000, 1e10)


def _staircase():
    rng = np.random.default_rng(1)
    position = np.repeat([0.0, 1.0, 2.0, 6.0, 7.0, 8.0], 60)
    X = np.column_stack([position, np.zeros_like(position)])
    side = (position > 4).astype(int)
    return X, pd.DataFrame({"s": np.where(rng.random(len(position)) < 0.75, side, 1 - side)})


def test_the_walks_warnings_point_at_the_users_call():
    X, sensitive = _staircase()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FairKM(2, max_cost=0.05, random_state=0).fit(X, sensitive_features=sensitive)
        FairKM(2, max_unfairness=1e-9, random_state=0).fit(X, sensitive_features=sensitive)
    said = [w for w in caught if "max_cost=0.05" in str(w.message)
            or "max_unfairness=1e-09" in str(w.message)]
    assert len(said) == 2
    assert {w.filename for w in said} == {__file__}


def test_warn_walks_out_of_the_package():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn("here")
    assert [(str(w.message), w.filename, w.category) for w in caught] == [
        ("here", __file__, UserWarning)]
