"""The numbers of an audit: measures, per-cluster tables, worst clusters and verdicts.

Every measure comes from :mod:`fairkm.metrics`, on the sensitive features
read once by the library's reader (their codes, categories and numeric
rule); so do the per-cluster distances to the dataset's mix that pick each
attribute's worst cluster (ME's, :func:`fairkm.metrics.pieces_of_read`).
What is computed here are the views of them a reader needs (the value most
off, a cluster's mean in the column's units) and the comparisons with a
reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairkm.metrics import (
    MEASURES,
    centroid_deviation,
    clustering_objective,
    cost_gaps,
    costs_of_read,
    fairness_of_read,
    object_pair_deviation,
    pieces_of_read,
    silhouette,
)
from fairkm.utils._inputs import as_frequencies
from fairkm.utils._sensitive import (
    columns_frame,
    read_columns,
    resolve_numeric,
    standardize_numeric,
)
from fairkm.utils._sums import weighted_row_sum

__all__ = [
    "SILHOUETTE_SAMPLE",
    "TOLERANCE",
    "cluster_table",
    "cost_tables",
    "fairness_table",
    "quality_table",
    "sensitive_frame",
    "verdict_table",
    "worst_clusters",
]

# The silhouette is quadratic in the number of points; beyond this many it is
# computed on a seeded sample of this size.
SILHOUETTE_SAMPLE = 5000
#: Relative changes of a measure within this fraction count as unchanged.
TOLERANCE = 0.01
# A non-numeric profile column with more distinct values than this (free text,
# identifiers) is summarised by its number of distinct values, not its mode.
_MAX_PROFILE_VALUES = 50


def sensitive_frame(sensitive_features, numeric_sensitive, n_samples, model=None):
    """Return the sensitive attributes as a DataFrame and the names of the numeric ones.

    Read by the same rules as :class:`fairkm.FairKM` and
    :func:`fairkm.metrics.fairness_report` (``fairkm.utils._sensitive.read_columns``
    and ``resolve_numeric``): a DataFrame, a dict of columns, a Series or an
    array; names from the columns, a Series' name, else ``"s0"``, ``"s1"``...;
    ``numeric_sensitive`` as names or positions (negative ones count from the
    end). With ``numeric_sensitive="auto"`` and a fitted FairKM ``model``
    whose attributes have these names, the model's kinds are taken, so the
    audit reads the attributes as the model did.
    """
    names, columns, auto = read_columns(sensitive_features)
    frame = columns_frame(names, columns)
    if len(frame) != n_samples:
        raise ValueError(
            f"sensitive_features has {len(frame)} rows, but labels has {n_samples}."
        )
    fitted = getattr(model, "sensitive_attributes_", None)
    kinds = None if fitted is None else fitted.kinds
    if (isinstance(numeric_sensitive, str) and numeric_sensitive == "auto"
            and kinds is not None and list(map(str, fitted.names)) == names):
        return frame, [n for n, kind in zip(names, kinds, strict=True) if kind == "numeric"]
    flags = resolve_numeric(numeric_sensitive, names, auto)
    return frame, [n for n, numeric in zip(names, flags, strict=True) if numeric]


def fairness_table(labels, read, sample_weight=None):
    """Every fairness measure, indexed by (attribute or ``"mean"``, clustering).

    ``read``: the sensitive features as the library's reader read them (once
    for every clustering). ``sample_weight``: checked row weights (a row of
    weight w counts as w rows), or None.
    """
    fairness = {name: fairness_of_read(values, read, sample_weight)
                for name, values in labels.items()}
    fairness = pd.concat(fairness, names=["clustering", "attribute"])
    return fairness.swaplevel().loc[[*read.names, "mean"]]


def cost_tables(X, labels, read, sample_weight=None):
    """Equitable cost of every clustering: each group's mean cost and each attribute's gap.

    ``X``: the features (float64), or None; ``read``: the sensitive features
    as the library's reader read them; ``sample_weight``: checked row weights
    or None. Returns ``(gaps, groups)``: ``gaps`` indexed by (attribute,
    clustering) with :func:`fairkm.metrics.cost_gaps`' columns, ``groups``
    indexed by (attribute, group) with ``size`` and one column of mean costs
    per clustering; ``(None, None)`` without features or categorical
    attributes.
    """
    if X is None:
        return None, None
    tables = {name: costs_of_read(X, values, read, sample_weight)
              for name, values in labels.items()}
    first = next(iter(tables.values()))
    if first.empty:
        return None, None
    gaps = pd.concat({name: cost_gaps(table) for name, table in tables.items()},
                     names=["clustering", "attribute"]).swaplevel()
    gaps = gaps.loc[[(a, n) for a in first.index.unique("attribute") for n in labels]]
    groups = first[["size"]].join(pd.DataFrame(
        {name: table["mean cost"] for name, table in tables.items()}))
    return gaps, groups


def _quality(X, labels, reference, random_state, weights):
    # CO is in the weights' own unit (a row of weight w counts as w rows); the silhouette
    # and DevO, which count rows, read the weights by their ratios (as_frequencies).
    frequencies = as_frequencies(weights)
    values = {"CO": clustering_objective(X, labels, sample_weight=weights), "SH": np.nan}
    counted = labels if weights is None else labels[weights > 0]
    total = len(labels) if weights is None else frequencies.sum()
    if 2 <= len(np.unique(counted)) <= total - 1:
        # Otherwise (one cluster, or one point per cluster) the silhouette is undefined.
        sample = SILHOUETTE_SAMPLE if len(counted) > SILHOUETTE_SAMPLE else None
        values["SH"] = silhouette(X, labels, sample_weight=frequencies, sample_size=sample,
                                  random_state=random_state)
    if reference is not None:
        values["DevC"] = centroid_deviation(X, labels, reference, sample_weight=weights)
        values["DevO"] = object_pair_deviation(labels, reference, sample_weight=frequencies)
    return pd.Series(values, dtype=np.float64)


def quality_table(X, labels, reference_name, random_state, sample_weight=None):
    """Quality measures, one row per clustering, in :data:`~fairkm.metrics.MEASURES`' order.

    DevC and DevO compare the other clusterings with ``reference_name``.
    ``sample_weight``: checked row weights, or None.
    """
    reference = None if reference_name is None else labels[reference_name]
    columns = [
        measure.name for measure in MEASURES.values()
        if measure.kind == "quality" and (reference is not None or not measure.needs_reference)
    ]
    return pd.DataFrame(
        {
            name: _quality(X, values, None if name == reference_name else reference,
                           random_state, sample_weight)
            for name, values in labels.items()
        }
    ).T.reindex(columns=columns)


def _weights_or_ones(sample_weight, n):
    return np.ones(n) if sample_weight is None else sample_weight


def cluster_table(labels, X, profile, sample_weight=None):
    """One row per cluster: size, share, spread and centre distance, then the profile.

    With ``sample_weight`` (checked row weights) the size is the cluster's
    total weight, ``rows`` its number of rows, and the share, the centres,
    the spread and the profile are weighted.
    """
    clusters, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    weights = _weights_or_ones(sample_weight, len(codes))
    sizes = counts if sample_weight is None else np.bincount(codes, weights=weights,
                                                             minlength=len(clusters))
    table = pd.DataFrame(
        {"size": sizes, "share": sizes / sizes.sum()}, index=pd.Index(clusters, name="cluster")
    )
    if sample_weight is not None:
        table.insert(1, "rows", counts)
    if X is not None:
        with np.errstate(invalid="ignore", divide="ignore"):  # a cluster of weight 0: NaN
            centers = np.stack([weighted_row_sum(X[codes == c], weights[codes == c])
                                for c in range(len(clusters))]) / sizes[:, None]
            residuals = X - centers[codes]
            spread = np.bincount(codes, weights=weights * np.einsum("ij,ij->i", residuals,
                                                                     residuals))
            table["RMS distance to centre"] = np.sqrt(spread / sizes)
        data_mean = weighted_row_sum(X, weights) / weights.sum()
        table["centre distance to data mean"] = np.linalg.norm(centers - data_mean, axis=1)
    if profile is not None:
        for column in profile.columns:
            # A data column named like a summary column ("size") or the index ("cluster")
            # must not replace or shadow it.
            taken = column in table.columns or column == table.index.name
            name = f"{column} (data)" if taken else column
            table[name] = _profile_column(profile[column], codes, clusters, weights)
    return table


def _profile_column(values, codes, clusters, weights):
    values = values.reset_index(drop=True)
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        present = values.notna().to_numpy()
        numbers = values.to_numpy(dtype=np.float64, na_value=0.0)
        kept = weights * present
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.bincount(codes, weights=kept * numbers, minlength=len(clusters))
                    / np.bincount(codes, weights=kept, minlength=len(clusters)))
    n_distinct = values.nunique()
    if n_distinct > _MAX_PROFILE_VALUES:
        return [f"{n_distinct} distinct values"] * len(clusters)
    counts = pd.crosstab(codes, values.astype(str).where(values.notna()), values=weights,
                         aggfunc="sum").fillna(0.0)
    counts = counts.reindex(range(len(clusters)), fill_value=0.0)
    top = counts.idxmax(axis=1)
    share = counts.max(axis=1) / counts.sum(axis=1).where(counts.sum(axis=1) > 0, 1.0)
    return [f"{value} ({frac:.0%})" for value, frac in zip(top, share, strict=True)]


def _worst_value(piece, c, categories):
    """Find the value of cluster ``c``'s mix most off the dataset's, and both shares of it."""
    shares, overall = piece.proportions
    v = int(np.argmax(np.abs(shares[c] - overall)))
    value = str(categories[v])  # shown as text, as the charts show it
    return {
        "value": value, "cluster share": float(shares[c, v]),
        "dataset share": float(overall[v]),
        "detail": f"{value}: {shares[c, v]:.0%} of the cluster, {overall[v]:.0%} of the data",
    }


def _worst_mean(name, values, codes, at, weights, sizes):
    """Compare cluster ``at``'s mean of a numeric attribute with the dataset's, in its units."""
    mean, scale = standardize_numeric(values, name, weights)
    total = np.bincount(codes, weights=values if weights is None else weights * values)
    cluster_mean = total[at] / sizes[at]
    return {
        "cluster mean": float(cluster_mean), "dataset mean": float(mean),
        "detail": f"mean {cluster_mean:.4g} against {mean:.4g} in the data "
                  f"({(cluster_mean - mean) / scale:+.2f} standard deviations)",
    }


def worst_clusters(labels, read, sample_weight=None):
    """Each attribute's least fair cluster in each clustering.

    ``read``: the sensitive features as the library's reader read them.
    Returns a DataFrame indexed by (attribute, clustering): ``cluster``,
    ``size``, ``share`` (of the rows), ``distance`` (its Euclidean distance to
    the dataset's mix, the cluster that sets ME), ``small`` (fewer rows than
    half an average cluster), ``detail`` (its mix against the dataset's, in
    words) and, for a categorical attribute, the ``value`` most off (as
    text) with its ``cluster share`` and ``dataset share``; for a numeric one
    the ``cluster mean`` and ``dataset mean``. With ``sample_weight``
    (checked row weights) every mix, size and share is weighted, and ``rows``
    counts the cluster's rows.
    """
    found = {}
    for name, values in labels.items():
        weights = _weights_or_ones(sample_weight, len(values))
        clusters, codes, counts = np.unique(values, return_inverse=True, return_counts=True)
        sizes = np.bincount(codes, weights=weights, minlength=len(clusters))
        # The measures' pieces cover the clusters with a row of positive weight.
        kept, total = np.flatnonzero(sizes > 0), sizes.sum()
        pieces, covered = pieces_of_read(values, read, sample_weight)
        for j, attribute in enumerate(read.names):
            c = int(np.argmax(pieces[j].euclidean_distances))
            at = kept[c]
            extra = (_worst_value(pieces[j], c, covered.categories[j]) if pieces[j].categorical
                     else _worst_mean(attribute, read.columns[j], codes, at, sample_weight,
                                      sizes))
            found[(attribute, name)] = {
                "cluster": clusters[at],
                "size": int(counts[at]) if sample_weight is None else float(sizes[at]),
                "share": sizes[at] / total,
                **({} if sample_weight is None else {"rows": int(counts[at])}),
                "distance": float(pieces[j].euclidean_distances[c]),
                "small": sizes[at] < 0.5 * total / len(clusters),
                **extra,
            }
    rows = {key: found[key] for key in [(a, n) for a in read.names for n in labels]}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["attribute", "clustering"]
    return table


def _verdict(value, reference, higher_is_better):
    if np.isnan(value) or np.isnan(reference):
        return np.nan, "n/a"
    if reference == 0:
        change = 0.0 if value == 0 else np.inf
    else:
        change = value / reference - 1.0
    if abs(change) <= TOLERANCE:
        return change, "same"
    better = change > 0 if higher_is_better else change < 0
    return change, "fairer" if better else "less fair"


def verdict_table(fairness, main, reference):
    """Compare ``main`` with ``reference`` per attribute and fairness measure.

    Returns a DataFrame indexed by (attribute, measure) with the two values,
    the relative ``change`` and the ``verdict``: ``"fairer"``, ``"less
    fair"``, ``"same"`` (within :data:`TOLERANCE`) or ``"n/a"`` (a measure
    that does not apply).
    """
    rows = {}
    for attribute in fairness.index.get_level_values(0).unique():
        for measure in fairness.columns:
            value = float(fairness.loc[(attribute, main), measure])
            ref = float(fairness.loc[(attribute, reference), measure])
            change, verdict = _verdict(value, ref, MEASURES[measure].higher_is_better)
            rows[(attribute, measure)] = {main: value, reference: ref, "change": change,
                                          "verdict": verdict}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["attribute", "measure"]
    return table
