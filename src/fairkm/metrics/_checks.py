"""Input checks shared by the measures: labels, ``X``, weights, features, options.

Clusters are the distinct values that occur in ``labels``: the checks encode
them as codes 0..n_clusters-1 (sorted by value), and the measures only ever
see those codes.

Sample weights count a row of weight w as w rows. A row of weight zero is
dropped before anything else (so are the clusters and values only such rows
have), and unit weights are returned as ``None``, so every measure takes its
unweighted code path and gives bit-identical results.

Rows are paired as everywhere in fairkm (:mod:`fairkm.utils._inputs`): a pandas
``sensitive_features``, ``sample_weight`` or ``reference_labels`` goes with
the labels (or ``X``) by index label when the labels (or ``X``) are a pandas
object, and by position when they are an array or a list.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from fairkm.utils._inputs import paired, read_weights, row_index
from fairkm.utils._param_validation import StrOptions, check_param, unit_interval
from fairkm.utils._sensitive import (
    CATEGORICAL,
    SensitiveFeatures,
    check_sensitive_features,
    with_intersections,
)
from fairkm.utils._validation import check_sample_weight

from ._wasserstein import CONVENTIONS

__all__ = [
    "Rows",
    "check_conventions",
    "check_option",
    "check_reference",
    "check_same_rows",
    "check_sample_weight",
    "check_X",
    "drop_zero_weights",
    "encode_labels",
    "prepare_fairness",
    "prepare_read",
]


class Rows:
    """The index labels a measure's inputs are paired by: those of its first pandas input.

    Parameters
    ----------
    *candidates : tuple of (str, object)
        The inputs that carry the rows' labels, in order of precedence
        (``("X", X), ("labels", labels)``): the first pandas one gives the
        index; with none, inputs are paired by position.
    by_position : str, default="labels"
        What the messages name as holding the rows when no input is a pandas
        object (the measures check every length against ``labels``).
    """

    def __init__(self, *candidates, by_position="labels"):
        self.index, self.of = None, by_position
        for name, value in candidates:
            if row_index(value) is not None:
                self.index, self.of = row_index(value), name
                break

    def pair(self, value, name):
        """Return ``value`` in the rows' order (``fairkm.utils._inputs.paired``), with their index.

        Paired by position (with a warning) when ``value`` has the default
        index beside other labels; either way it comes back with the rows'
        index, so that the measures a report calls pair it again silently.
        """
        value = paired(value, self.index, name=name, of=self.of)
        # (paired leaves anything but a pandas input of the rows' length to the length checks)
        if (self.index is None or not isinstance(value, (pd.Series, pd.DataFrame))
                or len(value) != len(self.index) or value.index.equals(self.index)):
            return value
        return value.set_axis(self.index, axis=0)

    def weights(self, sample_weight, n_samples):
        """Return ``(weights, unit)`` paired with the rows (``utils._inputs.read_weights``).

        ``weights`` are the user's, checked (None for unit weights); ``unit``
        the power of two that brings them near 1.
        """
        return read_weights(sample_weight, n_samples, self.index, length_of=self.of)


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


def drop_zero_weights(weights, codes, *others):
    """Drop the rows of weight zero; re-encode the cluster codes.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,) or None
        From :func:`check_sample_weight`.
    codes : ndarray of shape (n_samples,), int64
        Cluster codes.
    *others : ndarray of shape (n_samples, ...) or SensitiveFeatures
        Further per-row data (``X``, reference codes, encoded features),
        subset alike. Reference codes must be passed through
        :func:`drop_zero_weights` on their own to be re-encoded.

    Returns
    -------
    weights : ndarray of shape (n_kept,) or None
        The positive weights, ``None`` if they are all 1.
    codes : ndarray of shape (n_kept,), int64
        Codes 0..n_clusters-1 of the clusters that keep a row.
    n_clusters : int
    *others
        Subset to the kept rows.
    """
    n_clusters = int(codes.max()) + 1
    if weights is not None and not (weights > 0).all():
        keep = weights > 0
        codes, n_clusters = _reencode(codes[keep])
        weights = weights[keep]
        others = [_subset_features(o, keep) if isinstance(o, SensitiveFeatures) else o[keep]
                  for o in others]
    # Weights all 1 (once brought to their unit) take the unweighted code, with or without
    # the rows of weight 0, so dropping those rows changes no bit.
    if weights is not None and (weights == 1.0).all():
        weights = None
    return (weights, codes, n_clusters, *others)


def _reencode(codes):
    used, inverse = np.unique(codes, return_inverse=True)
    return inverse.astype(np.int64, copy=False), len(used)


def _subset_features(sf, keep):
    # A value only zero-weight rows have is no longer observed: it is dropped
    # from the categories, as if those rows had never been there.
    columns, categories = [], []
    for kind, column, values in zip(sf.kinds, sf.columns, sf.categories, strict=True):
        if kind == CATEGORICAL:
            used, inverse = np.unique(column[keep], return_inverse=True)
            columns.append(inverse.astype(np.int64, copy=False))
            categories.append(values[used])
        else:
            columns.append(column[keep])
            categories.append(None)
    return SensitiveFeatures(names=list(sf.names), kinds=list(sf.kinds), columns=columns,
                             categories=categories)


def check_same_rows(sf, codes):
    """Raise ``ValueError`` unless the sensitive features have one row per label.

    Checked here rather than through ``n_samples=`` so that the message names
    labels, not X.
    """
    if sf.n_samples != codes.shape[0]:
        raise ValueError(
            f"sensitive_features has {sf.n_samples} rows but labels has {codes.shape[0]} "
            "entries; they must have the same length."
        )


def prepare_fairness(labels, sensitive_features, numeric_sensitive, sample_weight=None,
                     intersections=None):
    """Encode the labels, sensitive features and weights of a fairness measure.

    A pandas ``sensitive_features`` or ``sample_weight`` is paired with a
    pandas ``labels`` by index label (:class:`Rows`).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int
        Which attributes are numeric.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; see :func:`check_sample_weight`.
    intersections : sequence of sequence of str, default=None
        Combined attributes appended as further attributes
        (:func:`fairkm.utils._sensitive.with_intersections`).

    Returns
    -------
    codes : ndarray of shape (n_kept,), int64
        Cluster codes of the rows of positive weight.
    n_clusters : int
        Number of clusters with a row of positive weight.
    sf : fairkm.utils._sensitive.SensitiveFeatures
        The encoded attributes of those rows.
    weights : ndarray of shape (n_kept,) or None
        Their weights brought near 1 by a power of two (the measures are
        ratios of weighted sums, which that leaves as they are); ``None`` for
        unit weights.
    """
    rows = Rows(("labels", labels))
    sensitive_features = rows.pair(sensitive_features, "sensitive_features")
    codes, _ = encode_labels(labels)
    sensitive_features = with_intersections(
        sensitive_features, intersections, numeric=numeric_sensitive
    )
    sf = check_sensitive_features(sensitive_features, numeric=numeric_sensitive)
    return prepare_read(codes, sf, sample_weight, rows)


def prepare_read(codes, sf, sample_weight=None, rows=None):
    """:func:`prepare_fairness` on cluster codes and sensitive features already read.

    The weights are checked (paired by ``rows``, a :class:`Rows`; None pairs
    by position) and brought near 1; the rows of weight zero are dropped.
    Returns what :func:`prepare_fairness` returns.
    """
    check_same_rows(sf, codes)
    weights, unit = (rows or Rows()).weights(sample_weight, codes.shape[0])
    if weights is not None:
        weights = weights / unit
    weights, codes, n_clusters, sf = drop_zero_weights(weights, codes, sf)
    return codes, n_clusters, sf, weights


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
    check_param(name, value, [StrOptions(set(allowed))])


# The measures' conventions: AW/MW's Wasserstein convention, KL's floor (in [0, 1]) and
# MPV's slack (in [0, 1)).
_CONVENTIONS = {
    "wasserstein": [StrOptions(set(CONVENTIONS))],
    "eps": [unit_interval(high_closed=True)],
    "delta": [unit_interval()],
}


def check_conventions(**conventions):
    """Check the measures' conventions given by name: ``wasserstein``, ``eps``, ``delta``.

    Parameters
    ----------
    **conventions : object
        The values passed, by parameter name.
    """
    for name, value in conventions.items():
        check_param(name, value, _CONVENTIONS[name])
