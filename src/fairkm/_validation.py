"""Checks of parameters and inputs shared by the estimators: they raise, they never encode."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = ["check_int", "check_no_missing", "check_real"]


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
