"""Checks of the inputs (rows, weights, sensitive columns) shared by the estimators and measures.

They raise, they never encode; what a parameter accepts is declared in ``_params.py``.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = [
    "check_no_missing",
    "check_no_overflow",
    "check_sample_weight",
    "check_weight_values",
    "weight_scale",
]


def check_no_missing(name, col, where=""):
    """Raise ``ValueError`` naming the first missing value (NaN/None) of a sensitive column.

    ``where`` follows the row number in the message (" of partition 3", say).
    """
    missing = _is_missing(col)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"sensitive attribute {name!r} has a missing value (NaN/None) at row {i}{where}; "
            "encode missing values as their own category or drop those rows."
        )


def _is_missing(col):
    return np.asarray(pd.isna(col), dtype=bool)


def check_sample_weight(sample_weight, n_samples, *, length_of="X"):
    """Validate sample weights; return a float64 array, or None for unit weights.

    One rule for the estimators and the measures: a row of weight w counts as
    w rows. A number stands for that weight on every row (as in
    scikit-learn); otherwise one finite, non-negative real number per row,
    not all zero. Booleans, strings and objects are refused rather than
    converted. All ones is returned as None, so unit weights take the
    unweighted code paths bit for bit.

    Parameters
    ----------
    sample_weight : float, array-like of shape (n_samples,) or None
    n_samples : int
        The number of rows the weights must match.
    length_of : str, default="X"
        What has ``n_samples`` rows, for the length message.

    Returns
    -------
    ndarray of shape (n_samples,), float64, or None

    Raises
    ------
    TypeError
        If the weights are not real numbers.
    ValueError
        On a shape or length mismatch, a negative or non-finite weight, or
        weights that are all zero.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, (str, bytes, bool, np.bool_)):
        raise TypeError(
            "sample_weight must be a number or an array-like of shape (n_samples,), got "
            f"{type(sample_weight).__name__} {sample_weight!r}."
        )
    if isinstance(sample_weight, numbers.Real):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    try:
        array = np.asarray(sample_weight)
    except (TypeError, ValueError) as exc:  # ragged lists and other unconvertible input
        raise TypeError(f"sample_weight could not be converted to an array: {exc}.") from exc
    weights = check_weight_values(array, n_samples, length_of=length_of)
    if not (weights > 0).any():
        raise ValueError("sample_weight is zero for every row; at least one must be positive.")
    if (weights == 1.0).all():
        return None
    return np.ascontiguousarray(weights)


def check_weight_values(array, n_samples=None, *, length_of="X", where=""):
    """Return the weights of ``array`` as float64: real numbers, 1-D, finite and >= 0.

    The per-row rules of :func:`check_sample_weight`, which the Dask
    estimator applies to each partition (``where``: " of partition 3", after
    the row number); ``n_samples`` (None: not checked) is the length wanted.
    """
    if array.dtype.kind not in "iuf":
        raise TypeError(
            f"sample_weight must hold real numbers, got an array of dtype {array.dtype}."
        )
    if array.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, got an array of shape {array.shape}.")
    if n_samples is not None and array.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {array.shape[0]} entries but {length_of} has {n_samples}; "
            "they must have the same length."
        )
    weights = array.astype(np.float64)
    bad = ~(np.isfinite(weights) & (weights >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_weight must be finite and >= 0, got {array[i].item()!r} at row {i}{where}."
        )
    return weights


def check_no_overflow(X):
    """Refuse ``X`` whose squared distances would overflow float64 (inf costs, no error)."""
    largest = np.max(np.abs(X)) if X.size else np.float64(0.0)
    with np.errstate(over="ignore"):
        square = float(largest * largest * X.shape[1])
    if not np.isfinite(square) or square > 1e300:
        raise ValueError(
            f"X is too large: its squared distances overflow float64 (largest |x| = "
            f"{float(np.max(np.abs(X))):.3g}); rescale X, for instance with "
            "sklearn.preprocessing.StandardScaler."
        )


# Positive weights must lie within this many powers of ten of each other: their
# squares (a move's price) and their sums then stay within float64's range.
_WEIGHT_DECADES = 100


def weight_scale(weights):
    """Return the power of two that brings the weights near 1 (1.0 for unit weights).

    Only the weights' ratios matter to a fit, and multiplying by a power of two
    is exact in floating point: a fit on ``weights / scale`` is the fit on
    ``weights`` to the bit, with every sum divided by ``scale``, while weights
    of 1e-300 or 1e155 would underflow or overflow in a move's price.

    Raises ``ValueError`` when the positive weights span more than 100 powers of
    ten (no scale keeps them all representable).
    """
    if weights is None:
        return 1.0
    positive = weights[weights > 0]
    low, high = float(positive.min()), float(positive.max())
    if high > low * 10.0**_WEIGHT_DECADES:
        raise ValueError(
            f"sample_weight spans more than {_WEIGHT_DECADES} powers of ten (from {low:.3g} to "
            f"{high:.3g}), beyond what float64 can price together; clip or drop the extreme "
            "rows."
        )
    # The geometric mean: the arithmetic one could overflow on its way.
    return float(2.0 ** np.round(np.mean(np.log2(positive))))
