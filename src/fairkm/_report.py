"""The fairness audit of one or more clusterings: measures, and a self-contained HTML report.

:func:`audit_clusterings` gathers every measure (all from :mod:`fairkm.metrics`)
and per-cluster summaries; :func:`render_html` turns them into one HTML file
whose charts are PNG images embedded as ``data:`` URIs, so the report opens
offline, can be mailed as a single file, and loads nothing from the network.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from .metrics import (
    centroid_deviation,
    clustering_objective,
    fairness_report,
    object_pair_deviation,
    silhouette,
)

__all__ = [
    "Audit",
    "audit_clusterings",
    "comparison_sentence",
    "composition_chart",
    "format_number",
    "render_html",
]

# The silhouette is quadratic in the number of points; beyond this many it is
# computed on a seeded sample of this size.
SILHOUETTE_SAMPLE = 5000
QUALITY_COLUMNS = ["CO", "SH", "DevC", "DevO"]
FAIRNESS_COLUMNS = ["AE", "AW", "ME", "MW", "balance", "KL", "MPV"]
# Stacked bars stay readable with about ten segments; smaller groups are pooled.
_MAX_SEGMENTS = 10
# A non-numeric profile column with more distinct values than this (free text,
# identifiers) is summarised by its number of distinct values, not its mode.
_MAX_PROFILE_VALUES = 50

MEASURES_HELP = {
    "CO": "clustering objective: sum of squared distances of the points to their cluster "
    "mean (the K-Means objective); lower is tighter",
    "SH": "silhouette, in [-1, 1]; higher means better separated clusters",
    "DevC": "centroid deviation: distance between matched centres of this clustering and "
    "the S-blind K-Means one; 0 for the same clustering",
    "DevO": "object pair deviation: fraction of pairs of rows on which the two clusterings "
    "disagree about being together (1 - Rand index)",
    "AE": "average Euclidean distance between a cluster's mix of the attribute and the "
    "dataset's mix, weighted by cluster size; lower is fairer",
    "AW": "the same with the Wasserstein distance (total variation for a categorical "
    "attribute); lower is fairer",
    "ME": "largest Euclidean distance over clusters; lower is fairer",
    "MW": "largest Wasserstein distance over clusters; lower is fairer",
    "balance": "smallest ratio of the least to the most frequent value in a cluster, over "
    "clusters (categorical attributes); higher is fairer, 1 is perfect",
    "KL": "sum over clusters of KL(dataset mix || cluster mix) (categorical attributes); "
    "lower is fairer",
    "MPV": "largest excursion of a cluster's share of a value outside [0.8 p, p / 0.8], p "
    "being the dataset's share (categorical attributes); 0 is fair",
}


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
        quality = pd.DataFrame(
            {
                name: _quality(X, values, reference if name == names[0] else None, random_state)
                for name, values in labels.items()
            }
        ).T.reindex(columns=QUALITY_COLUMNS if reference is not None else QUALITY_COLUMNS[:2])
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


# --------------------------------------------------------------------------- charts


def _png_data_uri(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _segments(column):
    """Values in decreasing dataset share, the tail pooled as "other" beyond the limit."""
    text = column.astype(str)
    order = text.value_counts().index.tolist()
    if len(order) > _MAX_SEGMENTS:
        kept = set(order[: _MAX_SEGMENTS - 1])
        text = text.where(text.isin(kept), "other")
        order = [*order[: _MAX_SEGMENTS - 1], "other"]
    return text, order


def _row_names(labels):
    clusters, sizes = np.unique(labels, return_counts=True)
    return clusters, [f"cluster {c} (n={s:,})" for c, s in zip(clusters, sizes, strict=True)]


def _draw_categorical(ax, text, order, labels, colors):
    clusters, names = _row_names(labels)
    shares = pd.crosstab(labels, text.to_numpy(), normalize="index").reindex(
        index=clusters, columns=order, fill_value=0.0
    )
    overall = text.value_counts(normalize=True).reindex(order, fill_value=0.0)
    rows = np.vstack([overall.to_numpy(), shares.to_numpy()])
    y = np.concatenate([[0.0], np.arange(1, len(clusters) + 1) + 0.4])
    left = np.zeros(len(y))
    for j, value in enumerate(order):
        ax.barh(y, rows[:, j], left=left, color=colors[j], edgecolor="white", linewidth=0.5,
                label=value)
        for yi, start, width in zip(y, left, rows[:, j], strict=True):
            if width >= 0.08:
                ax.text(start + width / 2, yi, f"{width:.0%}", ha="center", va="center",
                        fontsize=7, color="white" if j % 2 == 0 else "black")
        left += rows[:, j]
    ax.set_yticks(y, ["all rows", *names])
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("share of the rows")


def _draw_numeric(ax, values, labels, name):
    clusters, names = _row_names(labels)
    values = np.asarray(values, dtype=np.float64)
    groups = [values] + [values[labels == c] for c in clusters]
    y = np.concatenate([[0.0], np.arange(1, len(clusters) + 1) + 0.4])
    for yi, group in zip(y, groups, strict=True):
        p5, p25, p75, p95 = np.percentile(group, [5, 25, 75, 95])
        ax.hlines(yi, p5, p95, color="0.4", linewidth=1)
        ax.hlines(yi, p25, p75, color="C0", linewidth=6)
        ax.plot(group.mean(), yi, marker="o", color="C3", markersize=5)
    ax.axvline(values.mean(), color="C3", linestyle="--", linewidth=1)
    ax.set_yticks(y, ["all rows", *names])
    ax.set_xlabel(name)


def composition_chart(audit, attribute):
    """Draw each clustering's per-cluster mix of one sensitive attribute.

    Parameters
    ----------
    audit : Audit
    attribute : str
        A sensitive attribute's name.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per clustering: the dataset's mix on top, then one bar per
        cluster (stacked shares of each value for a categorical attribute,
        the distribution's spread and mean for a numeric one).
    """
    n_rows = max(len(np.unique(labels)) for labels in audit.labels.values()) + 1
    numeric = attribute in audit.numeric_sensitive
    column = audit.sensitive[attribute].reset_index(drop=True)
    legend_rows = 0
    if not numeric:
        text, order = _segments(column)
        legend_rows = -(-len(order) // 5)
    fig = Figure(
        figsize=(5.2 * len(audit.labels), 1.5 + 0.32 * n_rows + 0.3 * legend_rows),
        layout="constrained",
    )
    axes = fig.subplots(1, len(audit.labels), squeeze=False)[0]
    for ax, (name, labels) in zip(axes, audit.labels.items(), strict=True):
        if numeric:
            _draw_numeric(ax, column, labels, attribute)
        else:
            colors = [f"C{j}" for j in range(len(order))]
            if order[-1] == "other":
                colors[-1] = "0.75"
            _draw_categorical(ax, text, order, labels, colors)
        ax.invert_yaxis()
        ax.set_title(name)
        ax.tick_params(axis="y", labelsize=8)
    if not numeric:
        handles, names = axes[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="outside lower center", ncols=min(len(order), 5),
                   title=attribute, fontsize=8, title_fontsize=9, frameon=False)
    fig.suptitle(f"{attribute}: each cluster's mix against the dataset's", fontsize=11)
    return fig


# --------------------------------------------------------------------------- HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 78em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; } .facts th, .facts td { text-align: left; }
.summary { background: #eef6ee; border-left: 4px solid #4a4; padding: 0.6em 1em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
dt { font-weight: bold; } dd { margin: 0 0 0.4em 1.5em; }
"""


def format_number(value):
    """Format a measure: 4 significant digits, large magnitudes in full with separators.

    Parameters
    ----------
    value : float

    Returns
    -------
    str
    """
    if 1e4 <= abs(value) < 1e12:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _table(frame, *, percent=(), table_id=None):
    formatters = {column: "{:.1%}".format for column in percent if column in frame.columns}
    attrs = f' id="{table_id}"' if table_id else ""
    # A named index becomes a plain first column, so its name heads it.
    named = frame.index.nlevels == 1 and frame.index.name is not None
    body = (frame.reset_index() if named else frame).to_html(
        float_format=format_number, na_rep="–", formatters=formatters, border=0,
        index=not named,
    )
    return f'<div class="scroll"{attrs}>{body}</div>'


def render_html(audit, *, title, facts):
    """Render an audit as one self-contained HTML page.

    Parameters
    ----------
    audit : Audit
    title : str
        Page title and heading.
    facts : list of (str, str)
        Labelled facts shown at the top (input file, rows, parameters...).

    Returns
    -------
    str
        The HTML document; images are embedded, nothing is fetched.
    """
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        '<table class="facts">',
        *(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts),
        "</table>",
    ]
    sentence = comparison_sentence(audit)
    if sentence:
        parts.append(f'<p class="summary">{esc(sentence)}</p>')

    parts.append("<h2>Measures</h2>")
    shown = FAIRNESS_COLUMNS
    if audit.quality is not None:
        shown = [*audit.quality.columns, *FAIRNESS_COLUMNS]
        parts += ["<h3>Quality</h3>", _table(audit.quality, table_id="quality")]
    parts += [
        "<h3>Fairness, mean over the sensitive attributes</h3>",
        _table(audit.fairness.loc["mean"], table_id="fairness-mean"),
        "<h3>Fairness per attribute</h3>",
        _table(audit.fairness.drop(index="mean"), table_id="fairness"),
        "<details><summary>What the measures mean</summary><dl>",
        *(f"<dt>{esc(k)}</dt><dd>{esc(MEASURES_HELP[k])}</dd>" for k in shown),
        "</dl><p>Numeric attributes are standardised; their AE/ME compare cluster means, "
        "AW/MW whole distributions, and balance, KL and MPV do not apply (–).</p></details>",
    ]

    parts.append("<h2>Cluster sizes</h2>")
    for k, (name, table) in enumerate(audit.clusters.items()):
        # One table per clustering: cluster names need not match across clusterings.
        sizes = pd.DataFrame([table["size"].to_numpy()], columns=table.index.tolist(),
                             index=pd.Index([name], name="clustering"))
        parts.append(_table(sizes, table_id=f"sizes-{k}"))

    parts.append("<h2>Composition of each sensitive attribute</h2>")
    parts.append(
        "<p>Top bar: the dataset's mix. A fair clustering gives every cluster about the same "
        "mix.</p>"
    )
    for attribute in audit.sensitive.columns:
        uri = _png_data_uri(composition_chart(audit, attribute))
        alt = f"Per-cluster composition of {attribute}"
        caption = f"{alt}, {' and '.join(audit.labels)}."
        if attribute in audit.numeric_sensitive:
            caption += (
                " Thin line: 5th to 95th percentile; bar: 25th to 75th; dot: mean; dashed "
                "line: the dataset's mean."
            )
        parts.append(
            f'<figure><img src="{uri}" alt="{esc(alt)}"><figcaption>{esc(caption)}'
            "</figcaption></figure>"
        )

    parts.append("<h2>Clusters</h2>")
    parts.append(
        "<p>Size and share of the rows; with features, the root-mean-square distance of "
        "the rows to their centre and the centre's distance to the data's mean (in the "
        "encoded feature space); then each profile column: the mean of a numeric column or "
        "the most frequent value of another, with its share.</p>"
    )
    for k, (name, table) in enumerate(audit.clusters.items()):
        parts += [f"<h3>{esc(name)}</h3>", _table(table, percent=("share",),
                                                   table_id=f"clusters-{k}")]
    parts.append(
        "<p><small>Made by fairkm. FairKM: Abraham, Deepak P and Sundaram, "
        "<i>Fairness in Clustering with Multiple Sensitive Attributes</i>, EDBT 2020."
        "</small></p></body></html>"
    )
    return "\n".join(parts)
