"""Small FairKM problems for hypothesis, and the checks several test modules share.

Test modules import from here (and from ``_reference``), never from each other.
"""

import warnings

import numpy as np
import pandas as pd
from hypothesis import assume
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from fairkm import FairKM
from fairkm.cluster._encoding import SensitiveEncoding
from fairkm.cluster._engine import Stats
from fairkm.exceptions import DataWarning
from fairkm.utils._sensitive import check_sensitive_features

from . import _reference

# cluster_weighting giving each exponent e of the cluster weight (|C|/n)^e.
WEIGHTING_OF_EXPONENT = {2: "paper", 1: "size", 0: "equal"}
EXPONENT_OF_WEIGHTING = {name: e for e, name in WEIGHTING_OF_EXPONENT.items()}


@st.composite
def problems(draw, max_n=18, weighted=True):
    """Small FairKM instances with every cluster non-empty in the starting labels.

    With ``weighted``, some instances carry sample weights (0 included), every
    starting cluster then having a positive weight.
    """
    k = draw(st.integers(1, 4))
    n = draw(st.integers(max(k, 2), max_n))
    d = draw(st.integers(1, 3))
    rows = draw(st.lists(
        st.lists(st.integers(-20, 20), min_size=d, max_size=d), min_size=n, max_size=n
    ))
    # Quarter steps make exact ties between candidate moves possible, as in real data.
    X = np.array(rows, dtype=np.float64) / 4.0
    n_cat = draw(st.integers(0, 3))
    categorical = [
        np.array(draw(st.lists(st.integers(0, draw(st.integers(0, 4))), min_size=n, max_size=n)))
        for _ in range(n_cat)
    ]
    n_num = draw(st.integers(0, 2))
    numeric = []
    for _ in range(n_num):
        col = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), float)
        assume(col.std() > 0)
        numeric.append(col)
    weights = draw(st.lists(
        st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_cat + n_num, max_size=n_cat + n_num
    ))
    lam = draw(st.sampled_from([0.0, 0.3, 10.0, 1e3, (n / k) ** 2]))
    cluster_exponent = draw(st.sampled_from([2, 1, 0]))
    labels = np.array(draw(st.permutations(np.arange(n) % k)), dtype=np.int64)
    order = np.array(draw(st.permutations(np.arange(n))), dtype=np.int64)
    sample_weight = None
    if weighted and draw(st.booleans()):
        sample_weight = np.array(draw(st.lists(
            st.sampled_from([0.0, 0.25, 1.0, 2.0, 3.0]), min_size=n, max_size=n
        )))
        assume(np.all(np.bincount(labels, weights=sample_weight, minlength=k) > 0))
        for col in numeric:
            mean = np.sum(sample_weight * col) / sample_weight.sum()
            assume(np.sum(sample_weight * (col - mean) ** 2) > 0)
    problem = _reference.Problem(
        X=X,
        categorical=categorical,
        numeric=numeric,
        cat_weights=np.array(weights[:n_cat]),
        num_weights=np.array(weights[n_cat:]),
        fairness_weight=lam,
        n_clusters=k,
        sample_weight=sample_weight,
        cluster_exponent=cluster_exponent,
    )
    return problem, labels, order


def sensitive_frame(problem):
    """The problem's sensitive attributes as a DataFrame: ints categorical, floats numeric."""
    columns = {f"c{j}": col for j, col in enumerate(problem.categorical)}
    columns.update({f"z{j}": col for j, col in enumerate(problem.numeric)})
    return pd.DataFrame(columns) if columns else None


def engine(problem, labels):
    """The estimator's kernel inputs for ``problem`` and statistics of ``labels``."""
    frame = sensitive_frame(problem)
    weights = np.concatenate([problem.cat_weights, problem.num_weights])
    n = problem.X.shape[0]
    sample_weight = problem.sample_weight
    total = n if sample_weight is None else float(sample_weight.sum())
    features = None if frame is None else check_sensitive_features(frame, n_samples=n)
    terms = SensitiveEncoding.from_features(features, total, sample_weight).terms(
        features, weights, n_rows=n, sample_weight=sample_weight,
        cluster_exponent=problem.cluster_exponent,
    )
    stats = Stats(problem.n_clusters, problem.X.shape[1], terms)
    stats.recompute(problem.X, terms, labels)
    return terms, stats


def assert_fit_ends_in_a_local_optimum(problem, **params):
    """Fit ``problem`` to ``tol=0`` and check the result against the reference."""
    frame = sensitive_frame(problem)
    weights = np.concatenate([problem.cat_weights, problem.num_weights])
    with warnings.catch_warnings():
        # Tiny random problems often hold a feature that happens to copy an attribute.
        warnings.simplefilter("ignore", DataWarning)
        # ... or fewer distinct rows than clusters (the fit says so).
        warnings.filterwarnings("ignore", "FairKM found .* distinct clusters", ConvergenceWarning)
        est = FairKM(
            problem.n_clusters,
            fairness_weight=problem.fairness_weight,
            cluster_weighting=WEIGHTING_OF_EXPONENT[problem.cluster_exponent],
            attribute_weights=weights if len(weights) else None,
            tol=0.0,
            max_iter=500,
            random_state=0,
            **params,
        ).fit(problem.X, sensitive_features=frame, sample_weight=problem.sample_weight)
    scale = 1.0 + abs(est.objective_)
    assert_allclose(est.objective_, _reference.objective(problem, est.labels_),
                    rtol=1e-9, atol=1e-9)
    assert np.all(np.diff(est.objective_history_) <= 1e-9 * scale)
    assert np.all(np.bincount(est.labels_, weights=problem.weights(),
                              minlength=problem.n_clusters) > 0)
    for i in range(len(est.labels_)):
        deltas = _reference.move_deltas(problem, est.labels_, i)
        assert deltas.min() >= -1e-9 * scale
