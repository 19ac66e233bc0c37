"""Input checks shared by the measures: labels, ``X``, reference labels, features, options.

Clusters are the distinct values that occur in ``labels``: the checks encode
them as codes 0..n_clusters-1 (sorted by value), and the measures only ever
see those codes.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils import check_array, check_scalar

from fairkm._encoding import check_sensitive_features

__all__ = [
    "check_delta",
    "check_eps",
    "check_option",
    "check_reference",
    "check_X",
    "encode_labels",
    "prepare_fairness",
]


def encode_labels(labels, name="labels"):
    """Validate cluster labels and map them to codes 0..n_clusters-1 (sorted by value).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels of any values.
    name : str, default="labels"
        The parameter's name, for error messages.

    Returns
    -------
    codes : ndarray of shape (n_samples,), int64
    n_clusters : int
        Number of distinct labels, i.e. of non-empty clusters.
    """
    arr = check_array(labels, ensure_2d=False, dtype=None, input_name=name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    codes, uniques = pd.factorize(arr, sort=True)
    if codes.min() < 0:
        # check_array lets None through in object arrays; factorize marks it with -1.
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"{name} has a missing value ({arr[i]!r}) at position {i}.")
    return codes.astype(np.int64, copy=False), len(uniques)


def check_X(X, n_labels):
    """Validate ``X`` as float64 with one row per label.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive data.
    n_labels : int
        Length of ``labels``.

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    if X.shape[0] != n_labels:
        raise ValueError(
            f"X has {X.shape[0]} samples but labels has {n_labels} entries; "
            "they must have the same length."
        )
    return X


def check_reference(reference_labels, n_samples):
    """Encode reference labels, checking their length against ``labels``.

    Parameters
    ----------
    reference_labels : array-like of shape (n_samples,)
        Labels of the reference clustering.
    n_samples : int
        Length of ``labels``.

    Returns
    -------
    codes : ndarray of shape (n_samples,), int64
    n_clusters : int
    """
    codes, n_clusters = encode_labels(reference_labels, name="reference_labels")
    if codes.shape[0] != n_samples:
        raise ValueError(
            f"reference_labels has {codes.shape[0]} entries but labels has {n_samples}; "
            "they must have the same length."
        )
    return codes, n_clusters


def prepare_fairness(labels, sensitive_features, numeric_sensitive):
    """Encode the labels and the sensitive features of a fairness measure.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int
        Which attributes are numeric.

    Returns
    -------
    codes : ndarray of shape (n_samples,), int64
    n_clusters : int
    sf : fairkm._encoding.SensitiveFeatures
    """
    codes, n_clusters = encode_labels(labels)
    # The length is checked here rather than through n_samples= so that the
    # message names labels, not X.
    sf = check_sensitive_features(sensitive_features, numeric=numeric_sensitive)
    if sf.n_samples != codes.shape[0]:
        raise ValueError(
            f"sensitive_features has {sf.n_samples} rows but labels has {codes.shape[0]} "
            "entries; they must have the same length."
        )
    return codes, n_clusters, sf


def check_option(value, name, allowed):
    """Raise ``ValueError`` unless ``value`` is one of the strings ``allowed``.

    Parameters
    ----------
    value : object
        The value passed.
    name : str
        The parameter's name, for the message.
    allowed : tuple of str
        The accepted values.
    """
    if not isinstance(value, str) or value not in allowed:
        options = " or ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be {options}, got {value!r}.")


def check_eps(eps):
    """Check KL's floor ``eps``: a real number in [0, 1].

    Parameters
    ----------
    eps : float
        The value passed.
    """
    check_scalar(eps, "eps", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="both")


def check_delta(delta):
    """Check MPV's slack ``delta``: a real number in [0, 1).

    Parameters
    ----------
    delta : float
        The value passed.
    """
    check_scalar(delta, "delta", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="left")
