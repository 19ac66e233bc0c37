"""``verbose`` takes booleans wherever it is a parameter: False is 0, True is 1.

The reference: the same fit with ``verbose=0`` and ``verbose=1`` (labels and printed lines).
"""

import inspect

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fairkm.cluster
import fairkm.dask
from fairkm import BoundedKMeans, FairKM
from fairkm.datasets import make_sensitive_blobs

ESTIMATORS_WITH_VERBOSE = [FairKM, fairkm.dask.FairKM]


def test_every_estimator_with_verbose_is_listed():
    classes = {getattr(module, name) for module in (fairkm, fairkm.cluster, fairkm.dask)
               for name in getattr(module, "__all__", ()) if inspect.isclass(getattr(module, name))}
    with_verbose = {c for c in classes if "verbose" in inspect.signature(c).parameters}
    assert with_verbose == set(ESTIMATORS_WITH_VERBOSE)


@pytest.mark.parametrize("estimator", ESTIMATORS_WITH_VERBOSE)
@pytest.mark.parametrize("flag", [False, True, np.False_, np.True_])
def test_verbose_takes_booleans(estimator, flag):
    estimator(3, verbose=flag)._validate_params()  # no ValueError


@pytest.mark.parametrize("flag, level", [(False, 0), (True, 1)])
def test_a_boolean_verbose_prints_and_fits_as_its_integer(capsys, flag, level):
    X, S, _ = make_sensitive_blobs(150, n_values=(2, 3), random_state=0)
    by_flag = FairKM(3, random_state=0, verbose=flag).fit(X, sensitive_features=S)
    printed = capsys.readouterr().out
    by_level = FairKM(3, random_state=0, verbose=level).fit(X, sensitive_features=S)
    assert printed == capsys.readouterr().out
    assert bool(printed) == flag
    assert_array_equal(by_flag.labels_, by_level.labels_)


@pytest.mark.parametrize("flag", [False, True, np.False_])
def test_bounded_progress_takes_booleans(flag):
    BoundedKMeans(3, max_deviation=0.2, progress=flag)._validate_params()
