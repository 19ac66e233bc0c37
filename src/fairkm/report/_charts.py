r"""The report's charts: each cluster's mix of one sensitive attribute against the dataset's.

Every string from the data (attribute names, values, cluster labels, the
clustering's name) is drawn as typed: matplotlib's math parsing is off for
every text of a chart (``$5-$10`` stays so, ``$\foo$`` cannot fail), and the
legend is built from explicit lists, so a value starting with ``_`` (which
matplotlib otherwise leaves out of legends) is listed too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import PercentFormatter

from fairkm.utils._printable import visible
from fairkm.utils._sensitive import read_column

__all__ = ["composition_chart", "segments", "weighted_percentiles"]

# Stacked bars stay readable with about ten segments; smaller groups are pooled.
_MAX_SEGMENTS = 10


def segments(column, weights=None):
    """Group a categorical column's rows by value, the tail pooled as "other" beyond the limit.

    The rows are grouped by the library's reader (its codes, so two values
    that print alike stay apart); the values are shown as text. Returns
    ``(segment, names)``: each row's segment, an index into ``names``, the
    values' texts in decreasing (weighted) dataset share, ties in order of
    first appearance, the last one ``"other"`` when values were pooled.
    """
    _, codes, categories = read_column(str(column.name), column, numeric=False)
    totals = np.bincount(codes, weights=weights, minlength=len(categories))
    appearing = pd.unique(codes)
    order = appearing[np.argsort(-totals[appearing], kind="stable")]
    names = [str(categories[v]) for v in order]
    rank = np.empty(len(categories), dtype=np.int64)
    rank[order] = np.arange(len(order))
    if len(order) > _MAX_SEGMENTS:
        rank = np.minimum(rank, _MAX_SEGMENTS - 1)
        names = [*names[: _MAX_SEGMENTS - 1], "other"]
    return rank[codes], names


def _row_names(labels, worst=None, weights=None):
    clusters, codes, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    if weights is None:
        names = [f"cluster {c} (n={s:,})" for c, s in zip(clusters, sizes, strict=True)]
    else:
        shares = np.bincount(codes, weights=weights, minlength=len(clusters)) / weights.sum()
        names = [f"cluster {c} ({s:.1%} of the weight)"
                 for c, s in zip(clusters, shares, strict=True)]
    if worst is not None:
        names = [f"{n}  < least fair" if c == worst else n
                 for c, n in zip(clusters, names, strict=True)]
    return clusters, names


def _mark_worst(ax, names):
    """Draw the least fair cluster's label in red."""
    for label, name in zip(ax.get_yticklabels()[1:], names, strict=True):
        if name.endswith("least fair"):
            label.set_color("C3")
            label.set_fontweight("bold")


def _draw_categorical(ax, segment, order, labels, colors, worst, weights):
    """Draw the stacked bars; return one bar container per value, in ``order``."""
    clusters, names = _row_names(labels, worst, weights)
    codes = np.unique(labels, return_inverse=True)[1]
    counts = np.bincount(codes * len(order) + segment, weights=_ones_or(weights, len(labels)),
                         minlength=len(clusters) * len(order)).reshape(len(clusters), len(order))
    overall = counts.sum(axis=0) / counts.sum()
    sizes = counts.sum(axis=1)
    shares = counts / np.where(sizes > 0, sizes, 1.0)[:, None]
    rows = np.vstack([overall, shares])
    y = np.concatenate([[0.0], np.arange(1, len(clusters) + 1) + 0.4])
    left = np.zeros(len(y))
    bars = []
    for j in range(len(order)):
        bars.append(ax.barh(y, rows[:, j], left=left, color=colors[j], edgecolor="white",
                            linewidth=0.5))
        for yi, start, width in zip(y, left, rows[:, j], strict=True):
            if width >= 0.08:
                ax.text(start + width / 2, yi, f"{width:.0%}", ha="center", va="center",
                        fontsize=7, color="white" if j % 2 == 0 else "black")
        left += rows[:, j]
    ax.set_yticks(y, ["all rows", *names])
    _mark_worst(ax, names)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("share of the rows")
    return bars


def _ones_or(weights, n):
    return np.ones(n) if weights is None else weights


def weighted_percentiles(values, weights, q):
    """Percentiles ``q`` (0-100) of ``values``, each row counting as its weight.

    The smallest value whose cumulative weight reaches q% of the total (the
    inverted CDF); unit weights give ``np.percentile(values, q,
    method="inverted_cdf")``.
    """
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    at = np.searchsorted(cumulative, np.asarray(q, dtype=np.float64) / 100 * cumulative[-1])
    return values[order][np.minimum(at, len(values) - 1)]


def _draw_numeric(ax, values, labels, name, worst, weights):
    clusters, names = _row_names(labels, worst, weights)
    weights = _ones_or(weights, len(values))
    groups = [np.ones(len(values), dtype=bool)] + [labels == c for c in clusters]
    y = np.concatenate([[0.0], np.arange(1, len(clusters) + 1) + 0.4])
    for yi, rows in zip(y, groups, strict=True):
        group, weight = values[rows], weights[rows]
        if weight.sum() == 0:  # a cluster of rows of weight 0: nothing to draw
            continue
        p5, p25, p75, p95 = weighted_percentiles(group, weight, [5, 25, 75, 95])
        ax.hlines(yi, p5, p95, color="0.4", linewidth=1)
        ax.hlines(yi, p25, p75, color="C0", linewidth=6)
        ax.plot(np.average(group, weights=weight), yi, marker="o", color="C3", markersize=5)
    ax.axvline(np.average(values, weights=weights), color="C3", linestyle="--", linewidth=1)
    ax.set_yticks(y, ["all rows", *names])
    _mark_worst(ax, names)
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
    if numeric:
        values = read_column(attribute, column, numeric=True)[1]
    else:
        segment, order = segments(column, audit.sample_weight)
        legend_rows = -(-len(order) // 5)
    fig = Figure(
        figsize=(5.2 * len(audit.labels), 1.5 + 0.32 * n_rows + 0.3 * legend_rows),
        layout="constrained",
    )
    axes = fig.subplots(1, len(audit.labels), squeeze=False)[0]
    handles = None
    for ax, (name, labels) in zip(axes, audit.labels.items(), strict=True):
        worst = audit.worst.loc[(attribute, name), "cluster"]
        if numeric:
            _draw_numeric(ax, values, labels, attribute, worst, audit.sample_weight)
        else:
            colors = [f"C{j}" for j in range(len(order))]
            if order[-1] == "other":
                colors[-1] = "0.75"
            bars = _draw_categorical(ax, segment, order, labels, colors, worst,
                                     audit.sample_weight)
            if handles is None:
                handles = bars  # the first panel's (every panel has the same values)
        ax.invert_yaxis()
        ax.set_title(name)
        ax.tick_params(axis="y", labelsize=8)
    if not numeric:
        # Placeholder labels, then the values: matplotlib drops labels starting with "_".
        legend = fig.legend(handles, [f"v{j}" for j in range(len(order))],
                            loc="outside lower center", ncols=min(len(order), 5),
                            title=attribute, fontsize=8, title_fontsize=9, frameon=False)
        for entry, value in zip(legend.get_texts(), order, strict=True):
            entry.set_text(value)
    fig.suptitle(f"{attribute}: each cluster's mix against the dataset's", fontsize=11)
    for text in fig.findobj(Text):
        text.set_parse_math(False)
        # No font draws NUL or ESC: names and values show their escapes, as in the text.
        text.set_text(visible(text.get_text()))
    return fig
