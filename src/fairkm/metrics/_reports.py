"""Every measure in one call: :func:`fairness_report` and :func:`clustering_report`.

Their columns are the table's (:data:`~fairkm.metrics.MEASURES`), in its order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._checks import check_delta, check_eps, check_option, prepare_fairness
from ._docstrings import fill_docstring
from ._fairness import attribute_fairness
from ._quality import (
    centroid_deviation,
    clustering_objective,
    object_pair_deviation,
    silhouette,
)
from ._table import MEASURES
from ._wasserstein import CONVENTIONS

__all__ = ["clustering_report", "fairness_report"]

_QUALITY = [m for m in MEASURES.values() if m.kind == "quality"]
_FAIRNESS = [m.name for m in MEASURES.values() if m.kind == "fairness"]


@fill_docstring
def fairness_report(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    wasserstein="principled",
    eps=1e-20,
    delta=0.2,
):
    """Every fairness measure for every sensitive attribute, plus their mean.

    Parameters
    ----------
    %(labels)s
    %(sensitive_features)s
    %(numeric_sensitive)s
    %(wasserstein)s
    %(eps)s
    %(delta)s

    Returns
    -------
    pandas.DataFrame
        One row per attribute (indexed by name) and a last row ``"mean"``
        with the mean over attributes (the paper's "mean across S
        attributes"). Columns: ``AE`` (:func:`average_euclidean`), ``AW``
        (:func:`average_wasserstein`), ``ME`` (:func:`max_euclidean`), ``MW``
        (:func:`max_wasserstein`), ``balance`` (:func:`balance`), ``KL``
        (:func:`kl_fairness_error`) and ``MPV``
        (:func:`max_proportional_violation`). ``balance``, ``KL`` and ``MPV``
        are NaN for numeric attributes and their mean runs over the
        categorical ones.

    Notes
    -----
    Each categorical attribute costs one ``np.bincount`` over the combined
    (cluster, value) codes, and every measure then reads the small
    n_clusters x n_values table. Each numeric attribute costs one sort.

    Examples
    --------
    >>> from fairkm.metrics import fairness_report
    >>> report = fairness_report([0, 0, 1, 1], sensitive_features=[["a"], ["b"], ["a"], ["b"]])
    >>> report.loc["mean", ["AE", "balance"]].tolist()
    [0.0, 1.0]
    """
    check_option(wasserstein, "wasserstein", CONVENTIONS)
    check_eps(eps)
    check_delta(delta)
    codes, n_clusters, sf = prepare_fairness(labels, sensitive_features, numeric_sensitive)
    if "mean" in sf.names:
        raise ValueError(
            "sensitive_features has an attribute named 'mean', which would clash with the "
            "report's 'mean' row; rename it."
        )
    sizes = np.bincount(codes, minlength=n_clusters)
    table = np.full((sf.n_attributes, len(_FAIRNESS)), np.nan)
    for j in range(sf.n_attributes):
        scores = attribute_fairness(
            codes, n_clusters, sizes, sf, j, wasserstein=wasserstein, eps=eps, delta=delta
        )
        # A categorical-only measure stays NaN for a numeric attribute.
        table[j] = [scores.get(name, np.nan) for name in _FAIRNESS]
    index = pd.Index(sf.names, name="attribute")
    report = pd.DataFrame(table, index=index, columns=_FAIRNESS)
    report.loc["mean"] = report.mean(axis=0, skipna=True)
    return report


@fill_docstring
def clustering_report(
    X, labels, *, reference_labels=None, squared=True, sample_size=None, random_state=None
):
    """Clustering quality measures in one call.

    Parameters
    ----------
    %(X)s
    %(labels)s
    reference_labels : array-like of shape (n_samples,), default=None
        Labels of a reference clustering, e.g. S-blind K-Means; adds DevC and
        DevO.
    squared : bool, default=True
        Passed to :func:`clustering_objective`; ``False`` gives the published
        (unsquared) CO convention.
    sample_size : int, default=None
        Passed to :func:`silhouette`.
    random_state : int, RandomState instance or None, default=None
        Passed to :func:`silhouette`.

    Returns
    -------
    pandas.Series
        ``CO`` (:func:`clustering_objective`), ``SH`` (:func:`silhouette`)
        and, with reference labels, ``DevC`` (:func:`centroid_deviation`) and
        ``DevO`` (:func:`object_pair_deviation`).

    Examples
    --------
    >>> from fairkm.metrics import clustering_report
    >>> X = [[0.0], [2.0], [10.0], [12.0]]
    >>> report = clustering_report(X, [0, 0, 1, 1], reference_labels=[1, 1, 0, 0])
    >>> report.round(4).to_dict()
    {'CO': 4.0, 'SH': 0.798, 'DevC': 0.0, 'DevO': 0.0}
    """
    compute = {
        "CO": lambda: clustering_objective(X, labels, squared=squared),
        "SH": lambda: silhouette(X, labels, sample_size=sample_size, random_state=random_state),
        "DevC": lambda: centroid_deviation(X, labels, reference_labels),
        "DevO": lambda: object_pair_deviation(labels, reference_labels),
    }
    names = [m.name for m in _QUALITY if reference_labels is not None or not m.needs_reference]
    return pd.Series({name: compute[name]() for name in names}, dtype=np.float64)
