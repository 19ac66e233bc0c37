"""The edge: how every estimator and public function reads rows, attributes and weights.

The estimators (FairKM in memory and on Dask, BoundedKMeans, ZGYA, BlindKMeans)
and the functions that take rows (the measures, the audit, ``check_bounds``,
``fair_assignment``, the scorer) read their inputs here, so that one input
means one thing across the family:

- **Pairing.** pandas objects, and each Series of a dict of columns, are
  paired with ``X`` (or the labels) by their index labels: the same labels in
  another order are reordered, other labels are refused, and a default
  ``0..n-1`` index beside other labels is paired by position with a warning
  (:func:`paired`). ``X`` without an index (an array, a list) pairs by
  position, as it pairs a DataFrame; the Series of a dict must then share
  one index (:func:`fairkm.utils._sensitive.read_columns`).
- **Weights.** One rule (:func:`fairkm.utils._validation.check_sample_weight`) and
  one scale: the weights are brought near 1 by an exact power of two
  (:func:`read_weights`), so weights scaled alike give the same results.
- **Mistakes that run.** The sensitive attributes passed as ``y``
  (``fit(X, S)``), a feature copying an attribute, a many-valued number taken
  as categories and fewer distinct rows than clusters each get the same
  warning whichever member is called (:func:`warn_if_sensitive_as_y`,
  :func:`warn_on_fit`, :func:`warn_if_duplicate_centers`), pointing at the
  user's call (:func:`fairkm.utils._call_site.warn`).

This module sits with the raw columns at the bottom of the package: it imports
nothing of fairkm but ``_validation``, ``_data_checks`` and ``_call_site``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from fairkm.exceptions import DataWarning

from ._call_site import warn
from ._data_checks import warn_on_data, weight_feature_notes
from ._validation import (
    LIGHTEST,
    check_no_overflow,
    check_sample_weight,
    labelled_rows,
    weight_unit,
)

__all__ = [
    "FitInputs",
    "as_frequencies",
    "feature_names",
    "paired",
    "read_fit",
    "read_weights",
    "row_index",
    "warn_if_duplicate_centers",
    "warn_if_sensitive_as_y",
    "warn_on_fit",
]


def row_index(rows):
    """Return the index labels of a pandas ``rows`` (None for anything else: a list has none)."""
    return rows.index if isinstance(rows, (pd.DataFrame, pd.Series)) else None


def _head(index):
    return ", ".join(repr(v) for v in list(index[:3])) + (", ..." if len(index) > 3 else "")


def paired(value, index, *, name, of="X"):
    """Return a pandas ``value`` in the row order of ``index`` (anything else: as given).

    Parameters
    ----------
    value : object
        The rows' sensitive features, weights or labels, as the user gave them.
        A dict of columns has each of its Series paired on its own (an error
        names the attribute).
    index : pandas.Index or None
        The labels of the rows they go with (None: pair by position).
    name : str
        The parameter's name, for the messages.
    of : str, default="X"
        What ``index`` belongs to, for the messages.

    Raises
    ------
    ValueError
        When ``value``'s labels are not those of ``index``: pairing by
        position would give each row another row's values.

    Warns
    -----
    UserWarning
        When ``value`` has the default index ``0..n-1`` and ``index`` other
        labels (a filtered table beside a fresh column): the rows are paired
        by position, which is right only if both were made in the same order.
    """
    if isinstance(value, dict) and index is not None:
        return _paired_columns(value, index, name=name, of=of)
    if index is None or not isinstance(value, (pd.DataFrame, pd.Series)):
        return value
    own = value.index
    if own.equals(index) or len(own) != len(index):  # (a length is the caller's to refuse)
        return value
    whose = f"{of}'" if of.endswith("s") else f"{of}'s"
    if own.is_unique and index.is_unique and own.isin(index).all():
        return value.reindex(index)
    if isinstance(own, pd.RangeIndex) and own.equals(pd.RangeIndex(len(index))):
        warn(
            f"{name} has the default index 0..{len(own) - 1} but {whose} index has other labels "
            f"({_head(index)}): rows are paired by position. If {name} was taken from the same "
            f"table as {of}, select its rows the same way; to pair by position on purpose, "
            f"pass {name}.to_numpy().",
            UserWarning,
        )
        return value
    raise ValueError(
        f"{name} has an index that does not match {whose}: {_head(own)} against "
        f"{_head(index)}. Rows are paired by label, so give both the same index (or reset "
        "both: .reset_index(drop=True))."
    )


def _paired_columns(columns, index, *, name, of):
    """Return a dict of columns with each pandas Series paired with ``index`` by label.

    Each Series follows :func:`paired`'s rule on its own (the same labels in
    another order are reordered, the default ``0..n-1`` index pairs by
    position with a warning, other labels are refused, naming the
    attribute) and comes back carrying ``index``, so the table the dict makes
    has the rows' order; a column without an index (an array, a list) pairs by
    position, as it would in a DataFrame built beside ``X``.
    """
    out = {}
    for key, column in columns.items():
        if isinstance(column, pd.Series):
            label = f"{name}[{key!r}]"
            if len(column) != len(index):
                whose = f"{of}'" if of.endswith("s") else f"{of}'s"
                raise ValueError(
                    f"{label} has {len(column)} rows but {whose} index has {len(index)}; "
                    "each Series of the dict must hold the same rows."
                )
            column = paired(column, index, name=label, of=of)
            if not column.index.equals(index):  # paired by position, with its warning
                column = column.set_axis(index)
        out[key] = column
    return out


def read_weights(sample_weight, n_samples, index=None, *, length_of="X"):
    """Return ``(weights, unit)``: checked weights paired with the rows, and their scale.

    ``weights`` is a float64 array (None for unit weights, which take the
    unweighted code paths); ``unit`` the power of two that brings them near 1
    (:func:`fairkm.utils._validation.weight_unit`). A computation on
    ``weights / unit`` is the computation on ``weights`` to the bit, with every
    sum divided by ``unit``, and weights multiplied by any factor give the same
    ``weights / unit`` up to that power of two.
    """
    sample_weight = paired(sample_weight, index, name="sample_weight", of=length_of)
    # A bad weight's row is named by the label that finds it (the Series', else X's).
    row_name = labelled_rows(sample_weight if isinstance(sample_weight, pd.Series) else index)
    if isinstance(sample_weight, pd.Series):
        sample_weight = sample_weight.to_numpy()
    weights = check_sample_weight(sample_weight, n_samples, length_of=length_of,
                                  row_name=row_name)
    return weights, weight_unit(weights)


def as_frequencies(weights):
    """Return checked row weights read by their ratios, the lightest row counting as one row.

    The silhouette and DevO count a weight as that many rows (a cluster of
    total weight 1 has no second row), so they change when every weight is
    scaled; on these weights they do not, and integer weights whose smallest
    is 1 (counts) are kept as they are: the measures of the repeated rows
    (:func:`fairkm.utils._validation.weight_unit`'s ``"lightest"`` unit).
    """
    if weights is None:
        return None
    return weights / weight_unit(weights, LIGHTEST)


def warn_if_sensitive_as_y(owner, sensitive_features, y, *, method="fit"):
    """Warn when ``y`` was given but not ``sensitive_features``: ``fit(X, S)`` reads S as y.

    The warning points at the user's call (:func:`fairkm.utils._call_site.warn`).
    """
    if sensitive_features is None and y is not None:
        warn(
            f"{owner}.{method} got y but no sensitive_features: y is ignored, as in every "
            "clustering estimator, so this fit ignores the sensitive attributes. Pass them by "
            f"name: {method}(X, sensitive_features=S).",
            UserWarning,
        )


@dataclass(frozen=True)
class FitInputs:
    """What a ``fit`` reads: ``X`` validated, the attributes and weights paired with it."""

    X: np.ndarray
    sensitive_features: object  # as given, paired with X's rows (or None)
    sample_weight: np.ndarray | None  # the user's weights, checked (None: all 1)
    unit: float  # their power-of-two scale (1.0 without weights)

    @property
    def scaled_weight(self):
        """The weights brought near 1 (exactly ``sample_weight / unit``), or None."""
        return None if self.sample_weight is None else self.sample_weight / self.unit

    @property
    def n_positive(self):
        """The number of rows that take part in the fit (of positive weight)."""
        if self.sample_weight is None:
            return self.X.shape[0]
        return int(np.count_nonzero(self.sample_weight))


def read_fit(estimator, X, y, sensitive_features, sample_weight, validate_X, *,
             method="fit"):
    """Read a fit's inputs by the family's rules; return :class:`FitInputs`.

    ``validate_X`` validates ``X`` (the estimator's ``validate_data`` call);
    sensitive features and weights given as pandas objects are paired with
    ``X``'s index, the sensitive attributes given as ``y`` warn, and ``X``
    whose squared distances would overflow is refused.
    """
    owner = type(estimator).__name__
    warn_if_sensitive_as_y(owner, sensitive_features, y, method=method)
    index = row_index(X)
    sensitive_features = paired(sensitive_features, index, name="sensitive_features")
    X = validate_X(X)
    check_no_overflow(X)
    weights, unit = read_weights(sample_weight, X.shape[0], index)
    return FitInputs(X, sensitive_features, weights, unit)


#: The advice on a feature named like a row weight, to an estimator that takes weights.
PASS_AS_WEIGHT = ("pass it as sample_weight=X[{name!r}] and leave it out of X (a weight of 0 "
                  "is a dropped row)")


def warn_on_fit(X, feature_names, features, *, kinds_by_dtype, how_numeric=None,
                how_to_weight=PASS_AS_WEIGHT):
    """Warn about the fit's data as :meth:`fairkm.FairKM.fit` does (:class:`DataWarning`).

    A feature named like a row weight (a survey weight, a count of rows:
    :func:`fairkm.utils._data_checks.weight_feature_notes`) is named, with the
    advice ``how_to_weight`` (by default: pass it as ``sample_weight``).
    ``features`` are the sensitive features the fit read
    (:class:`fairkm.utils._sensitive.SensitiveFeatures`); None warns about no
    attribute. ``how_numeric`` says how to take a many-valued number as a
    quantity, for an estimator without ``numeric_sensitive``.
    """
    for note in weight_feature_notes(X, feature_names, how_to_weight=how_to_weight):
        warn(note, DataWarning)
    if features is None:
        return
    advice = {} if how_numeric is None else {"how_numeric": how_numeric}
    warn_on_data(X, feature_names, features, kinds_by_dtype=kinds_by_dtype, **advice)


def feature_names(estimator, n_features):
    """Return the names of ``X``'s columns as the estimator saw them (or x0, x1...)."""
    names = getattr(estimator, "feature_names_in_", None)
    return list(names) if names is not None else [f"x{j}" for j in range(n_features)]


def warn_if_duplicate_centers(owner, centers, n_clusters):
    """Warn when a fit ends with fewer distinct centres than clusters (duplicate rows).

    As scikit-learn's ``KMeans`` warns: with fewer distinct rows than
    ``n_clusters`` some clusters are copies of others, or empty. The warning
    points at the user's call.
    """
    centers = np.asarray(centers, dtype=np.float64)
    # Means of identical rows may differ in their last bits: compare to 12 digits.
    step = 1e-12 * (1.0 + float(np.max(np.abs(centers), initial=0.0)))
    distinct = np.unique(np.round(centers / step), axis=0).shape[0]
    if distinct < n_clusters:
        warn(
            f"{owner} found {distinct} distinct clusters, fewer than n_clusters={n_clusters}: "
            "X has fewer distinct rows (of positive weight) than clusters, so some centres "
            "coincide. Lower n_clusters.",
            ConvergenceWarning,
        )
