"""Checks of the inputs (rows, weights, sensitive columns) shared by the estimators and measures.

They raise, they never encode; what a parameter accepts is declared in
``_param_validation.py``. The weights' unit is chosen here too
(:func:`weight_unit`): one rule for every place that scales weights.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = [
    "GEOMETRIC_MEAN",
    "LIGHTEST",
    "MEDIAN",
    "check_no_missing",
    "check_no_overflow",
    "check_sample_weight",
    "check_weight_values",
    "first_row",
    "labelled_rows",
    "name_row",
    "unit_of_summary",
    "weight_unit",
]


_ALL_ZERO = "sample_weight is zero for every row; at least one must be positive."


def check_no_missing(name, col, where="", *, row_name=None):
    """Raise ``ValueError`` naming the first missing value (NaN/None) of a sensitive column.

    The row is named ``row_name(i)`` (default: by its label when ``col`` is
    pandas with labels, :func:`labelled_rows`, else ``"row i"``, ``i`` its
    position), followed by ``where`` (" of partition 3", say).
    """
    found = first_row(_is_missing(col), where, row_name or labelled_rows(col))
    if found:
        raise ValueError(
            f"sensitive attribute {name!r} has a missing value (NaN/None) at {found[1]}; "
            "encode missing values as their own category or drop those rows."
        )


def name_row(i, where="", row_name=None):
    """Name the row at position ``i`` in a message: ``row_name(i)`` (or ``"row i"``), ``where``.

    ``where`` qualifies it (" of partition 3"); ``row_name`` numbers rows the
    caller's way (the command line's data rows count from 1).
    """
    return f"{f'row {i}' if row_name is None else row_name(i)}{where}"


def labelled_rows(data):
    """Return a ``row_name`` naming rows by their pandas index label, or None.

    A Series or DataFrame whose index (or an Index) is not the default ``0..n-1`` names the
    row at position ``i`` ``"row labelled 511 (position 276)"``: the label
    finds it with ``.loc``, the position with ``.iloc``. Anything else (an
    array, the default index) gets None, and :func:`name_row`'s ``"row i"``.
    """
    if isinstance(data, pd.Index):
        index = data
    elif isinstance(data, (pd.Series, pd.DataFrame)):
        index = data.index
    else:
        return None
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return None

    def row_name(i):
        label = index[i]
        label = label.item() if isinstance(label, np.generic) else label
        return f"row labelled {label!r} (position {i})"

    return row_name


def first_row(mask, where="", row_name=None):
    """Return ``(i, name)`` of the first row where ``mask`` holds (:func:`name_row`), or None."""
    if not mask.any():
        return None
    i = int(np.flatnonzero(mask)[0])
    return i, name_row(i, where, row_name)


def _is_missing(col):
    return np.asarray(pd.isna(col), dtype=bool)


def check_sample_weight(sample_weight, n_samples, *, length_of="X", row_name=None):
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
    row_name : callable, default=None
        Names the row of a bad weight (:func:`name_row`); a pandas Series of
        weights names it by its label (:func:`labelled_rows`).

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
    row_name = row_name or labelled_rows(sample_weight)
    try:
        array = np.asarray(sample_weight)
    except (TypeError, ValueError) as exc:  # ragged lists and other unconvertible input
        raise TypeError(f"sample_weight could not be converted to an array: {exc}.") from exc
    weights = check_weight_values(array, n_samples, length_of=length_of, row_name=row_name)
    if not (weights > 0).any():
        raise ValueError(_ALL_ZERO)
    if (weights == 1.0).all():
        return None
    return np.ascontiguousarray(weights)


def check_weight_values(array, n_samples=None, *, length_of="X", where="", row_name=None):
    """Return the weights of ``array`` as float64: real numbers, 1-D, finite and >= 0.

    The per-row rules of :func:`check_sample_weight`, which the Dask
    estimator applies to each partition (``where``: " of partition 3", after
    the row number); ``n_samples`` (None: not checked) is the length wanted;
    ``row_name`` names a bad row (:func:`name_row`).
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
            f"sample_weight must be finite and >= 0, got {array[i].item()!r} at "
            f"{name_row(i, where, row_name)}."
        )
    return weights


def check_no_overflow(X):
    """Refuse ``X`` whose squared distances would overflow float64 (inf costs, no error)."""
    # The largest |x| from the extremes: np.abs(X) would allocate a copy of X.
    largest = max(X.max(), -X.min()) if X.size else np.float64(0.0)
    with np.errstate(over="ignore"):
        square = float(largest * largest * X.shape[1])
    if not np.isfinite(square) or square > 1e300:
        raise ValueError(
            f"X is too large: its squared distances overflow float64 (largest |x| = "
            f"{float(largest):.3g}); rescale X, for instance with "
            "sklearn.preprocessing.StandardScaler."
        )


# ------------------------------------------------------------------ the weights' unit

# Positive weights must lie within this many powers of ten of each other: their
# squares (a move's price) and their sums then stay within float64's range.
_WEIGHT_DECADES = 100

#: The unit variants of :func:`weight_unit`.
GEOMETRIC_MEAN, LIGHTEST, MEDIAN = "geometric mean", "lightest", "median"


def _check_range(n_positive, low, high):
    """Refuse weights none of which is positive, or whose positive ones span 100 decades."""
    if n_positive == 0:
        raise ValueError(_ALL_ZERO)
    if high > low * 10.0**_WEIGHT_DECADES:
        raise ValueError(
            f"sample_weight spans more than {_WEIGHT_DECADES} powers of ten (from {low:.3g} to "
            f"{high:.3g}), beyond what float64 can price together; clip or drop the extreme "
            "rows."
        )


def unit_of_summary(n_positive, low, high, log2_sum):
    """Return :func:`weight_unit`'s geometric-mean unit from a summary of the weights.

    ``n_positive`` positive weights, the smallest ``low`` and the largest
    ``high`` of them, and ``log2_sum`` the sum of their base-2 logarithms:
    all the rule reads, so a Dask fit, whose partitions each send their share
    of them, gets the unit (and the refusals) of an in-memory fit.
    """
    _check_range(n_positive, low, high)
    return float(2.0 ** np.round(log2_sum / n_positive))


def weight_unit(weights, at=GEOMETRIC_MEAN):
    """Return the unit weights are read in: a computation sees ``weights / unit``.

    The one rule for every place that scales weights: the unit is taken from
    the positive weights, which must not all be zero nor span more than 100
    powers of ten (no unit keeps them all representable), and sums computed
    on ``weights / unit`` are multiplied by ``unit`` to be the user's. The
    variants differ only in where the unit sits, each for a reason:

    ``"geometric mean"`` (the fits, the measures, ``predict`` and ``score``)
        The power of two nearest the weights' geometric mean. Dividing by a
        power of two is exact in floating point, so a fit on ``weights / unit``
        is the fit on ``weights`` to the bit, every sum divided by ``unit``,
        while weights of 1e-300 or 1e155 would underflow or overflow in a
        move's price. The geometric mean, unlike the arithmetic one, cannot
        overflow on its way.
    ``"lightest"`` (the silhouette, DevO and the audit's K-Means reference)
        The lightest positive weight, so that it counts as one row. These
        count rows (a cluster of total weight 1 has no second row), so they
        need weights as counts: integer weights whose smallest is 1 are kept
        as they are, the measures of the repeated rows.
    ``"median"`` (the bounds' solver)
        The median positive weight (the lower one of an even count), so that
        a typical row weighs exactly 1 and weights all alike become exactly 1:
        the counting arguments of unit weights apply.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,) or None
        Checked weights (:func:`check_sample_weight`); None for unit weights.
    at : {"geometric mean", "lightest", "median"}, default="geometric mean"
        Where the unit sits among the positive weights.

    Returns
    -------
    float
        1.0 for unit weights (None).

    Raises
    ------
    ValueError
        When no weight is positive, or the positive ones span more than 100
        powers of ten.
    """
    if weights is None:
        return 1.0
    positive = weights[weights > 0]
    if positive.size == 0:
        raise ValueError(_ALL_ZERO)
    low, high = float(positive.min()), float(positive.max())
    if at == GEOMETRIC_MEAN:
        return unit_of_summary(positive.size, low, high, np.sum(np.log2(positive)))
    _check_range(positive.size, low, high)
    if at == LIGHTEST:
        return low
    if at == MEDIAN:
        return float(np.sort(positive)[(positive.size - 1) // 2])
    raise ValueError(f"at must be one of {[GEOMETRIC_MEAN, LIGHTEST, MEDIAN]}, got {at!r}.")
