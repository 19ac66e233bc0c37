"""The quality/fairness trade-off as the fairness weight grows.

:func:`fairness_tradeoff` fits FairKM at each of several fairness weights and
measures every fit; :func:`plot_tradeoff` draws the table. ``fairkm tradeoff``
is these two on a table's columns, and the FairKM paper's Figures 5-7
(:func:`fairkm.experiments.reproduce`) are their means over seeds.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.base import clone

from fairkm.cluster import FairKM
from fairkm.utils._inputs import as_frequencies, paired, read_weights, row_index
from fairkm.utils._progress import Progress, report

from .metrics import MEASURES, clustering_objective, clustering_report, fairness_report

__all__ = ["fairness_tradeoff", "plot_tradeoff"]


def fairness_tradeoff(estimator, X, sensitive_features, fairness_weights=None, *,
                      relative_weights=None, max_cost=None, warm_start=True, reference_labels=None,
                      sample_size=None, random_state=None, sample_weight=None):
    """Fit a FairKM estimator at several fairness weights and measure quality and fairness.

    Give either ``relative_weights`` (the scale-free weight of
    :class:`~fairkm.FairKM`, ``fairness_weight="auto"``; the default is 1) or
    ``fairness_weights`` (the paper's absolute lambdas).

    Parameters
    ----------
    estimator : FairKM
        Template; it is cloned, and only the weight parameters (and, when
        warm starting absolute weights, ``init`` and ``n_init``) are changed.
    X : array-like of shape (n_samples, n_features)
        Non-sensitive features.
    sensitive_features : array-like, Series or DataFrame
        Sensitive attributes, as for :meth:`FairKM.fit`.
    fairness_weights : sequence of float or "paper", default=None
        Absolute weights, fitted in the order given.
    relative_weights : sequence of float, default=None
        Relative weights. Every fit starts as the estimator's own fit does,
        so all are measured against the same S-blind clustering (the blind
        phase is repeated for each: pass ``n_init=1`` on large data).
    max_cost : float, default=None
        With ``relative_weights``: also fit the fairest clustering whose
        K-Means cost is at most ``max_cost`` above the S-blind clustering's
        (:class:`~fairkm.FairKM`'s ``max_cost``); its row is marked in the
        ``mark`` column.
    warm_start : bool, default=True
        With ``fairness_weights``: start each fit from the previous weight's
        centres (nearest-centre assignment, then sweeps), so the path is
        continuous and cheaper. The first fit uses the estimator's own
        ``init``.
    reference_labels : array-like of shape (n_samples,), default=None
        A clustering to measure DevC/DevO against (for instance S-blind
        K-Means). ``None``: no deviation columns.
    sample_size : int, default=None
        Points sampled for the silhouette (``None``: all; pass a few thousand
        for large data, the silhouette being quadratic).
    random_state : int or None, default=None
        Seed of the silhouette sample.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights, as for :meth:`FairKM.fit`: every fit and every measure
        is weighted (SH, DevC and DevO with the lightest row counting as
        one row, as in :func:`fairkm.report.audit`), so weights scaled alike
        give the same table but for the sums in the weights' unit
        (``objective``, ``inertia``, ``fairness_weight`` and CO, the
        weighted sum of squared distances to the weighted means, as
        scikit-learn's ``KMeans.inertia_`` with ``sample_weight``), which scale.

    Returns
    -------
    pandas.DataFrame
        One row per fit, in the order given (the budget's row placed by its
        relative weight): ``relative_weight`` (NaN for an absolute weight),
        ``fairness_weight`` (the absolute lambda used), ``cost_increase``
        and ``unfairness_ratio`` (against the S-blind clustering; NaN for an
        absolute weight), ``objective``, ``inertia``, ``fairness``,
        ``n_iter``, the clustering measures (CO, SH, and DevC, DevO with
        ``reference_labels``), every fairness measure of
        :data:`fairkm.metrics.MEASURES` averaged over the attributes, each
        attribute's mean and worst cluster distance from the dataset's mix
        (columns ``CW[<attribute>]`` and ``MW[<attribute>]``: each cluster
        counting once, and the least fair one), each categorical attribute's
        equitable cost (columns ``worst group cost[<attribute>]``, the mean
        squared distance to their centre of the rows of the group served
        worst, and ``cost ratio[<attribute>]``, that over the best-served
        group's; :func:`fairkm.metrics.group_costs`), and ``mark``
        (``"default"`` for the default relative weight 1, ``"max_cost=..."``
        for the budget's choice, else empty).
    """
    if not isinstance(estimator, FairKM):
        raise TypeError(f"estimator must be a FairKM instance, got {type(estimator).__name__}.")
    if (fairness_weights is None) == (relative_weights is None):
        raise ValueError("give either fairness_weights or relative_weights (exactly one).")
    relative = relative_weights is not None
    name = "relative_weights" if relative else "fairness_weights"
    weights = list(relative_weights if relative else fairness_weights)
    if not weights:
        raise ValueError(f"{name} is empty; give at least one weight.")
    for w in weights:
        allowed = isinstance(w, numbers.Real) and not isinstance(w, bool)
        if not (allowed or (not relative and w == "paper")):
            raise TypeError(
                f"{name} must hold numbers{'' if relative else ' or ' + repr('paper')}, "
                f"got {w!r}."
            )
    if max_cost is not None and not relative:
        raise ValueError("max_cost goes with relative_weights, not fairness_weights.")
    index = row_index(X)
    # Checked once, paired with X's rows; the fits read the same array.
    sample_weight, _ = read_weights(sample_weight, np.asarray(X).shape[0], index)
    sensitive_features = paired(sensitive_features, index, name="sensitive_features")
    rows = []
    previous = None
    fits = [({"relative_weight": w} if relative else {"fairness_weight": w}) for w in weights]
    if max_cost is not None:
        fits.append({"max_cost": max_cost})
    for params in fits:
        model = clone(estimator).set_params(**params)
        if relative:
            model.set_params(fairness_weight="auto")
        elif warm_start and previous is not None:
            model.set_params(init=previous.cluster_centers_, n_init=1)
        model.fit(X, sensitive_features=sensitive_features, sample_weight=sample_weight)
        rows.append(_measure(model, X, sensitive_features, estimator.numeric_sensitive,
                             reference_labels, sample_size, random_state, sample_weight))
        report(Progress("fit", len(rows), model.objective_, 0), verbose=0)
        rows[-1]["mark"] = (
            f"max_cost={max_cost:g}" if "max_cost" in params
            else "default" if params.get("relative_weight") == 1.0 else ""
        )
        previous = model
    if max_cost is not None:
        # The budget's row among the others, by its relative weight.
        budget = rows.pop()
        at = len(rows)
        if all(a <= b for a, b in zip(weights[:-1], weights[1:], strict=True)):
            at = sum(w <= budget["relative_weight"] for w in weights)
        rows.insert(at, budget)
    return pd.DataFrame(rows)


def _measure(model, X, sensitive_features, numeric_sensitive, reference_labels, sample_size,
             random_state, sample_weight):
    """One row of the trade-off table: the fitted model's numbers and measures."""
    X = np.asarray(X, dtype=np.float64)
    quality = clustering_report(
        X, model.labels_, reference_labels=reference_labels,
        sample_size=sample_size, random_state=random_state,
        sample_weight=as_frequencies(sample_weight),
    )
    # SH and DevO count rows, so they read the weights by their ratios; CO is a sum of
    # weighted squared distances, in the weights' unit, as KMeans' inertia_ with them.
    quality["CO"] = clustering_objective(X, model.labels_, sample_weight=sample_weight)
    report = fairness_report(
        model.labels_, sensitive_features=sensitive_features, numeric_sensitive=numeric_sensitive,
        sample_weight=sample_weight, X=np.asarray(X, dtype=np.float64),
    )
    categorical = report.index[report["worst group"].notna()]
    fairness_names = [m.name for m in MEASURES.values() if m.kind == "fairness"]
    return {
        "relative_weight": model.relative_weight_,
        "fairness_weight": model.fairness_weight_,
        "cost_increase": model.cost_increase_,
        "unfairness_ratio": model.unfairness_ratio_,
        "objective": model.objective_,
        "inertia": model.inertia_,
        "fairness": model.fairness_,
        "n_iter": model.n_iter_,
        **quality.to_dict(),
        **report.loc["mean", fairness_names].to_dict(),
        **{f"{measure}[{attribute}]": report.loc[attribute, measure]
           for measure in ("CW", "MW") for attribute in report.index if attribute != "mean"},
        **{f"{measure}[{attribute}]": report.loc[attribute, measure]
           for measure in ("worst group cost", "cost ratio") for attribute in categorical},
    }


def plot_tradeoff(table, *, quality=("CO",), fairness=("CW", "MW"), axes=None):
    """Plot quality and fairness measures against the fairness weight.

    The horizontal axis is the relative weight when the table has one (its
    rows from ``relative_weights``), else the absolute weight. Marked rows
    (the default weight, a budget's choice) are labelled on the plot.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`fairness_tradeoff`.
    quality : sequence of str, default=("CO",)
        Quality columns, drawn on the left axis.
    fairness : sequence of str, default=("CW", "MW")
        Fairness columns, drawn on the right axis (by default the clusters'
        mean and worst distance from the dataset's mix).
    axes : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (save it with ``fig.savefig(path)``).
    """
    import matplotlib.pyplot as plt

    relative = "relative_weight" in table.columns and table["relative_weight"].notna().all()
    x_name = "relative_weight" if relative else "fairness_weight"
    missing = [c for c in (*quality, *fairness, x_name) if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; columns are {list(table.columns)}.")
    if axes is None:
        fig, axes = plt.subplots(figsize=(6.4, 4.0))
    else:
        fig = axes.figure
    weights = table[x_name].to_numpy(dtype=float)
    positive = weights[weights > 0]
    for name in quality:
        axes.plot(weights, table[name], marker="o", label=name)
    axes.set_xlabel(
        "relative fairness weight (1: 1% less unfairness is worth 1% more cost, at first)"
        if relative
        else "fairness weight"
    )
    axes.set_ylabel("quality: " + ", ".join(quality))
    right = axes.twinx()
    for k, name in enumerate(fairness):
        right.plot(weights, table[name], marker="s", linestyle="--", color=f"C{k + len(quality)}",
                   label=name)
    right.set_ylabel("fairness (lower is fairer): " + ", ".join(fairness))
    if positive.size and positive.max() / positive.min() > 20:
        # Weights usually span decades; a zero weight needs the linear part of symlog.
        if np.any(weights <= 0):
            axes.set_xscale("symlog", linthresh=positive.min())
        else:
            axes.set_xscale("log")
    marks = table["mark"] if "mark" in table.columns else pd.Series([""] * len(table))
    # One label per marked weight (the default and a budget's choice often coincide).
    labelled = {}
    for weight, mark in zip(weights, marks, strict=True):
        if mark:
            labelled.setdefault(weight, []).append(mark)
    axes.autoscale_view()  # the final limits, to measure the labels' distance in points
    previous = None
    for weight, names in sorted(labelled.items()):
        axes.axvline(weight, color="0.5", linestyle=":", linewidth=1)
        # A label close to the previous one goes on the other side of its line.
        near = previous is not None and _points_apart(axes, previous, weight) < 14
        # Plain text: a user's value shows as typed, never as mathtext.
        axes.annotate(", ".join(names), (weight, 1.0), xycoords=("data", "axes fraction"),
                      xytext=(-3 if near else 3, -10), textcoords="offset points",
                      fontsize=8, color="0.3", rotation=90, va="top",
                      ha="right" if near else "left", parse_math=False)
        previous = weight
    handles = axes.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    axes.legend(handles, [h.get_label() for h in handles], loc="best")
    axes.set_title("Quality and fairness as the fairness weight grows")
    fig.tight_layout()
    return fig


def _points_apart(axes, a, b):
    """Horizontal distance in points between data abscissas ``a`` and ``b`` on ``axes``."""
    pixels = axes.transData.transform([(a, 0.0), (b, 0.0)])[:, 0]
    return abs(pixels[1] - pixels[0]) * 72.0 / axes.figure.dpi
