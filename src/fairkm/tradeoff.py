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

from ._fairkm import FairKM
from .metrics import MEASURES, clustering_report, fairness_report

__all__ = ["fairness_tradeoff", "plot_tradeoff"]


def fairness_tradeoff(
    estimator,
    X,
    sensitive_features,
    fairness_weights,
    *,
    warm_start=True,
    reference_labels=None,
    sample_size=None,
    random_state=None,
):
    """Fit a FairKM estimator at each fairness weight and measure quality and fairness.

    Parameters
    ----------
    estimator : FairKM
        Template; it is cloned, and only ``fairness_weight`` (and, when warm
        starting, ``init`` and ``n_init``) are changed.
    X : array-like of shape (n_samples, n_features)
        Non-sensitive features.
    sensitive_features : array-like, Series or DataFrame
        Sensitive attributes, as for :meth:`FairKM.fit`.
    fairness_weights : sequence of float or "auto"
        The weights, fitted in the order given.
    warm_start : bool, default=True
        Start each fit from the previous weight's centres (nearest-centre
        assignment, then sweeps), so the path is continuous and cheaper. The
        first fit uses the estimator's own ``init``.
    reference_labels : array-like of shape (n_samples,), default=None
        A clustering to measure DevC/DevO against (for instance S-blind
        K-Means). ``None``: no deviation columns.
    sample_size : int, default=None
        Points sampled for the silhouette (``None``: all; pass a few thousand
        for large data, the silhouette being quadratic).
    random_state : int or None, default=None
        Seed of the silhouette sample.

    Returns
    -------
    pandas.DataFrame
        One row per weight: ``fairness_weight`` (resolved), ``objective``,
        ``inertia``, ``fairness``, ``n_iter``, the clustering measures (CO,
        SH, and DevC, DevO with ``reference_labels``) and every fairness
        measure of :data:`fairkm.metrics.MEASURES`, averaged over attributes
        (AE, AW, ME, MW, balance, KL, MPV).
    """
    if not isinstance(estimator, FairKM):
        raise TypeError(f"estimator must be a FairKM instance, got {type(estimator).__name__}.")
    weights = list(fairness_weights)
    if not weights:
        raise ValueError("fairness_weights is empty; give at least one weight.")
    for w in weights:
        if not (w == "auto" or (isinstance(w, numbers.Real) and not isinstance(w, bool))):
            raise TypeError(f"fairness_weights must hold numbers or 'auto', got {w!r}.")
    fairness_names = [m.name for m in MEASURES.values() if m.kind == "fairness"]
    rows = []
    previous = None
    for weight in weights:
        model = clone(estimator).set_params(fairness_weight=weight)
        if warm_start and previous is not None:
            model.set_params(init=previous.cluster_centers_, n_init=1)
        model.fit(X, sensitive_features=sensitive_features)
        quality = clustering_report(
            np.asarray(X, dtype=np.float64), model.labels_, reference_labels=reference_labels,
            sample_size=sample_size, random_state=random_state,
        )
        fairness = fairness_report(
            model.labels_, sensitive_features=sensitive_features,
            numeric_sensitive=estimator.numeric_sensitive,
        ).loc["mean", fairness_names]
        rows.append({
            "fairness_weight": model.fairness_weight_,
            "objective": model.objective_,
            "inertia": model.inertia_,
            "fairness": model.fairness_,
            "n_iter": model.n_iter_,
            **quality.to_dict(),
            **fairness.to_dict(),
        })
        previous = model
    return pd.DataFrame(rows)


def plot_tradeoff(table, *, quality=("CO",), fairness=("AE", "AW"), axes=None):
    """Plot quality and fairness measures against the fairness weight.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`fairness_tradeoff`.
    quality : sequence of str, default=("CO",)
        Quality columns, drawn on the left axis.
    fairness : sequence of str, default=("AE", "AW")
        Fairness columns, drawn on the right axis.
    axes : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (save it with ``fig.savefig(path)``).
    """
    import matplotlib.pyplot as plt

    missing = [c for c in (*quality, *fairness, "fairness_weight") if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; columns are {list(table.columns)}.")
    if axes is None:
        fig, axes = plt.subplots(figsize=(6.4, 4.0))
    else:
        fig = axes.figure
    weights = table["fairness_weight"].to_numpy(dtype=float)
    positive = weights[weights > 0]
    for name in quality:
        axes.plot(weights, table[name], marker="o", label=name)
    axes.set_xlabel("fairness weight")
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
    handles = axes.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    axes.legend(handles, [h.get_label() for h in handles], loc="best")
    axes.set_title("Quality and fairness as the fairness weight grows")
    fig.tight_layout()
    return fig
