"""The fairness audit of one or more clusterings: every measure and per-cluster summaries.

:func:`audit_clusterings` gathers the measures (all from :mod:`fairkm.metrics`)
and describes each cluster; :mod:`._printing` prints an audit and
:mod:`._report` renders it as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import (
    MEASURES,
    centroid_deviation,
    clustering_objective,
    fairness_report,
    object_pair_deviation,
    silhouette,
)

__all__ = ["Audit", "audit_clusterings", "comparison_sentence"]

# The silhouette is quadratic in the number of points; beyond this many it is
# computed on a seeded sample of this size.
SILHOUETTE_SAMPLE = 5000
# A non-numeric profile column with more distinct values than this (free text,
# identifiers) is summarised by its number of distinct values, not its mode.
_MAX_PROFILE_VALUES = 50


@dataclass(frozen=True)
class Audit:
    """Measures and summaries of one or more clusterings of the same rows.

    Attributes
    ----------
    labels : dict of str to ndarray of shape (n_samples,)
        Cluster labels by clustering name; the audited clustering comes first
        and the reference (S-blind K-Means), if any, second.
    sensitive : pandas.DataFrame
        The sensitive attributes, one column each.
    numeric_sensitive : list of str
        Names of the numeric sensitive attributes.
    fairness : pandas.DataFrame
        Fairness measures, indexed by (attribute or ``"mean"``, clustering).
    quality : pandas.DataFrame or None
        Quality measures, indexed by clustering; None without features.
    clusters : dict of str to pandas.DataFrame
        Per clustering, one row per cluster: size, share, spread and centre
        distance (with features), then the profile columns.
    """

    labels: dict
    sensitive: pd.DataFrame
    numeric_sensitive: list
    fairness: pd.DataFrame
    quality: pd.DataFrame | None
    clusters: dict

    @property
    def main(self):
        """Name of the audited clustering."""
        return next(iter(self.labels))

    @property
    def reference(self):
        """Name of the reference clustering, or None."""
        names = list(self.labels)
        return names[1] if len(names) > 1 else None


def audit_clusterings(
    labels, *, sensitive, numeric_sensitive, X=None, profile=None, random_state=0
):
    """Measure one or more clusterings of the same rows.

    Parameters
    ----------
    labels : dict of str to array-like of shape (n_samples,)
        Cluster labels by name: the audited clustering first, then optionally
        a reference (its DevC/DevO are measured against the reference).
    sensitive : pandas.DataFrame
        The sensitive attributes.
    numeric_sensitive : list of str
        The numeric ones among them; the others are categorical.
    X : ndarray of shape (n_samples, n_features), default=None
        The (encoded) features the clusterings were made from; quality
        measures and cluster spreads need them.
    profile : pandas.DataFrame, default=None
        Columns in their original units to describe each cluster by (mean of a
        numeric column, most frequent value of another).
    random_state : int, default=0
        Seed of the silhouette's sample on large data.

    Returns
    -------
    Audit
    """
    labels = {name: np.asarray(values) for name, values in labels.items()}
    names = list(labels)
    reference = labels[names[1]] if len(names) > 1 else None
    fairness = {
        name: fairness_report(
            values, sensitive_features=sensitive, numeric_sensitive=numeric_sensitive
        )
        for name, values in labels.items()
    }
    fairness = pd.concat(fairness, names=["clustering", "attribute"])
    fairness = fairness.swaplevel().loc[[*sensitive.columns, "mean"]]
    quality = None
    if X is not None:
        # The quality measures in fairkm.metrics.MEASURES' order; DevC and DevO
        # need the reference clustering.
        columns = [
            measure.name for measure in MEASURES.values()
            if measure.kind == "quality" and (reference is not None or not measure.needs_reference)
        ]
        quality = pd.DataFrame(
            {
                name: _quality(X, values, reference if name == names[0] else None, random_state)
                for name, values in labels.items()
            }
        ).T.reindex(columns=columns)
    clusters = {name: _cluster_table(values, X, profile) for name, values in labels.items()}
    return Audit(labels, sensitive, list(numeric_sensitive), fairness, quality, clusters)


def _quality(X, labels, reference, random_state):
    n = len(labels)
    values = {"CO": clustering_objective(X, labels), "SH": np.nan}
    if 2 <= len(np.unique(labels)) <= n - 1:
        # Otherwise (one cluster, or one point per cluster) the silhouette is undefined.
        sample = SILHOUETTE_SAMPLE if n > SILHOUETTE_SAMPLE else None
        values["SH"] = silhouette(X, labels, sample_size=sample, random_state=random_state)
    if reference is not None:
        values["DevC"] = centroid_deviation(X, labels, reference)
        values["DevO"] = object_pair_deviation(labels, reference)
    return pd.Series(values, dtype=np.float64)


def _cluster_table(labels, X, profile):
    clusters, codes, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    table = pd.DataFrame(
        {"size": sizes, "share": sizes / sizes.sum()}, index=pd.Index(clusters, name="cluster")
    )
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        centers = np.stack([X[codes == c].mean(axis=0) for c in range(len(clusters))])
        residuals = X - centers[codes]
        spread = np.bincount(codes, weights=np.einsum("ij,ij->i", residuals, residuals))
        table["RMS distance to centre"] = np.sqrt(spread / sizes)
        table["centre distance to data mean"] = np.linalg.norm(centers - X.mean(axis=0), axis=1)
    if profile is not None:
        for column in profile.columns:
            # A data column named like a summary column ("size") must not replace it.
            name = f"{column} (data)" if column in table.columns else column
            table[name] = _profile_column(profile[column], codes, clusters)
    return table


def _profile_column(values, codes, clusters):
    values = values.reset_index(drop=True)
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.groupby(codes).mean().reindex(range(len(clusters))).to_numpy()
    n_distinct = values.nunique()
    if n_distinct > _MAX_PROFILE_VALUES:
        return [f"{n_distinct} distinct values"] * len(clusters)
    counts = pd.crosstab(codes, values.astype(str).where(values.notna()))
    counts = counts.reindex(range(len(clusters)), fill_value=0)
    top = counts.idxmax(axis=1)
    share = counts.max(axis=1) / counts.sum(axis=1).clip(lower=1)
    return [f"{value} ({frac:.0%})" for value, frac in zip(top, share, strict=True)]


def comparison_sentence(audit):
    """Summarise the audited clustering against the reference in one sentence.

    Parameters
    ----------
    audit : Audit

    Returns
    -------
    str or None
        None when the audit has no reference clustering.
    """
    if audit.reference is None:
        return None
    main, ref = audit.main, audit.reference
    ae = audit.fairness.loc["mean", "AE"]
    text = (
        f"Mean AE (lower is fairer): {ae[main]:.3g} for {main} against {ae[ref]:.3g} for "
        f"{ref}, {_change(ae[main], ae[ref])}"
    )
    if audit.quality is not None:
        co = audit.quality["CO"]
        text += f"; K-Means objective (CO): {_change(co[main], co[ref])}"
    return text + "."


def _change(value, reference):
    if reference == 0:
        return "no change" if value == 0 else "up from 0"
    return f"{value / reference - 1:+.1%}"
