"""The bad-input sweep, kept: each case, the error type it must raise and a fragment of its message.

A case is a callable that must fail. They cover the estimators and the
measures; the command line's cases are in ``test_cli.py``.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from fairkm import FairKM
from fairkm.metrics import fairness_report, silhouette

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 2))
S = pd.DataFrame({"sex": np.arange(40) % 2, "age": RNG.uniform(20, 60, 40)})


def fitted():
    return FairKM(2, random_state=0).fit(X, sensitive_features=S)


CASES = [
    # X
    ("X with a NaN", lambda: FairKM(2).fit(np.r_[X[:-1], [[np.nan, 0]]]), ValueError, "NaN"),
    ("X of text", lambda: FairKM(2).fit([["a", "b"]] * 40), ValueError, "could not convert"),
    ("X too large", lambda: FairKM(2).fit(X * 1e160), ValueError, "X is too large"),
    ("X sparse", lambda: FairKM(2).fit(sparse.csr_matrix(X)), TypeError, "needs dense X"),
    ("fewer rows than clusters", lambda: FairKM(50).fit(X), ValueError,
     "n_samples=40 should be >= n_clusters=50"),
    # sensitive features
    ("sensitive_features too short", lambda: FairKM(2).fit(X, sensitive_features=S[:10]),
     ValueError, "has 10 rows but X has 40"),
    ("a missing sensitive value",
     lambda: FairKM(2).fit(X, sensitive_features=S.assign(sex=[None] + [1] * 39)),
     ValueError, "'sex' has a missing value"),
    ("unhashable sensitive values",
     lambda: FairKM(2).fit(X, sensitive_features=S.assign(sex=[[1]] * 40)),
     TypeError, "'sex' holds [1] at row 0"),
    ("numeric sensitive values that are not numbers",
     lambda: FairKM(2, numeric_sensitive=["sex"]).fit(
         X, sensitive_features=S.assign(sex=["m"] * 40)),
     ValueError, "'sex' is numeric but row 0 holds 'm'"),
    ("a constant numeric attribute",
     lambda: FairKM(2).fit(X, sensitive_features=S.assign(age=1.0)),
     ValueError, "'age' has zero variance"),
    ("a numeric attribute whose variance overflows",
     lambda: FairKM(2).fit(X, sensitive_features=S.assign(age=S["age"] * 1e300)),
     ValueError, "'age' is too large to standardise"),
    ("duplicate sensitive column names",
     lambda: FairKM(2).fit(X, sensitive_features=pd.DataFrame([[0, 1]] * 40,
                                                              columns=["a", "a"])),
     ValueError, "duplicate column names"),
    ("a scalar as sensitive features", lambda: FairKM(2).fit(X, sensitive_features=3),
     TypeError, "must be a 1-D or 2-D array-like"),
    ("intersected values that print alike",
     lambda: FairKM(2, intersections=[("a", "sex")]).fit(
         X, sensitive_features=S.assign(a=pd.Series([1, "1"] * 20, dtype=object))),
     ValueError, "'a' holds distinct values that print alike"),
    ("a ragged dict of columns",
     lambda: FairKM(2).fit(X, sensitive_features={"a": [1, 2], "b": [1]}),
     ValueError, "dict that does not make a table"),
    # sample weights
    ("negative sample weights",
     lambda: FairKM(2).fit(X, sample_weight=-np.ones(40)), ValueError,
     "sample_weight must be finite and >= 0"),
    ("sample weights all zero", lambda: FairKM(2).fit(X, sample_weight=np.zeros(40)),
     ValueError, "sample_weight is zero for every row"),
    ("fewer rows of positive weight than clusters",
     lambda: FairKM(3).fit(X, sensitive_features=S, sample_weight=np.r_[1.0, np.zeros(39)]),
     ValueError, "n_samples=1 (of positive weight) should be >= n_clusters=3"),
    ("sample weights spanning 300 powers of ten",
     lambda: FairKM(2).fit(X, sample_weight=np.r_[1e-150, np.full(39, 1e150)]),
     ValueError, "sample_weight spans more than 100 powers of ten"),
    ("sensitive features indexed unlike X",
     lambda: FairKM(2).fit(pd.DataFrame(X, index=np.arange(40) + 100),
                           sensitive_features=S.set_index(np.arange(40) + 7)),
     ValueError, "sensitive_features has an index that does not match X's"),
    ("a numeric attribute too narrow to standardise",
     lambda: FairKM(2).fit(X, sensitive_features=S.assign(age=(S["age"] - 40) * 1e-170)),
     ValueError, "'age' varies by too little to standardise"),
    # predict
    ("predict with other attributes",
     lambda: fitted().predict(X, sensitive_features=S.rename(columns={"sex": "gender"})),
     ValueError, "has columns ['gender', 'age'], but the model was fitted with"),
    ("predict with categories of another type that match nothing",
     lambda: fitted().predict(X, sensitive_features=S.assign(sex=["m", "f"] * 20)),
     ValueError, "'sex' was fitted with integer values"),
    ("predict with fewer features", lambda: fitted().predict(X[:, :1]), ValueError,
     "X has 1 features, but FairKM is expecting 2"),
    # measures
    ("fairness_report with labels of another length",
     lambda: fairness_report(np.zeros(10), sensitive_features=S), ValueError,
     "sensitive_features has 40 rows but labels has 10"),
    ("silhouette of a single cluster", lambda: silhouette(X, np.zeros(40)), ValueError,
     "needs between 2 and n_samples - 1 distinct labels, got 1"),
    ("fairness_report with a sensitive column named mean",
     lambda: fairness_report(np.arange(40) % 2, sensitive_features=S.rename(
         columns={"sex": "mean"})),
     ValueError, "named 'mean'"),
]


@pytest.mark.parametrize(("case", "call", "error", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, call, error, fragment):
    with pytest.raises(error) as caught:
        call()
    assert fragment in str(caught.value), f"{case}: {caught.value}"
