"""Every measure in one call: :func:`fairness_report` and :func:`clustering_report`.

Their columns are the table's (:data:`~fairkm.metrics.MEASURES`), in its order.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from fairkm.utils._options import DEVIATION_KINDS

from ._checks import (
    Rows,
    check_conventions,
    check_option,
    encode_labels,
    prepare_fairness,
    prepare_read,
)
from ._docstrings import fill_docstring
from ._group_costs import cost_gaps, read_group_costs
from ._pieces import AttributePieces
from ._quality import (
    centroid_deviation,
    clustering_objective,
    object_pair_deviation,
    silhouette_or_nan,
)
from ._table import MEASURES, attribute_fairness, fairness_names

__all__ = ["clustering_report", "fairness_report"]

_QUALITY = [m for m in MEASURES.values() if m.kind == "quality"]


def _fill_columns(func):
    # The columns are read from the table, never typed.
    fairness = [m for m in MEASURES.values() if m.kind == "fairness"]
    columns = [f"``{m.name}`` (:func:`{m.function.__name__}`)" for m in fairness]
    categorical_only = [f"``{m.name}``" for m in fairness if m.categorical_only]
    text = (f"Columns: {', '.join(columns[:-1])} and {columns[-1]}. "
            f"{', '.join(categorical_only[:-1])} and {categorical_only[-1]} are NaN for "
            "numeric attributes and their mean runs over the categorical ones.")
    return fill_docstring(func, entries={"fairness_columns": textwrap.fill(text, 70)})


@_fill_columns
def fairness_report(
    labels,
    *,
    sensitive_features,
    sample_weight=None,
    numeric_sensitive="auto",
    intersections=None,
    wasserstein="principled",
    eps=1e-20,
    delta=0.2,
    max_deviation=None,
    deviation_kind="additive",
    X=None,
    centers=None,
):
    r"""Every fairness measure for every sensitive attribute, plus their mean.

    Parameters
    ----------
    %(labels)s
    %(sensitive_features)s
    %(sample_weight)s
    %(numeric_sensitive)s
    intersections : sequence of sequence of str, default=None
        Combinations of categorical attributes to report as well, such as
        ``[("sex", "race")]``: each adds a row named ``"sex & race"``,
        computed on the combined attribute (see Notes).
    %(wasserstein)s
    %(eps)s
    %(delta)s
    %(max_deviation)s
    %(deviation_kind)s
    X : array-like of shape (n_samples, n_features), default=None
        The features the clustering was made from: adds the equitable-cost
        columns (see Returns), from :func:`group_costs`.
    centers : array-like of shape (n_centers, n_features), default=None
        With ``X``: the clusters' centres (label ``c`` is ``centers[c]``);
        None takes each cluster's (weighted) mean, as :func:`group_costs`.

    Returns
    -------
    pandas.DataFrame
        One row per attribute (indexed by name), then one per intersection,
        and a last row ``"mean"`` with the mean over the rows above it (the
        paper's "mean across S attributes" when there is no intersection).
        %(fairness_columns)s

        With ``max_deviation``, three more columns state the guarantee (see
        Notes): ``deviation``, the attribute's largest deviation over
        clusters and values (``|C_S(s) - X_S(s)|``, or with
        ``deviation_kind="multiplicative"`` the smallest :math:`\delta`
        whose band holds every cluster's share); ``bound``, the bound asked
        (NaN where none was); and ``within bound``, a nullable boolean
        (``<NA>`` where no bound was asked). Numeric attributes get NaN and
        ``<NA>``. In the ``"mean"`` row, ``deviation`` is the mean over the
        categorical rows like the other columns, ``bound`` is NaN and
        ``within bound`` says whether every bounded row is within its bound.

        With ``X``, three more columns say which group of the attribute the
        clustering serves worst (its rows' mean squared distance to their
        centre, weighted as the other measures): ``worst group``, ``worst
        group cost`` (the mean cost socially fair k-means minimises) and
        ``cost ratio`` (the worst group's mean cost over the best's; 1 when
        every group is served alike). Numeric attributes have no groups:
        None and NaN there, and in the ``"mean"`` row.

    Notes
    -----
    Each categorical attribute costs one ``np.bincount`` over the combined
    (cluster, value) codes, and every measure then reads the small
    n_clusters x n_values table. Each numeric attribute costs one sort.

    **Intersections.** An intersection is measured as one more categorical
    attribute whose values are the combinations of its members' values that
    occur in the data (among the rows of positive weight). A combination
    that never occurs is no group at all, so no combined group is empty in
    the dataset; but combined groups are small, and the measures weigh the
    small ones differently:

    - AE, AW, ME and MW compare whole distributions: a combination counts
      with its share, so a rare one moves them little, whichever cluster
      holds its rows.
    - balance is driven by the rarest combination: it is at most that
      combination's count in a cluster over the largest count there, and 0
      as soon as one cluster lacks it.
    - KL is driven by the combinations missing from a cluster: each adds
      about :math:`X_S(s) (\ln X_S(s) + 46)` for the default ``eps``, large
      against the divergences of the combinations present.
    - MPV is in proportion units: a rare combination's band
      :math:`[(1 - \delta) p, p / (1 - \delta)]` is narrow, so it is
      violated easily, but only by about :math:`p`, unless a small cluster
      concentrates the combination's rows.

    With many attributes, most combinations are rare: read balance and KL of
    an intersection as "is some small group left out of some cluster?", and
    AE or AW as the typical deviation.

    **Guarantee.** ``max_deviation`` asks the auditor's question of
    :func:`fairkm.metrics.check_bounds` (which computes the three columns,
    with the same weights, numeric attributes and intersections): is
    *every* cluster within the bound of the dataset's mix, for every value?
    Unlike ME, which measures a whole distribution's distance, ``deviation``
    looks at one value at a time, and unlike the averages it gives a small
    cluster the same say as a large one. MPV is Bera et al.'s violation of
    the multiplicative band at ``delta``; with
    ``deviation_kind="multiplicative"``, ``deviation`` is instead the
    tightest such band that holds, so MPV is 0 exactly when ``deviation``
    is at most ``delta``.

    Examples
    --------
    >>> from fairkm.metrics import fairness_report
    >>> report = fairness_report([0, 0, 1, 1], sensitive_features=[["a"], ["b"], ["a"], ["b"]])
    >>> report.loc["mean", ["AE", "balance"]].tolist()
    [0.0, 1.0]
    """
    check_conventions(wasserstein=wasserstein, eps=eps, delta=delta)
    check_option(deviation_kind, "deviation_kind", DEVIATION_KINDS)
    # Paired once, so that the guarantee's check reads the same rows.
    rows = Rows(("labels", labels))
    sensitive_features = rows.pair(sensitive_features, "sensitive_features")
    sample_weight = rows.pair(sample_weight, "sample_weight")
    codes, n_clusters, sf, weights = prepare_fairness(
        labels, sensitive_features, numeric_sensitive, sample_weight, intersections
    )
    report = _measures(codes, n_clusters, sf, weights, wasserstein=wasserstein, eps=eps,
                       delta=delta)
    if max_deviation is not None:
        report = _with_guarantee(
            report, labels, sensitive_features, max_deviation, deviation_kind,
            sample_weight=sample_weight, numeric_sensitive=numeric_sensitive,
            intersections=intersections,
        )
    if X is not None:
        report = _with_costs(report, rows.pair(X, "X"), labels, sensitive_features, centers,
                             sample_weight=sample_weight, numeric_sensitive=numeric_sensitive,
                             intersections=intersections)
    return report


def _with_costs(report, X, labels, sensitive_features, centers, **encoding):
    """Add the columns ``worst group``, ``worst group cost`` and ``cost ratio``."""
    gaps = cost_gaps(read_group_costs(X, labels, sensitive_features=sensitive_features,
                                      centers=centers, require_groups=False, **encoding))
    gaps = gaps.reindex(report.index)
    return report.assign(**{
        "worst group": gaps["worst group"].astype(object).where(gaps["worst group"].notna(),
                                                                None),
        "worst group cost": gaps["worst group cost"].astype(np.float64),
        "cost ratio": gaps["cost ratio"].astype(np.float64),
    })


def _pieces(codes, n_clusters, sf, weights, **options):
    """Every attribute's :class:`AttributePieces` (``options``: the measures' conventions)."""
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    return [AttributePieces(codes, n_clusters, sizes, sf, j, weights, **options)
            for j in range(sf.n_attributes)]


def _measures(codes, n_clusters, sf, weights, *, wasserstein, eps, delta):
    """Compute the report's table from cluster codes and sensitive features already read."""
    if "mean" in sf.names:
        raise ValueError(
            "sensitive_features has an attribute named 'mean', which would clash with the "
            "report's 'mean' row; rename it."
        )
    columns = fairness_names()
    table = np.full((sf.n_attributes, len(columns)), np.nan)
    pieces = _pieces(codes, n_clusters, sf, weights, wasserstein=wasserstein, eps=eps,
                     delta=delta)
    for j, attribute in enumerate(pieces):
        table[j] = list(attribute_fairness(attribute).values())
    index = pd.Index(sf.names, name="attribute")
    report = pd.DataFrame(table, index=index, columns=columns)
    report.loc["mean"] = report.mean(axis=0, skipna=True)
    return report


def fairness_of_read(labels, sf, sample_weight=None):
    """:func:`fairness_report`'s table (default options) on features already read.

    For measuring many clusterings of the same rows on one reading of their
    sensitive features (the audit); ``sf`` as
    :func:`fairkm.utils._sensitive.check_sensitive_features` returns it,
    ``sample_weight`` paired with the rows by position.
    """
    codes, _ = encode_labels(labels)
    return _measures(*prepare_read(codes, sf, sample_weight), wasserstein="principled",
                     eps=1e-20, delta=0.2)


def pieces_of_read(labels, sf, sample_weight=None):
    """Every attribute's per-cluster pieces of ``labels``, as :func:`fairness_of_read` reads them.

    Returns the pieces (one :class:`AttributePieces` per attribute, in
    ``sf``'s order) and the features of the rows of positive weight they
    cover (a value only zero-weight rows have is no longer among their
    categories). The clusters are those with a row of positive weight, in the
    order of the sorted distinct labels.
    """
    codes, _ = encode_labels(labels)
    codes, n_clusters, sf, weights = prepare_read(codes, sf, sample_weight)
    return _pieces(codes, n_clusters, sf, weights), sf


def _with_guarantee(report, labels, sensitive_features, max_deviation, kind, **encoding):
    """Add the columns ``deviation``, ``bound`` and ``within bound`` of ``max_deviation``."""
    # fairkm.bounds sits above the measures and loads numba's kernels: imported when a
    # bound is asked for, so that importing fairkm.metrics stays light (a seam in
    # tests/test_architecture.py).
    from . import check_bounds

    check = check_bounds(labels, sensitive_features, max_deviation=max_deviation,
                         deviation_kind=kind,
                         **encoding)
    table = check.table.reindex(report.index)
    categorical = table["kind"].isin(DEVIATION_KINDS)
    bounded = categorical & table["bound"].notna()
    deviation = table["deviation"].where(categorical)
    deviation["mean"] = deviation.drop("mean").mean()
    within = pd.Series(pd.NA, index=report.index, dtype="boolean")
    within[bounded] = table.loc[bounded, "satisfied"].astype(bool)
    if bounded.any():
        within["mean"] = bool(within[bounded].all())
    return report.assign(**{
        "deviation": deviation.astype(np.float64),
        "bound": table["bound"].where(bounded).astype(np.float64),
        "within bound": within,
    })


@fill_docstring
def clustering_report(
    X,
    labels,
    *,
    reference_labels=None,
    sample_weight=None,
    squared=True,
    sample_size=None,
    random_state=None,
):
    """Clustering quality measures in one call.

    Parameters
    ----------
    %(X)s
    %(labels)s
    reference_labels : array-like of shape (n_samples,), default=None
        Labels of a reference clustering, e.g. S-blind K-Means; adds DevC and
        DevO.
    %(sample_weight)s
        Passed to every measure.
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
        ``DevO`` (:func:`object_pair_deviation`). ``SH`` is NaN where the
        silhouette is undefined: a single cluster, or every row its own
        cluster (:func:`silhouette` itself raises there).

    Examples
    --------
    >>> from fairkm.metrics import clustering_report
    >>> X = [[0.0], [2.0], [10.0], [12.0]]
    >>> report = clustering_report(X, [0, 0, 1, 1], reference_labels=[1, 1, 0, 0])
    >>> report.round(4).to_dict()
    {'CO': 4.0, 'SH': 0.798, 'DevC': 0.0, 'DevO': 0.0}
    """
    # Paired once: each measure below would pair (and warn) again.
    rows = Rows(("X", X), ("labels", labels))
    labels = rows.pair(labels, "labels")
    if reference_labels is not None:
        reference_labels = rows.pair(reference_labels, "reference_labels")
    weights = {"sample_weight": rows.pair(sample_weight, "sample_weight")}
    compute = {
        "CO": lambda: clustering_objective(X, labels, squared=squared, **weights),
        "SH": lambda: silhouette_or_nan(
            X, labels, sample_size=sample_size, random_state=random_state, **weights
        ),
        "DevC": lambda: centroid_deviation(X, labels, reference_labels, **weights),
        "DevO": lambda: object_pair_deviation(labels, reference_labels, **weights),
    }
    names = [m.name for m in _QUALITY if reference_labels is not None or not m.needs_reference]
    return pd.Series({name: compute[name]() for name in names}, dtype=np.float64)
