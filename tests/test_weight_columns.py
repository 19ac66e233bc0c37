"""A row weight left among the features is named at fit, by the names surveys give weights.

The names are those of the public survey files' codebooks: NHIS (WTFA_A),
NHANES (WTINT2YR, WTMEC2YR), BRFSS (_LLCPWT), CPS (ASECWT, WTFINL, PWSSWGT),
GSS (WTSSALL, WTSSPS), ESS (pspwght, dweight, pweight, anweight), IPUMS
(perwt, hhwt, sampweight), ACS (pwgtp, replicate pwgtp12), Adult (fnlwgt).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from fairkm import ZGYA, BlindKMeans, BoundedKMeans, FairKM
from fairkm.exceptions import DataWarning
from fairkm.utils._data_checks import weight_named

pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.one_thread

SURVEY_WEIGHTS = [
    "WTFA_A", "WTFA_C", "WTINT2YR", "WTMEC2YR", "_LLCPWT", "ASECWT", "WTFINL", "PWSSWGT",
    "WTSSALL", "WTSSPS", "pspwght", "dweight", "pweight", "anweight", "perwt", "hhwt",
    "sampweight", "pwgtp", "pwgtp12", "fnlwgt", "weight", "Weights", "wgt", "wt", "pwgt",
    "sample_weight", "survey weight", "wt_final", "final_weight", "person_wt", "count", "n",
]
NOT_WEIGHTS = ["height", "Height_cm", "twitter", "newt", "body_weight", "bodyweight",
               "weight_kg", "weightlifting", "width", "tweet", "network", "birth_wt_g", "x0"]


@pytest.mark.parametrize("name", SURVEY_WEIGHTS)
def test_survey_weight_names_are_weights(name):
    assert weight_named(name)


@pytest.mark.parametrize("name", NOT_WEIGHTS)
def test_other_names_are_not_weights(name):
    assert not weight_named(name)


def frame(weight_name, n=90, seed=0):
    rng = np.random.RandomState(seed)
    X = pd.DataFrame({"age": rng.normal(40, 10, n), "income": rng.normal(50, 15, n),
                      weight_name: rng.uniform(100, 3000, n)})
    return X, pd.Series(rng.randint(0, 2, n), name="sex")


def weight_warnings(make, X, S):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make().fit(X, sensitive_features=S)
    return [str(w.message) for w in caught
            if issubclass(w.category, DataWarning) and "row weight" in str(w.message)]


ESTIMATORS = {
    "FairKM": (lambda: FairKM(2, random_state=0), "sample_weight=X['WTFA_A']"),
    "BoundedKMeans": (lambda: BoundedKMeans(2, n_init=1, random_state=0),
                      "sample_weight=X['WTFA_A']"),
    "ZGYA": (lambda: ZGYA(2, random_state=0), "ZGYA takes no sample_weight"),
    "BlindKMeans": (lambda: BlindKMeans(2, random_state=0), "BlindKMeans takes no"),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_fit_names_a_weight_column_and_the_fix(name):
    make, advice = ESTIMATORS[name]
    X, S = frame("WTFA_A")
    found = weight_warnings(make, X, S)
    assert len(found) == 1
    assert "'WTFA_A'" in found[0] and advice in found[0]
    X, S = frame("height")
    assert weight_warnings(make, X, S) == []


def test_a_negative_column_is_no_weight():
    X, S = frame("weight")
    X.loc[0, "weight"] = -1.0
    assert weight_warnings(lambda: FairKM(2, random_state=0), X, S) == []
