"""Synthetic data whose fairness-blind clusters are unfair."""

import numbers

import numpy as np
import pandas as pd
from sklearn.datasets import make_blobs
from sklearn.utils import check_random_state

from fairkm.utils._param_validation import at_least, check_param, unit_interval

__all__ = ["make_sensitive_blobs"]


def make_sensitive_blobs(
    n_samples=1000,
    *,
    n_features=2,
    centers=4,
    n_values=(2, 5),
    correlation=0.6,
    numeric=0,
    cluster_std=1.0,
    random_state=None,
):
    """Gaussian blobs with sensitive attributes that follow the blobs.

    Each categorical attribute gives every blob a preferred value; a point
    takes its blob's preferred value with probability ``correlation`` and a
    uniformly random value otherwise. Each numeric attribute is the blob's
    index plus standard normal noise. So K-Means on ``X`` finds the blobs, and
    its clusters over-represent some groups: exactly the situation fair
    clustering is for.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points.
    n_features : int, default=2
        Dimension of ``X``.
    centers : int, default=4
        Number of blobs.
    n_values : sequence of int, default=(2, 5)
        Number of values of each categorical sensitive attribute (each >= 1).
    correlation : float in [0, 1], default=0.6
        Probability that a point takes its blob's preferred value.
    numeric : int, default=0
        Number of numeric sensitive attributes, appended after the categorical ones.
    cluster_std : float, default=1.0
        Standard deviation of the blobs.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Non-sensitive features.
    sensitive : pandas.DataFrame of shape (n_samples, len(n_values) + numeric)
        Categorical attributes ``"s0"``, ``"s1"``... as strings (``"v0"``,
        ``"v1"``...) and numeric ones ``"z0"``, ``"z1"``... as floats.
    y : ndarray of shape (n_samples,)
        Blob of each point.

    Examples
    --------
    >>> from fairkm.datasets import make_sensitive_blobs
    >>> X, sensitive, y = make_sensitive_blobs(100, n_values=(2, 3), random_state=0)
    >>> X.shape, list(sensitive.columns)
    ((100, 2), ['s0', 's1'])
    """
    for name, value, low in (("n_samples", n_samples, 1), ("n_features", n_features, 1),
                             ("centers", centers, 1), ("numeric", numeric, 0)):
        check_param(name, value, [at_least(low)])
    n_values = list(n_values)
    if any(not isinstance(m, numbers.Integral) or m < 1 for m in n_values):
        raise ValueError(f"n_values must be ints >= 1, got {n_values!r}.")
    check_param("correlation", correlation, [unit_interval(high_closed=True)])
    rng = check_random_state(random_state)
    X, y = make_blobs(
        n_samples=n_samples, n_features=n_features, centers=centers,
        cluster_std=cluster_std, random_state=rng,
    )
    columns = {}
    for j, m in enumerate(n_values):
        preferred = rng.randint(m, size=centers)
        follow = rng.random_sample(n_samples) < correlation
        codes = np.where(follow, preferred[y], rng.randint(m, size=n_samples))
        columns[f"s{j}"] = np.array([f"v{v}" for v in range(m)], dtype=object)[codes]
    for j in range(numeric):
        columns[f"z{j}"] = y + rng.standard_normal(n_samples)
    return X, pd.DataFrame(columns), y
