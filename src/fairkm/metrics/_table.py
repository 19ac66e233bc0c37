"""The one table of measures: names, functions and how to read them.

Every list of measure names (the reports' columns, the paper's tables, the
command line's report) reads :data:`MEASURES` instead of typing names, and
every report computes the fairness measures through it
(:func:`attribute_fairness`): a measure registered here is in all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._fairness import (
    average_euclidean,
    average_euclidean_of,
    average_wasserstein,
    average_wasserstein_of,
    balance,
    balance_of,
    kl_fairness_error,
    kl_fairness_error_of,
    max_euclidean,
    max_euclidean_of,
    max_proportional_violation,
    max_proportional_violation_of,
    max_wasserstein,
    max_wasserstein_of,
    mean_cluster_wasserstein,
    mean_cluster_wasserstein_of,
)
from ._quality import centroid_deviation, clustering_objective, object_pair_deviation, silhouette

__all__ = ["MEASURES", "Measure", "attribute_fairness", "fairness_names"]


@dataclass(frozen=True)
class Measure:
    """One evaluation measure and how to read its values.

    A frozen dataclass: each parameter is an attribute of the same name.

    Parameters
    ----------
    name : str
        Short name, as in the reports' columns and the FairKM paper ("AE").
    function : callable
        The public function that computes it.
    kind : {"quality", "fairness"}
        ``"quality"``: over the non-sensitive data ``X``; ``"fairness"``: per
        sensitive attribute, the function takes ``sensitive_features``.
    categorical_only : bool
        Defined for categorical attributes only (NaN for a numeric one).
    higher_is_better : bool
        Higher values are better (more coherent or fairer).
    needs_reference : bool
        Compares with a reference clustering (``reference_labels``).
    in_paper : bool
        One of the measures the FairKM paper reports.
    help : str
        One line for a reader of a report.
    of_attribute : callable or None, default=None
        For a fairness measure, its value for one attribute computed from the
        attribute's per-cluster pieces, which every fairness measure shares
        (``of_attribute(pieces) -> float``, ``pieces`` a
        ``fairkm.metrics._pieces.AttributePieces``: the contingency table, the
        clusters' distances to the dataset's mix); what
        :func:`~fairkm.metrics.fairness_report` calls. None for a quality
        measure.
    """

    name: str
    function: Callable
    kind: str
    categorical_only: bool
    higher_is_better: bool
    needs_reference: bool
    in_paper: bool
    help: str
    of_attribute: Callable | None = None


def _quality_measure(name, function, help, *, higher_is_better=False, needs_reference=False):
    # The paper reports every quality measure; none reads sensitive attributes.
    return Measure(name, function, "quality", categorical_only=False,
                   higher_is_better=higher_is_better, needs_reference=needs_reference,
                   in_paper=True, help=help)


def _fairness_measure(name, function, of_attribute, help, *, categorical_only=False,
                      higher_is_better=False, in_paper=True):
    return Measure(name, function, "fairness", categorical_only=categorical_only,
                   higher_is_better=higher_is_better, needs_reference=False,
                   in_paper=in_paper, help=help, of_attribute=of_attribute)


# In the reports' column order: quality first, then fairness.
MEASURES = {m.name: m for m in (
    _quality_measure(
        "CO", clustering_objective,
        "clustering objective: sum of squared distances of the points to their cluster "
        "mean (the K-Means objective); lower is tighter",
    ),
    _quality_measure(
        "SH", silhouette,
        "silhouette, in [-1, 1]; higher means better separated clusters",
        higher_is_better=True,
    ),
    _quality_measure(
        "DevC", centroid_deviation,
        "centroid deviation: distance between matched centres of this clustering and "
        "the S-blind K-Means one; 0 for the same clustering",
        needs_reference=True,
    ),
    _quality_measure(
        "DevO", object_pair_deviation,
        "object pair deviation: fraction of pairs of rows on which the two clusterings "
        "disagree about being together (1 - Rand index)",
        needs_reference=True,
    ),
    _fairness_measure(
        "AE", average_euclidean, average_euclidean_of,
        "average Euclidean distance between a cluster's mix of the attribute and the "
        "dataset's mix, weighted by cluster size; lower is fairer",
    ),
    _fairness_measure(
        "AW", average_wasserstein, average_wasserstein_of,
        "the same with the Wasserstein distance (total variation for a categorical "
        "attribute); lower is fairer",
    ),
    _fairness_measure(
        "CW", mean_cluster_wasserstein, mean_cluster_wasserstein_of,
        "mean over clusters, each counting once, of the Wasserstein distance (total "
        "variation for a categorical attribute) between a cluster's mix and the dataset's; "
        "lower is fairer",
        in_paper=False,
    ),
    _fairness_measure(
        "ME", max_euclidean, max_euclidean_of,
        "largest Euclidean distance over clusters; lower is fairer",
    ),
    _fairness_measure(
        "MW", max_wasserstein, max_wasserstein_of,
        "largest Wasserstein distance over clusters; lower is fairer",
    ),
    _fairness_measure(
        "balance", balance, balance_of,
        "smallest ratio of the least to the most frequent value in a cluster, over "
        "clusters (categorical attributes); higher is fairer, 1 is perfect",
        categorical_only=True, higher_is_better=True, in_paper=False,
    ),
    _fairness_measure(
        "KL", kl_fairness_error, kl_fairness_error_of,
        "sum over clusters of KL(dataset mix || cluster mix) (categorical attributes); "
        "lower is fairer",
        categorical_only=True, in_paper=False,
    ),
    _fairness_measure(
        "MPV", max_proportional_violation, max_proportional_violation_of,
        "largest excursion of a cluster's share of a value outside [0.8 p, p / 0.8], p "
        "being the dataset's share (categorical attributes); 0 is fair",
        categorical_only=True, in_paper=False,
    ),
)}


def fairness_names():
    """Return the names of the fairness measures, in the table's order.

    Returns
    -------
    list of str
        The reports' fairness columns.
    """
    return [m.name for m in MEASURES.values() if m.kind == "fairness"]


def attribute_fairness(pieces):
    """Every fairness measure of the table for one attribute, sharing its pieces.

    Parameters
    ----------
    pieces : fairkm.metrics._pieces.AttributePieces
        The attribute's per-cluster pieces.

    Returns
    -------
    dict of str to float
        Each fairness measure's name, in the table's order, to its value; NaN
        for a measure defined for categorical attributes only when the
        attribute is numeric.
    """
    return {
        m.name: m.of_attribute(pieces) if pieces.categorical or not m.categorical_only
        else np.nan
        for m in MEASURES.values() if m.kind == "fairness"
    }
