"""Evaluation measures for fair clustering (FairKM paper, section 5.2, and related work).

Every measure is a pure function of the data and the cluster labels, so it can
judge labels produced by any algorithm.

Quality, over the non-sensitive data ``X``:

- :func:`clustering_objective` (CO), :func:`silhouette` (SH);
- against a reference clustering (for instance S-blind K-Means):
  :func:`centroid_deviation` (DevC) and :func:`object_pair_deviation` (DevO).

Fairness, per sensitive attribute, comparing each cluster's distribution of
the attribute with the dataset's:

- :func:`average_euclidean` (AE), :func:`max_euclidean` (ME),
  :func:`average_wasserstein` (AW), :func:`max_wasserstein` (MW), and
  :func:`mean_cluster_wasserstein` (CW), where every cluster counts once;
- from other fair-clustering work: :func:`balance` (Chierichetti et al.),
  :func:`kl_fairness_error` (Ziko et al.) and
  :func:`max_proportional_violation` (Bera et al.);
- :func:`published_wasserstein`, the Wasserstein convention behind the
  paper's published AW/MW values.

:func:`fairness_report` and :func:`clustering_report` compute them in one call.

Equitable cost, per group of each categorical attribute: :func:`group_costs`
gives each group's mean clustering cost (its rows' mean squared distance to
their cluster's centre) and how much worse the worst-served group fares than
the best (the mean cost socially fair k-means minimises is the worst group's).

Guaranteed bounds, for any labelling: :func:`check_bounds` says whether every
cluster's mix lies within a stated distance of the dataset's, for every
attribute at once, and returns a :class:`BoundsCheck` (its worst cluster per
attribute).
:data:`MEASURES` is the table of all of them: one :class:`Measure` per name,
in the reports' column order, saying what kind of measure it is and how to
read it.

Model selection: :func:`make_fair_clustering_scorer` makes a scorer for
scikit-learn's searches that prefers the fairest clustering within a K-Means
cost budget.

Every measure takes ``sample_weight`` (a row of weight w counts as w rows),
and the fairness measures take ``intersections`` (combined attributes such as
``"sex & race"``). Rows are paired as in every fit: beside pandas labels (or
``X``), a pandas ``sensitive_features``, ``sample_weight`` or
``reference_labels`` goes with them by index label; beside arrays, by
position.

Clusters are the distinct values that occur in ``labels``: any values
(integers with gaps, negative integers, strings) are accepted, and a cluster
that no point belongs to is ignored by every measure. Weighted means give it
weight zero anyway, and maxima, minima and sums run over the non-empty clusters
only, because the distribution of an attribute in an empty cluster is
undefined (the FairKM objective drops empty clusters for the same reason).
"""

from ._bound_check import BoundsCheck, check_bounds
from ._bound_check import check_labels as check_labels
from ._bound_check import enforced as enforced
from ._bound_check import from_codes as from_codes
from ._bound_spec import Attribute as Attribute
from ._bound_spec import BoundSet as BoundSet
from ._bound_spec import balances_asked as balances_asked
from ._bound_spec import bounds_asked as bounds_asked
from ._bound_spec import bounds_from_features as bounds_from_features
from ._bound_spec import check_kind as check_kind
from ._bound_spec import no_bounds as no_bounds
from ._bound_spec import resolve_bounds as resolve_bounds
from ._fairness import (
    average_euclidean,
    average_wasserstein,
    balance,
    kl_fairness_error,
    max_euclidean,
    max_proportional_violation,
    max_wasserstein,
    mean_cluster_wasserstein,
)
from ._group_costs import cost_gaps as cost_gaps
from ._group_costs import costs_of_read as costs_of_read
from ._group_costs import group_costs
from ._mix import cluster_deviation as cluster_deviation
from ._mix import excess as excess
from ._pieces import AttributePieces as AttributePieces
from ._quality import centroid_deviation, clustering_objective, object_pair_deviation, silhouette
from ._reports import clustering_report, fairness_report
from ._reports import fairness_of_read as fairness_of_read
from ._reports import pieces_of_read as pieces_of_read
from ._scorer import make_fair_clustering_scorer
from ._table import MEASURES, Measure
from ._wasserstein import published_wasserstein

# Beside the public names, what the bounds' solver, the estimators and the audit read of a
# bound (BoundSet, balances_asked, bounds_asked, resolve_bounds, bounds_from_features,
# no_bounds, check_kind, check_labels, enforced, from_codes), the engine's
# cluster_deviation and excess (a cluster's distance from the mix, from its sums), the
# audit's fairness_of_read and pieces_of_read (many clusterings measured on one reading of
# their sensitive features), and the bounds' Attribute and AttributePieces (a bounded
# FairKM judges its repair by the measures' own pieces), and the reports' cost_gaps (a
# group_costs table summed up per attribute) and costs_of_read (group_costs on features
# already read): not in __all__, not public API.
__all__ = [
    "BoundsCheck",
    "MEASURES",
    "Measure",
    "average_euclidean",
    "average_wasserstein",
    "balance",
    "centroid_deviation",
    "check_bounds",
    "clustering_objective",
    "clustering_report",
    "fairness_report",
    "group_costs",
    "kl_fairness_error",
    "make_fair_clustering_scorer",
    "max_euclidean",
    "max_proportional_violation",
    "max_wasserstein",
    "mean_cluster_wasserstein",
    "object_pair_deviation",
    "published_wasserstein",
    "silhouette",
]


def __dir__():
    # The public names only: the solver's and the estimators' names above stay importable.
    return sorted(__all__)
