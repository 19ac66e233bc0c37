"""Equitable cost: how well a clustering serves each group of each sensitive attribute.

A row's cost is its squared Euclidean distance to its cluster's centre (its
term of the K-Means objective). :func:`group_costs` averages it over the rows
of each group (weighted by ``sample_weight``), the quantity behind
*equitable* fair clustering (each group's mean cost alike) and *socially
fair* k-means (the worst group's mean cost as low as possible).
:func:`cost_gaps` sums the table up per attribute: the worst and the best
group and the ratio of their mean costs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from fairkm.utils._sensitive import CATEGORICAL, check_sensitive_features, with_intersections

from ._checks import Rows, check_same_rows, check_X, drop_zero_weights, encode_labels
from ._docstrings import fill_docstring
from ._quality import centroids

__all__ = ["COST_GAP_COLUMNS", "cost_gaps", "costs_of_read", "group_costs",
           "read_group_costs"]

#: The columns of :func:`cost_gaps`, in order.
COST_GAP_COLUMNS = ("worst group", "worst group size", "worst group cost", "best group",
                    "best group size", "best group cost", "cost ratio")


def _centre_rows(labels, centers, n_features):
    """Return each row's index into ``centers``, checked, and ``centers`` as float64."""
    centers = check_array(centers, dtype=np.float64, input_name="centers")
    if centers.shape[1] != n_features:
        raise ValueError(
            f"centers has shape {centers.shape} but X has {n_features} features; give one "
            "row per cluster and one column per feature of X."
        )
    values = np.asarray(labels)
    if values.dtype.kind not in "iu":
        raise TypeError(
            "labels must be integers when centers is given (label c is the cluster whose "
            f"centre is centers[c]), got dtype {values.dtype}."
        )
    outside = (values < 0) | (values >= centers.shape[0])
    if outside.any():
        bad = values[outside][0]
        raise ValueError(
            f"labels holds {bad}, but centers has {centers.shape[0]} rows; with centers, "
            f"each label must be a row of centers (0 to {centers.shape[0] - 1})."
        )
    return values.astype(np.int64, copy=False), centers


@fill_docstring
def group_costs(X, labels, *, sensitive_features, sample_weight=None, centers=None,
                numeric_sensitive="auto", intersections=None):
    r"""Mean clustering cost of each group of each categorical sensitive attribute.

    A row's cost is its squared Euclidean distance to its cluster's centre,
    :math:`d_i = \lVert x_i - \mu_{c(i)} \rVert^2` (its term of the K-Means
    objective), and a group's mean cost is

    .. math::

        \bar d_g = \frac{\sum_{i \in g} w_i d_i}{\sum_{i \in g} w_i},

    with :math:`w_i = 1` without weights. The ratio of the largest
    :math:`\bar d_g` of an attribute to its smallest says how much worse the
    clustering serves one group than another (1 when every group is served
    alike, the aim of *equitable* clustering); the largest alone is what
    *socially fair* k-means minimises.

    Parameters
    ----------
    %(X)s
    %(labels)s
    %(sensitive_features)s
    %(sample_weight)s
    centers : array-like of shape (n_centers, n_features), default=None
        The clusters' centres, such as a fitted model's ``cluster_centers_``:
        the labels must then be integers, label ``c`` being the cluster whose
        centre is ``centers[c]`` (the costs add up to the model's
        ``inertia_``). None: each cluster's centre is the (weighted) mean of
        its rows, and the costs add up to
        :func:`clustering_objective`.
    %(numeric_sensitive)s
    %(intersections)s

    Returns
    -------
    pandas.DataFrame
        Indexed by (``attribute``, ``group``), the categorical attributes in
        column order then the intersections, each attribute's groups in
        sorted order. Columns: ``size`` (the group's number of rows, or with
        weights its total weight), ``cost`` (the sum of its rows' weighted
        costs), ``mean cost`` (``cost / size``) and ``vs best`` (its mean
        cost over the attribute's smallest: the attribute's largest ``vs
        best`` is its worst-to-best ratio; 1 for every group when every mean
        cost is 0, inf for a group of positive mean cost beside one of mean
        cost 0).

    Raises
    ------
    ValueError
        On inputs of different lengths, missing or infinite values in ``X``
        or ``centers``, ``centers`` of the wrong width, a label that is no row
        of ``centers``, or sensitive features with no categorical attribute.
    TypeError
        On labels that are not integers while ``centers`` is given, or inputs
        that are not array-like.

    See Also
    --------
    cost_gaps : Each attribute's worst and best group and the ratio.
    clustering_objective : The total cost (CO).

    Notes
    -----
    **Numeric attributes have no groups** and are left out of the table
    (groups cut from a number would depend on the cuts chosen, so none is
    made here). To see, say, age groups, cut the column yourself and pass
    the groups as categories (``pd.qcut(age, 4)`` for quartiles, or the
    bands that matter to you), or make every attribute categorical with
    ``numeric_sensitive=False``.

    **Groups and weights.** A group is a value that a row of positive weight
    holds: a value only rows of weight 0 hold, or an unused category of a
    pandas categorical, is no group (as in every measure). With the default
    centres a cluster's centre is the weighted mean of its rows of positive
    weight. In each attribute the groups partition the rows, so the
    size-weighted mean of the groups' mean costs is the total cost over the
    total weight: ``CO / sum(w)``.

    Examples
    --------
    >>> from fairkm.metrics import group_costs
    >>> X = [[0.0], [4.0], [10.0], [11.0]]
    >>> table = group_costs(X, [0, 0, 1, 1], sensitive_features=["a", "a", "b", "b"])
    >>> table[["mean cost", "vs best"]].to_numpy().tolist()
    [[4.0, 16.0], [0.25, 1.0]]
    """
    return read_group_costs(X, labels, sensitive_features=sensitive_features,
                            sample_weight=sample_weight, centers=centers,
                            numeric_sensitive=numeric_sensitive, intersections=intersections)


def read_group_costs(X, labels, *, sensitive_features, sample_weight=None, centers=None,
                     numeric_sensitive="auto", intersections=None, require_groups=True):
    """:func:`group_costs`; ``require_groups=False`` returns an empty table for no groups."""
    rows = Rows(("X", X), ("labels", labels))
    labels = rows.pair(labels, "labels")
    sensitive_features = rows.pair(sensitive_features, "sensitive_features")
    codes, _ = encode_labels(labels)
    X = check_X(X, codes.shape[0])
    weights, _ = rows.weights(sample_weight, codes.shape[0])
    at = None if centers is None else _centre_rows(labels, centers, X.shape[1])
    sensitive_features = with_intersections(sensitive_features, intersections,
                                            numeric=numeric_sensitive)
    sf = check_sensitive_features(sensitive_features, numeric=numeric_sensitive)
    check_same_rows(sf, codes)
    if require_groups and not sf.select(CATEGORICAL):
        raise ValueError(
            f"sensitive_features has no categorical attribute ({sf.names} are numeric): "
            "group costs need groups. Cut a numeric attribute into bands first (pd.qcut, "
            "say) or pass numeric_sensitive=False."
        )
    return _costs(X, codes, sf, weights, at)


def costs_of_read(X, labels, sf, sample_weight=None):
    """:func:`group_costs` (mean centres) on inputs already read, for many clusterings.

    ``X`` a float64 array, ``sf`` as
    :func:`fairkm.utils._sensitive.check_sensitive_features` returns it,
    ``sample_weight`` checked weights paired by position (or None). With no
    categorical attribute, the table is empty.
    """
    codes, _ = encode_labels(labels)
    return _costs(X, codes, sf, sample_weight)


def _costs(X, codes, sf, weights, at=None):
    """Return :func:`group_costs`' table from checked arrays; ``at``: given centres or None."""
    index = np.arange(codes.shape[0])
    weights, codes, n_clusters, X, sf, index = drop_zero_weights(weights, codes, X, sf, index)
    if at is None:
        residuals = X - centroids(X, codes, n_clusters, weights)[codes]
    else:
        rows_at, centers = at
        residuals = X - centers[rows_at[index]]
    cost = np.einsum("ij,ij->i", residuals, residuals)
    return _table(sf, weights, cost if weights is None else weights * cost)


def _table(sf, weights, weighted):
    """One row per (categorical attribute, group): size, cost, mean cost, vs best."""
    parts = []
    for j in sf.select(CATEGORICAL):
        groups, categories = sf.columns[j], sf.categories[j]
        size = np.bincount(groups, weights=weights, minlength=len(categories)).astype(np.float64)
        cost = np.bincount(groups, weights=weighted, minlength=len(categories))
        mean = cost / size
        best = mean.min()
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(mean == best, 1.0, mean / best)
        index = pd.MultiIndex.from_arrays(
            [np.full(len(categories), sf.names[j], dtype=object),
             np.asarray(categories, dtype=object)], names=["attribute", "group"])
        parts.append(pd.DataFrame({"size": size, "cost": cost, "mean cost": mean,
                                   "vs best": ratio}, index=index))
    if parts:
        return pd.concat(parts)
    return pd.DataFrame(columns=["size", "cost", "mean cost", "vs best"], dtype=np.float64,
                        index=pd.MultiIndex.from_arrays([[], []], names=["attribute", "group"]))


def cost_gaps(table):
    """Each attribute's worst and best served group, from a :func:`group_costs` table.

    Parameters
    ----------
    table : pandas.DataFrame
        As :func:`group_costs` returns it.

    Returns
    -------
    pandas.DataFrame
        Indexed by attribute, in the table's order, with the columns of
        :data:`COST_GAP_COLUMNS`: the group of the largest mean cost, its
        size and that cost (the first in the table's order on a tie), the
        group of the smallest with its size and cost, and their ratio
        (``cost ratio``, 1 when both are 0, inf when only the best is). The
        sizes say how far to trust the ratio: a group of a few rows can set
        it alone.
    """
    rows = {}
    for attribute in table.index.get_level_values("attribute").unique():
        part = table.loc[attribute]
        worst, best = part["mean cost"].idxmax(), part["mean cost"].idxmin()
        rows[attribute] = [worst, float(part.loc[worst, "size"]),
                           float(part.loc[worst, "mean cost"]), best,
                           float(part.loc[best, "size"]), float(part.loc[best, "mean cost"]),
                           float(part.loc[worst, "vs best"])]
    gaps = pd.DataFrame.from_dict(rows, orient="index", columns=list(COST_GAP_COLUMNS))
    gaps.index.name = "attribute"
    if not rows:  # no categorical attribute: the columns' kinds all the same
        gaps = gaps.astype({name: np.float64 for name in COST_GAP_COLUMNS
                            if name not in ("worst group", "best group")})
    return gaps
