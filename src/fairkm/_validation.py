"""Checks of parameters and inputs shared by the estimators: they raise, they never encode."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = [
    "check_int",
    "check_no_missing",
    "check_no_overflow",
    "check_real",
    "check_sample_weight",
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


def check_int(name, value, low):
    """Check that a parameter is an int (not a bool) and at least ``low``.

    Raises ``TypeError`` or ``ValueError`` naming the parameter and the value.
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}.")


def check_real(name, value, *, positive=False):
    """Check that a parameter is a finite real number, ``>= 0`` (or ``> 0`` if ``positive``).

    Raises ``TypeError`` or ``ValueError`` naming the parameter and the value.
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a float, got {value!r}.")
    ok = value > 0 if positive else value >= 0
    if not (np.isfinite(value) and ok):
        rule = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be a finite number {rule}, got {value!r}.")


def check_sample_weight(sample_weight, n_samples):
    """Validate sample weights; return a float64 array, or None for unit weights.

    Weights must be finite, non-negative and not all zero, one per row. All
    ones is returned as None, so unit weights take the unweighted code paths.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        weights = np.full(n_samples, float(sample_weight))
    else:
        try:
            weights = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"sample_weight must be numbers, got {type(sample_weight).__name__} ({exc})."
            ) from exc
    if weights.ndim != 1 or weights.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have one weight per sample ({n_samples}), got shape "
            f"{weights.shape}."
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        i = int(np.flatnonzero(~(np.isfinite(weights) & (weights >= 0)))[0])
        raise ValueError(
            f"sample_weight must be finite and >= 0, got {float(weights[i])!r} at row {i}."
        )
    if not np.any(weights > 0):
        raise ValueError(
            "sample_weight is zero for every sample; at least one weight must be positive."
        )
    if np.all(weights == 1.0):
        return None
    return np.ascontiguousarray(weights)


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
