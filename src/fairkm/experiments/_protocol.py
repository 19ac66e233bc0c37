"""The paper's evaluation protocol (section 5.5.1): data, fits and per-run measures.

One call of :func:`run_seed` fits every method of one (dataset, k, seed)
setting and measures each fit, so that seeds can be spread over processes and
the results do not depend on how they are spread.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager

import numba
import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from fairkm.cluster import ZGYA, BlindKMeans, FairKM
from fairkm.datasets import fetch_adult, fetch_kinematics
from fairkm.metrics import (
    centroid_deviation,
    clustering_objective,
    fairness_report,
    object_pair_deviation,
)
from fairkm.tradeoff import fairness_tradeoff
from fairkm.utils._docstrings import docstring_filler

from ._published import FAIRNESS_MEASURES

__all__ = [
    "CONVENTIONS",
    "DATASETS",
    "fit_recording_convergence",
    "load_dataset",
    "pairwise_distances_unique",
    "protocol_parameters",
    "run_columns",
    "run_seed",
    "silhouette_from_distances",
    "single_threaded",
    "sweep_seed",
]

DATASETS = ("adult", "kinematics", "kinematics-l2")

KMEANS = "K-Means(N)"
ZGYA_S = "ZGYA(S)"
FAIRKM_ALL = "FairKM(All)"
FAIRKM_S = "FairKM(S)"

# The paper's measures recorded in two conventions, the published one first:
# CO (the published tables summed unsquared distances; the K-Means objective
# squares them) and AW/MW (the published scipy call on probability vectors, and
# optimal transport under the 0/1 metric). Every other measure is recorded once.
CONVENTIONS = {
    "CO": ("unsquared", "squared"),
    "AW": ("published", "principled"),
    "MW": ("published", "principled"),
}


# Parameters that several of the protocol's functions take, written once.
_fill = docstring_filler({
    "seed_data": """\
dataset : str
    Dataset name, copied into the rows.
X : ndarray of shape (n_samples, n_features)
    Non-sensitive features.
sensitive : pandas.DataFrame
    Sensitive attributes.""",
    "params": """\
params : dict
    Output of :func:`protocol_parameters`.""",
})


def run_columns(measure):
    """Per-run columns of one of the paper's measures: ``<measure>_<convention>`` or the name."""
    if measure in CONVENTIONS:
        return tuple(f"{measure}_{convention}" for convention in CONVENTIONS[measure])
    return (measure,)


_QUICK_SEEDS = 2
_QUICK_ADULT_ROWS = 600


def protocol_parameters(quick=False):
    """Every parameter of the protocol, as recorded next to the results.

    Parameters
    ----------
    quick : bool, default=False
        The small configuration for tests: an Adult subsample, few
        iterations and a coarse lambda grid.

    Returns
    -------
    dict
        JSON-serialisable parameters: per dataset (``n_clusters``,
        ``fairness_weight`` for FairKM, preprocessing), per method and for
        the lambda sweep behind Figures 5-7.
    """
    sweep = [1e3, 5e3, 1e4] if quick else [float(w) for w in np.linspace(1e3, 1e4, 10)]
    kinematics = {"n_clusters": [5], "fairness_weight": 1e3, "embed": "doc2vec"}
    return {
        "quick": quick,
        "max_seeds": _QUICK_SEEDS if quick else None,
        "adult": {
            "n_clusters": [5, 15],
            "fairness_weight": 1e6,
            "preprocess": "paper",
            "subsample": _QUICK_ADULT_ROWS if quick else None,
        },
        "kinematics": {**kinematics, "row_normalize": False},
        "kinematics-l2": {**kinematics, "row_normalize": True},
        # The published run's stopping rule, fixed here so that a change of
        # FairKM's default tol does not change the reproduction.
        "FairKM": {"max_iter": 5 if quick else 30, "tol": 1e-6, "init": "k-means++",
                   "n_init": "auto"},
        # The authors' released loop and stopping rules (fairkm.ZGYA's defaults).
        "ZGYA": {
            "fairness_weight": 15.0,
            "max_iter": 5 if quick else 100,
            "bound_max_iter": 50 if quick else 10000,
        },
        "K-Means(N)": {"init": "k-means++", "n_init": "auto"},
        "lambda_sweep": {
            "datasets": ["kinematics", "kinematics-l2"],
            "n_clusters": 5,
            "fairness_weights": sweep,
            "warm_start": False,
        },
    }


@_fill
def load_dataset(name, params, *, data_home=None, random_state=None):
    """Load one of the protocol's datasets as the paper's pipeline prepares it.

    Parameters
    ----------
    name : {"adult", "kinematics", "kinematics-l2"}
        ``"kinematics-l2"`` is Kinematics with each Doc2Vec vector scaled to
        unit L2 norm, as the paper's Adult pipeline scales its rows.
    %(params)s
    data_home : str or path-like, default=None
        Passed to the ``fetch_*`` loader.
    random_state : int or None, default=None
        Seeds the Adult subsample of the quick configuration.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Non-sensitive features, float64, C-contiguous.
    sensitive : pandas.DataFrame
        Sensitive attributes, one column each.
    """
    if name == "adult":
        bunch = fetch_adult(data_home=data_home, preprocess="paper")
        X = bunch.features.to_numpy(dtype=np.float64)
        sensitive = bunch.sensitive.reset_index(drop=True)
        rows = params["adult"]["subsample"]
        if rows is not None:
            keep = np.sort(check_random_state(random_state).choice(X.shape[0], rows, replace=False))
            X, sensitive = X[keep], sensitive.iloc[keep].reset_index(drop=True)
    else:
        bunch = fetch_kinematics(data_home=data_home, embed="doc2vec")
        X = bunch.features.to_numpy(dtype=np.float64)
        sensitive = bunch.sensitive.reset_index(drop=True)
        if params[name]["row_normalize"]:
            X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return np.ascontiguousarray(X), sensitive


def pairwise_distances_unique(X):
    """Euclidean distances between the distinct rows of ``X``.

    Where many rows repeat (the row-normalised Adult block: see
    docs/reproduction.md), the silhouettes of all runs share one exact
    distance matrix of the distinct rows instead of recomputing every pair's
    distance per run.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    distances : ndarray of shape (n_unique, n_unique)
        Exact Euclidean distances (:func:`scipy.spatial.distance.cdist`).
    inverse : ndarray of shape (n_samples,)
        Index of each sample's row in ``distances``.
    """
    unique, inverse = np.unique(X, axis=0, return_inverse=True)
    return cdist(unique, unique), inverse.reshape(-1)


def silhouette_from_distances(distances, inverse, labels):
    """Mean silhouette coefficient from distances between distinct rows.

    The same quantity as :func:`fairkm.metrics.silhouette` (scikit-learn's
    ``silhouette_score``, Euclidean, every point): for point ``i`` in cluster
    ``A``, ``a`` is its mean distance to the other points of ``A``, ``b`` the
    smallest mean distance to the points of another cluster, ``s = (b - a) /
    max(a, b)``, and ``s = 0`` in a cluster of one point. Summing distances
    over points becomes a product with the per-row cluster counts.

    Parameters
    ----------
    distances, inverse
        Output of :func:`pairwise_distances_unique` for the data.
    labels : ndarray of shape (n_samples,)
        Cluster labels.

    Returns
    -------
    float
        ``nan`` when the labels hold fewer than two clusters.
    """
    clusters, codes = np.unique(labels, return_inverse=True)
    n_clusters = clusters.shape[0]
    if n_clusters < 2:
        return float("nan")
    n_unique = distances.shape[0]
    counts = np.bincount(inverse * n_clusters + codes, minlength=n_unique * n_clusters)
    sums = (distances @ counts.reshape(n_unique, n_clusters).astype(np.float64))[inverse]
    sizes = np.bincount(codes, minlength=n_clusters)
    rows = np.arange(codes.shape[0])
    own_size = sizes[codes]
    intra = sums[rows, codes] / np.maximum(own_size - 1, 1)
    means = sums / sizes
    means[rows, codes] = np.inf
    inter = means.min(axis=1)
    denom = np.maximum(intra, inter)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(denom > 0, (inter - intra) / denom, 0.0)
    scores[own_size == 1] = 0.0
    return float(scores.mean())


@contextmanager
def single_threaded():
    """BLAS, OpenMP and numba's parallel loops on one thread each, restored afterwards.

    Seeds run in separate processes, so each fit takes one core; numba's
    threads are set apart from BLAS's because threadpoolctl does not reach them.
    """
    threads = numba.get_num_threads()
    with threadpool_limits(limits=1):
        numba.set_num_threads(1)
        try:
            yield
        finally:
            numba.set_num_threads(threads)


def fit_recording_convergence(model, X, sensitive):
    """Fit ``model``, recording ``ConvergenceWarning`` instead of emitting it.

    The protocol caps FairKM at the paper's 30 iterations, so the warning is
    expected; whether it fired is kept as the run's ``converged`` flag. Other
    warnings are re-emitted.

    Returns
    -------
    seconds : float
    converged : bool
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(X, sensitive_features=sensitive)
        seconds = time.perf_counter() - start
    converged = True
    for item in caught:
        if issubclass(item.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    return seconds, converged


def _measure(X, sensitive, pairwise, labels, reference):
    """Quality against ``reference`` labels, and fairness per attribute in both conventions."""
    quality = {
        "CO_unsquared": clustering_objective(X, labels, squared=False),
        "CO_squared": clustering_objective(X, labels, squared=True),
        "SH": silhouette_from_distances(*pairwise, labels),
        "DevC": centroid_deviation(X, labels, reference),
        "DevO": object_pair_deviation(labels, reference),
        "n_nonempty": int(np.unique(labels).shape[0]),
    }
    # One report per Wasserstein convention; a measure without conventions is the same in both.
    reports = {
        convention: fairness_report(labels, sensitive_features=sensitive, wasserstein=convention)
        for convention in ("principled", "published")
    }
    fairness = {"attribute": list(sensitive.columns)}
    for measure in FAIRNESS_MEASURES:
        conventions = CONVENTIONS.get(measure, ("principled",))
        for column, convention in zip(run_columns(measure), conventions, strict=True):
            # The report's last row is the mean over attributes.
            fairness[column] = reports[convention][measure].to_numpy()[:-1]
    return quality, pd.DataFrame(fairness)


@_fill
def run_seed(dataset, X, sensitive, pairwise, n_clusters, seed, params):
    """Fit and measure every method of one (dataset, k, seed) setting.

    Methods: S-blind K-Means ("K-Means(N)"), FairKM on all attributes
    ("FairKM(All)"), and for each attribute ZGYA and FairKM on that attribute
    alone ("ZGYA(S)", "FairKM(S)"). Each gets ``random_state=seed``. DevC and
    DevO are measured against the K-Means(N) clustering of the same seed.
    BLAS, OpenMP and numba run single-threaded (:func:`single_threaded`), one
    seed per process.

    Parameters
    ----------
    %(seed_data)s
    pairwise : tuple
        Output of :func:`pairwise_distances_unique` for ``X``.
    n_clusters : int
        k.
    seed : int
        Seed of every fit.
    %(params)s

    Returns
    -------
    quality : list of dict
        One row per fit: setting, method, ``sensitive`` (what it was fair
        on), the quality measures, ``n_nonempty`` (non-empty clusters), ``n_iter``,
        ``n_updates`` and ``n_reseeds`` (ZGYA's bound updates and reseeds, NaN
        for the other methods), ``converged`` and ``fit_seconds``.
    fairness : pandas.DataFrame
        One row per fit and attribute, with AE, ME and AW/MW in both
        conventions.
    """
    fairkm = {"max_iter": params["FairKM"]["max_iter"], "tol": params["FairKM"]["tol"],
              "random_state": seed}
    zgya = dict(params["ZGYA"], random_state=seed)
    weight = params[dataset]["fairness_weight"]
    fits = [(KMEANS, "-", BlindKMeans(n_clusters, random_state=seed), None)]
    fits.append((FAIRKM_ALL, "all", FairKM(n_clusters, fairness_weight=weight, **fairkm),
                 sensitive))
    for name in sensitive.columns:
        fits.append((ZGYA_S, name, ZGYA(n_clusters, **zgya), sensitive[name]))
        fits.append((FAIRKM_S, name, FairKM(n_clusters, fairness_weight=weight, **fairkm),
                     sensitive[[name]]))
    quality, fairness = [], []
    with single_threaded():
        reference = None
        for method, fair_on, model, features in fits:
            seconds, converged = fit_recording_convergence(model, X, features)
            labels = model.labels_
            if reference is None:
                reference = labels
            scores, per_attribute = _measure(X, sensitive, pairwise, labels, reference)
            setting = {"dataset": dataset, "k": n_clusters, "seed": seed, "method": method,
                       "sensitive": fair_on}
            # ZGYA's bound updates and reseeds: its cost and how it ended.
            updates = getattr(model, "n_bound_iter_", None)
            quality.append({**setting, **scores, "n_iter": int(model.n_iter_),
                            "n_updates": np.nan if updates is None else int(updates.sum()),
                            "n_reseeds": getattr(model, "n_reseeds_", np.nan),
                            "converged": converged, "fit_seconds": seconds})
            fairness.append(per_attribute.assign(**setting))
    return quality, pd.concat(fairness, ignore_index=True)


@_fill
def sweep_seed(dataset, X, sensitive, seed, params):
    """FairKM over the lambda grid of Figures 5-7 for one seed.

    Parameters
    ----------
    %(seed_data)s
    seed : int
        Seed of the fits (and of the K-Means(N) reference for DevC/DevO).
    %(params)s

    Returns
    -------
    pandas.DataFrame
        :func:`fairkm.experiments.fairness_tradeoff`'s table with ``dataset``
        and ``seed`` columns.
    """
    sweep = params["lambda_sweep"]
    k = sweep["n_clusters"]
    with single_threaded():
        reference = BlindKMeans(k, random_state=seed).fit(X).labels_
        estimator = FairKM(k, max_iter=params["FairKM"]["max_iter"],
                           tol=params["FairKM"]["tol"], random_state=seed)
        with warnings.catch_warnings():
            # Capped at the paper's 30 iterations; the table's n_iter column shows it.
            warnings.simplefilter("ignore", ConvergenceWarning)
            table = fairness_tradeoff(
                estimator, X, sensitive, sweep["fairness_weights"],
                warm_start=sweep["warm_start"], reference_labels=reference,
            )
    # Columns about relative weights say nothing at the paper's absolute ones.
    table = table.drop(columns=["relative_weight", "cost_increase", "unfairness_ratio", "mark"])
    return table.assign(dataset=dataset, seed=seed)
