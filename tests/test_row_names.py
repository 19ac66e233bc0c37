"""A bad value's row is named by its pandas label (and position), so ``.loc`` finds it.

The independent reference: the label and position read from the message must find
the bad value in the user's own frame, by ``.loc`` and by ``.iloc``.
"""

import re

import numpy as np
import pandas as pd
import pytest

from fairkm import BoundedKMeans, FairKM
from fairkm.metrics import fairness_report
from fairkm.report import audit

NAMED = re.compile(r"row labelled (?P<label>.+?) \(position (?P<position>\d+)\)")


@pytest.fixture(params=["shuffled integers", "strings"])
def frames(request):
    rng = np.random.default_rng(0)
    n = 120
    labels = rng.permutation(np.arange(400, 400 + n))
    if request.param == "strings":
        labels = np.array([f"id{i}" for i in labels], dtype=object)
    index = pd.Index(labels)
    X = pd.DataFrame(rng.normal(size=(n, 2)), index=index, columns=["a", "b"])
    S = pd.DataFrame({"g": rng.choice(["u", "v"], n), "age": rng.normal(40, 9, n)}, index=index)
    w = pd.Series(rng.uniform(1, 2, n), index=index)
    clusters = pd.Series(np.arange(n) % 3, index=index)
    return X, S, w, clusters


def _found(message, frame):
    """The label and position the message names; they must name the same row of ``frame``."""
    match = NAMED.search(message)
    assert match, message
    position = int(match["position"])
    label = frame.index[position]
    assert match["label"] == repr(label.item() if isinstance(label, np.generic) else label)
    return label, position


def _fits():
    return [
        ("FairKM", lambda X, S, w: FairKM(3, random_state=0).fit(
            X, sensitive_features=S, sample_weight=w)),
        ("BoundedKMeans", lambda X, S, w: BoundedKMeans(3, max_deviation=0.3, random_state=0)
         .fit(X, sensitive_features=S, sample_weight=w)),
    ]


@pytest.mark.parametrize("position", [0, 57])
def test_a_missing_or_bad_value_is_named_by_its_label(frames, position):
    X, S, w, clusters = frames
    missing, infinite, negative = S.copy(), S.copy(), w.copy()
    missing.iloc[position, 0] = None
    infinite.iloc[position, 1] = np.inf
    negative.iloc[position] = -1.0
    calls = [
        *[(f"{name} missing", lambda f=f: f(X, missing, None), missing) for name, f in _fits()],
        *[(f"{name} inf", lambda f=f: f(X, infinite, None), infinite) for name, f in _fits()],
        *[(f"{name} weight", lambda f=f: f(X, S, negative), negative) for name, f in _fits()],
        ("report missing", lambda: fairness_report(clusters, sensitive_features=missing), missing),
        ("report weight", lambda: fairness_report(clusters, sensitive_features=S,
                                                  sample_weight=negative), negative),
        ("audit missing", lambda: audit(clusters, X, sensitive_features=missing), missing),
        ("audit weight", lambda: audit(clusters, X, sensitive_features=S,
                                       sample_weight=negative), negative),
    ]
    for what, call, frame in calls:
        with pytest.raises(ValueError) as error:
            call()
        label, at = _found(str(error.value), frame)
        assert at == position, what
        bad = frame.loc[label] if isinstance(frame, pd.Series) else frame.loc[label].iloc[:2]
        assert np.any(pd.isna(bad) | np.isinf(pd.to_numeric(bad, errors="coerce"))
                      | (pd.to_numeric(bad, errors="coerce") < 0)), what


def test_missing_features_in_the_audit_are_named_by_label(frames):
    X, S, _, clusters = frames
    holed = X.copy()
    holed.iloc[[9, 30], 1] = np.nan
    with pytest.raises(ValueError) as error:
        audit(clusters, holed, sensitive_features=S)
    label, at = _found(str(error.value), holed)
    assert at == 9 and np.isnan(holed.loc[label, "b"])


def test_rows_without_labels_keep_their_position():
    S = pd.DataFrame({"g": ["u", None, "v", "u"]})
    with pytest.raises(ValueError, match=r"at row 1;"):
        fairness_report([0, 0, 1, 1], sensitive_features=S)
    with pytest.raises(ValueError, match=r"got -1\.0 at row 2\."):
        fairness_report([0, 0, 1, 1], sensitive_features=S.fillna("v"),
                        sample_weight=np.array([1.0, 1.0, -1.0, 1.0]))
